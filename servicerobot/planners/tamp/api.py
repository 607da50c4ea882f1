"""The public entry points: `TampPlanner` (one map, many goals) and `plan_inspection` (one call)."""

from __future__ import annotations

from servicerobot.errors import PlanVerificationError, TampError
from servicerobot.planners.base import Planner
from servicerobot.planners.fast_downward import FastDownward
from servicerobot.planners.tamp.context import TampContext
from servicerobot.planners.tamp.encodings import ENCODINGS
from servicerobot.planners.tamp.goals import DnfGoal, parse_goal
from servicerobot.planners.tamp.incremental import STRATEGIES, solve
from servicerobot.planners.tamp.motion import CollisionChecker, DiscChecker
from servicerobot.planners.tamp.result import TampPlan
from servicerobot.planners.tamp.verify import verify_plan
from servicerobot.scenes.tamp_map import TampMap

__all__ = ["DEFAULT_SEARCH", "TampPlanner", "plan_inspection"]

DEFAULT_SEARCH = "lama-first"
"""The default Fast Downward alias: satisficing; pass `planner=FastDownward(search="astar(blind())")` for
optimal plans."""


class TampPlanner:
    """Plans inspection goals on one map, reusing the prepared graph, indexes and object footprints.

    Args:
        tamp_map: the scene-graph map.
        robot_radius: the robot's radius in metres (default: the map's `robot_radius` metadata, else 0.25).
        checker: the collision checker for motions (default: a `DiscChecker` over all of the map's objects).
        planner: the task planner (default: Fast Downward, `lama-first`).
        encoding: "sparse" (default) or "dense".
        incremental: add objects on demand (Algorithm 1) instead of including all of them up front.
        strategy: "dnf" (one planner call for the whole disjunctive goal) or "per-clause".
        timeout: seconds for a whole `plan` call (task planning, refinement and replanning together).
        rrt_budget: seconds for each RRT-Connect repair.
        verify: check every solved plan with `verify_plan` (collisions included) and raise
            PlanVerificationError if it breaks the goal.
    """

    def __init__(self, tamp_map: TampMap, *, robot_radius: float | None = None,
                 checker: CollisionChecker | None = None, planner: Planner | None = None,
                 encoding: str = "sparse", incremental: bool = True, strategy: str = "dnf",
                 timeout: float | None = 60.0, rrt_budget: float = 0.3, max_iterations: int = 25,
                 use_ompl: bool | None = None, verify: bool = True):
        self.context = TampContext(tamp_map, robot_radius)
        self.context.warm_up()
        self.checker = checker if checker is not None else DiscChecker(tamp_map, self.context.robot_radius)
        self.planner = planner if planner is not None else FastDownward(alias=DEFAULT_SEARCH, timeout=None)
        self.options = {"encoding": encoding, "incremental": incremental, "strategy": strategy,
                        "timeout": timeout, "rrt_budget": rrt_budget, "max_iterations": max_iterations,
                        "use_ompl": use_ompl}
        self._check_options(self.options)
        self.verify = verify

    @property
    def map(self) -> TampMap:
        return self.context.map

    @staticmethod
    def _check_options(options: dict) -> None:
        if options["encoding"] not in ENCODINGS:
            raise TampError(f"unknown encoding {options['encoding']!r}; use one of {', '.join(ENCODINGS)}")
        if options["strategy"] not in STRATEGIES:
            raise TampError(f"unknown strategy {options['strategy']!r}; use one of {', '.join(STRATEGIES)}")

    def plan(self, goal: DnfGoal | str, **overrides) -> TampPlan:
        """Plan `goal` (a DnfGoal or its PDDL text); `overrides` replace constructor options for this call.

        Raises:
            TampGoalError: the goal is malformed or names symbols the map does not have.
            PlanVerificationError: (with `verify`) a solved plan breaks its goal; that would be a bug.
        """
        unknown = set(overrides) - set(self.options)
        if unknown:
            raise TypeError(f"unknown options {sorted(unknown)}; known: {', '.join(self.options)}")
        options = {**self.options, **overrides}
        self._check_options(options)
        goal = parse_goal(goal) if isinstance(goal, str) else goal
        goal.check(self.map)
        plan = solve(self.context, goal, self.planner, self.checker, **options)
        if plan.solved and self.verify:
            report = verify_plan(self.map, plan, checker=self.checker)
            plan.verified = report.ok
            if not report.ok:
                raise PlanVerificationError("a returned plan failed verification:\n  "
                                            + "\n  ".join(report.violations[:20]))
        return plan


def plan_inspection(tamp_map: TampMap, goal: DnfGoal | str, encoding: str = "sparse", incremental: bool = True,
                    timeout: float | None = 60.0, **kwargs) -> TampPlan:
    """Plan an inspection `goal` on `tamp_map` (see `TampPlanner` for the keyword arguments).

    Examples:
        >>> from servicerobot.scenes.tamp_maps import alley
        >>> plan = plan_inspection(alley(0), "(or (and (visited p0_5)))")  # doctest: +SKIP
        >>> plan.status, [str(a) for a in plan.actions]  # doctest: +SKIP
        ('solved', ['(move p0_0 p1_2)', '(move p1_2 o0)', '(inspect o0)', ...])
    """
    return TampPlanner(tamp_map, encoding=encoding, incremental=incremental, timeout=timeout, **kwargs).plan(goal)
