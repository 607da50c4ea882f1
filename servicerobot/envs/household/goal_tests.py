"""A task's goal tested on the household state from its indexes, without grounding the goal over the house.

`Interpreter.goal_form` reads a goal as ground literals and one-variable clauses (shared by every house
whose objects named have the same types); the ground literals are two set tests on the true atoms, and a
clause such as `(forall (?i - item) (imply (broken ?i) (discarded ?i)))` is a few set operations on the
objects its trigger predicate holds of now (`HouseholdState.flags`), not a ground literal per item of the
house. The answer is the compiled `Goal`'s (`tests/test_household_goal_tests.py` compares them on every task
of many episodes).
"""

from __future__ import annotations

from collections.abc import Callable

from servicerobot.envs.household.state import HouseholdState
from servicerobot.pddl.goal_forms import GoalForm
from servicerobot.pddl.grounding import Universe, literals_test

__all__ = ["clause_test", "literal_test"]


def literal_test(form: GoalForm) -> Callable[[set], bool] | None:
    """The test of a form without clauses, on the state's atoms (`HouseholdState.live`); None with clauses."""
    return None if form.clauses else literals_test(form.pos, form.neg)


def clause_test(form: GoalForm, universe: Universe) -> Callable[[HouseholdState], bool]:
    """The test of a form on a `HouseholdState`: its ground literals on `live`, each clause by set operations
    on `flags` (the objects of its type its trigger holds of, less those a positive literal holds of, kept
    to those every other negative literal holds of: the clause fails where any is left)."""
    pos, neg = form.pos, form.neg
    clauses = tuple((universe.set_of_type(c.typ), c.trigger, c.false_if_held, c.false_if_not) for c in form.clauses)

    def holds(state: HouseholdState) -> bool:
        live = state.live
        if not pos.issubset(live) or not neg.isdisjoint(live):
            return False
        flags = state.flags
        for of_type, trigger, held, not_held in clauses:
            failing = flags.get(trigger)
            if not failing:
                continue
            failing = of_type.intersection(failing)
            for p in held:
                if failing and p in flags:
                    failing -= flags[p]
            for p in not_held:
                if failing:
                    failing &= flags.get(p, _EMPTY)
            if failing:
                return False
        return True

    return holds


_EMPTY: frozenset[str] = frozenset()


