"""The entity catalogue: how people name an entity from its record (type, noun, colour, owner)."""

from __future__ import annotations

from collections.abc import Mapping

__all__ = ["entity_phrase"]


def entity_phrase(info: Mapping) -> str:
    """How people name an entity from its catalogue record: "Ana's red mug", "fridge", "kitchen"."""
    words = [str(info[k]) for k in ("mark", "colour") if info.get(k)]
    words.append(str(info.get("noun") or info.get("label") or info.get("type", "thing")))
    phrase = " ".join(words)
    return f"{info['owner']}'s {phrase}" if info.get("owner") else phrase
