"""Parse PDDL domain and problem text into the object model, with line:column errors.

Syntax errors raise `PDDLParseError`; well-formed text that does not fit its domain raises
`PDDLSemanticError` (unknown names with "did you mean" hints, arities, types); valid PDDL beyond what
the package supports raises `UnsupportedFeatureError`.
"""

from __future__ import annotations

import functools
import gc
from os import PathLike

from servicerobot.errors import PDDLError, PDDLParseError, PDDLSemanticError
from servicerobot.limits import read_bounded
from servicerobot.pddl._formulas import FormulaReader, PDDLTypeError, article
from servicerobot.pddl._reader import Reader, describe
from servicerobot.pddl._suggest import did_you_mean
from servicerobot.pddl.derived import strata
from servicerobot.pddl.features import KNOWN_REQUIREMENTS
from servicerobot.pddl.grounding import substitute
from servicerobot.pddl.model import (
    ROOT_TYPE,
    TRUE,
    Action,
    Derived,
    Domain,
    Function,
    Or,
    Predicate,
    Problem,
    TypeHierarchy,
    effect_predicates,
    either_members,
)
from servicerobot.pddl.sexpr import SList, Token, parse_sexpr

__all__ = ["load_domain", "load_problem", "parse_domain", "parse_problem", "read_pddl_file"]

_DOMAIN_SECTIONS = (":requirements", ":types", ":constants", ":predicates", ":functions", ":action", ":derived")
_PROBLEM_SECTIONS = (":domain", ":requirements", ":objects", ":init", ":goal", ":metric")
_METRIC = "minimize (total-cost)"
_UNSUPPORTED_SECTIONS = {
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
    rd: Reader, expr: SList, known: tuple[str, ...], repeatable: tuple[str, ...]
) -> dict[str, list[SList]]:
    """Group the `(:keyword ...)` sections after the header; only the `repeatable` ones may occur twice."""
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
        if key in found and key not in repeatable:
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
    more: dict[str, tuple[str, ...]] = {}  # a type listed under several parents is a subtype of each
    tokens: dict[str, Token] = {}
    for section in sections.get(":types", ()):
        for name, parent, token in rd.typed_list(section[1:], variables=False, what=":types"):
            if either_members(parent) is not None:
                rd.unsupported(f"type {name!r} has the union {parent!r} as its parent; '(either ...)' is "
                               "supported in parameters, :constants and :objects, not in :types", token)
            if name == ROOT_TYPE:
                if parent != ROOT_TYPE:
                    rd.semantic(f"the root type 'object' cannot have a parent ({parent!r})", token)
                continue
            if name in parents and parents[name] != parent:
                if parents[name] == ROOT_TYPE:  # first listed without a parent
                    parents[name] = parent
                elif parent != ROOT_TYPE and parent not in more.get(name, ()):
                    more[name] = (*more.get(name, ()), parent)
                continue
            parents[name] = parent
            tokens[name] = token
    for parent in [*parents.values(), *(p for ps in more.values() for p in ps)]:
        if parent != ROOT_TYPE and parent not in parents:
            parents[parent] = ROOT_TYPE  # a supertype used but not declared is a child of object
    _refuse_cycles(rd, parents, more, tokens)
    return TypeHierarchy(parents, more)


def _refuse_cycles(
    rd: Reader, parents: dict[str, str], more: dict[str, tuple[str, ...]], tokens: dict[str, Token]
) -> None:
    """Raise if a type is its own ancestor: one iterative depth-first walk over every parent link, O(types)."""
    state: dict[str, bool] = {}  # True while on the walk's current path, False once finished
    for start, first in parents.items():
        if start in state:
            continue
        state[start] = True
        stack = [(start, iter((first, *more.get(start, ()))))]
        while stack:
            name, ups = stack[-1]
            for parent in ups:
                if parent == ROOT_TYPE:
                    continue
                if state.get(parent):
                    rd.semantic(f"the types form a cycle through {parent!r} and {name!r}; a type cannot be its "
                                "own ancestor: give one of them another parent in :types", tokens.get(parent))
                if parent not in state:
                    state[parent] = True
                    stack.append((parent, iter((parents[parent], *more.get(parent, ())))))
                    break
            else:
                state[name] = False
                stack.pop()


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
            params = fr.params(decl[1:], f"the parameters of predicate {name!r}", repeats=True)
            result[name] = Predicate(name, params)
    return result


def _functions(rd: Reader, sections: dict[str, list[SList]], fr: FormulaReader) -> dict[str, Function]:
    """Numeric function declarations, each optionally followed by `- number`. They may only serve as static
    action costs: `(total-cost)` and functions whose values :init gives (checked where they are used)."""
    result: dict[str, Function] = {}
    for section in sections.get(":functions", ()):
        items = section[1:]
        for i, item in enumerate(items):
            if item == "-":
                typ = items[i + 1] if i + 1 < len(items) else None
                if i == 0 or not isinstance(items[i - 1], SList) or typ != "number":
                    rd.unsupported(
                        f"only numeric functions ('- number') are supported in :functions, found "
                        f"{describe(typ) if typ is not None else 'nothing'} after '-'",
                        item,
                    )
                continue
            if isinstance(item, Token) and i > 0 and items[i - 1] == "-":
                continue  # the 'number' after '-'
            if not isinstance(item, SList) or not item or isinstance(item[0], SList):
                rd.syntax(f"expected a function declaration like '(road-length ?a ?b - place)', found "
                          f"{describe(item)}", item)
            name = rd.name(item[0], "a function name")
            if name in result:
                rd.semantic(f"function {name!r} is declared twice", item)
            params = fr.params(item[1:], f"the parameters of function {name!r}", repeats=True)
            if name == "total-cost" and params:
                rd.semantic("(total-cost) takes no arguments", item)
            result[name] = Function(name, params)
    return result


def _derived(
    rd: Reader, sections: dict[str, list[SList]], fr: FormulaReader, predicates: dict[str, Predicate]
) -> dict[str, Derived]:
    """`(:derived (name ?x - t ...) body)` rules; an undeclared head is declared from the rule (as Fast
    Downward does). Several rules for one predicate are joined with `or`."""
    result: dict[str, Derived] = {}
    for section in sections.get(":derived", ()):
        if len(section) != 3 or not isinstance(section[1], SList) or not section[1] \
                or isinstance(section[1][0], SList):
            rd.syntax(f"expected '(:derived (<predicate> ?x ...) <formula>)', found {describe(section)}", section)
        head = section[1]
        name = rd.name(head[0], "a derived predicate name")
        params = fr.params(head[1:], f"the parameters of derived predicate {name!r}")
        declared = predicates.get(name)
        if declared is None:
            declared = predicates[name] = Predicate(name, params)
        elif len(declared.params) != len(params):
            rd.semantic(f"derived predicate {name!r} has {len(params)} parameter(s), but it is declared as "
                        f"{declared}", head)
        # an untyped head parameter takes the declared type
        params = tuple((var, typ if typ != ROOT_TYPE else dtyp) for (var, typ), (_, dtyp)
                       in zip(params, declared.params))
        body = fr.formula(section[2], dict(params), f"in derived predicate {name!r}")
        previous = result.get(name)
        if previous is not None:
            renamed = substitute(body, {v: pv for (v, _), (pv, _) in zip(params, previous.params)})
            body = Or((previous.body, renamed))
            params = previous.params
        result[name] = Derived(name, params, body)
    return result


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
    return Action(name, params, precondition, effects, tuple(fr.costs) if effect_expr is not None else ())


@_without_gc
def parse_domain(text: str, source: str = "", strict: bool = True) -> Domain:
    """Parse and check a `(define (domain ...))`.

    With `strict=False` an argument whose type cannot fit its predicate's parameter (in a precondition,
    effect, condition or derived rule) is read as written, as Fast Downward reads it, and named in
    `Domain.warnings` instead of raising; every other check stays.

    Raises:
        PDDLParseError: malformed text (with line and column).
        PDDLSemanticError: unknown predicates, types, constants or variables; arity or (when strict) type
            errors.
        UnsupportedFeatureError: numeric fluents beyond static action costs, an `either` type as the parent
            of a type in :types, durative actions.
    """
    try:
        return _parse_domain(text, source, strict)
    except PDDLTypeError as error:
        raise PDDLTypeError(f"{error}; if the domain is meant as written, parse_domain(..., strict=False) reads "
                            "it as Fast Downward does", error.where) from None


def _parse_domain(text: str, source: str, strict: bool) -> Domain:
    rd = Reader(text, source)
    expr = parse_sexpr(text, source)
    name = _header(rd, expr, "domain")
    sections = _sections(rd, expr, _DOMAIN_SECTIONS, repeatable=(":action", ":derived"))
    requirements = _requirements(rd, sections)
    types = _types(rd, sections)
    constants = _typed_names(rd, sections.get(":constants", []), types, ":constants", {})
    fr = FormulaReader(rd, None, types, constants, object_word="constant", strict=strict)
    predicates = _predicates(rd, sections, fr)
    fr.functions = _functions(rd, sections, fr)
    fr.predicates = predicates
    derived = _derived(rd, sections, fr, predicates)
    actions: dict[str, Action] = {}
    for section in sections.get(":action", ()):
        action = _action(rd, section, fr)
        if action.name in actions:
            rd.semantic(f"action {action.name!r} is defined twice", section)
        changed = effect_predicates(action.effects) & derived.keys()
        if changed:
            rd.semantic(f"action {action.name!r} changes the derived predicate {min(changed)!r}; derived "
                        "predicates follow from their rule and no effect may set them", section)
        if action.cost and "total-cost" not in fr.functions:
            fr.functions["total-cost"] = Function("total-cost")  # used but not declared: Fast Downward agrees
        actions[action.name] = action
    domain = Domain(name, requirements, types, constants, predicates, actions, fr.functions, derived,
                    tuple(fr.warnings))
    if derived:
        try:
            strata(domain)
        except PDDLSemanticError as error:
            rd.semantic(str(error), sections[":derived"][0])
    return domain


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
    sections = _sections(rd, expr, _PROBLEM_SECTIONS, repeatable=())
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
        fr = FormulaReader(rd, domain.predicates, types, {**constants, **objects}, object_word="object",
                           functions=domain.functions)
    else:
        fr = FormulaReader(rd, None, None, None, object_word="object")
    init = set()
    for section in sections.get(":init", ()):
        for item in section[1:]:
            atom = fr.init_atom(item)
            if atom is not None:
                if domain is not None and atom.predicate in domain.derived:
                    rd.semantic(f"{atom} in :init is a derived predicate; it follows from its rule and cannot "
                                "be given", item)
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
    return Problem(name, domain_name, objects, frozenset(init), goal, fr.values, _metric(rd, sections))


def _metric(rd: Reader, sections: dict[str, list[SList]]) -> str:
    """`minimize (total-cost)` or ""; any other metric is a numeric planning feature."""
    for section in sections.get(":metric", ()):
        text = " ".join(str(x) if isinstance(x, Token) else f"({' '.join(map(str, x))})" for x in section[1:])
        if text != _METRIC:
            rd.unsupported(f"only the metric '{_METRIC}' is supported, found {describe(section)}", section)
        return _METRIC
    return ""


MAX_PDDL_BYTES = 8 << 20  # a PDDL file read from disk (a 100,000-block problem is 5 MB)


def read_pddl_file(path: str | PathLike, cap: int = MAX_PDDL_BYTES) -> str:
    """The text of a PDDL file, decoded as UTF-8, read through `limits.read_bounded`: a regular file of at
    most `cap` bytes (a FIFO or a device such as /dev/zero is refused by what it is, unread).

    Raises:
        PDDLParseError: the file is not UTF-8 text (the message names the line and column of the first bad
            byte). PDDLError: it is not a regular file, or too large. OSError: it cannot be read.
    """
    data = read_bounded(path, cap, "PDDL file", PDDLError)
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


def load_domain(path: str | PathLike, strict: bool = True) -> Domain:
    """Read and parse a domain file; errors and warnings name the file (`strict` as in `parse_domain`)."""
    return parse_domain(read_pddl_file(path), source=str(path), strict=strict)


def load_problem(path: str | PathLike, domain: Domain | None = None) -> Problem:
    """Read and parse a problem file (checked against `domain` when given); errors name the file."""
    return parse_problem(read_pddl_file(path), domain, source=str(path))
