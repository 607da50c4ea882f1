"""Open-vocabulary typing: a 3DSG class the tables do not know gets a household PDDL type from its words.

Real scene graphs and Context Matters' added task objects use classes such as `dirty_shirt`, `cola_can`,
`rubbish_bin`, `drinking_glass`, `gpu` or even `book into the shelf`. `type_class` reads such a class in
steps, and says which step decided:

1. `table`: the class is in `CLASS_TO_TYPE` (or `EXCLUDED`, then it stays out with that table's reason);
2. `words`: state words are split off (`dirty_shirt` -> `shirt` + the fact `dirty`), a trailing relation
   is cut (`book into the shelf` -> `book`), plurals are stripped (`socks` -> `sock`), and the remaining
   words are looked up from the head noun backwards in the class table and a small lexicon of household
   nouns (`can`, `peel`, `locker`, `rack`, `gpu`, ...);
3. `similarity`: the words are compared with every known class name by a text similarity (any object with
   the `servicerobot.memory.similarity.Similarity` protocol's `matrix`, e.g. `EmbeddingSimilarity`; by
   default a dependency-free blend of word overlap and character-trigram cosine) and the best match above
   `threshold` gives the type;
4. otherwise the class stays out of the PDDL scene and the typing says why.

Classes whose words say they are rubbish (`cola_can`, `banana_peel`, `rotting_apple`) are marked
`discardable`.
"""

from __future__ import annotations

import math
import re
from collections.abc import Sequence
from dataclasses import dataclass
from functools import lru_cache

import numpy as np

from servicerobot.scenes.class_table import CLASS_TO_TYPE, EXCLUDED, class_key

__all__ = ["STATE_WORDS", "UNLABELLED", "WORD_TYPES", "ClassTyping", "WordCharSimilarity", "type_class"]

UNLABELLED = "unlabelled"

# State words in class names -> the domain fact they stand for ("" when the domain has none for it).
STATE_WORDS: dict[str, str] = {
    "dirty": "dirty", "soiled": "dirty", "stained": "dirty", "used": "dirty", "muddy": "dirty",
    "wet": "wet", "damp": "wet", "soaked": "wet",
    "broken": "broken", "cracked": "broken", "shattered": "broken",
    "cold": "cold", "chilled": "cold", "frozen": "cold",
    "clean": "", "dry": "", "empty": "", "old": "", "new": "", "full": "",
    "rotting": "", "rotten": "", "spoiled": "", "mouldy": "", "moldy": "", "stale": "", "expired": "",
}
_RUBBISH_STATES = frozenset({"rotting", "rotten", "spoiled", "mouldy", "moldy", "stale", "expired", "empty",
                             "used"})
_RUBBISH_NOUNS = frozenset({"can", "peel", "wrapper", "trash", "rubbish", "garbage", "waste", "scrap", "core",
                            "crumb", "leftover", "litter", "receipt", "carton", "packaging"})
_RELATIONS = ("into", "onto", "inside", "in", "on", "under", "beside", "next")

# Household nouns outside the class table, by the type they stand for.
WORD_TYPES: dict[str, str] = {
    # rubbish and food leftovers
    "can": "dish", "tin": "dish", "peel": "food", "core": "food", "scrap": "food", "leftover": "food",
    "crumb": "food", "wrapper": "decor", "receipt": "book", "carton": "dish", "packaging": "decor",
    # dishes and kitchen things
    "tumbler": "dish", "saucer": "dish", "teacup": "dish", "jug": "dish", "pitcher": "dish", "jar": "dish",
    "ladle": "dish", "spatula": "dish", "chopsticks": "dish", "chopstick": "dish", "cutlery": "dish",
    "dish": "dish", "dishes": "dish", "platter": "dish", "thermos": "dish", "flask": "dish",
    "detergent": "gadget", "cleaner": "gadget", "spray": "gadget", "brush": "gadget", "rag": "clothing",
    "cloth": "clothing", "vacuum": "gadget", "duster": "gadget",
    # food
    "fruit": "food", "vegetable": "food", "snack": "food", "cookie": "food", "biscuit": "food", "chips": "food",
    "soda": "food", "cola": "food", "water": "food", "coffee": "food", "tea": "food", "wine": "food",
    "beer": "food", "rice": "food", "sugar": "food", "salt": "food", "pepper": "food", "sauce": "food",
    "lemon": "food", "pear": "food", "grape": "food", "tomato": "food", "potato": "food", "onion": "food",
    "strawberry": "food", "peach": "food", "melon": "food", "chocolate": "food", "candy": "food",
    # clothing and textiles
    "shoe": "clothing", "boot": "clothing", "sneaker": "clothing", "slipper": "clothing", "sandal": "clothing",
    "pants": "clothing", "trousers": "clothing", "shorts": "clothing", "skirt": "clothing", "coat": "clothing",
    "hoodie": "clothing", "underwear": "clothing", "bra": "clothing", "scarf": "clothing", "hat": "clothing",
    "cap": "clothing", "glove": "clothing", "mitten": "clothing", "blouse": "clothing", "vest": "clothing",
    "pajamas": "clothing", "pyjamas": "clothing", "napkin": "clothing", "tablecloth": "clothing",
    "sheet": "clothing", "duvet": "clothing", "cushion": "clothing", "curtain": "clothing", "laundry": "clothing",
    "clothes": "clothing", "clothing": "clothing", "garment": "clothing", "tshirt": "clothing",
    "t_shirt": "clothing", "sock": "clothing", "socks": "clothing",
    # reading and paper
    "paper": "book", "document": "book", "folder": "book", "letter": "book", "envelope": "book",
    "notepad": "book", "journal": "book", "novel": "book", "comic": "book", "textbook": "book", "map": "book",
    # gadgets, tools and computer parts
    "gpu": "gadget", "psu": "gadget", "cpu": "gadget", "ssd": "gadget", "hdd": "gadget", "case": "gadget",
    "cable": "gadget", "fan": "gadget", "cooler": "gadget", "drive": "gadget", "card": "gadget",
    "tablet": "gadget", "camera": "gadget", "speaker": "gadget", "router": "gadget", "printer": "gadget",
    "controller": "gadget", "console": "gadget", "battery": "gadget", "screwdriver": "gadget",
    "hammer": "gadget", "wrench": "gadget", "pliers": "gadget", "tape": "gadget", "stapler": "gadget",
    "calculator": "gadget", "flashlight": "gadget", "razor": "gadget", "shampoo": "gadget",
    "toothpaste": "gadget", "lotion": "gadget", "bleach": "gadget", "iron": "gadget", "bucket": "container",
    # decoration, toys and small things
    "rose": "decor", "flower": "decor", "flowers": "decor", "bouquet": "decor", "balloon": "decor",
    "ornament": "decor", "figurine": "decor", "statue": "decor", "doll": "decor", "ball": "decor",
    "puzzle": "decor", "game": "decor", "lego": "decor", "block": "decor", "key": "decor", "keys": "decor",
    "wallet": "decor", "sunglasses": "decor", "watch": "decor", "jewelry": "decor", "ring": "decor",
    "necklace": "decor", "marker": "decor", "crayon": "decor", "eraser": "decor", "ruler": "decor",
    "trophy": "decor", "photo": "decor", "painting": "decor", "poster": "decor", "card_deck": "decor",
    # fixtures
    "locker": "openable", "drawers": "openable", "closet": "openable", "pantry": "openable",
    "freezer": "fridge", "fridge": "fridge", "rack": "shelf", "shelves": "shelf", "shelving": "shelf",
    "cart": "surface", "trolley": "surface", "island": "surface", "worktop": "surface", "workbench": "surface",
    "nightstand": "surface", "stand": "surface", "ledge": "surface", "mantel": "surface",
    "crate": "container", "tray": "dish", "tub": "container", "hamper": "container", "bin": "trashcan",
    "dustbin": "trashcan", "wastebasket": "trashcan",
}

# What the similarity step compares a class with: every class the tables know, and the lexicon's nouns.
_KNOWN = tuple(sorted(set(CLASS_TO_TYPE) | set(EXCLUDED) | set(WORD_TYPES)))
_COMPACT = {k.replace("_", ""): k for k in _KNOWN if "_" in k}


@dataclass(frozen=True)
class ClassTyping:
    """How a 3DSG class was typed.

    Attributes:
        class_: the class key (`class_key` of the class as the file writes it).
        pddl_type: the household type, or None when the class stays out of the PDDL scene.
        how: "table" | "words" | "similarity" | "excluded" | "unlabelled" | "unknown".
        base: the known class or noun that decided (`shirt` for `dirty_shirt`), "" when none did.
        states: facts the class names (`("dirty",)`), each a unary predicate of the household domain.
        score: the similarity of `base` to the class (1.0 for table and words).
        reason: in words, why this type (or why none).
        discardable: the class names rubbish (a can, a peel, rotting food).
        state_words: state words without a domain fact (`rotting`), kept as attributes.
    """

    class_: str
    pddl_type: str | None
    how: str
    base: str = ""
    states: tuple[str, ...] = ()
    score: float = 1.0
    reason: str = ""
    discardable: bool = False
    state_words: tuple[str, ...] = ()

    @property
    def typed(self) -> bool:
        return self.pddl_type is not None


def _singular(word: str) -> str:
    if len(word) <= 3 or not word.endswith("s") or word.endswith(("ss", "us", "is")):
        return word
    if word.endswith("ies") and len(word) > 4:
        return word[:-3] + "y"
    if word.endswith(("ches", "shes", "sses", "xes", "zes")):
        return word[:-2]
    return word[:-1]


def _trigrams(text: str) -> dict[str, int]:
    padded = f" {text} "
    out: dict[str, int] = {}
    for i in range(len(padded) - 2):
        out[padded[i:i + 3]] = out.get(padded[i:i + 3], 0) + 1
    return out


class WordCharSimilarity:
    """A dependency-free text similarity: 0.4 x word Jaccard (plurals stripped) + 0.6 x the cosine of the
    character trigrams of the words written together (so "cellphone" meets "cell phone").

    Has the `matrix(queries, candidates)` method of `servicerobot.memory.similarity.Similarity`.
    """

    name = "word-char"

    def pair(self, a: str, b: str) -> float:
        """The similarity of two texts, in [0, 1]."""
        wa = {_singular(w) for w in re.findall(r"[a-z0-9]+", a.lower())}
        wb = {_singular(w) for w in re.findall(r"[a-z0-9]+", b.lower())}
        words = len(wa & wb) / len(wa | wb) if wa | wb else 0.0
        ta = _trigrams("".join(_singular(w) for w in re.findall(r"[a-z0-9]+", a.lower())))
        tb = _trigrams("".join(_singular(w) for w in re.findall(r"[a-z0-9]+", b.lower())))
        dot = sum(c * tb.get(g, 0) for g, c in ta.items())
        norm = math.sqrt(sum(c * c for c in ta.values()) * sum(c * c for c in tb.values()))
        return 0.4 * words + 0.6 * (dot / norm if norm else 0.0)

    def matrix(self, queries: Sequence[str], candidates: Sequence[str]) -> np.ndarray:
        return np.array([[self.pair(q, c) for c in candidates] for q in queries], dtype=np.float64).reshape(
            len(queries), len(candidates))


def _lookup(word: str) -> tuple[str | None, str, str]:
    """(type, base, how) of one word or underscored phrase from the tables; (None, "", "") when unknown."""
    for key in dict.fromkeys((word, _singular(word))):
        if key in CLASS_TO_TYPE:
            return CLASS_TO_TYPE[key], key, "table"
        if key in EXCLUDED:
            return None, key, "excluded"
        if key in WORD_TYPES:
            return WORD_TYPES[key], key, "lexicon"
    return None, "", ""


def type_class(class_: str | None, similarity=None, threshold: float = 0.45) -> ClassTyping:
    """The household type of a 3DSG class, read as the module docstring says (never raises)."""
    if similarity is None:
        return _type_class_default(class_ if isinstance(class_, str) else None, threshold)
    return _type_class(class_, similarity, threshold)


@lru_cache(maxsize=4096)
def _type_class_default(class_: str | None, threshold: float) -> ClassTyping:
    return _type_class(class_, _DEFAULT, threshold)


_DEFAULT = WordCharSimilarity()


def _type_class(class_: str | None, similarity, threshold: float) -> ClassTyping:
    if class_ is None or not str(class_).strip() or class_key(str(class_)) in (UNLABELLED, "none", "nan"):
        return ClassTyping(UNLABELLED, None, "unlabelled", reason="the scene graph gives this object no class")
    key = class_key(str(class_))
    if key in CLASS_TO_TYPE:
        return ClassTyping(key, CLASS_TO_TYPE[key], "table", key, reason="in the class table")
    if key in EXCLUDED:
        return ClassTyping(key, None, "excluded", key, reason=EXCLUDED[key])
    words = [w for w in key.split("_") if w]
    # "book into the shelf": the object is what comes before the relation.
    for i, w in enumerate(words):
        if i > 0 and w in _RELATIONS:
            words = words[:i]
            break
    state_words = [w for w in words if w in STATE_WORDS]
    nouns = [w for w in words if w not in STATE_WORDS and w not in ("the", "a", "an", "of")] or words
    states = tuple(dict.fromkeys(STATE_WORDS[w] for w in state_words if STATE_WORDS[w]))
    bare_states = tuple(w for w in state_words if not STATE_WORDS[w])
    rubbish = bool(set(state_words) & _RUBBISH_STATES or _singular(nouns[-1]) in _RUBBISH_NOUNS)

    def result(pddl_type, base, how, score=1.0, reason="") -> ClassTyping:
        kept = tuple(s for s in states if s != "wet" or pddl_type == "clothing")  # only clothes get wet
        return ClassTyping(key, pddl_type, how, base, kept, round(float(score), 3), reason, rubbish, bare_states)

    # The whole noun phrase, then from the head noun (the last word) backwards.
    candidates = ["_".join(nouns)] + [nouns[i] for i in range(len(nouns) - 1, -1, -1)]
    for phrase in dict.fromkeys(candidates):
        pddl_type, base, how = _lookup(phrase)
        if how == "excluded":
            return result(None, base, "excluded", reason=f"read as {base!r}: {EXCLUDED[base]}")
        if pddl_type is not None:
            said = f"read as {base!r} ({'class table' if how == 'table' else 'household noun'})"
            if state_words:
                said += f"; state words {state_words}"
            return result(pddl_type, base, "words", reason=said)
    # Known words written together ("teddybear", "wineglass"), then a compound whose last part is a known
    # noun ("armchair" is a chair, "dustpan" a pan).
    head = _singular(nouns[-1])
    joined = _COMPACT.get("".join(nouns)) or _COMPACT.get(head)
    if joined is not None:
        pddl_type, base, how = _lookup(joined)
        if how == "excluded":
            return result(None, base, "excluded", reason=f"read as {base!r}: {EXCLUDED[base]}")
        return result(pddl_type, base, "words", reason=f"read as {base!r} (written together)")
    for cut in range(3, len(head) - 2):
        pddl_type, base, how = _lookup(head[cut:])
        if how == "excluded":
            return result(None, base, "excluded", reason=f"read as a kind of {base!r}: {EXCLUDED[base]}")
        if pddl_type is not None:
            return result(pddl_type, base, "words", reason=f"read as a kind of {base!r} (compound {head!r})")
    query = " ".join(nouns)
    scores = np.asarray(similarity.matrix([query], [k.replace("_", " ") for k in _KNOWN]), dtype=float)[0]
    best = int(np.argmax(scores)) if len(scores) else -1
    if best >= 0 and scores[best] >= threshold:
        base = _KNOWN[best]
        pddl_type, _, how = _lookup(base)
        if how == "excluded":
            return result(None, base, "excluded", scores[best],
                          f"most like {base!r} ({scores[best]:.2f}): {EXCLUDED[base]}")
        return result(pddl_type, base, "similarity", scores[best],
                      f"most like {base!r} (similarity {scores[best]:.2f} >= {threshold})")
    near = f"{_KNOWN[best]!r} at {scores[best]:.2f}" if best >= 0 else "none"
    return result(None, "", "unknown", float(scores[best]) if best >= 0 else 0.0,
                  f"no known class or household noun in {key!r}, and no known class is similar enough "
                  f"(best {near}, threshold {threshold})")
