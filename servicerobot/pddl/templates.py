"""Action schemas compiled once per domain into positional templates, so grounding an action is a lookup.

Most actions (every household skill but the washer's and dryer's) have a precondition that is a
conjunction of literals and plain add/delete effects. For those, `ground_formula` / `compile_effects`
would walk the same lifted formula for every ground action; a template instead records each literal as
(predicate, slots), a slot being a parameter position or a constant, and grounding an action fills the
slots with its arguments. The result is the same test and the same effects as the general path
(`tests/test_pddl_templates.py` checks every action of the shipped domains against it).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from operator import itemgetter

from servicerobot.pddl.atoms import Atom
from servicerobot.pddl.grounding import CompiledEffects, Test, Universe, _always, _never, literals_test
from servicerobot.pddl.model import (
    Action,
    AddEffect,
    And,
    AtomF,
    DelEffect,
    Equals,
    Formula,
    Not,
    Truth,
    WhenEffect,
)

__all__ = ["ActionTemplate", "action_template"]

Slot = int | str  # a parameter position, or a constant's name
LiteralT = tuple[str, tuple[Slot, ...]]


@dataclass(frozen=True)
class ActionTemplate:
    """An action whose precondition is a conjunction of literals and (in)equalities, with plain effects."""

    pos: tuple[LiteralT, ...]
    neg: tuple[LiteralT, ...]
    equal: tuple[tuple[Slot, Slot], ...]
    distinct: tuple[tuple[Slot, Slot], ...]
    adds: tuple[LiteralT, ...]
    dels: tuple[LiteralT, ...]
    when: tuple[ActionTemplate, ...] = ()  # conditional effects: condition in pos/neg/..., effects in adds/dels
    # pos, neg, adds and dels as (predicate, args -> the atom's arguments) pairs, made once per template
    _fillers: tuple = field(default=(), init=False, repr=False, compare=False)

    def __post_init__(self) -> None:
        object.__setattr__(self, "_fillers", tuple(tuple((p, _filler(slots)) for p, slots in literals)
                                                   for literals in (self.pos, self.neg, self.adds, self.dels)))

    def instantiate(self, args: tuple[str, ...], universe: Universe) -> tuple[Test, CompiledEffects]:
        """The precondition test and effects of the action applied to `args` (already type-checked)."""
        pre, adds, dels = self._ground(args, universe)
        conditional = []
        for when in self.when:
            test, cond_adds, cond_dels = when._ground(args, universe)
            if test is _always:  # a condition that folds to true is no condition (as in `compile_effects`)
                adds, dels = adds | cond_adds, dels | cond_dels
            elif test is not _never and (cond_adds or cond_dels):
                conditional.append((test, cond_adds, cond_dels))
        return pre, CompiledEffects(adds, dels - adds, tuple(conditional))

    def _ground(self, args: tuple[str, ...], universe: Universe) -> tuple[Test, frozenset[Atom], frozenset[Atom]]:
        """(test of the condition, adds, deletes) for `args`, without the conditional effects."""
        atom = universe.atom

        def value(slot: Slot) -> str:
            return args[slot] if type(slot) is int else slot

        pos_f, neg_f, adds_f, dels_f = self._fillers  # four lists, not a loop: a new house grounds hundreds
        pos = frozenset([atom(p, fill(args)) for p, fill in pos_f]) if pos_f else _NONE
        neg = frozenset([atom(p, fill(args)) for p, fill in neg_f]) if neg_f else _NONE
        adds = frozenset([atom(p, fill(args)) for p, fill in adds_f]) if adds_f else _NONE
        dels = frozenset([atom(p, fill(args)) for p, fill in dels_f]) if dels_f else _NONE
        if (self.equal or self.distinct) and (any(value(a) != value(b) for a, b in self.equal)
                                              or any(value(a) == value(b) for a, b in self.distinct)):
            return _never, adds, dels
        if pos & neg:
            return _never, adds, dels
        return literals_test(pos, neg), adds, dels


_NONE: frozenset[Atom] = frozenset()


def _filler(slots: tuple[Slot, ...]):
    """args -> the tuple of these slots' objects (a C-level itemgetter where every slot is a parameter)."""
    if slots and all(type(s) is int for s in slots):
        if len(slots) > 1:
            return itemgetter(*slots)
        (i,) = slots
        return lambda args: (args[i],)
    return lambda args: tuple([args[s] if type(s) is int else s for s in slots])


class _NotSimple(Exception):
    pass


def action_template(action: Action, constants: dict[str, str]) -> ActionTemplate | None:
    """The action's template, or None when it needs the general path (quantifiers, disjunctions,
    quantified effects, conditions that are not conjunctions of literals, a term that is neither a parameter
    nor a constant)."""
    try:
        return _template(action.params, action.precondition, action.effects, constants)
    except _NotSimple:
        return None


def _template(params, precondition: Formula, effects: tuple, constants: dict[str, str]) -> ActionTemplate:
    position = {var: i for i, (var, _) in enumerate(params)}

    def slot(term: str) -> Slot:
        if term in position:
            return position[term]
        if term.startswith("?") or term not in constants:
            raise _NotSimple
        return term

    def literal(f: AtomF) -> LiteralT:
        return f.predicate, tuple(slot(t) for t in f.terms)

    pos: list[LiteralT] = []
    neg: list[LiteralT] = []
    equal: list[tuple[Slot, Slot]] = []
    distinct: list[tuple[Slot, Slot]] = []

    def conjunct(f: Formula) -> None:
        if isinstance(f, And):
            for part in f.parts:
                conjunct(part)
        elif isinstance(f, AtomF):
            pos.append(literal(f))
        elif isinstance(f, Equals):
            equal.append((slot(f.a), slot(f.b)))
        elif isinstance(f, Not) and isinstance(f.f, AtomF):
            neg.append(literal(f.f))
        elif isinstance(f, Not) and isinstance(f.f, Equals):
            distinct.append((slot(f.f.a), slot(f.f.b)))
        elif isinstance(f, Truth) and f.value:
            pass
        else:
            raise _NotSimple

    adds: list[LiteralT] = []
    dels: list[LiteralT] = []
    when: list[ActionTemplate] = []
    conjunct(precondition)
    for e in effects:
        if isinstance(e, AddEffect):
            adds.append(literal(e.atom))
        elif isinstance(e, DelEffect):
            dels.append(literal(e.atom))
        elif isinstance(e, WhenEffect):
            inner = _template(params, e.condition, e.effects, constants)
            if inner.when:
                raise _NotSimple
            when.append(inner)
        else:
            raise _NotSimple
    return ActionTemplate(tuple(pos), tuple(neg), tuple(equal), tuple(distinct), tuple(adds), tuple(dels),
                          tuple(when))
