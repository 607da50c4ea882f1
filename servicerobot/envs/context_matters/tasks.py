"""Seeded Context Matters instances on generated 3D scene graphs, with their ground truth.

`generate_instance(domain, variant, rng)` builds a Gibson-like 3DSG, strips every object of the classes the
task uses, then adds exactly what the variant calls for: all the objects (feasible), too few of a class
with functionally equivalent objects to stand in (`shift:<class>`), too few and nothing equivalent
(`short:<class>`), no target fixture (`missing_target:<class>`), or no fixture an action needs
(`no:<type>`: no sink to wash in, no trash can, no dryer). Distractors that look alike but are not
acceptable (a frying pan for a plate, a knife for a fork) are added too.

The ground truth is computed from what was added, never by planning: `relaxation_expected` (the task as
given cannot be done) and the acceptable goals: the exact goal when feasible, else every goal that keeps
all the objects there are, fills missing slots with acceptable equivalents, and drops what cannot be done.
"""

from __future__ import annotations

import itertools
from dataclasses import dataclass, field

import numpy as np

from servicerobot.envs.context_matters.goals import (
    CLOTHES,
    DIRTY_DISHES,
    DOMAINS,
    GENERAL_CLASSES,
    GENERAL_TARGETS,
    TRASH,
    Requirement,
    literal,
    parse_task,
    render_task,
)
from servicerobot.envs.context_matters.objects import PROFILES
from servicerobot.errors import SceneError

__all__ = [
    "DISTRACTORS",
    "EQUIVALENTS",
    "MAX_ACCEPTABLE",
    "VARIANTS",
    "CMInstance",
    "generate_index",
    "generate_instance",
    "generate_set",
]

EQUIVALENTS: dict[str, tuple[str, ...]] = {
    "plate": ("bowl",),
    "glass": ("cup", "mug"),
    "cup": ("mug", "glass"),
    "pen": ("pencil",),
}
"""Ground truth: classes that may stand in for a missing class (the relaxer never reads this table)."""

DISTRACTORS: dict[str, str] = {
    "plate": "frying_pan", "fork": "knife", "glass": "vase", "cup": "vase", "pen": "scissors", "book": "magazine",
    "laptop": "cell_phone", "keyboard": "remote", "mouse": "remote", "apple": "orange", "monitor": "cell_phone",
    "computer": "cell_phone",
}
"""Objects that share attributes with a class but must not replace it."""

VARIANTS: dict[str, tuple[str, ...]] = {
    "dining_setup": ("feasible", "shift:plate", "shift:glass", "short:fork"),
    "house_cleaning": ("feasible", "no:sink", "no:trashcan"),
    "office_setup": ("feasible", "shift:pen", "short:book", "missing_target:chest_of_drawers"),
    "laundry": ("feasible", "no:dryer"),
    "pc_assembly": ("feasible", "short:keyboard", "short:mouse"),
    "general": ("feasible", "short:apple", "shift:cup"),
}
MAX_ACCEPTABLE = 256
_ROOMS = {
    "dining_setup": ("dining_room", "kitchen"),
    "house_cleaning": ("kitchen",),
    "office_setup": ("home_office", "bedroom", "living_room"),
    "laundry": ("bedroom", "bathroom"),
    "pc_assembly": ("home_office", "bedroom", "living_room"),
    "general": ("living_room", "kitchen", "bedroom"),
}
_CAPABILITY = {"sink": "sink", "trashcan": "trash_can", "dryer": "dryer", "washer": "washing_machine"}
# Generated classes whose equivalence to a task class is debatable (is a wine glass a glass?): stripped too.
_AMBIGUOUS = frozenset({"wine_glass", "spoon", "notebook", "pot", "pan"})
_RECEPTACLE_TYPES = frozenset({"surface", "shelf", "bed", "container", "openable", "sink", "fridge"})


@dataclass
class CMInstance:
    """One Context Matters problem: a 3DSG, the task sentence, the robot's room and the ground truth.

    `acceptable` holds goals as sorted tuples of PDDL literals; it is None for instances read from a CM
    dataset, which ships only `relaxation_expected` (and not even that for CM's pc_assembly: None there).
    `task_classes`: the object classes the dataset's split entry names (empty for generated instances).
    `domain_file`: the PDDL domain the dataset ships for this instance's split (CM's `dining-setup-domain.pddl`
    and the like), or None; `split_domain()` parses it and `domain_world()` writes the scene in it.
    """

    split: str
    problem: str
    scene: object
    task: str
    init_loc: str
    description: str
    relaxation_expected: bool | None
    acceptable: tuple[tuple[str, ...], ...] | None = None
    variant: str = ""
    task_classes: tuple[str, ...] = ()
    domain_file: str | None = None
    _world: object = field(default=None, repr=False, compare=False)
    _domain_world: object = field(default=None, repr=False, compare=False)

    @property
    def scene_name(self) -> str:
        return self.scene.name

    @property
    def key(self) -> str:
        return f"{self.split}/{self.scene_name}/{self.problem}"

    def coverage(self) -> dict:
        """How many of the scene's objects of `task_classes` reach the PDDL scene, and why each other does
        not (`servicerobot.scenes.real_3dsg.task_object_coverage`)."""
        from servicerobot.scenes.real_3dsg import task_object_coverage

        return task_object_coverage(self.scene, self.task_classes)

    def world(self):
        """The symbolic world (`CMWorld`) of this instance, built once."""
        if self._world is None:
            from servicerobot.envs.context_matters.world import world_of

            self._world = world_of(self.scene, self.init_loc)
        return self._world

    def split_domain(self):
        """The split's own PDDL domain (`domain_file`), or None when the dataset ships none.

        Raises:
            SceneError: the file is not a domain we can read (the message names it).
        """
        if self.domain_file is None:
            return None
        from servicerobot.envs.context_matters.cm_domain import load_split_domain

        return load_split_domain(self.domain_file)

    def domain_world(self):
        """The scene in the split's own domain (`cm_domain.DomainWorld`, built once), or None without one."""
        if self._domain_world is None and self.domain_file is not None:
            from servicerobot.envs.context_matters.cm_domain import domain_world

            self._domain_world = domain_world(self.world(), self.split_domain(), f"{self.task}. {self.description}")
        return self._domain_world


def _class_of(obj) -> str:
    from servicerobot.scenes.gibson_classes import class_key

    return class_key(obj.class_)


def _type_of(obj) -> str | None:
    from servicerobot.scenes.gibson_classes import class_type

    return class_type(obj.class_)


def _add(sg, class_: str, room_id: int, rng: np.random.Generator, dirty: bool = False) -> str:
    prof = PROFILES[class_]
    text = ("a dirty " + prof.description.removeprefix("a ").removeprefix("an ")) if dirty else prof.description
    return sg.add_object(class_, room_id, rng, description=text, action_affordance=prof.affordances,
                         material=prof.materials).label


def _rooms_with_receptacle(sg) -> list[int]:
    return sorted({o.parent_room for o in sg.objects.values() if _type_of(o) in _RECEPTACLE_TYPES})


def generate_instance(domain: str, variant: str, rng: np.random.Generator, problem: str = "problem_1",
                      split: str | None = None) -> CMInstance:
    """A seeded instance of `domain` (see `VARIANTS`); the scene comes from `generate_3dsg(rng)`.

    Raises:
        SceneError: unknown domain or variant.
    """
    from servicerobot.scenes.gibson import generate_3dsg

    if domain not in VARIANTS:
        raise SceneError(f"unknown Context Matters domain {domain!r}; domains are {DOMAINS}")
    if variant not in VARIANTS[domain]:
        raise SceneError(f"unknown variant {variant!r} for {domain}; variants are {VARIANTS[domain]}")
    kind, _, subject = variant.partition(":")
    sg = generate_3dsg(rng, int(rng.integers(5, 9)))
    general_class = subject if domain == "general" and subject else \
        GENERAL_CLASSES[int(rng.integers(len(GENERAL_CLASSES)))]
    general_target = GENERAL_TARGETS[int(rng.integers(len(GENERAL_TARGETS)))]
    # The task room: a preferred category when the scene has one.
    by_cat = {}
    for rid, room in sorted(sg.rooms.items()):
        by_cat.setdefault(room.category, []).append(rid)
    options = [rid for cat in _ROOMS[domain] for rid in by_cat.get(cat, [])] or sorted(sg.rooms)
    task_room = options[int(rng.integers(len(options)))]
    room_cat = sg.rooms[task_room].category
    n = int(rng.integers(2, 4)) if domain in ("dining_setup", "office_setup", "general") else 1
    if domain == "general" and general_class == "book":
        general_target = "bookshelf" if rng.random() < 0.5 else general_target
    text = render_task(domain, room_cat, n, general_class, general_target)
    goal = parse_task(text)

    # Strip every task class and every fixture class the task names; then add exactly what is wanted.
    task_classes = (set(PROFILES) | _AMBIGUOUS) - {"sink", "trash_can", "washing_machine", "dryer", "refrigerator",
                                                   "counter"}
    if domain == "general" and general_target == "counter":
        task_classes.add("counter")
    removed_types = {subject} if kind == "no" else set()
    for oid in [oid for oid, o in sg.objects.items()
                if _class_of(o) in task_classes or _type_of(o) in removed_types]:
        del sg.objects[oid]
    for cap in ({"house_cleaning": ("sink", "trashcan"), "laundry": ("washer", "dryer")}.get(domain, ())):
        if cap not in removed_types and not any(_type_of(o) == cap for o in sg.objects.values()):
            _add_fixture(sg, _CAPABILITY[cap], task_room, rng)

    slots = _fill(sg, goal.requirements, kind, subject, task_room, rng)
    receptacle_rooms = _rooms_with_receptacle(sg)
    init_loc = sg.rooms[sorted(sg.rooms)[int(rng.integers(len(sg.rooms)))]].label
    acceptable, expected, notes = _truth(goal.requirements, slots, removed_types)
    if expected != (kind != "feasible"):
        raise SceneError(f"generator bug: variant {variant} gave relaxation_expected={expected}")
    if not receptacle_rooms:
        raise SceneError("generator bug: no receptacle left in the scene")
    description = f"{domain.replace('_', ' ')} task ({variant}); " + ("; ".join(notes) or "everything it needs "
                                                                       "is in the house")
    return CMInstance(split or domain, problem, sg, text, init_loc, description, expected, acceptable, variant)


def _add_fixture(sg, class_: str, room_id: int, rng: np.random.Generator) -> str:
    return _add(sg, class_, room_id, rng)


@dataclass
class _Slot:
    requirement: Requirement
    primary: list[str] = field(default_factory=list)
    equivalents: list[str] = field(default_factory=list)
    target: str | None = None


def _fill(sg, requirements, kind: str, subject: str, task_room: int, rng: np.random.Generator) -> list[_Slot]:
    """Add the objects of each requirement as the variant says; return what was added per requirement."""
    slots = []
    targets: dict[str, str] = {}
    for req in requirements:
        slot = _Slot(req)
        if req.target is not None:
            if req.target not in targets and not (kind == "missing_target" and subject == req.target):
                targets[req.target] = _add_fixture(sg, req.target, task_room, rng)
            slot.target = targets.get(req.target)
        rooms = _rooms_with_receptacle(sg)
        if req.count is not None:
            have = req.count
            if kind in ("shift", "short") and subject == req.class_:
                have = int(rng.integers(1, req.count)) if req.count > 1 else 0
            for _ in range(have):
                slot.primary.append(_add(sg, req.class_, rooms[int(rng.integers(len(rooms)))], rng))
            if kind == "shift" and subject == req.class_:
                missing = req.count - have
                extra = int(rng.integers(0, 2))
                pool = EQUIVALENTS[req.class_]
                for _ in range(missing + extra):
                    cls = pool[int(rng.integers(len(pool)))]
                    slot.equivalents.append(_add(sg, cls, rooms[int(rng.integers(len(rooms)))], rng))
            distractor = DISTRACTORS.get(req.class_)
            if distractor and (kind == "short" and subject == req.class_ or rng.random() < 0.4):
                _add(sg, distractor, rooms[int(rng.integers(len(rooms)))], rng)
        elif req.relation == "discarded" or req.relation == "clean":
            pool = TRASH if req.relation == "discarded" else (DIRTY_DISHES if req.classes == DIRTY_DISHES else CLOTHES)
            dirty = req.relation == "clean"
            for _ in range(int(rng.integers(1, 3))):
                cls = pool[int(rng.integers(len(pool)))]
                slot.primary.append(_add(sg, cls, task_room, rng, dirty=dirty))
            # Not in the goal: the same kind of thing clean, or in another room.
            cls = pool[int(rng.integers(len(pool)))]
            if dirty:
                _add(sg, cls, task_room, rng, dirty=False)
            others = [r for r in rooms if sg.rooms[r].category != sg.rooms[task_room].category]
            if others:
                _add(sg, cls, others[int(rng.integers(len(others)))], rng, dirty=dirty)
        else:  # "dry": the same clothes as the "clean" requirement before it
            slot.primary = list(slots[-1].primary)
        slots.append(slot)
    return slots


def _needs(req: Requirement) -> str | None:
    """The fixture type an action towards this requirement needs."""
    if req.relation == "discarded":
        return "trashcan"
    if req.relation == "clean":
        return "washer" if req.classes == CLOTHES else "sink"
    if req.relation == "dry":
        return "dryer"
    return None


def _truth(requirements, slots: list[_Slot], removed_types: set[str]):
    """(acceptable goals, relaxation_expected, notes) from what was added."""
    choices: list[list[tuple[str, ...]]] = []
    expected = False
    notes = []
    for req, slot in zip(requirements, slots):
        need = _needs(req)
        if need in removed_types:
            expected = True
            notes.append(f"no {need} in the house, so '{req.relation}' cannot be done and is dropped")
            continue
        if req.count is None:
            choices.append([tuple(literal(req.relation, o) for o in slot.primary)])
            continue
        if slot.target is None:
            expected = True
            notes.append(f"there is no {req.target.replace('_', ' ')}, so the {req.class_} requirement is dropped")
            continue
        n, have = req.count, len(slot.primary)
        if have >= n:
            options = [list(c) for c in itertools.combinations(slot.primary, n)]
        else:
            expected = True
            k = n - have
            if len(slot.equivalents) >= k:
                options = [slot.primary + list(c) for c in itertools.combinations(slot.equivalents, k)]
                notes.append(f"only {have} {req.class_}(s) of {n}; equivalent objects can stand in")
            else:
                options = [slot.primary + slot.equivalents]
                notes.append(f"only {have} {req.class_}(s) of {n} and nothing equivalent, so fewer are used")
        choices.append([tuple(literal(req.relation, o, slot.target) for o in opt) for opt in options])
    goals = set()
    for combo in itertools.product(*choices):
        goals.add(tuple(sorted(lit for part in combo for lit in part)))
        if len(goals) >= MAX_ACCEPTABLE:
            break
    return tuple(sorted(goals)), expected, notes


def generate_set(n: int, seed: int = 0, feasible_share: float = 0.45) -> list[CMInstance]:
    """`n` instances over the six domains (round robin), each from `np.random.default_rng([seed, i])`."""
    return [generate_index(i, seed, feasible_share) for i in range(n)]


def generate_index(index: int, seed: int = 0, feasible_share: float = 0.45) -> CMInstance:
    """Instance `index` of the generated set of `seed` (independent of the set's size)."""
    rng = np.random.default_rng([seed, index])
    domain = DOMAINS[index % len(DOMAINS)]
    variants = VARIANTS[domain]
    variant = "feasible" if rng.random() < feasible_share else variants[1 + int(rng.integers(len(variants) - 1))]
    return generate_instance(domain, variant, rng, problem=f"problem_{index}")
