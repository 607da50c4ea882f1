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
    "DelEffect",
    "Domain",
    "Effect",
    "Equals",
    "Exists",
    "Forall",
    "ForallEffect",
    "Formula",
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
    "format_params",
]

ROOT_TYPE = "object"

Params = tuple[tuple[str, str], ...]
"""Typed parameters: `(("?r", "robot"), ("?i", "item"))`."""


def format_params(params: Params) -> str:
    """`?r - robot ?i - item` for a parameter tuple."""
    return " ".join(f"{var} - {typ}" for var, typ in params)


@dataclass(frozen=True)
class TypeHierarchy:
    """The type tree: `parents` maps each declared type to its parent; the root `object` has none."""

    parents: dict[str, str] = field(default_factory=dict)
    _ancestor_cache: dict[str, tuple[str, ...]] = field(
        default_factory=dict, init=False, repr=False, compare=False
    )

    @property
    def types(self) -> tuple[str, ...]:
        """Every type, `object` first, then in declaration order."""
        return (ROOT_TYPE, *(t for t in self.parents if t != ROOT_TYPE))

    def __contains__(self, typ: object) -> bool:
        return typ == ROOT_TYPE or typ in self.parents

    def ancestors(self, typ: str) -> tuple[str, ...]:
        """The strict supertypes of `typ`, nearest first, ending with `object`.

        Raises:
            PDDLSemanticError: `typ` is not a declared type.
        """
        cached = self._ancestor_cache.get(typ)
        if cached is not None:
            return cached
        if typ not in self:
            raise PDDLSemanticError(f"unknown type {typ!r}{did_you_mean(typ, self.types)}")
        chain: list[str] = []
        current = typ
        while current != ROOT_TYPE:
            current = self.parents.get(current, ROOT_TYPE)
            if current in chain or current == typ:
                raise PDDLSemanticError(f"type {typ!r} is its own ancestor: {' - '.join([typ, *chain])}")
            chain.append(current)
        result = tuple(chain)
        self._ancestor_cache[typ] = result
        return result

    def is_subtype(self, typ: str, supertype: str) -> bool:
        """True if `typ` is `supertype` or one of its descendants."""
        return typ == supertype or supertype == ROOT_TYPE or supertype in self.ancestors(typ)

    def descendants(self, typ: str) -> tuple[str, ...]:
        """The strict subtypes of `typ`, in declaration order."""
        if typ not in self:
            raise PDDLSemanticError(f"unknown type {typ!r}{did_you_mean(typ, self.types)}")
        return tuple(t for t in self.parents if t != typ and typ in self.ancestors(t))


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


@dataclass(frozen=True)
class Action:
    """An action schema: typed parameters, a precondition formula and a tuple of effects."""

    name: str
    params: Params
    precondition: Formula
    effects: tuple[Effect, ...]

    @property
    def arity(self) -> int:
        """The number of parameters."""
        return len(self.params)

    def signature(self) -> str:
        """`(pick-up ?r - robot ?i - item ...)`, for messages."""
        return f"({self.name}{' ' if self.params else ''}{format_params(self.params)})"


@dataclass(frozen=True)
class Domain:
    """A PDDL domain. `constants` maps names to types; dicts keep declaration order."""

    name: str
    requirements: tuple[str, ...]
    types: TypeHierarchy
    constants: dict[str, str]
    predicates: dict[str, Predicate]
    actions: dict[str, Action]

    def objects_of_type(self, objects: Mapping[str, str], typ: str) -> tuple[str, ...]:
        """The constants, then the `objects` (name -> type), whose type is `typ` or a subtype of it."""
        is_subtype = self.types.is_subtype
        found = [name for name, t in self.constants.items() if is_subtype(t, typ)]
        found += [name for name, t in objects.items() if name not in self.constants and is_subtype(t, typ)]
        return tuple(found)


@dataclass(frozen=True)
class Problem:
    """A PDDL problem: objects (name -> type, without the domain's constants), init atoms and goal."""

    name: str
    domain_name: str
    objects: dict[str, str]
    init: frozenset[Atom]
    goal: Formula
