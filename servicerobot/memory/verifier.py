"""The domain verifier: checks a proposed memory update before any of it is applied.

Checks, each with a message that names the triplet and says how to fix it: the predicate exists, the
arity fits (unary facts take `true` as object), argument types fit the predicate (supertypes count),
entities exist, nothing added is already believed, nothing removed is absent, and functional relations
keep one value (an item is in one place, a person in one room). Functional relations are not listed by
hand: they are the domain's mutex invariants, proved from its actions (`domain_info`).
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Iterable
from typing import Protocol

from servicerobot.memory.triplets import Delta, atom_to_triplet
from servicerobot.pddl import Atom, Domain
from servicerobot.pddl._equivalence_analysis import domain_info
from servicerobot.pddl._suggest import did_you_mean

__all__ = ["Beliefs", "Verifier", "functional_groups"]

Member = tuple[str, int]


class Beliefs(Protocol):
    """What the verifier reads of a memory (`servicerobot.memory.graph.KnowledgeGraph` has it): the facts
    held, the facts about an entity, and the entities with their types. The verifier names no memory class,
    so the graph can use the verifier without the two modules importing each other."""

    @property
    def objects(self) -> Iterable[str]: ...

    def __contains__(self, atom: object) -> bool: ...

    def facts_about(self, entity: str) -> Iterable[Atom]: ...

    def has_entity(self, name: str) -> bool: ...

    def type_of(self, name: str) -> str: ...


def _groups_for(domain: Domain) -> tuple[tuple[Member, ...], ...]:
    groups = []
    for group in domain_info(domain).groups:
        members = tuple(m for m in group.members if m[1] is not None)
        if not members or len(members) != len(group.members):
            continue
        # A single unary member ("dirty ?x" keyed by ?x) is trivially at most one; skip it.
        if len(members) == 1 and domain.predicates[members[0][0]].arity < 2:
            continue
        groups.append(members)
    return tuple(groups)


def functional_groups(domain: Domain) -> tuple[tuple[Member, ...], ...]:
    """Groups of (predicate, key position): per key entity at most one atom of a group is true.

    For the household domain: {on/0, inside/0, holding/1, held-by/0, discarded/0} (where an item is),
    {in-room/0} (where a thing is), {hand-empty/0, holding/0} (what the robot's hand holds).
    """
    return _groups_for(domain)  # domain_info caches the analysis per domain


def _show(atom: Atom) -> str:
    s, p, o = atom_to_triplet(atom)
    return f"({s}, {p}, {str(o).lower() if o is True else o})"


class Verifier:
    """Checks `Delta`s against a domain and the current memory; `check` returns the problems found."""

    def __init__(self, domain: Domain):
        self.domain = domain
        self.groups = functional_groups(domain)
        self._group_of: dict[str, list[tuple[int, int]]] = defaultdict(list)
        for gi, members in enumerate(self.groups):
            for predicate, position in members:
                self._group_of[predicate].append((gi, position))

    def check(self, delta: Delta, memory: Beliefs) -> list[str]:
        """Every problem with applying `delta` to `memory`; an empty list means it may be applied."""
        problems: list[str] = []
        for atom in sorted(delta.add):
            problems.extend(self._check_atom(atom, memory, "ADD"))
        for atom in sorted(delta.remove):
            problems.extend(self._check_atom(atom, memory, "REMOVE"))
        if problems:
            return problems
        for atom in sorted(delta.add):
            if atom in memory and atom not in delta.remove:
                problems.append(f"ADD {_show(atom)}: memory already holds this fact; do not add it again")
        for atom in sorted(delta.remove):
            if atom not in memory:
                problems.append(f"REMOVE {_show(atom)}: memory does not hold this fact, so it cannot be "
                                f"removed; remove the fact that is actually believed{self._believed(atom, memory)}")
        problems.extend(self._check_functional(delta, memory))
        return problems

    def _believed(self, atom: Atom, memory: Beliefs) -> str:
        """A hint: what memory believes instead, for the same subject and predicate group."""
        related = [a for a in memory.facts_about(atom.args[0])
                   if a.predicate == atom.predicate or self._same_group(a, atom)]
        if not related:
            return ""
        return " (memory has " + ", ".join(_show(a) for a in related[:3]) + ")"

    def _same_group(self, a: Atom, b: Atom) -> bool:
        ga = {gi for gi, _ in self._group_of.get(a.predicate, ())}
        return any(gi in ga for gi, _ in self._group_of.get(b.predicate, ()))

    def _check_atom(self, atom: Atom, memory: Beliefs, side: str) -> list[str]:
        pred = self.domain.predicates.get(atom.predicate)
        if pred is None:
            return [(f"{side} {_show(atom)}: unknown predicate {atom.predicate!r}"
                     f"{did_you_mean(atom.predicate, self.domain.predicates)}; the domain's predicates are "
                     f"{', '.join(self.domain.predicates)}")]
        if pred.arity != len(atom.args):
            shape = "(subject, predicate, true)" if pred.arity == 1 else "(subject, predicate, object)"
            return [(f"{side} {_show(atom)}: {atom.predicate} takes {pred.arity} argument(s) "
                     f"{pred}; write it as {shape}")]
        problems = []
        for arg, (var, typ) in zip(atom.args, pred.params):
            if not memory.has_entity(arg):
                problems.append(f"{side} {_show(atom)}: unknown entity {arg!r}"
                                f"{did_you_mean(arg, memory.objects)}; use only entities in memory")
                continue
            actual = memory.type_of(arg)
            if not self.domain.types.is_subtype(actual, typ):
                allowed = [t for t in self.domain.types.types if self.domain.types.is_subtype(t, typ)]
                problems.append(f"{side} {_show(atom)}: {arg!r} is a {actual}, but {var} of {atom.predicate} "
                                f"must be a {typ} (allowed types: {', '.join(allowed)})")
        return problems

    def _check_functional(self, delta: Delta, memory: Beliefs) -> list[str]:
        """After the update, each key entity keeps at most one atom per functional group."""
        touched: set[tuple[int, str]] = set()
        for atom in delta.add:
            for gi, pos in self._group_of.get(atom.predicate, ()):
                touched.add((gi, atom.args[pos]))
        problems = []
        for gi, key in sorted(touched):
            members = self.groups[gi]
            after = set()
            for atom in memory.facts_about(key):
                if any(atom.predicate == p and atom.args[pos] == key for p, pos in members):
                    after.add(atom)
            after = (after - delta.remove) | {a for a in delta.add
                                              if any(a.predicate == p and a.args[pos] == key for p, pos in members)}
            if len(after) > 1:
                kept = sorted(after - delta.add)
                hint = (f"; also REMOVE {', '.join(_show(a) for a in kept)}" if kept else "")
                problems.append(f"{key!r} would have {len(after)} values of a relation that allows one "
                                f"({', '.join(_show(a) for a in sorted(after))}){hint}")
        return problems
