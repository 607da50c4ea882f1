"""iTHOR FloorPlans as household scenes, read from the `alfworld` wheel's layout data (no simulator needed).

For each of the 120 FloorPlans ALFWorld ships the object types present (`FloorPlanN-objects.json`), every
receptacle's THOR objectId with the pose to interact from (`-openable.json`) and the reachable positions
grid (`-layout.npy`); `alfworld/gen/constants.py` holds THOR's receptacle -> object table. A FloorPlan
becomes a `ThorScene`: its room split into one or two regions (rooms of the household domain), receptacles
as fixtures with their objectIds and poses, and pickupable objects placed into compatible receptacles, one
to three instances per type as THOR's random spawn does. Only `constants.py` is parsed (with `ast`), so
ALFWorld's heavy dependencies are never imported.
"""

from __future__ import annotations

import ast
import functools
import importlib.util
import json
import zlib
from dataclasses import dataclass, field
from pathlib import Path
from typing import ClassVar

import numpy as np

from servicerobot.errors import DependencyNotInstalled, SceneError
from servicerobot.pddl import Atom
from servicerobot.scenes.household import ROBOT, Entity, HouseholdScene, Room
from servicerobot.scenes.source import SceneSource
from servicerobot.scenes.thor_types import (
    BREAKABLE,
    DIRTYABLE,
    EXCLUDED,
    FIXTURES,
    ITEMS,
    canonical_type,
)
from servicerobot.scenes.vocabulary import COLOURS, MARKS, PEOPLE_NAMES

__all__ = [
    "FLOORPLANS",
    "HOSTED_TASK_KINDS",
    "IthorScenes",
    "ThorObject",
    "ThorScene",
    "floorplan_kind",
    "hosts",
    "load_floorplan",
    "thor_tables",
]

ROOM_KINDS = {"kitchen": range(1, 31), "living room": range(201, 231), "bedroom": range(301, 331),
              "bathroom": range(401, 431)}
FLOORPLANS: tuple[str, ...] = tuple(f"FloorPlan{n}" for r in ROOM_KINDS.values() for n in r)
# The household task kinds an iTHOR FloorPlan can host (no people model in THOR, no washer or dryer).
HOSTED_TASK_KINDS: tuple[str, ...] = ("pick_place", "wash_dishes", "make_bed", "discard_broken", "keep_cold",
                                      "lights_off", "organise_shelf")
_ORDINALS = ("first", "second", "third", "fourth", "fifth", "sixth", "seventh", "eighth", "ninth", "tenth",
             "eleventh", "twelfth", "thirteenth", "fourteenth", "fifteenth", "sixteenth", "seventeenth",
             "eighteenth", "nineteenth", "twentieth")
_SPLIT_MIN_POINTS = 60  # a reachable grid this large (>= 3.75 m^2) is split into two regions
_MISSING = ('install its data without its heavy dependencies: pip install --no-deps "alfworld>=0.4.2" (the '
            'extra pip install -e ".[ai2thor]" also pulls textworld[pddl], which builds Fast Downward from source)')


class AlfworldMissing(SceneError, DependencyNotInstalled):
    """alfworld, whose data files hold the iTHOR FloorPlans, is not installed (a scene error and a missing
    optional dependency, so code that skips on either skips on it)."""


@dataclass(frozen=True)
class ThorObject:
    """A THOR object behind a household entity.

    `pose` is (x, z, rotation, horizon) to interact from (ALFWorld's precomputed pose, None when unknown).
    `synthesized` marks objectIds and positions made up here because ALFWorld's layout lacks them (the
    type is present in the FloorPlan; the Unity executor resolves such objects by type).
    """

    entity: str
    object_id: str
    object_type: str
    position: tuple[float, float, float]
    pose: tuple[float, float, float, float] | None = None
    synthesized: bool = False


@dataclass
class ThorScene(HouseholdScene):
    """A household scene made from an iTHOR FloorPlan, with the THOR objects behind its entities."""

    floorplan: str = ""
    kind: str = ""
    thor: dict[str, ThorObject] = field(default_factory=dict)
    reachable: np.ndarray = field(default_factory=lambda: np.zeros((0, 2)))
    point_region: np.ndarray = field(default_factory=lambda: np.zeros(0, dtype=int))
    faucets: dict[str, str] = field(default_factory=dict)  # sink entity -> faucet objectId
    receptacle_table: dict[str, frozenset[str]] = field(default_factory=dict, repr=False)

    def accepts(self, fixture: str, item: str) -> bool:
        """THOR's receptacle table: whether `fixture` takes `item`."""
        f, i = self.thor.get(fixture), self.thor.get(item)
        if f is None or i is None:
            return True
        return canonical_type(i.object_type) in self.receptacle_table.get(f.object_type, frozenset())

    def can(self, entity: str, change: str) -> bool:
        """THOR's object flags: only breakable objects break, only dirtyable ones get dirty."""
        obj = self.thor.get(entity)
        if obj is None:
            return True
        table = {"break": BREAKABLE, "dirty": DIRTYABLE}.get(change)
        return table is None or canonical_type(obj.object_type) in table



# ---------------------------------------------------------------------------------------------- data
def _alfworld_root() -> Path:
    spec = importlib.util.find_spec("alfworld")
    if spec is None or not spec.submodule_search_locations:
        raise AlfworldMissing(f"iTHOR FloorPlans are read from the alfworld package, which is not installed; "
                              f"{_MISSING}")
    return Path(next(iter(spec.submodule_search_locations)))


@functools.lru_cache(maxsize=1)
def thor_tables() -> dict[str, object]:
    """ALFWorld's THOR tables (`OBJECTS`, `RECEPTACLES`, `VAL_RECEPTACLE_OBJECTS`, ...), parsed with `ast`."""
    path = _alfworld_root() / "gen" / "constants.py"
    if not path.exists():
        raise SceneError(f"{path} is missing: the alfworld install is incomplete; {_MISSING}")
    wanted = {"OBJECTS", "MOVABLE_RECEPTACLES", "RECEPTACLES", "VAL_RECEPTACLE_OBJECTS", "OPENABLE_CLASS_LIST"}
    out: dict[str, object] = {}
    for node in ast.parse(path.read_text()).body:
        if isinstance(node, ast.Assign) and len(node.targets) == 1 and isinstance(node.targets[0], ast.Name):
            name = node.targets[0].id
            if name in wanted:
                out[name] = ast.literal_eval(node.value)
    missing = wanted - set(out)
    if missing:
        raise SceneError(f"{path} lacks {sorted(missing)}: unsupported alfworld version; {_MISSING}")
    return out


def floorplan_kind(name: str) -> str:
    """The room kind of an iTHOR FloorPlan ("FloorPlan301" -> "bedroom")."""
    if name not in FLOORPLANS:
        raise SceneError(f"unknown iTHOR scene {name!r}; use FloorPlan1-30 (kitchens), 201-230 (living rooms), "
                         f"301-330 (bedrooms) or 401-430 (bathrooms)")
    n = int(name.removeprefix("FloorPlan"))
    return next(k for k, r in ROOM_KINDS.items() if n in r)


@dataclass(frozen=True)
class _Layout:
    types: tuple[str, ...]
    receptacles: dict[str, tuple[float, float, float, float]]
    reachable: np.ndarray


@functools.lru_cache(maxsize=128)
def _layout(name: str) -> _Layout:
    floorplan_kind(name)
    folder = _alfworld_root() / "gen" / "layouts"
    try:
        types = tuple(json.loads((folder / f"{name}-objects.json").read_text()))
        poses = json.loads((folder / f"{name}-openable.json").read_text())
        reachable = np.load(folder / f"{name}-layout.npy")
    except FileNotFoundError as exc:
        raise SceneError(f"alfworld's layout data for {name} is missing ({exc.filename}); {_MISSING}") from exc
    return _Layout(types, {k: tuple(float(x) for x in v) for k, v in poses.items()},
                   np.asarray(reachable, dtype=float).reshape(-1, 2))


def _parse_id(object_id: str) -> tuple[str, tuple[float, float, float]]:
    parts = object_id.split("|")
    kind = parts[-1] if len(parts) > 4 else parts[0]
    return kind, (float(parts[1]), float(parts[2]), float(parts[3]))


def _thor_id(kind: str, pos: tuple[float, float, float]) -> str:
    return f"{kind}|" + "|".join(f"{v:+06.2f}" for v in pos)


def _slug(text: str) -> str:
    return text.replace("pair of ", "").replace(" ", "_").lower()


# ---------------------------------------------------------------------------------------------- regions
def _regions(kind: str, reachable: np.ndarray) -> tuple[list[tuple[str, str]], np.ndarray, int, float]:
    """[(name, label)], region index per grid point, split axis (0 = x, 1 = z) and split value."""
    base = _slug(kind)
    if len(reachable) < _SPLIT_MIN_POINTS:
        return [(base, kind)], np.zeros(len(reachable), dtype=int), 0, float("inf")
    extent = reachable.max(0) - reachable.min(0)
    axis = int(extent[1] > extent[0])
    cut = float(np.median(reachable[:, axis]))
    sides = (("west", "east"), ("south", "north"))[axis]
    regions = [(f"{base}_{s}", f"{s} side of the {kind}") for s in sides]
    return regions, (reachable[:, axis] > cut).astype(int), axis, cut


def _nearest(reachable: np.ndarray, x: float, z: float) -> int:
    return int(np.argmin((reachable[:, 0] - x) ** 2 + (reachable[:, 1] - z) ** 2))


def _synth_spots(name: str, reachable: np.ndarray, count: int) -> list[tuple[float, float, int]]:
    """Wall-side spots (x, z, grid index) for fixtures ALFWorld gives no position for; fixed per FloorPlan."""
    centre = reachable.mean(0)
    far = np.argsort(-np.hypot(*(reachable - centre).T), kind="stable")
    rng = np.random.default_rng(zlib.crc32(name.encode()))
    picks = rng.permutation(far[: max(count, len(far) // 3)])[:count]
    out = []
    for i in picks:
        px, pz = reachable[i]
        d = np.array([px, pz]) - centre
        d = d / (np.linalg.norm(d) or 1.0)
        out.append((round(float(px + 0.5 * d[0]), 2), round(float(pz + 0.5 * d[1]), 2), int(i)))
    return out


def _facing(px: float, pz: float, x: float, z: float) -> float:
    """THOR yaw (0 = +z, 90 = +x) from (px, pz) towards (x, z), snapped to 90 degrees."""
    yaw = np.degrees(np.arctan2(x - px, z - pz)) % 360
    return float(round(yaw / 90) % 4 * 90)


# ---------------------------------------------------------------------------------------------- fixtures
def _fixture_objects(name: str, layout: _Layout) -> list[ThorObject]:
    """Every fixture of the FloorPlan: ALFWorld's receptacles, plus one per present type it lacks."""
    objs: list[ThorObject] = []
    for object_id, pose in sorted(layout.receptacles.items()):
        kind, pos = _parse_id(object_id)
        if kind in FIXTURES:
            objs.append(ThorObject("", object_id, kind, pos, pose))
    have = {o.object_type for o in objs}
    present = {canonical_type(t) for t in layout.types} | {"LightSwitch"}
    if "Sink" in present:
        present.add("SinkBasin")
    if "Bathtub" in present:
        present.add("BathtubBasin")
    lacking = sorted(t for t in present if t in FIXTURES and t not in have)
    for kind, (x, z, i) in zip(lacking, _synth_spots(name, layout.reachable, len(lacking))):
        px, pz = layout.reachable[i]
        height = 1.3 if kind == "LightSwitch" else 0.0
        pose = (float(px), float(pz), _facing(px, pz, x, z), 30.0)
        objs.append(ThorObject("", _thor_id(kind, (x, height, z)), kind, (x, height, z), pose, synthesized=True))
    return objs


def _fixture_nouns(objs: list[ThorObject], regions_of: list[int]) -> list[str]:
    """Nouns people can tell apart: "cabinet" when there is one, "third cabinet" when there are several."""
    by_noun: dict[str, list[int]] = {}
    for k, o in enumerate(objs):
        by_noun.setdefault(FIXTURES[o.object_type].noun, []).append(k)
    nouns = [""] * len(objs)
    for noun, ks in by_noun.items():
        ks.sort(key=lambda k: (regions_of[k], objs[k].position[0], objs[k].position[2], objs[k].position[1]))
        for rank, k in enumerate(ks):
            if len(ks) == 1:
                nouns[k] = noun
            else:
                nouns[k] = f"{_ORDINALS[rank]} {noun}" if rank < len(_ORDINALS) else f"{noun} {rank + 1}"
    return nouns


# ---------------------------------------------------------------------------------------------- loading
def _placeable_item_types(layout: _Layout, fixture_types: set[str], table) -> list[str]:
    out = []
    for t in layout.types:
        t = canonical_type(t)
        if t in ITEMS and any(t in table.get(f, ()) for f in fixture_types if f != "GarbageCan"):
            out.append(t)
    return sorted(set(out))


def load_floorplan(name: str, rng: np.random.Generator | None = None, n_people: int = 3) -> ThorScene:
    """An iTHOR FloorPlan as a `ThorScene`; items, their states and people are drawn from `rng`.

    Args:
        name: "FloorPlan1" ... "FloorPlan430" (see `FLOORPLANS`).
        rng: the generator to draw from; `np.random.default_rng(0)` when omitted.
        n_people: people living there (THOR has none: they exist symbolically, speak and change things).
    """
    if not 1 <= n_people <= len(PEOPLE_NAMES):
        raise SceneError(f"n_people must be in [1, {len(PEOPLE_NAMES)}], got {n_people}")
    rng = rng if rng is not None else np.random.default_rng(0)
    kind = floorplan_kind(name)
    layout = _layout(name)
    table = {k: frozenset(v) for k, v in thor_tables()["VAL_RECEPTACLE_OBJECTS"].items()}
    region_names, point_region, _, _ = _regions(kind, layout.reachable)
    objs = _fixture_objects(name, layout)
    regions_of = [int(point_region[_nearest(layout.reachable, *(o.pose[:2] if o.pose else
                                                                  (o.position[0], o.position[2])))])
                  for o in objs]
    if len(region_names) > 1 and len(set(regions_of)) < 2:  # every fixture on one side: one region
        region_names, point_region = [(_slug(kind), kind)], np.zeros(len(layout.reachable), dtype=int)
        regions_of = [0] * len(objs)

    entities: dict[str, Entity] = {}
    facts: set[Atom] = set()
    rooms = []
    for r, (rname, label) in enumerate(region_names):
        pts = layout.reachable[point_region == r]
        lo, hi = pts.min(0) - 0.5, pts.max(0) + 0.5
        rooms.append(Room(rname, kind, label, (float(lo[0]), float(lo[1]), float(hi[0] - lo[0]),
                                               float(hi[1] - lo[1])), (r, 0)))
        entities[rname] = Entity(rname, "room", label)
    doors = [(rooms[0].name, rooms[1].name)] if len(rooms) == 2 else []
    for a, b in doors:
        facts.update({Atom("connected", (a, b)), Atom("connected", (b, a))})

    thor: dict[str, ThorObject] = {}
    faucets: dict[str, str] = {}
    counts: dict[str, int] = {}
    has_faucet = "Faucet" in layout.types
    for obj, noun, r in zip(objs, _fixture_nouns(objs, regions_of), regions_of):
        spec = FIXTURES[obj.object_type]
        counts[spec.noun] = counts.get(spec.noun, 0) + 1
        ename = f"{_slug(spec.noun)}_{counts[spec.noun]}"
        room = rooms[r]
        entities[ename] = Entity(ename, spec.pddl_type, noun, {"category": spec.pddl_type, "room": room.label},
                                 room=room.name, pos=(obj.position[0], obj.position[2]))
        thor[ename] = ThorObject(ename, obj.object_id, obj.object_type, obj.position, obj.pose, obj.synthesized)
        facts.add(Atom("in-room", (ename, room.name)))
        if spec.pddl_type in ("openable", "fridge") and rng.random() < 0.9:
            facts.add(Atom("closed", (ename,)))
        if spec.pddl_type == "fridge":
            facts.add(Atom("chills", (ename,)))
        if spec.pddl_type == "light" and rng.random() < 0.6:
            facts.add(Atom("light-on", (ename,)))
        if spec.pddl_type == "bed" and rng.random() < 0.5:
            facts.add(Atom("made", (ename,)))
        if spec.pddl_type == "sink" and has_faucet:
            x, y, z = obj.position
            faucets[ename] = _thor_id("Faucet", (x, y + 0.25, z - 0.3))

    people = [PEOPLE_NAMES[int(i)] for i in rng.choice(len(PEOPLE_NAMES), size=n_people, replace=False)]
    for person in people:
        pid = person.lower()
        entities[pid] = Entity(pid, "person", person, {"name": person})
        facts.add(Atom("in-room", (pid, rooms[int(rng.integers(len(rooms)))].name)))
    entities[ROBOT] = Entity(ROBOT, "robot", "robot")
    facts.update({Atom("in-room", (ROBOT, rooms[0].name)), Atom("hand-empty", (ROBOT,))})

    fixtures_by_type: dict[str, list[str]] = {}
    for ename, obj in thor.items():
        fixtures_by_type.setdefault(obj.object_type, []).append(ename)
    _place_items(layout, table, fixtures_by_type, people, entities, facts, thor, rng)
    scene = ThorScene(rooms, entities, doors, frozenset(facts), (len(rooms), 1), floorplan=name, kind=kind,
                      thor=thor, reachable=layout.reachable, point_region=point_region, faucets=faucets,
                      receptacle_table=table)
    return scene


def _place_items(layout: _Layout, table, fixtures_by_type, people, entities, facts, thor, rng) -> None:
    """One to three instances of every pickupable type, each in a receptacle THOR's table allows."""
    descriptions: set[str] = set()
    for t in _placeable_item_types(layout, set(fixtures_by_type), table):
        spec = ITEMS[t]
        homes = sorted(f for ft, fs in fixtures_by_type.items() if t in table.get(ft, ()) and ft != "GarbageCan"
                       for f in fs)
        for k in range(int(rng.integers(1, 4))):
            name = f"{_slug(spec.noun)}_{k + 1}"
            attrs: dict = {"category": spec.pddl_type, "material": spec.material}
            for attempt in range(8):
                if spec.coloured:
                    attrs["colour"] = COLOURS[int(rng.integers(len(COLOURS)))]
                if spec.ownable and rng.random() < 0.5:
                    attrs["owner"] = people[int(rng.integers(len(people)))]
                else:
                    attrs.pop("owner", None)
                if attempt >= (2 if spec.coloured else 0) and k > 0:
                    attrs["mark"] = MARKS[int(rng.integers(len(MARKS)))]
                desc = Entity(name, spec.pddl_type, spec.noun, dict(attrs)).describe()
                if desc not in descriptions:
                    break
            descriptions.add(desc)
            if spec.perishable:
                attrs["perishable"] = True
            entities[name] = Entity(name, spec.pddl_type, spec.noun, attrs)
            home = homes[int(rng.integers(len(homes)))]
            hx, hy, hz = thor[home].position
            pos = (round(hx + 0.06 * (k + 1), 2), round(hy + 0.1, 2), round(hz - 0.04 * (k + 1), 2))
            thor[name] = ThorObject(name, _thor_id(t, pos), t, pos, synthesized=True)
            home_type = entities[home].pddl_type
            facts.add(Atom("on" if home_type in ("surface", "shelf", "bed") else "inside", (name, home)))
            if spec.perishable and home_type == "fridge":
                facts.add(Atom("cold", (name,)))
            if t in DIRTYABLE and (home_type == "sink" or rng.random() < 0.3):
                facts.add(Atom("dirty", (name,)))


# ---------------------------------------------------------------------------------------------- source
def hosts(name: str, kind: str) -> bool:
    """Whether FloorPlan `name` can host tasks of `kind` (it has the fixtures and object types they need)."""
    if kind not in HOSTED_TASK_KINDS:
        return False
    layout = _layout(name)
    table = thor_tables()["VAL_RECEPTACLE_OBJECTS"]
    fixtures = {o.object_type for o in _fixture_objects(name, layout)}
    items = set(_placeable_item_types(layout, fixtures, table))
    if kind == "wash_dishes":
        dishes = {t for t in items & DIRTYABLE if ITEMS[t].pddl_type == "dish"}
        return "SinkBasin" in fixtures and "Faucet" in layout.types and bool(dishes)
    if kind == "make_bed":
        return "Bed" in fixtures
    if kind == "discard_broken":
        return "GarbageCan" in fixtures and bool(items & BREAKABLE)
    if kind == "keep_cold":
        return "Fridge" in fixtures and any(ITEMS[t].perishable and t in table["Fridge"] for t in items)
    if kind == "organise_shelf":
        return "Shelf" in fixtures and "Book" in items
    if kind == "lights_off":
        return "LightSwitch" in fixtures
    return bool(items)


def _max_entities(name: str, n_people: int) -> int:
    layout = _layout(name)
    objs = _fixture_objects(name, layout)
    items = _placeable_item_types(layout, {o.object_type for o in objs}, thor_tables()["VAL_RECEPTACLE_OBJECTS"])
    return len(objs) + 2 + 1 + n_people + 3 * len(items)


class IthorScenes(SceneSource):
    """iTHOR FloorPlans: one named scene, a list, a room kind ("kitchens") or "all", drawn per episode.

    With `task_kinds`, only FloorPlans that host at least one of them are drawn, so a task of the
    requested kind can always be set (make_bed draws bedrooms).
    """

    name = "ithor"
    _GROUPS: ClassVar[dict[str, str]] = {"kitchens": "kitchen", "living_rooms": "living room", "bedrooms": "bedroom",
                                         "bathrooms": "bathroom"}

    def __init__(self, scenes: str | list[str] | tuple[str, ...] = "FloorPlan1",
                 task_kinds: tuple[str, ...] | None = None, n_people: int = 3):
        if isinstance(scenes, str):
            if scenes == "all":
                names = list(FLOORPLANS)
            elif scenes in self._GROUPS:
                names = [f for f in FLOORPLANS if floorplan_kind(f) == self._GROUPS[scenes]]
            else:
                names = [scenes]
        else:
            names = list(scenes)
        for n in names:
            floorplan_kind(n)
        if not names:
            raise SceneError("scene list is empty; name FloorPlans, a group "
                             f"{sorted(self._GROUPS)} or 'all'")
        if task_kinds:
            bad = [k for k in task_kinds if k not in HOSTED_TASK_KINDS]
            if bad:
                raise SceneError(f"task kinds {bad} cannot run on iTHOR scenes (THOR has no people to hand "
                                 f"things to and no washer or dryer); choose from {list(HOSTED_TASK_KINDS)}")
            hosting = [n for n in names if any(hosts(n, k) for k in task_kinds)]
            if not hosting:
                raise SceneError(f"none of the scenes {names[:5]}{'...' if len(names) > 5 else ''} hosts task "
                                 f"kinds {list(task_kinds)}; bedrooms host make_bed, kitchens the others")
            names = hosting
        self.scenes = tuple(names)
        self.n_people = n_people
        self.max_entities = max(_max_entities(n, n_people) for n in self.scenes)
        self.n_rooms = 2

    def generate(self, rng: np.random.Generator) -> ThorScene:
        name = self.scenes[int(rng.integers(len(self.scenes)))] if len(self.scenes) > 1 else self.scenes[0]
        return load_floorplan(name, rng, self.n_people)


def excluded_types() -> dict[str, str]:
    """THOR types deliberately left out, with the reason (re-exported for docs and tests)."""
    return dict(EXCLUDED)
