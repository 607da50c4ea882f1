"""Planetarium's three metrics on a generated PDDL problem, with the planner: parseable, solvable, correct.

`servicerobot.pddl.equivalence.evaluate` decides parseable and correct (equivalence to a reference) in the
PDDL layer, which has no planner; it takes the solvable check as a function. This module gives it one:
`solvable` runs Fast Downward and has VAL validate the plan.
"""

from __future__ import annotations

from servicerobot.errors import ServiceRobotError
from servicerobot.pddl.equivalence import EvaluationResult
from servicerobot.pddl.equivalence import evaluate as _evaluate
from servicerobot.pddl.model import Domain, Problem
from servicerobot.pddl.val import val_validate
from servicerobot.planners.fast_downward import FastDownward

__all__ = ["evaluate", "solvable"]


def solvable(domain_text: str, problem_text: str) -> bool:
    """Whether Fast Downward finds a plan for the problem that VAL accepts; False when either fails."""
    try:
        result = FastDownward().solve(domain_text, problem_text)
        return result.solved and val_validate(domain_text, problem_text, result.plan).valid
    except ServiceRobotError:
        return False


def evaluate(source: Problem | str, target: Problem | str, domain: Domain | str, placeholder: bool = False,
             check_solvable: bool = True) -> EvaluationResult:
    """Judge a generated problem against a reference as Planetarium does: parseable, solvable (Fast Downward
    finds a plan that VAL accepts; False when `check_solvable` is off) and correct (equivalent to `target`).

    An unparseable source gives `EvaluationResult(False, False, False)`; it never raises for the source.

    Raises:
        PDDLError: the target or the domain does not parse.
    """
    return _evaluate(source, target, domain, placeholder, check_solvable, solvable if check_solvable else None)
