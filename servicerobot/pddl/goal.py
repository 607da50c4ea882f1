"""A goal compiled for one object universe: a fast `holds(state)` plus a list of what is still unmet."""

from __future__ import annotations

from collections.abc import Callable

from servicerobot.pddl.atoms import Atom, State
from servicerobot.pddl.explain import GoalReport
from servicerobot.pddl.grounding import Universe, compile_test, ground_formula, node_atoms, node_literals
from servicerobot.pddl.model import Formula
from servicerobot.pddl.writer import format_formula

__all__ = ["DerivedGoal", "Goal"]


class Goal:
    """A goal formula grounded over the interpreter's objects (quantifiers expanded).

    Attributes:
        formula: the lifted goal formula.
        atoms: the ground atoms the goal mentions positively (after expansion).
        negative_atoms: the ground atoms the goal requires to be false somewhere (after expansion).
    """

    __slots__ = ("_atoms", "_mentioned", "_negative_atoms", "_node", "_report", "_test", "_universe", "formula")

    def __init__(self, formula: Formula, universe: Universe):
        node = ground_formula(formula, {}, universe)
        self.formula = formula
        self._node = node
        self._atoms: frozenset[Atom] | None = None  # computed on first use: a task start needs only the test
        self._negative_atoms: frozenset[Atom] | None = None
        self._mentioned: frozenset[Atom] | None = None
        self._test = compile_test(node)
        self._universe = universe
        self._report: GoalReport | None = None

    @property
    def atoms(self) -> frozenset[Atom]:
        if self._atoms is None:
            self._atoms = node_atoms(self._node)
        return self._atoms

    @property
    def negative_atoms(self) -> frozenset[Atom]:
        if self._negative_atoms is None:
            self._negative_atoms = node_atoms(self._node, positive=False)
        return self._negative_atoms

    @property
    def mentioned(self) -> frozenset[Atom]:
        """Every ground atom the goal mentions (`atoms` and `negative_atoms`): a state change that touches
        none of them leaves the goal's value as it was (without derived predicates)."""
        if self._mentioned is None:
            if self._atoms is None and self._negative_atoms is None:  # both in one walk
                self._atoms, self._negative_atoms = node_literals(self._node)
            self._mentioned = self.atoms | self.negative_atoms
        return self._mentioned

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


class DerivedGoal(Goal):
    """A goal over a domain with derived predicates: tested on the state closed under the domain's rules."""

    __slots__ = ("_closure",)

    def __init__(self, formula: Formula, universe: Universe, closure: Callable[[State], frozenset[Atom]]):
        super().__init__(formula, universe)
        self._closure = closure

    def __reduce__(self) -> tuple:
        return (type(self), (self.formula, self._universe, self._closure))

    def holds(self, state: State) -> bool:
        return self._test(self._closure(state))

    def unsatisfied(self, state: State) -> list[str]:
        return super().unsatisfied(self._closure(state))
