"""Rooms of a 3DSG that share no wall are still reachable in habitat-sim: walkways join them (docs/habitat.md)."""

import numpy as np
import pytest

habitat_sim = pytest.importorskip("habitat_sim")

from servicerobot.envs.habitat.executor import HabitatExecutor
from servicerobot.envs.habitat.stage import to_habitat
from servicerobot.errors import SceneError
from servicerobot.pddl.interpreter import GroundAction
from servicerobot.scenes.gibson import Object3D, Room3D, SceneGraph3D, to_household_scene


def _walk_every_door(ex, scene):
    """Move the robot through every door both ways (from the room's stand point), asserting it arrives;
    yields each move's path."""
    for a, b in scene.doors:
        for start, goal in ((a, b), (b, a)):
            ex.position = ex._stand_point(start)
            assert ex.execute(GroundAction("move", ("robot", start, goal)), frozenset(), frozenset()) == ""
            assert ex._in_room(ex.position, goal)
            yield ex.last_path


def test_move_reaches_rooms_that_share_no_wall():
    sg = SceneGraph3D("Apart")
    sg.rooms[1] = Room3D(1, "kitchen", "", (2.5, 2.0, 1.5), (5.0, 4.0, 3.0))
    sg.rooms[2] = Room3D(2, "living_room", "", (9.5, 2.0, 1.5), (5.0, 4.0, 3.0))  # 2 m east of the kitchen
    sg.rooms[3] = Room3D(3, "bedroom", "", (16.0, 9.0, 1.5), (4.0, 4.0, 3.0))  # off the diagonal
    sg.objects[1] = Object3D(1, "counter", "", 1, (2.5, 0.3, 0.45), (1.6, 0.6, 0.9))
    sg.objects[2] = Object3D(2, "cup", "", 1, (2.5, 0.3, 0.952), (0.09, 0.09, 0.1))
    sg.objects[3] = Object3D(3, "coffee_table", "", 2, (9.5, 2.0, 0.225), (1.0, 0.6, 0.45))
    sg.objects[4] = Object3D(4, "bed", "", 3, (16.0, 10.0, 0.275), (1.6, 2.0, 0.55))
    rng = np.random.default_rng(0)
    scene = to_household_scene(sg, rng, n_people=1)
    assert len(scene.doors) == 3  # no two rooms share a wall: every pair is connected, as Context Matters does
    ex = HabitatExecutor(inspect=False)
    ex.reset(scene, scene.init, rng)
    try:
        assert len(ex.stage.walkways) == 2 and not ex.stage.doorways
        for path in _walk_every_door(ex, scene):
            # The path leaves the rooms only over a walkway's floor.
            for p in path:
                on_walkway = any(np.all(p[:2] >= lo - 0.05) and np.all(p[:2] <= hi + 0.05)
                                 for w in ex.stage.walkways for lo, hi in w.floors)
                assert on_walkway or any(ex._in_room(to_habitat(p), r) for r in scene.room_names)
    finally:
        ex.close()


def test_move_crosses_a_gap_between_rooms_and_a_narrow_shared_wall():
    sg = SceneGraph3D("Gaps")
    sg.rooms[1] = Room3D(1, "kitchen", "", (2.5, 2.0, 1.5), (5.0, 4.0, 3.0))
    sg.rooms[2] = Room3D(2, "living_room", "", (7.1, 2.0, 1.5), (3.8, 4.0, 3.0))  # 0.2 m east of the kitchen
    sg.rooms[3] = Room3D(3, "bedroom", "", (10.5, 5.0, 1.5), (3.0, 4.0, 3.0))  # shares 1.0 m of wall with it
    sg.objects[1] = Object3D(1, "counter", "", 1, (2.5, 0.3, 0.45), (1.6, 0.6, 0.9))
    sg.objects[2] = Object3D(2, "cup", "", 1, (2.5, 0.3, 0.952), (0.09, 0.09, 0.1))
    sg.objects[3] = Object3D(3, "coffee_table", "", 2, (7.1, 2.0, 0.225), (1.0, 0.6, 0.45))
    sg.objects[4] = Object3D(4, "bed", "", 3, (10.5, 6.0, 0.275), (1.6, 2.0, 0.55))
    rng = np.random.default_rng(0)
    scene = to_household_scene(sg, rng, n_people=1, connectivity="adjacency")
    assert len(scene.doors) == 2
    ex = HabitatExecutor(inspect=False)
    ex.reset(scene, scene.init, rng)
    try:
        assert len(ex.stage.doorways) == 2 and not ex.stage.walkways
        assert len(list(_walk_every_door(ex, scene))) == 2 * len(scene.doors)
    finally:
        ex.close()


def test_stand_points_avoid_a_crowded_middle_and_a_full_room_is_a_clear_error():
    sg = SceneGraph3D("Crowded")
    sg.rooms[1] = Room3D(1, "dining_room", "", (3.0, 3.0, 1.5), (6.0, 6.0, 3.0))
    sg.rooms[2] = Room3D(2, "storage_room", "", (7.0, 3.0, 1.5), (2.0, 6.0, 3.0))
    sg.objects[1] = Object3D(1, "dining_table", "", 1, (3.0, 3.0, 0.375), (3.0, 3.0, 0.75))
    sg.objects[2] = Object3D(2, "cup", "", 1, (3.0, 3.0, 0.8), (0.09, 0.09, 0.1))
    sg.objects[3] = Object3D(3, "shelf", "", 2, (7.0, 3.0, 0.9), (2.0, 6.0, 1.8))  # fills the storage room
    rng = np.random.default_rng(0)
    scene = to_household_scene(sg, rng, n_people=1, init_room="dining_room_1")
    ex = HabitatExecutor(inspect=False)
    try:
        # Every room must offer a stand point the others reach: the full one fails at reset, not at a move.
        with pytest.raises(SceneError, match="storage_room_2 has no free navigable floor"):
            ex.reset(scene, scene.init, rng)
        # The navmesh runs over the table top (0.75 m up, within the robot's 1.5 m clearance): not a stand point.
        middle = np.asarray(ex.sim.pathfinder.snap_point(to_habitat((3.0, 3.0, 0.0))))
        assert abs(middle[1] - 0.75) < 0.1 and not ex._free(middle)
        point = ex._stand_point("dining_room_1")
        assert ex._free(point) and ex._in_room(point, "dining_room_1")
        ex._floor_point = lambda x, y: None  # nothing free near the middle: any free floor of the room will do
        point = ex._stand_point("dining_room_1")
        assert ex._free(point) and ex._in_room(point, "dining_room_1")
        with pytest.raises(SceneError, match="storage_room_2 has no free navigable floor"):
            ex._stand_point("storage_room_2")
    finally:
        ex.close()
