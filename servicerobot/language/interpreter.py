"""The `Interpreter` protocol: what the agent asks of language (rule-based or LLM-backed).

An interpreter turns what people say into memory deltas and PDDL goals. It sees a `Context`: the
domain, the entity catalogue the robot knows, and the facts retrieval found relevant. It never sees
the true world.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Protocol, runtime_checkable

from servicerobot.language.base import Usage
from servicerobot.memory.catalogue import entity_phrase
from servicerobot.memory.query import QueryEdge, QueryGraph, QueryNode
from servicerobot.memory.triplets import Delta
from servicerobot.pddl import Atom, Domain

__all__ = ["UTTERANCE_KINDS", "Context", "Interpreter", "QueryEdge", "QueryGraph", "QueryNode",
           "entity_phrase"]

UTTERANCE_KINDS = ("task", "update")


@dataclass(frozen=True)
class Context:
    """What an interpreter may look at for one utterance.

    Attributes:
        domain: the planning domain (predicates, types, actions).
        entities: name -> catalogue record (`type`, `noun`, and attributes such as colour, owner).
        facts: the retrieved facts (for the ablation without retrieval: all of memory).
        robot: the robot's own entity name.
    """

    domain: Domain
    entities: Mapping[str, Mapping]
    facts: frozenset[Atom]
    robot: str = "robot"


@runtime_checkable
class Interpreter(Protocol):
    """Turns utterances into kinds, deltas, goals, selected entities and query graphs.

    `feedback` carries the messages of earlier rejected attempts (verifier, goal parser, planner) so a
    retrying interpreter can correct itself. `usage` sums the tokens spent (zero for rule-based ones).
    """

    name: str
    usage: Usage

    def classify(self, text: str, speaker: str, context: Context | None = None) -> str:
        """"task" (a request to the robot) or "update" (a report of a change); `context` may help."""
        ...

    def interpret_update(self, text: str, speaker: str, context: Context,
                         feedback: Sequence[str] = ()) -> Delta:
        """The facts the report removes and adds, in domain vocabulary."""
        ...

    def interpret_task(self, text: str, speaker: str, context: Context, feedback: Sequence[str] = ()) -> str:
        """The task's goal as a PDDL goal formula, e.g. `(and (on mug_3 table_1) (not (dirty mug_3)))`."""
        ...

    def select_entities(self, text: str, speaker: str, context: Context, limit: int = 40) -> list[str]:
        """The known entities the text is about (seeds of entity retrieval)."""
        ...

    def query_graph(self, text: str, speaker: str, context: Context) -> QueryGraph:
        """The graph the text describes (for search-based retrieval)."""
        ...

