"""The human event process: people change the house and (sometimes) say so.

Each `HumanEvent` carries its ground-truth delta, the sentence a person says about it, and the facts
that sentence conveys (`told`: all of the delta for a full report, part of it for a partial one).
Background events avoid the entities of the active task; task disturbances (resets, additions,
relocations) target them on purpose, as in L3M+P's embodied evaluation.
"""

from __future__ import annotations

from bisect import bisect_right
from collections.abc import Iterator
from dataclasses import dataclass, field

import numpy as np

from servicerobot.envs.household.language import EVENT_TEMPLATES, Describer, render_template
from servicerobot.envs.household.state import HouseholdState
from servicerobot.pddl import Atom
from servicerobot.pddl.grounding import Universe
from servicerobot.scenes.household import HouseholdScene

__all__ = ["BACKGROUND_WEIGHTS", "HumanEvent", "HumanProcess"]


@dataclass(frozen=True)
class HumanEvent:
    """One change a person made, its delta, and what they said about it (if anything).

    `category` is "background", "setup" (makes a new task meaningful), "reset", "addition" or
    "relocation". `utterance` is the full sentence; whether it reaches the robot is decided by the world's
    update mode, so the event itself is the same in every mode (same seed, same episode).
    """

    kind: str
    actor: str
    add: frozenset[Atom]
    delete: frozenset[Atom]
    utterance: str
    told: frozenset[Atom] = field(default=frozenset())
    told_removed: frozenset[Atom] = field(default=frozenset())
    category: str = "background"
    entities: tuple[str, ...] = ()

    def to_json(self) -> dict:
        return {"kind": self.kind, "actor": self.actor, "category": self.category,
                "add": _texts(self.add), "delete": _texts(self.delete),
                "utterance": self.utterance, "told_add": _texts(self.told),
                "told_delete": _texts(self.told_removed)}


# People's changes as canonical atoms (`Universe.atom`), the objects the house's facts and the interpreter's
# actions hold: set tests on the state then compare no names.
_atom = Universe.atom
_TEXT: dict[Atom, str] = {}  # atom -> str(atom), for the atoms events keep changing


def _texts(atoms: frozenset[Atom]) -> list[str]:
    """The atoms as sorted PDDL text (most events change one or two)."""
    out = []
    for atom in atoms:
        text = _TEXT.get(atom)
        if text is None:
            if len(_TEXT) >= 8192:
                _TEXT.clear()
            text = _TEXT[atom] = str(atom)
        out.append(text)
    if len(out) > 1:
        out.sort()
    return out


BACKGROUND_WEIGHTS: dict[str, float] = {
    "move": 4.0, "dirty": 2.0, "clean": 1.0, "break": 0.6, "light": 2.0, "faucet": 0.8, "open": 0.8,
    "take": 1.0, "put_back": 1.5, "unmake": 0.8, "warm": 0.8, "soil": 1.0, "go": 2.0,
}


_DISTRIBUTION: list = [None, (), None, ()]  # BACKGROUND_WEIGHTS' items -> (kinds, probabilities, their cdf)


def _background_distribution() -> tuple[list[str], np.ndarray]:
    """The kinds and probabilities of background events, recomputed only when BACKGROUND_WEIGHTS changes."""
    return _background_kinds()[:2]


def _background_kinds() -> tuple[list[str], np.ndarray, list[float]]:
    """`_background_distribution()` and the cdf `Generator.choice(n, p=p)` searches, as floats."""
    items = tuple(BACKGROUND_WEIGHTS.items())
    if items != _DISTRIBUTION[0]:
        kinds = [k for k, _ in items]
        p = np.array([w for _, w in items])
        p = p / p.sum()
        cdf = p.cumsum()
        cdf /= cdf[-1]
        _DISTRIBUTION[:] = [items, kinds, p, cdf.tolist()]
    return _DISTRIBUTION[1], _DISTRIBUTION[2], _DISTRIBUTION[3]


def _prep(fixture_type: str) -> str:
    return "on" if fixture_type in ("surface", "shelf", "bed") else "in"


_METHODS = {"dirty": "dirty", "clean": "clean", "break": "break_", "light": "light", "faucet": "faucet",
            "open": "open", "take": "take", "put_back": "put_back", "unmake": "unmake", "warm": "warm",
            "soil": "soil", "go": "go"}  # background kind -> HumanProcess method (all but "move")


class HumanProcess:
    """Draws human events from the current state with its own random generator."""

    def __init__(self, state: HouseholdState, rng: np.random.Generator, partial_prob: float = 0.15):
        self.state = state
        self.scene = state.scene
        self.rng = rng
        self.describe = Describer(self.scene)
        self.partial_prob = partial_prob
        ents = self.scene.entities
        self.people = self.scene.people
        self.items = sorted(n for n, e in ents.items() if e.pos is None and e.pddl_type not in
                            ("room", "person", "robot"))
        self.item_set = frozenset(self.items)
        self.placeable = sorted(n for n, e in ents.items() if e.pos is not None and e.pddl_type in
                                ("surface", "shelf", "bed", "container", "openable", "sink"))
        self.lights = sorted(n for n, e in ents.items() if e.pddl_type == "light")
        # What each kind of event may touch, as far as the scene alone decides (in `items` order); the
        # state (where an item is, its flags) is checked per event.
        can = self.scene.can
        self._dishes: list[str] = []
        self._dirtyable: dict[str, list[str]] = {"dish": [], "clothing": []}
        self._breakable: list[str] = []
        self._perishable: list[str] = []
        self._clothing: set[str] = set()
        for i in self.items:  # one pass, in `items` order
            e = ents[i]
            kind = e.pddl_type
            if kind == "dish":
                self._dishes.append(i)
            if kind == "clothing":
                self._clothing.add(i)
            if kind in ("dish", "clothing") and can(i, "dirty"):
                self._dirtyable[kind].append(i)
            if kind in ("dish", "gadget", "decor") and can(i, "break"):
                self._breakable.append(i)
            if e.attributes.get("perishable"):
                self._perishable.append(i)
        self._fixtures_of = {t: [f for f in self.placeable if ents[f].pddl_type in t] for t in
                             (("sink",), ("bed",), ("surface",), ("openable", "fridge", "washer", "dryer"))}
        self._accepting: dict[str, list[str]] = {}  # item -> acceptable_fixtures(item, None), on first use
        self.non_sink: dict[str, list[str]] = {}  # item -> the same but sinks (what tasks ask for), on first use
        self.two_places: set[str] | frozenset[str] = set()  # items non_sink gives two or more fixtures
        self._by_clothing: dict[bool, tuple[list[str], list[str]]] | None = None
        if type(self.scene).accepts is HouseholdScene.accepts:
            # The default rules accept everything: both lists depend only on whether the item is clothing.
            lists = self._by_clothing = {}
            for clothing in (False, True):
                found = self._acceptable(clothing, "")
                lists[clothing] = (found, [f for f in found if ents[f].pddl_type != "sink"])
            if len(lists[False][1]) > 1 and len(lists[True][1]) > 1:
                self.two_places = self.item_set

    # ----------------------------------------------------------------- helpers
    def _pick(self, seq):
        return seq[int(self.rng.integers(len(seq)))] if seq else None

    def _say(self, kind: str, actor: str, **fields: str) -> str:
        template = self._pick(EVENT_TEMPLATES[kind])
        return render_template(template, actor=self.describe.person(actor), **fields)

    def _movable(self, protected: frozenset[str], among: list[str] | None = None,
                 excluding: set[str] | frozenset[str] = frozenset()) -> list[str]:
        """Items (of `among`, default all) a person may touch: not held by the robot, not discarded, not
        protected (nor in `excluding`)."""
        placed = self.state.placed  # located, but not with the robot nor discarded
        if among is None:  # every item: filter by one set in C
            keep = placed.difference(protected, excluding) if protected or excluding else placed
            return list(filter(keep.__contains__, self.items))
        if not protected and not excluding:
            return list(filter(placed.__contains__, among))
        return [i for i in among if i in placed and i not in protected and i not in excluding]

    def destinations(self, item: str, exclude: str | None) -> list[str]:
        """Fixtures a person could put `item` on or in (not `exclude`; washers and dryers take clothes only)."""
        return [f for f in self.accepting(item) if f != exclude]

    def acceptable_fixtures(self, item: str, exclude: str | None) -> Iterator[str]:
        """`destinations(item, exclude)` one at a time, for callers that stop at the first."""
        return (f for f in self.accepting(item) if f != exclude)

    def accepting(self, item: str) -> list[str]:
        """Every fixture a person could put `item` on or in, in `placeable` order (the scene's rules do not
        change, so this is worked out once per item)."""
        found = self._accepting.get(item)
        if found is None:
            clothing = item in self._clothing
            found = self._accepting[item] = (self._acceptable(clothing, item) if self._by_clothing is None
                                             else self._by_clothing[clothing][0])
        return found

    def non_sink_accepting(self, item: str) -> list[str]:
        """`accepting(item)` without sinks (worked out once per item)."""
        found = self.non_sink.get(item)
        if found is None:
            if self._by_clothing is not None:
                found = self._by_clothing[item in self._clothing][1]
            else:
                ents = self.scene.entities
                found = [f for f in self.accepting(item) if ents[f].pddl_type != "sink"]
            self.non_sink[item] = found
            if len(found) > 1 and isinstance(self.two_places, set):
                self.two_places.add(item)
        return found

    def _acceptable(self, clothing: bool, item: str) -> list[str]:
        entities, accepts = self.scene.entities, self.scene.accepts
        return [f for f in self.placeable
                if (clothing or entities[f].pddl_type not in ("washer", "dryer")) and accepts(f, item)]

    def place_atom(self, item: str, fixture: str) -> Atom:
        """`(on item fixture)` for surfaces, `(inside item fixture)` for containers."""
        ftype = self.scene.entities[fixture].pddl_type
        return _atom("on" if ftype in ("surface", "shelf", "bed") else "inside", (item, fixture))

    # ----------------------------------------------------------------- event kinds
    def move(self, actor: str, item: str, dest: str | None = None, category: str = "background",
             partial: bool | None = None) -> HumanEvent | None:
        """`actor` moves `item` (from wherever it is, including their hands) to `dest`."""
        loc = self.state.location(item)
        if loc is None or loc.predicate in ("holding", "discarded"):
            return None
        src = loc.args[1]
        dest = dest or self._pick(self.destinations(item, src))
        if dest is None:
            return None
        new = self.place_atom(item, dest)
        delete = {loc}
        add = {new}
        cold = _atom("cold", (item,))
        if self.scene.entities[dest].pddl_type == "fridge":
            add.add(cold)
        d = self.describe
        partial = (self.rng.random() < self.partial_prob) if partial is None else partial
        added, deleted = frozenset(add), frozenset(delete)
        if loc.predicate == "held-by":
            text = self._say("put_back", actor, item=d.item(item, actor), prep=_prep(self.scene.entities[dest]
                             .pddl_type), dest=d.fixture(dest, actor))
            told = added
        elif partial:
            text = self._say("move_partial", actor, item=d.item(item, actor), src=d.fixture(src, actor),
                             prep_src=_prep(self.scene.entities[src].pddl_type))
            told = frozenset()
        else:
            text = self._say("move", actor, item=d.item(item, actor), src=d.fixture(src, actor),
                             prep=_prep(self.scene.entities[dest].pddl_type), dest=d.fixture(dest, actor))
            told = added
        return HumanEvent("move", actor, added, deleted, text, told, deleted, category, (item, src, dest))

    def _flag(self, kind: str, actor: str, atom: Atom, on: bool, category: str, **fields: str):
        add, delete = (frozenset({atom}), frozenset()) if on else (frozenset(), frozenset({atom}))
        text = self._say(kind, actor, **fields)
        return HumanEvent(kind, actor, add, delete, text, add, delete, category, atom.args)

    def dirty(self, actor: str, protected: frozenset[str], category: str = "background", item: str | None = None):
        if not item:
            dirty = self.state.flagged("dirty")
            item = self._pick([i for i in self._movable(protected, self._dirtyable["dish"]) if i not in dirty])
        if item is None:
            return None
        return self._flag("dirty", actor, _atom("dirty", (item,)), True, category,
                          item=self.describe.item(item, actor))

    def clean(self, actor: str, protected: frozenset[str], category: str = "background"):
        dirty = self.state.flagged("dirty")
        item = self._pick([i for i in self._movable(protected, self._dishes) if i in dirty])
        if item is None:
            return None
        return self._flag("clean", actor, _atom("dirty", (item,)), False, category,
                          item=self.describe.item(item, actor))

    def break_(self, actor: str, protected: frozenset[str], category: str = "background"):
        broken = self.state.flagged("broken")
        item = self._pick([i for i in self._movable(protected, self._breakable) if i not in broken])
        if item is None:
            return None
        return self._flag("break", actor, _atom("broken", (item,)), True, category,
                          item=self.describe.item(item, actor))

    def soil(self, actor: str, protected: frozenset[str], category: str = "background", item: str | None = None):
        if not item:
            dirty = self.state.flagged("dirty")
            item = self._pick([i for i in self._movable(protected, self._dirtyable["clothing"]) if i not in dirty])
        if item is None:
            return None
        return self._flag("soil", actor, _atom("dirty", (item,)), True, category,
                          item=self.describe.item(item, actor))

    def light(self, actor: str, protected: frozenset[str], category: str = "background", on: bool | None = None,
              light: str | None = None):
        lights = [lt for lt in self.lights if lt not in protected]
        if on is not None:
            lit = self.state.flagged("light-on")
            lights = [lt for lt in lights if (lt in lit) != on]
        light = light or self._pick(lights)
        if light is None:
            return None
        atom = _atom("light-on", (light,))
        on = atom not in self.state if on is None else on
        return self._flag("light_on" if on else "light_off", actor, atom, on, category,
                          room=self.describe.room(self.scene.entities[light].room))

    def faucet(self, actor: str, protected: frozenset[str], category: str = "background", on: bool | None = None):
        sinks = [f for f in self._fixtures_of[("sink",)] if f not in protected]
        if on is not None:
            flowing = self.state.flagged("faucet-on")
            sinks = [s for s in sinks if (s in flowing) != on]
        sink = self._pick(sinks)
        if sink is None:
            return None
        atom = _atom("faucet-on", (sink,))
        on = atom not in self.state if on is None else on
        return self._flag("faucet_on" if on else "faucet_off", actor, atom, on, category,
                          sink=self.describe.fixture(sink, actor))

    def open(self, actor: str, protected: frozenset[str], category: str = "background"):
        box = self._pick([f for f in self._fixtures_of[("openable", "fridge", "washer", "dryer")] if f not in protected])
        if box is None:
            return None
        atom = _atom("closed", (box,))
        closing = atom not in self.state
        return self._flag("close" if closing else "open", actor, atom, closing, category,
                          container=self.describe.fixture(box, actor))

    def take(self, actor: str, protected: frozenset[str], category: str = "background"):
        if self.state.held_by(actor):
            return None
        item = self._pick(self._movable(protected, excluding=self.state.held))
        if item is None:
            return None
        loc = self.state.location(item)
        add = frozenset({_atom("held-by", (item, actor))})
        text = self._say("take", actor, item=self.describe.item(item, actor),
                         src=self.describe.fixture(loc.args[1], actor))
        return HumanEvent("take", actor, add, frozenset({loc}), text, add, frozenset({loc}), category,
                          (item, loc.args[1]))

    def put_back(self, actor: str, protected: frozenset[str], category: str = "background"):
        held = [i for i in self.state.held_by(actor) if i not in protected]
        item = self._pick(held)
        return None if item is None else self.move(actor, item, category=category, partial=False)

    def unmake(self, actor: str, protected: frozenset[str], category: str = "background", bed: str | None = None):
        if not bed:
            made = self.state.flagged("made")
            bed = self._pick([f for f in self._fixtures_of[("bed",)] if f not in protected and f in made])
        if bed is None:
            return None
        return self._flag("unmake", actor, _atom("made", (bed,)), False, category,
                          bed=self.describe.fixture(bed, actor))

    def warm(self, actor: str, protected: frozenset[str], category: str = "background", item: str | None = None):
        """Take perishable food out of the fridge: it is no longer cold."""
        if item is None:
            cold = self.state.flagged("cold")
            item = self._pick([i for i in self._movable(protected, self._perishable) if i in cold])
        if item is None:
            return None
        loc = self.state.location(item)
        surfaces, ents, accepts = self._fixtures_of[("surface",)], self.scene.entities, self.scene.accepts
        if loc.predicate in ("on", "inside"):
            room = ents[loc.args[1]].room
            dests = [f for f in surfaces if ents[f].room == room and accepts(f, item)]
        else:
            dests = []
        dest = self._pick(dests) or self._pick([f for f in surfaces if accepts(f, item)])
        if dest is None:
            return None
        new = self.place_atom(item, dest)
        cold = _atom("cold", (item,))
        add, delete = frozenset({new}), frozenset({loc, cold})
        text = self._say("warm", actor, item=self.describe.item(item, actor), prep="on",
                         dest=self.describe.fixture(dest, actor))
        return HumanEvent("warm", actor, add, delete, text, add, delete, category, (item, dest))

    def go(self, actor: str, protected: frozenset[str], category: str = "background", room: str | None = None):
        here = self.state.room_of(actor)
        room = room or self._pick([r for r in self.scene.room_names if r != here])
        if room is None or room == here:
            return None
        add, delete = frozenset({_atom("in-room", (actor, room))}), frozenset({_atom("in-room", (actor, here))})
        text = self._say("go", actor, room=self.describe.room(room))
        return HumanEvent("go", actor, add, delete, text, add, delete, category, (actor, room))

    # ----------------------------------------------------------------- sampling
    def background(self, protected: frozenset[str], actor: str | None = None) -> HumanEvent | None:
        """A random everyday event by `actor` (default: a random person) that leaves `protected` alone."""
        kinds, _, cdf = _background_kinds()
        # What `rng.choice(len(kinds), p=p)` draws (one `random()` searched in the same cdf), without its checks.
        kind = kinds[bisect_right(cdf, self.rng.random())]
        actors = [a for a in self.people if a not in protected] or self.people
        picked = self._pick(actors)
        actor = actor or picked
        if kind == "move":
            item = self._pick(self._movable(protected))
            return None if item is None else self.move(actor, item)
        return getattr(self, _METHODS[kind])(actor, protected)
