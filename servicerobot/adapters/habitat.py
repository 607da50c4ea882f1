"""habitat-sim observations -> the scene graph the robot perceives, and habitat semantic scenes -> 3DSGs.

`observe` turns semantic + depth images (with their camera poses) and the index of `sim.semantic_scene`
into sightings: which objects are in view (enough pixels within range), where they are (depth pixels
back-projected to 3D), which room holds them and what supports them (on / inside, from 3D boxes).
`household_percept` writes sightings in the household world's percept format. `scene_graph_from_semantic_scene`
converts any habitat semantic scene (levels > regions > objects: HM3D, MP3D, Replica, ours) into a
`SceneGraph3D`. Nothing here imports habitat_sim: a semantic scene is read through its attributes.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

import numpy as np

from servicerobot.pddl import Atom
from servicerobot.scenes.gibson import Object3D, Room3D, SceneGraph3D, class_type
from servicerobot.scenes.gibson_classes import FIXTURE_TYPES, ITEM_TYPES, class_key

__all__ = [
    "REGION_CATEGORY",
    "SemanticIndex",
    "SemanticObject",
    "Sighting",
    "View",
    "backproject",
    "household_percept",
    "observe",
    "scene_graph_from_semantic_scene",
    "seen_fraction",
    "surveyed",
]

# Matterport3D region names (what habitat reads from .house files and HM3D/MP3D scenes) -> Gibson categories.
REGION_CATEGORY = {
    "hallway": "corridor", "tv": "television_room", "office": "home_office", "laundryroom/mudroom": "utility_room",
    "utilityroom/toolroom": "utility_room", "rec/game": "playroom", "entryway/foyer/lobby": "lobby",
    "workout/gym/exercise": "exercise_room", "junk": "storage_room", "stairs": "staircase", "other room": "room",
    "familyroom/lounge": "living_room", "toilet": "bathroom", "library": "home_office", "spa/sauna": "bathroom",
    "porch/terrace/deck": "porch", "dining booth": "dining_room", "meetingroom/conferenceroom": "home_office",
}
_SURFACES = frozenset({"surface", "shelf", "bed"})
_RECEPTACLES = (FIXTURE_TYPES - {"light"}) | {"trashcan"}
_LOCATION = ("on", "inside", "holding", "held-by", "discarded")
SURVEY_TOL = 0.05  # a surveyed spot shows bare: nothing more than 5 cm before it (a knife lies flatter)
SURVEY_PITCH = 0.04  # ... from where a pixel spans at most 4 cm (3.2 m away for 160 pixels over 90 degrees)


def _to_3dsg(q: np.ndarray) -> np.ndarray:
    """habitat (x, y up, z) -> 3DSG (x, y, z up); works on (..., 3) arrays."""
    q = np.asarray(q, dtype=float)
    return np.stack([q[..., 0], -q[..., 2], q[..., 1]], axis=-1)


@dataclass(frozen=True)
class View:
    """One camera image pair: semantic ids and depth (metres), the sensor's pose (habitat frame), its fov."""

    semantic: np.ndarray
    depth: np.ndarray
    position: np.ndarray
    rotation: np.ndarray  # 3x3, camera -> world
    hfov: float = 90.0


@dataclass(frozen=True)
class SemanticObject:
    """An object of the semantic scene, in 3DSG coordinates: class, region index, box centre and size."""

    semantic_id: int
    class_: str
    region: int | None
    centre: np.ndarray
    size: np.ndarray

    @property
    def lo(self) -> np.ndarray:
        return self.centre - self.size / 2

    @property
    def hi(self) -> np.ndarray:
        return self.centre + self.size / 2


@dataclass
class SemanticIndex:
    """The semantic scene as plain data: objects by semantic id, and regions' boxes and categories.

    `movable` holds the semantic ids whose box in the semantic scene is only their starting place
    (items the robot and people move): their position always comes from the depth image.
    """

    objects: dict[int, SemanticObject]
    regions: list[tuple[str, np.ndarray, np.ndarray]]  # (category, lo, hi) in 3DSG coordinates
    movable: frozenset[int] = frozenset()
    _receptacles: list[SemanticObject] = field(default_factory=list, repr=False)

    def __post_init__(self) -> None:
        self._receptacles = [o for sid, o in self.objects.items() if sid not in self.movable
                             and class_type(o.class_) in _RECEPTACLES]
        # The receptacles as arrays (boxes, kinds, volumes), for `support`; semantic ids -> movable, for `observe`.
        rec = self._receptacles
        self._rec_lo = np.array([o.lo for o in rec], dtype=float).reshape(-1, 3)
        self._rec_hi = np.array([o.hi for o in rec], dtype=float).reshape(-1, 3)
        self._rec_surface = np.array([class_type(o.class_) in _SURFACES for o in rec], dtype=bool)
        self._rec_volume = np.array([float(np.prod(o.size)) for o in rec], dtype=float)
        top = max([*self.objects, *self.movable, 0])
        self.movable_lut = np.zeros(top + 1, dtype=bool)
        self.movable_lut[list(self.movable)] = True

    @classmethod
    def from_semantic_scene(cls, ss: Any, movable: frozenset[int] = frozenset()) -> SemanticIndex:
        regions = []
        for region in ss.regions:
            lo, hi = _box_3dsg(region.aabb)
            regions.append((_category(region), lo, hi))
        region_index = {region.id: k for k, region in enumerate(ss.regions)}
        objects = {}
        for obj in ss.objects:
            if obj is None or obj.category is None or not obj.category.name():
                continue
            sid = int(str(obj.id).split("_")[-1])
            lo, hi = _box_3dsg(obj.aabb)
            region = region_index.get(obj.region.id) if obj.region is not None else None
            objects[sid] = SemanticObject(sid, obj.category.name(), region, (lo + hi) / 2, hi - lo)
        return cls(objects, regions, frozenset(movable))

    def region_at(self, point: np.ndarray) -> int | None:
        """The region whose floor footprint holds `point` (x, y); the smallest one if several do."""
        best = None
        for k, (_, lo, hi) in enumerate(self.regions):
            if lo[0] - 1e-3 <= point[0] <= hi[0] + 1e-3 and lo[1] - 1e-3 <= point[1] <= hi[1] + 1e-3:
                area = (hi[0] - lo[0]) * (hi[1] - lo[1])
                if best is None or area < best[0]:
                    best = (area, k)
        return None if best is None else best[1]

    def support(self, centre: np.ndarray, bottom: float, top: float, margin: float = 0.05,
                region: tuple[np.ndarray, np.ndarray] | None = None) -> tuple[str, int] | None:
        """("inside" | "on", semantic id) of the receptacle a box rests in (smallest wins; never a surface)
        or on (the closest top wins); inside beats on. The box's centre is `centre`, or anywhere in the x-y
        `region` (lo, hi) when given (the x-y extent of the points seen of an item)."""
        c_lo, c_hi = (centre[:2], centre[:2]) if region is None else region
        lo, hi = self._rec_lo, self._rec_hi
        near = np.all((lo[:, :2] - margin <= c_hi) & (c_lo <= hi[:, :2] + margin), axis=1)
        # A thin item on a low table lies within its box's margin, but nothing goes inside a surface.
        inside = near & ~self._rec_surface & (lo[:, 2] - margin <= bottom) & (top <= hi[:, 2] + margin)
        if inside.any():
            k = np.flatnonzero(inside)[np.argmin(self._rec_volume[inside])]  # the smallest holds it
            return "inside", self._receptacles[k].semantic_id
        gap = np.abs(bottom - hi[:, 2])
        on = near & (gap <= margin)
        if on.any():
            k = np.flatnonzero(on)[np.argmin(gap[on])]  # the closest top
            return "on", self._receptacles[k].semantic_id
        return None


def _category(node: Any) -> str:
    cat = getattr(node, "category", None)
    name = cat.name() if cat is not None else ""
    return class_key(REGION_CATEGORY.get(name, name)) if name else "room"


def _box_3dsg(aabb: Any) -> tuple[np.ndarray, np.ndarray]:
    c, s = _to_3dsg(np.asarray(aabb.center, dtype=float)), np.abs(np.asarray(aabb.sizes, dtype=float))
    s = np.array([s[0], s[2], s[1]])
    return c - s / 2, c + s / 2


@dataclass(frozen=True)
class Sighting:
    """An object in view: pixels, nearest depth, estimated centre / bottom / top (3DSG), room, support."""

    semantic_id: int
    pixels: int
    distance: float
    centre: np.ndarray
    bottom: float
    top: float
    region: int | None
    support: tuple[str, int] | None


def backproject(view: View) -> np.ndarray:
    """Every pixel's 3D point (H, W, 3) in 3DSG coordinates, from depth, pose and field of view."""
    return _points(view, np.ones(view.depth.shape, dtype=bool)).reshape(*view.depth.shape, 3)


def _points(view: View, mask: np.ndarray) -> np.ndarray:
    """The 3D points (N, 3, 3DSG coordinates) of the pixels of `mask`, in row-major order."""
    h, w = view.depth.shape
    f = (w / 2) / np.tan(np.deg2rad(view.hfov) / 2)
    rows, cols = np.nonzero(mask)
    d = view.depth[rows, cols].astype(float)
    u, v = (cols + 0.5 - w / 2) / f, (rows + 0.5 - h / 2) / f
    cam = np.stack([u * d, -v * d, -d], axis=-1)  # habitat cameras look along -z
    return _to_3dsg(cam @ np.asarray(view.rotation, dtype=float).T + np.asarray(view.position, dtype=float))


def _shown(views: list[View], points: np.ndarray, tol: float, max_range: float, pitch: float | None = None
           ) -> np.ndarray:
    """Which 3D `points` (3DSG) some view's depth image shows: in its frame, within range (and where a pixel
    spans at most `pitch` metres), with nothing more than `tol` metres nearer the camera on their pixel."""
    pts = np.asarray(points, dtype=float).reshape(-1, 3)
    q = np.stack([pts[:, 0], pts[:, 2], -pts[:, 1]], axis=-1)  # 3DSG -> habitat
    seen = np.zeros(len(pts), dtype=bool)
    for view in views:
        h, w = view.depth.shape
        f = (w / 2) / np.tan(np.deg2rad(view.hfov) / 2)
        cam = (q - np.asarray(view.position, dtype=float)) @ np.asarray(view.rotation, dtype=float)
        ahead = -cam[:, 2]  # habitat cameras look along -z
        ok = (ahead > 0.05) & (ahead < (max_range if pitch is None else min(max_range, pitch * f)))
        u = np.floor(cam[:, 0] / np.where(ok, ahead, 1.0) * f + w / 2).astype(int)
        r = np.floor(-cam[:, 1] / np.where(ok, ahead, 1.0) * f + h / 2).astype(int)
        ok &= (u >= 0) & (u < w) & (r >= 0) & (r < h)
        idx = np.flatnonzero(ok)
        seen[idx[view.depth[r[idx], u[idx]] >= ahead[idx] - tol]] = True
    return seen


def seen_fraction(views: list[View], points: np.ndarray, tol: float = 0.25, max_range: float = 8.0) -> float:
    """The fraction of 3D `points` (3DSG) that the depth images show: in some view's frame, within range,
    with nothing more than `tol` metres nearer the camera on their pixel (what rests on them may be)."""
    seen = _shown(views, points, tol, max_range)
    return float(seen.mean()) if len(seen) else 1.0


def surveyed(views: list[View], points: np.ndarray, covers=(), tol: float = SURVEY_TOL,
             pitch: float = SURVEY_PITCH, max_range: float = 8.0) -> bool:
    """Whether the depth images account for every one of `points` (3DSG: where items rest on or in a
    receptacle), so that an item not seen there is not there: each point shows bare (nothing more than `tol`
    nearer the camera: no item stands before it) from where a pixel spans at most `pitch` metres (farther,
    a small item falls under the camera's pixel count), or lies under one of `covers`, the x-y boxes
    ((lo, hi)) of items seen resting right there (a lone item hides nothing under it; an item on a pile is
    no cover, as what it lies on may hide another)."""
    pts = np.asarray(points, dtype=float).reshape(-1, 3)
    ok = _shown(views, pts, tol, max_range, pitch)
    for lo, hi in covers:
        ok |= np.all((pts[:, :2] >= np.asarray(lo)[:2]) & (pts[:, :2] <= np.asarray(hi)[:2]), axis=1)
    return bool(ok.all())


def observe(views: list[View], index: SemanticIndex, min_pixels: int = 4, max_range: float = 8.0
            ) -> dict[int, Sighting]:
    """Objects in view across `views`: at least `min_pixels` pixels closer than `max_range` metres.

    Fixed objects keep their semantic-scene box; a movable one's box is its known size placed under the
    highest depth point seen of it (its top), centred on the median of its points; it rests on or in the
    receptacle under that centre, or when none is, under any of its points seen, when they lie within its
    size (a pot half inside a box too small for it shows only the half that sticks out). An item that rests
    on or in a receptacle is in that receptacle's room (a fridge of the kitchen whose box reaches into the
    closet holds the kitchen's items); one that rests on nothing is in the room under its centre.
    """
    lut = index.movable_lut
    ids, depths, moving_ids, moving_pts = [], [], [], []
    for view in views:
        sem = np.asarray(view.semantic)
        ok = (sem > 0) & (view.depth > 0) & (view.depth < max_range)
        ids.append(sem[ok].astype(np.int64))
        depths.append(view.depth[ok])
        # Only movable items need their points: fixed ones keep their box.
        mov = ok & lut[np.minimum(sem, len(lut) - 1)] & (sem < len(lut))
        if mov.any():
            moving_ids.append(sem[mov].astype(np.int64))
            moving_pts.append(_points(view, mov))
    if not ids or not sum(len(i) for i in ids):
        return {}
    ids_all, depth_all = np.concatenate(ids), np.concatenate(depths)
    counts = np.bincount(ids_all)  # pixels per semantic id, and the nearest depth of each (no sort: ~25x faster)
    nearest = np.full(len(counts), np.inf, dtype=depth_all.dtype)  # one dtype: `minimum.at`'s fast path
    np.minimum.at(nearest, ids_all, depth_all)
    present = np.flatnonzero(counts)
    points: dict[int, np.ndarray] = {}
    if moving_ids:
        mids, mpts = np.concatenate(moving_ids), np.concatenate(moving_pts)
        morder = np.argsort(mids, kind="stable")
        mids, mpts = mids[morder], mpts[morder]
        bounds = np.flatnonzero(np.diff(mids)) + 1
        points = {int(chunk[0]): p for chunk, p in zip(np.split(mids, bounds), np.split(mpts, bounds))}
    out = {}
    for sid, n, distance in zip(present.tolist(), counts[present].tolist(), nearest[present].tolist()):
        obj = index.objects.get(sid)
        if obj is None or n < min_pixels:
            continue
        if sid in points:
            pts = points[sid]
            top = float(np.max(pts[:, 2]))
            bottom = top - float(obj.size[2])
            centre = np.array([*np.median(pts[:, :2], axis=0), (top + bottom) / 2])
            region = index.region_at(centre)
            support = index.support(centre, bottom, top)
            lo, hi = pts[:, :2].min(axis=0), pts[:, :2].max(axis=0)
            if support is None and np.all(hi - lo <= np.linalg.norm(obj.size[:2]) + 0.05):
                # The median of a partly seen item is off its centre (half of it in a tiny box); points
                # farther apart than its size were seen at several places (carried while the robot drove).
                support = index.support(centre, bottom, top, region=(lo, hi))
            if support is not None and index.objects[support[1]].region is not None:
                region = index.objects[support[1]].region  # in the room of what holds it, not of its centre
        else:
            centre, bottom, top, region, support = obj.centre, float(obj.lo[2]), float(obj.hi[2]), obj.region, None
        out[sid] = Sighting(sid, n, float(distance), centre, bottom, top, region, support)
    return out


def household_percept(sightings: dict[int, Sighting], name_of: dict[int, str], region_room: dict[int, str],
                      symbolic: dict, facts: frozenset[Atom], types: dict[str, str],
                      fixtures_in_room: list[str], surveyed: frozenset[str] = frozenset()) -> dict:
    """The household percept from sightings in the robot's room.

    Items seen and placed in the robot's room get their location from the sighting (on / inside the
    receptacle under them; the nearest receptacle seen when none is; none when the one under them belongs
    to another room); their other facts (dirty, cold...) and fixtures' states come from `facts`, which a
    camera cannot tell. The room's fixtures are on the robot's map; people, the robot and what is held come
    from `symbolic`. The open receptacles of `surveyed` (those whose whole support surface the views account
    for: `surveyed()`) are "observed": what is not seen on them is not there. Another receptacle, however
    many of its pixels show (a desk top above the camera, a shelf under a pile of books, a far table whose
    forks are under two pixels), says nothing of what it does not show.
    """
    room = symbolic["room"]
    by_subject: dict[str, list[Atom]] = {}
    held = set()
    for atom in facts:
        by_subject.setdefault(atom.args[0], []).append(atom)
        if atom.predicate == "holding":
            held.add(atom.args[1])
        elif atom.predicate == "held-by":
            held.add(atom.args[0])
    entities: dict[str, str] = {room: "room"}
    kept = [e for e, t in symbolic["entities"].items() if t in ("robot", "person") or e in held]
    for e in kept:
        entities[e] = symbolic["entities"][e]
    out_facts = [f for f in symbolic["facts"] if f[0] in kept or (f[1] == "connected" and room in (f[0], f[2]))]
    closed = {a.args[0] for a in facts if a.predicate == "closed"}
    observed = [room] + [e for e in symbolic.get("observed", []) if e in kept]
    for fixture in fixtures_in_room:
        entities[fixture] = types[fixture]
        out_facts.extend(_triplet(a) for a in by_subject.get(fixture, []))
        if fixture in surveyed and fixture not in closed and types[fixture] in _RECEPTACLES:
            observed.append(fixture)
    seen_fixtures = {name_of[s.semantic_id]: s for s in sightings.values()
                     if s.semantic_id in name_of and name_of[s.semantic_id] in fixtures_in_room}
    sid_of = {v: k for k, v in name_of.items()}
    for s in sorted(sightings.values(), key=lambda s: s.semantic_id):
        name = name_of.get(s.semantic_id)
        if name is None or types.get(name) not in ITEM_TYPES or name in entities:
            continue
        if s.region is None or region_room.get(s.region) != room:
            continue
        holder = name_of.get(s.support[1]) if s.support else None
        if holder is not None and holder not in fixtures_in_room:
            continue  # in a fixture of the next room whose box reaches into this one: that room's to tell
        if holder is None:
            holder = _nearest(s, [f for f in seen_fixtures if types[f] in _RECEPTACLES - {"trashcan"}],
                              sightings, sid_of)
        if holder is None:
            continue
        entities[name] = types[name]
        relation = "on" if types[holder] in _SURFACES else "inside"
        out_facts.append([name, relation, holder])
        out_facts.extend(_triplet(a) for a in by_subject.get(name, []) if a.predicate not in _LOCATION)
    unique = {tuple(f): f for f in out_facts}
    return {"room": room, "entities": entities, "facts": sorted(unique.values(), key=lambda f: tuple(map(str, f))),
            "observed": sorted(set(observed), key=observed.index)}


def _triplet(atom: Atom) -> list:
    return [atom.args[0], atom.predicate, atom.args[1] if len(atom.args) > 1 else True]


def _nearest(s: Sighting, fixtures: list[str], sightings: dict[int, Sighting], sid_of: dict[str, int]) -> str | None:
    best = None
    for f in fixtures:
        other = sightings[sid_of[f]]
        d = float(np.linalg.norm(other.centre[:2] - s.centre[:2]))
        if best is None or d < best[0]:
            best = (d, f)
    return None if best is None else best[1]


def scene_graph_from_semantic_scene(ss: Any, name: str = "habitat") -> SceneGraph3D:
    """A `SceneGraph3D` from a habitat semantic scene: each region a room, each categorised object an object.

    Objects without a region go to the region whose footprint holds their centre (skipped if none does);
    ids follow the semantic ids, rooms are numbered from 1 in region order.
    """
    index = SemanticIndex.from_semantic_scene(ss)
    sg = SceneGraph3D(name)
    for k, (category, lo, hi) in enumerate(index.regions):
        size = hi - lo
        sg.rooms[k + 1] = Room3D(k + 1, category, "", tuple((lo + hi) / 2), tuple(size))
    for sid, obj in sorted(index.objects.items()):
        if class_key(obj.class_) in ("wall", "floor", "ceiling", "door", "window", "stairs"):
            continue
        region = obj.region if obj.region is not None else index.region_at(obj.centre)
        if region is None:
            continue
        sg.objects[sid] = Object3D(sid, obj.class_, "", region + 1, tuple(obj.centre), tuple(obj.size))
    return sg
