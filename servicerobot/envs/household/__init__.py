"""The household world: generated homes, people who change them and talk about it, and tasks."""

from servicerobot.envs.household.events import HumanEvent, HumanProcess
from servicerobot.envs.household.tasks import TASK_KINDS, Task, TaskGenerator
from servicerobot.envs.household.world import HouseholdOptions, HouseholdWorld

__all__ = [
           "TASK_KINDS",
           "HouseholdOptions",
           "HouseholdWorld",
           "HumanEvent",
           "HumanProcess",
           "Task",
           "TaskGenerator",
]
