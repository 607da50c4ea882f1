"""Context Matters' published dataset layout, written from code for the tests (no data of theirs is copied).

    <root>/<split>.json                       {"problems": {"problem_k": {description, graph, goal, objects,
                                                [relaxation_expected]}}, "domain": {...}}
    <root>/<split>/<Scene>/problem_k/         <Scene>.npz (Stanford's pickled dict: `room`, `object`),
                                              <Scene>.json (CM's text: empty bbox lists), task.txt,
                                              init_loc.txt, description.txt

Every trait issue 24 lists is here: objects with `parent_room` None (inside a room's box, just outside one,
and far from every room), an object without a class or a label, `.json` bboxes empty beside real `.npz`
geometry, a two-floor building (rooms on floor B above rooms of floor A, a staircase on each), room
categories outside the table (lobby, staircase, closet), task classes outside the class table, state in class
names (`dirty_shirt`), Context Matters' own oddities (`book into the shelf`), a split whose problems have no
`relaxation_expected` (pc_assembly), v1 (`{group: [classes]}`) and v2 (`{"to_add": {class: {...}}}`) objects.
"""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np

Z = {"A": 1.5, "B": 4.5}

# Buildings: rooms (id, category, floor, centre xy, size xy) and original 3DSG objects
# (id, class or None, parent room or None, location, size, affordances, materials, json description).
BUILDINGS = {
    "Ashvale": {
        "rooms": [(1, "kitchen", "A", (2.0, 2.0), (4.0, 4.0)), (2, "dining_room", "A", (6.1, 2.0), (4.0, 4.0)),
                  (3, "bedroom", "A", (2.0, 6.1), (4.0, 4.0)), (4, "lobby", "A", (6.1, 6.1), (4.0, 4.0)),
                  (5, "bathroom", "A", (10.2, 2.0), (4.0, 4.0))],
        "objects": [
            (10, "dining_table", 2, (6.1, 2.0, 0.375), (1.4, 0.9, 0.75), ["place on", "eat at"], ["wood"],
             "A long wooden dining table for six."),
            (11, "counter", 1, (0.5, 2.0, 0.45), (0.6, 1.6, 0.9), ["place on"], ["granite"], "A granite counter."),
            (12, "sink", 1, (2.0, 0.4, 0.45), (0.8, 0.6, 0.9), ["wash"], ["steel"], "A steel kitchen sink."),
            (13, "refrigerator", 1, (3.5, 3.5, 0.9), (0.7, 0.7, 1.8), ["open", "close"], ["metal"], "A fridge."),
            (14, "bed", 3, (2.0, 6.1, 0.275), (1.6, 2.0, 0.55), ["lie on"], ["wood"], "A double bed."),
            (15, "wardrobe", 3, (0.4, 7.5, 1.0), (0.6, 1.2, 2.0), ["open", "store"], ["wood"], "A wardrobe."),
            (16, "trash_can", 1, (3.6, 0.4, 0.25), (0.35, 0.35, 0.5), ["throw in"], ["plastic"], "A bin."),
            (17, "chair", None, (6.9, 2.9, 0.45), (0.45, 0.45, 0.9), ["sit on"], ["wood"], "A dining chair."),
            (18, "potted_plant", None, (6.1, 7.9, 0.45), (0.4, 0.4, 0.9), [], ["ceramic"], "A potted fern."),
            (19, "couch", None, (30.0, 30.0, 0.4), (2.0, 0.9, 0.8), ["sit on"], ["fabric"], "A couch."),
            (20, None, 4, (6.5, 6.5, 0.5), (0.5, 0.5, 1.0), [], [], ""),
            (21, "cup", None, (2.0, 4.05, 0.95), (0.09, 0.09, 0.1), ["drink from"], ["ceramic"], "A mug."),
            (22, "washing_machine", 5, (10.2, 0.5, 0.425), (0.6, 0.6, 0.85), ["wash"], ["metal"], "A washer."),
            (23, "dryer", 5, (11.2, 0.5, 0.425), (0.6, 0.6, 0.85), ["dry"], ["metal"], "A tumble dryer."),
            (24, "desk", 4, (7.5, 6.1, 0.375), (1.4, 0.7, 0.75), ["place on", "work at"], ["wood"], "A desk."),
            (25, "bowl", 1, (0.5, 2.0, 0.935), (0.16, 0.16, 0.07), ["grab", "eat from", "clean", "hold", "set on"],
             ["ceramic"], "A white ceramic bowl to serve soup or salad in."),
            (26, "bookshelf", 4, (6.1, 7.7, 0.55), (0.9, 0.35, 1.1), ["place on"], ["wood"], "A bookshelf."),
        ],
    },
    "Bramford": {
        "rooms": [(1, "kitchen", "A", (2.0, 2.0), (4.0, 4.0)), (2, "living_room", "A", (6.1, 2.0), (4.0, 4.0)),
                  (3, "staircase", "A", (10.2, 2.0), (4.0, 4.0)), (4, "bedroom", "B", (2.0, 2.0), (4.0, 4.0)),
                  (5, "bathroom", "B", (6.1, 2.0), (4.0, 4.0)), (6, "staircase", "B", (10.2, 2.0), (4.0, 4.0)),
                  (7, "closet", "B", (2.0, 6.1), (4.0, 4.0))],
        "objects": [
            (10, "dining_table", 1, (2.0, 2.0, 0.375), (1.4, 0.9, 0.75), ["place on"], ["wood"], "A table."),
            (11, "counter", 1, (0.5, 2.0, 0.45), (0.6, 1.6, 0.9), ["place on"], ["granite"], "A counter."),
            (12, "sink", 1, (2.0, 0.4, 0.45), (0.8, 0.6, 0.9), ["wash"], ["steel"], "A sink."),
            (13, "trash_can", 1, (3.6, 0.4, 0.25), (0.35, 0.35, 0.5), ["throw in"], ["plastic"], "A bin."),
            (14, "sofa", 2, (6.1, 2.0, 0.4), (2.0, 0.9, 0.8), ["sit on", "place on"], ["fabric"], "A sofa."),
            (15, "desk", 2, (7.5, 3.5, 0.375), (1.4, 0.7, 0.75), ["place on"], ["wood"], "A desk."),
            (16, "bed", 4, (2.0, 2.0, 3.275), (1.6, 2.0, 0.55), ["lie on"], ["wood"], "A bed upstairs."),
            (17, "washing_machine", 5, (6.1, 0.5, 3.425), (0.6, 0.6, 0.85), ["wash"], ["metal"], "A washer."),
            (18, "dryer", 5, (7.1, 0.5, 3.425), (0.6, 0.6, 0.85), ["dry"], ["metal"], "A dryer."),
            (19, "shelf", 7, (2.0, 7.7, 3.5), (1.0, 0.35, 1.0), ["place on"], ["wood"], "A closet shelf."),
            (20, "chair", None, (6.5, 2.8, 3.45), (0.45, 0.45, 0.9), ["sit on"], ["wood"], "A chair upstairs."),
            (21, "bookshelf", 2, (6.1, 3.7, 0.55), (0.9, 0.35, 1.1), ["place on"], ["wood"], "A bookshelf."),
        ],
    },
}

# Splits: (problem, scenes, task, init_loc per scene, v1/v2 objects, relaxation_expected or absent, added
# task objects: (class, room id)).
SPLITS = {
    "dining_setup": [
        ("problem_1", ["Ashvale", "Bramford"], "set the table for three people",
         {"kitchenware": ["plate", "plate", "fork", "fork", "fork", "drinking_glass", "drinking_glass",
                          "drinking_glass", "napkin"]}, True,
         "only two plates; a bowl is available to replace the missing plate"),
    ],
    "house_cleaning": [
        ("problem_1", ["Ashvale", "Bramford"], "clean up the kitchen, throw away the garbage",
         {"garbage": ["cola_can", "banana_peel", "rotting_apple", "dirty_plate", "dish_soap", "rubbish_bin",
                      "organic_bin"]}, False, "trash lies around the kitchen"),
    ],
    "laundry": [
        ("problem_1", ["Ashvale", "Bramford"], "do the laundry and put the clean clothes away",
         {"clothes": ["dirty_shirt", "dirty_pants", "socks", "underwear", "towel"]}, False,
         "dirty clothes around the house"),
    ],
    "office_setup": [
        ("problem_1", ["Ashvale"], "prepare the office for a meeting",
         {"office": ["book into the shelf", "book into the shelf", "locker", "magazine_rack", "pen", "laptop"]},
         True, "there is no chest of drawers for the pen"),
    ],
    "pc_assembly": [  # CM's pc_assembly problems carry no relaxation_expected
        ("problem_1", ["Ashvale", "Bramford"], "assemble the computer on the desk",
         {"components": ["gpu", "psu", "case", "monitor", "keyboard", "mouse"]}, None, "all parts are there"),
    ],
    "general": [  # v2 form
        ("problem_1", ["Ashvale", "Bramford"], "decorate the living room for a party",
         {"to_add": {"rose": {"rooms": ["kitchen"], "count": 2}, "balloon": {"rooms": ["kitchen"], "count": 3},
                     "shoes": {"rooms": ["kitchen"], "count": 1}, "cups": {"rooms": ["kitchen"], "count": 2},
                     "fidget_spinner": {"rooms": ["kitchen"], "count": 1}}}, False, "a party"),
    ],
}
INIT_ROOM = {"Ashvale": "bedroom_3", "Bramford": "bedroom_4"}


def _classes(objects) -> list[str]:
    if "to_add" in objects:
        return [c for c, spec in objects["to_add"].items() for _ in range(spec["count"])]
    return [c for group in objects.values() for c in group]


def write_building(folder: Path, scene: str, added: list[tuple[str, int]], rng: np.random.Generator,
                   buildings: dict | None = None, cm_labels: bool = False) -> dict:
    """One instance's `<Scene>.npz` and `<Scene>.json`; returns {object id: (class, room, location)} of the
    added task objects. `buildings`: where to find `scene` (default `BUILDINGS`); `cm_labels`: label an added
    object as CM's published JSON does, spaces kept (`book into the shelf_38`), instead of underscored."""
    spec = (BUILDINGS if buildings is None else buildings)[scene]
    rooms_npz, rooms_json, objects_npz, objects_json = {}, {}, {}, {}
    for rid, cat, floor, (x, y), (w, d) in spec["rooms"]:
        rooms_npz[rid] = {"id": rid, "scene_category": cat, "floor_area": w * d, "floor_number": floor,
                          "location": np.array([x, y, Z[floor]]), "size": np.array([w, d, 3.0]),
                          "volume": w * d * 3.0, "parent_building": 1}
        rooms_json[str(rid)] = {"id": rid, "category": cat, "label": f"{cat}_{rid}", "bbox": [],
                                "objects_in_room": []}
    for oid, cls, room, loc, size, aff, mat, desc in spec["objects"]:
        objects_npz[oid] = {"id": oid, "class_": cls, "action_affordance": list(aff), "material": list(mat),
                            "floor_area": size[0] * size[1], "surface_coverage": 0.5, "location": np.array(loc),
                            "size": np.array(size), "volume": float(np.prod(size)), "tactile_texture": None,
                            "visual_texture": None, "parent_room": room, "description": ""}
        rec = {"id": oid, "class": cls, "parent_room": room, "description": desc, "bbox": [],
               "action_affordance": list(aff)}
        if cls is not None:  # the unlabelled object has no label either
            rec["label"] = f"{cls}_{oid}"
        objects_json[str(oid)] = rec
        if room is not None:
            rooms_json[str(room)]["objects_in_room"].append(oid)
    added_out = {}
    next_id = 100
    by_id = {r[0]: r for r in spec["rooms"]}
    for cls, rid in added:
        _, cat, floor, (x, y), (w, d) = by_id[rid]
        loc = np.array([x + rng.uniform(-w / 3, w / 3), y + rng.uniform(-d / 3, d / 3), Z[floor] - 0.6])
        noun = cls.replace("_", " ")
        desc = f"A {['red', 'blue', 'green'][next_id % 3]} {noun}."
        # CM's added objects: id, class_, action_affordance=[], location, parent_room, description (no size).
        objects_npz[next_id] = {"id": next_id, "class_": cls, "action_affordance": [], "location": loc,
                                "parent_room": rid, "description": desc}
        label = f"{cls}_{next_id}" if cm_labels else f"{cls}_{next_id}".replace(" ", "_")
        objects_json[str(next_id)] = {"id": next_id, "class": cls, "label": label,
                                      "parent_room": rid, "description": desc, "bbox": [], "action_affordance": []}
        rooms_json[str(rid)]["objects_in_room"].append(next_id)
        added_out[next_id] = (cls, rid, tuple(float(v) for v in loc))
        next_id += 1
    np.savez_compressed(folder / f"{scene}.npz", output=np.array({"room": rooms_npz, "object": objects_npz},
                                                                  dtype=object))
    (folder / f"{scene}.json").write_text(json.dumps(
        {"scene_info": {"total_rooms": len(rooms_json), "total_objects": len(objects_json)},
         "rooms": rooms_json, "objects": objects_json}, indent=1))
    return added_out


def _task_rooms(scene: str) -> list[int]:
    return [r[0] for r in BUILDINGS[scene]["rooms"] if r[1] not in ("staircase", "closet")]


def write_dataset(root: Path, seed: int = 0) -> dict:
    """Every split of `SPLITS` in CM's layout under `root`; returns {(split, scene, problem): added objects}."""
    rng = np.random.default_rng(seed)
    written = {}
    for split, problems in SPLITS.items():
        doc = {"problems": {}, "domain": {"actions": [{"name": "move_to", "description": "move between rooms"}],
                                          "objects": [{"type": "room", "description": "a room"}]}}
        for problem, scenes, task, objects, expected, description in problems:
            entry = {"description": description, "graph": scenes, "goal": task, "objects": objects}
            if expected is not None:
                entry["relaxation_expected"] = expected
            doc["problems"][problem] = entry
            for scene in scenes:
                folder = root / split / scene / problem
                folder.mkdir(parents=True)
                rooms = _task_rooms(scene)
                added = [(cls, rooms[int(rng.integers(len(rooms)))]) for cls in _classes(objects)]
                written[(split, scene, problem)] = write_building(folder, scene, added, rng)
                (folder / "task.txt").write_text(task + "\n")
                (folder / "init_loc.txt").write_text(INIT_ROOM[scene] + "\n")
                (folder / "description.txt").write_text(description + "\n")
        (root / f"{split}.json").write_text(json.dumps(doc, indent=1))
    return written


# Domain files in Context Matters' style (one small STRIPS domain per split: a robot that moves between rooms,
# picks things up and puts them somewhere), written here in our own words and names, so that the loader and
# the adapter are tested on predicates they do not know in advance. Where each file goes varies as it does
# in CM's repository: beside the split file, or inside the split folder.
_MOVE = """
    (:action go
        :parameters (?r - robot ?a - room ?b - room)
        :precondition (located ?r ?a)
        :effect (and (not (located ?r ?a)) (located ?r ?b)))
    (:action pick
        :parameters (?r - robot ?x - {item} ?a - room)
        :precondition (and (located ?r ?a) (located ?x ?a) (hand-free ?r))
        :effect (and (not (located ?x ?a)) (holding ?r ?x) (not (hand-free ?r))))
    (:action put-down
        :parameters (?r - robot ?x - {item} ?a - room)
        :precondition (and (located ?r ?a) (holding ?r ?x))
        :effect (and (not (holding ?r ?x)) (hand-free ?r) (located ?x ?a)))"""
_PLACE = """
    (:action place
        :parameters (?r - robot ?x - {item} ?s - surface ?a - room)
        :precondition (and (located ?r ?a) (located ?s ?a) (holding ?r ?x))
        :effect (and (not (holding ?r ?x)) (hand-free ?r) (placed-on ?x ?s)))
    (:action lift
        :parameters (?r - robot ?x - {item} ?s - surface ?a - room)
        :precondition (and (located ?r ?a) (located ?s ?a) (placed-on ?x ?s) (hand-free ?r))
        :effect (and (not (placed-on ?x ?s)) (holding ?r ?x) (not (hand-free ?r))))"""
_STORE = """
    (:action store
        :parameters (?r - robot ?x - {item} ?c - storage ?a - room)
        :precondition (and (located ?r ?a) (located ?c ?a) (holding ?r ?x))
        :effect (and (not (holding ?r ?x)) (hand-free ?r) (stored-in ?x ?c)))
    (:action retrieve
        :parameters (?r - robot ?x - {item} ?c - storage ?a - room)
        :precondition (and (located ?r ?a) (located ?c ?a) (stored-in ?x ?c) (hand-free ?r))
        :effect (and (not (stored-in ?x ?c)) (holding ?r ?x) (not (hand-free ?r))))"""


def _domain(name: str, types: str, predicates: str, actions: str, item: str = "portable") -> str:
    return (f"(define (domain {name})\n    (:requirements :strips :typing)\n    (:types\n        {types}\n    )\n"
            f"    (:predicates\n        (located ?x - thing ?a - room)\n        (holding ?r - robot ?x - {item})\n"
            f"        (hand-free ?r - robot)\n        {predicates}\n    )\n"
            + (_MOVE + actions).replace("{item}", item) + "\n)\n")


SPLIT_DOMAINS = {
    "dining_setup": _domain("table-setting", "room thing - object\n        robot portable surface - thing",
                            "(placed-on ?x - portable ?s - surface)", _PLACE),
    "general": _domain("fetch-and-place", "room thing - object\n        robot portable surface storage - thing",
                       "(placed-on ?x - portable ?s - surface)\n        (stored-in ?x - portable ?c - storage)",
                       _PLACE + _STORE),
    "office_setup": _domain("office-tidy", "room thing - object\n        robot portable surface storage - thing",
                            "(placed-on ?x - portable ?s - surface)\n        (stored-in ?x - portable ?c - storage)",
                            _PLACE + _STORE),
    "pc_assembly": _domain("desk-assembly", "room thing - object\n        robot grabbable surface - thing",
                           "(placed-on ?x - grabbable ?s - surface)", _PLACE, item="grabbable"),
    "house_cleaning": _domain(
        "tidy-kitchen", "room thing - object\n        robot portable bin sink - thing\n        waste tableware - portable",
        "(trashed ?x - waste)\n        (is-dirty ?x - tableware)", """
    (:action throw-in
        :parameters (?r - robot ?x - waste ?b - bin ?a - room)
        :precondition (and (located ?r ?a) (located ?b ?a) (holding ?r ?x))
        :effect (and (not (holding ?r ?x)) (hand-free ?r) (trashed ?x)))
    (:action rinse
        :parameters (?r - robot ?x - tableware ?s - sink ?a - room)
        :precondition (and (located ?r ?a) (located ?s ?a) (holding ?r ?x) (is-dirty ?x))
        :effect (not (is-dirty ?x)))"""),
    "laundry": _domain(
        "wash-and-dry", "room thing - object\n        robot portable appliance - thing\n"
        "        washing-machine dryer - appliance\n        cleanable - portable",
        "(loaded ?x - cleanable ?m - appliance)\n        (is-dirty ?x - cleanable)\n        (is-clean ?x - cleanable)\n"
        "        (is-wet ?x - cleanable)", """
    (:action load
        :parameters (?r - robot ?x - cleanable ?m - appliance ?a - room)
        :precondition (and (located ?r ?a) (located ?m ?a) (holding ?r ?x))
        :effect (and (not (holding ?r ?x)) (hand-free ?r) (loaded ?x ?m)))
    (:action unload
        :parameters (?r - robot ?x - cleanable ?m - appliance ?a - room)
        :precondition (and (located ?r ?a) (located ?m ?a) (loaded ?x ?m) (hand-free ?r))
        :effect (and (not (loaded ?x ?m)) (holding ?r ?x) (not (hand-free ?r))))
    (:action run-wash
        :parameters (?r - robot ?x - cleanable ?m - washing-machine ?a - room)
        :precondition (and (located ?r ?a) (located ?m ?a) (loaded ?x ?m) (is-dirty ?x))
        :effect (and (not (is-dirty ?x)) (is-clean ?x) (is-wet ?x)))
    (:action run-dry
        :parameters (?r - robot ?x - cleanable ?m - dryer ?a - room)
        :precondition (and (located ?r ?a) (located ?m ?a) (loaded ?x ?m) (is-wet ?x))
        :effect (not (is-wet ?x)))"""),
}
DOMAIN_PLACES = {"dining_setup": "{key}-domain.pddl", "general": "{key}-domain.pddl",
                 "office_setup": "{split}/{key}-domain.pddl", "pc_assembly": "{split}/domain.pddl",
                 "house_cleaning": "{key}-domain.pddl", "laundry": "{split}/{key}-domain.pddl"}


def write_domains(root: Path, splits=None) -> dict[str, Path]:
    """The CM-style domain file of each split (default: all of `SPLIT_DOMAINS`), where `DOMAIN_PLACES` says."""
    out = {}
    for split in splits or SPLIT_DOMAINS:
        path = root / DOMAIN_PLACES[split].format(split=split, key=split.replace("_", "-"))
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(SPLIT_DOMAINS[split])
        out[split] = path
    return out
