"""Which literals some chain of actions could make hold, given the facts that never change.

`Signatures` (candidates.py) asks whether an action can change a predicate for objects of some types. That
offers goals no plan reaches: "the green box is safe" where only suspicious things can be inspected, "the box
is on the shelf" where a box cannot be grasped. Here each achieving action's preconditions are checked too,
backwards and relaxed (deletes ignored): a static precondition (a predicate no action changes) must be among
the facts, a changing one must itself be reachable. Only positive conjuncts of a precondition are read;
anything else (`or`, `not`, quantifiers) is taken as satisfiable, so a literal is ruled out only when no
achiever can apply: an over-approximation, never refusing a goal a plan could reach.

Facts given to an interpreter may be retrieved, not all of memory. Retrieval brings a thing's facts together
(its neighbourhood), so a static fact is checked of things the facts say something of; of others nothing is
known, and it is taken as met (as it is where no thing's are bound and the facts hold the predicate of none).
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from functools import cache

from servicerobot.pddl import Atom
from servicerobot.pddl.explain import conjuncts
from servicerobot.pddl.model import AddEffect, AtomF, DelEffect, Domain, ForallEffect, WhenEffect

Pattern = tuple  # of object names, None where any object may stand


@dataclass(frozen=True)
class _Achiever:
    """One effect of one action: the effect's terms and the action's positive precondition conjuncts."""

    terms: tuple[str, ...]
    types: Mapping[str, str]  # variable -> type
    needs: tuple[AtomF, ...]


@cache
def _achievers(domain: Domain) -> tuple[dict, frozenset[str]]:
    """(predicate, positive) -> its achievers; and the static predicates."""
    table: dict[tuple[str, bool], list[_Achiever]] = {}

    def walk(effects, types: dict[str, str], needs: tuple) -> None:
        for effect in effects:
            if isinstance(effect, (AddEffect, DelEffect)):
                key = (effect.atom.predicate, isinstance(effect, AddEffect))
                table.setdefault(key, []).append(_Achiever(effect.atom.terms, types, needs))
            elif isinstance(effect, ForallEffect):
                walk(effect.effects, {**types, **dict(effect.params)}, needs)
            elif isinstance(effect, WhenEffect):
                walk(effect.effects, types, needs + tuple(c for c in conjuncts(effect.condition)
                                                          if isinstance(c, AtomF)))

    for action in domain.actions.values():
        needs = tuple(c for c in conjuncts(action.precondition) if isinstance(c, AtomF))
        walk(action.effects, dict(action.params), needs)
    changed = {pred for pred, _ in table}
    derived = set(getattr(domain, "derived", None) or ())
    return table, frozenset(set(domain.predicates) - changed - derived)


def achievers(domain: Domain) -> tuple[dict, frozenset[str]]:
    """(predicate, positive) -> the effects that make it so, each with its action's positive preconditions;
    and the static predicates (cached per domain)."""
    try:
        return _achievers(domain)
    except TypeError:  # an unhashable domain: compute afresh
        return _achievers.__wrapped__(domain)


class Reachability:
    """Answers `reachable(atom, positive)` for one domain, one set of facts and one catalogue of types."""

    def __init__(self, domain: Domain, facts: Iterable[Atom], types_of: Mapping[str, str], depth: int = 4):
        self.domain = domain
        self.table, self.static = achievers(domain)
        self.facts = frozenset(facts)
        self.by_pred = {atom.predicate for atom in self.facts}
        self.mentioned = {x for atom in self.facts for x in atom.args}
        # every fact under each way of leaving some of its arguments open: a pattern holds in one lookup
        self.patterns = {(a.predicate, tuple(x if keep >> i & 1 else None for i, x in enumerate(a.args)))
                         for a in self.facts if len(a.args) <= 4 for keep in range(1 << len(a.args))}
        self.types_of = types_of
        self.depth = depth
        self.memo: dict[tuple, bool] = {}

    def reachable(self, atom: Atom, positive: bool = True) -> bool:
        """Whether `atom` could be made to hold (`positive`) or not to hold by some relaxed chain of actions."""
        return self._pattern(atom.predicate, tuple(atom.args), positive, 0)

    def _holds(self, pred: str, pattern: Pattern) -> bool:
        if len(pattern) <= 4:
            return (pred, pattern) in self.patterns
        return any(a.predicate == pred and all(p is None or p == x for p, x in zip(pattern, a.args))
                   for a in self.facts)

    def _pattern(self, pred: str, pattern: Pattern, positive: bool, depth: int) -> bool:
        key = (pred, pattern, positive)
        if key in self.memo:
            return self.memo[key]
        if positive and self._holds(pred, pattern) or not positive and None not in pattern and \
                Atom(pred, pattern) not in self.facts:
            return True
        if depth >= self.depth:
            return True  # too deep to tell: take it as reachable
        self.memo[key] = True  # a cycle back to this literal: taken as satisfiable (relaxed)
        bound = [b for b in (self._bind(a, pattern) for a in self.table.get((pred, positive), ())) if b is not None]
        # no action changes it for these things: it is static for them, and facts retrieved for a request may
        # leave it out ("the table is in the kitchen"), so a precondition on it is taken as met
        result = any(self._needs_met(a, b, depth) for a, b in bound) if bound or depth == 0 else True
        self.memo[key] = result
        return result

    def _bind(self, ach: _Achiever, pattern: Pattern) -> tuple[_Achiever, dict[str, str]] | None:
        """The achiever with its variables bound to the pattern's objects, or None where their types or
        constants do not fit."""
        constants, types = self.domain.constants, self.domain.types
        binding: dict[str, str] = {}
        for term, value in zip(ach.terms, pattern):
            if not term.startswith("?"):
                if value is not None and term != value:
                    return None
                continue
            if value is None:
                continue
            if binding.setdefault(term, value) != value:
                return None
            typ = self.types_of.get(value) or constants.get(value)
            if typ and term in ach.types and not types.is_subtype(typ, ach.types[term]):
                return None
        return ach, binding

    def _needs_met(self, ach: _Achiever, binding: dict[str, str], depth: int) -> bool:
        for need in ach.needs:
            ground = tuple(binding.get(t) if t.startswith("?") else t for t in need.terms)
            if all(g is None for g in ground) and need.predicate not in self.static:
                continue  # says nothing of these things
            if need.predicate in self.static:
                bound = [g for g in ground if g is not None]
                known = all(g in self.mentioned for g in bound) if bound else need.predicate in self.by_pred
                if known and not self._holds(need.predicate, ground):
                    return False
            elif not self._pattern(need.predicate, ground, True, depth + 1):
                return False
        return True
