"""Ground lifted formulas and effects over a fixed object universe and compile them into fast state tests.

A ground formula is first put in negation normal form over `Atom` / `GNot` literals with `GAll` / `GAny`
junctions (quantifiers expanded, `=` and constants folded). `compile_test` then turns it into a
callable `test(state) -> bool` whose literal parts are `frozenset.issubset` / `isdisjoint` calls on the
state, so only genuinely nested parts cost a Python call.
"""

from __future__ import annotations

import itertools
from collections.abc import Callable, Iterator, Mapping
from dataclasses import dataclass
from typing import NamedTuple

from servicerobot.errors import PDDLSemanticError
from servicerobot.pddl._suggest import did_you_mean
from servicerobot.pddl.atoms import Atom, State
from servicerobot.pddl.model import (
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
    Truth,
    TypeHierarchy,
    WhenEffect,
)

__all__ = [
    "CompiledEffects",
    "GAll",
    "GAny",
    "GNot",
    "GroundNode",
    "Test",
    "Universe",
    "compile_effects",
    "compile_test",
    "ground_formula",
    "literals_test",
    "node_atoms",
    "substitute",
]

Test = Callable[[State], bool]


@dataclass(frozen=True)
class GNot:
    """A negative ground literal."""

    atom: Atom


@dataclass(frozen=True)
class GAll:
    """A ground conjunction of two or more nodes."""

    items: tuple


@dataclass(frozen=True)
class GAny:
    """A ground disjunction of two or more nodes."""

    items: tuple


GroundNode = Atom | GNot | GAll | GAny | bool


class Universe:
    """The objects a formula may range over (name -> type), with per-type lists and canonical atoms."""

    def __init__(self, types: TypeHierarchy, objects: Mapping[str, str]):
        for name, typ in objects.items():
            if typ not in types:
                raise PDDLSemanticError(
                    f"object {name!r} has unknown type {typ!r}{did_you_mean(typ, types.types)}"
                )
        self.types = types
        self.objects = dict(objects)
        self._by_type: dict[str, tuple[str, ...]] = {}
        self._atoms: dict[Atom, Atom] = {}

    def of_type(self, typ: str) -> tuple[str, ...]:
        """The objects of type `typ` or a subtype of it, in declaration order."""
        found = self._by_type.get(typ)
        if found is None:
            is_subtype = self.types.is_subtype
            found = tuple(name for name, t in self.objects.items() if is_subtype(t, typ))
            self._by_type[typ] = found
        return found

    def bindings(self, params: Params, binding: Mapping[str, str]) -> Iterator[dict[str, str]]:
        """Every extension of `binding` that gives each parameter an object of its type."""
        if len(params) == 1:  # the common case, without product() and zip()
            (var, typ), = params
            for value in self.of_type(typ):
                inner = dict(binding)
                inner[var] = value
                yield inner
            return
        variables = [var for var, _ in params]
        for values in itertools.product(*(self.of_type(typ) for _, typ in params)):
            yield {**binding, **dict(zip(variables, values))}

    def atom(self, predicate: str, args: tuple[str, ...]) -> Atom:
        """The canonical Atom for (predicate, args): equal atoms are one object, so set tests are fast."""
        atom = Atom(predicate, args)
        return self._atoms.setdefault(atom, atom)


def _junction(items: list, conjunctive: bool) -> GroundNode:
    """Flatten, fold constants and deduplicate a conjunction (or disjunction)."""
    cls = GAll if conjunctive else GAny
    absorbing = not conjunctive  # False absorbs a conjunction, True a disjunction
    flat: dict = {}
    for item in items:
        if item is True or item is False:
            if item is absorbing:
                return absorbing
            continue
        if isinstance(item, cls):
            for sub in item.items:
                flat[sub] = None
        else:
            flat[item] = None
    if not flat:
        return conjunctive
    if len(flat) == 1:
        return next(iter(flat))
    return cls(tuple(flat))


def ground_formula(
    f: Formula, binding: Mapping[str, str], universe: Universe, negate: bool = False
) -> GroundNode:
    """The ground negation normal form of `f` (or of `(not f)`) under a variable binding."""
    if isinstance(f, AtomF):
        atom = universe.atom(f.predicate, tuple([binding.get(t, t) for t in f.terms]))
        return GNot(atom) if negate else atom
    if isinstance(f, Not):
        return ground_formula(f.f, binding, universe, not negate)
    if isinstance(f, And):
        return _junction([ground_formula(p, binding, universe, negate) for p in f.parts], not negate)
    if isinstance(f, Or):
        return _junction([ground_formula(p, binding, universe, negate) for p in f.parts], negate)
    if isinstance(f, Imply):  # a -> b  ==  (not a) or b
        parts = [
            ground_formula(f.a, binding, universe, not negate),
            ground_formula(f.b, binding, universe, negate),
        ]
        return _junction(parts, negate)
    if isinstance(f, (Exists, Forall)):
        parts = [
            ground_formula(f.body, inner, universe, negate) for inner in universe.bindings(f.params, binding)
        ]
        return _junction(parts, isinstance(f, Forall) != negate)
    if isinstance(f, Equals):
        return (binding.get(f.a, f.a) == binding.get(f.b, f.b)) != negate
    if isinstance(f, Truth):
        return f.value != negate
    raise TypeError(f"not a formula: {f!r}")


def _always(state: State) -> bool:
    return True


def _never(state: State) -> bool:
    return False


def _split(items: tuple) -> tuple[frozenset, frozenset, list]:
    pos, neg, rest = [], [], []
    for item in items:
        if isinstance(item, Atom):
            pos.append(item)
        elif isinstance(item, GNot):
            neg.append(item.atom)
        else:
            rest.append(item)
    return frozenset(pos), frozenset(neg), rest


def literals_test(pos: frozenset[Atom], neg: frozenset[Atom]) -> Test:
    """The test of a conjunction of literals: every atom of `pos` true, every atom of `neg` false."""
    if not neg:
        return pos.issubset if pos else _always
    if not pos:
        return neg.isdisjoint
    subset, disjoint = pos.issubset, neg.isdisjoint

    def all_literals(state: State) -> bool:
        return subset(state) and disjoint(state)

    return all_literals


def _compile_all(items: tuple) -> Test:
    pos, neg, rest = _split(items)
    if not rest:
        return literals_test(pos, neg)
    subset, disjoint = pos.issubset, neg.isdisjoint
    pairs, rest = _implications(rest)
    tests = tuple(compile_test(item) for item in rest)
    if pairs is not None:
        tests = (pairs, *tests)
    if pos and neg:
        tests = (subset, disjoint, *tests)
    elif pos:
        tests = (subset, *tests)
    elif neg:
        tests = (disjoint, *tests)

    def all_tests(state: State) -> bool:
        for test in tests:
            if not test(state):
                return False
        return True

    return all_tests


def _implications(items: list) -> tuple[Test | None, list]:
    """One test for the `(or p (not n))` items of a conjunction (the ground form of a quantified `imply`),
    and the other items.

    The conjunction fails only where some `n` holds and its `p` does not, so the test looks up the few
    `n` that hold (one C-level set intersection) instead of calling one closure per object.
    """
    need: dict[Atom, list[Atom]] = {}
    other = []
    for item in items:
        if isinstance(item, GAny) and len(item.items) == 2:
            a, b = item.items
            if isinstance(a, GNot) and isinstance(b, Atom):
                a, b = b, a
            if isinstance(a, Atom) and isinstance(b, GNot):
                need.setdefault(b.atom, []).append(a)
                continue
        other.append(item)
    if len(need) < 4:  # not worth it: keep the per-item closures
        return None, items
    triggers = frozenset(need)
    needed = {n: tuple(ps) for n, ps in need.items()}

    def implications(state: State) -> bool:
        for n in triggers.intersection(state):
            for p in needed[n]:
                if p not in state:
                    return False
        return True

    return implications, other


def _compile_any(items: tuple) -> Test:
    pos, neg, rest = _split(items)
    if not rest and len(pos) == 1 and len(neg) == 1:  # the ground form of an imply
        (p,), (n,) = pos, neg

        def literal_pair(state: State) -> bool:
            return p in state or n not in state

        return literal_pair
    disjoint, subset = pos.isdisjoint, neg.issubset
    tests = tuple(compile_test(item) for item in rest)
    has_pos, has_neg = bool(pos), bool(neg)

    def any_test(state: State) -> bool:
        if has_pos and not disjoint(state):
            return True
        if has_neg and not subset(state):
            return True
        for test in tests:
            if test(state):
                return True
        return False

    return any_test


def compile_test(node: GroundNode) -> Test:
    """A function `test(state) -> bool` for a ground node."""
    if node is True:
        return _always
    if node is False:
        return _never
    if isinstance(node, Atom):
        return frozenset((node,)).issubset
    if isinstance(node, GNot):
        return frozenset((node.atom,)).isdisjoint
    if isinstance(node, GAll):
        return _compile_all(node.items)
    if isinstance(node, GAny):
        return _compile_any(node.items)
    raise TypeError(f"not a ground node: {node!r}")


def node_atoms(node: GroundNode, positive: bool = True) -> frozenset[Atom]:
    """The atoms that occur positively (or, with `positive=False`, negated) in a ground node."""
    if isinstance(node, Atom):
        return frozenset((node,)) if positive else frozenset()
    if isinstance(node, GNot):
        return frozenset() if positive else frozenset((node.atom,))
    if isinstance(node, (GAll, GAny)):
        return frozenset().union(*(node_atoms(item, positive) for item in node.items))
    return frozenset()


def substitute(f: Formula, binding: Mapping[str, str]) -> Formula:
    """`f` with its free variables replaced by their objects (quantified variables are left alone)."""
    if not binding:
        return f
    if isinstance(f, AtomF):
        return AtomF(f.predicate, tuple(binding.get(t, t) for t in f.terms))
    if isinstance(f, Not):
        return Not(substitute(f.f, binding))
    if isinstance(f, (And, Or)):
        return type(f)(tuple(substitute(p, binding) for p in f.parts))
    if isinstance(f, Imply):
        return Imply(substitute(f.a, binding), substitute(f.b, binding))
    if isinstance(f, (Exists, Forall)):
        inner = {k: v for k, v in binding.items() if k not in dict(f.params)}
        return type(f)(f.params, substitute(f.body, inner))
    if isinstance(f, Equals):
        return Equals(binding.get(f.a, f.a), binding.get(f.b, f.b))
    return f


class CompiledEffects(NamedTuple):
    """The ground effects of one action: unconditional adds/deletes and (test, adds, deletes) conditionals.

    `dels` never contains an atom of `adds` (PDDL applies deletes first, so such an atom ends up true).
    """

    adds: frozenset[Atom]
    dels: frozenset[Atom]
    conditional: tuple[tuple[Test, frozenset[Atom], frozenset[Atom]], ...]


def compile_effects(
    effects: tuple[Effect, ...], binding: Mapping[str, str], universe: Universe
) -> CompiledEffects:
    """Ground an effect tuple: forall effects are expanded, when-conditions grounded and compiled."""
    buckets: dict[GroundNode, tuple[list[Atom], list[Atom]]] = {}

    def walk(effs: tuple[Effect, ...], bind: Mapping[str, str], condition: GroundNode) -> None:
        for e in effs:
            if isinstance(e, AddEffect):
                buckets.setdefault(condition, ([], []))[0].append(_ground_atom(e.atom, bind, universe))
            elif isinstance(e, DelEffect):
                buckets.setdefault(condition, ([], []))[1].append(_ground_atom(e.atom, bind, universe))
            elif isinstance(e, ForallEffect):
                for inner in universe.bindings(e.params, bind):
                    walk(e.effects, inner, condition)
            elif isinstance(e, WhenEffect):
                test = _junction([condition, ground_formula(e.condition, bind, universe)], True)
                if test is not False:
                    walk(e.effects, bind, test)
            else:
                raise TypeError(f"not an effect: {e!r}")

    walk(effects, binding, True)
    adds, dels = buckets.pop(True, ((), ()))
    adds, dels = frozenset(adds), frozenset(dels)
    conditional = tuple((compile_test(cond), frozenset(a), frozenset(d)) for cond, (a, d) in buckets.items())
    return CompiledEffects(adds, dels - adds, conditional)  # add wins over delete, so drop those deletes


def _ground_atom(f: AtomF, binding: Mapping[str, str], universe: Universe) -> Atom:
    return universe.atom(f.predicate, tuple([binding.get(t, t) for t in f.terms]))
