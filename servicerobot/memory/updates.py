"""Updating memory: deterministic percept updates, and language updates through interpreter + verifier.

A language update is interpreted, verified, and on rejection re-interpreted with the verifier's
messages as feedback, at most `max_attempts` times; then it is dropped and logged. Memory only ever
changes by a whole verified delta, never half of one.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field

from servicerobot.errors import ServiceRobotError
from servicerobot.memory.graph import KnowledgeGraph, UpdateRecord
from servicerobot.memory.triplets import Delta, DeltaFormatError, triplet_to_atom
from servicerobot.memory.verifier import Verifier

__all__ = ["UpdateOutcome", "apply_percept", "percept_delta", "update_from_language"]


def percept_delta(memory: KnowledgeGraph, percept: Mapping) -> Delta:
    """What a percept changes in memory, closed world within view.

    A believed fact is judged by the percept when its subject is a visible entity or its object is an
    `observed` entity (whose contents are seen in full); judged facts absent from the percept are
    removed, seen facts are added. So an item seen somewhere new is no longer where it was.
    """
    visible = set(percept.get("entities", ()))
    observed = set(percept.get("observed", ()))
    seen = {triplet_to_atom(t) for t in percept.get("facts", ())}
    judged = set()
    for name in visible | observed:
        for atom in memory.facts_about(name):
            if atom.args[0] in visible or (len(atom.args) == 2 and atom.args[1] in observed):
                judged.add(atom)
    return Delta.of(remove=judged - seen, add=(a for a in seen if a not in memory))


def apply_percept(memory: KnowledgeGraph, percept: Mapping, step: int) -> Delta:
    """Add newly seen entities, then apply `percept_delta`; returns what changed."""
    for name, type_ in percept.get("entities", {}).items():
        if not memory.has_entity(name):
            memory.add_entity(name, type_)
    return memory.apply(percept_delta(memory, percept), "percept", step)


@dataclass
class UpdateOutcome:
    """What became of one language update: the applied delta (None if dropped) and every attempt's problems."""

    text: str
    applied: Delta | None
    attempts: int
    problems: list[list[str]] = field(default_factory=list)

    @property
    def accepted(self) -> bool:
        return self.applied is not None


def update_from_language(memory: KnowledgeGraph, text: str, speaker: str, interpreter, context,
                         step: int, verifier: Verifier | None = None, max_attempts: int = 3) -> UpdateOutcome:
    """Interpret `text` into a delta, verify it, retry with feedback, then apply it whole or drop it.

    With `verifier=None` (the ablation) the first well-formed delta is applied as far as memory can
    represent it: atoms over unknown entities or predicates are skipped, everything else is applied.
    """
    outcome = UpdateOutcome(text, None, 0)
    feedback: list[str] = []
    for _ in range(max_attempts):
        outcome.attempts += 1
        try:
            delta = interpreter.interpret_update(text, speaker, context, tuple(feedback))
        except (DeltaFormatError, ServiceRobotError, ValueError) as exc:
            problems = [f"the answer could not be read as an update: {exc}"]
        else:
            if verifier is None:
                outcome.applied = memory.apply(_representable(memory, delta), "language", step, text)
                return outcome
            problems = verifier.check(delta, memory)
            if not problems:
                outcome.applied = memory.apply(delta, "language", step, text)
                return outcome
        outcome.problems.append(problems)
        feedback = problems
    if memory.keep_history:  # dropped updates stay visible in the history
        memory.history.append(UpdateRecord("language-dropped", step, Delta(), text))
    return outcome


def _representable(memory: KnowledgeGraph, delta: Delta) -> Delta:
    ok = lambda a: a.predicate in memory.domain.predicates and all(memory.has_entity(x) for x in a.args)
    return Delta.of((a for a in delta.remove if ok(a)), (a for a in delta.add if ok(a)))

