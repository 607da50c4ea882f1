"""Goal normalisation for equivalence: ground DNF, static folding, invariant closure, consensus.

A goal becomes a tuple of `Term`s (a disjunction); each term is a conjunction of ground literals in
a canonical form: `pos` is closed under the domain invariants (every atom that every invariant-
consistent state satisfying the term must contain), `neg` keeps only the negative literals that the
invariants do not already imply. An unsatisfiable goal is the empty tuple.
"""

from __future__ import annotations

from dataclasses import dataclass

from servicerobot.pddl._equivalence_analysis import ProblemInfo
from servicerobot.pddl.atoms import Atom
from servicerobot.pddl.model import And, AtomF, Equals, Exists, Forall, Formula, Imply, Not, Or, Truth

__all__ = [
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

MAX_SEMANTIC_ATOMS = 10
"""Disjunctive goals over at most this many atoms are decided by enumerating their assignments."""

_MAX_CONSENSUS = 64


class GoalTooComplexError(ValueError):
    """The goal's disjunctive normal form has more than `MAX_TERMS` terms."""


@dataclass(frozen=True)
class Term:
    """One canonical conjunction: atoms that must hold, atoms that must not, and all implied-false atoms."""

    pos: frozenset[Atom]
    neg: frozenset[Atom]
    implied_neg: frozenset[Atom]

    def implies(self, other: Term) -> bool:
        """True if every state satisfying self satisfies `other` (by literal inclusion)."""
        return other.pos <= self.pos and other.neg <= self.implied_neg


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
    terms = [(frozenset(), frozenset())]
    for c in children:
        sub = _dnf(c)
        terms = [(p1 | p2, n1 | n2) for p1, n1 in terms for p2, n2 in sub if not (p1 | p2) & (n1 | n2)]
        if len(terms) > MAX_TERMS:
            raise GoalTooComplexError(f"the goal has more than {MAX_TERMS} disjuncts in DNF")
    return terms


def close_term(pos: frozenset[Atom], neg: frozenset[Atom], pi: ProblemInfo) -> Term | None:
    """The invariant closure of a conjunction of literals; None if it is unsatisfiable."""
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


def consistent(pos: frozenset[Atom], neg: frozenset[Atom], pi: ProblemInfo) -> bool:
    """True if some invariant-consistent state satisfies the literals (search over exactly-one groups)."""
    t = close_term(pos, neg, pi)
    if t is None:
        return False
    for gi, key in pi.exactly_one_keys():
        left = [c for c in pi.candidates(gi, key) if c not in t.implied_neg]
        if any(c in t.pos for c in left):
            continue
        return any(consistent(t.pos | {c}, neg, pi) for c in left)
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
