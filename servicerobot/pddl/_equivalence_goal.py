"""Goal normalisation for equivalence: ground DNF, static folding, invariant closure, consensus.

A goal becomes a tuple of `Term`s (a disjunction); each term is a conjunction of ground literals in
a canonical form: `pos` is closed under the domain invariants (every atom that every invariant-
consistent state satisfying the term must contain), `neg` keeps only the negative literals that the
invariants do not already imply. An unsatisfiable goal is the empty tuple. The closure is
incremental (`_Closure`: O(n) steps for a full-state goal over n objects); `_close_term_scan` is the
rescanning closure it replaced, kept as the reference the tests compare it with and as a fallback.
"""

from __future__ import annotations

import itertools
from collections.abc import Container, Iterator
from dataclasses import dataclass, field

from servicerobot.pddl._equivalence_analysis import ProblemInfo
from servicerobot.pddl._equivalence_budget import GoalTooComplexError, spend
from servicerobot.pddl.atoms import Atom
from servicerobot.pddl.model import And, AtomF, Equals, Exists, Forall, Formula, Imply, Not, Or, Truth

__all__ = [
    "MAX_BINDINGS",
    "MAX_SEMANTIC_ATOMS",
    "MAX_TERMS",
    "GoalTooComplexError",
    "Term",
    "close_term",
    "consistent",
    "normalise_goal",
]

MAX_TERMS = 4096
"""The most DNF terms a goal may expand to."""

MAX_BINDINGS = 1_000_000
"""The most bindings one quantifier of a goal may range over (the product of its variables' domains)."""

MAX_SEMANTIC_ATOMS = 10
"""Disjunctive goals over at most this many atoms are decided by enumerating their assignments."""

_MAX_CONSENSUS = 64


@dataclass(frozen=True)
class Term:
    """One canonical conjunction: atoms that must hold, atoms that must not, and all implied-false atoms."""

    pos: frozenset[Atom]
    neg: frozenset[Atom]
    implied_neg: Container[Atom] = field(default=frozenset(), compare=False, hash=False, repr=False)
    """Every atom false in all states of the term (`neg` and what the invariants imply); a function of
    `pos` and `neg`, so it takes no part in equality. Tested by `in`: it is not enumerable."""

    def implies(self, other: Term) -> bool:
        """True if every state satisfying self satisfies `other` (by literal inclusion)."""
        return other.pos <= self.pos and all(x in self.implied_neg for x in other.neg)


_T = "T"
_F = "F"


def _nnf(f: Formula, binding: dict[str, str], pi: ProblemInfo, positive: bool):
    """Ground NNF: `_T`, `_F`, (positive, Atom), or ("and"|"or", [children])."""
    if isinstance(f, AtomF):
        atom = f.ground(binding)
        value = _fixed_value(atom, pi)
        if value is None:
            return (positive, atom)
        return _T if value == positive else _F
    if isinstance(f, Truth):
        return _T if f.value == positive else _F
    if isinstance(f, Equals):
        same = binding.get(f.a, f.a) == binding.get(f.b, f.b)
        return _T if same == positive else _F
    if isinstance(f, Not):
        return _nnf(f.f, binding, pi, not positive)
    if isinstance(f, Imply):
        return _nnf(Or((Not(f.a), f.b)), binding, pi, positive)
    if isinstance(f, (And, Or)):
        conj = isinstance(f, And) == positive
        return _junction([_nnf(p, binding, pi, positive) for p in f.parts], conj)
    if isinstance(f, (Forall, Exists)):
        conj = isinstance(f, Forall) == positive
        count = 1
        for _, typ in f.params:
            count *= len(pi.of_type(typ))
        if count > MAX_BINDINGS:  # checked before building them: a list this long would exhaust memory
            raise GoalTooComplexError(f"a quantifier of the goal ranges over {count:,} bindings (at most "
                                      f"{MAX_BINDINGS:,})")
        spend(count, "expanding the goal's quantifiers")
        bindings = [dict(binding)]
        for var, typ in f.params:
            bindings = [{**b, var: o} for b in bindings for o in pi.of_type(typ)]
        return _junction([_nnf(f.body, b, pi, positive) for b in bindings], conj)
    raise TypeError(f"cannot normalise goal part {f!r}")


def _junction(children: list, conj: bool):
    unit, zero = (_T, _F) if conj else (_F, _T)
    kept = []
    for c in children:
        if c == zero:
            return zero
        if c != unit:
            kept.append(c)
    if not kept:
        return unit
    return kept[0] if len(kept) == 1 else ("and" if conj else "or", kept)


def _fixed_value(atom: Atom, pi: ProblemInfo) -> bool | None:
    """The truth value of `atom` in every reachable state, if the domain fixes it; else None."""
    info = pi.info
    p = atom.predicate
    if p not in info.added and p not in info.deleted:
        return atom in pi.init
    if p not in info.deleted and atom in pi.init:
        return True
    if not pi.can_be_true(atom):
        return False
    return None


def _dnf(node) -> list[tuple[frozenset, frozenset]]:
    if node == _T:
        return [(frozenset(), frozenset())]
    if node == _F:
        return []
    if isinstance(node[0], bool):
        positive, atom = node
        return [(frozenset({atom}), frozenset())] if positive else [(frozenset(), frozenset({atom}))]
    kind, children = node
    if kind == "or":
        out = [t for c in children for t in _dnf(c)]
        if len(out) > MAX_TERMS:
            raise GoalTooComplexError(f"the goal has more than {MAX_TERMS} disjuncts in DNF")
        return out
    pos: set[Atom] = set()  # the literal children in one pass: a big conjunction stays O(n)
    neg: set[Atom] = set()
    rest = []
    for c in children:
        if isinstance(c, tuple) and isinstance(c[0], bool):
            (pos if c[0] else neg).add(c[1])
        else:
            rest.append(c)
    if pos & neg:
        return []
    spend(len(children), "expanding the goal")
    terms = [(frozenset(pos), frozenset(neg))]
    for c in rest:
        sub = _dnf(c)
        terms = [(p1 | p2, n1 | n2) for p1, n1 in terms for p2, n2 in sub if not (p1 | p2) & (n1 | n2)]
        if len(terms) > MAX_TERMS:
            raise GoalTooComplexError(f"the goal has more than {MAX_TERMS} disjuncts in DNF")
    return terms


class _FreeKeys:
    """The keys of one group that no atom of the term occupies: a list with O(1) removal."""

    __slots__ = ("items", "where")

    def __init__(self, keys: Iterator[str]) -> None:
        self.items = list(keys)
        self.where = {k: i for i, k in enumerate(self.items)}

    def discard(self, key: str | None) -> None:
        i = self.where.pop(key, None)
        if i is None:
            return
        last = self.items.pop()
        if i < len(self.items):
            self.items[i] = last
            self.where[last] = i

    def __contains__(self, key: object) -> bool:
        return key in self.where

    def __len__(self) -> int:
        return len(self.items)


class _Closure:
    """The invariant closure of one conjunction, computed incrementally.

    Each at-most-one (group, key) that an atom of the term has is *occupied*; an atom is excluded when
    it is negated, impossible, on an occupied key of another atom, or (blocksworld) would close a
    tower cycle. Each exactly-one key that no term atom occupies keeps two non-excluded *witnesses*;
    when a witness is excluded the key is scanned again, and a key left with one candidate forces it
    into the term, with none makes the term unsatisfiable. Candidates are enumerated through the
    unoccupied keys of a guard position, so a full-state goal over n objects closes in O(n) steps.
    """

    def __init__(self, pi: ProblemInfo, neg: frozenset[Atom]) -> None:
        self.pi = pi
        self.neg = neg
        self.p: set[Atom] = set()
        self.occ: dict[tuple[int, str | None], Atom] = {}
        self.free: dict[int, _FreeKeys] = {}
        self.witness: dict[tuple[int, str | None], list[Atom]] = {}
        self.watch: dict[Atom, list[tuple[int, str | None]]] = {}
        self.by_key: dict[tuple[int, str | None], list[Atom]] = {}
        self.pending: list[tuple[int, str | None]] = []
        self.blocks = pi.info.blocksworld
        self.top_of: dict[str, str] = {}  # bottom of a chain of `on` atoms -> its top
        self.bottom_of: dict[str, str] = {}  # top -> bottom
        self.exact_chains = True
        self.positions = pi.info.positions

    # -- exclusion -------------------------------------------------------------------------------
    def excluded(self, c: Atom) -> bool:
        """True if no state of the term (as closed so far) contains `c`; `c` must not be in the term."""
        if c in self.neg or not self.pi.can_be_true(c):
            return True
        occ = self.occ
        args = c.args
        for gi, pos in self.positions.get(c.predicate, ()):
            if (gi, None if pos is None else args[pos]) in occ:
                return True
        return self.blocks and c.predicate == "on" and self.top_of.get(c.args[0]) == c.args[1]

    # -- adding atoms ----------------------------------------------------------------------------
    def add(self, a: Atom) -> bool:
        """Put `a` in the term; False if that makes it unsatisfiable."""
        if a in self.p:
            return True
        if a in self.neg or not self.pi.can_be_true(a):
            return False
        self.p.add(a)
        pi = self.pi
        for m in pi.memberships(a):
            if not pi.at_most_one(*m):
                continue
            if m in self.occ:
                return False  # two term atoms on one at-most-one key
            self.occ[m] = a
            free = self.free.get(m[0])
            if free is not None:
                free.discard(m[1])
            for c in self.by_key.pop(m, ()):
                if c != a:
                    self._lose(c)
        if self.blocks and a.predicate == "on":
            return self._link(a)
        return True

    def _link(self, a: Atom) -> bool:
        x, y = a.args  # x on y: x is the bottom of its chain, y the top of its own
        pi = self.pi
        keyed = [(m, pos) for m, (_, pos) in zip(pi.memberships(a), pi.info.positions["on"]) if pos is not None]
        if {pos for _, pos in keyed} != {0, 1} or not all(pi.at_most_one(*m) for m, _ in keyed):
            self.exact_chains = False  # chains need not be paths: the caller falls back to the scan
            return False
        if x == y:
            return False
        bottom = self.bottom_of.pop(y, y)
        top = self.top_of.pop(x, x)
        if bottom == x or top == y:
            return False  # a cycle
        self.top_of.pop(bottom, None)
        self.bottom_of.pop(top, None)
        self.top_of[bottom] = top
        self.bottom_of[top] = bottom
        closing = Atom("on", (bottom, top))
        if closing in self.watch:
            self._lose(closing)
        return True

    def _lose(self, c: Atom) -> None:
        for k in self.watch.pop(c, ()):
            w = self.witness.get(k)
            if w is not None and c in w:
                w.remove(c)
                self.pending.append(k)

    # -- candidates ------------------------------------------------------------------------------
    def _free(self, gi: int) -> _FreeKeys:
        hit = self.free.get(gi)
        if hit is None:
            occ = self.occ
            hit = self.free[gi] = _FreeKeys(k for k in self.pi.group_keys(gi) if (gi, k) not in occ)
        return hit

    def candidates(self, key: tuple[int, str | None]) -> Iterator[Atom]:
        """Atoms of exactly-one `key` (unoccupied) that may be non-excluded; some may repeat or be excluded."""
        pi = self.pi
        gi, k = key
        info = pi.info
        for pred, kp in info.groups[gi].members:
            yield from pi.init_with(pred, kp, k)
            guards = [(g, pos) for g, pos in info.positions.get(pred, ()) if pos is not None and pos != kp]
            for allowed_sets in pi.filter_sets(pred):
                n = len(allowed_sets)
                if kp is not None and k not in allowed_sets[kp]:
                    continue
                sets: list = [(k,) if i == kp else allowed_sets[i] for i in range(n)]
                best = None
                for g, pos in guards:
                    free = self._free(g)
                    if len(free) < len(sets[pos]) and (best is None or len(free) < len(best[0])):
                        best = (free, pos)
                if best is not None:
                    free, pos = best
                    allowed = sets[pos]
                    sets[pos] = (o for o in free.items if o in allowed)
                if n == 1:
                    for o in sets[0]:
                        spend(1, "closing a goal under the invariants")
                        yield Atom(pred, (o,))
                elif n == 2 and kp is not None:
                    other = sets[1 - kp]
                    for o in other:
                        spend(1, "closing a goal under the invariants")
                        yield Atom(pred, (k, o) if kp == 0 else (o, k))
                else:
                    for args in itertools.product(*sets):
                        spend(1, "closing a goal under the invariants")
                        yield Atom(pred, args)

    def alive(self, key: tuple[int, str | None], most: int | None, known: list[Atom] = ()) -> list[Atom]:
        """Up to `most` distinct non-excluded candidates of `key` (all for None), `known` ones first."""
        found = [c for c in known if not self.excluded(c)]
        seen = set(found)
        if most is not None and len(found) >= most:
            return found
        for c in self.candidates(key):
            if c in seen or self.excluded(c):
                continue
            seen.add(c)
            found.append(c)
            if most is not None and len(found) >= most:
                break
        return found

    # -- the fixpoint ----------------------------------------------------------------------------
    def close(self, pos: frozenset[Atom]) -> bool:
        """Add `pos` and everything the exactly-one keys force; False if unsatisfiable."""
        for a in pos:
            if not self.add(a):
                return False
        self.pending = list(reversed(self.pi.exactly_one_keys()))
        spend(len(self.pending), "closing a goal under the invariants")
        while self.pending:
            k = self.pending.pop()
            if k in self.occ:
                continue
            left = self.alive(k, 2, self.witness.get(k, []))
            if not left:
                return False
            if len(left) == 1:
                self.witness.pop(k, None)
                if not self.add(left[0]):
                    return False
                continue
            self.witness[k] = left
            for c in left:
                self.watch.setdefault(c, []).append(k)
                for m in self.pi.memberships(c):
                    self.by_key.setdefault(m, []).append(c)
        return True


class _Implied:
    """Membership in the atoms a closed term makes false (its negated atoms included), without listing them."""

    __slots__ = ("_chains", "closure")

    def __init__(self, closure: _Closure) -> None:
        self.closure = closure
        self._chains: dict[str, tuple[str, int]] | None = None

    def implied(self, c: Atom) -> bool:
        """True if the invariants (not the negated literals) make `c` false."""
        cl = self.closure
        if c in cl.p:
            return False
        occ = cl.occ
        if cl.pi.can_be_true(c) and any(m in occ and occ[m] != c for m in cl.pi.memberships(c)):
            return True
        if cl.blocks and c.predicate == "on":
            chains = self._chain_positions()
            z, x = c.args
            return z in chains and x in chains and chains[z][0] == chains[x][0] and chains[z][1] < chains[x][1]
        return False

    def _chain_positions(self) -> dict[str, tuple[str, int]]:
        """Each block in a chain of term `on` atoms -> (the chain's bottom, its height in the chain)."""
        if self._chains is None:
            above = {a.args[1]: a.args[0] for a in self.closure.p if a.predicate == "on"}
            below = set(above.values())
            chains: dict[str, tuple[str, int]] = {}
            for bottom in above:
                if bottom in below:
                    continue
                z, depth = bottom, 0
                while z is not None and z not in chains:
                    chains[z] = (bottom, depth)
                    z, depth = above.get(z), depth + 1
            self._chains = chains
        return self._chains

    def __contains__(self, c: object) -> bool:
        return isinstance(c, Atom) and (c in self.closure.neg or self.implied(c))


def close_term(pos: frozenset[Atom], neg: frozenset[Atom], pi: ProblemInfo) -> Term | None:
    """The invariant closure of a conjunction of literals; None if it is unsatisfiable."""
    closure = _Closure(pi, neg)
    closed = closure.close(pos)
    if not closure.exact_chains:  # towers in an init that breaks the invariants: the general scan
        return _close_term_scan(pos, neg, pi)
    if not closed:
        return None
    implied = _Implied(closure)
    return Term(frozenset(closure.p), frozenset(a for a in neg if not implied.implied(a)), implied)


def consistent(pos: frozenset[Atom], neg: frozenset[Atom], pi: ProblemInfo) -> bool:
    """True if some invariant-consistent state satisfies the literals (search over exactly-one groups)."""
    closure = _Closure(pi, neg)
    closed = closure.close(pos)
    if not closure.exact_chains:
        return _consistent_scan(pos, neg, pi)
    if not closed:
        return False
    for k in pi.exactly_one_keys():
        if k in closure.occ:
            continue
        spend(1, "searching for a state consistent with a goal")
        left = closure.alive(k, None)
        return any(consistent(frozenset(closure.p | {c}), neg, pi) for c in left)
    return True


def _close_term_scan(pos: frozenset[Atom], neg: frozenset[Atom], pi: ProblemInfo) -> Term | None:
    """The closure by rescanning every exactly-one key until nothing changes (O(n^2) per pass).

    The reference the incremental `_Closure` must agree with, and its fallback when an `on` atom of
    a blocksworld goal has a key that the initial state holds twice (then chains need not be paths).
    """
    p = set(pos)
    implied: set[Atom] = set()
    seen: set[Atom] = set()
    exactly = pi.exactly_one_keys()
    changed = True
    while changed:
        changed = False
        for a in list(p):
            if a in seen:
                continue
            seen.add(a)
            if a in neg or not pi.can_be_true(a):
                return None
            for gi, key in pi.memberships(a):
                if pi.at_most_one(gi, key):
                    for c in pi.candidates(gi, key):
                        spend(1, "closing a goal under the invariants")
                        if c != a:
                            if c in p:
                                return None
                            implied.add(c)
        if pi.info.blocksworld and not _blocks_rule(p, implied):
            return None
        for gi, key in exactly:
            left = None
            n = 0
            for c in pi.candidates(gi, key):
                spend(1, "closing a goal under the invariants")
                if c not in neg and c not in implied:
                    n += 1
                    left = c
                    if n > 1:
                        break
            if n == 0:
                return None
            if n == 1 and left not in p:
                p.add(left)
                changed = True
    if p & implied:
        return None
    all_neg = frozenset(implied | neg)
    return Term(frozenset(p), frozenset(neg) - implied, all_neg)


def _consistent_scan(pos: frozenset[Atom], neg: frozenset[Atom], pi: ProblemInfo) -> bool:
    t = _close_term_scan(pos, neg, pi)
    if t is None:
        return False
    for gi, key in pi.exactly_one_keys():
        left = [c for c in pi.candidates(gi, key) if c not in t.implied_neg]
        if any(c in t.pos for c in left):
            continue
        return any(_consistent_scan(t.pos | {c}, neg, pi) for c in left)
    return True


def _blocks_rule(p: set[Atom], implied: set[Atom]) -> bool:
    """Blocksworld towers are acyclic: forbid `on` atoms that would close a cycle; False on a cycle."""
    below = {a.args[0]: a.args[1] for a in p if a.predicate == "on"}
    for x in below:
        chain = []
        z = x
        while z in below:
            z = below[z]
            if z == x:
                return False
            chain.append(z)
            if len(chain) > len(below):
                return False
        for z in chain:
            implied.add(Atom("on", (z, x)))
    return True


def normalise_goal(goal: Formula, pi: ProblemInfo) -> tuple[Term, ...]:
    """The canonical disjunction of closed terms of `goal` (empty: unsatisfiable).

    Raises:
        GoalTooComplexError: the DNF is larger than `MAX_TERMS`.
    """
    terms: list[Term] = []
    for pos, neg in _dnf(_nnf(goal, {}, pi, True)):
        t = close_term(pos, neg, pi)
        if t is not None:
            terms.append(t)
    terms = _absorb(terms)
    if len(terms) > 1:
        atoms = sorted({a for t in terms for a in t.pos | t.neg})
        if len(atoms) <= MAX_SEMANTIC_ATOMS:
            terms = _prime_implicants(terms, atoms, pi)
        elif len(terms) <= _MAX_CONSENSUS:
            terms = _consensus(terms, pi)
    return tuple(sorted(terms, key=lambda t: (len(t.pos), len(t.neg), sorted(t.pos), sorted(t.neg))))


def _absorb(terms: list[Term]) -> list[Term]:
    out: list[Term] = []
    for t in sorted(set(terms), key=lambda t: len(t.pos) + len(t.neg)):
        if not any(t.implies(o) for o in out):
            out.append(t)
    return out


def _consensus(terms: list[Term], pi: ProblemInfo) -> list[Term]:
    """Add consensus terms until none is new (Blake canonical form over the closed literals)."""
    changed = True
    while changed and len(terms) <= _MAX_CONSENSUS:
        changed = False
        for i in range(len(terms)):
            for j in range(i + 1, len(terms)):
                a, b = terms[i], terms[j]
                clash = (a.pos & b.neg) | (a.neg & b.pos)
                if len(clash) != 1:
                    continue
                x = next(iter(clash))
                t = close_term((a.pos | b.pos) - {x}, (a.neg | b.neg) - {x}, pi)
                if t is None or any(t.implies(o) for o in terms):
                    continue
                terms = _absorb([*terms, t])
                changed = True
                break
            if changed:
                break
    return terms


def _prime_implicants(terms: list[Term], atoms: list[Atom], pi: ProblemInfo) -> list[Term]:
    """Quine-McCluskey over the goal's atoms: models are ON, invariant-inconsistent assignments don't-care.

    The result is the closed prime implicants that cover at least one consistent model, a canonical
    form of the goal's set of invariant-consistent models over `atoms`.
    """
    n = len(atoms)
    index = {a: i for i, a in enumerate(atoms)}
    masks = [(sum(1 << index[a] for a in t.pos), sum(1 << index[a] for a in t.neg)) for t in terms]
    on: set[int] = set()
    care_off = 0
    cubes: set[tuple[int, int]] = set()  # (value, fixed-bit mask)
    full = (1 << n) - 1
    for v in range(1 << n):
        if any(v & p == p and not v & q for p, q in masks):
            on.add(v)
            cubes.add((v, full))
            continue
        pos = frozenset(atoms[i] for i in range(n) if v >> i & 1)
        if not consistent(pos, frozenset(atoms) - pos, pi):
            cubes.add((v, full))  # don't-care: no consistent state has this assignment
        else:
            care_off += 1
    if not on:
        return []
    if care_off == 0:
        t = close_term(frozenset(), frozenset(), pi)
        return [t] if t is not None else []
    primes: set[tuple[int, int]] = set()
    while cubes:
        merged: set[tuple[int, int]] = set()
        used: set[tuple[int, int]] = set()
        by_mask: dict[int, set[int]] = {}
        for v, m in cubes:
            by_mask.setdefault(m, set()).add(v)
        for m, values in by_mask.items():
            for v in values:
                bit = 1
                while bit <= m:
                    if m & bit and not v & bit and (v | bit) in values:
                        merged.add((v, m & ~bit))
                        used.add((v, m))
                        used.add((v | bit, m))
                    bit <<= 1
        primes |= cubes - used
        cubes = merged
    out: list[Term] = []
    for v, m in primes:
        if not any(w & m == v & m for w in on):
            continue
        pos = frozenset(atoms[i] for i in range(n) if m >> i & 1 and v >> i & 1)
        neg = frozenset(atoms[i] for i in range(n) if m >> i & 1 and not v >> i & 1)
        t = close_term(pos, neg, pi)
        if t is not None:
            out.append(t)
    return _absorb(out)
