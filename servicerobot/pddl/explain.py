"""Say in ground PDDL why a formula is false in a state: the first failing precondition, the unmet goals."""

from __future__ import annotations

from collections.abc import Mapping

from servicerobot.pddl.atoms import State
from servicerobot.pddl.grounding import Test, Universe, compile_test, ground_formula, substitute
from servicerobot.pddl.model import And, AtomF, Equals, Exists, Forall, Formula, Imply, Not, Or, Truth
from servicerobot.pddl.writer import format_formula

__all__ = ["GoalReport", "conjuncts", "why_false"]


def conjuncts(f: Formula) -> list[Formula]:
    """The top-level conjuncts of a formula (nested `and`s flattened; TRUE has none)."""
    if isinstance(f, And):
        return [c for part in f.parts for c in conjuncts(part)]
    if isinstance(f, Truth) and f.value:
        return []
    return [f]


def _holds(f: Formula, binding: Mapping[str, str], universe: Universe, state: State) -> bool:
    return compile_test(ground_formula(f, binding, universe))(state)


def _binding_text(params, binding: Mapping[str, str]) -> str:
    return ", ".join(f"{var} = {binding[var]}" for var, _ in params)


def why_false(f: Formula, universe: Universe, state: State) -> str:
    """A short reason why a ground (apart from quantified variables) formula is false in `state`.

    Returns "" when there is nothing to add beyond the formula itself (an atom, an equality).
    """
    if isinstance(f, Not) and isinstance(f.f, AtomF):
        return f": {format_formula(f.f)} is true"
    if isinstance(f, Forall):
        for inner in universe.bindings(f.params, {}):
            if not _holds(f.body, inner, universe, state):
                return f" for {_binding_text(f.params, inner)}"
        return ""
    if isinstance(f, Exists):
        if len(f.params) == 1:
            typ = f.params[0][1]
            if not universe.of_type(typ):
                return f": there is no {typ}"
            return f": no {typ} satisfies it"
        return f": no binding of {', '.join(var for var, _ in f.params)} satisfies it"
    if isinstance(f, Or):
        return f": none of its {len(f.parts)} alternatives holds"
    if isinstance(f, Imply):
        return f": {format_formula(f.a)} holds but {format_formula(f.b)} does not"
    if isinstance(f, Not) and not isinstance(f.f, Equals):
        return f": {format_formula(f.f)} holds"
    if isinstance(f, Truth):
        return ": it is always false"
    return ""


class GoalReport:
    """Lists the ground literals (or smallest quantified parts) of a goal that a state does not satisfy.

    `forall` is expanded over the objects, `and` split, and `(imply a b)` reports the unmet parts of
    `b` only where `a` holds; `or`, `exists` and other compound parts are reported whole.
    """

    def __init__(self, goal: Formula, universe: Universe):
        self._tree = self._build(goal, {}, universe)

    def _build(self, f: Formula, binding: Mapping[str, str], universe: Universe) -> tuple:
        if isinstance(f, And):
            return ("all", tuple(self._build(p, binding, universe) for p in f.parts))
        if isinstance(f, Forall):
            return (
                "all",
                tuple(self._build(f.body, inner, universe) for inner in universe.bindings(f.params, binding)),
            )
        if isinstance(f, Imply):
            condition = compile_test(ground_formula(f.a, binding, universe))
            return ("if", condition, self._build(f.b, binding, universe))
        test: Test = compile_test(ground_formula(f, binding, universe))
        return ("leaf", test, format_formula(substitute(f, binding)))

    def unsatisfied(self, state: State) -> list[str]:
        """The unmet parts in goal order, without duplicates."""
        found: dict[str, None] = {}
        stack = [self._tree]
        while stack:
            node = stack.pop()
            kind = node[0]
            if kind == "leaf":
                if not node[1](state):
                    found[node[2]] = None
            elif kind == "all":
                stack.extend(reversed(node[1]))
            elif node[1](state):  # "if": the antecedent holds, so the consequent must
                stack.append(node[2])
        return list(found)
