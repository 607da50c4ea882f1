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

from servicerobot.memory.catalogue import entity_phrase, room_names
from servicerobot.pddl import Atom
from servicerobot.pddl.sexpr import parse_sexpr

__all__ = ["PHRASES", "TYPE_NOUNS", "Verbalizer", "head_noun", "plural", "predicate_phrase"]

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


# How other domains name the household's relations and states (Context Matters' `is-on`, `is-holding`,
# `is-free`, `thrashed`; `placed-on`, `stored-in`, `located`): a predicate's words, "is" dropped, looked up here.
_SAME_AS = {
    "on": "on", "placed on": "on", "put on": "on", "on top": "on", "ontop": "on", "on top of": "on",
    "rests on": "on", "lying on": "on", "sitting on": "on", "supported by": "on",
    "in": "inside", "inside": "inside", "stored in": "inside", "contained in": "inside", "into": "inside",
    "within": "inside", "placed in": "inside", "put in": "inside", "in container": "inside",
    "at": "at", "located": "at", "located at": "at", "located in": "at", "in room": "at", "at location": "at",
    "holding": "holding", "holds": "holding", "carrying": "holding", "carries": "holding", "grasping": "holding",
    "free": "hand-empty", "hand free": "hand-empty", "hands free": "hand-empty", "handempty": "hand-empty",
    "hand empty": "hand-empty", "empty handed": "hand-empty", "gripper free": "hand-empty",
    "arm empty": "hand-empty", "armempty": "hand-empty",
    "thrashed": "discarded", "trashed": "discarded", "discarded": "discarded", "disposed": "discarded",
    "thrown": "discarded", "thrown away": "discarded", "binned": "discarded", "in trash": "discarded",
}
# a state and the word for its absence ("the shirt is clean" says `(not (is-dirty shirt))`)
_OPPOSITE = {"dirty": "clean", "clean": "dirty", "wet": "dry", "dry": "wet", "open": "closed", "closed": "open",
             "opened": "closed", "shut": "open", "soiled": "clean", "washed": "unwashed", "made": "unmade",
             "broken": "not broken", "lit": "dark"}
_PREPOSITIONS = frozenset({"on", "in", "at", "into", "onto", "inside", "under", "near", "to", "with", "from", "by",
                           "behind", "above", "below", "beside", "next"})
_PLACE_WORDS = ("room", "location", "place", "area", "region", "zone")


def _is_place(domain, typ: str | None) -> bool:
    if domain is None or not typ:
        return False
    types = getattr(domain, "types", None)
    names = [typ] + (sorted(types.ancestors(typ)) if types is not None and typ in types else [])
    return any(w in _PLACE_WORDS for t in names for w in re.split(r"[-_]", t.lower()))


def predicate_phrase(predicate: str, params: Sequence[str | None] = (), domain=None) -> tuple[str, str]:
    """How to say a predicate when true and when false, from its words (and its parameters' types, given a
    domain): `is-on` like `on`, `located` over a room as "is in", `is-dirty` false as "is clean", `loaded`
    as "is loaded in", `dirty-floor` of a room as "the floor in {0} is dirty"."""
    arity = len(params)
    if predicate in PHRASES:
        return PHRASES[predicate]
    words = [w for w in re.split(r"[-_\s]+", predicate.lower()) if w]
    if len(words) > 1 and words[0] in ("is", "are"):
        words = words[1:]
    core = " ".join(words)
    same = _SAME_AS.get(core)
    if same == "at" and arity == 2:
        where = "in" if _is_place(domain, params[1]) else "at"
        return "{0} is " + where + " {1}", "{0} is not " + where + " {1}"
    if same and same in PHRASES and PHRASES[same][0].count("{") == arity:
        return PHRASES[same]
    if arity == 1 and core in _OPPOSITE:
        return "{0} is " + core, "{0} is " + _OPPOSITE[core]
    if arity == 1 and len(words) == 2 and words[0] in _OPPOSITE:  # dirty-floor: the floor in the kitchen is dirty
        of = "in" if _is_place(domain, params[0]) else "of"
        return (f"the {words[1]} {of} {{0}} is {words[0]}", f"the {words[1]} {of} {{0}} is {_OPPOSITE[words[0]]}")
    if arity == 2 and len(words) == 1 and words[0].endswith("ed"):  # loaded: "the shirt is loaded in the washer"
        return "{0} is " + core + " in {1}", "{0} is not " + core + " in {1}"
    if arity == 2 and (words[-1] in _PREPOSITIONS or words[0].endswith("ing")):
        return "{0} is " + core + " {1}", "{0} is not " + core + " {1}"
    return _generic(predicate, arity)


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
        domain: the planning domain; its predicates' parameter types choose a phrase's preposition
            (`predicate_phrase`): a domain of other words than the household's is said in the same English.
        rooms: the rooms the utterance names; a fixture in one of them is said with its room, as the person
            said it ("the desk in the bedroom": the 1.5B model finds "the apples are on the desk" 13 nats less
            likely than "... on the desk in the bedroom" after "take the apples to the desk in the bedroom").
        facts: what holds now; a goal about every shown thing of a phrase for which it is not yet true is
            said of them all ("all 42 books are on the bookshelf", not "22 of the 42 books (book_10, ...)").
    """

    def __init__(self, entities: Mapping[str, Mapping], shown: Sequence[str] = (), domain=None,
                 rooms: Iterable[str] = (), facts: Iterable[Atom] = ()):
        self.entities = entities
        self.domain = domain
        self.rooms = frozenset(rooms)
        self.facts = frozenset(facts)
        self._shown: dict[str, list[str]] = {}  # phrase -> the shown names said with it
        self._phrases: dict[tuple[str, int], tuple[str, str]] = {}
        self._names: dict[str, str] = {}
        self._alike: dict[str, int] = {}  # shown names per phrase: "both plates" when a group has them all
        self._bare: dict[str, int] = {}  # how many entities share each bare phrase: those get their room
        self._room = room_names(entities)  # a fixture's `room`, a name or a phrase -> the room's name
        for info in entities.values():
            bare = entity_phrase(info)
            self._bare[bare] = self._bare.get(bare, 0) + 1
        said: dict[str, list[str]] = {}
        for name in shown:
            said.setdefault(self._phrase(name), []).append(name)
        for phrase, names in said.items():
            self._alike[phrase] = len(names)
            self._shown[phrase] = names
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
        room = self._room.get(str(info.get("room")))
        if room and typ not in _NO_ROOM_TYPES and (self._bare.get(phrase, 0) > 1 or room in self.rooms):
            room_phrase = entity_phrase(self.entities[room])
            owner = str(info.get("owner") or "")
            if owner and room in self.rooms and room_phrase.startswith(f"{owner}'s "):
                # "the light in Yusuf's bedroom" as the words say it, not "Yusuf's light in Yusuf's bedroom"
                unowned = entity_phrase({k: v for k, v in info.items() if k != "owner"})
                text = f"the {unowned}"
            if room_phrase not in text:
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
        """Literals joined with "and": a shared subject said once ("the bread is in the fridge and cold"), and
        the things that share a predicate and object said together, alike ones counted ("both plates, the
        fork and the glass are on the table; the shirt and the towel are clean")."""
        given = self._given_with_states(parts) if len(parts) > 1 else None
        if given:
            return (self.conjunction(given[1]) + " and " if given[1] else "") + given[0]  # the states said last
        marked = [self._say(parse_sexpr(p), lambda n: f"\x00{n}\x00") for p in parts]
        split = [re.fullmatch(r"\x00([^\x00]+)\x00 (.*)", m) for m in marked]
        if len(parts) > 1 and all(split) and len({m.group(1) for m in split}) == 1:
            return f"{self.name(split[0].group(1))} {self._rests([m.group(2) for m in split])}"
        groups: dict[str, list[str]] = {}  # what is said of them -> the subjects, in the parts' order
        template: dict[str, str] = {}  # ... -> one of its literals, to ask what already holds of other things
        for i, m in enumerate(split):
            key = m.group(2) if m else f"\x02{i}"
            groups.setdefault(key, []).append(m.group(1) if m else marked[i])
            template.setdefault(key, parts[i])
        if len(parts) < 2 or all(len(subjects) == 1 for subjects in groups.values()):
            return " and ".join(self._unmark(m) for m in marked)
        said = []
        merged: dict[tuple[str, ...], list[str]] = {}  # the same things in two states: "are clean and dry"
        for rest, subjects in groups.items():
            merged.setdefault(tuple(subjects) if not rest.startswith("\x02") else (rest,), []).append(rest)
        for subjects, rests in merged.items():
            if rests[0].startswith("\x02"):
                said.append(self._unmark(groups[rests[0]][0]))
                continue
            if len(subjects) == 1:
                said.append(f"{self.name(subjects[0])} {self._rests(rests)}")
            else:
                said.append(f"{self.together(list(subjects), [template[r] for r in rests])} "
                            f"{self._rests(rests, many=True)}")
        return ", ".join(said[:-1]) + " and " + said[-1] if len(said) > 1 else said[0]

    def _rests(self, rests: Sequence[str], many: bool = False) -> str:
        """What is said of one subject (`many`: of several), joined: "is in the fridge and cold", "are clean
        and dry"."""
        said = [self._unmark(r) for r in rests]
        said = [r[3:] if i and r.startswith("is ") and said[0].startswith("is ") else r for i, r in enumerate(said)]
        if many and said[0].startswith("is "):
            said[0] = f"are {said[0][3:]}"
        return _join(said)

    def together(self, names: Sequence[str], literals: Sequence[str] = ()) -> str:
        """Several things as one subject: alike things counted ("both plates", "all three apples", "two of
        the four books (book_1, book_2)"), the others named, in their first order. `literals`: what is said
        of the first of them; the alike things of which all of it already holds count as said ("all 42
        books" where 20 already are where the other 22 go)."""
        alike: dict[str, list[str]] = {}
        for n in names:
            alike.setdefault(self._phrase(n), []).append(n)
        said = []
        for phrase, ns in alike.items():
            if len(ns) == 1:
                said.append(self.name(ns[0]))
                continue
            bare = phrase.removeprefix("the ")
            many = plural(bare)
            shown = self._alike.get(phrase, len(ns))
            done = 0
            if shown > len(ns) and literals and self.facts:
                done = sum(all(self._holds(lit, ns[0], other) for lit in literals)
                           for other in self._shown.get(phrase, ()) if other not in ns)
            if shown <= len(ns) + done:
                total = len(ns) + done
                said.append(f"both {many}" if total == 2 else f"all {_number(total)} {many}")
                continue
            if shown <= len(ns):
                said.append(f"both {many}" if len(ns) == 2 else f"all {_number(len(ns))} {many}")
            else:
                said.append(f"{_number(len(ns))} of the {_number(shown)} {many} ({', '.join(ns)})")
        return _join(said)

    def _holds(self, literal: str, subject: str, other: str) -> bool:
        """Whether `literal`, said of `other` in the place of `subject`, holds now."""
        expr = parse_sexpr(literal)
        negated = bool(expr) and str(expr[0]) == "not"
        atom = expr[1] if negated else expr
        args = tuple(other if str(a) == subject else str(a) for a in atom[1:])
        return (Atom(str(atom[0]), args) in self.facts) != negated

    def _unmark(self, text: str) -> str:
        return re.sub(r"\x00([^\x00]+)\x00", lambda m: self.name(m.group(1)), text)

    def _templates(self, predicate: str, arity: int) -> tuple[str, str]:
        key = (predicate, arity)
        if key not in self._phrases:
            decl = getattr(self.domain, "predicates", {}).get(predicate)
            params = [t for _, t in decl.params] if decl is not None and len(decl.params) == arity \
                else [None] * arity
            self._phrases[key] = predicate_phrase(predicate, params, self.domain)
        return self._phrases[key]

    def _literal(self, predicate: str, args: list[str], value: bool, name) -> str:
        pos, neg = self._templates(predicate, len(args))
        return (pos if value else neg).format(*[name(a) for a in args])

    def _given_with_states(self, parts: Sequence[str]) -> tuple[str, list[str]] | None:
        """"Sami has the purple jeans, clean and dry": a relation said with its thing last ("{1} has {0}") and
        the states asked of that thing, said after it; with the parts left. None where there is no such pair."""
        parsed = [parse_sexpr(p) for p in parts]
        subject = {}  # part -> the thing a one-thing literal is about
        for i, e in enumerate(parsed):
            atom = e[1] if e and str(e[0]) == "not" and isinstance(e[1], list) else e
            if isinstance(atom, list) and len(atom) == 2 and isinstance(atom[1], str):
                subject[i] = str(atom[1])
        for i, e in enumerate(parsed):
            if not (isinstance(e, list) and len(e) == 3 and all(isinstance(x, str) for x in e)):
                continue
            thing, states = str(e[1]), [j for j, t in subject.items() if t == str(e[1])]
            if not states or self._templates(str(e[0]), 2)[0] != "{1} has {0}":
                continue
            own = self.name(thing) + " "
            said = [self._say(parsed[j], self.name) for j in states]
            if not all(x.startswith(own + "is ") for x in said):
                continue
            clause = f"{self._say(e, self.name)}, {_join([x[len(own) + 3:] for x in said])}"
            return clause, [p for k, p in enumerate(parts) if k != i and k not in states]
        return None

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


_NUMBERS = ("zero", "one", "two", "three", "four", "five", "six", "seven", "eight", "nine", "ten", "eleven", "twelve")


def _number(n: int) -> str:
    return _NUMBERS[n] if 0 <= n < len(_NUMBERS) else str(n)


_IRREGULAR = {"knife": "knives", "shelf": "shelves", "leaf": "leaves", "loaf": "loaves", "person": "people",
              "child": "children", "mouse": "mice", "foot": "feet", "tooth": "teeth", "scarf": "scarves",
              "wife": "wives", "life": "lives", "half": "halves", "man": "men", "woman": "women"}
_SAME_PLURAL = ("glasses", "scissors", "jeans", "pants", "trousers", "shorts", "clothes", "sheep", "fish",
                "tongs", "pliers", "headphones", "earphones", "shoes", "socks", "cutlery", "silverware", "laundry")


_PREPOSITIONS = frozenset({"of", "into", "in", "on", "onto", "from", "with", "for", "at", "under", "inside"})


def _head_index(words: Sequence[str]) -> int:
    return next((j - 1 for j, w in enumerate(words) if j and w.lower() in _PREPOSITIONS), len(words) - 1)


def head_noun(phrase: str) -> str:
    """The word a noun phrase is about: the one before its first preposition ("book" of "book into the
    shelf", "chest" of "chest of drawers"), else its last."""
    words = phrase.lower().split()
    return words[_head_index(words)] if words else phrase


def plural(phrase: str) -> str:
    """A noun phrase in the plural: its head noun, the word before "of" ("pairs of jeans", "chests of
    drawers"), or the last word ("red mugs", "Ana's books", "knives", "boxes", "berries")."""
    words = phrase.split(" ")
    i = _head_index(words)
    word = words[i]
    low = word.lower()
    if low in _IRREGULAR:
        word = _IRREGULAR[low]
    elif low.endswith(_SAME_PLURAL) or not low[-1:].isalpha() or \
            low.endswith("s") and not low.endswith(("ss", "us", "is", "os", "as")):  # already plural: "cups"
        pass
    elif low.endswith(("s", "x", "z", "ch", "sh")):
        word += "es"
    elif low.endswith("y") and low[-2:-1] not in tuple("aeiou"):
        word = word[:-1] + "ies"
    else:
        word += "s"
    return " ".join(words[:i] + [word] + words[i + 1:])


def _join(parts: Sequence[str]) -> str:
    return parts[0] if len(parts) == 1 else ", ".join(parts[:-1]) + " and " + parts[-1]
