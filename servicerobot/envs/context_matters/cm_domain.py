"""A Context Matters instance in the PDDL domain its split ships (`dining-setup-domain.pddl`, ...).

Context Matters' dataset has one domain file per split, under names that changed between its commits
(`<root>/<split-dashes>-domain.pddl`, `general.pddl` beside `general.json`, a file in the split folder, or one
whose `(domain NAME)` names the split): `find_domain_file` finds it and `load_split_domain` reads it as Fast
Downward does (an ill-typed argument is a warning, not an error). Their domains are small STRIPS domains of
their own words: a robot that moves between rooms, grabs `grabbable` things and puts them on `surface`s or
into `container`s, throws `disposable`s into a `bin`, washes `cleanable`s. `domain_world` writes one
instance's scene in that domain, so a planner plans in their predicates and a goal is written in their words.

Nothing here knows a particular domain file. Each scene class gets the domain type it means
(`type_meaning.choose_type`: a cola can is `disposable`, detergent a `cleaning-supply`, a shirt `cleanable`, a
locker `movable`), decided once per class against the domain's type names and the actions that use them; an
object no type fits stays out, with the reason (`DomainWorld.refused`); `DomainWorld.class_typing` is the
load report, class by class.

The initial facts, by the predicates' words: every thing is `at` / `located` in its room, as in CM's scenes
(the household world's guess of what stands on what is not carried over), except what the dataset states is
inside something (CM's `book into the shelf`: `inside` / `stored-in`, not `at`); the robot's free hand
(`is-free`, `hand-free`, ...); state words (`is-dirty` / `soiled` from the scene's dirty things, `is-clean` for
the others of that type; wet / dry; closed (true) / open (false); `empty` / `is-empty` for what nothing is
inside); a room's dirty floor (`dirty-floor`) where the task or description asks to mop it, the other floors
clean. Every other predicate starts false. `DomainWorld.roles` says which predicate played which part.
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from dataclasses import dataclass, field
from pathlib import Path

from servicerobot.envs.context_matters.type_meaning import choose_type, item_root, name_words, type_glosses
from servicerobot.errors import SceneError
from servicerobot.pddl import Atom, Domain

__all__ = ["DomainWorld", "domain_world", "find_domain_file", "household_meaning", "load_split_domain",
           "translate_goal"]

MAX_DOMAIN_BYTES = 1 << 20
_SUPPORT = ("on", "is-on", "placed-on", "on-top", "rests-on", "ontop", "lying-on")
_CONTAIN = ("inside", "in", "is-in", "stored-in", "contained-in", "into")
_LOCATION = ("at", "located", "located-at", "is-at", "in-room", "located-in")
_FREE = ("free", "is-free", "hand-free", "hands-free", "handempty", "hand-empty", "empty-handed", "gripper-free")
_STATE_TRUE_WORDS = {  # a unary predicate's words -> which scene objects it starts true for
    "dirty": "dirty", "soiled": "dirty", "stained": "dirty", "unclean": "dirty",
    "clean": "not dirty", "washed": "not dirty",
    "wet": "wet", "damp": "wet", "dry": "not wet", "dried": "not wet",
    "closed": "always", "shut": "always", "empty": "empty",
}
_DISCARDED = ("thrashed", "trashed", "discarded", "disposed", "thrown", "binned", "in-trash", "throwed")


def _split_key(split: str) -> str:
    return split.replace("_", "-")


def _domain_name(path: Path) -> str | None:
    """The NAME of `(define (domain NAME)` in a file's first 4 KiB, or None."""
    try:
        with open(path, "rb") as fh:
            head = fh.read(4096).decode("utf-8", errors="replace")
    except OSError:
        return None
    match = re.search(r"\(\s*domain\s+([^\s()]+)\s*\)", head, re.IGNORECASE)
    return match.group(1) if match else None


def _is(path: Path, test) -> bool:
    """`test(path)` (`Path.is_file`, `Path.is_dir`), False where the name cannot be looked up: a split of
    245 characters has a split file, but `<split>-domain.pddl` is past the system's name limit."""
    try:
        return test(path)
    except OSError:
        return False


def find_domain_file(root: str | Path, split: str) -> Path | None:
    """The domain file a CM dataset ships for `split`, or None. Tried in order, under the names the dataset
    has used: `<root>/<split-dashes>-domain.pddl`, `<root>/<split>-domain.pddl`, `<root>/<split>.pddl` (CM's
    `general.pddl` beside `general.json`), the same names and `domain.pddl` inside `<root>/<split>/`; then any
    `.pddl` file there whose `(domain NAME)` names the split (`general-domain`, `house_cleaning`)."""
    root = Path(root)
    key = _split_key(split)
    folder = root / split
    names = (f"{key}-domain.pddl", f"{split}-domain.pddl", f"{split}.pddl", f"{key}.pddl")
    for path in [root / n for n in names] + [folder / n for n in names] + [folder / "domain.pddl"]:
        if _is(path, Path.is_file):
            return path
    want = name_words(split)
    for where in (root, folder):
        if not _is(where, Path.is_dir):
            continue
        for path in sorted(where.glob("*.pddl")):
            name = _domain_name(path) if _is(path, Path.is_file) else None
            if name and [w for w in name_words(name) if w != "domain"] == want:
                return path
    return None


def load_split_domain(path: str | Path, strict: bool = False) -> Domain:
    """Parse a split's domain file as Fast Downward would: an argument of the wrong type (CM's office domain
    passes a `grabbable` to `empty`, which wants a `movable`) is a warning in `domain.warnings`, naming the
    file, line and what is wrong, not an error (`strict=True` refuses it).

    Raises:
        SceneError: the path is not a regular file, is too big, or is not a PDDL domain our parser reads.
    """
    from servicerobot.errors import PDDLError
    from servicerobot.limits import read_text_bounded
    from servicerobot.pddl import parse_domain

    path = Path(path)
    try:
        text = read_text_bounded(path, MAX_DOMAIN_BYTES, "domain file", SceneError)
        return parse_domain(text, source=str(path), strict=strict)
    except PDDLError as error:
        raise SceneError(f"{path}: not a PDDL domain we can read: {error}") from None
    except OSError as error:
        raise SceneError(f"{path}: cannot read the domain file: {error}") from None
    except RecursionError:
        raise SceneError(f"{path}: the domain is nested too deeply to read") from None


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
    class_typing: dict[str, dict] = field(default_factory=dict)

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


def _find_type(domain: Domain, names: Iterable[str]) -> str | None:
    for t in domain.types.types:
        if t.lower() in names:
            return t
    return None


_PDDL_NAME = re.compile(r"[A-Za-z][A-Za-z0-9_-]*")
_INTO = re.compile(r"^(?P<item>.+?)_(?:into|inside|in|onto|on)_(?:the_)?(?P<target>[a-z0-9_]+)$")


def _stated_containers(world) -> dict[str, str]:
    """Objects whose class says where they are (CM's `book into the shelf`) -> the scene object of that class
    (the one in the same room when there are several)."""
    by_class: dict[str, list[str]] = {}
    for name, obj in world.objects.items():
        by_class.setdefault(obj.class_, []).append(name)
    out = {}
    for name, obj in world.objects.items():
        match = _INTO.match(obj.class_)
        if not match or match.group("target") not in by_class:
            continue
        targets = sorted(by_class[match.group("target")])
        same_room = [t for t in targets if world.objects[t].room == obj.room]
        out[name] = (same_room or targets)[0]
    return out


def _floor_rooms(text: str, rooms: dict[str, str]) -> set[str]:
    """Rooms whose floor the words say needs cleaning ("mop the floor in the kitchen and living room")."""
    text = text.lower().replace("_", " ")
    out = set()
    for sentence in re.split(r"[.;!?]", text):
        at = min((sentence.find(w) for w in ("floor", "mop") if w in sentence), default=-1)
        if at < 0:
            continue
        rest = sentence[at:]
        for room, category in rooms.items():
            if re.search(rf"\b{re.escape(category.replace('_', ' '))}s?\b", rest):
                out.add(room)
    return out


def _role_predicate(domain: Domain, names: tuple[str, ...], arity: int) -> str | None:
    for want in names:
        for p, decl in domain.predicates.items():
            if len(decl.params) == arity and p.lower() == want:
                return p
    return None


def domain_world(world, domain: Domain, text: str = "", scorer=None) -> DomainWorld:
    """The instance's scene (`CMWorld`) in a split's domain (see the module docstring); `text`: the task and
    the scene description, which say which floors need mopping; `scorer`: a scoring language model that
    chooses an item's type among those that fit it (`type_meaning`).

    Raises:
        SceneError: the domain has no type for rooms or for the robot, so no problem can be written.
    """
    room_type = _find_type(domain, ("room", "location", "place", "area"))
    robot_type = _find_type(domain, ("robot", "agent"))
    if room_type is None or robot_type is None:
        raise SceneError(f"domain {domain.name}: needs a type for rooms (room/location) and one for the robot "
                         f"(robot/agent); its types are {sorted(domain.types.types)}")
    types = domain.types
    excluded = {room_type, robot_type, "object"} | set(types.ancestors(room_type)) | set(types.ancestors(robot_type))
    glosses, root = type_glosses(domain), item_root(domain, excluded)
    objects = {r: room_type for r in world.rooms}
    objects[world.robot] = robot_type
    refused, typing, by_class, roomless = {}, {}, {}, set()
    dirty_things = {a.args[0] for a in world.init if a.predicate == "dirty"}
    wet_things = {a.args[0] for a in world.init if a.predicate == "wet"}
    # every scene object, also those the household world leaves out (a chair: "seating"): the split's domain
    # may well have a type for them (an office's `movable`)
    kinds = {n: world.pddl_objects.get(n) or "" for n in world.objects}
    for name, htype in sorted(kinds.items()):
        if name in objects or htype in ("room", "robot", "person"):
            continue
        obj = world.objects[name]
        if not _PDDL_NAME.fullmatch(name):
            refused[name] = "its label is not a PDDL name"
            continue
        if not obj.room:
            refused[name] = "the scene puts it in no room"
            roomless.add(obj.class_)
            continue
        key = (obj.class_, htype, name in dirty_things)
        if key not in by_class:  # the decision is made per class (and state), not per object
            by_class[key] = choose_type(domain, glosses, obj, htype, excluded=excluded, root=root,
                                        dirty=key[2], scorer=scorer)
        choice = by_class[key]
        if choice.type is None:
            refused[name] = choice.why
        else:
            objects[name], typing[name] = choice.type, (choice.type, choice.how)
    class_typing = {}
    for (class_, _, _), choice in sorted(by_class.items(), key=lambda kv: kv[0][0]):
        class_typing.setdefault(class_, {"type": choice.type, "how": choice.how, "why": choice.why})
    for class_ in sorted(roomless):
        class_typing.setdefault(class_, {"type": None, "how": "refused", "why": "the scene puts it in no room"})
    stated = {n: c for n, c in _stated_containers(world).items() if n in objects and c in objects}
    room_of = {n: o.room for n, o in world.objects.items() if n in objects and o.room}
    for n, c in stated.items():
        if c in room_of:
            room_of[n] = room_of[c]
    for a in world.init:  # an item on a fixture is in the fixture's room
        if a.predicate in ("on", "inside") and a.args[1] in room_of and a.args[0] in objects and a.args[0] not in stated:
            room_of[a.args[0]] = room_of[a.args[1]]
    room_of[world.robot] = world.init_loc

    roles: dict[str, str] = {}
    init: set[Atom] = set()

    def fits(name: str, param_type: str) -> bool:
        return name in objects and types.is_subtype(objects[name], param_type)

    for role, names in (("support", _SUPPORT), ("contain", _CONTAIN)):
        pred = _role_predicate(domain, names, 2)
        if pred is not None:
            roles[role] = pred
    # only what the dataset states (`book into the shelf`) is inside something; where the household world
    # happened to put a thing is not carried over: CM's scenes place objects in rooms, not on or in anything
    if "contain" in roles:
        (_, t1), (_, t2) = domain.predicates[roles["contain"]].params
        init.update(Atom(roles["contain"], (item, place)) for item, place in stated.items()
                    if fits(item, t1) and fits(place, t2))
    placed = {a.args[0] for a in init}
    contained = {a.args[1] for a in init}
    loc = _role_predicate(domain, _LOCATION, 2)
    if loc is not None and types.is_subtype(room_type, domain.predicates[loc].params[1][1]):
        roles["location"] = loc
        first = domain.predicates[loc].params[0][1]
        for name, room in room_of.items():
            # CM's domains: a thing on a surface or in a container is not `at` a room (grab needs it to be)
            if fits(name, first) and room in objects and name not in world.rooms and name not in placed:
                init.add(Atom(loc, (name, room)))
    free = _role_predicate(domain, _FREE, 1)
    if free is not None and fits(world.robot, domain.predicates[free].params[0][1]):
        roles["free"] = free
        init.add(Atom(free, (world.robot,)))
    discarded = _role_predicate(domain, _DISCARDED, 1)
    if discarded is not None:
        roles["discarded"] = discarded
    dirty_floors = _floor_rooms(text, dict(world.rooms)) if text else set()
    derived = set(getattr(domain, "derived", {}) or {})
    for p, decl in domain.predicates.items():
        if len(decl.params) != 1 or p in (free, discarded) or p in derived:
            continue
        words = name_words(p)
        meaning = next((_STATE_TRUE_WORDS[w] for w in reversed(words) if w in _STATE_TRUE_WORDS), None)
        if meaning is None:
            continue
        ptype = decl.params[0][1]
        if ptype == room_type or types.is_subtype(room_type, ptype):
            # a room's state: a floor the words say needs mopping is dirty, every other one clean
            if meaning in ("dirty", "not dirty"):
                for room in world.rooms:
                    if (room in dirty_floors) == (meaning == "dirty"):
                        init.add(Atom(p, (room,)))
            continue
        if words[-1] in ("dirty", "soiled", "stained", "unclean"):
            roles.setdefault("dirty", p)
        elif words[-1] in ("clean", "washed"):
            roles.setdefault("clean", p)
        elif words[-1] in ("wet", "damp"):
            roles.setdefault("wet", p)
        elif words[-1] in ("dry", "dried"):
            roles.setdefault("dry", p)
        for name in objects:
            if name in world.rooms or name == world.robot or not fits(name, ptype):
                continue
            if (meaning == "always" or (meaning == "empty" and name not in contained)
                    or (meaning == "dirty" and name in dirty_things)
                    or (meaning == "not dirty" and name not in dirty_things)
                    or (meaning == "wet" and name in wet_things) or (meaning == "not wet" and name not in wet_things)):
                init.add(Atom(p, (name,)))
    return DomainWorld(domain, objects, frozenset(init), world.robot, world.init_loc, dict(world.rooms), room_of,
                       refused, roles, typing, class_typing)


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
