"""Gibson 3D scene graphs: files, generator, class table, and the household scenes made from them."""

import json
import pickle
import zipfile

import numpy as np
import pytest

from servicerobot.envs import ServiceRobotEnv
from servicerobot.envs.household.world import HouseholdOptions, HouseholdWorld
from servicerobot.errors import SceneError
from servicerobot.pddl import Atom
from servicerobot.scenes.gibson import (
    CLASS_TO_TYPE,
    EXCLUDED,
    GibsonScenes,
    Object3D,
    Room3D,
    SceneGraph3D,
    adjacent_rooms,
    generate_3dsg,
    load_3dsg,
    save_json,
    save_npz,
    support_of,
    to_household_scene,
)
from servicerobot.scenes.gibson_classes import GENERATED_CLASSES, ITEM_TYPES, class_key
from servicerobot.scenes.household import household_domain


def test_labels_follow_the_3dsg_convention():
    assert Room3D(3, "living room").label == "living_room_3"
    assert Object3D(12, "dining table", parent_room=3).label == "dining_table_12"
    assert Room3D(1, "kitchen", size=(4, 3, 3)).floor_area == 12.0


@pytest.mark.parametrize("suffix", [".npz", ".json"])
def test_files_round_trip(tmp_path, suffix):
    sg = generate_3dsg(np.random.default_rng(7))
    path = tmp_path / f"scene{suffix}"
    (save_npz if suffix == ".npz" else save_json)(sg, path)
    back = load_3dsg(path)
    assert back == sg
    assert back.name == sg.name and len(back.objects) == len(sg.objects) > 10


def test_stanford_npz_without_extras_loads(tmp_path):
    """A file as Stanford/CM write it: numpy arrays, class names with spaces, no labels or building."""
    output = {"room": {1: {"id": 1, "scene_category": "kitchen", "floor_area": 12.0, "floor_number": "A",
                           "location": np.array([2.0, 1.5, 1.5]), "size": np.array([4.0, 3.0, 3.0]),
                           "volume": 36.0, "parent_building": 9}},
              "object": {5: {"id": 5, "class_": "dining table", "action_affordance": ["place on"],
                             "material": ["wood"], "location": np.array([2.0, 1.5, 0.375]),
                             "size": np.array([1.4, 0.9, 0.75]), "parent_room": 1},
                         6: {"id": 6, "class_": "cup", "action_affordance": [], "location": [2.0, 1.5, 0.8],
                             "parent_room": 1, "description": "a red cup made of ceramic"}}}
    path = tmp_path / "3DSceneGraph_Allensville.npz"
    np.savez(path, output=np.array(output, dtype=object))
    sg = load_3dsg(path)
    assert sg.name == "Allensville"
    assert sg.object_by_label("dining_table_5").material == ("wood",)
    # The added object had no size: it gets its class's size and stays on the table.
    cup = sg.object_by_label("cup_6")
    assert all(cup.size) and support_of(sg, cup) == ("on", 5)
    scene = to_household_scene(sg, np.random.default_rng(0), n_people=2)
    assert Atom("on", ("cup_6", "dining_table_5")) in scene.init
    assert scene.entities["cup_6"].attributes["colour"] == "red"


def test_old_protocol_pickles_with_numpy_scalars_load(tmp_path):
    """Python-2-era files: protocol 2, an OrderedDict, numpy scalar ids, a None material."""
    import collections
    import io

    output = collections.OrderedDict(
        room={1: {"id": np.int64(1), "scene_category": "kitchen", "location": np.array([2.0, 2.0, 1.5]),
                  "size": np.array([4.0, 4.0, 3.0])}},
        object={2: {"id": 2, "class_": "sink", "parent_room": np.int32(1), "location": np.array([1.0, 1.0, 0.45]),
                    "size": np.array([0.8, 0.6, 0.9]), "action_affordance": ["wash"], "material": [None]}})
    buf = io.BytesIO()
    np.lib.format.write_array_header_1_0(buf, {"descr": "|O", "fortran_order": False, "shape": ()})
    pickle.dump(np.array(output, dtype=object), buf, protocol=2)
    path = tmp_path / "old.npz"
    with zipfile.ZipFile(path, "w") as archive:
        archive.writestr("output.npy", buf.getvalue())
    sg = load_3dsg(path)
    assert sg.rooms[1].label == "kitchen_1" and sg.objects[2].parent_room == 1
    assert sg.objects[2].material == () and sg.objects[2].action_affordance == ("wash",)


def test_hostile_pickle_is_refused(tmp_path):
    class Evil:
        def __reduce__(self):
            return (print, ("pwned",))

    path = tmp_path / "evil.npz"
    np.savez(path, output=np.array({"room": {}, "object": Evil()}, dtype=object))
    with pytest.raises(SceneError, match="refused to load builtins.print"):
        load_3dsg(path)


@pytest.mark.parametrize("damage,message", [
    ("truncate", "not a readable .npz|cannot read 'output'"),
    ("foreign", "has no 'output' array"),
    ("no_rooms", "lacks the 'room' dict"),
    ("text", "not a readable .npz"),
])
def test_corrupt_npz_names_the_file_and_the_problem(tmp_path, damage, message):
    sg = generate_3dsg(np.random.default_rng(1))
    path = tmp_path / "bad.npz"
    save_npz(sg, path)
    if damage == "truncate":
        path.write_bytes(path.read_bytes()[:300])
    elif damage == "foreign":
        np.savez(path, rgb=np.zeros(3))
    elif damage == "text":
        path.write_text("hello")
    else:
        with zipfile.ZipFile(path) as z:
            output = pickle.loads(z.read("output.npy")[128:]).item()
        del output["room"]
        np.savez(path, output=np.array(output, dtype=object))
    with pytest.raises(SceneError, match=message) as info:
        load_3dsg(path)
    assert "bad.npz" in str(info.value)


def test_corrupt_json_names_the_file_and_the_problem(tmp_path):
    sg = generate_3dsg(np.random.default_rng(2))
    path = tmp_path / "Parole.json"
    save_json(sg, path)
    data = json.loads(path.read_text())
    path.write_text(path.read_text()[:200])
    with pytest.raises(SceneError, match="Parole.json: not valid JSON"):
        load_3dsg(path)
    path.write_text(json.dumps({"nodes": []}))
    with pytest.raises(SceneError, match="not a Context Matters scene"):
        load_3dsg(path)
    data["rooms"]["1"]["objects_in_room"].append(999)
    path.write_text(json.dumps(data))
    with pytest.raises(SceneError, match="room 1 lists objects_in_room"):
        load_3dsg(path)
    with pytest.raises(SceneError, match="unknown scene-graph format"):
        load_3dsg(tmp_path / "x.txt") if (tmp_path / "x.txt").write_text("x") else None


def test_context_matters_json_without_boxes_gets_a_layout(tmp_path):
    rooms = {"1": {"id": 1, "category": "kitchen", "label": "kitchen_1", "bbox": [], "objects_in_room": [1, 2]},
             "2": {"id": 2, "category": "bedroom", "label": "bedroom_2", "bbox": [], "objects_in_room": [3]}}
    objects = {"1": {"id": 1, "class": "dining table", "label": "dining_table_1", "parent_room": 1,
                     "description": "", "bbox": [], "action_affordance": []},
               "2": {"id": 2, "class": "plate", "label": "plate_2", "parent_room": 1,
                     "description": "Blue plate made of ceramic.", "bbox": [], "action_affordance": []},
               "3": {"id": 3, "class": "bed", "label": "bed_3", "parent_room": 2, "description": "",
                     "bbox": [], "action_affordance": []}}
    path = tmp_path / "Parole.json"
    path.write_text(json.dumps({"scene_info": {"total_rooms": 2, "total_objects": 3},
                                "rooms": rooms, "objects": objects}))
    sg = load_3dsg(path)
    assert sg.name == "Parole" and all(all(r.size) for r in sg.rooms.values())
    assert support_of(sg, sg.objects[2]) == ("on", 1)
    scene = to_household_scene(sg, np.random.default_rng(0), n_people=1)
    assert Atom("on", ("plate_2", "dining_table_1")) in scene.init
    # Rooms laid out without shared walls fall back to full connectivity (as in Context Matters).
    assert Atom("connected", ("kitchen_1", "bedroom_2")) in scene.init


def test_generator_is_deterministic_and_realistic():
    a, b = generate_3dsg(np.random.default_rng(11)), generate_3dsg(np.random.default_rng(11))
    assert a == b
    assert generate_3dsg(np.random.default_rng(12)) != a
    for seed in range(20):
        sg = generate_3dsg(np.random.default_rng(seed))
        cats = [r.category for r in sg.rooms.values()]
        assert {"kitchen", "living_room", "bedroom", "bathroom"} <= set(cats)
        for room in sg.rooms.values():
            assert 9.0 <= room.floor_area <= 36.0
            lo = np.asarray(room.location) - np.asarray(room.size) / 2
            hi = np.asarray(room.location) + np.asarray(room.size) / 2
            for obj in sg.objects_in(room.id):
                olo, ohi = obj.box
                assert np.all(olo >= lo - 1e-6) and np.all(ohi <= hi + 1e-6), obj
        # Every small object rests on or in a piece of furniture, by its box.
        for obj in sg.objects.values():
            if CLASS_TO_TYPE.get(class_key(obj.class_)) in ITEM_TYPES:
                assert support_of(sg, obj) is not None, obj
        assert len(adjacent_rooms(sg)) >= len(sg.rooms) - 1
        # Furniture never overlaps (corners included).
        for room in sg.rooms.values():
            furniture = [o for o in sg.objects_in(room.id) if CLASS_TO_TYPE.get(class_key(o.class_)) not in ITEM_TYPES]
            for i, a in enumerate(furniture):
                for b in furniture[i + 1:]:
                    assert any(abs(a.location[k] - b.location[k]) * 2 >= a.size[k] + b.size[k] for k in (0, 1)), (a, b)


def test_every_class_is_mapped_or_excluded_with_a_known_type():
    domain_types = set(household_domain().types.types)
    for name in GENERATED_CLASSES:
        assert name in CLASS_TO_TYPE or name in EXCLUDED
    assert set(CLASS_TO_TYPE.values()) <= domain_types
    assert not set(CLASS_TO_TYPE) & set(EXCLUDED)
    assert all(reason for reason in EXCLUDED.values())


def test_add_object_places_it_in_the_room_on_a_fitting_receptacle():
    sg = generate_3dsg(np.random.default_rng(3))
    kitchen = next(r for r in sg.rooms.values() if r.category == "kitchen")
    before = sg.copy()
    plate = sg.add_object("plate", kitchen.id, np.random.default_rng(0), description="a spare plate")
    assert plate.id == max(before.objects) + 1 and plate.label == f"plate_{plate.id}"
    assert plate.id not in before.objects  # copy() is independent
    support = support_of(sg, plate)
    assert support is not None and sg.objects[support[1]].parent_room == kitchen.id
    with pytest.raises(SceneError, match="no room with id 99"):
        sg.add_object("plate", 99, np.random.default_rng(0))


def test_household_scene_keeps_3dsg_labels_and_runs_in_the_world():
    source = GibsonScenes(n_people=3)
    world = HouseholdWorld(source, HouseholdOptions(n_tasks=2))
    env = ServiceRobotEnv(world, update_mode="both")
    for seed in range(3):
        obs, _ = env.reset(seed=seed)
        assert env.observation_space.contains(obs)
        scene = world.scene
        sg = scene.source_graph
        assert isinstance(sg, SceneGraph3D)
        for name, (layer, node) in scene.node_of.items():
            label = (sg.rooms[node] if layer == "room" else sg.objects[node]).label
            assert name == label
        assert len(scene.entities) <= source.max_entities and len(scene.rooms) <= source.n_rooms
        obs, *_ = env.step("(wait)")
        assert env.observation_space.contains(obs)


def test_source_loads_files_and_rejects_bad_arguments(tmp_path):
    sg = generate_3dsg(np.random.default_rng(5), n_rooms=3)
    save_npz(sg, tmp_path / "a.npz")
    source = GibsonScenes(tmp_path / "a.npz", n_people=2)
    scene = source.generate(np.random.default_rng(0))
    assert scene.source_graph == sg and source.n_rooms == 3
    with pytest.raises(SceneError, match="n_people"):
        GibsonScenes(n_people=0)
    with pytest.raises(SceneError, match="n_rooms"):
        generate_3dsg(np.random.default_rng(0), n_rooms=1)
    with pytest.raises(SceneError, match="no such scene-graph file"):
        GibsonScenes(tmp_path / "missing.npz")


def test_support_prefers_inside_then_the_closest_top():
    sg = SceneGraph3D("t", {1: Room3D(1, "living_room", location=(2.5, 2.5, 1.5), size=(5, 5, 3))})
    sg.objects[1] = Object3D(1, "coffee_table", parent_room=1, location=(1, 1, 0.225), size=(1, 1, 0.45))
    sg.objects[2] = Object3D(2, "tv_stand", parent_room=1, location=(1, 1, 0.25), size=(0.6, 0.6, 0.5))
    sg.objects[3] = Object3D(3, "vase", parent_room=1, location=(1, 1, 0.64), size=(0.1, 0.1, 0.28))
    sg.objects[4] = Object3D(4, "cabinet", parent_room=1, location=(4, 4, 0.45), size=(1, 0.5, 0.9))
    sg.objects[5] = Object3D(5, "cup", parent_room=1, location=(4, 4, 0.13), size=(0.1, 0.1, 0.1))
    assert support_of(sg, sg.objects[3]) == ("on", 2)  # 2 cm above the coffee table's top, on the stand's
    assert support_of(sg, sg.objects[5]) == ("inside", 4)
    assert support_of(sg, sg.objects[4]) is None
