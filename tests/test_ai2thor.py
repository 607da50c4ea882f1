"""The AI2-THOR world on CPU: iTHOR FloorPlans as scenes, the symbolic THOR executor, the metadata adapter."""

import copy
import importlib.util
import json
from pathlib import Path

import gymnasium as gym
import numpy as np
import pytest

import servicerobot  # noqa: F401
from servicerobot.errors import SceneError

pytestmark = pytest.mark.skipif(importlib.util.find_spec("alfworld") is None,
                                reason='iTHOR layouts need alfworld: pip install --no-deps "alfworld>=0.4.2"')

from servicerobot.adapters.ai2thor import ThorNaming, fact_set, percept_from_metadata
from servicerobot.oracle import OracleAgent
from servicerobot.pddl import Atom
from servicerobot.scenes.household import household_domain
from servicerobot.scenes.ithor import (
    FLOORPLANS,
    IthorScenes,
    hosts,
    load_floorplan,
    thor_tables,
)
from servicerobot.scenes.thor_types import EXCLUDED, FIXTURES, ITEMS, THOR_ALIASES

FIXTURE_DIR = Path(__file__).resolve().parents[1] / ".." / "shared" / "fixtures" / "ai2thor"
needs_fixtures = pytest.mark.skipif(not FIXTURE_DIR.is_dir(), reason="../shared/fixtures/ai2thor is absent")


def _recorded() -> dict:
    return json.loads((FIXTURE_DIR / "instance_segmentation_metadata.json").read_text())


# ------------------------------------------------------------------------------------------- scenes
def test_the_type_table_covers_every_thor_type_once():
    tables = set(FIXTURES), set(ITEMS), set(EXCLUDED)
    assert not (tables[0] & tables[1]) and not (tables[0] & tables[2]) and not (tables[1] & tables[2])
    known = set().union(*tables) | set(THOR_ALIASES)
    assert set(thor_tables()["OBJECTS"]) <= known
    root = Path(next(iter(importlib.util.find_spec("alfworld").submodule_search_locations)))
    for name in FLOORPLANS:
        present = set(json.loads((root / "gen" / "layouts" / f"{name}-objects.json").read_text()))
        assert present <= known, (name, present - known)
    for reason in EXCLUDED.values():
        assert len(reason) > 15


def test_all_120_floorplans_load_as_well_formed_household_scenes():
    domain = household_domain()
    source = IthorScenes("all")
    assert len(source.scenes) == 120
    for name in FLOORPLANS:
        scene = load_floorplan(name, np.random.default_rng(7))
        assert len(scene.entities) <= source.max_entities and len(scene.rooms) <= source.n_rooms
        for atom in scene.init:  # every fact is well typed in the household domain
            params = domain.predicates[atom.predicate].params
            assert len(params) == len(atom.args), atom
            for arg, (_, ptype) in zip(atom.args, params):
                assert domain.types.is_subtype(scene.objects[arg], ptype), (name, atom)
        items = [n for n, e in scene.entities.items() if e.pos is None and e.pddl_type not in
                 ("room", "person", "robot")]
        assert items, name
        counts = {}
        for item in items:
            where = [a for a in scene.init if a.args[0] == item and a.predicate in ("on", "inside")]
            assert len(where) == 1, (name, item)
            assert scene.accepts(where[0].args[1], item), (name, where)  # THOR's receptacle table
            counts[scene.thor[item].object_type] = counts.get(scene.thor[item].object_type, 0) + 1
        assert set(counts.values()) <= {1, 2, 3}
        assert len({o.object_id for o in scene.thor.values()}) == len(scene.thor)
        for name_, e in scene.entities.items():
            if e.pos is not None:
                assert Atom("in-room", (name_, e.room)) in scene.init and scene.thor[name_].pose is not None


def test_floorplans_are_seeded_and_receptacles_keep_their_thor_ids():
    a, b = (load_floorplan("FloorPlan1", np.random.default_rng(3)) for _ in range(2))
    assert a.init == b.init and a.objects == b.objects
    assert load_floorplan("FloorPlan1", np.random.default_rng(4)).init != a.init
    real = {o.object_id for o in a.thor.values() if not o.synthesized}
    assert "Fridge|-02.10|+00.00|+01.07" in real or any(i.startswith("Fridge|") for i in real)
    fridge = next(n for n, o in a.thor.items() if o.object_type == "Fridge")
    assert a.thor[fridge].pose is not None and Atom("chills", (fridge,)) in a.init
    # Fixture nouns are unique, so "the third cabinet" names one cabinet.
    nouns = [e.noun for e in a.entities.values() if e.pos is not None]
    assert len(nouns) == len(set(nouns))


def test_task_kinds_draw_floorplans_that_host_them():
    beds = IthorScenes("all", ("make_bed",))
    assert len(beds.scenes) == 30 and all(300 < int(s[9:]) < 331 for s in beds.scenes)
    assert not hosts("FloorPlan301", "keep_cold") and hosts("FloorPlan1", "keep_cold")
    with pytest.raises(SceneError, match="no people to hand"):
        IthorScenes("FloorPlan1", ("hand_over",))
    with pytest.raises(SceneError, match="hosts task kinds"):
        IthorScenes("bathrooms", ("keep_cold",))
    with pytest.raises(SceneError, match="unknown iTHOR scene 'FloorPlan99'"):
        gym.make("ServiceRobot-AI2THOR-v0", scene="FloorPlan99")
    with pytest.raises(SceneError, match="are for controller='unity'"):
        gym.make("ServiceRobot-AI2THOR-v0", gpu_device=0)
    with pytest.raises(SceneError, match="controller must be one of"):
        gym.make("ServiceRobot-AI2THOR-v0", controller="mujoco")


def test_a_missing_alfworld_names_the_extra(monkeypatch):
    from servicerobot.errors import DependencyNotInstalled
    from servicerobot.scenes import ithor

    real = importlib.util.find_spec
    monkeypatch.setattr(ithor.importlib.util, "find_spec", lambda n, *a: None if n == "alfworld" else real(n, *a))
    ithor._layout.cache_clear()
    try:
        # the cheap install first (the extra's alfworld dependency builds Fast Downward from source)
        with pytest.raises(SceneError, match=r'not installed; install its data .*pip install --no-deps "alfworld') as info:
            load_floorplan("FloorPlan2")
        assert isinstance(info.value, DependencyNotInstalled)  # optional-part skips catch it
    finally:
        ithor._layout.cache_clear()


# ------------------------------------------------------------------------------------------- adapter
@needs_fixtures
def test_every_object_of_the_recorded_dump_maps_to_facts():
    meta = _recorded()
    naming = ThorNaming.from_metadata(meta)
    percept = percept_from_metadata(meta, naming, in_view=lambda o: True)
    assert percept["unmapped"] == []  # every type is a fixture, an item or deliberately excluded
    facts = fact_set(percept["facts"])
    by_id = {o["objectId"]: o for o in meta["objects"]}
    for obj in meta["objects"]:
        name = naming.entity.get(obj["objectId"])
        if obj["objectType"] in EXCLUDED and obj["objectType"] != "Faucet":
            assert name is None
            continue
        if obj["objectType"] == "Faucet":
            assert obj["objectId"] in naming.faucet_sink
            continue
        assert percept["entities"][name] == naming.kinds[name]
        if obj["pickupable"]:
            fixture_parents = [naming.entity[p] for p in obj["parentReceptacles"] or []
                               if p in naming.entity and by_id[p]["objectType"] in FIXTURES]
            assert fixture_parents, obj["objectId"]
            rel = "on" if naming.kinds[fixture_parents[0]] in ("surface", "shelf", "bed") else "inside"
            assert (name, rel, fixture_parents[0]) in facts
    lettuce = naming.entity["Lettuce|+00.88|+01.63|+01.21"]
    fridge = naming.entity["Fridge|+00.97|+00.00|+01.25"]
    assert {(lettuce, "cold", True), (lettuce, "inside", fridge), (fridge, "closed", True),
            (fridge, "chills", True)} <= facts
    light = naming.entity["LightSwitch|-02.37|+01.22|+03.05"]
    assert (light, "light-on", True) in facts
    mug = naming.entity["Mug|-00.67|+00.77|-00.84"]
    assert (mug, "inside", naming.entity["Sink|-00.70|+00.93|-00.65|SinkBasin"]) in facts


@needs_fixtures
def test_the_adapter_reads_schema_drift_tolerantly():
    meta = _recorded()
    naming = ThorNaming.from_metadata(meta)
    base = fact_set(percept_from_metadata(meta, naming, lambda o: True)["facts"])
    drifted = copy.deepcopy(meta)
    for obj in drifted["objects"]:
        obj["ObjectTemperature"] = obj.pop("temperature")  # the schema's older name
        if obj["objectType"] == "Bottle":
            obj["objectType"] = "Glassbottle"  # ALFWorld's name of the same type
        if obj["parentReceptacles"] is None:
            obj["parentReceptacles"] = []
    assert fact_set(percept_from_metadata(drifted, naming, lambda o: True)["facts"]) == base
    for obj in drifted["objects"]:
        obj.pop("isOpen")
    facts = fact_set(percept_from_metadata(drifted, naming, lambda o: True)["facts"])
    assert not any(p == "closed" for _, p, _ in facts)  # a missing field says nothing, not "open"
    assert percept_from_metadata({"objects": None}, naming)["facts"] == []
    only_visible = percept_from_metadata(meta, naming)
    assert set(only_visible["entities"]) < set(naming.kinds)


@needs_fixtures
def test_symbolic_metadata_validates_against_thors_schema():
    jsonschema = pytest.importorskip("jsonschema")
    schema = json.loads((FIXTURE_DIR / "metadata-schema.json").read_text())
    env = gym.make("ServiceRobot-AI2THOR-v0", scene="FloorPlan1", n_tasks=2, event_rate=0.3)
    agent = OracleAgent.from_env(env)
    obs, _ = env.reset(seed=2)
    executor = env.unwrapped.world.executor
    for _ in range(6):
        jsonschema.validate(executor.metadata(), schema)
        obs, *_ = env.step(agent.act(obs))
    meta = executor.metadata()
    jsonschema.validate(meta, schema)
    assert {o["objectType"] for o in meta["objects"]} >= {"Fridge", "Faucet", "SinkBasin", "CounterTop"}


# ------------------------------------------------------------------------------------------- executor
@pytest.mark.parametrize("scene", ["FloorPlan2", "FloorPlan302"])
def test_the_oracle_completes_tasks_and_the_adapter_sees_what_the_core_sees(scene):
    env = gym.make("ServiceRobot-AI2THOR-v0", scene=scene, n_tasks=4, event_rate=0.3)
    agent = OracleAgent.from_env(env)
    world = env.unwrapped.world
    checked = 0
    for seed in range(2):
        obs, info = env.reset(seed=seed)
        while True:
            obs, _, term, trunc, info = env.step(agent.act(obs))
            assert info["action_error"] == ""
            thor = world.percept()  # through THOR metadata and the adapter
            executor, world.executor, world._percept_cache = world.executor, None, None
            core = world.percept()  # straight from the true facts
            world.executor, world._percept_cache = executor, None
            assert fact_set(thor["facts"]) == fact_set(core["facts"])
            assert thor["entities"] == core["entities"] and set(thor["observed"]) == set(core["observed"])
            checked += 1
            if term or trunc:
                break
        assert info["tasks_completed"] == info["tasks_total"] == 4
    assert checked > 10


def test_thors_receptacle_rules_refuse_what_the_domain_allows():
    env = gym.make("ServiceRobot-AI2THOR-v0", scene="FloorPlan1", n_tasks=1, event_rate=0.0)
    env.reset(seed=0)
    world = env.unwrapped.world
    scene = world.scene
    egg = next(n for n, o in scene.thor.items() if o.object_type == "Egg")
    shelf = next(n for n, o in scene.thor.items() if o.object_type == "Shelf")
    room = scene.entities[shelf].room
    loc = world.state.location(egg)
    world.state.apply({Atom("holding", ("robot", egg))}, {loc, Atom("hand-empty", ("robot",))})
    robot_at = {a for a in world.state.atoms if a.predicate == "in-room" and a.args[0] == "robot"}
    world.state.apply({Atom("in-room", ("robot", room))}, robot_at)
    before = world.state.atoms
    _, error = world.execute(f"(place-on robot {egg} {shelf} {room})")
    assert "Egg cannot be placed in or on Shelf" in error and world.state.atoms == before
    assert world.executor.metadata()["lastActionSuccess"] is False


def test_check_env_rendering_and_video(tmp_path):
    from gymnasium.utils.env_checker import check_env
    from gymnasium.wrappers import RecordVideo

    env = gym.make("ServiceRobot-AI2THOR-v0", scene="FloorPlan201", render_mode="rgb_array", width=200,
                   height=200)
    check_env(env.unwrapped, skip_render_check=False)
    env = RecordVideo(gym.make("ServiceRobot-AI2THOR-v0", scene="FloorPlan1", render_mode="rgb_array",
                               width=240, height=240, n_tasks=1), str(tmp_path), episode_trigger=lambda e: True)
    agent = OracleAgent.from_env(env)
    obs, _ = env.reset(seed=0)
    first = env.render()
    assert first.shape == (240, 240, 3) and first.std() > 10
    for _ in range(5):
        obs, _, term, trunc, _ = env.step(agent.act(obs))
        if term or trunc:
            break
    assert not np.array_equal(first, env.render())  # the agent moved or something changed
    env.close()
    assert list(tmp_path.glob("*.mp4"))
