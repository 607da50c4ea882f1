"""Classical planner back ends behind one `Planner` interface; `get_planner(name)` picks one by name."""

from __future__ import annotations

import importlib

from servicerobot.errors import PlannerError
from servicerobot.pddl._suggest import did_you_mean
from servicerobot.planners.base import Planner, PlanResult, PlanStatus
from servicerobot.planners.builtin import BuiltinPlanner
from servicerobot.planners.fast_downward import FastDownward
from servicerobot.planners.planetarium import evaluate, solvable

__all__ = [
    "PLANNERS",
    "BuiltinPlanner",
    "FastDownward",
    "PlanResult",
    "PlanStatus",
    "Planner",
    "UnknownPlannerError",
    "evaluate",
    "get_planner",
    "solvable",
]

PLANNERS: dict[str, str] = {
    "fast-downward": "servicerobot.planners.fast_downward:FastDownward",
    "fd": "servicerobot.planners.fast_downward:FastDownward",
    "builtin": "servicerobot.planners.builtin:BuiltinPlanner",
    "lapkt": "servicerobot.planners.lapkt:LAPKT",
}
"""Planner names -> `module:Class`; back ends are imported only when asked for."""


class UnknownPlannerError(PlannerError, ValueError):
    """`get_planner` was asked for a name that is not registered."""


def get_planner(name: str = "fast-downward", **kwargs: object) -> Planner:
    """A planner by name (see PLANNERS), constructed with `kwargs`.

    Raises:
        UnknownPlannerError: no planner has that name.
    """
    target = PLANNERS.get(str(name).lower())
    if target is None:
        raise UnknownPlannerError(
            f"unknown planner {name!r}{did_you_mean(str(name).lower(), PLANNERS)}; "
            f"known: {', '.join(PLANNERS)}"
        )
    module_name, class_name = target.split(":")
    return getattr(importlib.import_module(module_name), class_name)(**kwargs)
