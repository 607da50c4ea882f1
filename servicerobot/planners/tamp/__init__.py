"""Task and motion planning in hierarchical 3D scene graphs (after Ray, Bradley, Carlone and Roy, ISRR 2024).

The pipeline: a DNF inspection goal (`goals`) -> a dense or sparse PDDL problem (`encodings`) -> Fast
Downward -> hierarchical refinement of each move into a place path (A*) and a motion (straight segments,
RRT-Connect repair; `hierarchical`, `motion`, `rrt`) -> the incremental object solver replans with the
objects in the way (`incremental`) -> `verify` proves the motion never enters an avoided place.
"""

from servicerobot.planners.tamp.api import DEFAULT_SEARCH, TampPlanner, plan_inspection
from servicerobot.planners.tamp.context import TampContext
from servicerobot.planners.tamp.encodings import (
    TaskAction,
    TaskProblem,
    dense_problem,
    domain_text,
    sparse_problem,
)
from servicerobot.planners.tamp.goals import DnfGoal, GoalLiteral, parse_goal, sample_goal
from servicerobot.planners.tamp.motion import CollisionChecker, DiscChecker, InspectionAware
from servicerobot.planners.tamp.result import MotionStep, TampPlan, TampStats
from servicerobot.planners.tamp.rrt import ompl_available, rrt_connect
from servicerobot.planners.tamp.verify import VerificationReport, verify_plan

__all__ = [
    "DEFAULT_SEARCH",
    "CollisionChecker",
    "DiscChecker",
    "DnfGoal",
    "GoalLiteral",
    "InspectionAware",
    "MotionStep",
    "TampContext",
    "TampPlan",
    "TampPlanner",
    "TampStats",
    "TaskAction",
    "TaskProblem",
    "VerificationReport",
    "dense_problem",
    "domain_text",
    "ompl_available",
    "parse_goal",
    "plan_inspection",
    "rrt_connect",
    "sample_goal",
    "sparse_problem",
    "verify_plan",
]
