"""Write domains, problems and formulas back to PDDL text that Fast Downward and VAL accept.

The output re-parses to an equal object: `parse_problem(write_problem(p), d) == p`.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping

from servicerobot.pddl.model import (
    ROOT_TYPE,
    AddEffect,
    And,
    AtomF,
    CostTerm,
    DelEffect,
    Domain,
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
    Problem,
    Truth,
    WhenEffect,
)

__all__ = ["format_effects", "format_formula", "write_domain", "write_problem"]


def _params(params: Params) -> str:
    return " ".join(f"{var} - {typ}" for var, typ in params)


def _atom(predicate: str, terms: Iterable[str]) -> str:
    terms = tuple(terms)
    return f"({predicate}{' ' if terms else ''}{' '.join(terms)})"


def format_formula(f: Formula) -> str:
    """One-line PDDL for a formula: `(and (on ?i ?s) (not (closed ?c)))`; TRUE is `(and)`, FALSE `(or)`."""
    if isinstance(f, AtomF):
        return _atom(f.predicate, f.terms)
    if isinstance(f, Not):
        return f"(not {format_formula(f.f)})"
    if isinstance(f, And):
        return f"(and {' '.join(format_formula(p) for p in f.parts)})"
    if isinstance(f, Or):
        return f"(or {' '.join(format_formula(p) for p in f.parts)})"
    if isinstance(f, Imply):
        return f"(imply {format_formula(f.a)} {format_formula(f.b)})"
    if isinstance(f, Exists):
        return f"(exists ({_params(f.params)}) {format_formula(f.body)})"
    if isinstance(f, Forall):
        return f"(forall ({_params(f.params)}) {format_formula(f.body)})"
    if isinstance(f, Equals):
        return f"(= {f.a} {f.b})"
    if isinstance(f, Truth):
        return "(and)" if f.value else "(or)"
    raise TypeError(f"not a formula: {f!r}")


def _effect(e: Effect) -> str:
    if isinstance(e, AddEffect):
        return format_formula(e.atom)
    if isinstance(e, DelEffect):
        return f"(not {format_formula(e.atom)})"
    if isinstance(e, ForallEffect):
        return f"(forall ({_params(e.params)}) {format_effects(e.effects)})"
    if isinstance(e, WhenEffect):
        return f"(when {format_formula(e.condition)} {format_effects(e.effects)})"
    raise TypeError(f"not an effect: {e!r}")


def _number(value: float) -> str:
    return str(int(value)) if float(value).is_integer() else repr(float(value))


def _cost(term: CostTerm) -> str:
    amount = format_formula(term) if isinstance(term, AtomF) else _number(term)
    return f"(increase (total-cost) {amount})"


def format_effects(effects: tuple[Effect, ...], cost: tuple[CostTerm, ...] = ()) -> str:
    """One-line PDDL for an effect tuple (and cost increases): the single effect, or `(and ...)` around
    several (or none)."""
    parts = [_effect(e) for e in effects] + [_cost(c) for c in cost]
    if len(parts) == 1:
        return parts[0]
    return f"(and {' '.join(parts)})" if parts else "(and)"


def _grouped(names: Mapping[str, str], typed: bool) -> list[str]:
    """`a b - t` lines, one per type, in first-appearance order; untyped when `typed` is false."""
    if not typed:
        return [" ".join(names)] if names else []
    groups: dict[str, list[str]] = {}
    for name, typ in names.items():
        groups.setdefault(typ, []).append(name)
    return [f"{' '.join(members)} - {typ}" for typ, members in groups.items()]


def write_domain(domain: Domain) -> str:
    """The PDDL text of a domain."""
    typed = bool(domain.types.parents) or ":typing" in domain.requirements
    out = [f"(define (domain {domain.name})"]
    if domain.requirements:
        out.append(f"  (:requirements {' '.join(domain.requirements)})")
    if domain.types.parents:
        types = {t: p for t, p in domain.types.parents.items() if t != ROOT_TYPE}
        out.append("  (:types")
        out.extend(f"    {line}" for line in _grouped(types, typed=True))
        out.extend(f"    {t} - {p}" for t, ps in domain.types.more_parents.items() for p in ps)
        out.append("  )")
    if domain.constants:
        out.append("  (:constants")
        out.extend(f"    {line}" for line in _grouped(domain.constants, typed))
        out.append("  )")
    out.append("  (:predicates")
    for predicate in domain.predicates.values():
        params = _params(predicate.params) if typed else " ".join(var for var, _ in predicate.params)
        out.append(f"    ({predicate.name}{' ' if params else ''}{params})")
    out.append("  )")
    if domain.functions:
        out.append("  (:functions")
        for function in domain.functions.values():
            params = _params(function.params) if typed else " ".join(var for var, _ in function.params)
            out.append(f"    ({function.name}{' ' if params else ''}{params}) - number")
        out.append("  )")
    for rule in domain.derived.values():
        params = _params(rule.params) if typed else " ".join(var for var, _ in rule.params)
        out.append(f"  (:derived ({rule.name}{' ' if params else ''}{params})")
        out.append(f"    {format_formula(rule.body)})")
    for action in domain.actions.values():
        params = _params(action.params) if typed else " ".join(var for var, _ in action.params)
        out.append(f"  (:action {action.name}")
        out.append(f"    :parameters ({params})")
        out.append(f"    :precondition {format_formula(action.precondition)}")
        out.append(f"    :effect {format_effects(action.effects, action.cost)})")
    out.append(")")
    return "\n".join(out) + "\n"


def write_problem(problem: Problem) -> str:
    """The PDDL text of a problem: objects grouped by type, init atoms sorted, one per line."""
    typed = any(t != ROOT_TYPE for t in problem.objects.values())
    out = [f"(define (problem {problem.name})", f"  (:domain {problem.domain_name})"]
    out.append("  (:objects")
    out.extend(f"    {line}" for line in _grouped(problem.objects, typed))
    out.append("  )")
    out.append("  (:init")
    out.extend(f"    {atom}" for atom in sorted(str(atom) for atom in problem.init))
    out.extend(f"    (= {atom} {_number(value)})" for atom, value in sorted(problem.values.items(), key=lambda kv: str(kv[0])))
    out.append("  )")
    out.append(f"  (:goal {format_formula(problem.goal)})")
    if problem.metric:
        out.append(f"  (:metric {problem.metric})")
    out.append(")")
    return "\n".join(out) + "\n"
