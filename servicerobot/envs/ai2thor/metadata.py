"""THOR-schema `event.metadata` dicts from a `ThorScene` and its true facts (the symbolic executor's output).

Every object record carries the fields THOR 5 emits (`temperature`) and the fields its published schema
still requires (`ObjectTemperature`, `obstructed`), so the dicts validate against that schema and read
like a live event's metadata.
"""

from __future__ import annotations

import zlib
from typing import Any

from servicerobot.envs.household.state import HouseholdState
from servicerobot.scenes.household import ROBOT
from servicerobot.scenes.ithor import ThorScene
from servicerobot.scenes.thor_types import BREAKABLE, DIRTYABLE, FIXTURES, canonical_type

__all__ = ["AGENT_HEIGHT", "object_record", "scene_metadata", "vec"]

AGENT_HEIGHT = 0.9009992  # THOR's default agent camera base height (as in recorded metadata)
_ITEM_SIZE = (0.15, 0.15, 0.15)


def vec(x: float, y: float, z: float) -> dict[str, float]:
    return {"x": float(x), "y": float(y), "z": float(z)}


def _box(centre: tuple[float, float, float], size: tuple[float, float, float]) -> dict[str, Any]:
    cx, cy, cz = centre
    sx, sy, sz = size
    corners = [[cx + dx * sx / 2, cy + dy * sy / 2, cz + dz * sz / 2]
               for dx in (1, -1) for dy in (1, -1) for dz in (1, -1)]
    return {"center": vec(*centre), "size": vec(*size), "cornerPoints": corners}


def object_record(name: str, scene: ThorScene, state: HouseholdState, visible: bool, agent_pos) -> dict:
    """One object of `event.metadata["objects"]` for entity `name` in the current true state."""
    obj = scene.thor[name]
    entity = scene.entities[name]
    thor_type = canonical_type(obj.object_type)
    fixture = obj.object_type in FIXTURES
    kind = entity.pddl_type
    atoms = state.atoms
    pos = obj.position
    parents = None
    if fixture:
        size = (FIXTURES[obj.object_type].size[0], 0.8, FIXTURES[obj.object_type].size[1])
        contents = [scene.thor[i].object_id for i in state.contents(name)]
        if kind == "trashcan":
            contents += sorted(scene.thor[a.args[0]].object_id for a in atoms
                               if a.predicate == "discarded" and a.args[0] in scene.thor)
        receptacle_ids = contents if kind != "light" else None
    else:
        size, receptacle_ids = _ITEM_SIZE, None
        loc = state.location(name)
        if loc is not None and loc.predicate in ("on", "inside"):
            parents = [scene.thor[loc.args[1]].object_id]
            k = int(name.rsplit("_", 1)[1]) if name.rsplit("_", 1)[-1].isdigit() else 1
            hx, hy, hz = scene.thor[loc.args[1]].position
            pos = (round(hx + 0.06 * k, 2), round(hy + 0.1, 2), round(hz - 0.04 * k, 2))
        elif loc is not None and loc.predicate == "discarded":
            cans = [n for n, o in scene.thor.items() if scene.entities[n].pddl_type == "trashcan"]
            parents = [scene.thor[cans[0]].object_id] if cans else None
            if cans:
                pos = scene.thor[cans[0]].position
        elif loc is not None and loc.predicate == "holding":
            pos = (agent_pos[0], AGENT_HEIGHT + 0.5, agent_pos[2])
    flags = {a.predicate for a in state.about(name) if len(a.args) == 1}
    closed = "closed" in flags
    dirty = "dirty" in flags if kind != "bed" else "made" not in flags
    held = any(a.predicate == "holding" and a.args[1] == name for a in state.by_arg[name])
    return {
        "name": f"{obj.object_type}_{zlib.crc32(obj.object_id.encode()):08x}",
        "objectId": obj.object_id,
        "objectType": obj.object_type,
        "assetId": "",
        "position": vec(*pos),
        "rotation": vec(0.0, 0.0, 0.0),
        "visible": bool(visible),
        "obstructed": False,
        "isInteractable": bool(visible),
        "receptacle": fixture and kind != "light",
        "receptacleObjectIds": receptacle_ids,
        "parentReceptacles": parents,
        "toggleable": kind == "light",
        "isToggled": "light-on" in flags,
        "breakable": thor_type in BREAKABLE,
        "isBroken": "broken" in flags,
        "canFillWithLiquid": False, "fillLiquid": None, "isFilledWithLiquid": False,
        "dirtyable": thor_type in DIRTYABLE,
        "isDirty": bool(dirty) and thor_type in DIRTYABLE,
        "canBeUsedUp": False, "isUsedUp": False,
        "cookable": False, "isCooked": False,
        "temperature": "Cold" if "cold" in flags else "RoomTemp",
        "ObjectTemperature": "Cold" if "cold" in flags else "RoomTemp",
        "isHeatSource": False,
        "isColdSource": kind == "fridge",
        "sliceable": False, "isSliced": False,
        "openable": kind in ("openable", "fridge"),
        "isOpen": kind in ("openable", "fridge") and not closed,
        "openness": 1.0 if kind in ("openable", "fridge") and not closed else 0.0,
        "pickupable": not fixture,
        "isPickedUp": held,
        "moveable": False,
        "isMoving": False,
        "mass": 0.0 if fixture else 0.5,
        "salientMaterials": None,
        "distance": float(((pos[0] - agent_pos[0]) ** 2 + (pos[2] - agent_pos[2]) ** 2) ** 0.5),
        "axisAlignedBoundingBox": _box(pos, size),
        "objectOrientedBoundingBox": None,
        "controlledObjects": None,
    }


def _faucet_record(sink: str, faucet_id: str, scene: ThorScene, state: HouseholdState, visible: bool,
                   agent_pos) -> dict:
    record = object_record(sink, scene, state, visible, agent_pos)
    _, x, y, z = faucet_id.split("|")
    on = any(a.predicate == "faucet-on" for a in state.about(sink))
    record.update({"name": f"Faucet_{sink}", "objectId": faucet_id, "objectType": "Faucet",
                   "position": vec(float(x), float(y), float(z)), "receptacle": False,
                   "receptacleObjectIds": None, "toggleable": True, "isToggled": on, "dirtyable": False,
                   "isDirty": False, "axisAlignedBoundingBox": _box((float(x), float(y), float(z)),
                                                                      (0.1, 0.3, 0.1))})
    return record


def scene_metadata(scene: ThorScene, state: HouseholdState, agent: dict, visible: set[str], last_action: str,
                   success: bool, error: str, width: int, height: int, only_visible: bool = False,
                   cache: dict | None = None) -> dict:
    """The `event.metadata` of the symbolic executor: the objects, the agent, the last action.

    `only_visible` keeps the objects in view (what a percept reads); `cache` reuses the record of an
    object whose facts, visibility and (for held objects) agent position did not change.
    """
    ax, az = agent["position"]["x"], agent["position"]["z"]
    agent_pos = (ax, AGENT_HEIGHT, az)
    cache = {} if cache is None else cache
    discarded = frozenset(a for a in state.atoms if a.predicate == "discarded")
    objects = []
    for n in scene.thor:
        seen = n in visible
        if only_visible and not seen:
            continue
        facts = frozenset(state.by_arg[n])
        held = scene.entities[n].pos is None and any(a.predicate == "holding" for a in facts)
        key = (facts, seen, agent_pos if held else None,
               discarded if scene.entities[n].pddl_type == "trashcan" else None)
        hit = cache.get(n)
        if hit is None or hit[0] != key:
            hit = cache[n] = (key, object_record(n, scene, state, seen, agent_pos))
        record = hit[1]
        pos = record["position"]
        record["distance"] = float(((pos["x"] - ax) ** 2 + (pos["z"] - az) ** 2) ** 0.5)
        objects.append(record)
    objects += [_faucet_record(s, f, scene, state, s in visible, agent_pos) for s, f in scene.faucets.items()
                if not only_visible or s in visible]
    held = state.held_by(ROBOT)
    inventory = [{"objectId": scene.thor[i].object_id, "objectType": scene.thor[i].object_type}
                 for i in held if i in scene.thor]
    xs, zs = scene.reachable[:, 0], scene.reachable[:, 1]
    lo, hi = (float(xs.min()) - 1.0, float(zs.min()) - 1.0), (float(xs.max()) + 1.0, float(zs.max()) + 1.0)
    centre = ((lo[0] + hi[0]) / 2, 1.5, (lo[1] + hi[1]) / 2)
    pose = {"position": vec(ax, AGENT_HEIGHT + 0.5, az), "rotation": vec(0, agent["rotation"]["y"], 0)}
    return {
        "objects": objects,
        "agent": agent,
        "agentId": 0,
        "heldObjectPose": dict(pose, localPosition=vec(0.0, -0.16, 0.38), localRotation=vec(0, 0, 0)),
        "inventoryObjects": inventory,
        "isSceneAtRest": True,
        "fov": 90.0,
        "cameraPosition": vec(ax, AGENT_HEIGHT + 0.675, az),
        "cameraOrthSize": 0.0,
        "thirdPartyCameras": [],
        "collided": False,
        "collidedObjects": [],
        "sceneName": scene.floorplan,
        "lastAction": last_action,
        "errorMessage": error,
        "errorCode": None,
        "lastActionSuccess": success,
        "screenWidth": int(width),
        "screenHeight": int(height),
        "colors": None,
        "colorBounds": None,
        "flatSurfacesOnGrid": [], "distances": [], "normals": [], "isOpenableGrid": [],
        "segmentedObjectIds": [], "objectIdsInBox": [],
        "actionIntReturn": 0, "actionFloatReturn": 0.0, "actionStringsReturn": [], "actionFloatsReturn": [],
        "actionVector3sReturn": [], "visibleRange": None, "actionReturn": None,
        "currentTime": 0.0,
        "sceneBounds": _box(centre, (hi[0] - lo[0], 3.0, hi[1] - lo[1])),
    }
