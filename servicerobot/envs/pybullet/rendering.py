"""Frames of the PyBullet world: an oblique CPU (TinyRenderer) view of the apartment and a text panel below.

The camera is fitted once per layout and frame size so the whole apartment is in view. The scene is
rendered at no more than `max_pixels` and scaled up with Pillow, which keeps frames above 10 per second
on one core whatever the requested size. Room names and the robot's last path are drawn over the image;
the panel (`servicerobot.envs.panel.TextPanel`, as on every world's frames) shows the task, what people said,
the last action and its result, the plan and the task counts.
"""

from __future__ import annotations

import math

import numpy as np
from PIL import Image, ImageDraw

from servicerobot.envs.panel import TextPanel, _font, _text_width
from servicerobot.envs.pybullet.layout import WALL_H, Layout
from servicerobot.envs.pybullet.sim import Sim

__all__ = ["PyBulletRenderer"]

_PATH = (0, 190, 255)


class PyBulletRenderer:
    """Renders `sim` (built from `layout`) into (height, width, 3) uint8 frames with an overlay panel."""

    def __init__(self, sim: Sim, layout: Layout, width: int, height: int, max_pixels: int = 400 * 300,
                 pitch_deg: float = 58.0, fov_deg: float = 45.0):
        self.sim, self.layout = sim, layout
        self.width, self.height = width, height
        self.panel_h = max(40, min(120, round(height * 0.25)))
        self.scene_h = max(8, height - self.panel_h)
        scale = min(1.0, math.sqrt(max_pixels / (width * self.scene_h)))
        self.rw, self.rh = max(8, int(width * scale)), max(8, int(self.scene_h * scale))
        self.fov = fov_deg
        self.pitch = math.radians(pitch_deg)
        self.proj = sim.p.computeProjectionMatrixFOV(fov_deg, self.rw / self.rh, 0.1, 100.0)
        self.view = self._fit_view()
        self._pv = (np.array(self.proj, dtype=float).reshape(4, 4).T @
                    np.array(self.view, dtype=float).reshape(4, 4).T)
        self._label_font = _font(10 if width >= 480 else 8)
        self.panel = TextPanel(width, self.panel_h)  # the same text panel as every world's frames
        self._cache: tuple[int, np.ndarray] | None = None
        self.frames = 0

    # ------------------------------------------------------------------ camera
    def _view_at(self, distance: float) -> list[float]:
        w, h = self.layout.extent
        target = [w / 2, h / 2, 0.0]
        eye = [w / 2, h / 2 - distance * math.cos(self.pitch), distance * math.sin(self.pitch)]
        return self.sim.p.computeViewMatrix(eye, target, [0, 0, 1])

    def _fit_view(self) -> list[float]:
        """The closest camera (binary search on distance) that keeps the whole apartment in the frame."""
        w, h = self.layout.extent
        corners = np.array([[x, y, z, 1.0] for x in (-0.2, w + 0.2) for y in (-0.2, h + 0.2) for z in (0.0, WALL_H)])
        proj = np.array(self.proj, dtype=float).reshape(4, 4).T
        lo, hi = 1.0, 200.0
        for _ in range(40):
            mid = (lo + hi) / 2
            clip = (proj @ np.array(self._view_at(mid), dtype=float).reshape(4, 4).T @ corners.T).T
            ndc = clip[:, :2] / clip[:, 3:4]
            if np.all(clip[:, 3] > 0) and np.abs(ndc).max() <= 0.97:
                hi = mid
            else:
                lo = mid
        return self._view_at(hi)

    def project(self, pts: np.ndarray) -> np.ndarray:
        """Pixel coordinates (in the output frame) of world points (N, 3)."""
        homo = np.hstack([pts, np.ones((len(pts), 1))])
        clip = (self._pv @ homo.T).T
        ndc = clip[:, :2] / clip[:, 3:4]
        return np.stack([(ndc[:, 0] + 1) / 2 * self.width, (1 - ndc[:, 1]) / 2 * self.scene_h], axis=1)

    # ------------------------------------------------------------------ frame
    def scene(self) -> np.ndarray:
        """The camera image at the output size (cached while no pose changed)."""
        if self._cache is not None and self._cache[0] == self.sim.version:
            return self._cache[1]
        p = self.sim.p
        _, _, rgba, _, _ = p.getCameraImage(self.rw, self.rh, self.view, self.proj, renderer=p.ER_TINY_RENDERER,
                                            shadow=0, flags=p.ER_NO_SEGMENTATION_MASK,
                                            physicsClientId=self.sim.cid)
        img = np.asarray(rgba, dtype=np.uint8).reshape(self.rh, self.rw, 4)[:, :, :3]
        if (self.rw, self.rh) != (self.width, self.scene_h):
            img = np.asarray(Image.fromarray(img).resize((self.width, self.scene_h), Image.BILINEAR))
        self._cache = (self.sim.version, img)
        self.frames += 1
        return img

    def render(self, overlay: dict | None = None, path: list[tuple[float, float]] | None = None) -> np.ndarray:
        """A frame: the scene with room names and `path`, and the overlay text panel below."""
        overlay = overlay or {}
        scene = Image.fromarray(self.scene().copy())  # never draw into the cached image
        d = ImageDraw.Draw(scene)
        if path and len(path) > 1:
            px = self.project(np.array([[x, y, 0.03] for x, y in path]))
            d.line([tuple(map(float, q)) for q in px], fill=_PATH, width=2 if self.width < 480 else 3)
        font = self._label_font
        for room in self.layout.rooms:
            x0, _y0, x1, y1 = room.rect
            (u, v), = self.project(np.array([[(x0 + x1) / 2, y1 - 0.35, 0.0]]))
            tw = _text_width(font, room.label)
            d.text((u - tw / 2, v), room.label, fill=(40, 40, 40), font=font)
        frame = np.empty((self.height, self.width, 3), dtype=np.uint8)
        frame[: self.scene_h] = np.asarray(scene)
        frame[self.scene_h:] = self.panel.render(overlay)
        if overlay.get("banner"):
            self.panel.banner(frame, str(overlay["banner"]), self.scene_h)
        return frame
