"""A seeded apartment spec for the PyBullet world and the `TampMap` (rooms > places > objects) it implies.

`generate_layout(config, rng)` draws 2-4 axis-aligned rooms in a grid, walls with door gaps, furniture
against the walls or free-standing, small items (mugs, cubes) on the furniture and boxes on the floor, some
of them suspicious. `build_tamp_map(layout)` rasterises the free floor on a 0.5 m lattice from the layout
geometry: a lattice point is a place when the robot's disc fits there, places are joined 8-connected when
the swept disc stays clear of walls and furniture, and every place takes its room as region. Boxes stand on
places (they are objects of the scene graph, not part of the free-space map): passing them is the motion
planner's business. This module is pure Python and numpy; the PyBullet bodies are built from the spec by
`servicerobot.envs.pybullet.sim`.
"""

from __future__ import annotations

import itertools
import math
from dataclasses import dataclass, replace
from functools import cached_property

import networkx as nx
import numpy as np

from servicerobot.errors import SceneError
from servicerobot.scenes.tamp_map import MapObject, Place, Region, TampMap

__all__ = [
    "LATTICE", "PRESETS", "ROBOT", "ROBOT_HEIGHT", "ROBOT_RADIUS", "DoorSpec", "FurnitureSpec", "ItemSpec",
    "Layout", "LayoutConfig", "RoomSpec", "WallSpec", "build_tamp_map", "generate_layout", "rect_distance",
    "segment_rect_distance",
]

Point = tuple[float, float]
Rect = tuple[float, float, float, float]  # x0, y0, x1, y1

ROBOT = "robot"
LATTICE = 0.5
WALL_T = 0.1
WALL_H = 1.0
DOOR_W = 1.2
ROBOT_RADIUS = 0.25
ROBOT_HEIGHT = 1.0
CLEARANCE = 0.03  # places keep the robot's disc this far from walls and furniture
REACH = 0.85  # a place reaches furniture whose footprint is this close to the place's centre
INSPECT_RANGE = 1.6  # and a floor item whose centre is this close
INFLATION = 0.5  # suspicious items must not be passed closer than radius + INFLATION before inspection

# label -> furniture kinds that room may hold, the first always present
FURNITURE_BY_ROOM: dict[str, tuple[str, ...]] = {
    "kitchen": ("table", "counter", "shelf"),
    "living room": ("coffee table", "shelf", "cabinet"),
    "bedroom": ("desk", "nightstand", "shelf"),
    "office": ("desk", "cabinet", "shelf"),
    "dining room": ("table", "cabinet", "counter"),
}
# kind -> (width, depth, top height, model, against a wall, rgb)
FURNITURE_KINDS: dict[str, tuple[float, float, float, str, bool, tuple[float, float, float]]] = {
    "table": (1.2, 0.8, 0.5, "table", False, (0.62, 0.45, 0.3)),
    "counter": (1.5, 0.6, 0.9, "box", True, (0.8, 0.78, 0.72)),
    "shelf": (1.0, 0.4, 1.0, "box", True, (0.55, 0.38, 0.24)),
    "coffee table": (1.0, 0.6, 0.45, "box", False, (0.5, 0.33, 0.2)),
    "cabinet": (0.9, 0.5, 0.85, "box", True, (0.7, 0.6, 0.5)),
    "desk": (1.2, 0.6, 0.75, "box", True, (0.6, 0.5, 0.38)),
    "nightstand": (0.5, 0.45, 0.55, "box", True, (0.5, 0.4, 0.32)),
}
COLOURS: dict[str, tuple[float, float, float]] = {
    "red": (0.85, 0.18, 0.18), "blue": (0.16, 0.4, 0.9), "green": (0.18, 0.65, 0.27),
    "yellow": (0.95, 0.8, 0.15), "orange": (0.94, 0.53, 0.12), "purple": (0.55, 0.27, 0.75),
    "white": (0.95, 0.95, 0.95), "black": (0.12, 0.12, 0.12),
}
ITEM_SIZES: dict[str, float] = {"mug": 0.045, "cube": 0.03, "box": 0.2}  # half extent in x/y


@dataclass(frozen=True)
class LayoutConfig:
    """Size of a generated apartment. Counts are exact, so observation spaces are fixed per config.

    Attributes:
        n_rooms: 2, 3 (in a row) or 4 (a 2x2 grid).
        room_size: (min, max) side of a room in metres, multiples of the 0.5 m lattice.
        furniture_per_room: pieces of furniture per room (1-3).
        n_small_items: mugs and cubes standing on furniture.
        n_boxes: boxes on the floor; the first `n_suspicious` are suspicious.
    """

    n_rooms: int = 3
    room_size: tuple[float, float] = (4.0, 5.0)
    furniture_per_room: int = 2
    n_small_items: int = 4
    n_boxes: int = 3
    n_suspicious: int = 2

    def __post_init__(self) -> None:
        if self.n_rooms not in (2, 3, 4):
            raise SceneError(f"n_rooms must be 2, 3 or 4, got {self.n_rooms}")
        lo, hi = self.room_size
        if not (3.5 <= lo <= hi <= 8.0) or (lo / LATTICE) % 1 or (hi / LATTICE) % 1:
            raise SceneError(f"room_size must be multiples of {LATTICE} m within [3.5, 8], got {self.room_size}")
        if not 1 <= self.furniture_per_room <= 3:
            raise SceneError(f"furniture_per_room must be 1-3, got {self.furniture_per_room}")
        if not 0 <= self.n_suspicious <= self.n_boxes:
            raise SceneError(f"need 0 <= n_suspicious <= n_boxes, got {self.n_suspicious} > {self.n_boxes}")
        if self.n_small_items > 8 or self.n_boxes > 2 * self.n_rooms:
            raise SceneError("at most 8 small items and 2 boxes per room")

    @property
    def grid(self) -> tuple[int, int]:
        """(columns, rows) of the room grid."""
        return {2: (2, 1), 3: (3, 1), 4: (2, 2)}[self.n_rooms]

    @property
    def n_doors(self) -> int:
        cols, rows = self.grid
        return (cols - 1) * rows + (rows - 1) * cols

    @property
    def max_places(self) -> int:
        """An upper bound on the places of any apartment of this config (fixes the observation spaces)."""
        side = round(self.room_size[1] / LATTICE)
        return self.n_rooms * (side - 1) ** 2 + self.n_doors

    @property
    def n_entities(self) -> int:
        """Robot, rooms, furniture and items: the entities the robot can see."""
        return 1 + self.n_rooms * (1 + self.furniture_per_room) + self.n_small_items + self.n_boxes


PRESETS: dict[str, LayoutConfig] = {
    "small": LayoutConfig(n_rooms=2, n_small_items=3, n_boxes=2, n_suspicious=1),
    "default": LayoutConfig(),
    "large": LayoutConfig(n_rooms=4, n_small_items=6, n_boxes=4, n_suspicious=3),
}


@dataclass(frozen=True)
class RoomSpec:
    name: str
    label: str
    rect: Rect


@dataclass(frozen=True)
class DoorSpec:
    """A gap of `width` in the wall between two rooms, centred at `centre`; `vertical` walls have constant x."""

    name: str
    rooms: tuple[str, str]
    centre: Point
    vertical: bool
    width: float = DOOR_W


@dataclass(frozen=True)
class WallSpec:
    name: str
    rect: Rect
    height: float = WALL_H


@dataclass(frozen=True)
class FurnitureSpec:
    """A piece of furniture: footprint `rect`, top surface at `height`, `model` "table" (a top on four
    legs) or "box"."""

    name: str
    kind: str
    room: str
    rect: Rect
    height: float
    model: str
    rgb: tuple[float, float, float]

    @property
    def centre(self) -> Point:
        x0, y0, x1, y1 = self.rect
        return ((x0 + x1) / 2, (y0 + y1) / 2)

    @property
    def noun(self) -> str:
        return self.kind


@dataclass(frozen=True)
class ItemSpec:
    """A mug or cube on `support` (furniture name), or a box on the floor (`support` == "")."""

    name: str
    kind: str  # "mug" | "cube" | "box"
    colour: str
    position: Point
    room: str
    support: str = ""
    suspicious: bool = False

    @property
    def noun(self) -> str:
        return f"{self.colour} {self.kind}"

    @property
    def half(self) -> float:
        return ITEM_SIZES[self.kind]

    @property
    def radius(self) -> float:
        return self.half * math.sqrt(2.0)


@dataclass(frozen=True)
class Layout:
    """An apartment: rooms, doors, walls, furniture, items and the robot's start (all planar, metres)."""

    config: LayoutConfig
    rooms: tuple[RoomSpec, ...]
    doors: tuple[DoorSpec, ...]
    walls: tuple[WallSpec, ...]
    furniture: tuple[FurnitureSpec, ...]
    items: tuple[ItemSpec, ...]
    robot_start: Point
    extent: tuple[float, float]  # (width, height) of the apartment; it spans [0, w] x [0, h]

    @cached_property
    def tamp_map(self) -> TampMap:
        """The scene graph of this apartment (`build_tamp_map`, built once)."""
        return build_tamp_map(self)

    @cached_property
    def by_name(self) -> dict[str, RoomSpec | FurnitureSpec | ItemSpec]:
        return {e.name: e for e in (*self.rooms, *self.furniture, *self.items)}

    def room_at(self, p: Point) -> str | None:
        """The room whose rectangle contains `p` (the first one on a shared wall), or None."""
        for r in self.rooms:
            x0, y0, x1, y1 = r.rect
            if x0 <= p[0] <= x1 and y0 <= p[1] <= y1:
                return r.name
        return None

    def to_json(self) -> dict:
        """A JSON-ready description of the spec (the source of truth for the PyBullet scene)."""
        return {
            "extent": list(self.extent), "robot_start": list(self.robot_start),
            "rooms": [{"name": r.name, "label": r.label, "rect": list(r.rect)} for r in self.rooms],
            "doors": [{"name": d.name, "rooms": list(d.rooms), "centre": list(d.centre), "width": d.width}
                      for d in self.doors],
            "walls": [{"name": w.name, "rect": list(w.rect)} for w in self.walls],
            "furniture": [{"name": f.name, "kind": f.kind, "room": f.room, "rect": list(f.rect),
                           "height": f.height, "model": f.model} for f in self.furniture],
            "items": [{"name": i.name, "kind": i.kind, "colour": i.colour, "position": list(i.position),
                       "room": i.room, "support": i.support, "suspicious": i.suspicious} for i in self.items],
        }


# ---------------------------------------------------------------------------------------------- geometry
def rect_distance(p: Point, r: Rect) -> float:
    """Distance from point `p` to the axis-aligned rectangle `r` (0 inside)."""
    dx = max(r[0] - p[0], 0.0, p[0] - r[2])
    dy = max(r[1] - p[1], 0.0, p[1] - r[3])
    return math.hypot(dx, dy)


def _segment_point_distance(a: Point, b: Point, p: Point) -> float:
    ax, ay = a
    vx, vy = b[0] - ax, b[1] - ay
    n2 = vx * vx + vy * vy
    t = 0.0 if n2 == 0 else min(1.0, max(0.0, ((p[0] - ax) * vx + (p[1] - ay) * vy) / n2))
    return math.hypot(ax + t * vx - p[0], ay + t * vy - p[1])


def _segments_cross(a: Point, b: Point, c: Point, d: Point) -> bool:
    def orient(p, q, r):
        return (q[0] - p[0]) * (r[1] - p[1]) - (q[1] - p[1]) * (r[0] - p[0])
    o1, o2, o3, o4 = orient(a, b, c), orient(a, b, d), orient(c, d, a), orient(c, d, b)
    return (o1 * o2 < 0) and (o3 * o4 < 0)


def segment_rect_distance(a: Point, b: Point, r: Rect) -> float:
    """Distance between segment a-b and the axis-aligned rectangle `r` (0 when they meet)."""
    x0, y0, x1, y1 = r
    if rect_distance(a, r) == 0 or rect_distance(b, r) == 0:
        return 0.0
    corners = ((x0, y0), (x1, y0), (x1, y1), (x0, y1))
    for c, d in zip(corners, corners[1:] + corners[:1]):
        if _segments_cross(a, b, c, d):
            return 0.0
    return min(min(rect_distance(a, r), rect_distance(b, r)),
               min(_segment_point_distance(a, b, c) for c in corners))


def _rect_gap(r: Rect, s: Rect) -> float:
    dx = max(s[0] - r[2], 0.0, r[0] - s[2])
    dy = max(s[1] - r[3], 0.0, r[1] - s[3])
    return math.hypot(dx, dy)


def _rect_distances(points: np.ndarray, rects: np.ndarray) -> np.ndarray:
    """Distances from every point (N, 2) to every axis-aligned rectangle (M, 4): an (N, M) array."""
    px, py = points[:, :1], points[:, 1:2]
    dx = np.maximum(np.maximum(rects[None, :, 0] - px, 0.0), px - rects[None, :, 2])
    dy = np.maximum(np.maximum(rects[None, :, 1] - py, 0.0), py - rects[None, :, 3])
    return np.hypot(dx, dy)


def _snap(v: float, q: float = 0.05) -> float:
    return round(round(v / q) * q, 4)


# ---------------------------------------------------------------------------------------------- generator
def generate_layout(config: LayoutConfig, rng: np.random.Generator, attempts: int = 60) -> Layout:
    """Draw an apartment whose every piece of furniture and floor item can be reached from the start.

    Raises:
        SceneError: no valid apartment was found in `attempts` draws (the config is too crowded).
    """
    for _ in range(attempts):
        layout = _draw(config, rng)
        if layout is None:
            continue
        try:
            layout.tamp_map  # noqa: B018 - builds and validates the map
        except SceneError:
            continue
        return layout
    raise SceneError(f"no valid apartment for {config} in {attempts} draws; use bigger rooms or fewer things")


def _choice(rng: np.random.Generator, seq):
    return seq[int(rng.integers(len(seq)))]


def _draw(cfg: LayoutConfig, rng: np.random.Generator) -> Layout | None:
    cols, rows = cfg.grid
    sizes = np.arange(cfg.room_size[0], cfg.room_size[1] + 1e-9, LATTICE)
    widths = [float(_choice(rng, sizes)) for _ in range(cols)]
    heights = [float(_choice(rng, sizes)) for _ in range(rows)]
    xs = [0.0] + list(np.cumsum(widths))
    ys = [0.0] + list(np.cumsum(heights))
    labels = ["kitchen"] + [str(x) for x in rng.permutation(
        [k for k in FURNITURE_BY_ROOM if k != "kitchen"])[: cfg.n_rooms - 1]]
    order = [int(i) for i in rng.permutation(cfg.n_rooms)]
    cells = [(c, r) for r in range(rows) for c in range(cols)]
    rooms: list[RoomSpec] = []
    cell_room: dict[tuple[int, int], str] = {}
    for k, (c, r) in enumerate(cells):
        label = labels[order[k]]
        rooms.append(RoomSpec(label.replace(" ", "_"), label, (xs[c], ys[r], xs[c + 1], ys[r + 1])))
        cell_room[(c, r)] = rooms[-1].name
    rooms.sort(key=lambda r: (r.name != "kitchen", r.rect[1], r.rect[0]))

    doors: list[DoorSpec] = []

    def door_at(lo: float, hi: float) -> float:
        options = np.arange(lo + 1.0, hi - 1.0 + 1e-9, LATTICE)
        return float(_choice(rng, options))

    for (c, r), name in sorted(cell_room.items()):
        if c + 1 < cols:
            y = door_at(ys[r], ys[r + 1])
            doors.append(DoorSpec(f"door_{len(doors) + 1}", (name, cell_room[(c + 1, r)]), (xs[c + 1], y), True))
        if r + 1 < rows:
            x = door_at(xs[c], xs[c + 1])
            doors.append(DoorSpec(f"door_{len(doors) + 1}", (name, cell_room[(c, r + 1)]), (x, ys[r + 1]), False))

    walls = _walls(xs, ys, doors)
    furniture = _furniture(cfg, rng, rooms, doors)
    if furniture is None:
        return None
    items = _items(cfg, rng, rooms, doors, furniture)
    if items is None:
        return None
    layout = Layout(cfg, tuple(rooms), tuple(doors), tuple(walls), tuple(furniture), tuple(items),
                    (0.0, 0.0), (float(xs[-1]), float(ys[-1])))
    start = _robot_start(rng, layout)
    return None if start is None else replace(layout, robot_start=start)


def _walls(xs: list[float], ys: list[float], doors: list[DoorSpec]) -> list[WallSpec]:
    """Wall boxes along every grid line, cut at the doors; ends overlap so corners close."""
    h = WALL_T / 2
    segments: list[Rect] = []
    for x in xs:
        for y0, y1 in itertools.pairwise(ys):
            gaps = sorted(d.centre[1] for d in doors if d.vertical and abs(d.centre[0] - x) < 1e-9
                          and y0 < d.centre[1] < y1)
            lo = y0 - h
            for g in gaps:
                segments.append((x - h, lo, x + h, g - DOOR_W / 2))
                lo = g + DOOR_W / 2
            segments.append((x - h, lo, x + h, y1 + h))
    for y in ys:
        for x0, x1 in itertools.pairwise(xs):
            gaps = sorted(d.centre[0] for d in doors if not d.vertical and abs(d.centre[1] - y) < 1e-9
                          and x0 < d.centre[0] < x1)
            lo = x0 - h
            for g in gaps:
                segments.append((lo, y - h, g - DOOR_W / 2, y + h))
                lo = g + DOOR_W / 2
            segments.append((lo, y - h, x1 + h, y + h))
    return [WallSpec(f"wall_{i + 1}", tuple(round(v, 4) for v in s)) for i, s in enumerate(segments)]


def _furniture(cfg: LayoutConfig, rng: np.random.Generator, rooms: list[RoomSpec],
               doors: list[DoorSpec]) -> list[FurnitureSpec] | None:
    out: list[FurnitureSpec] = []
    for room in rooms:
        catalogue = FURNITURE_BY_ROOM[room.label]
        kinds = [catalogue[0]] + [str(k) for k in rng.permutation(list(catalogue[1:]))]
        room_doors = [d for d in doors if room.name in d.rooms]
        for kind in kinds[: cfg.furniture_per_room]:
            spec = _place_furniture(rng, room, kind, room_doors, out)
            if spec is None:
                return None
            out.append(spec)
    return out


def _place_furniture(rng: np.random.Generator, room: RoomSpec, kind: str, doors: list[DoorSpec],
                     placed: list[FurnitureSpec]) -> FurnitureSpec | None:
    w, d, height, model, against_wall, rgb = FURNITURE_KINDS[kind]
    x0, y0, x1, y1 = room.rect
    inner = WALL_T / 2 + 0.02
    for _ in range(40):
        rotated = bool(rng.integers(2))
        fw, fd = (d, w) if rotated else (w, d)
        if against_wall:
            side = int(rng.integers(4))
            # the long side runs along the wall
            fw, fd = (d, w) if side in (0, 1) else (w, d)
            # flush against the wall; only the coordinate along the wall is snapped
            along_x = _snap(float(rng.uniform(x0 + inner + fw / 2, x1 - inner - fw / 2)))
            along_y = _snap(float(rng.uniform(y0 + inner + fd / 2, y1 - inner - fd / 2)))
            cx, cy = ((x0 + inner + fw / 2, along_y), (x1 - inner - fw / 2, along_y),
                      (along_x, y0 + inner + fd / 2), (along_x, y1 - inner - fd / 2))[side]
        else:
            cx = rng.uniform(x0 + 1.2 + fw / 2, x1 - 1.2 - fw / 2) if x1 - x0 > 2.4 + fw else (x0 + x1) / 2
            cy = rng.uniform(y0 + 1.2 + fd / 2, y1 - 1.2 - fd / 2) if y1 - y0 > 2.4 + fd else (y0 + y1) / 2
            cx, cy = _snap(float(cx)), _snap(float(cy))
        rect = (round(cx - fw / 2, 4), round(cy - fd / 2, 4), round(cx + fw / 2, 4), round(cy + fd / 2, 4))
        if rect[0] < x0 + inner - 1e-6 or rect[2] > x1 - inner + 1e-6 or \
                rect[1] < y0 + inner - 1e-6 or rect[3] > y1 - inner + 1e-6:
            continue
        if any(rect_distance(dr.centre, rect) < 1.4 for dr in doors):
            continue
        if any(_rect_gap(rect, f.rect) < 0.9 for f in placed):
            continue
        n = sum(1 for f in placed if f.room == room.name and f.kind == kind)
        name = f"{room.name}_{kind.replace(' ', '_')}" + (f"_{n + 1}" if n else "")
        return FurnitureSpec(name, kind, room.name, rect, height, model, rgb)
    return None


def _items(cfg: LayoutConfig, rng: np.random.Generator, rooms: list[RoomSpec], doors: list[DoorSpec],
           furniture: list[FurnitureSpec]) -> list[ItemSpec] | None:
    items: list[ItemSpec] = []
    palette = list(COLOURS)
    colours_left = {k: [str(c) for c in rng.permutation(palette)] for k in ("mug", "cube", "box")}
    counts = {"mug": 0, "cube": 0, "box": 0}
    for i in range(cfg.n_small_items):
        kind = "mug" if i % 2 == 0 else "cube"
        for _ in range(40):
            f = _choice(rng, furniture)
            x0, y0, x1, y1 = f.rect
            m = 0.12
            pos = (_snap(float(rng.uniform(x0 + m, x1 - m)), 0.01), _snap(float(rng.uniform(y0 + m, y1 - m)), 0.01))
            if all(o.support != f.name or math.dist(o.position, pos) >= 0.2 for o in items):
                counts[kind] += 1
                items.append(ItemSpec(f"{kind}_{counts[kind]}", kind, colours_left[kind].pop(), pos, f.room,
                                      support=f.name))
                break
        else:
            return None
    suspicious = {int(k) for k in rng.permutation(cfg.n_boxes)[: cfg.n_suspicious]}
    for i in range(cfg.n_boxes):
        for _ in range(60):
            room = _choice(rng, rooms)
            x0, y0, x1, y1 = room.rect
            pos = (float(_choice(rng, np.arange(x0 + 1.0, x1 - 1.0 + 1e-9, LATTICE))),
                   float(_choice(rng, np.arange(y0 + 1.0, y1 - 1.0 + 1e-9, LATTICE))))
            if any(math.dist(d.centre, pos) < 1.6 for d in doors):
                continue
            if any(rect_distance(pos, f.rect) < 0.9 for f in furniture):
                continue
            if any(o.support == "" and math.dist(o.position, pos) < 1.6 for o in items):
                continue
            counts["box"] += 1
            items.append(ItemSpec(f"box_{counts['box']}", "box", colours_left["box"].pop(), pos, room.name,
                                  suspicious=i in suspicious))
            break
        else:
            return None
    return items


def _robot_start(rng: np.random.Generator, layout: Layout) -> Point | None:
    free = [p for p in _lattice_points(layout) if _point_clear(p, layout) and layout.room_at(p) is not None]
    free = [p for p in free if all(math.dist(p, i.position) > 1.6 for i in layout.items if i.support == "")]
    return _choice(rng, free) if free else None


# ---------------------------------------------------------------------------------------------- places
def _obstacles(layout: Layout) -> list[Rect]:
    return [w.rect for w in layout.walls] + [f.rect for f in layout.furniture]


def _lattice_points(layout: Layout) -> list[Point]:
    w, h = layout.extent
    nx_, ny_ = round(w / LATTICE), round(h / LATTICE)
    return [(round(i * LATTICE, 4), round(j * LATTICE, 4)) for j in range(1, ny_) for i in range(1, nx_)]


def _point_clear(p: Point, layout: Layout) -> bool:
    return all(rect_distance(p, r) >= ROBOT_RADIUS + CLEARANCE for r in _obstacles(layout))


def build_tamp_map(layout: Layout) -> TampMap:
    """The scene graph of `layout`: rooms, places on the free 0.5 m lattice, items attached to places.

    Static relations the world's PDDL state needs go to `metadata`: `reach` and `approach` (furniture or
    floor item -> places), `guards` (suspicious item -> places), `furniture` (footprints).

    Raises:
        SceneError: some furniture or floor item cannot be approached from the start without passing an
            uninspected suspicious item, or the places graph is not connected.
    """
    obstacles = _obstacles(layout)
    pts = _lattice_points(layout)
    dist = _rect_distances(np.array(pts), np.array(obstacles))  # (points, obstacles)
    clear = ROBOT_RADIUS + CLEARANCE
    nearby = {p: [obstacles[k] for k in np.flatnonzero(row < clear + LATTICE * 1.5)]
              for p, row in zip(pts, dist) if row.min() >= clear}
    free = list(nearby)
    room_of = {p: layout.room_at(p) for p in free}
    free = [p for p in free if room_of[p] is not None]
    names = {p: f"p{k + 1}" for k, p in enumerate(free)}
    half = LATTICE / 2
    places = {names[p]: Place(names[p], p, ((p[0] - half, p[1] - half), (p[0] + half, p[1] - half),
                                            (p[0] + half, p[1] + half), (p[0] - half, p[1] + half)),
                              room_of[p]) for p in free}
    index = set(free)
    edges: list[tuple[str, str]] = []
    for p in free:
        for dx, dy in ((1, 0), (0, 1), (1, 1), (1, -1)):
            q = (round(p[0] + dx * LATTICE, 4), round(p[1] + dy * LATTICE, 4))
            if q in index and all(segment_rect_distance(p, q, r) >= clear for r in nearby[p]):
                edges.append((names[p], names[q]))
    graph = nx.Graph()
    graph.add_nodes_from(places)
    graph.add_edges_from(edges)

    def nearest(pt: Point, among: list[str] | None = None) -> str:
        pool = among if among is not None else list(places)
        return min(pool, key=lambda n: (math.dist(places[n].centre, pt), n))

    objects: dict[str, MapObject] = {}
    for it in layout.items:
        objects[it.name] = MapObject(it.name, it.position, round(it.radius, 4), it.kind, it.suspicious,
                                     nearest(it.position))
    guards: dict[str, list[str]] = {}
    for it in layout.items:
        if it.suspicious:
            limit = it.radius + INFLATION
            guards[it.name] = sorted((n for n, pl in places.items() if math.dist(pl.centre, it.position) < limit),
                                     key=_place_key)
    guarded = {n for ps in guards.values() for n in ps}
    reach: dict[str, list[str]] = {}
    approach: dict[str, str] = {}
    for f in layout.furniture:
        near = [n for n, pl in places.items() if rect_distance(pl.centre, f.rect) <= REACH]
        reach[f.name] = sorted(near, key=_place_key)
        ok = [n for n in near if n not in guarded]
        if ok:
            approach[f.name] = min(ok, key=lambda n: (math.dist(places[n].centre, f.centre), _place_key(n)))
    for it in layout.items:
        if it.support:
            continue
        limit = it.radius + INFLATION
        around = [r for r in obstacles if rect_distance(it.position, r) <= INSPECT_RANGE]
        near = [n for n, pl in places.items()
                if limit <= math.dist(pl.centre, it.position) <= INSPECT_RANGE
                and all(segment_rect_distance(pl.centre, it.position, r) > 0 for r in around)]
        reach[it.name] = sorted(near, key=_place_key)
        ok = [n for n in near if n not in guarded]
        if ok:
            approach[it.name] = min(ok, key=lambda n: (math.dist(places[n].centre, it.position), _place_key(n)))

    start_pt = layout.robot_start
    if start_pt not in index:
        raise SceneError(f"the robot's start {start_pt} is not a free place")
    start = names[start_pt]
    if not nx.is_connected(graph):
        raise SceneError("the places graph is not connected")
    safe_graph = graph.subgraph(n for n in places if n not in guarded or n == start)
    reachable = nx.node_connected_component(safe_graph, start)
    missing = [x for x in [f.name for f in layout.furniture] + [i.name for i in layout.items if not i.support]
               if approach.get(x) not in reachable]
    if missing:
        raise SceneError(f"cannot approach {missing} from the start without passing suspicious items")

    regions = {r.name: Region(r.name, "room") for r in layout.rooms}
    meta = {
        "lattice": LATTICE,
        "robot_radius": ROBOT_RADIUS,
        "reach": reach,
        "approach": approach,
        "guards": guards,
        "furniture": {f.name: {"rect": list(f.rect), "room": f.room, "height": f.height, "kind": f.kind}
                      for f in layout.furniture},
        "doors": {d.name: {"rooms": list(d.rooms), "centre": list(d.centre)} for d in layout.doors},
    }
    return TampMap("apartment", regions, places, edges, objects, start, inflation=INFLATION, metadata=meta)


def _place_key(name: str) -> int:
    return int(name[1:])
