"""A Context Matters instance in the PDDL domain its split ships (`dining-setup-domain.pddl`, ...).

Context Matters' dataset has one domain file per split, beside the split file (`<root>/<split-with-dashes>-
domain.pddl`) or inside the split folder (`<root>/<split>/<...>-domain.pddl`, `<root>/<split>/domain.pddl`).
Their domains are small STRIPS domains of their own words: a robot that moves between rooms, grabs
`grabbable` things and puts them on `surface`s or into `container`s, throws `disposable`s into a `bin`,
washes `cleanable`s. `find_domain_file` finds the file; `domain_world` writes one instance's scene in that
domain, so a planner plans in their predicates and a goal is written in their words.

Nothing here knows a particular domain file. Each scene object gets the domain type its words name:
- the names of a type are read as words (`washing-machine` -> washing, machine) and compared with the
  object's class, base class and household type (with a few synonyms: a trash can is a bin);
- else by the object's role in the household domain: an item (dish, food, clothing, ...) is of the type
  whose name says grabbable / item / object; a surface, shelf or bed of the one that says surface / table /
  furniture; an openable or container of the one that says container / receptacle; a trash can of bin /
  trash; a washer of washer / washing machine;
- an item then takes the most specific subtype its state fits: `disposable` / `waste` / `trash` for rubbish
  (open-vocabulary `discardable`, or described as trash), `cleanable` / `washable` / `dishware` / `laundry`
  for dirty things and for dishes and clothes;
- an object no type fits stays out, with the reason (`DomainWorld.refused`).

The initial facts are read from the household world (`CMWorld`) by the predicates' words: where things are
(`at` / `located` over a thing and a room), the robot's free hand (`is-free`, `hand-free`, ...), what is on a
surface (`is-on`, `placed-on`, ...) or inside a container (`inside`, `stored-in`, ...), and state words
(`is-dirty` / `soiled` from the scene's dirty things, `is-clean` for the others of that type; wet / dry;
closed (true) / open (false) for things of a type with both; `is-empty` for machines and containers).
Every other predicate starts false. `DomainWorld.roles` says which predicate played which part.
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from dataclasses import dataclass, field
from pathlib import Path

from servicerobot.errors import SceneError
from servicerobot.pddl import Atom, Domain

__all__ = ["DomainWorld", "domain_world", "find_domain_file", "household_meaning", "load_split_domain",
           "translate_goal"]

MAX_DOMAIN_BYTES = 1 << 20

_SYNONYMS = {
    "trashcan": ("trash", "bin", "garbage", "rubbish", "waste", "can"), "trash": ("bin", "trashcan"),
    "washer": ("washing", "machine", "washer", "laundry"), "dryer": ("dryer", "drying", "machine"),
    "fridge": ("fridge", "refrigerator", "appliance"), "sink": ("sink", "basin"),
    "dish": ("dish", "dishware", "tableware", "kitchenware"), "clothing": ("clothing", "clothes", "garment", "laundry"),
    "gadget": ("gadget", "device", "electronic", "component"), "book": ("book",), "food": ("food",),
    "surface": ("surface", "table"), "shelf": ("shelf", "shelving"), "openable": ("openable",),
}
_ROLE_WORDS = {
    "item": ("grabbable", "graspable", "pickable", "movable", "portable", "item", "thing", "object", "tool"),
    "surface": ("surface", "table", "furniture", "support", "counter"),
    "container": ("container", "receptacle", "storage", "cabinet", "furniture"),
    "bin": ("bin", "trash", "trashcan", "garbage", "dustbin", "wastebin"),
    "washer": ("washer", "washing", "laundry", "appliance"),
    "dryer": ("dryer", "drying", "appliance"),
    "sink": ("sink", "basin"),
}
_HOUSEHOLD_ROLE = {"surface": "surface", "shelf": "surface", "bed": "surface", "container": "container",
                   "openable": "container", "fridge": "container", "trashcan": "bin", "washer": "washer",
                   "dryer": "dryer", "sink": "sink"}
_ITEM_TYPES = frozenset({"dish", "food", "clothing", "book", "gadget", "decor", "item"})
_DISPOSABLE = ("disposable", "waste", "trash", "garbage", "rubbish", "litter", "discardable")
_CLEANABLE = ("cleanable", "washable", "dishware", "tableware", "laundry", "dirty")
_SUPPORT = ("on", "is-on", "placed-on", "on-top", "rests-on", "ontop", "lying-on")
_CONTAIN = ("inside", "in", "is-in", "stored-in", "contained-in", "into")
_LOCATION = ("at", "located", "located-at", "is-at", "in-room", "located-in")
_FREE = ("free", "is-free", "hand-free", "hands-free", "handempty", "hand-empty", "empty-handed", "gripper-free")
_STATE_TRUE_WORDS = {  # a unary predicate's words -> which scene objects it starts true for
    "dirty": "dirty", "soiled": "dirty", "stained": "dirty", "unclean": "dirty",
    "clean": "not dirty", "washed": "not dirty",
    "wet": "wet", "damp": "wet", "dry": "not wet", "dried": "not wet",
    "closed": "always", "shut": "always", "empty": "always",
}
_DISCARDED = ("thrashed", "trashed", "discarded", "disposed", "thrown", "binned", "in-trash", "throwed")


def _words(name: str) -> list[str]:
    return [w for w in re.split(r"[-_\s]+", name.lower()) if w]


def _split_key(split: str) -> str:
    return split.replace("_", "-")


def find_domain_file(root: str | Path, split: str) -> Path | None:
    """The domain file a CM dataset ships for `split`, or None: `<root>/<split-dashes>-domain.pddl`, then in
    `<root>/<split>/`: `<split-dashes>-domain.pddl`, `<split>-domain.pddl`, `domain.pddl`."""
    root = Path(root)
    key = _split_key(split)
    for path in (root / f"{key}-domain.pddl", root / f"{split}-domain.pddl", root / split / f"{key}-domain.pddl",
                 root / split / f"{split}-domain.pddl", root / split / "domain.pddl"):
        if path.is_file():
            return path
    return None


def load_split_domain(path: str | Path) -> Domain:
    """Parse a split's domain file.

    Raises:
        SceneError: the file is too big or not a PDDL domain our parser reads (the message names it).
    """
    from servicerobot.errors import PDDLError
    from servicerobot.pddl import parse_domain

    path = Path(path)
    try:
        if path.stat().st_size > MAX_DOMAIN_BYTES:
            raise SceneError(f"{path}: a domain file over {MAX_DOMAIN_BYTES} bytes")
        text = path.read_text(encoding="utf-8", errors="replace")
        return parse_domain(text, source=str(path))
    except PDDLError as error:
        raise SceneError(f"{path}: not a PDDL domain we can read: {error}") from None
    except OSError as error:
        raise SceneError(f"{path}: cannot read the domain file: {error}") from None


@dataclass
class DomainWorld:
    """One instance's scene written in a split's own domain.

    Attributes:
        domain: the split's domain.
        objects: PDDL object -> its type in that domain (rooms, the robot and every object a type fits).
        init: the initial facts in the domain's predicates.
        robot, init_loc: the robot's name and its start room.
        rooms: room name -> category (underscored).
        room_of: object -> the room it is in (fixtures and items alike).
        refused: scene object -> why no type of the domain fits it.
        roles: which predicate played which part (`location`, `support`, `contain`, `free`, `discarded`,
            `dirty`, `clean`, `wet`, `dry`), for goals written in household words (`translate_goal`).
        typing: object -> (type, how it was chosen: `words`, `role`, `subtype`).
    """

    domain: Domain
    objects: dict[str, str]
    init: frozenset[Atom]
    robot: str
    init_loc: str
    rooms: dict[str, str]
    room_of: dict[str, str] = field(default_factory=dict)
    refused: dict[str, str] = field(default_factory=dict)
    roles: dict[str, str] = field(default_factory=dict)
    typing: dict[str, tuple[str, str]] = field(default_factory=dict)

    def problem_text(self, goal: str, name: str = "cm", keep: Iterable[str] | None = None) -> str:
        """A problem for a goal formula (text, e.g. `(and (is-on plate_3 table_1))`) over the scene; `keep`
        limits the objects (rooms and the robot are always kept)."""
        names = set(self.objects) if keep is None else (set(keep) | set(self.rooms) | {self.robot})
        names &= set(self.objects)
        by_type: dict[str, list[str]] = {}
        for obj in sorted(names):
            by_type.setdefault(self.objects[obj], []).append(obj)
        objects = "\n".join(f"    {' '.join(ns)} - {t}" for t, ns in sorted(by_type.items()))
        init = "\n    ".join(sorted(str(a) for a in self.init if all(x in names for x in a.args)))
        return (f"(define (problem {name})\n  (:domain {self.domain.name})\n  (:objects\n{objects}\n  )\n"
                f"  (:init\n    {init}\n  )\n  (:goal {goal})\n)\n")

    def execute(self, plan: Iterable[str]) -> tuple[int, frozenset[Atom], str]:
        """Run a plan on the scene's facts: (steps that ran, the final state, why it stopped or "")."""
        from servicerobot.errors import PDDLError
        from servicerobot.pddl import Interpreter

        interp = Interpreter(self.domain, self.objects)
        state, done = self.init, 0
        for step in plan:
            try:
                ga = interp.parse_action(step)
            except PDDLError as error:
                return done, state, f"step {done + 1} {step}: {error}"
            why = interp.why_not(ga, state)
            if why is not None:
                return done, state, f"step {done + 1} {step} cannot run in the scene: {why}"
            state, done = interp.apply(ga, state), done + 1
        return done, state, ""

    def holds(self, goal: str, state: Iterable[Atom]) -> bool:
        """Whether a goal formula (text) holds in `state`."""
        from servicerobot.pddl import Interpreter

        return Interpreter(self.domain, self.objects).compile_goal(goal).holds(frozenset(state))


def _type_words(domain: Domain) -> dict[str, list[str]]:
    return {t: _words(t) for t in domain.types.types if t != "object"}


def _find_type(domain: Domain, names: Iterable[str]) -> str | None:
    for t in domain.types.types:
        if t.lower() in names:
            return t
    return None


def _depth(domain: Domain, t: str) -> int:
    return len(domain.types.ancestors(t))


def _object_words(obj) -> set[str]:
    """The words of an object's class and base class, with synonyms (not its household type: a bottle is a
    dish there, but no `dishware` to a domain that has a type for rubbish)."""
    words = set(_words(obj.class_)) | set(_words(obj.base or ""))
    for w in list(words):
        words.update(_SYNONYMS.get(w, ()))
        if w.endswith("s") and len(w) > 3:
            words.add(w[:-1])
    return words


def _discardable(obj) -> bool:
    text = f"{obj.class_} {obj.description} {' '.join(obj.affordances)}".lower()
    return "discardable" in obj.states or any(w in text for w in ("trash", "garbage", "rubbish", "throw away",
                                                                   "litter", "waste"))


def _assign(domain: Domain, obj, household_type: str, room_type: str, robot_type: str,
            dirty: bool) -> tuple[str | None, str]:
    """(the domain type of a scene object, how it was chosen) or (None, why not)."""
    types = {t: ws for t, ws in _type_words(domain).items()
             if t not in (room_type, robot_type) and not domain.types.is_subtype(room_type, t)
             and not domain.types.is_subtype(robot_type, t)}
    words = _object_words(obj)
    # 1. a type named by the object's own words (a `mop`, a `washing-machine`, a `bin` for a trash can)
    named = [t for t, ws in types.items() if ws and all(w in words for w in ws)
             and not set(ws) <= set(_ROLE_WORDS["item"])]
    if named:
        return max(named, key=lambda t: (_depth(domain, t), t)), "words"
    # 2. the household role's type
    role = "item" if household_type in _ITEM_TYPES else _HOUSEHOLD_ROLE.get(household_type)
    if role is None:
        return None, f"a {household_type} plays no part this domain's types name"
    fits = [t for t, ws in types.items() if set(ws) & set(_ROLE_WORDS[role])]
    if not fits:
        return None, (f"no type of domain {domain.name} names a {role} ({', '.join(_ROLE_WORDS[role][:4])}, ...) "
                      f"for this {household_type}")
    base = min(fits, key=lambda t: (_depth(domain, t), t))  # the most general: subtypes refine it below
    if role != "item":
        return base, "role"
    # 3. an item's subtype by its state: rubbish is disposable, dirty things (and dishes, clothes) cleanable
    subs = [t for t in types if t != base and domain.types.is_subtype(t, base)]
    wants = []
    if _discardable(obj):
        wants.append(_DISPOSABLE)
    if dirty or household_type in ("dish", "clothing"):
        wants.append(_CLEANABLE + ((household_type,) if household_type in ("dish", "clothing") else ()))
    for want in wants:
        hit = [t for t in subs if set(types[t]) & set(want) or any(w.startswith(x) for w in types[t] for x in want)]
        if hit:
            return max(hit, key=lambda t: (_depth(domain, t), t)), "subtype"
    return base, "role"


def _role_predicate(domain: Domain, names: tuple[str, ...], arity: int) -> str | None:
    for want in names:
        for p, decl in domain.predicates.items():
            if len(decl.params) == arity and p.lower() == want:
                return p
    return None


def domain_world(world, domain: Domain) -> DomainWorld:
    """The instance's scene (`CMWorld`) in a split's domain (see the module docstring).

    Raises:
        SceneError: the domain has no type for rooms or for the robot, so no problem can be written.
    """
    room_type = _find_type(domain, ("room", "location", "place", "area"))
    robot_type = _find_type(domain, ("robot", "agent"))
    if room_type is None or robot_type is None:
        raise SceneError(f"domain {domain.name}: needs a type for rooms (room/location) and one for the robot "
                         f"(robot/agent); its types are {sorted(domain.types.types)}")
    objects = {r: room_type for r in world.rooms}
    objects[world.robot] = robot_type
    refused, typing = {}, {}
    dirty_things = {a.args[0] for a in world.init if a.predicate == "dirty"}
    wet_things = {a.args[0] for a in world.init if a.predicate == "wet"}
    for name, htype in sorted(world.pddl_objects.items()):
        if name in objects or htype in ("room", "robot", "person"):
            continue
        obj = world.objects.get(name)
        if obj is None:
            continue
        t, how = _assign(domain, obj, htype, room_type, robot_type, name in dirty_things)
        if t is None:
            refused[name] = how
        else:
            objects[name], typing[name] = t, (t, how)
    room_of = {n: o.room for n, o in world.objects.items() if n in objects and o.room}
    for a in world.init:  # an item on a fixture is in the fixture's room
        if a.predicate in ("on", "inside") and a.args[1] in room_of and a.args[0] in objects:
            room_of[a.args[0]] = room_of[a.args[1]]
    room_of[world.robot] = world.init_loc

    roles: dict[str, str] = {}
    init: set[Atom] = set()
    types = domain.types

    def fits(name: str, param_type: str) -> bool:
        return name in objects and types.is_subtype(objects[name], param_type)

    loc = _role_predicate(domain, _LOCATION, 2)
    if loc is not None and types.is_subtype(room_type, domain.predicates[loc].params[1][1]):
        roles["location"] = loc
        first = domain.predicates[loc].params[0][1]
        for name, room in room_of.items():
            if fits(name, first) and room in objects and name not in world.rooms:
                init.add(Atom(loc, (name, room)))
    free = _role_predicate(domain, _FREE, 1)
    if free is not None and fits(world.robot, domain.predicates[free].params[0][1]):
        roles["free"] = free
        init.add(Atom(free, (world.robot,)))
    for role, names, household in (("support", _SUPPORT, "on"), ("contain", _CONTAIN, "inside")):
        pred = _role_predicate(domain, names, 2)
        if pred is None:
            continue
        roles[role] = pred
        (_, t1), (_, t2) = domain.predicates[pred].params
        for a in world.init:
            if a.predicate == household and fits(a.args[0], t1) and fits(a.args[1], t2):
                init.add(Atom(pred, a.args))
    discarded = _role_predicate(domain, _DISCARDED, 1)
    if discarded is not None:
        roles["discarded"] = discarded
    for p, decl in domain.predicates.items():
        if len(decl.params) != 1 or p in (free, discarded):
            continue
        words = _words(p)
        meaning = next((_STATE_TRUE_WORDS[w] for w in reversed(words) if w in _STATE_TRUE_WORDS), None)
        if meaning is None:
            continue
        if words[-1] in ("dirty", "soiled", "stained", "unclean"):
            roles.setdefault("dirty", p)
        elif words[-1] in ("clean", "washed"):
            roles.setdefault("clean", p)
        elif words[-1] in ("wet", "damp"):
            roles.setdefault("wet", p)
        elif words[-1] in ("dry", "dried"):
            roles.setdefault("dry", p)
        ptype = decl.params[0][1]
        if ptype == room_type or types.is_subtype(room_type, ptype):
            continue  # a room's state (a dirty floor): nothing in the scene says so
        for name in objects:
            if name in world.rooms or name == world.robot or not fits(name, ptype):
                continue
            if (meaning == "always" or (meaning == "dirty" and name in dirty_things)
                    or (meaning == "not dirty" and name not in dirty_things)
                    or (meaning == "wet" and name in wet_things) or (meaning == "not wet" and name not in wet_things)):
                init.add(Atom(p, (name,)))
    return DomainWorld(domain, objects, frozenset(init), world.robot, world.init_loc, dict(world.rooms), room_of,
                       refused, roles, typing)


def household_meaning(literal: str, dw: DomainWorld) -> str | None:
    """A goal literal of the split's domain in household words (`(is-on a b)` -> `(on a b)`, `(is-clean a)` or
    `(not (is-dirty a))` -> `(not (dirty a))`), or None when it has no household counterpart."""
    text = literal.strip()
    negated = text.startswith("(not ")
    inner = text[5:-1].strip() if negated else text
    parts = inner.strip("()").split()
    if not parts:
        return None
    pred, args = parts[0], parts[1:]
    roles = {v: k for k, v in dw.roles.items()}
    role = roles.get(pred)
    if role in ("support", "contain") and len(args) == 2 and not negated:
        return f"({'on' if role == 'support' else 'inside'} {args[0]} {args[1]})"
    if role == "discarded" and len(args) == 1 and not negated:
        return f"(discarded {args[0]})"
    if len(args) == 1 and role in ("dirty", "clean", "wet", "dry"):
        base = "dirty" if role in ("dirty", "clean") else "wet"
        positive = (role in ("dirty", "wet")) != negated
        return f"({base} {args[0]})" if positive else f"(not ({base} {args[0]}))"
    if role == "location" and len(args) == 2 and not negated:
        return f"(at {args[0]} {args[1]})"
    return None


def translate_goal(literals: Iterable[str], dw: DomainWorld) -> tuple[str, ...] | None:
    """Household goal literals (`(on a b)`, `(discarded a)`, `(not (dirty a))`, `(not (wet a))`) in the split's
    domain, or None when one has no counterpart there (a split without a `dry` predicate cannot ask for dry
    clothes)."""
    out = []
    r = dw.roles
    for lit in literals:
        text = lit.strip()
        negated = text.startswith("(not ")
        parts = (text[5:-1] if negated else text).strip().strip("()").split()
        pred, args = parts[0], parts[1:]
        if pred == "on" and "support" in r and not negated:
            out.append(f"({r['support']} {' '.join(args)})")
        elif pred == "inside" and "contain" in r and not negated:
            out.append(f"({r['contain']} {' '.join(args)})")
        elif pred == "discarded" and "discarded" in r:
            out.append(f"({r['discarded']} {args[0]})")
        elif pred in ("dirty", "wet") and negated and (pred in r or ("clean" if pred == "dirty" else "dry") in r):
            good = "clean" if pred == "dirty" else "dry"
            out.append(f"({r[good]} {args[0]})" if good in r else f"(not ({r[pred]} {args[0]}))")
        else:
            return None
    return tuple(sorted(out))
