"""Walkways that join rooms no doorway connects: a 3DSG's room boxes need not touch, the robot must reach them all.

Rooms that share a wall get a doorway (`stage`); the groups of rooms those doorways leave apart are joined,
closest rooms first, by a straight or L-shaped walkway (a floor strip, `WALKWAY_W` wide) that crosses no other
room, with a doorway where it meets each room's wall. Real 3DSG furniture stands along the walls: a doorway
goes where nothing stands in front of it (`door_spot`, `Obstacles`), else where the least does.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from servicerobot.errors import SceneError

__all__ = ["APPROACH", "WALKWAY_W", "Obstacles", "Walkway", "door_spot", "plan_walkways", "room_groups"]

WALKWAY_W = 1.2
APPROACH = 0.7  # metres in front of a doorway, on both sides, that furniture must leave free to walk through
_MARGIN = 0.7  # a walkway's doorway keeps its centre this far from a room's corners
_STEP = 0.1  # where doorways may go: every _STEP metres along a wall


class Obstacles:
    """Footprints (xy lo, hi) of furniture; `area(lo, hi)` is how much of a rectangle they cover."""

    def __init__(self, boxes=()):
        self.boxes = [(np.asarray(lo, dtype=float)[:2], np.asarray(hi, dtype=float)[:2]) for lo, hi in boxes]

    def area(self, lo, hi) -> float:
        total = 0.0
        for blo, bhi in self.boxes:
            d = np.minimum(hi, bhi) - np.maximum(lo, blo)
            if d[0] > 1e-6 and d[1] > 1e-6:
                total += float(d[0] * d[1])
        return total

    def door(self, axis: int, plane: float, along: float, width: float) -> float:
        """Furniture area within `APPROACH` of a doorway (centre `along`, `width` wide) in a wall at `plane`."""
        lo, hi = np.zeros(2), np.zeros(2)
        lo[axis], hi[axis] = plane - APPROACH, plane + APPROACH
        lo[1 - axis], hi[1 - axis] = along - width / 2, along + width / 2
        return self.area(lo, hi)


def door_spot(obstacles: Obstacles, axis: int, plane: float, lo: float, hi: float, width: float,
              prefer: float | None = None) -> float:
    """Where along a wall stretch [lo, hi] (a wall at `plane` across `axis`) a doorway `width` wide goes: the
    spot nearest `prefer` (default the middle) that furniture leaves free, else the least blocked one."""
    prefer = (lo + hi) / 2 if prefer is None else prefer
    first, last = lo + width / 2, hi - width / 2
    if last <= first:
        return (lo + hi) / 2
    spots = np.append(np.arange(first, last + 1e-9, _STEP), [last, float(np.clip(prefer, first, last))])
    return float(min(spots, key=lambda c: (round(obstacles.door(axis, plane, c, width), 3), abs(c - prefer))))


@dataclass(frozen=True)
class Walkway:
    """Rooms `a` and `b` joined by floor strips (xy lo, hi) and a doorway in each: (room, side, position).

    A side is `axis * 2 + positive`: 0 the wall at the room's low x, 1 high x, 2 low y, 3 high y.
    """

    a: int
    b: int
    floors: tuple[tuple[np.ndarray, np.ndarray], ...]
    doors: tuple[tuple[int, int, float], ...]

    @property
    def length(self) -> float:
        return float(sum(np.max(hi - lo) for lo, hi in self.floors))


def _rect(room) -> tuple[np.ndarray, np.ndarray]:
    c, s = np.asarray(room.location[:2], dtype=float), np.asarray(room.size[:2], dtype=float) / 2
    return c - s, c + s


def _overlaps(lo: np.ndarray, hi: np.ndarray, rect: tuple[np.ndarray, np.ndarray]) -> bool:
    return bool(np.all(np.minimum(hi, rect[1]) - np.maximum(lo, rect[0]) > 1e-6))


def room_groups(room_ids, links) -> list[set[int]]:
    """The groups of rooms that `links` (pairs of room ids) connect, each a set, ordered by smallest id."""
    parent = {r: r for r in room_ids}

    def root(r):
        while parent[r] != r:
            parent[r] = parent[parent[r]]
            r = parent[r]
        return r

    for a, b in links:
        parent[root(a)] = root(b)
    groups: dict[int, set[int]] = {}
    for r in sorted(room_ids):
        groups.setdefault(root(r), set()).add(r)
    return sorted(groups.values(), key=min)


def _straight(ra, rb, a: int, b: int) -> list[Walkway]:
    """Straight walkways across the gap between two rooms that face each other, at every `_STEP` along it."""
    out = []
    for axis in (0, 1):
        other = 1 - axis
        lo_o, hi_o = max(ra[0][other], rb[0][other]), min(ra[1][other], rb[1][other])
        if hi_o - lo_o < WALKWAY_W + 0.2:
            continue
        (first, r1), (second, r2) = ((a, ra), (b, rb)) if ra[1][axis] <= rb[0][axis] else ((b, rb), (a, ra))
        start, end = r1[1][axis], r2[0][axis]
        if end - start <= 0:
            continue
        first_mid, last_mid = lo_o + WALKWAY_W / 2 + 0.1, hi_o - WALKWAY_W / 2 - 0.1
        centre = (lo_o + hi_o) / 2
        for mid in sorted({centre, *np.arange(first_mid, last_mid + 1e-9, _STEP).tolist()},
                          key=lambda m: abs(m - centre)):  # the middle first: ties go to it
            lo, hi = np.zeros(2), np.zeros(2)
            lo[axis], hi[axis] = start, end
            lo[other], hi[other] = mid - WALKWAY_W / 2, mid + WALKWAY_W / 2
            out.append(Walkway(a, b, ((lo, hi),), ((first, axis * 2 + 1, mid), (second, axis * 2, mid))))
    return out


def _bent(ra, rb, a: int, b: int) -> list[Walkway]:
    """L-shaped walkways: out of `a` along one axis, turning into `b` along the other (the shortest first, then
    with the doorways moved away from the corner in `_STEP`s)."""
    out = []
    half = WALKWAY_W / 2
    ca, cb = (ra[0] + ra[1]) / 2, (rb[0] + rb[1]) / 2
    for axis in (0, 1):
        other = 1 - axis
        s1, s2 = np.sign(cb[axis] - ca[axis]), np.sign(cb[other] - ca[other])
        if s1 == 0 or s2 == 0:
            continue
        exit_plane = ra[1][axis] if s1 > 0 else ra[0][axis]
        entry_plane = rb[0][other] if s2 > 0 else rb[1][other]
        # c1: where the first leg runs (along `other`), in a's wall and clear of b; c2: where it turns, in b's.
        near_b = rb[0][other] - half - 0.1 if s2 > 0 else rb[1][other] + half + 0.1
        c1s = [float(np.clip(near_b - s2 * k * 2 * _STEP, ra[0][other] + _MARGIN, ra[1][other] - _MARGIN))
               for k in range(10)]
        c2s = [float(np.clip(exit_plane + s1 * (half + 0.1 + k * 2 * _STEP), rb[0][axis] + _MARGIN,
                             rb[1][axis] - _MARGIN)) for k in range(10)]
        for c1 in dict.fromkeys(c1s):
            for c2 in dict.fromkeys(c2s):
                if s2 * (entry_plane - c1) < half or s1 * (c2 - exit_plane) < half:
                    continue
                lo1, hi1, lo2, hi2 = np.zeros(2), np.zeros(2), np.zeros(2), np.zeros(2)
                lo1[axis], hi1[axis] = sorted((exit_plane, c2 + s1 * half))
                lo1[other], hi1[other] = c1 - half, c1 + half
                lo2[axis], hi2[axis] = c2 - half, c2 + half
                lo2[other], hi2[other] = sorted((c1 + s2 * half, entry_plane))
                doors = ((a, axis * 2 + int(s1 > 0), c1), (b, other * 2 + int(s2 < 0), c2))
                out.append(Walkway(a, b, ((lo1, hi1), (lo2, hi2)), doors))
    return out


def _blocked(w: Walkway, rects: dict, obstacles: Obstacles, door_w: float) -> float:
    """Furniture area in front of a walkway's doorways and on its floor (0: the robot walks through)."""
    total = sum(obstacles.area(lo, hi) for lo, hi in w.floors)
    for room, side, along in w.doors:
        axis, positive = divmod(side, 2)
        plane = rects[room][1][axis] if positive else rects[room][0][axis]
        total += obstacles.door(axis, plane, along, door_w)
    return round(total, 3)


def plan_walkways(rooms: dict, linked: list[tuple[int, int]], obstacles: Obstacles | None = None,
                  door_w: float = 1.0) -> list[Walkway]:
    """Walkways joining the groups of `rooms` (id -> Room3D) that `linked` pairs leave apart.

    Each round joins two groups through their closest pair of rooms that a straight or L-shaped walkway can
    join without crossing a third room and with no furniture (`obstacles`) in front of its doorways or on
    its floor (the shortest such walkway); when every walkway has some, the least blocked one. Raises
    `SceneError` when no walkway can join the groups.
    """
    obstacles = obstacles or Obstacles()
    rects = {rid: _rect(r) for rid, r in rooms.items()}
    links = list(linked)
    walkways: list[Walkway] = []
    groups = room_groups(rects, links)
    while len(groups) > 1:
        pairs = []
        for i, g in enumerate(groups):
            for h in groups[i + 1:]:
                for a in sorted(g):
                    for b in sorted(h):
                        gap = np.maximum(rects[b][0] - rects[a][1], rects[a][0] - rects[b][1])
                        pairs.append((float(np.linalg.norm(np.maximum(gap, 0.0))), a, b))
        best = None  # (blocked area, walkway)
        for _, a, b in sorted(pairs):
            clear = [w for w in _straight(rects[a], rects[b], a, b) + _bent(rects[a], rects[b], a, b)
                     if not any(_overlaps(lo, hi, rect) for lo, hi in w.floors for rect in rects.values())]
            if clear:
                cost, w = min(((_blocked(w, rects, obstacles, door_w), w) for w in clear),
                              key=lambda cw: (cw[0], round(cw[1].length, 3)))
                if best is None or cost < best[0]:
                    best = (cost, w)
                if cost == 0.0:
                    break
        if best is None:
            raise SceneError(f"rooms {[sorted(g) for g in groups]} share no wall and no straight or L-shaped "
                             "walkway joins them without crossing another room; add a corridor room to the "
                             "scene graph between them")
        walkways.append(best[1])
        links.append((best[1].a, best[1].b))
        groups = room_groups(rects, links)
    return walkways
