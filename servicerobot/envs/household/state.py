"""The true state of the household world: a frozenset of atoms plus indexes kept in step with it."""

from __future__ import annotations

from collections.abc import Iterable

from servicerobot.pddl import Atom
from servicerobot.scenes.household import ROBOT, HouseholdScene

__all__ = ["LOCATION_PREDICATES", "HouseholdState"]

# The predicates that say where an item is; an item has exactly one of them (functional relation).
LOCATION_PREDICATES = ("on", "inside", "holding", "held-by", "discarded")
# where the item is in each binary one ("discarded" is unary)
_ITEM_ARG = {"on": 0, "inside": 0, "holding": 1, "held-by": 0}


class HouseholdState:
    """Ground atoms of the true world, indexed by argument for the queries the world makes every step.

    `atoms` is an immutable snapshot: a reference taken before a change keeps the old state. `live` is the
    same atoms as one set changed in place, for tests made at once (a step changes it without copying
    the whole state; `atoms` is frozen again only when read). `version` increases with every change (it
    keys percept caches). Indexes: `by_arg` (entity -> its atoms), `where` (item -> its location atom),
    `placed` (the items on or in a fixture or held by a person: not the robot's, not discarded), `held`
    (those a person holds) and `flags` (unary predicate -> the names it holds of; `flags_version` increases with
    every change that may touch them).
    """

    def __init__(self, scene: HouseholdScene, atoms: Iterable[Atom]):
        self.scene = scene
        self.live: set[Atom] = set()
        self._frozen: frozenset[Atom] | None = frozenset()
        self.by_arg: dict[str, set[Atom]] = {name: set() for name in scene.entities}
        self.where: dict[str, Atom] = {}
        self.placed: set[str] = set()
        self.held: set[str] = set()
        self.flags: dict[str, set[str]] = {}
        self.flags_version = 0  # increases whenever a unary atom is added or deleted (`flags` may change)
        self.version = 0
        self.last_change: tuple[frozenset[Atom], frozenset[Atom]] = (frozenset(), frozenset())  # that made `version`
        self.apply(frozenset(atoms), frozenset())

    @property
    def atoms(self) -> frozenset[Atom]:
        """The true atoms now, as a frozenset that later changes leave alone (the same object until one)."""
        frozen = self._frozen
        if frozen is None:
            frozen = self._frozen = frozenset(self.live)
        return frozen

    def __contains__(self, atom: Atom) -> bool:
        return atom in self.live

    def apply(self, add: frozenset[Atom], delete: frozenset[Atom], disjoint: bool = False) -> None:
        """Delete then add (PDDL order), updating the indexes. `disjoint`: the caller knows that no atom is
        both added and deleted (an action's compiled effects), so that is not checked."""
        if delete:
            if add and not disjoint and not delete.isdisjoint(add):
                delete = delete - add
        elif not add:
            return
        by_arg, where, flags, placed, held = self.by_arg, self.where, self.flags, self.placed, self.held
        for atom in delete:
            predicate, args = atom
            if len(args) == 2:  # most atoms: two entities, no flag
                by_arg[args[0]].discard(atom)  # a no-op for atoms that were not true
                by_arg[args[1]].discard(atom)
                slot = _ITEM_ARG.get(predicate)
                if slot is not None and where.get(args[slot]) == atom:
                    del where[args[slot]]
                    placed.discard(args[slot])
                    held.discard(args[slot])
                continue
            for arg in args:
                by_arg[arg].discard(atom)
            if len(args) == 1:
                self.flags_version += 1
                names = flags.get(predicate)
                if names is not None:
                    names.discard(args[0])
                if predicate == "discarded" and where.get(args[0]) == atom:
                    del where[args[0]]
            else:
                slot = _ITEM_ARG.get(predicate)
                if slot is not None and where.get(args[slot]) == atom:
                    del where[args[slot]]
                    placed.discard(args[slot])
                    held.discard(args[slot])
        for atom in add:
            predicate, args = atom
            if len(args) == 2 and predicate not in _ITEM_ARG:  # most atoms: two entities, no location
                by_arg[args[0]].add(atom)
                by_arg[args[1]].add(atom)
                continue
            for arg in args:
                by_arg[arg].add(atom)
            if len(args) == 1:
                self.flags_version += 1
                names = flags.get(predicate)
                if names is None:
                    names = flags[predicate] = set()
                names.add(args[0])
                if predicate == "discarded":
                    where[args[0]] = atom
                    placed.discard(args[0])
                    held.discard(args[0])
            else:
                slot = _ITEM_ARG.get(predicate)
                if slot is not None:
                    where[args[slot]] = atom
                    if slot:  # holding: the robot's
                        placed.discard(args[1])
                        held.discard(args[1])
                    else:
                        placed.add(args[0])
                        if predicate == "held-by":
                            held.add(args[0])
                        else:
                            held.discard(args[0])
        live = self.live
        if delete:
            live.difference_update(delete)
        if add:
            live.update(add)
        self.last_change = (add, delete)
        self._frozen = None
        self.version += 1

    def flagged(self, predicate: str) -> set[str] | tuple[()]:
        """The names the unary `predicate` holds of now (`dirty` -> the dirty things); read, do not change."""
        return self.flags.get(predicate, ())

    def about(self, entity: str) -> list[Atom]:
        """Facts whose subject (first argument) is `entity`."""
        return [a for a in self.by_arg[entity] if a.args[0] == entity]

    def location(self, item: str) -> Atom | None:
        """The atom that says where `item` is: on / inside / held-by / holding / discarded."""
        found = self.where.get(item)
        if found is not None:
            return found
        for a in self.by_arg[item]:  # not an item: an atom that places something on or with it
            if a.predicate in LOCATION_PREDICATES:
                return a
        return None

    def room_of(self, entity: str) -> str | None:
        """The room an entity is in, following items to their fixture or holder."""
        e = self.scene.entities[entity]
        if e.room is not None:
            return e.room
        for a in self.by_arg[entity]:
            if a.predicate == "in-room" and a.args[0] == entity:
                return a.args[1]
            if a.predicate in ("on", "inside", "held-by") and a.args[0] == entity:
                return self.room_of(a.args[1])
            if a.predicate == "holding" and a.args[1] == entity:
                return self.room_of(ROBOT)
        return None

    def robot_room(self) -> str:
        return self.room_of(ROBOT)

    def contents(self, fixture: str) -> list[str]:
        """Items on or inside a fixture."""
        return sorted(a.args[0] for a in self.by_arg[fixture]
                      if a.predicate in ("on", "inside") and a.args[1] == fixture)

    def held_by(self, holder: str) -> list[str]:
        """Items a person holds (`held-by`) or the robot holds (`holding`)."""
        if holder == ROBOT:
            return sorted(a.args[1] for a in self.by_arg[holder] if a.predicate == "holding")
        return sorted(a.args[0] for a in self.by_arg[holder] if a.predicate == "held-by")

    def people_in(self, room: str) -> list[str]:
        return sorted(a.args[0] for a in self.by_arg[room]
                      if a.predicate == "in-room" and a.args[0] != ROBOT
                      and self.scene.entities[a.args[0]].pddl_type == "person")

    def is_closed(self, fixture: str) -> bool:
        return Atom("closed", (fixture,)) in self.live

    def visible(self) -> list[str]:
        """Entities the robot perceives: its room, the fixtures and people there, items on surfaces,
        inside open containers, held by people there, and held by the robot."""
        room = self.robot_room()
        seen = [room, ROBOT]
        for fixture in self.scene.fixtures_in(room):
            seen.append(fixture)
            if not self.is_closed(fixture):
                seen.extend(self.contents(fixture))
        for person in self.people_in(room):
            seen.append(person)
            seen.extend(self.held_by(person))
        seen.extend(self.held_by(ROBOT))
        return seen
