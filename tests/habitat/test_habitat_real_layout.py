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


def test_a_room_furniture_shuts_off_is_refused_at_reset():
    sg = SceneGraph3D("Shut")
    sg.rooms[1] = Room3D(1, "kitchen", "", (2.0, 2.0, 1.5), (4.0, 4.0, 3.0))
    sg.rooms[2] = Room3D(2, "pantry_room", "", (6.0, 2.0, 1.5), (4.0, 4.0, 3.0))  # shares the wall x = 4
    sg.objects[1] = Object3D(1, "counter", "", 1, (1.0, 2.0, 0.45), (0.6, 1.6, 0.9))
    sg.objects[2] = Object3D(2, "cup", "", 1, (1.0, 2.0, 0.952), (0.09, 0.09, 0.1))
    sg.objects[3] = Object3D(3, "shelf", "", 2, (4.35, 2.0, 0.9), (0.6, 4.0, 1.8))  # along the whole wall
    rng = np.random.default_rng(0)
    scene = to_household_scene(sg, rng, n_people=1)
    ex = HabitatExecutor(inspect=False)
    try:
        with pytest.raises(SceneError, match=r"cannot reach \['pantry_room_2'\] from kitchen_1"):
            ex.reset(scene, scene.init, rng)
    finally:
        ex.close()
