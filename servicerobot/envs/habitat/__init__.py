"""The Habitat/Gibson world: household tasks on 3D scene graphs, executed symbolically or in habitat-sim."""

from servicerobot.envs.habitat.world import SIMULATORS, make_habitat_world

__all__ = ["SIMULATORS", "make_habitat_world"]
