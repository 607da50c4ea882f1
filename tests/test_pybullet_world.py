"""The PyBullet world: layout and scene graph, adapter facts from geometry, collision checks and repairs,
skills, the Gymnasium contract, an oracle episode and video."""

from __future__ import annotations

import json
import math
import sys

import numpy as np
import pytest

pytest.importorskip("pybullet")

import gymnasium as gym
from gymnasium.utils.env_checker import check_env

import servicerobot  # noqa: F401
from servicerobot.envs.core import ServiceRobotEnv
from servicerobot.envs.pybullet.layout import INFLATION, PRESETS, generate_layout
from servicerobot.envs.pybullet.world import PyBulletOptions, PyBulletWorld
from servicerobot.errors import DependencyNotInstalled
from servicerobot.oracle import OracleAgent
from servicerobot.pddl import Atom
from servicerobot.planners import FastDownward


def new_world(seed: int = 0, size: str = "small", **opts) -> PyBulletWorld:
    world = PyBulletWorld(size, PyBulletOptions(**opts))
    world.reset(np.random.default_rng(seed))
    return world


@pytest.fixture
def world():
    w = new_world(0)
    yield w
    w.close()


def snapshot(world: PyBulletWorld):
    poses = {n: tuple(round(v, 6) for v in world.sim.position(n)) for n in world.sim.body}
    return world.state.atoms, world.sim.robot_pose(), poses


def furniture_of(world: PyBulletWorld, item: str) -> str:
    return next(a.args[1] for a in world.state.atoms if a.predicate == "item-on" and a.args[0] == item)


# ---------------------------------------------------------------------------------------------- build
def test_world_is_reproducible_under_a_seed():
    a, b, c = new_world(7), new_world(7), new_world(8)
    assert a.layout.to_json() == b.layout.to_json()
    assert a.state.atoms == b.state.atoms and a.prior() == b.prior()
    assert snapshot(a)[2] == snapshot(b)[2]
    assert a.layout.to_json() != c.layout.to_json()
    for w in (a, b, c):
        w.close()


def test_layout_and_scene_graph_are_consistent(world):
    layout, m = world.layout, world.tamp_map
    assert 2 <= len(layout.rooms) <= 4 and all(d.width >= 1.0 for d in layout.doors)
    assert set(m.regions) == {r.name for r in layout.rooms}
    assert all(p.region in m.regions for p in m.places.values())
    assert m.place_at(m.places[m.start].centre) == m.start
    # every door has a place in its gap, joining the two rooms
    for door in layout.doors:
        assert m.place_at(door.centre) is not None
    # PyBullet agrees with the layout geometry: places are free, and lattice edges away from boxes too
    boxes = [i.position for i in layout.items if not i.support]
    for name, place in m.places.items():
        if all(math.dist(place.centre, b) > 0.6 for b in boxes):
            assert world.checker.point_free(place.centre), name
    clear = [(a, b) for a, b in m.edges
             if all(math.dist(m.places[x].centre, bx) > 0.9 for x in (a, b) for bx in boxes)]
    for a, b in clear[::7]:
        assert world.checker.blocking(m.places[a].centre, m.places[b].centre) == [], (a, b)
    # objects hang under their nearest place; suspicious ones guard the places around them
    for obj in m.objects.values():
        assert obj.place in m.places
    for item, guarded in m.metadata["guards"].items():
        assert guarded and all(math.dist(m.places[p].centre, m.objects[item].position) <
                               m.objects[item].radius + INFLATION for p in guarded)


def test_layout_presets_generate():
    for name, cfg in PRESETS.items():
        layout = generate_layout(cfg, np.random.default_rng(3))
        assert len(layout.rooms) == cfg.n_rooms, name
        assert len(layout.tamp_map.places) <= cfg.max_places
        assert sum(i.suspicious for i in layout.items) == cfg.n_suspicious


def test_missing_pybullet_names_the_extra(monkeypatch):
    from servicerobot.envs.pybullet._pb import import_pybullet

    monkeypatch.setitem(sys.modules, "pybullet", None)
    with pytest.raises(DependencyNotInstalled, match=r"servicerobot\[pybullet\]"):
        import_pybullet()


# ---------------------------------------------------------------------------------------------- adapter
def test_percept_facts_follow_the_geometry(world):
    adapter = world.adapter
    item = next(i.name for i in world.layout.items if i.kind == "mug")
    source = furniture_of(world, item)
    target = next(f.name for f in world.layout.furniture if f.name != source)
    assert Atom("item-on", (item, source)) in adapter.facts()

    world.sim.set_item(item, *world.free_spot(item, target), support=target)
    facts = adapter.facts()
    assert Atom("item-on", (item, target)) in facts and Atom("item-on", (item, source)) not in facts
    world.refresh()
    assert Atom("item-on", (item, target)) in world.state.atoms

    # on the floor of a room: the item's location becomes that room
    room = world.layout.rooms[0]
    spot = ((room.rect[0] + room.rect[2]) / 2 + 0.13, (room.rect[1] + room.rect[3]) / 2 + 0.13)
    world.sim.set_item(item, *spot)
    world.refresh()
    assert Atom("in-room", (item, room.name)) in world.state.atoms
    assert not any(a.predicate == "item-on" and a.args[0] == item for a in world.state.atoms)

    # percept: the robot sees its room in full; moving the robot next to the item makes it visible
    here = world.tamp_map.nearest_place(spot)
    world.sim.set_robot(*world.tamp_map.places[here].centre, 0.0)
    world.refresh()
    percept = world.percept()
    assert percept["room"] == world.tamp_map.places[here].region == room.name
    assert percept["entities"][item] == "mug"
    assert [item, "in-room", room.name] in percept["facts"]
    assert ["robot", "at-place", here] in percept["facts"]
    assert set(percept) == {"room", "entities", "facts", "observed"}
    assert room.name in percept["observed"] and "robot" in percept["observed"]
    json.dumps(percept)
    mask = world.visible_mask()
    assert mask.shape == (world.max_entities,) and mask[world.entity_index[item]] == 1


# ---------------------------------------------------------------------------------------------- motion
def test_blocked_segment_names_the_object_and_is_repaired(world):
    box = next(i for i in world.layout.items if i.kind == "box")
    bx, by = box.position
    a, b = (bx - 1.0, by), (bx + 1.0, by)
    assert world.checker.blocking(a, b) == [box.name]
    assert not world.checker.point_free(box.position)
    assert world.checker.point_free(a) and world.checker.point_free(b)

    m = world.tamp_map
    pa, pb = m.place_at(a), m.place_at(b)
    result = world.motion.plan(m.places[pa].centre, pb, set(), [], seed=1)
    assert not result.error and result.repaired >= 1
    assert result.path[0] == m.places[pa].centre and result.path[-1] == m.places[pb].centre
    for p, q in zip(result.path, result.path[1:]):
        assert world.checker.blocking(p, q) == []


def test_without_ompl_the_places_graph_routes_around_the_obstacle(world):
    box = next(i for i in world.layout.items if i.kind == "box")
    m = world.tamp_map
    pa, pb = m.place_at((box.position[0] - 1.0, box.position[1])), m.place_at((box.position[0] + 1.0, box.position[1]))
    world.motion._ompl = None  # as if OMPL were not installed
    result = world.motion.plan(m.places[pa].centre, pb, set(), [])
    assert not result.error and result.repaired == 0
    for p, q in zip(result.path, result.path[1:]):
        assert world.checker.blocking(p, q) == []


def test_suspicious_items_are_kept_clear_of_until_inspected(world):
    box = next(i for i in world.layout.items if i.suspicious)
    guarded = world.tamp_map.metadata["guards"][box.name]
    here = world.adapter.robot_place()
    before = snapshot(world)
    _, error = world.execute(f"(move robot {here} {guarded[0]})")
    assert "not applicable" in error and before == snapshot(world)

    assert world.execute(f"(goto robot {box.name})")[1] == ""
    assert math.dist(world.sim.robot_pose()[:2], box.position) >= box.radius + INFLATION - 1e-6
    assert world.execute(f"(inspect robot {box.name})")[1] == ""
    assert Atom("safe", (box.name,)) in world.state.atoms
    free = [p for p in guarded if world.checker.point_free(world.tamp_map.places[p].centre)]
    if free:
        _, error = world.execute(f"(move robot {world.adapter.robot_place()} {free[0]})")
        assert error == ""


# ---------------------------------------------------------------------------------------------- skills
def test_pick_then_place_moves_the_item_onto_the_furniture(world):
    item = next(i.name for i in world.layout.items if i.kind == "mug")
    source = furniture_of(world, item)
    target = next(f for f in world.layout.furniture if f.name != source)
    assert world.execute(f"(goto robot {source})")[1] == ""
    assert world.execute(f"(pick robot {item} {source})")[1] == ""
    assert Atom("holding", ("robot", item)) in world.state.atoms
    assert Atom("hand-empty", ("robot",)) not in world.state.atoms
    rx, ry, _ = world.sim.robot_pose()
    ix, iy, iz = world.sim.position(item)
    assert math.hypot(ix - rx, iy - ry) < 0.05 and iz > 1.0  # carried on top of the robot

    assert world.execute(f"(goto robot {target.name})")[1] == ""
    ix, iy, _ = world.sim.position(item)
    assert math.hypot(ix - world.sim.robot_pose()[0], iy - world.sim.robot_pose()[1]) < 0.05  # it came along
    assert world.execute(f"(place robot {item} {target.name})")[1] == ""
    atoms = world.state.atoms
    assert Atom("item-on", (item, target.name)) in atoms and Atom("hand-empty", ("robot",)) in atoms
    assert not any(a.predicate == "holding" for a in atoms)
    (lo, hi) = world.sim.aabb(item)
    x0, y0, x1, y1 = target.rect
    assert x0 <= (lo[0] + hi[0]) / 2 <= x1 and y0 <= (lo[1] + hi[1]) / 2 <= y1
    assert abs(lo[2] - target.height) < 0.03  # resting on the top after the physics settled


def test_inapplicable_actions_return_errors_and_change_nothing(world):
    item = next(i.name for i in world.layout.items if i.kind == "mug")
    source = furniture_of(world, item)
    other = next(f.name for f in world.layout.furniture if f.name != source)
    here = world.adapter.robot_place()
    occupied = world.tamp_map.objects[next(i.name for i in world.layout.items if i.kind == "box")].place
    before = snapshot(world)
    for action in ["", "(fly robot)", "(pick robot)", "(pick robot unicorn_1 kitchen_table)",
                   f"(pick robot {item} {other})", f"(place robot {item} {source})", f"(move robot p1000 {here})",
                   f"(inspect robot {item})", f"(pick robot {item} {source})", f"(move robot {here} {occupied})",
                   "(goto robot robot)", 42]:
        _executed, error = world.execute(action)
        assert error, action
        assert snapshot(world) == before, action


def test_people_move_items_and_say_so():
    world = new_world(2, event_rate=1.0)
    task = world.next_task(0)
    before = world.state.atoms
    events = world.tick(task, 1)
    assert len(events) == 1
    event = events[0]
    assert event.add and event.add == world.state.atoms - before and event.delete == before - world.state.atoms
    assert not set(event.entities) & task.entities
    (said,) = world.utterances(events, [True])
    assert said.kind == "update" and "moved" in said.text and said.speaker == event.actor
    assert world.utterances(events, [False]) == []
    world.close()


# ---------------------------------------------------------------------------------------------- episodes
def test_oracle_episode_completes_inspection_and_pick_place():
    world = PyBulletWorld("small", PyBulletOptions(n_tasks=2, task_kinds=("inspect", "pick_place"),
                                                   task_order="cycle"))
    env = ServiceRobotEnv(world, update_mode="both")
    agent = OracleAgent(env, FastDownward(search="astar(blind())", timeout=60.0))
    obs, info = env.reset(seed=0)
    kinds = [info["oracle"]["task_kind"]]
    interp = world.interpreter
    for _ in range(40):
        action = agent.act(obs)
        before = world.state.atoms
        obs, _reward, terminated, truncated, info = env.step(action)
        assert info["action_error"] == "", action
        # the geometry agrees with the PDDL semantics of the action
        predicted = interp.apply(interp.parse_action(action), before)
        assert predicted == world.state.atoms, action
        if info["task_completed"] and info["oracle"]["task_kind"]:
            kinds.append(info["oracle"]["task_kind"])
        if terminated or truncated:
            break
    assert terminated and info["success"] and info["tasks_completed"] == 2
    assert kinds == ["inspect", "pick_place"]
    world.close()


def test_gymnasium_contract_and_check_env():
    env = gym.make("ServiceRobot-PyBullet-v0", size="small", render_mode="rgb_array")
    obs, info = env.reset(seed=0)
    assert env.observation_space.contains(obs)
    prior = json.loads(obs["prior"])
    assert next(iter(prior["entities"])) == "robot"
    obs, reward, _, _, info = env.step("(teleport robot moon)")
    assert info["action_error"] and reward < 0 and json.loads(obs["percept"])["room"]
    frame = env.render()
    assert frame.shape == (240, 320, 3) and frame.dtype == np.uint8 and frame.std() > 10
    env.close()
    checked = gym.make("ServiceRobot-PyBullet-v0", size="small", n_tasks=1, render_mode="rgb_array", width=160,
                       height=120)
    check_env(checked.unwrapped, skip_render_check=False)
    checked.close()


def test_record_video_writes_mp4(tmp_path):
    import imageio.v3 as iio

    env = gym.wrappers.RecordVideo(gym.make("ServiceRobot-PyBullet-v0", size="small", render_mode="rgb_array"),
                                   str(tmp_path / "videos"), episode_trigger=lambda e: True, disable_logger=True)
    env.reset(seed=0)
    world = env.unwrapped.world
    target = world.layout.furniture[-1].name
    for action in [f"(goto robot {target})"] + ["(wait)"] * 10:
        env.step(action)
    env.close()
    videos = list((tmp_path / "videos").glob("*.mp4"))
    assert videos
    frames = list(iio.imiter(videos[0]))
    assert len(frames) >= 10 and frames[0].shape == (240, 320, 3)


def test_hierarchical_planner_plans_on_the_worlds_scene_graph_with_pybullet_collision_checks():
    """The TAMP planner (sparse encoding, A* over places, motions checked by PyBullet through the world's
    checker) solves inspection goals on the map the PyBullet layout produces; every plan is verified."""
    from servicerobot.planners.tamp import TampPlanner, parse_goal

    w = new_world(0, size="default")
    try:
        m = w.tamp_map
        box = m.suspicious()[0]
        far = max(m.places, key=lambda p: m.distance(m.places[p].centre, m.places[m.start].centre))
        plan = TampPlanner(m, checker=w.checker, timeout=30).plan(parse_goal(f"(and (safe {box}) (visited {far}))"))
        assert plan.status == "solved" and plan.verified
        assert [a.args[0] for a in plan.actions if a.name == "inspect"] == [box]
        assert any(far in step.places for step in plan.steps)
    finally:
        w.close()
