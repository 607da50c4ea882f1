"""Decompose, then choose: whole goals of any length built from a model's answers to the small questions a
request is made of.

A request such as "set the table for two", "find all the apples and put them in the fridge" or "throw away the
can, the peel and the apple, then mop the floor" is more than the literals and pairs `candidates` enumerates. So
the model answers, each question by scoring a few short options in one batched call:

- **which kinds of things** the request involves (`Kind`: the things of one noun, or one room): per kind
  "forks: yes" against "forks: no" (`prompts/compact_choose_kinds.txt`). Common sense lives here: setting a
  table involves forks though the words never say so. The yes is calibrated against the scene's other kinds (most
  have nothing to do with one request). A movable kind the words name is involved whatever the model says;
- **what should become true of them, and where**: per involved kind, each relation or state some action can
  bring about ("both forks are on the dining table", "the cola can is thrown away", "the floor in the kitchen is
  clean"), said in English after the task prompt; the likeliest per kind (its end of turn left out: the model
  expects the other kinds' parts after it).

How many of each is read by code from the words (`quantity`: "three apples", "both", "for two people", "all",
"every", "a"); code then builds the whole goals (`build`): the chosen relation over as many things of each kind
as asked (news only; those in the rooms the words name first), every kind joined, `forall` over a type where
the words say all, any or every and the kinds cover the type. `ChoosingInterpreter` offers them beside its own
best answer and chooses by `decide`: the words' log-probability, the end of the turn and the agreement with the
kinds answers (`coverage`), weighted as measured on the development sets.
"""

from __future__ import annotations

import math
import re
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field

from servicerobot.language.candidates import (
    _ARTICLES,
    _stem,
    goal_candidates,
    is_fixed,
    signatures,
    synonyms_of,
    words,
)
from servicerobot.language.compact import load_turns
from servicerobot.language.interpreter import Context
from servicerobot.language.verbalize import head_noun
from servicerobot.memory.catalogue import entity_phrase, room_names
from servicerobot.pddl import Atom, Domain
from servicerobot.pddl.model import AddEffect, effect_predicates
from servicerobot.pddl.sexpr import parse_sexpr

__all__ = [
    "NUMBER_WORDS",
    "Kind",
    "ask_kinds",
    "build",
    "conjoin",
    "counted",
    "coverage",
    "decide",
    "held_rooms",
    "holder_head",
    "holds",
    "involved",
    "kinds",
    "names_changed",
    "outnamed",
    "pick",
    "placed_with_state",
    "predicate_words",
    "quantified",
    "quantity",
    "relation_keys",
    "rooms_of",
    "said_states",
    "sent_back",
    "sources",
    "state_said",
    "states_of_places",
    "strays",
    "targets",
    "unsaid_kinds",
]

NUMBER_WORDS = {"one": 1, "a": 1, "an": 1, "single": 1, "two": 2, "both": 2, "couple": 2, "pair": 2, "three": 3,
                "four": 4, "five": 5, "six": 6, "seven": 7, "eight": 8, "nine": 9, "ten": 10, "twelve": 12}
_ALL = frozenset({"all", "every", "each", "any", "anything", "everything", "whatever", "nothing", "no"})
_PEOPLE = re.compile(r"\b(?:for|we're|we are|of)\s+(\w+)\b(?!\s+(?:minute|hour|second|day)s?)|"
                     r"\b(\w+)\s+(?:people|persons|guests|places|settings|of us|diners)\b")
_NOT_STATE_WORDS = frozenset({"is", "has", "at", "in", "on", "inside", "of", "the", "a"})
_STOP = frozenset({"and", "or", "to", "from", "in", "on", "into", "onto", "at", "with", "for", "then", "put", "take"})
_NOT_SUBJECTS = ("person", "robot")
_YES_AT = 0.5  # an unnamed kind is involved when the model's calibrated P(yes) is above this
_MARGIN = 1.0  # nats of yes over the median kind's that make a calibrated even chance (chosen on the dev sets)
_FAIR = -1.0  # log-odds of yes that involve a kind where the words name none (dev sets)
_FAIR_SPREAD = 2.0  # ... where the model's odds over the scene's kinds span at least this many nats
_NAMED_SHIFT = 2.0  # nats more of yes an unnamed kind needs where the words name movable things (dev sets)
_GAP = 1.0  # nats between two groups of kinds' odds that split them (`_gap`)
_GAP_MOST = 9  # ... with at most this many kinds above the gap
_GAP_FLOOR = -1.5  # ... none of them more than this many nats below the calibrated even chance
_TARGETS = 10  # relation targets offered per kind (those the words name most strongly)
_MAX_KINDS = 8  # involved kinds joined at most
_KEYS = 8  # relations and states offered per kind


@dataclass
class Kind:
    """Things of one noun (or one room) that a request may involve."""

    noun: str  # "fork", "cola can", "kitchen"
    names: list[str]
    fixed: bool = False  # a room or fixture: involved by the model's yes unless the words make it the object
    named: bool = False  # the words name it
    place: bool = False  # the words name it only as a place or a tool ("in the fridge", "using the washer")
    tool: bool = False  # ... as a tool ("using the washer"): no place a thing goes
    moved: bool = False  # a movable kind the words name by its own noun as a thing to move or change
    position: int = 10_000  # where the words first name it (order of the parts)
    p_yes: float = 0.0  # the model's probability that the request involves it
    count: int | None = None  # how many the words ask for (None: all)
    keys: dict[str, list[str]] = field(default_factory=dict)  # key -> its literal per thing (news only)
    best: str | None = None  # the chosen key
    also: list[str] = field(default_factory=list)  # states the words ask of it beside `best` ("chill it in the fridge")
    here: dict[str, list[str]] = field(default_factory=dict)  # key -> of "all" its things, those in the rooms (none: [])
    # the words take them from, or those the words tell apart from the rest ("my purple jeans") (`pick`)

    def label(self) -> str:
        """The kind as the kinds prompt says it: "forks", "the kitchen"."""
        from servicerobot.language.verbalize import plural

        return f"the {self.noun}" if self.fixed and len(self.names) == 1 else plural(self.noun)


def holds(literal: str, context: Context) -> bool:
    """Whether memory holds a literal now (`(not (dirty x))` for a clean x)."""
    negated = literal.startswith("(not ")
    parts = (literal[5:-1] if negated else literal).strip().strip("()").split()
    return (Atom(parts[0], tuple(parts[1:])) in context.facts) != negated


def rooms_of(context: Context) -> dict[str, str]:
    """Thing -> the room it is in (the room's name): a fact relating it to a room, or to a fixture that stands
    in one (a fixture says its room as a phrase, "Olga's bedroom")."""
    named = room_names(context.entities)
    out: dict[str, str] = {}
    for atom in context.facts:
        if len(atom.args) != 2 or atom.args[0] == context.robot:
            continue
        thing, place = atom.args
        info = context.entities.get(place, {})
        room = place if info.get("type") == "room" else info.get("room")
        if room and not is_fixed(context, thing):
            out.setdefault(thing, named.get(room, room))
    return out


_PARTITIVE = frozenset({"pair", "piece", "set"})


def _naming_head(noun: str) -> str:
    """The stem of the word people name a kind by: its head noun, but "socks" of "pair of socks"."""
    said = noun.lower().split()
    if len(said) > 2 and said[0] in _PARTITIVE and said[1] == "of":
        return _stem(said[-1])
    return _stem(head_noun(noun))


def _tokens(text: str) -> list[str]:
    return re.findall(r"[a-z0-9']+", text.lower().replace("'s ", " "))


def _number(word: str) -> int | None:
    return NUMBER_WORDS.get(word) or (int(word) if word.isdigit() and 0 < int(word) <= 20 else None)


def quantity(text: str, noun: str, marks: frozenset[str] = frozenset()) -> int | None:
    """How many things of `noun` the words ask for: a number or "a"/"the" before it ("three apples", "a couple
    of books", "the plate": 1; as many as the different `marks`, words that tell its things apart, said right
    before it: "the white towel and the yellow towel", 2), else the people it is for ("for two", "three of
    us"), else None (all: "all the apples", "the dishes", or a kind the words do not name)."""
    said = _tokens(text)
    head = _naming_head(noun)
    singles, told = 0, set()  # "mop the floor, then clean the mop": one mop
    for i, w in enumerate(said):
        if _stem(w) != head:
            continue
        single = w == _stem(w)
        for b in reversed(said[max(0, i - 4):i]):  # the nearest count word, over adjectives, "the" and "of"
            if _stem(b) in _PARTITIVE and head != _stem(b):  # "a pair of socks": one pair, what the kind counts
                single = b == _stem(b)
                continue
            if b in _ALL:
                return 2 if b == "both" else None
            n = _number(b)
            if n is not None and (n > 1 or single):
                return n
            if b in _STOP:
                break
        if not single:
            break
        singles += 1
        # the marks before the phrase: "the teal pair of jeans"
        start = i - 2 if i >= 2 and said[i - 1] == "of" and _stem(said[i - 2]) in _PARTITIVE else i
        told |= {frozenset(w for w in said[max(0, start - 2):start] if _stem(w) in marks)} - {frozenset()}
    if singles:
        return max(1, len(told))
    for m in _PEOPLE.finditer(text.lower()):
        n = _number(m.group(1) or m.group(2) or "")
        if n and n > 1:
            return n
    return None


def _rooms_after(said: Sequence[str], i: int, marks: frozenset[str]) -> set[str]:
    """The words of the rooms a plural noun at `said[i]` is placed in right after it, where each is one of its
    things' `marks` ("lights in the kitchen and the bathroom": kitchen, bathroom); none after a singular noun."""
    if said[i] == _stem(said[i]) or i + 1 >= len(said) or said[i + 1] not in ("in", "of"):
        return set()
    out, j = set(), i + 2
    while j < len(said) and (said[j] in ("the", "and", "both") or _stem(said[j]) in marks or said[j] == "room"):
        if _stem(said[j]) in marks:
            out.add(_stem(said[j]))
        j += 1
    return out


def kinds(context: Context, text: str, rel: Mapping[str, float]) -> list[Kind]:
    """The kinds of things a goal can be about (things an action can change, grouped by noun; a room with a
    state an action changes is a kind of its own), those the words name marked, in the order they name them."""
    domain, sig = context.domain, signatures(context.domain)
    changeable: dict[str, set[str]] = {}  # type -> the words of the predicates an action changes of it
    for pred, decl in domain.predicates.items():
        if decl.params:
            first = decl.params[0][1]
            for t in domain.types.types:
                if domain.types.is_subtype(t, first) and (
                        sig.can(domain, pred, [t] + [p[1] for p in decl.params[1:]], True)
                        or sig.can(domain, pred, [t] + [p[1] for p in decl.params[1:]], False)):
                    changeable.setdefault(t, set()).update(predicate_words(pred))
    said = _tokens(text)
    stems = [_stem(w) for w in said]
    synonyms = set(words(text))
    out: dict[str, Kind] = {}
    for name, info in context.entities.items():
        typ = str(info.get("type", "object"))
        if name == context.robot or typ in _NOT_SUBJECTS or typ not in changeable:
            continue
        noun = entity_phrase(info) if typ == "room" else str(info.get("noun") or typ)
        kind = out.setdefault(f"{typ == 'room'}:{noun}", Kind(noun, [], fixed=is_fixed(context, name)))
        kind.names.append(name)
    # a kind named only through its type or a synonym ("the dirty clothes") is named when its things are named
    # as strongly as any such (the dirty shirts, not the clean socks)
    by_type: dict[str, float] = {}
    for name in (n for k in out.values() for n in k.names):
        typ = str(context.entities[name].get("type"))
        by_type[typ] = max(by_type.get(typ, 0.0), rel.get(name, 0.0))
    # where the words say a kind's whole noun of several words, no kind of its head alone is named ("a
    # rotting apple" names no apple)
    wholes = {k.noun: [_stem(w) for w in k.noun.lower().split()] for k in out.values()}
    claims = [(len(whole), i + j, noun) for noun, whole in wholes.items() if len(whole) > 1
              for i in range(len(stems)) if stems[i:i + len(whole)] == whole for j in range(len(whole))]
    noun_words = {w for whole in wholes.values() for w in whole}
    # the states the words describe things by ("the dirty dishes"): one-thing predicates whose words they say
    described = [p for p, d in domain.predicates.items() if len(d.params) == 1 and predicate_words(p) & set(stems)]

    heads = {_naming_head(k.noun) for k in out.values()}

    def by_type_word(typ: str, names: Sequence[str]) -> bool:
        """"All the dirty dishes": the type's own word names every kind of it, those with a thing in the
        states the words describe where they describe any (pots and mugs too, not only plates and bowls);
        a type whose word is a kind's own noun only after "all" or "every" ("all the books": the magazines
        too; "the purple book": no magazine)."""
        if typ == "object" or _stem(typ) in _CONTENTS or _stem(typ) not in stems:
            return False
        if _stem(typ) in heads and not any(s == _stem(typ) and _ALL & set(said[max(0, i - 2):i])
                                           for i, s in enumerate(stems)):
            return False
        return not described or any(Atom(p, (n,)) in context.facts for p in described for n in names)

    by_synonym: list[tuple[float, Kind]] = []  # fixtures named by another word for them, how strongly
    for kind in out.values():
        head = _naming_head(kind.noun)
        whole = wholes[kind.noun]
        # words another kind's whole noun takes, as long as this one's ("the green box" names no white box)
        claimed = {i for size, i, noun in claims if size >= len(whole) and noun != kind.noun}
        head_hits = [i for i, s in enumerate(stems) if s == head and i not in claimed]
        hits = [i for i in range(len(stems)) if stems[i:i + len(whole)] == whole and i not in claimed]
        if not hits and not kind.fixed:  # "the shirts" name the dirty shirts; "each room" names no room
            hits = head_hits
        strongest = max((rel.get(n, 0.0) for n in kind.names), default=0.0)
        typ = str(context.entities[kind.names[0]].get("type"))
        best = max(by_type[str(context.entities[n].get("type"))] for n in kind.names)
        # not by a modifier alone ("dirty" of "dirty bowl"), nor by the head of a longer noun ("rotting apple")
        head_said = bool(head_hits) or (head in synonyms and head not in stems)
        by_word = head_said or _stem(typ) in synonyms
        if kind.fixed:
            # a fixture or room named is mostly a place ("in the fridge"); it is the thing asked about where
            # the words make it an object ("put the desk and the lamp in ...", "open the fridge") or say what
            # changes of it ("mop the floor in the kitchen": `dirty-floor`)
            state_said = bool(changeable.get(typ, set()) & set(stems))
            kind.named = bool(hits) and (state_said or any(_is_object(said, i, noun_words) for i in hits))
            if not hits and not kind.named:
                # named by another word for it that also says what changes of it ("every light and tap off":
                # a tap is the sink's faucet), as every such fixture ("the taps")
                for i, s in enumerate(stems):
                    others = synonyms_of(s)
                    if s not in noun_words and head in others and changeable.get(typ, set()) & {s, *others}:
                        kind.named, hits = True, [i]
                        by_synonym.append((strongest, kind))
                        break
            kind.place = bool(hits) and not kind.named
            # "using the washing machine": a tool, no place a thing goes
            kind.tool = kind.place and any(_named_after(said, i, noun_words) in _TOOL_WORDS for i in hits)
        else:
            kind.named = bool(hits) or by_word and strongest > 0 and strongest >= best - 0.25 or \
                by_type_word(typ, kind.names)
            # "bring all glasses and cups to the sink", not "put the mug next to the laptop"
            kind.moved = any(_is_object(said, i, noun_words) for i in hits)
        kind.position = hits[0] if hits else (500 if kind.named else 10_000)
        # the words that tell its things apart ("the white towel"; a fixture's room: "the bathroom light")
        keys = ("colour", "mark", "material", "owner") + (("room",) if kind.fixed else ())
        marks = frozenset(_stem(w) for n in kind.names for key in keys
                          for w in re.findall(r"[a-z]+", str(context.entities[n].get(key) or "").lower()))
        kind.count = quantity(text, kind.noun, marks) if hits else quantity(text, "\x00")
        if kind.fixed and kind.count is None and hits:
            # "the lights in the kitchen and the bathroom": those of the rooms said after them
            rooms = _rooms_after(said, hits[0], marks)
            here = [n for n in kind.names if rooms & {_stem(w) for w in re.findall(
                r"[a-z]+", str(context.entities[n].get("room") or "").lower())}]
            if rooms and 0 < len(here) < len(kind.names):
                kind.count = len(here)
    # ... but where the words tell some of them apart ("the kitchen tap"), those alone
    for strength, kind in by_synonym:
        if strength < max(s for s, _ in by_synonym):
            kind.named, kind.place, kind.position = False, False, 10_000
    _name_contents(context, stems, list(out.values()))
    return sorted(out.values(), key=lambda k: (k.position, k.noun))


def holder_head(context: Context, name: str) -> str:
    """The stem of the word a fixture is named by ("shelf" of "shelf_21"), as a kind's (`_naming_head`)."""
    return _naming_head(str(context.entities.get(name, {}).get("noun") or name))


_CONTENTS = frozenset({"object", "thing", "item", "content", "stuff", "everything", "belonging"})
_OUT_OF = frozenset({"from", "in", "on", "inside", "off", "out", "of"})


def _name_contents(context: Context, stems: Sequence[str], found: Sequence[Kind]) -> None:
    """"Remove the objects from the shelf and locker", "everything in the fridge": the kinds whose things are
    all in or on the fixtures the words name there are named, as many as there are."""
    held: dict[str, str] = {}  # thing -> the fixture it is in or on
    for atom in context.facts:
        if len(atom.args) == 2 and atom.args[0] != context.robot and is_fixed(context, atom.args[1]) and \
                context.entities.get(atom.args[1], {}).get("type") != "room" and not is_fixed(context, atom.args[0]):
            held.setdefault(atom.args[0], atom.args[1])
    heads: dict[str, set[str]] = {}
    for holder in set(held.values()):
        heads.setdefault(holder_head(context, holder), set()).add(holder)
    holders: set[str] = set()
    for i, w in enumerate(stems):
        if w not in _CONTENTS or i + 1 >= len(stems) or stems[i + 1] not in _OUT_OF:
            continue
        found_one = False
        for after in stems[i + 2:i + 10]:  # "from the shelf and (the) locker", not "... on the desk"
            if after in heads:
                holders |= heads[after]
                found_one = True
            elif after not in _PHRASE_WORDS and (found_one or after not in _OUT_OF):
                break
    if not holders:
        return
    for kind in found:
        if not kind.fixed and not kind.named and kind.names and all(held.get(n) in holders for n in kind.names):
            kind.named, kind.count = True, None
            kind.position = min(kind.position, 400)


_PLACE_WORDS = frozenset({"in", "into", "on", "onto", "to", "from", "at", "under", "inside", "near", "by", "with",
                          "using", "of", "beside", "behind", "next", "off", "out", "toward", "towards"})
_PHRASE_WORDS = frozenset({"the", "a", "an", "and", "or", "my", "your", "his", "her", "their", "our", "its", "this",
                           "that", "both", "all", "every"})


_OBJECTS = frozenset({"it", "them", "everything"})  # a word before one of these is a verb ("wash and dry them")
_STATE_NEXT = _PHRASE_WORDS | _PLACE_WORDS | _OBJECTS | {"up", "away", "then", "immediately",
                                             "again", "now", "please"}


_TOOL_WORDS = frozenset({"using", "with"})
_FROM_WORDS = frozenset({"from", "off", "of", "out"})  # "out of the fridge": "of"


def _named_after(said: Sequence[str], i: int, noun_words: set[str]) -> str | None:
    """The word before the noun phrase at `said[i]` (back over determiners, "and" and other nouns)."""
    j = i - 1
    while j >= 0 and (said[j] in _PHRASE_WORDS or _stem(said[j]) in noun_words):
        j -= 1
    return said[j] if j >= 0 else None


def _is_object(said: Sequence[str], i: int, noun_words: set[str]) -> bool:
    """Whether the noun phrase at `said[i]` is the object of a verb ("put the desk, the lamp and ...") rather
    than a place after a preposition ("in the kitchen sink", "from the shelf and locker"): back over
    determiners, "and" and other nouns to the first other word."""
    return _named_after(said, i, noun_words) not in _PLACE_WORDS


def ask_kinds(score: Callable[[list, list[str]], list[list[float]]], text: str, speaker: str,
              found: Sequence[Kind]) -> None:
    """Sets each kind's `p_yes` from one batched call: "forks: yes" against "forks: no" after the kinds prompt
    (`prompts/compact_choose_kinds.txt`)."""
    values = {"kinds": ", ".join(sorted({k.label() for k in found})), "text": text.strip(),
              "speaker": (speaker or "Someone")[:1].upper() + (speaker or "Someone")[1:]}
    messages = [{"role": role, "content": t.substitute(values)} for role, t in load_turns("choose_kinds")]
    answers = [f"{k.label()}: {a}" for k in found for a in ("yes", "no")]
    tokens = score(messages, answers)
    odds = []  # log-odds of yes per kind
    for i in range(len(found)):
        yes, no = (sum(t[:-1]) if t else -50.0 for t in tokens[2 * i:2 * i + 2])
        odds.append(max(-50.0, min(50.0, yes - no)))
    # calibrated against the scene's other kinds: most kinds of a home have nothing to do with one request, so
    # the median kind's odds are the model's yes to a kind it has no reason for (its bias on this prompt);
    # never more than even odds
    bias = min(0.0, sorted(odds)[(len(odds) - 1) // 2]) + _MARGIN
    if names_changed(found):
        # a request that names the things it moves or changes ("put the apples in the fridge") involves others
        # less often than one that names none
        bias += _NAMED_SHIFT
    else:
        # one that names none ("set the table") involves what the model gives fair odds, however many kinds
        # of the scene it gives them (a small dining room's median kind is tableware), where it tells the
        # kinds apart at all (a model that says yes to every kind alike involves none so)
        bias = min(bias, _gap(found, odds, bias))
        if max(odds) - min(odds) >= _FAIR_SPREAD:
            bias = min(bias, _FAIR)
    for kind, o in zip(found, odds):
        kind.p_yes = 1.0 / (1.0 + math.exp(bias - o))


def names_changed(found: Sequence[Kind]) -> bool:
    """Whether the words name a kind they move or change: a movable one ("put the apples in the fridge") or a
    fixture as the object ("switch off every light"); not one named only as a place ("set the table")."""
    return any(k.named for k in found)


def _gap(found: Sequence[Kind], odds: Sequence[float], bias: float) -> float:
    """Where the model's answers split the unnamed kinds in two: a scene whose kinds are mostly what the request
    is about (the tableware of a dining room, the parts of a PC) puts the median among them, and the median's
    calibration calls most of them no. Where the odds have a clear gap (`_GAP` nats), with at most
    `_GAP_MOST` kinds above it, all of them near the calibrated even chance or above (`_GAP_FLOOR`), and it
    would involve some that the median would not, the middle of the gap is the even chance; else `bias`."""
    unnamed = sorted((o for k, o in zip(found, odds) if not k.named), reverse=True)
    if len(unnamed) < 3:
        return bias
    size, i = max((unnamed[j] - unnamed[j + 1], j) for j in range(len(unnamed) - 1))
    above = unnamed[:i + 1]
    if size < _GAP or not 2 <= len(above) <= _GAP_MOST or above[-1] - bias < _GAP_FLOOR or above[-1] > bias:
        return bias
    return (unnamed[i] + unnamed[i + 1]) / 2


def described(context: Context, text: str) -> set[str]:
    """The things the words pick out by a state memory holds of them and no action brings about ("get rid of
    the broken stuff", "anything that's broken": the things memory knows broken)."""
    tokens = _tokens(text)
    stems = [_stem(w) for w in tokens]
    said = set(stems)
    # a state word said of no noun of its own ("the broken stuff", "anything broken"), not of one ("the dirty
    # clothes": the words name their things, and the state says which of those)
    alone = {s for i, s in enumerate(stems) if i + 1 == len(stems) or tokens[i + 1] in _STATE_NEXT
             or stems[i + 1] in _CONTENTS}
    sig, out = signatures(context.domain), set()
    for atom in context.facts:
        if len(atom.args) != 1 or atom.args[0] not in context.entities:
            continue
        words = predicate_words(atom.predicate)
        types = [str(context.entities[atom.args[0]].get("type", "object"))]
        if words and words <= said and words & alone and not sig.can(context.domain, atom.predicate, types, True):
            out.add(atom.args[0])
    return out


def narrow_to_described(found: Sequence[Kind], described_things: set[str]) -> None:
    """A kind the words do not name but pick out things of by their state is about those things alone, and
    involved ("the broken stuff": the broken candle, not every candle); where the words name a kind whose
    things the state describes ("the dirty clothes": the dirty shirts), the state says which of those, and
    other things in it (the dirty forks) are no more involved than the model says."""
    if any(k.named and not k.fixed and described_things & set(k.names) for k in found):
        return
    for kind in found:
        mine = [n for n in kind.names if n in described_things]
        if mine and not kind.named and not kind.fixed:
            kind.names, kind.p_yes = mine, max(kind.p_yes, _DESCRIBED_YES)


def involved(found: Sequence[Kind], at: float = _YES_AT) -> list[Kind]:
    """The kinds the request involves: every named one, and others the model says yes to, up to `_MAX_KINDS`
    in all."""
    named = [k for k in found if k.named]
    others = sorted((k for k in found if not k.named and k.p_yes > at), key=lambda k: -k.p_yes)
    return named + others[:max(0, _MAX_KINDS - len(named))]


_ALIAS_YES = 0.8  # the model's yes that makes a kind what words naming nothing in the scene mean ("the cutlery")
_MOVING = frozenset({"move", "put", "place", "bring", "take", "carry", "collect", "gather", "fetch", "get", "give",
                     "hand", "pass", "grab", "deliver", "throw", "toss", "store", "stack", "hang", "return", "find"})
_POLITE = frozenset({"please", "can", "could", "would", "will", "you", "kindly", "go", "and"})
_PARTICLES_AFTER = frozenset({"away", "out", "up", "down", "back", "over", "rid", "of", "me", "us"})
_PHRASE_END = (_PLACE_WORDS - {"of"}) | {"then", "around", "so", "for", "because", "before", "after", "back", "away", "over",
                              "up", "down", "together", "somewhere", "here", "there"}
_NO_NOUN = _CONTENTS | _OBJECTS | _ALL | frozenset({"me", "us", "him", "her", "something", "one", "ones", "these",
                                                    "those", "this", "that", "some", "few", "many", "more", "rest",
                                                    "scattered", "other", "others", "mine", "yours", "of"})


def _scene_words(context: Context) -> set[str]:
    """The stems of every word the scene's things, rooms and people are called by (nouns, types, names,
    colours, marks, owners), with the words they are another word for."""
    out: set[str] = set()
    for name, info in context.entities.items():
        said = " ".join(str(info.get(k) or "") for k in ("noun", "type", "name", "colour", "mark", "material",
                                                         "owner", "label"))
        for w in re.findall(r"[a-z]+", f"{said} {name}".lower().replace("_", " ")):
            out.add(_stem(w))
    return out


def absent_things(context: Context, text: str, found: Sequence[Kind], chosen: Sequence[Kind]) -> str | None:
    """The words a request says to move ("move all apples to the fruit bowl", "put the remote controls on the
    coffee table") where they name nothing the scene has and the model involves no kind of its things in
    their place: the phrase, else None. Such a request cannot be done as asked in this scene; the things it
    names only as places (the fruit bowl) are no reading of it, nor is whatever else the model likes best."""
    said = _tokens(text)
    i = 0
    while i < len(said) and said[i] in _POLITE:
        i += 1
    if i >= len(said) or said[i] not in _MOVING:
        return None
    j = i + 1
    while j < len(said) and said[j] in _PARTICLES_AFTER:  # "throw away the ...", "get rid of the ..."
        j += 1
    start = j
    while j < len(said) and said[j] not in _PHRASE_END:
        j += 1
    phrase = said[start:j]
    if {_stem(w) for w in phrase} & (_OBJECTS | _CONTENTS):  # "put it away", "move the objects"
        return None
    nouns = [w for w in phrase if w not in _PHRASE_WORDS and w not in _NO_NOUN and _number(w) is None]
    if not nouns:
        return None
    scene = _scene_words(context)
    if any(_stem(w) in scene or set(synonyms_of(_stem(w))) & scene for w in nouns):
        return None
    # a kind the model involves, or one the words name before the place: the words' own reading of the phrase
    before = {_stem(w) for w in said[:j]}
    if any(not k.named and k.p_yes >= _ALIAS_YES or k.named and _naming_head(k.noun) in before
           for k in chosen if not k.place):
        return None
    return " ".join(w for w in phrase if w not in _PHRASE_WORDS)


def targets(context: Context, rel: Mapping[str, float], person: str | None, rooms: Sequence[str],
            exclude: Sequence[str] = ()) -> list[str]:
    """What a kind may be put on, in or at, or given to: the things, rooms and people the words name (and the
    speaker), else the fixtures in the rooms they name; at most `_TARGETS`, most strongly named first."""
    skip = set(exclude) | {context.robot}
    named = sorted((n for n in rel if n not in skip), key=lambda n: (-rel[n], n))
    held = held_rooms(context, named)
    skip |= outnamed(context, rel)
    named = [n for n in named if n not in held and n not in skip]
    if not any(is_fixed(context, n) and context.entities[n].get("type") != "room" for n in named):
        phrases = {r for r in rooms} | {entity_phrase(context.entities[r]) for r in rooms if r in context.entities}
        named += sorted(n for n, info in context.entities.items() if info.get("room") in phrases and n not in skip)
    if person and person not in named:
        named.append(person)
    return list(dict.fromkeys(named))[:_TARGETS]


def outnamed(context: Context, rel: Mapping[str, float]) -> set[str]:
    """The fixtures the words name less strongly than another of the same noun: "the bookshelf in the living
    room" names no bookshelf of another room, "the red cabinet" no white one."""
    fixtures = [n for n in rel if n in context.entities and is_fixed(context, n)
                and context.entities[n].get("type") != "room"]
    noun = lambda n: str(context.entities[n].get("noun") or n)
    best: dict[str, float] = {}
    for n in fixtures:
        best[noun(n)] = max(best.get(noun(n), 0.0), rel[n])
    return {n for n in fixtures if rel[n] < best[noun(n)]}


def held_rooms(context: Context, named: Sequence[str]) -> set[str]:
    """The rooms that hold a named fixture: they say where that fixture is ("the kitchen table", "the kitchen
    cupboard"), not where things go; every room of the same name (both kitchens)."""
    held = {str(context.entities[n].get("room")) for n in named if context.entities.get(n, {}).get("type") != "room"
            and context.entities.get(n, {}).get("room")}
    phrases = held | {entity_phrase(context.entities[r]) for r in held if r in context.entities}
    return {n for n, e in context.entities.items() if e.get("type") == "room" and (n in held or entity_phrase(e) in phrases)}


def relation_keys(context: Context, kind: Kind, places: Sequence[str], text: str = "") -> dict[str, list[str]]:
    """Key (the literal with `?` for the thing) -> its literal for each thing of `kind` for which it is news;
    and a state the words ask for that holds now but an action can undo ("mop the floor and clean the mop":
    the mop is clean, and mopping dirties it)."""
    out: dict[str, list[str]] = {}
    if text:
        domain, sig = context.domain, signatures(context.domain)
        typ = str(context.entities[kind.names[0]].get("type", "object"))
        for pred, decl in domain.predicates.items():
            key = f"({pred} ?)"
            if len(decl.params) == 1 and domain.types.is_subtype(typ, decl.params[0][1]) and \
                    sig.can(domain, pred, [typ], False) and state_said(key, text, kind.noun):
                held = [f"({pred} {n})" for n in kind.names if holds(f"({pred} {n})", context)]
                if held:
                    out[key] = held
    if text and kind.named:  # out of where its things are now, where the words name it ("remove the books from the shelf")
        tokens = _tokens(text)
        mine = sorted(a for a in context.facts if len(a.args) == 2 and a.args[0] in kind.names)
        heads = {holder_head(context, n) for n in context.entities if is_fixed(context, n)}
        # the fixtures named after "from", "off", "out of" ("from the shelf and locker"; "organise the
        # bookshelf" takes nothing off it)
        said = {_stem(w) for i, w in enumerate(tokens) if _named_after(tokens, i, heads) in _FROM_WORDS}
        sig = signatures(context.domain)
        for atom in mine:
            holder = context.entities.get(atom.args[1], {})
            types = [str(context.entities[n].get("type", "object")) for n in atom.args]
            if holder.get("type") != "room" and holder_head(context, atom.args[1]) in said \
                    and sig.can(context.domain, atom.predicate, types, False):
                out.setdefault(f"(not ({atom.predicate} ? {atom.args[1]}))", []).append(f"(not {atom})")
    for goal in goal_candidates(context, list(kind.names) + list(places), asked=kind.names):
        inner = goal[5:-1] if goal.startswith("(not ") else goal
        if goal.startswith("(forall") or "(" in inner[1:]:
            continue
        args = inner.strip("()").split()[1:]
        if not args or args[0] not in kind.names or any(a in kind.names for a in args[1:]):
            continue
        thing = args[0]
        key = goal.replace(f" {thing})", " ?)").replace(f" {thing} ", " ? ")
        # a state the words ask of a named kind is news even where memory has it so already ("switch off the
        # lights" where memory has no light on: the request says otherwise)
        if (not holds(goal, context) or len(args) == 1 and kind.named and state_said(key, text, kind.noun)) \
                and goal not in out.get(key, ()):
            out.setdefault(key, []).append(goal)
    # the words ask for one of a state and its opposite: the other is not offered ("switch off the lights")
    said = {k for k in out if text and _one_thing(k) and state_said(k, text, kind.noun)}
    out = {k: v for k, v in out.items() if not (_one_thing(k) and k not in said and _opposite(k) in said)}
    rank = {n: i for i, n in enumerate(places)}  # the most strongly named places first
    order = sorted(out, key=lambda k: min((rank[a] for a in k.replace(")", " ").split() if a in rank), default=-1))
    return {k: out[k] for k in order[:_KEYS]}


def predicate_words(pred: str, unary: bool = False) -> set[str]:
    """The stems of a predicate's words that say a state ("floor", "dirty" of `dirty-floor`; not "is"); of a
    one-argument predicate, "on" and "in" too ("on" of `light-on`: no place there)."""
    skip = _NOT_STATE_WORDS - _UNARY_STATE_WORDS if unary else _NOT_STATE_WORDS
    return {_stem(w) for w in re.findall(r"[a-z]+", pred.lower()) if w not in skip}


_UNARY_STATE_WORDS = frozenset({"on", "in"})
_DESCRIBED_YES = 0.9  # the model's yes taken for a kind whose things the words pick out by their state
_NEGATIONS = frozenset({"no", "none", "nothing", "not", "never", "don't", "dont", "nor", "shouldn't", "shouldnt",
                        "mustn't", "mustnt"})
_NEGATION_REACH = 6  # words back from a state word that a negation still governs
# the word that asks for a state's opposite: "switch off the lights" asks for `(not (light-on ?))`
_OPPOSITES = {"on": ("off",), "open": ("close", "closed", "shut"), "closed": ("open",), "close": ("open",),
              "full": ("empty",), "empty": ("full",), "dirty": ("wash", "washed", "washing"),
              "wet": ("dry", "dried", "drying"), "cold": ("warm",)}


def state_said(key: str, text: str, noun: str = "") -> bool:
    """Whether the words say the predicate of a relation key ("clean the mop": `(is-clean ?)`; "throw away":
    no word of `thrashed`), its words other than "is", "at", "in" and the like and than the words of the
    thing's own `noun` ("the light" says no `light-on`); never where the word describes a thing as it is
    ("wash the dirty underwear", "wash dirty underclothing"). A negated key is said by a word for the state's
    opposite ("switch off the lights": `(not (light-on ?))`; "the dirty clothes" say `is-dirty` and ask for
    them not to be), or by the state's own word under a negation ("make sure no lights are left on"), and a
    key so negated is not said by its own word."""
    own = {_stem(w) for w in re.findall(r"[a-z]+", noun.lower())}
    plain = predicate_words(_predicate_of(key), unary=_one_thing(key)) - own
    opposite = {o for w in plain for o in _OPPOSITES.get(w, ())}
    said = _tokens(text)

    # a word before its noun says how a thing is now ("the dirty underwear", "wash dirty underclothing"), no
    # request to make it so; a request has the word last or before what it is said of ("clean the mop",
    # "clean up", "make it clean and dry")
    def request(i: int) -> bool:
        after = said[i + 1] if i + 1 < len(said) else None
        return (after is None or after in _STATE_NEXT) and not (
            i and said[i - 1] in _PHRASE_WORDS and after is not None and after not in _PHRASE_WORDS | _OBJECTS)
    def says(w: str, wanted: set[str]) -> bool:  # a word for the thing itself ("tap" of a sink) says no state of it
        others = set(synonyms_of(_stem(w)))
        return not others & own and (_stem(w) in wanted or w in wanted or bool(wanted & others)
                                     or _base(w) in {_base(x) for x in wanted})  # "close" says `closed`

    # "make sure no lights are left on": a state said under a negation asks for its opposite
    negated = lambda i: bool(_NEGATIONS & set(said[max(0, i - _NEGATION_REACH):i]))
    positive = not key.startswith("(not ")
    return any(request(i) and (says(w, plain) and negated(i) != positive or
                               says(w, opposite) and negated(i) == positive) for i, w in enumerate(said))


def _base(word: str) -> str:
    """A verb's form without its ending ("closed", "closing", "close" -> "clos"; "opened" -> "open")."""
    for ending in ("ing", "ed"):
        if word.endswith(ending) and len(word) - len(ending) >= 3:
            word = word[:-len(ending)]
            break
    return word[:-1] if word.endswith("e") and len(word) > 3 else word


def said_states(kind: Kind, text: str) -> list[str]:
    """The one-thing states of `kind` the words ask for ("chill it": `(cold ?)`), beside its chosen key (never
    that key's opposite)."""
    chosen = _predicate_of(kind.best) if kind.best else None
    return [k for k in kind.keys if _one_thing(k) and _predicate_of(k) != chosen and state_said(k, text, kind.noun)]


def placed_with_state(context: Context, kind: Kind, text: str, named: set[str], to: set[str] = frozenset()) -> None:
    """"Chill the pasta in the fridge": where a kind's likeliest answer is a state the words ask for, and the
    action that takes a thing to a place the words name (`named`) brings that state about too (`put-in` of a
    container that chills), the answer is the place and the state both: the place becomes the kind's answer,
    the state one of its `also`. A state some other action brings about ("wash the jeans in the washer": the
    washer's run) leaves the place out. A person the words give it to (`to`: "wash my sweater and give it back
    to me") is asked for beside any state."""
    if kind.best is None or not _one_thing(kind.best) or not state_said(kind.best, text, kind.noun):
        return
    state = _predicate_of(kind.best)
    for key in kind.keys:
        parts = key.strip("()").split()
        if key.startswith("(not ") or len(parts) != 3 or parts[2] not in named | set(to):
            continue
        if parts[2] in to or state in _brought_with(context.domain, parts[0]):
            kind.also = [kind.best, *(k for k in kind.also if k != kind.best)]
            kind.best = key
            return


def _brought_with(domain: Domain, relation: str) -> frozenset[str]:
    """The predicates the actions that add `relation` may change too (through `when` and `forall`)."""
    out: set[str] = set()
    for action in domain.actions.values():
        if any(isinstance(e, AddEffect) and e.atom.predicate == relation for e in action.effects):
            out |= effect_predicates(action.effects) - {relation}
    return frozenset(out)


def reported_states(text: str, context: Context, atom: Atom) -> bool:
    """Whether a report's words say the one-thing state `atom` changes, either way: its predicate's words or
    their opposites ("it needs washing": `dirty`; "the light is on now": `light-on`), not the thing's own noun
    ("the light" says no `light-on`)."""
    if len(atom.args) != 1:
        return False
    info = context.entities.get(atom.args[0], {})
    own = {_stem(w) for w in re.findall(r"[a-z]+", str(info.get("noun") or "").lower())}
    plain = predicate_words(atom.predicate, unary=True) - own
    wanted = plain | {o for w in plain for o in _OPPOSITES.get(w, ())}
    said = _tokens(text)
    # "on" and "in" say a state only where no place follows ("the light is on now", "turn on the light"; not
    # "on the desk")
    place_after = lambda i: i + 1 < len(said) and said[i + 1] in _ARTICLES and not own & {
        _stem(w) for w in said[i + 2:i + 4]}
    return any((_stem(w) in wanted or w in wanted) and not (w in _UNARY_STATE_WORDS and place_after(i))
               for i, w in enumerate(said))


def _predicate_of(key: str) -> str:
    return key.replace("(not ", "").strip("()").split()[0]


def _opposite(key: str) -> str:
    return key[5:-1] if key.startswith("(not ") else f"(not {key})"


def _one_thing(key: str) -> bool:
    """Whether a key is a state of the thing alone (`(cold ?)`, `(not (light-on ?))`), no relation."""
    return len(key.replace("(not ", "").split()) == 2


def _thing(literal: str) -> str:
    return (literal[5:-1] if literal.startswith("(not ") else literal).strip("()").split()[1]


def sources(context: Context, key: str, rooms: Sequence[str]) -> list[str]:
    """The rooms the words name that a relation key does not take things to, or to something in: where the
    things come from ("all the books in the laundry room onto the bookshelf in the living room")."""
    places = set(key.replace("(", " ").replace(")", " ").split())
    phrase = lambda r: entity_phrase(context.entities[r]) if r in context.entities else r
    into = {r for r in rooms if r in places or phrase(r) in places or any(
        context.entities.get(p, {}).get("room") in (r, phrase(r)) for p in places)}
    return [r for r in rooms if r not in into and phrase(r) not in {phrase(t) for t in into}]


def sent_back(goals: Sequence[str], chosen: Sequence[Kind], context: Context, rooms: Sequence[str]) -> list[bool]:
    """Per goal, whether it takes a thing of a kind to a room its chosen relation takes it from, or to a fixture
    there ("all the books in Olga's bedroom go there": none onto Olga's nightstand)."""
    away_of = []  # (the kind's things, the rooms they come from, by name and phrase), once per kind
    for kind in chosen:
        if kind.best and not _one_thing(kind.best) and kind.here.get(kind.best):
            away = set(sources(context, kind.best, rooms))
            away |= {entity_phrase(context.entities[r]) for r in away if r in context.entities}
            away_of.append((set(kind.names), away))

    def back(goal: str) -> bool:
        for names, away in away_of:
            for negated, _, thing, rest in _LITERAL.findall(goal):
                place = rest.split()[-1] if rest.split() else None
                if not negated and thing in names and place is not None and (
                        place in away or context.entities.get(place, {}).get("room") in away):
                    return True
        return False
    return [back(goal) for goal in goals] if away_of else [False] * len(goals)


def states_of_places(goals: Sequence[str], found: Sequence[Kind], text: str) -> list[bool]:
    """Per goal, whether it asks a state of a fixture the words name only as a place, a state they do not say
    ("put the bread in the fridge so it gets cold": no answer that also closes the fridge; "... and close the
    fridge" says it)."""
    places = {n: k.noun for k in found if k.place and not k.named for n in k.names}
    out = []
    for goal in goals:
        asked = [(f"(not ({pred} ?))" if negated else f"({pred} ?)", places[thing])
                 for negated, pred, thing, rest in _LITERAL.findall(goal) if not rest and thing in places]
        out.append(any(not state_said(key, text, noun) for key, noun in asked))
    return out


def pick(context: Context, kind: Kind, key: str, literals: Sequence[str], rel: Mapping[str, float],
         where: Mapping[str, str], rooms: Sequence[str], text: str = "") -> list[str]:
    """The literals of the things asked for: those in the rooms the words name (unless the goal takes them
    to one of them, or to something in one: "from around the house to the kitchen sink"), then the most
    strongly named, those not already so first; `kind.count` of them, or all. None where the words (`text`)
    say the kind is in such a room and memory has none of it there."""
    thing = _thing
    source = sources(context, key, rooms)
    # of things named alike, those the goal would change first: a request is news ("the milk cold again")
    order = sorted(literals, key=lambda lit: (-rel.get(thing(lit), 0.0), holds(lit, context), thing(lit)))
    here = [lit for lit in order if where.get(thing(lit)) in source]
    if kind.count is None:
        if here:  # "all the books in Olga's bedroom": as many as are there
            kind.here[key] = [thing(lit) for lit in here]
        elif source and text and _said_in(context, kind, source, text):  # "all the books in Felix's bedroom",
            kind.here[key] = []  # and memory has no magazine there: no magazine is asked for
            return []
        if here:
            return here
        # the things the words tell apart from the rest of the kind ("my purple jeans", "the dirty dishes"):
        # those, however many
        top = max((rel.get(n, 0.0) for n in kind.names), default=0.0)
        told = [lit for lit in order if rel.get(thing(lit), 0.0) >= top]
        if told and top > min(rel.get(n, 0.0) for n in kind.names):
            kind.here[key] = [thing(lit) for lit in told]  # counted as "all" of them, the others strays
            return told
        return order
    return (here + [lit for lit in order if lit not in here])[:kind.count]  # "three books": any three


def _said_in(context: Context, kind: Kind, rooms: Sequence[str], text: str) -> bool:
    """Whether the words say the kind (its head noun or its type) shortly before one of `rooms` ("the books in
    Felix's bedroom"), not only somewhere else in the request ("a rotting apple in the rubbish bin, then mop the
    floor in the kitchen")."""
    tokens = [_stem(w) for w in _tokens(text)]
    info = context.entities.get(kind.names[0], {}) if kind.names else {}
    heads = {_stem(head_noun(kind.noun)), _stem(str(info.get("type", "")))} - {""}
    for room in rooms:
        words = [_stem(w) for w in _tokens(entity_phrase(context.entities.get(room, {"noun": room})))]
        for i in range(len(tokens) - len(words) + 1):
            if tokens[i:i + len(words)] == words and heads & set(tokens[max(0, i - 5):i]):
                return True
    return False


def _forall(context: Context, parts: Sequence[tuple[str, str, list[str]]]) -> list[tuple[str, str, list[str]]]:
    """Kinds asked in full with the same one-thing key, joined into `forall` over the smallest type whose things
    they are all of (every light and every tap off)."""
    types, out, done = context.domain.types, [], set()
    for i, (key, _, lits) in enumerate(parts):
        if i in done:  # joined into an earlier part's forall
            continue
        if key.count("?") != 1 or not _one_thing(key):
            out.append(parts[i])
            continue
        same = [j for j, p in enumerate(parts) if p[0] == key]
        things = {_thing(lit) for j in same for lit in parts[j][2]}
        typs = {str(context.entities[n].get("type", "object")) for n in things}
        common = [t for t in types.types if t != "object" and all(types.is_subtype(x, t) for x in typs)]
        # the type with fewest things, the most specific of equals (sinks, not all containers)
        best = min(common, key=lambda t: (sum(types.is_subtype(str(e.get("type", "object")), t)
                                              for e in context.entities.values()),
                                          sum(types.is_subtype(u, t) for u in common)), default=None)
        members = {n for n, e in context.entities.items() if best and types.is_subtype(str(e.get("type", "object")), best)}
        undone = {n for n in members if not holds(key.replace("?", n), context)}
        if best is None or not undone <= things:
            out.append(parts[i])
            continue
        done.update(same)
        var = f"?{best[0]}"
        out.append((key, "forall", [f"(forall ({var} - {best}) {key.replace('?', var)})"]))
    return out


def build(context: Context, chosen: Sequence[Kind], rel: Mapping[str, float], rooms: Sequence[str],
          text: str) -> list[str]:
    """Whole goals from the answers: every involved kind's literals joined (named kinds first, in the words'
    order), with `forall` where the words say all/any/every; then the named kinds alone, then growing
    prefixes of the others by the model's yes. Distinct, longest first."""
    where = rooms_of(context)
    every = bool(_ALL & set(_tokens(text)))
    out: list[str] = []
    # each kind's own likeliest relation; then the first kind's for every kind that has it ("plates, forks and
    # glasses" all on the dining table, though the model found the forks likelier in the dining room alone)
    anchor = next((k.best for k in chosen if k.best is not None), None)
    for shared in (False, True):
        parts = []
        for kind in chosen:
            first = anchor if shared and anchor in kind.keys else kind.best
            for key in [first, *(k for k in kind.also if k != first)] if first is not None else []:
                lits = pick(context, kind, key, kind.keys[key], rel, where, rooms, text)
                if lits:
                    parts.append((key, kind.noun, lits, kind.named, kind.fixed))
        if parts:
            out += _variants(context, parts, every)
    return [g for g in dict.fromkeys(out) if g]


def _variants(context: Context, parts: list[tuple[str, str, list[str], bool, bool]], every: bool) -> list[str]:
    """Every part joined, then without the fixtures the words do not name (a washing machine to wash with is
    not itself asked to change), then the named kinds' parts alone, then with growing prefixes of the
    others."""

    def join(subset) -> list[str]:
        trio = [(k, n, lits) for k, n, lits, _, _ in subset]
        goals = []
        for form in ([trio, _forall(context, trio)] if every else [trio]):
            lits = [lit for _, _, ls in form for lit in ls]
            goals.append(conjoin(lits))
        return goals

    named = [p for p in parts if p[3]]
    others = [p for p in parts if not p[3]]
    out = join(parts)
    movable = [p for p in parts if p[3] or not p[4]]
    if movable and len(movable) < len(parts):
        out += join(movable)
    for k in range(len(others)):
        out += join(named + others[:k]) if named or k else []
    return out


def coverage(goal: str, found: Sequence[Kind], context: Context) -> float:
    """How well a goal agrees with the model's answers about kinds: the log-probability of which kinds it is
    about (a named kind counts as a yes of 0.9), summed over the kinds."""
    said = set(goal.replace("(", " ").replace(")", " ").split()) | (quantified(goal, context) if "(forall" in goal else set())
    total = 0.0
    for kind in found:
        if kind.place:  # whether a goal changes the fridge things go into says nothing of the request
            continue
        p = min(0.98, max(0.02, 0.9 if kind.named else kind.p_yes))
        total += math.log(p if any(n in said for n in kind.names) else 1.0 - p)
    return total


def quantified(goal: str, context: Context) -> set[str]:
    """The things a goal's `forall` parts are about: every thing of the type ("every light is off"), but of a
    conditional part only those for which it does not hold now ("every broken item is thrown away": the items
    memory knows broken, none where it knows none)."""
    types, out = context.domain.types, set()

    def true(f, env: dict[str, str]) -> bool:
        head = str(f[0])
        if head == "not":
            return not true(f[1], env)
        if head in ("and", "or"):
            return (all if head == "and" else any)(true(g, env) for g in f[1:])
        if head == "imply":
            return not true(f[1], env) or true(f[2], env)
        return Atom(head, tuple(env.get(str(a), str(a)) for a in f[1:])) in context.facts

    def walk(f) -> None:
        if not isinstance(f, list) or not f:
            return
        if str(f[0]) == "forall" and len(f) == 3 and len(f[1]) == 3:
            var, typ = str(f[1][0]), str(f[1][2])
            conditional = str(f[2][0]) in ("imply", "or")
            out.update(n for n, e in context.entities.items() if typ in types and types.is_subtype(
                str(e.get("type", "object")), typ) and not (conditional and true(f[2], {var: n})))
        else:
            for g in f[1:]:
                walk(g)

    try:
        walk(parse_sexpr(goal))
    except (ValueError, IndexError, TypeError):  # a goal this reading does not follow: about no quantified thing
        pass
    return out


def conjoin(literals: Sequence[str]) -> str:
    """One literal as it is, several as their conjunction."""
    return literals[0] if len(literals) == 1 else f"(and {' '.join(literals)})"


def counted(goals: Sequence[str], found: Sequence[Kind], context: Context | None = None) -> list[int]:
    """Per goal, minus the kinds the words name (or give a number for: "set the table for two") whose things it
    names in another number than the words ask for: "three apples" asks for three, "all the apples" or "the
    apples" for as many as any goal offered names (every one for which the goal is news). A kind a goal
    leaves out, or quantifies over, is not counted here (`coverage` weighs leaving it out)."""
    forall = ["(forall " in goal for goal in goals]
    literals = [_LITERAL.findall(goal) for goal in goals]
    out = [0] * len(goals)
    # and the kinds the model says the request involves, where the words give a number ("set the table for two
    # people": two plates)
    for kind in (k for k in found if k.named or k.count is not None and k.p_yes > _YES_AT):
        # the things given one and the same relation ("both magazines on the storage shelf", not one there
        # and the other on the bookshelf)
        # with a number, the things already there count ("both magazines" where one is); "all the towels" asks
        # for each to be made so (one moved beside others already in the room is not all of them moved)
        here = kind.here.get(kind.best)  # "all the books in Olga's bedroom": those there
        asked = kind.count if kind.count is not None else (len(here) if here else None)
        facts = context.facts if context is not None and asked is not None else frozenset()
        numbers = [_most_alike(lits, set(kind.names), facts) for lits in literals]
        # "five glasses" where four are news asks for the four
        wanted = min(asked or 10**6, max((total for _, total in numbers), default=0))
        for i, (own, total) in enumerate(numbers):
            if own and not forall[i] and wanted not in (own, total):
                out[i] -= 1
            elif forall[i] and kind.count is not None and context is not None and \
                    len(set(kind.names) & quantified(goals[i], context)) > kind.count:
                out[i] -= 1  # "the bathroom light and the kitchen light": not every light
    return out


def unsaid_states(goals: Sequence[str], chosen: Sequence[Kind], text: str, context: Context) -> list[int]:
    """Per goal, how many states the words ask of its things it leaves out, one per thing and state ("wash and
    dry the shirt and the socks": the shirt clean and the socks dry leaves out two; the shirt and the socks in
    the basket, four), even where memory holds one now (washing wets what was dry). A goal's `forall` over a
    state leaves it out for no thing."""
    asked = []
    for kind in chosen:
        states = [k for k in dict.fromkeys(([kind.best] if kind.best else []) + list(kind.also))
                  if _one_thing(k) and state_said(k, text, kind.noun)]
        if states:
            asked.append((kind, states))
    out = []
    for goal in goals:
        literals = _LITERAL.findall(goal)
        have = {(bool(negated), pred, thing) for negated, pred, thing, rest in literals if not rest}
        everything = {(bool(negated), pred) for negated, pred, thing, rest in literals if thing.startswith("?")}
        about = {thing for _, _, thing, _ in literals}
        if "(forall " in goal:
            about |= quantified(goal, context)
        missing = 0
        for kind, states in asked:
            for name in (n for n in kind.names if n in about):
                for key in states:
                    negated, pred = key.startswith("(not "), _predicate_of(key)
                    if (negated, pred, name) not in have and (negated, pred) not in everything:
                        missing += 1
        out.append(missing)
    return out


def unsaid_kinds(goals: Sequence[str], found: Sequence[Kind], context: Context) -> list[int]:
    """Per goal, how many of the nouns the words name movable things by, as the things to move ("bring all
    glasses and cups to the sink": glasses, cups), it names nothing of (nor quantifies over): an answer about
    the cups alone is no reading of those words, however much likelier the model finds the shorter one."""
    heads: dict[str, list[Kind]] = {}
    for kind in found:
        # (not a kind the words take from a room where memory has none of it: "all the books in Sami's
        # bedroom", which holds magazines and a notebook, asks for no book, `pick`)
        if kind.moved and not kind.fixed and (not kind.best or kind.here.get(kind.best) != []):
            heads.setdefault(_naming_head(kind.noun), []).append(kind)
    out = []
    for goal in goals:
        about = set(re.findall(r"[^\s()]+", goal)) | quantified(goal, context)
        covered = [[bool(set(k.here.get(k.best) or k.names) & about) for k in kinds] for kinds in heads.values()]
        # where the words ask for all of a noun ("all glasses and cups"), something of each kind it names (the
        # cups and the other cups); else of one of them ("the mug": the mug or the travel mug)
        out.append(sum(1 for kinds, cov in zip(heads.values(), covered)
                       if not (all(cov) if any(k.count is None for k in kinds) else any(cov))))
    return out


def strays(goals: Sequence[str], chosen: Sequence[Kind]) -> list[int]:
    """Per goal, the things it changes of a kind the words take from a room they name that are not in that
    room ("all the books in Olga's bedroom": a book from the study is not one of them)."""
    others = [set(kind.names) - set(kind.here[kind.best]) for kind in chosen if kind.best in kind.here]
    out = []
    for goal in goals:
        changed = {thing for _, _, thing, _ in _LITERAL.findall(goal)}
        out.append(sum(len(elsewhere & changed) for elsewhere in others))
    return out


_LITERAL = re.compile(r"\((not \()?([^\s()]+) ([^\s()]+)((?: [^\s()]+)*)\)")


def _most_alike(literals: Sequence[tuple[str, str, str, str]], names: set[str],
                facts: frozenset[Atom] = frozenset()) -> tuple[int, int]:
    """The most of `names` that one relation (predicate and other arguments) is said of; and the same counting
    those of which memory holds it already ("both magazines on the shelf" where one is there: the other one)."""
    groups: dict[tuple[str, str, str], set[str]] = {}
    for negated, pred, thing, rest in literals:
        if thing in names:
            groups.setdefault((negated, pred, rest), set()).add(thing)
    own = max(map(len, groups.values()), default=0)
    moved = {n for things in groups.values() for n in things}  # a thing the goal takes elsewhere is not there
    for (negated, pred, rest), things in groups.items():
        if not negated:
            things.update(n for n in names if n not in moved and Atom(pred, (n, *rest.split())) in facts)
    return own, max(map(len, groups.values()), default=0)


def decide(tokens: Sequence[Sequence[float]], kinds_fit: Sequence[float], end_weight: float,
           kind_weight: float, counts_fit: Sequence[float] | None = None, count_weight: float = 0.0,
           unsaid: Sequence[int] | None = None, state_weight: float = 0.0,
           priors: Sequence[float] | None = None) -> int:
    """The answer whose words are likeliest, with its end of turn weighted by `end_weight` (how sure the model
    is that nothing more was asked), its `coverage` by `kind_weight` (whether it is about the kinds the
    model said the request involves), its `counted` by `count_weight` (whether it names as many of each
    kind as the words ask for) and its `unsaid_states` by `state_weight` (each state the words ask of its
    things that it leaves out), plus its `priors` (nats known beforehand: a goal the world's language
    declares for words like these)."""
    counts_fit = counts_fit or [0.0] * len(tokens)
    unsaid = unsaid or [0] * len(tokens)
    priors = priors or [0.0] * len(tokens)

    def value(i: int) -> float:
        t = tokens[i]
        return (sum(t[:-1]) + end_weight * t[-1] + kind_weight * kinds_fit[i] + count_weight * counts_fit[i]
                - state_weight * unsaid[i] + priors[i] if t else -math.inf)
    return max(range(len(tokens)), key=value)
