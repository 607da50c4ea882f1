"""Real-format buildings whose rooms share no wall, in habitat-sim (issue 24): every room the symbolic world
connects is reached, floors meet by stairs, the oracle completes its tasks, and a stage that cannot reach a
room says so at reset."""

import numpy as np
import pytest

habitat_sim = pytest.importorskip("habitat_sim")

import gymnasium as gym

import servicerobot  # noqa: F401  (registers the gym ids)
from servicerobot.envs.habitat.executor import HabitatExecutor
from servicerobot.errors import SceneError
from servicerobot.oracle import OracleAgent
from servicerobot.pddl.interpreter import GroundAction
from servicerobot.scenes.gibson import Object3D, Room3D, SceneGraph3D, load_building, to_household_scene
from tests.habitat.buildings import shared_wall_pairs, write_building


def _executor(path, seed=0):
    sg = load_building(path)
    rng = np.random.default_rng(seed)
    scene = to_household_scene(sg, rng, n_people=1)
    ex = HabitatExecutor(inspect=False)
    ex.reset(scene, scene.init, rng)
    return ex, scene


def _move(ex, start, goal):
    return ex.execute(GroundAction("move", ("robot", start, goal)), frozenset(), frozenset())


def test_every_connected_pair_of_rooms_is_walked_in_a_building_with_no_shared_wall(tmp_path):
    assert shared_wall_pairs("Parlow") == []
    ex, scene = _executor(write_building(tmp_path, "Parlow"))
    try:
        assert len(scene.doors) == 21  # 7 rooms, none sharing a wall: the symbolic world links every pair
        assert ex.stage.walkways and ex.graph.rooms[1].location[2] == pytest.approx(1.35)  # floor at -0.12 -> 0
        for a, b in scene.doors:
            for start, goal in ((a, b), (b, a)):
                ex.position = ex._stand_point(start)
                assert _move(ex, start, goal) == "", (start, goal)
                assert ex._in_room(ex.position, goal)
    finally:
        ex.close()


def test_floors_meet_only_by_the_stairs(tmp_path):
    ex, scene = _executor(write_building(tmp_path, "Stairwick"))
    try:
        floors = {r.floor for r in ex.graph.rooms.values()}
        assert floors == {"A", "B"}
        stairs = [(a, b) for a, b in scene.doors
                  if ex.graph.rooms[scene.node_of[a][1]].floor != ex.graph.rooms[scene.node_of[b][1]].floor]
        assert stairs == [("staircase_2", "staircase_8")] or stairs == [("staircase_8", "staircase_2")]
        ex.position = ex._stand_point("kitchen_6")
        assert _move(ex, "kitchen_6", "staircase_2") == ""
        walked = ex.distance
        assert _move(ex, "staircase_2", "staircase_8") == ""
        assert ex._in_room(ex.position, "staircase_8") and ex.distance - walked >= 2 * 3.05 - 1e-6
        assert _move(ex, "staircase_8", "bedroom_11") == "" and ex._in_room(ex.position, "bedroom_11")
        # The navmesh joins no floor to another: only the stairs do.
        path = habitat_sim.ShortestPath()
        path.requested_start, path.requested_end = ex._stand_point("kitchen_6"), ex._stand_point("bedroom_11")
        assert not ex.sim.pathfinder.find_path(path)
        bed = next(o for o in ex.graph.objects.values() if o.class_ == "bed")
        assert bed.location[2] == pytest.approx(0.28)  # upstairs furniture stands on its floor in the stage
    finally:
        ex.close()


def test_the_oracle_completes_its_tasks_on_a_building_with_no_shared_wall(tmp_path):
    path = str(write_building(tmp_path, "Parlow"))
    done = total = 0
    for seed in (0, 1):
        env = gym.make("ServiceRobot-Habitat-v0", scene_graph=path, simulator="habitat", n_tasks=3,
                       event_rate=0.0, disturbance_prob=0.0, inspect=False)
        agent = OracleAgent.from_env(env)
        obs, info = env.reset(seed=seed)
        for _ in range(400):
            obs, _, term, trunc, info = env.step(agent.act(obs))
            assert not info["action_error"], info["action_error"]
            if term or trunc:
                break
        done, total = done + info["tasks_completed"], total + info["tasks_total"]
        env.close()
    assert done == total == 6


def test_a_room_whose_box_lies_inside_another_is_walked_into():
    sg = SceneGraph3D("Ensuite")
    sg.rooms[1] = Room3D(1, "bedroom", "", (4.0, 3.0, 1.5), (8.0, 6.0, 3.0))
    sg.rooms[2] = Room3D(2, "bathroom", "", (6.25, 4.5, 1.5), (2.5, 2.0, 3.0))  # inside the bedroom's box
    sg.objects[1] = Object3D(1, "bed", "", 1, (1.5, 3.0, 0.28), (1.6, 2.0, 0.55))
    sg.objects[2] = Object3D(2, "shirt", "", 1, (1.5, 3.0, 0.6), (0.3, 0.3, 0.05))
    sg.objects[3] = Object3D(3, "sink", "", 2, (6.25, 5.2, 0.42), (0.5, 0.45, 0.85))
    rng = np.random.default_rng(0)
    scene = to_household_scene(sg, rng, n_people=1)
    ex = HabitatExecutor(inspect=False)
    try:
        ex.reset(scene, scene.init, rng)  # no walkway could join them: a doorway in the bathroom's own wall
        for start, goal in (("bedroom_1", "bathroom_2"), ("bathroom_2", "bedroom_1")):
            ex.position = ex._stand_point(start)
            assert _move(ex, start, goal) == "" and ex._in_room(ex.position, goal)
    finally:
        ex.close()


def _shut(fill: bool = False) -> SceneGraph3D:
    """A kitchen and a pantry sharing the wall x = 4; a shelf stands along all of that wall in the pantry
    (`fill`: a cabinet fills the whole pantry instead)."""
    sg = SceneGraph3D("Shut")
    sg.rooms[1] = Room3D(1, "kitchen", "", (2.0, 2.0, 1.5), (4.0, 4.0, 3.0))
    sg.rooms[2] = Room3D(2, "pantry_room", "", (6.0, 2.0, 1.5), (4.0, 4.0, 3.0))
    sg.objects[1] = Object3D(1, "counter", "", 1, (1.0, 2.0, 0.45), (0.6, 1.6, 0.9))
    sg.objects[2] = Object3D(2, "cup", "", 1, (1.0, 2.0, 0.952), (0.09, 0.09, 0.1))
    if fill:
        sg.objects[3] = Object3D(3, "cabinet", "", 2, (6.0, 2.0, 0.9), (4.0, 4.0, 1.8))
    else:
        sg.objects[3] = Object3D(3, "shelf", "", 2, (4.35, 2.0, 0.9), (0.6, 4.0, 1.8))  # along the whole wall
        sg.objects[4] = Object3D(4, "book", "", 2, (4.35, 2.0, 1.9), (0.2, 0.3, 0.2))   # on the shelf
    return sg


def test_furniture_that_shuts_a_room_off_is_moved_in_both_worlds_and_the_move_is_said():
    sg = _shut()
    rng = np.random.default_rng(0)
    scene = to_household_scene(sg, rng, n_people=1)
    ex = HabitatExecutor(inspect=False)
    try:
        ex.reset(scene, scene.init, rng)
        assert len(ex.moved) == 1 and ex.moved[0].startswith("shelf_3 moved 3.30 m +x")
        assert "pantry_room_2" in ex.moved[0]
        # One geometry: the stage's graph and the symbolic scene's graph agree, and what rested on the shelf
        # went with it.
        for graph in (ex.graph, ex.scene.source_graph):
            assert graph.objects[3].location[0] == pytest.approx(7.65)
            assert graph.objects[4].location[0] == pytest.approx(7.65)
        assert ex.scene.entities["shelf_3"].pos[0] == pytest.approx(7.65)
        assert sg.objects[3].location[0] == pytest.approx(4.35)  # the caller's graph is left as it was
        ex.position = ex._stand_point("kitchen_1")
        assert _move(ex, "kitchen_1", "pantry_room_2") == "" and ex._in_room(ex.position, "pantry_room_2")
        # A new episode in the same building finds the same stage and gets the same move.
        again = to_household_scene(sg, rng, n_people=1)
        ex.reset(again, again.init, rng)
        assert again.source_graph.objects[3].location[0] == pytest.approx(7.65) and len(ex.moved) == 1
    finally:
        ex.close()


def test_a_room_furniture_fills_is_refused_at_reset():
    sg = _shut(fill=True)
    rng = np.random.default_rng(0)
    scene = to_household_scene(sg, rng, n_people=1)
    ex = HabitatExecutor(inspect=False)
    try:
        with pytest.raises(SceneError, match=r"pantry_room_2 has no free navigable floor"):
            ex.reset(scene, scene.init, rng)
    finally:
        ex.close()


def test_an_item_on_a_pile_is_at_the_receptacle_the_pile_stands_on():
    sg = SceneGraph3D("Piles")
    sg.rooms[1] = Room3D(1, "living_room", "", (2.5, 2.5, 1.5), (5.0, 5.0, 3.0))
    sg.objects[1] = Object3D(1, "coffee_table", "", 1, (2.5, 2.5, 0.2), (0.5, 0.5, 0.4))
    for k in range(2, 6):  # four big books for a small table: they pile up
        sg.objects[k] = Object3D(k, "book", "", 1, (2.5, 2.5, 0.4 + 0.3 * k), (0.4, 0.45, 0.3))
    rng = np.random.default_rng(0)
    scene = to_household_scene(sg, rng, n_people=1)
    ex = HabitatExecutor(inspect=False)
    try:
        ex.reset(scene, scene.init, rng)
        top = max(ex.pose[k][2] for k in range(2, 6))
        assert top > 0.4 + 0.3 + 0.3  # above the table's top + reach: a pile
        for k in range(2, 6):
            assert ex._rests_at(k, 1)
        ex.pose[5] = np.array([2.5, 2.5, 3.5])  # floating far over the pile: not at the table
        assert not ex._rests_at(5, 1)
    finally:
        ex.close()


def _benchmark():
    import importlib.util
    from pathlib import Path

    path = Path(__file__).resolve().parents[2] / "benchmarks" / "habitat_real_layout.py"
    spec = importlib.util.spec_from_file_location("habitat_real_layout", path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_the_benchmark_records_a_refused_instance_as_a_row_and_sums_a_dataset_per_building(tmp_path):
    from servicerobot.scenes.gibson import save_npz

    bench = _benchmark()
    root = tmp_path / "data"
    write_building(root / "split" / "Parlow" / "problem_1", "Parlow")
    filled = root / "split" / "Shut" / "problem_1"
    filled.mkdir(parents=True)
    save_npz(_shut(fill=True), filled / "Shut.npz")
    assert bench.dataset_instances(root) == [root / "split" / "Parlow" / "problem_1", filled]
    out = bench.dataset(root, range(1), 2, ["oracle"])
    rows = {r["instance"]: r for r in out["rows"]}
    assert rows["split/Shut/problem_1"]["reset"] == "refused"
    assert "no free navigable floor" in rows["split/Shut/problem_1"]["refused"]
    assert rows["split/Parlow/problem_1"]["reset"] == "ok"
    assert rows["split/Parlow/problem_1"]["oracle"]["tasks"] == 2
    assert out["per_building"]["Shut"]["reset"] == 0 and out["per_building"]["Parlow"]["reset"] == 1
    assert out["totals"]["instances"] == 2 and out["totals"]["reset"] == 1
    assert list(out["totals"]["refused"]) == ["split/Shut/problem_1"]
    (tmp_path / "empty").mkdir()
    with pytest.raises(SystemExit, match="no instance folder"):
        bench.dataset_instances(tmp_path / "empty")
    with pytest.raises(SystemExit, match="no such folder"):
        bench.dataset_instances(tmp_path / "missing")


def test_a_small_item_is_never_hidden_under_a_bigger_one_that_shares_its_receptacle():
    # Larger items are placed first, so a knife finds room beside a plate in a sink or lies on top of it;
    # a plate piled over a knife would hide the knife from every camera.
    sg = SceneGraph3D("Sinks")
    sg.rooms[1] = Room3D(1, "kitchen", "", (2.5, 2.5, 1.5), (5.0, 5.0, 3.0))
    sg.objects[1] = Object3D(1, "sink", "", 1, (2.5, 0.4, 0.45), (0.57, 0.54, 0.9))
    sg.objects[2] = Object3D(2, "knife", "", 1, (2.5, 0.4, 0.92), (0.22, 0.03, 0.02))
    sg.objects[3] = Object3D(3, "plate", "", 1, (2.5, 0.4, 0.93), (0.25, 0.25, 0.03))
    sg.objects[4] = Object3D(4, "bowl", "", 1, (2.5, 0.4, 0.95), (0.48, 0.16, 0.1))
    ex = HabitatExecutor(inspect=False)
    try:
        for seed in range(6):
            rng = np.random.default_rng(seed)
            scene = to_household_scene(sg.copy(), rng, n_people=1)
            ex.reset(scene, scene.init, rng)
            knife, size = ex.pose[2], np.asarray(sg.objects[2].size)
            for other in (3, 4):
                half = np.asarray(sg.objects[other].size) / 2
                above = ex.pose[other][2] - half[2] >= knife[2] + size[2] / 2 - 1e-3  # it lies over the knife
                overlap = np.all(np.abs(ex.pose[other][:2] - knife[:2]) < size[:2] / 2 + half[:2] - 1e-3)
                assert not (above and overlap), (seed, other, ex.pose[other], knife)
    finally:
        ex.close()


def test_what_a_closed_container_too_small_for_it_holds_is_out_of_sight_until_it_opens():
    from servicerobot.envs.habitat.stage import from_habitat
    from servicerobot.pddl import Atom

    # A real 3DSG fridge box can be a 7 cm thin slab: the symbolic world still keeps a bottle inside it.
    sg = SceneGraph3D("Slab")
    sg.rooms[1] = Room3D(1, "kitchen", "", (2.5, 2.5, 1.5), (5.0, 5.0, 3.0))
    sg.objects[1] = Object3D(1, "refrigerator", "", 1, (2.5, 0.1, 0.9), (0.6, 0.07, 1.8))
    sg.objects[2] = Object3D(2, "bottle", "", 1, (2.5, 0.1, 0.9), (0.08, 0.08, 0.3))
    rng = np.random.default_rng(0)
    scene = to_household_scene(sg, rng, n_people=1)
    facts = scene.init | {Atom("closed", ("refrigerator_1",))}
    ex = HabitatExecutor(inspect=False)
    try:
        ex.reset(scene, facts, rng)
        assert Atom("inside", ("bottle_2", "refrigerator_1")) in facts
        body_at = from_habitat(np.asarray(ex.bodies[2].translation))
        assert body_at[2] < -20  # below the floor: no camera sees it through the closed door
        ex.sync(facts - {Atom("closed", ("refrigerator_1",))})
        body_at = from_habitat(np.asarray(ex.bodies[2].translation))
        assert np.allclose(body_at, ex.pose[2], atol=1e-4) and ex._rests_at(2, 1)
    finally:
        ex.close()
