"""Collision queries for the robot's base in the PyBullet scene (the checker the TAMP planners accept)."""

from __future__ import annotations

import math

from servicerobot.envs.pybullet.layout import ROBOT_HEIGHT, ROBOT_RADIUS
from servicerobot.envs.pybullet.sim import Sim

__all__ = ["CollisionChecker"]

Point = tuple[float, float]


class CollisionChecker:
    """Does the robot's cylinder hit anything at a point or swept along a segment?

    Queries use a free collision shape (`getClosestPoints` with `collisionShapeA`), so the robot's body
    never moves. Floors, the robot and the item it carries are ignored; every other body counts (walls,
    furniture, items) and is reported by its name in the layout.

    Args:
        sim: the scene.
        step: spacing of the poses checked along a segment (metres).
        margin: a body closer than this counts as hit (metres).
    """

    def __init__(self, sim: Sim, step: float = 0.05, margin: float = 0.01):
        self.sim = sim
        self.step = step
        self.margin = margin
        p = sim.p
        self._shape = p.createCollisionShape(p.GEOM_CYLINDER, radius=ROBOT_RADIUS, height=ROBOT_HEIGHT - 0.02,
                                             physicsClientId=sim.cid)
        self._z = ROBOT_HEIGHT / 2 + 0.01
        self.checks = 0  # pose queries made (for benchmarks)

    def _candidates(self, lo: Point, hi: Point) -> list[int]:
        """Bodies whose broad-phase boxes meet the robot's box over [lo, hi] (floors, robot, held skipped)."""
        sim = self.sim
        r = ROBOT_RADIUS + self.margin + 0.02
        pairs = sim.p.getOverlappingObjects([lo[0] - r, lo[1] - r, 0.02], [hi[0] + r, hi[1] + r, ROBOT_HEIGHT],
                                            physicsClientId=sim.cid) or ()
        skip = {sim.body.get(sim.held)} if sim.held is not None else set()
        out = []
        for body, _link in pairs:
            name = sim.name_of.get(body)
            if name is None or body in skip or sim.role.get(name) in ("floor", "robot") or body in out:
                continue
            out.append(body)
        return out

    def _hits_at(self, x: float, y: float, bodies: list[int]) -> list[int]:
        p, cid = self.sim.p, self.sim.cid
        self.checks += 1
        return [b for b in bodies
                if p.getClosestPoints(-1, b, self.margin, collisionShapeA=self._shape,
                                      collisionShapePositionA=[x, y, self._z], physicsClientId=cid)]

    def point_free(self, p: Point) -> bool:
        """True when the robot standing at `p` touches nothing."""
        bodies = self._candidates(p, p)
        return not bodies or not self._hits_at(p[0], p[1], bodies)

    def blocking(self, a: Point, b: Point) -> list[str]:
        """Names of the bodies the robot hits when driven straight from `a` to `b` ([] if the way is free),
        in the order it meets them."""
        lo = (min(a[0], b[0]), min(a[1], b[1]))
        hi = (max(a[0], b[0]), max(a[1], b[1]))
        bodies = self._candidates(lo, hi)
        if not bodies:
            return []
        n = max(1, math.ceil(math.dist(a, b) / self.step))
        hit: list[int] = []
        for k in range(n + 1):
            t = k / n
            for body in self._hits_at(a[0] + t * (b[0] - a[0]), a[1] + t * (b[1] - a[1]), bodies):
                if body not in hit:
                    hit.append(body)
        return [self.sim.name_of[body] for body in hit]

    def segment_free(self, a: Point, b: Point) -> bool:
        """True when `blocking(a, b)` is empty (stops at the first hit)."""
        lo = (min(a[0], b[0]), min(a[1], b[1]))
        hi = (max(a[0], b[0]), max(a[1], b[1]))
        bodies = self._candidates(lo, hi)
        if not bodies:
            return True
        n = max(1, math.ceil(math.dist(a, b) / self.step))
        return not any(self._hits_at(a[0] + k / n * (b[0] - a[0]), a[1] + k / n * (b[1] - a[1]), bodies)
                       for k in range(n + 1))
