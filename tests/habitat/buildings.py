"""Buildings in the real Stanford 3DSG / Context Matters format whose rooms share no wall, written from code.

Nothing here is copied from Gibson or Context Matters: the layouts are made up, with the traits real 3DSG
room boxes have (issue 24): boxes of a segmented mesh, so neighbours are apart by a wall's thickness or
more (0.15-0.6 m) and no two share a wall; one box overlaps its neighbours (a room that is not a rectangle);
a narrow corridor that nearly touches another along less than a metre; the floor not at z = 0; furniture
against the walls, some of it just outside its room's box; added task objects with a location and no size
(as Context Matters adds them); a second floor reached by a staircase room on each floor.

    write_building(folder, "Parlow")            # <folder>/Parlow.npz and Parlow.json, one floor
    write_building(folder, "Stairwick")         # two floors, a staircase on each
"""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np

FLOOR_Z = -0.12  # the ground floor's level: Gibson's frames do not put it at 0
STOREY = 3.05  # floor to floor
ROOM_H = 2.7

# Rooms: (id, category, floor, (x0, y0, x1, y1)). Furniture: (id, class, room or None, (x, y, z-above-floor
# of the box's centre), size). Added objects: (id, class, room, (x, y, z-above-floor)), no size.
_PARLOW_ROOMS = [
    (1, "bathroom", "A", (4.55, 6.30, 6.98, 7.87)),       # 2.43 x 1.57
    (2, "bedroom", "A", (0.30, 6.30, 4.10, 10.20)),
    (3, "corridor", "A", (0.50, 4.55, 8.20, 5.85)),       # 1.3 m wide; 0.45 m from the rooms beside it
    (4, "corridor", "A", (7.30, 6.00, 8.50, 9.50)),       # 1.2 m wide; shares 0.9 m with corridor 3 (< 1 m)
    (5, "dining_room", "A", (4.05, 0.30, 8.00, 4.10)),
    (6, "kitchen", "A", (0.20, 0.20, 3.60, 3.80)),
    (7, "living_room", "A", (7.85, 0.10, 13.40, 6.40)),   # overlaps the dining room and corridor 3
]
_PARLOW_FURNITURE = [
    (10, "oven", 6, (0.55, 1.20, 0.45), (0.6, 0.6, 0.9)),
    (11, "sink", 6, (0.55, 2.00, 0.45), (0.6, 0.8, 0.9)),
    (12, "refrigerator", 6, (0.58, 3.05, 0.9), (0.7, 0.7, 1.8)),
    (13, "refrigerator", 6, (3.20, 0.62, 0.9), (0.7, 0.7, 1.8)),
    (14, "counter", 6, (2.10, 0.52, 0.45), (1.8, 0.6, 0.9)),
    (15, "trash_can", 6, (3.30, 3.50, 0.3), (0.35, 0.35, 0.6)),
    (16, "dining_table", 5, (6.00, 2.20, 0.38), (1.8, 1.0, 0.76)),
    (17, "dining_table", 5, (6.00, 3.60, 0.38), (1.0, 0.6, 0.76)),
    (18, "chair", 5, (5.00, 2.20, 0.45), (0.45, 0.45, 0.9)),
    (19, "chair", None, (8.05, 2.60, 0.45), (0.45, 0.45, 0.9)),  # room-less, in the overlap
    (20, "cabinet", 5, (4.40, 0.70, 0.45), (0.6, 0.8, 0.9)),
    (21, "couch", 7, (13.00, 3.20, 0.4), (0.9, 2.2, 0.8)),
    (22, "couch", 7, (10.60, 0.55, 0.4), (2.0, 0.9, 0.8)),
    (23, "coffee_table", 7, (11.40, 3.20, 0.23), (1.0, 0.6, 0.45)),
    (24, "tv", 7, (8.45, 4.00, 0.8), (0.4, 1.2, 0.7)),
    (25, "potted_plant", 7, (13.05, 6.10, 0.45), (0.4, 0.4, 0.9)),
    (26, "bookshelf", 7, (10.80, 6.25, 0.9), (1.2, 0.4, 1.8)),   # sticks 0.05 m out of the room's box
    (27, "bed", 2, (2.20, 9.15, 0.28), (1.6, 2.0, 0.55)),
    (28, "nightstand", 2, (0.60, 9.80, 0.3), (0.45, 0.4, 0.6)),
    (29, "wardrobe", 2, (3.75, 6.75, 1.0), (0.6, 1.0, 2.0)),
    (30, "basket", 2, (0.55, 6.60, 0.2), (0.4, 0.4, 0.4)),
    (31, "toilet", 1, (6.60, 7.45, 0.4), (0.45, 0.65, 0.8)),
    (32, "sink", 1, (4.90, 7.55, 0.42), (0.5, 0.45, 0.85)),
    (33, "table", 4, (8.20, 9.10, 0.38), (0.5, 0.6, 0.76)),
]
_PARLOW_ADDED = [  # Context Matters' task objects: a location, no size
    (100, "plate", 6, (2.10, 0.55, 0.95)), (101, "fork", 5, (6.20, 2.30, 0.8)), (102, "knife", 2, (0.6, 9.8, 0.65)),
    (103, "spoon", 4, (8.2, 9.1, 0.8)), (104, "glass", 1, (4.9, 7.5, 0.9)), (105, "napkin", 6, (2.5, 0.5, 0.95)),
    (106, "cup", 7, (11.4, 3.2, 0.5)), (107, "apple", 6, (1.7, 0.5, 0.95)), (108, "milk", 6, (0.58, 3.05, 0.3)),
    (109, "book", 7, (11.2, 3.1, 0.5)), (110, "book", 5, (6.3, 3.6, 0.8)), (111, "shirt", 2, (2.2, 9.0, 0.6)),
    (112, "towel", 1, (6.6, 7.4, 0.85)), (113, "bowl", 5, (5.8, 2.0, 0.8)), (114, "remote", 7, (11.5, 3.3, 0.5)),
    (115, "sock", 2, (0.55, 6.6, 0.15)),
]

# Two floors: the ground floor of Parlow without its bedroom (a staircase there), and a floor above.
_STAIRWICK_ROOMS = [r for r in _PARLOW_ROOMS if r[0] != 2] + [
    (2, "staircase", "A", (0.30, 6.40, 2.40, 9.00)),
    (8, "staircase", "B", (0.30, 6.40, 2.40, 9.00)),      # right above the one below
    (9, "corridor", "B", (2.90, 6.30, 4.30, 12.0)),
    (11, "bedroom", "B", (4.80, 8.00, 9.00, 12.2)),
    (12, "bathroom", "B", (0.30, 9.50, 2.50, 11.8)),
]
_STAIRWICK_FURNITURE = [f for f in _PARLOW_FURNITURE if f[2] != 2] + [
    (40, "bed", 11, (6.90, 11.10, 0.28), (1.6, 2.0, 0.55)),
    (41, "nightstand", 11, (5.20, 11.90, 0.3), (0.45, 0.4, 0.6)),
    (42, "wardrobe", 11, (8.65, 8.70, 1.0), (0.6, 1.0, 2.0)),
    (43, "basket", 11, (5.10, 8.30, 0.2), (0.4, 0.4, 0.4)),
    (44, "sink", 12, (0.60, 11.30, 0.42), (0.5, 0.45, 0.85)),
    (45, "shelf", 9, (4.05, 11.0, 0.6), (0.4, 0.9, 1.2)),
]
_STAIRWICK_ADDED = [a for a in _PARLOW_ADDED if a[2] != 2] + [
    (120, "shirt", 11, (6.9, 11.0, 0.6)), (121, "sock", 11, (5.1, 8.3, 0.15)), (122, "book", 9, (4.05, 11.0, 1.25)),
    (123, "towel", 12, (0.6, 11.3, 0.9)),
]

BUILDINGS = {
    "Parlow": (_PARLOW_ROOMS, _PARLOW_FURNITURE, _PARLOW_ADDED),
    "Stairwick": (_STAIRWICK_ROOMS, _STAIRWICK_FURNITURE, _STAIRWICK_ADDED),
}


def _level(floor: str) -> float:
    return FLOOR_Z + (STOREY if floor == "B" else 0.0)


def write_building(folder: str | Path, scene: str) -> Path:
    """`<folder>/<scene>.npz` (Stanford's pickled `output` dict) and `<scene>.json` (Context Matters' text,
    empty `bbox` lists); returns the folder, which `scene_graph=` takes."""
    folder = Path(folder)
    folder.mkdir(parents=True, exist_ok=True)
    rooms, furniture, added = BUILDINGS[scene]
    floor_of = {rid: floor for rid, _, floor, _ in rooms}
    rooms_npz, rooms_json, objects_npz, objects_json = {}, {}, {}, {}
    for rid, cat, floor, (x0, y0, x1, y1) in rooms:
        w, d = x1 - x0, y1 - y0
        rooms_npz[rid] = {"id": rid, "scene_category": cat, "floor_area": round(w * d, 3), "floor_number": floor,
                          "location": np.array([(x0 + x1) / 2, (y0 + y1) / 2, _level(floor) + ROOM_H / 2]),
                          "size": np.array([w, d, ROOM_H]), "volume": w * d * ROOM_H, "parent_building": 1}
        rooms_json[str(rid)] = {"id": rid, "category": cat, "label": f"{cat}_{rid}", "bbox": [],
                                "objects_in_room": []}
    for oid, cls, room, (x, y, z), size in furniture:
        level = _level(floor_of[room] if room is not None else "A")
        objects_npz[oid] = {"id": oid, "class_": cls, "action_affordance": [], "material": [],
                            "floor_area": size[0] * size[1], "surface_coverage": 0.5,
                            "location": np.array([x, y, level + z]), "size": np.array(size),
                            "volume": float(np.prod(size)), "tactile_texture": None, "visual_texture": None,
                            "parent_room": room, "description": ""}
        objects_json[str(oid)] = {"id": oid, "class": cls, "label": f"{cls}_{oid}", "parent_room": room,
                                  "description": f"A {cls.replace('_', ' ')}.", "bbox": [], "action_affordance": []}
        if room is not None:
            rooms_json[str(room)]["objects_in_room"].append(oid)
    for oid, cls, room, (x, y, z) in added:
        desc = f"A {['red', 'blue', 'white'][oid % 3]} {cls}."
        objects_npz[oid] = {"id": oid, "class_": cls, "action_affordance": [], "parent_room": room,
                            "location": np.array([x, y, _level(floor_of[room]) + z]), "description": desc}
        objects_json[str(oid)] = {"id": oid, "class": cls, "label": f"{cls}_{oid}", "parent_room": room,
                                  "description": desc, "bbox": [], "action_affordance": []}
        rooms_json[str(room)]["objects_in_room"].append(oid)
    np.savez_compressed(folder / f"{scene}.npz", output=np.array({"room": rooms_npz, "object": objects_npz},
                                                                  dtype=object))
    (folder / f"{scene}.json").write_text(json.dumps(
        {"scene_info": {"total_rooms": len(rooms_json), "total_objects": len(objects_json)},
         "rooms": rooms_json, "objects": objects_json}, indent=1))
    return folder


def shared_wall_pairs(scene: str, gap: float = 0.05) -> list[tuple[int, int]]:
    """Pairs of rooms of one floor whose boxes touch within `gap` along a metre or more (none, by design)."""
    rooms = BUILDINGS[scene][0]
    out = []
    for i, (a, _, fa, ra) in enumerate(rooms):
        for b, _, fb, rb in rooms[i + 1:]:
            if fa != fb:
                continue
            for axis in (0, 1):
                o = 1 - axis
                apart = max(rb[axis] - ra[axis + 2], ra[axis] - rb[axis + 2])
                shared = min(ra[o + 2], rb[o + 2]) - max(ra[o], rb[o])
                if abs(apart) <= gap and shared >= 1.0:
                    out.append((a, b))
    return out
