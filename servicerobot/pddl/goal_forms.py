"""Goal shapes a simulator can test without grounding them over a universe.

A `GoalForm` is a conjunction of ground literals (`pos` true, `neg` false) and of `Clause`s: `(forall (?x -
t) clause)` where the clause is a disjunction of unary literals on `?x`, one of them negative, as in
`(forall (?i - item) (imply (broken ?i) (discarded ?i)))`. Such a forall fails only at an object whose
`trigger` predicate holds, so a state that indexes its unary facts tests it by looking at those few objects
instead of one ground literal per object of the type. `literal_form` reads a ground conjunction from text
written as `(and (on a b) (not (dirty c)))` without the general reader; `formula_form` takes any formula.
"""

from __future__ import annotations

import re
from typing import NamedTuple

from servicerobot.pddl.atoms import Atom
from servicerobot.pddl.model import And, AtomF, Forall, Formula, Imply, Not, Or

__all__ = ["Clause", "GoalForm", "formula_form", "literal_form"]


class Clause(NamedTuple):
    """`(forall (?x - typ) ...)` whose body is false exactly where `trigger(x)` holds, every predicate of
    `false_if_held` is false of x, and every predicate of `false_if_not` holds of x."""

    typ: str
    trigger: str
    false_if_held: tuple[str, ...]  # the body's other positive literals
    false_if_not: tuple[str, ...]  # its other negative literals


class GoalForm(NamedTuple):
    """A goal as ground literals and clauses (see the module); `names`: the objects it names, in order."""

    pos: frozenset[Atom]
    neg: frozenset[Atom]
    clauses: tuple[Clause, ...]
    names: tuple[str, ...]


_NAME = r"[a-z][a-z0-9_\-]*"
_KEYWORDS = frozenset({"and", "or", "not", "imply", "forall", "exists", "when"})
_LITERAL = re.compile(rf"\((?:not \(({_NAME}(?: {_NAME})*)\)|({_NAME}(?: {_NAME})*))\)")


def literal_form(text: str) -> list[tuple[bool, str, tuple[str, ...]]] | None:
    """The literals `(positive, predicate, args)` of `text` when it is one ground literal or `(and ...)` of
    them, written as `str(Atom)` writes atoms (lower case, one space apart); None for any other text (the
    general reader then reads it). Names and types are not checked here."""
    body = text[5:-1] if text.startswith("(and (") and text.endswith(")") else text
    found, end = [], 0
    for match in _LITERAL.finditer(body):
        if match.start() != (end + 1 if found else 0) or (found and body[end] != " "):
            return None
        negative, positive = match.groups()
        words = (negative or positive).split(" ")
        if words[0] in _KEYWORDS:
            return None
        found.append((negative is None, words[0], tuple(words[1:])))
        end = match.end()
    if not found or end != len(body) or (body is text and len(found) > 1):
        return None
    return found


def formula_form(f: Formula) -> tuple[list[tuple[bool, str, tuple[str, ...]]], list[Clause]] | None:
    """(ground literals, clauses) of a formula that is a conjunction of those; None for any other."""
    literals: list[tuple[bool, str, tuple[str, ...]]] = []
    clauses: list[Clause] = []
    stack = [f]
    while stack:
        part = stack.pop(0)
        if isinstance(part, And):
            stack[:0] = part.parts
        elif isinstance(part, AtomF) and not any(t.startswith("?") for t in part.terms):
            literals.append((True, part.predicate, part.terms))
        elif isinstance(part, Not) and isinstance(part.f, AtomF) and not any(t.startswith("?") for t in part.f.terms):
            literals.append((False, part.f.predicate, part.f.terms))
        elif isinstance(part, Forall) and len(part.params) == 1:
            clause = _clause(part.params[0], part.body)
            if clause is None:
                return None
            clauses.append(clause)
        else:
            return None
    return literals, clauses


def _clause(param: tuple[str, str], body: Formula) -> Clause | None:
    """The clause of a forall's body: a disjunction (or implication) of unary literals on its variable."""
    var, typ = param
    if isinstance(body, Or):
        parts = [(p, True) for p in body.parts]
    elif isinstance(body, Imply):
        parts = [(body.a, False), (body.b, True)]
    else:
        parts = [(body, True)]
    held, not_held = [], []
    for part, positive in parts:
        while isinstance(part, Not):
            part, positive = part.f, not positive
        if not isinstance(part, AtomF) or part.terms != (var,):
            return None
        (held if positive else not_held).append(part.predicate)
    if not not_held:  # no trigger: the body can fail at any object of the type
        return None
    return Clause(typ, not_held[0], tuple(held), tuple(not_held[1:]))
