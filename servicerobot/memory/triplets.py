"""Triplets, the knowledge graph's unit of memory, and `Delta`, one update: what to remove and what to add.

A triplet is `(subject, predicate, object)` for a binary fact `(predicate subject object)` and
`(subject, predicate, True)` for a unary fact `(predicate subject)`: one-to-one with domain atoms.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from typing import Any

from servicerobot.errors import ServiceRobotError
from servicerobot.pddl import Atom

__all__ = ["Delta", "DeltaFormatError", "Triplet", "atom_to_triplet", "triplet_to_atom"]

Triplet = tuple[str, str, str | bool]


class DeltaFormatError(ServiceRobotError, ValueError):
    """An update is not in the REMOVE/ADD triplet format (e.g. broken JSON from a language model)."""


def atom_to_triplet(atom: Atom) -> Triplet:
    """`(on mug table)` -> ("mug", "on", "table"); `(dirty mug)` -> ("mug", "dirty", True)."""
    if len(atom.args) == 2:
        return (atom.args[0], atom.predicate, atom.args[1])
    if len(atom.args) == 1:
        return (atom.args[0], atom.predicate, True)
    raise DeltaFormatError(f"{atom} has {len(atom.args)} arguments; only unary and binary facts are triplets")


def triplet_to_atom(triplet: Triplet | list) -> Atom:
    """The inverse of `atom_to_triplet`; accepts JSON lists and the strings "true"/"True" as True."""
    if not isinstance(triplet, (tuple, list)) or len(triplet) != 3:
        raise DeltaFormatError(f"a triplet is [subject, predicate, object], got {triplet!r}")
    subject, predicate, obj = triplet
    if not isinstance(subject, str) or not isinstance(predicate, str) or not subject or not predicate:
        raise DeltaFormatError(f"subject and predicate of a triplet must be non-empty strings, got {triplet!r}")
    subject, predicate = subject.strip().lower(), predicate.strip().lower()
    if obj is True or (isinstance(obj, str) and obj.strip().lower() == "true"):
        return Atom(predicate, (subject,))
    if obj is False or (isinstance(obj, str) and obj.strip().lower() == "false"):
        raise DeltaFormatError(f"{triplet!r}: a false fact is not stored; REMOVE the true one instead")
    if not isinstance(obj, str) or not obj.strip():
        raise DeltaFormatError(f"the object of a triplet must be an entity name or true, got {triplet!r}")
    return Atom(predicate, (subject, obj.strip().lower()))


def _triplet_from_json(item: Any) -> Atom:
    if isinstance(item, Mapping):
        try:
            item = [item["subject"], item.get("relation", item.get("predicate")), item["object"]]
        except KeyError as exc:
            raise DeltaFormatError(f"a triplet object needs subject, relation and object; got {dict(item)!r}") \
                from exc
    return triplet_to_atom(item)


@dataclass(frozen=True)
class Delta:
    """One update of memory: atoms to remove, then atoms to add (PDDL effect order)."""

    remove: frozenset[Atom] = field(default_factory=frozenset)
    add: frozenset[Atom] = field(default_factory=frozenset)

    @classmethod
    def of(cls, remove: Iterable[Atom] = (), add: Iterable[Atom] = ()) -> Delta:
        return cls(frozenset(remove), frozenset(add))

    @classmethod
    def from_json(cls, data: Any) -> Delta:
        """`{"REMOVE": [[s, p, o] | {"subject", "relation", "object"}, ...], "ADD": [...]}` (any key case)."""
        if not isinstance(data, Mapping):
            raise DeltaFormatError(f"an update must be a JSON object with REMOVE and ADD lists, got "
                                   f"{type(data).__name__}")
        keys = {str(k).lower(): v for k, v in data.items()}
        unknown = set(keys) - {"remove", "add"}
        if unknown:
            raise DeltaFormatError(f"unknown keys {sorted(unknown)} in an update; use REMOVE and ADD")
        parts = {}
        for key in ("remove", "add"):
            value = keys.get(key, [])
            if not isinstance(value, list):
                raise DeltaFormatError(f"{key.upper()} must be a list of triplets, got {type(value).__name__}")
            parts[key] = [_triplet_from_json(t) for t in value]
        for key, atoms in parts.items():
            seen = set()
            for atom in atoms:
                if atom in seen:
                    raise DeltaFormatError(f"{key.upper()} lists {atom} twice")
                seen.add(atom)
        return cls.of(parts["remove"], parts["add"])

    def to_json(self) -> dict:
        return {"REMOVE": [list(atom_to_triplet(a)) for a in sorted(self.remove)],
                "ADD": [list(atom_to_triplet(a)) for a in sorted(self.add)]}

    def __bool__(self) -> bool:
        return bool(self.remove or self.add)

    def __str__(self) -> str:
        parts = [f"-{a}" for a in sorted(self.remove)] + [f"+{a}" for a in sorted(self.add)]
        return " ".join(parts) or "(no change)"
