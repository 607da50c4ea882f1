"""The controlled English of Context Matters tasks and its structured reading: `TaskGoal` = requirements.

Six domains (CM's five plus a general one), their sentences declared once in `LANGUAGE` (a
`servicerobot.envs.language.Language`): `render_task` says the first template of a domain, `parse_task` reads
a sentence back with the same templates. Each task sentence names what must hold as requirements:
a relation (`on`, `inside`, `discarded`, `clean`, `dry`), the object classes that fill it, how many
(or every matching object in a room), the target fixture class, and an importance weight. The PDDL
literal of each filled slot is fixed by the relation: `(on x t)`, `(inside x t)`, `(discarded x)`,
`(not (dirty x))`, `(not (wet x))` over the household domain.
"""

from __future__ import annotations

from dataclasses import dataclass

from servicerobot.envs.language import Language, Phrasing, template_regex
from servicerobot.errors import ServiceRobotError

__all__ = [
    "CLOTHES",
    "DIRTY_DISHES",
    "DOMAINS",
    "GENERAL_CLASSES",
    "GENERAL_TARGETS",
    "LANGUAGE",
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


def _count(n: int) -> str:
    return _WORDS.get(n, str(n))


def _with_and_without_room(*templates: str) -> tuple[str, ...]:
    """Each template, then the same without its " in the {room}" (a task may leave the room unsaid)."""
    return templates + tuple(t.replace(" in the {room}", "") for t in templates)


LANGUAGE = Language(
    "context_matters",
    tasks={
        "dining_setup": Phrasing(_with_and_without_room("set the table in the {room} for {n} {people}")),
        "house_cleaning": Phrasing(("clean the {room}: throw away the trash and wash the dirty dishes",)),
        "office_setup": Phrasing(_with_and_without_room(
            "set up the office in the {room}: put the laptop on the desk, {n} books on the bookshelf and the pen "
            "in the chest of drawers")),
        "laundry": Phrasing(("do the laundry: wash and dry the dirty clothes in the {room}",)),
        "pc_assembly": Phrasing(_with_and_without_room(
            "assemble the computer in the {room}: put the computer, the monitor, the keyboard and the mouse on "
            "the desk")),
        "general": Phrasing(_with_and_without_room("bring {n} {objects}s to the {target} in the {room}")),
    },
    fields={"room": "class", "objects": "class", "target": "class", "n": "number",
            "people": ("people", "persons", "person")},
)
"""The six domains' task sentences, in the order `parse_task` tries them (a domain's template with the room
first). Their meaning is not a pattern over entities: `parse_task` reads a sentence into `Requirement`s over
object classes (`_requirements`, below), which the relaxation planners ground in a scene."""

_FIELD_PATTERNS = {"room": "[a-z ]+?", "objects": "[a-z ]+?", "target": "[a-z ]+?",
                   "n": r"\d+|" + "|".join(_NUMBERS), "people": "|".join(LANGUAGE.fields["people"])}
_PATTERNS = {domain: tuple(template_regex(t, _FIELD_PATTERNS) for t in phrasing.templates)
             for domain, phrasing in LANGUAGE.tasks.items()}


def render_task(domain: str, room: str, n: int = 1, class_: str | None = None, target: str | None = None) -> str:
    """The task sentence of a domain: its first template in `LANGUAGE` (see `parse_task` for the requirements
    it stands for)."""
    if domain not in LANGUAGE.tasks:
        raise GoalFormatError(f"unknown domain {domain!r}; domains are {DOMAINS}")
    if domain == "general" and (class_ is None or target is None):
        raise GoalFormatError("a general task needs the object class and the target")
    template = LANGUAGE.tasks[domain].templates[0]
    return template.format(room=_words(room), n=_count(n), people=LANGUAGE.fields["people"][0],
                           objects=_words(class_ or ""), target=_words(target or ""))


def parse_task(text: str) -> TaskGoal:
    """Read a task sentence of the generator's controlled English into its requirements.

    Raises:
        GoalFormatError: the sentence matches none of the six domains' forms (free text needs the LLM path).
    """
    clean = " ".join(text.strip().rstrip(".").lower().split())
    for domain, patterns in _PATTERNS.items():
        match = next(filter(None, (pattern.match(clean) for pattern in patterns)), None)
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
