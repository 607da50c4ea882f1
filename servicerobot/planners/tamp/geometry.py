"""Planar geometry for TAMP: segment-to-point distances, segment-enters-polygon tests and a grid bucket index."""

from __future__ import annotations

import itertools
import math
from collections.abc import Sequence

import numpy as np

__all__ = ["GridIndex", "point_depth", "point_in_polygon", "segment_enters_polygon", "segment_point_distances"]

Point = tuple[float, float]


def segment_point_distances(a: Point, b: Point, pts: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Distances from each row of `pts` (n x 2) to the segment a-b, and the closest points' parameters t."""
    ax, ay = a
    dx, dy = b[0] - ax, b[1] - ay
    ll = dx * dx + dy * dy
    px, py = pts[:, 0] - ax, pts[:, 1] - ay
    t = np.clip((px * dx + py * dy) / ll, 0.0, 1.0) if ll > 0 else np.zeros(len(pts))
    return np.hypot(px - t * dx, py - t * dy), t


def point_in_polygon(p: Point, polygon: Sequence[Point]) -> bool:
    """Ray casting; points on the boundary may go either way (use `point_depth` for a margin)."""
    x, y = p
    inside = False
    n = len(polygon)
    for i in range(n):
        x1, y1 = polygon[i]
        x2, y2 = polygon[(i + 1) % n]
        if (y1 > y) != (y2 > y) and x < x1 + (y - y1) * (x2 - x1) / (y2 - y1):
            inside = not inside
    return inside


def point_depth(p: Point, polygon: Sequence[Point]) -> float:
    """Signed distance to the boundary: positive inside, negative outside."""
    n = len(polygon)
    best = math.inf
    for i in range(n):
        (x1, y1), (x2, y2) = polygon[i], polygon[(i + 1) % n]
        dx, dy = x2 - x1, y2 - y1
        ll = dx * dx + dy * dy
        t = 0.0 if ll == 0 else min(1.0, max(0.0, ((p[0] - x1) * dx + (p[1] - y1) * dy) / ll))
        best = min(best, math.hypot(p[0] - x1 - t * dx, p[1] - y1 - t * dy))
    return best if point_in_polygon(p, polygon) else -best


def segment_enters_polygon(a: Point, b: Point, polygon: Sequence[Point], eps: float = 1e-6) -> bool:
    """True if some point of segment a-b lies inside `polygon` deeper than `eps`.

    Exact for simple polygons: the segment is split where it crosses the boundary and each piece is judged
    by its midpoint, so touching a corner or sliding along an edge does not count as entering.
    """
    xs = [q[0] for q in polygon]
    ys = [q[1] for q in polygon]
    if max(a[0], b[0]) < min(xs) or min(a[0], b[0]) > max(xs) or max(a[1], b[1]) < min(ys) or \
            min(a[1], b[1]) > max(ys):
        return False
    ts = [0.0, 1.0]
    rx, ry = b[0] - a[0], b[1] - a[1]
    n = len(polygon)
    for i in range(n):
        (x1, y1), (x2, y2) = polygon[i], polygon[(i + 1) % n]
        sx, sy = x2 - x1, y2 - y1
        denom = rx * sy - ry * sx
        qx, qy = x1 - a[0], y1 - a[1]
        if abs(denom) < 1e-15:  # parallel: add the overlap's ends if collinear
            if abs(qx * ry - qy * rx) < 1e-12 and (rx or ry):
                rr = rx * rx + ry * ry
                for ex, ey in ((x1, y1), (x2, y2)):
                    t = ((ex - a[0]) * rx + (ey - a[1]) * ry) / rr
                    if 0.0 < t < 1.0:
                        ts.append(t)
            continue
        t = (qx * sy - qy * sx) / denom
        u = (qx * ry - qy * rx) / denom
        if -1e-12 <= u <= 1 + 1e-12 and 0.0 < t < 1.0:
            ts.append(t)
    ts.sort()
    for t0, t1 in itertools.pairwise(ts):
        if t1 - t0 < 1e-12:
            continue
        tm = (t0 + t1) / 2
        if point_depth((a[0] + tm * rx, a[1] + tm * ry), polygon) > eps:
            return True
    return False


class GridIndex:
    """A uniform grid of buckets holding item ids by bounding box; queries return candidate ids."""

    def __init__(self, boxes: np.ndarray, cell: float):
        """`boxes`: n x 4 array of (xmin, ymin, xmax, ymax); `cell`: bucket size in metres."""
        self.cell = float(cell)
        self.boxes = np.asarray(boxes, dtype=float).reshape(-1, 4)
        lo = np.floor(self.boxes[:, :2] / self.cell).astype(np.int64)
        hi = np.floor(self.boxes[:, 2:] / self.cell).astype(np.int64)
        buckets: dict[tuple[int, int], list[int]] = {}
        for i, (x0, y0, x1, y1) in enumerate(np.concatenate([lo, hi], axis=1).tolist()):
            for bx in range(x0, x1 + 1):
                for by in range(y0, y1 + 1):
                    buckets.setdefault((bx, by), []).append(i)
        self._buckets = {k: np.array(v, dtype=np.int64) for k, v in buckets.items()}
        self._empty = np.zeros(0, dtype=np.int64)

    def query(self, xmin: float, ymin: float, xmax: float, ymax: float) -> np.ndarray:
        """Ids of items whose box may overlap the query box (a superset; unique, sorted)."""
        x0, y0 = math.floor(xmin / self.cell), math.floor(ymin / self.cell)
        x1, y1 = math.floor(xmax / self.cell), math.floor(ymax / self.cell)
        if (x1 - x0 + 1) * (y1 - y0 + 1) > 4 * len(self._buckets):
            found = list(self._buckets.values())
        else:
            found = [b for bx in range(x0, x1 + 1) for by in range(y0, y1 + 1)
                     if (b := self._buckets.get((bx, by))) is not None]
        if not found:
            return self._empty
        ids = found[0] if len(found) == 1 else np.unique(np.concatenate(found))
        box = self.boxes[ids]
        keep = (box[:, 0] <= xmax) & (box[:, 2] >= xmin) & (box[:, 1] <= ymax) & (box[:, 3] >= ymin)
        return ids[keep]

    def query_segment(self, a: Point, b: Point, margin: float = 0.0) -> np.ndarray:
        """Candidate ids near segment a-b: the buckets along it, widened by `margin`."""
        length = math.hypot(b[0] - a[0], b[1] - a[1])
        steps = max(1, math.ceil(length / self.cell))
        if steps <= 2:
            return self.query(min(a[0], b[0]) - margin, min(a[1], b[1]) - margin,
                              max(a[0], b[0]) + margin, max(a[1], b[1]) + margin)
        parts = []
        for k in range(steps):
            p = (a[0] + (b[0] - a[0]) * k / steps, a[1] + (b[1] - a[1]) * k / steps)
            q = (a[0] + (b[0] - a[0]) * (k + 1) / steps, a[1] + (b[1] - a[1]) * (k + 1) / steps)
            parts.append(self.query(min(p[0], q[0]) - margin, min(p[1], q[1]) - margin,
                                    max(p[0], q[0]) + margin, max(p[1], q[1]) + margin))
        return np.unique(np.concatenate(parts)) if parts else self._empty
