"""The AI2-THOR world: iTHOR FloorPlans on the household core, a symbolic and a Unity executor."""

from servicerobot.envs.ai2thor.world import CONTROLLERS, TABLE2_KINDS, make_ai2thor_world

__all__ = ["CONTROLLERS", "TABLE2_KINDS", "make_ai2thor_world"]
