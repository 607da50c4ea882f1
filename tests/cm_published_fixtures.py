"""Small Context Matters datasets in the layout CM *publishes* (split JSON, instance folders with `<Scene>.npz`
and `<Scene>.json`, task.txt / init_loc.txt / description.txt, one domain file per split), each with a split
domain of the shape CM ships: house cleaning (`disposable` / `mop` under `grabbable`, a `bin`, a room's dirty
floor), laundry (`cleaning-supply` / `cleanable` under `grabbable`, a `washing-machine` to open, refill, load,
close and run) and office setup (`movable` furniture with things stored inside, and a take-out action whose
conditional effect passes a `grabbable` to a predicate that wants a `movable`: ill-typed as written, as CM's
office domain is).

Everything here is written in our own words (buildings, sentences, descriptions, domain texts); nothing is
copied from CM's dataset, whose licence is unstated. Only the *format* follows theirs: class names such as
`cola_can`, `dirty_shirt`, `book into the shelf` (spaces kept in the class and in the JSON label), task objects
added to a Gibson-like building with `parent_room` set, v1 `objects` groups in the split entry.
"""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
from cm_fixtures import write_building

# Two one-floor buildings of our own (id, category, floor, centre xy, size xy) with a few fixtures each.
BUILDINGS = {
    "Quillmere": {
        "rooms": [(1, "kitchen", "A", (2.0, 2.0), (4.0, 4.0)), (2, "living_room", "A", (6.1, 2.0), (4.0, 4.0)),
                  (3, "bedroom", "A", (2.0, 6.1), (4.0, 4.0)), (4, "bathroom", "A", (6.1, 6.1), (4.0, 4.0)),
                  (5, "corridor", "A", (10.2, 2.0), (4.0, 4.0))],
        "objects": [
            (10, "counter", 1, (0.5, 2.0, 0.45), (0.6, 1.6, 0.9), ["place on"], ["granite"], "A stone worktop."),
            (11, "sink", 1, (2.0, 0.4, 0.45), (0.8, 0.6, 0.9), ["wash"], ["steel"], "A steel basin."),
            (12, "sofa", 2, (6.1, 2.0, 0.4), (2.0, 0.9, 0.8), ["sit on"], ["fabric"], "A grey sofa."),
            (13, "bed", 3, (2.0, 6.1, 0.275), (1.6, 2.0, 0.55), ["lie on"], ["wood"], "A single bed."),
            (14, "chair", None, (10.9, 2.9, 0.45), (0.45, 0.45, 0.9), ["sit on"], ["wood"], "A stool."),
        ],
    },
    "Harrowgate": {
        "rooms": [(1, "living_room", "A", (2.0, 2.0), (4.0, 4.0)), (2, "bedroom", "A", (6.1, 2.0), (4.0, 4.0)),
                  (3, "kitchen", "A", (2.0, 6.1), (4.0, 4.0)), (4, "corridor", "A", (6.1, 6.1), (4.0, 4.0))],
        "objects": [
            (10, "sofa", 1, (2.0, 2.0, 0.4), (2.0, 0.9, 0.8), ["sit on"], ["fabric"], "A leather sofa."),
            (11, "bed", 2, (6.1, 2.0, 0.275), (1.6, 2.0, 0.55), ["lie on"], ["wood"], "A bed."),
            (12, "refrigerator", 3, (3.5, 7.5, 0.9), (0.7, 0.7, 1.8), ["open", "close"], ["metal"], "A fridge."),
            (13, "chair", 1, (3.0, 1.0, 0.45), (0.45, 0.45, 0.9), ["sit on"], ["wood"], "An office chair."),
        ],
    },
}
INIT_ROOM = {"Quillmere": "corridor_5", "Harrowgate": "corridor_4"}

# ---------------------------------------------------------------------------------------------------------
# Split domains of our own, in the shape of CM's (their action and predicate names are not used).

CLEANING_DOMAIN = """(define (domain tidy-house)
    (:requirements :strips :typing)
    (:types
        room thing - object
        robot grabbable bin - thing
        disposable mop - grabbable
    )
    (:predicates
        (in-room ?x - thing ?where - room)
        (carrying ?r - robot ?x - grabbable)
        (gripper-free ?r - robot)
        (binned ?x - disposable)
        (mop-clean ?m - mop)
        (mop-soiled ?m - mop)
        (floor-dirty ?where - room)
        (floor-clean ?where - room)
    )
    (:action walk
        :parameters (?r - robot ?from - room ?to - room)
        :precondition (in-room ?r ?from)
        :effect (and (not (in-room ?r ?from)) (in-room ?r ?to)))
    (:action pick-up
        :parameters (?r - robot ?x - grabbable ?where - room)
        :precondition (and (in-room ?r ?where) (in-room ?x ?where) (gripper-free ?r))
        :effect (and (not (in-room ?x ?where)) (carrying ?r ?x) (not (gripper-free ?r))))
    (:action set-down
        :parameters (?r - robot ?x - grabbable ?where - room)
        :precondition (and (in-room ?r ?where) (carrying ?r ?x))
        :effect (and (not (carrying ?r ?x)) (gripper-free ?r) (in-room ?x ?where)))
    (:action throw-out
        :parameters (?r - robot ?x - disposable ?b - bin ?where - room)
        :precondition (and (in-room ?r ?where) (in-room ?b ?where) (carrying ?r ?x))
        :effect (and (not (carrying ?r ?x)) (gripper-free ?r) (binned ?x)))
    (:action mop-floor
        :parameters (?r - robot ?m - mop ?where - room)
        :precondition (and (in-room ?r ?where) (carrying ?r ?m) (mop-clean ?m) (floor-dirty ?where))
        :effect (and (not (floor-dirty ?where)) (floor-clean ?where) (not (mop-clean ?m)) (mop-soiled ?m)))
    (:action rinse-mop
        :parameters (?r - robot ?m - mop)
        :precondition (and (carrying ?r ?m) (mop-soiled ?m))
        :effect (and (not (mop-soiled ?m)) (mop-clean ?m)))
)
"""

LAUNDRY_DOMAIN = """(define (domain wash-clothes)
    (:requirements :strips :typing)
    (:types
        room thing - object
        robot grabbable washing-machine - thing
        cleaning-supply cleanable - grabbable
    )
    (:predicates
        (in-room ?x - thing ?where - room)
        (carrying ?r - robot ?x - grabbable)
        (gripper-free ?r - robot)
        (is-closed ?m - washing-machine)
        (is-open ?m - washing-machine)
        (is-empty ?m - washing-machine)
        (topped-up ?m - washing-machine)
        (loaded-in ?x - cleanable ?m - washing-machine)
        (is-dirty ?x - cleanable)
        (is-clean ?x - cleanable)
    )
    (:action walk
        :parameters (?r - robot ?from - room ?to - room)
        :precondition (in-room ?r ?from)
        :effect (and (not (in-room ?r ?from)) (in-room ?r ?to)))
    (:action pick-up
        :parameters (?r - robot ?x - grabbable ?where - room)
        :precondition (and (in-room ?r ?where) (in-room ?x ?where) (gripper-free ?r))
        :effect (and (not (in-room ?x ?where)) (carrying ?r ?x) (not (gripper-free ?r))))
    (:action set-down
        :parameters (?r - robot ?x - grabbable ?where - room)
        :precondition (and (in-room ?r ?where) (carrying ?r ?x))
        :effect (and (not (carrying ?r ?x)) (gripper-free ?r) (in-room ?x ?where)))
    (:action open-door
        :parameters (?r - robot ?m - washing-machine ?where - room)
        :precondition (and (in-room ?r ?where) (in-room ?m ?where) (is-closed ?m) (gripper-free ?r))
        :effect (and (not (is-closed ?m)) (is-open ?m)))
    (:action close-door
        :parameters (?r - robot ?m - washing-machine ?where - room)
        :precondition (and (in-room ?r ?where) (in-room ?m ?where) (is-open ?m) (gripper-free ?r))
        :effect (and (not (is-open ?m)) (is-closed ?m)))
    (:action refill
        :parameters (?r - robot ?m - washing-machine ?s - cleaning-supply ?where - room)
        :precondition (and (in-room ?r ?where) (in-room ?m ?where) (carrying ?r ?s) (is-open ?m))
        :effect (topped-up ?m))
    (:action put-inside
        :parameters (?r - robot ?x - cleanable ?m - washing-machine ?where - room)
        :precondition (and (in-room ?r ?where) (in-room ?m ?where) (carrying ?r ?x) (is-open ?m))
        :effect (and (not (carrying ?r ?x)) (gripper-free ?r) (loaded-in ?x ?m) (not (is-empty ?m))))
    (:action wash
        :parameters (?r - robot ?x - cleanable ?m - washing-machine ?where - room)
        :precondition (and (in-room ?r ?where) (in-room ?m ?where) (loaded-in ?x ?m) (is-closed ?m)
                           (topped-up ?m) (is-dirty ?x))
        :effect (and (not (is-dirty ?x)) (is-clean ?x)))
)
"""

# Ill-typed as written, the way CM's office domain is: in `take-out`, the conditional effect says the *item*
# is empty, and `is-empty` wants a `movable`. Fast Downward reads it; a strict reader refuses it.
OFFICE_DOMAIN = """(define (domain office-rearrange)
    (:requirements :strips :typing :negative-preconditions :existential-preconditions :conditional-effects)
    (:types
        room thing - object
        robot grabbable movable - thing
    )
    (:predicates
        (in-room ?x - thing ?where - room)
        (carrying ?r - robot ?x - grabbable)
        (gripper-free ?r - robot)
        (stored-in ?x - grabbable ?m - movable)
        (is-empty ?m - movable)
    )
    (:action walk
        :parameters (?r - robot ?from - room ?to - room)
        :precondition (in-room ?r ?from)
        :effect (and (not (in-room ?r ?from)) (in-room ?r ?to)))
    (:action pick-up
        :parameters (?r - robot ?x - grabbable ?where - room)
        :precondition (and (in-room ?r ?where) (in-room ?x ?where) (gripper-free ?r))
        :effect (and (not (in-room ?x ?where)) (carrying ?r ?x) (not (gripper-free ?r))))
    (:action take-out
        :parameters (?r - robot ?x - grabbable ?m - movable ?where - room)
        :precondition (and (in-room ?r ?where) (in-room ?m ?where) (stored-in ?x ?m) (gripper-free ?r))
        :effect (and (not (stored-in ?x ?m)) (carrying ?r ?x) (not (gripper-free ?r))
                     (when (not (exists (?y - grabbable) (stored-in ?y ?m)))
                           (is-empty ?x))))
    (:action set-down
        :parameters (?r - robot ?x - grabbable ?where - room)
        :precondition (and (in-room ?r ?where) (carrying ?r ?x))
        :effect (and (not (carrying ?r ?x)) (gripper-free ?r) (in-room ?x ?where)))
    (:action shove
        :parameters (?r - robot ?m - movable ?from - room ?to - room)
        :precondition (and (in-room ?r ?from) (in-room ?m ?from) (is-empty ?m))
        :effect (and (not (in-room ?r ?from)) (not (in-room ?m ?from)) (in-room ?r ?to) (in-room ?m ?to)))
)
"""
OFFICE_ILL_TYPED_LINE = next(i for i, line in enumerate(OFFICE_DOMAIN.splitlines(), 1) if "(is-empty ?x)" in line)

# ---------------------------------------------------------------------------------------------------------
# Problems: (problem, scene, task, description, objects (CM's v1 groups), relaxation_expected,
# added task objects as (class, room id) in the order they get ids 100, 101, ...).

CLEANING_TASK = ("Take the cola can from the bathroom and the other rubbish to the rubbish bin, then mop the floor "
                 "in the kitchen and living room, and rinse the mop when you are done")
CLEANING = [
    ("problem_1", "Quillmere", CLEANING_TASK, "some rubbish lies about and two floors are muddy",
     {"cleaning_tools": ["mop", "rubbish_bin"], "things": ["cola_can", "banana_peel", "rotting_apple", "bucket"]},
     False,
     [("cola_can", 4), ("banana_peel", 1), ("rotting_apple", 3), ("mop", 4), ("rubbish_bin", 1), ("bucket", 4)]),
]
LAUNDRY_TASK = "Get every dirty shirt clean in the washing machine"
LAUNDRY = [
    ("problem_1", "Quillmere", LAUNDRY_TASK, "shirts to wash and a machine in the bathroom",
     {"clothes": ["shirt", "dirty_shirt", "dirty_shirt", "socks"],
      "laundry_things": ["washing_machine", "detergent", "dish_soap"], "kitchen_things": ["dirty_plate"]},
     False,
     [("shirt", 3), ("dirty_shirt", 3), ("dirty_shirt", 2), ("socks", 3), ("washing_machine", 4),
      ("detergent", 1), ("dish_soap", 1), ("dirty_plate", 1)]),
]
OFFICE_TASK = "Empty the shelf and the locker and move the desk into the bedroom"


def office_problems(into: str = " into the ") -> list:
    """The office split's problems; `into`: how the class says where a thing is stored (CM's published
    `book into the shelf`, or `book_into_the_shelf`). Contained things lie in other rooms than their
    container, as in CM's scenes: the class, not `parent_room`, says where they are."""
    book, laptop = f"book{into}shelf", f"laptop{into}locker"
    return [
        ("problem_1", "Harrowgate", OFFICE_TASK, "an office to rearrange",
         {"office_furniture": ["desk", "shelf", "locker"], "in_shelf": [book], "in_locker": [laptop]}, True,
         [("desk", 1), ("shelf", 1), ("locker", 2), (book, 3), (laptop, 1)]),
        ("problem_2", "Harrowgate", OFFICE_TASK, "an office to rearrange; the locker holds nothing",
         {"office_furniture": ["desk", "shelf", "locker"], "in_shelf": [book]}, False,
         [("desk", 1), ("shelf", 1), ("locker", 2), (book, 3)]),
    ]


def write_split_dataset(root: Path, split: str, problems: list, seed: int = 0) -> dict:
    """One split in CM's layout under `root` (no domain file); returns {(scene, problem): {object id: (class,
    room id, location)}} of the added task objects."""
    rng = np.random.default_rng(seed)
    doc = {"problems": {}, "domain": {"actions": [{"name": "walk", "description": "go to another room"}],
                                      "objects": [{"type": "room", "description": "a room"}]}}
    written = {}
    for problem, scene, task, description, objects, expected, added in problems:
        doc["problems"][problem] = {"description": description, "graph": [scene], "goal": task,
                                    "objects": objects, "relaxation_expected": expected}
        folder = root / split / scene / problem
        folder.mkdir(parents=True)
        written[(scene, problem)] = write_building(folder, scene, added, rng, buildings=BUILDINGS, cm_labels=True)
        (folder / "task.txt").write_text(task + "\n")
        (folder / "init_loc.txt").write_text(INIT_ROOM[scene] + "\n")
        (folder / "description.txt").write_text(description + "\n")
    (root / f"{split}.json").write_text(json.dumps(doc, indent=1))
    return written


SPLITS = {"house_cleaning": (CLEANING, CLEANING_DOMAIN), "laundry": (LAUNDRY, LAUNDRY_DOMAIN),
          "office_setup": (office_problems(), OFFICE_DOMAIN)}


def write_published(root: Path, splits=None, domain_name: str = "{key}-domain.pddl") -> dict[str, Path]:
    """The splits (default all of `SPLITS`) with their domains, each at `root / domain_name` (`{key}`: the
    split with dashes, `{split}`: as is); returns {split: domain path}."""
    out = {}
    for split in splits or SPLITS:
        problems, domain = SPLITS[split]
        write_split_dataset(root, split, problems)
        path = root / domain_name.format(key=split.replace("_", "-"), split=split)
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(domain)
        out[split] = path
    return out
