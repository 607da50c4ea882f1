"""Real 3D scene graphs as they are: Stanford/Gibson `.npz` files and Context Matters' `.json`, tolerantly.

What real files hold, and what the loader does with it (every decision lands in the graph's `LoadReport`):

* objects whose `parent_room` is None (or names no room): placed in the room whose box holds their position,
  else in the nearest room within `NEAR_ROOM` metres, else kept out with the reason;
* objects without a class: kept as class "unlabelled" (an obstacle in 3D, never a PDDL object), counted apart;
* a `.npz` beside a `.json`: the `.npz`'s geometry wins (the `.json`'s `bbox` lists are empty in Context
  Matters' files) and the `.json` adds its text (labels, descriptions, affordances) and its objects;
* objects with a position and no size (Context Matters' added task objects): position kept, size from the class;
* floors (`floor_number`): adjacency only within a floor, stairs between floors (`stair_links`);
* room categories outside `ROOM_CATEGORIES` and classes outside the class table: kept, typed by
  `servicerobot.scenes.open_vocab.type_class`, and reported (the untyped ones with their reason).
"""

from __future__ import annotations

import itertools
import json
import math
from collections.abc import Iterable
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

import numpy as np

from servicerobot.errors import SceneError
from servicerobot.limits import excerpt
from servicerobot.scenes.gibson_classes import GENERATED_CLASSES, ITEM_TYPES, ROOM_CATEGORIES, class_key
from servicerobot.scenes.gibson_files import MAX_JSON_BYTES, _geometry, _int, _read_npz_output, _strings
from servicerobot.scenes.graph3d import Object3D, Room3D, SceneGraph3D, fill_geometry
from servicerobot.scenes.open_vocab import UNLABELLED, ClassTyping, type_class

__all__ = ["NEAR_ROOM", "LoadReport", "graph_from_records", "load_scene", "prior_chars",
           "split_task_classes", "stair_links", "task_object_coverage"]

NEAR_ROOM = 1.0  # metres: a room-less object this close to a room's box is taken to be in it
STAIR_WORDS = ("stair", "staircase", "stairs", "stairway", "stairwell")
_ITEM_SIZE = (0.2, 0.2, 0.2)
_FIXTURE_SIZE = (0.6, 0.6, 0.8)


@dataclass
class LoadReport:
    """What the loader did with a scene graph's files, object by object.

    Attributes:
        sources: the files read, in order (geometry first).
        geometry: where room and object boxes came from: "npz", "json", "npz+json" or "synthetic" (laid out).
        placed: room-less objects put in a room: {object, label, class, room, reason}.
        refused: objects kept out of the graph: {object, label, class, reason}.
        unlabelled: ids of objects without a class (class "unlabelled").
        default_sized: ids of objects with a position and no size (size taken from their class).
        laid_out: ids of objects with no position at all (placed on a fitting receptacle of their room).
        unknown_room_categories: category -> room labels, for categories outside the room table
            (`ROOM_CATEGORIES`: lobby, closet, staircase, ... load as rooms all the same).
        typing: class key -> `ClassTyping`, for every class in the graph.
        stairs: links between floors: {a, b, floors, assumed, reason}.
        merged: counts of what the `.json` added to the `.npz` (labels, descriptions, affordances, objects).
        notes: anything else worth saying (a class the two files disagree on, a room only the .json has).
    """

    sources: list[str] = field(default_factory=list)
    geometry: str = ""
    placed: list[dict] = field(default_factory=list)
    refused: list[dict] = field(default_factory=list)
    unlabelled: list[int] = field(default_factory=list)
    default_sized: list[int] = field(default_factory=list)
    laid_out: list[int] = field(default_factory=list)
    unknown_room_categories: dict[str, list[str]] = field(default_factory=dict)
    typing: dict[str, ClassTyping] = field(default_factory=dict)
    stairs: list[dict] = field(default_factory=list)
    merged: dict[str, int] = field(default_factory=dict)
    notes: list[str] = field(default_factory=list)

    def untyped(self, sg) -> list[dict]:
        """Objects in the graph that stay out of the PDDL scene, each with the reason."""
        out = []
        for obj in sorted(sg.objects.values(), key=lambda o: o.id):
            typing = self.typing.get(class_key(obj.class_)) or type_class(obj.class_)
            if typing.pddl_type is None:
                out.append({"object": obj.id, "label": obj.label, "class": obj.class_, "how": typing.how,
                            "reason": typing.reason})
        return out

    def to_json(self) -> dict:
        """The report as plain data (typing by class: type, how, base, states, reason)."""
        return {"sources": self.sources, "geometry": self.geometry, "placed": self.placed, "refused": self.refused,
                "unlabelled": self.unlabelled, "default_sized": self.default_sized, "laid_out": self.laid_out,
                "unknown_room_categories": self.unknown_room_categories,
                "typing": {k: {"type": t.pddl_type, "how": t.how, "base": t.base, "states": list(t.states),
                               "discardable": t.discardable, "reason": t.reason}
                           for k, t in sorted(self.typing.items())},
                "stairs": self.stairs, "merged": self.merged, "notes": self.notes}

    def summary(self) -> str:
        """One line: what was placed, refused, unlabelled, untyped, unknown."""
        untyped = sorted(k for k, t in self.typing.items() if t.pddl_type is None and t.how != "unlabelled")
        typed_open = sorted(k for k, t in self.typing.items() if t.how in ("words", "similarity"))
        return (f"geometry {self.geometry}; {len(self.placed)} room-less object(s) placed by position, "
                f"{len(self.refused)} refused; {len(self.unlabelled)} unlabelled; {len(typed_open)} class(es) typed "
                f"by words or similarity; {len(untyped)} class(es) left out ({', '.join(untyped[:8])}); "
                f"unknown room categories: {sorted(self.unknown_room_categories) or 'none'}")


# ---------------------------------------------------------------------------------------------- parsing
@dataclass
class _Parsed:
    sg: Any
    pending: list[tuple[Any, Any, bool]]  # (object, raw parent_room, has a position)
    no_location: set[int]
    room_geometry: bool


def _missing(value: Any) -> bool:
    if value is None:
        return True
    if isinstance(value, float) and not math.isfinite(value):
        return True
    if isinstance(value, np.ndarray) and value.size == 0:
        return True
    return isinstance(value, str) and not value.strip()


def _floor(rec: dict) -> str:
    value = rec.get("floor_number", rec.get("floor"))
    if _missing(value):
        return ""
    if isinstance(value, np.ndarray):
        value = value.reshape(-1)[0]
    return str(value).strip()


def _parse(name: str, rooms: Any, objects: Any, where: str, room_key: str, class_field: str,
           report: LoadReport) -> _Parsed:
    if not isinstance(rooms, dict) or not isinstance(objects, dict):
        raise SceneError(f"{where}: 'room(s)' and 'object(s)' must be dicts keyed by id")
    sg = SceneGraph3D(name)
    room_geometry = True
    for key, rec in rooms.items():
        w = f"{where}: room {excerpt(key, 40) if isinstance(key, str) else excerpt(key)}"
        if not isinstance(rec, dict):
            raise SceneError(f"{w} must be a dict, got {type(rec).__name__}")
        rid = _int(rec.get("id", key), f"{w} id")
        raw = rec.get(room_key)
        category = "room" if _missing(raw) else str(raw)
        if _missing(raw):
            report.notes.append(f"room {rid} has no {room_key!r}; called 'room'")
        geo = _geometry(rec, w)
        room_geometry &= geo is not None and all(geo[1])
        loc, size = geo if geo else ((0.0, 0.0, 0.0), (0.0, 0.0, 0.0))
        area = rec.get("floor_area")
        try:
            area = float(area) if area is not None and math.isfinite(float(area)) else 0.0
        except (TypeError, ValueError):
            area = 0.0
        room = Room3D(rid, category, "" if _missing(rec.get("label")) else str(rec.get("label")), loc, size,
                      area, floor=_floor(rec))
        sg.rooms[rid] = room
        if class_key(category) not in ROOM_CATEGORIES:  # kept as a room, and reported
            report.unknown_room_categories.setdefault(category, []).append(room.label)
    pending, no_location = [], set()
    for key, rec in objects.items():
        w = f"{where}: object {excerpt(key, 40) if isinstance(key, str) else excerpt(key)}"
        try:  # one bad object record is refused alone, with the reason; the building loads
            _parse_object(key, rec, w, class_field, sg, report, pending, no_location)
        except SceneError as error:
            raw = rec.get(class_field) if isinstance(rec, dict) else None
            report.refused.append({"object": key if isinstance(key, (int, str)) else excerpt(key),
                                   "label": "", "class": "" if _missing(raw) else str(raw)[:80],
                                   "reason": str(error).removeprefix(f"{w} ").removeprefix(f"{w}: ")})
    return _Parsed(sg, pending, no_location, room_geometry and bool(sg.rooms))


def _parse_object(key: Any, rec: Any, w: str, class_field: str, sg, report: LoadReport, pending: list,
                  no_location: set[int]) -> None:
    if not isinstance(rec, dict):
        raise SceneError(f"{w} must be a dict, got {type(rec).__name__}")
    oid = _int(rec.get("id", key), f"{w} id")
    raw_class = rec.get(class_field, rec.get("class", rec.get("class_")))
    geo = _geometry(rec, w)
    affordances = _strings(rec.get("action_affordance"), f"{w} action_affordance")
    materials = _strings(rec.get("material"), f"{w} material")
    if _missing(raw_class):
        class_ = UNLABELLED
        report.unlabelled.append(oid)
    else:
        class_ = str(raw_class)
    if geo is None:
        no_location.add(oid)
    loc, size = geo if geo else ((0.0, 0.0, 0.0), (0.0, 0.0, 0.0))
    if geo is not None and not all(size):
        size = _default_size(class_)
        report.default_sized.append(oid)
    raw_parent = rec.get("parent_room")
    parent = None
    if not _missing(raw_parent):
        try:
            parent = _int(raw_parent, f"{w} parent_room")
        except SceneError:
            parent = None
    label = "" if _missing(rec.get("label")) else str(rec.get("label"))
    obj = Object3D(oid, class_, label, parent if parent is not None else 0, loc, size, affordances, materials,
                   "" if _missing(rec.get("description")) else str(rec.get("description")))
    if parent is None or parent not in sg.rooms:
        pending.append((obj, raw_parent, geo is not None))
    else:
        sg.objects[oid] = obj


def _default_size(class_: str) -> tuple[float, float, float]:
    info = GENERATED_CLASSES.get(class_key(class_))
    if info is not None:
        return info.size
    kind = type_class(class_).pddl_type
    return _ITEM_SIZE if kind is None or kind in ITEM_TYPES else _FIXTURE_SIZE


def _room_box(room) -> tuple[np.ndarray, np.ndarray]:
    c, s = np.asarray(room.location), np.asarray(room.size) / 2
    return c - s, c + s


def room_at(sg, point, near: float = NEAR_ROOM) -> tuple[int | None, str]:
    """The room whose box holds `point` (the smallest one), else the nearest within `near` metres (in the
    plane, among rooms whose height range holds the point); (None, why) when there is none."""
    p = np.asarray(point, dtype=float)
    inside, close = [], []
    for room in sg.rooms.values():
        if not all(room.size):
            continue
        lo, hi = _room_box(room)
        z_gap = max(lo[2] - p[2], p[2] - hi[2], 0.0)
        if z_gap > 0.5:
            continue
        gap = float(np.linalg.norm(np.maximum(np.maximum(lo[:2] - p[:2], p[:2] - hi[:2]), 0.0)))
        if gap == 0.0:  # a floor's room (by height) before one of the floor below or above, then the smallest
            inside.append((z_gap, float(np.prod(room.size[:2])), room.id))
        elif gap <= near:
            close.append((gap + z_gap, room.id))
    if inside:
        rid = min(inside)[2]
        return rid, f"its position lies in {sg.rooms[rid].label}'s box"
    if close:
        gap, rid = min(close)
        return rid, f"its position is {gap:.2f} m outside {sg.rooms[rid].label}'s box, the nearest room"
    return None, f"its position ({p[0]:.2f}, {p[1]:.2f}, {p[2]:.2f}) lies in no room's box nor within {near} m of one"


def _finish(parsed: _Parsed, report: LoadReport, similarity=None):
    sg = parsed.sg
    for obj, raw, has_location in parsed.pending:
        said = "no parent_room" if _missing(raw) else f"parent_room {raw!r} is not a room id"
        if has_location and any(all(r.size) for r in sg.rooms.values()):
            rid, why = room_at(sg, obj.location)
        else:
            rid, why = None, ("it has no position" if not has_location else "the rooms have no geometry to place it by")
        if rid is None:
            report.refused.append({"object": obj.id, "label": obj.label, "class": obj.class_,
                                   "reason": f"{said}, and {why}"})
            continue
        sg.objects[obj.id] = replace(obj, parent_room=rid)
        report.placed.append({"object": obj.id, "label": obj.label, "class": obj.class_,
                              "room": sg.rooms[rid].label, "reason": f"{said}; {why}"})
    laid = sorted(oid for oid in parsed.no_location if oid in sg.objects)
    report.laid_out = laid
    if not parsed.room_geometry:  # rooms without boxes are laid out on a grid (all of them: a CM .json alone)
        boxed = sum(bool(all(r.size)) for r in sg.rooms.values())
        report.geometry = "synthetic" if not boxed else f"{report.geometry}, {len(sg.rooms) - boxed} room(s) laid out"
    if not parsed.room_geometry or laid:
        sg = fill_geometry(sg)
    for obj in sg.objects.values():
        key = class_key(obj.class_)
        if key not in report.typing:
            report.typing[key] = type_class(obj.class_, similarity)
    report.stairs = stair_links(sg)
    sg.validate()
    sg.report = report
    return sg


def graph_from_records(name: str, rooms: Any, objects: Any, where: str, room_key: str, class_field: str,
                       similarity=None):
    """A `SceneGraph3D` from a 3DSG's room and object records (a `.npz`'s or a `.json`'s), with its report."""
    report = LoadReport([where], "npz" if room_key == "scene_category" else "json")
    return _finish(_parse(name, rooms, objects, where, room_key, class_field, report), report, similarity)


def _read_json_scene(path: Path) -> dict:
    try:
        from servicerobot.limits import read_text_bounded

        text = read_text_bounded(path, MAX_JSON_BYTES, "Context Matters scene .json",
                                 SceneError)
    except ImportError:  # pragma: no cover - older trees without servicerobot.limits
        text = path.read_text(encoding="utf-8")
    try:
        data = json.loads(text)
    except (json.JSONDecodeError, RecursionError) as error:
        raise SceneError(f"{path}: not valid JSON ({str(error)[:200]})") from None
    if not isinstance(data, dict) or not isinstance(data.get("rooms"), dict) or not isinstance(data.get("objects"),
                                                                                                dict):
        raise SceneError(f"{path}: not a Context Matters scene (needs 'rooms' and 'objects' dicts)")
    return data


def _merge_json(parsed: _Parsed, data: dict, path: Path, report: LoadReport) -> None:
    """Add the `.json`'s text and objects to a parsed `.npz` (its geometry stays)."""
    extra = _parse(parsed.sg.name, data["rooms"], data["objects"], str(path), "category", "class", LoadReport())
    sg, counts = parsed.sg, {"labels": 0, "descriptions": 0, "affordances": 0, "materials": 0, "objects": 0,
                             "parents": 0, "rooms": 0}
    for rid, room in extra.sg.rooms.items():
        if rid not in sg.rooms:
            sg.rooms[rid] = room
            counts["rooms"] += 1
            report.notes.append(f"room {room.label} is only in the .json (no geometry)")
            parsed.room_geometry = False
        elif room.label and room.label != sg.rooms[rid].label:
            sg.rooms[rid] = replace(sg.rooms[rid], label=room.label)
            counts["labels"] += 1
    pending_by_id = {obj.id: k for k, (obj, _, _) in enumerate(parsed.pending)}
    json_objects = {**extra.sg.objects, **{obj.id: obj for obj, raw, _ in extra.pending}}
    json_parent = {obj.id: obj.parent_room for obj in extra.sg.objects.values()}
    for oid, text in json_objects.items():
        mine = sg.objects.get(oid)
        if mine is None and oid in pending_by_id:
            mine = parsed.pending[pending_by_id[oid]][0]
        if mine is None:  # only in the .json: no geometry; laid out on its room's receptacles
            if oid in json_parent and json_parent[oid] in sg.rooms:
                sg.objects[oid] = replace(text, location=(0.0, 0.0, 0.0), size=(0.0, 0.0, 0.0))
                parsed.no_location.add(oid)
                counts["objects"] += 1
            else:
                parsed.pending.append((text, None, False))
            continue
        changes: dict[str, Any] = {}
        if text.label and text.label != mine.label:
            changes["label"] = text.label
            counts["labels"] += 1
        if text.description and not mine.description:
            changes["description"] = text.description
            counts["descriptions"] += 1
        if text.action_affordance and not mine.action_affordance:
            changes["action_affordance"] = text.action_affordance
            counts["affordances"] += 1
        if text.material and not mine.material:
            changes["material"] = text.material
            counts["materials"] += 1
        if mine.class_ == UNLABELLED and text.class_ != UNLABELLED:
            changes["class_"] = text.class_
            report.unlabelled = [i for i in report.unlabelled if i != oid]
        elif class_key(text.class_) != class_key(mine.class_) and text.class_ != UNLABELLED:
            report.notes.append(f"object {oid}: the .npz says {mine.class_!r}, the .json {text.class_!r}; "
                                "the .npz's class is kept")
        if oid in pending_by_id and oid in json_parent and json_parent[oid] in sg.rooms:
            # Room-less in the .npz, with a room in the .json: the .json's room.
            changes["parent_room"] = json_parent[oid]
            counts["parents"] += 1
            parsed.pending[pending_by_id[oid]] = (None, None, False)
            sg.objects[oid] = replace(mine, **changes)
            report.placed.append({"object": oid, "label": changes.get("label", mine.label), "class": mine.class_,
                                  "room": sg.rooms[json_parent[oid]].label,
                                  "reason": "no parent_room in the .npz; the .json's parent_room"})
            continue
        if changes:
            if oid in sg.objects:
                sg.objects[oid] = replace(mine, **changes)
            else:
                k = pending_by_id[oid]
                parsed.pending[k] = (replace(mine, **changes), *parsed.pending[k][1:])
    parsed.pending = [p for p in parsed.pending if p[0] is not None]
    report.merged = counts


def load_scene(paths: str | Path | Iterable[str | Path], similarity=None):
    """A scene graph from a 3DSG `.npz`, a Context Matters `.json`, or both (geometry from the `.npz`, text
    and extra objects from the `.json`), tolerant of what real files hold; `sg.report` says what was done.

    `similarity`: any object with `matrix(queries, candidates)` for typing unknown classes (e.g.
    `servicerobot.memory.similarity.EmbeddingSimilarity()`); default a word/character similarity.

    Raises:
        SceneError: a file is missing, unreadable or not a scene graph (the message names it).
    """
    items = [Path(paths)] if isinstance(paths, (str, Path)) else [Path(p) for p in paths]
    npz = [p for p in items if p.suffix == ".npz"]
    jsons = [p for p in items if p.suffix == ".json"]
    if len(npz) > 1 or len(jsons) > 1 or len(npz) + len(jsons) != len(items) or not items:
        raise SceneError(f"give one .npz and/or one .json of the same scene, got {[str(p) for p in items]}")
    for p in items:
        if not p.exists():
            raise SceneError(f"{p}: no such scene-graph file")
    report = LoadReport([str(p) for p in npz + jsons])
    if npz:
        path = npz[0]
        data = _read_npz_output(path)
        for key in ("room", "object"):
            if key not in data:
                raise SceneError(f"{path}: 'output' lacks the {key!r} dict (keys: {sorted(map(str, data))[:10]})")
        building = data.get("building") if isinstance(data.get("building"), dict) else {}
        name = str(building.get("name") or path.stem.removeprefix("3DSceneGraph_"))
        parsed = _parse(name, data["room"], data["object"], str(path), "scene_category", "class_", report)
        report.geometry = "npz"
        if jsons:
            _merge_json(parsed, _read_json_scene(jsons[0]), jsons[0], report)
            report.geometry = "npz+json"
    else:
        path = jsons[0]
        data = _read_json_scene(path)
        info = data.get("scene_info") if isinstance(data.get("scene_info"), dict) else {}
        parsed = _parse(str(info.get("name") or path.stem), data["rooms"], data["objects"], str(path), "category",
                        "class", report)
        report.geometry = "json"
    return _finish(parsed, report, similarity)


# ---------------------------------------------------------------------------------------------- floors
def _floors(sg) -> list[str]:
    """The building's floors, lowest first (by the mean height of their rooms, then by name)."""
    heights: dict[str, list[float]] = {}
    for room in sg.rooms.values():
        heights.setdefault(room.floor, []).append(room.location[2] - room.size[2] / 2)
    return sorted(heights, key=lambda f: (float(np.mean(heights[f])), f))


def _is_stairs(room) -> bool:
    words = class_key(room.category).split("_")
    return any(w in STAIR_WORDS for w in words)


def stair_links(sg) -> list[dict]:
    """How consecutive floors connect: each staircase room to the nearest room (a staircase first) of the
    floor above or below; with no staircase on either floor, the two rooms nearest in the plane, marked
    `assumed`. One floor: no links."""
    floors = _floors(sg)
    if len(floors) < 2:
        return []
    out, seen = [], set()

    def xy(room) -> np.ndarray:
        return np.asarray(room.location[:2])

    for lower, upper in itertools.pairwise(floors):
        lo = [r for r in sg.rooms.values() if r.floor == lower]
        hi = [r for r in sg.rooms.values() if r.floor == upper]
        stairs = [r for r in lo + hi if _is_stairs(r)]
        pairs = []
        for s in sorted(stairs, key=lambda r: r.id):
            other = hi if s.floor == lower else lo
            best = min(other, key=lambda r: (not _is_stairs(r), float(np.linalg.norm(xy(r) - xy(s))), r.id))
            pairs.append((s, best, False, f"{s.label} is a staircase"))
        if not pairs:
            a, b = min(((a, b) for a in lo for b in hi),
                       key=lambda ab: (float(np.linalg.norm(xy(ab[0]) - xy(ab[1]))), ab[0].id, ab[1].id))
            why = (f"no staircase room on floors {lower!r} or {upper!r}: stairs assumed between the two rooms "
                   "nearest in the plane")
            pairs.append((a, b, True, why))
        for a, b, assumed, why in pairs:
            key = tuple(sorted((a.id, b.id)))
            if key in seen:
                continue
            seen.add(key)
            out.append({"a": key[0], "b": key[1], "floors": [lower, upper], "assumed": assumed, "reason": why})
    return out


# ---------------------------------------------------------------------------------------------- sizes
def prior_chars(scene) -> int:
    """Characters of the `prior` observation of a household scene at its initial facts (compact JSON, as
    `ServiceRobotEnv` writes it): entity catalogue, rooms and every initial fact."""
    ents = {n: {"type": e.pddl_type, "noun": e.noun, **e.attributes} for n, e in scene.entities.items()}
    facts = [[a.args[0], a.predicate, a.args[1] if len(a.args) > 1 else True] for a in sorted(scene.init)]
    return len(json.dumps({"entities": ents, "rooms": {r.name: r.label for r in scene.rooms}, "facts": facts},
                          separators=(",", ":"), ensure_ascii=True))


# ---------------------------------------------------------------------------------------------- coverage
def split_task_classes(objects: Any) -> set[str]:
    """The object classes a Context Matters split entry's `objects` names (v1: {group: [class, ...]};
    v2: {"to_add": {class: {rooms, count}}}), as class keys."""
    out: set[str] = set()

    def walk(value: Any) -> None:
        if isinstance(value, str):
            out.add(class_key(value))
        elif isinstance(value, list):
            for v in value:
                walk(v)
        elif isinstance(value, dict):
            for k, v in value.items():
                if isinstance(v, dict) and ({"count", "rooms"} & set(v)):
                    out.add(class_key(str(k)))
                else:
                    walk(v)

    walk(objects)
    return out


def task_object_coverage(sg, classes: Iterable[str]) -> dict:
    """How many of the scene's objects of the task's classes reach the PDDL scene, and why each other one
    does not: {objects, typed, share, dropped: [{object, label, class, reason}]}."""
    wanted = {class_key(c) for c in classes}
    report = getattr(sg, "report", None)
    dropped = []
    total = typed = 0
    for obj in sorted(sg.objects.values(), key=lambda o: o.id):
        if class_key(obj.class_) not in wanted:
            continue
        total += 1
        typing = (report.typing.get(class_key(obj.class_)) if report else None) or type_class(obj.class_)
        if typing.pddl_type is not None:
            typed += 1
        else:
            dropped.append({"object": obj.id, "label": obj.label, "class": obj.class_, "reason": typing.reason})
    for ref in (report.refused if report else []):
        if class_key(str(ref["class"])) in wanted:
            total += 1
            dropped.append(dict(ref))
    return {"objects": total, "typed": typed, "share": typed / total if total else 1.0, "dropped": dropped}
