"""AI2-THOR `event.metadata` -> facts of the household domain: the one adapter of both AI2-THOR executors.

Reads fields tolerantly: THOR versions disagree (`temperature` vs the schema's `ObjectTemperature`, `Bottle`
vs ALFWorld's `Glassbottle`, null vs empty lists), and a missing field silences its facts instead of
asserting them false. Per object: `objectType` -> entity type (`servicerobot.scenes.thor_types`);
`parentReceptacles` -> `on` / `inside` / `discarded` (the first parent that is a fixture); `isPickedUp` ->
`holding`; `isOpen` -> `closed`; `isToggled` -> `light-on` (a Faucet's -> `faucet-on` of its sink);
`isDirty` -> `dirty` (a bed's -> not `made`); `isBroken` -> `broken`; temperature `Cold` -> `cold`;
`isColdSource` -> `chills`; `visible` -> in view (or the executor's own view rule).
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, field
from typing import Any

from servicerobot.scenes.thor_types import DIRTYABLE, EXCLUDED, FIXTURES, ITEMS, canonical_type

__all__ = ["ThorNaming", "fact_set", "metadata_objects", "object_facts", "percept_from_metadata"]

_SURFACES = ("surface", "shelf", "bed")
_OPENABLE = ("openable", "fridge")


@dataclass
class ThorNaming:
    """How THOR objects are named in the household world.

    `entity`: objectId -> entity name; `kinds`: entity -> PDDL type; `room`: fixture -> room (static);
    `faucet_sink`: Faucet objectId -> the sink entity it runs into.
    """

    entity: dict[str, str]
    kinds: dict[str, str]
    room: dict[str, str] = field(default_factory=dict)
    faucet_sink: dict[str, str] = field(default_factory=dict)

    @classmethod
    def from_scene(cls, scene) -> ThorNaming:
        """The naming of a `ThorScene` (its entities' objectIds and faucets)."""
        entity = {o.object_id: name for name, o in scene.thor.items()}
        kinds = {name: scene.entities[name].pddl_type for name in scene.thor}
        room = {name: scene.entities[name].room for name in scene.thor if scene.entities[name].room}
        return cls(entity, kinds, room, {f: s for s, f in scene.faucets.items()})

    @classmethod
    def from_metadata(cls, metadata: Mapping) -> ThorNaming:
        """Default names for a live or recorded scene: `cabinet_1`, `apple_2`, ... in objectId order.

        Faucets run into the nearest sink basin.
        """
        entity, kinds, counts = {}, {}, {}
        objs = metadata_objects(metadata)
        for obj in sorted(objs, key=lambda o: str(o.get("objectId"))):
            t = canonical_type(str(obj.get("objectType", "")))
            spec = FIXTURES.get(t) or ITEMS.get(t)
            if spec is None:
                continue
            slug = spec.noun.replace("pair of ", "").replace(" ", "_")
            counts[slug] = counts.get(slug, 0) + 1
            name = f"{slug}_{counts[slug]}"
            entity[str(obj["objectId"])] = name
            kinds[name] = spec.pddl_type
        sinks = [o for o in objs if str(o.get("objectId")) in entity and
                 canonical_type(str(o.get("objectType"))) == "SinkBasin"]
        faucet_sink = {}
        for obj in objs:
            if obj.get("objectType") == "Faucet" and sinks:
                near = min(sinks, key=lambda s: _distance(s, obj))
                faucet_sink[str(obj["objectId"])] = entity[str(near["objectId"])]
        return cls(entity, kinds, {}, faucet_sink)


def _distance(a: Mapping, b: Mapping) -> float:
    pa, pb = a.get("position") or {}, b.get("position") or {}
    return sum((float(pa.get(k, 0.0)) - float(pb.get(k, 0.0))) ** 2 for k in ("x", "y", "z"))


def metadata_objects(metadata: Any) -> list[Mapping]:
    """The object list of an `event.metadata` (a dict or ai2thor's MetadataWrapper); [] when absent."""
    try:
        objs = metadata["objects"]
    except (KeyError, TypeError):
        objs = None
    return list(objs or [])


def _temperature(obj: Mapping) -> str | None:
    for key in ("temperature", "ObjectTemperature"):
        if obj.get(key) is not None:
            return str(obj[key])
    return None


def object_facts(obj: Mapping, naming: ThorNaming) -> list[list]:
    """Facts `[subject, predicate, object]` of one THOR object; [] when it is not a household entity."""
    object_id = str(obj.get("objectId", ""))
    name = naming.entity.get(object_id)
    if obj.get("objectType") == "Faucet" and object_id in naming.faucet_sink:
        return [[naming.faucet_sink[object_id], "faucet-on", True]] if obj.get("isToggled") else []
    if name is None:
        return []
    kind = naming.kinds[name]
    thor_type = canonical_type(str(obj.get("objectType", "")))
    facts: list[list] = []
    if name in naming.room:
        facts.append([name, "in-room", naming.room[name]])
    if thor_type in FIXTURES:
        if kind in _OPENABLE and obj.get("isOpen") is False:
            facts.append([name, "closed", True])
        if kind == "fridge" and obj.get("isColdSource", True):
            facts.append([name, "chills", True])
        if kind == "light" and obj.get("isToggled"):
            facts.append([name, "light-on", True])
        if kind == "bed" and obj.get("isDirty") is False:
            facts.append([name, "made", True])
        return facts
    if obj.get("isPickedUp"):
        facts.append(["robot", "holding", name])
    else:
        for parent in obj.get("parentReceptacles") or ():
            holder = naming.entity.get(str(parent))
            hkind = naming.kinds.get(holder or "")
            if hkind is None or hkind not in {f.pddl_type for f in FIXTURES.values()}:
                continue  # the floor, or an item holding it (an apple on a plate): look further out
            if hkind == "trashcan":
                facts.append([name, "discarded", True])
            else:
                facts.append([name, "on" if hkind in _SURFACES else "inside", holder])
            break
    if obj.get("isDirty") and thor_type in DIRTYABLE:
        facts.append([name, "dirty", True])
    if obj.get("isBroken"):
        facts.append([name, "broken", True])
    if _temperature(obj) == "Cold":
        facts.append([name, "cold", True])
    return facts


def percept_from_metadata(metadata: Any, naming: ThorNaming,
                          in_view: Callable[[Mapping], bool] | None = None) -> dict:
    """Entities in view with their facts: `{"entities": {name: type}, "facts": [...], "unmapped": [...]}`.

    `in_view` decides what is seen (default: THOR's `visible` flag). `unmapped` lists the object types
    that are neither household entities nor deliberately excluded: schema or version drift to look at.
    """
    in_view = in_view or (lambda o: bool(o.get("visible")))
    entities: dict[str, str] = {}
    facts: list[list] = []
    unmapped: set[str] = set()
    for obj in metadata_objects(metadata):
        t = canonical_type(str(obj.get("objectType", "")))
        if t not in FIXTURES and t not in ITEMS and t not in EXCLUDED:
            unmapped.add(t)
        if not in_view(obj):
            continue
        found = object_facts(obj, naming)
        name = naming.entity.get(str(obj.get("objectId", "")))
        if name is not None:
            entities[name] = naming.kinds[name]
        facts.extend(found)
    return {"entities": entities, "facts": facts, "unmapped": sorted(unmapped)}


def fact_set(facts: Iterable[list]) -> set[tuple]:
    """Facts as hashable tuples (for comparisons)."""
    return {tuple(f) for f in facts}
