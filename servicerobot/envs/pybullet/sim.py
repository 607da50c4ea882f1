"""The PyBullet scene of an apartment `Layout`: one DIRECT physics client, its bodies, the kinematic robot.

The robot is a cylinder (a mobile base with a torso) moved with `resetBasePositionAndOrientation`; it grasps
by attachment: a picked item is put on its carry pose and follows the base with the recorded relative
transform. Items have mass and settle with real physics when placed; walls, furniture and floor boxes are
static. Only CPU rendering (TinyRenderer) is used; there is never a GUI.
"""

from __future__ import annotations

import contextlib
import math
from typing import Any

from servicerobot.adapters.pybullet import WORLD_GROUP
from servicerobot.envs.pybullet._pb import import_pybullet, quiet
from servicerobot.envs.pybullet.layout import (
    COLOURS,
    ROBOT,
    ROBOT_HEIGHT,
    ROBOT_RADIUS,
    WALL_H,
    ItemSpec,
    Layout,
)

__all__ = ["ROOM_FLOOR_RGB", "Sim"]

Pose = tuple[tuple[float, float, float], tuple[float, float, float, float]]

ROOM_FLOOR_RGB: dict[str, tuple[float, float, float]] = {
    "kitchen": (0.94, 0.91, 0.77), "living room": (0.87, 0.91, 0.82), "bedroom": (0.91, 0.85, 0.93),
    "office": (0.84, 0.88, 0.87), "dining room": (0.94, 0.87, 0.8),
}
ROBOT_GROUP = 2  # collision filter groups: rays and physics see the world group (WORLD_GROUP) only
CARRY_Z = ROBOT_HEIGHT / 2 + 0.01  # a carried item rests on the robot's top, relative to the base centre


def _yaw_quat(yaw: float) -> tuple[float, float, float, float]:
    return (0.0, 0.0, math.sin(yaw / 2), math.cos(yaw / 2))


class Sim:
    """One PyBullet DIRECT client holding the bodies of a layout (rebuilt by `build`)."""

    def __init__(self) -> None:
        self.p, self.data_path = import_pybullet()
        with quiet():
            self.cid: int | None = self.p.connect(self.p.DIRECT)
        self.body: dict[str, int] = {}
        self.name_of: dict[int, str] = {}
        self.role: dict[str, str] = {}  # name -> "floor" | "wall" | "furniture" | "item" | "robot"
        self.top: dict[str, float] = {}  # furniture name -> top surface height
        self.base_z: dict[str, float] = {}  # item name -> base z that makes the item touch z = 0
        self.mass: dict[str, float] = {}
        self.held: str | None = None
        self.grasp: Pose | None = None
        self.version = 0  # bumped whenever a pose changes (render and percept caches key on it)
        self.layout: Layout | None = None

    # ------------------------------------------------------------------ lifecycle
    def close(self) -> None:
        """Disconnect the physics client (idempotent)."""
        if getattr(self, "cid", None) is not None:  # __init__ may have failed before connecting
            # at interpreter shutdown pybullet may be half torn down already
            with contextlib.suppress(self.p.error, AttributeError, TypeError):
                if self.p.isConnected(physicsClientId=self.cid):
                    self.p.disconnect(physicsClientId=self.cid)
            self.cid = None

    def __del__(self) -> None:
        self.close()

    def build(self, layout: Layout) -> None:
        """Reset the simulation and create every body of `layout`; items settle under gravity."""
        p, cid = self.p, self.cid
        p.resetSimulation(physicsClientId=cid)
        p.setPhysicsEngineParameter(deterministicOverlappingPairs=1, physicsClientId=cid)
        p.setGravity(0, 0, -9.81, physicsClientId=cid)
        p.setAdditionalSearchPath(self.data_path, physicsClientId=cid)
        self.body, self.name_of, self.role, self.top, self.base_z, self.mass = {}, {}, {}, {}, {}, {}
        self.held, self.grasp, self.layout = None, None, layout
        w, h = layout.extent
        self._box("ground", (-1.0, -1.0, w + 1.0, h + 1.0), -0.03, -0.01, (0.78, 0.78, 0.76), "floor")
        for room in layout.rooms:
            self._box(f"floor_{room.name}", room.rect, -0.01, 0.0, ROOM_FLOOR_RGB.get(room.label, (0.88,) * 3),
                      "floor")
        for wall in layout.walls:
            self._box(wall.name, wall.rect, 0.0, WALL_H, (0.36, 0.35, 0.38), "wall")
        for f in layout.furniture:
            if f.model == "table":
                self._table(f.name, f.rect, f.height, f.rgb)
            else:
                self._box(f.name, f.rect, 0.0, f.height, f.rgb, "furniture")
            self.top[f.name] = f.height
        for item in layout.items:
            self._item(item)
        self._robot(layout.robot_start)
        self.settle()

    # ------------------------------------------------------------------ bodies
    def _register(self, name: str, body: int, role: str) -> int:
        self.body[name], self.name_of[body], self.role[name] = body, name, role
        group, mask = (ROBOT_GROUP, 0) if role == "robot" else (WORLD_GROUP, WORLD_GROUP)
        self.p.setCollisionFilterGroupMask(body, -1, group, mask, physicsClientId=self.cid)
        return body

    def _box(self, name: str, rect, z0: float, z1: float, rgb, role: str, mass: float = 0.0) -> int:
        p, cid = self.p, self.cid
        half = [(rect[2] - rect[0]) / 2, (rect[3] - rect[1]) / 2, (z1 - z0) / 2]
        col = p.createCollisionShape(p.GEOM_BOX, halfExtents=half, physicsClientId=cid)
        vis = p.createVisualShape(p.GEOM_BOX, halfExtents=half, rgbaColor=[*rgb, 1.0], physicsClientId=cid)
        centre = [(rect[0] + rect[2]) / 2, (rect[1] + rect[3]) / 2, (z0 + z1) / 2]
        body = p.createMultiBody(mass, col, vis, centre, physicsClientId=cid)
        return self._register(name, body, role)

    def _table(self, name: str, rect, height: float, rgb) -> int:
        """A table of primitives (top and four legs): loading textured URDF tables costs 80 ms each."""
        p, cid = self.p, self.cid
        w, d = rect[2] - rect[0], rect[3] - rect[1]
        top, leg = 0.04, 0.05
        halves = [[w / 2, d / 2, top / 2]] + [[leg / 2, leg / 2, (height - top) / 2]] * 4
        lx, ly = w / 2 - 0.06, d / 2 - 0.06
        frames = [[0, 0, height - top / 2]] + [[sx * lx, sy * ly, (height - top) / 2]
                                               for sx in (-1, 1) for sy in (-1, 1)]
        col = p.createCollisionShapeArray([p.GEOM_BOX] * 5, halfExtents=halves, collisionFramePositions=frames,
                                          physicsClientId=cid)
        vis = p.createVisualShapeArray([p.GEOM_BOX] * 5, halfExtents=halves, visualFramePositions=frames,
                                       rgbaColors=[[*rgb, 1.0]] * 5, physicsClientId=cid)
        centre = [(rect[0] + rect[2]) / 2, (rect[1] + rect[3]) / 2, 0.0]
        body = p.createMultiBody(0.0, col, vis, centre, physicsClientId=cid)
        return self._register(name, body, "furniture")

    def _item(self, item: ItemSpec) -> int:
        p, cid = self.p, self.cid
        rgba = [*COLOURS[item.colour], 1.0]
        if item.kind == "mug":
            with quiet():
                body = p.loadURDF("objects/mug.urdf", [0, 0, 0], physicsClientId=cid)
            p.changeVisualShape(body, -1, rgbaColor=rgba, physicsClientId=cid)
            mass = 1.0  # as in mug.urdf
        else:
            half = item.half
            hz = half if item.kind == "cube" else 0.2
            mass = 0.2 if item.kind == "cube" else 0.0  # floor boxes are heavy: static obstacles
            col = p.createCollisionShape(p.GEOM_BOX, halfExtents=[half, half, hz], physicsClientId=cid)
            vis = p.createVisualShape(p.GEOM_BOX, halfExtents=[half, half, hz], rgbaColor=rgba,
                                      physicsClientId=cid)
            body = p.createMultiBody(mass, col, vis, [0, 0, 0], physicsClientId=cid)
        self.mass[item.name] = mass
        self.base_z[item.name] = -p.getAABB(body, physicsClientId=cid)[0][2]
        self._register(item.name, body, "item")
        z = self.top.get(item.support, 0.0) + self.base_z[item.name] + 0.002
        p.resetBasePositionAndOrientation(body, [*item.position, z], _yaw_quat(0.0), physicsClientId=cid)
        return body

    def _robot(self, start: tuple[float, float]) -> int:
        p, cid = self.p, self.cid
        half_h = ROBOT_HEIGHT / 2
        col = p.createCollisionShape(p.GEOM_CYLINDER, radius=ROBOT_RADIUS, height=ROBOT_HEIGHT, physicsClientId=cid)
        vis = p.createVisualShapeArray(
            shapeTypes=[p.GEOM_CYLINDER, p.GEOM_BOX, p.GEOM_CYLINDER],
            radii=[ROBOT_RADIUS, 0.0, 0.05], lengths=[ROBOT_HEIGHT, 0.0, 0.3],
            halfExtents=[[0, 0, 0], [0.06, 0.12, 0.05], [0, 0, 0]],
            rgbaColors=[[0.16, 0.35, 0.85, 1], [1.0, 0.8, 0.2, 1], [0.9, 0.9, 0.95, 1]],
            visualFramePositions=[[0, 0, 0], [ROBOT_RADIUS - 0.04, 0, half_h - 0.08], [0, 0, half_h + 0.15]],
            physicsClientId=cid)
        body = p.createMultiBody(0.0, col, vis, [*start, half_h], physicsClientId=cid)
        return self._register(ROBOT, body, "robot")

    # ------------------------------------------------------------------ poses
    def position(self, name: str) -> tuple[float, float, float]:
        return tuple(self.p.getBasePositionAndOrientation(self.body[name], physicsClientId=self.cid)[0])

    def aabb(self, name: str) -> tuple[tuple[float, float, float], tuple[float, float, float]]:
        lo, hi = self.p.getAABB(self.body[name], physicsClientId=self.cid)
        return tuple(lo), tuple(hi)

    def robot_pose(self) -> tuple[float, float, float]:
        """(x, y, yaw) of the robot base."""
        pos, orn = self.p.getBasePositionAndOrientation(self.body[ROBOT], physicsClientId=self.cid)
        yaw = self.p.getEulerFromQuaternion(orn)[2]
        return pos[0], pos[1], yaw

    def set_robot(self, x: float, y: float, yaw: float) -> None:
        """Put the base at (x, y, yaw); a held item follows with its grasp transform."""
        p, cid = self.p, self.cid
        base = ([x, y, ROBOT_HEIGHT / 2], _yaw_quat(yaw))
        p.resetBasePositionAndOrientation(self.body[ROBOT], *base, physicsClientId=cid)
        if self.held is not None and self.grasp is not None:
            pos, orn = p.multiplyTransforms(*base, *self.grasp)
            p.resetBasePositionAndOrientation(self.body[self.held], pos, orn, physicsClientId=cid)
        self.version += 1

    def set_item(self, name: str, x: float, y: float, support: str = "") -> None:
        """Stand item `name` upright at (x, y) on `support`'s top (on the floor when "")."""
        z = self.top.get(support, 0.0) + self.base_z[name] + 0.002
        self.p.resetBasePositionAndOrientation(self.body[name], [x, y, z], _yaw_quat(0.0), physicsClientId=self.cid)
        self.p.resetBaseVelocity(self.body[name], [0, 0, 0], [0, 0, 0], physicsClientId=self.cid)
        self.version += 1

    def attach(self, item: str) -> None:
        """Grasp by attachment: the item goes onto the carry pose and follows the base from now on."""
        p, cid = self.p, self.cid
        body = self.body[item]
        p.setCollisionFilterGroupMask(body, -1, ROBOT_GROUP, 0, physicsClientId=cid)
        self.held = item
        self.grasp = ((0.0, 0.0, CARRY_Z + self.base_z[item]), _yaw_quat(0.0))
        x, y, yaw = self.robot_pose()
        self.set_robot(x, y, yaw)

    def detach(self, x: float, y: float, support: str) -> None:
        """Release the held item upright at (x, y) on `support`; it then settles under gravity."""
        item = self.held
        if item is None:
            return
        p, cid = self.p, self.cid
        body = self.body[item]
        self.held, self.grasp = None, None
        p.setCollisionFilterGroupMask(body, -1, WORLD_GROUP, WORLD_GROUP, physicsClientId=cid)
        self.set_item(item, x, y, support)
        self.settle()

    def settle(self, steps: int = 120) -> None:
        """Let the dynamic items come to rest (0.5 s at 240 Hz)."""
        for _ in range(steps):
            self.p.stepSimulation(physicsClientId=self.cid)
        if self.held is not None:  # the carried item collides with nothing, so it fell: put it back
            self.p.resetBaseVelocity(self.body[self.held], [0, 0, 0], [0, 0, 0], physicsClientId=self.cid)
            self.set_robot(*self.robot_pose())
        self.version += 1

    def client_args(self) -> dict[str, Any]:
        return {"physicsClientId": self.cid}
