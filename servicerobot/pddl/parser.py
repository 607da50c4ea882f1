"""Parse PDDL domain and problem text into the object model, with line:column errors.

Syntax errors raise `PDDLParseError`; well-formed text that does not fit its domain raises
`PDDLSemanticError` (unknown names with "did you mean" hints, arities, types); valid PDDL beyond what
the package supports raises `UnsupportedFeatureError`.
"""

from __future__ import annotations

import functools
import gc
from os import PathLike
from pathlib import Path

from servicerobot.errors import PDDLParseError
from servicerobot.pddl._formulas import FormulaReader, article
from servicerobot.pddl._reader import Reader, describe
from servicerobot.pddl._suggest import did_you_mean
from servicerobot.pddl.features import KNOWN_REQUIREMENTS
from servicerobot.pddl.model import (
    ROOT_TYPE,
    TRUE,
    Action,
    Domain,
    Predicate,
    Problem,
    TypeHierarchy,
)
from servicerobot.pddl.sexpr import SList, Token, parse_sexpr

__all__ = ["load_domain", "load_problem", "parse_domain", "parse_problem", "read_pddl_file"]

_DOMAIN_SECTIONS = (":requirements", ":types", ":constants", ":predicates", ":functions", ":action")
_PROBLEM_SECTIONS = (":domain", ":requirements", ":objects", ":init", ":goal", ":metric")
_UNSUPPORTED_SECTIONS = {
    ":derived": "derived predicates (:derived)",
    ":durative-action": "durative actions (:durative-action)",
    ":constraints": "trajectory constraints (:constraints)",
    ":process": "processes (PDDL+)",
    ":event": "events (PDDL+)",
}
_ACTION_KEYS = (":parameters", ":precondition", ":effect")


def _without_gc(parse):
    """Run `parse` with the cyclic garbage collector paused: reading a large file builds millions of lists,
    which triggers full collections whose cost grows with the tree (parsing became quadratic); no cycles
    are made here, so nothing is lost."""

    @functools.wraps(parse)
    def wrapper(*args, **kwargs):
        if not gc.isenabled():
            return parse(*args, **kwargs)
        gc.disable()
        try:
            return parse(*args, **kwargs)
        finally:
            gc.enable()

    return wrapper


def _header(rd: Reader, expr: SList, kind: str) -> str:
    """Check `(define (<kind> NAME) ...)` and return NAME."""
    if not expr or expr[0] != "define":
        rd.syntax(f"expected '(define ({kind} <name>) ...)', found {describe(expr)}", expr)
    if len(expr) < 2 or not isinstance(expr[1], SList) or len(expr[1]) != 2 or isinstance(expr[1][0], SList):
        where = expr[1] if len(expr) > 1 else expr
        rd.syntax(f"expected '({kind} <name>)' after 'define', found {describe(where)}", where)
    if expr[1][0] != kind:
        other = "parse_problem" if kind == "domain" else "parse_domain"
        hint = f"; this looks like a {expr[1][0]}, use {other}" if expr[1][0] in ("domain", "problem") else ""
        rd.syntax(f"expected '({kind} <name>)' after 'define', found {describe(expr[1])}{hint}", expr[1])
    return rd.name(expr[1][1], f"the {kind} name")


def _sections(
    rd: Reader, expr: SList, known: tuple[str, ...], repeatable: str | None
) -> dict[str, list[SList]]:
    """Group the `(:keyword ...)` sections after the header; only `repeatable` may occur twice."""
    found: dict[str, list[SList]] = {}
    for section in expr[2:]:
        if not isinstance(section, SList) or not section or isinstance(section[0], SList):
            rd.syntax(f"expected a section like '(:keyword ...)', found {describe(section)}", section)
        key = section[0]
        if key in _UNSUPPORTED_SECTIONS:
            rd.unsupported(f"{_UNSUPPORTED_SECTIONS[key]} are not supported", section)
        if key not in known:
            rd.syntax(
                f"unknown section {str(key)!r}{did_you_mean(key, known)}; expected one of {', '.join(known)}",
                key,
            )
        if key in found and key != repeatable:
            rd.syntax(f"section {str(key)!r} appears twice", section)
        found.setdefault(str(key), []).append(section)
    return found


def _requirements(rd: Reader, sections: dict[str, list[SList]]) -> tuple[str, ...]:
    result: list[str] = []
    for section in sections.get(":requirements", ()):
        for flag in section[1:]:
            if isinstance(flag, SList) or not flag.startswith(":"):
                rd.syntax(f"expected a requirement flag like ':typing', found {describe(flag)}", flag)
            if flag not in KNOWN_REQUIREMENTS:
                rd.semantic(
                    f"unknown requirement {str(flag)!r}{did_you_mean(flag, KNOWN_REQUIREMENTS)}", flag
                )
            if flag not in result:
                result.append(str(flag))
    return tuple(result)


def _types(rd: Reader, sections: dict[str, list[SList]]) -> TypeHierarchy:
    parents: dict[str, str] = {}
    tokens: dict[str, Token] = {}
    for section in sections.get(":types", ()):
        for name, parent, token in rd.typed_list(section[1:], variables=False, what=":types"):
            if name == ROOT_TYPE:
                if parent != ROOT_TYPE:
                    rd.semantic(f"the root type 'object' cannot have a parent ({parent!r})", token)
                continue
            if name in parents and parents[name] != parent:
                rd.semantic(f"type {name!r} is declared twice, under {parents[name]!r} and {parent!r}", token)
            parents[name] = parent
            tokens[name] = token
    for parent in list(parents.values()):
        if parent != ROOT_TYPE and parent not in parents:
            parents[parent] = ROOT_TYPE  # a supertype used but not declared is a child of object
    hierarchy = TypeHierarchy(parents)
    for name, parent in parents.items():
        seen = [name]
        current = parent
        while current != ROOT_TYPE:
            if current in seen:
                rd.semantic(f"the types form a cycle: {' - '.join([*seen, current])}", tokens.get(name))
            seen.append(current)
            current = parents[current]
    return hierarchy


def _typed_names(
    rd: Reader, sections: list[SList], types: TypeHierarchy | None, what: str, known: dict[str, str]
) -> dict[str, str]:
    """Objects or constants: name -> type, with unknown types and clashing redeclarations refused."""
    result: dict[str, str] = {}
    for section in sections:
        for name, typ, token in rd.typed_list(section[1:], variables=False, what=what):
            if types is not None and typ not in types:
                rd.semantic(
                    f"{name!r} in {what} has unknown type {typ!r}{did_you_mean(typ, types.types)}", token
                )
            previous = result.get(name, known.get(name))
            if previous is not None and previous != typ:
                rd.semantic(
                    f"{name!r} is declared as {article(previous)} and as {article(typ)} in {what}", token
                )
            result[name] = typ
    return result


def _predicates(rd: Reader, sections: dict[str, list[SList]], fr: FormulaReader) -> dict[str, Predicate]:
    result: dict[str, Predicate] = {}
    for section in sections.get(":predicates", ()):
        for decl in section[1:]:
            if not isinstance(decl, SList) or not decl or isinstance(decl[0], SList):
                rd.syntax(
                    f"expected a predicate declaration like '(on ?x - item ?y - surface)', found "
                    f"{describe(decl)}",
                    decl,
                )
            name = rd.name(decl[0], "a predicate name")
            if name in result:
                rd.semantic(f"predicate {name!r} is declared twice", decl)
            params = fr.params(decl[1:], f"the parameters of predicate {name!r}")
            result[name] = Predicate(name, params)
    return result


def _functions(rd: Reader, sections: dict[str, list[SList]]) -> None:
    """Accept only the action-cost function `(total-cost)`; other functions are numeric fluents."""
    for section in sections.get(":functions", ()):
        items = section[1:]
        i = 0
        while i < len(items):
            item = items[i]
            if isinstance(item, SList) and list(item) == ["total-cost"]:
                i += 1
            elif item == "-" and i + 1 < len(items) and items[i + 1] == "number":
                i += 2
            else:
                rd.unsupported(
                    f"numeric fluents are not supported: function {describe(item)} in :functions", item
                )


def _action(rd: Reader, section: SList, fr: FormulaReader) -> Action:
    if len(section) < 2:
        rd.syntax("expected '(:action <name> :parameters (...) :precondition ... :effect ...)'", section)
    name = rd.name(section[1], "an action name")
    values: dict[str, Token | SList] = {}
    rest = section[2:]
    for i in range(0, len(rest), 2):
        key = rest[i]
        if isinstance(key, SList) or key not in _ACTION_KEYS:
            rd.syntax(
                f"unexpected {describe(key)} in action {name!r}{did_you_mean(str(key), _ACTION_KEYS)}; "
                "expected "
                f"one of {', '.join(_ACTION_KEYS)}",
                key,
            )
        if key in values:
            rd.syntax(f"{str(key)!r} appears twice in action {name!r}", key)
        if i + 1 >= len(rest):
            rd.syntax(f"{str(key)!r} in action {name!r} has no value", key)
        values[str(key)] = rest[i + 1]
    params_expr = values.get(":parameters")
    params = fr.params(params_expr, f"the parameters of action {name!r}") if params_expr is not None else ()
    scope = dict(params)
    pre_expr = values.get(":precondition")
    precondition = (
        fr.formula(pre_expr, scope, f"in the precondition of action {name!r}")
        if pre_expr is not None
        else TRUE
    )
    effect_expr = values.get(":effect")
    effects = (
        fr.effects(effect_expr, scope, f"in the effect of action {name!r}") if effect_expr is not None else ()
    )
    return Action(name, params, precondition, effects)


@_without_gc
def parse_domain(text: str, source: str = "") -> Domain:
    """Parse and check a `(define (domain ...))`.

    Raises:
        PDDLParseError: malformed text (with line and column).
        PDDLSemanticError: unknown predicates, types, constants or variables; arity or type errors.
        UnsupportedFeatureError: numeric fluents, derived predicates, `either` types, durative actions.
    """
    rd = Reader(text, source)
    expr = parse_sexpr(text, source)
    name = _header(rd, expr, "domain")
    sections = _sections(rd, expr, _DOMAIN_SECTIONS, repeatable=":action")
    requirements = _requirements(rd, sections)
    types = _types(rd, sections)
    constants = _typed_names(rd, sections.get(":constants", []), types, ":constants", {})
    fr = FormulaReader(rd, None, types, constants, object_word="constant")
    predicates = _predicates(rd, sections, fr)
    _functions(rd, sections)
    fr.predicates = predicates
    actions: dict[str, Action] = {}
    for section in sections.get(":action", ()):
        action = _action(rd, section, fr)
        if action.name in actions:
            rd.semantic(f"action {action.name!r} is defined twice", section)
        actions[action.name] = action
    return Domain(name, requirements, types, constants, predicates, actions)


@_without_gc
def parse_problem(text: str, domain: Domain | None = None, source: str = "") -> Problem:
    """Parse a `(define (problem ...))`; with a domain, also check it against the domain.

    Raises:
        PDDLParseError: malformed text (with line and column).
        PDDLSemanticError: with a domain: domain name mismatch, unknown predicates, objects or types,
            arity or type errors in :init and :goal.
        UnsupportedFeatureError: numeric fluents, timed initial literals, constraints.
    """
    rd = Reader(text, source)
    expr = parse_sexpr(text, source)
    name = _header(rd, expr, "problem")
    sections = _sections(rd, expr, _PROBLEM_SECTIONS, repeatable=None)
    domain_sections = sections.get(":domain")
    if not domain_sections:
        rd.syntax(f"problem {name!r} has no '(:domain <name>)' section", expr)
    domain_expr = domain_sections[0]
    if len(domain_expr) != 2:
        rd.syntax(f"expected '(:domain <name>)', found {describe(domain_expr)}", domain_expr)
    domain_name = rd.name(domain_expr[1], "the domain name")
    if domain is not None and domain_name != domain.name:
        rd.semantic(
            f"problem {name!r} is for domain {domain_name!r}, but the domain given is {domain.name!r}",
            domain_expr[1],
        )
    _requirements(rd, sections)
    types = domain.types if domain is not None else None
    constants = domain.constants if domain is not None else {}
    objects = _typed_names(rd, sections.get(":objects", []), types, ":objects", constants)
    if domain is not None:
        fr = FormulaReader(rd, domain.predicates, types, {**constants, **objects}, object_word="object")
    else:
        fr = FormulaReader(rd, None, None, None, object_word="object")
    init = set()
    for section in sections.get(":init", ()):
        for item in section[1:]:
            atom = fr.init_atom(item)
            if atom is not None:
                init.add(atom)
    goal_sections = sections.get(":goal")
    if not goal_sections:
        rd.syntax(f"problem {name!r} has no '(:goal ...)' section", expr)
    goal_expr = goal_sections[0]
    if len(goal_expr) != 2:
        rd.syntax(
            f"expected '(:goal <formula>)' with exactly one formula, found {describe(goal_expr)}", goal_expr
        )
    goal = fr.formula(goal_expr[1], {}, "in :goal")
    return Problem(name, domain_name, objects, frozenset(init), goal)


def read_pddl_file(path: str | PathLike) -> str:
    """The text of a PDDL file, decoded as UTF-8.

    Raises:
        PDDLParseError: the file is not UTF-8 text (the message names the line and column of the first bad
            byte). OSError: it cannot be read.
    """
    data = Path(path).read_bytes()
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError as error:
        start = error.start
        line = data.count(b"\n", 0, start) + 1
        column = start - (data.rfind(b"\n", 0, start) + 1) + 1
        raise PDDLParseError(
            f"not UTF-8 text: byte 0x{data[start]:02x} cannot be decoded ({error.reason}); PDDL files must be "
            "UTF-8 (or ASCII) text: is this a binary file?",
            line,
            column,
            str(path),
        ) from None


def load_domain(path: str | PathLike) -> Domain:
    """Read and parse a domain file; errors name the file."""
    return parse_domain(read_pddl_file(path), source=str(path))


def load_problem(path: str | PathLike, domain: Domain | None = None) -> Problem:
    """Read and parse a problem file (checked against `domain` when given); errors name the file."""
    return parse_problem(read_pddl_file(path), domain, source=str(path))
