"""Household tasks: what people ask the robot to do, in words, with the ground-truth PDDL goal.

`TaskGenerator.sample` draws a task of a given kind from the current state, together with the setup
events that make it meaningful (someone breaks a glass before asking to throw broken things away).
`TaskGenerator.disturb` draws a reset, an addition or a relocation aimed at the active task.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

from servicerobot.envs.household.events import HumanEvent, HumanProcess
from servicerobot.envs.household.language import TASK_TEMPLATES, render_template
from servicerobot.pddl import Atom
from servicerobot.scenes.household import HouseholdScene

__all__ = ["DISTURBANCES", "TASK_KINDS", "Task", "TaskGenerator"]

TASK_KINDS: tuple[str, ...] = ("pick_place", "hand_over", "wash_dishes", "make_bed", "discard_broken",
                               "keep_cold", "lights_off", "laundry", "organise_shelf")

# Which disturbance categories make sense for each task kind.
DISTURBANCES: dict[str, tuple[str, ...]] = {
    "pick_place": ("relocation",),
    "hand_over": ("relocation",),
    "wash_dishes": ("reset", "addition", "relocation"),
    "make_bed": ("reset",),
    "discard_broken": ("addition", "relocation"),
    "keep_cold": ("reset", "relocation"),
    "lights_off": ("reset", "addition"),
    "laundry": ("reset", "relocation"),
    "organise_shelf": ("reset", "relocation"),
}


@dataclass(frozen=True)
class Task:
    """A task as spoken (`text` by `speaker`) and its ground truth (`goal`, PDDL)."""

    kind: str
    text: str
    speaker: str
    goal: str
    entities: frozenset[str]
    budget: int
    setup: tuple[HumanEvent, ...] = field(default=())

    def to_json(self) -> dict:
        return {"kind": self.kind, "text": self.text, "speaker": self.speaker, "goal": self.goal,
                "budget": self.budget, "entities": sorted(self.entities)}


def _conj(atoms: list[str]) -> str:
    return atoms[0] if len(atoms) == 1 else "(and " + " ".join(atoms) + ")"


class TaskGenerator:
    """Draws tasks and task disturbances from the current state with the task random generator."""

    def __init__(self, humans: HumanProcess, rng: np.random.Generator, steps_per_goal_object: int = 25):
        self.humans = humans
        self.state = humans.state
        self.scene = humans.scene
        self.rng = rng
        self.d = humans.describe
        self.per_object = steps_per_goal_object
        ents = self.scene.entities
        self.of_type = {}
        for name, e in ents.items():
            self.of_type.setdefault(e.pddl_type, []).append(name)
        for v in self.of_type.values():
            v.sort()
        self._items_of: dict[tuple[str, ...] | None, list[str]] = {}  # _free_items' candidates by types
        self._chilled: list[str] | None = None  # what keep_cold may ask for (see there)

    def _pick(self, seq):
        return seq[int(self.rng.integers(len(seq)))] if seq else None

    def _say(self, kind: str, **fields: str) -> str:
        return render_template(self._pick(TASK_TEMPLATES[kind]), **fields)

    def _budget(self, n_objects: int) -> int:
        return 40 + self.per_object * n_objects

    def _free_items(self, pddl_types: tuple[str, ...] | None = None) -> list[str]:
        """Items (of `pddl_types`, default any) that sit on or in a fixture or that a person holds."""
        return list(filter(self.state.placed.__contains__, self._items_of_types(pddl_types)))

    def _items_of_types(self, pddl_types: tuple[str, ...] | None) -> list[str]:
        """The items of `pddl_types` (default any), in `humans.items` order."""
        among = self._items_of.get(pddl_types)
        if among is None:
            if not pddl_types:
                among = self.humans.items
            elif len(pddl_types) == 1:  # of_type is sorted like humans.items
                items = self.humans.item_set
                among = [i for i in self.of_type.get(pddl_types[0], []) if i in items]
            else:
                among = [i for i in self.humans.items if self.scene.entities[i].pddl_type in pddl_types]
            self._items_of[pddl_types] = among
        return among

    def sample(self, kind: str) -> Task | None:
        """A task of `kind` for the current state, or None when the house cannot host one now."""
        speaker = self._pick(self.humans.people)
        return getattr(self, "_" + kind)(speaker)

    # ------------------------------------------------------------------ task kinds
    def _pick_place(self, speaker: str) -> Task | None:
        where, dests, two = self.state.where, self.humans.non_sink_accepting, self.humans.two_places
        free = self._free_items()
        # Only items with somewhere else to go (a simulator's receptacle rules may leave an item none);
        # an item two fixtures take always has.
        item = self._pick(free if two.issuperset(free) else
                          [i for i in free if i in two or len(d := dests(i)) > 1 or (d and d[0] != where[i].args[1])])
        if item is None:
            return None
        src = where[item].args[1]
        # a destination the words can name alone, where the house has one
        others = [f for f in dests(item) if f != src]
        dest = self._pick([f for f in others if self.d.names_one(f)] or others)
        atom = self.humans.place_atom(item, dest)
        prep = "on" if atom.predicate == "on" else "in"
        text = self._say("pick_place", item=self.d.item(item, speaker), prep=prep,
                         dest=self.d.fixture(dest, speaker))
        return Task("pick_place", text, speaker, str(atom), frozenset({item, dest}), self._budget(1))

    def _hand_over(self, speaker: str) -> Task | None:
        person = speaker if self.rng.random() < 0.5 else self._pick(self.humans.people)
        where = self.state.where
        has = {i for i in self.state.held if where[i].args[1] == person}  # what `person` holds already
        items = self._free_items()
        if has:
            items = [i for i in items if i not in has]
        item = self._pick(items)
        if item is None:
            return None
        if person == speaker:
            text = self._say("hand_over_me", item=self.d.item(item, speaker))
        else:
            text = self._say("hand_over", item=self.d.item(item, speaker), person=self.d.person(person))
        goal = str(Atom("held-by", (item, person)))
        return Task("hand_over", text, speaker, goal, frozenset({item, person}), self._budget(1))

    def _dirty_dishes(self) -> list[str]:
        dirty, discarded = self.state.flagged("dirty"), self.state.flagged("discarded")
        return [i for i in self.of_type.get("dish", []) if i in dirty and i not in discarded]

    def _wash_dishes(self, speaker: str) -> Task | None:
        if not self.of_type.get("sink"):
            return None
        setup = []
        if len(self._dirty_dishes()) < 2:
            event = self.humans.dirty(speaker, frozenset(), category="setup")
            if event is not None:
                setup.append(event)
                self.state.apply(event.add, event.delete)
        dirty = self._dirty_dishes()
        if not dirty:
            return None
        text = self._say("wash_dishes")
        goal = "(forall (?d - dish) (or (not (dirty ?d)) (discarded ?d)))"
        return Task("wash_dishes", text, speaker, goal, frozenset(dirty), self._budget(len(dirty)), tuple(setup))

    def _make_bed(self, speaker: str) -> Task | None:
        beds = self.of_type.get("bed", [])
        bed = self._pick(beds)
        if bed is None:
            return None
        setup = []
        if Atom("made", (bed,)) in self.state:
            owner = self.scene.entities[bed].owner
            actor = owner.lower() if owner else speaker
            event = self.humans.unmake(actor, frozenset(), category="setup", bed=bed)
            setup.append(event)
            self.state.apply(event.add, event.delete)
        text = self._say("make_bed", bed=self.d.fixture(bed, speaker),
                         room=self.d.room(self.scene.entities[bed].room))
        return Task("make_bed", text, speaker, str(Atom("made", (bed,))), frozenset({bed}), self._budget(1),
                    tuple(setup))

    def _broken(self) -> list[str]:
        discarded, items = self.state.flagged("discarded"), self.humans.item_set
        # humans.items is sorted, so sorting the (few) broken names gives its order
        return [i for i in sorted(self.state.flagged("broken")) if i in items and i not in discarded]

    def _discard_broken(self, speaker: str) -> Task | None:
        if not self.of_type.get("trashcan"):
            return None
        setup = []
        for _ in range(int(self.rng.integers(1, 3))):
            actor = self._pick(self.humans.people)
            event = self.humans.break_(actor, frozenset(), category="setup")
            if event is not None:
                setup.append(event)
                self.state.apply(event.add, event.delete)
        broken = self._broken()
        if not broken:
            return None
        text = self._say("discard_broken")
        goal = "(forall (?i - item) (imply (broken ?i) (discarded ?i)))"
        return Task("discard_broken", text, speaker, goal, frozenset(broken), self._budget(len(broken)),
                    tuple(setup))

    def _keep_cold(self, speaker: str) -> Task | None:
        fridges = self.of_type.get("fridge", [])
        if self._chilled is None:  # the food the first fridge would keep cold, wherever it is now
            self._chilled = [i for i in self._items_of_types(("food",)) if fridges
                             and self.scene.entities[i].attributes.get("perishable") and self.scene.accepts(fridges[0], i)]
        perishable = list(filter(self.state.placed.__contains__, self._chilled))
        if not fridges or not perishable:
            return None
        setup = []
        cold = self.state.flagged("cold")
        warm = [i for i in perishable if i not in cold]
        while len(warm) < 1 or (len(warm) < 2 and self.rng.random() < 0.5):
            cands = [i for i in perishable if i not in warm]
            if not cands:
                break
            item = self._pick(cands)
            actor = self._pick(self.humans.people)
            event = self.humans.warm(actor, frozenset(), category="setup", item=item)
            if event is None:
                break
            setup.append(event)
            self.state.apply(event.add, event.delete)
            warm.append(item)
        if not warm:
            return None
        warm = sorted(warm)[:3]
        fridge = fridges[0]
        goal = _conj([f"(inside {i} {fridge})" for i in warm] + [f"(cold {i})" for i in warm])
        text = self._say("keep_cold", items=self.d.items(warm, speaker), fridge=self.d.fixture(fridge, speaker),
                         **self.d.agreement(len(warm)))
        return Task("keep_cold", text, speaker, goal, frozenset(warm) | {fridge}, self._budget(len(warm)),
                    tuple(setup))

    def _lights_off(self, speaker: str) -> Task | None:
        setup = []
        lit, flowing = self.state.flagged("light-on"), self.state.flagged("faucet-on")
        on = [lt for lt in self.of_type.get("light", []) if lt in lit]
        running = [s for s in self.of_type.get("sink", []) if s in flowing]
        if len(on) + len(running) < 2:
            actor = self._pick(self.humans.people)
            event = self.humans.faucet(actor, frozenset(), category="setup", on=True) if not running else \
                self.humans.light(actor, frozenset(), category="setup", on=True)
            if event is not None:
                setup.append(event)
                self.state.apply(event.add, event.delete)
        lit, flowing = self.state.flagged("light-on"), self.state.flagged("faucet-on")
        on = [lt for lt in self.of_type.get("light", []) if lt in lit]
        running = [s for s in self.of_type.get("sink", []) if s in flowing]
        if not on and not running:
            return None
        goal = "(and (forall (?l - light) (not (light-on ?l))) (forall (?s - sink) (not (faucet-on ?s))))"
        text = self._say("lights_off")
        return Task("lights_off", text, speaker, goal, frozenset(on + running), self._budget(len(on) + len(running)),
                    tuple(setup))

    def _laundry(self, speaker: str) -> Task | None:
        clothes = self._free_items(("clothing",))
        if not clothes or not self.of_type.get("washer") or not self.of_type.get("dryer"):
            return None
        setup = []
        soiled = self.state.flagged("dirty")
        dirty = [c for c in clothes if c in soiled]
        if not dirty:
            item = self._pick(clothes)
            event = self.humans.soil(speaker, frozenset(), category="setup", item=item)
            setup.append(event)
            self.state.apply(event.add, event.delete)
            dirty = [item]
        chosen = sorted(self.rng.choice(dirty, size=min(len(dirty), int(self.rng.integers(1, 4))),
                                        replace=False).tolist())
        goal = _conj([f"(not (dirty {c}))" for c in chosen] + [f"(not (wet {c}))" for c in chosen])
        text = self._say("laundry", items=self.d.items(chosen, speaker), **self.d.agreement(len(chosen)))
        return Task("laundry", text, speaker, goal, frozenset(chosen), self._budget(len(chosen) + 2), tuple(setup))

    def _organise_shelf(self, speaker: str) -> Task | None:
        shelves = self.of_type.get("shelf", [])
        books_by_room: dict[str, list[str]] = {}
        for b in self._free_items(("book",)):
            loc = self.state.location(b)
            if loc.predicate == "held-by":
                continue
            books_by_room.setdefault(self.state.room_of(b), []).append(b)
        options = []
        where, accepts = self.state.where, self.scene.accepts
        # the default rules accept everything: no call per shelf and book then
        accept_all = type(self.scene).accepts is HouseholdScene.accepts
        rooms = sorted(books_by_room.items())
        shelved: dict[tuple[str, str], int] = {}  # (room, fixture) -> how many of the room's books are on it
        for room, books in rooms:
            for b in books:
                if where[b].predicate == "on":
                    key = (room, where[b].args[1])
                    shelved[key] = shelved.get(key, 0) + 1
        for shelf in shelves:
            for room, books in rooms:
                todo = len(books) - shelved.get((room, shelf), 0)  # the books not on this shelf yet
                if not accept_all and not all(accepts(shelf, b) for b in books):
                    continue
                if 1 <= todo <= 4:
                    options.append((shelf, room, sorted(books)))
        choice = self._pick(options)
        if choice is None:
            return None
        shelf, room, books = choice
        goal = _conj([f"(on {b} {shelf})" for b in books])
        text = self._say("organise_shelf", room=self.d.room(room), shelf=self.d.fixture(shelf, speaker))
        return Task("organise_shelf", text, speaker, goal, frozenset(books) | {shelf}, self._budget(len(books)))

    # ------------------------------------------------------------------ disturbances
    def disturb(self, task: Task, category: str) -> HumanEvent | None:
        """An event of `category` (reset / addition / relocation) aimed at the active task, or None."""
        actor = self._pick(self.humans.people)
        h = self.humans
        items = sorted(e for e in task.entities if e in h.item_set)
        free = [i for i in items if i in self.state.placed]  # on or in a fixture, or held by a person
        if category == "relocation":
            if task.kind == "hand_over":
                person = next(e for e in task.entities if self.scene.entities[e].pddl_type == "person")
                if self.rng.random() < 0.5:
                    return h.go(person, frozenset(), category="relocation")
            target = self._pick(free)
            if target is None:
                return None
            dest = self._pick([f for f in h.destinations(target, self.state.location(target).args[1])
                               if f not in task.entities])
            return None if dest is None else h.move(actor, target, dest, category="relocation")
        if category == "addition":
            if task.kind == "wash_dishes":
                return h.dirty(actor, frozenset(), category="addition")
            if task.kind == "discard_broken":
                return h.break_(actor, frozenset(), category="addition")
            if task.kind == "lights_off":
                return h.light(actor, frozenset(), category="addition", on=True)
            return None
        # reset: undo progress the robot has made
        if task.kind == "wash_dishes":
            washed = [i for i in items if Atom("dirty", (i,)) not in self.state and i in free]
            return h.dirty(actor, frozenset(), category="reset", item=self._pick(washed)) if washed else None
        if task.kind == "make_bed":
            bed = next(iter(task.entities))
            if Atom("made", (bed,)) in self.state:
                return h.unmake(actor, frozenset(), category="reset", bed=bed)
            return None
        if task.kind == "lights_off":
            off = [e for e in sorted(task.entities) if self.scene.entities[e].pddl_type == "light"
                   and Atom("light-on", (e,)) not in self.state]
            light = self._pick(off)
            return h.light(actor, frozenset(), category="reset", on=True, light=light) if light else None
        if task.kind == "keep_cold":
            done = [i for i in free if Atom("cold", (i,)) in self.state]
            return h.warm(actor, frozenset(), category="reset", item=self._pick(done)) if done else None
        if task.kind == "laundry":
            clean = [i for i in free if Atom("dirty", (i,)) not in self.state]
            return h.soil(actor, frozenset(), category="reset", item=self._pick(clean)) if clean else None
        if task.kind == "organise_shelf":
            shelf = next(e for e in task.entities if self.scene.entities[e].pddl_type == "shelf")
            shelved = [i for i in free if Atom("on", (i, shelf)) in self.state]
            target = self._pick(shelved)
            if target is None:
                return None
            dest = self._pick([f for f in h.destinations(target, shelf) if f not in task.entities])
            return h.move(actor, target, dest, category="reset") if dest else None
        return None
