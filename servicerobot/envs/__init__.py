"""Gymnasium environments: `ServiceRobotEnv` over pluggable worlds, and observation decoding."""

from servicerobot.envs.core import UPDATE_MODES, ServiceRobotEnv
from servicerobot.envs.observation import Observation, Percept, decode
from servicerobot.envs.world import Utterance, World

__all__ = ["UPDATE_MODES", "Observation", "Percept", "ServiceRobotEnv", "Utterance", "World", "decode"]
