"""Compile non-recursive derived predicates away for one problem, before a planner sees the task.

Why: Fast Downward turns a derived predicate, and every `forall`/`exists` in a precondition or goal, into
axioms, and its relaxation heuristics (FF, add, hmax, landmarks) see little through a negated axiom. A
small office domain whose `push` needs `(empty ?c)`, derived as `(forall (?x) (not (inside ?x ?c)))`,
has no plan within 60 s with lama-first (the search grows to gigabytes), while the same task written
with the condition spelled out as ground literals is solved in a fraction of a second.

What: each derived predicate that does not depend on itself (through other rules) is inlined where it
is used: in action preconditions, `when` conditions and the goal, its rule body with the rule's
parameters replaced by the arguments. Every quantifier in those formulas is then expanded over the
problem's objects of its type into a conjunction (`forall`) or disjunction (`exists`); the objects it
names become domain `:constants` (and leave the problem's `:objects`), so the result has no axioms.
Last, each negated fluent atom becomes a positive atom of a complement predicate (`not-inside`) that the
actions keep equal to the negation (`_complement`): Fast Downward's translator turns a negative condition
on one of its multi-valued variables into a disjunction of the variable's other values and multiplies
the operator out, and the eight `(not (inside <item> ?c))` of the office `push` exhaust its memory that
way. Action names and parameters are unchanged, so a plan for the compiled task is a plan for the
original one.

Where a quantified atom can never hold because an object's type does not fit the predicate (the
`forall (?x - object)` above ranges over rooms and robots too), the literal is evaluated away; this uses
the domain's typing, so it is done only for a domain that reads strictly (no typing warnings).

Left as they are: recursive derived predicates (`above` from `on`; Fast Downward evaluates them as
axioms), and the rules they use. The compilation gives up (returns None, the task goes to the planner
unchanged) when no derived predicate can be inlined, when an argument's type is wider than the rule's
parameter, or when the expansion would exceed `limit` atoms.
"""

from __future__ import annotations

import dataclasses
import itertools
from collections.abc import Mapping

from servicerobot.pddl.atoms import Atom
from servicerobot.pddl.model import (
    FALSE,
    TRUE,
    Action,
    AddEffect,
    And,
    AtomF,
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
    Problem,
    Truth,
    WhenEffect,
    effect_predicates,
)

__all__ = ["DEFAULT_LIMIT", "compile_derived", "recursive_derived"]

DEFAULT_LIMIT = 50_000
"""The most atoms the compiled preconditions, conditions and goal may hold together."""


class _GiveUp(Exception):
    """The task cannot (or should not) be compiled; the caller leaves it as it is."""


def _uses(f: Formula, names: Mapping[str, object], out: set[str]) -> None:
    """Add to `out` the predicates of `names` that occur in `f`."""
    if isinstance(f, AtomF):
        if f.predicate in names:
            out.add(f.predicate)
    elif isinstance(f, Not):
        _uses(f.f, names, out)
    elif isinstance(f, Imply):
        _uses(f.a, names, out)
        _uses(f.b, names, out)
    elif isinstance(f, (Exists, Forall)):
        _uses(f.body, names, out)
    elif isinstance(f, (And, Or)):
        for part in f.parts:
            _uses(part, names, out)


def recursive_derived(domain: Domain) -> frozenset[str]:
    """The derived predicates that depend on themselves through the domain's rules."""
    direct: dict[str, set[str]] = {}
    for name, rule in domain.derived.items():
        direct[name] = set()
        _uses(rule.body, domain.derived, direct[name])
    found = set()
    for start, uses in direct.items():
        seen, frontier = set(), list(uses)
        while frontier:
            name = frontier.pop()
            if name == start:
                found.add(start)
                break
            if name not in seen:
                seen.add(name)
                frontier.extend(direct[name])
    return frozenset(found)


def _and(parts: list[Formula]) -> Formula:
    out: list[Formula] = []
    for part in parts:
        if part == FALSE:
            return FALSE
        if part == TRUE:
            continue
        out.extend(part.parts if isinstance(part, And) else (part,))
    if not out:
        return TRUE
    return out[0] if len(out) == 1 else And(tuple(out))


def _or(parts: list[Formula]) -> Formula:
    out: list[Formula] = []
    for part in parts:
        if part == TRUE:
            return TRUE
        if part == FALSE:
            continue
        out.extend(part.parts if isinstance(part, Or) else (part,))
    if not out:
        return FALSE
    return out[0] if len(out) == 1 else Or(tuple(out))


class _Compiler:
    def __init__(self, domain: Domain, problem: Problem, inline: frozenset[str], limit: int):
        self.domain = domain
        self.objects = {**problem.objects, **domain.constants}
        self.inline = inline
        self.limit = limit
        self.atoms = 0
        self.named: set[str] = set()  # problem objects the expansion wrote into the domain
        self.typed = not domain.warnings  # typing can be trusted to rule atoms out

    def _fits(self, obj: str, typ: str) -> bool:
        return self.domain.types.is_subtype(self.objects[obj], typ)

    def formula(self, f: Formula, env: Mapping[str, str], types: Mapping[str, str]) -> Formula:
        """`f` with quantifiers expanded and inlinable derived atoms replaced, under `env` (variable ->
        object for expanded quantifiers); `types` are the types of the variables still free (action and
        `forall`-effect parameters)."""
        if isinstance(f, AtomF):
            terms = tuple(env.get(t, t) for t in f.terms)
            if f.predicate in self.inline:
                return self._inline(f.predicate, terms, types)
            return self._atom(f.predicate, terms)
        if isinstance(f, Truth):
            return f
        if isinstance(f, Equals):
            a, b = env.get(f.a, f.a), env.get(f.b, f.b)
            if a == b:
                return TRUE
            if not a.startswith("?") and not b.startswith("?"):
                return FALSE
            return Equals(a, b)
        if isinstance(f, Not):
            inner = self.formula(f.f, env, types)
            return Truth(not inner.value) if isinstance(inner, Truth) else Not(inner)
        if isinstance(f, Imply):
            return _or([self.formula(Not(f.a), env, types), self.formula(f.b, env, types)])
        if isinstance(f, (And, Or)):
            parts = [self.formula(p, env, types) for p in f.parts]
            return _and(parts) if isinstance(f, And) else _or(parts)
        if isinstance(f, (Exists, Forall)):
            bindings = [dict(env)]
            for var, typ in f.params:
                members = self.domain.objects_of_type(self.objects, typ)
                bindings = [{**b, var: o} for b in bindings for o in members]
                if len(bindings) > self.limit:
                    raise _GiveUp(f"a quantifier over {len(bindings)} bindings")
            # every term left after substitution is a free variable of the action (or `forall` effect)
            parts = [self.formula(f.body, b, types) for b in bindings]
            return _and(parts) if isinstance(f, Forall) else _or(parts)
        raise _GiveUp(f"cannot compile {f!r}")

    def _atom(self, predicate: str, terms: tuple[str, ...]) -> Formula:
        signature = self.domain.predicates.get(predicate)
        if self.typed and signature is not None and len(signature.params) == len(terms):
            for term, (_, typ) in zip(terms, signature.params):
                if term in self.objects and not self._fits(term, typ):
                    return FALSE  # an object of that type never fills this argument
        self.atoms += 1
        if self.atoms > self.limit:
            raise _GiveUp(f"more than {self.limit} atoms")
        self.named.update(t for t in terms if t in self.objects)
        return AtomF(predicate, terms)

    def _inline(self, predicate: str, terms: tuple[str, ...], types: Mapping[str, str]) -> Formula:
        rule = self.domain.derived[predicate]
        if len(rule.params) != len(terms):
            raise _GiveUp(f"{predicate} used with {len(terms)} arguments")
        binding: dict[str, str] = {}
        for term, (var, typ) in zip(terms, rule.params):
            if term in self.objects:
                if not self._fits(term, typ):
                    return FALSE  # the rule does not cover this object: the derived atom is false
            elif term.startswith("?") and not self.domain.types.is_subtype(types.get(term, "object"), typ):
                raise _GiveUp(f"{term} may be an object outside {typ}, the type of {predicate}'s {var}")
            binding[var] = term
        return self.formula(rule.body, binding, types)

    def effects(self, effects: tuple[Effect, ...], types: Mapping[str, str]) -> tuple[Effect, ...]:
        out: list[Effect] = []
        for e in effects:
            if isinstance(e, ForallEffect):
                inner = self.effects(e.effects, {**types, **dict(e.params)})
                if inner:
                    out.append(ForallEffect(e.params, inner))
            elif isinstance(e, WhenEffect):
                condition = _nnf(self.formula(e.condition, {}, types))
                if condition == TRUE:
                    out.extend(self.effects(e.effects, types))
                elif condition != FALSE:
                    out.append(WhenEffect(condition, self.effects(e.effects, types)))
            else:
                out.append(e)
        return tuple(out)


def _nnf(f: Formula, positive: bool = True) -> Formula:
    """`f` (quantifier- and imply-free) with negations pushed down to atoms and equalities."""
    if isinstance(f, Not):
        return _nnf(f.f, not positive)
    if isinstance(f, (And, Or)):
        parts = [_nnf(p, positive) for p in f.parts]
        return _and(parts) if isinstance(f, And) == positive else _or(parts)
    if isinstance(f, Truth):
        return f if positive else Truth(not f.value)
    return f if positive else Not(f)


def _negated(f: Formula, out: set[str]) -> None:
    """Add to `out` the predicates of the negated atoms of an NNF formula."""
    if isinstance(f, Not) and isinstance(f.f, AtomF):
        out.add(f.f.predicate)
    elif isinstance(f, (And, Or)):
        for part in f.parts:
            _negated(part, out)


def _positive(f: Formula, complement: Mapping[str, str]) -> Formula:
    """An NNF formula with each `(not (p ...))` of a complemented `p` written `(not-p ...)`."""
    if isinstance(f, Not) and isinstance(f.f, AtomF) and f.f.predicate in complement:
        return AtomF(complement[f.f.predicate], f.f.terms)
    if isinstance(f, (And, Or)):
        return type(f)(tuple(_positive(p, complement) for p in f.parts))
    return f


def _may_equal(a: tuple[str, ...], b: tuple[str, ...]) -> Formula:
    """When two argument tuples name the same objects: TRUE, FALSE or a condition on equalities."""
    parts: list[Formula] = []
    for x, y in zip(a, b):
        if x == y:
            continue
        if not x.startswith("?") and not y.startswith("?"):
            return FALSE
        parts.append(Equals(x, y))
    return _and(parts)


def _complement_effects(effects: tuple[Effect, ...], complement: Mapping[str, str]) -> tuple[Effect, ...]:
    """Top-level STRIPS effects plus those keeping each `not-p` the negation of `p`.

    An atom both deleted and added stays true (PDDL applies deletes first), so the complement's add for
    a delete happens only when no add of the action names the same atom.
    """
    adds = [e.atom for e in effects if isinstance(e, AddEffect)]
    out = list(effects)
    for e in effects:
        if isinstance(e, AddEffect) and e.atom.predicate in complement:
            out.append(DelEffect(AtomF(complement[e.atom.predicate], e.atom.terms)))
        elif isinstance(e, DelEffect) and e.atom.predicate in complement:
            clash = _or([_may_equal(e.atom.terms, a.terms) for a in adds if a.predicate == e.atom.predicate])
            add = AddEffect(AtomF(complement[e.atom.predicate], e.atom.terms))
            if clash == FALSE:
                out.append(add)
            elif clash != TRUE:
                out.append(WhenEffect(_nnf(clash, False), (add,)))
    return tuple(out)


def _complement(domain: Domain, problem: Problem, limit: int) -> tuple[Domain, Problem]:
    """Negative literals of fluents replaced by complement predicates `not-p` that the actions maintain.

    Fast Downward groups mutually exclusive atoms into one variable, and it compiles a negative condition
    on such a variable into a disjunction of its other values, multiplying the operator's other conditions
    out: for the office task's eight `(not (inside <item> ?c))` that product exhausts memory in the
    translator. A positive complement atom has no such cost. Done only for predicates that the actions
    change in plain (not `forall`/`when`) effects, with typing to be trusted, and within `limit` atoms.
    """
    if domain.warnings:
        return domain, problem
    formulas = [a.precondition for a in domain.actions.values()] + [problem.goal]
    negated: set[str] = set()
    for f in formulas:
        _negated(f, negated)
    for action in domain.actions.values():
        for e in action.effects:
            if isinstance(e, WhenEffect):
                _negated(e.condition, negated)
    nested: set[str] = set()
    for action in domain.actions.values():
        nested |= effect_predicates(tuple(e for e in action.effects if isinstance(e, (ForallEffect, WhenEffect))))
    fluents = set().union(*(effect_predicates(a.effects) for a in domain.actions.values()))
    taken = set(domain.predicates) | set(domain.functions) | set(domain.types.types)
    objects = {**problem.objects, **domain.constants}
    complement: dict[str, str] = {}
    init = set(problem.init)
    for name in sorted(negated & fluents - nested - set(domain.derived)):
        params = domain.predicates[name].params
        members = [domain.objects_of_type(objects, typ) for _, typ in params]
        size = 1
        for m in members:
            size *= len(m)
        if size > limit:
            continue
        new, n = f"not-{name}", 1
        while new in taken:
            n += 1
            new = f"not{n}-{name}"
        taken.add(new)
        complement[name] = new
        init |= {Atom(new, args) for args in itertools.product(*members) if Atom(name, args) not in problem.init}
    if not complement:
        return domain, problem

    def condition(f: Formula) -> Formula:
        return _positive(f, complement)

    def effects(es: tuple[Effect, ...]) -> tuple[Effect, ...]:
        out = []
        for e in es:
            if isinstance(e, WhenEffect):
                e = WhenEffect(condition(e.condition), effects(e.effects))
            elif isinstance(e, ForallEffect):
                e = ForallEffect(e.params, effects(e.effects))
            out.append(e)
        return tuple(out)

    actions = {
        name: dataclasses.replace(a, precondition=condition(a.precondition),
                                  effects=_complement_effects(effects(a.effects), complement))
        for name, a in domain.actions.items()
    }
    predicates = dict(domain.predicates)
    for name, new in complement.items():
        predicates[new] = dataclasses.replace(domain.predicates[name], name=new)
    return (dataclasses.replace(domain, predicates=predicates, actions=actions),
            dataclasses.replace(problem, init=frozenset(init), goal=condition(problem.goal)))


def _kept_rules(domain: Domain, keep: frozenset[str]) -> set[str]:
    """`keep` and the derived predicates their rules use, transitively."""
    kept, frontier = set(keep), list(keep)
    while frontier:
        used: set[str] = set()
        _uses(domain.derived[frontier.pop()].body, domain.derived, used)
        for name in used - kept:
            kept.add(name)
            frontier.append(name)
    return kept


def _requirements(requirements: tuple[str, ...], derived_left: bool) -> tuple[str, ...]:
    out = [r for r in requirements if derived_left or r != ":derived-predicates"]
    if ":adl" not in out:
        out += [r for r in (":negative-preconditions", ":disjunctive-preconditions", ":equality") if r not in out]
    return tuple(out)


def compile_derived(
    domain: Domain, problem: Problem, limit: int = DEFAULT_LIMIT, complement: bool = True
) -> tuple[Domain, Problem] | None:
    """The task with its non-recursive derived predicates inlined and the quantifiers of preconditions,
    `when` conditions and the goal expanded over the problem's objects; None when it cannot be done (see
    the module docstring) or there is nothing to compile.

    The objects the expansion names become domain constants; plans for the result are plans for the
    original task, step for step. With `complement`, negated fluent atoms then become positive atoms of
    complement predicates (see `_complement`; Fast Downward needs it).
    """
    inline = frozenset(domain.derived) - recursive_derived(domain)
    if not inline:
        return None
    compiler = _Compiler(domain, problem, inline, limit)
    try:
        actions: dict[str, Action] = {}
        for name, action in domain.actions.items():
            types = dict(action.params)
            precondition = _nnf(compiler.formula(action.precondition, {}, types))
            if precondition == FALSE:
                continue  # never applicable
            actions[name] = dataclasses.replace(
                action, precondition=precondition, effects=compiler.effects(action.effects, types))
        goal = _nnf(compiler.formula(problem.goal, {}, {}))
    except _GiveUp:
        return None
    # rules of recursive predicates stay, with every rule they use (those are still inlined elsewhere)
    kept = _kept_rules(domain, recursive_derived(domain))
    derived = {name: rule for name, rule in domain.derived.items() if name in kept}
    predicates = {name: p for name, p in domain.predicates.items() if name not in domain.derived or name in kept}
    moved = {name: problem.objects[name] for name in problem.objects if name in compiler.named}
    compiled_domain = dataclasses.replace(
        domain,
        requirements=_requirements(domain.requirements, bool(derived)),
        constants={**domain.constants, **moved},
        predicates=predicates,
        actions=actions,
        derived=derived,
    )
    compiled_problem = dataclasses.replace(
        problem,
        objects={name: typ for name, typ in problem.objects.items() if name not in moved},
        goal=goal,
    )
    if complement:
        return _complement(compiled_domain, compiled_problem, limit)
    return compiled_domain, compiled_problem

