"""Gibson 3D scene graphs (Armeni et al. 3DSG): rooms and objects with class, affordances, materials and boxes.

Reads and writes Stanford's `.npz` (a pickled dict under `output` with `room` and `object` dicts; loaded with a
restricted unpickler, so a file can carry only plain data) and Context Matters' scene `.json`; generates
seeded Gibson-like scenes; turns a graph into a `HouseholdScene` so the household world runs on it.

Coordinates are Gibson's: metres, z up; `location` is a box centre and `size` its extent along x, y, z.
"""

from __future__ import annotations

import io
import json
import math
import pickle
import re
import zipfile
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

import numpy as np

from servicerobot.errors import SceneError
from servicerobot.files import write_atomic
from servicerobot.limits import excerpt, expanded_size, open_bounded, read_text_bounded, shorten
from servicerobot.pddl import Atom
from servicerobot.scenes.gibson_classes import (
    CLASS_TO_TYPE,
    EXCLUDED,
    FIXTURE_TYPES,
    GENERATED_CLASSES,
    ITEM_TYPES,
    PERISHABLE,
    RECEPTACLE_ITEMS,
    ROOM_CATEGORIES,
    class_key,
    class_type,
)
from servicerobot.scenes.household import ROBOT, Entity, HouseholdScene, Room
from servicerobot.scenes.source import SceneSource
from servicerobot.scenes.vocabulary import COLOURS, MARKS, PEOPLE_NAMES

__all__ = [
    "CLASS_TO_TYPE",
    "EXCLUDED",
    "MAX_GENERATED_ROOMS",
    "MAX_OBJECTS_PER_ROOM",
    "GibsonScene",
    "GibsonScenes",
    "Object3D",
    "Room3D",
    "SceneGraph3D",
    "adjacent_rooms",
    "class_type",
    "generate_3dsg",
    "load_3dsg",
    "load_building",
    "place_spot",
    "save_json",
    "save_npz",
    "support_of",
    "to_household_scene",
]

Vec3 = tuple[float, float, float]
MAX_GENERATED_ROOMS = 12
MAX_OBJECTS_PER_ROOM = 20
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
    if relation == "on":
        z = float(hi[2]) + size[2] / 2 + 0.002
    elif class_type(holder.class_) in _TOP_OPEN:
        # Things in an open-top container (a sink's basin, a basket) pile up to just over the rim.
        floor = float(hi[2]) - SINK_DEPTH if class_type(holder.class_) == "sink" else float(lo[2])
        z = max(floor + 0.035 + size[2] / 2, float(hi[2]) + 0.02 - size[2] / 2)
    else:
        z = float(lo[2]) + min(0.08, (hi[2] - lo[2]) / 4) + size[2] / 2
    return xy[0], xy[1], round(z, 3)


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


# ---------------------------------------------------------------------------------------------- generator
_BASE_ROOMS = ("kitchen", "living_room", "bedroom", "bathroom")
_EXTRA_ROOMS = ("bedroom", "dining_room", "home_office", "corridor", "utility_room", "bathroom", "childs_room",
                "storage_room", "television_room", "bedroom")
_SCENE_NAMES = ("Allenwood", "Beechcroft", "Cedarvale", "Dunmore", "Elmhurst", "Fairbourne", "Glenrock",
                "Hollister", "Ivydale", "Juniper", "Kestrel", "Larchmont", "Maplewood", "Northfield")


def generate_3dsg(rng: np.random.Generator, n_rooms: int | None = None, name: str | None = None) -> SceneGraph3D:
    """A seeded Gibson-like building: rooms of realistic categories and sizes on a grid (every neighbour
    shares a wall with a doorway in its middle), furniture along the walls, small objects on or in it."""
    if n_rooms is None:
        n_rooms = int(rng.integers(4, 9))
    if not 2 <= n_rooms <= MAX_GENERATED_ROOMS:
        raise SceneError(f"n_rooms must be in [2, {MAX_GENERATED_ROOMS}], got {n_rooms}")
    if name is None:
        name = f"{_SCENE_NAMES[int(rng.integers(len(_SCENE_NAMES)))]}{int(rng.integers(1000)):03d}"
    categories = list(_BASE_ROOMS[:n_rooms])
    extras = list(_EXTRA_ROOMS)
    while len(categories) < n_rooms:
        categories.append(extras.pop(int(rng.integers(len(extras)))) if extras else "bedroom")
    cols = math.ceil(math.sqrt(n_rooms))
    rows = math.ceil(n_rooms / cols)
    widths = rng.uniform(3.2, 6.0, size=cols).round(2)
    depths = rng.uniform(3.2, 5.2, size=rows).round(2)
    cells = [(i % cols, i // cols) for i in range(n_rooms)]
    # Big categories take big cells.
    by_area = sorted(range(n_rooms), key=lambda i: -widths[cells[i][0]] * depths[cells[i][1]])
    by_need = sorted(range(n_rooms), key=lambda i: -sum(ROOM_CATEGORIES[categories[i]].area))
    cell_of = {by_need[k]: cells[by_area[k]] for k in range(n_rooms)}
    xs, ys = np.concatenate([[0], np.cumsum(widths)]), np.concatenate([[0], np.cumsum(depths)])
    sg = SceneGraph3D(name)
    for i, category in enumerate(categories):
        cx, cy = cell_of[i]
        w, d = float(widths[cx]), float(depths[cy])
        sg.rooms[i + 1] = Room3D(i + 1, category, "", (round(xs[cx] + w / 2, 3), round(ys[cy] + d / 2, 3),
                                                       ROOM_HEIGHT / 2), (w, d, ROOM_HEIGHT))
    next_id = 1
    for room in sg.rooms.values():
        wanted = [c for c, p in ROOM_CATEGORIES[room.category].furniture if rng.random() < p]
        furniture = _place_furniture(room, wanted, rng, next_id)
        next_id += len(furniture)
        for f in furniture:
            sg.objects[f.id] = f
        count = len(furniture)
        for f in furniture:
            relation, classes = RECEPTACLE_ITEMS.get(f"{room.category}/{f.class_}",
                                                     RECEPTACLE_ITEMS.get(f.class_, ("", ())))
            if not classes:
                continue
            for _ in range(int(rng.integers(0, 4 if relation == "on" else 3))):
                if count >= MAX_OBJECTS_PER_ROOM:
                    break
                class_ = classes[int(rng.integers(len(classes)))]
                info = GENERATED_CLASSES[class_]
                material = (info.materials[int(rng.integers(len(info.materials)))],)
                colour = COLOURS[int(rng.integers(len(COLOURS)))]
                noun = class_.replace("_", " ")
                size = _turned(info.size, f)
                obj = Object3D(next_id, class_, "", room.id, (0.0, 0.0, 0.0), size, info.affordance,
                               material, f"a {colour} {noun} made of {material[0]}")
                sg.objects[next_id] = replace(obj, location=place_spot(f, size, relation, rng))
                next_id += 1
                count += 1
    return sg


# ---------------------------------------------------------------------------------------------- files
_NUMPY_GLOBALS = {
    ("numpy.core.multiarray", "_reconstruct"), ("numpy._core.multiarray", "_reconstruct"),
    ("numpy.core.multiarray", "scalar"), ("numpy._core.multiarray", "scalar"),
    ("numpy", "ndarray"), ("numpy", "dtype"), ("_codecs", "encode"), ("collections", "OrderedDict"),
}


class _DataUnpickler(pickle.Unpickler):
    """Unpickles plain data and numpy arrays only; any other global is refused (no code runs on load)."""

    def find_class(self, module: str, name: str) -> Any:
        if (module, name) in _NUMPY_GLOBALS:
            return super().find_class(module, name)
        raise pickle.UnpicklingError(f"refused to load {module}.{name}: a 3DSG file holds only plain data")


# What a 3DSG file may hold. Stanford's files are ~2 MB zipped with an `output` of tens of MB at most; the caps
# sit far above that and far below what would exhaust a machine (a zip bomb, a pickle of shared references).
MAX_NPZ_BYTES = 256 << 20  # the .npz file itself
MAX_OUTPUT_BYTES = 256 << 20  # its `output.npy` entry, inflated
MAX_JSON_BYTES = 64 << 20  # a Context Matters scene .json
MAX_PLAIN_WEIGHT = 50_000_000  # nodes + string characters of `output` as a tree (shared objects counted per use)
_MAX_DEPTH = 12
_MAX_NPZ_ENTRIES = 64


def _check_plain(value: Any, where: str) -> None:
    """Refuse `value` unless it is plain data (None, str, bytes, bool, numbers, numpy arrays, dicts, lists,
    tuples) nested at most 12 deep whose expansion as a tree stays under `MAX_PLAIN_WEIGHT`.

    A pickle can share one object many times (a list holding the same list 50 times, 7 levels deep, is a
    1 kB file that expands to 50**7 nodes); each object is visited once and its expanded weight memoised."""
    def parts(x: Any):
        if x is None or isinstance(x, (bool, int, float, np.generic)):
            return 1, None
        if isinstance(x, (str, bytes)):
            return 1 + len(x), None
        if isinstance(x, np.ndarray):
            return 1, (x.reshape(-1) if x.dtype == object else ())
        if isinstance(x, dict):
            return 1, [y for kv in x.items() for y in kv]
        if isinstance(x, (list, tuple)):
            return 1, x
        raise SceneError(f"{where}: holds a {type(x).__name__}, not plain scene-graph data")

    expanded_size(value, parts, limit=MAX_PLAIN_WEIGHT, max_depth=_MAX_DEPTH,
                  too_big=lambda: SceneError(f"{where}: 'output' expands to more than {MAX_PLAIN_WEIGHT:,} values and "
                                             "characters (objects shared over and over); a scene graph is far smaller"),
                  too_deep=lambda: SceneError(f"{where}: nested too deeply for a scene graph (more than {_MAX_DEPTH} "
                                              "levels)"))


def _read_npz_output(path: Path) -> dict:
    try:
        with open_bounded(path, MAX_NPZ_BYTES, "3DSG .npz file", SceneError) as fh:
            _check_entry_count(fh, path)
            with zipfile.ZipFile(fh) as archive:
                raw = _inflate_output(archive, path)
    except SceneError:
        raise
    except (zipfile.BadZipFile, zipfile.LargeZipFile, EOFError, OSError, NotImplementedError, RuntimeError,
            ValueError) as error:
        raise SceneError(f"{path}: not a readable .npz archive ({shorten(str(error))})") from error
    return _unpickle_output(raw, path)


def _check_entry_count(fh, path: Path) -> None:
    """Refuse an archive listing more than `_MAX_NPZ_ENTRIES` members before `ZipFile` builds an object
    per member (millions fit in a small file); read from the end-of-central-directory record."""
    end_record = getattr(zipfile, "_EndRecData", None)  # private, but in every CPython since 2.6
    if end_record is None:
        return
    record = end_record(fh)
    fh.seek(0)
    if record and record[zipfile._ECD_ENTRIES_TOTAL] > _MAX_NPZ_ENTRIES:
        raise SceneError(f"{path}: the archive lists {record[zipfile._ECD_ENTRIES_TOTAL]:,} members; a 3DSG .npz "
                         f"has one ('output'), and at most {_MAX_NPZ_ENTRIES} are read")


def _inflate_output(archive: zipfile.ZipFile, path: Path) -> bytes:
    names = archive.namelist()
    if "output.npy" not in names:
        shown = [excerpt(n.removesuffix(".npy"), 40) for n in names[:10]]
        raise SceneError(f"{path}: not a 3DSG .npz: it has no 'output' array (arrays: {', '.join(shown)}"
                         f"{f' and {len(names) - 10:,} more' if len(names) > 10 else ''})")
    info = archive.getinfo("output.npy")
    if info.file_size > MAX_OUTPUT_BYTES:
        raise SceneError(f"{path}: 'output' inflates to {info.file_size:,} bytes, over the limit of "
                         f"{MAX_OUTPUT_BYTES:,}; a 3DSG scene graph is far smaller")
    with archive.open(info) as member:  # the header may understate the size: never inflate past the cap
        raw = member.read(MAX_OUTPUT_BYTES + 1)
    if len(raw) > MAX_OUTPUT_BYTES:
        raise SceneError(f"{path}: 'output' inflates past the limit of {MAX_OUTPUT_BYTES:,} bytes")
    return raw


def _unpickle_output(raw: bytes, path: Path) -> dict:
    stream = io.BytesIO(raw)
    try:
        version = np.lib.format.read_magic(stream)
        shape, _, dtype = (np.lib.format.read_array_header_1_0(stream) if version == (1, 0)
                           else np.lib.format.read_array_header_2_0(stream))
    except ValueError as error:
        raise SceneError(f"{path}: 'output' is not a valid .npy array ({shorten(str(error))})") from error
    if dtype != object or shape != ():
        raise SceneError(f"{path}: 'output' must be a pickled dict (0-d object array), got {dtype} {excerpt(shape)}")
    try:
        value = _DataUnpickler(stream, encoding="latin1").load()  # latin1: numpy arrays pickled by Python 2
    except Exception as error:  # a truncated or hostile pickle fails in many ways
        raise SceneError(f"{path}: cannot read 'output' ({type(error).__name__}: {shorten(str(error))})") from error
    if isinstance(value, np.ndarray):
        value = value.item() if value.shape == () else value
    _check_plain(value, str(path))
    if not isinstance(value, dict):
        raise SceneError(f"{path}: 'output' must hold a dict, got {type(value).__name__}")
    return value


def _keys(record: dict) -> str:
    """A record's keys for an error message: the first ten, each cut short."""
    shown = sorted(shorten(str(k), 40) for k in list(record)[:10])
    return f"[{', '.join(shown)}{f' and {len(record) - 10:,} more' if len(record) > 10 else ''}]"


def _field(record: dict, key: str, where: str) -> Any:
    if key not in record:
        raise SceneError(f"{where} lacks {key!r} (has {_keys(record)})")
    return record[key]


def _int(value: Any, where: str) -> int:
    try:
        out = int(value)
    except (TypeError, ValueError) as error:
        raise SceneError(f"{where} must be an integer id, got {excerpt(value)}") from error
    if out != value and not isinstance(value, str):
        raise SceneError(f"{where} must be an integer id, got {excerpt(value)}")
    return out


def _strings(value: Any, where: str) -> tuple[str, ...]:
    if value is None:
        return ()
    if isinstance(value, str):
        return (value,) if value else ()
    if isinstance(value, (list, tuple, np.ndarray)):
        return tuple(str(x) for x in np.asarray(value, dtype=object).reshape(-1) if x is not None and str(x))
    raise SceneError(f"{where} must be a list of strings, got {excerpt(value)}")


def _geometry(record: dict, where: str) -> tuple[Vec3, Vec3] | None:
    if record.get("location") is not None and record.get("size") is not None:
        return _v3(record["location"], f"{where} location"), _v3(record["size"], f"{where} size")
    bbox = record.get("bbox")
    if bbox is not None and not (isinstance(bbox, (list, tuple, np.ndarray)) and len(bbox) == 0):
        try:
            box = np.asarray(bbox, dtype=float).reshape(-1)
        except (TypeError, ValueError):
            box = np.zeros(0)
        if box.size != 6:
            raise SceneError(f"{where} bbox must be [xmin, ymin, zmin, xmax, ymax, zmax], got {excerpt(bbox)}")
        return _v3((box[:3] + box[3:]) / 2, f"{where} bbox"), _v3(np.abs(box[3:] - box[:3]), f"{where} bbox")
    if record.get("location") is not None:
        return _v3(record["location"], f"{where} location"), (0.0, 0.0, 0.0)
    return None


def _from_records(name: str, rooms: dict, objects: dict, where: str, room_key: str, class_key_: str,
                  similarity=None) -> SceneGraph3D:
    """The graph of a file's room and object records, read as real files hold them (room-less and unlabelled
    objects, floors, unknown classes): see `servicerobot.scenes.real_3dsg`; `sg.report` says what was done."""
    from servicerobot.scenes.real_3dsg import graph_from_records

    return graph_from_records(name, rooms, objects, where, room_key, class_key_, similarity)


def _fill_geometry(sg: SceneGraph3D) -> SceneGraph3D:
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


def load_3dsg(path: str | Path, similarity=None) -> SceneGraph3D:
    """Load a Stanford 3DSG `.npz` or a Context Matters scene `.json`; a bad file raises `SceneError`.

    Real files are taken as they are (`servicerobot.scenes.real_3dsg`): `sg.report` says what was done with
    room-less, unlabelled and unknown objects; `similarity` (any `matrix(queries, candidates)`, e.g.
    `EmbeddingSimilarity()`) types classes the words do not decide (default: word/character similarity)."""
    path = Path(path)
    if not path.exists():
        raise SceneError(f"{path}: no such scene-graph file")
    stem = path.stem.removeprefix("3DSceneGraph_")
    if path.suffix == ".npz":
        data = _read_npz_output(path)
        for key in ("room", "object"):
            if key not in data:
                raise SceneError(f"{path}: 'output' lacks the {key!r} dict (keys: {_keys(data)})")
        building = data.get("building") if isinstance(data.get("building"), dict) else {}
        return _from_records(str(building.get("name") or stem), data["room"], data["object"], str(path),
                             "scene_category", "class_", similarity)
    if path.suffix == ".json":
        text = read_text_bounded(path, MAX_JSON_BYTES, "Context Matters scene .json", SceneError)
        try:
            data = json.loads(text)
        except json.JSONDecodeError as error:
            raise SceneError(f"{path}: not valid JSON ({shorten(str(error))})") from error
        except RecursionError:
            raise SceneError(f"{path}: nested too deeply for a scene graph") from None
        if not isinstance(data, dict) or "rooms" not in data or "objects" not in data:
            keys = _keys(data) if isinstance(data, dict) else type(data).__name__
            raise SceneError(f"{path}: not a Context Matters scene (needs 'rooms' and 'objects'; has {keys})")
        info = data.get("scene_info") if isinstance(data.get("scene_info"), dict) else {}
        sg = _from_records(str(info.get("name") or stem), data["rooms"], data["objects"], str(path),
                           "category", "class", similarity)
        placed = {p["object"] for p in sg.report.placed} if sg.report is not None else set()
        refused = {str(r["object"]) for r in sg.report.refused} if sg.report is not None else set()
        for rid, rec in data["rooms"].items():
            listed = rec.get("objects_in_room") if isinstance(rec, dict) else None
            if listed is not None and [i for i in _ids(listed, f"{path}: room {excerpt(rid, 40)} objects_in_room")
                                       if str(i) not in refused] != [
                    o.id for o in sg.objects_in(int(rid)) if o.id not in placed]:
                raise SceneError(f"{path}: room {rid} lists objects_in_room {excerpt(listed)} but the objects "
                                 f"naming it as parent are {[o.id for o in sg.objects_in(int(rid))]}")
        return sg
    raise SceneError(f"{path}: unknown scene-graph format {excerpt(path.suffix)}; use a 3DSG .npz or a CM .json")


def _ids(listed: Any, where: str) -> list[int]:
    if not isinstance(listed, list):
        raise SceneError(f"{where} must be a list of object ids, got {excerpt(listed)}")
    return sorted(_int(i, where) for i in listed)


def _bbox(location: Vec3, size: Vec3) -> list[float]:
    c, s = np.asarray(location), np.asarray(size) / 2
    return [round(float(x), 4) for x in (*(c - s), *(c + s))]


def save_npz(sg: SceneGraph3D, path: str | Path) -> None:
    """Write `sg` as a Stanford-style 3DSG `.npz` (atomically)."""
    rooms = {r.id: {"id": r.id, "scene_category": r.category, "floor_area": r.floor_area,
                    **({"floor_number": r.floor} if r.floor else {}),
                    "location": np.asarray(r.location), "size": np.asarray(r.size),
                    "volume": float(np.prod(r.size)), "parent_building": 1, "label": r.label}
             for r in sg.rooms.values()}
    objects = {o.id: {"id": o.id, "class_": o.class_, "action_affordance": list(o.action_affordance),
                      "material": list(o.material), "location": np.asarray(o.location), "size": np.asarray(o.size),
                      "volume": float(np.prod(o.size)), "parent_room": o.parent_room, "description": o.description,
                      "label": o.label}
               for o in sg.objects.values()}
    output = {"building": {"id": 1, "name": sg.name}, "room": rooms, "object": objects}

    def write(fh) -> None:
        np.savez_compressed(fh, output=np.array(output, dtype=object))

    write_atomic(path, write)


def save_json(sg: SceneGraph3D, path: str | Path) -> None:
    """Write `sg` as a Context Matters scene `.json` (with boxes filled in, atomically)."""
    rooms = {str(r.id): {"id": r.id, "category": r.category, "label": r.label, "bbox": _bbox(r.location, r.size),
                         "objects_in_room": [o.id for o in sg.objects_in(r.id)], "floor_area": r.floor_area,
                         "location": list(r.location), "size": list(r.size)}
             for r in sorted(sg.rooms.values(), key=lambda r: r.id)}
    objects = {str(o.id): {"id": o.id, "class": o.class_, "label": o.label, "parent_room": o.parent_room,
                           "description": o.description, "bbox": _bbox(o.location, o.size),
                           "action_affordance": list(o.action_affordance), "material": list(o.material),
                           "location": list(o.location), "size": list(o.size)}
               for o in sorted(sg.objects.values(), key=lambda o: o.id)}
    data = {"scene_info": {"name": sg.name, "total_rooms": len(rooms), "total_objects": len(objects)},
            "rooms": rooms, "objects": objects}
    write_atomic(path, json.dumps(data, indent=1) + "\n")


# ---------------------------------------------------------------------------------------------- household
@dataclass
class GibsonScene(HouseholdScene):
    """A household scene made from a 3D scene graph; `node_of` maps PDDL names to ("room"|"object", id)."""

    source_graph: SceneGraph3D | None = None
    node_of: dict[str, tuple[str, int]] = field(default_factory=dict)


def _pddl_name(label: str) -> str:
    name = re.sub(r"[^a-z0-9_-]+", "_", label.strip().lower()).strip("_-") or "thing"
    return name if name[0].isalpha() else f"n{name}"


_OWNABLE = frozenset({"cup", "mug", "book", "notebook", "laptop", "cell_phone", "shirt", "sweater", "sock",
                      "teddy_bear", "toothbrush"})


def to_household_scene(sg: SceneGraph3D, rng: np.random.Generator, n_people: int = 4,
                       connectivity: str = "auto", init_room: str | None = None) -> GibsonScene:
    """The household scene of a 3DSG: rooms, mapped objects (3DSG labels as names), people and the robot.

    connectivity: "adjacency" (rooms that share a wall), "full" (every pair on a floor, as Context Matters), or
    "auto" (adjacency when it connects every room, else full). Floors connect only by stairs
    (`real_3dsg.stair_links`), whatever the connectivity. Items rest on/in the receptacle their box says
    (`support_of`), else on the nearest fitting receptacle of their room (of the house if the room has none).
    State words in a class name become facts (`dirty_shirt` is dirty), and rubbish (`cola_can`) is marked
    `discardable` (`servicerobot.scenes.open_vocab.type_class`).
    """
    from servicerobot.scenes.real_3dsg import stair_links

    if connectivity not in ("auto", "adjacency", "full"):
        raise SceneError(f"connectivity must be 'auto', 'adjacency' or 'full', got {connectivity!r}")
    if not 1 <= n_people <= len(PEOPLE_NAMES):
        raise SceneError(f"n_people must be in [1, {len(PEOPLE_NAMES)}], got {n_people}")
    sg.validate()
    people = [PEOPLE_NAMES[int(i)] for i in rng.choice(len(PEOPLE_NAMES), size=n_people, replace=False)]
    taken = {ROBOT} | {p.lower() for p in people}
    node_of: dict[str, tuple[str, int]] = {}

    def unique(label: str) -> str:
        base = name = _pddl_name(label)
        k = 2
        while name in taken:
            name, k = f"{base}_{k}", k + 1
        taken.add(name)
        return name

    # Rooms.
    room_name: dict[int, str] = {}
    ordered = sorted(sg.rooms.values(), key=lambda r: r.id)
    per_category: dict[str, int] = {}
    for r in ordered:
        per_category[r.category] = per_category.get(r.category, 0) + 1
    seen: dict[str, int] = {}
    bedrooms = [r.id for r in ordered if class_key(r.category) in ("bedroom", "childs_room")]
    owner_of = {rid: people[k] for k, rid in enumerate(bedrooms[:len(people)])}
    rooms, entities = [], {}
    floors = {r.floor for r in ordered}
    shift = _floor_shifts(sg)  # floors side by side in the 2D layout, so a frame does not overlay them
    for i, r in enumerate(ordered):
        name = room_name[r.id] = unique(r.label)
        node_of[name] = ("room", r.id)
        kind = r.category.replace("_", " ")
        seen[kind] = seen.get(kind, 0) + 1
        if r.id in owner_of:
            label = f"{owner_of[r.id]}'s {kind}"
        else:
            label = kind if per_category[r.category] == 1 else f"{kind} {seen[kind]}"
        x, y = r.location[0] - r.size[0] / 2 + shift[r.floor], r.location[1] - r.size[1] / 2
        rooms.append(Room(name, kind, label, (round(x, 3), round(y, 3), r.size[0], r.size[1]), (i, 0)))
        entities[name] = Entity(name, "room", label, {"floor": r.floor} if len(floors) > 1 else {})
    label_of = {room.name: room.label for room in rooms}

    # Doors within a floor, stairs between floors.
    stairs = [(link["a"], link["b"]) for link in stair_links(sg)]
    pairs = adjacent_rooms(sg) + stairs
    if connectivity == "full" or (connectivity == "auto" and not _connected(list(sg.rooms), pairs)):
        pairs = [(a.id, b.id) for i, a in enumerate(ordered) for b in ordered[i + 1:] if a.floor == b.floor] + stairs
    elif connectivity == "adjacency" and not _connected(list(sg.rooms), pairs):
        raise SceneError(f"{sg.name}: rooms that share walls do not connect every room; use connectivity='full'")
    doors = [(room_name[a], room_name[b]) for a, b in pairs]
    facts: set[Atom] = set()
    for a, b in doors:
        facts |= {Atom("connected", (a, b)), Atom("connected", (b, a))}

    # Fixtures.
    fixture_of: dict[int, str] = {}
    for obj in sorted(sg.objects.values(), key=lambda o: o.id):
        kind = sg.typing(obj.class_).pddl_type
        if kind not in FIXTURE_TYPES:
            continue
        name = fixture_of[obj.id] = unique(obj.label)
        node_of[name] = ("object", obj.id)
        room = room_name[obj.parent_room]
        attrs: dict[str, Any] = {"category": kind, "room": label_of[room]}
        if obj.material:
            attrs["material"] = obj.material[0]
        if obj.parent_room in owner_of:
            attrs["owner"] = owner_of[obj.parent_room]
        entities[name] = Entity(name, kind, class_key(obj.class_).replace("_", " "), attrs, room=room,
                                pos=(obj.location[0] + shift[sg.rooms[obj.parent_room].floor], obj.location[1]))
        facts.add(Atom("in-room", (name, room)))
        if kind in ("openable", "fridge", "washer", "dryer") and rng.random() < 0.85:
            facts.add(Atom("closed", (name,)))
        if kind == "fridge":
            facts.add(Atom("chills", (name,)))
        if kind == "light" and rng.random() < 0.3:
            facts.add(Atom("light-on", (name,)))
        if kind == "bed" and rng.random() < 0.7:
            facts.add(Atom("made", (name,)))
    receptacles = [oid for oid in fixture_of if entities[fixture_of[oid]].pddl_type not in ("light", "trashcan")]
    if not receptacles and any(sg.typing(o.class_).pddl_type in ITEM_TYPES for o in sg.objects.values()):
        raise SceneError(f"{sg.name}: objects need a surface or container to rest on, and the scene has none")

    # Items.
    descriptions: set[str] = set()
    for obj in sorted(sg.objects.values(), key=lambda o: o.id):
        kind = sg.typing(obj.class_).pddl_type
        if kind not in ITEM_TYPES:
            continue
        name = unique(obj.label)
        node_of[name] = ("object", obj.id)
        home = _home(sg, obj, fixture_of, receptacles, entities)
        home_type = entities[home].pddl_type
        facts.add(Atom("on" if home_type in _SURFACE_TYPES else "inside", (name, home)))
        key = class_key(obj.class_)
        attrs = {"category": kind}
        if obj.material:
            attrs["material"] = obj.material[0]
        words = set(re.findall(r"[a-z]+", obj.description.lower()))
        colours = [c for c in COLOURS if c in words]
        if colours:
            attrs["colour"] = colours[0]
        noun = key.replace("_", " ")
        for attempt in range(8):
            if key in _OWNABLE and attempt == 0 and rng.random() < 0.5:
                attrs["owner"] = people[int(rng.integers(len(people)))]
            if attempt >= 1:
                attrs.pop("owner", None) if attempt >= 2 else None
                attrs["mark"] = MARKS[int(rng.integers(len(MARKS)))]
            desc = Entity(name, kind, noun, dict(attrs)).describe()
            if desc not in descriptions:
                break
        descriptions.add(desc)
        if key in PERISHABLE:
            attrs["perishable"] = True
            if home_type == "fridge":
                facts.add(Atom("cold", (name,)))
        if kind == "dish" and (home_type == "sink" or rng.random() < 0.15):
            facts.add(Atom("dirty", (name,)))
        if kind == "clothing" and (home_type == "container" or rng.random() < 0.1):
            facts.add(Atom("dirty", (name,)))
        typing = sg.typing(obj.class_)
        for state in typing.states:  # "dirty_shirt": the class says it
            facts.add(Atom(state, (name,)))
        if typing.discardable:
            attrs["discardable"] = True
        entities[name] = Entity(name, kind, noun, attrs)

    # People and the robot.
    for person in people:
        pid = person.lower()
        entities[pid] = Entity(pid, "person", person, {"name": person})
        facts.add(Atom("in-room", (pid, rooms[int(rng.integers(len(rooms)))].name)))
    start = rooms[0].name
    if init_room is not None:
        start = room_name[sg.room_by_label(init_room).id]
    entities[ROBOT] = Entity(ROBOT, "robot", "robot")
    facts |= {Atom("in-room", (ROBOT, start)), Atom("hand-empty", (ROBOT,))}
    return GibsonScene(rooms, entities, doors, frozenset(facts), (len(rooms), 1), source_graph=sg,
                       node_of=node_of)


def _floor_shifts(sg: SceneGraph3D, margin: float = 2.0) -> dict[str, float]:
    """How far along x each floor is drawn from its true place: 0 for the lowest, then each next floor one
    building width plus `margin` further (a one-floor building is not moved)."""
    from servicerobot.scenes.real_3dsg import _floors

    order = _floors(sg)
    if len(order) < 2:
        return dict.fromkeys(order, 0.0)
    lo = min(r.location[0] - r.size[0] / 2 for r in sg.rooms.values())
    hi = max(r.location[0] + r.size[0] / 2 for r in sg.rooms.values())
    return {floor: k * (hi - lo + margin) for k, floor in enumerate(order)}


def _connected(nodes: list[int], pairs: list[tuple[int, int]]) -> bool:
    if len(nodes) <= 1:
        return True
    adj: dict[int, set[int]] = {n: set() for n in nodes}
    for a, b in pairs:
        adj[a].add(b)
        adj[b].add(a)
    seen, todo = {nodes[0]}, [nodes[0]]
    while todo:
        for m in adj[todo.pop()] - seen:
            seen.add(m)
            todo.append(m)
    return len(seen) == len(nodes)


def _home(sg: SceneGraph3D, obj: Object3D, fixture_of: dict[int, str], receptacles: list[int],
          entities: dict[str, Entity]) -> str:
    """The fixture an item rests on or in: its box's support, else the nearest receptacle (room first)."""
    support = support_of(sg, obj)
    if support is not None and support[1] in receptacles:
        return fixture_of[support[1]]
    here = [oid for oid in receptacles if sg.objects[oid].parent_room == obj.parent_room] or receptacles
    centre = np.asarray(obj.location)
    best = min(here, key=lambda oid: (float(np.linalg.norm(np.asarray(sg.objects[oid].location) - centre)), oid))
    return fixture_of[best]


# ---------------------------------------------------------------------------------------------- source
def load_building(path: str | Path, similarity=None) -> SceneGraph3D:
    """A building from a 3DSG `.npz`, a Context Matters `.json`, or a folder holding them (a CM instance
    folder: its `.npz` with the `.json` of the same name, else its one scene `.json`)."""
    from servicerobot.scenes.real_3dsg import load_scene

    path = Path(path)
    if not path.is_dir():
        return load_3dsg(path, similarity)
    npz = sorted(path.glob("*.npz"))
    if len(npz) > 1:
        raise SceneError(f"{path}: holds {len(npz)} .npz files; a building folder holds one")
    if npz:
        twin = npz[0].with_suffix(".json")
        return load_scene([npz[0], twin] if twin.exists() else [npz[0]], similarity)
    scenes = [p for p in sorted(path.glob("*.json")) if p.name != "acceptable_goals.json"]
    if len(scenes) != 1:
        raise SceneError(f"{path}: a building folder needs one .npz or one scene .json, found "
                         f"{[p.name for p in scenes] or 'neither'}")
    return load_3dsg(scenes[0], similarity)


class GibsonScenes(SceneSource):
    """3D scene graphs as household scenes: loaded files (one drawn per episode) or freshly generated ones.

    `scene_graph`: None (generate), a path, a `SceneGraph3D`, or a list of those. A path may be a folder
    holding one building's files, as a Context Matters instance folder does (`<Scene>.npz` and
    `<Scene>.json`: read together by `real_3dsg.load_scene`).
    """

    name = "gibson"

    def __init__(self, scene_graph: Any = None, n_people: int = 4, n_rooms: int | None = None,
                 connectivity: str = "auto"):
        if not 1 <= n_people <= len(PEOPLE_NAMES):
            raise SceneError(f"n_people must be in [1, {len(PEOPLE_NAMES)}], got {n_people}")
        self.n_people, self.connectivity, self.rooms_wanted = n_people, connectivity, n_rooms
        if scene_graph is None:
            self.graphs: list[SceneGraph3D] = []
            if n_rooms is not None and not 2 <= n_rooms <= MAX_GENERATED_ROOMS:
                raise SceneError(f"n_rooms must be in [2, {MAX_GENERATED_ROOMS}], got {n_rooms}")
            self.n_rooms = n_rooms or 8
            self.max_entities = self.n_rooms * (1 + MAX_OBJECTS_PER_ROOM) + n_people + 1
            self.max_prior_chars = None  # the env's per-entity bound covers generated buildings
            return
        items = scene_graph if isinstance(scene_graph, (list, tuple)) else [scene_graph]
        if not items:
            raise SceneError("scene_graph is an empty list; give at least one 3DSG file or graph")
        self.graphs = [g if isinstance(g, SceneGraph3D) else load_building(g) for g in items]
        self.n_rooms = max(len(g.rooms) for g in self.graphs)
        self.max_entities = max(len(g.rooms) + sum(g.typing(o.class_).typed for o in g.objects.values())
                                for g in self.graphs) + n_people + 1
        self.max_prior_chars = self._prior_bound()

    def _prior_bound(self) -> int:
        """Characters the `prior` observation can take on these buildings: the largest of three draws per
        building (people, owners and random states vary), plus 15 % and 4 KiB of headroom."""
        from servicerobot.scenes.real_3dsg import prior_chars

        most = max(prior_chars(to_household_scene(g.copy(), np.random.default_rng(seed), self.n_people,
                                                  self.connectivity))
                   for g in self.graphs for seed in range(3))
        return int(most * 1.15) + 4096

    def graph(self, rng: np.random.Generator) -> SceneGraph3D:
        """The 3DSG of a new episode."""
        if not self.graphs:
            return generate_3dsg(rng, self.rooms_wanted)
        return self.graphs[int(rng.integers(len(self.graphs)))].copy()

    def generate(self, rng: np.random.Generator) -> GibsonScene:
        return to_household_scene(self.graph(rng), rng, self.n_people, self.connectivity)
