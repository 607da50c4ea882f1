"""A habitat-sim stage built from a 3D scene graph: floors, walls with doorways, furniture, semantics.

Writes four files habitat-sim 0.2.2 loads as one stage: a Z-up `.glb` (render and collision mesh), a
semantic `.ply` whose faces carry object ids, a Matterport3D `.house` listing levels, regions (rooms) and
objects (so `sim.semantic_scene` lists them all), and the `.stage_config.json` that ties them together.
Movable items and container doors are not part of the stage: the executor adds them as kinematic rigid
objects (`Stage.items`, `Stage.door_panels`) so they can move without rebuilding anything.
"""

from __future__ import annotations

import hashlib
import json
from dataclasses import dataclass, field, replace
from pathlib import Path

import numpy as np

from servicerobot.envs.habitat.walkways import Obstacles, Walkway, door_spot, plan_walkways
from servicerobot.errors import DependencyNotInstalled, install_hint
from servicerobot.scenes.gibson import SINK_DEPTH, SceneGraph3D, adjacent_rooms, class_type
from servicerobot.scenes.gibson_classes import ITEM_TYPES, class_key

__all__ = ["FLOOR_GAP", "SHELL_T", "TOP_OPEN", "WALL_HEIGHT", "Stage", "build_stage", "floor_levels", "from_habitat", "front_side",
           "stage_layout", "to_habitat"]

WALL_HEIGHT, WALL_T, DOOR_W, DOOR_H, SHELL_T = 2.6, 0.1, 1.0, 2.1, 0.03
FLOOR_GAP = 4.0  # metres between floors laid side by side in the stage
SEATS, SEAT_H = frozenset({"chair"}), 0.5  # drawn as a seat: up to SEAT_H above the floor of their box
FRONT_OPEN = frozenset({"openable", "fridge", "washer", "dryer"})
TOP_OPEN = frozenset({"container", "trashcan", "sink"})
# Matterport3D region letters for Gibson room categories (what a .house can say).
REGION_LETTER = {"bathroom": "a", "bedroom": "b", "closet": "c", "dining_room": "d", "lobby": "e",
                 "garage": "g", "corridor": "h", "utility_room": "j", "kitchen": "k", "living_room": "l",
                 "home_office": "o", "childs_room": "r", "playroom": "r", "staircase": "s",
                 "television_room": "v", "exercise_room": "w", "storage_room": "Z", "pantry_room": "Z"}


def to_habitat(p) -> np.ndarray:
    """3DSG (x, y, z up) -> habitat (x, y up, z) = (x, z, -y)."""
    p = np.asarray(p, dtype=float)
    return np.array([p[..., 0], p[..., 2], -p[..., 1]]).T if p.ndim > 1 else np.array([p[0], p[2], -p[1]])


def from_habitat(q) -> np.ndarray:
    """habitat (x, y up, z) -> 3DSG (x, y, z up) = (x, -z, y)."""
    q = np.asarray(q, dtype=float)
    return np.array([q[..., 0], -q[..., 2], q[..., 1]]).T if q.ndim > 1 else np.array([q[0], -q[2], q[1]])


def floor_levels(sg: SceneGraph3D) -> dict[str, float]:
    """Each floor's level (z of its floor): the median bottom of its rooms' boxes (0 where no box has a height),
    lowest floor first."""
    bottoms: dict[str, list[float]] = {}
    for r in sg.rooms.values():
        bottoms.setdefault(r.floor, [])
        if r.size[2] > 0:
            bottoms[r.floor].append(r.location[2] - r.size[2] / 2)
    levels = {f: float(np.median(b)) if b else 0.0 for f, b in bottoms.items()}
    return dict(sorted(levels.items(), key=lambda fl: (fl[1], fl[0])))


def stage_layout(sg: SceneGraph3D) -> SceneGraph3D:
    """`sg` as the stage lays it out: each floor's level at z = 0 and, in a building of several floors, the
    floors side by side along x (lowest first, one building width plus `FLOOR_GAP` apart), so one floor's
    walls and furniture never meet another's. Stairs are not geometry: the executor takes the robot from a
    staircase room to the room it leads to. Furniture whose size the file does not give (`report.default_sized`:
    Context Matters' additions) stands on what is under it, else on its floor: its guessed box hung at the
    height of the point given would float (Lakeville's coffee_table_84 2.5 m up, its toy_box_88 over the
    2.6 m walls) or sink into what it stands on. A one-floor building whose floor is at 0 and that has no such
    furniture is returned as it is."""
    levels = floor_levels(sg)
    sg = _grounded(sg, levels)
    if len(levels) == 1 and abs(next(iter(levels.values()))) < 1e-6:
        return sg
    lo = min(r.location[0] - r.size[0] / 2 for r in sg.rooms.values())
    hi = max(r.location[0] + r.size[0] / 2 for r in sg.rooms.values())
    shift = {f: np.array([k * (hi - lo + FLOOR_GAP), 0.0, -level]) for k, (f, level) in enumerate(levels.items())}
    out = sg.copy()
    out.rooms = {rid: replace(r, location=tuple(float(v) for v in np.add(r.location, shift[r.floor])))
                 for rid, r in sg.rooms.items()}
    out.objects = {oid: replace(o, location=tuple(float(v) for v in
                                                  np.add(o.location, shift[sg.rooms[o.parent_room].floor])))
                   for oid, o in sg.objects.items()}
    return out


def _grounded(sg: SceneGraph3D, levels: dict[str, float]) -> SceneGraph3D:
    """`sg` with each piece of furniture of `report.default_sized` standing on the furniture under it (the
    highest top below its given centre of those of its floor whose footprint it overlaps: Parole's bucket_24
    stands on bed_16 as Context Matters put it), else on its floor's level."""
    guessed = getattr(sg.report, "default_sized", None) or []
    moved = {}
    for oid in guessed:
        o = sg.objects.get(oid)
        if o is None or class_type(o.class_) in ITEM_TYPES or o.parent_room not in sg.rooms:
            continue
        floor = sg.rooms[o.parent_room].floor
        lo, hi = (np.asarray(x, dtype=float) for x in o.box)
        base = levels[floor]
        for other in sg.objects.values():
            if (other.id == oid or other.id in guessed or class_type(other.class_) in ITEM_TYPES
                    or other.parent_room not in sg.rooms or sg.rooms[other.parent_room].floor != floor):
                continue
            o_lo, o_hi = (np.asarray(x, dtype=float) for x in other.box)
            if np.all(np.minimum(hi[:2], o_hi[:2]) - np.maximum(lo[:2], o_lo[:2]) > 0) and o_hi[2] <= o.location[2]:
                base = max(base, float(o_hi[2]))
        z = base + o.size[2] / 2
        if abs(z - o.location[2]) > 1e-6:
            moved[oid] = replace(o, location=(o.location[0], o.location[1], float(z)))
    if not moved:
        return sg
    out = sg.copy()
    out.objects.update(moved)
    return out


@dataclass
class Stage:
    """The files of a stage and the maps between semantic ids, 3DSG ids and regions."""

    folder: Path
    scene_id: str
    semantic_of: dict[int, int]                 # 3DSG object id -> semantic id
    region_rooms: list[int]                     # region index -> 3DSG room id
    items: list[int]                            # 3DSG ids of the movable items (rigid objects)
    door_panels: dict[int, tuple[np.ndarray, np.ndarray]] = field(default_factory=dict)  # id -> (lo, hi)
    doorways: list[tuple[int, int, np.ndarray]] = field(default_factory=list)  # (room a, room b, centre xy)
    openings: dict[int, tuple[int, int]] = field(default_factory=dict)  # front-open id -> (axis, sign) of its front
    walkways: list[Walkway] = field(default_factory=list)  # floor strips joining rooms no doorway reaches


def _trimesh():
    try:
        import trimesh
    except ImportError as error:
        raise DependencyNotInstalled(f"building a habitat-sim stage needs trimesh: {install_hint('habitat')}"
                                     ) from error
    return trimesh


def _colour(name: str) -> list[int]:
    h = hashlib.sha256(name.encode()).digest()
    return [70 + h[0] % 160, 70 + h[1] % 160, 70 + h[2] % 160, 255]


def front_side(obj, sg: SceneGraph3D, reach: float = 0.9) -> tuple[int, int]:
    """(axis, sign) of the side of a piece of furniture that faces into its room: its long side facing the
    room's middle, unless less than `reach` metres (room for the robot to stand) lie free in front of it;
    then the next of: its long side's back, its short sides (middle first); else the freest side.

    A 3DSG box has no orientation: corner furniture whose long side faces another piece (an oven against a
    fridge) opens and is approached from the side that is clear.
    """
    room = sg.rooms[obj.parent_room]
    lo, hi = (np.asarray(x, dtype=float) for x in obj.box)
    rlo = np.asarray(room.location[:2]) - np.asarray(room.size[:2]) / 2
    rhi = np.asarray(room.location[:2]) + np.asarray(room.size[:2]) / 2
    others = [(np.asarray(o.box[0]), np.asarray(o.box[1])) for o in sg.objects_in(obj.parent_room)
              if o.id != obj.id and class_type(o.class_) not in ITEM_TYPES]
    shallow = 0 if obj.size[0] < obj.size[1] else 1
    sides = []
    for axis in (shallow, 1 - shallow):
        toward = 1 if room.location[axis] >= obj.location[axis] else -1
        sides += [(axis, toward), (axis, -toward)]

    def clearance(axis: int, sign: int) -> float:
        other = 1 - axis
        free = rhi[axis] - hi[axis] if sign > 0 else lo[axis] - rlo[axis]
        for olo, ohi in others:
            if min(hi[other], ohi[other]) - max(lo[other], olo[other]) <= 1e-6:
                continue  # not in front of this side
            gap = olo[axis] - hi[axis] if sign > 0 else lo[axis] - ohi[axis]
            if gap >= -1e-6:
                free = min(free, gap)
        return float(free)

    free = {side: clearance(*side) for side in sides}
    return next((side for side in sides if free[side] >= reach), max(sides, key=lambda side: free[side]))


def _shell(lo: np.ndarray, hi: np.ndarray, open_side: tuple[int, int] | None) -> list[tuple[np.ndarray, np.ndarray]]:
    """The six (or five, without `open_side`) slabs of a hollow box; open_side (2, 1) is the top."""
    slabs = []
    for axis in range(3):
        for sign in (-1, 1):
            if open_side == (axis, sign):
                continue
            a, b = lo.copy(), hi.copy()
            if sign < 0:
                b[axis] = lo[axis] + SHELL_T
            else:
                a[axis] = hi[axis] - SHELL_T
            slabs.append((a, b))
    return slabs


def _wall_boxes(sg: SceneGraph3D, doors: list[tuple[int, int]]) -> tuple[list, list, list, list[Walkway]]:
    """Wall slabs around every room, with a doorway (and a lintel) in the middle of each shared wall; floor
    patches over the gap between rooms that nearly touch; walkways joining rooms no doorway reaches."""
    rooms = sg.rooms
    # Doorways and walkways go where no furniture stands in front of them (real 3DSGs furnish the walls).
    obstacles = Obstacles(o.box for o in sg.objects.values() if class_type(o.class_) not in ITEM_TYPES)
    boxes, doorways, floors = [], [], []
    gaps: dict[tuple[int, int], list[tuple[float, float, float]]] = {}  # (room, side) -> (lo, hi, along)
    for a, b in doors:
        ra, rb = rooms[a], rooms[b]
        if ra.floor != rb.floor:  # stairs
            continue
        alo, ahi = np.subtract(ra.location, np.divide(ra.size, 2)), np.add(ra.location, np.divide(ra.size, 2))
        blo, bhi = np.subtract(rb.location, np.divide(rb.size, 2)), np.add(rb.location, np.divide(rb.size, 2))
        for axis in (0, 1):
            other = 1 - axis
            lo_o, hi_o = max(alo[other], blo[other]), min(ahi[other], bhi[other])
            if abs(ahi[axis] - blo[axis]) < 0.31 or abs(bhi[axis] - alo[axis]) < 0.31:
                width = min(DOOR_W, hi_o - lo_o - 0.1)  # a shared wall of 1 m (adjacent_rooms' least) gets 0.9
                if width < 0.9 - 1e-6:
                    continue
                a_side = 1 if abs(ahi[axis] - blo[axis]) < 0.31 else -1
                mid = door_spot(obstacles, axis, ahi[axis] if a_side > 0 else alo[axis], lo_o + 0.05, hi_o - 0.05,
                                width)
                gaps.setdefault((a, axis * 2 + (a_side > 0)), []).append((mid - width / 2, mid + width / 2, mid))
                gaps.setdefault((b, axis * 2 + (a_side < 0)), []).append((mid - width / 2, mid + width / 2, mid))
                plane = ahi[axis] if a_side > 0 else alo[axis]
                far = blo[axis] if a_side > 0 else bhi[axis]
                if abs(far - plane) > 0.005:  # the rooms nearly touch: a threshold floor spans the gap
                    lo, hi = np.zeros(2), np.zeros(2)
                    lo[axis], hi[axis] = sorted((plane, far))
                    lo[other], hi[other] = mid - width / 2 - WALL_T, mid + width / 2 + WALL_T
                    floors.append((lo, hi))
                centre = np.zeros(2)
                centre[axis], centre[other] = plane, mid
                doorways.append((a, b, centre))
                break
    doorways += _overlap_doors(rooms, doorways, obstacles, gaps)
    walkways = []
    for floor in sorted({r.floor for r in rooms.values()}):  # floors meet by stairs, not walkways
        mine = {rid: r for rid, r in rooms.items() if r.floor == floor}
        walkways += plan_walkways(mine, [(a, b) for a, b, _ in doorways if a in mine and b in mine], obstacles, DOOR_W)
    for w in walkways:
        floors.extend(w.floors)
        for room, side, along in w.doors:
            gaps.setdefault((room, side), []).append((along - DOOR_W / 2, along + DOOR_W / 2, along))
    for rid, room in rooms.items():
        lo = np.subtract(room.location, np.divide(room.size, 2))
        hi = np.add(room.location, np.divide(room.size, 2))
        for axis in (0, 1):
            other = 1 - axis
            for positive in (False, True):
                plane = hi[axis] if positive else lo[axis]
                cuts = sorted(gaps.get((rid, axis * 2 + positive), []))
                start = lo[other] - WALL_T / 2
                pieces = []
                for g0, g1, _ in cuts:
                    pieces.append((start, g0, 0.0, WALL_HEIGHT))
                    pieces.append((g0, g1, DOOR_H, WALL_HEIGHT))  # lintel
                    start = g1
                pieces.append((start, hi[other] + WALL_T / 2, 0.0, WALL_HEIGHT))
                inside = _runs_through(rooms, rid, axis, plane)
                for s0, s1, z0, z1 in _cut(pieces, inside):
                    if s1 - s0 <= 1e-3:
                        continue
                    a, b = np.zeros(3), np.zeros(3)
                    a[axis], b[axis] = plane - WALL_T / 2, plane + WALL_T / 2
                    a[other], b[other] = s0, s1
                    a[2], b[2] = z0, z1
                    boxes.append((a, b))
    return boxes, doorways, floors, walkways


def _runs_through(rooms: dict, rid: int, axis: int, plane: float, depth: float = 0.05) -> list[tuple[float, float]]:
    """Where a wall of room `rid` (at `plane` across `axis`) runs through another room of its floor, at least
    `depth` inside it: the stretches (lo, hi) along the wall. Real 3DSG boxes overlap (a room is no rectangle);
    their overlap is floor both rooms share, so no wall stands there and the two rooms open into each other."""
    other, me = 1 - axis, rooms[rid]
    out = []
    for oid, r in rooms.items():
        if oid == rid or r.floor != me.floor:
            continue
        lo, hi = np.subtract(r.location[:2], np.divide(r.size[:2], 2)), np.add(r.location[:2], np.divide(r.size[:2], 2))
        if lo[axis] + depth < plane < hi[axis] - depth:
            out.append((float(lo[other]), float(hi[other])))
    return out


def _cut(pieces: list[tuple[float, float, float, float]], holes: list[tuple[float, float]]) -> list:
    """Wall pieces (s0, s1, z0, z1) without the stretches `holes` (lo, hi) along the wall."""
    for h0, h1 in holes:
        kept = []
        for s0, s1, z0, z1 in pieces:
            if h1 <= s0 or h0 >= s1:
                kept.append((s0, s1, z0, z1))
                continue
            if h0 > s0:
                kept.append((s0, h0, z0, z1))
            if h1 < s1:
                kept.append((h1, s1, z0, z1))
        pieces = kept
    return pieces


def _overlap_doors(rooms: dict, doorways: list, obstacles: Obstacles, gaps: dict) -> list:
    """Doorways between rooms of a floor whose boxes overlap (a real room is no rectangle: its box takes in part
    of a neighbour, or all of a small room): in each room, the clearest stretch of wall that runs through the
    other one gets a doorway, so the two open into each other through their overlap. Adds the gaps to `gaps`
    and returns the doorways (a, b, centre)."""
    linked = {frozenset((a, b)) for a, b, _ in doorways}
    box = {rid: (np.subtract(r.location, np.divide(r.size, 2))[:2], np.add(r.location, np.divide(r.size, 2))[:2])
           for rid, r in rooms.items()}
    out = []
    ids = sorted(rooms)
    for i, a in enumerate(ids):
        for b in ids[i + 1:]:
            if rooms[a].floor != rooms[b].floor or frozenset((a, b)) in linked:
                continue
            if not np.all(np.minimum(box[a][1], box[b][1]) - np.maximum(box[a][0], box[b][0]) > 0.3):
                continue  # apart, or touching: doorways and walkways see to them
            for x, y in ((a, b), (b, a)):
                (xlo, xhi), (ylo, yhi) = box[x], box[y]
                best = None  # (blocked area, -stretch, side, along, plane, axis)
                for axis in (0, 1):
                    other = 1 - axis
                    lo_o, hi_o = max(xlo[other], ylo[other]), min(xhi[other], yhi[other])
                    if hi_o - lo_o < DOOR_W + 0.1:
                        continue
                    for positive in (False, True):
                        plane = xhi[axis] if positive else xlo[axis]
                        if not ylo[axis] + 0.3 < plane < yhi[axis] - 0.3:
                            continue  # this wall does not run through y
                        along = door_spot(obstacles, axis, plane, lo_o + 0.05, hi_o - 0.05, DOOR_W)
                        key = (round(obstacles.door(axis, plane, along, DOOR_W), 3), -(hi_o - lo_o))
                        if best is None or key < best[:2]:
                            best = (*key, axis * 2 + positive, along, plane, axis)
                if best is not None:
                    _, _, side, along, plane, axis = best
                    gaps.setdefault((x, side), []).append((along - DOOR_W / 2, along + DOOR_W / 2, along))
                    centre = np.zeros(2)
                    centre[axis], centre[1 - axis] = plane, along
                    out.append((x, y, centre))
    return out


def build_stage(sg: SceneGraph3D, folder: str | Path, doors: list[tuple[int, int]] | None = None) -> Stage:
    """Write the stage of `sg` into `folder` (doorways between `doors`, default: rooms sharing a wall)."""
    trimesh = _trimesh()
    folder = Path(folder)
    folder.mkdir(parents=True, exist_ok=True)
    doors = adjacent_rooms(sg) if doors is None else doors
    objects = sorted(sg.objects.values(), key=lambda o: o.id)
    semantic_of = {o.id: k + 1 for k, o in enumerate(objects)}  # 0 is background
    room_ids = sorted(sg.rooms)
    floor_sid = {rid: len(objects) + 1 + k for k, rid in enumerate(room_ids)}
    wall_sid = len(objects) + len(room_ids) + 1
    parts: list[tuple[str, np.ndarray, np.ndarray, int, list[int]]] = []  # name, lo, hi, semantic id, rgba
    for rid in room_ids:
        r = sg.rooms[rid]
        lo = np.array([r.location[0] - r.size[0] / 2, r.location[1] - r.size[1] / 2, -0.1])
        hi = np.array([r.location[0] + r.size[0] / 2, r.location[1] + r.size[1] / 2, 0.0])
        parts.append((f"floor_{rid}", lo, hi, floor_sid[rid], _colour(r.category) [:3] + [255]))
    walls, doorways, floors, walkways = _wall_boxes(sg, doors)
    for k, (lo, hi) in enumerate(walls):
        parts.append((f"wall_{k}", lo, hi, wall_sid, [225, 222, 215, 255]))
    for k, (lo, hi) in enumerate(floors):  # thresholds and walkways: floor of no room
        parts.append((f"walkway_{k}", np.array([*lo, -0.1]), np.array([*hi, 0.0]), wall_sid + 1, [150, 150, 150, 255]))
    items, panels, openings = [], {}, {}
    for o in objects:
        kind = class_type(o.class_)
        if kind in ITEM_TYPES:
            items.append(o.id)
            continue
        lo, hi = (np.asarray(x, dtype=float) for x in o.box)
        colour = _colour(class_key(o.class_))
        if kind in FRONT_OPEN:
            side = front_side(o, sg)
            openings[o.id] = side
            slabs = _shell(lo, hi, side)
            a, b = lo.copy(), hi.copy()
            axis, sign = side
            if sign > 0:
                a[axis] = hi[axis] - SHELL_T
            else:
                b[axis] = lo[axis] + SHELL_T
            panels[o.id] = (a, b)
        elif kind in TOP_OPEN:
            if kind == "sink":
                base_hi = hi.copy()
                base_hi[2] = hi[2] - SINK_DEPTH
                basin_lo = lo.copy()
                basin_lo[2] = base_hi[2] - SHELL_T
                slabs = [(lo, base_hi)] + _shell(basin_lo, hi, (2, 1))
            else:
                slabs = _shell(lo, hi, (2, 1))
        elif class_key(o.class_) in SEATS:
            # A chair's box takes in its back and the space under the seat: as a solid block it would hide a
            # table's top from every camera (real 3DSG chairs stand half under the table). The seat remains.
            b = hi.copy()
            b[2] = min(hi[2], lo[2] + SEAT_H)
            slabs = [(lo, b)]
        else:
            slabs = [(lo, hi)]
        for k, (a, b) in enumerate(slabs):
            parts.append((f"{o.label}_{k}", a, b, semantic_of[o.id], colour))

    scene = trimesh.Scene()
    verts, cols, faces, fids = [], [], [], []
    for name, lo, hi, sid, rgba in parts:
        box = trimesh.creation.box(extents=hi - lo)
        box.apply_translation((lo + hi) / 2)
        box.visual = trimesh.visual.TextureVisuals(material=trimesh.visual.material.PBRMaterial(
            name=name, baseColorFactor=rgba, metallicFactor=0.0, roughnessFactor=1.0))
        scene.add_geometry(box, node_name=name, geom_name=name)
        off = sum(len(v) for v in verts)
        verts.append(np.asarray(box.vertices, dtype="<f4"))
        cols.append(np.tile(np.array(rgba[:3], dtype=np.uint8), (len(box.vertices), 1)))
        faces.append(np.asarray(box.faces, dtype="<i4") + off)
        fids.append(np.full(len(box.faces), sid, dtype="<i4"))
    stem = "stage"
    scene.export(folder / f"{stem}.glb")
    _write_ply(folder / f"{stem}_semantic.ply", *map(np.concatenate, (verts, cols, faces, fids)))
    _write_house(folder / f"{stem}.house", sg, objects, semantic_of, floor_sid, wall_sid, bool(floors))
    config = folder / f"{stem}.stage_config.json"
    config.write_text(json.dumps({
        "render_asset": f"{stem}.glb", "up": [0, 0, 1], "front": [0, 1, 0],
        "semantic_asset": f"{stem}_semantic.ply", "semantic_up": [0, 1, 0], "semantic_front": [0, 0, -1],
        "semantic_descriptor_filename": f"{stem}.house"}, indent=1))
    return Stage(folder, str(config), semantic_of, room_ids, items, panels, doorways, openings, walkways)


def _write_ply(path: Path, v: np.ndarray, c: np.ndarray, f: np.ndarray, ids: np.ndarray) -> None:
    header = ("ply\nformat binary_little_endian 1.0\n"
              f"element vertex {len(v)}\nproperty float x\nproperty float y\nproperty float z\n"
              "property uchar red\nproperty uchar green\nproperty uchar blue\n"
              f"element face {len(f)}\nproperty list uchar int vertex_indices\nproperty int object_id\n"
              "end_header\n")
    vrec = np.zeros(len(v), dtype=[("p", "<f4", 3), ("c", "u1", 3)])
    vrec["p"], vrec["c"] = v, c
    frec = np.zeros(len(f), dtype=[("n", "u1"), ("i", "<i4", 3), ("o", "<i4")])
    frec["n"], frec["i"], frec["o"] = 3, f, ids
    path.write_bytes(header.encode() + vrec.tobytes() + frec.tobytes())


def _f(values) -> str:
    return " ".join(f"{float(x):.4f}" for x in values)


def _write_house(path: Path, sg: SceneGraph3D, objects, semantic_of, floor_sid, wall_sid, walkways: bool) -> None:
    """Matterport3D ASCII 1.1: one level, a region per room, a category per class, every object's box (and
    one floor object, of no region, for the thresholds and walkways when there are any)."""
    room_ids = sorted(sg.rooms)
    region_of = {rid: k for k, rid in enumerate(room_ids)}
    lo = np.min([np.subtract(r.location, np.divide(r.size, 2)) for r in sg.rooms.values()], axis=0)
    hi = np.max([np.add(r.location, np.divide(r.size, 2)) for r in sg.rooms.values()], axis=0)
    classes = sorted({class_key(o.class_) for o in objects} | {"floor", "wall"})
    cat = {c: k for k, c in enumerate(classes)}
    n_objects = len(objects) + len(room_ids) + 2 + walkways
    title = "_".join(sg.name.split()) or "scene"
    lines = ["ASCII 1.1",
             (f"H {title} {title} 0 0 0 0 0 {n_objects} {len(classes)} {len(room_ids)} 0 1  0 0 0 0 0  "
             f"{_f(lo)} {_f(hi)}  0 0 0 0 0"),
             f"L 0 {len(room_ids)} 0  {_f((lo + hi) / 2)}  {_f(lo)} {_f(hi)}  0 0 0 0 0"]
    for rid in room_ids:
        r = sg.rooms[rid]
        rlo = np.subtract(r.location, np.divide(r.size, 2))
        rhi = np.add(r.location, np.divide(r.size, 2))
        letter = REGION_LETTER.get(class_key(r.category), "z")
        lines.append(f"R {region_of[rid]} 0 0 0 {letter}  {_f(r.location)}  {_f(rlo)} {_f(rhi)}  "
                     f"{r.size[2]:.4f}  0 0 0 0")
    for c, k in cat.items():
        lines.append(f"C {k} {k + 1} {c} 0 {c} 0 0 0 0 0")
    lines.append("O 0 -1 -1  0 0 0  1 0 0  0 1 0  0 0 0  0 0 0 0 0 0 0 0")
    for o in objects:
        # radii: half extents along axis0 (x), axis1 (y) and axis0 x axis1 (z), in the Z-up .house frame
        lines.append(f"O {semantic_of[o.id]} {region_of[o.parent_room]} {cat[class_key(o.class_)]}  "
                     f"{_f(o.location)}  1 0 0  0 1 0  {_f(np.divide(o.size, 2))}  0 0 0 0 0 0 0 0")
    for rid in room_ids:
        r = sg.rooms[rid]
        lines.append(f"O {floor_sid[rid]} {region_of[rid]} {cat['floor']}  {_f((r.location[0], r.location[1], -0.05))}"
                     f"  1 0 0  0 1 0  {_f((r.size[0] / 2, r.size[1] / 2, 0.05))}  0 0 0 0 0 0 0 0")
    lines.append(f"O {wall_sid} -1 {cat['wall']}  {_f((lo + hi) / 2)}  1 0 0  0 1 0  {_f((hi - lo) / 2)}"
                 "  0 0 0 0 0 0 0 0")
    if walkways:
        lines.append(f"O {wall_sid + 1} -1 {cat['floor']}  {_f((lo + hi) / 2)}  1 0 0  0 1 0  {_f((hi - lo) / 2)}"
                     "  0 0 0 0 0 0 0 0")
    path.write_text("\n".join(lines) + "\n")
