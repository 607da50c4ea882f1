"""Scene objects typed into a planning domain's own types by what the types and the objects mean.

A dataset's domain names its types in its own words (`disposable`, `cleaning-supply`, `cleanable`, `movable`,
`surface`). Which scene class belongs to which is decided per class, against every type of the domain:

- a type's *gloss*: the words of its name and the words of the actions that take a parameter of exactly that
  type (`throw_away` for `disposable`, `push` for `movable`, `refill` for `cleaning-supply`);
- an object's *gloss*: its class and base words (`cola_can`, `can`), its household type (`dish`), its state
  (`dirty`), and whether the open-vocabulary typing found it to be rubbish (`discardable`);
- both glosses are read into a handful of *concepts* of everyday English (rubbish, washable, cleaning supply,
  furniture, a support, storage) by `CONCEPT_WORDS`; a type fits an object when its name shares a word with
  the object (a `mop`, a `washing-machine`), or when its name or its actions share a concept with it. Among
  the fitting types the one with the most shared meaning wins (its name counts double), then the most
  specific one.

An item (the household world's dish, food, clothing, book, gadget, decor) goes to the domain's type for things
the robot holds or one of its subtypes, falling back to that type itself; a fixture goes to another type that
fits it, or stays out with the reason. `TypeChoice.why` says what decided, for the load report.

With a language model (`scorer`: a `ScoringModel`), the choice among the fitting types of an item is the
model's: it scores "A cola can is a kind of disposable." for each and the likeliest wins (the lexical choice
is kept when only one type fits).
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from dataclasses import dataclass

from servicerobot.pddl import Domain

__all__ = ["CONCEPT_WORDS", "TypeChoice", "choose_type", "item_root", "name_words", "type_glosses"]

# Everyday concepts and the words that say them, on either side (a type's name or actions, an object's words).
CONCEPT_WORDS: dict[str, frozenset[str]] = {k: frozenset(v.split()) for k, v in {
    "rubbish": "rubbish trash garbage waste litter junk disposable discardable throw dispose discard thrashed "
               "trashed binned",
    "washable": "cleanable washable wash laundry clothes clothing garment dishware tableware kitchenware",
    "cleaning supply": "detergent soap bleach softener cleaner sponge supply supplies refill refilled",
    "furniture": "furniture movable pushable push",
    "support": "surface table desk counter shelf shelving worktop bench stand",
    "storage": "container receptacle storage store cupboard cabinet drawer drawers locker wardrobe box basket "
               "fridge refrigerator closet",
}.items()}
# What a household type says of an object (an item or a fixture).
_HOUSEHOLD_CONCEPTS = {
    "dish": ("washable",), "clothing": ("washable",), "surface": ("support", "furniture"),
    "bed": ("support", "furniture"), "shelf": ("support", "furniture"), "openable": ("storage", "furniture"),
    "container": ("storage",), "fridge": ("storage",), "sink": ("storage",), "light": ("furniture",),
}
# Classes the household world leaves out ("" household type) that are furniture all the same.
_FURNITURE = frozenset(["chair", "stool", "armchair", "sofa", "couch", "bench", "table", "desk", "cabinet", "wardrobe", "dresser", "lamp"])
ITEM_TYPES = frozenset({"dish", "food", "clothing", "book", "gadget", "decor", "item"})
_ITEM_WORDS = ("grabbable", "graspable", "pickable", "portable", "item", "object", "thing", "holdable")
_SYNONYMS = {
    "trashcan": ("trash", "bin", "garbage", "rubbish", "waste"), "trash": ("bin",),
    "washer": ("washing", "machine", "washer", "laundry"), "dryer": ("dryer", "drying", "machine"),
    "fridge": ("fridge", "refrigerator"), "refrigerator": ("fridge",), "sink": ("sink", "basin"),
}


def name_words(name: str) -> list[str]:
    """The words of a PDDL or class name: `washing-machine` -> washing, machine; `cola_can` -> cola, can."""
    return [w for w in re.split(r"[-_\s]+", name.lower()) if w]


def _concepts(words: Iterable[str]) -> set[str]:
    ws = set(words)
    return {c for c, said in CONCEPT_WORDS.items() if ws & said}


@dataclass(frozen=True)
class TypeGloss:
    """What a domain type says: its name's words and concepts, and the concepts of the actions that take it."""

    words: frozenset[str]
    name_concepts: frozenset[str]
    action_concepts: frozenset[str]
    actions: tuple[str, ...]


def type_glosses(domain: Domain) -> dict[str, TypeGloss]:
    """Every declared type's gloss (`object` left out)."""
    takes: dict[str, list[str]] = {}
    for name, action in domain.actions.items():
        for _, ptype in action.params:
            takes.setdefault(ptype, []).append(name)
    out = {}
    for t in domain.types.types:
        if t == "object":
            continue
        words = frozenset(name_words(t))
        acts = tuple(sorted(set(takes.get(t, ()))))
        action_words = {w for a in acts for w in name_words(a)}
        out[t] = TypeGloss(words, frozenset(_concepts(words)), frozenset(_concepts(action_words)), acts)
    return out


def item_root(domain: Domain, excluded: Iterable[str] = ()) -> str | None:
    """The domain's type for things the robot holds: the most general type whose name says so (`grabbable`),
    else the type of the held thing in a two-argument `holding`-like predicate."""
    excluded = set(excluded)
    named = [t for t in domain.types.types if t not in excluded and set(name_words(t)) & set(_ITEM_WORDS)]
    if named:
        return min(named, key=lambda t: (len(domain.types.ancestors(t)), t))
    for p, decl in domain.predicates.items():
        if "hold" in p.lower() and len(decl.params) == 2:
            return decl.params[1][1]
    return None


@dataclass(frozen=True)
class TypeChoice:
    """A scene object's type in the domain (None: it stays out) and what decided it."""

    type: str | None
    how: str  # "words", "meaning", "model", "item" (the held-things type itself), or "refused"
    why: str


def object_gloss(obj, household_type: str, dirty: bool) -> tuple[set[str], dict[str, float]]:
    """(the object's words, its concepts with weights): class and base words with synonyms; concepts from
    those words, its household type, its dirt, and rubbish (weighted double) when it is discardable."""
    words = set(name_words(obj.class_)) | set(name_words(getattr(obj, "base", "") or ""))
    for w in list(words):
        words.update(_SYNONYMS.get(w, ()))
        if w.endswith("s") and len(w) > 3:
            words.add(w[:-1])
    concepts = {c: 1.0 for c in _concepts(words)}
    for c in _HOUSEHOLD_CONCEPTS.get(household_type, ()):
        concepts.setdefault(c, 1.0)
    if not household_type and words & _FURNITURE:
        concepts.setdefault("furniture", 1.0)
    if dirty and household_type in ITEM_TYPES:
        concepts.setdefault("washable", 1.0)
    if _discardable(obj):
        concepts["rubbish"] = 2.0
    return words, concepts


def _discardable(obj) -> bool:
    if "discardable" in getattr(obj, "states", ()) or getattr(obj, "attributes", {}).get("discardable"):
        return True
    said = f"{' '.join(getattr(obj, 'affordances', ()))} {getattr(obj, 'description', '')}".lower()
    if any(w in said for w in ("throw away", "trash", "rubbish", "garbage", "litter")):
        return True
    from servicerobot.scenes.open_vocab import type_class

    return bool(type_class(obj.class_).discardable)


def choose_type(domain: Domain, glosses: dict[str, TypeGloss], obj, household_type: str, *, excluded: set[str],
                root: str | None, dirty: bool = False, scorer=None) -> TypeChoice:
    """The domain type of one scene object (see the module docstring); `excluded`: the room and robot types
    and their ancestors, which no object takes; `root`: the domain's `item_root` (None: it has none)."""
    is_item = household_type in ITEM_TYPES
    types = domain.types
    if is_item:
        if root is None:
            return TypeChoice(None, "refused", f"domain {domain.name} has no type for things the robot holds")
        pool = [t for t in glosses if t not in excluded and types.is_subtype(t, root)]
    else:
        pool = [t for t in glosses if t not in excluded and (root is None or not (
            types.is_subtype(t, root) or types.is_subtype(root, t)))]
    words, concepts = object_gloss(obj, household_type, dirty)
    scored = []
    for t in pool:
        g = glosses[t]
        named = bool(g.words) and g.words <= words and not g.words <= set(_ITEM_WORDS)
        by_name = sum(concepts.get(c, 0.0) for c in g.name_concepts)
        by_action = sum(concepts.get(c, 0.0) for c in g.action_concepts - g.name_concepts)
        if named or by_name or by_action:
            scored.append((3.0 * named + 2.0 * by_name + by_action, len(types.ancestors(t)), t, named))
    if not scored:
        if is_item:
            return TypeChoice(root, "item", f"no subtype of {root} means {_a(obj.class_)}; the robot can hold it")
        return TypeChoice(None, "refused", f"no type of domain {domain.name} means {_a(obj.class_)} "
                                           f"({', '.join(sorted(concepts)) or 'no known concept'})")
    scored.sort(reverse=True)
    best = scored[0]
    if best[3]:
        return TypeChoice(best[2], "words", f"the type's name is in the class's words ({obj.class_})")
    if scorer is not None and is_item:
        picked = _model_choice(scorer, obj.class_, [root] + [s[2] for s in scored if s[2] != root])
        if picked is not None:
            return TypeChoice(picked, "model", f"the language model: {_a(obj.class_)} is a kind of {picked}")
    g = glosses[best[2]]
    shared = sorted(set(concepts) & (g.name_concepts | g.action_concepts))
    via = f" (actions {', '.join(g.actions)})" if set(shared) - g.name_concepts else ""
    return TypeChoice(best[2], "meaning", f"{', '.join(shared)}: {_a(obj.class_)} and {_a(best[2])}{via}")


def _a(name: str) -> str:
    said = name.replace("_", " ")
    return f"{'an' if said[:1] in 'aeiou' else 'a'} {said}"


def _model_choice(scorer, class_: str, candidates: list[str]) -> str | None:
    """The candidate type the model finds likeliest for "A <class> is a kind of <type>." (None on no answer)."""
    noun = class_.replace("_", " ")
    messages = [{"role": "system", "content": "Answer with one short sentence."},
                {"role": "user", "content": f"Which kind of thing is a {noun}?"}]
    answers = [f"A {noun} is a kind of {t.replace('-', ' ').replace('_', ' ')}." for t in candidates]
    try:
        scored = scorer.score(messages, answers)
    except Exception:  # noqa: BLE001 - envs does not import language; any model failure keeps the lexical choice
        return None
    totals = [sum(lp) if lp else float("-inf") for lp in scored.logprobs]
    return max(zip(totals, candidates))[1] if totals else None
