"""The collision-checker protocol the motion layer uses, and `DiscChecker`, its 2D implementation.

A checker answers two questions about the robot (a disc) among the map's objects: which objects the straight
segment a->b sweeps into, and whether a point is free. Suspicious objects count with the map's inflation
until they are inspected; a checker that also has `set_inspected` (the `InspectionAware` protocol) is told
which objects are inspected as the plan proceeds. The PyBullet world implements the same duck type.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Protocol, runtime_checkable

import numpy as np

from servicerobot.errors import TampError
from servicerobot.planners.tamp.geometry import GridIndex, segment_point_distances
from servicerobot.scenes.tamp_map import TampMap

__all__ = ["CollisionChecker", "DiscChecker", "InspectionAware"]

Point = tuple[float, float]


@runtime_checkable
class CollisionChecker(Protocol):
    """What the motion layer needs from a world's collision checking."""

    def blocking(self, a: Point, b: Point) -> list[str]:
        """Names of map objects the straight segment a->b (swept robot disc) collides with; [] when free."""
        ...

    def point_free(self, p: Point) -> bool:
        """Whether the robot disc centred at `p` is free of objects."""
        ...


@runtime_checkable
class InspectionAware(Protocol):
    """A checker whose suspicious objects lose their inflation once inspected."""

    def set_inspected(self, names: Iterable[str]) -> None:
        """Treat exactly `names` as inspected from now on."""
        ...


class DiscChecker:
    """Objects as discs of their radius (+ `tamp_map.inflation` while suspicious and not inspected), the robot
    as a disc of `robot_radius`; a grid of buckets keeps queries local on large maps.

    Args:
        tamp_map: the map whose objects are obstacles.
        robot_radius: the robot's radius in metres (default: the map's `robot_radius` metadata, else 0.25).
        known_objects: only these objects are obstacles (default: all of the map's objects).
    """

    def __init__(self, tamp_map: TampMap, robot_radius: float | None = None,
                 known_objects: Iterable[str] | None = None):
        self.map = tamp_map
        self.robot_radius = float(tamp_map.metadata.get("robot_radius", 0.25) if robot_radius is None
                                  else robot_radius)
        names = list(tamp_map.objects) if known_objects is None else list(known_objects)
        unknown = [n for n in names if n not in tamp_map.objects]
        if unknown:
            raise TampError(f"known_objects {unknown[:5]} are not objects of map {tamp_map.name!r}")
        objs = [tamp_map.objects[n] for n in names]
        self.names = names
        self._row = {n: i for i, n in enumerate(names)}
        self.pos = np.array([o.position for o in objs], dtype=float).reshape(-1, 2)
        self.radius = np.array([o.radius for o in objs], dtype=float) + self.robot_radius
        self.suspicious = np.array([o.suspicious for o in objs], dtype=bool)
        self.inflation = float(tamp_map.inflation)
        self._inspected = np.zeros(len(names), dtype=bool)
        reach = self.radius + np.where(self.suspicious, self.inflation, 0.0)
        self.max_reach = float(reach.max()) if len(reach) else 0.0
        boxes = np.column_stack([self.pos - reach[:, None], self.pos + reach[:, None]]) if len(names) else \
            np.zeros((0, 4))
        self._index = GridIndex(boxes, max(4.0, 2 * self.max_reach))

    def set_inspected(self, names: Iterable[str]) -> None:
        """Treat exactly `names` as inspected (their inflation no longer counts)."""
        self._inspected[:] = False
        for n in names:
            i = self._row.get(n)
            if i is not None:
                self._inspected[i] = True

    def _reach(self, ids: np.ndarray) -> np.ndarray:
        return self.radius[ids] + np.where(self.suspicious[ids] & ~self._inspected[ids], self.inflation, 0.0)

    def blocking(self, a: Point, b: Point) -> list[str]:
        """Objects the segment a->b (swept robot disc) collides with, in the order the robot meets them."""
        ids = self._index.query_segment(a, b)
        if not len(ids):
            return []
        d, t = segment_point_distances(a, b, self.pos[ids])
        hit = d < self._reach(ids) - 1e-9
        order = np.argsort(t[hit], kind="stable")
        return [self.names[i] for i in ids[hit][order].tolist()]

    def point_free(self, p: Point) -> bool:
        """Whether the robot disc at `p` is clear of every object."""
        ids = self._index.query(p[0], p[1], p[0], p[1])
        if not len(ids):
            return True
        d = np.hypot(self.pos[ids, 0] - p[0], self.pos[ids, 1] - p[1])
        return bool(np.all(d >= self._reach(ids) - 1e-9))
