"""A malformed action's error shows how to write one with an action of the world's own domain and objects."""

from __future__ import annotations

import re

import gymnasium as gym
import pytest

import servicerobot  # noqa: F401  (registers the ids)


@pytest.mark.parametrize("env_id", ["ServiceRobot-v0", "ServiceRobot-PyBullet-v0", "ServiceRobot-Habitat-v0"])
def test_malformed_action_hint_is_an_action_of_the_world(env_id):
    if env_id == "ServiceRobot-PyBullet-v0":
        pytest.importorskip("pybullet")
    env = gym.make(env_id)
    try:
        env.reset(seed=0)
        *_, info = env.step("pick up the mug (")
        error = info["action_error"]
        found = re.search(r"expected one action like '\((\S+) ([^)]*)\)' or '\1 \2'", error)
        assert found, error
        interpreter = env.unwrapped.world.interpreter
        name, args = found.group(1), found.group(2).split()
        assert name in interpreter.domain.actions
        assert all(arg in interpreter.objects for arg in args)
        interpreter.ground(name, args)  # well typed: grounding raises on a wrong type or arity
        if env_id == "ServiceRobot-PyBullet-v0":
            assert "pick-up" not in error  # the household's action, which this world does not have
    finally:
        env.close()
