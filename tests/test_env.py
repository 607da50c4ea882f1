"""ServiceRobot-v0 against the Gymnasium contract, determinism, robustness and the update modes."""

from __future__ import annotations

import json
import re

import gymnasium as gym
import numpy as np
import pytest
from gymnasium.utils.env_checker import check_env
from hypothesis import given, settings
from hypothesis import strategies as st

import servicerobot  # noqa: F401  (registers the ids)
from servicerobot.envs import decode
from servicerobot.envs.household.language import EVENT_TEMPLATES, TASK_TEMPLATES

INFO_KEYS = {"success", "task_completed", "task", "action_error", "tasks_completed", "tasks_failed",
             "tasks_total", "oracle"}


def make(**kw):
    kw.setdefault("size", "small")
    return gym.make("ServiceRobot-v0", **kw)


def test_make_default_and_check_env():
    env = gym.make("ServiceRobot-v0")
    obs, info = env.reset(seed=0)
    assert env.observation_space.contains(obs)
    assert INFO_KEYS <= set(info)
    check_env(env.unwrapped, skip_render_check=True)
    env.close()


def test_module_prefixed_id():
    env = gym.make("servicerobot:ServiceRobot-v0", size="small")
    env.reset(seed=1)
    env.close()


def _rollout(seed: int, steps: int, mode: str = "verbal") -> list[str]:
    env = make(update_mode=mode, event_rate=0.3)
    obs, info = env.reset(seed=seed)
    out = [json.dumps({k: (v.tolist() if isinstance(v, np.ndarray) else v) for k, v in obs.items()}),
           json.dumps(info, default=str)]
    rooms = env.unwrapped.world.scene.room_names
    rng = np.random.default_rng(123)
    for _ in range(steps):
        action = f"(move robot {rooms[rng.integers(len(rooms))]} {rooms[rng.integers(len(rooms))]})"
        obs, r, term, trunc, info = env.step(action)
        out.append(json.dumps({k: (v.tolist() if isinstance(v, np.ndarray) else v) for k, v in obs.items()}))
        out.append(json.dumps([r, term, trunc, info], default=str))
        if term or trunc:
            break
    env.close()
    return out


def test_same_seed_same_episode_byte_for_byte():
    a, b = _rollout(7, 60), _rollout(7, 60)
    assert a == b
    assert _rollout(8, 5) != a[:len(_rollout(8, 5))]


def test_modes_share_the_same_episode():
    """Verbal and visual runs of one seed have the same house, tasks and events; only telling differs."""
    verbal, visual = _rollout(3, 30, "verbal"), _rollout(3, 30, "visual")
    goals = [json.loads(x)[3]["oracle"]["goal"] for x in verbal[3::2]]
    goals_visual = [json.loads(x)[3]["oracle"]["goal"] for x in visual[3::2]]
    assert goals == goals_visual
    ev = [[e["add"] for e in json.loads(x)[3]["oracle"]["events"]] for x in verbal[3::2]]
    ev_visual = [[e["add"] for e in json.loads(x)[3]["oracle"]["events"]] for x in visual[3::2]]
    assert ev == ev_visual


def test_vector_envs_step():
    for vec_cls in (gym.vector.SyncVectorEnv, gym.vector.AsyncVectorEnv):
        venv = vec_cls([lambda: make() for _ in range(2)])
        obs, _ = venv.reset(seed=[0, 1])
        assert len(obs["utterances"]) == 2
        obs, rew, _term, _trunc, _infos = venv.step(["(wait)", "(move robot hallway kitchen)"])
        assert rew.shape == (2,) and rew[0] < 0
        venv.close()


def test_invalid_actions_are_explained_and_change_nothing():
    env = make(event_rate=0.0, disturbance_prob=0.0)
    env.reset(seed=2)
    world = env.unwrapped.world
    before = world.state.atoms
    cases = {
        "": "empty",
        "dance wildly": "dance",
        "(pick-up robot unicorn_9 counter_1 kitchen)": "unicorn_9",
        "(pick-up robot)": "arity",
        "((((": "",
    }
    for action, needle in cases.items():
        _, reward, *_rest, info = env.step(action)
        assert info["action_error"], action
        assert needle.lower() in info["action_error"].lower() or not needle, (action, info["action_error"])
        assert reward < -0.05
    # an inapplicable but well-formed action names the failing precondition
    room = world.state.robot_room()
    other = next(r for r in world.scene.room_names if r != room and
                 ("connected", (room, r)) not in {(a.predicate, a.args) for a in world.state.atoms})
    _, _, _, _, info = env.step(f"(move robot {other} {room})")
    assert "in-room robot" in info["action_error"]
    assert world.state.atoms == before


@settings(max_examples=150, deadline=None)
@given(st.one_of(st.text(max_size=80), st.binary(max_size=40).map(lambda b: b.decode("latin-1")),
                 st.integers(), st.none(), st.lists(st.text(max_size=5))))
def test_random_garbage_never_crashes(action):
    env = _GARBAGE_ENV
    obs, _reward, term, trunc, info = env.step(action)
    assert isinstance(info["action_error"], str)
    if not (isinstance(action, str) and info["action_error"] == ""):
        assert info["action_error"]
    assert env.observation_space.contains(obs)
    if term or trunc:
        env.reset(seed=0)


_GARBAGE_ENV = make(event_rate=0.0, disturbance_prob=0.0)
_GARBAGE_ENV.reset(seed=0)


@settings(max_examples=200, deadline=None)
@given(st.data())
def test_random_ground_actions(data):
    env = _GARBAGE_ENV
    world = env.unwrapped.world
    names = sorted(world.domain.actions)
    objects = sorted(world.scene.entities)
    name = data.draw(st.sampled_from(names))
    arity = len(world.domain.actions[name].params)
    args = data.draw(st.lists(st.sampled_from(objects), min_size=arity, max_size=arity))
    before = world.state.atoms
    _obs, _reward, term, trunc, info = env.step(f"({name} {' '.join(args)})")
    if info["oracle"]["events"]:
        pass  # a new task started (its setup events changed the house)
    elif info["action_error"]:
        assert world.state.atoms == before  # people are quiet here, so a failed action changes nothing
    else:
        assert world.state.atoms != before or name in ("run-washer", "run-dryer")
    if term or trunc:
        env.reset(seed=0)


def test_update_modes():
    env = make(update_mode="visual", event_rate=0.5)
    obs, info = env.reset(seed=4)
    said = json.loads(obs["utterances"])
    assert len(said) >= 1  # the task is still announced
    for _ in range(30):
        obs, *_, info = env.step("(wait)")
        for e in info["oracle"]["events"]:
            assert not e["told"]
    percept = decode(obs).percept
    assert len(percept.entities) > 2

    env = make(update_mode="verbal", event_rate=0.5)
    obs, info = env.reset(seed=4)
    told = 0
    for _ in range(30):
        obs, *_, info = env.step("(wait)")
        told += sum(e["told"] for e in info["oracle"]["events"])
        assert set(decode(obs).percept.entities) <= {"robot", decode(obs).percept.room}
    assert told > 0


def test_percept_is_closed_world_within_view():
    env = make(update_mode="both")
    obs, _ = env.reset(seed=5)
    world = env.unwrapped.world
    p = decode(obs).percept
    assert p.room == world.state.robot_room()
    for name in p.entities:
        true_facts = {tuple(f) for f in [[a.args[0], a.predicate, a.args[1] if len(a.args) > 1 else True]
                                         for a in world.state.atoms] if f[0] == name}
        assert true_facts == {f for f in p.facts if f[0] == name}
    for fixture in world.scene.fixtures_in(p.room):
        if world.state.is_closed(fixture):
            for item in world.state.contents(fixture):
                assert item not in p.entities


def _template_regex(template: str) -> re.Pattern:
    parts = re.split(r"\{[a-z_]+\}", template)
    return re.compile(".+".join(re.escape(p) for p in parts), re.IGNORECASE)


def test_utterances_come_from_declared_templates():
    patterns = [_template_regex(t) for ts in list(EVENT_TEMPLATES.values()) + list(TASK_TEMPLATES.values())
                for t in ts]
    env = make(event_rate=0.6)
    obs, _ = env.reset(seed=11)
    seen = 0
    for _ in range(80):
        for u in json.loads(obs["utterances"]):
            first = re.split(r" (?:Also, |And |Oh, and )", u["text"])[0]
            assert any(p.fullmatch(first) for p in patterns), u["text"]
            seen += 1
        obs, _, term, trunc, _info = env.step("(wait)")
        if term or trunc:
            break
    assert seen > 10


def test_render_rgb_array():
    env = make(render_mode="rgb_array")
    env.reset(seed=0)
    frame = env.render()
    assert frame.shape == (480, 640, 3) and frame.dtype == np.uint8
    env.close()


def test_record_video_writes_playable_mp4(tmp_path):
    import imageio.v3 as iio

    env = gym.wrappers.RecordVideo(make(render_mode="rgb_array"), str(tmp_path), episode_trigger=lambda e: True,
                                   disable_logger=True)
    env.reset(seed=0)
    for _ in range(12):
        env.step("(wait)")
    env.close()
    videos = list(tmp_path.glob("*.mp4"))
    assert videos
    frames = list(iio.imiter(videos[0]))
    assert len(frames) >= 10 and frames[0].shape == (480, 640, 3)


def test_bad_arguments_are_rejected_clearly():
    with pytest.raises(ValueError, match="update_mode"):
        make(update_mode="telepathy")
    with pytest.raises(ValueError, match="presets"):
        make(size="gigantic")
    with pytest.raises(ValueError, match="task kinds"):
        make(task_kinds=["juggle"])
