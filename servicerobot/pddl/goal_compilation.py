"""Compile a goal with quantifiers and disjunctions into a conjunction of ground literals.

Fast Downward turns quantified or disjunctive goals into axioms, and its heuristics see little through
negated axioms: a household "all dishes clean" goal that LAMA solves in 0.01 s as a conjunction runs
past 60 s as `forall`/`or`. LAPKT drops such goals silently. So before planning we expand quantifiers
over the problem's objects (closed world) and commit each unsatisfied disjunction to one disjunct:
the first one whose literals are true now or achievable by some action (a predicate some effect adds,
or deletes for a negative literal). The result implies the original goal; it is not equivalent, so a
planner may miss a plan that only a different disjunct allows.
"""

from __future__ import annotations

import re
from collections.abc import Mapping

from servicerobot.errors import PDDLSemanticError
from servicerobot.pddl import (
    FALSE,
    TRUE,
    AddEffect,
    And,
    Atom,
    AtomF,
    DelEffect,
    Domain,
    Equals,
    Exists,
    Forall,
    ForallEffect,
    Formula,
    Imply,
    Not,
    Or,
    Truth,
    WhenEffect,
)

__all__ = ["achievable_literals", "conjunctive_goal", "goal_names"]

Literal = tuple[bool, Atom]  # (positive?, atom)

_NAME = re.compile(r"[a-z0-9_\-]+")


def goal_names(goal: str, compiled, state: frozenset[Atom]) -> set[str]:
    """The names a goal depends on in `state`: those its text names and those of its ground literals (or
    `or` / `exists` parts) that are false now. `compiled` is the goal's `servicerobot.pddl.Goal`.

    The agent and the oracle keep exactly these items (and what the robot holds) in their planning
    problems: an item outside them keeps satisfying the goal, since a household action changes only the
    items it names.
    """
    names = set(_NAME.findall(goal))
    for literal in compiled.unsatisfied(state):
        names.update(_NAME.findall(literal))
    return names


def achievable_literals(domain: Domain) -> tuple[frozenset[str], frozenset[str]]:
    """Predicates some action can make true, and predicates some action can make false."""
    adds: set[str] = set()
    dels: set[str] = set()

    def visit(effects) -> None:
        for e in effects:
            if isinstance(e, AddEffect):
                adds.add(e.atom.predicate)
            elif isinstance(e, DelEffect):
                dels.add(e.atom.predicate)
            elif isinstance(e, (ForallEffect, WhenEffect)):
                visit(e.effects)

    for action in domain.actions.values():
        visit(action.effects)
    # a derived predicate changes with the atoms its rule reads; treat it as reachable both ways
    return frozenset(adds | domain.derived.keys()), frozenset(dels | domain.derived.keys())


def _nnf(f: Formula, binding: dict[str, str], domain: Domain, objects: Mapping[str, str], positive: bool):
    """Ground `f` under `binding` into a tree of ('and'|'or', parts) and literals, negations pushed in."""
    if isinstance(f, AtomF):
        return (positive, f.ground(binding))
    if isinstance(f, Truth):
        return TRUE if f.value == positive else FALSE
    if isinstance(f, Equals):
        same = binding.get(f.a, f.a) == binding.get(f.b, f.b)
        return TRUE if same == positive else FALSE
    if isinstance(f, Not):
        return _nnf(f.f, binding, domain, objects, not positive)
    if isinstance(f, Imply):
        return _nnf(Or((Not(f.a), f.b)), binding, domain, objects, positive)
    if isinstance(f, (And, Or)):
        kind = ("and" if isinstance(f, And) else "or") if positive else ("or" if isinstance(f, And) else "and")
        return (kind, [_nnf(p, binding, domain, objects, positive) for p in f.parts])
    if isinstance(f, (Forall, Exists)):
        conj = isinstance(f, Forall) == positive
        parts = []
        bindings = [dict(binding)]
        for var, typ in f.params:
            bindings = [dict(b, **{var: o}) for b in bindings for o in domain.objects_of_type(objects, typ)]
        for b in bindings:
            parts.append(_nnf(f.body, b, domain, objects, positive))
        return ("and" if conj else "or", parts)
    raise PDDLSemanticError(f"cannot compile goal part {f!r}")


def _holds(node, state: frozenset[Atom]) -> bool:
    if node is TRUE or node is FALSE:
        return node is TRUE
    if isinstance(node[0], bool):
        return (node[1] in state) == node[0]
    results = (_holds(p, state) for p in node[1])
    return all(results) if node[0] == "and" else any(results)


def _choose(node, state, can_add, can_del, out: list[Literal]) -> bool:
    """Append the literals of a conjunction that implies `node`; False if none looks achievable."""
    if node is TRUE:
        return True
    if node is FALSE:
        return False
    if isinstance(node[0], bool):
        positive, atom = node
        if (atom in state) != positive and atom.predicate not in (can_add if positive else can_del):
            return False
        out.append(node)
        return True
    kind, parts = node
    if kind == "and":
        return all(_choose(p, state, can_add, can_del, out) for p in parts)
    for p in sorted(parts, key=lambda p: not _holds(p, state)):  # keep a disjunct that already holds
        trial: list[Literal] = []
        if _choose(p, state, can_add, can_del, trial):
            out.extend(trial)
            return True
    return False


def conjunctive_goal(domain: Domain, goal: Formula, objects: Mapping[str, str], state: frozenset[Atom]) -> Formula:
    """A conjunction of ground literals that implies `goal`, chosen for reachability from `state`.

    Raises:
        PDDLSemanticError: no choice of disjuncts looks achievable (the goal is unreachable).
    """
    can_add, can_del = achievable_literals(domain)
    literals: list[Literal] = []
    if not _choose(_nnf(goal, {}, domain, objects, True), state, can_add, can_del, literals):
        raise PDDLSemanticError("the goal cannot be reached: every way to satisfy it needs a literal that no "
                                "action can achieve")
    seen: dict[Atom, bool] = {}
    parts: list[Formula] = []
    for positive, atom in literals:
        if seen.setdefault(atom, positive) != positive:
            raise PDDLSemanticError(f"the goal needs {atom} both true and false")
        if len(seen) > len(parts):
            a = AtomF(atom.predicate, atom.args)
            parts.append(a if positive else Not(a))
    if not parts:
        return TRUE
    return parts[0] if len(parts) == 1 else And(tuple(parts))
