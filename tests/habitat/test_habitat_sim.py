"""The Habitat/Gibson world against the real habitat-sim (run inside scripts/habitat-sim's root; docs/install.md)."""

import json

import gymnasium as gym
import numpy as np
import pytest

habitat_sim = pytest.importorskip("habitat_sim")

import itertools

import servicerobot  # noqa: F401
from servicerobot.adapters.habitat import scene_graph_from_semantic_scene
from servicerobot.envs.habitat.executor import HabitatExecutor
from servicerobot.envs.habitat.stage import from_habitat
from servicerobot.envs.household.state import HouseholdState
from servicerobot.pddl import Atom
from servicerobot.pddl.interpreter import GroundAction
from servicerobot.scenes.gibson import generate_3dsg, to_household_scene
from servicerobot.scenes.gibson_classes import ITEM_TYPES, class_key


@pytest.fixture(scope="module")
def built():
    """One generated building with every container open, loaded in habitat-sim."""
    rng = np.random.default_rng(4)
    sg = generate_3dsg(rng, n_rooms=6)
    scene = to_household_scene(sg, rng)
    facts = frozenset(a for a in scene.init if a.predicate != "closed")
    ex = HabitatExecutor()
    ex.reset(scene, facts, rng)
    yield sg, scene, ex
    ex.close()


def _at_room(ex, scene, facts, room):
    ex.position, ex.yaw = ex._stand_point(room), 0.0
    state = HouseholdState(scene, facts)
    robot = {a for a in state.atoms if a.predicate == "in-room" and a.args[0] == "robot"}
    state.apply(frozenset({Atom("in-room", ("robot", room))}), frozenset(robot))
    return state


def test_semantic_scene_lists_every_room_and_object(built):
    sg, _scene, ex = built
    ss = ex.sim.semantic_scene
    assert len(ss.levels) == 1 and len(ss.regions) == len(sg.rooms)
    classes = sorted(o.category.name() for o in ss.objects
                     if o.category is not None and o.category.name() not in ("", "floor", "wall"))
    assert classes == sorted(class_key(o.class_) for o in sg.objects.values())
    # The habitat semantic scene converts back into the same building.
    back = scene_graph_from_semantic_scene(ss, sg.name)
    assert len(back.rooms) == len(sg.rooms) and len(back.objects) == len(sg.objects)
    for oid, obj in sg.objects.items():
        twin = back.objects[ex.stage.semantic_of[oid]]
        assert twin.class_ == class_key(obj.class_)
        assert np.allclose(twin.location, obj.location, atol=1e-3) and np.allclose(twin.size, obj.size, atol=1e-3)
        # Region names go through Matterport3D's letters: a child's room comes back as a playroom.
        lossy = {"childs_room": "playroom", "pantry_room": "storage_room"}
        category = sg.rooms[obj.parent_room].category
        assert back.rooms[twin.parent_room].category == lossy.get(category, category)


def test_percept_from_each_room_agrees_with_the_symbolic_world(built):
    _sg, scene, ex = built
    types = {n: e.pddl_type for n, e in scene.entities.items()}
    hits = truth_n = predicted_n = 0
    for room in scene.room_names:
        state = _at_room(ex, scene, ex.facts, room)
        truth = {e for e in state.visible() if types[e] not in ("room", "robot", "person")}
        symbolic = {"room": room, "entities": {"robot": "robot"}, "facts": [], "observed": [room]}
        percept = ex.percept(symbolic)
        seen = {e for e in percept["entities"] if types[e] in ITEM_TYPES}
        true_items = {e for e in truth if types[e] in ITEM_TYPES}
        hits += len(seen & true_items)
        truth_n += len(true_items)
        predicted_n += len(seen)
        # Every support fact the camera reports is true.
        for subject, relation, holder in (f for f in percept["facts"] if f[1] in ("on", "inside")):
            assert Atom(relation, (subject, holder)) in state.atoms, (subject, relation, holder)
        assert set(percept["observed"]) <= set(percept["entities"])
    assert hits == predicted_n and hits >= 0.95 * truth_n > 0  # misses: items hidden behind furniture


def test_move_walks_the_navmesh_through_a_doorway(built):
    sg, scene, ex = built
    a, b = scene.doors[0]
    ex.position = ex._stand_point(a)
    error = ex.execute(GroundAction("move", ("robot", a, b)), frozenset(), frozenset())
    assert error == ""
    path = np.array(ex.last_path)
    door = next(c for ra, rb, c in ex.stage.doorways if {ra, rb} == {scene.node_of[a][1], scene.node_of[b][1]})
    # Some path segment passes within half a door width of the doorway's centre.
    dists = [np.linalg.norm(door - (p + t * (q - p))[:2]) for p, q in itertools.pairwise(path)
             for t in np.linspace(0, 1, 21)]
    assert min(dists) < 0.5
    room_b = sg.rooms[scene.node_of[b][1]]
    end = path[-1]
    assert abs(end[0] - room_b.location[0]) < room_b.size[0] / 2 and abs(end[1] - room_b.location[1]) < room_b.size[1] / 2


def test_pick_place_open_close_move_objects_in_the_simulator():
    rng = np.random.default_rng(9)
    sg = generate_3dsg(rng, n_rooms=5)
    scene = to_household_scene(sg, rng)
    ex = HabitatExecutor()
    facts = scene.init
    ex.reset(scene, facts, rng)
    try:
        # An item inside a closed container: unseen until the container is opened.
        inside = next(a for a in sorted(facts) if a.predicate == "inside" and Atom("closed", (a.args[1],)) in facts)
        item, box = inside.args
        room = scene.entities[box].room
        state = _at_room(ex, scene, facts, room)
        ex.execute(GroundAction("open", ("robot", box, room)), frozenset(), frozenset())  # walk there first
        sid = ex.stage.semantic_of[ex.oid_of[item]]
        ex.sync(facts)
        assert sid not in ex.sightings()
        opened = facts - {Atom("closed", (box,))}
        ex.sync(opened)
        sightings = ex.sightings()
        assert sid in sightings and ex.name_of_sid[sightings[sid].support[1]] == box
        # Take it out: it leaves the container for the robot's hand (the head tilted down may see it there).
        action = GroundAction("take-out", ("robot", item, box, room))
        add, delete = {Atom("holding", ("robot", item))}, {inside, Atom("hand-empty", ("robot",))}
        assert ex.execute(action, frozenset(add), frozenset(delete)) == ""
        in_hand = ex.sightings().get(sid)
        assert in_hand is None or (in_hand.support is None and
                                   np.linalg.norm(in_hand.centre[:2] - from_habitat(ex.position)[:2]) < 0.3)
        # Place it on a surface of the room: the camera sees it there.
        surface = next(f for f in scene.fixtures_in(room) if scene.entities[f].pddl_type in ("surface", "shelf"))
        action = GroundAction("place-on", ("robot", item, surface, room))
        add, delete = {Atom("on", (item, surface)), Atom("hand-empty", ("robot",))}, {Atom("holding", ("robot", item))}
        assert ex.execute(action, frozenset(add), frozenset(delete)) == ""
        sightings = ex.sightings()
        assert sid in sightings and ex.name_of_sid[sightings[sid].support[1]] == surface
        lo, hi = sg.objects[ex.oid_of[surface]].box
        assert np.all(ex.pose[ex.oid_of[item]][:2] >= lo[:2]) and np.all(ex.pose[ex.oid_of[item]][:2] <= hi[:2])
        # A person carrying it off (held-by) takes it out of the simulated house.
        ex.sync((ex.facts - {Atom("on", (item, surface))}) | {Atom("held-by", (item, scene.people[0]))})
        assert sid not in ex.sightings()
        assert state.robot_room() == room
    finally:
        ex.close()


def test_oracle_completes_tasks_and_frames_render_in_habitat(tmp_path):
    from gymnasium.wrappers import RecordVideo

    from servicerobot.oracle import OracleAgent

    done = total = 0
    for seed in (0, 1):
        env = gym.make("ServiceRobot-Habitat-v0", simulator="habitat", n_tasks=2, render_mode="rgb_array",
                       width=160, height=120)
        if seed == 0:
            env = RecordVideo(env, str(tmp_path / "video"), episode_trigger=lambda k: True)
        agent = OracleAgent.from_env(env)
        obs, info = env.reset(seed=seed)
        assert env.observation_space.contains(obs)
        percept = json.loads(obs["percept"])
        assert percept["room"] in env.unwrapped.world.scene.room_names
        for _ in range(300):
            obs, _, term, trunc, info = env.step(agent.act(obs))
            assert info["action_error"] == ""
            if term or trunc:
                break
        frame = env.render()
        assert frame.shape == (120, 160, 3) and frame.dtype == np.uint8 and len(np.unique(frame)) > 5
        done += info["tasks_completed"]
        total += info["tasks_total"]
        env.close()
    assert done == total == 4
    assert list((tmp_path / "video").glob("*.mp4"))
