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
    "node_literals",
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
        self.objects = dict(objects)
        self._types_used = tuple(dict.fromkeys(self.objects.values()))  # hundreds of objects, a few dozen types
        for typ in self._types_used:
            if typ not in types:
                name = next(n for n, t in self.objects.items() if t == typ)
                raise PDDLSemanticError(
                    f"object {name!r} has unknown type {typ!r}{did_you_mean(typ, types.types)}"
                )
        self.types = types
        self._by_type: dict[str, tuple[str, ...]] = {}
        self._sets: dict[str, frozenset[str]] = {}

    def of_type(self, typ: str) -> tuple[str, ...]:
        """The objects of type `typ` or a subtype of it, in declaration order."""
        found = self._by_type.get(typ)
        if found is None:
            fitting = _fitting(self.types, typ, self._types_used)
            found = tuple([name for name, t in self.objects.items() if t in fitting])
            self._by_type[typ] = found
        return found

    def set_of_type(self, typ: str) -> frozenset[str]:
        """`of_type(typ)` as a frozenset (made once per type)."""
        found = self._sets.get(typ)
        if found is None:
            found = self._sets[typ] = frozenset(self.of_type(typ))
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

    @staticmethod
    def atom(predicate: str, args: tuple[str, ...]) -> Atom:
        """The canonical Atom for (predicate, args): equal atoms are one object, so set tests are fast.

        An atom depends only on its names, so one table serves every universe: a new house finds the atoms
        of names seen before (`(in-room robot kitchen)`) made already. The household's generated facts and
        people's changes are made here too, so a state's atoms are the very objects the compiled tests hold."""
        key = (predicate, args)
        found = _INTERNED.get(key)
        if found is None:
            if len(_INTERNED) >= MAX_INTERNED:
                _INTERNED.clear()
            found = _new_tuple(Atom, key)  # Atom(predicate, args) without its __new__'s call
            _INTERNED[found] = found  # its own key (it equals `key`): one tuple per atom kept, not two
        return found


def interned_atoms(fillers: tuple, args: tuple[str, ...]) -> frozenset[Atom]:
    """The canonical atoms `(predicate, fill(args))` of each `(predicate, fill)` pair, as a frozenset: what
    `Universe.atom` gives for each, with one lookup per atom seen before (a new house's actions are mostly
    atoms of names that earlier houses had)."""
    get, out = _INTERNED.get, []
    for predicate, fill in fillers:
        key = (predicate, fill(args))
        found = get(key)
        out.append(found if found is not None else Universe.atom(predicate, key[1]))
    return frozenset(out)


def interned_list(fillers: tuple, args: tuple[str, ...]) -> list[Atom]:
    """`interned_atoms`' atoms as a list, in the order of `fillers`, duplicates kept."""
    get, out = _INTERNED.get, []
    for predicate, fill in fillers:
        key = (predicate, fill(args))
        found = get(key)
        out.append(found if found is not None else Universe.atom(predicate, key[1]))
    return out


_FITTING: dict[tuple, tuple[TypeHierarchy, dict[str, bool]]] = {}  # see _fitting


def _fitting(types: TypeHierarchy, typ: str, used: tuple[str, ...]) -> frozenset[str]:
    """The types of `used` that are `typ` or its subtypes: asked by every new universe (a new house) for each
    type it quantifies over. Whether a type fits `typ` is answered once per hierarchy, whatever other types
    (and in whatever order) a universe uses."""
    key = (id(types), typ)
    known = _FITTING.get(key)
    if known is None or known[0] is not types:
        if len(_FITTING) >= 4096:
            _FITTING.clear()
        known = _FITTING[key] = (types, {})
    fits = known[1]
    for t in used:
        if t not in fits:
            fits[t] = types.is_subtype(t, typ)
    return frozenset([t for t in used if fits[t]])


_new_tuple = tuple.__new__
MAX_INTERNED = 200_000  # atoms (and negations) kept for reuse by every universe; the table is emptied beyond
_INTERNED: dict[tuple, Atom] = {}  # (predicate, args) -> the Atom of those
_NEGATED: dict[Atom, GNot] = {}  # Atom -> GNot(atom)


def clear_interned() -> None:
    """Forget the atoms and negations kept for every universe (benchmarks of houses not seen before)."""
    _INTERNED.clear()
    _NEGATED.clear()
    _PARTS.clear()


def _negated(atom: Atom) -> GNot:
    """The canonical `GNot(atom)` (a frozen dataclass is slow to build; ground goals negate the same atoms)."""
    found = _NEGATED.get(atom)
    if found is None:
        if len(_NEGATED) >= MAX_INTERNED:
            _NEGATED.clear()
        found = _NEGATED[atom] = GNot(atom)
    return found


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
        return _negated(atom) if negate else atom
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
        if len(f.params) == 1:  # the common case: one binding changed in place (grounding keeps none)
            (var, typ), = f.params
            inner, body = dict(binding), f.body
            values = universe.of_type(typ)
            form = _literal_form(body, negate)
            if form is not None and len(values) > 1:  # "(imply (broken ?i) (discarded ?i))": no walk per object
                found = _quantified_literals(form, var, values, inner, universe, isinstance(f, Forall) != negate)
                if found is not None:
                    return found
            parts = []
            for value in values:
                inner[var] = value
                parts.append(ground_formula(body, inner, universe, negate))
        else:
            parts = [ground_formula(f.body, inner, universe, negate)
                     for inner in universe.bindings(f.params, binding)]
        return _junction(parts, isinstance(f, Forall) != negate)
    if isinstance(f, Equals):
        return (binding.get(f.a, f.a) == binding.get(f.b, f.b)) != negate
    if isinstance(f, Truth):
        return f.value != negate
    raise TypeError(f"not a formula: {f!r}")


_LITERAL_FORMS: dict[tuple[int, bool], tuple[Formula, tuple | None]] = {}  # see _literal_form


def _literal_form(f: Formula, negate: bool) -> tuple[type, tuple[tuple[str, tuple[str, ...], bool], ...]] | None:
    """`ground_formula(f, ..., negate)`'s shape when that is one literal or one junction of literals: (GAll or
    GAny, ((predicate, terms, positive), ...)); None for any other formula. Worked out once per formula."""
    known = _LITERAL_FORMS.get((id(f), negate))
    if known is not None and known[0] is f:
        return known[1]
    if isinstance(f, (And, Or)):
        parts, conjunctive = [(p, negate) for p in f.parts], isinstance(f, And) != negate
    elif isinstance(f, Imply):
        parts, conjunctive = [(f.a, not negate), (f.b, negate)], negate
    else:
        parts, conjunctive = [(f, negate)], True
    literals = []
    for part, neg in parts:
        while isinstance(part, Not):
            part, neg = part.f, not neg
        if not isinstance(part, AtomF):
            literals = []
            break
        literals.append((part.predicate, part.terms, not neg))
    form = (GAll if conjunctive else GAny, tuple(literals)) if literals else None
    if len(_LITERAL_FORMS) >= 4096:
        _LITERAL_FORMS.clear()
    _LITERAL_FORMS[(id(f), negate)] = (f, form)
    return form


def _quantified_literals(form: tuple, var: str, values: tuple[str, ...], binding: dict[str, str],
                         universe: Universe, conjunctive: bool) -> GroundNode | None:
    """What `_junction` makes of a quantifier over `values` whose body has the literal `form`, built without
    hashing every node: when each literal of the body mentions `var` and no two can coincide, no two ground
    nodes are equal, so there is nothing to deduplicate. None when that does not hold (the general path)."""
    inner_cls, literals = form
    keys = [(predicate, len(terms), positive) for predicate, terms, positive in literals]
    if len(set(keys)) < len(keys) or any(var not in terms for _, terms, _ in literals):
        return None
    outer_cls = GAll if conjunctive else GAny
    flatten = len(literals) == 1 or inner_cls is outer_cls  # the parts' literals join the outer junction
    # Each literal's other terms are bound once: its arguments for a value are then `(value,)` when the
    # variable is its only term (the common case), else the fixed terms with the value in the variable's place.
    makers = [(predicate, None if terms == (var,) else tuple([None if t == var else binding.get(t, t)
                                                              for t in terms]), positive)
              for predicate, terms, positive in literals]
    atom, interned, negations, nodes = universe.atom, _INTERNED, _NEGATED, []
    # A value's part depends only on its name and the body's shape: a new house whose items keep the names
    # of an earlier one's ("mug_2") finds their parts made already.
    shape = (inner_cls, flatten, tuple(makers))
    known = _PARTS.get(shape)
    if known is None:
        if len(_PARTS) >= 256:
            _PARTS.clear()
        known = _PARTS[shape] = {}
    elif len(known) >= MAX_INTERNED:
        known.clear()
    for value in values:
        found = known.get(value)
        if found is None:
            part = []
            for predicate, fixed, positive in makers:
                args = (value,) if fixed is None else tuple([value if t is None else t for t in fixed])
                a = interned.get((predicate, args)) or atom(predicate, args)  # an Atom equals its (predicate, args)
                part.append(a if positive else negations.get(a) or _negated(a))
            found = known[value] = tuple(part) if flatten else inner_cls(tuple(part))
        if flatten:
            nodes.extend(found)
        else:
            nodes.append(found)
    return outer_cls(tuple(nodes))


_PARTS: dict[tuple, dict[str, tuple | GroundNode]] = {}  # see _quantified_literals; emptied with the atoms


def _always(state: State) -> bool:
    return True


def _never(state: State) -> bool:
    return False


def _split(items: tuple) -> tuple[frozenset, frozenset, list]:
    pos, neg, rest = [], [], []
    for item in items:
        kind = type(item)  # ground nodes are exactly these classes (or bools): no isinstance chain
        if kind is Atom:
            pos.append(item)
        elif kind is GNot:
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
    for item in items:  # exact classes, as node_literals: a quantified goal has one item per object
        if type(item) is GAny and len(item.items) == 2:
            a, b = item.items
            if type(a) is GNot and type(b) is Atom:
                a, b = b, a
            if type(a) is Atom and type(b) is GNot:
                found = need.get(b.atom)
                if found is None:
                    need[b.atom] = [a]
                else:
                    found.append(a)
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


def node_literals(node: GroundNode) -> tuple[frozenset[Atom], frozenset[Atom]]:
    """(`node_atoms(node)`, `node_atoms(node, positive=False)`) in one walk."""
    pos: set[Atom] = set()
    neg: set[Atom] = set()
    stack = [node]
    while stack:
        node = stack.pop()
        kind = type(node)  # ground nodes are exactly these classes (or bools): no isinstance chain
        if kind is Atom:
            pos.add(node)
        elif kind is GNot:
            neg.add(node.atom)
        elif kind is GAll or kind is GAny:
            stack.extend(node.items)
    return frozenset(pos), frozenset(neg)


def node_atoms(node: GroundNode, positive: bool = True) -> frozenset[Atom]:
    """The atoms that occur positively (or, with `positive=False`, negated) in a ground node."""
    found: set[Atom] = set()
    stack = [node]
    while stack:
        node = stack.pop()
        if isinstance(node, Atom):
            if positive:
                found.add(node)
        elif isinstance(node, GNot):
            if not positive:
                found.add(node.atom)
        elif isinstance(node, (GAll, GAny)):
            stack.extend(node.items)
    return frozenset(found)


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
                if len(e.params) == 1:  # one binding changed in place: walking keeps none
                    (var, typ), = e.params
                    inner = dict(bind)
                    for value in universe.of_type(typ):
                        inner[var] = value
                        walk(e.effects, inner, condition)
                else:
                    for inner in universe.bindings(e.params, bind):
                        walk(e.effects, inner, condition)
            elif isinstance(e, WhenEffect):
                test = ground_formula(e.condition, bind, universe)
                if condition is not True:  # (a conjunction with True is the other part)
                    test = _junction([condition, test], True)
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
