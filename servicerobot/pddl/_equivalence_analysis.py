"""Domain and problem analysis for goal equivalence: static predicates, mutex invariants, possible atoms.

Invariants are found once per domain by refining candidate groups of `(predicate, key position)`
pairs, in the spirit of Helmert's monotonicity invariants: a group is *at-most-one* for a key object
when every action that adds a group atom with key term `k` also deletes a group atom with key `k`
that its precondition requires; it is *balanced* when, in addition, every group delete is paired
with a group add of the same key, so the number of true group atoms per key never changes. A group
with key `None` counts all its atoms together (blocksworld's `arm-empty`/`holding`).
"""

from __future__ import annotations

import itertools
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field

from servicerobot.pddl.atoms import Atom
from servicerobot.pddl.model import (
    AddEffect,
    And,
    AtomF,
    DelEffect,
    Domain,
    ForallEffect,
    Formula,
    WhenEffect,
)

__all__ = ["DomainInfo", "Group", "ProblemInfo", "domain_info", "problem_info"]

Member = tuple[str, int | None]  # (predicate, key position); None: the group has no key


@dataclass(frozen=True)
class Group:
    """A mutex invariant: at most one (balanced: a constant number) of its atoms per key is true."""

    members: tuple[Member, ...]
    balanced: bool

    def key(self, atom: Atom) -> str | None:
        """The key object of `atom` in this group (None for a keyless group)."""
        pos = dict(self.members)[atom.predicate]
        return None if pos is None else atom.args[pos]


@dataclass(frozen=True)
class _Filter:
    """Where an action can add atoms of one predicate: allowed terms per position."""

    positions: tuple[tuple[str, str | None, tuple[str, ...]], ...]  # (term, type, static unary preds)


@dataclass
class DomainInfo:
    """What never changes in a domain: static predicates, add/delete sets, invariants, add filters."""

    domain: Domain
    added: frozenset[str]
    deleted: frozenset[str]
    groups: tuple[Group, ...]
    filters: dict[str, list[_Filter]]
    blocksworld: bool
    positions: dict[str, tuple[tuple[int, int | None], ...]] = field(default_factory=dict)

    def __post_init__(self) -> None:
        index: dict[str, list[tuple[int, int | None]]] = {}
        for gi, g in enumerate(self.groups):
            for pred, pos in g.members:
                index.setdefault(pred, []).append((gi, pos))
        self.positions = {p: tuple(v) for p, v in index.items()}

    @property
    def static(self) -> frozenset[str]:
        """Predicates no action adds or deletes."""
        return frozenset(self.domain.predicates) - self.added - self.deleted


def _conjuncts(f: Formula) -> list[Formula]:
    if isinstance(f, And):
        return [c for p in f.parts for c in _conjuncts(p)]
    return [f]


def _effects(effects: Iterable, conditional: bool, out: list) -> None:
    for e in effects:
        if isinstance(e, (AddEffect, DelEffect)):
            out.append((e, conditional, ()))
        elif isinstance(e, ForallEffect):
            inner: list = []
            _effects(e.effects, conditional, inner)
            out.extend((x, c, (*e.params, *p)) for x, c, p in inner)
        elif isinstance(e, WhenEffect):
            _effects(e.effects, True, out)


@dataclass
class _ActionView:
    params: dict[str, str]
    required: list[AtomF]
    adds: list[tuple[AtomF, bool, tuple]]
    dels: list[tuple[AtomF, bool, tuple]]


def _check(group: dict[str, int | None], view: _ActionView) -> tuple[bool, list, list, bool]:
    """(valid, unmatched adds, unmatched deletes, touched conditionally) of one action for a group."""
    keyed = next(iter(group.values())) is not None

    def key(a: AtomF) -> str | None:
        pos = group[a.predicate]
        return None if pos is None else a.terms[pos]

    adds = [a for a, cond, _ in view.adds if a.predicate in group and not cond]
    cond_touch = any(a.predicate in group and cond for a, cond, _ in view.adds + view.dels)
    if any(a.predicate in group and cond for a, cond, _ in view.adds):
        return False, [], [], True
    dels = [d for d, cond, _ in view.dels if d.predicate in group and not cond]
    keys = [key(a) for a in adds]
    if len(set(keys)) != len(keys) or (not keyed and len(adds) > 1):
        return False, [], [], cond_touch
    used: list[AtomF] = []
    unmatched_adds = []
    for a, k in zip(adds, keys):
        match = next(
            (
                d
                for d in dels
                if d not in used
                and key(d) == k
                and d in view.required
                and all(u.predicate != d.predicate for u in used)
            ),
            None,
        )
        if match is None:
            unmatched_adds.append((a, k))
        else:
            used.append(match)
    unmatched_dels = [(d, key(d)) for d in dels if d not in used]
    return True, unmatched_adds, unmatched_dels, cond_touch


def _find_groups(domain: Domain, views: list[_ActionView], fluent: set[str]) -> tuple[Group, ...]:
    """Refine seed groups until every add is matched; keep the maximal valid groups."""
    seeds: list[frozenset[Member]] = []
    for p in sorted(fluent):
        seeds.append(frozenset({(p, None)}))
        seeds.extend(frozenset({(p, i)}) for i in range(domain.predicates[p].arity))
    seen: set[frozenset[Member]] = set()
    amo: dict[frozenset[Member], bool] = {}
    queue = list(seeds)
    while queue and len(seen) < 5000:
        cand = queue.pop()
        if cand in seen or len(cand) > 7:
            continue
        seen.add(cand)
        group = dict(cand)
        if len(group) != len(cand):
            continue  # a predicate twice
        valid, fix_adds, fix_dels, cond = True, [], [], False
        for view in views:
            ok, ua, ud, c = _check(group, view)
            if not ok:
                valid = False
                break
            cond = cond or c
            fix_adds += [(view, a, k) for a, k in ua]
            fix_dels += [(view, d, k) for d, k in ud]
        if not valid:
            continue
        keyed = next(iter(group.values())) is not None
        if not fix_adds:
            amo[cand] = not fix_dels and not cond
            if fix_dels and not cond:  # try to become balanced by adding what the deletes turn into
                view, d, k = fix_dels[0]
                for a, c2, _ in view.adds:
                    if c2 or a.predicate in group or a.predicate not in fluent:
                        continue
                    positions = [i for i, t in enumerate(a.terms) if t == k] if keyed else [None]
                    queue.extend(cand | {(a.predicate, i)} for i in positions)
            continue
        view, a, k = fix_adds[0]
        for d in view.required:
            if (
                d.predicate in group
                or d.predicate not in fluent
                or not any(x.predicate == d.predicate and x == d for x, c2, _ in view.dels if not c2)
            ):
                continue
            positions = [i for i, t in enumerate(d.terms) if t == k] if keyed else [None]
            queue.extend(cand | {(d.predicate, i)} for i in positions)
    kept = []
    for cand, balanced in amo.items():
        if any(cand < other and (balanced <= amo[other]) for other in amo):
            continue
        kept.append(Group(tuple(sorted(cand, key=_member_key)), balanced))
    return tuple(sorted(kept, key=lambda g: [_member_key(m) for m in g.members]))


def _member_key(m: Member) -> tuple[str, int]:
    return (m[0], -1 if m[1] is None else m[1])


def _analyse(domain: Domain) -> DomainInfo:
    added: set[str] = set()
    deleted: set[str] = set()
    views: list[_ActionView] = []
    raw_effects = []
    for action in domain.actions.values():
        effs: list = []
        _effects(action.effects, False, effs)
        raw_effects.append((action, effs))
        for e, _, _ in effs:
            (added if isinstance(e, AddEffect) else deleted).add(e.atom.predicate)
    static = set(domain.predicates) - added - deleted
    fluent = added | deleted
    filters: dict[str, list[_Filter]] = {}
    for action, effs in raw_effects:
        required = [c for c in _conjuncts(action.precondition) if isinstance(c, AtomF)]
        params = dict(action.params)
        unary = {}
        for c in required:
            if c.predicate in static and len(c.terms) == 1:
                unary.setdefault(c.terms[0], []).append(c.predicate)
        views.append(
            _ActionView(
                params,
                required,
                [(e.atom, c, p) for e, c, p in effs if isinstance(e, AddEffect)],
                [(e.atom, c, p) for e, c, p in effs if isinstance(e, DelEffect)],
            )
        )
        for e, _, extra in effs:
            if not isinstance(e, AddEffect):
                continue
            types = {**params, **dict(extra)}
            positions = tuple(
                (t, types.get(t), tuple(unary.get(t, ())) if t in params else ()) for t in e.atom.terms
            )
            filters.setdefault(e.atom.predicate, []).append(_Filter(positions))
    groups = _find_groups(domain, views, fluent)
    preds = domain.predicates
    blocks = (
        "on" in preds
        and preds["on"].arity == 2
        and "on-table" in preds
        and "clear" in preds
        and "blocks" in domain.name
    )
    return DomainInfo(domain, frozenset(added), frozenset(deleted), groups, filters, blocks)


_CACHE: dict[int, tuple[Domain, DomainInfo]] = {}


def domain_info(domain: Domain) -> DomainInfo:
    """The (cached) analysis of `domain`."""
    hit = _CACHE.get(id(domain))
    if hit is not None and hit[0] is domain:
        return hit[1]
    info = _analyse(domain)
    if len(_CACHE) > 64:
        _CACHE.clear()
    _CACHE[id(domain)] = (domain, info)
    return info


@dataclass
class ProblemInfo:
    """Per-problem facts: objects, init, possible atoms and the invariant status of each group key."""

    info: DomainInfo
    objects: dict[str, str]
    init: frozenset[Atom]
    _typed: dict[str, tuple[str, ...]] = field(default_factory=dict)
    _cands: dict[tuple[int, str | None], tuple[Atom, ...]] = field(default_factory=dict)
    _counts: dict[tuple[int, str | None], int] = field(default_factory=dict)
    _allowed_cache: dict[tuple, frozenset[str]] = field(default_factory=dict)
    _possible: dict[Atom, bool] = field(default_factory=dict)
    _exactly: list[tuple[int, str | None]] | None = None
    _init_index: dict[tuple[str, int | None, str | None], list[Atom]] = field(default_factory=dict)
    _group_keys: dict[int, tuple[str, ...]] = field(default_factory=dict)
    _filter_sets: dict[str, list[tuple[frozenset[str], ...]]] = field(default_factory=dict)

    def __post_init__(self) -> None:
        positions = self.info.positions
        index = self._init_index
        for a in self.init:
            index.setdefault((a.predicate, None, None), []).append(a)
            for pos, arg in enumerate(a.args):
                index.setdefault((a.predicate, pos, arg), []).append(a)
            for gi, pos in positions.get(a.predicate, ()):
                k = (gi, None if pos is None else a.args[pos])
                self._counts[k] = self._counts.get(k, 0) + 1

    def init_with(self, predicate: str, pos: int | None, key: str | None) -> list[Atom]:
        """The initial atoms of `predicate` with `key` at position `pos` (all of them for None)."""
        return self._init_index.get((predicate, pos, key), [])

    def group_keys(self, gi: int) -> tuple[str, ...]:
        """Every object that can be the key of a true atom of keyed group `gi` (sorted)."""
        hit = self._group_keys.get(gi)
        if hit is None:
            keys: set[str] = set()
            for pred, pos in self.info.groups[gi].members:
                if pos is None:
                    continue
                keys.update(a.args[pos] for a in self.init if a.predicate == pred)
                for flt in self.info.filters.get(pred, ()):
                    keys.update(self._allowed(*flt.positions[pos]))
            hit = self._group_keys[gi] = tuple(sorted(keys))
        return hit

    def filter_sets(self, predicate: str) -> list[tuple[frozenset[str], ...]]:
        """Per distinct add filter of `predicate`: the objects an action can put at each position."""
        hit = self._filter_sets.get(predicate)
        if hit is None:
            seen: dict[tuple, None] = {}
            for flt in self.info.filters.get(predicate, ()):
                seen.setdefault(tuple(self._allowed(*position) for position in flt.positions), None)
            hit = self._filter_sets[predicate] = list(seen)
        return hit

    def of_type(self, typ: str | None) -> tuple[str, ...]:
        """The objects (constants included) of type `typ` (all objects for None)."""
        key = typ or "object"
        hit = self._typed.get(key)
        if hit is None:
            hit = self.info.domain.objects_of_type(self.objects, key)
            self._typed[key] = hit
        return hit

    def _allowed(self, term: str, typ: str | None, unary: tuple[str, ...]) -> frozenset[str]:
        key = (term, typ, unary) if not term.startswith("?") else (None, typ, unary)
        hit = self._allowed_cache.get(key)
        if hit is not None:
            return hit
        if typ is None and not term.startswith("?"):
            hit = frozenset((term,))
        else:
            objs = self.of_type(typ)
            for u in unary:
                objs = tuple(o for o in objs if Atom(u, (o,)) in self.init)
            hit = frozenset(objs)
        self._allowed_cache[key] = hit
        return hit

    def can_be_true(self, atom: Atom) -> bool:
        """False when no reachable state can contain `atom` (never added, or outside every add filter)."""
        hit = self._possible.get(atom)
        if hit is None:
            hit = self._possible[atom] = self._can_be_true(atom)
        return hit

    def _can_be_true(self, atom: Atom) -> bool:
        if atom in self.init:
            return True
        p = atom.predicate
        if p not in self.info.added:
            return False
        if self.info.blocksworld and p == "on" and atom.args[0] == atom.args[1]:
            return False
        groups = self.info.groups
        for gi, pos in self.info.positions.get(p, ()):
            if groups[gi].balanced and self.count(gi, None if pos is None else atom.args[pos]) == 0:
                return False
        for flt in self.info.filters.get(p, ()):
            if all(arg in self._allowed(t, typ, u) for arg, (t, typ, u) in zip(atom.args, flt.positions)):
                return True
        return False

    def count(self, gi: int, key: str | None) -> int:
        """How many atoms of group `gi` with key `key` are true initially."""
        return self._counts.get((gi, key), 0)

    def candidates(self, gi: int, key: str | None) -> tuple[Atom, ...]:
        """Every atom of group `gi` with key `key` that can be true in some state."""
        hit = self._cands.get((gi, key))
        if hit is not None:
            return hit
        found: dict[Atom, None] = {}
        for pred, pos in self.info.groups[gi].members:
            for a in self.init_with(pred, pos, key):
                found[a] = None
            for flt in self.info.filters.get(pred, ()):
                choices = []
                for i, (t, typ, u) in enumerate(flt.positions):
                    if pos == i:
                        choices.append((key,) if key in self._allowed(t, typ, u) else ())
                    else:
                        choices.append(sorted(self._allowed(t, typ, u)))
                for args in itertools.product(*choices):
                    atom = Atom(pred, args)
                    if atom not in found and self.can_be_true(atom):
                        found[atom] = None
        hit = tuple(found)
        self._cands[(gi, key)] = hit
        return hit

    def memberships(self, atom: Atom) -> list[tuple[int, str | None]]:
        """The (group index, key) pairs whose group contains `atom`."""
        return [
            (gi, None if pos is None else atom.args[pos])
            for gi, pos in self.info.positions.get(atom.predicate, ())
        ]

    def at_most_one(self, gi: int, key: str | None) -> bool:
        """True if at most one atom of group `gi` with `key` is true in every reachable state."""
        return self.count(gi, key) <= 1

    def exactly_one_keys(self) -> list[tuple[int, str | None]]:
        """The (group, key) pairs with exactly one true atom in every reachable state."""
        if self._exactly is None:
            groups = self.info.groups
            self._exactly = sorted(
                (k for k, n in self._counts.items() if n == 1 and groups[k[0]].balanced),
                key=lambda k: (k[0], k[1] or ""),
            )
        return self._exactly


def problem_info(info: DomainInfo, objects: Mapping[str, str], init: frozenset[Atom]) -> ProblemInfo:
    """Build the per-problem analysis."""
    return ProblemInfo(info, {**info.domain.constants, **objects}, init)
