"""The habitat stage's floor plan and viewing geometry, no habitat-sim needed: walkways join 3DSG rooms that
share no wall, furniture opens towards the side that is clear, where the robot must look to see what it holds."""

import numpy as np
import pytest

from servicerobot.envs.habitat.stage import (
    FLOOR_GAP,
    _cut,
    _runs_through,
    _wall_boxes,
    floor_levels,
    front_side,
    stage_layout,
)
from servicerobot.envs.habitat.viewing import oblique, support_points
from servicerobot.envs.habitat.walkways import WALKWAY_W, Obstacles, door_spot, plan_walkways, room_groups
from servicerobot.errors import SceneError
from servicerobot.scenes.gibson import SINK_DEPTH, Object3D, Room3D, SceneGraph3D, place_spot
from servicerobot.scenes.graph3d import rest_bottom


def _rooms(*boxes):
    """Rooms from (x0, y0, x1, y1) boxes, ids from 1."""
    return {k + 1: Room3D(k + 1, "room", "", ((x0 + x1) / 2, (y0 + y1) / 2, 1.5), (x1 - x0, y1 - y0, 3.0))
            for k, (x0, y0, x1, y1) in enumerate(boxes)}


def _inside(point, lo, hi, tol=1e-6):
    return bool(np.all(point >= lo - tol) and np.all(point <= hi + tol))


def _door_point(room, side, along):
    axis, positive = divmod(side, 2)
    c, s = np.asarray(room.location[:2]), np.asarray(room.size[:2]) / 2
    p = np.zeros(2)
    p[axis] = c[axis] + (s[axis] if positive else -s[axis])
    p[1 - axis] = along
    return p


def test_room_groups_follow_links():
    assert room_groups([1, 2, 3, 4], [(1, 2), (3, 4)]) == [{1, 2}, {3, 4}]
    assert room_groups([1, 2, 3], [(1, 2), (2, 3)]) == [{1, 2, 3}]


def test_rooms_that_touch_need_no_walkway():
    rooms = _rooms((0, 0, 4, 4), (4, 0, 8, 4))
    assert plan_walkways(rooms, [(1, 2)]) == []


def test_a_straight_walkway_joins_rooms_across_a_gap():
    rooms = _rooms((0, 0, 4, 4), (6, 1, 10, 5))
    (w,) = plan_walkways(rooms, [])
    (lo, hi), = w.floors
    assert np.allclose([lo[0], hi[0]], [4, 6]) and np.isclose(hi[1] - lo[1], WALKWAY_W)
    assert 1 <= lo[1] and hi[1] <= 4  # within the wall both rooms show each other
    # Its doorways sit on the walls that face each other, where the strip meets them.
    for room, side, along in w.doors:
        assert side == (1 if room == 1 else 0)
        assert _inside(_door_point(rooms[room], side, along), lo, hi)


def test_walkways_cross_no_other_room_and_form_one_path():
    # Room 3 sits between 1 and 2 on the diagonal's short way round.
    rooms = _rooms((0, 0, 4, 4), (7, 7, 11, 11), (5, 0, 9, 4.5))
    (w,) = plan_walkways(rooms, [(2, 3)])
    assert {w.a, w.b} <= {1, 2, 3} and len(w.floors) in (1, 2)
    others = [rooms[r] for r in rooms if r not in (w.a, w.b)]
    for lo, hi in w.floors:
        for r in others:
            rlo = np.asarray(r.location[:2]) - np.asarray(r.size[:2]) / 2
            rhi = rlo + np.asarray(r.size[:2])
            assert np.any(np.minimum(hi, rhi) - np.maximum(lo, rlo) <= 1e-6)
    # The floor strips form one path: each doorway is on a strip, and consecutive strips touch.
    for room, side, along in w.doors:
        assert any(_inside(_door_point(rooms[room], side, along), lo, hi) for lo, hi in w.floors)
    for (lo1, hi1), (lo2, hi2) in zip(w.floors, w.floors[1:]):
        assert np.all(np.minimum(hi1, hi2) - np.maximum(lo1, lo2) >= -1e-6)


def test_a_lone_diagonal_pair_gets_an_l_walkway():
    rooms = _rooms((0, 0, 4, 4), (6, 6, 10, 10))
    (w,) = plan_walkways(rooms, [])
    assert len(w.floors) == 2 and w.length > 4.0


def test_rooms_no_walkway_can_reach_raise_a_clear_error():
    # Room 2 is walled in by rooms 3-6, none of which the caller linked to it (say their shared walls were
    # too short for a door): every way out of it crosses another room.
    rooms = _rooms((-20, -20, -16, -16), (0, 0, 4, 4), (-1, -1, 5, 0), (-1, 4, 5, 5), (-1, 0, 0, 4), (4, 0, 5, 4))
    with pytest.raises(SceneError, match="add a corridor room"):
        plan_walkways(rooms, [(3, 5), (5, 4), (4, 6), (6, 3)])


def test_furniture_opens_towards_the_room_unless_something_stands_in_front():
    sg = SceneGraph3D("Corner")
    sg.rooms[1] = Room3D(1, "kitchen", "", (5.9, 6.0, 1.5), (3.24, 4.78, 3.0))  # x 4.28-7.52, y 3.61-8.39
    sg.objects[1] = Object3D(1, "refrigerator", "", 1, (7.15, 7.15, 0.9), (0.7, 0.8, 1.8))
    sg.objects[2] = Object3D(2, "oven", "", 1, (7.2, 7.9, 0.45), (0.6, 0.6, 0.9))  # in the corner, north of it
    sg.objects[3] = Object3D(3, "cabinet", "", 1, (7.25, 4.21, 0.45), (0.5, 1.0, 0.9))
    sg.objects[4] = Object3D(4, "pan", "", 1, (7.0, 6.0, 0.1), (0.3, 0.3, 0.06))  # items do not block
    # The cabinet's long side faces the room's middle, and nothing stands there.
    assert front_side(sg.objects[3], sg) == (0, -1)
    # The oven's square footprint would face the fridge 5 cm away (south) or the wall 19 cm away (north):
    # it opens west, into the room.
    assert front_side(sg.objects[2], sg) == (0, -1)
    sg.objects[5] = Object3D(5, "counter", "", 1, (5.0, 7.9, 0.45), (1.2, 0.6, 0.9))
    assert front_side(sg.objects[2], sg) == (0, -1)  # the counter leaves 1.3 m free in front of the oven
    sg.objects[5] = Object3D(5, "counter", "", 1, (6.3, 7.9, 0.45), (1.2, 0.6, 0.9))  # 0.0 m: boxed in
    assert front_side(sg.objects[2], sg) == (1, 1)  # then the freest side: 19 cm to the north wall


def test_support_points_lie_where_items_rest():
    table = Object3D(1, "dining_table", "", 1, (2.0, 2.0, 0.375), (1.4, 0.9, 0.75))
    sink = Object3D(2, "sink", "", 1, (0.3, 1.0, 0.45), (0.6, 0.8, 0.9))
    cabinet = Object3D(3, "cabinet", "", 1, (0.3, 2.0, 0.45), (0.6, 1.2, 0.9))
    top = support_points(table)
    assert top.shape == (16, 3) and np.allclose(top[:, 2], 0.78)
    assert np.all(top[:, :2] > np.array([1.3, 1.55])) and np.all(top[:, :2] < np.array([2.7, 2.45]))
    assert np.allclose(support_points(sink)[:, 2], 0.9 - SINK_DEPTH + 0.05)  # over the basin, not the rim
    assert np.allclose(support_points(cabinet)[:, 2], 0.1)  # at item height on the cabinet's floor


def test_rest_bottom_is_where_a_lone_item_is_placed():
    table = Object3D(1, "dining_table", "", 1, (2.0, 2.0, 0.375), (1.4, 0.9, 0.75))
    sink = Object3D(2, "sink", "", 1, (0.3, 1.0, 0.45), (0.6, 0.8, 0.9))
    cabinet = Object3D(3, "cabinet", "", 1, (0.3, 2.0, 0.45), (0.6, 1.2, 0.9))
    rng = np.random.default_rng(0)
    for holder, relation, height, bottom in ((table, "on", 0.1, 0.752), (sink, "inside", 0.05, 0.87),
                                             (sink, "inside", 0.3, 0.9 - SINK_DEPTH + 0.035),
                                             (cabinet, "inside", 0.2, 0.08)):
        assert rest_bottom(holder, height, relation) == pytest.approx(bottom)
        z = place_spot(holder, (0.1, 0.1, height), relation, rng)[2]
        assert z - height / 2 == pytest.approx(bottom, abs=1e-3)


def test_a_front_opening_is_oblique_from_its_side_and_from_behind():
    cabinet = Object3D(1, "cabinet", "", 1, (0.3, 2.0, 0.45), (0.6, 1.2, 0.9))  # opens towards +x
    assert not oblique(cabinet, (0, 1), (2.2, 2.0))  # straight in front
    assert not oblique(cabinet, (0, 1), (2.0, 3.5))  # 41 degrees off
    assert oblique(cabinet, (0, 1), (1.1, 3.7))  # 65 degrees off
    assert oblique(cabinet, (0, 1), (-1.0, 2.0))  # behind it


def test_walkway_doorways_go_where_no_furniture_stands():
    # Two rooms 0.45 m apart (real 3DSG boxes: a wall's thickness); a table right in front of the middle of
    # the wall that faces the other room, a wardrobe against the other room's wall at the same height.
    rooms = _rooms((0, 0, 4, 6), (4.45, 0, 8.45, 6))
    table = (np.array([3.0, 2.5]), np.array([3.9, 3.5]))
    wardrobe = (np.array([4.5, 1.5]), np.array([5.1, 3.6]))
    plain = plan_walkways(rooms, [])
    assert len(plain) == 1 and abs(plain[0].doors[0][2] - 3.0) < 1e-6  # the middle, without obstacles
    (walkway,) = plan_walkways(rooms, [], Obstacles([table, wardrobe]))
    obstacles = Obstacles([table, wardrobe])
    for room, side, along in walkway.doors:
        axis, positive = divmod(side, 2)
        plane = rooms[room].location[axis] + (1 if positive else -1) * rooms[room].size[axis] / 2
        assert obstacles.door(axis, plane, along, 1.0) == 0.0
    assert obstacles.door(0, 4.0, 3.0, 1.0) > 0  # the middle was blocked
    assert all(obstacles.area(lo, hi) == 0.0 for lo, hi in walkway.floors)


def test_a_doorway_takes_the_clear_stretch_of_a_shared_wall():
    couch = Obstacles([(np.array([3.2, 0.5]), np.array([3.95, 2.9]))])  # along the wall, x 3.2-3.95
    spot = door_spot(couch, 0, 4.0, 0.0, 4.0, 1.0)
    assert spot >= 2.9 + 0.5 - 1e-6 and couch.door(0, 4.0, spot, 1.0) == 0.0
    assert door_spot(Obstacles(), 0, 4.0, 0.0, 4.0, 1.0) == pytest.approx(2.0)  # nothing there: the middle


def test_floors_lie_side_by_side_at_level_zero_in_the_stage():
    sg = SceneGraph3D("Storeys")
    for rid, floor, z in ((1, "A", -0.12), (2, "A", -0.12), (3, "B", 2.93)):
        sg.rooms[rid] = Room3D(rid, "room", "", (2.0 + 4 * (rid == 2), 2.0, z + 1.35), (4.0, 4.0, 2.7), floor=floor)
    sg.objects[1] = Object3D(1, "bed", "", 3, (2.0, 2.0, 2.93 + 0.28), (1.6, 2.0, 0.55))
    sg.objects[2] = Object3D(2, "counter", "", 1, (1.0, 2.0, -0.12 + 0.45), (0.6, 1.6, 0.9))
    assert floor_levels(sg) == pytest.approx({"A": -0.12, "B": 2.93})
    laid = stage_layout(sg)
    assert [laid.rooms[r].location[2] for r in (1, 2, 3)] == pytest.approx([1.35, 1.35, 1.35])
    assert laid.objects[1].location[2] == pytest.approx(0.28) and laid.objects[2].location[2] == pytest.approx(0.45)
    # Floor B starts a building width (8 m) plus FLOOR_GAP to the east: no room of A meets a room of B.
    assert laid.rooms[3].location[0] == pytest.approx(2.0 + 8.0 + FLOOR_GAP)
    assert laid.objects[1].location[0] == pytest.approx(2.0 + 8.0 + FLOOR_GAP)
    assert laid.rooms[1].location[:2] == sg.rooms[1].location[:2]
    flat = SceneGraph3D("Flat", {1: sg.rooms[1]}, {})
    flat.rooms[1] = Room3D(1, "room", "", (2.0, 2.0, 1.5), (4.0, 4.0, 3.0))
    assert stage_layout(flat) is flat  # a one-floor building at level 0 is left as it is


def test_rooms_whose_boxes_overlap_open_into_each_other():
    # A real room is no rectangle: a living room's box takes in a small bathroom whole, and part of a hall.
    sg = SceneGraph3D("Overlaps")
    sg.rooms.update(_rooms((0, 0, 8, 6), (5, 3.5, 7.5, 5.5), (7.6, 1, 11, 4)))
    sg.rooms[3] = Room3D(3, "corridor", "", (9.3, 2.5, 1.5), (3.4, 3.0, 3.0))  # x 7.6-11: 0.4 m into room 1
    _, doorways, _, walkways = _wall_boxes(sg, [])
    pairs = sorted(tuple(sorted((a, b))) for a, b, _ in doorways)
    assert pairs == [(1, 2), (1, 3), (1, 3)] and walkways == []  # a door in each wall that runs through the other
    inner = next(c for a, b, c in doorways if a == 2)
    assert 5 <= inner[0] <= 7.5 and 3.5 <= inner[1] <= 5.5  # in the bathroom's own wall, inside the living room


def test_no_wall_stands_where_a_room_s_box_overlaps_another():
    # Real 3DSG boxes overlap (a room is no rectangle): the lobby's east wall (x = 1.4) runs through the
    # corridor for y in [0, 1], and the corridor's west wall (x = 0.9) through the lobby. The overlap is floor
    # both rooms share: no wall piece stands in it, so the two open into each other there.
    sg = SceneGraph3D("Overlap")
    sg.rooms = _rooms((-1.0, -1.0, 1.4, 1.0), (0.9, 0.0, 3.1, 2.8))
    walls, _, _, _ = _wall_boxes(sg, [])
    overlap_lo, overlap_hi = np.array([0.9, 0.0]), np.array([1.4, 1.0])
    for lo, hi in walls:
        centre = (np.asarray(lo[:2]) + np.asarray(hi[:2])) / 2
        assert not _inside(centre, overlap_lo + 0.06, overlap_hi - 0.06), (lo, hi)
    # ... while every wall outside the overlap still stands: the lobby's west wall, the corridor's north one.
    assert any(lo[0] < -0.9 and hi[1] - lo[1] > 1.5 for lo, hi in walls)
    assert any(lo[1] > 2.7 and hi[0] - lo[0] > 2.0 for lo, hi in walls)
    assert _runs_through(sg.rooms, 1, 0, 1.4) == [(0.0, 2.8)]  # the lobby's east wall, through the corridor
    assert _cut([(-1.05, 1.05, 0.0, 2.6)], [(0.0, 2.8)]) == [(-1.05, 0.0, 0.0, 2.6)]
    # Rooms that only nearly touch keep their walls (a doorway joins them, not an open side), and so does a
    # wall that runs less than 5 cm inside the other room.
    apart = _rooms((0, 0, 4, 4), (4.2, 0, 8, 4), (3.97, 4.0, 6.0, 6.0))
    assert _runs_through(apart, 1, 0, 4.0) == []
