"""`RuleInterpreter`: the offline default for a world's controlled English. A baseline.

It is built from the `Language` the world declares (`servicerobot.envs.language`; `RuleInterpreter.for_world`),
the same templates the world's task generator and people speak from, and knows nothing about the true world:
it matches an utterance against every template, resolves each noun phrase against the robot's entity
catalogue (and, to break ties, the retrieved facts), and maps the matched event or task kind to a delta or a
PDDL goal: the meaning the language declares for the kind, filled with the entities the phrases name (and
those the kind implies: the speaker, the bed of a room), a `p|q` predicate chosen by the domain's signatures.
It holds no meaning of its own: every world's sentences mean what their declaration says. Text outside the
templates is not understood (an empty update, or an error for a task). Honest label: this is template
parsing, not language understanding.
"""

from __future__ import annotations

import itertools
import re
from collections import defaultdict
from collections.abc import Mapping, Sequence
from dataclasses import dataclass

from servicerobot.envs.language import IMPLIED_FORMS, Language, Phrasing, fill
from servicerobot.errors import PDDLError, ServiceRobotError
from servicerobot.language.base import Usage
from servicerobot.language.compact import _person
from servicerobot.language.interpreter import Context, QueryEdge, QueryGraph, QueryNode
from servicerobot.memory.catalogue import entity_phrase, room_names
from servicerobot.memory.triplets import Delta
from servicerobot.pddl import Atom

__all__ = ["NotUnderstood", "RuleInterpreter", "declared_changes", "declared_goals", "template_likeness"]

_FIELD = re.compile(r"\{(\w+)\}")
_CHOICE = re.compile(r"\(([\w-]+(?:\|[\w-]+)+) ")  # "(on|inside ": the predicate the domain's signatures pick
_WHEN = re.compile(r"^\(when (\(.*?\)) (\(.*\))\)$")


class NotUnderstood(ServiceRobotError, ValueError):
    """The text matches none of the world's templates."""


@dataclass(frozen=True)
class _Template:
    kind: str
    phrasing: Phrasing
    text: str
    parts: tuple[tuple[bool, str], ...]  # (is_field, literal text or field name)


def _compile(kind: str, phrasing: Phrasing, template: str) -> _Template:
    parts: list[tuple[bool, str]] = []
    pos = 0
    for m in _FIELD.finditer(template):
        if m.start() > pos:
            parts.append((False, template[pos:m.start()].lower()))
        name = m.group(1)
        parts.append((True, name.removesuffix("_cap")))
        pos = m.end()
    if pos < len(template):
        parts.append((False, template[pos:].lower()))
    return _Template(kind, phrasing, template, tuple(parts))


def _compiled(phrasings: Mapping[str, Phrasing]) -> list[_Template]:
    return [_compile(k, p, t) for k, p in phrasings.items() for t in p.templates]


class _Lexicon:
    """Phrase -> entity names, built from the catalogue the way people name things: with the article
    ("the red mug", the household's phrases) and without it ("red mug", where a template has the article)."""

    def __init__(self, entities: Mapping[str, Mapping]):
        self.entities = entities
        self.items: dict[str, set[str]] = defaultdict(set)
        self.owned: dict[tuple[str, str], set[str]] = defaultdict(set)  # (owner, phrase) for "my ..."
        self.fixtures: dict[str, set[str]] = defaultdict(set)
        self.rooms: dict[str, set[str]] = defaultdict(set)
        self.people: dict[str, str] = {}
        self.fixture_room: dict[str, str] = {}
        room_by_label = {}
        for name, e in entities.items():
            if e.get("type") == "room":
                label = str(e.get("noun", name)).lower()
                room_by_label[label] = room_by_label[name.lower()] = name
                self.rooms[label if "'s " in label else f"the {label}"].add(name)
                self.rooms[label].add(name)
        noun_count: dict[str, int] = defaultdict(int)
        for e in entities.values():
            if e.get("room") is not None:
                noun_count[str(e.get("noun")).lower()] += 1
        for name, e in entities.items():
            typ = e.get("type")
            noun = str(e.get("noun", "")).lower()
            if not noun:  # unnamed (a place on the floor): nobody says it
                continue
            if typ == "person":
                self.people[noun] = name
            elif e.get("room") is not None:  # a fixture
                owner = e.get("owner")
                if owner:
                    self.fixtures[f"{owner.lower()}'s {noun}"].add(name)
                    self.owned[(owner.lower(), f"my {noun}")].add(name)
                if noun_count[noun] <= 1:
                    self.fixtures[f"the {noun}"].add(name)
                self.fixtures[noun].add(name)
                room = str(e["room"]).lower()
                if room in room_by_label:
                    self.fixture_room[name] = room_by_label[room]
                    room = str(entities[room_by_label[room]].get("noun", room)).lower()
                self.fixtures[f"the {noun} in {room if chr(39) + 's ' in room else 'the ' + room}"].add(name)
            elif typ not in ("room", "robot"):
                owner = e.get("owner")
                if owner:
                    self.items[entity_phrase(e).lower()].add(name)
                    plain = dict(e)
                    plain.pop("owner")
                    self.owned[(owner.lower(), "my " + entity_phrase(plain).lower())].add(name)
                else:
                    self.items["the " + entity_phrase(e).lower()].add(name)
                    self.items[entity_phrase(e).lower()].add(name)
                    self.items[noun].add(name)

    def item(self, phrase: str, speaker: str) -> set[str]:
        return self.items.get(phrase, set()) | self.owned.get((speaker, phrase), set())

    def fixture(self, phrase: str, speaker: str) -> set[str]:
        return self.fixtures.get(phrase, set()) | self.owned.get((speaker, phrase), set())


@dataclass
class _Match:
    kind: str
    phrasing: Phrasing
    template: str
    fields: dict[str, object]  # field -> resolved value (entity set, list of sets, or fixed word)


class RuleInterpreter:
    """Template parsing of a world's controlled English (see the module docstring).

    Args:
        language: the declaration of the world it runs in (default: the household world's, which AI2-THOR's
            and Habitat's worlds speak too); `for_world` takes it from a world.
    """

    name = "rules"

    def __init__(self, language: Language | None = None) -> None:
        if language is None:
            from servicerobot.envs.household.language import LANGUAGE as language
        self.language = language
        self._events = _compiled(language.events)
        self._tasks = _compiled(language.tasks)
        self._split = (re.compile(r"(?<=[.?!]) (?:" + "|".join(map(re.escape, language.joiners)) + ")")
                       if language.joiners else None)
        self.usage = Usage()
        self._lexicon: tuple[Mapping, _Lexicon] | None = None

    @classmethod
    def for_world(cls, world) -> RuleInterpreter:
        """The rule interpreter of `world`'s declared language (a world without one speaks the household's)."""
        return cls(getattr(world, "language", None))

    # ------------------------------------------------------------------ matching
    def _lex(self, entities: Mapping[str, Mapping]) -> _Lexicon:
        # Memory hands out the same catalogue object until an entity is added; keep it alive so its id
        # cannot be reused by another mapping.
        if self._lexicon is None or self._lexicon[0] is not entities:
            self._lexicon = (entities, _Lexicon(entities))
        return self._lexicon[1]

    def _resolve(self, field: str, value: str, lex: _Lexicon, speaker: str):
        value = value.strip()
        if not value:
            return None
        role = self.language.fields.get(field)
        if isinstance(role, tuple):  # a word that names nothing ("on" / "in")
            return value if value in role else None
        if role == "item":
            return lex.item(value, speaker) or None
        if role == "items":
            parts = re.split(r", | and ", value)
            found = [lex.item(p, speaker) for p in parts]
            return found if all(found) else None
        if role == "fixture":
            return lex.fixture(value, speaker) or None
        if role == "room":
            return lex.rooms.get(value) or None
        if role == "person":
            name = lex.people.get(value)
            return {name} if name else None
        return None

    def _match(self, template: _Template, text: str, lex: _Lexicon, speaker: str) -> list[dict]:
        """Every way of reading `text` with `template` in which all fields resolve."""
        parts = template.parts
        results: list[dict] = []

        def walk(i: int, pos: int, bound: dict) -> None:
            if len(results) >= 8:
                return
            if i == len(parts):
                if pos == len(text):
                    results.append(dict(bound))
                return
            is_field, token = parts[i]
            if not is_field:
                if text.startswith(token, pos):
                    walk(i + 1, pos + len(token), bound)
                return
            nxt = parts[i + 1][1] if i + 1 < len(parts) else None
            ends = [len(text)] if nxt is None else [m.start() for m in re.finditer(re.escape(nxt), text)
                                                    if m.start() > pos]
            for end in ends:
                value = self._resolve(token, text[pos:end], lex, speaker)
                if value is not None:
                    bound[token] = value
                    walk(i + 1, end, bound)
                    del bound[token]

        walk(0, 0, {})
        return results

    def _read(self, text: str, speaker: str, context: Context, templates: list[_Template],
              whole: bool = False) -> list[_Match]:
        """The template reading of each sentence; with `whole`, [] unless every sentence is read."""
        lex = self._lex(context.entities)
        who = speaker.strip().lower()
        out = []
        text = text.strip()
        for sentence in (self._split.split(text) if self._split else [text]):
            sentence = sentence.strip().lower()
            for template in templates:
                found = self._match(template, sentence, lex, who)
                if found:
                    out.append(_Match(template.kind, template.phrasing, template.text, found[0]))
                    break
            else:
                if whole:
                    return []
        return out

    # ------------------------------------------------------------------ Interpreter protocol
    def classify(self, text: str, speaker: str, context: Context | None = None) -> str:
        """"update" when every sentence reads as a reported event, "task" for a request.

        Without a context (no catalogue to resolve phrases) it falls back on the form: a question,
        "please" or an imperative task template means a task.
        """
        if context is not None:
            if self._read(text, speaker, context, self._events, whole=True):
                return "update"
            if self._read(text, speaker, context, self._tasks, whole=True):
                return "task"
        low = text.lower()
        if low.rstrip().endswith("?") or "please" in low or low.startswith(("could you", "can you")):
            return "task"
        for t in self._tasks:
            lits = [tok for is_f, tok in t.parts if not is_f and len(tok) > 4]
            if lits and all(lit in low for lit in lits):
                return "task"
        return "update"

    def interpret_update(self, text: str, speaker: str, context: Context, feedback: Sequence[str] = ()) -> Delta:
        matches = self._read(text, speaker, context, self._events)
        if not matches:
            raise NotUnderstood(f"no {self.language.name} event template matches {text!r}")
        lex = self._lex(context.entities)
        facts = _FactView(context.facts)
        remove: set[Atom] = set()
        add: set[Atom] = set()
        for m in matches:
            phrasing = self._meaning(m, "event", "`add`/`remove`")
            names = self._bind(m, lambda n, p=phrasing, f=facts: sum(map(len, _changes(p, n, f, context))),
                               speaker, facts, context, lex)
            r, a = _changes(phrasing, names, facts, context)
            facts = facts.apply(r, a)
            remove |= r - add
            add = (add - r) | a
        return Delta.of(remove, add)

    def interpret_task(self, text: str, speaker: str, context: Context, feedback: Sequence[str] = ()) -> str:
        matches = self._read(text, speaker, context, self._tasks)
        if not matches:
            raise NotUnderstood(f"no {self.language.name} task template matches {text!r}")
        lex = self._lex(context.entities)
        facts = _FactView(context.facts)
        phrasing = self._meaning(matches[0], "task", "`goal`")
        names = self._bind(matches[0], lambda n: _news(_choose(fill(phrasing.goal, n), context), facts),
                           speaker, facts, context, lex)
        return _choose(fill(phrasing.goal, names), context)

    def select_entities(self, text: str, speaker: str, context: Context, limit: int = 40) -> list[str]:
        lex = self._lex(context.entities)
        matches = self._read(text, speaker, context, self._events + self._tasks)
        names: list[str] = []
        for m in matches:
            for value in m.fields.values():
                for group in (value if isinstance(value, list) else [value]):
                    if isinstance(group, set):
                        names.extend(sorted(group))
        person = lex.people.get(speaker.strip().lower())
        if person:
            names.append(person)
        names.append(context.robot)
        return list(dict.fromkeys(names))[:limit]

    def query_graph(self, text: str, speaker: str, context: Context) -> QueryGraph:
        """One node per noun phrase of the matched template (typed by the field's name where that is a domain
        type, else by its role, else by the entity's catalogue type), one per thing the kind is declared to be
        `about`; "the X in the Y" adds an in-room edge."""
        nodes: list[QueryNode] = []
        edges: list[QueryEdge] = []
        low = text.strip().lower()
        templates = self._tasks if self.classify(text, speaker, context) == "task" else self._events
        matches = self._read(text, speaker, context, templates) or self._read(text, speaker, context,
                                                                              self._events + self._tasks)
        types = context.domain.types
        for m in matches:
            for fld, value in m.fields.items():
                if isinstance(value, str):  # a word that names nothing
                    continue
                role = self.language.fields.get(fld)
                role = "item" if role == "items" else role  # "the mug and the plate": each an item
                declared = fld if fld in types else role if role in types else None
                for g in value if isinstance(value, list) else [value]:
                    for name in sorted(g)[:1]:
                        phrase = entity_phrase(context.entities[name])
                        kind = declared or str(context.entities[name].get("type", "thing"))
                        if any(n.text == phrase and n.type == kind for n in nodes):
                            continue
                        node = QueryNode(f"n{len(nodes)}", phrase, kind)
                        nodes.append(node)
                        room = str(context.entities[name].get("room") or "")
                        if room and f" in {room}" in low or (room and f" in the {room}" in low):
                            rid = f"n{len(nodes)}"
                            nodes.append(QueryNode(rid, room, "room"))
                            edges.append(QueryEdge(node.id, "in-room", rid))
            for words, typ in m.phrasing.about.items():
                nodes.append(QueryNode(f"n{len(nodes)}", words, typ))
        # What a person reports usually concerns themselves too ("I'm going to ...").
        if speaker.strip() and not any(n.text.lower() == speaker.strip().lower() for n in nodes):
            nodes.append(QueryNode(f"n{len(nodes)}", speaker.strip(), "person"))
        return QueryGraph(tuple(nodes), tuple(edges))

    # ------------------------------------------------------------------ semantics
    def _meaning(self, m: _Match, what: str, parts: str) -> Phrasing:
        if not m.phrasing.declared:
            raise NotUnderstood(f"the {self.language.name} language declares no meaning for the {what} kind "
                                f"{m.kind!r}; declare its {parts} beside its templates")
        return m.phrasing

    def _bind(self, m: _Match, news, speaker: str, facts: _FactView, context: Context,
              lex: _Lexicon) -> dict[str, str | list[str]]:
        """Entity names for a reading's fields, said or implied: each phrase's candidates narrowed to the room
        the sentence names, then the choice under which the meaning is most news to memory (`news` counts
        it; a choice the domain's signatures refuse is out) and whose entities memory relates most ("the mug
        from the desk"), then the first by name."""
        roles = self.language.fields
        values = dict(m.fields)
        for f, form in m.phrasing.implied.items():
            if f not in values:
                try:
                    values[f] = _implied(form, m, speaker, facts, context, lex)
                except NotUnderstood:
                    if f in m.phrasing.meant():  # else it only helps to choose: read without it
                        raise
        rooms = set().union(*(v for f, v in values.items() if roles.get(f) == "room" and isinstance(v, set)))
        names: dict[str, str | list[str]] = {f: v for f, v in values.items() if isinstance(v, str)}
        choices: dict[str, list[str]] = {}
        for f, v in values.items():
            if isinstance(v, set):
                cands = sorted(v)
                if rooms and roles.get(f) != "room":
                    cands = [c for c in cands if _in_rooms(c, rooms, facts, lex)] or cands
                choices[f] = cands
        groups = {f: [min(g) for g in v] for f, v in values.items() if isinstance(v, list)}
        order = list(choices)
        best: tuple | None = None
        refused: NotUnderstood | None = None
        for combo in itertools.islice(itertools.product(*(choices[f] for f in order)), 512):
            bound = dict(zip(order, combo))
            try:
                score = (news({**names, **bound, **groups}), _links(set(combo), facts))
            except NotUnderstood as exc:
                refused = exc
                continue
            if best is None or score > best[0]:
                best = (score, bound)
        if best is None and refused is not None:
            raise refused
        names.update(best[1] if best else {})
        for f, v in values.items():  # a list of phrases ("the mug and the plate"): each its own choice
            if isinstance(v, list):
                chosen: list[str] = []
                for i, group in enumerate(v):
                    rest = [min(g) for g in v[i + 1:]]
                    chosen.append(_best(group, lambda c, f=f, before=list(chosen), rest=rest: news(
                        {**names, **groups, f: [*before, c, *rest]})))
                names[f] = groups[f] = chosen
        return names


def _implied(form: str, m: _Match, speaker: str, facts: _FactView, context: Context, lex: _Lexicon):
    """What an implied field stands for (`IMPLIED_FORMS`): the speaker, the first thing of a type (in the
    room the sentence names), or every item of a type memory places in that room (a list)."""
    found = IMPLIED_FORMS.match(form)
    if found.group("speaker"):
        person = lex.people.get(speaker.strip().lower())
        if person is None:
            raise NotUnderstood(f"who is {speaker!r}? no person of that name is known")
        return {person}
    typ, room_field = found.group("type"), found.group("room")
    room = min(m.fields[room_field]) if room_field else None
    of_type = sorted(n for n, e in context.entities.items() if e.get("type") == typ)
    if found.group("quantifier") == "every":
        chosen = [n for n in of_type if room is None or _room_of(n, facts, lex) == room]
        if not chosen:
            raise NotUnderstood(f"no {typ} is known to be in {room}" if room else f"no {typ} is known")
        return [{n} for n in chosen]
    if room is not None:
        of_type = [n for n in of_type if lex.fixture_room.get(n) == room]
    if not of_type:
        raise NotUnderstood(f"no {typ} is known in {room}" if room else f"no {typ} is known")
    return {of_type[0]}


def _choose(text: str, context: Context) -> str:
    """`text` with each `(p|q args)` literal given the first predicate whose signature in the domain takes its
    arguments' catalogue types."""
    def pick(found: re.Match) -> str:
        args = _args_after(text, found.end())
        for predicate in found.group(1).split("|"):
            if _fits(predicate, args, context):
                return f"({predicate} "
        raise NotUnderstood(f"none of {found.group(1).split('|')} takes {args} in the {context.domain.name} domain")

    return _CHOICE.sub(pick, text)


def _args_after(text: str, pos: int) -> list[str]:
    return text[pos:text.index(")", pos)].split()


def _fits(predicate: str, args: list[str], context: Context) -> bool:
    signature = context.domain.predicates.get(predicate)
    if signature is None or signature.arity != len(args):
        return False
    for arg, (_, typ) in zip(args, signature.params):
        own = context.entities.get(arg, {}).get("type")
        try:
            if own is None or not context.domain.types.is_subtype(str(own), typ):
                return False
        except PDDLError:  # a catalogue type the domain does not declare
            return False
    return True


def _changes(phrasing: Phrasing, names: Mapping, facts: _FactView, context: Context) -> tuple[set[Atom], set[Atom]]:
    """An event's declared meaning under `names`: the atoms it adds (a `when` one if memory believes its
    condition), and the believed atoms its `remove` patterns match; only what changes."""
    add: set[Atom] = set()
    for pattern in phrasing.add:
        literal = fill(pattern, names)
        when = _WHEN.match(literal)
        if when:
            if Atom.parse(_choose(when.group(1), context)) not in facts:
                continue
            literal = when.group(2)
        add.add(Atom.parse(_choose(literal, context)))
    remove: set[Atom] = set()
    for pattern in phrasing.remove:
        predicates, *args = fill(pattern, names).strip("()").split()
        allowed = set(predicates.split("|"))
        known = [x for x in args if x != "?"]
        pool = facts.about(known[0]) if known else facts.facts
        remove |= {a for a in pool if a.predicate in allowed and len(a.args) == len(args)
                   and all(w in ("?", x) for w, x in zip(args, a.args))}
    return _strict(remove, add, facts)


def _role_fits(role: str, name: str, entities: Mapping[str, Mapping]) -> bool:
    """Whether entity `name` can fill a field of `role` (`FIELD_ROLES`: a movable item, a fixture, a room, a
    person)."""
    e = entities.get(name, {})
    typ = e.get("type")
    if role in ("item", "items"):
        return typ not in ("room", "person", "robot") and not e.get("room")
    if role == "fixture":
        return typ != "room" and bool(e.get("room"))
    return typ == role


def declared_changes(language: Language, context: Context, names: Sequence[str], speaker: str,
                     most: int = 64) -> dict[Delta, set[str]]:
    """Every change the world's declared events mean when their fields are filled from `names` (and a person
    field also by the speaker), as memory would take it: what people may report in this world's own terms
    ("taken out of the fridge": moved and no longer cold), for a reader that enumerates answers. A kind with
    no declared meaning, a filling the domain's signatures refuse and a change of nothing give none; at most
    `most` fillings per kind. Each change maps to the kinds that mean it."""
    person = _person(context.entities, speaker)
    pool = [n for n in dict.fromkeys([*names, *([person] if person else [])]) if n in context.entities]
    facts = _FactView(context.facts)
    out: dict[Delta, set[str]] = {}
    for kind, phrasing in language.events.items():
        if not (phrasing.add or phrasing.remove):
            continue
        fields = sorted(phrasing.meant())
        roles = [language.fields.get(f) for f in fields]
        if any(not isinstance(r, str) for r in roles):
            continue  # a field of words (a preposition) in the meaning itself: nothing to enumerate
        choices = [[n for n in pool if _role_fits(r, n, context.entities)] for r in roles]
        for filling in itertools.islice(itertools.product(*choices), most):
            if len(set(filling)) < len(filling):
                continue
            values = {f: ([n] if r == "items" else n) for f, r, n in zip(fields, roles, filling)}
            try:
                if any(_believed(pattern, values, facts, context) for pattern in phrasing.add):
                    continue  # the event would add what memory holds already: it is not this event
                remove, add = _changes(phrasing, values, facts, context)
            except (NotUnderstood, PDDLError, ValueError):
                continue
            if (remove or add) and all(_fits(a.predicate, list(a.args), context) for a in add):
                out.setdefault(Delta.of(remove, add), set()).add(kind)
    return out


def declared_goals(language: Language, context: Context, names: Sequence[str], speaker: str,
                   together: Sequence[str] = (), most: int = 64) -> dict[str, set[str]]:
    """Every goal the world's declared task kinds mean when their fields are filled from `names`, a field the
    kind implies also by what it implies (`IMPLIED_FORMS`: the speaker, "the fridge", every book memory places
    in a room `names` holds): what people ask in this world's own terms ("make sure the milk is cold again":
    in the fridge and cold), for a reader that enumerates answers. A filling the domain's signatures refuse and
    a goal memory believes holds already give none; at most `most` fillings per kind. A list of items is one
    of `names` or all of `together` (the things the words name side by side: "the grey shirt and the socks").
    Each goal maps to the kinds that mean it."""
    person = _person(context.entities, speaker)
    pool = [n for n in dict.fromkeys([*names, *([person] if person else [])]) if n in context.entities]
    rooms = [n for n in pool if context.entities[n].get("type") == "room"]
    facts = _FactView(context.facts)
    out: dict[str, set[str]] = {}
    for kind, phrasing in language.tasks.items():
        if not phrasing.goal:
            continue
        fields = sorted(phrasing.meant())
        roles = [language.fields.get(f) for f in fields]
        if any(not isinstance(r, str) for r in roles):
            continue
        said = phrasing.fields()
        # a field no template says, or one the words name nothing for, stands for what the kind implies ("make
        # sure the milk is cold again": the fridge); one they name something else for ("put the mug back in the
        # cupboard" of "put {items} back in {fridge}") stands for nothing
        choices = [_named_choices(r, pool, context, phrasing.implied.get(f, ""), together)
                   if f in said and any(_role_fits(r, n, context.entities) for n in pool)
                   else _implied_choices(phrasing.implied.get(f, ""), person, rooms, facts, context)
                   for f, r in zip(fields, roles)]
        for filling in itertools.islice(itertools.product(*choices), most):
            flat = [n for v in filling for n in (v if isinstance(v, list) else [v])]
            if len(set(flat)) < len(flat):
                continue
            values = {f: ([v] if r == "items" and isinstance(v, str) else v)
                      for f, r, v in zip(fields, roles, filling)}
            try:
                goal = _choose(fill(phrasing.goal, values), context)
            except (NotUnderstood, PDDLError, ValueError):
                continue
            if "?" not in goal and not _news(goal, facts):
                continue  # memory believes it holds: nothing asked
            if all(_fits(p, a.split(), context) for _, p, a in _LITERAL.findall(goal) if "?" not in a):
                out.setdefault(goal, set()).add(kind)
    return out


def _named_choices(role: str, pool: Sequence[str], context: Context, implied: str = "",
                   together: Sequence[str] = ()) -> list:
    """What a field of `role` may stand for among the named things: each that fits (and is of the type the
    field's implied form names: "the fridge" of a fridge), and for a list of items those of `together` that
    fit, where two or more do ("wash and dry the grey shirt and the socks")."""
    found = IMPLIED_FORMS.match(implied)
    typ = found.group("type") if found else None
    fits = lambda n: _role_fits(role, n, context.entities) and (typ is None or context.entities[n].get("type") == typ)
    group = [n for n in together if fits(n)] if role == "items" else []
    return [n for n in pool if fits(n)] + ([group] if len(group) > 1 else [])


def _implied_choices(form: str, person: str | None, rooms: Sequence[str], facts: _FactView,
                     context: Context) -> list:
    """What an implied field may stand for, for enumeration: the speaker; every thing of the type (in a room
    of `rooms` where the form names one); or, for `every <type> in {room}`, per room the list of the items of
    the type memory relates to a fixture there."""
    found = IMPLIED_FORMS.match(form)
    if not found:
        return []
    if found.group("speaker"):
        return [person] if person else []
    typ = found.group("type")
    of_type = sorted(n for n, e in context.entities.items() if e.get("type") == typ)
    if not found.group("room"):
        return of_type if found.group("quantifier") == "the" else []
    named = room_names(context.entities)
    room_of = {n: named.get(e["room"], e["room"]) for n, e in context.entities.items() if e.get("room")}
    if found.group("quantifier") == "the":
        return [n for n in of_type if room_of.get(n) in rooms]
    groups = [[n for n in of_type if any(len(a.args) == 2 and a.args[0] == n and room_of.get(a.args[1]) == r
                                         for a in facts.about(n))] for r in rooms]
    return [g for g in groups if g]


def _believed(pattern: str, values: Mapping, facts: _FactView, context: Context) -> bool:
    """Whether an unconditional added pattern, filled, is believed already (a `when` one may well be)."""
    literal = fill(pattern, values)
    return not _WHEN.match(literal) and Atom.parse(_choose(literal, context)) in facts


_PLAIN_WORDS = frozenset({"the", "a", "an", "it", "its", "it's", "is", "are", "i", "i'm", "i've", "my", "to", "in", "on",
                          "of", "and", "now", "just", "so", "you", "know", "oh", "also", "please", "s"})


def template_likeness(phrasings: Mapping[str, Phrasing], text: str) -> dict[str, float]:
    """Kind -> how much of the words of its most alike template (not its fields, not words such as "the")
    `text` says, 0-1, over a language's `events` or `tasks`: "I took the milk out of the fridge and left it on
    the counter" says all of `warm`'s "I took {item} out of the fridge and left it {prep} {dest}.". A template
    counts only where the text says two of its words at least and half of them: one word in common ("has",
    "over", "put") tells no kind apart."""
    said = {w.rstrip("'") for w in re.findall(r"[a-z']+", text.lower())}
    said |= {w[:-1] for w in said if w.endswith("s")}
    out: dict[str, float] = {}
    for kind, phrasing in phrasings.items():
        best = 0.0
        for template in phrasing.templates:
            own = {w.rstrip("'") for w in re.findall(r"[a-z']+", _SLOT_TEXT.sub(" ", template).lower())} - _PLAIN_WORDS
            common = len(own & said)
            if common >= 2 and 2 * common >= len(own):
                best = max(best, common / len(own))
        out[kind] = best
    return out


_SLOT_TEXT = re.compile(r"\{\w+\}")


class _FactView:
    """Facts indexed by argument, with a functional `apply` for multi-event utterances."""

    def __init__(self, facts):
        self.facts = frozenset(facts)
        self.by_arg: dict[str, list[Atom]] = defaultdict(list)
        for a in self.facts:
            for x in a.args:
                self.by_arg[x].append(a)

    def __contains__(self, atom: Atom) -> bool:
        return atom in self.facts

    def about(self, entity: str) -> list[Atom]:
        return sorted(self.by_arg.get(entity, ()))

    def apply(self, remove: set[Atom], add: set[Atom]) -> _FactView:
        return _FactView((self.facts - remove) | add)


def _best(candidates, score) -> str:
    """The candidate `score` rates highest, then the first by name."""
    ordered = sorted(candidates)
    if len(ordered) > 1:
        return max(ordered, key=lambda c: (score(c), [-ord(ch) for ch in c]))
    return ordered[0]


_LITERAL = re.compile(r"(\(not )?\(([\w-]+)((?: [\w?-]+)*)\)")


def _news(goal: str, facts: _FactView) -> int:
    """How many literals of a filled goal memory does not believe yet."""
    count = 0
    for neg, pred, args in _LITERAL.findall(goal):
        atom = Atom(pred, tuple(args.split()))
        if not any(x.startswith("?") for x in atom.args) and (atom in facts) == bool(neg):
            count += 1
    return count


def _links(entities: set[str], facts: _FactView) -> int:
    """How many believed facts relate two of `entities` (an item on the fixture the sentence names)."""
    return sum(1 for e in entities for a in facts.about(e) if len(a.args) == 2 and a.args[0] == e
               and a.args[1] in entities)


def _in_rooms(entity: str, rooms: set[str], facts: _FactView, lex: _Lexicon) -> bool:
    """Whether memory places `entity` in one of `rooms`: a fixture of the room, in the room, or related to a
    fixture of it (on it, inside it)."""
    if lex.fixture_room.get(entity) in rooms:
        return True
    for a in facts.about(entity):
        if a.args[0] != entity or len(a.args) != 2:
            continue
        if a.predicate == "in-room" and a.args[1] in rooms:
            return True
        if lex.fixture_room.get(a.args[1]) in rooms:
            return True
    return False


def _room_of(entity: str, facts: _FactView, lex: _Lexicon) -> str | None:
    """The room of the first fixture memory relates `entity` to (what it is on or inside), if any."""
    for a in facts.about(entity):
        if len(a.args) == 2 and a.args[0] == entity and a.args[1] in lex.fixture_room:
            return lex.fixture_room[a.args[1]]
    return None


def _strict(remove: set[Atom], add: set[Atom], facts: _FactView) -> tuple[set[Atom], set[Atom]]:
    """Only what changes: remove what is believed, add what is not."""
    return {a for a in remove if a in facts and a not in add}, {a for a in add if a not in facts}
