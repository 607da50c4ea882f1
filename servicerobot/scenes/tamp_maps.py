"""Seeded TAMP map generators: an alley, a grid, an office floor and a city road network.

Every map is a lattice of square places (cells) with 4- and 8-connectivity (a diagonal edge only where
both cells beside it are places too, so no edge cuts a wall corner). Places hold a region; objects have a
place, a radius, a label and a suspicious flag. Sizes follow the paper's maps: alley 2x6, grid 10x10,
office ~550 places / ~30 objects, city ~18,000 places / ~1,300 objects (the KITTI map had 17,861 / 1,315).
`mark_suspicious` flags random objects; `block_roads` puts suspicious objects on roads so that, until
inspected, their inflated footprint covers the whole road width.
"""

from __future__ import annotations

import dataclasses
import math

import networkx as nx
import numpy as np

from servicerobot.errors import SceneError
from servicerobot.scenes.tamp_map import MapObject, Place, Region, TampMap

__all__ = ["MAPS", "alley", "block_roads", "city", "grid", "make_map", "mark_suspicious", "office"]

Seed = int | np.random.Generator | None

OFFICE_LABELS = ("chair", "desk", "box", "backpack", "plant", "printer", "cart", "bin", "bag", "lamp")
CITY_LABELS = ("car", "trash_can", "tree", "bench", "sign", "hydrant", "bicycle", "box", "scooter")


def _rng(seed: Seed) -> np.random.Generator:
    if isinstance(seed, np.random.Generator):
        return seed
    if seed is None or isinstance(seed, (int, np.integer)):
        return np.random.default_rng(seed)
    raise TypeError(f"seed must be an int, a numpy Generator or None, got {type(seed).__name__}")


def _lattice(name: str, cells: np.ndarray, regions: list[Region], cell: float, start: tuple[int, int],
             inflation: float, metadata: dict) -> TampMap:
    """A TampMap from `cells[row, col]` = region index (-1: no place); rows grow along y, columns along x."""
    if cells[start] < 0:
        raise SceneError(f"map {name!r}: the start cell {start} is not a place")
    rows, cols = np.nonzero(cells >= 0)
    h = cell / 2
    places: dict[str, Place] = {}
    for r, c in zip(rows.tolist(), cols.tolist()):
        x, y = (c + 0.5) * cell, (r + 0.5) * cell
        places[f"p{r}_{c}"] = Place(f"p{r}_{c}", (x, y),
                                    ((x - h, y - h), (x + h, y - h), (x + h, y + h), (x - h, y + h)),
                                    regions[int(cells[r, c])].name)
    ok = cells >= 0
    edges: list[tuple[str, str]] = []

    def add(mask: np.ndarray, dr: int, dc: int) -> None:
        for r, c in zip(*(a.tolist() for a in np.nonzero(mask))):
            edges.append((f"p{r}_{c}", f"p{r + dr}_{c + dc}"))

    add(ok[:, :-1] & ok[:, 1:], 0, 1)
    add(ok[:-1, :] & ok[1:, :], 1, 0)
    square = ok[:-1, :-1] & ok[:-1, 1:] & ok[1:, :-1] & ok[1:, 1:]  # no corner cutting on diagonals
    add(square, 1, 1)
    for r, c in zip(*(a.tolist() for a in np.nonzero(square))):
        edges.append((f"p{r}_{c + 1}", f"p{r + 1}_{c}"))
    used = {p.region for p in places.values()}
    return TampMap(name, {rg.name: rg for rg in regions if rg.name in used}, places, edges, {},
                   f"p{start[0]}_{start[1]}", inflation, {"cell": cell, "shape": list(cells.shape), **metadata})


def _with_objects(m: TampMap, objects: list[MapObject]) -> TampMap:
    return dataclasses.replace(m, objects={o.name: o for o in objects})


def _corner_objects(m: TampMap, corners: list[tuple[int, int]], n: int, labels: tuple[str, ...],
                    rng: np.random.Generator, radius: tuple[float, float]) -> list[MapObject]:
    """`n` objects on distinct lattice corners (row, col) = the corner below-left of cell (row, col)."""
    if n > len(corners):
        raise SceneError(f"map {m.name!r} has room for {len(corners)} objects, {n} were asked for")
    cell = m.metadata["cell"]
    chosen = rng.choice(len(corners), size=n, replace=False)
    objects = []
    for i, k in enumerate(sorted(chosen.tolist())):
        r, c = corners[k]
        objects.append(MapObject(f"o{i}", (c * cell, r * cell), float(np.round(rng.uniform(*radius), 2)),
                                 labels[int(rng.integers(len(labels)))], False, f"p{r}_{c}"))
    return objects


def _interior_corners(cells: np.ndarray, same_region: bool = True,
                      keep_off: np.ndarray | None = None) -> list[tuple[int, int]]:
    """Corners (r, c) whose four cells (r-1..r, c-1..c) are places (of one region), none in `keep_off`."""
    a, b, c_, d = cells[:-1, :-1], cells[:-1, 1:], cells[1:, :-1], cells[1:, 1:]
    ok = (a >= 0) & (b >= 0) & (c_ >= 0) & (d >= 0)
    if same_region:
        ok &= (a == b) & (a == c_) & (a == d)
    if keep_off is not None:
        ok &= ~(keep_off[:-1, :-1] | keep_off[:-1, 1:] | keep_off[1:, :-1] | keep_off[1:, 1:])
    rows, cols = np.nonzero(ok)
    return [(int(r) + 1, int(c) + 1) for r, c in zip(rows, cols)]


def alley(seed: Seed = 0, n_objects: int = 1, n_suspicious: int = 1, cell: float = 1.0) -> TampMap:
    """A 2x6 alley (12 places). The default suspicious object sits between the lanes, so its inflated
    footprint blocks the alley until it is inspected."""
    rng = _rng(seed)
    cells = np.zeros((2, 6), dtype=int)
    m = _lattice("alley", cells, [Region("alley", "corridor")], cell, (0, 0), 0.5, {"robot_radius": 0.25})
    corners = [(1, c) for c in range(2, 5)]
    m = _with_objects(m, _corner_objects(m, corners, n_objects, OFFICE_LABELS, rng, (0.15, 0.2)))
    return mark_suspicious(m, min(n_suspicious, n_objects), rng)


def grid(seed: Seed = 0, size: int = 10, n_objects: int = 6, n_suspicious: int = 2, cell: float = 1.0) -> TampMap:
    """A size x size grid of places (default 10x10) in four quadrant regions, with a few objects."""
    rng = _rng(seed)
    half = size // 2
    cells = np.zeros((size, size), dtype=int)
    cells[:half, half:] = 1
    cells[half:, :half] = 2
    cells[half:, half:] = 3
    regions = [Region(f"quadrant{i}", "region") for i in range(4)]
    m = _lattice("grid", cells, regions, cell, (0, 0), 0.5, {"robot_radius": 0.25})
    corners = _far_from(_interior_corners(cells, same_region=False), (0, 0))
    m = _with_objects(m, _corner_objects(m, corners, n_objects, OFFICE_LABELS, rng, (0.15, 0.22)))
    return mark_suspicious(m, min(n_suspicious, n_objects), rng)


def _split(total: int, rng: np.random.Generator, low: int = 4, high: int = 7) -> list[int]:
    """Room widths in [low, high] that, with one wall cell between rooms, exactly fill `total` cells."""
    feasible = [n for n in range(1, total + 1) if n * low + n - 1 <= total <= n * high + n - 1]
    if not feasible:
        raise SceneError(f"cannot split {total} cells into rooms {low}-{high} cells wide")
    n = min(feasible, key=lambda k: abs(k - total / ((low + high) / 2 + 1)))
    widths = [low] * n
    for _ in range(total - (n * low + n - 1)):
        i = int(rng.choice([j for j in range(n) if widths[j] < high]))
        widths[i] += 1
    return widths


def _far_from(corners: list[tuple[int, int]], cell_rc: tuple[int, int], cells: int = 2) -> list[tuple[int, int]]:
    """Corners more than `cells` cells (Chebyshev) away from the centre of cell `cell_rc`."""
    r0, c0 = cell_rc[0] + 0.5, cell_rc[1] + 0.5
    return [(r, c) for r, c in corners if max(abs(r - r0), abs(c - c0)) > cells]


def office(seed: Seed = 0, n_objects: int = 28, n_suspicious: int = 6, cell: float = 1.0) -> TampMap:
    """An office floor (~550 places): three bands of rooms along two corridors, walls one cell thick,
    one-cell doors; a connector corridor joins the corridors; objects stand inside rooms, off the doors."""
    rng = _rng(seed)
    width, corridor_h = 28, 2
    # bands from y=0 up: rooms C, wall, corridor 2, wall, rooms B (+ connector), wall, corridor 1, wall, rooms A
    layout = [("C", 5), ("wall", 1), ("corridor2", corridor_h), ("wall", 1), ("B", 6), ("wall", 1),
              ("corridor1", corridor_h), ("wall", 1), ("A", 6)]
    rows: dict[str, tuple[int, int]] = {}
    y = 0
    for key, h in layout:
        rows[key] = (y, h)
        y += h
    cells = np.full((y, width), -1, dtype=int)
    doors = np.zeros(cells.shape, dtype=bool)
    regions: list[Region] = []

    def new_region(name: str, kind: str) -> int:
        regions.append(Region(name, kind))
        return len(regions) - 1

    for key in ("corridor1", "corridor2"):
        r, h = rows[key]
        cells[r:r + h, :] = new_region(key, "corridor")
    r, h = rows["B"]
    cells[r - 1:r + h + 1, width - 2:] = new_region("connector", "corridor")
    for band in ("A", "B", "C"):
        r, h = rows[band]
        x = 0
        for k, w in enumerate(_split(width - 3 if band == "B" else width, rng)):
            idx = new_region(f"room{band}{k}", "room")
            cells[r:r + h, x:x + w] = idx
            door_rows = {"A": [r - 1], "B": [r + h] + ([r - 1] if rng.random() < 0.5 else []), "C": [r + h]}[band]
            for dr in door_rows:
                dc = x + int(rng.integers(1, w - 1))
                cells[dr, dc] = idx
                doors[dr, dc] = True
            x += w + 1
    keep_off = np.zeros_like(doors)
    for r, c in zip(*np.nonzero(doors)):
        keep_off[max(r - 2, 0):r + 3, max(c - 2, 0):c + 3] = True
    start = (rows["corridor1"][0], 1)
    m = _lattice("office", cells, regions, cell, start, 0.5, {"robot_radius": 0.25})
    corners = [rc for rc in _interior_corners(cells, keep_off=keep_off) if regions[int(cells[rc])].kind == "room"]
    m = _with_objects(m, _corner_objects(m, corners, n_objects, OFFICE_LABELS, rng, (0.12, 0.22)))
    return mark_suspicious(m, min(n_suspicious, n_objects), rng)


def city(seed: Seed = 0, n_objects: int = 1300, n_suspicious: int = 20, target_places: int = 18000,
         cell: float = 1.5, blocks: tuple[int, int] = (8, 7), block_cells: tuple[int, int] = (44, 60)) -> TampMap:
    """A city road network (~18,000 places by default): roads three cells wide around `blocks` (x, y) city
    blocks of `block_cells` (min, max) cells, road segments removed at random down to `target_places` (the
    network stays connected, no dead ends); objects stand beside roads, none on them."""
    rng = _rng(seed)
    lane = 3
    ys = np.concatenate([[0], np.cumsum(rng.integers(block_cells[0], block_cells[1], size=blocks[1]))]).tolist()
    xs = np.concatenate([[0], np.cumsum(rng.integers(block_cells[0], block_cells[1], size=blocks[0]))]).tolist()
    height, width = ys[-1] + lane, xs[-1] + lane
    # road segments between neighbouring junctions: (kind, i, j) -> (row slice, column slice)
    segments: dict[tuple[str, int, int], tuple[slice, slice]] = {}
    for i, y in enumerate(ys):
        for j in range(len(xs) - 1):
            segments[("h", i, j)] = (slice(y, y + lane), slice(xs[j] + lane, xs[j + 1]))
    for j, x in enumerate(xs):
        for i in range(len(ys) - 1):
            segments[("v", i, j)] = (slice(ys[i] + lane, ys[i + 1]), slice(x, x + lane))

    def ends(k: tuple[str, int, int]) -> tuple[tuple[int, int], tuple[int, int]]:
        return (k[1], k[2]), ((k[1], k[2] + 1) if k[0] == "h" else (k[1] + 1, k[2]))

    junctions = nx.Graph([ends(k) for k in segments])
    size = {k: (s[0].stop - s[0].start) * (s[1].stop - s[1].start) for k, s in segments.items()}
    total = sum(size.values()) + len(ys) * len(xs) * lane * lane
    for k in [list(segments)[i] for i in rng.permutation(len(segments)).tolist()]:
        if total <= target_places:
            break
        junctions.remove_edge(*ends(k))
        if nx.is_connected(junctions) and min(d for _, d in junctions.degree()) >= 2:
            del segments[k]
            total -= size[k]
        else:
            junctions.add_edge(*ends(k))
    cells = np.full((height, width), -1, dtype=int)
    regions: list[Region] = []
    seg_region: dict[tuple[str, int, int], int] = {}
    for k, (sr, sc) in segments.items():
        regions.append(Region(f"road_{k[0]}{k[1]}_{k[2]}", "road"))
        seg_region[k] = len(regions) - 1
        cells[sr, sc] = seg_region[k]
    for i, y in enumerate(ys):
        for j, x in enumerate(xs):
            regions.append(Region(f"junction_{i}_{j}", "junction"))
            cells[y:y + lane, x:x + lane] = len(regions) - 1
    first = list(segments)[int(rng.integers(len(segments)))]
    sr, sc = segments[first]
    start = (sr.start + (sr.stop - sr.start) // 2, sc.start + (sc.stop - sc.start) // 2)
    m = _lattice("city", cells, regions, cell, start, 1.0, {"robot_radius": 0.3, "lane_cells": lane})
    objects = _roadside_objects(m, cells, segments, seg_region, n_objects, rng)
    return mark_suspicious(_with_objects(m, objects), min(n_suspicious, n_objects), rng)


def _roadside_objects(m: TampMap, cells: np.ndarray, segments: dict, seg_region: dict, n: int,
                      rng: np.random.Generator) -> list[MapObject]:
    """Objects just outside a road's edge, at least 2 m apart, out of reach of every other road."""
    cell = m.metadata["cell"]
    reach = math.ceil((0.8 + m.inflation + m.metadata["robot_radius"] + 0.8) / cell) + 1
    keys = list(segments)
    lengths = np.array([max(s[0].stop - s[0].start, s[1].stop - s[1].start) for s in segments.values()], float)
    draws = 3 * n
    picks = rng.choice(len(keys), size=draws, p=lengths / lengths.sum())
    u = rng.random(draws)
    side = rng.integers(0, 2, size=draws)
    radius = np.round(rng.uniform(0.3, 0.8, size=draws), 2)
    offset = radius + rng.uniform(0.1, 0.8, size=draws)
    taken: dict[tuple[int, int], list[tuple[float, float]]] = {}
    objects: list[MapObject] = []
    for k in range(draws):
        if len(objects) == n:
            break
        key = keys[picks[k]]
        sr, sc = segments[key]
        if key[0] == "h":
            x = (sc.start + 1 + u[k] * (sc.stop - sc.start - 2)) * cell
            y = sr.start * cell - offset[k] if side[k] == 0 else sr.stop * cell + offset[k]
            place = (sr.start if side[k] == 0 else sr.stop - 1, int(x / cell))
        else:
            y = (sr.start + 1 + u[k] * (sr.stop - sr.start - 2)) * cell
            x = sc.start * cell - offset[k] if side[k] == 0 else sc.stop * cell + offset[k]
            place = (int(y / cell), sc.start if side[k] == 0 else sc.stop - 1)
        r_, c_ = math.floor(y / cell), math.floor(x / cell)
        window = cells[max(r_ - reach, 0):r_ + reach + 1, max(c_ - reach, 0):c_ + reach + 1]
        if not (0 <= r_ < cells.shape[0] and 0 <= c_ < cells.shape[1]) or cells[r_, c_] >= 0 \
                or np.any((window >= 0) & (window != seg_region[key])):
            continue  # off the map, on a road, or near a junction or a second road
        bucket = (int(x // 2.0), int(y // 2.0))
        if any(math.hypot(x - a, y - b) < 2.0 for dx in (-1, 0, 1) for dy in (-1, 0, 1)
               for a, b in taken.get((bucket[0] + dx, bucket[1] + dy), ())):
            continue
        taken.setdefault(bucket, []).append((x, y))
        label = CITY_LABELS[int(rng.integers(len(CITY_LABELS)))]
        objects.append(MapObject(f"o{len(objects)}", (round(float(x), 3), round(float(y), 3)),
                                 float(radius[k]), label, False, f"p{place[0]}_{place[1]}"))
    if len(objects) < n:
        raise SceneError(f"the city has room for only {len(objects)} roadside objects, {n} were asked for")
    return objects


def mark_suspicious(tamp_map: TampMap, n: int, seed: Seed = None) -> TampMap:
    """A copy of `tamp_map` with `n` more of its (not yet suspicious) objects, drawn at random, suspicious."""
    rng = _rng(seed)
    calm = [name for name, o in tamp_map.objects.items() if not o.suspicious]
    if not 0 <= n <= len(calm):
        raise SceneError(f"cannot mark {n} objects suspicious in map {tamp_map.name!r}: "
                         f"it has {len(calm)} objects that are not suspicious yet")
    chosen = {calm[i] for i in rng.choice(len(calm), size=n, replace=False).tolist()} if n else set()
    objects = {k: dataclasses.replace(o, suspicious=True) if k in chosen else o for k, o in tamp_map.objects.items()}
    return dataclasses.replace(tamp_map, objects=objects)


def block_roads(tamp_map: TampMap, k: int, seed: Seed = None, radius: float | None = None,
                min_separation: float = 30.0, robot_radius: float | None = None) -> TampMap:
    """A copy with `k` suspicious objects `blocker<i>` on the middle lane of `k` distinct road segments.

    Each stands on a place centre and is sized so that, with the map's inflation, no robot disc can pass
    it anywhere across the road (0.1 m to spare) while it is suspicious, yet the side lanes are free (0.1 m
    to spare) once it is inspected. `radius` (default: the smallest such size) must lie in that range;
    roads where it does not, or with fewer than three lanes, are skipped.

    Raises:
        SceneError: the map has no "road" regions, or too few suitable segments at least `min_separation`
            metres apart (and from the start) for `k` blockers.
    """
    rng = _rng(seed)
    rr = tamp_map.metadata.get("robot_radius", 0.25) if robot_radius is None else robot_radius
    roads = [name for name, r in tamp_map.regions.items() if r.kind == "road"]
    if not roads:
        raise SceneError(f"map {tamp_map.name!r} has no regions of kind 'road' to block")
    start = tamp_map.places[tamp_map.start].centre
    by_region: dict[str, list[Place]] = {}
    for p in tamp_map.places.values():
        by_region.setdefault(p.region, []).append(p)
    chosen: list[tuple[Place, float]] = []
    for i in rng.permutation(len(roads)).tolist():
        cells = by_region[roads[i]]
        centres = np.array([p.centre for p in cells])
        horizontal = np.ptp(centres[:, 0]) > np.ptp(centres[:, 1])
        along, across = (0, 1) if horizontal else (1, 0)
        middle = (centres[:, across].min() + centres[:, across].max()) / 2
        offsets = np.abs(centres[:, across] - middle)
        lane = offsets[offsets > 1e-6].min() if np.any(offsets > 1e-6) else 0.0
        half_width = max(abs(v[across] - middle) for p in cells for v in p.polygon)
        low = half_width - 2 * rr - tamp_map.inflation + 0.1  # reach > half_width - rr + 0.1
        high = lane - rr - 0.1  # inspected: disc + robot clear of the side lanes
        r = round(float(max(low, 0.1)), 2) if radius is None else float(radius)
        if not lane or not (low <= r <= high):
            continue
        pos = centres[:, along].min() + np.ptp(centres[:, along]) * rng.uniform(0.3, 0.7)
        mids = [p for p, off in zip(cells, offsets) if off < 1e-6]
        if not mids:
            continue
        best = min(mids, key=lambda p: abs(p.centre[along] - pos))
        if TampMap.distance(best.centre, start) < min_separation or any(
                TampMap.distance(best.centre, q.centre) < min_separation for q, _ in chosen):
            continue
        chosen.append((best, r))
        if len(chosen) == k:
            break
    if len(chosen) < k:
        raise SceneError(f"map {tamp_map.name!r}: found only {len(chosen)} road segments for {k} blockers "
                         f"(at least {min_separation} m apart, radius {radius or 'auto'}); ask for fewer "
                         f"or lower min_separation")
    objects = dict(tamp_map.objects)
    for i, (p, r) in enumerate(chosen):
        name = f"blocker{i}"
        objects[name] = MapObject(name, p.centre, r, "suspicious_package", True, p.name)
    return dataclasses.replace(tamp_map, objects=objects)


MAPS = {"alley": alley, "grid": grid, "office": office, "city": city}
"""Generator functions by map name."""


def make_map(name: str, seed: Seed = 0, **kwargs) -> TampMap:
    """The generated map `name` (alley, grid, office, city).

    Raises:
        SceneError: unknown map name.
    """
    if name not in MAPS:
        raise SceneError(f"unknown TAMP map {name!r}; known: {', '.join(MAPS)}")
    return MAPS[name](seed, **kwargs)
