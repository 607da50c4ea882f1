"""Images of PDDLGym states: PDDLGym's own drawing where it has one and imports, else the literals as text."""

from __future__ import annotations

import importlib
from collections.abc import Iterable, Mapping

import numpy as np
from PIL import Image, ImageDraw

from servicerobot.pddl.atoms import Atom

__all__ = ["pddlgym_literals", "render_literals"]


def pddlgym_literals(atoms: Iterable[Atom], objects: Mapping[str, str]) -> list:
    """Our atoms as `pddlgym.structs.Literal`s over typed objects (pddlgym must import)."""
    from pddlgym.structs import Predicate, Type

    made: dict[tuple, object] = {}
    out = []
    for atom in atoms:
        types = tuple(objects.get(arg, "default") for arg in atom.args)
        pred = made.get((atom.predicate, types))
        if pred is None:
            pred = made[(atom.predicate, types)] = Predicate(atom.predicate, len(types), [Type(t) for t in types])
        out.append(pred(*[Type(t)(arg) for t, arg in zip(types, atom.args)]))
    return out


def _pddlgym_renderer(name: str | None):
    if name is None or name == "navigation_render":  # navigation's lambda also needs pddlgym's own env
        return None
    try:
        module = importlib.import_module("pddlgym.rendering")
    except Exception:  # noqa: BLE001 - pddlgym missing or broken beside our dependencies: draw text instead
        return None
    if not hasattr(Image, "ANTIALIAS"):
        # PDDLGym's sprite renderers resize with Image.ANTIALIAS, the alias of LANCZOS that Pillow 10 removed
        # (the reason for its pillow<10 pin); the same filter under its old name lets them draw.
        Image.ANTIALIAS = Image.LANCZOS
    return getattr(module, name, None)


def _text_image(literals: list[Atom], width: int = 480) -> np.ndarray:
    lines = [str(a) for a in literals] or ["(no true literals)"]
    height = max(64, 14 * len(lines) + 16)
    image = Image.new("RGB", (width, height), "white")
    draw = ImageDraw.Draw(image)
    for i, line in enumerate(lines):
        draw.text((8, 8 + 14 * i), line, fill="black")
    return np.asarray(image, dtype=np.uint8)


def render_literals(renderer: str | None, literals: list[Atom], objects: Mapping[str, str]) -> np.ndarray:
    """An RGB image (H, W, 3, uint8) of `literals`: PDDLGym's `renderer` function when available."""
    draw = _pddlgym_renderer(renderer)
    if draw is None:
        return _text_image(literals)
    frame = np.asarray(draw(pddlgym_literals(literals, objects)))
    if frame.ndim == 3 and frame.shape[2] == 4:
        frame = frame[:, :, :3]
    return np.ascontiguousarray(frame, dtype=np.uint8)
