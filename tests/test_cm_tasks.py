"""Context Matters tasks: the controlled English, the seeded generator's ground truth, CM's dataset layout."""

from __future__ import annotations

import json

import numpy as np
import pytest

from servicerobot.envs.context_matters import (
    DOMAINS,
    EQUIVALENTS,
    VARIANTS,
    GoalFormatError,
    generate_index,
    generate_instance,
    generate_set,
    parse_task,
    read_split,
    render_task,
    split_names,
    write_split,
)
from servicerobot.errors import SceneError
from servicerobot.pddl import Atom


def test_every_domain_renders_and_parses_back():
    for domain in DOMAINS:
        text = render_task(domain, "dining_room", 3, "cup", "coffee_table")
        goal = parse_task(text)
        assert goal.domain == domain and goal.room == "dining_room"
        counts = [r.count for r in goal.requirements if r.count is not None]
        assert all(c in (1, 3) for c in counts)


def test_parse_reads_cm_style_sentences_and_rejects_free_text():
    goal = parse_task("Set the table for three people.")
    assert goal.room is None and [r.class_ for r in goal.requirements] == ["plate", "fork", "glass"]
    assert [r.count for r in goal.requirements] == [3, 3, 3]
    with pytest.raises(GoalFormatError, match="LLM interpreter"):
        parse_task("please tidy up a bit")


@pytest.mark.parametrize("domain", DOMAINS)
def test_ground_truth_follows_the_variant(domain):
    for variant in VARIANTS[domain]:
        inst = generate_instance(domain, variant, np.random.default_rng(11))
        world = inst.world()
        assert inst.relaxation_expected == (variant != "feasible")
        assert inst.acceptable and all(isinstance(g, tuple) for g in inst.acceptable)
        # Every literal of every acceptable goal names objects of the scene.
        for goal in inst.acceptable:
            for lit in goal:
                for name in lit.replace("(", " ").replace(")", " ").split()[1:]:
                    if name not in ("not", "dirty", "wet"):
                        assert name in world.pddl_objects, (variant, lit)
        kind, _, subject = variant.partition(":")
        classes = {world.objects[tok].class_ for g in inst.acceptable for lit in g
                   for tok in lit.strip("()").replace("(", " ").replace(")", " ").split()[1:] if tok in world.objects}
        if kind == "shift":
            assert classes & set(EQUIVALENTS[subject])
        if kind == "no":
            assert not world.of_type({"trashcan": "trashcan", "sink": "sink", "dryer": "dryer"}[subject])


def test_dirty_state_comes_only_from_descriptions():
    inst = generate_instance("house_cleaning", "feasible", np.random.default_rng(2))
    world = inst.world()
    dirty = {a.args[0] for a in world.init if a.predicate == "dirty"}
    assert dirty == {o.label for o in world.objects.values() if o.dirty and o.label in world.pddl_objects}
    assert dirty and all(f"(not (dirty {d}))" in inst.acceptable[0] for d in dirty
                         if world.objects[d].room_category == "kitchen")


def test_generation_is_seeded_and_index_independent():
    a, b = generate_set(6, seed=3), generate_set(6, seed=3)
    assert [x.task for x in a] == [x.task for x in b] and [x.acceptable for x in a] == [x.acceptable for x in b]
    assert generate_index(4, 3).acceptable == a[4].acceptable
    assert [x.split for x in a] == list(DOMAINS)
    assert generate_index(4, 4).scene_name != a[4].scene_name or generate_index(4, 4).task != a[4].task


def test_unknown_domain_or_variant_is_named():
    with pytest.raises(SceneError, match="domains are"):
        generate_instance("cooking", "feasible", np.random.default_rng(0))
    with pytest.raises(SceneError, match="variants are"):
        generate_instance("laundry", "shift:plate", np.random.default_rng(0))


@pytest.mark.parametrize("scene_format", ["json", "npz"])
def test_cm_layout_round_trips(tmp_path, scene_format):
    instances = generate_set(6, seed=5)
    path = write_split(instances, tmp_path, "generated", scene_format=scene_format)
    doc = json.loads(path.read_text())
    assert set(doc["problems"]) == {i.problem for i in instances}
    for inst in instances:
        folder = tmp_path / "generated" / inst.scene_name / inst.problem
        assert (folder / f"{inst.scene_name}.{scene_format}").is_file()
        assert (folder / "task.txt").read_text().strip() == inst.task
        assert (folder / "init_loc.txt").read_text().strip() == inst.init_loc
        assert doc["problems"][inst.problem]["relaxation_expected"] == inst.relaxation_expected
    assert split_names(tmp_path) == ["generated"]
    back = read_split(tmp_path, "generated")
    assert [(b.scene_name, b.problem, b.task, b.init_loc, b.relaxation_expected, b.acceptable) for b in back] == \
        [(a.scene_name, a.problem, a.task, a.init_loc, a.relaxation_expected, a.acceptable) for a in instances]
    for a, b in zip(instances, back):
        assert a.world().init == b.world().init and a.world().pddl_objects == b.world().pddl_objects


def _written(tmp_path):
    inst = generate_set(1, seed=7)[0]
    write_split([inst], tmp_path, "s")
    return inst, tmp_path / "s" / inst.scene_name / inst.problem


def test_corrupt_scene_file_is_named(tmp_path):
    inst, folder = _written(tmp_path)
    scene = folder / f"{inst.scene_name}.json"
    scene.write_text("{not json")
    with pytest.raises(SceneError, match=str(scene.name)):
        read_split(tmp_path, "s")


def test_missing_or_bad_instance_files_are_named(tmp_path):
    _inst, folder = _written(tmp_path)
    (folder / "init_loc.txt").write_text("attic_99\n")
    with pytest.raises(SceneError, match="init_loc.txt.*attic_99"):
        read_split(tmp_path, "s")
    (folder / "task.txt").unlink()
    with pytest.raises(SceneError, match="task.txt: missing"):
        read_split(tmp_path, "s")


def test_corrupt_split_file_and_missing_folder_are_named(tmp_path):
    inst, _folder = _written(tmp_path)
    split = tmp_path / "s.json"
    doc = json.loads(split.read_text())
    doc["problems"][inst.problem]["graph"] = ["Nowhere"]
    split.write_text(json.dumps(doc))
    with pytest.raises(SceneError, match="Nowhere.*instance folder missing"):
        read_split(tmp_path, "s")
    doc["problems"][inst.problem]["relaxation_expected"] = "yes"
    split.write_text(json.dumps(doc))
    with pytest.raises(SceneError, match="relaxation_expected"):
        read_split(tmp_path, "s")
    split.write_text("[1, 2")
    with pytest.raises(SceneError, match="s.json: not a readable JSON"):
        read_split(tmp_path, "s")
    with pytest.raises(SceneError, match="no such split file"):
        read_split(tmp_path, "other")


def test_world_puts_the_robot_at_init_loc_and_connects_every_room():
    inst = generate_set(2, seed=1)[1]
    world = inst.world()
    assert Atom("in-room", (world.robot, world.init_loc)) in world.init
    rooms = list(world.rooms)
    assert all(Atom("connected", (a, b)) in world.init for a in rooms for b in rooms if a != b)
    assert not any(t == "person" for t in world.pddl_objects.values())


def test_a_hand_written_instance_in_cms_own_format_runs(tmp_path):
    """CM's files as their dataset writes them (scene JSON without boxes or materials, free-text task)."""
    from servicerobot.experiments.cm import run_cm_episode
    from servicerobot.experiments.config import EnvConfig, EpisodeSpec

    folder = tmp_path / "dining_setup" / "Parole" / "problem_2"
    folder.mkdir(parents=True)
    rooms = {"1": {"id": 1, "category": "kitchen", "label": "kitchen_1", "bbox": [], "objects_in_room": [3, 4, 5]},
             "2": {"id": 2, "category": "bedroom", "label": "bedroom_2", "bbox": [], "objects_in_room": [6, 7]}}
    objects = {"3": {"id": 3, "class": "counter", "label": "counter_3", "parent_room": 1, "description": "",
                     "bbox": [], "action_affordance": []},
               "4": {"id": 4, "class": "dining_table", "label": "dining_table_4", "parent_room": 1,
                     "description": "a wooden table", "bbox": [], "action_affordance": []},
               "5": {"id": 5, "class": "plate", "label": "plate_5", "parent_room": 1, "description": "a plate",
                     "bbox": [], "action_affordance": []},
               "6": {"id": 6, "class": "nightstand", "label": "nightstand_6", "parent_room": 2, "description": "",
                     "bbox": [], "action_affordance": []},
               "7": {"id": 7, "class": "fork", "label": "fork_7", "parent_room": 2, "description": "a fork",
                     "bbox": [], "action_affordance": []}}
    (folder / "Parole.json").write_text(json.dumps({"scene_info": {"total_rooms": 2, "total_objects": 5},
                                                    "rooms": rooms, "objects": objects}))
    (folder / "task.txt").write_text("Set the table for one person.\n")
    (folder / "init_loc.txt").write_text("bedroom_2\n")
    (folder / "description.txt").write_text("one plate and one fork, no glass\n")
    (tmp_path / "dining_setup.json").write_text(json.dumps({"problems": {"problem_2": {
        "description": "no glass", "graph": ["Parole"], "goal": "set the table", "objects": {},
        "relaxation_expected": True}}}))
    [inst] = read_split(tmp_path, "dining_setup")
    assert inst.acceptable is None and inst.world().init_loc == "bedroom_2"
    env = EnvConfig("cm", {"dataset": str(tmp_path), "split": "dining_setup"}, "ContextMatters")
    record = run_cm_episode(EpisodeSpec("t", "h", env, "cm-offline", 0))
    assert record["status"] == "ok", record.get("error")
    cm = record["cm"]
    assert cm["success"] and cm["relaxed"] and cm["agreement"] and cm["acceptable_goal"] is None
    assert sorted(cm["final_goal"]) == ["(on fork_7 dining_table_4)", "(on plate_5 dining_table_4)"]
    assert cm["world_success"] and "glass" in cm["statement"]
