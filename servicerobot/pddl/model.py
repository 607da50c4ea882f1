"""The PDDL object model: types, predicates, formulas, effects, actions, domains and problems.

All classes are frozen dataclasses. Variables keep their `?`; parameters are `(variable, type)` pairs;
every name is lowercase. `Literal` is an alias of `AtomF`, the lifted atom of a formula.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field

from servicerobot.errors import PDDLSemanticError
from servicerobot.pddl._suggest import did_you_mean
from servicerobot.pddl.atoms import Atom

__all__ = [
    "FALSE",
    "ROOT_TYPE",
    "TRUE",
    "Action",
    "AddEffect",
    "And",
    "AtomF",
    "CostTerm",
    "DelEffect",
    "Derived",
    "Domain",
    "Effect",
    "Equals",
    "Exists",
    "Forall",
    "ForallEffect",
    "Formula",
    "Function",
    "Imply",
    "Literal",
    "Not",
    "Or",
    "Params",
    "Predicate",
    "Problem",
    "Truth",
    "TypeHierarchy",
    "WhenEffect",
    "effect_predicates",
    "either_members",
    "either_type",
    "format_params",
]

ROOT_TYPE = "object"

Params = tuple[tuple[str, str], ...]
"""Typed parameters: `(("?r", "robot"), ("?i", "item"))`."""


def format_params(params: Params) -> str:
    """`?r - robot ?i - item` for a parameter tuple."""
    return " ".join(f"{var} - {typ}" for var, typ in params)


_EITHER = "(either "


def either_type(members: tuple[str, ...]) -> str:
    """The name of the union type `(either a b ...)` of `members`, as PDDL writes it."""
    return f"{_EITHER}{' '.join(members)})"


def either_members(typ: str) -> tuple[str, ...] | None:
    """The member types of a union type name `(either a b ...)`; None for a plain type name."""
    if not typ.startswith(_EITHER) or not typ.endswith(")"):
        return None
    return tuple(typ[len(_EITHER):-1].split())


@dataclass(frozen=True)
class TypeHierarchy:
    """The type tree: `parents` maps each declared type to its parent; the root `object` has none.

    `more_parents` lists further parents of a type declared under several (`a - b  a - c`): like Fast
    Downward, such a type is a subtype of each of them.

    Subtype tests are O(1) on a tree: one depth-first walk (iterative, built on first use) numbers each type
    with the span of its subtree, and `a` is under `b` when b's span holds a's. So a chain of 20,000 types
    costs no more than 20,000 flat ones. With several parents, ancestor sets are computed per type on demand.
    """

    parents: dict[str, str] = field(default_factory=dict)
    more_parents: dict[str, tuple[str, ...]] = field(default_factory=dict)
    _ancestor_cache: dict[str, tuple[str, ...]] = field(
        default_factory=dict, init=False, repr=False, compare=False
    )
    _spans: dict[str, tuple[int, int]] = field(default_factory=dict, init=False, repr=False, compare=False)
    _ancestor_sets: dict[str, frozenset[str]] = field(
        default_factory=dict, init=False, repr=False, compare=False
    )

    @property
    def types(self) -> tuple[str, ...]:
        """Every type, `object` first, then in declaration order."""
        return (ROOT_TYPE, *(t for t in self.parents if t != ROOT_TYPE))

    def __contains__(self, typ: object) -> bool:
        if typ == ROOT_TYPE or typ in self.parents:
            return True
        members = either_members(typ) if isinstance(typ, str) else None
        return members is not None and all(m in self for m in members)

    def _numbering(self) -> dict[str, tuple[int, int]]:
        """(entry, exit) of each type in one depth-first walk of the tree from `object`, built once.

        Types on (or under) a cycle are never reached and get no span; `ancestors` says what is wrong.
        """
        spans = self._spans
        if spans:
            return spans
        children: dict[str, list[str]] = {}
        for typ, parent in self.parents.items():
            if typ != ROOT_TYPE:
                children.setdefault(parent, []).append(typ)
        for parent in list(children):  # a parent used but not declared hangs under object
            if parent != ROOT_TYPE and parent not in self.parents:
                children.setdefault(ROOT_TYPE, []).append(parent)
        clock, entry = 0, {}
        stack: list[tuple[str, bool]] = [(ROOT_TYPE, False)]
        while stack:
            typ, done = stack.pop()
            if done:
                spans[typ] = (entry.pop(typ), clock)
            else:
                entry[typ] = clock
                stack.append((typ, True))
                stack.extend((child, False) for child in reversed(children.get(typ, ())))
            clock += 1
        return spans

    def ancestors(self, typ: str) -> tuple[str, ...]:
        """The strict supertypes of `typ`, nearest first, ending with `object`.

        Raises:
            PDDLSemanticError: `typ` is not a declared type, or it is its own ancestor.
        """
        cached = self._ancestor_cache.get(typ)
        if cached is not None:
            return cached
        if typ not in self:
            raise PDDLSemanticError(f"unknown type {typ!r}{did_you_mean(typ, self.types)}")
        members = either_members(typ)
        if members is not None:  # a union's supertypes: those above (or equal to) every member
            around = [(m, *self.ancestors(m)) for m in members]
            result = tuple(t for t in around[0] if all(t in other for other in around[1:]))
            self._ancestor_cache[typ] = result
            return result
        if self.more_parents:
            return self._all_ancestors(typ)
        chain: dict[str, None] = {}
        current = typ
        while current != ROOT_TYPE:
            current = self.parents.get(current, ROOT_TYPE)
            if current in chain or current == typ:
                raise PDDLSemanticError(f"type {typ!r} is its own ancestor: {' - '.join([typ, *chain])}; "
                                        "give one type of the cycle another parent in :types")
            chain[current] = None
        result = tuple(chain)
        self._ancestor_cache[typ] = result
        return result

    def _all_ancestors(self, typ: str) -> tuple[str, ...]:
        """Breadth first over every parent (a type may have several), `object` last."""
        found: dict[str, None] = {}
        frontier = [typ]
        while frontier:
            step = []
            for t in frontier:
                for parent in (self.parents.get(t, ROOT_TYPE), *self.more_parents.get(t, ())):
                    if parent == typ:
                        raise PDDLSemanticError(f"type {typ!r} is its own ancestor; give one type of the "
                                                "cycle another parent in :types")
                    if parent != ROOT_TYPE and parent not in found:
                        found[parent] = None
                        step.append(parent)
            frontier = step
        result = (*found, ROOT_TYPE) if typ != ROOT_TYPE else ()
        self._ancestor_cache[typ] = result
        return result

    def is_subtype(self, typ: str, supertype: str) -> bool:
        """True if `typ` is `supertype` or one of its descendants."""
        if typ == supertype or supertype == ROOT_TYPE:
            return True
        members = either_members(typ)
        if members is not None:  # every object of a union is an object of one of its members
            return all(self.is_subtype(m, supertype) for m in members)
        members = either_members(supertype)
        if members is not None:
            return any(self.is_subtype(typ, m) for m in members)
        if self.more_parents:
            found = self._ancestor_sets.get(typ)
            if found is None:
                found = self._ancestor_sets[typ] = frozenset(self.ancestors(typ))
            return supertype in found
        spans = self._numbering()
        inner, outer = spans.get(typ), spans.get(supertype)
        if inner is None or outer is None:  # unknown or cyclic: ancestors() raises or answers
            return supertype in self.ancestors(typ)
        return outer[0] < inner[0] and inner[1] < outer[1]

    def descendants(self, typ: str) -> tuple[str, ...]:
        """The strict subtypes of `typ`, in declaration order."""
        if typ not in self:
            raise PDDLSemanticError(f"unknown type {typ!r}{did_you_mean(typ, self.types)}")
        return tuple(t for t in self.parents if t != typ and self.is_subtype(t, typ))


@dataclass(frozen=True)
class Predicate:
    """A predicate signature: `(on ?i - item ?s - surface)`."""

    name: str
    params: Params = ()

    @property
    def arity(self) -> int:
        """The number of arguments."""
        return len(self.params)

    def __str__(self) -> str:
        return f"({self.name}{' ' if self.params else ''}{format_params(self.params)})"


@dataclass(frozen=True)
class Function(Predicate):
    """A numeric function signature: `(road-length ?a - place ?b - place)`; only static action costs are read.

    The same shape as a `Predicate` (name, typed parameters), a different kind: the two never compare equal.
    """


@dataclass(frozen=True)
class AtomF:
    """A lifted atom in a formula; each term is a `?variable` or an object/constant name."""

    predicate: str
    terms: tuple[str, ...] = ()

    def ground(self, binding: Mapping[str, str]) -> Atom:
        """The ground Atom under a variable binding (terms that are not variables stay)."""
        return Atom(self.predicate, tuple(binding.get(t, t) for t in self.terms))


Literal = AtomF


@dataclass(frozen=True)
class Equals:
    """`(= a b)`: the two terms denote the same object."""

    a: str
    b: str


@dataclass(frozen=True)
class Not:
    """`(not f)`."""

    f: Formula


@dataclass(frozen=True)
class And:
    """`(and parts...)`; the empty conjunction is parsed as `TRUE`."""

    parts: tuple[Formula, ...]


@dataclass(frozen=True)
class Or:
    """`(or parts...)`; the empty disjunction is parsed as `FALSE`."""

    parts: tuple[Formula, ...]


@dataclass(frozen=True)
class Imply:
    """`(imply a b)`."""

    a: Formula
    b: Formula


@dataclass(frozen=True)
class Exists:
    """`(exists (params) body)`."""

    params: Params
    body: Formula


@dataclass(frozen=True)
class Forall:
    """`(forall (params) body)`."""

    params: Params
    body: Formula


@dataclass(frozen=True)
class Truth:
    """A constant truth value; use the singletons `TRUE` and `FALSE`."""

    value: bool


TRUE = Truth(True)
FALSE = Truth(False)

Formula = AtomF | Equals | Not | And | Or | Imply | Exists | Forall | Truth


@dataclass(frozen=True)
class AddEffect:
    """Make `atom` true."""

    atom: AtomF


@dataclass(frozen=True)
class DelEffect:
    """Make `atom` false."""

    atom: AtomF


@dataclass(frozen=True)
class ForallEffect:
    """`(forall (params) effects)`: the effects for every binding of the parameters."""

    params: Params
    effects: tuple[Effect, ...]


@dataclass(frozen=True)
class WhenEffect:
    """`(when condition effects)`: the effects happen if the condition holds before the action."""

    condition: Formula
    effects: tuple[Effect, ...]


Effect = AddEffect | DelEffect | ForallEffect | WhenEffect


def effect_predicates(effects: tuple[Effect, ...]) -> set[str]:
    """The predicates `effects` may change, through `forall` and `when` too."""
    found: set[str] = set()
    for e in effects:
        if isinstance(e, (AddEffect, DelEffect)):
            found.add(e.atom.predicate)
        elif isinstance(e, (ForallEffect, WhenEffect)):
            found |= effect_predicates(e.effects)
    return found

CostTerm = float | AtomF
"""One `(increase (total-cost) x)` of an action: a number, or a static function term such as
`AtomF("road-length", ("?from", "?to"))` whose value the problem's :init gives."""


@dataclass(frozen=True)
class Action:
    """An action schema: typed parameters, a precondition formula, a tuple of effects and its cost terms.

    `cost` is empty when the action does not increase `(total-cost)` (cost 0 in a domain with action costs).
    """

    name: str
    params: Params
    precondition: Formula
    effects: tuple[Effect, ...]
    cost: tuple[CostTerm, ...] = ()

    @property
    def arity(self) -> int:
        """The number of parameters."""
        return len(self.params)

    def signature(self) -> str:
        """`(pick-up ?r - robot ?i - item ...)`, for messages."""
        return f"({self.name}{' ' if self.params else ''}{format_params(self.params)})"


@dataclass(frozen=True)
class Derived:
    """A derived predicate's rule `(:derived (above ?x ?y) body)`: the atom holds when the body does."""

    name: str
    params: Params
    body: Formula


@dataclass(frozen=True)
class Domain:
    """A PDDL domain. `constants` maps names to types; dicts keep declaration order.

    `functions` are the numeric functions (only `total-cost` and static cost functions); `derived` maps a
    derived predicate (also listed in `predicates`) to its rule. `warnings` says what a lenient read
    (`parse_domain(..., strict=False)`) let through, each with its position; empty when read strictly.
    """

    name: str
    requirements: tuple[str, ...]
    types: TypeHierarchy
    constants: dict[str, str]
    predicates: dict[str, Predicate]
    actions: dict[str, Action]
    functions: dict[str, Function] = field(default_factory=dict)
    derived: dict[str, Derived] = field(default_factory=dict)
    warnings: tuple[str, ...] = field(default=(), compare=False)

    @property
    def has_action_costs(self) -> bool:
        """True if the domain declares `(total-cost)`: plans are then scored by cost, not length."""
        return "total-cost" in self.functions

    def objects_of_type(self, objects: Mapping[str, str], typ: str) -> tuple[str, ...]:
        """The constants, then the `objects` (name -> type), whose type is `typ` or a subtype of it."""
        is_subtype = self.types.is_subtype
        found = [name for name, t in self.constants.items() if is_subtype(t, typ)]
        found += [name for name, t in objects.items() if name not in self.constants and is_subtype(t, typ)]
        return tuple(found)


@dataclass(frozen=True)
class Problem:
    """A PDDL problem: objects (name -> type, without the domain's constants), init atoms and goal.

    `values` holds the initial values of numeric function terms (`(= (road-length a b) 5)`, `(= (total-cost)
    0)`); `metric` is `"minimize (total-cost)"` or empty.
    """

    name: str
    domain_name: str
    objects: dict[str, str]
    init: frozenset[Atom]
    goal: Formula
    values: dict[Atom, float] = field(default_factory=dict)
    metric: str = ""
