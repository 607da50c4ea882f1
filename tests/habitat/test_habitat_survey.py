"""What a look-around may say is not there: only the receptacles whose whole support surface it accounts for are
"observed" (closed world), so memory keeps what a camera could not have seen: the top of a bookshelf above the
camera, the bottom of a pile, an item a real 3DSG box sinks into its bed.

Runs inside scripts/habitat-sim's root against the real habitat-sim (docs/habitat.md).
"""

import numpy as np
import pytest

habitat_sim = pytest.importorskip("habitat_sim")

from servicerobot.envs.habitat.stage import from_habitat, to_habitat
from servicerobot.memory.graph import KnowledgeGraph
from servicerobot.memory.triplets import atom_to_triplet
from servicerobot.memory.updates import apply_percept
from servicerobot.pddl import Atom
from servicerobot.scenes.gibson import Object3D, Room3D, SceneGraph3D
from servicerobot.scenes.household import household_domain


def _living_room() -> SceneGraph3D:
    """A 6 x 5 m living room: a 2.2 m bookshelf with a book at the back of its top (above the 1.5 m camera); a side table with two
    bowls of its size, one on the other; a coffee table with a cup; a bed with a plate whose 3DSG box lies
    within the bed's box, 40 cm under its top."""
    sg = SceneGraph3D("Survey")
    sg.rooms[1] = Room3D(1, "living_room", "", (3.0, 2.5, 1.5), (6.0, 5.0, 3.0))
    sg.objects[1] = Object3D(1, "bookshelf", "", 1, (0.25, 2.5, 1.1), (0.4, 1.0, 2.2))
    sg.objects[2] = Object3D(2, "book", "", 1, (0.15, 2.5, 2.22), (0.15, 0.2, 0.04))
    sg.objects[3] = Object3D(3, "side_table", "", 1, (5.7, 4.7, 0.3), (0.3, 0.3, 0.6))
    sg.objects[4] = Object3D(4, "bowl", "", 1, (5.7, 4.7, 0.65), (0.26, 0.26, 0.1))
    sg.objects[5] = Object3D(5, "bowl", "", 1, (5.7, 4.7, 0.65), (0.26, 0.26, 0.1))
    sg.objects[6] = Object3D(6, "coffee_table", "", 1, (3.0, 1.0, 0.225), (1.0, 0.6, 0.45))
    sg.objects[7] = Object3D(7, "cup", "", 1, (3.2, 1.0, 0.5), (0.09, 0.09, 0.1))
    sg.objects[8] = Object3D(8, "bed", "", 1, (4.9, 1.0, 0.3), (2.0, 1.6, 0.6))
    sg.objects[9] = Object3D(9, "plate", "", 1, (4.6, 1.0, 0.2), (0.25, 0.25, 0.03))
    return sg


@pytest.fixture(scope="module")
def room(start_executor):
    return start_executor(_living_room())


def _named(scene, prefix: str) -> list[str]:
    return sorted(n for n in scene.entities if n.startswith(prefix))


def _percept(ex, scene, x: float, y: float) -> dict:
    point = np.asarray(ex.sim.pathfinder.snap_point(to_habitat((x, y, 0.0))))
    assert ex._free(point) and np.allclose(from_habitat(point)[:2], (x, y), atol=0.05)
    ex.position, ex.yaw = point, 0.0
    room = scene.room_names[0]
    return ex.percept({"room": room, "entities": {room: "room", "robot": "robot"}, "facts": [],
                       "observed": [room, "robot"]})


def test_only_receptacles_whose_whole_surface_shows_are_observed(room):
    scene, ex = room
    (book,), (shelf,), (side,), (coffee,), (cup,) = (_named(scene, k) for k in ("book_", "bookshelf", "side", "coffee",
                                                                                 "cup"))
    (bed,), (plate,) = _named(scene, "bed"), _named(scene, "plate")
    lower, upper = sorted(_named(scene, "bowl"), key=lambda n: ex.pose[ex.oid_of[n]][2])
    assert ex.pose[ex.oid_of[upper]][2] > ex.pose[ex.oid_of[lower]][2] + 0.09  # a pile: the upper bowl on the lower
    p = _percept(ex, scene, 3.0, 2.6)
    # The bed's top shows in full, the plate on it (the stage put it on the top, not in the solid box where its
    # 3DSG box lies): what is not seen on the bed is not there.
    assert [plate, "on", bed] in p["facts"] and bed in p["observed"]
    # The bookshelf fills many pixels but its top is above the camera; the upper bowl lies on a pile, which may
    # hide anything under it; the cup hides the spots of the coffee table behind it from where the robot stands.
    assert book not in p["entities"] and shelf not in p["observed"]
    assert [upper, "on", side] in p["facts"] and side not in p["observed"]
    assert [cup, "on", coffee] in p["facts"] and coffee not in p["observed"]


def test_memory_keeps_what_the_camera_could_not_have_seen_and_drops_what_it_would_have(room):
    scene, ex = room
    (book,), (shelf,), (bed,) = _named(scene, "book_"), _named(scene, "bookshelf"), _named(scene, "bed")
    prior = _prior(scene)
    memory = KnowledgeGraph.from_prior(household_domain(), prior, "robot")
    believed = {a for a in memory.facts if a.predicate in ("on", "inside")}
    apply_percept(memory, _percept(ex, scene, 3.0, 2.6), 0)
    assert believed <= memory.facts  # the book above the camera, both bowls, the cup, the plate
    # Told the book is on the bed instead: the bed shows in full without it, so memory drops that belief.
    prior["facts"] = [f if f[0] != book else [book, "on", bed] for f in prior["facts"]]
    memory = KnowledgeGraph.from_prior(household_domain(), prior, "robot")
    assert Atom("on", (book, bed)) in memory.facts
    apply_percept(memory, _percept(ex, scene, 3.0, 2.6), 0)
    assert Atom("on", (book, bed)) not in memory.facts and Atom("on", (book, shelf)) not in memory.facts


def _prior(scene) -> dict:
    """What the robot is told at the start (as `HouseholdWorld.prior`): every entity and initial fact."""
    return {"entities": {n: {"type": e.pddl_type} for n, e in scene.entities.items()},
            "facts": [atom_to_triplet(a) for a in sorted(scene.init)]}
