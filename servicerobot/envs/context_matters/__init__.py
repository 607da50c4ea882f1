"""Context Matters tasks on 3D scene graphs: the six task domains, a seeded instance generator with ground
truth (`relaxation_expected` and the acceptable goals), CM's dataset layout, and the symbolic world of an
instance (`CMWorld`) that planners and the evaluation run on."""

from servicerobot.envs.context_matters.dataset import read_split, split_names, write_split
from servicerobot.envs.context_matters.goals import (
    DOMAINS,
    GoalFormatError,
    Requirement,
    TaskGoal,
    parse_task,
    render_task,
)
from servicerobot.envs.context_matters.objects import PROFILES, ObjectProfile
from servicerobot.envs.context_matters.tasks import (
    EQUIVALENTS,
    VARIANTS,
    CMInstance,
    generate_index,
    generate_instance,
    generate_set,
)
from servicerobot.envs.context_matters.world import CMWorld, SceneObject, world_of

__all__ = [
    "DOMAINS",
    "EQUIVALENTS",
    "PROFILES",
    "VARIANTS",
    "CMInstance",
    "CMWorld",
    "GoalFormatError",
    "ObjectProfile",
    "Requirement",
    "SceneObject",
    "TaskGoal",
    "generate_index",
    "generate_instance",
    "generate_set",
    "parse_task",
    "read_split",
    "render_task",
    "split_names",
    "world_of",
    "write_split",
]
