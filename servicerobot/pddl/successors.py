"""Enumerate the ground actions applicable in a state by joining positive preconditions with the state.

Instead of the cartesian product of all parameter types, the variables that occur in the
precondition's top-level positive atoms are bound by matching those atoms against the state's facts
(a small backtracking join); only the remaining parameters range over their types.
"""

from __future__ import annotations

import itertools
from collections.abc import Callable, Iterator
from typing import Any, Protocol

from servicerobot.pddl.atoms import State
from servicerobot.pddl.explain import conjuncts
from servicerobot.pddl.grounding import Universe
from servicerobot.pddl.model import Action, AtomF, Domain

__all__ = ["CHECK_EVERY", "Grounder", "applicable_actions", "candidate_arguments"]

CHECK_EVERY = 256
"""Join steps between two calls of `candidate_arguments`'s `check`."""


class Grounder(Protocol):
    """What successor generation needs of an interpreter (`servicerobot.pddl.interpreter.Interpreter` has it;
    named here so that the two modules do not import each other). Ground actions are the interpreter's
    `GroundAction`s, passed through as they are."""

    domain: Domain
    universe: Universe

    def ground(self, name: str, args: tuple[str, ...]) -> Any: ...

    def applicable(self, ga: Any, state: State) -> bool: ...


def candidate_arguments(
    action: Action, interpreter: Grounder, facts: dict[str, list[tuple[str, ...]]],
    check: Callable[[], None] | None = None,
) -> set:
    """Argument tuples of `action` that satisfy its top-level positive atoms (`facts`: predicate -> args).

    `check`, when given, is called every `CHECK_EVERY` steps of the join (a deadline raises from it).
    """
    params = dict(action.params)
    allowed = {var: frozenset(interpreter.universe.of_type(typ)) for var, typ in action.params}
    atoms = [c for c in conjuncts(action.precondition) if isinstance(c, AtomF)]
    atoms.sort(key=lambda a: len(facts.get(a.predicate, ())))
    variables = [var for var, _ in action.params]
    found: set[tuple[str, ...]] = set()
    steps = [0]

    def tick() -> None:
        steps[0] += 1
        if steps[0] % CHECK_EVERY == 0:
            check()

    def join(index: int, binding: dict[str, str]) -> None:
        if index == len(atoms):
            free = [var for var in variables if var not in binding]
            for values in itertools.product(*(interpreter.universe.of_type(params[v]) for v in free)):
                if check is not None:
                    tick()
                full = {**binding, **dict(zip(free, values))}
                found.add(tuple(full[var] for var in variables))
            return
        atom = atoms[index]
        terms = atom.terms
        for args in facts.get(atom.predicate, ()):
            if check is not None:
                tick()
            if len(args) != len(terms):
                continue
            new = binding
            for term, arg in zip(terms, args):
                if term in params:
                    bound = new.get(term)
                    if bound is None:
                        if arg not in allowed[term]:
                            break
                        if new is binding:
                            new = dict(binding)
                        new[term] = arg
                    elif bound != arg:
                        break
                elif term != arg:
                    break
            else:
                join(index + 1, new)

    join(0, {})
    return found


def applicable_actions(interpreter: Grounder, state: State) -> Iterator[Any]:
    """Every ground action applicable in `state`: actions in domain order, argument tuples sorted."""
    facts: dict[str, list[tuple[str, ...]]] = {}
    for atom in state:
        facts.setdefault(atom.predicate, []).append(atom.args)
    for action in interpreter.domain.actions.values():
        for args in sorted(candidate_arguments(action, interpreter, facts)):
            ga = interpreter.ground(action.name, args)
            if interpreter.applicable(ga, state):
                yield ga
