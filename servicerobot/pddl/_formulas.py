"""Read formulas, effects and ground atoms out of s-expressions, checking them against a signature.

Checks (when the signature is known): predicate names and arities, declared variables, known
objects/constants, and argument types. A variable whose type is a supertype of the parameter's type
is accepted (the atom may hold for some bindings); types that cannot overlap are an error.
"""

from __future__ import annotations

import sys
from collections.abc import Mapping

from servicerobot.errors import PDDLSemanticError
from servicerobot.pddl._reader import Reader, describe
from servicerobot.pddl._suggest import did_you_mean
from servicerobot.pddl.atoms import Atom
from servicerobot.pddl.model import (
    FALSE,
    TRUE,
    AddEffect,
    And,
    AtomF,
    DelEffect,
    Effect,
    Equals,
    Exists,
    Forall,
    ForallEffect,
    Formula,
    Imply,
    Not,
    Or,
    Params,
    Predicate,
    TypeHierarchy,
    WhenEffect,
)
from servicerobot.pddl.sexpr import SList, Token

__all__ = ["FormulaReader", "PDDLTypeError", "article"]


class PDDLTypeError(PDDLSemanticError):
    """A term whose type cannot fit its predicate's parameter; `where` names the part (e.g. "in :goal")."""

    def __init__(self, message: str, where: str = ""):
        super().__init__(message)
        self.where = where

_CONNECTIVES = ("and", "or", "not", "imply", "exists", "forall", "=")
_NUMERIC_COMPARISONS = ("<", ">", "<=", ">=")
_NUMERIC_EFFECTS = ("increase", "decrease", "assign", "scale-up", "scale-down")
_COST_FUNCTION = "total-cost"


def article(word: str) -> str:
    """`a dish` / `an item`."""
    return f"{'an' if word[:1] in 'aeiou' else 'a'} {word}"


class FormulaReader:
    """Reads formulas and effects for one context (a domain's actions, or a problem's init and goal).

    Args:
        reader: raises positioned errors.
        predicates: the predicate signatures, or None to skip every semantic check.
        types: the type hierarchy (None: no type checks).
        objects: names usable as terms -> type (domain constants, plus problem objects), or None.
        object_word: what to call those names in messages ("constant" or "object").
    """

    def __init__(
        self,
        reader: Reader,
        predicates: Mapping[str, Predicate] | None,
        types: TypeHierarchy | None,
        objects: Mapping[str, str] | None,
        object_word: str = "object",
    ):
        self.reader = reader
        self.predicates = predicates
        self.types = types
        self.objects = objects
        self.object_word = object_word

    # ------------------------------------------------------------------ formulas
    def formula(self, expr: Token | SList, scope: Mapping[str, str], where: str) -> Formula:
        """A precondition or goal formula; `scope` maps the variables in scope to their types."""
        rd = self.reader
        if not isinstance(expr, SList):
            rd.syntax(f"expected a formula in parentheses {where}, found {describe(expr)}", expr)
        if not expr:
            rd.syntax(f"empty formula '()' {where}", expr)
        head = expr[0]
        if isinstance(head, SList):
            rd.syntax(f"expected a predicate or connective {where}, found a list {describe(head)}", head)
        args = expr[1:]
        if head == "and":
            parts = tuple(self.formula(part, scope, where) for part in args)
            return And(parts) if parts else TRUE
        if head == "or":
            parts = tuple(self.formula(part, scope, where) for part in args)
            return Or(parts) if parts else FALSE
        if head == "not":
            self._count(expr, 1, "(not <formula>)", where)
            return Not(self.formula(args[0], scope, where))
        if head == "imply":
            self._count(expr, 2, "(imply <formula> <formula>)", where)
            return Imply(self.formula(args[0], scope, where), self.formula(args[1], scope, where))
        if head in ("exists", "forall"):
            self._count(expr, 2, f"({head} (<variables>) <formula>)", where)
            params = self.params(args[0], f"the variables of '{head}' {where}")
            inner = {**scope, **dict(params)}
            body = self.formula(args[1], inner, where)
            return Exists(params, body) if head == "exists" else Forall(params, body)
        if head == "=":
            self._count(expr, 2, "(= <term> <term>)", where)
            if any(isinstance(arg, SList) for arg in args):
                rd.unsupported(f"numeric fluents are not supported: {describe(expr)} {where}", expr)
            return Equals(self.term(args[0], scope, where), self.term(args[1], scope, where))
        if head in _NUMERIC_COMPARISONS:
            rd.unsupported(f"numeric fluents are not supported: {describe(expr)} {where}", expr)
        if head == "when":
            rd.syntax(f"'when' is a conditional effect and cannot appear {where}", head)
        return self.atom(expr, scope, where)

    def params(self, expr: Token | SList, what: str) -> Params:
        """A parenthesised typed variable list, with its types checked and duplicates refused."""
        rd = self.reader
        if not isinstance(expr, list):
            rd.syntax(f"expected a parenthesised variable list for {what}, found {describe(expr)}", expr)
        triples = rd.typed_list(expr, variables=True, what=what)
        seen: set[str] = set()
        for var, typ, token in triples:
            if var in seen:
                rd.semantic(f"variable {var} is declared twice in {what}", token)
            seen.add(var)
            self.check_type(typ, token, what)
        return tuple((var, typ) for var, typ, _ in triples)

    def check_type(self, typ: str, token: Token | SList, what: str) -> None:
        """Raise a PDDLSemanticError if `typ` is not a declared type."""
        if self.types is not None and typ not in self.types:
            self.reader.semantic(
                f"unknown type {typ!r} in {what}{did_you_mean(typ, self.types.types)}", token
            )

    def term(self, expr: Token | SList, scope: Mapping[str, str], where: str) -> str:
        """A variable in scope or a known object/constant name."""
        if type(expr) is Token and expr in (scope if expr[0] == "?" else self.objects or ()):
            return sys.intern(str(expr))  # the common, valid case
        rd = self.reader
        if isinstance(expr, SList):
            rd.syntax(
                f"expected a variable or an {self.object_word} name {where}, found a list {describe(expr)}",
                expr,
            )
        if expr.startswith("?"):
            var = rd.variable(expr)
            if var not in scope:
                hint = (
                    f"; the variables in scope are {', '.join(scope)}"
                    if scope
                    else "; no variables are in scope"
                )
                rd.semantic(f"undeclared variable {var} {where}{hint}", expr)
            return var
        name = rd.name(expr, f"a variable or an {self.object_word} name {where}")
        if self.objects is not None and name not in self.objects:
            rd.semantic(
                f"unknown {self.object_word} {name!r} {where}{did_you_mean(name, self.objects)}", expr
            )
        return name

    def atom(self, expr: SList, scope: Mapping[str, str], where: str) -> AtomF:
        """A lifted atom `(pred term...)`, checked against the predicate's signature."""
        rd = self.reader
        head = expr[0]
        if isinstance(head, SList) or head.startswith(("?", ":")):
            rd.syntax(f"expected a predicate name {where}, found {describe(head)}", head)
        name = sys.intern(str(head))
        terms = tuple([self.term(arg, scope, where) for arg in expr[1:]])
        if self.predicates is None:
            return AtomF(name, terms)
        predicate = self.predicates.get(name)
        if predicate is None:
            rd.semantic(f"unknown predicate {name!r} {where}{did_you_mean(name, self.predicates)}", head)
        if len(terms) != predicate.arity:
            rd.semantic(
                f"predicate {name!r} takes {predicate.arity} argument{'s' if predicate.arity != 1 else ''} "
                f"{predicate}, but {describe(expr)} has {len(terms)} {where}",
                expr,
            )
        if self.types is not None:
            for term, token, (pvar, ptype) in zip(terms, expr[1:], predicate.params):
                self._check_arg(term, token, scope, name, pvar, ptype, where)
        return AtomF(name, terms)

    def _check_arg(
        self, term: str, token: Token, scope: Mapping[str, str], pred: str, pvar: str, ptype: str, where: str
    ) -> None:
        is_subtype = self.types.is_subtype
        if term.startswith("?"):
            ttype = scope[term]
            if is_subtype(ttype, ptype) or is_subtype(ptype, ttype):
                return
            raise PDDLTypeError(
                self.reader.where(token) + f"variable {term} is {article(ttype)}, but parameter {pvar} of "
                f"{pred!r} needs {article(ptype)} {where}",
                where,
            )
        if self.objects is None:
            return
        ttype = self.objects[term]
        if not is_subtype(ttype, ptype):
            raise PDDLTypeError(
                self.reader.where(token) + f"{term} is {article(ttype)}, but parameter {pvar} of {pred!r} "
                f"needs {article(ptype)} {where}",
                where,
            )

    def _count(self, expr: SList, n: int, form: str, where: str) -> None:
        if len(expr) - 1 != n:
            self.reader.syntax(
                f"{str(expr[0])!r} takes {n} argument{'s' if n != 1 else ''} {where}: expected {form}, "
                f"found {describe(expr)}",
                expr,
            )

    # ------------------------------------------------------------------ effects
    def effects(self, expr: Token | SList, scope: Mapping[str, str], where: str) -> tuple[Effect, ...]:
        """An action effect as a flat tuple (nested `and`s are spliced; action costs are dropped)."""
        rd = self.reader
        if not isinstance(expr, SList):
            rd.syntax(f"expected an effect in parentheses {where}, found {describe(expr)}", expr)
        if not expr:
            rd.syntax(f"empty effect '()' {where}", expr)
        head = expr[0]
        if isinstance(head, SList):
            rd.syntax(f"expected a predicate or effect keyword {where}, found a list {describe(head)}", head)
        args = expr[1:]
        if head == "and":
            return tuple(effect for part in args for effect in self.effects(part, scope, where))
        if head == "not":
            self._count(expr, 1, "(not <atom>)", where)
            inner = args[0]
            if not isinstance(inner, SList) or not inner or inner[0] in _CONNECTIVES or inner[0] == "when":
                rd.syntax(f"only an atom can be deleted: expected (not (<predicate> ...)) {where}", expr)
            return (DelEffect(self.atom(inner, scope, where)),)
        if head == "forall":
            self._count(expr, 2, "(forall (<variables>) <effect>)", where)
            params = self.params(args[0], f"the variables of 'forall' {where}")
            inner_scope = {**scope, **dict(params)}
            return (ForallEffect(params, self.effects(args[1], inner_scope, where)),)
        if head == "when":
            self._count(expr, 2, "(when <condition> <effect>)", where)
            condition = self.formula(args[0], scope, where)
            return (WhenEffect(condition, self.effects(args[1], scope, where)),)
        if head in _NUMERIC_EFFECTS:
            target = args[0] if args else None
            if head == "increase" and isinstance(target, SList) and list(target) == [_COST_FUNCTION]:
                return ()  # action costs: planners here minimise plan length
            rd.unsupported(f"numeric fluents are not supported: {describe(expr)} {where}", expr)
        if head in _CONNECTIVES:
            rd.syntax(f"{str(head)!r} is not allowed in an effect {where}", head)
        return (AddEffect(self.atom(expr, scope, where)),)

    # ------------------------------------------------------------------ init
    def init_atom(self, expr: Token | SList, where: str = "in :init") -> Atom | None:
        """A ground atom of `:init`; None for an ignorable `(= (total-cost) 0)`."""
        rd = self.reader
        if not isinstance(expr, SList) or not expr:
            rd.syntax(f"expected a ground atom like (on a b) {where}, found {describe(expr)}", expr)
        head = expr[0]
        if head == "=":
            if len(expr) == 3 and isinstance(expr[1], SList) and list(expr[1]) == [_COST_FUNCTION]:
                return None
            rd.unsupported(f"numeric fluents are not supported: {describe(expr)} {where}", expr)
        if head == "not":
            rd.syntax(
                f"negative literals are not allowed {where}: every atom that is not listed is false", expr
            )
        if head == "at" and len(expr) == 3 and not isinstance(expr[1], SList) and expr[1][:1].isdigit():
            rd.unsupported(f"timed initial literals are not supported: {describe(expr)} {where}", expr)
        if isinstance(head, SList) or head in _CONNECTIVES:
            rd.syntax(f"expected a ground atom like (on a b) {where}, found {describe(expr)}", expr)
        for arg in expr[1:]:
            if isinstance(arg, Token) and arg.startswith("?"):
                rd.syntax(f"variables are not allowed {where}: {describe(expr)}", arg)
        lifted = self.atom(expr, {}, where)
        return Atom(lifted.predicate, lifted.terms)
