"""Read formulas, effects and ground atoms out of s-expressions, checking them against a signature.

Checks (when the signature is known): predicate names and arities, declared variables, known
objects/constants, and argument types. A variable whose type is a supertype of the parameter's type
is accepted (the atom may hold for some bindings); types that cannot overlap are an error.
"""

from __future__ import annotations

import math
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
    CostTerm,
    DelEffect,
    Effect,
    Equals,
    Exists,
    Forall,
    ForallEffect,
    Formula,
    Function,
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


def _number(token: Token) -> float | None:
    """A PDDL number token as an int or float; None if it is not one."""
    try:
        value = float(token)
    except ValueError:
        return None
    if not math.isfinite(value):
        return None
    return int(value) if value.is_integer() else value


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
        functions: the numeric function signatures (static action costs), or None to skip their checks.
        strict: False to let an argument whose type cannot fit its parameter through, noted in `warnings`
            (Fast Downward does not check argument types), instead of raising PDDLTypeError.

    Attributes:
        costs: the `(increase (total-cost) x)` terms read by the last `effects` call at the top level.
        values: the `(= (f args) number)` values read by `init_atom`.
        warnings: what a lenient reader let through, each message with its position.
    """

    def __init__(
        self,
        reader: Reader,
        predicates: Mapping[str, Predicate] | None,
        types: TypeHierarchy | None,
        objects: Mapping[str, str] | None,
        object_word: str = "object",
        functions: Mapping[str, Function] | None = None,
        strict: bool = True,
    ):
        self.reader = reader
        self.strict = strict
        self.warnings: list[str] = []
        self.predicates = predicates
        self.types = types
        self.objects = objects
        self.object_word = object_word
        self.functions = functions
        self.costs: list[CostTerm] = []
        self.values: dict[Atom, float] = {}

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

    def params(self, expr: Token | SList, what: str, repeats: bool = False) -> Params:
        """A parenthesised typed variable list, with its types checked and duplicates refused (unless
        `repeats`: a predicate declaration may repeat a name, as Fast Downward allows)."""
        rd = self.reader
        if not isinstance(expr, list):
            rd.syntax(f"expected a parenthesised variable list for {what}, found {describe(expr)}", expr)
        triples = rd.typed_list(expr, variables=True, what=what)
        seen: set[str] = set()
        for var, typ, token in triples:
            if var in seen and not repeats:
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
            self._type_error(f"variable {term} is {article(ttype)}, but parameter {pvar} of {pred!r} needs "
                             f"{article(ptype)} {where}", token, where)
            return
        if self.objects is None:
            return
        ttype = self.objects[term]
        if not is_subtype(ttype, ptype):
            self._type_error(f"{term} is {article(ttype)}, but parameter {pvar} of {pred!r} needs "
                             f"{article(ptype)} {where}", token, where)

    def _type_error(self, message: str, token: Token, where: str) -> None:
        """Raise PDDLTypeError for an argument that cannot fit its parameter or, when not strict, note it."""
        if self.strict:
            raise PDDLTypeError(self.reader.where(token) + message, where)
        self.warnings.append(f"{self.reader.where(token)}ill-typed as written: {message} (Fast Downward reads "
                             "it; planning goes on; to fix it, give the argument a type that fits the parameter)")

    def _count(self, expr: SList, n: int, form: str, where: str) -> None:
        if len(expr) - 1 != n:
            self.reader.syntax(
                f"{str(expr[0])!r} takes {n} argument{'s' if n != 1 else ''} {where}: expected {form}, "
                f"found {describe(expr)}",
                expr,
            )

    # ------------------------------------------------------------------ effects
    def effects(
        self, expr: Token | SList, scope: Mapping[str, str], where: str, top: bool = True
    ) -> tuple[Effect, ...]:
        """An action effect as a flat tuple (nested `and`s are spliced); `(increase (total-cost) x)` terms go
        to `costs` (a call with `top` starts a new list)."""
        rd = self.reader
        if top:
            self.costs = []
        if not isinstance(expr, SList):
            rd.syntax(f"expected an effect in parentheses {where}, found {describe(expr)}", expr)
        if not expr:
            rd.syntax(f"empty effect '()' {where}", expr)
        head = expr[0]
        if isinstance(head, SList):
            rd.syntax(f"expected a predicate or effect keyword {where}, found a list {describe(head)}", head)
        args = expr[1:]
        if head == "and":
            return tuple(effect for part in args for effect in self.effects(part, scope, where, top=False))
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
            return (ForallEffect(params, self._inner_effects(args[1], inner_scope, where)),)
        if head == "when":
            self._count(expr, 2, "(when <condition> <effect>)", where)
            condition = self.formula(args[0], scope, where)
            return (WhenEffect(condition, self._inner_effects(args[1], scope, where)),)
        if head in _NUMERIC_EFFECTS:
            target = args[0] if args else None
            if head == "increase" and isinstance(target, SList) and list(target) == [_COST_FUNCTION]:
                self._count(expr, 2, "(increase (total-cost) <number or static function term>)", where)
                self.costs.append(self.cost_term(args[1], scope, where))
                return ()
            rd.unsupported(f"numeric fluents are not supported: {describe(expr)} {where}", expr)
        if head in _CONNECTIVES:
            rd.syntax(f"{str(head)!r} is not allowed in an effect {where}", head)
        return (AddEffect(self.atom(expr, scope, where)),)

    def _inner_effects(self, expr: Token | SList, scope: Mapping[str, str], where: str) -> tuple[Effect, ...]:
        """Effects under `forall` / `when`, where a cost increase would be conditional (Fast Downward refuses
        those too)."""
        before = len(self.costs)
        effects = self.effects(expr, scope, where, top=False)
        if len(self.costs) != before:
            self.reader.unsupported(
                f"a cost increase inside 'forall' or 'when' is not supported {where}; Fast Downward only "
                "accepts (increase (total-cost) ...) at the top of an effect",
                expr,
            )
        return effects

    def cost_term(self, expr: Token | SList, scope: Mapping[str, str], where: str) -> CostTerm:
        """The amount of `(increase (total-cost) x)`: a non-negative number or a static function term."""
        rd = self.reader
        if isinstance(expr, Token):
            number = _number(expr)
            if number is None:
                rd.syntax(f"expected a number or a function term like (road-length ?a ?b) {where}, found "
                          f"{describe(expr)}", expr)
            if number < 0:
                rd.semantic(f"action costs must not be negative, found {expr} {where}", expr)
            return number
        if not expr or isinstance(expr[0], SList):
            rd.syntax(f"expected a function term like (road-length ?a ?b) {where}, found {describe(expr)}", expr)
        name = sys.intern(str(expr[0]))
        terms = tuple(self.term(arg, scope, where) for arg in expr[1:])
        self._check_function(name, terms, expr, scope, where)
        return AtomF(name, terms)

    def _check_function(
        self, name: str, terms: tuple[str, ...], expr: SList, scope: Mapping[str, str], where: str
    ) -> None:
        if self.functions is None:
            return
        rd = self.reader
        function = self.functions.get(name)
        if function is None or name == _COST_FUNCTION:
            rd.unsupported(
                f"numeric fluents are not supported: {describe(expr)} {where} is not a static cost function"
                f"{did_you_mean(name, self.functions)}",
                expr,
            )
        if len(terms) != function.arity:
            rd.semantic(f"function {name!r} takes {function.arity} argument(s) {function}, but {describe(expr)} "
                        f"has {len(terms)} {where}", expr)
        if self.types is not None:
            for term, token, (pvar, ptype) in zip(terms, expr[1:], function.params):
                self._check_arg(term, token, scope, name, pvar, ptype, where)

    # ------------------------------------------------------------------ init
    def init_atom(self, expr: Token | SList, where: str = "in :init") -> Atom | None:
        """A ground atom of `:init`; None for a function value `(= (road-length a b) 5)`, kept in `values`."""
        rd = self.reader
        if not isinstance(expr, SList) or not expr:
            rd.syntax(f"expected a ground atom like (on a b) {where}, found {describe(expr)}", expr)
        head = expr[0]
        if head == "=":
            self._init_value(expr, where)
            return None
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

    def _init_value(self, expr: SList, where: str) -> None:
        rd = self.reader
        term = expr[1] if len(expr) == 3 else None
        number = _number(expr[2]) if len(expr) == 3 and isinstance(expr[2], Token) else None
        if not isinstance(term, SList) or not term or isinstance(term[0], SList) or number is None:
            rd.unsupported(f"numeric fluents are not supported: {describe(expr)} {where}; only "
                           "(= (<function> <object>...) <number>) is read", expr)
        name = sys.intern(str(term[0]))
        terms = tuple(self.term(arg, {}, where) for arg in term[1:])
        if name == _COST_FUNCTION:
            if terms:
                rd.semantic(f"(total-cost) takes no arguments {where}", term)
        else:
            self._check_function(name, terms, term, {}, where)
        atom = Atom(name, terms)
        if atom in self.values and self.values[atom] != number:
            rd.semantic(f"{describe(term)} is given two values {where}: {self.values[atom]:g} and {number:g}", expr)
        self.values[atom] = number
