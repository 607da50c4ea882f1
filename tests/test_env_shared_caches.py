"""A house steps the same whatever the process has cached before (issue 37): the interpreters, action and goal
texts, atoms, quantified goals' parts and percepts that one process shares across houses change speed, never
episodes.

The recorded episodes of `tests/data/env_golden.json` (oracle and random actions, malformed ones included) are
stepped with the interpreters' shared tables emptied first, then again after all of them ran (every shared
cache warm with every house's texts and goals), both as a house seen before (its interpreter reused) and as a
new interpreter over the warm shared tables (a new house whose names earlier houses had); each time every
observation, reward, flag and info must be what was recorded."""

from __future__ import annotations

import json

import gymnasium as gym
from test_env_golden import GOLDEN, _canonical, _digest  # tests/, this file's directory

import servicerobot  # noqa: F401
from servicerobot.pddl import Interpreter
from servicerobot.pddl import interpreter as interpreter_module
from servicerobot.scenes.household import household_domain


def _digests(options: dict, seed: int, actions: list[str]) -> list[str]:
    """The digest of every step of the episode, as the recording holds them."""
    env = gym.make("ServiceRobot-v0", **options)
    obs, info = env.reset(seed=seed)
    out = [_digest(_canonical(obs, info))]
    for action in actions:
        obs, reward, terminated, truncated, info = env.step(action)
        out.append(_digest(_canonical(obs, repr(reward), terminated, truncated, info)))
        if terminated or truncated:
            break
    env.close()
    return out


def test_episodes_are_as_recorded_with_the_shared_caches_emptied_or_warm():
    episodes = [e for e in json.loads(GOLDEN.read_text())["episodes"] if e["options"].get("size") != "large"]
    assert len(episodes) >= 4 and all(len(e["digests"]) > 10 for e in episodes)
    for e in episodes:
        Interpreter.clear_shared()
        assert _digests(e["options"], e["seed"], e["actions"]) == e["digests"], f"{e['name']}: caches emptied"

    for e in reversed(episodes):  # every house's texts, goals and atoms made once, other houses first
        _digests(e["options"], e["seed"], e["actions"])
    tables = interpreter_module._tables(household_domain())
    # the shared tables are warm (action texts, goal formulas, goal forms): the comparisons below mean something
    assert tables.texts and tables.goals and tables.forms

    for e in episodes:
        assert _digests(e["options"], e["seed"], e["actions"]) == e["digests"], f"{e['name']}: house seen before"
        interpreter_module._SHARED.clear()  # a new interpreter, the domain's shared tables and atoms warm
        assert _digests(e["options"], e["seed"], e["actions"]) == e["digests"], \
            f"{e['name']}: a new interpreter over warm tables"
