"""Recorded episodes of ServiceRobot-v0 replay to the same observations, rewards and infos, and seeds give
the same houses: the speed work on reset and step (issue 37) may change how things are computed, never what.

`tests/data/env_golden.json` holds, for a few seeded episodes, the actions taken (the oracle's, and seeded
random ones with failures and garbage mixed in) and a short digest of every step's (obs, reward, terminated,
truncated, info); and a digest of the houses generated from many seeds. They were recorded before the
speed work. Re-record only for an intended change of behaviour:

    python tests/test_env_golden.py --record --force
"""

from __future__ import annotations

import hashlib
import json
import os
import sys
from pathlib import Path

import gymnasium as gym
import numpy as np
import pytest

import servicerobot  # noqa: F401  (registers the ids)
from servicerobot.scenes.household import generate_household

GOLDEN = Path(__file__).parent / "data" / "env_golden.json"

# (name, gym.make options, seed, how the actions are chosen)
EPISODES = [
    ("default-verbal-oracle", {"size": "default"}, 0, "oracle"),
    ("default-verbal-oracle-2", {"size": "default"}, 1, "oracle"),
    ("small-visual-oracle", {"size": "small", "update_mode": "visual"}, 5, "oracle"),
    ("default-both-busy-oracle", {"size": "default", "update_mode": "both", "event_rate": 0.4,
                                  "disturbance_prob": 1.0}, 7, "oracle"),
    ("large-verbal-oracle", {"size": "large", "n_tasks": 2}, 8, "oracle"),
    ("default-visual-random", {"size": "default", "update_mode": "visual", "event_rate": 0.3}, 11, "random"),
    ("small-both-random", {"size": "small", "update_mode": "both"}, 12, "random"),
]
HOUSE_SEEDS = {"small": range(40), "default": range(40), "large": range(8)}
RANDOM_STEPS = 250


def _digest(value) -> str:
    return hashlib.sha256(value.encode()).hexdigest()[:16]


def _canonical(obs: dict, *rest) -> str:
    """One JSON text for a step: every observation field (the mask as its bytes), then reward, flags, info."""
    fields = {k: (v.tolist() if isinstance(v, np.ndarray) else v) for k, v in obs.items()}
    return json.dumps([fields, *rest], sort_keys=True, default=repr)


def _random_action(env, rng: np.random.Generator) -> str:
    """Mostly an applicable action, sometimes any well-typed ground action (often inapplicable), sometimes
    garbage: the paths an agent's actions take."""
    world = env.unwrapped.world
    roll = rng.random()
    if roll < 0.08:
        return ["", "(fly robot)", "(move robot)", "move", "(wait)", "((", "(pick-up robot nothing x y)"][
            int(rng.integers(7))]
    interp = world.interpreter
    if roll < 0.3:
        name = sorted(world.domain.actions)[int(rng.integers(len(world.domain.actions)))]
        action = world.domain.actions[name]
        args = []
        for _, typ in action.params:
            objs = interp.universe.of_type(typ)
            args.append(objs[int(rng.integers(len(objs)))] if objs else "nothing")
        return f"({name} {' '.join(args)})"
    applicable = [str(a) for a in interp.applicable_actions(world.state.atoms)]
    return applicable[int(rng.integers(len(applicable)))] if applicable else "(wait)"


def _run(options: dict, seed: int, actions: list[str] | None, chooser: str) -> tuple[list[str], list[str]]:
    """(actions, per-step digests) of one episode; `actions` replays recorded ones, else `chooser` picks."""
    env = gym.make("ServiceRobot-v0", **options)
    obs, info = env.reset(seed=seed)
    digests = [_digest(_canonical(obs, info))]
    taken: list[str] = []
    if actions is None and chooser == "oracle":
        from servicerobot.oracle import OracleAgent

        agent = OracleAgent.from_env(env)
    rng = np.random.default_rng(seed + 1000)
    limit = len(actions) if actions is not None else (10**6 if chooser == "oracle" else RANDOM_STEPS)
    while len(taken) < limit:
        if actions is not None:
            action = actions[len(taken)]
        else:
            action = agent.act(obs) if chooser == "oracle" else _random_action(env, rng)
        taken.append(action)
        obs, reward, term, trunc, info = env.step(action)
        digests.append(_digest(_canonical(obs, repr(reward), term, trunc, info)))
        if term or trunc:
            break
    env.close()
    return taken, digests


def _house_digest(size: str, seed: int) -> str:
    scene = generate_household(size, np.random.default_rng(seed))
    return _digest(json.dumps({
        "rooms": [[r.name, r.kind, r.label, r.rect, r.cell] for r in scene.rooms],
        "entities": [[n, e.pddl_type, e.noun, e.attributes, e.room, e.pos] for n, e in scene.entities.items()],
        "doors": scene.doors, "init": sorted(map(str, scene.init)), "grid": scene.grid,
    }, sort_keys=True))


def _record() -> dict:
    episodes = []
    for name, options, seed, chooser in EPISODES:
        actions, digests = _run(options, seed, None, chooser)
        episodes.append({"name": name, "options": options, "seed": seed, "actions": actions, "digests": digests})
    houses = {size: [_house_digest(size, s) for s in seeds] for size, seeds in HOUSE_SEEDS.items()}
    return {"episodes": episodes, "houses": houses}


def _golden() -> dict:
    if not GOLDEN.exists():
        pytest.fail(f"{GOLDEN} is missing; record it with `python {Path(__file__).name} --record`")
    return json.loads(GOLDEN.read_text())


@pytest.mark.parametrize("index", range(len(EPISODES)), ids=[e[0] for e in EPISODES])
def test_recorded_episode_replays_identically(index):
    recorded = _golden()["episodes"][index]
    assert recorded["name"] == EPISODES[index][0]
    assert len(recorded["digests"]) > 10  # the episode did something worth comparing
    _, digests = _run(recorded["options"], recorded["seed"], recorded["actions"], "replay")
    for step, (got, want) in enumerate(zip(digests, recorded["digests"])):
        what = "the reset" if step == 0 else f"step {step}, action {recorded['actions'][step - 1]!r},"
        assert got == want, f"{recorded['name']}: {what} differs from the recording"
    assert len(digests) == len(recorded["digests"]), "the episode ended at another step than recorded"


def test_recorded_oracle_episodes_complete_tasks():
    """The recordings exercise task completion (rewards), not only failures."""
    completed = 0
    for recorded in _golden()["episodes"]:
        if recorded["name"].endswith("oracle"):
            env = gym.make("ServiceRobot-v0", **recorded["options"])
            env.reset(seed=recorded["seed"])
            for action in recorded["actions"]:
                info = env.step(action)[4]
                completed += info["task_completed"]
            env.close()
    assert completed >= 5


@pytest.mark.parametrize("size", sorted(HOUSE_SEEDS))
def test_seeds_give_the_recorded_houses(size):
    want = _golden()["houses"][size]
    got = [_house_digest(size, s) for s in HOUSE_SEEDS[size]]
    differ = [s for s, g, w in zip(HOUSE_SEEDS[size], got, want) if g != w]
    assert not differ, f"{size} houses of seeds {differ} differ from the recording"


if __name__ == "__main__":
    if "--record" not in sys.argv:
        sys.exit(f"usage: python {sys.argv[0]} --record [--force]")
    if GOLDEN.exists() and "--force" not in sys.argv:
        sys.exit(f"{GOLDEN} exists; pass --force to record it again (only for an intended change of behaviour)")
    data = json.dumps(_record(), indent=1)
    tmp = GOLDEN.with_suffix(".json.tmp")
    tmp.write_text(data)
    os.replace(tmp, GOLDEN)
    print(f"wrote {GOLDEN}")
