"""HouseholdRenderer: frame format, that the frame follows the state and the overlay, presets, speed."""

from __future__ import annotations

import numpy as np
import pytest

from servicerobot.envs.household.rendering import HouseholdRenderer
from servicerobot.envs.household.state import HouseholdState
from servicerobot.pddl import Atom
from servicerobot.scenes.household import ROBOT, generate_household

W, H = 640, 480

OVERLAY = {
    "task": "Bring Ana's red mug to the living room",
    "utterances": [{"speaker": "Ana", "text": "Could you bring me my red mug?"},
                   {"speaker": "Robot", "text": "On my way."}],
    "tasks_completed": 1,
    "tasks_total": 4,
    "last_action": "move(robot, hallway, kitchen)",
    "plan": ["open(cabinet_1)", "take-out(mug_1, cabinet_1)", "move(kitchen, living_room)", "place-on(...)"],
    "belief": "mug_1 is probably in cabinet_1",
}


def _world(preset: str = "default", seed: int = 0) -> tuple:
    scene = generate_household(preset, np.random.default_rng(seed))
    return scene, HouseholdState(scene, scene.init)


def _robot_room(state: HouseholdState) -> str:
    return next(a.args[1] for a in state.by_arg[ROBOT] if a.predicate == "in-room")


def _move_robot(scene, state: HouseholdState) -> None:
    here = _robot_room(state)
    there = next(b if a == here else a for a, b in scene.doors if here in (a, b))
    state.apply(frozenset({Atom("in-room", (ROBOT, there))}), frozenset({Atom("in-room", (ROBOT, here))}))


@pytest.fixture(scope="module")
def world():
    scene, _ = _world()
    return scene, HouseholdRenderer(scene, W, H)


def test_frame_shape_and_dtype(world):
    scene, renderer = world
    frame = renderer.render(HouseholdState(scene, scene.init), OVERLAY)
    assert frame.shape == (H, W, 3)
    assert frame.dtype == np.uint8
    assert frame.std() > 10  # not a blank image


def test_custom_size():
    scene, state = _world("small")
    frame = HouseholdRenderer(scene, width=320, height=240).render(state, OVERLAY)
    assert frame.shape == (240, 320, 3) and frame.dtype == np.uint8


def test_frame_changes_when_robot_moves(world):
    scene, renderer = world
    state = HouseholdState(scene, scene.init)
    before = renderer.render(state, OVERLAY)
    _move_robot(scene, state)
    after = renderer.render(state, OVERLAY)
    assert not np.array_equal(before[: renderer.map_h], after[: renderer.map_h])
    assert np.array_equal(before[renderer.map_h:], after[renderer.map_h:])  # same overlay, same panel


def test_frame_changes_when_a_light_is_switched(world):
    scene, renderer = world
    state = HouseholdState(scene, scene.init)
    light = next(n for n, e in scene.entities.items() if e.pddl_type == "light")
    atom = Atom("light-on", (light,))
    before = renderer.render(state, OVERLAY)
    if atom in state:
        state.apply(frozenset(), frozenset({atom}))
    else:
        state.apply(frozenset({atom}), frozenset())
    after = renderer.render(state, OVERLAY)
    x0, y0, x1, y1 = renderer._room_px[scene.entities[light].room]
    assert not np.array_equal(before[y0:y1, x0:x1], after[y0:y1, x0:x1])


def test_panel_follows_the_task_text(world):
    scene, renderer = world
    state = HouseholdState(scene, scene.init)
    a = renderer.render(state, dict(OVERLAY, task="Put the blue plate in the sink"))
    b = renderer.render(state, dict(OVERLAY, task="Turn off the kitchen light"))
    assert np.array_equal(a[: renderer.map_h], b[: renderer.map_h])
    assert not np.array_equal(a[renderer.map_h:], b[renderer.map_h:])


def test_frames_are_fresh_arrays(world):
    scene, renderer = world
    state = HouseholdState(scene, scene.init)
    a = renderer.render(state, OVERLAY)
    a[:] = 0
    b = renderer.render(state, OVERLAY)
    assert b.any()


@pytest.mark.parametrize("overlay", [
    None,
    {},
    {"task": None},
    {"tasks_completed": 3},
    {"utterances": ["a bare string"], "plan": "a single step", "belief": {"mug_1": 0.5}},
    {"utterances": [{"text": "no speaker"}, {"speaker": "Ana"}], "plan": [], "last_action": ""},
    {"task": "word " * 200, "utterances": [{"speaker": "Ben", "text": "x" * 500}], "plan": ["y" * 300] * 9,
     "belief": "z " * 400, "last_action": "w" * 300, "tasks_completed": 10 ** 9, "tasks_total": 10 ** 9},
])
def test_missing_or_odd_overlay_values(world, overlay):
    scene, renderer = world
    frame = renderer.render(HouseholdState(scene, scene.init), overlay)
    assert frame.shape == (H, W, 3)


@pytest.mark.parametrize("preset", ["small", "large"])
def test_presets(preset):
    scene, state = _world(preset, seed=3)
    renderer = HouseholdRenderer(scene)
    first = renderer.render(state, OVERLAY)
    assert first.shape == (H, W, 3) and first.dtype == np.uint8
    _move_robot(scene, state)
    assert not np.array_equal(first, renderer.render(state, OVERLAY))


def test_held_items_and_state_marks_render():
    scene, state = _world("small")
    items = [n for n, e in scene.entities.items() if e.pos is None and e.pddl_type not in ("room", "person", "robot")]
    person = scene.people[0]
    sink = next(n for n, e in scene.entities.items() if e.pddl_type == "sink")
    bed = next((n for n, e in scene.entities.items() if e.pddl_type == "bed"), None)
    renderer = HouseholdRenderer(scene)
    before = renderer.render(state, {})
    add = {Atom("holding", (ROBOT, items[0])), Atom("held-by", (items[1], person)), Atom("broken", (items[2],)),
           Atom("dirty", (items[3],)), Atom("faucet-on", (sink,))}
    delete = {state.location(items[0]), state.location(items[1]), Atom("hand-empty", (ROBOT,))}
    if bed is not None:
        (delete if Atom("made", (bed,)) in state else add).add(Atom("made", (bed,)))
    state.apply(frozenset(add), frozenset(delete))
    after = renderer.render(state, {})
    assert not np.array_equal(before, after)


def test_room_tags_shrink_or_end_after_a_whole_word_on_a_small_frame():
    """A Gibson building drawn at 320x240 (the habitat world's size): no room tag is a word cut in the middle
    ('televisio…'); a long label takes a smaller font or keeps its first whole words."""
    from servicerobot.envs.panel import _text_width
    from servicerobot.scenes.gibson import generate_3dsg, to_household_scene

    for seed in range(4):
        scene = to_household_scene(generate_3dsg(np.random.default_rng(seed), n_rooms=10),
                                   np.random.default_rng(seed))
        renderer = HouseholdRenderer(scene, width=320, height=240)
        for room in scene.rooms:
            x0, _, x1, _ = renderer._room_px[room.name]
            font, text = renderer._room_tag(room.label, x1 - x0 - 3 * renderer._wall - 4)
            kept = text.removesuffix("…").split()
            words = room.label.split()
            assert kept == words[:len(kept)], (room.label, text)  # whole words only, in order
            assert text == room.label or text.endswith("…") or len(kept) == 1
            assert _text_width(font, text) <= (x1 - x0) * 1.25
