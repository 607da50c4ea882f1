"""Misspelt names of the scene's things, mended before a request is read: "throw away the rubbsih" names the
rubbish as "rubbish" would.

Only a word the scene's vocabulary (its things' nouns, types and rooms, the domain's predicates, the household
synonyms) does not know is mended, only to the one word of it one slip away (two letters swapped, one left
out or doubled, not at its end; one mistyped in a long word), and only where the word is long enough for a
slip to be told from another word ("cable" is never mended to "table").
"""

from __future__ import annotations

import re
from collections.abc import Iterable

from servicerobot.language.candidates import _SYNONYMS, _stem

__all__ = ["correct", "vocabulary"]

_SHORTEST = 6  # letters a word needs before it is mended
_SUBSTITUTED = 8  # ... before a mistyped letter (not a swapped, missing or extra one) is mended
_WORD = re.compile(r"[A-Za-z]+")


def vocabulary(context) -> frozenset[str]:
    """The words a request about this scene may name things with: its things' nouns and types, its rooms, the
    domain's predicates and types, and the household synonyms."""
    out: set[str] = set()

    def add(text: object) -> None:
        out.update(w.lower() for w in _WORD.findall(str(text or "").replace("_", " ").replace("-", " ")))

    for info in context.entities.values():
        for key in ("noun", "type", "colour", "material", "name"):
            add(info.get(key))
    domain = getattr(context, "domain", None)
    if domain is not None:
        for pred in domain.predicates:
            add(pred)
        for typ in domain.types.types:
            add(typ)
    for key, values in _SYNONYMS.items():
        add(key)
        for v in values:
            add(v)
    return frozenset(out)


def _one_slip(word: str, known: str) -> bool:
    """Whether `word` is `known` with one slip: two neighbours swapped, a letter left out or added, or (in a
    long word) one letter mistyped."""
    if word == known:
        return False
    if len(word) == len(known):
        diff = [i for i, (a, b) in enumerate(zip(word, known)) if a != b]
        if len(diff) == 2 and diff[1] == diff[0] + 1 and word[diff[0]] == known[diff[1]] \
                and word[diff[1]] == known[diff[0]]:
            return True
        return len(diff) == 1 and len(word) >= _SUBSTITUTED
    short, long_ = (word, known) if len(word) < len(known) else (known, word)
    if len(long_) - len(short) != 1 or long_[:-1] == short:  # "tablet" is no "table" with a slip: a word of its own
        return False
    return any(long_[:i] + long_[i + 1:] == short for i in range(len(long_)))


def correct(text: str, known: Iterable[str]) -> str:
    """`text` with each word the vocabulary does not know mended to the one known word one slip away; every
    other word as it was."""
    known = frozenset(known)
    stems = {_stem(k) for k in known}
    candidates = [k for k in known if len(k) >= _SHORTEST - 1]

    def mend(match: re.Match) -> str:
        raw = match.group(0)
        word = raw.lower()
        if len(word) < _SHORTEST or word in known or _stem(word) in stems:
            return raw
        # (no known word shares the word's stem: it would have been known above)
        near = {k for k in candidates if _one_slip(word, k) or _one_slip(_stem(word), k)}
        if len({_stem(k) for k in near}) != 1:
            return raw
        fix = min(near, key=len)
        return fix.capitalize() if raw[:1].isupper() else fix

    return _WORD.sub(mend, text)
