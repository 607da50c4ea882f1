"""The controlled English of Context Matters tasks and its structured reading: `TaskGoal` = requirements.

Six domains (CM's five plus a general one). Each task sentence names what must hold as requirements:
a relation (`on`, `inside`, `discarded`, `clean`, `dry`), the object classes that fill it, how many
(or every matching object in a room), the target fixture class, and an importance weight. The PDDL
literal of each filled slot is fixed by the relation: `(on x t)`, `(inside x t)`, `(discarded x)`,
`(not (dirty x))`, `(not (wet x))` over the household domain.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from servicerobot.errors import ServiceRobotError

__all__ = [
    "CLOTHES",
    "DIRTY_DISHES",
    "DOMAINS",
    "GENERAL_CLASSES",
    "GENERAL_TARGETS",
    "TRASH",
    "GoalFormatError",
    "Requirement",
    "TaskGoal",
    "literal",
    "parse_task",
    "render_task",
]

DOMAINS = ("dining_setup", "house_cleaning", "office_setup", "laundry", "pc_assembly", "general")
TRASH = ("bottle", "newspaper")
DIRTY_DISHES = ("plate", "bowl", "cup", "mug", "glass", "fork")
CLOTHES = ("shirt", "sweater", "towel")
GENERAL_CLASSES = ("apple", "cup", "book")
GENERAL_TARGETS = ("dining_table", "coffee_table", "counter", "desk")
_NUMBERS = {"one": 1, "two": 2, "three": 3, "four": 4, "five": 5, "six": 6}
_WORDS = {v: k for k, v in _NUMBERS.items()}


class GoalFormatError(ServiceRobotError, ValueError):
    """A task sentence is not in the controlled English of the Context Matters task generator."""


@dataclass(frozen=True)
class Requirement:
    """One constraint of a task.

    Attributes:
        relation: on | inside | discarded | clean | dry.
        classes: the object classes that fill it (the first one is what the sentence asks for).
        count: how many objects; None means every matching object in `room`.
        target: the fixture class for on/inside, else None.
        weight: importance; relaxation keeps heavier requirements first.
        state: "dirty" selects only objects described as dirty (count None only).
        room: the room category (underscored) the objects must be in (count None) or the target is in.
    """

    relation: str
    classes: tuple[str, ...]
    count: int | None
    target: str | None
    weight: float
    state: str = ""
    room: str | None = None

    @property
    def class_(self) -> str:
        return self.classes[0]


@dataclass(frozen=True)
class TaskGoal:
    """A task sentence read into its domain, the room it names, and its requirements."""

    domain: str
    text: str
    room: str | None
    requirements: tuple[Requirement, ...]


def literal(relation: str, obj: str, target: str | None = None) -> str:
    """The PDDL goal literal that one filled slot of a requirement stands for."""
    if relation in ("on", "inside"):
        return f"({relation} {obj} {target})"
    if relation == "discarded":
        return f"(discarded {obj})"
    if relation == "clean":
        return f"(not (dirty {obj}))"
    if relation == "dry":
        return f"(not (wet {obj}))"
    raise GoalFormatError(f"unknown requirement relation {relation!r}")


def _words(key: str) -> str:
    return key.replace("_", " ")


def _key(words: str) -> str:
    return "_".join(words.strip().lower().split())


def _plural(class_: str) -> str:
    return _words(class_) + "s"


def _count(n: int) -> str:
    return _WORDS.get(n, str(n))


def render_task(domain: str, room: str, n: int = 1, class_: str | None = None, target: str | None = None) -> str:
    """The task sentence of a domain (see `parse_task` for the requirements it stands for)."""
    where = _words(room)
    if domain == "dining_setup":
        return f"set the table in the {where} for {_count(n)} people"
    if domain == "house_cleaning":
        return f"clean the {where}: throw away the trash and wash the dirty dishes"
    if domain == "office_setup":
        return (f"set up the office in the {where}: put the laptop on the desk, {_count(n)} books on the "
                "bookshelf and the pen in the chest of drawers")
    if domain == "laundry":
        return f"do the laundry: wash and dry the dirty clothes in the {where}"
    if domain == "pc_assembly":
        return (f"assemble the computer in the {where}: put the computer, the monitor, the keyboard and the "
                "mouse on the desk")
    if domain == "general":
        if class_ is None or target is None:
            raise GoalFormatError("a general task needs the object class and the target")
        return f"bring {_count(n)} {_plural(class_)} to the {_words(target)} in the {where}"
    raise GoalFormatError(f"unknown domain {domain!r}; domains are {DOMAINS}")


_ROOM = r"(?: in the (?P<room>[a-z ]+?))?"
_N = r"(?P<n>\d+|" + "|".join(_NUMBERS) + r")"
_PATTERNS = {
    "dining_setup": re.compile(rf"^set the table{_ROOM} for {_N} (?:people|persons|person)$"),
    "house_cleaning": re.compile(r"^clean the (?P<room>[a-z ]+?): throw away the trash and wash the dirty dishes$"),
    "office_setup": re.compile(rf"^set up the office{_ROOM}: put the laptop on the desk, {_N} books on the "
                               r"bookshelf and the pen in the chest of drawers$"),
    "laundry": re.compile(r"^do the laundry: wash and dry the dirty clothes in the (?P<room>[a-z ]+?)$"),
    "pc_assembly": re.compile(rf"^assemble the computer{_ROOM}: put the computer, the monitor, the keyboard "
                              r"and the mouse on the desk$"),
    "general": re.compile(rf"^bring {_N} (?P<objects>[a-z ]+?)s to the (?P<target>[a-z ]+?){_ROOM}$"),
}


def parse_task(text: str) -> TaskGoal:
    """Read a task sentence of the generator's controlled English into its requirements.

    Raises:
        GoalFormatError: the sentence matches none of the six domains' forms (free text needs the LLM path).
    """
    clean = " ".join(text.strip().rstrip(".").lower().split())
    for domain, pattern in _PATTERNS.items():
        match = pattern.match(clean)
        if match:
            groups = match.groupdict()
            room = _key(groups["room"]) if groups.get("room") else None
            n = groups.get("n")
            count = (int(n) if n.isdigit() else _NUMBERS[n]) if n else 1
            return TaskGoal(domain, text.strip(), room, _requirements(domain, room, count, groups))
    raise GoalFormatError(
        f"cannot read the task {text.strip()!r}: it is not in the controlled English of the six Context Matters "
        "domains (e.g. 'set the table in the kitchen for three people'); free text needs the LLM interpreter")


def _requirements(domain: str, room: str | None, n: int, groups: dict) -> tuple[Requirement, ...]:
    if domain == "dining_setup":
        return (Requirement("on", ("plate",), n, "dining_table", 3.0, room=room),
                Requirement("on", ("fork",), n, "dining_table", 2.0, room=room),
                Requirement("on", ("glass",), n, "dining_table", 1.0, room=room))
    if domain == "house_cleaning":
        return (Requirement("clean", DIRTY_DISHES, None, None, 3.0, state="dirty", room=room),
                Requirement("discarded", TRASH, None, None, 2.0, room=room))
    if domain == "office_setup":
        return (Requirement("on", ("laptop",), 1, "desk", 3.0, room=room),
                Requirement("on", ("book",), n, "bookshelf", 2.0, room=room),
                Requirement("inside", ("pen",), 1, "chest_of_drawers", 1.0, room=room))
    if domain == "laundry":
        return (Requirement("clean", CLOTHES, None, None, 3.0, state="dirty", room=room),
                Requirement("dry", CLOTHES, None, None, 2.0, state="dirty", room=room))
    if domain == "pc_assembly":
        return (Requirement("on", ("computer",), 1, "desk", 3.0, room=room),
                Requirement("on", ("monitor",), 1, "desk", 3.0, room=room),
                Requirement("on", ("keyboard",), 1, "desk", 2.0, room=room),
                Requirement("on", ("mouse",), 1, "desk", 1.0, room=room))
    class_ = _key(groups["objects"])
    return (Requirement("on", (class_,), n, _key(groups["target"]), 1.0, room=room),)
