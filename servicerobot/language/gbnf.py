"""GBNF grammars (llama.cpp's grammar format) checked on our side before llama.cpp parses them.

llama.cpp answers a grammar it cannot use with a null sampler, and the server dies on it (SIGSEGV): a syntax
error (`root ::= ((((`), an undefined rule, left recursion (`root ::= root "a" | "a"`), or nesting deep
enough to overflow its recursive parser. `check_grammar` reads the same syntax and rewrites groups and
repetitions into rules of their own the way llama.cpp does, then refuses, with the line and column, what
llama.cpp could not use, within bounds on size, nesting and repetition. Token references (`<...>`) are not
accepted.
"""

from __future__ import annotations

from dataclasses import dataclass

__all__ = ["GrammarError", "GrammarLimits", "check_grammar"]


class GrammarError(ValueError):
    """A grammar llama.cpp cannot use safely; the message says what is wrong and where."""


@dataclass(frozen=True)
class GrammarLimits:
    """How large a grammar may be: characters, nested parentheses, rules after rewriting, the largest count
    of `x{m,n}`, and elements after repetitions are written out."""

    chars: int = 65_536
    depth: int = 128
    rules: int = 4_096
    repeat: int = 1_000
    elements: int = 200_000


_ESCAPES = {"t": "\t", "r": "\r", "n": "\n", "\\": "\\", '"': '"', "[": "[", "]": "]", "-": "-"}
_HEX_DIGITS = {"x": 2, "u": 4, "U": 8}


def _is_word_char(c: str) -> bool:
    return c == "-" or ("a" <= c <= "z") or ("A" <= c <= "Z") or ("0" <= c <= "9")


class _Parser:
    """llama.cpp's recursive-descent GBNF parser, in Python. A rule is a list of alternatives, each a list
    of symbols: a rule id (>= 0), or a terminal written as minus its element count."""

    def __init__(self, text: str, limits: GrammarLimits) -> None:
        self.text, self.limits, self.pos = text, limits, 0
        self.ids: dict[str, int] = {}
        self.names: list[str] = []  # rule id -> the user's rule it belongs to
        self.rules: list[list[list[int]] | None] = []
        self.used_at: dict[int, int] = {}
        self.elements = 0

    def place(self, pos: int) -> str:
        line = self.text.count("\n", 0, pos) + 1
        return f"line {line}, column {pos - (self.text.rfind(chr(10), 0, pos) + 1) + 1}"

    def error(self, what: str, pos: int | None = None) -> GrammarError:
        return GrammarError(f"grammar: {what} at {self.place(self.pos if pos is None else pos)}")

    def peek(self, offset: int = 0) -> str:
        i = self.pos + offset
        return self.text[i] if i < len(self.text) else ""

    def space(self, newline_ok: bool) -> None:
        text = self.text
        while self.pos < len(text):
            c = text[self.pos]
            if c == "#":
                while self.pos < len(text) and text[self.pos] not in "\r\n":
                    self.pos += 1
            elif c in " \t" or (newline_ok and c in "\r\n"):
                self.pos += 1
            else:
                break

    def name(self) -> str:
        start = self.pos
        while _is_word_char(self.peek()):
            self.pos += 1
        if self.pos == start:
            raise self.error(f"expecting a rule name, found {self._found()}")
        return self.text[start:self.pos]

    def _found(self) -> str:
        return repr(self.peek()) if self.peek() else "the end of the grammar"

    def rule_id(self, name: str) -> int:
        if name not in self.ids:
            self.ids[name] = self.new_rule(name)
        return self.ids[name]

    def new_rule(self, owner: str) -> int:
        if len(self.rules) >= self.limits.rules:
            raise self.error(f"more than {self.limits.rules} rules once groups and repetitions are written out")
        self.rules.append(None)
        self.names.append(owner)
        return len(self.rules) - 1

    def add(self, symbols: list[int]) -> None:
        self.elements += sum(-s if s < 0 else 1 for s in symbols)
        if self.elements > self.limits.elements:
            raise self.error(f"more than {self.limits.elements} elements once repetitions are written out")

    def char(self) -> str:
        """One character of a literal or a class, escapes decoded."""
        start = self.pos
        c = self.peek()
        if not c:
            raise self.error("unexpected end of the grammar")
        if c != "\\":
            self.pos += 1
            return c
        kind = self.peek(1)
        if kind in _ESCAPES:
            self.pos += 2
            return _ESCAPES[kind]
        if kind not in _HEX_DIGITS:
            raise self.error(f"unknown escape '\\{kind}'", start)
        digits = self.text[self.pos + 2:self.pos + 2 + _HEX_DIGITS[kind]]
        if len(digits) < _HEX_DIGITS[kind] or any(d not in "0123456789abcdefABCDEF" for d in digits):
            raise self.error(f"'\\{kind}' needs {_HEX_DIGITS[kind]} hex digits", start)
        value = int(digits, 16)
        if value > 0x10FFFF:
            raise self.error(f"'\\{kind}{digits}' is not a character llama.cpp can match", start)
        self.pos += 2 + len(digits)
        return chr(value)

    def integer(self) -> int:
        start = self.pos
        while self.peek().isascii() and self.peek().isdigit():
            self.pos += 1
        if self.pos == start:
            raise self.error(f"expecting a number, found {self._found()}")
        value = int(self.text[start:self.pos])
        if value > self.limits.repeat:
            raise self.error(f"a repetition count of {value}; at most {self.limits.repeat}", start)
        return value

    def grammar(self) -> None:
        self.space(True)
        while self.pos < len(self.text):
            self.rule()

    def rule(self) -> None:
        name_at = self.pos
        name = self.name()
        self.space(False)
        if not self.text.startswith("::=", self.pos):
            raise self.error(f"expecting '::=' after the rule name {name!r}, found {self._found()}")
        self.pos += 3
        self.space(True)
        rule = self.rule_id(name)
        self.used_at.setdefault(rule, name_at)
        self.rules[rule] = self.alternates(name, 0, False)
        c = self.peek()
        if c == "\r":
            self.pos += 2 if self.peek(1) == "\n" else 1
        elif c == "\n":
            self.pos += 1
        elif c:
            raise self.error(f"expecting the end of the rule (a new line), found {c!r}")
        self.space(True)

    def alternates(self, owner: str, depth: int, nested: bool) -> list[list[int]]:
        alternatives = [self.sequence(owner, depth, nested)]
        while self.peek() == "|":
            self.pos += 1
            self.space(True)
            alternatives.append(self.sequence(owner, depth, nested))
        return alternatives

    def sequence(self, owner: str, depth: int, nested: bool) -> list[int]:
        symbols: list[int] = []
        last = None  # where the last item's symbols start, for a repetition that follows it
        while (c := self.peek()):
            if c == '"':
                start = self.pos
                self.pos += 1
                count = 0
                while self.peek() != '"':
                    if not self.peek():
                        raise self.error("a string is never closed", start)
                    self.char()
                    count += 1
                self.pos += 1
                last, item = len(symbols), [-count] if count else []
            elif c == "[":
                start = self.pos
                self.pos += 2 if self.peek(1) == "^" else 1
                count = 0
                while self.peek() != "]":
                    if not self.peek():
                        raise self.error("a character class is never closed", start)
                    self.char()
                    count += 1
                    if self.peek() == "-" and self.peek(1) != "]":
                        self.pos += 1
                        self.char()
                if not count:
                    raise self.error("an empty character class", start)
                self.pos += 1
                last, item = len(symbols), [-1]
            elif _is_word_char(c):
                at = self.pos
                rule = self.rule_id(self.name())
                self.used_at.setdefault(rule, at)
                last, item = len(symbols), [rule]
            elif c == "(":
                start = self.pos
                if depth >= self.limits.depth:
                    raise self.error(f"groups nested deeper than {self.limits.depth}")
                self.pos += 1
                self.space(True)
                group = self.new_rule(owner)
                self.rules[group] = self.alternates(owner, depth + 1, True)
                if self.peek() != ")":
                    raise self.error(f"expecting ')' to close the group opened at {self.place(start)}, found "
                                     f"{self._found()}")
                self.pos += 1
                last, item = len(symbols), [group]
            elif c == ".":
                self.pos += 1
                last, item = len(symbols), [-1]
            elif c in "*+?{":
                if last is None or last == len(symbols):
                    raise self.error(f"{c!r} repeats nothing: put it after a string, class, rule or group")
                self.repeat(symbols, last, owner, *self.bounds(c, nested))
                continue
            elif c == "<" or c == "!":
                raise self.error("token references (<...>) are not accepted here; write the text as a string")
            else:
                break
            self.add(item)
            symbols += item
            self.space(nested)
        return symbols

    def bounds(self, c: str, nested: bool) -> tuple[int, int]:
        """(min, max) of the repetition `c` starts, read with the space after it; max -1: unbounded."""
        start = self.pos
        self.pos += 1
        self.space(nested)
        if c != "{":
            return {"*": (0, -1), "+": (1, -1), "?": (0, 1)}[c]
        low = self.integer()
        self.space(nested)
        high = low
        if self.peek() == ",":
            self.pos += 1
            self.space(nested)
            high = self.integer() if self.peek().isascii() and self.peek().isdigit() else -1
            self.space(nested)
        if self.peek() != "}":
            raise self.error(f"expecting '}}' to close the repetition, found {self._found()}")
        self.pos += 1
        self.space(nested)
        if 0 <= high < low:
            raise self.error(f"the repetition {{{low},{high}}} has its largest count below its smallest", start)
        return low, high

    def repeat(self, symbols: list[int], last: int, owner: str, low: int, high: int) -> None:
        """Rewrite the last item S as llama.cpp does: S{m,n} -> S (m times) S'(n-m), S'(k) ::= S S'(k-1) |."""
        item = symbols[last:]
        del symbols[last:]
        self.add(item * max(low - 1, 0))
        symbols += item * low
        optional = 1 if high < 0 else high - low
        previous = None
        for i in range(optional):
            rule = self.new_rule(owner)
            alternative = list(item)
            if i > 0 or high < 0:
                alternative.append(rule if high < 0 else previous)
            self.add(alternative)
            self.rules[rule] = [alternative, []]
            previous = rule
        if previous is not None:
            symbols.append(previous)


def _nullable(rules: list[list[list[int]]]) -> list[bool]:
    """Which rules can match the empty string (a work list over the alternatives)."""
    nullable = [False] * len(rules)
    waiting: list[int] = []  # per alternative: its symbols not yet known to be nullable
    owner: list[int] = []
    uses: dict[int, list[int]] = {}
    ready = []
    for rule, alternatives in enumerate(rules):
        for symbols in alternatives:
            index = len(waiting)
            owner.append(rule)
            if any(s < 0 for s in symbols):
                waiting.append(-1)
                continue
            waiting.append(len(symbols))
            for s in symbols:
                uses.setdefault(s, []).append(index)
            if not symbols:
                ready.append(rule)
    while ready:
        rule = ready.pop()
        if nullable[rule]:
            continue
        nullable[rule] = True
        for index in uses.get(rule, ()):
            waiting[index] -= 1
            if waiting[index] == 0:
                ready.append(owner[index])
    return nullable


def _left_cycle(rules: list[list[list[int]]]) -> list[int] | None:
    """A cycle of rules each of which can begin with the next before reading a character, or None."""
    nullable = _nullable(rules)
    edges: list[list[int]] = []
    for alternatives in rules:
        firsts = []
        for symbols in alternatives:
            for s in symbols:
                if s < 0:
                    break
                firsts.append(s)
                if not nullable[s]:
                    break
        edges.append(firsts)
    state = [0] * len(rules)  # 0 new, 1 on the path, 2 done
    for start in range(len(rules)):
        if state[start]:
            continue
        path, stack = [start], [iter(edges[start])]
        state[start] = 1
        while stack:
            nxt = next(stack[-1], None)
            if nxt is None:
                state[path.pop()] = 2
                stack.pop()
            elif state[nxt] == 1:
                return path[path.index(nxt):] + [nxt]
            elif state[nxt] == 0:
                state[nxt] = 1
                path.append(nxt)
                stack.append(iter(edges[nxt]))
    return None


def check_grammar(text: str, limits: GrammarLimits = GrammarLimits()) -> None:
    """Refuse a grammar llama.cpp could not use or that exceeds `limits`.

    Raises:
        GrammarError: a syntax error, a rule used but never defined, no `root` rule, left recursion, a NUL
            character, or a bound of `limits` exceeded; the message names the place.
    """
    if not isinstance(text, str):
        raise GrammarError(f"grammar: must be a string, got {type(text).__name__}")
    if len(text) > limits.chars:
        raise GrammarError(f"grammar: {len(text)} characters; at most {limits.chars}")
    parser = _Parser(text, limits)
    if "\0" in text:
        raise parser.error("a NUL character", text.index("\0"))
    try:
        text.encode("utf-8")
    except UnicodeEncodeError as exc:
        raise parser.error("a character that is not valid UTF-8 (a lone surrogate)", exc.start) from None
    parser.grammar()
    if "root" not in parser.ids or parser.rules[parser.ids["root"]] is None:
        raise GrammarError("grammar: no rule named root (write `root ::= ...`)")
    for rule, alternatives in enumerate(parser.rules):
        if alternatives is None:
            raise parser.error(f"the rule {parser.names[rule]!r} is used but never defined", parser.used_at[rule])
    cycle = _left_cycle(parser.rules)  # type: ignore[arg-type]
    if cycle is not None:
        names = [parser.names[r] for r in cycle]
        chain = " -> ".join(n for i, n in enumerate(names) if i == 0 or n != names[i - 1])
        if chain.count(" -> ") == 0:
            chain = f"{chain} -> {chain}"
        raise GrammarError(f"grammar: left recursion ({chain}): a rule can reach itself before any character, "
                           "which llama.cpp cannot use; put the repetition on the right (x ::= \"a\" x | \"a\") "
                           "or write it with * or +")
