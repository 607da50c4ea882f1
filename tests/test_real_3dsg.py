"""Real scene graphs as they come (issue 24): Context Matters' published layout with every trait of their data,
written by `tests/cm_fixtures.py` from code; the loader, open-vocabulary typing, floors, observation sizes,
shifting on real attributes, empty goals, shift replacements and a repeating executor failure."""

from __future__ import annotations

import json
import warnings
from pathlib import Path

import numpy as np
import pytest

from servicerobot.envs.context_matters import read_split, split_names
from servicerobot.errors import SceneError
from servicerobot.pddl import Atom
from servicerobot.scenes.gibson import (
    Object3D,
    Room3D,
    SceneGraph3D,
    adjacent_rooms,
    load_3dsg,
    save_npz,
    to_household_scene,
)
from servicerobot.scenes.open_vocab import WordCharSimilarity, type_class
from servicerobot.scenes.real_3dsg import load_scene, prior_chars, stair_links, task_object_coverage
from tests.cm_fixtures import BUILDINGS, SPLITS, write_dataset


@pytest.fixture(scope="module")
def dataset(tmp_path_factory):
    root = tmp_path_factory.mktemp("cm")
    written = write_dataset(root)
    instances = {split: read_split(root, split) for split in split_names(root)}
    return root, written, instances


def _npz_rooms(scene):
    return {rid: (cat, floor, xy, wd) for rid, cat, floor, xy, wd in BUILDINGS[scene]["rooms"]}


def test_every_instance_loads_with_real_geometry_and_a_report(dataset):
    _, written, instances = dataset
    assert sorted(instances) == sorted(SPLITS)
    assert sum(len(v) for v in instances.values()) == sum(len(p[1]) for ps in SPLITS.values() for p in ps) == 11
    for split, insts in instances.items():
        for inst in insts:
            sg, report = inst.scene, inst.scene.report
            assert report.geometry == "npz+json", inst.key
            # Rooms keep the .npz boxes (not a synthetic 4.5 m grid), floors included.
            for rid, (cat, floor, (x, y), (w, d)) in _npz_rooms(inst.scene_name).items():
                room = sg.rooms[rid]
                assert (room.category, room.floor) == (cat, floor)
                assert np.allclose(room.location[:2], (x, y)) and np.allclose(room.size[:2], (w, d))
            # Added task objects keep their position (and get a size from their class).
            for oid, (cls, rid, loc) in written[(split, inst.scene_name, inst.problem)].items():
                obj = sg.objects[oid]
                assert obj.parent_room == rid and np.allclose(obj.location, loc) and all(obj.size), (oid, cls)
                assert oid in report.default_sized
            # The .json's text reached the .npz's objects (the .npz has no descriptions for the originals).
            assert report.merged["descriptions"] >= 10
            assert sg.objects[10].description and sg.objects[10].label == "dining_table_10"
            inst.world()  # the symbolic world builds


def test_roomless_objects_are_placed_by_position_or_refused_one_by_one(dataset):
    _, _, instances = dataset
    ash = next(i for i in instances["dining_setup"] if i.scene_name == "Ashvale")
    report = ash.scene.report
    placed = {p["object"]: p for p in report.placed}
    assert placed[17]["room"] == "dining_room_2" and "lies in dining_room_2's box" in placed[17]["reason"]
    assert placed[18]["room"] == "lobby_4"
    assert placed[21]["room"] == "kitchen_1" and "outside" in placed[21]["reason"]  # 5 cm past the wall
    [refused] = report.refused
    assert refused["object"] == 19 and "no parent_room" in refused["reason"] and "no room's box" in refused["reason"]
    assert 19 not in ash.scene.objects and ash.scene.objects[21].parent_room == 1
    # The chair upstairs in Bramford goes to the room of its floor, not the one below with the same plan.
    bram = next(i for i in instances["dining_setup"] if i.scene_name == "Bramford")
    assert {p["object"]: p["room"] for p in bram.scene.report.placed} == {20: "bathroom_5"}


def test_unlabelled_objects_and_unknown_categories_are_reported_not_dropped(dataset):
    _, _, instances = dataset
    ash = next(i for i in instances["dining_setup"] if i.scene_name == "Ashvale")
    report = ash.scene.report
    assert report.unlabelled == [20] and ash.scene.objects[20].class_ == "unlabelled"
    assert ash.scene.objects[20].label == "unlabelled_20"
    assert report.unknown_room_categories == {"lobby": ["lobby_4"]}
    untyped = {u["object"]: u for u in report.untyped(ash.scene)}
    assert untyped[20]["how"] == "unlabelled" and untyped[17]["how"] == "excluded"  # the chair: seating
    assert "unlabelled_20" not in ash.world().pddl_objects and "lobby_4" in ash.world().rooms
    bram = next(i for i in instances["dining_setup"] if i.scene_name == "Bramford")
    assert sorted(bram.scene.report.unknown_room_categories) == ["closet", "staircase"]
    assert json.dumps(report.to_json())  # plain data


def test_floors_connect_only_by_stairs(dataset):
    _, _, instances = dataset
    bram = next(i for i in instances["dining_setup"] if i.scene_name == "Bramford")
    sg = bram.scene
    floor_of = {r.label: r.floor for r in sg.rooms.values()}
    # Kitchen (A) and bathroom (B) touch in plan; ignoring height would make them neighbours.
    flat = SceneGraph3D("flat", {rid: Room3D(r.id, r.category, r.label, (*r.location[:2], 1.5), r.size)
                                 for rid, r in sg.rooms.items()})
    assert (1, 5) in adjacent_rooms(flat)
    assert all(sg.rooms[a].floor == sg.rooms[b].floor for a, b in adjacent_rooms(sg))
    [link] = stair_links(sg)
    assert (link["a"], link["b"], link["assumed"]) == (3, 6, False)
    stairs = {("staircase_3", "staircase_6"), ("staircase_6", "staircase_3")}
    for connectivity in ("auto", "full"):
        house = to_household_scene(sg.copy(), np.random.default_rng(0), 1, connectivity)
        cross = {a.args for a in house.init if a.predicate == "connected" and floor_of[a.args[0]] != floor_of[a.args[1]]}
        assert cross == stairs, connectivity
    world = bram.world()  # Context Matters' "every room connected" holds within a floor only
    cross = {a.args for a in world.init if a.predicate == "connected" and floor_of[a.args[0]] != floor_of[a.args[1]]}
    assert cross == stairs
    assert Atom("connected", ("kitchen_1", "living_room_2")) in world.init
    assert house.entities["kitchen_1"].attributes["floor"] == "A"
    # Drawn side by side: no room of floor B covers one of floor A (the kitchen lies under the bedroom).
    rect = {r.name: r.rect for r in house.rooms}
    for a in ("kitchen_1", "living_room_2", "staircase_3"):
        for b in ("bedroom_4", "bathroom_5", "staircase_6", "closet_7"):
            ra, rb = rect[a], rect[b]
            assert ra[0] + ra[2] <= rb[0] or rb[0] + rb[2] <= ra[0] or ra[1] + ra[3] <= rb[1] or \
                rb[1] + rb[3] <= ra[1], (a, b)
    bed = next(e for n, e in house.entities.items() if n.startswith("bed_"))
    bx, by, bw, bh = rect["bedroom_4"]
    assert bx <= bed.pos[0] <= bx + bw and by <= bed.pos[1] <= by + bh


def test_floors_without_a_staircase_get_one_assumed_link():
    sg = SceneGraph3D("two", {1: Room3D(1, "kitchen", "", (2, 2, 1.5), (4, 4, 3), floor="A"),
                              2: Room3D(2, "bedroom", "", (9, 9, 4.5), (4, 4, 3), floor="B"),
                              3: Room3D(3, "bathroom", "", (2, 3, 4.5), (4, 4, 3), floor="B")})
    [link] = stair_links(sg)
    assert (link["a"], link["b"], link["assumed"]) == (1, 3, True) and "assumed" in link["reason"]


def test_task_object_coverage_at_least_95_percent_with_every_drop_named(dataset):
    _, written, instances = dataset
    typed = total = 0
    dropped = []
    for insts in instances.values():
        for inst in insts:
            cov = inst.coverage()
            typed, total = typed + cov["typed"], total + cov["objects"]
            assert cov["objects"] >= len(written[(inst.split, inst.scene_name, inst.problem)])
            assert len(cov["dropped"]) == cov["objects"] - cov["typed"]
            dropped += cov["dropped"]
            world = inst.world()
            for oid in written[(inst.split, inst.scene_name, inst.problem)]:
                label = inst.scene.objects[oid].label
                assert (label in world.pddl_objects) != any(d["object"] == oid for d in cov["dropped"]), label
    assert typed / total >= 0.95, (typed, total)
    assert dropped and all(d["reason"] for d in dropped)
    assert {d["class"] for d in dropped} == {"fidget_spinner"}  # no word or known class says what it is


def test_state_in_class_names_becomes_facts_and_rubbish_is_discardable(dataset):
    _, _, instances = dataset
    laundry = next(i for i in instances["laundry"] if i.scene_name == "Ashvale")
    world = laundry.world()
    shirts = [o for o in world.objects.values() if o.class_ == "dirty_shirt"]
    assert shirts and all(Atom("dirty", (o.label,)) in world.init and o.base == "shirt" for o in shirts)
    assert world.pddl_objects[shirts[0].label] == "clothing"
    assert not any(Atom("dirty", (o.label,)) in world.init for o in world.objects.values() if o.class_ == "socks")
    cleaning = next(i for i in instances["house_cleaning"] if i.scene_name == "Ashvale")
    house = to_household_scene(cleaning.scene.copy(), np.random.default_rng(0), 1)
    can = next(n for n, e in house.entities.items() if n.startswith("cola_can"))
    assert house.entities[can].pddl_type == "dish" and house.entities[can].attributes["discardable"]
    bins = [n for n, e in house.entities.items() if n.startswith(("rubbish_bin", "organic_bin"))]
    assert bins and all(house.entities[n].pddl_type == "trashcan" for n in bins)
    office = next(iter(instances["office_setup"]))
    books = [o for o in office.world().objects.values() if o.class_ == "book_into_the_shelf"]
    assert len(books) == 2 and all(o.pddl_type == "book" and o.base == "book" for o in books)


@pytest.mark.parametrize("cls,pddl_type,how,states", [
    ("dirty_shirt", "clothing", "words", ("dirty",)), ("cola_can", "dish", "words", ()),
    ("banana_peel", "food", "words", ()), ("rotting_apple", "food", "words", ()),
    ("rubbish_bin", "trashcan", "words", ()), ("drinking_glass", "dish", "words", ()),
    ("dish_soap", "gadget", "words", ()), ("locker", "openable", "words", ()), ("socks", "clothing", "words", ()),
    ("cups", "dish", "words", ()), ("fruit_bowl", "dish", "words", ()), ("magazine_rack", "shelf", "words", ()),
    ("gpu", "gadget", "words", ()), ("book into the shelf", "book", "words", ()),
    ("wet towel", "clothing", "words", ("wet",)), ("wet plate", "dish", "words", ()),
    ("teddybear", "decor", "words", ()), ("armchair", None, "excluded", ()),
    ("ottomann", "surface", "similarity", ()), ("fidget_spinner", None, "unknown", ()),
    (None, None, "unlabelled", ()), ("", None, "unlabelled", ()), ("plate", "dish", "table", ()),
])
def test_open_vocabulary_typing(cls, pddl_type, how, states):
    typing = type_class(cls)
    assert (typing.pddl_type, typing.how, typing.states) == (pddl_type, how, states), typing
    assert typing.reason
    assert type_class("cola_can").discardable and type_class("rotting_apple").discardable
    assert not type_class("rubbish_bin").discardable


def test_typing_takes_any_similarity_and_works_without_embeddings():
    class Fixed:  # a similarity that finds "zorblax" most like a lamp
        name = "fixed"

        def matrix(self, queries, candidates):
            return np.array([[0.9 if c == "lamp" else 0.0 for c in candidates] for _ in queries])

    assert type_class("zorblax").pddl_type is None
    assert (type_class("zorblax", Fixed()).pddl_type, type_class("zorblax", Fixed()).base) == ("light", "lamp")
    from servicerobot.memory.similarity import LexicalSimilarity

    drier = type_class("drier", LexicalSimilarity())  # the project's own similarity module
    assert (drier.pddl_type, drier.how, drier.base) == ("gadget", "similarity", "hair_drier")
    assert WordCharSimilarity().pair("cell phone", "cellphone") > 0.55 > WordCharSimilarity().pair("gpu", "fridge")


def test_the_loaders_similarity_reaches_the_world(dataset):
    class ToyLike:  # an embedding would find a fidget spinner most like a toy
        name = "toy-like"

        def matrix(self, queries, candidates):
            return np.array([[0.8 if c == "toy" else 0.1 for c in candidates] for _ in queries])

    root, _, instances = dataset
    plain = next(i for i in instances["general"] if i.scene_name == "Ashvale")
    assert plain.coverage()["share"] < 1.0
    inst = next(i for i in read_split(root, "general", similarity=ToyLike()) if i.scene_name == "Ashvale")
    typing = inst.scene.report.typing["fidget_spinner"]
    assert (typing.pddl_type, typing.how, typing.base) == ("decor", "similarity", "toy")
    assert inst.coverage() == {"objects": 9, "typed": 9, "share": 1.0, "dropped": []}
    assert inst.world().pddl_objects["fidget_spinner_108"] == "decor"
    assert "fidget_spinner_108" not in plain.world().pddl_objects


def test_shifting_matches_real_attributes_by_similarity(dataset):
    from servicerobot.planners import get_planner
    from servicerobot.planners.relaxation import OfflineInterpreter, relaxing_plan
    from servicerobot.planners.relaxation.offline import phrase_overlap

    plate, bowl = ("hold food", "serve food", "stack"), ("grab", "eat from", "clean", "hold", "set on")
    assert not set(plate) & set(bowl) and phrase_overlap(plate, bowl) > 0.1
    assert phrase_overlap(plate, plate) == 1.0 and phrase_overlap(("eat",), ("eat", "peel")) < 0.75
    _, _, instances = dataset
    ash = next(i for i in instances["dining_setup"] if i.scene_name == "Ashvale")
    result = relaxing_plan(ash.world(), ash.task, OfflineInterpreter(), get_planner("builtin", timeout=20),
                           use_val=False)
    assert result.success, result.failure
    assert [s["use"] for s in result.shifts if s["missing"] == "plate"] == ["bowl_25"]
    assert "(on bowl_25 dining_table_10)" in result.final_goal
    assert sum(lit.startswith("(on drinking_glass") for lit in result.final_goal) == 3  # glass by its base class


def test_an_all_dropped_goal_is_a_failure_with_its_reason():
    from servicerobot.envs.context_matters.world import world_of
    from servicerobot.planners import get_planner
    from servicerobot.planners.relaxation import OfflineInterpreter, relaxing_plan

    sg = SceneGraph3D("Bare", {1: Room3D(1, "kitchen", "", (2, 2, 1.5), (4, 4, 3))},
                      {1: Object3D(1, "counter", "", 1, (0.5, 2, 0.45), (0.6, 1.6, 0.9)),
                       2: Object3D(2, "cup", "", 1, (0.5, 2, 0.95), (0.09, 0.09, 0.1))})
    result = relaxing_plan(world_of(sg, "kitchen_1"), "set the table for two people", OfflineInterpreter(),
                           get_planner("builtin", timeout=10), use_val=False)
    assert result.final_goal == () and result.dropped
    assert not result.success and result.failure.startswith("empty goal: all 3 part(s) of the task were dropped")


def test_llm_shift_replacements_must_be_objects_of_a_compatible_type(dataset):
    from servicerobot.language.base import Completion
    from servicerobot.planners.relaxation import LLMRelaxInterpreter, Toolbox
    from servicerobot.planners.relaxation.core import Draft
    from servicerobot.planners.relaxation.llm import replacement_problem

    _, _, instances = dataset
    world = next(i for i in instances["dining_setup"] if i.scene_name == "Ashvale").world()
    assert "is a room" in replacement_problem(world, "plate", "bathroom_5")
    assert "a plate is a dish" in replacement_problem(world, "plate", "bed_14")
    assert replacement_problem(world, "plate", "bowl_25") == ""
    assert "not an object of the scene" in replacement_problem(world, "plate", "plate_999")

    class Model:
        name = "scripted"

        def complete(self, messages, *, schema=None, temperature=0.0):
            if schema["title"] == "shift":
                return Completion("", {"replacements": [{"missing": "plate", "use": ["bathroom_5", "bowl_25"]}],
                                       "goal": "set the table with the bowl"})
            return Completion("", {"achievable": True, "goal": "set the table with the bowl", "dropped": []})

    interp = LLMRelaxInterpreter(Model())
    interp.begin(Toolbox(world, planner=None), "set the table for three people")
    adjustment = interp.adjust(Draft(None, "set the table for three people"), "no plate")
    assert [s["use"] for s in adjustment.shifts] == ["bowl_25"]
    assert [(r["use"], "room" in r["reason"]) for r in adjustment.rejected] == [("bathroom_5", True)]


def test_unscored_instances_say_not_scored(dataset):
    from servicerobot.experiments.cm import cm_report_lines, score_result
    from servicerobot.planners.relaxation.core import RelaxationResult

    _, _, instances = dataset
    pc = next(iter(instances["pc_assembly"]))
    assert pc.relaxation_expected is None
    cm = score_result(pc, RelaxationResult("cm-offline", final_task=pc.task, failure="interpret: free text"))
    assert cm["agreement"] is None and cm["acceptable_goal"] is None
    assert cm["task_objects"]["share"] == 1.0 and "room-less object(s) placed" in cm["scene_load"]
    lines = "\n".join(cm_report_lines([{"status": "ok", "env": "cm", "variant": "cm-offline", "cm": cm}]))
    row = next(line for line in lines.splitlines() if line.startswith("| cm | cm-offline | 1 |"))
    assert row.count("not scored") == 4 and "0/" not in row.split("|")[6]


def _big_two_floor_building(rooms_per_floor: int) -> SceneGraph3D:
    sg = SceneGraph3D("Tallhouse")
    cats = ("bedroom", "bathroom", "kitchen", "living_room", "corridor", "home_office")
    oid = 1
    for f, floor in enumerate("AB"):
        for k in range(rooms_per_floor):
            rid = f * rooms_per_floor + k + 1
            x, y = (k % 8) * 6.0, (k // 8) * 6.0  # 2 m apart: no shared walls, so every pair on a floor joins
            sg.rooms[rid] = Room3D(rid, cats[k % len(cats)], "", (x, y, 1.5 + 3 * f), (4, 4, 3), floor=floor)
            sg.objects[oid] = Object3D(oid, "table", "", rid, (x, y, 0.375 + 3 * f), (1.2, 0.8, 0.75))
            sg.objects[oid + 1] = Object3D(oid + 1, "cup", "", rid, (x, y, 0.8 + 3 * f), (0.09, 0.09, 0.1))
            oid += 2
    return sg


def test_observation_space_is_sized_from_the_building(tmp_path):
    import gymnasium as gym

    import servicerobot  # noqa: F401 - registers the ids

    sg = _big_two_floor_building(40)
    path = tmp_path / "Tallhouse.npz"
    save_npz(sg, path)
    env = gym.make("ServiceRobot-Habitat-v0", scene_graph=str(path), connectivity="full", n_tasks=1)
    n = env.unwrapped.world.max_entities
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        obs, _ = env.reset(seed=0)
    assert len(obs["prior"]) > 8192 + 400 * n  # the old per-entity bound would not hold it
    assert len(obs["prior"]) <= env.observation_space["prior"].max_length
    assert obs in env.observation_space
    house = to_household_scene(load_3dsg(path), np.random.default_rng(0), 4, "full")
    assert prior_chars(house) <= env.observation_space["prior"].max_length
    env.close()


def test_an_executor_failure_that_repeats_ends_the_task(tmp_path):
    from servicerobot.envs.core import ServiceRobotEnv
    from servicerobot.envs.executor import Executor
    from servicerobot.envs.household.world import MAX_EXECUTOR_REPEATS, HouseholdOptions, HouseholdWorld
    from servicerobot.oracle import OracleAgent
    from servicerobot.scenes.gibson import GibsonScenes, generate_3dsg

    class NoPaths(Executor):
        name = "stage"

        def reset(self, scene, facts, rng):
            pass

        def execute(self, action, add, delete):
            return "no navigable path" if "move" in str(action) else ""

        def sync(self, facts):
            pass

    world = HouseholdWorld(GibsonScenes(generate_3dsg(np.random.default_rng(3), 6), n_people=1),
                           HouseholdOptions(n_tasks=2, event_rate=0.0, disturbance_prob=0.0), executor=NoPaths())
    env = ServiceRobotEnv(world)
    agent = OracleAgent.from_env(env)
    env.reset(seed=1)
    failures, steps = [], 0
    while steps < 400:
        _, _, terminated, truncated, info = env.step(agent.act())
        steps += 1
        if info["task_failure"]:
            failures.append(info["task_failure"])
        if terminated or truncated:
            break
    assert terminated or truncated, "the oracle retried the failing move without end"
    moving = [f for f in failures if "move" in f]
    assert moving and all(f"failed {MAX_EXECUTOR_REPEATS} times in stage: no navigable path" in f for f in moving)


def test_the_habitat_world_takes_a_context_matters_instance_folder(dataset):
    import gymnasium as gym

    import servicerobot  # noqa: F401 - registers the ids

    root, _, _ = dataset
    folder = root / "laundry" / "Bramford" / "problem_1"
    env = gym.make("ServiceRobot-Habitat-v0", scene_graph=str(folder), n_tasks=1)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        obs, _ = env.reset(seed=0)
    prior = json.loads(obs["prior"])
    assert prior["entities"]["closet_7"]["floor"] == "B" and "staircase_6" in prior["rooms"]
    assert env.unwrapped.world.source.graphs[0].report.geometry == "npz+json"
    env.close()
    with pytest.raises(SceneError, match="needs one .npz or one scene .json"):
        from servicerobot.scenes.gibson import load_building

        load_building(root)


def test_bad_files_still_name_the_file(tmp_path):
    with pytest.raises(SceneError, match="give one .npz and/or one .json"):
        load_scene([tmp_path / "a.json", tmp_path / "b.json"])
    with pytest.raises(SceneError, match="no such scene-graph file"):
        load_scene(tmp_path / "missing.npz")
    (tmp_path / "x.json").write_text("{}")
    with pytest.raises(SceneError, match="x.json: not a Context Matters scene"):
        load_scene(tmp_path / "x.json")


_REAL = Path(__file__).resolve().parents[2] / "shared" / "fixtures" / "context_matters"


@pytest.mark.skipif(not _REAL.is_dir(), reason="no real Context Matters data in ../shared/fixtures/context_matters")
def test_real_context_matters_data_if_present():
    for split in split_names(_REAL):
        for inst in read_split(_REAL, split):
            inst.world()
            cov = task_object_coverage(inst.scene, inst.task_classes)
            assert all(d["reason"] for d in cov["dropped"])


def test_bad_object_records_are_refused_one_by_one(tmp_path):
    import pickle
    import zipfile

    from servicerobot.scenes.gibson import generate_3dsg

    sg = generate_3dsg(np.random.default_rng(1))
    path = tmp_path / "odd.npz"
    save_npz(sg, path)
    with zipfile.ZipFile(path) as z:
        output = pickle.loads(z.read("output.npy")[128:]).item()
    first, second, third = sorted(output["object"])[:3]
    output["object"][first]["location"] = np.array([np.nan, 0.0, 0.0])
    output["object"][second]["parent_room"] = 99  # not a room: placed by its position
    del output["object"][third]["class_"]  # no class: unlabelled, kept
    output["object"][9999] = "a string, not a record"
    np.savez(path, output=np.array(output, dtype=object))
    back = load_3dsg(path)
    refused = {r["object"]: r["reason"] for r in back.report.refused}
    assert sorted(refused) == [first, 9999] and "finite" in refused[first] and "must be a dict" in refused[9999]
    assert [p["object"] for p in back.report.placed] == [second]
    assert back.objects[second].parent_room == sg.objects[second].parent_room
    assert back.report.unlabelled == [third] and back.objects[third].class_ == "unlabelled"
    assert len(back.objects) == len(sg.objects) - 1


def test_a_room_and_an_object_only_in_the_json_join_the_npz_building(tmp_path):
    from tests.cm_fixtures import write_building

    write_building(tmp_path, "Ashvale", [], np.random.default_rng(0))
    doc = json.loads((tmp_path / "Ashvale.json").read_text())
    doc["rooms"]["9"] = {"id": 9, "category": "garage", "label": "garage_9", "bbox": [], "objects_in_room": [300]}
    doc["objects"]["300"] = {"id": 300, "class": "bucket", "label": "bucket_300", "parent_room": 9,
                             "description": "A blue bucket.", "bbox": [], "action_affordance": []}
    (tmp_path / "Ashvale.json").write_text(json.dumps(doc))
    sg = load_scene([tmp_path / "Ashvale.npz", tmp_path / "Ashvale.json"])
    assert sg.report.geometry == "npz+json, 1 room(s) laid out"
    assert sg.objects[300].parent_room == 9 and 300 in sg.report.laid_out and all(sg.rooms[9].size)
    assert np.allclose(sg.rooms[1].location[:2], (2.0, 2.0))  # the boxed rooms keep their boxes
    assert {p["object"]: p["room"] for p in sg.report.placed}[17] == "dining_room_2"
    assert sg.report.merged["rooms"] == 1 and sg.report.merged["objects"] == 1
    assert any("only in the .json" in note for note in sg.report.notes)
