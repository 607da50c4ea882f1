"""Where the robot must look to see what a receptacle holds: its support surface, and from which side.

The executor's look-around checks these against its depth images (`adapters.habitat.seen_fraction`) and
drives to a receptacle it cannot see; the geometry comes from the robot's map (the 3DSG boxes).
"""

from __future__ import annotations

import numpy as np

from servicerobot.scenes.gibson import SINK_DEPTH, Object3D, class_type

__all__ = ["OBLIQUE_DEG", "SURFACES", "oblique", "support_points"]

SURFACES = frozenset({"surface", "shelf", "bed"})
OBLIQUE_DEG = 55.0


def support_points(obj: Object3D, n: int = 4) -> np.ndarray:
    """An n x n grid (3DSG, inset from the edges) over where items rest on or in `obj`: just above a surface's
    top, over a sink's basin, or at item height on the floor of any other container."""
    lo, hi = (np.asarray(x, dtype=float) for x in obj.box)
    kind = class_type(obj.class_)
    inset = np.minimum(0.08, (hi - lo) / 4)
    if kind in SURFACES:
        z = hi[2] + 0.03
    elif kind == "sink":
        z = hi[2] - SINK_DEPTH + 0.05
    else:
        z = lo[2] + min(0.1, (hi[2] - lo[2]) / 2)
    xs, ys = (np.linspace(lo[a] + inset[a], hi[a] - inset[a], n) for a in (0, 1))
    return np.array([(x, y, z) for x in xs for y in ys])


def oblique(obj: Object3D, front: tuple[int, int], camera_xy, max_deg: float = OBLIQUE_DEG) -> bool:
    """Whether a camera at `camera_xy` sees front-opening `obj` (front: (axis, sign)) from more than `max_deg`
    off its front, or from behind: whence the far side of its floor never shows through the opening."""
    axis, sign = front
    to_camera = np.asarray(camera_xy, dtype=float)[:2] - np.asarray(obj.location[:2], dtype=float)
    return bool(sign * to_camera[axis] <= np.cos(np.deg2rad(max_deg)) * np.linalg.norm(to_camera))
