"""Goals and facts said in plain English, so that a small model chooses among sentences, not PDDL.

A 1.5B model reads "the bread is in the fridge and cold" far better than `(and (inside bread_1 fridge_1)
(cold bread_1))`: asked to choose, it picked the right goal for 36 of the 50 paraphrased tasks in English
against 30 in PDDL (docs/local_model.md). `Verbalizer` renders a goal formula (literals, `and`, `or`,
`forall`, `imply`) with each predicate's phrase (`PHRASES`, else the predicate's own words) and each name
as people say it ("the teal bowl", "Hiro's nightstand", "the light in the hallway"); a conjunction says a
shared subject or a shared predicate and object once ("the red notebook and the blue notebook are on the
bookshelf"), which keeps the right conjunction about as likely as its best part.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping, Sequence

from servicerobot.memory.catalogue import entity_phrase
from servicerobot.pddl import Atom
from servicerobot.pddl.sexpr import parse_sexpr

__all__ = ["PHRASES", "TYPE_NOUNS", "Verbalizer"]

# predicate -> (sentence when true, sentence when false); {0}, {1} are the arguments. Predicates not listed
# are said with their own words ("{0} is <pred>", "{0} <pred> {1}"), so any domain can be verbalized.
PHRASES: dict[str, tuple[str, str]] = {
    "on": ("{0} is on {1}", "{0} is not on {1}"),
    "inside": ("{0} is in {1}", "{0} is not in {1}"),
    "in-room": ("{0} is in {1}", "{0} is not in {1}"),
    "held-by": ("{1} has {0}", "{1} does not have {0}"),
    "holding": ("{0} holds {1}", "{0} does not hold {1}"),
    "hand-empty": ("{0} holds nothing", "{0} holds something"),
    "closed": ("{0} is closed", "{0} is open"),
    "light-on": ("{0} is on", "{0} is off"),
    "faucet-on": ("{0} is running", "{0} is off"),
    "dirty": ("{0} is dirty", "{0} is clean"),
    "wet": ("{0} is wet", "{0} is dry"),
    "cold": ("{0} is cold", "{0} is not cold"),
    "broken": ("{0} is broken", "{0} is not broken"),
    "discarded": ("{0} is thrown away", "{0} is not thrown away"),
    "made": ("{0} is made", "{0} is unmade"),
    "chills": ("{0} chills things", "{0} does not chill things"),
    "connected": ("{0} leads to {1}", "{0} does not lead to {1}"),
}
# how a type is said after "every" ("every piece of clothing is clean")
TYPE_NOUNS: dict[str, str] = {"clothing": "piece of clothing", "food": "food item", "decor": "decoration",
                              "sink": "tap", "locatable": "thing", "object": "thing"}
_NO_ROOM_TYPES = ("person", "room", "robot")


def _generic(predicate: str, arity: int) -> tuple[str, str]:
    words = predicate.replace("-", " ").replace("_", " ")
    if arity == 1:
        verb, _, rest = words.partition(" ")
        if verb in ("is", "has", "can") and rest:  # is-sealed: "the box is sealed"
            return "{0} " + words, "{0} " + verb + " not " + rest
        return "{0} is " + words, "{0} is not " + words
    if arity == 2:
        return "{0} " + words + " {1}", "it is not so that {0} " + words + " {1}"
    args = " ".join(f"{{{i}}}" for i in range(arity))
    return words + " " + args, "not " + words + " " + args


class Verbalizer:
    """English for the goals and facts of one prompt. A fixture whose phrase another entity shares is said
    with its room ("the light in the hallway").

    Args:
        entities: the catalogue (name -> record with type, noun, colour, owner, room).
        shown: the names the prompt shows; a phrase two of them share gets the name in brackets.
    """

    def __init__(self, entities: Mapping[str, Mapping], shown: Sequence[str] = ()):
        self.entities = entities
        self._names: dict[str, str] = {}
        self._bare: dict[str, int] = {}  # how many entities share each bare phrase: those get their room
        for info in entities.values():
            bare = entity_phrase(info)
            self._bare[bare] = self._bare.get(bare, 0) + 1
        said: dict[str, list[str]] = {}
        for name in shown:
            said.setdefault(self._phrase(name), []).append(name)
        for phrase, names in said.items():
            for name in names:
                self._names[name] = phrase if len(names) == 1 else f"{phrase} ({name})"

    def _phrase(self, name: str) -> str:
        info = self.entities.get(name)
        if info is None:
            return name.replace("_", " ")
        phrase = entity_phrase(info)
        typ = info.get("type")
        if typ in ("person", "robot"):
            return phrase[:1].upper() + phrase[1:] if typ == "person" else "the robot"
        text = phrase if phrase[:1].isupper() else f"the {phrase}"
        room = info.get("room")
        if room and typ not in _NO_ROOM_TYPES and room in self.entities and self._bare.get(phrase, 0) > 1:
            room_phrase = entity_phrase(self.entities[room])
            if room_phrase not in phrase:
                text += f" in the {room_phrase}" if room_phrase[:1].islower() else f" in {room_phrase}"
        return text

    def name(self, name: str) -> str:
        """How people say `name` ("the teal bowl", "the light in the hallway", "Ana")."""
        if name not in self._names:
            self._names[name] = self._phrase(name)
        return self._names[name]

    # ------------------------------------------------------------------ formulas
    def goal(self, formula: str) -> str:
        """A goal formula in English; a top-level conjunction is aggregated (`conjunction`)."""
        expr = parse_sexpr(formula)
        if expr and str(expr[0]) == "and":
            return self.conjunction([_text(e) for e in expr[1:]])
        return self._say(expr, self.name)

    def fact(self, predicate: str, args: Sequence[str], value: bool = True) -> str:
        """One literal: "the fridge is closed", "Ana has the red phone"."""
        return self._literal(predicate, list(args), value, self.name)

    def change(self, remove: Iterable[Atom], add: Iterable[Atom]) -> str:
        """A reported change as what is true now: "Lea's cup is in the dishwasher and the lamp is off". A
        thing's old place is left unsaid when its new place is said."""
        add, remove = sorted(add), sorted(remove)
        placed = {a.args[0] for a in add if len(a.args) == 2}
        parts = [_literal_text(a) for a in add]
        parts += [f"(not {_literal_text(a)})" for a in remove if not (len(a.args) == 2 and a.args[0] in placed)]
        return self.conjunction(parts) if parts else "nothing changed"

    def conjunction(self, parts: Sequence[str]) -> str:
        """Literals joined with "and", a shared subject or a shared predicate-and-object said once."""
        marked = [self._say(parse_sexpr(p), lambda n: f"\x00{n}\x00") for p in parts]
        split = [re.fullmatch(r"\x00([^\x00]+)\x00 (.*)", m) for m in marked]
        if len(parts) > 1 and all(split):
            subjects = [m.group(1) for m in split]
            rests = [m.group(2) for m in split]
            if len(set(subjects)) == 1:  # "the bread is in the fridge and cold"
                rests = [self._unmark(r) for r in rests]
                rests = [r[3:] if i and r.startswith("is ") and rests[0].startswith("is ") else r
                         for i, r in enumerate(rests)]
                return f"{self.name(subjects[0])} {_join(rests)}"
            if len(set(rests)) == 1 and len(set(subjects)) == len(subjects):  # "A and B are on the shelf"
                rest = self._unmark(rests[0])
                rest = f"are {rest[3:]}" if rest.startswith("is ") else rest
                return f"{_join([self.name(s) for s in subjects])} {rest}"
        return " and ".join(self._unmark(m) for m in marked)

    def _unmark(self, text: str) -> str:
        return re.sub(r"\x00([^\x00]+)\x00", lambda m: self.name(m.group(1)), text)

    def _literal(self, predicate: str, args: list[str], value: bool, name) -> str:
        pos, neg = PHRASES.get(predicate) or _generic(predicate, len(args))
        return (pos if value else neg).format(*[name(a) for a in args])

    def _say(self, expr, name) -> str:
        if isinstance(expr, str):
            return name(str(expr))
        head = str(expr[0]) if expr else ""
        if head == "and":
            return " and ".join(self._say(e, name) for e in expr[1:])
        if head == "or":
            parts = [self._say(e, name) for e in expr[1:]]
            return parts[0] + "".join(" or " + p.removeprefix("it ") for p in parts[1:])
        if head == "not" and not isinstance(expr[1], str) and str(expr[1][0]) not in ("and", "or", "forall",
                                                                                        "imply", "not"):
            atom = expr[1]
            return self._literal(str(atom[0]), [str(a) for a in atom[1:]], False, name)
        if head == "not":
            return "it is not so that " + self._say(expr[1], name)
        if head == "imply":
            return f"if {self._say(expr[1], name)}, {self._say(expr[2], name)}"
        if head in ("forall", "exists"):
            variable, typ = str(expr[1][0]), str(expr[1][-1])
            noun = ("every " if head == "forall" else "some ") + TYPE_NOUNS.get(typ, typ.replace("-", " "))
            first = [True]

            def bound(n: str) -> str:
                if n != variable:
                    return name(n)
                if first[0]:
                    first[0] = False
                    return noun
                return "it"
            body = expr[2]
            if not isinstance(body, str) and body and str(body[0]) == "imply":
                cond = self._say(body[1], lambda n: "\x01" if n == variable else name(n))
                then = self._say(body[2], lambda n: "\x01" if n == variable else name(n))
                if cond.startswith("\x01 ") and then.startswith("\x01 "):  # "every item that is broken is ..."
                    return f"{noun} that {cond[2:]} {then[2:]}".replace("\x01", "it")
                return f"for {noun}: if {cond}, {then}".replace("\x01", "it")
            return self._say(body, bound)
        return self._literal(head, [str(a) for a in expr[1:]], True, name)


def _literal_text(atom: Atom) -> str:
    return f"({' '.join([atom.predicate, *atom.args])})"


def _text(expr) -> str:
    return str(expr) if isinstance(expr, str) else "(" + " ".join(_text(e) for e in expr) + ")"


def _join(parts: Sequence[str]) -> str:
    return parts[0] if len(parts) == 1 else ", ".join(parts[:-1]) + " and " + parts[-1]
