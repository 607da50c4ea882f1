"""The 3D scene graph of a building (Armeni et al. 3DSG): rooms and objects with class, affordances, materials
and boxes; which box holds which (`support_of`), which rooms share a wall (`adjacent_rooms`), and placing
furniture and objects in rooms.

Coordinates are Gibson's: metres, z up; `location` is a box centre and `size` its extent along x, y, z.
Files are read and written by `servicerobot.scenes.gibson_files`; `servicerobot.scenes.gibson` generates
buildings and turns one into a household scene.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field, replace
from typing import Any

import numpy as np

from servicerobot.errors import SceneError
from servicerobot.limits import excerpt
from servicerobot.scenes.gibson_classes import (
    GENERATED_CLASSES,
    ITEM_TYPES,
    RECEPTACLE_ITEMS,
    class_key,
    class_type,
)

__all__ = [
    "DOOR_WIDTH",
    "ROOM_HEIGHT",
    "SINK_DEPTH",
    "Object3D",
    "Room3D",
    "SceneGraph3D",
    "Vec3",
    "adjacent_rooms",
    "fill_geometry",
    "place_spot",
    "rest_bottom",
    "support_of",
]

Vec3 = tuple[float, float, float]
ROOM_HEIGHT = 3.0
DOOR_WIDTH = 1.2
SINK_DEPTH = 0.2  # the basin of a sink: its top 20 cm are open
_CONTAINER_TYPES = frozenset({"container", "openable", "sink", "fridge", "washer", "dryer", "trashcan"})
_SURFACE_TYPES = frozenset({"surface", "shelf", "bed"})
_TOP_OPEN = frozenset({"container", "trashcan", "sink"})


def _v3(value: Any, what: str) -> Vec3:
    try:
        out = tuple(float(x) for x in np.asarray(value, dtype=float).reshape(-1))
    except (TypeError, ValueError) as error:
        raise SceneError(f"{what} must be three numbers, got {excerpt(value)}") from error
    if len(out) != 3 or not all(math.isfinite(x) for x in out):
        raise SceneError(f"{what} must be three finite numbers, got {excerpt(value)}")
    return out  # type: ignore[return-value]


@dataclass(frozen=True)
class Room3D:
    """A room node: id, Gibson scene category, label `<category>_<id>`, box centre and size, floor area, and
    the floor it is on (`floor_number`, e.g. "A"; "" when the file does not say)."""

    id: int
    category: str
    label: str = ""
    location: Vec3 = (0.0, 0.0, 0.0)
    size: Vec3 = (0.0, 0.0, 0.0)
    floor_area: float = 0.0
    floor: str = ""

    def __post_init__(self) -> None:
        object.__setattr__(self, "location", _v3(self.location, f"room {self.id} location"))
        object.__setattr__(self, "size", _v3(self.size, f"room {self.id} size"))
        if not self.label:
            object.__setattr__(self, "label", f"{self.category}_{self.id}".replace(" ", "_"))
        if not self.floor_area:
            object.__setattr__(self, "floor_area", round(self.size[0] * self.size[1], 3))


@dataclass(frozen=True)
class Object3D:
    """An object node: id, class, label `<class>_<id>`, parent room id, box, affordances, materials, text."""

    id: int
    class_: str
    label: str = ""
    parent_room: int = 0
    location: Vec3 = (0.0, 0.0, 0.0)
    size: Vec3 = (0.0, 0.0, 0.0)
    action_affordance: tuple[str, ...] = ()
    material: tuple[str, ...] = ()
    description: str = ""

    def __post_init__(self) -> None:
        object.__setattr__(self, "location", _v3(self.location, f"object {self.id} location"))
        object.__setattr__(self, "size", _v3(self.size, f"object {self.id} size"))
        object.__setattr__(self, "action_affordance", tuple(self.action_affordance))
        object.__setattr__(self, "material", tuple(self.material))
        if not self.label:
            object.__setattr__(self, "label", f"{self.class_}_{self.id}".replace(" ", "_"))

    @property
    def box(self) -> tuple[np.ndarray, np.ndarray]:
        """(min corner, max corner) of the bounding box."""
        c, s = np.asarray(self.location), np.asarray(self.size) / 2
        return c - s, c + s


@dataclass
class SceneGraph3D:
    """A building: rooms and the objects in them (ids are per layer, as in the 3DSG files); `report` is the
    loader's `servicerobot.scenes.real_3dsg.LoadReport` (None for generated graphs)."""

    name: str
    rooms: dict[int, Room3D] = field(default_factory=dict)
    objects: dict[int, Object3D] = field(default_factory=dict)
    report: Any = field(default=None, repr=False, compare=False)

    def typing(self, class_: str):
        """How this graph types a class (`open_vocab.ClassTyping`): as its loader decided (`report.typing`,
        with the similarity the loader was given), else by `open_vocab.type_class`."""
        from servicerobot.scenes.open_vocab import type_class

        known = self.report.typing.get(class_key(class_)) if self.report is not None else None
        return known if known is not None else type_class(class_)

    def objects_in(self, room_id: int) -> list[Object3D]:
        """Objects whose parent is `room_id`, by id."""
        return [o for _, o in sorted(self.objects.items()) if o.parent_room == room_id]

    def room_by_label(self, label: str) -> Room3D:
        for room in self.rooms.values():
            if room.label == label:
                return room
        raise SceneError(f"no room labelled {label!r} in {self.name}; rooms are "
                         f"{sorted(r.label for r in self.rooms.values())}")

    def object_by_label(self, label: str) -> Object3D:
        for obj in self.objects.values():
            if obj.label == label:
                return obj
        raise SceneError(f"no object labelled {label!r} in {self.name}")

    def add_object(self, class_: str, room_id: int, rng: np.random.Generator, description: str = "",
                   action_affordance: tuple[str, ...] | None = None, material: tuple[str, ...] | None = None,
                   size: Vec3 | None = None) -> Object3D:
        """Add an object of `class_` to a room: on or in a receptacle that fits it, else on the floor."""
        if room_id not in self.rooms:
            raise SceneError(f"no room with id {room_id} in {self.name}; ids are {sorted(self.rooms)}")
        info = GENERATED_CLASSES.get(class_key(class_))
        size = size or (info.size if info else (0.2, 0.2, 0.2))
        new_id = max(self.objects, default=0) + 1
        obj = Object3D(new_id, class_, "", room_id, (0.0, 0.0, 0.0), tuple(float(x) for x in size),
                       tuple(action_affordance if action_affordance is not None else info.affordance if info else ()),
                       tuple(material if material is not None else info.materials[:1] if info else ()),
                       description)
        obj = _place_in_room(obj, self, rng)
        self.objects[new_id] = obj
        return obj

    def copy(self) -> SceneGraph3D:
        return SceneGraph3D(self.name, dict(self.rooms), dict(self.objects), self.report)

    def validate(self, where: str = "") -> SceneGraph3D:
        """Check references and labels; raise `SceneError` naming the first problem."""
        where = where or self.name
        if not self.rooms:
            raise SceneError(f"{where}: the scene graph has no rooms")
        for oid, obj in self.objects.items():
            if obj.parent_room not in self.rooms:
                raise SceneError(f"{where}: object {oid} ({obj.label}) has parent_room {obj.parent_room!r}, "
                                 f"which is not a room id ({sorted(self.rooms)})")
        return self


# ---------------------------------------------------------------------------------------------- geometry
def support_of(sg: SceneGraph3D, obj: Object3D, tolerance: float = 0.06) -> tuple[str, int] | None:
    """What holds `obj`, from the boxes of the objects of its room: ("inside" | "on", id) or None.

    Inside: the object's centre lies within the other (larger) box; the smallest such box wins. On: its
    footprint centre lies over the other's footprint and its bottom is within `tolerance` of the other's
    top; the closest top wins. Inside beats on.
    """
    lo, hi = obj.box
    centre = (lo + hi) / 2
    best: tuple[int, float, str, int] | None = None
    for other in sg.objects_in(obj.parent_room):
        if other.id == obj.id:
            continue
        olo, ohi = other.box
        volume = float(np.prod(ohi - olo))
        if np.all(centre > olo - 1e-6) and np.all(centre < ohi + 1e-6) and volume > float(np.prod(hi - lo)):
            cand = (0, volume, "inside", other.id)
        elif (np.all(centre[:2] >= olo[:2] - 1e-6) and np.all(centre[:2] <= ohi[:2] + 1e-6)
              and abs(lo[2] - ohi[2]) <= tolerance):
            cand = (1, abs(float(lo[2] - ohi[2])), "on", other.id)
        else:
            continue
        if best is None or cand[:2] < best[:2]:
            best = cand
    return None if best is None else (best[2], best[3])


def adjacent_rooms(sg: SceneGraph3D, gap: float = 0.3, overlap: float = 1.0) -> list[tuple[int, int]]:
    """Pairs of rooms on one floor whose boxes touch (within `gap`) along a shared wall of at least `overlap`
    metres. Rooms on different floors (`floor`, or height ranges that do not overlap) are never adjacent:
    floors meet only by stairs (`servicerobot.scenes.real_3dsg.stair_links`)."""
    out = []
    rooms = sorted(sg.rooms.values(), key=lambda r: r.id)
    for i, a in enumerate(rooms):
        alo = np.asarray(a.location) - np.asarray(a.size) / 2
        ahi = np.asarray(a.location) + np.asarray(a.size) / 2
        for b in rooms[i + 1:]:
            blo = np.asarray(b.location) - np.asarray(b.size) / 2
            bhi = np.asarray(b.location) + np.asarray(b.size) / 2
            if a.floor != b.floor or (a.size[2] and b.size[2] and min(ahi[2], bhi[2]) - max(alo[2], blo[2]) <= 0.5):
                continue
            sep = np.maximum(blo - ahi, alo - bhi)[:2]  # > 0: apart along that axis
            shared = np.minimum(ahi, bhi)[:2] - np.maximum(alo, blo)[:2]
            for axis in (0, 1):
                if -gap <= sep[axis] <= gap and shared[1 - axis] >= overlap:
                    out.append((a.id, b.id))
                    break
    return out


def _wall_slots(room: Room3D) -> list[list[float]]:
    """Free stretches along the four walls, skipping the middle of each wall (where doors go)."""
    w, d = room.size[0], room.size[1]
    slots = []
    for wall, length in enumerate((w, d, w, d)):
        half_door = DOOR_WIDTH / 2 + 0.15
        slots.append([wall, 0.1, length / 2 - half_door])
        slots.append([wall, length / 2 + half_door, length - 0.1])
    return slots


def _against_wall(room: Room3D, wall: int, start: float, width: float, depth: float) -> tuple[float, float, bool]:
    """Centre (x, y) of a footprint `width` along wall `wall` from `start`, `depth` into the room; and whether
    the footprint's long side runs along y (walls 1 and 3)."""
    x0 = room.location[0] - room.size[0] / 2
    y0 = room.location[1] - room.size[1] / 2
    x1, y1 = x0 + room.size[0], y0 + room.size[1]
    along = start + width / 2
    if wall == 0:   # south wall, left to right
        return x0 + along, y0 + depth / 2 + 0.02, False
    if wall == 1:   # east wall, bottom to top
        return x1 - depth / 2 - 0.02, y0 + along, True
    if wall == 2:   # north wall, right to left
        return x1 - along, y1 - depth / 2 - 0.02, False
    return x0 + depth / 2 + 0.02, y1 - along, True  # west wall, top to bottom


def _place_furniture(room: Room3D, classes: list[str], rng: np.random.Generator,
                     first_id: int) -> list[Object3D]:
    """Furniture along the walls, clear of the doorways and of each other (corners included)."""
    slots = _wall_slots(room)
    order = rng.permutation(len(slots))
    placed: list[Object3D] = []

    def clear(x: float, y: float, size: Vec3) -> bool:
        return all(abs(x - o.location[0]) * 2 >= size[0] + o.size[0] + 0.1
                   or abs(y - o.location[1]) * 2 >= size[1] + o.size[1] + 0.1 for o in placed)

    for class_ in classes:
        info = GENERATED_CLASSES[class_]
        width, depth = max(info.size[:2]), min(info.size[:2])
        done = False
        for k in order:
            wall, start, end = slots[k]
            while not done and end - start >= width:
                x, y, along_y = _against_wall(room, wall, start, width, depth)
                size = (depth, width, info.size[2]) if along_y else (width, depth, info.size[2])
                if not clear(x, y, size):
                    start += 0.2
                    continue
                slots[k][1] = start + width + 0.05
                material = (info.materials[int(rng.integers(len(info.materials)))],)
                noun = class_.replace("_", " ")
                placed.append(Object3D(first_id + len(placed), class_, "", room.id,
                                       (round(x, 3), round(y, 3), round(info.size[2] / 2, 3)), size,
                                       info.affordance, material, f"a {material[0]} {noun}"))
                done = True
            if done:
                break
    return placed


def _turned(size: Vec3, holder: Object3D) -> Vec3:
    """`size` turned by 90 degrees when only that way its footprint fits the holder's."""
    hx, hy = holder.size[0], holder.size[1]
    if (size[0] > hx or size[1] > hy) and size[1] <= hx and size[0] <= hy:
        return size[1], size[0], size[2]
    return size


def place_spot(holder: Object3D, size: Vec3, relation: str, rng: np.random.Generator) -> Vec3:
    """A position for a box of `size` on top of or inside `holder`."""
    lo, hi = holder.box
    xy = []
    for axis in (0, 1):
        room = (hi[axis] - lo[axis]) / 2 - size[axis] / 2 - 0.03
        off = float(rng.uniform(-room, room)) if room > 0 else 0.0
        xy.append(round(float(lo[axis] + hi[axis]) / 2 + off, 3))
    z = rest_bottom(holder, size[2], relation) + size[2] / 2
    return xy[0], xy[1], round(z, 3)


def rest_bottom(holder: Object3D, height: float, relation: str) -> float:
    """The height of the bottom of a lone item `height` tall on or inside `holder`, where `place_spot` puts
    it: just over a surface's top; in an open-top container (a sink's basin, a basket) as high as its top
    just over the rim (things there pile up to the rim), never below its floor; on any other one's floor."""
    lo, hi = holder.box
    if relation == "on":
        return float(hi[2]) + 0.002
    if class_type(holder.class_) in _TOP_OPEN:
        floor = float(hi[2]) - SINK_DEPTH if class_type(holder.class_) == "sink" else float(lo[2])
        return max(floor + 0.035, float(hi[2]) + 0.02 - height)
    return float(lo[2]) + min(0.08, (float(hi[2]) - float(lo[2])) / 4)


def _place_in_room(obj: Object3D, sg: SceneGraph3D, rng: np.random.Generator) -> Object3D:
    """Put `obj` on or inside a receptacle of its room that fits its type, else on the floor."""
    kind = class_type(obj.class_)
    candidates = []
    for other in sg.objects_in(obj.parent_room):
        other_type = class_type(other.class_)
        if other.id == obj.id or other_type not in (_SURFACE_TYPES | _CONTAINER_TYPES) - {"trashcan"}:
            continue
        if kind in ITEM_TYPES or kind is None:
            held = RECEPTACLE_ITEMS.get(class_key(other.class_), ("", ()))[1]
            candidates.append((class_key(obj.class_) not in held, other.id, other))
    if candidates and (kind in ITEM_TYPES or kind is None):
        candidates.sort(key=lambda c: (c[0], c[1]))
        best = [c for c in candidates if c[0] == candidates[0][0]]
        holder = best[int(rng.integers(len(best)))][2]
        relation = "on" if class_type(holder.class_) in _SURFACE_TYPES else "inside"
        size = _turned(obj.size, holder)
        return replace(obj, size=size, location=place_spot(holder, size, relation, rng))
    room = sg.rooms[obj.parent_room]
    half = np.asarray(room.size[:2]) / 2 - np.asarray(obj.size[:2]) / 2 - 0.3
    off = [float(rng.uniform(-h, h)) if h > 0 else 0.0 for h in half]
    return replace(obj, location=(round(room.location[0] + off[0] * 0.5, 3),
                                  round(room.location[1] + off[1] * 0.5, 3), round(obj.size[2] / 2, 3)))


def fill_geometry(sg: SceneGraph3D) -> SceneGraph3D:
    """Give rooms and objects without boxes a deterministic layout (Context Matters' JSON has empty bboxes)."""
    rng = np.random.default_rng(0)
    rooms = sorted(sg.rooms.values(), key=lambda r: r.id)
    cols = math.ceil(math.sqrt(len(rooms)))
    for k, room in enumerate(rooms):
        if all(room.size):
            continue
        cx, cy = k % cols, k // cols
        sg.rooms[room.id] = replace(room, location=(cx * 4.5 + 2.25, cy * 4.5 + 2.25, ROOM_HEIGHT / 2),
                                    size=(4.5, 4.5, ROOM_HEIGHT), floor_area=room.floor_area or 20.25)
    for room in rooms:
        objs = sg.objects_in(room.id)
        fixtures = [o for o in objs if not all(o.size) and class_type(o.class_) not in ITEM_TYPES]
        furniture_classes = [class_key(o.class_) for o in fixtures]
        known = [c if c in GENERATED_CLASSES else "shelf" for c in furniture_classes]
        placed = _place_furniture(sg.rooms[room.id], known, rng, 0)
        for obj, spot in zip(fixtures, placed):
            sg.objects[obj.id] = replace(obj, location=spot.location, size=spot.size)
        for obj in fixtures[len(placed):]:  # no wall space left: stand it in the room
            info = GENERATED_CLASSES.get(class_key(obj.class_))
            sg.objects[obj.id] = _place_in_room(replace(obj, size=info.size if info else (0.5, 0.5, 0.8)), sg, rng)
        for obj in objs:
            if all(obj.size) or obj in fixtures:
                continue
            info = GENERATED_CLASSES.get(class_key(obj.class_))
            sg.objects[obj.id] = _place_in_room(replace(obj, size=info.size if info else (0.2, 0.2, 0.2)), sg, rng)
    return sg
