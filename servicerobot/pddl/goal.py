"""A goal compiled for one object universe: a fast `holds(state)` plus a list of what is still unmet."""

from __future__ import annotations

from servicerobot.pddl.atoms import Atom, State
from servicerobot.pddl.explain import GoalReport
from servicerobot.pddl.grounding import Universe, compile_test, ground_formula, node_atoms
from servicerobot.pddl.model import Formula
from servicerobot.pddl.writer import format_formula

__all__ = ["Goal"]


class Goal:
    """A goal formula grounded over the interpreter's objects (quantifiers expanded).

    Attributes:
        formula: the lifted goal formula.
        atoms: the ground atoms the goal mentions positively (after expansion).
        negative_atoms: the ground atoms the goal requires to be false somewhere (after expansion).
    """

    __slots__ = ("_report", "_test", "_universe", "atoms", "formula", "negative_atoms")

    def __init__(self, formula: Formula, universe: Universe):
        node = ground_formula(formula, {}, universe)
        self.formula = formula
        self.atoms: frozenset[Atom] = node_atoms(node)
        self.negative_atoms: frozenset[Atom] = node_atoms(node, positive=False)
        self._test = compile_test(node)
        self._universe = universe
        self._report: GoalReport | None = None

    def __reduce__(self) -> tuple:
        return (type(self), (self.formula, self._universe))

    def holds(self, state: State) -> bool:
        """True if the goal is satisfied in `state`."""
        return self._test(state)

    def unsatisfied(self, state: State) -> list[str]:
        """The goal's ground literals (or whole `or` / `exists` parts) failing in `state`; [] if it holds."""
        if self._test(state):
            return []
        if self._report is None:
            self._report = GoalReport(self.formula, self._universe)
        return self._report.unsatisfied(state)

    def __str__(self) -> str:
        return format_formula(self.formula)

    def __repr__(self) -> str:
        return f"Goal({format_formula(self.formula)})"
