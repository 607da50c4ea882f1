"""Read PDDL text into s-expressions: lowercased tokens that remember where they came from.

PDDL is case-insensitive, so every token is lowercased; `;` starts a comment that runs to the end of
the line. Tokens are `Token` strings and lists are `SList` lists, both carrying the `offset` of their
first character, which `position_of` turns into a 1-based line and column for error messages.
"""

from __future__ import annotations

import re
from bisect import bisect_right

from servicerobot.errors import PDDLParseError

__all__ = ["MAX_NESTING", "SExpr", "SList", "Token", "extract_define", "parse_sexpr", "position_of", "tokenize"]

MAX_NESTING = 128
"""The deepest parenthesis nesting read; deeper text is refused (later stages recurse once per level)."""

_TOKEN_RE = re.compile(r"[()]|;[^\n]*|[^\s();]+")
_DEFINE_RE = re.compile(r"\(\s*define(?![^\s();])", re.IGNORECASE)


class Token(str):
    """A lowercased PDDL token; `offset` is the index of its first character in the source text."""

    offset: int


class SList(list):
    """A parenthesised s-expression; `offset` is the index of its opening parenthesis in the source text."""

    __slots__ = ("offset",)

    def __init__(self, offset: int):
        super().__init__()
        self.offset = offset


SExpr = Token | SList


def _line_starts(text: str) -> list[int]:
    starts = [0]
    find = text.find
    pos = find("\n")
    while pos >= 0:
        starts.append(pos + 1)
        pos = find("\n", pos + 1)
    return starts


def position_of(text: str, offset: int) -> tuple[int, int]:
    """The 1-based (line, column) of a character offset in `text`."""
    starts = _line_starts(text)
    line = bisect_right(starts, offset)
    return line, offset - starts[line - 1] + 1


def _lowered(text: str) -> str:
    # lowercasing ASCII text keeps every offset; other text is lowercased token by token
    return text.lower() if text.isascii() else text


def tokenize(text: str) -> list[Token]:
    """Split PDDL text into lowercased tokens (parentheses and words), skipping comments."""
    tokens = []
    lowered = _lowered(text)
    ascii_text = text.isascii()
    for match in _TOKEN_RE.finditer(lowered):
        word = match.group()
        if word[0] == ";":
            continue
        token = Token(word if ascii_text else word.lower())
        token.offset = match.start()
        tokens.append(token)
    return tokens


def parse_sexpr(text: str, source: str = "") -> SList:
    """Parse exactly one parenthesised s-expression (such as a whole `(define ...)`).

    Raises:
        PDDLParseError: unbalanced parentheses, unexpected end of input, text before or after it, nesting
            deeper than `MAX_NESTING`.
    """
    if not isinstance(text, str):
        raise PDDLParseError(f"expected PDDL text (a str), got {type(text).__name__}", source=source)

    def fail(message: str, offset: int) -> PDDLParseError:
        return PDDLParseError(message, *position_of(text, offset), source)

    lowered = _lowered(text)
    ascii_text = text.isascii()
    stack: list[SList] = []
    top = None
    result: SList | None = None
    closing = 0
    for match in _TOKEN_RE.finditer(lowered):
        word = match.group()
        first = word[0]
        if first == ";":
            continue
        if result is not None:
            raise fail(
                f"unexpected text {word!r} after the end of the expression that closed at "
                + "line {}, column {}".format(*position_of(text, closing)),
                match.start(),
            )
        if first == "(":
            node = SList(match.start())
            if len(stack) >= MAX_NESTING:
                line, column = position_of(text, match.start())
                raise fail(
                    f"nesting too deep at {line}:{column}: more than {MAX_NESTING} levels of parentheses; "
                    "flatten the formula (nested 'and's can be one 'and')",
                    match.start(),
                )
            if top is not None:
                top.append(node)
            stack.append(node)
            top = node
        elif first == ")":
            if top is None:
                raise fail("unbalanced ')': no '(' to close", match.start())
            node = stack.pop()
            if stack:
                top = stack[-1]
            else:
                result, closing = node, match.start()
        elif top is None:
            raise fail(f"expected '(' but found {word!r}", match.start())
        else:
            token = Token(word if ascii_text else word.lower())
            token.offset = match.start()
            top.append(token)
    if result is None:
        if not stack:
            raise fail("expected '(' but the text is empty", len(text))
        raise fail(
            f"unexpected end of input: {len(stack)} '(' not closed; the innermost one opens here",
            stack[-1].offset,
        )
    return result


def extract_define(text: str) -> str:
    """Return the first balanced `(define ...)` in `text`, dropping chatter and Markdown fences around it.

    Raises:
        PDDLParseError: no `(define` in the text, or it is never closed.
    """
    if not isinstance(text, str):
        raise PDDLParseError(f"expected PDDL text (a str), got {type(text).__name__}")
    match = _DEFINE_RE.search(text)
    if match is None:
        raise PDDLParseError("no '(define ...)' found in the text")
    start = match.start()
    depth = 0
    for token in _TOKEN_RE.finditer(text, start):
        word = token.group()
        if word == "(":
            depth += 1
        elif word == ")":
            depth -= 1
            if depth == 0:
                return text[start : token.end()]
    raise PDDLParseError("'(define' is never closed", *position_of(text, start))
