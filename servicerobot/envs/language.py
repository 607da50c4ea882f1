"""What a world's people say, declared once beside the world: sentence templates and what each means.

A world's task generator and its people render every sentence from the world's `Language`, and the rule
interpreter (`servicerobot.language.rule_interpreter`) is built from the same declaration, so the one
`ServiceAgent` reads each world's own sentences and there is no second copy of a template. A `Language`
says, per sentence kind, the templates (`str.format` fields) and their meaning: for a task the PDDL goal it
stands for, for a reported event the facts it makes true and false, both as patterns over the template's
fields filled with entity names. `fields` says what each field names (an item, a fixture, a room...), or the
words it may be when it names nothing (a preposition, a verb form).

A kind without a declared meaning (`goal`/`add`/`remove` empty) is one the household world's readings in
the rule interpreter work out from memory (which fixture a room's bed is, which books are in a room).
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass, field

from servicerobot.errors import ServiceRobotError

__all__ = ["FIELD_ROLES", "Language", "LanguageError", "Phrasing", "fill"]

FIELD_ROLES = ("item", "items", "fixture", "room", "person")
"""What a field may name: one item, a list of items ("the mug and the plate"), a fixture, a room, a person."""

_SLOT = re.compile(r"\{(\w+)\}")


class LanguageError(ServiceRobotError, ValueError):
    """A world's language declaration is inconsistent, or a meaning was asked for fields it lacks."""


@dataclass(frozen=True)
class Phrasing:
    """One kind of sentence: its templates and what it means.

    Attributes:
        templates: the ways people say it; `{field}` slots, `{field_cap}` for a capitalised one.
        goal: for a task, the PDDL goal it asks for, over the fields (`"(safe {item})"`).
        add: for an event, the atoms it makes true (`"(item-on {item} {furniture})"`).
        remove: for an event, the atoms it makes false; `?` stands for any argument (`"(item-on {item} ?)"`).
    """

    templates: tuple[str, ...]
    goal: str = ""
    add: tuple[str, ...] = ()
    remove: tuple[str, ...] = ()

    @property
    def declared(self) -> bool:
        """Whether the meaning is declared here (else the household readings work it out)."""
        return bool(self.goal or self.add or self.remove)

    def fields(self) -> set[str]:
        """The fields the templates use (`_cap` forms folded into their field)."""
        return {m.group(1).removesuffix("_cap") for t in self.templates for m in _SLOT.finditer(t)}


@dataclass(frozen=True)
class Language:
    """A world's sentences: task and event phrasings by kind, and what each template field names.

    `fields` maps a field to one of `FIELD_ROLES`, or to the tuple of words it may be.
    """

    name: str
    tasks: Mapping[str, Phrasing]
    events: Mapping[str, Phrasing] = field(default_factory=dict)
    fields: Mapping[str, str | tuple[str, ...]] = field(default_factory=dict)

    def __post_init__(self) -> None:
        for group in (self.tasks, self.events):
            for kind, phrasing in group.items():
                unknown = sorted(phrasing.fields() - set(self.fields))
                if unknown:
                    raise LanguageError(f"the {self.name} language's {kind!r} templates use fields {unknown} "
                                        "that its `fields` table does not declare; add what each names")
                meant = {m.group(1) for p in (phrasing.goal, *phrasing.add, *phrasing.remove)
                         for m in _SLOT.finditer(p)}
                if meant - phrasing.fields():
                    raise LanguageError(f"the {self.name} language's {kind!r} meaning uses fields "
                                        f"{sorted(meant - phrasing.fields())} that none of its templates has")
        for name, role in self.fields.items():
            if not isinstance(role, tuple) and role not in FIELD_ROLES:
                raise LanguageError(f"field {name!r} of the {self.name} language names {role!r}; a field names "
                                    f"one of {FIELD_ROLES} or is a tuple of the words it may be")

    def goal(self, kind: str, **names: str) -> str:
        """The goal a task of `kind` stands for, with its fields filled by entity names."""
        return fill(self._phrasing(self.tasks, kind, "task").goal, names)

    def delta(self, kind: str, **names: str) -> tuple[tuple[str, ...], tuple[str, ...]]:
        """(remove, add) patterns of an event of `kind` with its fields filled (`?` left for any argument)."""
        p = self._phrasing(self.events, kind, "event")
        return tuple(fill(r, names) for r in p.remove), tuple(fill(a, names) for a in p.add)

    def _phrasing(self, group: Mapping[str, Phrasing], kind: str, what: str) -> Phrasing:
        if kind not in group:
            raise LanguageError(f"the {self.name} language has no {what} kind {kind!r}; it has {sorted(group)}")
        return group[kind]


def fill(pattern: str, names: Mapping[str, str | list[str]]) -> str:
    """A meaning pattern with its fields replaced by entity names. A field bound to a list of names (`items`)
    repeats each conjunct it appears in once per name, so `"(and (inside {items} {fridge}) (cold {items}))"`
    with two items gives four literals."""
    lists = {k for k, v in names.items() if isinstance(v, list)}
    missing = {m.group(1) for m in _SLOT.finditer(pattern)} - set(names)
    if missing:
        raise LanguageError(f"the pattern {pattern!r} needs fields {sorted(missing)}")
    if not lists & {m.group(1) for m in _SLOT.finditer(pattern)}:
        return _SLOT.sub(lambda m: str(names[m.group(1)]), pattern)
    body = pattern[len("(and "):-1] if pattern.startswith("(and ") else pattern
    parts = []
    for conjunct in _conjuncts(body):
        used = lists & {m.group(1) for m in _SLOT.finditer(conjunct)}
        for i in range(max((len(names[u]) for u in used), default=1)):
            parts.append(_SLOT.sub(lambda m, i=i, used=used: names[m.group(1)][i] if m.group(1) in used
                                   else str(names[m.group(1)]), conjunct))
    return parts[0] if len(parts) == 1 else "(and " + " ".join(parts) + ")"


def _conjuncts(body: str) -> list[str]:
    """The top-level parenthesised formulas of `body`."""
    out, depth, start = [], 0, 0
    for i, ch in enumerate(body):
        if ch == "(":
            if depth == 0:
                start = i
            depth += 1
        elif ch == ")":
            depth -= 1
            if depth == 0:
                out.append(body[start:i + 1])
    return out
