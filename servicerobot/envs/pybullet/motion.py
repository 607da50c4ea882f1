"""Base motion: A* over the places graph, straight segments checked in PyBullet, RRT-Connect repair (OMPL).

`MotionPlanner.plan` returns a collision-free polyline from the robot's position to a place, or the reason
there is none. Places guarded by uninspected suspicious items are left out of the graph, and the repair
keeps the same clearance, so the robot never passes them closer than `radius + inflation`.
"""

from __future__ import annotations

import itertools
import math
from dataclasses import dataclass

import networkx as nx

from servicerobot.envs.pybullet._pb import import_ompl
from servicerobot.envs.pybullet.collision import CollisionChecker
from servicerobot.scenes.tamp_map import TampMap

__all__ = ["KeepOut", "MotionPlanner", "MotionResult"]

Point = tuple[float, float]


@dataclass(frozen=True)
class KeepOut:
    """A disc the robot's centre must stay out of (an uninspected suspicious item and its clearance)."""

    name: str
    centre: Point
    radius: float


@dataclass
class MotionResult:
    """A path (polyline, metres) or an error; `repaired` counts segments RRT-Connect replanned."""

    path: list[Point]
    error: str = ""
    repaired: int = 0
    blocked_by: tuple[str, ...] = ()


def _seg_point_distance(a: Point, b: Point, p: Point) -> float:
    vx, vy = b[0] - a[0], b[1] - a[1]
    n2 = vx * vx + vy * vy
    t = 0.0 if n2 == 0 else min(1.0, max(0.0, ((p[0] - a[0]) * vx + (p[1] - a[1]) * vy) / n2))
    return math.hypot(a[0] + t * vx - p[0], a[1] + t * vy - p[1])


class MotionPlanner:
    """Plans base motions on a `TampMap` with a `CollisionChecker`.

    Args:
        tamp_map: places graph of the apartment.
        checker: PyBullet collision queries.
        bounds: (x0, y0, x1, y1) of the sampling box for RRT-Connect.
        rrt_time: time budget of one repair, seconds.
    """

    def __init__(self, tamp_map: TampMap, checker: CollisionChecker, bounds: tuple[float, float, float, float],
                 rrt_time: float = 1.0):
        self.map = tamp_map
        self.checker = checker
        self.bounds = bounds
        self.rrt_time = rrt_time
        self._ompl: tuple | None | bool = False  # imported on the first repair (OMPL is noisy at exit)

    # ------------------------------------------------------------------ helpers
    @staticmethod
    def _clear_of(a: Point, b: Point, keep_out: list[KeepOut]) -> bool:
        return all(_seg_point_distance(a, b, k.centre) >= k.radius - 1e-9 for k in keep_out)

    def _free(self, a: Point, b: Point, keep_out: list[KeepOut]) -> bool:
        return self._clear_of(a, b, keep_out) and self.checker.segment_free(a, b)

    # ------------------------------------------------------------------ planning
    def plan(self, start: Point, goal: str, avoid: set[str], keep_out: list[KeepOut], seed: int = 0) -> MotionResult:
        """A collision-free path from `start` to the centre of place `goal` that never enters `avoid`
        places (except the start's own) nor a keep-out disc."""
        m = self.map
        target = m.places[goal].centre
        if goal in avoid:
            who = ", ".join(k.name for k in keep_out if math.dist(k.centre, target) < k.radius) or "a suspicious item"
            return MotionResult([], f"{goal} is too close to {who}, which has not been inspected")
        if math.dist(start, target) < 1e-6:
            return MotionResult([start])
        if not self.checker.point_free(target):
            hits = self.checker.blocking(target, target)
            return MotionResult([], f"{goal} is occupied by {', '.join(hits)}", blocked_by=tuple(hits))
        source = m.place_at(start) or m.nearest_place(start)
        graph = m.graph
        if avoid:
            graph = graph.subgraph(n for n in graph if n not in avoid or n == source)
        names = self._astar(graph, source, goal)
        if names is None:
            if avoid and nx.has_path(m.graph, source, goal):
                who = ", ".join(k.name for k in keep_out)
                return MotionResult([], f"no path from {source} to {goal} keeps clear of {who}, which has not "
                                        f"been inspected")
            return MotionResult([], f"no path from {source} to {goal} in the places graph")
        result = self._realise([start] + [m.places[n].centre for n in names[1:]], keep_out, seed)
        if not result.error or not result.blocked_by:
            return result
        # RRT-Connect failed or is missing: route the places graph around what blocked the way
        detour = self._astar(self._without_blocked(graph, result.blocked_by, source), source, goal)
        if detour is None:
            return result
        retry = self._realise([start] + [m.places[n].centre for n in detour[1:]], keep_out, seed, repair=False)
        return result if retry.error else retry

    def _astar(self, graph: nx.Graph, source: str, goal: str) -> list[str] | None:
        m = self.map
        try:
            return nx.astar_path(graph, source, goal, heuristic=lambda a, b: m.distance(
                m.places[a].centre, m.places[b].centre), weight="weight")
        except (nx.NetworkXNoPath, nx.NodeNotFound):
            return None

    def _without_blocked(self, graph: nx.Graph, names: tuple[str, ...], source: str) -> nx.Graph:
        """`graph` without the places and edges near the named bodies that the robot cannot use."""
        sim = self.checker.sim
        boxes = []
        for name in names:
            lo, hi = sim.aabb(name)
            boxes.append((lo[0] - 1.0, lo[1] - 1.0, hi[0] + 1.0, hi[1] + 1.0))

        def near(p: Point) -> bool:
            return any(b[0] <= p[0] <= b[2] and b[1] <= p[1] <= b[3] for b in boxes)

        pos = {n: self.map.places[n].centre for n in graph}
        drop = [n for n in graph if n != source and near(pos[n]) and not self.checker.point_free(pos[n])]
        g = nx.Graph(graph.subgraph(n for n in graph if n not in drop))
        g.remove_edges_from([(a, b) for a, b in g.edges if (near(pos[a]) or near(pos[b]))
                             and not self.checker.segment_free(pos[a], pos[b])])
        return g

    def _realise(self, waypoints: list[Point], keep_out: list[KeepOut], seed: int,
                 repair: bool = True) -> MotionResult:
        """Check the polyline segment by segment; bridge blocked stretches with RRT-Connect; shortcut."""
        path: list[Point] = [waypoints[0]]
        repaired = 0
        i = 0
        while i < len(waypoints) - 1:
            a, b = waypoints[i], waypoints[i + 1]
            hits = self.checker.blocking(a, b)
            if not hits:
                path.append(b)
                i += 1
                continue
            # bridge from a to the first later waypoint the robot can stand on and leave freely
            j = i + 1
            while j < len(waypoints) - 1 and not (self.checker.point_free(waypoints[j])
                                                   and self.checker.segment_free(waypoints[j], waypoints[j + 1])):
                j += 1
            bridge = self._rrt(a, waypoints[j], keep_out, seed + repaired) if repair else None
            if bridge is None:
                how = "RRT-Connect found no way around" if self._ompl else \
                    "no RRT-Connect repair (pip install ompl)"
                return MotionResult([], f"the way from ({a[0]:.2f}, {a[1]:.2f}) to ({b[0]:.2f}, {b[1]:.2f}) is "
                                        f"blocked by {', '.join(hits)}; {how}", repaired, tuple(hits))
            path.extend(bridge[1:])
            repaired += 1
            i = j
        return MotionResult(self._shortcut(path, keep_out), "", repaired)

    def _shortcut(self, path: list[Point], keep_out: list[KeepOut]) -> list[Point]:
        """Greedy string pulling: from each vertex jump to the farthest one reachable in a straight line."""
        out = [path[0]]
        i = 0
        while i < len(path) - 1:
            j = len(path) - 1
            while j > i + 1 and not self._free(path[i], path[j], keep_out):
                j -= 1
            out.append(path[j])
            i = j
        return out

    def _rrt(self, a: Point, b: Point, keep_out: list[KeepOut], seed: int) -> list[Point] | None:
        """RRT-Connect in R^2 from `a` to `b` (validity: robot free and outside keep-out discs), or None."""
        if self._ompl is False:
            self._ompl = import_ompl()
        if self._ompl is None:
            return None
        ob, og, ou = self._ompl
        ou.RNG.setSeed(int(seed) + 1)  # a seed per repair keeps episodes reproducible
        x0, y0, x1, y1 = self.bounds
        space = ob.RealVectorStateSpace(2)
        bounds = ob.RealVectorBounds(2)
        bounds.setLow(0, x0)
        bounds.setLow(1, y0)
        bounds.setHigh(0, x1)
        bounds.setHigh(1, y1)
        space.setBounds(bounds)
        ss = og.SimpleSetup(space)
        checker = self.checker

        def valid(state) -> bool:
            p = (state[0], state[1])
            return all(math.dist(p, k.centre) >= k.radius for k in keep_out) and checker.point_free(p)

        ss.setStateValidityChecker(valid)
        si = ss.getSpaceInformation()
        si.setStateValidityCheckingResolution(checker.step / max(x1 - x0, y1 - y0))
        start, goal = space.allocState(), space.allocState()
        start[0], start[1] = a
        goal[0], goal[1] = b
        ss.setStartAndGoalStates(start, goal)
        ss.setPlanner(og.RRTConnect(si))
        ss.solve(self.rrt_time)
        if not ss.haveExactSolutionPath():
            return None
        sol = ss.getSolutionPath()
        pts = [(float(sol.getState(k)[0]), float(sol.getState(k)[1])) for k in range(sol.getStateCount())]
        pts = self._shortcut(pts, keep_out)
        if not all(self._free(p, q, keep_out) for p, q in itertools.pairwise(pts)):
            return None
        return pts
