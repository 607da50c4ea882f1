"""The observations' compact JSON: `json.dumps(value, separators=(",", ":"), ensure_ascii=True)`, faster.

`dumps` writes with the C encoder made once (not per call); `facts_json` writes a list of atoms as sorted
knowledge-graph triplets from each atom's sort key and text, made once per process (a new house's facts are
mostly atoms that earlier houses had).
"""

from __future__ import annotations

import json
from typing import Any

__all__ = ["clear_facts", "dumps", "facts_json", "quote"]

_ENCODER = json.JSONEncoder(separators=(",", ":"), ensure_ascii=True)  # what json.dumps builds on each call
quote = json.encoder.encode_basestring_ascii  # a str as _ENCODER writes it
# The C encoder `_ENCODER.encode` makes on each call, made once; without its cycle check (a fresh dict of ids
# per call), so a cyclic value (never an observation) goes to `_ENCODER.encode`, which names the cycle.
_C_ENCODE = None if json.encoder.c_make_encoder is None else json.encoder.c_make_encoder(
    None, _ENCODER.default, quote, None, ":", ",", False, False, True)
MAX_FACTS_KEPT = 500_000  # atoms whose key and text are kept; past it the tables start again


def dumps(value: Any) -> str:
    """`_ENCODER.encode(value)`, the same text."""
    if _C_ENCODE is None or type(value) is str:
        return _ENCODER.encode(value)
    try:
        return "".join(_C_ENCODE(value, 0))
    except RecursionError:
        return _ENCODER.encode(value)


class _Unsortable(Exception):
    """A name holds NUL, which the sort keys use as separator: such atoms are sorted as tuples."""


class _SortKeys(dict):
    """atom -> one string that sorts as the atom does: `(predicate, args)` joined by NUL, the least
    character, so a name that is a prefix of another sorts first, as in a tuple. Making it also keeps the
    JSON of the atom's triplet `[subject, predicate, object]` (`true` as a unary atom's object) in `_TRIPLETS`."""

    def __missing__(self, atom: tuple) -> str:
        predicate, args = atom
        if "\x00" in predicate or any("\x00" in a for a in args):
            raise _Unsortable
        _TRIPLETS[atom] = (f"[{quote(args[0])},{quote(predicate)},{quote(args[1])}]" if len(args) > 1
                           else f"[{quote(args[0])},{quote(predicate)},true]")
        key = self[atom] = "\x00".join((predicate, *args))
        return key


_SORT_KEYS: _SortKeys = _SortKeys()
_TRIPLETS: dict[tuple, str] = {}


def clear_facts() -> None:
    """Forget the atoms' keys and texts (benchmarks time houses whose atoms the process has not seen)."""
    _SORT_KEYS.clear()
    _TRIPLETS.clear()


def facts_json(atoms) -> str:
    """`dumps([[a.args[0], a.predicate, a.args[1] or True] for a in sorted(atoms)])`, the same text, for
    atoms of one or two arguments."""
    if len(_SORT_KEYS) >= MAX_FACTS_KEPT:
        clear_facts()
    try:
        ordered = sorted(atoms, key=_SORT_KEYS.__getitem__)
    except _Unsortable:
        return dumps([[args[0], predicate, args[1] if len(args) > 1 else True] for predicate, args in sorted(atoms)])
    return "[" + ",".join(map(_TRIPLETS.__getitem__, ordered)) + "]"
