"""What a world's people say, declared once beside the world: sentence templates and what each means.

A world's task generator and its people render every sentence from the world's `Language`, and the rule
interpreter (`servicerobot.language.rule_interpreter`) is built from the same declaration, so the one
`ServiceAgent` reads each world's own sentences and there is no second copy of a template or of a meaning. A
`Language` says, per sentence kind, the templates (`str.format` fields) and their meaning: for a task the PDDL
goal it stands for, for a reported event the facts it makes true and false, both as patterns over the
template's fields filled with entity names. `fields` says what each field names (an item, a fixture, a room...),
or the words it may be when it names nothing (a preposition, a verb form).

A meaning pattern may use, besides `{field}`:

* `(p|q {a} {b})`: the first of the predicates whose signature in the world's domain takes the arguments'
  types (`(on|inside {item} {dest})`: `on` a surface, `inside` a container); in `remove`, any of them;
* `?` in `remove` for any argument (`(in-room {actor} ?)`: wherever the actor was);
* `(when C L)` in `add`, `C` one atom: `L` is added when memory believes `C`
  (`(when (chills {dest}) (cold {item}))`).

A field the meaning uses that a template does not say is `implied` (`IMPLIED_FORMS`): `{speaker}` (the person
speaking), `the <type>` (the first by name of the known things of that catalogue type), `the <type> in
{room}`, or `every <type> in {room}` (a list: each item of the type memory relates to a fixture of the room, on
it or inside it). An implied field the meaning does not use only helps to choose among readings (the actor of
"I put the mug on the table": the mug the speaker held).
`about` names what else a sentence concerns, for retrieval ("dirty dishes" of type `dish`). A kind with no
meaning (`goal`/`add`/`remove` empty) has only its templates: the Context Matters world reads its task
sentences into requirements itself (`envs.context_matters.goals`).
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass, field

from servicerobot.errors import ServiceRobotError

__all__ = ["FIELD_ROLES", "IMPLIED_FORMS", "Language", "LanguageError", "Phrasing", "fill", "template_regex"]

FIELD_ROLES = ("item", "items", "fixture", "room", "person", "number", "class")
"""What a field may name: one item, a list of items ("the mug and the plate"), a fixture, a room, a person; or,
naming no entity, a number ("three", "3") or a class of things in words ("coffee table", "dining room")."""

IMPLIED_FORMS = re.compile(r"^(?:\{(?P<speaker>speaker)\}|(?P<quantifier>the|every) (?P<type>[a-z][\w-]*)"
                           r"(?: in \{(?P<room>\w+)\})?)$")
"""What an implied field may be: `{speaker}`, `the <type>`, `the <type> in {room}`, `every <type> in {room}`."""

_SLOT = re.compile(r"\{(\w+)\}")


class LanguageError(ServiceRobotError, ValueError):
    """A world's language declaration is inconsistent, or a meaning was asked for fields it lacks."""


@dataclass(frozen=True)
class Phrasing:
    """One kind of sentence: its templates and what it means (the pattern forms: the module docstring).

    Attributes:
        templates: the ways people say it; `{field}` slots, `{field_cap}` for a capitalised one.
        goal: for a task, the PDDL goal it asks for, over the fields (`"(safe {item})"`).
        add: for an event, the atoms it makes true (`"(item-on {item} {furniture})"`).
        remove: for an event, the atoms it makes false; `?` stands for any argument (`"(item-on {item} ?)"`).
        implied: field -> what it stands for when a template does not say it (`IMPLIED_FORMS`: `"{speaker}"`,
            `"the bed in {room}"`); such a field takes part in the meaning and in choosing among readings.
        about: words -> catalogue type of what else the sentence concerns, for retrieval
            (`{"dirty dishes": "dish"}` for "Please wash the dishes.").
    """

    templates: tuple[str, ...]
    goal: str = ""
    add: tuple[str, ...] = ()
    remove: tuple[str, ...] = ()
    implied: Mapping[str, str] = field(default_factory=dict, hash=False)
    about: Mapping[str, str] = field(default_factory=dict, hash=False)

    @property
    def declared(self) -> bool:
        """Whether a meaning is declared (a kind without one has only its templates)."""
        return bool(self.goal or self.add or self.remove)

    def fields(self) -> set[str]:
        """The fields the templates use (`_cap` forms folded into their field)."""
        return {f for t in self.templates for f in _fields(t)}

    def meant(self) -> set[str]:
        """The fields the meaning uses."""
        return {m.group(1) for p in (self.goal, *self.add, *self.remove) for m in _SLOT.finditer(p)}


def _fields(template: str) -> set[str]:
    return {m.group(1).removesuffix("_cap") for m in _SLOT.finditer(template)}


@dataclass(frozen=True)
class Language:
    """A world's sentences: task and event phrasings by kind, and what each template field names.

    `fields` maps a field to one of `FIELD_ROLES`, or to the tuple of words it may be. `joiners` are the words
    that join two reports into one utterance ("Also, "), after the first one's full stop.
    """

    name: str
    tasks: Mapping[str, Phrasing]
    events: Mapping[str, Phrasing] = field(default_factory=dict)
    fields: Mapping[str, str | tuple[str, ...]] = field(default_factory=dict)
    joiners: tuple[str, ...] = ()

    def __post_init__(self) -> None:
        for name, role in self.fields.items():
            if not isinstance(role, tuple) and role not in FIELD_ROLES:
                raise LanguageError(f"field {name!r} of the {self.name} language names {role!r}; a field names "
                                    f"one of {FIELD_ROLES} or is a tuple of the words it may be")
        for group in (self.tasks, self.events):
            for kind, phrasing in group.items():
                self._check(kind, phrasing)

    def _check(self, kind: str, phrasing: Phrasing) -> None:
        where = f"the {self.name} language's {kind!r}"
        unknown = sorted((phrasing.fields() | set(phrasing.implied)) - set(self.fields))
        if unknown:
            raise LanguageError(f"{where} templates use fields {unknown} that its `fields` table does not "
                                "declare; add what each names")
        for name, form in phrasing.implied.items():
            found = IMPLIED_FORMS.match(form)
            if not found:
                raise LanguageError(f"{where} implies {name!r} as {form!r}; an implied field is '{{speaker}}', "
                                    "'the <type>', 'the <type> in {room}' or 'every <type> in {room}'")
            room = found.group("room")
            if room and self.fields.get(room) != "room":
                raise LanguageError(f"{where} implies {name!r} 'in {{{room}}}', which is not a room field")
        for template in phrasing.templates:
            said = _fields(template)
            unsaid = phrasing.meant() - said - set(phrasing.implied)
            if unsaid:
                raise LanguageError(f"{where} meaning uses fields {sorted(unsaid)} that its template "
                                    f"{template!r} does not say; add them to the template or to `implied`")
            for name, form in phrasing.implied.items():
                needs = set(_SLOT.findall(form)) - {"speaker"}
                if name not in said and needs - said:
                    raise LanguageError(f"{where} template {template!r} implies {name!r} as {form!r} but does "
                                        f"not say {sorted(needs - said)}")

    def goal(self, kind: str, **names: str) -> str:
        """The goal a task of `kind` stands for, with its fields filled by entity names (a `p|q` predicate
        choice is left for the reader, which knows the domain)."""
        return fill(self._phrasing(self.tasks, kind, "task").goal, names)

    def delta(self, kind: str, **names: str) -> tuple[tuple[str, ...], tuple[str, ...]]:
        """(remove, add) patterns of an event of `kind` with its fields filled (`?` left for any argument)."""
        p = self._phrasing(self.events, kind, "event")
        return tuple(fill(r, names) for r in p.remove), tuple(fill(a, names) for a in p.add)

    def _phrasing(self, group: Mapping[str, Phrasing], kind: str, what: str) -> Phrasing:
        if kind not in group:
            raise LanguageError(f"the {self.name} language has no {what} kind {kind!r}; it has {sorted(group)}")
        return group[kind]


def template_regex(template: str, patterns: Mapping[str, str]) -> re.Pattern:
    """A regular expression that reads `template` back: its text literally (case as given), each `{field}` a
    named group of `patterns[field]` (a field used twice must say the same)."""
    parts, pos, seen = ["^"], 0, set()
    for m in _SLOT.finditer(template):
        parts.append(re.escape(template[pos:m.start()]))
        name = m.group(1)
        parts.append(f"(?P={name})" if name in seen else f"(?P<{name}>{patterns[name]})")
        seen.add(name)
        pos = m.end()
    parts.append(re.escape(template[pos:]) + "$")
    return re.compile("".join(parts))


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
