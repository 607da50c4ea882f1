"""Where the stage puts what real data gives it, and what the look-around makes of it (issue 35, third round):
furniture of no given size stands on what is under it, a pile stays under the ceiling, an item in a receptacle
is in that receptacle's room, a shelf above the camera is looked at from farther back, and a percept where
nothing moved reuses the last look-around's images.

The stage and adapter tests need habitat-sim: they run inside scripts/habitat-sim's root (docs/habitat.md).
"""

import numpy as np
import pytest

from servicerobot.adapters.habitat import SemanticIndex, SemanticObject, View, observe
from servicerobot.envs.habitat.stage import WALL_HEIGHT, stage_layout
from servicerobot.scenes.gibson import Object3D, Room3D, SceneGraph3D
from servicerobot.scenes.real_3dsg import LoadReport


def _with_guessed_furniture() -> SceneGraph3D:
    """A bedroom (floor at z = 0.2) with a bed, a bucket of no given size hung over the bed and a magazine rack of
    no given size floating 1 m over the floor, as Context Matters' added objects are."""
    sg = SceneGraph3D("Guessed")
    sg.rooms[1] = Room3D(1, "bedroom", "", (2.5, 2.0, 1.5), (5.0, 4.0, 2.6))
    sg.objects[1] = Object3D(1, "bed", "", 1, (1.5, 2.0, 0.5), (2.0, 1.6, 0.6))
    sg.objects[2] = Object3D(2, "bucket", "", 1, (1.5, 2.0, 1.55), (0.6, 0.6, 0.8))
    sg.objects[3] = Object3D(3, "magazine_rack", "", 1, (4.2, 0.6, 1.6), (0.6, 0.6, 0.8))
    sg.objects[4] = Object3D(4, "cup", "", 1, (4.2, 0.6, 2.1), (0.2, 0.2, 0.2))
    sg.report = LoadReport(default_sized=[2, 3, 4])
    return sg


def test_furniture_of_no_given_size_stands_on_what_is_under_it_or_on_the_floor():
    sg = _with_guessed_furniture()
    staged = stage_layout(sg)
    bottom = {oid: o.location[2] - o.size[2] / 2 for oid, o in staged.objects.items()}
    # The floor (the room's box bottom, 0.2) is at z = 0 on the stage: the bed's top is at 0.6.
    assert bottom[2] == pytest.approx(0.6)  # on the bed, not sunk into it nor hung over it
    assert bottom[3] == pytest.approx(0.0)  # nothing under it: on the floor
    assert staged.objects[4].location[2] == pytest.approx(2.1 - 0.2)  # an item is placed by the household world
    assert staged.objects[1].location[2] == pytest.approx(0.5 - 0.2)  # furniture of given size stays
    assert sg.objects[2].location[2] == pytest.approx(1.55)  # the loaded graph is left as it was


def test_an_item_in_a_receptacle_is_in_the_receptacle_s_room_not_the_room_under_its_centre():
    # A kitchen fridge whose box reaches 0.3 m into the closet; the camera sees an item in that part of it.
    index = SemanticIndex(
        objects={5: SemanticObject(5, "refrigerator", 0, np.array([0.0, 2.0, 0.8]), np.array([1.0, 1.0, 1.6])),
                 7: SemanticObject(7, "cup", 1, np.array([0.0, 1.9, 1.4]), np.array([0.2, 0.2, 0.2]))},
        regions=[("kitchen", np.array([-3.0, 2.2, 0.0]), np.array([3.0, 6.0, 2.6])),
                 ("closet", np.array([-3.0, -2.0, 0.0]), np.array([3.0, 2.2, 2.6]))],
        movable=frozenset({7}))
    semantic = np.zeros((120, 160), dtype=np.uint32)
    semantic[55:65, 75:85] = 7  # a patch at the image's centre, 2 m ahead of a camera 1.5 m up facing 3DSG +y
    view = View(semantic, np.full((120, 160), 2.0, dtype=np.float32), np.array([0.0, 1.5, 0.0]), np.eye(3))
    cup = observe([view], index)[7]
    assert index.region_at(cup.centre) == 1  # its centre lies in the closet's box ...
    assert cup.support == ("inside", 5) and cup.region == 0  # ... but it is in the kitchen's fridge


habitat = pytest.mark.skipif(not __import__("importlib").util.find_spec("habitat_sim"),
                             reason="needs habitat-sim (scripts/habitat-sim's root)")


def _shelf_room() -> SceneGraph3D:
    """A 6 x 5 m living room: a 2.0 m bookshelf with a book on its top, a 0.6 m rack with twelve books
    whose 3DSG boxes all lie at one spot on it (more than its top holds side by side)."""
    sg = SceneGraph3D("Piles")
    sg.rooms[1] = Room3D(1, "living_room", "", (3.0, 2.5, 1.3), (6.0, 5.0, 2.6))
    sg.objects[1] = Object3D(1, "bookshelf", "", 1, (0.25, 2.5, 1.0), (0.4, 1.0, 2.0))
    sg.objects[2] = Object3D(2, "book", "", 1, (0.25, 2.5, 2.05), (0.15, 0.2, 0.1))
    sg.objects[3] = Object3D(3, "side_table", "", 1, (5.6, 4.6, 0.3), (0.6, 0.6, 0.6))
    for k in range(12):
        sg.objects[10 + k] = Object3D(10 + k, "book", "", 1, (5.6, 4.6, 0.8), (0.3, 0.4, 0.35))
    return sg


@pytest.fixture(scope="module")
def piles(start_executor):
    return start_executor(_shelf_room())


@habitat
def test_a_pile_stays_under_the_ceiling(piles):
    _, ex = piles
    books = list(range(10, 22))
    assert all(ex._rests_at(oid, 3) for oid in books)  # every one is at the table, as the symbolic world says
    tops = [ex.pose[oid][2] + ex.graph.objects[oid].size[2] / 2 for oid in books]
    # Twelve 0.35 m books over a 0.6 m top would pile 4 layers over the 2.6 m walls; the top layer shares space.
    assert max(tops) <= WALL_HEIGHT + 1e-6
    assert max(tops) > 0.6 + 2 * 0.35  # it did pile up


@habitat
def test_a_shelf_above_the_camera_is_looked_at_from_farther_back(piles):
    scene, ex = piles
    from servicerobot.envs.habitat.stage import from_habitat

    shelf = next(n for n, (layer, node) in scene.node_of.items() if layer == "object" and node == 1)
    near, far = (from_habitat(p)[:2] for p in (ex._approach_point(shelf), ex._viewpoint(shelf)))
    front = 0.45  # the shelf's front face, x = 0.45
    up = max(ex.tilts) + np.arctan(np.tan(np.deg2rad(ex.hfov) / 2) * ex.height / ex.width)
    assert far[0] - front > near[0] - front + 0.5
    # From there the head camera's upward view reaches 0.3 m over the 2.0 m top at the shelf's front edge.
    assert ex.camera_height + (far[0] - front) * np.tan(up) >= 2.0 + 0.03 + 0.3 - 0.05
    # A table below the camera is looked at from where the robot handles it.
    table = next(n for n, (layer, node) in scene.node_of.items() if layer == "object" and node == 3)
    assert np.allclose(ex._viewpoint(table), ex._approach_point(table))


@habitat
def test_a_percept_where_nothing_moved_reuses_the_look_around_and_one_after_a_move_renders_again(piles):
    scene, ex = piles
    room = scene.room_names[0]
    symbolic = {"room": room, "entities": {room: "room", "robot": "robot"}, "facts": [], "observed": [room]}
    ex.position = np.asarray(ex._stand_point(room))
    first = ex.percept(symbolic)
    rendered, reused = ex.views_rendered, ex.looks_reused
    assert ex.percept(symbolic) == first
    assert ex.views_rendered == rendered and ex.looks_reused == reused + 1
    book = next(n for n, (layer, node) in scene.node_of.items() if layer == "object" and node == 2)
    ex._set(2, ex.pose[2] + np.array([0.0, 0.1, 0.0]))  # an item moved: the images may differ
    ex.percept(symbolic)
    assert ex.views_rendered > rendered and book in scene.entities
    rendered = ex.views_rendered
    ex.yaw += 0.5  # the robot turned
    ex.percept(symbolic)
    assert ex.views_rendered > rendered
