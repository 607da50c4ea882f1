"""Actions under hostile use: whatever an agent sends, `step` never raises, the world is unchanged by an action
that fails, and `info["action_error"]` quotes at most a short excerpt of the action (a 1 MB action gave a
1 MB error string, and an observation outside its space)."""

from __future__ import annotations

import gymnasium as gym
import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import servicerobot  # noqa: F401  (registers the ids)
from servicerobot.envs.core import MAX_ACTION_CHARS, MAX_ERROR_CHARS


def _make():
    env = gym.make("ServiceRobot-v0", size="small", n_tasks=1000, event_rate=0.0, disturbance_prob=0.0)
    env.reset(seed=0)
    return env


@pytest.fixture
def fresh():
    """A new episode: the first steps of a task change nothing but what the robot does."""
    env = _make()
    yield env
    env.close()


@pytest.fixture(scope="module")
def env():
    env = _make()
    yield env
    env.close()


@pytest.mark.parametrize("action", [
    "(pick-up robot " + "x" * 1_000_000 + ")",
    "x" * 1_000_000,
    "(" * 100_000,
    "(pick-up robot " + "y" * (MAX_ACTION_CHARS - 16) + ")",  # just inside the cap: parsed, error cut
    np.zeros(10**6),
    [1] * 10**6,
    b"(" * 10**6,
])
def test_a_huge_action_gets_a_short_error_and_an_observation_in_its_space(fresh, action):
    env = fresh
    before = env.unwrapped.world.state.atoms
    obs, reward, _, _, info = env.step(action)
    assert info["action_error"] and len(info["action_error"]) <= MAX_ERROR_CHARS
    assert obs["action_result"] == info["action_error"]
    assert env.observation_space.contains(obs)
    assert env.unwrapped.world.state.atoms == before  # unchanged
    assert reward < 0


def test_an_action_over_the_cap_is_refused_unread_naming_its_length(env):
    _, _, _, _, info = env.step("x" * 1_000_000)
    assert info["action_error"].startswith("the action is 1,000,000 characters long; a skill is at most 512")
    assert "(999,920 more characters)" in info["action_error"]


_ACTION = st.one_of(
    st.text(max_size=600),
    st.text(alphabet="() -robtmugkitchen_0123", max_size=600),
    st.builds(lambda w: "(" + " ".join(w) + ")", st.lists(st.sampled_from(
        ["pick-up", "robot", "move", "place-on", "(", ")", "kitchen", "x" * 300, "?x", "-", "wait"]), max_size=12)),
    st.binary(max_size=300), st.integers(), st.none(), st.lists(st.integers(), max_size=50),
)


@settings(max_examples=300, deadline=None, derandomize=True)
@given(action=_ACTION)
def test_any_action_is_answered_without_raising_and_with_a_bounded_error(env, action):
    obs, _, _, _, info = env.step(action)
    assert isinstance(info["action_error"], str) and len(info["action_error"]) <= MAX_ERROR_CHARS
    assert env.observation_space["action_result"].contains(obs["action_result"])
