"""`RuleInterpreter`: the offline default for a world's controlled English. A baseline.

It is built from the `Language` the world declares (`servicerobot.envs.language`; `RuleInterpreter.for_world`),
the same templates the world's task generator and people speak from, and knows nothing about the true world:
it matches an utterance against every template, resolves each noun phrase against the robot's entity
catalogue (and, to break ties, the retrieved facts), and maps the matched event or task kind to a delta or a
PDDL goal: the meaning the language declares for the kind, filled with the entities the phrases name, or,
for the household kinds whose meaning depends on memory, the household readings below. Text outside the
templates is not understood (an empty update, or an error for a task). Honest label: this is template
parsing, not language understanding.
"""

from __future__ import annotations

import itertools
import re
from collections import defaultdict
from collections.abc import Mapping, Sequence
from dataclasses import dataclass

from servicerobot.envs.language import Language, Phrasing, fill
from servicerobot.errors import ServiceRobotError
from servicerobot.language.base import Usage
from servicerobot.language.interpreter import Context, QueryEdge, QueryGraph, QueryNode
from servicerobot.memory.catalogue import entity_phrase
from servicerobot.memory.triplets import Delta
from servicerobot.pddl import Atom

__all__ = ["NotUnderstood", "RuleInterpreter"]

_FIELD = re.compile(r"\{(\w+)\}")
_SPLIT = re.compile(r"(?<=[.?!]) (?:Also, |And |Oh, and )")
_LOCATIONS = ("on", "inside", "held-by", "holding", "discarded", "item-on")
_SURFACES = ("surface", "shelf", "bed")


class NotUnderstood(ServiceRobotError, ValueError):
    """The text matches none of the world's templates."""


@dataclass(frozen=True)
class _Template:
    kind: str
    text: str
    parts: tuple[tuple[bool, str], ...]  # (is_field, literal text or field name)


def _compile(kind: str, template: str) -> _Template:
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
    return _Template(kind, template, tuple(parts))


def _compiled(phrasings: dict[str, Phrasing]) -> list[_Template]:
    return [_compile(k, t) for k, p in phrasings.items() for t in p.templates]


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
        for sentence in _SPLIT.split(text.strip()):
            sentence = sentence.strip().lower()
            for template in templates:
                found = self._match(template, sentence, lex, who)
                if found:
                    out.append(_Match(template.kind, template.text, found[0]))
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
        speaker_entity = lex.people.get(speaker.strip().lower())
        facts = _FactView(context.facts)
        remove: set[Atom] = set()
        add: set[Atom] = set()
        for m in matches:
            if self.language.events[m.kind].declared:
                r, a = self._declared_delta(m, facts, context, lex)
            else:
                r, a = self._event_delta(m, speaker_entity, facts, context, lex)
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
        phrasing = self.language.tasks[matches[0].kind]
        if phrasing.declared:
            names = self._bind(matches[0], [phrasing.goal], facts, context, lex)
            return fill(phrasing.goal, names)
        speaker_entity = lex.people.get(speaker.strip().lower())
        return self._task_goal(matches[0], speaker_entity, facts, context, lex)

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
        """One node per noun phrase of the matched template; "the X in the Y" adds an in-room edge."""
        nodes: list[QueryNode] = []
        edges: list[QueryEdge] = []
        low = text.strip().lower()
        templates = self._tasks if self.classify(text, speaker, context) == "task" else self._events
        matches = self._read(text, speaker, context, templates) or self._read(text, speaker, context,
                                                                              self._events + self._tasks)
        kinds = {"item": "item", "items": "item", "dest": "fixture", "src": "fixture", "sink": "sink",
                 "container": "container", "bed": "bed", "fridge": "fridge", "shelf": "shelf", "room": "room",
                 "person": "person", "actor": "person"}
        for m in matches:
            for fld, value in m.fields.items():
                if fld not in kinds and self.language.fields.get(fld) not in ("item", "fixture", "room", "person"):
                    continue
                groups = value if isinstance(value, list) else [value]
                for g in groups:
                    for name in sorted(g)[:1]:
                        phrase = entity_phrase(context.entities[name])
                        kind = kinds.get(fld) or str(context.entities[name].get("type", "thing"))
                        if any(n.text == phrase and n.type == kind for n in nodes):
                            continue
                        node = QueryNode(f"n{len(nodes)}", phrase, kind)
                        nodes.append(node)
                        room = str(context.entities[name].get("room") or "")
                        if room and f" in {room}" in low or (room and f" in the {room}" in low):
                            rid = f"n{len(nodes)}"
                            nodes.append(QueryNode(rid, room, "room"))
                            edges.append(QueryEdge(node.id, "in-room", rid))
            if m.kind in ("wash_dishes",):
                nodes.append(QueryNode(f"n{len(nodes)}", "dirty dishes", "dish"))
            elif m.kind == "discard_broken":
                nodes.append(QueryNode(f"n{len(nodes)}", "broken items", "item"))
            elif m.kind == "lights_off":
                nodes.append(QueryNode(f"n{len(nodes)}", "lights", "light"))
                nodes.append(QueryNode(f"n{len(nodes)}", "sinks", "sink"))
            elif m.kind == "organise_shelf":
                nodes.append(QueryNode(f"n{len(nodes)}", "books", "book"))
        # What a person reports usually concerns themselves too ("I'm going to ...").
        if speaker.strip() and not any(n.text.lower() == speaker.strip().lower() for n in nodes):
            nodes.append(QueryNode(f"n{len(nodes)}", speaker.strip(), "person"))
        return QueryGraph(tuple(nodes), tuple(edges))

    # ------------------------------------------------------------------ semantics
    def _bind(self, m: _Match, patterns: list[str], facts: _FactView, context: Context,
              lex: _Lexicon) -> dict[str, str | list[str]]:
        """Entity names for a reading's fields, for a kind whose meaning the language declares: each phrase's
        candidates narrowed to the room the sentence names, then the choice under which the meaning is most
        news to memory (goal literals not yet believed) and whose entities memory relates most ("the mug
        from the desk"), then the first by name."""
        roles = self.language.fields
        rooms = set().union(*(v for f, v in m.fields.items() if roles.get(f) == "room" and isinstance(v, set)))
        names: dict[str, str | list[str]] = {f: v for f, v in m.fields.items() if isinstance(v, str)}
        choices: dict[str, list[str]] = {}
        for f, v in m.fields.items():
            if isinstance(v, set):
                cands = sorted(v)
                if rooms and roles.get(f) != "room":
                    cands = [c for c in cands if _in_rooms(c, rooms, facts, lex, context)] or cands
                choices[f] = cands
        order = list(choices)
        best: tuple | None = None
        for combo in itertools.islice(itertools.product(*(choices[f] for f in order)), 512):
            bound = dict(zip(order, combo))
            groups = {f: [min(g) for g in v] for f, v in m.fields.items() if isinstance(v, list)}
            score = (_news(patterns, {**names, **bound, **groups}, facts), _links(set(combo), facts))
            if best is None or score > best[0]:
                best = (score, bound)
        names.update(best[1] if best else {})
        for f, v in m.fields.items():  # a list of phrases ("the mug and the plate"): each its own choice
            if isinstance(v, list):
                chosen: list[str] = []
                for i, group in enumerate(v):
                    rest = [min(g) for g in v[i + 1:]]
                    chosen.append(_pick_item(group, facts, lambda c, f=f, before=list(chosen), rest=rest: _news(
                        patterns, {**names, f: [*before, c, *rest]}, facts)))
                names[f] = chosen
        return names

    def _declared_delta(self, m: _Match, facts: _FactView, context: Context,
                        lex: _Lexicon) -> tuple[set[Atom], set[Atom]]:
        """The event's declared meaning: the atoms it adds, and the believed atoms its `remove` patterns match."""
        phrasing = self.language.events[m.kind]
        names = self._bind(m, [*phrasing.add, *phrasing.remove], facts, context, lex)
        add = {Atom.parse(fill(a, names)) for a in phrasing.add}
        remove: set[Atom] = set()
        for pattern in phrasing.remove:
            predicate, *args = fill(pattern, names).strip("()").split()
            remove |= {a for a in facts.facts if a.predicate == predicate and len(a.args) == len(args)
                       and all(w in ("?", x) for w, x in zip(args, a.args))}
        return _strict(remove, add, facts)

    def _event_delta(self, m: _Match, speaker: str | None, facts: _FactView, context: Context,
                     lex: _Lexicon) -> tuple[set[Atom], set[Atom]]:
        f = m.fields
        actor = _one(f["actor"]) if "actor" in f else speaker
        kind = m.kind
        item = _pick_item(f.get("item"), facts, _event_preference(kind, f, actor, facts))
        if kind in ("move", "put_back", "warm"):
            dest = _one(f["dest"])
            remove = set(facts.location(item))
            if kind == "warm":
                remove |= {a for a in facts.about(item) if a.predicate == "cold"}
            add = {_place(item, dest, context)}
            if kind != "warm" and Atom("chills", (dest,)) in facts:
                add.add(Atom("cold", (item,)))
            return _strict(remove, add, facts)
        if kind == "move_partial":
            src = _one(f["src"])
            return _strict({a for a in facts.location(item) if a.args[-1] == src}, set(), facts)
        if kind == "take":
            return _strict(set(facts.location(item)), {Atom("held-by", (item, actor))}, facts)
        flag = {"dirty": ("dirty", True), "soil": ("dirty", True), "clean": ("dirty", False),
                "break": ("broken", True), "unmake": ("made", False), "open": ("closed", False),
                "close": ("closed", True), "faucet_on": ("faucet-on", True), "faucet_off": ("faucet-on", False),
                "light_on": ("light-on", True), "light_off": ("light-on", False)}
        if kind in flag:
            predicate, on = flag[kind]
            if kind.startswith("light"):
                target = _light_in(_one(f["room"]), context, lex)
            else:
                target = item or _one(f.get("sink") or f.get("container") or f.get("bed"))
            atom = Atom(predicate, (target,))
            return _strict(set() if on else {atom}, {atom} if on else set(), facts)
        if kind == "go":
            room = _one(f["room"])
            return _strict({a for a in facts.about(actor) if a.predicate == "in-room" and a.args[0] == actor},
                           {Atom("in-room", (actor, room))}, facts)
        raise NotUnderstood(f"event kind {kind!r} has no meaning in the rule interpreter")

    def _task_goal(self, m: _Match, speaker: str | None, facts: _FactView, context: Context,
                   lex: _Lexicon) -> str:
        f = m.fields
        kind = m.kind
        if kind == "pick_place":
            dest = _one(f["dest"])
            item = _pick_item(f["item"], facts, lambda c: _place(c, dest, context) not in facts)
            return str(_place(item, dest, context))
        if kind in ("hand_over", "hand_over_me"):
            person = _one(f["person"]) if "person" in f else speaker
            if person is None:
                raise NotUnderstood(f"who is {speaker!r}? no person of that name is known")
            item = _pick_item(f["item"], facts, lambda c: Atom("held-by", (c, person)) not in facts)
            return str(Atom("held-by", (item, person)))
        if kind == "wash_dishes":
            return "(forall (?d - dish) (or (not (dirty ?d)) (discarded ?d)))"
        if kind == "discard_broken":
            return "(forall (?i - item) (imply (broken ?i) (discarded ?i)))"
        if kind == "lights_off":
            return "(and (forall (?l - light) (not (light-on ?l))) (forall (?s - sink) (not (faucet-on ?s))))"
        if kind == "make_bed":
            bed = _one(f["bed"]) if "bed" in f else _fixture_in(_one(f["room"]), "bed", context, lex)
            return str(Atom("made", (bed,)))
        if kind == "keep_cold":
            fridge = _one(f["fridge"]) if "fridge" in f else _first_of_type("fridge", context)
            items = [_pick_item(g, facts, lambda c: Atom("cold", (c,)) not in facts) for g in f["items"]]
            return _conj([f"(inside {i} {fridge})" for i in items] + [f"(cold {i})" for i in items])
        if kind == "laundry":
            items = [_pick_item(g, facts, lambda c: Atom("dirty", (c,)) in facts) for g in f["items"]]
            return _conj([f"(not (dirty {i}))" for i in items] + [f"(not (wet {i}))" for i in items])
        if kind == "organise_shelf":
            shelf, room = _one(f["shelf"]), _one(f["room"])
            books = sorted(b for b, e in context.entities.items() if e.get("type") == "book"
                           and _room_of(b, facts, lex) == room and not facts.held_by_someone(b))
            if not books:
                raise NotUnderstood(f"no books are known to be in {room}")
            return _conj([f"(on {b} {shelf})" for b in books])
        raise NotUnderstood(f"task kind {kind!r} has no meaning in the rule interpreter")


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

    def location(self, item: str) -> list[Atom]:
        return [a for a in self.about(item) if a.predicate in _LOCATIONS
                and a.args[1 if a.predicate == "holding" else 0] == item]

    def held_by_someone(self, item: str) -> bool:
        return any(a.predicate in ("held-by", "holding") for a in self.location(item))

    def apply(self, remove: set[Atom], add: set[Atom]) -> _FactView:
        return _FactView((self.facts - remove) | add)


def _one(value) -> str:
    return min(value) if isinstance(value, set) else value


def _pick_item(candidates, facts: _FactView, prefer=None) -> str | None:
    """One entity for an item phrase ("the frying pan" may name several): the candidate that makes the
    sentence most plausible given memory (`prefer` scores it, higher is better), then the first by name."""
    if candidates is None:
        return None
    ordered = sorted(candidates)
    if len(ordered) > 1 and prefer is not None:
        return max(ordered, key=lambda c: (prefer(c), [-ord(ch) for ch in c]))
    return ordered[0]


def _event_preference(kind: str, fields: dict, actor: str | None, facts: _FactView):
    """How plausible it is that an event of `kind` involved a candidate item, given memory."""
    src = fields.get("src") or set()

    def where(c):
        return {a.args[-1] if a.predicate != "holding" else "robot" for a in facts.location(c)}

    def score(c: str) -> int:
        loc = where(c)
        dirty, broken = Atom("dirty", (c,)) in facts, Atom("broken", (c,)) in facts
        if kind in ("move", "move_partial", "take") and src:
            return 2 if loc & src else 0
        if kind in ("move", "put_back") and actor:
            return 2 if actor in loc else (0 if "robot" in loc or not loc else 1)
        if kind == "warm":
            return 2 if Atom("cold", (c,)) in facts and any(Atom("chills", (f,)) in facts for f in loc) else 0
        if kind in ("dirty", "soil"):
            return 0 if dirty else 1
        if kind == "clean":
            return 1 if dirty else 0
        if kind == "break":
            return 0 if broken else 1
        if kind == "take":
            return 0 if facts.held_by_someone(c) else 1
        return 0

    return score


_LITERAL = re.compile(r"(\(not )?\(([\w-]+)((?: [\w?-]+)*)\)")


def _news(patterns: list[str], names: Mapping, facts: _FactView) -> int:
    """How many literals of the filled meaning patterns memory does not believe yet."""
    count = 0
    for pattern in patterns:
        for neg, pred, args in _LITERAL.findall(fill(pattern, names)):
            atom = Atom(pred, tuple(args.split()))
            if not any(x.startswith("?") for x in atom.args) and (atom in facts) == bool(neg):
                count += 1
    return count


def _links(entities: set[str], facts: _FactView) -> int:
    """How many believed facts relate two of `entities` (an item on the fixture the sentence names)."""
    return sum(1 for e in entities for a in facts.about(e) if len(a.args) == 2 and a.args[0] == e
               and a.args[1] in entities)


def _in_rooms(entity: str, rooms: set[str], facts: _FactView, lex: _Lexicon, context: Context) -> bool:
    """Whether memory places `entity` in one of `rooms`: a fixture of the room, an item in it or on or in a
    fixture of it."""
    if lex.fixture_room.get(entity) in rooms:
        return True
    for a in facts.about(entity):
        if a.args[0] != entity or len(a.args) != 2:
            continue
        if a.predicate == "in-room" and a.args[1] in rooms:
            return True
        if a.predicate in _LOCATIONS and lex.fixture_room.get(a.args[1]) in rooms:
            return True
    return False


def _place(item: str, fixture: str, context: Context) -> Atom:
    typ = context.entities[fixture].get("type")
    return Atom("on" if typ in _SURFACES else "inside", (item, fixture))


def _first_of_type(typ: str, context: Context) -> str:
    found = sorted(n for n, e in context.entities.items() if e.get("type") == typ)
    if not found:
        raise NotUnderstood(f"no {typ} is known")
    return found[0]


def _light_in(room: str, context: Context, lex: _Lexicon) -> str:
    return _fixture_in(room, "light", context, lex)


def _fixture_in(room: str, typ: str, context: Context, lex: _Lexicon) -> str:
    found = sorted(n for n, r in lex.fixture_room.items() if r == room and context.entities[n].get("type") == typ)
    if not found:
        raise NotUnderstood(f"no {typ} is known in {room}")
    return found[0]


def _room_of(entity: str, facts: _FactView, lex: _Lexicon) -> str | None:
    for a in facts.location(entity):
        if a.predicate in ("on", "inside"):
            return lex.fixture_room.get(a.args[1])
    return None


def _strict(remove: set[Atom], add: set[Atom], facts: _FactView) -> tuple[set[Atom], set[Atom]]:
    """Only what changes: remove what is believed, add what is not."""
    return {a for a in remove if a in facts and a not in add}, {a for a in add if a not in facts}


def _conj(parts: list[str]) -> str:
    return parts[0] if len(parts) == 1 else "(and " + " ".join(parts) + ")"
