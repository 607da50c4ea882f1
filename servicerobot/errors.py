"""The servicerobot exception hierarchy: catch `ServiceRobotError` for all, or a subclass for one layer."""

from __future__ import annotations

__all__ = [
    "ActionError",
    "DependencyNotInstalled",
    "PDDLError",
    "PDDLParseError",
    "PDDLSemanticError",
    "PlanVerificationError",
    "PlannerError",
    "SceneError",
    "ServiceRobotError",
    "TampError",
    "TampGoalError",
    "TaskInfeasible",
    "install_hint",
]


def install_hint(extra: str) -> str:
    """How to install an optional part: `pip install -e ".[pybullet]"` in a clone of the repository, or
    `pip install "servicerobot[pybullet]"` where the package comes from an index."""
    return f'pip install -e ".[{extra}]" in a clone of the repository (pip install "servicerobot[{extra}]" from an index)'


class ServiceRobotError(Exception):
    """Root of every error raised by servicerobot."""


class PDDLError(ServiceRobotError, ValueError):
    """Something is wrong with PDDL text or with a PDDL object."""


class PDDLParseError(PDDLError):
    """PDDL text is not well formed; the message carries the line and column."""

    def __init__(self, message: str, line: int | None = None, column: int | None = None, source: str = ""):
        where = f"{source or '<string>'}:{line}:{column}: " if line is not None else ""
        super().__init__(where + message)
        self.line, self.column, self.source = line, column, source


class PDDLSemanticError(PDDLError):
    """Well-formed PDDL that does not fit the domain: unknown predicate, arity, type, object."""


class ActionError(PDDLError):
    """A ground action that cannot be parsed, grounded or applied; the message says why."""


class PlannerError(ServiceRobotError, RuntimeError):
    """A planner back end failed to run (not: found no plan; that is a PlanResult status)."""


class SceneError(ServiceRobotError, ValueError):
    """A scene or scene file is malformed or inconsistent."""


class DependencyNotInstalled(ServiceRobotError, ImportError):
    """An optional back end is missing; the message names the pip extra that installs it."""


class TampError(ServiceRobotError):
    """Task and motion planning on a scene-graph map went wrong (not: found no plan; that is a plan status)."""


class TampGoalError(TampError, ValueError):
    """A TAMP goal is malformed, names unknown symbols, or can never hold; the message says which literal."""


class PlanVerificationError(TampError, AssertionError):
    """A TAMP plan breaks its goal or its motion enters a place the goal avoids; the message lists each breach."""


class TaskInfeasible(ServiceRobotError):
    """A task cannot be done as asked in the scene it is given (no fruit bowl to fill, two glasses of five):
    `goal` is what can still be done (None: nothing) and `dropped` says, part by part, what was left out."""

    def __init__(self, reason: str, goal: str | None = None, dropped: tuple[str, ...] = ()):
        super().__init__(reason)
        self.reason = reason
        self.goal = goal
        self.dropped = tuple(dropped) or (reason,)
