"""Top-down frames of an iTHOR FloorPlan: reachable grid by region, receptacles, objects, agent, overlay text."""

from __future__ import annotations

import math

import numpy as np
from PIL import Image, ImageDraw

from servicerobot.envs.household.rendering import COLOUR_RGB
from servicerobot.envs.panel import TextPanel, _font, _text_width
from servicerobot.scenes.ithor import ThorScene

__all__ = ["ThorRenderer"]

_REGION = [(236, 228, 200), (206, 224, 236)]
_FIXTURE = {"surface": (196, 160, 118), "shelf": (166, 124, 86), "openable": (180, 142, 104), "bed": (190, 200, 235),
            "fridge": (232, 242, 250), "sink": (170, 215, 240), "container": (205, 190, 150), "trashcan": (130, 135, 130),
            "light": (250, 220, 90)}
_PANEL = 0.3


class ThorRenderer:
    """Draws one `ThorScene`; the static map is drawn once, a frame adds state, agent and text."""

    def __init__(self, scene: ThorScene, width: int, height: int):
        self.scene, self.width, self.height = scene, width, height
        self.map_h = max(40, int(height * (1 - _PANEL)))
        pts = scene.reachable
        xs = [p[0] for p in (e.pos for e in scene.entities.values() if e.pos)] + list(pts[:, 0])
        zs = [p[1] for p in (e.pos for e in scene.entities.values() if e.pos)] + list(pts[:, 1])
        self.lo = (min(xs) - 0.8, min(zs) - 0.8)
        span = (max(xs) + 0.8 - self.lo[0], max(zs) + 0.8 - self.lo[1])
        self.scale = min(width / span[0], self.map_h / span[1])
        self.font = _font(9)
        self.panel = TextPanel(width, height - self.map_h)  # the same text panel as every world's frames
        base = Image.new("RGB", (width, self.map_h), (250, 250, 250))
        draw = ImageDraw.Draw(base)
        half = 0.125 * self.scale
        for (x, z), r in zip(pts, scene.point_region):
            u, v = self.px(x, z)
            draw.rectangle([u - half, v - half, u + half, v + half], fill=_REGION[int(r) % 2])
        self.base = base

    def px(self, x: float, z: float) -> tuple[float, float]:
        """Pixel of a floor point (+z is up in the frame)."""
        return (x - self.lo[0]) * self.scale, self.map_h - (z - self.lo[1]) * self.scale

    def render(self, state, agent: dict, overlay: dict) -> np.ndarray:
        img = Image.new("RGB", (self.width, self.height), (255, 255, 255))
        img.paste(self.base, (0, 0))
        draw = ImageDraw.Draw(img)
        scene, atoms = self.scene, state.atoms
        flags = {(a.predicate, a.args[0]) for a in atoms if len(a.args) == 1}
        labels: list[tuple[float, float, float, float, str]] = []
        for name, e in scene.entities.items():
            if e.pos is None:
                continue
            obj = scene.thor[name]
            w, d = (0.25, 0.25) if e.pddl_type == "light" else (0.45, 0.35)
            u, v = self.px(*e.pos)
            fill = _FIXTURE.get(e.pddl_type, (190, 180, 170))
            if e.pddl_type == "light" and ("light-on", name) not in flags:
                fill = (90, 90, 90)
            outline = (200, 40, 40) if ("closed", name) in flags else (60, 60, 60)
            box = [u - w * self.scale / 2, v - d * self.scale / 2, u + w * self.scale / 2, v + d * self.scale / 2]
            draw.rectangle(box, fill=fill, outline=outline, width=1 if obj.synthesized else 2)
            if e.pddl_type != "light":
                labels.append((*self._label_spot(box), e.noun.split()[-1]))
            if ("faucet-on", name) in flags:
                draw.ellipse([box[2] - 5, box[1] - 5, box[2] + 1, box[1] + 1], fill=(30, 120, 255))
            if ("made", name) in flags:
                draw.line([box[0], box[1], box[2], box[3]], fill=(60, 60, 160))
            for k, item in enumerate(state.contents(name)):
                iu, iv = box[0] + 3 + (k % 5) * 6, box[1] + 3 + (k // 5) * 6
                colour = COLOUR_RGB.get(scene.entities[item].attributes.get("colour", ""), (120, 120, 120))
                if ("broken", item) in flags:
                    colour = (0, 0, 0)
                draw.ellipse([iu - 2, iv - 2, iu + 2, iv + 2], fill=colour,
                             outline=(150, 90, 20) if ("dirty", item) in flags else None)
        ax, az = agent["position"]["x"], agent["position"]["z"]
        u, v = self.px(ax, az)
        yaw = math.radians(agent["rotation"]["y"])
        r = max(5.0, 0.2 * self.scale)
        tip = (u + r * math.sin(yaw), v - r * math.cos(yaw))
        left = (u + 0.6 * r * math.sin(yaw + 2.4), v - 0.6 * r * math.cos(yaw + 2.4))
        right = (u + 0.6 * r * math.sin(yaw - 2.4), v - 0.6 * r * math.cos(yaw - 2.4))
        draw.polygon([tip, left, right], fill=(220, 30, 30))
        self._draw_labels(draw, labels)
        frame = np.asarray(img, dtype=np.uint8).copy()
        held = ", ".join(state.held_by("robot")) or "nothing"
        status = f"{self.scene.floorplan} ({self.scene.kind}): robot in {state.robot_room()}, holding {held}"
        frame[self.map_h:] = self.panel.render({**overlay, "status": status})
        if overlay.get("banner"):
            self.panel.banner(frame, str(overlay["banner"]), self.map_h)
        return frame

    def _label_spot(self, box: list[float]) -> tuple[float, float, float, float]:
        """Where a fixture's label goes: centred under its box."""
        return (box[0] + box[2]) / 2, box[3] + 1, box[2] - box[0], box[3] - box[1]

    def _draw_labels(self, draw: ImageDraw.ImageDraw, labels: list) -> None:
        """Each fixture's noun as a whole word under its box, on a light tag; a label that would overlap one
        already drawn is left out (never cut: "drawe", "fridg")."""
        taken: list[tuple[float, float, float, float]] = []
        height = self.font.getbbox("Ag")[3] + 2
        for cx, top, _w, _h, word in labels:
            width = _text_width(self.font, word) + 3
            rect = (cx - width / 2, top, cx + width / 2, top + height)
            if rect[0] < 0 or rect[2] > self.width or rect[3] > self.map_h:
                continue
            if any(rect[0] < r[2] and r[0] < rect[2] and rect[1] < r[3] and r[1] < rect[3] for r in taken):
                continue
            taken.append(rect)
            draw.rectangle(rect, fill=(255, 255, 255))
            draw.text((rect[0] + 1.5, top), word, fill=(40, 40, 40), font=self.font)
