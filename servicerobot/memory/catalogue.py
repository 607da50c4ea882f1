"""The entity catalogue: how people name an entity from its record (type, noun, colour, owner)."""

from __future__ import annotations

from collections.abc import Mapping

__all__ = ["entity_phrase", "room_names"]


def entity_phrase(info: Mapping) -> str:
    """How people name an entity from its catalogue record: "Ana's red mug", "fridge", "kitchen"."""
    noun = str(info.get("noun") or info.get("label") or info.get("type", "thing"))
    said = set(noun.lower().split())
    words = [str(info[k]) for k in ("mark", "colour") if info.get(k) and str(info[k]).lower() not in said]
    words.append(noun)  # "the green box", not "the green green box" where the noun says its colour
    phrase = " ".join(words)
    return f"{info['owner']}'s {phrase}" if info.get("owner") else phrase


def room_names(entities: Mapping[str, Mapping]) -> dict[str, str]:
    """A room's name or phrase -> the room's name: a fixture's `room` may be either ("dining_room", "dining
    room"); of two rooms said alike, the last, and a room's own name before another's phrase."""
    rooms = {name: info for name, info in entities.items() if info.get("type") == "room"}
    return {**{entity_phrase(info): name for name, info in rooms.items()}, **{name: name for name in rooms}}
