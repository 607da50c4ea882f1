"""Top-down floor-plan rendering of the household world (the god view) as an RGB array.

`HouseholdRenderer` draws the house to fit the map area (aspect kept) and the worlds' common text panel
(`servicerobot.envs.panel.TextPanel`) below it: the active task, the last utterances, the task counts and
optional agent notes (last action, why it waits, plan, belief), with a banner when a task fails.

Everything that never changes (rooms, walls, doors, room labels, fixtures) is drawn once in `__init__`,
in a lit and a dark version; a frame copies the right version of each room and draws only what moves:
items, people, the robot and fixture state (lights, open/closed, taps, made beds). The map is reused
while `state.atoms` is the same object, and the panel while its text is the same.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

import numpy as np
from PIL import Image, ImageDraw

from servicerobot.envs.panel import TextPanel, _as_text, _fit, _font, _text_width

if TYPE_CHECKING:
    from servicerobot.envs.household.state import HouseholdState
    from servicerobot.scenes.household import HouseholdScene

__all__ = ["COLOUR_RGB", "HouseholdRenderer"]

RGB = tuple[int, int, int]

ROBOT_NAME = "robot"  # the robot's entity name (`servicerobot.scenes.household.ROBOT`)

COLOUR_RGB: dict[str, RGB] = {
    "red": (214, 48, 49), "blue": (40, 100, 230), "green": (46, 160, 67), "yellow": (245, 205, 40),
    "black": (25, 25, 25), "white": (250, 250, 250), "grey": (140, 140, 140), "gray": (140, 140, 140),
    "orange": (240, 135, 30), "purple": (140, 70, 190), "pink": (245, 130, 185), "brown": (135, 85, 45),
    "teal": (0, 150, 150),
}
_DEFAULT_ITEM: RGB = (165, 165, 165)

_ROOM_FILL: dict[str, RGB] = {
    "hallway": (226, 220, 208), "kitchen": (240, 232, 196), "living room": (222, 232, 208),
    "bathroom": (204, 228, 236), "laundry room": (214, 222, 238), "bedroom": (232, 216, 236),
    "dining room": (240, 222, 204), "study": (222, 214, 200), "playroom": (244, 214, 214),
    "guest room": (226, 222, 240), "office": (214, 224, 222), "storage room": (216, 212, 206),
}
_ROOM_DEFAULT: RGB = (224, 224, 224)
_WARM: RGB = (255, 236, 170)

_FIXTURE_FILL: dict[str, RGB] = {
    "surface": (200, 160, 115), "shelf": (170, 125, 85), "openable": (185, 145, 105), "bed": (190, 200, 235),
    "fridge": (235, 245, 250), "sink": (190, 225, 245), "washer": (235, 235, 240), "dryer": (230, 230, 236),
    "container": (205, 190, 150), "trashcan": (150, 155, 150),
}
_FIXTURE_DEFAULT: RGB = (190, 180, 170)
_OPENABLE_TYPES = ("openable", "fridge", "washer", "dryer")
_NOT_ITEMS = ("room", "person", "robot")

_SHORT_NOUN = {
    "kitchen sink": "sink", "bathroom sink": "sink", "trash can": "trash", "coffee table": "coffee",
    "tv stand": "tv", "dining table": "table", "laundry basket": "basket", "storage shelf": "shelf",
    "shoe rack": "shoes", "console table": "console", "toy box": "toys", "bookshelf": "books",
    "nightstand": "stand", "sideboard": "board",
}

_WALL: RGB = (60, 58, 64)
_DOOR: RGB = (196, 168, 120)
_BACKGROUND: RGB = (246, 246, 244)
_DIRTY: RGB = (110, 66, 25)
_BROKEN: RGB = (225, 20, 20)
_WATER: RGB = (30, 120, 235)
_ROBOT: RGB = (30, 90, 220)
_PEOPLE_PALETTE: tuple[RGB, ...] = (
    (200, 70, 60), (60, 140, 70), (150, 80, 170), (210, 120, 30), (40, 130, 150), (170, 60, 110),
    (100, 110, 40), (120, 90, 60), (70, 90, 170), (180, 150, 30),
)

def _blend(a: RGB, b: RGB, t: float) -> RGB:
    """`a` moved a fraction `t` of the way to `b`."""
    return tuple(round(x + (y - x) * t) for x, y in zip(a, b))  # type: ignore[return-value]


def _scale(c: RGB, f: float) -> RGB:
    return tuple(max(0, min(255, round(x * f))) for x in c)  # type: ignore[return-value]


class HouseholdRenderer:
    """Draws a `HouseholdState` of one `HouseholdScene` as a floor plan with a text panel.

    Args:
        scene: the house; its layout is drawn once here.
        width: frame width in pixels.
        height: frame height in pixels; the bottom ~100 px are the text panel.
    """

    def __init__(self, scene: HouseholdScene, width: int = 640, height: int = 480):
        if width < 64 or height < 64:
            raise ValueError(f"frame must be at least 64x64, got {width}x{height}")
        self.scene = scene
        self.width, self.height = int(width), int(height)
        self.panel_h = max(40, min(100, self.height // 4))
        self.map_h = self.height - self.panel_h
        ents = scene.entities

        # Metres -> pixels: fit the house's bounding box into the map area, aspect kept, centred.
        xs = [r.rect[0] for r in scene.rooms] + [r.rect[0] + r.rect[2] for r in scene.rooms]
        ys = [r.rect[1] for r in scene.rooms] + [r.rect[1] + r.rect[3] for r in scene.rooms]
        x0, x1, y0, y1 = min(xs), max(xs), min(ys), max(ys)
        margin = 10
        s = min((self.width - 2 * margin) / max(x1 - x0, 1e-6), (self.map_h - 2 * margin) / max(y1 - y0, 1e-6))
        self.s = s
        self._ox = (self.width - (x1 - x0) * s) / 2 - x0 * s
        self._oy = (self.map_h - (y1 - y0) * s) / 2 - y0 * s

        self.fixtures = [n for n, e in ents.items() if e.pos is not None]
        self.people = [n for n, e in ents.items() if e.pddl_type == "person"]
        self.items = [n for n, e in ents.items() if e.pos is None and e.pddl_type not in _NOT_ITEMS]
        self._order = {n: i for i, n in enumerate(self.items)}
        self._room_px = {r.name: self._rect_px(r.rect) for r in scene.rooms}
        self._lights_in: dict[str, list[str]] = {}
        for f in self.fixtures:
            if ents[f].pddl_type == "light":
                self._lights_in.setdefault(ents[f].room, []).append(f)

        # Sizes that follow the scale, clamped so tiny houses stay legible and big ones stay neat.
        self._wall = max(2, round(s * 0.1))
        self._fix_font = _font(8 if s >= 20 else 7)
        self._room_font = _font(int(max(8, min(12, s * 0.38))))
        self._item_r = max(1.5, min(3.5, s * 0.1))
        self._slot = 2 * self._item_r + 1.2
        self._agent_r = int(max(5, min(10, s * 0.3)))

        self._layout_fixtures()
        self._item_rgb = {}
        self._item_faded = {}
        for n in self.items:
            c = COLOUR_RGB.get(str(ents[n].attributes.get("colour", "")).lower(), _DEFAULT_ITEM)
            self._item_rgb[n] = c
            self._item_faded[n] = _blend(c, (235, 235, 235), 0.6)
        self._sprites: dict[tuple[str, bool], Image.Image] = {}
        self._bg_lit = self._draw_background(lit=True)
        self._bg_dark = self._draw_background(lit=False)
        self._person_sprite = self._people_sprites()
        self._robot_sprite = self._make_robot_sprite()

        self._map_atoms: frozenset | None = None
        self._map: np.ndarray | None = None
        self.panel = TextPanel(self.width, self.panel_h)
        self._counts: dict[int, Image.Image] = {}

    # ------------------------------------------------------------------ geometry
    def _px(self, x: float, y: float) -> tuple[float, float]:
        return self._ox + x * self.s, self._oy + y * self.s

    def _rect_px(self, rect: tuple[float, float, float, float]) -> tuple[int, int, int, int]:
        """(x0, y0, x1, y1) integer pixel box of a metre rectangle (x, y, w, h)."""
        ax, ay = self._px(rect[0], rect[1])
        bx, by = self._px(rect[0] + rect[2], rect[1] + rect[3])
        return round(ax), round(ay), round(bx), round(by)

    def _layout_fixtures(self) -> None:
        """Fixture boxes, labels and item slots (a small grid on the room side of each box)."""
        ents, font = self.scene.entities, self._fix_font
        self._box: dict[str, tuple[int, int, int, int]] = {}
        self._label: dict[str, str] = {}
        self._slots: dict[str, list[tuple[float, float]]] = {}
        bw = int(max(20, min(38, self.s * 1.25)))
        bh = int(max(8, min(14, self.s * 0.42)))
        sl, r = self._slot, self._item_r
        for f in self.fixtures:
            e = ents[f]
            cx, cy = self._px(*e.pos)
            if e.pddl_type == "light":
                self._box[f] = (int(cx - bh / 2), int(cy - bh / 2), int(cx + bh / 2), int(cy + bh / 2))
                self._slots[f] = []
                continue
            # Keep the box, and the item grid on the room side of it, inside the room's walls.
            rx0, ry0, rx1, ry1 = self._room_px[e.room]
            lo_x, hi_x = rx0 + self._wall + 1, rx1 - self._wall - 1
            lo_y, hi_y = ry0 + self._wall + 1, ry1 - self._wall - 1
            cx = min(max(cx, lo_x + bw / 2), hi_x - bw / 2)
            cy = min(max(cy, lo_y + bh / 2), hi_y - bh / 2)
            box = (round(cx - bw / 2), round(cy - bh / 2), round(cx + bw / 2), round(cy + bh / 2))
            self._box[f] = box
            noun = e.noun
            # a whole word that fits the box: never a word cut short ("nightst"); none when nothing fits
            words = [_SHORT_NOUN.get(noun, noun.split()[0]), *reversed(noun.split())]
            self._label[f] = next((w for w in words if _text_width(font, w) <= bw - 3), "")
            down = cy < (ry0 + ry1) / 2
            cols = max(4, round((bw + sl) / sl))
            half = (cols - 1) / 2 * sl
            gx = min(max(cx, lo_x + r + half), hi_x - r - half)
            slots = []
            for row in range(3):
                y = (box[3] + 1 + r + row * sl) if down else (box[1] - 1 - r - row * sl)
                slots.extend((gx + col * sl - half, y) for col in range(cols))
            self._slots[f] = slots

    # ------------------------------------------------------------------ static layers
    def _fixture_sprite(self, fixture: str, state: bool) -> Image.Image:
        """The box of a fixture in one state: closed (openables) or made (beds); plain otherwise."""
        key = (fixture, state)
        sprite = self._sprites.get(key)
        if sprite is not None:
            return sprite
        e = self.scene.entities[fixture]
        x0, y0, x1, y1 = self._box[fixture]
        w, h = x1 - x0 + 1, y1 - y0 + 1
        fill = _FIXTURE_FILL.get(e.pddl_type, _FIXTURE_DEFAULT)
        img = Image.new("RGB", (w, h), fill)
        d = ImageDraw.Draw(img)
        outline = (70, 60, 55)
        if e.pddl_type == "bed":
            if state:  # made: pillow and a smooth blanket
                d.rectangle((1, 1, w - 2, h - 2), fill=(120, 150, 215))
                d.rectangle((2, 1, max(3, w // 5), h - 2), fill=(245, 245, 250))
            else:  # unmade: rumpled sheet
                d.rectangle((1, 1, w - 2, h - 2), fill=(225, 225, 235))
                d.line([(2, h - 3), (w // 3, 2), (w // 2, h - 3), (2 * w // 3, 2), (w - 3, h - 3)],
                       fill=(150, 160, 200), width=1)
        closed = e.pddl_type in _OPENABLE_TYPES and state
        if closed:  # closed: dark, with a heavy frame and light lettering
            fill = _scale(fill, 0.55)
            d.rectangle((0, 0, w - 1, h - 1), fill=fill, outline=(20, 18, 16), width=2 if h >= 11 else 1)
        else:
            d.rectangle((0, 0, w - 1, h - 1), outline=outline, width=1)
        label = self._label.get(fixture, "")
        if label:
            font = self._fix_font
            tw = _text_width(font, label)
            bb = font.getbbox(label)
            tx, ty = (w - tw) / 2, (h - (bb[3] + bb[1])) / 2
            d.text((tx, ty), label, fill=(250, 250, 250) if closed else (25, 25, 25), font=font)
        self._sprites[key] = img
        return img

    def _draw_background(self, lit: bool) -> np.ndarray:
        """Rooms, walls, doors, room labels and fixtures (in their default state)."""
        img = Image.new("RGB", (self.width, self.map_h), _BACKGROUND)
        d = ImageDraw.Draw(img)
        for room in self.scene.rooms:
            base = _ROOM_FILL.get(room.kind, _ROOM_DEFAULT)
            fill = _blend(base, _WARM, 0.35) if lit else _scale(base, 0.72)
            d.rectangle(self._room_px[room.name], fill=fill)
        wall = self._wall
        for room in self.scene.rooms:
            d.rectangle(self._room_px[room.name], outline=_WALL, width=wall)
        for a, b in self.scene.doors:
            self._draw_door(d, a, b)
        for f in self.fixtures:
            if self.scene.entities[f].pddl_type != "light":
                img.paste(self._fixture_sprite(f, False), self._box[f][:2])
        for room in self.scene.rooms:  # name tags straddling the top wall
            x0, y0, x1, _ = self._room_px[room.name]
            font, text = self._room_tag(room.label, x1 - x0 - 3 * wall - 4)
            if not text:
                continue
            bb = font.getbbox(text)
            tw, th = _text_width(font, text), bb[3] - bb[1]
            tx, ty = x0 + wall + 3, y0 - th / 2 - bb[1] + wall / 2
            d.rectangle((tx - 2, ty + bb[1] - 1, tx + tw + 1, ty + bb[3] + 1), fill=_WALL)
            d.text((tx, ty), text, fill=(250, 250, 250), font=font)
        return np.asarray(img, dtype=np.uint8).copy()

    def _room_tag(self, label: str, max_w: float) -> tuple[Any, str]:
        """The font and text of a room's name tag: the whole label at the room font, else at a smaller one (down
        to 7 px), else its first whole words with an ellipsis; never a word cut in the middle ("televisio…" on a
        small frame), unless not even the first word fits at 7 px."""
        size = self._room_font.size if hasattr(self._room_font, "size") else 8
        for s in range(int(size), 6, -1):
            if _text_width(_font(s), label) <= max_w:
                return _font(s), label
        small = _font(7)
        text = _fit(label, small, max_w)
        first = label.split()[0] if label.split() else ""
        if text and len(text.rstrip("…")) < len(first) and _text_width(small, first) <= max_w * 1.25:
            text = first  # the first word alone, a little past the tag's room, rather than cut in the middle
        return small, text

    def _draw_door(self, d: ImageDraw.ImageDraw, a: str, b: str) -> None:
        """A gap in the middle of the wall two rooms share, with jambs."""
        ra, rb = self.scene.room(a).rect, self.scene.room(b).rect
        eps = 1e-6
        gap = min(1.0, 0.25 * min(ra[2], ra[3], rb[2], rb[3])) * self.s / 2
        t = self._wall
        for p, q in ((ra, rb), (rb, ra)):
            if abs(p[0] + p[2] - q[0]) < eps:  # vertical shared wall at x
                lo, hi = max(p[1], q[1]), min(p[1] + p[3], q[1] + q[3])
                if hi - lo > eps:
                    cx, cy = self._px(q[0], (lo + hi) / 2)
                    d.rectangle((cx - t, cy - gap, cx + t, cy + gap), fill=_DOOR)
                    d.line([(cx - t - 1, cy - gap), (cx + t + 1, cy - gap)], fill=_WALL, width=2)
                    d.line([(cx - t - 1, cy + gap), (cx + t + 1, cy + gap)], fill=_WALL, width=2)
                    return
            if abs(p[1] + p[3] - q[1]) < eps:  # horizontal shared wall at y
                lo, hi = max(p[0], q[0]), min(p[0] + p[2], q[0] + q[2])
                if hi - lo > eps:
                    cx, cy = self._px((lo + hi) / 2, q[1])
                    d.rectangle((cx - gap, cy - t, cx + gap, cy + t), fill=_DOOR)
                    d.line([(cx - gap, cy - t - 1), (cx - gap, cy + t + 1)], fill=_WALL, width=2)
                    d.line([(cx + gap, cy - t - 1), (cx + gap, cy + t + 1)], fill=_WALL, width=2)
                    return

    def _people_sprites(self) -> dict[str, Image.Image]:
        """A circle with the person's initial (two letters where initials clash), with an alpha mask."""
        ents = self.scene.entities
        names = {p: str(ents[p].attributes.get("name") or ents[p].noun or p) for p in self.people}
        initials: dict[str, int] = {}
        for n in names.values():
            initials[n[:1].upper()] = initials.get(n[:1].upper(), 0) + 1
        sprites = {}
        r = self._agent_r
        font = _font(max(8, int(r * 1.25)))
        for i, p in enumerate(self.people):
            name = names[p]
            text = name[:1].upper() + (name[1:2].lower() if initials[name[:1].upper()] > 1 else "")
            img = Image.new("RGBA", (2 * r + 1, 2 * r + 1), (0, 0, 0, 0))
            d = ImageDraw.Draw(img)
            d.ellipse((0, 0, 2 * r, 2 * r), fill=_PEOPLE_PALETTE[i % len(_PEOPLE_PALETTE)] + (255,),
                      outline=(255, 255, 255, 255), width=1)
            tfont = font if _text_width(font, text) <= 2 * r - 2 else _font(max(7, int(r)))
            d.text((r + 0.5, r + 0.5), text, fill=(255, 255, 255, 255), font=tfont, anchor="mm")
            sprites[p] = img
        return sprites

    def _make_robot_sprite(self) -> Image.Image:
        """A blue rounded square with a white "R" and a forward arrow."""
        r = self._agent_r + 1
        img = Image.new("RGBA", (2 * r + 1, 2 * r + 1), (0, 0, 0, 0))
        d = ImageDraw.Draw(img)
        d.rounded_rectangle((0, 0, 2 * r, 2 * r), radius=max(2, r // 3), fill=_ROBOT + (255,),
                            outline=(10, 30, 90, 255), width=1)
        d.polygon([(r - 3, 1), (r + 3, 1), (r, -2 + 1 + r // 3)], fill=(255, 255, 255, 255))
        d.text((r + 0.5, r + 1.5), "R", fill=(255, 255, 255, 255), font=_font(max(8, int(r * 1.3))),
               anchor="mm")
        return img

    # ------------------------------------------------------------------ frame
    def render(self, state: HouseholdState, overlay: dict | None = None) -> np.ndarray:
        """Draw `state` with `overlay` text below.

        Args:
            state: the true world state (every item is drawn; ones in closed containers faded).
            overlay: optional text: "task", "utterances" ([{"speaker", "text"}]), "tasks_completed",
                "tasks_failed", "tasks_total", "last_action", "waiting" (why the robot waits), "plan" (list of
                str), "belief", "banner" (drawn across the top of the map, e.g. "task failed: ..."), "highlight"
                (entity names: those items get a ring and a name tag). Missing keys are skipped.

        Returns:
            A (height, width, 3) uint8 RGB array (a fresh array each call).
        """
        frame = np.empty((self.height, self.width, 3), dtype=np.uint8)
        atoms = state.atoms
        if self._map is None or self._map_atoms is not atoms:
            self._map = self._render_map(state)
            self._map_atoms = atoms
        frame[: self.map_h] = self._map
        highlight = (overlay or {}).get("highlight")
        if highlight:
            self._label_items(frame, [str(h) for h in highlight][:6])
        frame[self.map_h:] = self.panel.render(overlay or {})
        banner = _as_text((overlay or {}).get("banner"))
        if banner:
            self.panel.banner(frame, banner, self.map_h)
        return frame

    def _label_items(self, frame: np.ndarray, names: list[str]) -> None:
        """A ring and a short name tag ("mug", "milk") beside each named item on the map (the items a task is
        about); names that are not items drawn now (fixtures, people, items out of the picture) are skipped."""
        img = Image.fromarray(frame[: self.map_h])
        d = ImageDraw.Draw(img)
        font, r = self._fix_font, self._item_r
        for name in names:
            xy = self._item_xy.get(name)
            entity = self.scene.entities.get(name)
            if xy is None or entity is None:
                continue
            x, y = xy
            d.ellipse((x - r - 2, y - r - 2, x + r + 2, y + r + 2), outline=(255, 60, 200), width=2)
            tag = entity.noun.split()[-1] if entity.noun else name
            tw, th = _text_width(font, tag), font.getbbox("Ag")[3]
            tx = min(max(1, x + r + 3), self.width - tw - 3)
            ty = min(max(1, y - th - 2), self.map_h - th - 3)
            d.rectangle((tx - 1, ty - 1, tx + tw + 1, ty + th + 1), fill=(255, 255, 255), outline=(255, 60, 200))
            d.text((tx, ty), tag, fill=(20, 20, 20), font=font)
        frame[: self.map_h] = np.asarray(img, dtype=np.uint8)

    def _render_map(self, state: HouseholdState) -> np.ndarray:
        self._item_xy: dict[str, tuple[float, float]] = {}
        ents = self.scene.entities
        contents: dict[str, list[str]] = {}
        agent_room: dict[str, str] = {}
        held: dict[str, list[str]] = {}
        flags: dict[str, set[str]] = {"closed": set(), "light-on": set(), "faucet-on": set(), "dirty": set(),
                                      "broken": set(), "made": set(), "wet": set()}
        for atom in state.atoms:  # one pass over the facts instead of one query per entity
            pred, args = atom[0], atom[1]
            if pred == "on" or pred == "inside":
                contents.setdefault(args[1], []).append(args[0])
            elif pred == "in-room":
                if args[0] not in self._box:
                    agent_room[args[0]] = args[1]
            elif pred == "held-by":
                held.setdefault(args[1], []).append(args[0])
            elif pred == "holding":
                held.setdefault(args[0], []).append(args[1])
            elif pred in flags:
                flags[pred].add(args[0])

        lit_rooms = [room for room, lights in self._lights_in.items() if any(x in flags["light-on"] for x in lights)]
        arr = self._bg_dark.copy()
        for room in lit_rooms:
            x0, y0, x1, y1 = self._room_px[room]
            arr[max(0, y0):y1 + 1, max(0, x0):x1 + 1] = self._bg_lit[max(0, y0):y1 + 1, max(0, x0):x1 + 1]
        img = Image.fromarray(arr)
        d = ImageDraw.Draw(img)

        closed, made, faucet = flags["closed"], flags["made"], flags["faucet-on"]
        for f in self.fixtures:
            kind = ents[f].pddl_type
            box = self._box[f]
            if kind == "light":
                on = f in flags["light-on"]
                if on:
                    g = 3
                    d.ellipse((box[0] - g, box[1] - g, box[2] + g, box[3] + g), fill=(255, 226, 120))
                d.ellipse(box, fill=(255, 210, 40) if on else (95, 95, 100), outline=(60, 50, 30))
            elif (kind in _OPENABLE_TYPES and f in closed) or (kind == "bed" and f in made):
                img.paste(self._fixture_sprite(f, True), box[:2])
            elif kind == "sink" and f in faucet:
                x, y = box[2] + 1, box[1]
                d.polygon([(x + 3, y - 1), (x, y + 5), (x + 6, y + 5)], fill=_WATER)
                d.ellipse((x, y + 2, x + 6, y + 8), fill=_WATER)

        r = self._item_r
        dirty, broken, wet = flags["dirty"], flags["broken"], flags["wet"]
        order = self._order
        for f, items in contents.items():
            slots = self._slots.get(f)
            if not slots:
                continue
            items.sort(key=lambda n: order.get(n, 0))
            faded = f in closed
            shown = items if len(items) <= len(slots) else items[: len(slots) - 1]
            for item, (x, y) in zip(shown, slots):
                self._draw_item(d, item, x, y, r, faded, dirty, broken, wet)
            if len(shown) < len(items):
                x, y = slots[len(shown)]
                sprite = self._count_sprite(len(items) - len(shown))
                img.paste(sprite, (int(x - sprite.width / 2), int(y - sprite.height / 2)), sprite)

        by_room: dict[str, list[str]] = {}
        if ROBOT_NAME in agent_room:
            by_room.setdefault(agent_room[ROBOT_NAME], []).append(ROBOT_NAME)
        for p in self.people:
            if p in agent_room:
                by_room.setdefault(agent_room[p], []).append(p)
        ar = self._agent_r
        step = 2 * ar + 4
        for room, agents in by_room.items():
            if room not in self._room_px:
                continue
            x0, y0, x1, y1 = self._room_px[room]
            per_row = max(1, int((x1 - x0 - 2 * self.s * 1.1) // step))
            n_rows = (len(agents) + per_row - 1) // per_row
            cy0 = (y0 + y1) / 2 - (n_rows - 1) * step / 2
            for k, agent in enumerate(agents):
                row, col = divmod(k, per_row)
                in_row = min(per_row, len(agents) - row * per_row)
                cx = (x0 + x1) / 2 + (col - (in_row - 1) / 2) * step
                cy = cy0 + row * step
                sprite = self._robot_sprite if agent == ROBOT_NAME else self._person_sprite.get(agent)
                if sprite is None:
                    continue
                half = sprite.width // 2
                img.paste(sprite, (int(cx) - half, int(cy) - half), sprite)
                for j, item in enumerate(held.get(agent, ())[:3]):
                    self._draw_item(d, item, cx + half - 1 - j * (2 * r + 1), cy - half + 1, r + 0.5, False,
                                    dirty, broken, wet, outline=(255, 255, 255))
        return np.asarray(img, dtype=np.uint8)

    def _count_sprite(self, n: int) -> Image.Image:
        """A cached "+n" tag for items that do not fit a fixture's slots."""
        sprite = self._counts.get(n)
        if sprite is None:
            font, text = self._fix_font, f"+{n}"
            w, h = int(_text_width(font, text)) + 2, int(font.getbbox("+0")[3]) + 2
            sprite = Image.new("RGBA", (w, h), (255, 255, 255, 170))
            ImageDraw.Draw(sprite).text((1, 0), text, fill=(20, 20, 20, 255), font=font)
            self._counts[n] = sprite
        return sprite

    def _draw_item(self, d: ImageDraw.ImageDraw, item: str, x: float, y: float, r: float, faded: bool,
                   dirty: set, broken: set, wet: set, outline: RGB = (60, 60, 60)) -> None:
        """An item dot: its colour (faded when shut away), brown ring if dirty, red cross if broken."""
        self._item_xy[item] = (x, y)
        colour = (self._item_faded if faded else self._item_rgb).get(item, _DEFAULT_ITEM)
        if item in dirty:
            outline, width = _DIRTY, 2 if r >= 2.5 else 1
        elif item in wet:
            outline, width = _WATER, 1
        else:
            width = 1
        d.ellipse((x - r, y - r, x + r, y + r), fill=colour, outline=outline, width=width)
        if item in broken:
            k = r + 1
            d.line([(x - k, y - k), (x + k, y + k)], fill=_BROKEN, width=1)
            d.line([(x - k, y + k), (x + k, y - k)], fill=_BROKEN, width=1)

    # ------------------------------------------------------------------ panel
