"""RRT-Connect for a point robot in the plane: OMPL's when `ompl` is importable, else a small pure-Python one.

The validity function decides everything (object clearance, avoided places, staying on the map); edges are
checked by sampling at `resolution` metres, so callers re-check the returned polyline exactly. OMPL's own
random seed is process-global and is not set here, so OMPL paths are not reproducible run to run; the
fallback draws from the seed it is given.
"""

from __future__ import annotations

import math
import time
from collections.abc import Callable

import numpy as np

__all__ = ["ompl_available", "rrt_connect"]

Point = tuple[float, float]
Bounds = tuple[float, float, float, float]


def ompl_available() -> bool:
    """Whether OMPL's Python bindings can be imported."""
    try:
        import ompl.geometric  # noqa: F401
    except ImportError:
        return False
    return True


def rrt_connect(start: Point, goal: Point, valid: Callable[[Point], bool], bounds: Bounds, *,
                budget: float = 0.3, resolution: float = 0.05, seed: int = 0,
                use_ompl: bool | None = None) -> list[Point] | None:
    """A collision-free polyline start..goal inside `bounds` (xmin, ymin, xmax, ymax), or None within `budget` s."""
    if not (valid(start) and valid(goal)):
        return None
    if use_ompl is None:
        use_ompl = ompl_available()
    if use_ompl:
        return _ompl(start, goal, valid, bounds, budget, resolution)
    return _python(start, goal, valid, bounds, budget, resolution, np.random.default_rng(seed))


def _ompl(start: Point, goal: Point, valid: Callable[[Point], bool], bounds: Bounds, budget: float,
          resolution: float) -> list[Point] | None:
    from ompl import base as ob
    from ompl import geometric as og
    from ompl import util as ou

    ou.setLogLevel(ou.LogLevel.LOG_NONE)
    space = ob.RealVectorStateSpace(2)
    b = ob.RealVectorBounds(2)
    for k in range(2):
        b.setLow(k, float(bounds[k]))
        b.setHigh(k, float(bounds[k + 2]))
    space.setBounds(b)
    ss = og.SimpleSetup(space)
    ss.setStateValidityChecker(lambda s: bool(valid((s[0], s[1]))))
    s0, s1 = space.allocState(), space.allocState()
    s0[0], s0[1] = start
    s1[0], s1[1] = goal
    ss.setStartAndGoalStates(s0, s1)
    extent = max(bounds[2] - bounds[0], bounds[3] - bounds[1], 1e-6)
    ss.getSpaceInformation().setStateValidityCheckingResolution(min(1.0, resolution / extent))
    ss.setPlanner(og.RRTConnect(ss.getSpaceInformation()))
    status = ss.solve(budget)
    if not bool(status) or not ss.haveExactSolutionPath():
        return None
    ss.simplifySolution()
    path = ss.getSolutionPath()
    return [(path.getState(i)[0], path.getState(i)[1]) for i in range(path.getStateCount())]


def _edge_ok(a: Point, b: Point, valid: Callable[[Point], bool], resolution: float) -> bool:
    n = max(1, math.ceil(math.dist(a, b) / resolution))
    return all(valid((a[0] + (b[0] - a[0]) * k / n, a[1] + (b[1] - a[1]) * k / n)) for k in range(1, n + 1))


def _python(start: Point, goal: Point, valid: Callable[[Point], bool], bounds: Bounds, budget: float,
            resolution: float, rng: np.random.Generator) -> list[Point] | None:
    step = max(resolution * 4, 0.02 * max(bounds[2] - bounds[0], bounds[3] - bounds[1]), 0.25)
    trees: list[tuple[list[Point], list[int]]] = [([start], [-1]), ([goal], [-1])]
    end = time.perf_counter() + budget

    def nearest(tree: list[Point], p: Point) -> int:
        arr = np.asarray(tree)
        return int(np.argmin(np.hypot(arr[:, 0] - p[0], arr[:, 1] - p[1])))

    def extend(tree: tuple[list[Point], list[int]], target: Point) -> tuple[str, int]:
        pts, parent = tree
        i = nearest(pts, target)
        q = pts[i]
        d = math.dist(q, target)
        new = target if d <= step else (q[0] + (target[0] - q[0]) * step / d, q[1] + (target[1] - q[1]) * step / d)
        if not _edge_ok(q, new, valid, resolution):
            return "trapped", -1
        pts.append(new)
        parent.append(i)
        return ("reached" if new == target else "advanced"), len(pts) - 1

    while time.perf_counter() < end:
        sample = (float(rng.uniform(bounds[0], bounds[2])), float(rng.uniform(bounds[1], bounds[3])))
        status, k = extend(trees[0], sample)
        if status != "trapped":
            target = trees[0][0][k]
            while True:
                status2, j = extend(trees[1], target)
                if status2 != "advanced":
                    break
            if status2 == "reached":
                a = _trace(trees[0], k)
                b = _trace(trees[1], j)
                path = a[::-1] + b[1:]
                if path[0] != start:
                    path = path[::-1]
                return _shortcut(path, valid, resolution)
        trees.reverse()
    return None


def _trace(tree: tuple[list[Point], list[int]], i: int) -> list[Point]:
    pts, parent = tree
    out = [pts[i]]
    while parent[i] >= 0:
        i = parent[i]
        out.append(pts[i])
    return out


def _shortcut(path: list[Point], valid: Callable[[Point], bool], resolution: float) -> list[Point]:
    out = [path[0]]
    i = 0
    while i < len(path) - 1:
        j = len(path) - 1
        while j > i + 1 and not _edge_ok(path[i], path[j], valid, resolution):
            j -= 1
        out.append(path[j])
        i = j
    return out
