"""A task's goal tested on the household state from its indexes, without grounding the goal over the house.

`Interpreter.goal_form` reads a goal as ground literals and one-variable clauses (shared by every house
whose objects named have the same types); the ground literals are two set tests on the true atoms, and a
clause such as `(forall (?i - item) (imply (broken ?i) (discarded ?i)))` looks only at the objects its
trigger predicate holds of now (`HouseholdState.flags`), not at every item of the house. The answer is the
compiled `Goal`'s (`tests/test_household_goal_tests.py` compares them on every task of many episodes).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping

from servicerobot.envs.household.state import HouseholdState
from servicerobot.pddl.goal_forms import GoalForm
from servicerobot.pddl.grounding import literals_test
from servicerobot.pddl.model import TypeHierarchy

__all__ = ["clause_test", "literal_test"]

_FITS: dict[tuple[int, str], tuple[TypeHierarchy, dict[str, bool]]] = {}  # (hierarchy, type) -> its answers


def literal_test(form: GoalForm) -> Callable[[set], bool] | None:
    """The test of a form without clauses, on the state's atoms (`HouseholdState.live`); None with clauses."""
    return None if form.clauses else literals_test(form.pos, form.neg)


def clause_test(form: GoalForm, objects: Mapping[str, str], types: TypeHierarchy
                ) -> Callable[[HouseholdState], bool]:
    """The test of a form on a `HouseholdState`: its ground literals on `live`, its clauses (which read
    unary predicates only) from `flags`."""
    pos, neg = form.pos, form.neg
    clauses = tuple((_fits(types, c.typ), c.typ, c.trigger, c.false_if_held, c.false_if_not) for c in form.clauses)

    def holds(state: HouseholdState) -> bool:
        live = state.live
        if not pos.issubset(live) or not neg.isdisjoint(live):
            return False
        flags = state.flags
        for fits, typ, trigger, held, not_held in clauses:
            for name in flags.get(trigger, ()):
                otype = objects.get(name)  # the goal ranges over the universe's objects of the type
                if otype is None:
                    continue
                fit = fits.get(otype)
                if fit is None:
                    fit = fits[otype] = types.is_subtype(otype, typ)
                if not fit:
                    continue
                for p in held:  # a positive literal holds: the clause holds of `name`
                    if name in flags.get(p, ()):
                        break
                else:
                    for p in not_held:
                        if name not in flags.get(p, ()):
                            break
                    else:
                        return False
        return True

    return holds


def _fits(types: TypeHierarchy, typ: str) -> dict[str, bool]:
    """object type -> whether it is `typ` or a subtype, filled as asked; one per hierarchy and type."""
    known = _FITS.get((id(types), typ))
    if known is None or known[0] is not types:
        if len(_FITS) >= 1024:
            _FITS.clear()
        known = _FITS[(id(types), typ)] = (types, {})
    return known[1]
