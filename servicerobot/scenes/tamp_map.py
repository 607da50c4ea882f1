"""The hierarchical scene graph of a TAMP map: regions (rooms) > places (2D polygons with connectivity) >
objects (pose, size, suspicious flag).

This is the data both the TAMP planners (`servicerobot.planners.tamp`) and the PyBullet world build on.
Geometry is planar (metres, x/y); heights live only in the PyBullet world.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from functools import cached_property

import networkx as nx
import numpy as np

__all__ = ["MapObject", "Place", "Region", "TampMap"]

Point = tuple[float, float]


@dataclass(frozen=True)
class Region:
    """A room or region: a name and its places."""

    name: str
    kind: str = "room"  # "room" | "road" | "region"


@dataclass(frozen=True)
class Place:
    """A traversable place: a convex-ish polygon (counter-clockwise vertices) with its centre and region."""

    name: str
    centre: Point
    polygon: tuple[Point, ...]
    region: str

    def contains(self, p: Point) -> bool:
        """Point-in-polygon (ray casting); points on an edge count as inside."""
        x, y = p
        inside = False
        pts = self.polygon
        for (x1, y1), (x2, y2) in zip(pts, pts[1:] + pts[:1]):
            if (y1 > y) != (y2 > y):
                xc = x1 + (y - y1) * (x2 - x1) / (y2 - y1)
                if abs(xc - x) < 1e-12:
                    return True
                if xc > x:
                    inside = not inside
        return inside


@dataclass(frozen=True)
class MapObject:
    """An object on the map: position, footprint radius, semantic label; suspicious objects must be
    inspected (and must not be passed closer than `radius + inflation` before that)."""

    name: str
    position: Point
    radius: float
    label: str = "object"
    suspicious: bool = False
    place: str = ""  # the place it stands in (its parent in the scene graph)


@dataclass
class TampMap:
    """Regions, places with an adjacency graph (edge attribute `weight` = centre distance), objects."""

    name: str
    regions: dict[str, Region]
    places: dict[str, Place]
    edges: list[tuple[str, str]]
    objects: dict[str, MapObject]
    start: str  # the robot's start place
    inflation: float = 0.5  # extra clearance around suspicious objects
    metadata: dict = field(default_factory=dict)

    @cached_property
    def graph(self) -> nx.Graph:
        """The places layer as a weighted networkx graph (built once; treat as read-only)."""
        g = nx.Graph()
        for name, p in self.places.items():
            g.add_node(name, pos=p.centre, region=p.region)
        for a, b in self.edges:
            g.add_edge(a, b, weight=self.distance(self.places[a].centre, self.places[b].centre))
        return g

    @cached_property
    def _centres(self) -> tuple[list[str], np.ndarray]:
        names = list(self.places)
        return names, np.array([self.places[n].centre for n in names], dtype=float)

    @staticmethod
    def distance(a: Point, b: Point) -> float:
        return math.hypot(a[0] - b[0], a[1] - b[1])

    def nearest_place(self, p: Point) -> str:
        """The place whose centre is closest to `p`."""
        names, centres = self._centres
        d = np.hypot(centres[:, 0] - p[0], centres[:, 1] - p[1])
        return names[int(np.argmin(d))]

    def place_at(self, p: Point) -> str | None:
        """The place whose polygon contains `p` (nearest centres tried first), or None."""
        names, centres = self._centres
        order = np.argsort(np.hypot(centres[:, 0] - p[0], centres[:, 1] - p[1]))
        for i in order[:16]:
            if self.places[names[int(i)]].contains(p):
                return names[int(i)]
        return None

    def places_in(self, region: str) -> list[str]:
        return [n for n, p in self.places.items() if p.region == region]

    def suspicious(self) -> list[str]:
        return [n for n, o in self.objects.items() if o.suspicious]
