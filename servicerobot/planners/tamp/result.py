"""What a TAMP planning call returns: the task plan, its refinement into place paths and motions, and stats."""

from __future__ import annotations

from dataclasses import dataclass, field

from servicerobot.planners.tamp.encodings import TaskAction
from servicerobot.planners.tamp.goals import DnfGoal

__all__ = ["MotionStep", "TampPlan", "TampStats"]

Point = tuple[float, float]


@dataclass(frozen=True)
class MotionStep:
    """One refined task action.

    Attributes:
        action: the task-plan action.
        places: the place path the robot follows (start and end included); one place for `inspect`.
        polyline: the robot's reference path in metres (one point for `inspect` and zero-length moves).
        repaired: whether RRT-Connect replaced part of the straight-segment motion.
    """

    action: TaskAction
    places: tuple[str, ...]
    polyline: tuple[Point, ...]
    repaired: bool = False


@dataclass
class TampStats:
    """Counters and timings (seconds) of one planning call."""

    encoding: str = "sparse"
    incremental: bool = True
    strategy: str = "dnf"
    planner: str = ""
    task_time: float = 0.0  # building problems and running the task planner
    encode_time: float = 0.0
    refine_time: float = 0.0
    total_time: float = 0.0
    cpu_time: float = 0.0  # this process plus the planner subprocesses (robust to a busy machine)
    fd_calls: int = 0
    iterations: int = 0
    timeouts: int = 0
    rrt_calls: int = 0
    rrt_successes: int = 0
    objects_added: list[str] = field(default_factory=list)
    n_symbols: int = 0  # of the last task problem
    n_edges: int = 0

    def as_dict(self) -> dict:
        return dict(self.__dict__)


@dataclass
class TampPlan:
    """The result of `plan_inspection`.

    Attributes:
        status: "solved", "timeout", "unsolvable" (the task planner proved there is no plan), "failed"
            (refinement could not be repaired, or the iteration limit was hit) or "error" (planner error).
        goal: the goal planned for.
        clause: the index of the goal clause the plan satisfies (None unless solved).
        actions: the task plan.
        steps: the refined actions (same order as `actions`).
        cost: the task plan's cost in centimetres (inspections count 100).
        objects: the objects the final task problem included.
        message: why planning stopped, when it did not solve.
        verified: None if not verified, else whether `verify_plan` accepted the plan.
    """

    status: str
    goal: DnfGoal
    clause: int | None = None
    actions: tuple[TaskAction, ...] = ()
    steps: tuple[MotionStep, ...] = ()
    cost: int = 0
    objects: tuple[str, ...] = ()
    stats: TampStats = field(default_factory=TampStats)
    message: str = ""
    verified: bool | None = None

    @property
    def solved(self) -> bool:
        return self.status == "solved"

    @property
    def length(self) -> float:
        """The motion's length in metres."""
        total = 0.0
        for step in self.steps:
            for (x1, y1), (x2, y2) in zip(step.polyline, step.polyline[1:]):
                total += ((x2 - x1) ** 2 + (y2 - y1) ** 2) ** 0.5
        return total

    def polyline(self) -> list[Point]:
        """The whole motion as one polyline."""
        out: list[Point] = []
        for step in self.steps:
            for p in step.polyline:
                if not out or out[-1] != p:
                    out.append(p)
        return out
