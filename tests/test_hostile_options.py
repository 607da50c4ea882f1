"""`gym.make` options under hostile use: every option of every world is declared once (servicerobot.envs.options);
a bad one raises `OptionError` naming it, its allowed range and its meaning, before anything is built; counts
and sizes have upper bounds; docs/options.md is the spec written out."""

from __future__ import annotations

import math
import tracemalloc
from pathlib import Path

import gymnasium as gym
import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import servicerobot  # noqa: F401  (registers the ids)
from servicerobot.envs import core
from servicerobot.envs.household.world import HouseholdOptions
from servicerobot.envs.options import (
    MAX_TASKS,
    WORLDS,
    OptionError,
    check_options,
    defaults,
    options_markdown,
    world_options,
)
from servicerobot.errors import SceneError

DOCS = Path(__file__).resolve().parents[1] / "docs" / "options.md"
IDS = core.WORLD_IDS

# Issue 25 item 8's cases (and item 3's n_tasks): (env id, options, what the message must say)
BAD = [
    ("ServiceRobot-v0", {"size": 5}, r"size must be one of the presets 'small', 'default', 'large'.*got 5"),
    ("ServiceRobot-v0", {"render_mode": 0}, r"render_mode must be one of 'rgb_array' or None, got 0"),
    ("ServiceRobot-v0", {"render_mode": "human"}, r"render_mode must be one of 'rgb_array' or None"),
    ("ServiceRobot-v0", {"task_kinds": []}, r"task_kinds must be a non-empty list of 'pick_place'"),
    ("ServiceRobot-v0", {"task_kinds": "make_bed"}, r"task_kinds must be a non-empty list"),
    ("ServiceRobot-v0", {"invalid_penalty": "abc"}, r"invalid_penalty must be a number in \[0, 1000\], got 'abc'"),
    ("ServiceRobot-v0", {"step_cost": math.nan}, r"step_cost must be a number in \[0, 1000\], got nan"),
    ("ServiceRobot-v0", {"step_cost": math.inf}, r"step_cost must be a number in \[0, 1000\], got inf"),
    ("ServiceRobot-v0", {"event_rate": True}, r"event_rate must be a number in \[0, 1\], got True"),
    ("ServiceRobot-v0", {"n_tasks": 10**9}, r"n_tasks must be an integer in \[1, 1000\], got 1000000000"),
    ("ServiceRobot-v0", {"n_tasks": "4"}, r"n_tasks must be an integer in \[1, 1000\], got '4'"),
    ("ServiceRobot-v0", {"n_tasks": 1.5}, r"n_tasks must be an integer in \[1, 1000\], got 1.5"),
    ("ServiceRobot-v0", {"n_tasks": 10**400}, r"n_tasks must be an integer in \[1, 1000\]"),
    ("ServiceRobot-v0", {"width": 10**12}, r"width must be an integer in \[128, 4096\]"),
    ("ServiceRobot-v0", {"width": 127}, r"width must be an integer in \[128, 4096\], got 127"),
    ("ServiceRobot-v0", {"height": 63}, r"height must be an integer in \[64, 4096\], got 63"),
    ("ServiceRobot-v0", {"verbal_share": [0.5]}, r"verbal_share must be a number in \[0, 1\], got \[0.5\]"),
    ("ServiceRobot-PyBullet-v0", {"width": 0}, r"width must be an integer in \[128, 4096\], got 0 \[pybullet world"),
    ("ServiceRobot-PyBullet-v0", {"n_tasks": 10**9}, r"n_tasks must be an integer in \[1, 1000\]"),
    ("ServiceRobot-PyBullet-v0", {"task_kinds": ["fly"]}, r"unknown task kinds \['fly'\]"),
    ("ServiceRobot-PyBullet-v0", {"disturbance_prob": 0.5}, (r"unknown option\(s\) \['disturbance_prob'\] for the "
                                                            r"pybullet world")),
    ("ServiceRobot-AI2THOR-v0", {"scene": None}, r"scene must be a FloorPlan name .*got None"),
    ("ServiceRobot-AI2THOR-v0", {"scene": []}, r"scene must be a FloorPlan name"),
    ("ServiceRobot-AI2THOR-v0", {"scene": ["FloorPlan1", 3]}, r"unknown iTHOR scene 3"),
    ("ServiceRobot-AI2THOR-v0", {"frame_size": -1}, r"frame_size must be an integer in \[64, 4096\], got -1"),
    ("ServiceRobot-AI2THOR-v0", {"n_people": 0}, r"n_people must be an integer in \[1, 40\], got 0"),
    ("ServiceRobot-AI2THOR-v0", {"n_tasks": 10**9}, r"n_tasks must be an integer in \[1, 1000\]"),
    ("ServiceRobot-AI2THOR-v0", {"gpu_device": -3}, r"gpu_device must be an integer in \[0, 255\] or None"),
    ("ServiceRobot-Habitat-v0", {"n_tasks": 10**9}, r"n_tasks must be an integer in \[1, 1000\]"),
    ("ServiceRobot-Habitat-v0", {"n_rooms": 10**6}, r"n_rooms must be an integer in \[2, 12\] or None"),
    ("ServiceRobot-Habitat-v0", {"scene_graph": 7}, r"scene_graph must be None, a file path, a SceneGraph3D"),
    ("ServiceRobot-Habitat-v0", {"pitch": 9.0}, r"pitch must be a number or a list of up to 16 numbers"),
    ("ServiceRobot-Habitat-v0", {"connectivity": "wormholes"}, r"connectivity must be one of 'auto', 'adjacency'"),
    ("ServiceRobot-Habitat-v0", {"inspect": "yes"}, r"inspect must be true or false, got 'yes'"),
]


@pytest.mark.parametrize("env_id, options, message", BAD, ids=[f"{i}-{min(o)}" for i, o, _ in BAD])
def test_a_bad_option_is_named_with_its_range_before_anything_is_built(monkeypatch, env_id, options, message):
    def no_world(*args, **kwargs):
        raise AssertionError("a world was built before the options were checked")

    monkeypatch.setattr(core, "_make_world", no_world)
    with pytest.raises(OptionError, match=message) as info:
        gym.make(env_id, **options)
    assert len(str(info.value)) < 1000
    assert isinstance(info.value, SceneError)  # callers catching SceneError (configs, the CLI) still do


def test_n_tasks_of_a_billion_is_refused_without_allocating():
    """Issue 25 item 3: n_tasks=10**9 tried to allocate 7.45 GiB."""
    tracemalloc.start()
    with pytest.raises(OptionError, match="n_tasks"):
        gym.make("ServiceRobot-v0", size="small", n_tasks=10**9)
    with pytest.raises(SceneError, match=r"n_tasks must be an integer in \[1, 1000\]"):
        HouseholdOptions(n_tasks=10**9)  # the world's own check, for worlds built directly
    peak = tracemalloc.get_traced_memory()[1]
    tracemalloc.stop()
    assert peak < 50_000_000
    env = gym.make("ServiceRobot-v0", size="small", n_tasks=MAX_TASKS)  # the bound itself is fine
    env.reset(seed=0)
    assert env.unwrapped.world.n_tasks == MAX_TASKS


def test_every_unknown_option_is_named_and_the_known_ones_listed():
    with pytest.raises(OptionError, match=r"unknown option\(s\) \['colour', 'shape'\] for the household world; its "
                                          r"options are \['disturbance_prob', 'event_rate'"):
        gym.make("ServiceRobot-v0", colour=1, shape=2)
    with pytest.raises(OptionError, match="world must be a world name"):
        core.ServiceRobotEnv(world=7)


@pytest.mark.parametrize("world", WORLDS)
def test_the_spec_defaults_are_what_the_world_runs_with(world):
    """One source of truth: the ids register only their world; every default comes from the spec."""
    assert gym.spec(IDS[world]).kwargs == {"world": world}
    if world in ("pybullet", "ai2thor"):  # the iTHOR FloorPlans are read from alfworld's data
        pytest.importorskip({"pybullet": "pybullet", "ai2thor": "alfworld"}[world])
    env = gym.make(IDS[world])
    try:
        unwrapped = env.unwrapped
        assert unwrapped.options == defaults(world)
        assert (unwrapped.width, unwrapped.height, unwrapped.update_mode) == (
            defaults(world)["width"], defaults(world)["height"], defaults(world)["update_mode"])
        opts = unwrapped.world.options
        assert (opts.n_tasks, opts.event_rate) == (defaults(world)["n_tasks"], defaults(world)["event_rate"])
        if world != "pybullet":
            assert opts.disturbance_prob == defaults(world)["disturbance_prob"]
    finally:
        env.close()


@pytest.mark.parametrize("env_id", ["ServiceRobot-v0", "ServiceRobot-PyBullet-v0", "ServiceRobot-Habitat-v0"])
def test_the_smallest_and_largest_frames_the_spec_allows_are_drawn(env_id):
    """The spec's range is what the renderers draw: a 64x64 household frame raised a raw ValueError from the
    text panel, which needs 128 pixels across."""
    if env_id == "ServiceRobot-PyBullet-v0":
        pytest.importorskip("pybullet")
    world = next(w for w, i in IDS.items() if i == env_id)
    spec = {o.name: o for o in world_options(world)}
    for width, height in ((spec["width"].low, spec["height"].low), (1024, spec["height"].low)):
        env = gym.make(env_id, render_mode="rgb_array", width=int(width), height=int(height), n_tasks=1)
        env.reset(seed=0)
        env.step("(wait)")
        assert env.render().shape == (height, width, 3)
        env.close()


def test_good_values_come_back_canonical():
    opts = check_options("household", {"n_tasks": np.int64(3), "event_rate": 1, "task_kinds": ["make_bed"]})
    assert opts["n_tasks"] == 3 and type(opts["n_tasks"]) is int
    assert opts["event_rate"] == 1.0 and type(opts["event_rate"]) is float
    assert opts["task_kinds"] == ("make_bed",)
    assert check_options("ai2thor", {"scene": ["FloorPlan1", "FloorPlan2"]})["scene"] == ("FloorPlan1", "FloorPlan2")


_VALUES = st.one_of(
    st.none(), st.booleans(), st.integers(min_value=-10**30, max_value=10**30),
    st.floats(allow_nan=True, allow_infinity=True), st.text(max_size=30),
    st.lists(st.one_of(st.text(max_size=12), st.integers(), st.none()), max_size=5),
    st.dictionaries(st.text(max_size=5), st.integers(), max_size=3),
    st.sampled_from(["small", "default", "FloorPlan1", "kitchens", "rgb_array", "both", "symbolic", "auto",
                     ["make_bed"], ["inspect"], ["FloorPlan301"], 0.5, 4, -1]),
)


@settings(max_examples=400, deadline=None, derandomize=True)
@given(world=st.sampled_from(WORLDS), data=st.data())
def test_any_value_of_any_option_is_accepted_in_range_or_refused_by_name(world, data):
    """The issue's fuzz (602 cases, ~255 raw TypeError/AttributeError/OverflowError/ZeroDivisionError) as a
    property: check_options raises OptionError naming the option, or returns a value of its declared type
    and range."""
    option = data.draw(st.sampled_from(world_options(world)))
    value = data.draw(_VALUES)
    try:
        out = check_options(world, {option.name: value})[option.name]
    except OptionError as exc:
        assert str(exc).startswith(f"{option.name} must be ") and len(str(exc)) < 1000
        return
    if out is None:
        assert option.none_ok or option.kind == "custom"
    elif option.kind == "int":
        assert type(out) is int and option.low <= out <= option.high
    elif option.kind == "float":
        assert type(out) is float and math.isfinite(out) and option.low <= out <= option.high
    elif option.kind in ("choice",):
        assert out in option.choices
    elif option.kind == "kinds":
        assert out and all(k in option.choices for k in out)


def test_docs_page_is_the_spec_written_out():
    """docs/options.md is generated: `python -m servicerobot.envs.options > docs/options.md` after a change."""
    assert DOCS.read_text(encoding="utf-8") == options_markdown()
    for world in WORLDS:
        for option in world_options(world):
            assert f"| `{option.name}` |" in DOCS.read_text(encoding="utf-8")
