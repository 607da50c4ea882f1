"""Shared helpers for turning s-expressions into model pieces: positioned errors and typed lists."""

from __future__ import annotations

import sys
from typing import NoReturn

from servicerobot.errors import PDDLParseError, PDDLSemanticError
from servicerobot.pddl.features import UnsupportedFeatureError
from servicerobot.pddl.model import ROOT_TYPE, either_type
from servicerobot.pddl.sexpr import SList, Token, position_of

__all__ = ["Reader", "describe"]


def describe(expr: Token | SList) -> str:
    """A short quote of an s-expression for messages: `'foo'` or `'(on ?x ...)'`."""
    if isinstance(expr, SList):
        inner = " ".join(describe(e) if isinstance(e, SList) else str(e) for e in expr[:4])
        return f"({inner}{' ...' if len(expr) > 4 else ''})"
    return repr(str(expr))


class Reader:
    """Raises errors that name the source, line and column of an s-expression."""

    def __init__(self, text: str, source: str = ""):
        self.text = text
        self.source = source

    def position(self, expr: Token | SList | None) -> tuple[int, int] | tuple[None, None]:
        """The 1-based (line, column) of an s-expression, or (None, None) if it has no position."""
        offset = getattr(expr, "offset", None)
        return position_of(self.text, offset) if offset is not None else (None, None)

    def where(self, expr: Token | SList | None) -> str:
        """`source:line:column: ` for an s-expression, or `source: ` when it has no position."""
        name = self.source or "<string>"
        line, column = self.position(expr)
        return f"{name}:{line}:{column}: " if line is not None else f"{name}: "

    def syntax(self, message: str, expr: Token | SList | None) -> NoReturn:
        """Raise a PDDLParseError at `expr`."""
        raise PDDLParseError(message, *self.position(expr), self.source)

    def semantic(self, message: str, expr: Token | SList | None) -> NoReturn:
        """Raise a PDDLSemanticError whose message starts with the position of `expr`."""
        raise PDDLSemanticError(self.where(expr) + message)

    def unsupported(self, message: str, expr: Token | SList | None) -> NoReturn:
        """Raise an UnsupportedFeatureError whose message starts with the position of `expr`."""
        raise UnsupportedFeatureError(self.where(expr) + message)

    def name(self, expr: Token | SList, what: str) -> str:
        """A plain name (not a list, not a variable, not a keyword), interned."""
        if isinstance(expr, SList):
            self.syntax(f"expected {what}, found a list {describe(expr)}", expr)
        if expr[0] in "?:" or expr in ("-", "("):
            self.syntax(f"expected {what}, found {str(expr)!r}", expr)
        return sys.intern(str(expr))

    def either(self, expr: SList, what: str) -> str:
        """`(either t1 t2 ...)` as its union type name `(either t1 t2 ...)` (one member: that type).

        Like Fast Downward, the union of the listed types: an object fits it when it fits one of them.
        """
        if len(expr) < 2:
            self.syntax(f"'(either)' needs at least one type name in {what}", expr)
        members: dict[str, None] = {}
        for item in expr[1:]:
            members.setdefault(self.name(item, f"a type name in '(either ...)' in {what}"), None)
        if len(members) == 1:
            return next(iter(members))
        return sys.intern(either_type(tuple(members)))

    def variable(self, expr: Token | SList, what: str = "a variable like ?x") -> str:
        """A `?variable` name, interned."""
        if isinstance(expr, SList) or not expr.startswith("?") or len(expr) < 2:
            self.syntax(f"expected {what}, found {describe(expr)}", expr)
        return sys.intern(str(expr))

    def typed_list(
        self, items: list, variables: bool, what: str, default: str = ROOT_TYPE
    ) -> list[tuple[str, str, Token]]:
        """Read `a b - t1 c - t2 d` into `(name, type, token)` triples; untyped trailing names get `default`.

        Raises:
            PDDLParseError: a misplaced `-`, a list where a name belongs, or a missing type.
        """
        result: list[tuple[str, str, Token]] = []
        pending: list[tuple[str, Token]] = []
        i, n = 0, len(items)
        while i < n:
            item = items[i]
            if isinstance(item, Token) and item == "-":
                if not pending:
                    self.syntax(f"'-' must follow at least one name in {what}", item)
                if i + 1 >= n:
                    self.syntax(f"a type name must follow '-' in {what}", item)
                typ_expr = items[i + 1]
                if isinstance(typ_expr, SList):
                    if not typ_expr or typ_expr[0] != "either":
                        self.syntax(
                            f"expected a type name or '(either t1 t2 ...)' after '-' in {what}, found "
                            f"{describe(typ_expr)}", typ_expr
                        )
                    typ = self.either(typ_expr, what)
                else:
                    typ = self.name(typ_expr, f"a type name after '-' in {what}")
                result.extend((name, typ, token) for name, token in pending)
                pending = []
                i += 2
                continue
            name = (
                self.variable(item, f"a variable in {what}")
                if variables
                else self.name(item, f"a name in {what}")
            )
            pending.append((name, item))
            i += 1
        result.extend((name, default, token) for name, token in pending)
        return result
