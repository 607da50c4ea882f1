"""Goals written by hand for Context Matters tasks, grounded in each instance's scene in its split's domain.

A person's reading of a task ("every apple into the fridge in the kitchen; the mop clean") is written once per
task as clauses over object *classes*, rooms and the roles the domain's predicates play
(`cm_domain.DomainWorld.roles`), never over one scene's object names; `HandInterpreter` grounds the clauses in
each instance and answers `interpret_task` with the goal in the split domain's own predicates, so
`cm_language.solve_in_split_domain` plans, relaxes and scores it as it would a language model's goal.

Clauses (`Put`, `MoveTo`, `Make`, `Floors`, `Empty`, `PutBack`, `Recycle`) say what becomes true of which
things; what the scene lacks (no fruit bowl, three glasses of five, a target the domain cannot put things
in) is dropped with its reason, and the interpreter raises `TaskInfeasible` with what can still be done (or
nothing: the task is refused up front), so a reading that finds the task infeasible counts as a relaxation.
"""

from __future__ import annotations

from dataclasses import dataclass
from itertools import combinations

from servicerobot.errors import ServiceRobotError, TaskInfeasible

__all__ = ["Empty", "Floors", "HandInterpreter", "Make", "MoveTo", "Put", "PutBack", "Recycle", "ground"]


@dataclass(frozen=True)
class Put:
    """Things of `classes` (all, or `count` of them, or `each`: one of every class) on or in the `target`
    class's object (in a room of category `room` when there is one); the domain's support or containment
    predicate is chosen by the target's type."""

    classes: tuple[str, ...]
    target: tuple[str, ...]
    room: str | None = None
    count: int | None = None
    each: bool = False


@dataclass(frozen=True)
class MoveTo:
    """Things (or furniture) of `classes` in a room of category `room` (the domain's location predicate);
    `count` of them when given, else all, every class required."""

    classes: tuple[str, ...]
    room: str
    count: int | None = None
    optional: tuple[str, ...] = ()  # classes moved when the scene has them, not missed when it does not


@dataclass(frozen=True)
class Make:
    """A state (`role`: discarded, clean, ...) of the things of `classes`: one of each (`each`) or all."""

    classes: tuple[str, ...]
    role: str
    each: bool = False


@dataclass(frozen=True)
class Floors:
    """The floors of the rooms of these categories clean (the domain's clean-floor-like room predicate)."""

    rooms: tuple[str, ...]


@dataclass(frozen=True)
class Empty:
    """Nothing left inside the objects of `classes` (of what the scene states is in them)."""

    classes: tuple[str, ...]


@dataclass(frozen=True)
class PutBack:
    """What the scene states is inside the objects of `sources` is, at the end, inside the `into` class's
    object (None: back where it was)."""

    sources: tuple[str, ...]
    into: str | None = None


@dataclass(frozen=True)
class Recycle:
    """Each rubbish thing of `bins`' keys thrown away, when a bin of its kind (the value) is in the scene."""

    bins: tuple[tuple[str, str], ...]


def _classes_of(world, name: str) -> set[str]:
    obj = world.objects.get(name)
    if obj is None:
        return set()
    out = {obj.class_, obj.base or obj.class_}
    return out | {c[:-1] for c in out if c.endswith("s")}


def _things(dw, world, classes, of_type: str | None = None) -> list[str]:
    """The scene's things of these classes (of the domain type `of_type` or a subtype, when given)."""
    want = set(classes)
    return sorted(n for n in dw.objects if n not in dw.rooms and n != dw.robot and _classes_of(world, n) & want
                  and (of_type is None or dw.domain.types.is_subtype(dw.objects[n], of_type)))


def _rooms(dw, category: str) -> list[str]:
    return sorted(r for r, c in dw.rooms.items() if c == category)


def _relation(dw, item: str, target: str) -> str | None:
    """The domain's support or containment predicate whose argument types take `item` and `target`."""
    types = dw.domain.types
    for role in ("support", "contain"):
        pred = dw.roles.get(role)
        if pred is None:
            continue
        (_, t1), (_, t2) = dw.domain.predicates[pred].params
        if types.is_subtype(dw.objects[item], t1) and types.is_subtype(dw.objects[target], t2):
            return pred
    return None


def _room_predicate(dw, words: tuple[str, ...]) -> str | None:
    room_type = dw.objects[next(iter(dw.rooms))] if dw.rooms else None
    for p, decl in dw.domain.predicates.items():
        ws = p.lower().replace("_", "-").split("-")
        if len(decl.params) == 1 and decl.params[0][1] == room_type and all(w in ws for w in words):
            return p
    return None


def _targets(dw, world, classes, room: str | None) -> list[str]:
    """Every object of the target classes, those in a room of category `room` when there are any."""
    found = _things(dw, world, classes)
    there = [n for n in found if room and dw.room_of.get(n) in _rooms(dw, room)]
    return there or found


_MOST_PICKS = 256  # choices of things a counted clause is judged over (else: the things this reading picked)


def _distinct(lits: list[str], keys: list[str]) -> list[str]:
    """The literals whose keys were not seen before."""
    seen: set[str] = set()
    out = []
    for lit, key in zip(lits, keys):
        if key not in seen:
            seen.add(key)
            out.append(lit)
    return out


def ground(clauses, dw, world, any_target: bool = False) -> tuple[list[str], list[str]]:
    """(goal literals in the split domain's predicates, what was dropped and why) for one instance. With
    `any_target`, a thing put on or in a target may go to any object of the target's classes (in the room
    the reading names): `(or (is-in apple_1 fridge_3) (is-in apple_1 refrigerator_7))`, and a thing moved to
    a room may stand on or in anything there, to judge another reader's goal by the state it reaches rather
    than by the one object this reading picked."""
    lits: list[str] = []
    keys: list[str] = []  # per literal, the one this reading picked (judged literals line up with its own)
    dropped: list[str] = []
    contain = dw.roles.get("contain")
    inside = {a.args for a in dw.init if a.predicate == contain} if contain else set()
    for c in clauses:
        keys += lits[len(keys):]  # a clause's literals are their own keys unless it says otherwise
        if isinstance(c, Put):
            target = next(iter(_targets(dw, world, c.target, c.room)), None)
            where = f"{c.target[0].replace('_', ' ')}" + (f" in the {c.room.replace('_', ' ')}" if c.room else "")
            things = _things(dw, world, c.classes)
            if c.each:
                missing = [k for k in c.classes if not _things(dw, world, (k,))]
                dropped += [f"no {k.replace('_', ' ')} in the scene" for k in missing]
                things = [_things(dw, world, (k,))[0] for k in c.classes if k not in missing]
            elif c.count is not None:
                if len(things) < c.count:
                    dropped.append(f"{c.count} {'/'.join(c.classes)} asked, the scene has {len(things)}")
                things = things[:c.count]
            if not things:
                dropped.append(f"no {' or '.join(k.replace('_', ' ') for k in c.classes)} in the scene")
                continue
            if target is None:
                dropped.append(f"no {where} in the scene for the {'/'.join(c.classes)}")
                rooms, loc = _rooms(dw, c.room) if c.room else [], dw.roles.get("location")
                if rooms and loc is not None:  # the closest feasible reading: in that room ("no magazine rack")
                    dropped[-1] += f": in the {c.room.replace('_', ' ')} instead"
                    keys += [f"({loc} {t} {rooms[0]})" for t in things]
                    # judged, any room of that name will do ("the living room" of a building with two)
                    lits += [f"(or {' '.join(f'({loc} {t} {r})' for r in rooms)})" if any_target and len(rooms) > 1
                             else f"({loc} {t} {rooms[0]})" for t in things]
                continue
            for t in things:
                pred = _relation(dw, t, target)
                if pred is None:
                    dropped.append(f"in this domain a {dw.objects[target]} ({target}) cannot take a "
                                   f"{dw.objects[t]} ({t})")
                elif any_target:
                    alts = [f"({p} {t} {x})" for x in _targets(dw, world, c.target, c.room)
                            if (p := _relation(dw, t, x)) is not None]
                    lits.append(alts[0] if len(alts) == 1 else f"(or {' '.join(alts)})")
                    keys.append(f"({pred} {t} {target})")
                else:
                    lits.append(f"({pred} {t} {target})")
        elif isinstance(c, MoveTo):
            rooms = _rooms(dw, c.room)
            loc = dw.roles.get("location")
            if not rooms or loc is None:
                dropped.append(f"no {c.room.replace('_', ' ')} in the scene" if not rooms else
                               "the domain has no predicate for where things are")
                continue
            things = []
            for k in c.classes:
                found = _things(dw, world, (k,))
                if not found and k not in c.optional:
                    dropped.append(f"no {k.replace('_', ' ')} in the scene")
                things += found[:1] if c.count is not None else found
            if c.count is not None:
                if len(things) < c.count:
                    dropped.append(f"{c.count} of {'/'.join(c.classes)} asked, the scene has {len(things)}")
                things = things[:c.count]

            def there(t: str, loc: str = loc, room: str = rooms[0]) -> str:
                # judging another reader's state, a thing on or in something that stands in the room is in it
                # ("gather the parts in the dining room": on the dining table there)
                alts = [f"({p} {t} {x})" for x in sorted(dw.objects) if any_target and x != t and
                        dw.room_of.get(x) == room and (p := _relation(dw, t, x)) is not None]
                return f"(or ({loc} {t} {room}) {' '.join(alts)})" if alts else f"({loc} {t} {room})"

            if any_target and c.count is not None and things:
                # "at least one PC accessory": any of them, judged; one literal per thing this reading picked
                pool = _things(dw, world, c.classes)
                picks = list(combinations(pool, len(things)))
                if len(picks) <= _MOST_PICKS:
                    some = " ".join(f"(and {' '.join(there(t) for t in pick)})" for pick in picks)
                    lits += [f"(or {some})"] * len(things)
                    keys += [f"({loc} {t} {rooms[0]})" for t in things]
                    continue
            lits += [there(t) for t in things]
            keys += [f"({loc} {t} {rooms[0]})" for t in things]
        elif isinstance(c, Make):
            pred = dw.roles.get(c.role)
            if pred is None:
                dropped.append(f"the domain has no predicate for {c.role}")
                continue
            ptype = dw.domain.predicates[pred].params[0][1]
            if c.each:
                for k in c.classes:
                    found = _things(dw, world, (k,), ptype)
                    if found:
                        lits.append(f"({pred} {found[0]})")
                    else:
                        dropped.append(f"no {k.replace('_', ' ')} in the scene that can be {c.role}")
            else:
                lits += [f"({pred} {n})" for n in _things(dw, world, c.classes, ptype)]
        elif isinstance(c, Floors):
            pred = _room_predicate(dw, ("clean", "floor"))
            if pred is None:
                dropped.append("the domain has no predicate for a clean floor")
                continue
            for category in c.rooms:
                rooms = _rooms(dw, category)
                if rooms:
                    lits.append(f"({pred} {rooms[0]})")
                else:
                    dropped.append(f"no {category.replace('_', ' ')} in the scene to mop")
        elif isinstance(c, Empty):
            for k in c.classes:
                boxes = _things(dw, world, (k,))
                if not boxes:
                    dropped.append(f"no {k} in the scene to empty")
                lits += [f"(not ({contain} {x} {b}))" for x, b in sorted(inside) if b in boxes]
        elif isinstance(c, PutBack):
            into = next(iter(_targets(dw, world, (c.into,), None)), None) if c.into else None
            if c.into and into is None:
                dropped.append(f"no {c.into} in the scene to put things into")
                continue
            for k in c.sources:
                boxes = _things(dw, world, (k,))
                for x, b in sorted(inside):
                    if b in boxes:
                        lits.append(f"({contain} {x} {into or b})")
        elif isinstance(c, Recycle):
            pred = dw.roles.get("discarded")
            for item, bin_class in c.bins:
                for n in _things(dw, world, (item,)):
                    if not _things(dw, world, (bin_class,)):
                        dropped.append(f"no {bin_class.replace('_', ' ')} to recycle the {item.replace('_', ' ')}")
                    elif pred is None:
                        dropped.append("the domain has no predicate for thrown away")
                    else:
                        lits.append(f"({pred} {n})")
        else:
            raise ServiceRobotError(f"not a goal clause: {c!r}")
    keys += lits[len(keys):]
    return _distinct(lits, keys), dropped


class HandInterpreter:
    """A stand-in for a language model: the goal a person wrote for each task (`readings`: a key ->
    clauses), grounded in the instance's scene; `key_of(text)` names the task's reading (e.g. by split and
    problem, set by the caller before each instance: `HandInterpreter.current`)."""

    name = "hand-written"

    def __init__(self, readings: dict):
        self.readings = readings
        self.current = None  # (instance) set by the caller: the scene to ground in

    def interpret_task(self, text, speaker, context, feedback=()):
        inst = self.current
        clauses = self.readings.get((inst.split, inst.problem))
        if clauses is None:
            raise ServiceRobotError(f"no hand-written goal for {inst.split}/{inst.problem}")
        lits, dropped = ground(clauses, inst.domain_world(), inst.world())
        goal = "(and " + " ".join(lits) + ")" if lits else None
        if dropped:
            raise TaskInfeasible("; ".join(dropped), goal, tuple(dropped))
        return goal if goal is not None else "(and)"
