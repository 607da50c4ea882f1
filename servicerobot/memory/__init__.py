"""The robot's memory: a knowledge graph of PDDL facts, the domain verifier, percept and language updates.

Retrieval lives in `servicerobot.memory.retrieval` (imported on its own: it depends on the language
layer's query-graph types).
"""

from servicerobot.memory.graph import KnowledgeGraph, MemoryFileError, UpdateRecord
from servicerobot.memory.triplets import Delta, DeltaFormatError, Triplet, atom_to_triplet, triplet_to_atom
from servicerobot.memory.updates import UpdateOutcome, apply_percept, percept_delta, update_from_language
from servicerobot.memory.verifier import Verifier, functional_groups

__all__ = ["Delta", "DeltaFormatError", "KnowledgeGraph", "MemoryFileError", "Triplet", "UpdateOutcome",
           "UpdateRecord", "Verifier", "apply_percept", "atom_to_triplet", "functional_groups", "percept_delta",
           "triplet_to_atom", "update_from_language"]
