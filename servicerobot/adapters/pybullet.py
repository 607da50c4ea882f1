"""PyBullet poses -> facts of the `tamp-world` domain, and the robot's percept in the household format.

`PyBulletAdapter.facts` is the true state of the PyBullet world: static map facts (rooms, places, reach,
approach, guards), facts read from geometry every time (the robot's place and room from its pose via
`TampMap.place_at`; `item-on` from the item resting on a furniture top, by AABB; `in-room` of items on the
floor; `holding` / `hand-empty` from the attachment), and the inspection and visit records. `percept` says
what the robot sees: everything in its room, and furniture or floor items in other rooms within
`view_radius` that a ray from its sensor reaches (`rayTestBatch`), with the items on seen furniture.
"""

from __future__ import annotations

import math
from collections.abc import Iterable
from typing import Any

from servicerobot.pddl import Atom
from servicerobot.scenes.apartment import ROBOT, Layout
from servicerobot.scenes.tamp_map import TampMap

__all__ = ["WORLD_GROUP", "PyBulletAdapter", "atom_to_triplet"]

# The collision filter group of walls, furniture and items: the sensor's rays test against it only. The
# simulator (`servicerobot.envs.pybullet.sim`) puts its bodies in this group.
WORLD_GROUP = 1

SUPPORT_BELOW, SUPPORT_ABOVE = 0.03, 0.05  # an item rests on a top when its bottom is this close to it
ON_FLOOR = 0.05


def atom_to_triplet(atom: Atom) -> list:
    """(item-on a b) -> ["a", "item-on", "b"]; (safe a) -> ["a", "safe", True]."""
    return [atom.args[0], atom.predicate, atom.args[1] if len(atom.args) > 1 else True]


class PyBulletAdapter:
    """Reads the PyBullet scene of `layout` as facts and percepts.

    Args:
        sim: the scene, a `servicerobot.envs.pybullet.sim.Sim` (its bodies are named as in `layout`).
        layout: the apartment spec.
        tamp_map: its places layer (static relations in `metadata`).
        sensor_height: height of the robot's camera for line-of-sight rays (below the walls' top).
        view_radius: how far the robot sees into other rooms, metres.
    """

    def __init__(self, sim: Any, layout: Layout, tamp_map: TampMap, sensor_height: float = 0.95,
                 view_radius: float = 6.0):
        self.sim = sim
        self.layout = layout
        self.map = tamp_map
        self.sensor_height = sensor_height
        self.view_radius = view_radius
        self.types: dict[str, str] = {ROBOT: "robot"}
        self.types.update({r.name: "room" for r in layout.rooms})
        self.types.update({f.name: "furniture" for f in layout.furniture})
        self.types.update({i.name: i.kind for i in layout.items})
        self.furniture = {f.name: f for f in layout.furniture}
        self.items = {i.name: i for i in layout.items}
        self._static = frozenset(self._static_facts())

    # ------------------------------------------------------------------ facts
    def _static_facts(self) -> Iterable[Atom]:
        meta = self.map.metadata
        for name, place in self.map.places.items():
            yield Atom("place-in", (name, place.region))
        for f in self.layout.furniture:
            yield Atom("in-room", (f.name, f.room))
        for x, places in meta["reach"].items():
            for pl in places:
                yield Atom("reach", (pl, x))
        for x, pl in meta["approach"].items():
            yield Atom("approach", (pl, x))
        for item, places in meta["guards"].items():
            for pl in places:
                yield Atom("guards", (item, pl))
        for i in self.layout.items:
            if i.kind != "box":
                yield Atom("graspable", (i.name,))
            if i.suspicious:
                yield Atom("suspicious", (i.name,))

    @property
    def static_facts(self) -> frozenset[Atom]:
        """Facts that never change in an episode (map structure, types of things)."""
        return self._static

    def robot_xy(self) -> tuple[float, float]:
        x, y, _ = self.sim.robot_pose()
        return x, y

    def robot_place(self) -> str:
        """The place the robot stands in (`TampMap.place_at`; the nearest one when between places)."""
        xy = self.robot_xy()
        return self.map.place_at(xy) or self.map.nearest_place(xy)

    def robot_room(self) -> str:
        return self.map.places[self.robot_place()].region

    def support_of(self, item: str) -> str | None:
        """The furniture whose top `item` rests on (AABB: centre over the top, bottom at its height)."""
        (lo, hi) = self.sim.aabb(item)
        cx, cy = (lo[0] + hi[0]) / 2, (lo[1] + hi[1]) / 2
        for f in self.layout.furniture:
            flo, fhi = self.sim.aabb(f.name)
            if flo[0] <= cx <= fhi[0] and flo[1] <= cy <= fhi[1] and \
                    fhi[2] - SUPPORT_BELOW <= lo[2] <= fhi[2] + SUPPORT_ABOVE:
                return f.name
        return None

    def location(self, item: str) -> Atom | None:
        """The fact that says where `item` is: holding, item-on, or in-room for an item on the floor."""
        if self.sim.held == item:
            return Atom("holding", (ROBOT, item))
        support = self.support_of(item)
        if support is not None:
            return Atom("item-on", (item, support))
        lo, hi = self.sim.aabb(item)
        if lo[2] <= ON_FLOOR:
            room = self.layout.room_at(((lo[0] + hi[0]) / 2, (lo[1] + hi[1]) / 2))
            if room is not None:
                return Atom("in-room", (item, room))
        return None

    def geometric_facts(self) -> set[Atom]:
        """Facts read from the poses now: robot place and room, hand, where every item is."""
        place = self.robot_place()
        facts = {Atom("at-place", (ROBOT, place)), Atom("in-room", (ROBOT, self.map.places[place].region))}
        if self.sim.held is None:
            facts.add(Atom("hand-empty", (ROBOT,)))
        for item in self.items:
            loc = self.location(item)
            if loc is not None:
                facts.add(loc)
        return facts

    def facts(self, safe: Iterable[str] = (), visited: Iterable[str] = ()) -> frozenset[Atom]:
        """The whole true state: static facts, geometric facts, and the inspection and visit records."""
        extra = {Atom("safe", (i,)) for i in safe} | {Atom("visited", (p,)) for p in visited}
        return self._static | self.geometric_facts() | extra

    # ------------------------------------------------------------------ perception
    def _sensor(self) -> tuple[float, float, float]:
        x, y = self.robot_xy()
        return x, y, self.sensor_height

    def _target(self, name: str) -> tuple[float, float, float]:
        lo, hi = self.sim.aabb(name)
        z = min(hi[2] - 0.02, self.sensor_height - 0.05) if name in self.furniture else (lo[2] + hi[2]) / 2
        return (lo[0] + hi[0]) / 2, (lo[1] + hi[1]) / 2, z

    def sees(self, names: list[str]) -> set[str]:
        """Which of `names` a ray from the sensor reaches first, within `view_radius`."""
        sensor = self._sensor()
        targets = {n: self._target(n) for n in names}
        names = [n for n in names if math.dist(sensor[:2], targets[n][:2]) <= self.view_radius]
        if not names:
            return set()
        sim = self.sim
        hits = sim.p.rayTestBatch([sensor] * len(names), [targets[n] for n in names],
                                  collisionFilterMask=WORLD_GROUP, physicsClientId=sim.cid)
        return {n for n, hit in zip(names, hits) if hit[0] == sim.body[n]}

    def visible(self, atoms: frozenset[Atom]) -> list[str]:
        """Entities in view: the robot, its room and everything in it, what it holds, and furniture and floor
        items of other rooms in line of sight (with what stands on that furniture)."""
        room = self.robot_room()
        where: dict[str, Atom] = {}
        for a in atoms:
            if a.predicate in ("item-on", "in-room") and a.args[0] in self.items:
                where[a.args[0]] = a
            elif a.predicate == "holding":
                where[a.args[1]] = a
        far_furniture = [f.name for f in self.layout.furniture if f.room != room]
        far_items = [i for i, a in where.items() if a.predicate == "in-room" and a.args[1] != room]
        seen = self.sees(far_furniture + far_items)
        furniture = [f.name for f in self.layout.furniture if f.room == room or f.name in seen]
        out = [ROBOT, room] + furniture
        for item in self.items:
            a = where.get(item)
            if a is None:
                continue
            if a.predicate == "holding" or (a.predicate == "item-on" and a.args[1] in furniture) or \
                    (a.predicate == "in-room" and (a.args[1] == room or item in seen)):
                out.append(item)
        return out

    def percept(self, atoms: frozenset[Atom]) -> dict:
        """`{"room", "entities", "facts", "observed"}`: closed world over the visible entities, whose
        contents are seen in full for the room, the robot and every visible piece of furniture. So every
        fact about a visible entity is there, and every fact whose object is observed (the room's places,
        the places that reach a seen table): a fact left out would read as false."""
        visible = self.visible(atoms)
        vis = set(visible)
        room = self.robot_room()
        observed = [room] + [n for n in visible if n in self.furniture] + [ROBOT]
        seen = vis | set(observed)
        facts = [atom_to_triplet(a) for a in sorted(atoms)
                 if a.args[0] in vis or (len(a.args) == 2 and a.args[1] in seen)]
        return {"room": room, "entities": {n: self.types[n] for n in visible}, "facts": facts,
                "observed": observed}

    def self_percept(self, atoms: frozenset[Atom]) -> dict:
        """The robot's own facts and room only."""
        facts = [atom_to_triplet(a) for a in sorted(atoms) if a.args[0] == ROBOT]
        return {"room": self.robot_room(), "entities": {ROBOT: "robot"}, "facts": facts, "observed": [ROBOT]}
