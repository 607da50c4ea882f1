"""How the habitat robot looks: two head tilts, driving to look at receptacles it cannot see, where it stands.

Runs inside scripts/habitat-sim's root against the real habitat-sim (docs/habitat.md).
"""

import numpy as np
import pytest

habitat_sim = pytest.importorskip("habitat_sim")

from servicerobot.envs.habitat.executor import HabitatExecutor
from servicerobot.envs.habitat.stage import from_habitat, to_habitat
from servicerobot.errors import SceneError
from servicerobot.scenes.gibson import (
    Object3D,
    Room3D,
    SceneGraph3D,
    class_type,
    generate_3dsg,
    to_household_scene,
)
from servicerobot.scenes.gibson_classes import ITEM_TYPES


def _kitchen() -> SceneGraph3D:
    """A 5 x 4 m kitchen: a cabinet against the west wall opening east, a cup at the back of its floor, a dining table
    north of it, a book at the near edge of a low coffee table; east, a living room with a side table in its
    north-east corner behind a (closed) wardrobe, a clock on it."""
    sg = SceneGraph3D("Viewing")
    sg.rooms[1] = Room3D(1, "kitchen", "", (2.5, 2.0, 1.5), (5.0, 4.0, 3.0))
    sg.rooms[2] = Room3D(2, "living_room", "", (7.5, 2.0, 1.5), (5.0, 4.0, 3.0))
    sg.objects[1] = Object3D(1, "cabinet", "", 1, (0.3, 2.0, 0.45), (0.6, 1.2, 0.9))
    sg.objects[2] = Object3D(2, "cup", "", 1, (0.3, 2.4, 0.13), (0.09, 0.09, 0.1))
    sg.objects[3] = Object3D(3, "dining_table", "", 1, (0.5, 3.1, 0.375), (0.8, 0.6, 0.75))
    sg.objects[4] = Object3D(4, "coffee_table", "", 1, (3.6, 1.0, 0.225), (1.0, 0.6, 0.45))
    sg.objects[5] = Object3D(5, "book", "", 1, (3.6, 1.22, 0.472), (0.22, 0.15, 0.04))
    sg.objects[6] = Object3D(6, "wardrobe", "", 2, (8.6, 3.7, 1.0), (1.2, 0.6, 2.0))
    sg.objects[7] = Object3D(7, "side_table", "", 2, (9.6, 3.6, 0.3), (0.5, 0.5, 0.6))
    sg.objects[8] = Object3D(8, "clock", "", 2, (9.6, 3.6, 0.68), (0.15, 0.06, 0.15))
    return sg


@pytest.fixture(scope="module")
def kitchen(start_executor):
    sg = _kitchen()
    scene, ex = start_executor(sg, lambda scene: frozenset(
        a for a in scene.init if a.predicate != "closed" or a.args[0] == "wardrobe_6"))
    return sg, scene, ex


def _place(ex, x: float, y: float, facing: tuple[float, float]) -> None:
    point = np.asarray(ex.sim.pathfinder.snap_point(to_habitat((x, y, 0.0))))
    assert ex._free(point) and np.allclose(from_habitat(point)[:2], (x, y), atol=0.05)
    ex.position = point
    ex.yaw = float(np.arctan2(-(facing[0] - x), -(y - facing[1])))  # habitat faces -z (3DSG +y) at yaw 0


def _seen(ex, sg, oid: int):
    return ex.sightings().get(ex.stage.semantic_of[oid])


def _hidden_without_inspection(ex, sg, oid: int) -> bool:
    """Whether the look-around alone (no drive to look) misses object `oid`."""
    ex.inspect = False
    try:
        return _seen(ex, sg, oid) is None
    finally:
        ex.inspect = True


def test_the_robot_drives_to_look_into_an_open_cabinet_it_sees_from_the_side(kitchen):
    sg, scene, ex = kitchen
    # Past the dining table, 65 degrees off the cabinet's front: the table and the cabinet's side hide the cup.
    _place(ex, 1.1, 3.7, facing=(0.3, 2.0))
    start, walked = ex.position.copy(), ex.distance
    assert _hidden_without_inspection(ex, sg, 2)
    inspections = ex.inspections
    cup = _seen(ex, sg, 2)
    assert cup is not None and ex.name_of_sid[cup.support[1]] == "cabinet_1" and cup.support[0] == "inside"
    # It really drove there and back along the navmesh, and stands where it stood.
    assert ex.inspections == inspections + 1 and ex.distance - walked > 2.0
    assert np.allclose(ex.position, start)
    # In front of the cabinet it sees in without driving anywhere.
    _place(ex, 2.2, 2.0, facing=(0.3, 2.0))
    inspections = ex.inspections
    assert _seen(ex, sg, 2) is not None and ex.inspections == inspections
    # A closed cabinet is not worth the drive: the robot stays, and the cup is out of sight.
    before = ex.facts
    ex.sync(before | {a for a in scene.init if a.predicate == "closed" and a.args[0] == "cabinet_1"})
    try:
        _place(ex, 1.1, 3.7, facing=(0.3, 2.0))
        inspections = ex.inspections
        assert _seen(ex, sg, 2) is None and ex.inspections == inspections
    finally:
        ex.sync(before)


def test_the_second_head_tilt_sees_an_item_at_the_robots_feet(kitchen):
    sg, _scene, ex = kitchen
    # Right at the coffee table, the book 0.4 m away and 1 m below the camera: 68 degrees down.
    _place(ex, 3.6, 1.65, facing=(3.6, 1.0))
    one_tilt = HabitatExecutor(pitch=-0.45, inspect=False)
    one_tilt.reset(ex.scene, ex.facts, np.random.default_rng(0))
    try:
        one_tilt.position, one_tilt.yaw = ex.position, ex.yaw
        assert one_tilt.sightings().get(ex.stage.semantic_of[5]) is None
    finally:
        one_tilt.close()
    book = _seen(ex, sg, 5)
    assert book is not None and book.support == ("on", ex.stage.semantic_of[4])


def test_the_robot_never_stands_inside_furniture_and_items_do_not_interpenetrate():
    rng = np.random.default_rng([0, 0])
    sg = generate_3dsg(rng)
    scene = to_household_scene(sg, rng)
    ex = HabitatExecutor()
    ex.reset(scene, scene.init, rng)
    try:
        tall = [o for o in sg.objects.values() if o.id in ex.stage.openings and o.size[2] > 1.6]
        # Recast finds floor inside tall open shells (a fridge, a wardrobe): the navmesh alone would let it in.
        assert any(not ex._free(np.asarray(ex.sim.pathfinder.snap_point(to_habitat((*o.location[:2], 0.0)))))
                   for o in tall)
        draw = np.random.default_rng(1)
        for room in scene.room_names:
            for point in [ex._stand_point(room)] + [ex.random_pose(room, draw) for _ in range(20)]:
                p = from_habitat(point)
                assert abs(p[2]) < 0.15  # on the floor, not on a bed
                for o in sg.objects.values():
                    if o.id not in ex.stage.items:
                        lo, hi = o.box
                        assert not (lo[0] < p[0] < hi[0] and lo[1] < p[1] < hi[1]), (room, o.label)
        # The generated 3DSG lets items overlap; in habitat-sim they rest apart, on the same receptacle.
        items = [o.id for o in sg.objects.values() if class_type(o.class_) in ITEM_TYPES]
        sizes = {i: np.asarray(sg.objects[i].size) for i in items}

        def overlaps(centre_of):
            return sum(1 for k, a in enumerate(items) for b in items[k + 1:]
                       if np.all(np.abs(centre_of(a) - centre_of(b)) < (sizes[a] + sizes[b]) / 2 - 1e-3))

        assert overlaps(lambda i: np.asarray(sg.objects[i].location)) > 0
        assert overlaps(lambda i: ex.pose[i]) == 0
    finally:
        ex.close()


def test_bad_camera_options_say_what_is_wrong():
    with pytest.raises(SceneError, match="pitch must be"):
        HabitatExecutor(pitch=(-0.3, 2.0))
    with pytest.raises(SceneError, match="camera_height"):
        HabitatExecutor(camera_height=3.0)


def test_the_robot_drives_to_see_a_table_a_wardrobe_hides(kitchen):
    sg, _scene, ex = kitchen
    _place(ex, 6.0, 3.5, facing=(9.6, 3.6))  # the closed wardrobe stands between the robot and the side table
    start, walked = ex.position.copy(), ex.distance
    assert _hidden_without_inspection(ex, sg, 8)
    clock = _seen(ex, sg, 8)
    assert clock is not None and clock.support == ("on", ex.stage.semantic_of[7])
    assert ex.distance - walked > 4.0 and np.allclose(ex.position, start)
    # From the middle of the room it sees the table top itself: no drive.
    _place(ex, 8.0, 1.5, facing=(9.6, 3.6))
    inspections = ex.inspections
    assert _seen(ex, sg, 8) is not None and ex.inspections == inspections
