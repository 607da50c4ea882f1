"""Derived predicates (PDDL 2.2 axioms): the atoms that follow from a state by the domain's `:derived` rules.

Rules are grounded once over the objects and evaluated stratum by stratum to a fixpoint, so a rule may
use another derived predicate, recursively when positive (`above` from `on`), and negated when that
predicate sits in a lower stratum (the stratified semantics of PDDL 2.2, as in Fast Downward and VAL).
"""

from __future__ import annotations

from servicerobot.errors import PDDLSemanticError
from servicerobot.pddl.atoms import Atom, State
from servicerobot.pddl.grounding import Test, Universe, compile_test, ground_formula
from servicerobot.pddl.model import (
    AtomF,
    Domain,
    Exists,
    Forall,
    Formula,
    Imply,
    Not,
)

__all__ = ["Axioms", "strata"]


def _dependencies(f: Formula, positive: bool, out: list[tuple[str, bool]]) -> None:
    """(predicate, occurs positively) for every atom of `f` (both polarities count under `imply`'s left)."""
    if isinstance(f, AtomF):
        out.append((f.predicate, positive))
    elif isinstance(f, Not):
        _dependencies(f.f, not positive, out)
    elif isinstance(f, Imply):
        _dependencies(f.a, not positive, out)
        _dependencies(f.b, positive, out)
    elif isinstance(f, (Exists, Forall)):
        _dependencies(f.body, positive, out)
    elif hasattr(f, "parts"):
        for part in f.parts:
            _dependencies(part, positive, out)


def strata(domain: Domain) -> list[list[str]]:
    """The derived predicates in evaluation order: each stratum uses only its own predicates positively
    and earlier strata's in any way.

    Raises:
        PDDLSemanticError: a derived predicate depends negatively on itself (not stratifiable).
    """
    names = list(domain.derived)
    level = dict.fromkeys(names, 0)
    edges = []
    for name, rule in domain.derived.items():
        found: list[tuple[str, bool]] = []
        _dependencies(rule.body, True, found)
        edges += [(name, other, positive) for other, positive in found if other in level]
    for _ in range(len(names) + 1):
        changed = False
        for name, other, positive in edges:
            need = level[other] + (0 if positive else 1)
            if level[name] < need:
                level[name], changed = need, True
        if not changed:
            break
    else:
        cycle = sorted({name for name, other, positive in edges if not positive})
        raise PDDLSemanticError(
            f"the derived predicates cannot be stratified: {', '.join(cycle)} depend negatively on themselves "
            "through their rules"
        )
    return [[n for n in names if level[n] == k] for k in sorted(set(level.values()))]


class Axioms:
    """The ground rules of a domain's derived predicates over one object universe."""

    def __init__(self, domain: Domain, universe: Universe):
        self.strata: list[list[tuple[Atom, Test]]] = []
        for stratum in strata(domain):
            rules: list[tuple[Atom, Test]] = []
            for name in stratum:
                rule = domain.derived[name]
                variables = [var for var, _ in rule.params]
                for binding in universe.bindings(rule.params, {}):
                    node = ground_formula(rule.body, binding, universe)
                    if node is not False:
                        atom = universe.atom(name, tuple(binding[v] for v in variables))
                        rules.append((atom, compile_test(node)))
            self.strata.append(rules)

    def closure(self, state: State) -> frozenset[Atom]:
        """`state` plus every derived atom that holds in it."""
        current = set(state)
        for rules in self.strata:
            pending, changed = rules, True
            while pending and changed:  # naive fixpoint: fine for the rule counts of real domains
                rest, changed = [], False
                for atom, test in pending:
                    if test(current):
                        current.add(atom)
                        changed = True
                    else:
                        rest.append((atom, test))
                pending = rest
        return frozenset(current)
