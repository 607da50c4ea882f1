"""A map prepared for planning: the places graph (`graph.PlacesGraph`) plus spatial indexes, PDDL names and
object footprints (what each object's disc and inflated disc take from the graph, and its approach place)."""

from __future__ import annotations

import heapq
import math
import re
from collections.abc import Collection, Iterable
from dataclasses import dataclass

import numpy as np

from servicerobot.errors import TampError
from servicerobot.planners.tamp.geometry import (
    GridIndex,
    point_depth,
    point_in_polygon,
    segment_enters_polygon,
)
from servicerobot.planners.tamp.graph import Deadline, Edge, PlacesGraph, TampTimeout, edge_key
from servicerobot.scenes.tamp_map import TampMap

__all__ = ["Deadline", "Footprint", "TampContext", "TampTimeout", "edge_key"]

_NAME_OK = re.compile(r"[^a-z0-9_-]")
_RIM = [(math.cos(k * math.pi / 4), math.sin(k * math.pi / 4)) for k in range(8)]


@dataclass(frozen=True)
class Footprint:
    """What one object does to the places graph, for a given robot radius.

    Attributes:
        occupied: places whose centre the robot can never stand on (object disc + robot radius).
        blocked: further places it cannot stand on while the object is suspicious (+ the map's inflation).
        hard_edges: edges whose segment hits the object's disc (never usable).
        soft_edges: further edges hitting the inflated disc (usable once the object is safe).
        approach: the place the robot inspects it from (the nearest free place by path), or None.
        approach_cost: the cost of the object <-> approach place move (centimetres, >= 1).
    """

    occupied: frozenset[int]
    blocked: frozenset[int]
    hard_edges: frozenset[Edge]
    soft_edges: frozenset[Edge]
    approach: int | None
    approach_cost: int


class TampContext(PlacesGraph):
    """A map prepared for planning with a disc robot of `robot_radius` metres (default: the map's own)."""

    def __init__(self, tamp_map: TampMap, robot_radius: float | None = None):
        self.map = tamp_map
        self.robot_radius = float(tamp_map.metadata.get("robot_radius", 0.25) if robot_radius is None
                                  else robot_radius)
        if tamp_map.start not in tamp_map.places:
            raise TampError(f"map {tamp_map.name!r}: start {tamp_map.start!r} is not a place")
        super().__init__(list(tamp_map.places), [p.centre for p in tamp_map.places.values()], tamp_map.edges)
        self.start = self.index[tamp_map.start]
        self.polygons = [p.polygon for p in tamp_map.places.values()]
        boxes = np.array([[min(x for x, _ in pg), min(y for _, y in pg), max(x for x, _ in pg), max(y for _, y in pg)]
                          for pg in self.polygons], dtype=float).reshape(-1, 4)
        span = float(np.median(boxes[:, 2] - boxes[:, 0])) if len(boxes) else 1.0
        self.place_index = GridIndex(boxes, max(2.0 * span, 1.0))
        self.object_names: list[str] = list(tamp_map.objects)
        objs = list(tamp_map.objects.values())
        self.object_pos = np.array([o.position for o in objs], dtype=float).reshape(-1, 2)
        self.object_radius = np.array([o.radius for o in objs], dtype=float)
        r = self.object_radius + self.robot_radius
        self.object_index = GridIndex(np.column_stack([self.object_pos - r[:, None], self.object_pos + r[:, None]])
                                      if len(objs) else np.zeros((0, 4)), max(2.0 * span, 2.0))
        self._footprints: dict[str, Footprint] = {}
        self._pddl: dict[str, str] | None = None

    # --- names -------------------------------------------------------------------------------------------
    @property
    def pddl_names(self) -> dict[str, str]:
        """Map symbol -> PDDL identifier (lowercase, [a-z0-9_-], starting with a letter, unique)."""
        if self._pddl is None:
            out: dict[str, str] = {}
            used: set[str] = set()
            for name in [*self.names, *self.object_names]:
                base = _NAME_OK.sub("_", name.lower())
                base = base if base[:1].isalpha() else f"s_{base}"
                cand, k = base, 1
                while cand in used:
                    cand, k = f"{base}_{k}", k + 1
                used.add(cand)
                out[name] = cand
            self._pddl = out
        return self._pddl

    # --- geometry ----------------------------------------------------------------------------------------
    def places_near(self, p: tuple[float, float], radius: float) -> np.ndarray:
        """Indices of places whose centre is closer than `radius` to `p`."""
        ids = self.place_index.query(p[0] - radius, p[1] - radius, p[0] + radius, p[1] + radius)
        if not len(ids):
            return ids
        d = np.hypot(self.centres[ids, 0] - p[0], self.centres[ids, 1] - p[1])
        return ids[d < radius]

    def edges_near(self, p: tuple[float, float], radius: float) -> set[Edge]:
        """Edges whose segment passes closer than `radius` to `p`."""
        out: set[Edge] = set()
        seen: set[Edge] = set()
        for u in self.places_near(p, radius + self.max_edge).tolist():
            cu = self.centres[u]
            for v, _ in self.adj[u]:
                key = edge_key(u, v)
                if key in seen:
                    continue
                seen.add(key)
                cv = self.centres[v]
                dx, dy = cv[0] - cu[0], cv[1] - cu[1]
                ll = dx * dx + dy * dy
                t = 0.0 if ll == 0 else min(1.0, max(0.0, ((p[0] - cu[0]) * dx + (p[1] - cu[1]) * dy) / ll))
                if math.hypot(p[0] - cu[0] - t * dx, p[1] - cu[1] - t * dy) < radius:
                    out.add(key)
        return out

    def place_containing(self, p: tuple[float, float]) -> int | None:
        """A place whose polygon contains `p` (the one with the nearest centre), or None."""
        ids = self.place_index.query(p[0], p[1], p[0], p[1])
        best, best_d = None, math.inf
        for i in ids.tolist():
            if point_in_polygon(p, self.polygons[i]):
                d = math.dist(p, self.centres[i])
                if d < best_d:
                    best, best_d = i, d
        return best

    def disc_on_map(self, p: tuple[float, float]) -> bool:
        """Whether the robot disc at `p` lies on the places (its centre and 8 rim points are in some place)."""
        r = self.robot_radius
        if self.place_containing(p) is None:
            return False
        return all(self.place_containing((p[0] + r * dx, p[1] + r * dy)) is not None for dx, dy in _RIM)

    def objects_hit(self, p: tuple[float, float], clearance: float = 0.0) -> list[int]:
        """Objects whose disc plus robot radius plus `clearance` covers `p`."""
        ids = self.object_index.query(p[0] - clearance, p[1] - clearance, p[0] + clearance, p[1] + clearance)
        if not len(ids):
            return []
        d = np.hypot(self.object_pos[ids, 0] - p[0], self.object_pos[ids, 1] - p[1])
        return ids[d < self.object_radius[ids] + self.robot_radius + clearance].tolist()

    # --- objects -----------------------------------------------------------------------------------------
    def footprint(self, name: str) -> Footprint:
        """The (cached) footprint of object `name`."""
        fp = self._footprints.get(name)
        if fp is None:
            fp = self._footprints[name] = self._compute_footprint(name)
        return fp

    def _compute_footprint(self, name: str) -> Footprint:
        o = self.map.objects[name]
        hard = o.radius + self.robot_radius
        soft = hard + self.map.inflation if o.suspicious else hard
        occupied = frozenset(self.places_near(o.position, hard).tolist()) - {self.start}
        blocked = frozenset(self.places_near(o.position, soft).tolist()) - occupied - {self.start}
        hard_edges = frozenset(self.edges_near(o.position, hard))
        soft_edges = frozenset(self.edges_near(o.position, soft)) - hard_edges if o.suspicious else frozenset()
        approach = self._approach(o.place, o.position, occupied | blocked, hard + self.map.inflation)
        cost = 1 if approach is None else max(1, round(100 * math.dist(self.centres[approach], o.position)))
        return Footprint(occupied, blocked, hard_edges, soft_edges, approach, cost)

    def _approach(self, place: str, position: tuple[float, float], taken: frozenset[int], reach: float) -> int | None:
        """The place to inspect an object from: among the free places nearest to it (by path from its own
        place), one the robot can reach from the start without crossing the object's footprint `taken`."""
        root = self.index.get(place)
        if root is None:
            root = int(np.argmin(np.hypot(self.centres[:, 0] - position[0], self.centres[:, 1] - position[1])))
        dist = {root: 0}
        heap = [(0, root)]
        ring: list[int] = []
        while heap:
            d, u = heapq.heappop(heap)
            if d > dist[u]:
                continue
            if ring and d > dist[ring[0]] + 300 or d > 2000:  # a 3 m band around the nearest; 20 m at most
                break
            if u not in taken and not self.objects_hit(tuple(self.centres[u])):
                ring.append(u)
                continue
            for v, w in self.adj[u]:
                if d + w < dist.get(v, math.inf):
                    dist[v] = d + w
                    heapq.heappush(heap, (d + w, v))
        if len(ring) <= 1:
            return ring[0] if ring else None
        window = set(self.places_near(position, reach + 3 * self.max_edge + 3.0).tolist()) - taken
        seen, todo = {ring[0]}, [ring[0]]
        while todo:  # does the footprint split its surroundings? (then the side matters)
            u = todo.pop()
            todo.extend(v for v, _ in self.adj[u] if v in window and v not in seen and not seen.add(v))
        if all(r in seen for r in ring):
            return ring[0]
        reachable = self.barrier_distances([self.start], set(ring), (), taken)
        reachable[(self.start, self.start)] = 0
        near = [r for r in ring if (self.start, r) in reachable]
        return near[0] if near else ring[0]

    def statics(self, objects: Iterable[str], soft: bool = False) -> tuple[frozenset[int], frozenset[Edge]]:
        """Places and edges the robot can never use because of `objects` (their discs). With `soft`, edges
        between unblocked places that only the inflated footprint of a suspicious object covers count too:
        the task encodings ban them outright (`blocks` is per place, not per edge), which keeps every
        task-level move refinable."""
        nodes: set[int] = set()
        edges: set[Edge] = set()
        for o in objects:
            fp = self.footprint(o)
            nodes |= fp.occupied
            edges |= fp.hard_edges
            if soft:  # edges into blocked places are governed by `blocks`; ban only the others
                edges |= {e for e in fp.soft_edges if e[0] not in fp.blocked and e[1] not in fp.blocked}
        return frozenset(nodes), frozenset(edges)

    def avoid_filter(self, avoided: Collection[str]) -> tuple[frozenset[int], frozenset[Edge]]:
        """Places and edges a motion may not use under `avoided` places: the avoided places, places whose
        centre lies inside an avoided polygon, and edges whose segment enters one (geometrically)."""
        nodes: set[int] = {self.index[p] for p in avoided if p in self.index}
        edges: set[Edge] = set()
        for p in list(nodes):
            poly = self.polygons[p]
            xs, ys = [q[0] for q in poly], [q[1] for q in poly]
            box = (min(xs) - self.max_edge, min(ys) - self.max_edge, max(xs) + self.max_edge, max(ys) + self.max_edge)
            for u in self.place_index.query(*box).tolist():
                if u != p and u not in nodes and point_depth(tuple(self.centres[u]), poly) > 1e-6:
                    nodes.add(u)
            for u in self.place_index.query(*box).tolist():
                for v, _ in self.adj[u]:
                    if u < v and u not in nodes and v not in nodes and \
                            segment_enters_polygon(tuple(self.centres[u]), tuple(self.centres[v]), poly):
                        edges.add((u, v))
        return frozenset(nodes), frozenset(edges)
