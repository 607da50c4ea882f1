"""Gibson 3D scene graphs (Armeni et al. 3DSG): generate seeded Gibson-like buildings, load a building from its
files, and turn a graph into a `HouseholdScene` so the household world runs on it.

The graph itself (`SceneGraph3D`, `Room3D`, `Object3D`, support and adjacency, placing objects) is in
`servicerobot.scenes.graph3d`; reading and writing Stanford's `.npz` and Context Matters' `.json` in
`servicerobot.scenes.gibson_files`; what real files hold (room-less, unlabelled, unknown objects, floors,
stairs) in `servicerobot.scenes.real_3dsg`. This module re-exports their public names.

Coordinates are Gibson's: metres, z up; `location` is a box centre and `size` its extent along x, y, z.
"""

from __future__ import annotations

import json
import math
import re
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

import numpy as np

from servicerobot.errors import SceneError
from servicerobot.limits import excerpt, read_text_bounded, shorten
from servicerobot.pddl import Atom
from servicerobot.scenes.gibson_classes import (
    CLASS_TO_TYPE,
    EXCLUDED,
    FIXTURE_TYPES,
    GENERATED_CLASSES,
    ITEM_TYPES,
    PERISHABLE,
    RECEPTACLE_ITEMS,
    ROOM_CATEGORIES,
    class_key,
    class_type,
)
from servicerobot.scenes.gibson_files import (
    MAX_JSON_BYTES,
    _int,
    _keys,
    _read_npz_output,
    save_json,
    save_npz,
)
from servicerobot.scenes.graph3d import (
    _SURFACE_TYPES,
    ROOM_HEIGHT,
    SINK_DEPTH,
    Object3D,
    Room3D,
    SceneGraph3D,
    _place_furniture,
    _turned,
    adjacent_rooms,
    place_spot,
    support_of,
)
from servicerobot.scenes.household import ROBOT, Entity, HouseholdScene, Room
from servicerobot.scenes.real_3dsg import _floors, graph_from_records, load_scene, prior_chars, stair_links
from servicerobot.scenes.source import SceneSource
from servicerobot.scenes.vocabulary import COLOURS, MARKS, PEOPLE_NAMES

__all__ = [
    "CLASS_TO_TYPE",
    "EXCLUDED",
    "MAX_GENERATED_ROOMS",
    "MAX_OBJECTS_PER_ROOM",
    "SINK_DEPTH",
    "GibsonScene",
    "GibsonScenes",
    "Object3D",
    "Room3D",
    "SceneGraph3D",
    "adjacent_rooms",
    "class_type",
    "generate_3dsg",
    "load_3dsg",
    "load_building",
    "place_spot",
    "save_json",
    "save_npz",
    "support_of",
    "to_household_scene",
]

MAX_GENERATED_ROOMS = 12
MAX_OBJECTS_PER_ROOM = 20


# ---------------------------------------------------------------------------------------------- generator
_BASE_ROOMS = ("kitchen", "living_room", "bedroom", "bathroom")
_EXTRA_ROOMS = ("bedroom", "dining_room", "home_office", "corridor", "utility_room", "bathroom", "childs_room",
                "storage_room", "television_room", "bedroom")
_SCENE_NAMES = ("Allenwood", "Beechcroft", "Cedarvale", "Dunmore", "Elmhurst", "Fairbourne", "Glenrock",
                "Hollister", "Ivydale", "Juniper", "Kestrel", "Larchmont", "Maplewood", "Northfield")


def generate_3dsg(rng: np.random.Generator, n_rooms: int | None = None, name: str | None = None) -> SceneGraph3D:
    """A seeded Gibson-like building: rooms of realistic categories and sizes on a grid (every neighbour
    shares a wall with a doorway in its middle), furniture along the walls, small objects on or in it."""
    if n_rooms is None:
        n_rooms = int(rng.integers(4, 9))
    if not 2 <= n_rooms <= MAX_GENERATED_ROOMS:
        raise SceneError(f"n_rooms must be in [2, {MAX_GENERATED_ROOMS}], got {n_rooms}")
    if name is None:
        name = f"{_SCENE_NAMES[int(rng.integers(len(_SCENE_NAMES)))]}{int(rng.integers(1000)):03d}"
    categories = list(_BASE_ROOMS[:n_rooms])
    extras = list(_EXTRA_ROOMS)
    while len(categories) < n_rooms:
        categories.append(extras.pop(int(rng.integers(len(extras)))) if extras else "bedroom")
    cols = math.ceil(math.sqrt(n_rooms))
    rows = math.ceil(n_rooms / cols)
    widths = rng.uniform(3.2, 6.0, size=cols).round(2)
    depths = rng.uniform(3.2, 5.2, size=rows).round(2)
    cells = [(i % cols, i // cols) for i in range(n_rooms)]
    # Big categories take big cells.
    by_area = sorted(range(n_rooms), key=lambda i: -widths[cells[i][0]] * depths[cells[i][1]])
    by_need = sorted(range(n_rooms), key=lambda i: -sum(ROOM_CATEGORIES[categories[i]].area))
    cell_of = {by_need[k]: cells[by_area[k]] for k in range(n_rooms)}
    xs, ys = np.concatenate([[0], np.cumsum(widths)]), np.concatenate([[0], np.cumsum(depths)])
    sg = SceneGraph3D(name)
    for i, category in enumerate(categories):
        cx, cy = cell_of[i]
        w, d = float(widths[cx]), float(depths[cy])
        sg.rooms[i + 1] = Room3D(i + 1, category, "", (round(xs[cx] + w / 2, 3), round(ys[cy] + d / 2, 3),
                                                       ROOM_HEIGHT / 2), (w, d, ROOM_HEIGHT))
    next_id = 1
    for room in sg.rooms.values():
        wanted = [c for c, p in ROOM_CATEGORIES[room.category].furniture if rng.random() < p]
        furniture = _place_furniture(room, wanted, rng, next_id)
        next_id += len(furniture)
        for f in furniture:
            sg.objects[f.id] = f
        count = len(furniture)
        for f in furniture:
            relation, classes = RECEPTACLE_ITEMS.get(f"{room.category}/{f.class_}",
                                                     RECEPTACLE_ITEMS.get(f.class_, ("", ())))
            if not classes:
                continue
            for _ in range(int(rng.integers(0, 4 if relation == "on" else 3))):
                if count >= MAX_OBJECTS_PER_ROOM:
                    break
                class_ = classes[int(rng.integers(len(classes)))]
                info = GENERATED_CLASSES[class_]
                material = (info.materials[int(rng.integers(len(info.materials)))],)
                colour = COLOURS[int(rng.integers(len(COLOURS)))]
                noun = class_.replace("_", " ")
                size = _turned(info.size, f)
                obj = Object3D(next_id, class_, "", room.id, (0.0, 0.0, 0.0), size, info.affordance,
                               material, f"a {colour} {noun} made of {material[0]}")
                sg.objects[next_id] = replace(obj, location=place_spot(f, size, relation, rng))
                next_id += 1
                count += 1
    return sg


def _from_records(name: str, rooms: dict, objects: dict, where: str, room_key: str, class_key_: str,
                  similarity=None) -> SceneGraph3D:
    """The graph of a file's room and object records, read as real files hold them (room-less and unlabelled
    objects, floors, unknown classes): see `servicerobot.scenes.real_3dsg`; `sg.report` says what was done."""
    return graph_from_records(name, rooms, objects, where, room_key, class_key_, similarity)


def load_3dsg(path: str | Path, similarity=None) -> SceneGraph3D:
    """Load a Stanford 3DSG `.npz` or a Context Matters scene `.json`; a bad file raises `SceneError`.

    Real files are taken as they are (`servicerobot.scenes.real_3dsg`): `sg.report` says what was done with
    room-less, unlabelled and unknown objects; `similarity` (any `matrix(queries, candidates)`, e.g.
    `EmbeddingSimilarity()`) types classes the words do not decide (default: word/character similarity)."""
    path = Path(path)
    if not path.exists():
        raise SceneError(f"{path}: no such scene-graph file")
    stem = path.stem.removeprefix("3DSceneGraph_")
    if path.suffix == ".npz":
        data = _read_npz_output(path)
        for key in ("room", "object"):
            if key not in data:
                raise SceneError(f"{path}: 'output' lacks the {key!r} dict (keys: {_keys(data)})")
        building = data.get("building") if isinstance(data.get("building"), dict) else {}
        return _from_records(str(building.get("name") or stem), data["room"], data["object"], str(path),
                             "scene_category", "class_", similarity)
    if path.suffix == ".json":
        text = read_text_bounded(path, MAX_JSON_BYTES, "Context Matters scene .json", SceneError)
        try:
            data = json.loads(text)
        except json.JSONDecodeError as error:
            raise SceneError(f"{path}: not valid JSON ({shorten(str(error))})") from error
        except RecursionError:
            raise SceneError(f"{path}: nested too deeply for a scene graph") from None
        if not isinstance(data, dict) or "rooms" not in data or "objects" not in data:
            keys = _keys(data) if isinstance(data, dict) else type(data).__name__
            raise SceneError(f"{path}: not a Context Matters scene (needs 'rooms' and 'objects'; has {keys})")
        info = data.get("scene_info") if isinstance(data.get("scene_info"), dict) else {}
        sg = _from_records(str(info.get("name") or stem), data["rooms"], data["objects"], str(path),
                           "category", "class", similarity)
        placed = {p["object"] for p in sg.report.placed} if sg.report is not None else set()
        refused = {str(r["object"]) for r in sg.report.refused} if sg.report is not None else set()
        for rid, rec in data["rooms"].items():
            listed = rec.get("objects_in_room") if isinstance(rec, dict) else None
            if listed is not None and [i for i in _ids(listed, f"{path}: room {excerpt(rid, 40)} objects_in_room")
                                       if str(i) not in refused] != [
                    o.id for o in sg.objects_in(int(rid)) if o.id not in placed]:
                raise SceneError(f"{path}: room {rid} lists objects_in_room {excerpt(listed)} but the objects "
                                 f"naming it as parent are {[o.id for o in sg.objects_in(int(rid))]}")
        return sg
    raise SceneError(f"{path}: unknown scene-graph format {excerpt(path.suffix)}; use a 3DSG .npz or a CM .json")


def _ids(listed: Any, where: str) -> list[int]:
    if not isinstance(listed, list):
        raise SceneError(f"{where} must be a list of object ids, got {excerpt(listed)}")
    return sorted(_int(i, where) for i in listed)


# ---------------------------------------------------------------------------------------------- household
@dataclass
class GibsonScene(HouseholdScene):
    """A household scene made from a 3D scene graph; `node_of` maps PDDL names to ("room"|"object", id)."""

    source_graph: SceneGraph3D | None = None
    node_of: dict[str, tuple[str, int]] = field(default_factory=dict)


def _pddl_name(label: str) -> str:
    name = re.sub(r"[^a-z0-9_-]+", "_", label.strip().lower()).strip("_-") or "thing"
    return name if name[0].isalpha() else f"n{name}"


_OWNABLE = frozenset({"cup", "mug", "book", "notebook", "laptop", "cell_phone", "shirt", "sweater", "sock",
                      "teddy_bear", "toothbrush"})


def to_household_scene(sg: SceneGraph3D, rng: np.random.Generator, n_people: int = 4,
                       connectivity: str = "auto", init_room: str | None = None) -> GibsonScene:
    """The household scene of a 3DSG: rooms, mapped objects (3DSG labels as names), people and the robot.

    connectivity: "adjacency" (rooms that share a wall), "full" (every pair on a floor, as Context Matters), or
    "auto" (adjacency when it connects every room, else full). Floors connect only by stairs
    (`real_3dsg.stair_links`), whatever the connectivity. Items rest on/in the receptacle their box says
    (`support_of`), else on the nearest fitting receptacle of their room (of the house if the room has none).
    State words in a class name become facts (`dirty_shirt` is dirty), and rubbish (`cola_can`) is marked
    `discardable` (`servicerobot.scenes.open_vocab.type_class`).
    """
    if connectivity not in ("auto", "adjacency", "full"):
        raise SceneError(f"connectivity must be 'auto', 'adjacency' or 'full', got {connectivity!r}")
    if not 1 <= n_people <= len(PEOPLE_NAMES):
        raise SceneError(f"n_people must be in [1, {len(PEOPLE_NAMES)}], got {n_people}")
    sg.validate()
    people = [PEOPLE_NAMES[int(i)] for i in rng.choice(len(PEOPLE_NAMES), size=n_people, replace=False)]
    taken = {ROBOT} | {p.lower() for p in people}
    node_of: dict[str, tuple[str, int]] = {}

    def unique(label: str) -> str:
        base = name = _pddl_name(label)
        k = 2
        while name in taken:
            name, k = f"{base}_{k}", k + 1
        taken.add(name)
        return name

    # Rooms.
    room_name: dict[int, str] = {}
    ordered = sorted(sg.rooms.values(), key=lambda r: r.id)
    per_category: dict[str, int] = {}
    for r in ordered:
        per_category[r.category] = per_category.get(r.category, 0) + 1
    seen: dict[str, int] = {}
    bedrooms = [r.id for r in ordered if class_key(r.category) in ("bedroom", "childs_room")]
    owner_of = {rid: people[k] for k, rid in enumerate(bedrooms[:len(people)])}
    rooms, entities = [], {}
    floors = {r.floor for r in ordered}
    shift = _floor_shifts(sg)  # floors side by side in the 2D layout, so a frame does not overlay them
    for i, r in enumerate(ordered):
        name = room_name[r.id] = unique(r.label)
        node_of[name] = ("room", r.id)
        kind = r.category.replace("_", " ")
        seen[kind] = seen.get(kind, 0) + 1
        if r.id in owner_of:
            label = f"{owner_of[r.id]}'s {kind}"
        else:
            label = kind if per_category[r.category] == 1 else f"{kind} {seen[kind]}"
        x, y = r.location[0] - r.size[0] / 2 + shift[r.floor], r.location[1] - r.size[1] / 2
        rooms.append(Room(name, kind, label, (round(x, 3), round(y, 3), r.size[0], r.size[1]), (i, 0)))
        entities[name] = Entity(name, "room", label, {"floor": r.floor} if len(floors) > 1 else {})
    label_of = {room.name: room.label for room in rooms}

    # Doors within a floor, stairs between floors.
    stairs = [(link["a"], link["b"]) for link in stair_links(sg)]
    pairs = adjacent_rooms(sg) + stairs
    if connectivity == "full" or (connectivity == "auto" and not _connected(list(sg.rooms), pairs)):
        pairs = [(a.id, b.id) for i, a in enumerate(ordered) for b in ordered[i + 1:] if a.floor == b.floor] + stairs
    elif connectivity == "adjacency" and not _connected(list(sg.rooms), pairs):
        raise SceneError(f"{sg.name}: rooms that share walls do not connect every room; use connectivity='full'")
    doors = [(room_name[a], room_name[b]) for a, b in pairs]
    facts: set[Atom] = set()
    for a, b in doors:
        facts |= {Atom("connected", (a, b)), Atom("connected", (b, a))}

    # Fixtures.
    fixture_of: dict[int, str] = {}
    for obj in sorted(sg.objects.values(), key=lambda o: o.id):
        kind = sg.typing(obj.class_).pddl_type
        if kind not in FIXTURE_TYPES:
            continue
        name = fixture_of[obj.id] = unique(obj.label)
        node_of[name] = ("object", obj.id)
        room = room_name[obj.parent_room]
        attrs: dict[str, Any] = {"category": kind, "room": label_of[room]}
        if obj.material:
            attrs["material"] = obj.material[0]
        if obj.parent_room in owner_of:
            attrs["owner"] = owner_of[obj.parent_room]
        entities[name] = Entity(name, kind, class_key(obj.class_).replace("_", " "), attrs, room=room,
                                pos=(obj.location[0] + shift[sg.rooms[obj.parent_room].floor], obj.location[1]))
        facts.add(Atom("in-room", (name, room)))
        if kind in ("openable", "fridge", "washer", "dryer") and rng.random() < 0.85:
            facts.add(Atom("closed", (name,)))
        if kind == "fridge":
            facts.add(Atom("chills", (name,)))
        if kind == "light" and rng.random() < 0.3:
            facts.add(Atom("light-on", (name,)))
        if kind == "bed" and rng.random() < 0.7:
            facts.add(Atom("made", (name,)))
    receptacles = [oid for oid in fixture_of if entities[fixture_of[oid]].pddl_type not in ("light", "trashcan")]
    if not receptacles and any(sg.typing(o.class_).pddl_type in ITEM_TYPES for o in sg.objects.values()):
        raise SceneError(f"{sg.name}: objects need a surface or container to rest on, and the scene has none")

    # Items.
    descriptions: set[str] = set()
    for obj in sorted(sg.objects.values(), key=lambda o: o.id):
        kind = sg.typing(obj.class_).pddl_type
        if kind not in ITEM_TYPES:
            continue
        name = unique(obj.label)
        node_of[name] = ("object", obj.id)
        home = _home(sg, obj, fixture_of, receptacles, entities)
        home_type = entities[home].pddl_type
        facts.add(Atom("on" if home_type in _SURFACE_TYPES else "inside", (name, home)))
        key = class_key(obj.class_)
        attrs = {"category": kind}
        if obj.material:
            attrs["material"] = obj.material[0]
        words = set(re.findall(r"[a-z]+", obj.description.lower()))
        colours = [c for c in COLOURS if c in words]
        if colours:
            attrs["colour"] = colours[0]
        noun = key.replace("_", " ")
        for attempt in range(8):
            if key in _OWNABLE and attempt == 0 and rng.random() < 0.5:
                attrs["owner"] = people[int(rng.integers(len(people)))]
            if attempt >= 1:
                attrs.pop("owner", None) if attempt >= 2 else None
                attrs["mark"] = MARKS[int(rng.integers(len(MARKS)))]
            desc = Entity(name, kind, noun, dict(attrs)).describe()
            if desc not in descriptions:
                break
        descriptions.add(desc)
        if key in PERISHABLE:
            attrs["perishable"] = True
            if home_type == "fridge":
                facts.add(Atom("cold", (name,)))
        if kind == "dish" and (home_type == "sink" or rng.random() < 0.15):
            facts.add(Atom("dirty", (name,)))
        if kind == "clothing" and (home_type == "container" or rng.random() < 0.1):
            facts.add(Atom("dirty", (name,)))
        typing = sg.typing(obj.class_)
        for state in typing.states:  # "dirty_shirt": the class says it
            facts.add(Atom(state, (name,)))
        if typing.discardable:
            attrs["discardable"] = True
        entities[name] = Entity(name, kind, noun, attrs)

    # People and the robot.
    for person in people:
        pid = person.lower()
        entities[pid] = Entity(pid, "person", person, {"name": person})
        facts.add(Atom("in-room", (pid, rooms[int(rng.integers(len(rooms)))].name)))
    start = rooms[0].name
    if init_room is not None:
        start = room_name[sg.room_by_label(init_room).id]
    entities[ROBOT] = Entity(ROBOT, "robot", "robot")
    facts |= {Atom("in-room", (ROBOT, start)), Atom("hand-empty", (ROBOT,))}
    return GibsonScene(rooms, entities, doors, frozenset(facts), (len(rooms), 1), source_graph=sg,
                       node_of=node_of)


def _floor_shifts(sg: SceneGraph3D, margin: float = 2.0) -> dict[str, float]:
    """How far along x each floor is drawn from its true place: 0 for the lowest, then each next floor one
    building width plus `margin` further (a one-floor building is not moved)."""
    order = _floors(sg)
    if len(order) < 2:
        return dict.fromkeys(order, 0.0)
    lo = min(r.location[0] - r.size[0] / 2 for r in sg.rooms.values())
    hi = max(r.location[0] + r.size[0] / 2 for r in sg.rooms.values())
    return {floor: k * (hi - lo + margin) for k, floor in enumerate(order)}


def _connected(nodes: list[int], pairs: list[tuple[int, int]]) -> bool:
    if len(nodes) <= 1:
        return True
    adj: dict[int, set[int]] = {n: set() for n in nodes}
    for a, b in pairs:
        adj[a].add(b)
        adj[b].add(a)
    seen, todo = {nodes[0]}, [nodes[0]]
    while todo:
        for m in adj[todo.pop()] - seen:
            seen.add(m)
            todo.append(m)
    return len(seen) == len(nodes)


def _home(sg: SceneGraph3D, obj: Object3D, fixture_of: dict[int, str], receptacles: list[int],
          entities: dict[str, Entity]) -> str:
    """The fixture an item rests on or in: its box's support, else the nearest receptacle (room first)."""
    support = support_of(sg, obj)
    if support is not None and support[1] in receptacles:
        return fixture_of[support[1]]
    here = [oid for oid in receptacles if sg.objects[oid].parent_room == obj.parent_room] or receptacles
    centre = np.asarray(obj.location)
    best = min(here, key=lambda oid: (float(np.linalg.norm(np.asarray(sg.objects[oid].location) - centre)), oid))
    return fixture_of[best]


# ---------------------------------------------------------------------------------------------- source
def load_building(path: str | Path, similarity=None) -> SceneGraph3D:
    """A building from a 3DSG `.npz`, a Context Matters `.json`, or a folder holding them (a CM instance
    folder: its `.npz` with the `.json` of the same name, else its one scene `.json`)."""
    path = Path(path)
    if not path.is_dir():
        return load_3dsg(path, similarity)
    npz = sorted(path.glob("*.npz"))
    if len(npz) > 1:
        raise SceneError(f"{path}: holds {len(npz)} .npz files; a building folder holds one")
    if npz:
        twin = npz[0].with_suffix(".json")
        return load_scene([npz[0], twin] if twin.exists() else [npz[0]], similarity)
    scenes = [p for p in sorted(path.glob("*.json")) if p.name != "acceptable_goals.json"]
    if len(scenes) != 1:
        raise SceneError(f"{path}: a building folder needs one .npz or one scene .json, found "
                         f"{[p.name for p in scenes] or 'neither'}")
    return load_3dsg(scenes[0], similarity)


class GibsonScenes(SceneSource):
    """3D scene graphs as household scenes: loaded files (one drawn per episode) or freshly generated ones.

    `scene_graph`: None (generate), a path, a `SceneGraph3D`, or a list of those. A path may be a folder
    holding one building's files, as a Context Matters instance folder does (`<Scene>.npz` and
    `<Scene>.json`: read together by `real_3dsg.load_scene`).
    """

    name = "gibson"

    def __init__(self, scene_graph: Any = None, n_people: int = 4, n_rooms: int | None = None,
                 connectivity: str = "auto"):
        if not 1 <= n_people <= len(PEOPLE_NAMES):
            raise SceneError(f"n_people must be in [1, {len(PEOPLE_NAMES)}], got {n_people}")
        self.n_people, self.connectivity, self.rooms_wanted = n_people, connectivity, n_rooms
        if scene_graph is None:
            self.graphs: list[SceneGraph3D] = []
            if n_rooms is not None and not 2 <= n_rooms <= MAX_GENERATED_ROOMS:
                raise SceneError(f"n_rooms must be in [2, {MAX_GENERATED_ROOMS}], got {n_rooms}")
            self.n_rooms = n_rooms or 8
            self.max_entities = self.n_rooms * (1 + MAX_OBJECTS_PER_ROOM) + n_people + 1
            self.max_prior_chars = None  # the env's per-entity bound covers generated buildings
            return
        items = scene_graph if isinstance(scene_graph, (list, tuple)) else [scene_graph]
        if not items:
            raise SceneError("scene_graph is an empty list; give at least one 3DSG file or graph")
        self.graphs = [g if isinstance(g, SceneGraph3D) else load_building(g) for g in items]
        self.n_rooms = max(len(g.rooms) for g in self.graphs)
        self.max_entities = max(len(g.rooms) + sum(g.typing(o.class_).typed for o in g.objects.values())
                                for g in self.graphs) + n_people + 1
        self.max_prior_chars = self._prior_bound()

    def _prior_bound(self) -> int:
        """Characters the `prior` observation can take on these buildings: the largest of three draws per
        building (people, owners and random states vary), plus 15 % and 4 KiB of headroom."""
        most = max(prior_chars(to_household_scene(g.copy(), np.random.default_rng(seed), self.n_people,
                                                  self.connectivity))
                   for g in self.graphs for seed in range(3))
        return int(most * 1.15) + 4096

    def graph(self, rng: np.random.Generator) -> SceneGraph3D:
        """The 3DSG of a new episode."""
        if not self.graphs:
            return generate_3dsg(rng, self.rooms_wanted)
        return self.graphs[int(rng.integers(len(self.graphs)))].copy()

    def generate(self, rng: np.random.Generator) -> GibsonScene:
        return to_household_scene(self.graph(rng), rng, self.n_people, self.connectivity)
