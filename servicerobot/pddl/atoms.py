"""Ground atoms and states: an `Atom` is a predicate applied to objects; a `State` is a frozenset of them."""

from __future__ import annotations

from typing import NamedTuple

from servicerobot.errors import PDDLParseError
from servicerobot.pddl.sexpr import SList, parse_sexpr, position_of

__all__ = ["Atom", "State", "format_state"]


class Atom(NamedTuple):
    """A ground atom such as `(on mug_1 table_1)`; a plain tuple, so hashing and equality are fast."""

    predicate: str
    args: tuple[str, ...]

    def __str__(self) -> str:
        if not self.args:
            return f"({self.predicate})"
        return f"({self.predicate} {' '.join(self.args)})"

    @classmethod
    def parse(cls, text: str) -> Atom:
        """Read `(on a b)` (case-insensitive) into an Atom.

        Raises:
            PDDLParseError: the text is not one parenthesised list of names.
        """
        expr = parse_sexpr(text)
        if not expr or any(isinstance(part, SList) for part in expr):
            raise PDDLParseError(
                f"expected a ground atom like '(on a b)', got {text.strip()!r}",
                *position_of(text, expr.offset),
            )
        if any(part.startswith("?") for part in expr):
            raise PDDLParseError(
                f"a ground atom cannot contain variables: {text.strip()!r}", *position_of(text, expr.offset)
            )
        return cls(str(expr[0]), tuple(str(arg) for arg in expr[1:]))


State = frozenset[Atom]
"""A state: the set of atoms that are true (closed world)."""


def format_state(state: State) -> str:
    """The atoms of a state, sorted, one per line (for messages and debugging)."""
    return "\n".join(sorted(str(atom) for atom in state))
