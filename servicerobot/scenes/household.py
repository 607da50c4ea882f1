"""Seeded procedural homes: rooms on a floor plan, fixtures, movable items with attributes, people.

A `HouseholdScene` is what the household world starts from: the typed entities (PDDL objects), the
initial facts over the household domain, and the geometry the renderer draws. Everything is drawn from
the `numpy.random.Generator` passed in, so one seed gives one house, byte for byte.
"""

from __future__ import annotations

import functools
import itertools
import math
from bisect import bisect_right
from dataclasses import dataclass, field
from importlib import resources

import numpy as np

from servicerobot.errors import SceneError
from servicerobot.pddl import Atom, Domain, parse_domain
from servicerobot.pddl.grounding import Universe
from servicerobot.scenes.draws import Draws, draws
from servicerobot.scenes.vocabulary import (
    COLOURS,
    EXTRA_ROOMS,
    FIXTURE_KINDS,
    ITEM_KINDS,
    MARKS,
    PEOPLE_NAMES,
    ROOM_FIXTURES,
    ROOM_SEQUENCE,
)

__all__ = [
    "PRESETS",
    "ROBOT",
    "Entity",
    "HouseholdConfig",
    "HouseholdScene",
    "Room",
    "generate_household",
    "household_domain",
    "household_domain_text",
]

ROBOT = "robot"
ROOM_W, ROOM_H = 5.0, 4.0  # metres per floor-plan cell


@dataclass(frozen=True)
class HouseholdConfig:
    """Size of a generated home. Counts are exact, so observation spaces are fixed per config."""

    n_rooms: int = 10
    n_items: int = 150
    n_people: int = 10
    extra_door_prob: float = 0.25

    def __post_init__(self) -> None:
        if not 2 <= self.n_rooms <= 200:
            raise SceneError(f"n_rooms must be in [2, 200], got {self.n_rooms}")
        if not 1 <= self.n_people <= len(PEOPLE_NAMES):
            raise SceneError(f"n_people must be in [1, {len(PEOPLE_NAMES)}], got {self.n_people}")
        if not 1 <= self.n_items <= 5000:
            raise SceneError(f"n_items must be in [1, 5000], got {self.n_items}")


PRESETS: dict[str, HouseholdConfig] = {
    "small": HouseholdConfig(n_rooms=6, n_items=40, n_people=4),
    "default": HouseholdConfig(),
    "large": HouseholdConfig(n_rooms=40, n_items=800, n_people=30),
}


@dataclass(frozen=True)
class Room:
    """A room: its PDDL name, its kind, what people call it, and its rectangle (x, y, w, h) in metres."""

    name: str
    kind: str
    label: str
    rect: tuple[float, float, float, float]
    cell: tuple[int, int]


@dataclass(frozen=True)
class Entity:
    """A typed object of the world with the words people use for it.

    `attributes` holds what a person would say: colour, owner, material, category (and `perishable`).
    `room` is set for fixtures (static). `pos` is a fixture's floor-plan position in metres.
    """

    name: str
    pddl_type: str
    noun: str
    attributes: dict = field(default_factory=dict, hash=False, compare=True)
    room: str | None = None
    pos: tuple[float, float] | None = None

    @property
    def owner(self) -> str | None:
        return self.attributes.get("owner")

    def describe(self, with_owner: bool = True, with_colour: bool = True) -> str:
        """A noun phrase without article: "Ana's red mug", "blue plate", "fridge"."""
        return noun_phrase(self.noun, self.attributes, with_owner, with_colour)


def noun_phrase(noun: str, attributes: dict, with_owner: bool = True, with_colour: bool = True) -> str:
    """`Entity.describe` of an entity with this noun and these attributes (without building the entity)."""
    mark = attributes.get("mark")
    colour = attributes.get("colour") if with_colour else None
    phrase = noun if not mark and not colour else " ".join(
        [w for w in (mark, colour) if w] + [noun])
    owner = attributes.get("owner")
    if with_owner and owner:
        return f"{owner}'s {phrase}"
    return phrase


@dataclass
class HouseholdScene:
    """A generated home: rooms, typed entities, doors, and the initial facts of the household domain."""

    rooms: list[Room]
    entities: dict[str, Entity]
    doors: list[tuple[str, str]]
    init: frozenset[Atom]
    grid: tuple[int, int]
    _fixtures_by_room: dict[str, list[str]] | None = field(default=None, repr=False, compare=False)

    @property
    def objects(self) -> dict[str, str]:
        """PDDL objects: name -> type."""
        return {name: e.pddl_type for name, e in self.entities.items()}

    @property
    def people(self) -> list[str]:
        return [n for n, e in self.entities.items() if e.pddl_type == "person"]

    @property
    def room_names(self) -> list[str]:
        return [r.name for r in self.rooms]

    def room(self, name: str) -> Room:
        for r in self.rooms:
            if r.name == name:
                return r
        raise SceneError(f"no room named {name!r}; rooms are {self.room_names}")

    def accepts(self, fixture: str, item: str) -> bool:
        """Whether people may put `item` on or in `fixture` (a simulator's receptacle rules; all in generated homes)."""
        return True

    def can(self, entity: str, change: str) -> bool:
        """Whether `entity` can undergo `change` ("break", "dirty") in the scene's simulator (always here)."""
        return True

    def fixtures_in(self, room: str) -> list[str]:
        """Fixtures of a room, in wall order (cached: the layout never changes)."""
        if self._fixtures_by_room is None:
            index: dict[str, list[str]] = {r.name: [] for r in self.rooms}
            for name, e in self.entities.items():
                if e.pos is not None:
                    index[e.room].append(name)
            self._fixtures_by_room = index
        return self._fixtures_by_room[room]


_DOMAIN_CACHE: dict[str, Domain] = {}
# The canonical Atom of (predicate, args) (`Universe.atom`): a house's facts are then the very objects that the
# interpreter's compiled actions and goals hold, so testing them against the state compares no names.
_atom = Universe.atom


def household_domain_text() -> str:
    """The household domain PDDL shipped as package data."""
    return resources.files("servicerobot.scenes").joinpath("household.pddl").read_text()


def household_domain() -> Domain:
    """The parsed household domain (parsed once per process; `Domain` is immutable)."""
    if "household" not in _DOMAIN_CACHE:
        _DOMAIN_CACHE["household"] = parse_domain(household_domain_text(), source="household.pddl")
    return _DOMAIN_CACHE["household"]


@functools.lru_cache(maxsize=1024)  # nouns and room kinds: a few dozen words, asked for in every house
def _slug(text: str) -> str:
    return text.replace("pair of ", "").replace(" ", "_").replace("'", "").lower()


def _room_kinds(n: int) -> list[str]:
    kinds = list(ROOM_SEQUENCE[:n])
    i = 0
    while len(kinds) < n:
        kinds.append(EXTRA_ROOMS[i % len(EXTRA_ROOMS)])
        i += 1
    return kinds


def _layout(n: int, rng: np.random.Generator | Draws, extra_door_prob: float):
    """Rooms on a grid; doors form a random spanning tree over neighbouring cells plus a few loops."""
    cols = max(2, math.ceil(math.sqrt(n * 4 / 3)))
    rows = math.ceil(n / cols)
    cells = [(i % cols, i // cols) for i in range(n)]
    index = {c: i for i, c in enumerate(cells)}
    neighbours = {i: [index[(x + dx, y + dy)] for dx, dy in ((1, 0), (0, 1), (-1, 0), (0, -1))
                      if (x + dx, y + dy) in index] for i, (x, y) in enumerate(cells)}
    # Randomised Prim's algorithm from room 0 (the hallway): connected, seeded, no global RNG.
    in_tree, edges, frontier = {0}, set(), [(0, j) for j in neighbours[0]]
    while len(in_tree) < n:
        a, b = frontier.pop(int(rng.integers(len(frontier))))
        if b in in_tree:
            continue
        in_tree.add(b)
        edges.add((min(a, b), max(a, b)))
        frontier.extend((b, j) for j in neighbours[b] if j not in in_tree)
    for a in range(n):
        for b in neighbours[a]:
            if a < b and (a, b) not in edges and rng.random() < extra_door_prob:
                edges.add((a, b))
    return cells, (cols, rows), sorted(edges)


@functools.lru_cache(maxsize=4096)  # rooms sit on grid cells, so houses share their rectangles
def _fixture_positions(rect, count: int) -> tuple[tuple[float, float], ...]:
    """Spread fixtures along the walls of a room, inset from the corners."""
    x, y, w, h = rect
    inset = 0.6
    path = [(x + inset, y + inset), (x + w - inset, y + inset), (x + w - inset, y + h - inset),
            (x + inset, y + h - inset)]
    perimeter = 2 * (w - 2 * inset) + 2 * (h - 2 * inset)
    out = []
    for k in range(count):
        d = perimeter * (k + 0.5) / count
        for i in range(4):
            (ax, ay), (bx, by) = path[i], path[(i + 1) % 4]
            seg = math.hypot(bx - ax, by - ay)
            if d <= seg:
                out.append((round(ax + (bx - ax) * d / seg, 3), round(ay + (by - ay) * d / seg, 3)))
                break
            d -= seg
    return tuple(out)


def generate_household(config: HouseholdConfig | str = "default", rng: np.random.Generator | None = None
                       ) -> HouseholdScene:
    """Generate a home from a config or preset name ("small", "default", "large").

    Args:
        config: a `HouseholdConfig` or the name of a preset in `PRESETS`.
        rng: the generator to draw from; `np.random.default_rng(0)` when omitted.
    """
    if isinstance(config, str):
        if config not in PRESETS:
            raise SceneError(f"unknown household preset {config!r}; presets are {sorted(PRESETS)}")
        config = PRESETS[config]
    rng = rng if rng is not None else np.random.default_rng(0)

    # People first: bedrooms are named after them.
    name_idx = rng.choice(len(PEOPLE_NAMES), size=config.n_people, replace=False)
    people = [PEOPLE_NAMES[int(i)] for i in name_idx]
    # The rest are hundreds of small draws: the same numbers, without numpy's cost per call (see `draws`).
    fast = draws(rng)
    house = _generate_rest(config, people, fast or rng)
    if fast is not None:
        fast.sync()  # the generator ends where numpy's own calls would have left it
    return house


def _generate_rest(config: HouseholdConfig, people: list[str],
                   rng: np.random.Generator | Draws) -> HouseholdScene:
    """The house around its `people`: rooms and doors, fixtures, where people and the robot are, items."""
    entities: dict[str, Entity] = {}
    facts: set[Atom] = set()

    kinds = _room_kinds(config.n_rooms)
    cells, grid, door_idx = _layout(config.n_rooms, rng, config.extra_door_prob)
    rooms: list[Room] = []
    kind_counts: dict[str, int] = {}
    bedroom_owner = 0
    for i, kind in enumerate(kinds):
        kind_counts[kind] = kind_counts.get(kind, 0) + 1
        k = kind_counts[kind]
        if kind == "bedroom" and bedroom_owner < len(people):
            owner = people[bedroom_owner]
            bedroom_owner += 1
            name, label = f"{owner.lower()}_bedroom", f"{owner}'s bedroom"
        else:
            name = _slug(kind) + ("" if k == 1 else f"_{k}")
            label = kind if k == 1 else f"{kind} {k}"
        cx, cy = cells[i]
        rooms.append(Room(name, kind, label, (cx * ROOM_W, cy * ROOM_H, ROOM_W, ROOM_H), (cx, cy)))
        entities[name] = Entity(name, "room", label)
    doors = [(rooms[a].name, rooms[b].name) for a, b in door_idx]
    for a, b in doors:
        facts.add(_atom("connected", (a, b)))
        facts.add(_atom("connected", (b, a)))

    # Fixtures.
    fixtures_by_noun: dict[str, list[str]] = {}
    noun_counts: dict[str, int] = {}
    for room in rooms:
        nouns = ROOM_FIXTURES[room.kind]
        for noun, pos in zip(nouns, _fixture_positions(room.rect, len(nouns))):
            kind = FIXTURE_KINDS[noun]
            noun_counts[noun] = noun_counts.get(noun, 0) + 1
            name = f"{_slug(noun)}_{noun_counts[noun]}"
            owner = room.label.split("'s ")[0] if "'s bedroom" in room.label else None
            attrs = {"category": kind.pddl_type, "room": room.label}
            if owner:
                attrs["owner"] = owner
            entities[name] = Entity(name, kind.pddl_type, noun, attrs, room=room.name, pos=pos)
            fixtures_by_noun.setdefault(noun, []).append(name)
            facts.add(_atom("in-room", (name, room.name)))
            openable = kind.pddl_type in ("openable", "fridge", "washer", "dryer")
            if openable and kind.starts_closed and rng.random() < 0.85:
                facts.add(_atom("closed", (name,)))
            if kind.pddl_type == "fridge":
                facts.add(_atom("chills", (name,)))
            if kind.pddl_type == "light" and rng.random() < 0.3:
                facts.add(_atom("light-on", (name,)))
            if kind.pddl_type == "bed" and rng.random() < 0.7:
                facts.add(_atom("made", (name,)))

    # People and the robot.
    for person in people:
        pid = person.lower()
        entities[pid] = Entity(pid, "person", person, {"name": person})
        facts.add(_atom("in-room", (pid, rooms[int(rng.integers(len(rooms)))].name)))
    entities[ROBOT] = Entity(ROBOT, "robot", "robot")
    facts.add(_atom("in-room", (ROBOT, rooms[0].name)))
    facts.add(_atom("hand-empty", (ROBOT,)))

    _place_items(config.n_items, people, fixtures_by_noun, entities, facts, rng)
    return HouseholdScene(rooms, entities, doors, frozenset(facts), grid)


_ITEM_DRAW: list = []  # [ITEM_KINDS' cdf as Generator.choice(n, p=weights) searches it, each kind's plan]
# (kind index, mark, colour, owner) -> noun_phrase of an item of that kind with them: items' descriptions
# repeat from house to house, and a house tells its items apart by them.
_DESCRIPTIONS: dict[tuple, str] = {}
MAX_DESCRIPTIONS = 200_000  # past it the table starts again


def _item_draw() -> tuple[list[float], list[tuple]]:
    """The cdf of item kinds (weights per kind keep the mix house-like: more dishes, clothes and books than
    vases) and each kind's plan: (noun, PDDL type, materials, coloured, ownable, perishable, name stem, the
    fixture nouns it is kept in), computed once per process."""
    if not _ITEM_DRAW:
        weights = np.array([3.0 if k.pddl_type in ("dish", "clothing", "book") else 1.5 if k.pddl_type == "food"
                            else 1.0 for k in ITEM_KINDS])
        weights /= weights.sum()
        cdf = weights.cumsum()  # what Generator.choice(len(weights), p=weights) builds on every call
        cdf /= cdf[-1]
        _ITEM_DRAW[:] = [cdf.tolist(), [(k.noun, k.pddl_type, k.materials, k.coloured, k.ownable, k.perishable,
                                         _slug(k.noun), k.homes) for k in ITEM_KINDS]]
    return _ITEM_DRAW[0], _ITEM_DRAW[1]


def _place_items(n_items: int, people: list[str], fixtures_by_noun: dict[str, list[str]],
                 entities: dict[str, Entity], facts: set[Atom], rng: np.random.Generator | Draws) -> None:
    """Create `n_items` movable items with attributes and put each in or on a fixture it belongs to."""
    kind_counts: dict[str, int] = {}
    descriptions: set[str] = set()
    all_surfaces = [n for noun, names in fixtures_by_noun.items() for n in names
                    if FIXTURE_KINDS[noun].pddl_type in ("surface", "shelf", "bed")]
    cdf, plans = _item_draw()
    if len(_DESCRIPTIONS) >= MAX_DESCRIPTIONS:
        _DESCRIPTIONS.clear()
    known_description = _DESCRIPTIONS.get
    homes_of: dict[int, list[str]] = {}  # kind index -> the fixtures it is kept in, in this house
    random, integers = rng.random, rng.integers
    n_colours, n_people, n_marks = len(COLOURS), len(people), len(MARKS)
    for _ in range(n_items):
        # One uniform draw searched in the cdf: what rng.choice(len(ITEM_KINDS), p=weights) does, without
        # its checks of p on every call (the same draws, so the same houses).
        k = bisect_right(cdf, random())
        noun, pddl_type, materials, coloured, ownable, perishable, stem, home_nouns = plans[k]
        kind_counts[noun] = count = kind_counts.get(noun, 0) + 1
        name = f"{stem}_{count}"
        attrs: dict = {"category": pddl_type}
        colour = mark = None
        for attempt in range(8):
            # integers(1) draws nothing (numpy's own returns 0 at once), so a kind of one material skips it
            attrs["material"] = materials[int(integers(len(materials)))] if len(materials) > 1 else materials[0]
            if coloured:
                colour = attrs["colour"] = COLOURS[int(integers(n_colours))]
            if ownable and random() < 0.6:
                owner = attrs["owner"] = people[int(integers(n_people))]
            else:
                attrs.pop("owner", None)
                owner = None
            if attempt >= 2:  # still ambiguous: people tell such things apart by a mark ("the old pot")
                mark = attrs["mark"] = MARKS[int(integers(n_marks))]
            desc = known_description((k, mark, colour, owner))
            if desc is None:
                desc = _DESCRIPTIONS[k, mark, colour, owner] = noun_phrase(noun, attrs)
            if desc not in descriptions:
                break
        else:
            # Large houses run out of single marks ("the old yogurt" twice): take the first free pair of
            # marks, drawing nothing, so houses that never get here stay byte for byte the same.
            for first, second in itertools.permutations(MARKS, 2):
                attrs["mark"] = f"{first} {second}"
                desc = noun_phrase(noun, attrs)
                if desc not in descriptions:
                    break
        descriptions.add(desc)
        if perishable:
            attrs["perishable"] = True
        entities[name] = Entity(name, pddl_type, noun, attrs)

        homes = homes_of.get(k)
        if homes is None:
            homes = homes_of[k] = [f for home_noun in home_nouns for f in fixtures_by_noun.get(home_noun, [])]
        home = homes[int(integers(len(homes)))] if homes else all_surfaces[int(integers(len(all_surfaces)))]
        home_entity = entities[home]
        home_type = home_entity.pddl_type
        relation = "on" if home_type in ("surface", "shelf", "bed") else "inside"
        facts.add(_atom(relation, (name, home)))
        if perishable and home_type == "fridge":
            facts.add(_atom("cold", (name,)))
        if pddl_type == "dish" and (home_type == "sink" or random() < 0.15):
            facts.add(_atom("dirty", (name,)))
        if pddl_type == "clothing" and (home_entity.noun in ("hamper", "laundry basket") or random() < 0.1):
            facts.add(_atom("dirty", (name,)))
