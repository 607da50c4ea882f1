"""The Unity AI2-THOR executor, driven through a REPLAY controller (no Unity build or GPU here).

`ReplayController` stands in for `ai2thor.controller.Controller`: it serves `ai2thor.server.Event` objects
built from a real recorded `event.metadata` dump and logs every action call, so these tests check the
exact THOR actions each skill sends and how THOR's answers come back. The live simulator is not run.
"""

import importlib.util
import json
from pathlib import Path

import pytest

pytestmark = pytest.mark.skipif(importlib.util.find_spec("alfworld") is None,
                                reason='iTHOR layouts need alfworld: pip install --no-deps "alfworld>=0.4.2"')

from servicerobot.adapters.ai2thor import fact_set, percept_from_metadata
from servicerobot.envs import ServiceRobotEnv
from servicerobot.envs.ai2thor import (
    make_ai2thor_world,
    unity,
)
from servicerobot.envs.ai2thor.symbolic import region_spot
from servicerobot.errors import SceneError
from servicerobot.pddl import Atom
from servicerobot.scenes.thor_types import canonical_type

FIXTURE = Path(__file__).resolve().parents[1] / ".." / "shared" / "fixtures" / "ai2thor" / \
    "instance_segmentation_metadata.json"
needs_fixture = pytest.mark.skipif(not FIXTURE.is_file(), reason="../shared/fixtures/ai2thor is absent")

POSE = {"x": 0.25, "y": 0.9009992480278015, "z": -1.0, "rotation": 90.0, "horizon": 30.0, "standing": True}
SPAWN = [{"x": -1.1, "y": 0.95, "z": -0.6}]


def _event(metadata):
    try:
        from ai2thor.server import Event
    except ImportError:  # a duck-typed Event: the executor reads only .metadata and .frame
        class Event:
            def __init__(self, metadata):
                self.metadata, self.frame = metadata, None
    return Event(metadata)


class ReplayController:
    """A replay of recorded THOR metadata: answers every step with it and records the call."""

    def __init__(self, metadata: dict, **settings):
        self.metadata, self.settings = metadata, settings
        self.calls: list[tuple[str, dict]] = []
        self.fail: dict[str, str] = {}
        self.stopped = False
        self.last_event = self._answer("Initialize")

    def _answer(self, action: str):
        meta = dict(self.metadata)
        ok = action not in self.fail
        meta.update(lastAction=action, lastActionSuccess=ok, errorMessage="" if ok else self.fail[action],
                    actionReturn={"GetInteractablePoses": [POSE],
                                  "GetSpawnCoordinatesAboveReceptacle": SPAWN}.get(action))
        return _event(meta)

    def step(self, action: str, **kwargs):
        self.calls.append((action, kwargs))
        self.last_event = self._answer(action)
        return self.last_event

    def reset(self, scene: str):
        self.last_event = self._answer("Initialize")
        return self.last_event

    def stop(self):
        self.stopped = True


@pytest.fixture
def replay_world():
    replay = {}

    def factory(**settings):
        replay["controller"] = ReplayController(json.loads(FIXTURE.read_text()), **settings)
        return replay["controller"]

    world = make_ai2thor_world("FloorPlan1", controller="unity", n_tasks=1, event_rate=0.0,
                               controller_factory=factory)
    env = ServiceRobotEnv(world, update_mode="both")
    obs, _ = env.reset(seed=0)
    return env, world, replay["controller"], obs


def _prepare(world, room: str, add=(), delete=()):
    """Put the robot in `room` and change the true state; mirror it; then forget the calls so far."""
    robot_at = {a for a in world.state.atoms if a.predicate == "in-room" and a.args[0] == "robot"}
    world.state.apply(frozenset({Atom("in-room", ("robot", room)), *add}), frozenset(robot_at | set(delete)))
    world._sync()
    world.executor.calls.clear()


def _teleport(pose):
    x, z, rot, horizon = pose
    return ("Teleport", {"position": {"x": x, "y": 0.9009992480278015, "z": z},
                         "rotation": {"x": 0.0, "y": rot, "z": 0.0}, "horizon": horizon, "standing": True})


def _of(world, thor_type):
    return next(n for n, o in world.scene.thor.items() if o.object_type == thor_type)


@needs_fixture
def test_reset_spawns_matches_and_places_objects_in_the_replay(replay_world):
    _env, world, replay, obs = replay_world
    ex = world.executor
    assert replay.settings["scene"] == "FloorPlan1" and replay.settings["width"] == 300
    first, kwargs = replay.calls[0]
    assert first == "InitialRandomSpawn"
    apples = sum(o.object_type == "Apple" for o in world.scene.thor.values())
    assert {"objectType": "Apple", "count": apples} in kwargs["numDuplicatesOfType"]
    recorded = {o["objectId"]: o["objectType"] for o in replay.metadata["objects"]}
    fridge = _of(world, "Fridge")
    assert ex.ids[fridge] == "Fridge|+00.97|+00.00|+01.25"  # matched by type to the live object
    for name, object_id in ex.ids.items():
        assert canonical_type(recorded[object_id]) == world.scene.thor[name].object_type
    # Every placed item that THOR has goes onto a spawn point of its receptacle.
    placed = [kw["objectId"] for a, kw in replay.calls if a == "PlaceObjectAtPoint"]
    assert placed and all(kw["position"] == SPAWN[0] for a, kw in replay.calls if a == "PlaceObjectAtPoint")
    assert len(placed) == len(set(placed))
    assert ("CloseObject", {"objectId": ex.ids[fridge], "forceAction": True}) in replay.calls
    light = _of(world, "LightSwitch")
    lit = Atom("light-on", (light,)) in world.scene.init
    # THOR starts with the light on: an episode that starts in the dark switches it off.
    assert (("ToggleObjectOff", {"objectId": ex.ids[light], "forceAction": True}) in replay.calls) == (not lit)
    # The agent starts at its room's spot; the first task's setup events (people) are mirrored after.
    start = [a for a, _ in replay.calls].index("Teleport")
    assert {a for a, _ in replay.calls[start + 1:]} <= {"BreakObject", "DirtyObject", "CleanObject",
                                                          "GetSpawnCoordinatesAboveReceptacle", "PlaceObjectAtPoint",
                                                          "ToggleObjectOn", "ToggleObjectOff", "EnableObject"}
    assert '"robot"' in obs["percept"]
    # THOR's answers are read through the shared adapter under the episode's entity names.
    facts = fact_set(percept_from_metadata(replay.last_event.metadata, ex.naming, lambda o: True)["facts"])
    lettuce = next(n for n, oid in ex.ids.items() if oid == "Lettuce|+00.88|+01.63|+01.21")
    assert {(fridge, "chills", True), (lettuce, "cold", True), (lettuce, "inside", fridge)} <= facts


@needs_fixture
def test_each_skill_sends_the_exact_thor_actions(replay_world):
    _env, world, _replay, _ = replay_world
    ex, scene = world.executor, world.scene
    fridge, sink, light, can = (_of(world, t) for t in ("Fridge", "SinkBasin", "LightSwitch", "GarbageCan"))
    room = scene.entities[fridge].room

    _prepare(world, room, add={Atom("closed", (fridge,))})
    assert world.execute(f"(open robot {fridge} {room})")[1] == ""
    assert ex.calls == [_teleport(scene.thor[fridge].pose), ("OpenObject", {"objectId": ex.ids[fridge]})]

    tomato = _of(world, "Tomato")
    counter = _of(world, "CounterTop")
    loc = world.state.location(tomato)
    _prepare(world, scene.entities[counter].room, add={Atom("on", (tomato, counter))}, delete={loc})
    croom = scene.entities[counter].room
    assert world.execute(f"(pick-up robot {tomato} {counter} {croom})")[1] == ""
    assert ex.calls == [_teleport(scene.thor[counter].pose), ("PickupObject", {"objectId": ex.ids[tomato]})]
    assert Atom("holding", ("robot", tomato)) in world.state.atoms

    _prepare(world, room)
    assert world.execute(f"(put-in robot {tomato} {fridge} {room})")[1] == ""
    assert ex.calls == [_teleport(scene.thor[fridge].pose), ("PutObject", {"objectId": ex.ids[fridge]})]

    sroom = scene.entities[sink].room
    _prepare(world, sroom, delete={Atom("faucet-on", (sink,))})
    assert world.execute(f"(turn-on-faucet robot {sink} {sroom})")[1] == ""
    assert ex.calls == [_teleport(scene.thor[sink].pose),
                        ("ToggleObjectOn", {"objectId": "Faucet|-00.95|+00.95|-00.65"})]

    mug = _of(world, "Mug")
    _prepare(world, sroom, add={Atom("inside", (mug, sink)), Atom("dirty", (mug,))},
             delete={world.state.location(mug)})
    assert world.execute(f"(wash robot {mug} {sink} {sroom})")[1] == ""
    assert ex.calls == [_teleport(scene.thor[sink].pose), ("CleanObject", {"objectId": ex.ids[mug]})]

    # The light switch has no ALFWorld pose: THOR is asked where to stand.
    lroom = scene.entities[light].room
    _prepare(world, lroom, add={Atom("light-on", (light,))})
    assert world.execute(f"(switch-off-light robot {light} {lroom})")[1] == ""
    assert ex.calls == [
        ("GetInteractablePoses", {"objectId": "LightSwitch|-02.37|+01.22|+03.05", "standings": [True]}),
        _teleport((POSE["x"], POSE["z"], POSE["rotation"], POSE["horizon"])),
        ("ToggleObjectOff", {"objectId": "LightSwitch|-02.37|+01.22|+03.05"})]

    egg = _of(world, "Egg")
    croom = scene.entities[can].room
    _prepare(world, croom, add={Atom("holding", ("robot", egg)), Atom("broken", (egg,))},
             delete={world.state.location(egg), Atom("hand-empty", ("robot",))})
    assert world.execute(f"(throw-away robot {egg} {can} {croom})")[1] == ""
    assert ex.calls[-1] == ("PutObject", {"objectId": ex.ids[can], "forceAction": True})

    other = next(r for r in scene.room_names if r != croom)
    ex.calls.clear()
    assert world.execute(f"(move robot {croom} {other})")[1] == ""
    assert ex.calls == [_teleport((*region_spot(scene, other), 0.0, 0.0))]


@needs_fixture
def test_thor_failures_become_action_errors_and_change_nothing(replay_world):
    env, world, replay, _ = replay_world
    scene = world.scene
    tomato, counter = _of(world, "Tomato"), _of(world, "CounterTop")
    room = scene.entities[counter].room
    _prepare(world, room, add={Atom("on", (tomato, counter))}, delete={world.state.location(tomato)})
    replay.fail["PickupObject"] = "Tomato|+00.1 is not interactable"
    before = world.state.atoms
    _obs, reward, *_ , info = env.step(f"(pick-up robot {tomato} {counter} {room})")
    assert "not interactable" in info["action_error"] and "ai2thor-unity" in info["action_error"]
    assert world.state.atoms == before and reward < 0


@needs_fixture
def test_peoples_changes_are_mirrored_into_thor(replay_world):
    env, world, replay, _ = replay_world
    ex = world.executor
    plate, light = _of(world, "Plate"), _of(world, "LightSwitch")
    on = Atom("light-on", (light,)) in world.state.atoms
    ex.calls.clear()
    world.state.apply(frozenset({Atom("broken", (plate,))}), frozenset({Atom("light-on", (light,))}))
    world._sync()
    assert ("BreakObject", {"objectId": ex.ids[plate], "forceAction": True}) in ex.calls
    if on:
        assert ("ToggleObjectOff", {"objectId": ex.ids[light], "forceAction": True}) in ex.calls
    env.close()
    assert replay.stopped


def test_missing_package_gpu_or_build_say_how_to_fix(monkeypatch, tmp_path):
    import sys

    monkeypatch.setitem(sys.modules, "ai2thor.controller", None)
    with pytest.raises(SceneError, match=r"servicerobot\[ai2thor\]"):
        unity.make_controller("FloorPlan1", 300, 300)
    monkeypatch.delitem(sys.modules, "ai2thor.controller")
    pytest.importorskip("ai2thor.controller")
    monkeypatch.setattr(unity, "_has_nvidia_gpu", lambda: False)
    with pytest.raises(SceneError, match="needs an NVIDIA GPU"):
        unity.make_controller("FloorPlan1", 300, 300, platform="CloudRendering")
    with pytest.raises(SceneError, match="unknown THOR platform 'Windows95'"):
        unity.make_controller("FloorPlan1", 300, 300, platform="Windows95")
    monkeypatch.setattr(unity, "_has_nvidia_gpu", lambda: True)
    with pytest.raises(SceneError, match="pre-stage the THOR"):
        unity.make_controller("FloorPlan1", 300, 300, platform="CloudRendering",
                              local_executable_path=str(tmp_path / "missing" / "thor-Linux64"))
