"""Action schemas compiled once per domain into positional templates, so grounding an action is a lookup.

Most actions have a precondition that is a conjunction of literals and plain add/delete effects. For
those, `ground_formula` / `compile_effects` would walk the same lifted formula for every ground action; a
template instead records each literal as (predicate, slots), a slot being a parameter position or a
constant, and grounding an action fills the slots with its arguments. One quantifier over one variable is
covered too (the washer's and dryer's `(exists (?c - clothing) (inside ?c ?w))` and `(forall (?c -
clothing) (when (inside ?c ?w) ...))`): its body is a template whose last slot is the bound variable,
filled with each object of its type. The result is the same test and the same effects as the general
path (`tests/test_pddl_templates.py` checks every action of the shipped domains against it).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from operator import itemgetter

from servicerobot.pddl.atoms import Atom
from servicerobot.pddl.grounding import (
    CompiledEffects,
    Test,
    Universe,
    _always,
    _never,
    interned_atoms,
    interned_list,
    literals_test,
)
from servicerobot.pddl.model import (
    TRUE,
    Action,
    AddEffect,
    And,
    AtomF,
    DelEffect,
    Equals,
    Exists,
    ForallEffect,
    Formula,
    Not,
    Truth,
    WhenEffect,
)

__all__ = ["ActionTemplate", "action_template", "clear_parts"]

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
    # `(exists (?v - type) body)` conjuncts and `(forall (?v - type) effects)` effects: (type, the body as a
    # template over the parameters and ?v, the last slot); they depend on the universe's objects of the type
    some: tuple[tuple[str, ActionTemplate], ...] = ()
    each: tuple[tuple[str, ActionTemplate], ...] = ()
    # pos, neg, adds and dels as (predicate, args -> the atom's arguments) pairs, made once per template
    _fillers: tuple = field(default=(), init=False, repr=False, compare=False)
    # a plain template's (see `_plain`) four lists end to end, and where the last three start; else None
    _flat: tuple | None = field(default=None, init=False, repr=False, compare=False)

    def __post_init__(self) -> None:
        fillers = tuple(tuple((p, _filler(slots)) for p, slots in literals)
                        for literals in (self.pos, self.neg, self.adds, self.dels))
        object.__setattr__(self, "_fillers", fillers)
        if not (self.when or self.some or self.each or self.equal or self.distinct):
            a, b, c = (len(fillers[0]), len(fillers[0]) + len(fillers[1]),
                       len(fillers[0]) + len(fillers[1]) + len(fillers[2]))
            object.__setattr__(self, "_flat", (fillers[0] + fillers[1] + fillers[2] + fillers[3], a, b, c))

    @property
    def plain(self) -> bool:
        """Only literals in the precondition and plain effects: `instantiate` makes its atoms in one pass."""
        return self._flat is not None

    @property
    def quantified(self) -> bool:
        """Whether grounding reads the universe's objects of a type, not only the arguments' names."""
        return bool(self.some or self.each)

    def instantiate(self, args: tuple[str, ...], universe: Universe) -> tuple[Test, CompiledEffects]:
        """The precondition test and effects of the action applied to `args` (already type-checked)."""
        if self._flat is not None:
            return self._plain(args)
        pre, adds, dels = self._ground(args, universe)
        if self.some and pre is not _never:
            pre = _with_some(pre, [self._some_test(typ, body, args, universe) for typ, body in self.some])
        if not (self.when or self.each):  # the usual action: its effects built without the NamedTuple's call
            return pre, _new_tuple(CompiledEffects, (adds, dels if dels.isdisjoint(adds) else dels - adds, ()))
        conditional: list = []
        adds, dels = self._conditional(args, universe, adds, dels, conditional)
        return pre, CompiledEffects(adds, dels - adds, tuple(conditional))

    def _plain(self, args: tuple[str, ...]) -> tuple[Test, CompiledEffects]:
        """`instantiate` for a template of literals and plain effects only (most actions): its atoms made
        in one pass, as `_ground` makes them four lists at a time."""
        fillers, a, b, c = self._flat
        atoms = interned_list(fillers, args)
        pos, neg, adds, dels = frozenset(atoms[:a]), frozenset(atoms[a:b]), frozenset(atoms[b:c]), frozenset(atoms[c:])
        pre = literals_test(pos, neg) if pos.isdisjoint(neg) else _never
        return pre, _new_tuple(CompiledEffects, (adds, dels if dels.isdisjoint(adds) else dels - adds, ()))

    def _conditional(self, args: tuple[str, ...], universe: Universe, adds: frozenset[Atom], dels: frozenset[Atom],
                     conditional: list) -> tuple[frozenset[Atom], frozenset[Atom]]:
        """`adds` and `dels` with the `when` effects whose condition folds to true, the others appended to
        `conditional` as (test, adds, deletes), then the same for each object of a `forall` effect."""
        for when in self.when:
            test, cond_adds, cond_dels = when._ground(args, universe)
            if test is _always:  # a condition that folds to true is no condition (as in `compile_effects`)
                adds, dels = adds | cond_adds, dels | cond_dels
            elif test is not _never and (cond_adds or cond_dels):
                conditional.append((test, cond_adds, cond_dels))
        for typ, body in self.each:
            values = universe.of_type(typ)
            if body.only_plain_when:  # `(forall (?c - clothing) (when (inside ?c ?w) ...))`: the washer's
                _when_per_object(body.when, args, values, universe.atom, conditional)
                continue
            for value in values:
                bound = (*args, value)
                _, body_adds, body_dels = body._ground(bound, universe)
                adds, dels = adds | body_adds, dels | body_dels
                if body.when:
                    adds, dels = body._conditional(bound, universe, adds, dels, conditional)
        return adds, dels

    @property
    def only_plain_when(self) -> bool:
        """A quantifier's body that is only `when` effects, each on one positive literal (and some effects)."""
        return (not (self.pos or self.neg or self.equal or self.distinct or self.adds or self.dels or self.some
                     or self.each) and all(w.single_atom and (w.adds or w.dels) for w in self.when))

    @staticmethod
    def _some_test(typ: str, body: ActionTemplate, args: tuple[str, ...], universe: Universe) -> Test:
        """The test of `(exists (?v - typ) body)`: some object of the type satisfies the body."""
        values = universe.of_type(typ)
        if body.single_atom:  # `(inside ?c ?w)`: one C-level test of the atoms for every object
            predicate, fill = body._fillers[0][0]
            atom = universe.atom
            atoms = frozenset([atom(predicate, fill((*args, v))) for v in values])
            return _never if not atoms else lambda state: not atoms.isdisjoint(state)
        tests = [t for t in (body._ground((*args, v), universe)[0] for v in values) if t is not _never]
        if any(t is _always for t in tests):
            return _always
        return _never if not tests else lambda state: any(t(state) for t in tests)

    @property
    def single_atom(self) -> bool:
        """A condition that is one positive literal and nothing else."""
        return len(self.pos) == 1 and not (self.neg or self.equal or self.distinct or self.some)

    def _ground(self, args: tuple[str, ...], universe: Universe) -> tuple[Test, frozenset[Atom], frozenset[Atom]]:
        """(test of the condition, adds, deletes) for `args`, without the conditional effects."""
        def value(slot: Slot) -> str:
            return args[slot] if type(slot) is int else slot

        pos_f, neg_f, adds_f, dels_f = self._fillers  # four lists, not a loop: a new house grounds hundreds
        pos = interned_atoms(pos_f, args) if pos_f else _NONE
        neg = interned_atoms(neg_f, args) if neg_f else _NONE
        adds = interned_atoms(adds_f, args) if adds_f else _NONE
        dels = interned_atoms(dels_f, args) if dels_f else _NONE
        if (self.equal or self.distinct) and (any(value(a) != value(b) for a, b in self.equal)
                                              or any(value(a) == value(b) for a, b in self.distinct)):
            return _never, adds, dels
        if pos & neg:
            return _never, adds, dels
        return literals_test(pos, neg), adds, dels


_NONE: frozenset[Atom] = frozenset()
_new_tuple = tuple.__new__


def _when_per_object(whens: tuple[ActionTemplate, ...], args: tuple[str, ...], values: tuple[str, ...], atom,
                     conditional: list) -> None:
    """Append to `conditional` what `_ground` would give for each `when` (one positive literal as its
    condition) of a quantifier's body, for each object of `values` in turn, without its general steps.

    An object's part depends only on the names bound, so it is kept per `whens` and names: a new house whose
    washer and clothes keep an earlier house's names finds them made (`clear_parts` forgets them)."""
    known = _PER_OBJECT.get(id(whens))
    if known is None or known[0] is not whens:
        if len(_PER_OBJECT) >= 256:
            _PER_OBJECT.clear()
        known = _PER_OBJECT[id(whens)] = (whens, {})
    made = known[1]
    if len(made) >= 200_000:
        made.clear()
    parts = None
    for value in values:
        bound = (*args, value)
        found = made.get(bound)
        if found is None:
            if parts is None:
                parts = [(w._fillers[0][0], w._fillers[2], w._fillers[3]) for w in whens]
            found = made[bound] = []
            for (predicate, fill), adds_f, dels_f in parts:
                adds = frozenset([atom(p, f(bound)) for p, f in adds_f]) if adds_f else _NONE
                dels = frozenset([atom(p, f(bound)) for p, f in dels_f]) if dels_f else _NONE
                found.append((frozenset((atom(predicate, fill(bound)),)).issubset, adds, dels))
        conditional.extend(found)


_PER_OBJECT: dict[int, tuple[tuple, dict]] = {}  # id(whens) -> (whens, names bound -> their conditional parts)


def clear_parts() -> None:
    """Forget the per-object parts `_when_per_object` keeps (benchmarks of houses not seen before)."""
    _PER_OBJECT.clear()


def _with_some(pre: Test, tests: list[Test]) -> Test:
    """`pre` and every test of `tests` (each an existential conjunct)."""
    if any(t is _never for t in tests):
        return _never
    tests = [t for t in tests if t is not _always]
    if not tests:
        return pre
    if pre is _always and len(tests) == 1:
        return tests[0]
    parts = tuple(tests) if pre is _always else (pre, *tests)

    def all_parts(state) -> bool:
        for test in parts:
            if not test(state):
                return False
        return True

    return all_parts


def _filler(slots: tuple[Slot, ...]):
    """args -> the tuple of these slots' objects (a C-level itemgetter where every slot is a parameter)."""
    if slots and all(type(s) is int for s in slots):
        if len(slots) > 1:
            return itemgetter(*slots)
        (i,) = slots
        return itemgetter(slice(i, i + 1))  # args[i:i + 1], the 1-tuple, without a Python call
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


def _template(params, precondition: Formula, effects: tuple, constants: dict[str, str],
              nested: bool = False) -> ActionTemplate:
    """The template of a precondition and effects over `params`; `nested`: inside a quantifier or a `when`
    (where no further quantifier is covered)."""
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
    some: list[tuple[str, ActionTemplate]] = []

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
        elif isinstance(f, Exists) and len(f.params) == 1 and not nested:
            some.append((f.params[0][1], _bound_template(params, f.params[0], f.body, (), constants)))
        else:
            raise _NotSimple

    adds: list[LiteralT] = []
    dels: list[LiteralT] = []
    when: list[ActionTemplate] = []
    each: list[tuple[str, ActionTemplate]] = []
    conjunct(precondition)
    for e in effects:
        if isinstance(e, AddEffect):
            adds.append(literal(e.atom))
        elif isinstance(e, DelEffect):
            dels.append(literal(e.atom))
        elif isinstance(e, WhenEffect):
            inner = _template(params, e.condition, e.effects, constants, nested=True)
            if inner.when or inner.each:
                raise _NotSimple
            when.append(inner)
        elif isinstance(e, ForallEffect) and len(e.params) == 1 and not nested:
            each.append((e.params[0][1], _bound_template(params, e.params[0], TRUE, e.effects, constants)))
        else:
            raise _NotSimple
    return ActionTemplate(tuple(pos), tuple(neg), tuple(equal), tuple(distinct), tuple(adds), tuple(dels),
                          tuple(when), tuple(some), tuple(each))


def _bound_template(params, bound: tuple[str, str], condition: Formula, effects: tuple,
                    constants: dict[str, str]) -> ActionTemplate:
    """The body of a quantifier over `bound` (a variable and its type) as a template whose last slot is the
    bound variable; no quantifier inside it (the general path grounds those)."""
    if any(var == bound[0] for var, _ in params):
        raise _NotSimple  # a variable that shadows a parameter: the general path reads it
    inner = _template((*params, bound), condition, effects, constants, nested=True)
    if inner.some or inner.each or any(w.when for w in inner.when):
        raise _NotSimple
    return inner
