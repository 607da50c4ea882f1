"""What an utterance may mean, enumerated by code for a small model to choose from.

Three things are built here from the domain, the memory in a `Context` and the words of the utterance:

- `relevance`: how strongly the words name each known entity (its noun, colour, mark, material, owner,
  room; "my" names the speaker's things), so prompts show the entities an answer may need and candidate
  lists stay short;
- `goal_candidates`: every well-typed goal literal over the shown names that some action can make true
  (or false) and that is not already so in memory, plus `forall` goals over a type;
- `delta_candidates`: every change a person may report about the shown names that agrees with memory:
  an item moved from where memory has it to a surface, a container or a person, a person gone to another
  room, a flag set or cleared.

Nothing here decides; `servicerobot.language.chooser` has the model score the candidates.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from functools import cache

from servicerobot.language.interpreter import Context
from servicerobot.language.reachable import Reachability, achievers
from servicerobot.memory.triplets import Delta
from servicerobot.pddl import Atom, Domain
from servicerobot.pddl.model import effect_predicates

__all__ = ["Signatures", "delta_candidates", "goal_candidates", "is_fixed", "merge", "never_reported", "receivers",
           "relevance", "signatures", "static_predicates", "synonyms_of", "words"]

# Household words people use for a thing under another name (both sides are stems, see `_stem`); the kinds'
# words of planning domains too ("rubbish" names Context Matters' `disposable` things, "dishes" `tableware`).
_SYNONYMS = {
    "tap": ("sink", "faucet"), "faucet": ("sink",), "water": ("sink", "faucet"), "lamp": ("light",),
    "couch": ("sofa",), "settee": ("sofa",), "telly": ("tv",), "television": ("tv",), "cupboard": ("cabinet",),
    "closet": ("wardrobe",), "bin": ("trash",), "garbage": ("trash", "waste", "disposable"),
    "rubbish": ("trash", "waste", "disposable"), "trash": ("waste", "disposable"),
    "litter": ("trash", "waste", "disposable"),
    "refrigerator": ("fridge",), "washing": ("washer",), "drier": ("dryer",), "bedside": ("nightstand",),
    "headphone": ("headphone",), "earphone": ("headphone",), "mobile": ("phone",), "cellphone": ("phone",),
    "specs": ("glasses",), "tumbler": ("glass",), "crockery": ("dish",),
    "dish": ("plate", "bowl", "dish", "tableware", "dishware", "kitchenware"),
    "laundry": ("clothing", "basket", "cleanable"), "cloth": ("clothing",),
    "clothe": ("clothing", "shirt", "pant", "jean", "sock", "underwear", "jacket", "sweater", "dress", "skirt",
               "coat", "blouse"),
    "garment": ("clothing",),
    "jean": ("jean",), "trouser": ("jean", "pant"), "pant": ("jean", "pant"), "jumper": ("sweater",),
    "pullover": ("sweater",), "controller": ("remote",), "clicker": ("remote",), "loaf": ("bread",),
    "yoghurt": ("yogurt",), "shelf": ("shelf", "bookshelf"), "table": ("table",), "desk": ("table", "desk"),
    "chill": ("cold",), "chilled": ("cold",), "cool": ("cold",),
    "throw": ("discarded",), "rid": ("discarded",), "toss": ("discarded",), "chuck": ("discarded",),
    "dump": ("discarded",),
}
_TO_ME = re.compile(r"\b(?:to|bring|brings|fetch|get|getting|give|hand|pass|grab)\s+me\b")  # me, the receiver
_SELF = frozenset({"my", "mine", "me", "i", "myself", "i'm", "i've", "im"})
_MINE = frozenset({"my", "mine", "me", "myself"})  # words that say a thing is the speaker's own
_WORD = re.compile(r"[a-z0-9]+")
_CUT_SHORT = re.compile(r"\x00\s*(?:[,.;!?]|$|\s(?:then|and|after|before|please)\b)")  # "the living, then"


def _stem(word: str) -> str:
    if len(word) > 4 and word.endswith("ies"):
        return word[:-3] + "y"
    if len(word) > 4 and word.endswith(("ses", "xes", "ches", "shes")):
        return word[:-2]
    if len(word) > 3 and word.endswith("s") and not word.endswith("ss"):
        return word[:-1]
    return word


def synonyms_of(stem: str) -> tuple[str, ...]:
    """The stems a word's stem also names ("tap" -> sink, faucet)."""
    return _SYNONYMS.get(stem, ())


def words(text: str) -> list[str]:
    """The lower-case word stems of `text` ("Hiro's dishes" -> ["hiro", "dish"]), synonyms added."""
    out = []
    for raw in _WORD.findall(text.lower().replace("'s ", " ").replace("\u2019s ", " ")):
        stem = _stem(raw)
        out.append(stem)
        out.extend(_SYNONYMS.get(stem, ()))
    return out


_GIVING = r"(?:bring|brings|fetch|get|getting|give|hand|pass|grab|take|deliver|carry)"
_ASKING = r"\b(?:can|could|would|will|may|might)"  # "could Sami get his cup?": Sami is to have it
_GETTING = r"(?:get|have|borrow)"
_WANTING = r"(?:wants|needs|would like|'d like|is asking for|has been asking for|asked for|is looking for)"


def receivers(context: Context, text: str, speaker: str, rel: Mapping[str, float]) -> set[str]:
    """The people the words name as the ones a thing goes to: "bring it to me", "hand Chloe the mug", "take the
    book to Hiro", "give me", "the yogurt is for Hiro", and "Ana wants her notebook" where the words name no place to put it (`rel`,
    from `relevance`: no fixture or room named by its noun)."""
    low = text.lower().replace("\u2019", "'")
    me = (speaker or "").strip().lower()
    places = any(r >= 2.0 and is_fixed(context, n) for n, r in rel.items())
    out = set()
    for name, info in context.entities.items():
        if info.get("type") != "person":
            continue
        words_for = [re.escape(str(info.get("name") or name).lower())] + (["me"] if name.lower() == me else [])
        for w in words_for:
            # (not a possessive: "get Ana's socks clean", "to Hiro's room")
            if re.search(rf"(?:\bto {w}|\b{_GIVING} {w}|\b(?:is|are|'s) for {w}|{_ASKING} {w} {_GETTING})\b(?!'s)",
                         low) or (
                    w != "me" and not places and re.search(rf"\b{w} {_WANTING}\b", low)):
                out.add(name)
        if name.lower() == me and re.search(rf"{_ASKING} i {_GETTING}\b", low):  # "could I have the remote?"
            out.add(name)
    return out


def relevance(context: Context, text: str, speaker: str) -> dict[str, float]:
    """Entity name -> how strongly `text` (said by `speaker`) names it; entities not named are left out.

    The head noun counts most, then the other noun words, colour, mark, material, owner, room and a state
    memory holds of it ("the dirty dishes"); an owner who is the speaker counts when the text says "my"/"me";
    a person or room named counts in full.
    """
    said = set(words(text))
    lowered = _WORD.findall(text.lower())
    raw = set(lowered)
    tokens = [_stem(w) for w in lowered]
    heads = _said_heads(context, tokens)
    rooms = {r for r, info in context.entities.items() if info.get("type") == "room" and all(
        _stem(w) in said for w in _WORD.findall(str(info.get("noun") or r).lower()) if w != "s")}
    me = (speaker or "").strip().lower()
    out: dict[str, float] = {}
    states: dict[str, set[str]] = {}  # thing -> the words of its one-argument facts ("dirty" of `is-dirty`)
    for atom in context.facts:
        if len(atom.args) == 1:
            states.setdefault(atom.args[0], set()).update(w for w in _WORD.findall(atom.predicate.lower())
                                                          if w not in ("is", "has"))
    for name, info in context.entities.items():
        if name == context.robot:
            continue
        typ = str(info.get("type", ""))
        noun = [_stem(w) for w in _WORD.findall(str(info.get("noun") or info.get("label") or "").lower())]
        noun = [w for w in noun if w not in ("pair", "of", "the", "a")]
        score = 0.0
        if typ in ("person", "room"):
            name_words = [_stem(w) for w in _WORD.findall(str(info.get("name") or info.get("noun") or name).lower())
                          if w != "s"]  # "Hiro's bedroom": the possessive is no word of its own
            if name_words and all(w in said for w in name_words):
                score += 3.0
            elif typ == "room" and len(name_words) > 1 and _CUT_SHORT.search(text.lower().replace(
                    f"the {name_words[0]}", "\x00")):
                score += 2.0  # "put the desk in the living, then ...": a room's name cut short
            elif typ == "person" and name.lower() == me:
                score += 2.0 if _TO_ME.search(text.lower()) else 0.5  # "bring it to me": the speaker is the target
        else:
            if noun and noun[-1] in said:
                score += 2.0
            score += 0.5 * sum(w in said for w in noun[:-1])
            if score == 0.0 and _stem(typ) in said:
                score += 0.5
            if score > 0:
                for key, weight in (("colour", 1.0), ("mark", 1.0), ("material", 0.5)):
                    value = [_stem(w) for w in _WORD.findall(str(info.get(key) or "").lower())]
                    if value and all(w in said for w in value) and _describes(tokens, value, noun[-1], heads):
                        score += weight
                owner = str(info.get("owner") or "").lower()
                if owner and (owner in raw or (owner == me and raw & _MINE)):
                    score += 1.0
                elif owner and owner == me and raw & _SELF:
                    score += 0.5  # "I switched the light on in the dining room": not said to be the speaker's own
                room = [_stem(w) for w in _WORD.findall(str(info.get("room") or "").lower()) if w != "s"]
                if room and all(w in said for w in room) and _placed(tokens, room, noun[-1], rooms):
                    score += 0.75
                if _state_before(lowered, tokens, states.get(name, set()), noun[-1]):
                    score += 1.0  # "the dirty dishes": the dishes that are dirty
        if score > 0:
            out[name] = score
    return out


def _said_heads(context: Context, tokens: Sequence[str]) -> set[str]:
    """The head nouns of the scene's things that the words say."""
    said = set(tokens)
    return {h for info in context.entities.values()
            if (h := _stem((_WORD.findall(str(info.get("noun") or "").lower()) or [""])[-1])) in said}


def _describes(tokens: Sequence[str], value: Sequence[str], head: str, heads: set[str]) -> bool:
    """Whether a colour, mark or material the words say is said of a thing of this head noun: before it in
    its phrase ("Yusuf's grey shirt, the white towel": white is no shirt's colour). Where the words name no
    other kind by its head, or not this one by its own ("the grey top"), any mention counts."""
    if head not in heads or len(heads) < 2:
        return True
    n = len(value)
    return any(list(tokens[i:i + n]) == list(value) and head in tokens[i + n:i + n + 4] for i in range(len(tokens)))


def _state_before(lowered: Sequence[str], tokens: Sequence[str], state: set[str], head: str) -> bool:
    """Whether a state memory holds of a thing is said before its head noun, as what tells it apart ("the
    dirty dishes"), not as what is asked of it ("make sure the milk is cold again": the cold milks are not
    the one meant); a verb's particle before the noun's article is the verb's ("turn on the light" says no
    light that is on)."""
    def before(i: int) -> list[str]:
        window = list(lowered[max(0, i - 3):i])
        cut = max((j for j, w in enumerate(window) if w in _ARTICLES), default=-1)
        return window[cut + 1:] + [w for w in window[:cut + 1] if w not in _PARTICLES]
    return bool(state) and any(t == head and state & set(before(i)) for i, t in enumerate(tokens))


_PARTICLES = frozenset({"on", "off", "in", "out", "up", "down"})  # "switch on the light", "turn off the tap"
_ARTICLES = frozenset({"the", "a", "an", "my", "your", "his", "her", "our", "their", "this", "that", "these", "those"})


def _placed(tokens: Sequence[str], room: Sequence[str], head: str, rooms: set[str]) -> bool:
    """Whether a room the words say is said of a thing of this head noun: after it ("the bookshelf in the
    living room") or before it ("the living room bookshelf"). Where the words name one room at most, or not
    this noun, any mention counts."""
    if len(rooms) < 2 or head not in tokens:
        return True
    n = len(room)
    at = [i for i in range(len(tokens)) if list(tokens[i:i + n]) == list(room)]
    return any(head in tokens[max(0, i - 5):i] or head in tokens[i + n:i + n + 2] for i in at)


# ---------------------------------------------------------------------- what actions can change
@dataclass(frozen=True)
class Signatures:
    """For each predicate, the argument types an action can make it true for (`add`) or false for (`delete`)."""

    add: Mapping[str, tuple[tuple[str, ...], ...]]
    delete: Mapping[str, tuple[tuple[str, ...], ...]]

    def can(self, domain: Domain, predicate: str, types: Sequence[str], positive: bool) -> bool:
        """Whether some action makes `predicate` over objects of `types` true (`positive`) or false."""
        table = self.add if positive else self.delete
        return any(len(sig) == len(types) and all(domain.types.is_subtype(t, s) for t, s in zip(types, sig))
                   for sig in table.get(predicate, ()))


@cache
def _signatures(domain: Domain) -> Signatures:
    table, _ = achievers(domain)
    out: dict[bool, dict[str, set[tuple[str, ...]]]] = {True: {}, False: {}}
    for (pred, positive), effects in table.items():
        out[positive].setdefault(pred, set()).update(
            tuple(e.types.get(t) or domain.constants.get(t, "object") for t in e.terms) for e in effects)
    return Signatures(*({p: tuple(sorted(s)) for p, s in out[positive].items()} for positive in (True, False)))


def signatures(domain: Domain) -> Signatures:
    """What the domain's actions can change (cached per domain)."""
    try:
        return _signatures(domain)
    except TypeError:  # an unhashable domain: compute afresh
        return _signatures.__wrapped__(domain)


def _type_of(context: Context, name: str) -> str:
    return str(context.entities.get(name, {}).get("type", "object"))


def is_fixed(context: Context, name: str) -> bool:
    """Rooms and fixtures (entities placed in a room for good)."""
    info = context.entities.get(name, {})
    return info.get("type") == "room" or bool(info.get("room"))


def _typed_args(context: Context, names: Sequence[str], params) -> list[list[str]]:
    types = context.domain.types
    return [[n for n in names if n in context.entities and types.is_subtype(_type_of(context, n), t)]
            for _, t in params]


def _absorbing(domain: Domain, sig: Signatures) -> list[str]:
    """Unary predicates actions only ever make true (`discarded`): an end state a goal may accept instead."""
    return [p for p, d in domain.predicates.items() if len(d.params) == 1 and p in sig.add and p not in sig.delete]


def goal_candidates(context: Context, names: Sequence[str], facts: Iterable[Atom] | None = None,
                    asked: Sequence[str] = ()) -> list[str]:
    """Goals the robot could be asked for over `names`: single literals that some action can make hold and
    that do not hold in memory now (negated only for one-argument predicates), then `forall` goals over a
    type (each unary literal, the same with an end state such as `discarded` accepted instead, and `imply`
    from any unary condition to an end state).

    For the things in `asked` (those the words name most strongly) one-argument literals are offered
    whether memory holds them or not: a request is news, so "could you make Hiro's bed?" may mean the bed
    memory believes made is not (the agent then doubts what memory says, `ServiceAgent`)."""
    domain = context.domain
    sig = signatures(domain)
    now = set(context.facts if facts is None else facts)
    names = [n for n in names if n != context.robot]
    asked = set(asked)
    reach = Reachability(domain, now, {n: _type_of(context, n) for n in context.entities})
    out: list[str] = []
    for pred, decl in domain.predicates.items():
        if not 1 <= len(decl.params) <= 2:
            continue
        args = _typed_args(context, names, decl.params)
        combos = [(a,) for a in args[0]] if len(args) == 1 else [(a, b) for a in args[0] for b in args[1] if a != b]
        for combo in combos:
            types = [_type_of(context, n) for n in combo]
            atom = Atom(pred, combo)
            if (atom not in now or combo[0] in asked and len(combo) == 1) and sig.can(domain, pred, types, True) \
                    and reach.reachable(atom, True):
                out.append(str(atom))
            if len(combo) == 1 and (atom in now or combo[0] in asked) and sig.can(domain, pred, types, False) \
                    and reach.reachable(atom, False):
                out.append(f"(not {atom})")  # a relation goal says where a thing should be, not where not
    absorbing = _absorbing(domain, sig)
    can = lambda p, n, positive=True: reach.reachable(Atom(p, (n,)), positive)
    for pred, decl in domain.predicates.items():
        if len(decl.params) != 1:
            continue
        for typ in domain.types.types:
            if typ == "object" or not domain.types.is_subtype(typ, decl.params[0][1]):
                continue
            members = [n for n in context.entities if domain.types.is_subtype(_type_of(context, n), typ)]
            if not members:
                continue  # no thing of this type in the house
            var = f"?{typ[0]}"
            # a forall is offered where every thing of the type could be made so (no "every item is safe"
            # where only the suspicious ones can be inspected)
            if sig.can(domain, pred, [typ], False):
                if all(can(pred, n, False) for n in members):
                    out.append(f"(forall ({var} - {typ}) (not ({pred} {var})))")
                out.extend(f"(forall ({var} - {typ}) (or (not ({pred} {var})) ({end} {var})))"
                           for end in absorbing if end != pred and domain.types.is_subtype(
                               typ, domain.predicates[end].params[0][1])
                           and all(can(pred, n, False) or can(end, n) for n in members))
            if sig.can(domain, pred, [typ], True) and all(can(pred, n) for n in members):
                out.append(f"(forall ({var} - {typ}) ({pred} {var}))")
            for end in absorbing:
                if end != pred and sig.can(domain, end, [typ], True) and pred not in absorbing \
                        and all(can(end, n) for n in members if can(pred, n)):
                    out.append(f"(forall ({var} - {typ}) (imply ({pred} {var}) ({end} {var})))")
    return list(dict.fromkeys(out))


# ---------------------------------------------------------------------- reported changes
_PLACES = ("on", "inside", "held-by")  # where an item is: exactly one of these holds


def static_predicates(domain: Domain) -> frozenset[str]:
    """Predicates no action changes (room links, what chills)."""
    return frozenset(domain.predicates) - effect_predicates(
        tuple(e for action in domain.actions.values() for e in action.effects))


def never_reported(context: Context) -> set[str]:
    """Predicates no person changes: those no action changes whose arguments are only ever fixed things
    (rooms, fixtures: room links, what chills). One about things that move (`broken`) people do report."""
    domain = context.domain
    moving = {str(info.get("type", "object")) for info in context.entities.values()
              if info.get("type") != "room" and not info.get("room")}
    out = set()
    for pred in static_predicates(domain):
        decl = domain.predicates[pred]
        if not any(m in domain.types and domain.types.is_subtype(m, t) for _, t in decl.params for m in moving):
            out.add(pred)
    return out


def delta_candidates(context: Context, names: Sequence[str], facts: Iterable[Atom] | None = None,
                     static: Iterable[str] | None = None, rooms: Iterable[str] | None = None) -> list[Delta]:
    """Changes a person may report about `names` that agree with memory (`facts`, default the context's).

    An item moves from where memory has it to a surface (`on`), a container (`inside`) or a person
    (`held-by`); a person goes to another room; a one-argument fact about a shown thing becomes true or
    false. Predicates in `static` (default `never_reported`: room links, what chills) are left out. With
    `rooms`, a person moves only to one of them (the rooms the words name: a move is told by its room).
    """
    domain = context.domain
    now = set(context.facts if facts is None else facts)
    static = never_reported(context) if static is None else set(static)
    names = [n for n in names if n != context.robot and n in context.entities]
    types = domain.types
    out: list[Delta] = []
    where: dict[str, list[Atom]] = {}
    for atom in now:
        if atom.predicate in _PLACES or atom.predicate == "in-room":
            where.setdefault(atom.args[0], []).append(atom)
    for pred in _PLACES:
        decl = domain.predicates.get(pred)
        if decl is None or len(decl.params) != 2:
            continue
        subjects, targets = _typed_args(context, names, decl.params)
        for item in subjects:
            old = frozenset(a for a in where.get(item, []) if a.predicate in _PLACES)
            for target in targets:
                new = Atom(pred, (item, target))
                if new not in old and target != item:
                    out.append(Delta(old, frozenset({new})))
    room_decl = domain.predicates.get("in-room")
    if room_decl is not None:
        movers, targets = _typed_args(context, names, room_decl.params)
        if rooms is not None:
            targets = [r for r in targets if r in set(rooms)]
        for who in movers:
            mobile = types.is_subtype(_type_of(context, who), "person") if "person" in types \
                else not is_fixed(context, who)
            if not mobile:
                continue
            old = frozenset(a for a in where.get(who, []) if a.predicate == "in-room")
            for room in targets:
                new = Atom("in-room", (who, room))
                if new not in old:
                    out.append(Delta(old, frozenset({new})))
    for pred, decl in domain.predicates.items():
        if len(decl.params) != 1 or pred in static:
            continue
        for name in _typed_args(context, names, decl.params)[0]:
            atom = Atom(pred, (name,))
            out.append(Delta(frozenset({atom}), frozenset()) if atom in now else Delta(frozenset(), frozenset({atom})))
    return list(dict.fromkeys(out))


def merge(deltas: Sequence[Delta]) -> Delta | None:
    """Two or more reported changes as one, or None when they touch the same fact."""
    remove: set[Atom] = set()
    add: set[Atom] = set()
    for d in deltas:
        if remove & d.remove or add & d.add or remove & d.add or add & d.remove:
            return None
        remove |= d.remove
        add |= d.add
    subjects = [a.args[0] for d in deltas for a in d.add if a.predicate in _PLACES or a.predicate == "in-room"]
    if len(subjects) != len(set(subjects)):
        return None  # one thing in two places
    return Delta(frozenset(remove), frozenset(add))
