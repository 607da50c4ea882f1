"""The text panel under every world's frames: the task, what people said, the action, why the robot waits,
the plan, what memory believes, the count of tasks done / failed / open, and a banner when a task fails.

One `TextPanel` per frame size; a world's renderer draws its picture above it (the household floor plan,
the PyBullet scene, the AI2-THOR FloorPlan, the habitat-sim camera), so every world shows the same text.
Text is cut only after a whole word, and plan and belief lines keep whole steps and count the rest.
"""

from __future__ import annotations

from typing import Any

import numpy as np
from PIL import Image, ImageDraw, ImageFont

__all__ = ["TextPanel", "as_text", "fit", "fit_parts", "font", "panel_height", "text_width", "with_panel", "wrap"]

RGB = tuple[int, int, int]

_PANEL: RGB = (30, 34, 42)
_TEXT: RGB = (235, 235, 235)
_DIM_TEXT: RGB = (160, 168, 180)
_ACCENT: RGB = (255, 200, 80)
_FAILED: RGB = (255, 120, 110)
_BANNER: RGB = (170, 30, 30)

_FONTS: dict[int, Any] = {}


def _font(size: int) -> Any:
    """A cached font of `size` px: Pillow's scalable default font, or the bitmap one on old Pillow."""
    font = _FONTS.get(size)
    if font is None:
        try:
            font = ImageFont.load_default(size=size)
        except (TypeError, AttributeError, OSError, ImportError):
            font = ImageFont.load_default()
        _FONTS[size] = font
    return font


_WIDTHS: dict[int, dict[str, float]] = {}


def _text_width(font: Any, text: str) -> float:
    """Width of `text` in pixels from a per-font table of glyph advances (FreeType calls are slow)."""
    table = _WIDTHS.setdefault(id(font), {})
    total = 0.0
    for ch in text:
        w = table.get(ch)
        if w is None:
            try:
                w = float(font.getlength(ch))
            except AttributeError:  # very old bitmap fonts
                box = font.getbbox(ch)
                w = float(box[2] - box[0])
            table[ch] = w
        total += w
    return total


def _fit(text: str, font: Any, max_w: float) -> str:
    """`text`, cut after a whole word and ended with an ellipsis where it is wider than `max_w` pixels (mid-word
    only when not even its first word fits)."""
    if max_w <= 0:
        return ""
    if _text_width(font, text) <= max_w:
        return text
    lo, hi = 0, len(text)
    while lo < hi:  # longest prefix that fits with the ellipsis
        mid = (lo + hi + 1) // 2
        if _text_width(font, text[:mid].rstrip() + "…") <= max_w:
            lo = mid
        else:
            hi = mid - 1
    cut = text.rfind(" ", 0, lo + 1) if lo < len(text) and not text[lo].isspace() else lo
    if cut > 0:
        lo = cut
    return text[:lo].rstrip() + "…" if lo else ""


def _fit_parts(text: str, sep: str, font: Any, max_w: float) -> str:
    """`text` made of parts joined by `sep`, keeping as many whole parts as fit and saying how many were left
    out ("a -> b  (+2)"), so that no part is cut."""
    if _text_width(font, text) <= max_w:
        return text
    parts = text.split(sep)
    for k in range(len(parts) - 1, 0, -1):
        shorter = f"{sep.join(parts[:k])}  (+{len(parts) - k})"
        if _text_width(font, shorter) <= max_w:
            return shorter
    return _fit(text, font, max_w)


def _wrap(text: str, font: Any, max_w: float, max_lines: int) -> list[str]:
    """Greedy word wrap into at most `max_lines` lines; the last one is truncated with an ellipsis."""
    words, lines, line = text.split(), [], ""
    for i, word in enumerate(words):
        trial = f"{line} {word}" if line else word
        if _text_width(font, trial) <= max_w or not line:
            line = trial
            continue
        if len(lines) == max_lines - 1:
            return lines + [_fit(" ".join([line] + words[i:]), font, max_w)]
        lines.append(line)
        line = word
    lines.append(_fit(line, font, max_w))
    return lines[:max_lines]


def _as_text(value: Any) -> str:
    if value is None:
        return ""
    if isinstance(value, str):
        return value
    if isinstance(value, (list, tuple)):
        return "; ".join(_as_text(v) for v in value)
    return str(value)


class TextPanel:
    """Renders the overlay text into a (height, width, 3) panel; cached while the text is the same.

    Overlay keys (all optional): "task", "utterances" ([{"speaker", "text"}]), "tasks_completed", "tasks_failed",
    "tasks_total", "status" (a line about the world, e.g. the FloorPlan and what the robot holds),
    "last_action", "action_result" (shown when not "ok"), "waiting" (why the robot waits), "plan" (list of str), "belief", and "banner" (see `banner`).
    """

    def __init__(self, width: int, height: int):
        self.width, self.panel_h = int(width), int(height)
        self._panel_key: tuple | None = None
        self._panel: np.ndarray | None = None
        self._panel_font = _font(11 if self.panel_h >= 80 else 9)
        self._panel_lh = 14 if self.panel_h >= 80 else 11
        base = Image.new("RGB", (self.width, self.panel_h), _PANEL)
        ImageDraw.Draw(base).line([(0, 0), (self.width, 0)], fill=(90, 96, 110), width=2)
        self._panel_base = np.asarray(base, dtype=np.uint8).copy()
        self._rows: dict[tuple, np.ndarray] = {}

    def render(self, overlay: dict) -> np.ndarray:
        """The panel for `overlay` (the same array object while the text does not change: copy to modify)."""
        return self._render_panel(overlay)

    def banner(self, frame: np.ndarray, text: str, height: int | None = None) -> None:
        """Draw a red strip with `text` (two lines at most) across the top of `frame`, within its first `height`
        rows (default: the whole frame)."""
        self._draw_banner(frame, text, frame.shape[0] if height is None else height)

    def _panel_lines(self, overlay: dict) -> list[tuple[list[tuple[str, RGB]], str]]:
        """The panel's lines as (segments, role) in priority order."""
        lines: list[tuple[list[tuple[str, RGB]], str]] = []
        task = _as_text(overlay.get("task"))
        lines.append(([("Task: ", _ACCENT), (task or "(none)", _TEXT)], "task"))
        if overlay.get("status") not in (None, ""):
            lines.append(([(_as_text(overlay["status"]), _DIM_TEXT)], "status"))
        utterances = overlay.get("utterances") or []
        if isinstance(utterances, (str, dict)):
            utterances = [utterances]
        for u in list(utterances)[-2:]:
            if isinstance(u, dict):
                speaker, text = _as_text(u.get("speaker")), _as_text(u.get("text"))
            else:
                speaker, text = "", _as_text(u)
            segs = [(f"{speaker}: ", (140, 200, 255))] if speaker else []
            lines.append((segs + [(text, _TEXT)], "utterance"))
        if overlay.get("last_action") not in (None, ""):
            segs = [("Action: ", _DIM_TEXT), (_as_text(overlay["last_action"]), _TEXT)]
            result = _as_text(overlay.get("action_result"))
            if result and result != "ok":  # the world's reason the action failed
                segs.append(("  " + result, _FAILED))
            lines.append((segs, "action"))
        if overlay.get("waiting") not in (None, ""):
            lines.append(([("Waiting: ", _ACCENT), (_as_text(overlay["waiting"]), _TEXT)], "waiting"))
        plan = overlay.get("plan")
        if plan:
            steps = [plan] if isinstance(plan, str) else [_as_text(p) for p in plan]
            # every step: the panel keeps as many whole ones as fit and counts the rest
            lines.append(([("Plan: ", _DIM_TEXT), (" -> ".join(steps), _TEXT)], "plan"))
        if overlay.get("belief") not in (None, ""):
            lines.append(([("Belief: ", _DIM_TEXT), (_as_text(overlay["belief"]), _TEXT)], "belief"))
        return lines

    def _render_panel(self, overlay: dict) -> np.ndarray:
        lines = self._panel_lines(overlay)
        done, total = overlay.get("tasks_completed"), overlay.get("tasks_total")
        failed = overlay.get("tasks_failed")
        if failed is not None and done is not None and total is not None:
            left = max(0, total - done - failed)
            counters = [f"done {done}  failed {failed}  open {left}", f"{done}/{failed}/{left}"]
        else:
            counters = [] if done is None and total is None else \
                [f"tasks {'?' if done is None else done}/{'?' if total is None else total}"]
        # the longest form that leaves the task line half the width; none on a very narrow frame
        counter = next((c for c in counters if _text_width(self._panel_font, c) + 12 <= self.width // 2), "")
        key = (tuple((tuple(segs), role) for segs, role in lines), counter)
        if key == self._panel_key and self._panel is not None:
            return self._panel
        font, lh, pad = self._panel_font, self._panel_lh, 5
        capacity = max(1, (self.panel_h - 2 * pad + 2) // lh)
        panel = self._panel_base.copy()
        counter_w = int(_text_width(font, counter)) + 12 if counter else 0
        if counter:
            colour = _FAILED if failed else _ACCENT
            self._blit_row(panel, self.width - pad - counter_w + 12, pad, ((counter, colour),), counter_w)

        # The task may take two lines when the others leave room; the rest take one each.
        task_lines = 2 if len(lines) + 1 <= capacity else 1
        rows: list[tuple[tuple[str, RGB], ...]] = []
        for segs, role in lines:
            if role == "task":
                head, (body, colour) = segs[0], segs[1]
                first_w = self.width - 2 * pad - counter_w - _text_width(font, head[0])
                wrapped = _wrap(body, font, first_w, task_lines) if task_lines > 1 else [_fit(body, font, first_w)]
                rows.append((head, (wrapped[0] if wrapped else "", colour)))
                indent = " " * max(1, int(_text_width(font, head[0]) // max(1.0, _text_width(font, " "))))
                rows.extend(((indent, colour), (extra, colour)) for extra in wrapped[1:])
            elif role in ("plan", "belief"):
                head, (body, colour) = segs[0], segs[1]
                room = self.width - 2 * pad - _text_width(font, head[0])
                rows.append((head, (_fit_parts(body, " -> " if role == "plan" else "; ", font, room), colour)))
            else:
                rows.append(tuple(segs))
        for i, segs in enumerate(rows[:capacity]):
            limit = self.width - 2 * pad - (counter_w if i == 0 else 0)
            self._blit_row(panel, pad, pad + i * lh, segs, limit)
        self._panel_key = key
        self._panel = panel
        return panel

    def _draw_banner(self, frame: np.ndarray, text: str, map_h: int) -> None:
        """A red strip across the top of the map with `text` in it (wrapped to two lines at most)."""
        font, lh, pad = self._panel_font, self._panel_lh, 5
        lines = _wrap(text, font, self.width - 2 * pad, 2)
        h = min(map_h, len(lines) * lh + 2 * pad)
        img = Image.new("RGB", (self.width, h), _BANNER)
        d = ImageDraw.Draw(img)
        for i, line in enumerate(lines):
            d.text((pad, pad + i * lh), line, fill=(255, 255, 255), font=font)
        frame[:h] = np.asarray(img, dtype=np.uint8)

    def _blit_row(self, panel: np.ndarray, x: int, y: int, segs: tuple[tuple[str, RGB], ...], width: int) -> None:
        """Copy one line of coloured text segments into `panel`, rendering it only if not cached."""
        x = max(0, int(x))
        if x >= self.width:
            return
        width = max(1, min(int(width), self.width - x))
        h = min(self._panel_lh + 1, self.panel_h - y)
        if h <= 0:
            return
        key = (segs, width, h)
        row = self._rows.get(key)
        if row is None:
            font = self._panel_font
            img = Image.new("RGB", (width, h), _PANEL)
            d = ImageDraw.Draw(img)
            tx = 0.0
            for text, colour in segs:
                text = _fit(text, font, width - tx)
                if not text:
                    break
                d.text((tx, 0), text, fill=colour, font=font)
                tx += _text_width(font, text)
            row = np.asarray(img, dtype=np.uint8)
            if len(self._rows) >= 512:
                self._rows.clear()
            self._rows[key] = row
        panel[y:y + h, x:x + width] = row


def panel_height(height: int) -> int:
    """Rows of a frame of `height` rows that the text panel takes (a quarter, 40 to 100)."""
    return max(40, min(100, int(height) // 4))


def with_panel(picture: np.ndarray, overlay: dict, width: int, height: int, panel: TextPanel | None = None,
               ) -> np.ndarray:
    """A (height, width, 3) frame: `picture` (any size, e.g. a simulator's camera image) scaled into the rows
    above the text panel, the panel for `overlay` below, and the banner over the picture when the overlay has
    one. Pass the same `panel` (of this width and `panel_height(height)`) every frame to reuse its cache."""
    panel_h = panel_height(height)
    if panel is None or (panel.width, panel.panel_h) != (width, panel_h):
        panel = TextPanel(width, panel_h)
    top = height - panel_h
    image = np.asarray(picture, dtype=np.uint8)[..., :3]
    if image.shape[:2] != (top, width):
        image = np.asarray(Image.fromarray(np.ascontiguousarray(image)).resize((width, top), Image.BILINEAR))
    frame = np.empty((height, width, 3), dtype=np.uint8)
    frame[:top] = image
    frame[top:] = panel.render(overlay)
    banner = _as_text(overlay.get("banner"))
    if banner:
        panel.banner(frame, banner, top)
    return frame


# public names for the worlds' renderers
font, text_width, fit, fit_parts, wrap, as_text = _font, _text_width, _fit, _fit_parts, _wrap, _as_text
