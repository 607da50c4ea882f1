"""`CMWorld`: the symbolic view of one Context Matters instance, a 3D scene graph plus the robot's room.

Objects keep their 3DSG labels (`plate_45`, `kitchen_3`), so a plan's arguments can be looked up in the
scene graph. The initial facts come from `servicerobot.scenes.gibson.to_household_scene`; states the 3DSG
records only in an object's description ("a dirty plate") or in its class name (`dirty_shirt`, as CM's
dataset writes state) become facts here (`dirty`, `wet`: from these alone, so the task generator's ground
truth and the world agree). A class outside the tables is typed by its words (`open_vocab.type_class`); its
`base` (`shirt` for `dirty_shirt`, `cup` for `cups`) lets a task that names the base class find it.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass, field

import numpy as np

from servicerobot.errors import SceneError
from servicerobot.pddl import Atom
from servicerobot.scenes.gibson_classes import class_key

__all__ = ["ROBOT", "CMWorld", "SceneObject", "world_of"]

ROBOT = "robot"


@dataclass(frozen=True)
class SceneObject:
    """One 3DSG object as a task sees it: label, class, household type, room and attributes."""

    label: str
    class_: str
    pddl_type: str | None
    room: str
    room_category: str
    affordances: tuple[str, ...] = ()
    materials: tuple[str, ...] = ()
    description: str = ""
    base: str = ""
    states: tuple[str, ...] = ()

    @property
    def dirty(self) -> bool:
        return "dirty" in self.states or "dirty" in self.description.lower().replace(",", " ").split()

    def text(self) -> str:
        """What the object is, in words: class, affordances, materials and description."""
        parts = [self.class_.replace("_", " ")]
        if self.affordances:
            parts.append("used to " + ", ".join(self.affordances))
        if self.materials:
            parts.append("made of " + ", ".join(self.materials))
        if self.description:
            parts.append(self.description)
        return "; ".join(parts)


@dataclass(frozen=True)
class CMWorld:
    """A scene's rooms and objects, its household PDDL objects and initial facts, and the robot's start."""

    scene_name: str
    rooms: dict[str, str]
    objects: dict[str, SceneObject]
    pddl_objects: dict[str, str]
    init: frozenset[Atom]
    init_loc: str
    robot: str = ROBOT
    _support: dict[str, str] = field(default_factory=dict, repr=False, compare=False)

    def support(self, label: str) -> str | None:
        """The fixture an item is on or inside, if any."""
        if not self._support:
            for atom in self.init:
                if atom.predicate in ("on", "inside"):
                    self._support[atom.args[0]] = atom.args[1]
        return self._support.get(label)

    def of_class(self, classes: Iterable[str], room_category: str | None = None) -> list[SceneObject]:
        """Objects of the given classes that are in the PDDL scene, optionally in rooms of one category."""
        wanted = set(classes)
        return sorted((o for o in self.objects.values() if (o.class_ in wanted or o.base in wanted)
                       and o.label in self.pddl_objects
                       and (room_category is None or o.room_category == room_category)),
                      key=lambda o: _label_key(o.label))

    def of_type(self, pddl_type: str) -> list[str]:
        """PDDL objects of one household type (exact type, no subtypes)."""
        return sorted((n for n, t in self.pddl_objects.items() if t == pddl_type), key=_label_key)

    def scene_text(self) -> str:
        """The scene as CM shows it to a language model: each room and its objects with descriptions."""
        lines = []
        for room in sorted(self.rooms, key=_label_key):
            lines.append(f"{room} ({self.rooms[room].replace('_', ' ')}):")
            for obj in sorted((o for o in self.objects.values() if o.room == room), key=lambda o: _label_key(o.label)):
                if obj.label not in self.pddl_objects:
                    continue
                where = self.support(obj.label)
                rel = ""
                if where is not None:
                    rel = f" [{'inside' if Atom('inside', (obj.label, where)) in self.init else 'on'} {where}]"
                state = " (dirty)" if Atom("dirty", (obj.label,)) in self.init else ""
                lines.append(f"  - {obj.label} ({self.pddl_objects[obj.label]}){rel}{state}: {obj.text()}")
        return "\n".join(lines)


def _label_key(label: str) -> tuple:
    head, _, tail = label.rpartition("_")
    return (head, int(tail)) if tail.isdigit() else (label, -1)


def world_of(sg, init_loc: str, seed: int = 0) -> CMWorld:
    """The symbolic world of a 3DSG (`servicerobot.scenes.gibson.SceneGraph3D`) with the robot in `init_loc`.

    Raises:
        SceneError: `init_loc` is not a room label of the scene.
    """
    from servicerobot.scenes.gibson import to_household_scene

    rooms = {r.label: r.category for r in sg.rooms.values()}
    if init_loc not in rooms:
        raise SceneError(f"init_loc {init_loc!r} is not a room of scene {sg.name!r}; rooms are {sorted(rooms)}")
    house = to_household_scene(sg, np.random.default_rng(seed), n_people=1, connectivity="full",
                               init_room=init_loc)
    name_of = {node: name for name, node in house.node_of.items()}
    room_name = {rid: name_of[("room", rid)] for rid in sg.rooms}
    types = house.objects
    pddl_objects = {n: t for n, t in types.items() if t != "person"}
    objects = {}
    for obj in sg.objects.values():
        name = name_of.get(("object", obj.id), obj.label)
        room = room_name.get(obj.parent_room, "")
        typing = sg.typing(obj.class_)
        objects[name] = SceneObject(name, class_key(obj.class_), pddl_objects.get(name), room,
                                    sg.rooms[obj.parent_room].category if obj.parent_room in sg.rooms else "",
                                    tuple(obj.action_affordance or ()), tuple(obj.material or ()),
                                    obj.description or "", typing.base if typing.how == "words" else "",
                                    typing.states)
    init = {a for a in house.init if a.predicate not in ("held-by", "dirty", "wet")
            and all(arg in pddl_objects for arg in a.args)}
    for label, obj in objects.items():
        if obj.dirty and label in pddl_objects:
            init.add(Atom("dirty", (label,)))
        if "wet" in obj.states and pddl_objects.get(label) == "clothing":
            init.add(Atom("wet", (label,)))
    return CMWorld(sg.name, {room_name[rid]: r.category for rid, r in sg.rooms.items()}, objects, pddl_objects,
                   frozenset(init), room_name[sg.room_by_label(init_loc).id], ROBOT)
