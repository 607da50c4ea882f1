"""Isomorphism of two labelled directed graphs: colour refinement to a stable partition, then search.

The two graphs are refined together, as one disjoint union, so colour names are shared. Refinement
(1-WL) runs on a worklist: a round recomputes the signature (own colour, sorted (edge label,
direction, neighbour colour) pairs) only of nodes next to a node whose colour changed, and a class
that splits keeps its colour for its largest part, so each node changes colour O(log n) times and
a path of n nodes (a tower) stabilises in O(n) work, not O(n^2). When the colour histograms of the
two sides differ at any round the graphs are not isomorphic. A stable partition whose classes all
hold one node per side is the only candidate bijection; otherwise a node of the smallest ambiguous
class is individualised against each same-coloured node of the other side in turn, refining after
each choice (the individualisation-refinement search of nauty and bliss), with an undo log instead
of copies. Every step spends from the check's budget (`_equivalence_budget`).
"""

from __future__ import annotations

import bisect
from collections.abc import Iterator, Sequence

from servicerobot.pddl._equivalence_budget import spend

__all__ = ["isomorphic", "isomorphisms"]


class _State:
    """Colours of the union of graphs a (nodes 0..na-1) and b (na..n-1), with an undo log."""

    def __init__(self, labels_a: Sequence, edges_a: Sequence, labels_b: Sequence, edges_b: Sequence) -> None:
        na = len(labels_a)
        self.na = na
        self.n = na + len(labels_b)
        names: dict = {}
        col = [names.setdefault(x, len(names)) for x in labels_a]
        col += [names.setdefault(x, len(names)) for x in labels_b]
        self.col = col
        codes: dict = {}
        adj: list[list[tuple[int, int]]] = [[] for _ in range(self.n)]
        for offset, edges in ((0, edges_a), (na, edges_b)):
            for u, v, lab in edges:
                code = codes.setdefault(lab, len(codes)) * 2
                adj[u + offset].append((code, v + offset))
                adj[v + offset].append((code + 1, u + offset))
        self.adj = adj
        self.width = 2 * len(codes) + 2  # a signature entry is colour * width + code: ints sort fast
        self.members: list[set[int]] = [set() for _ in names]
        self.diff = [0] * len(names)
        for v, c in enumerate(col):
            self.members[c].add(v)
            self.diff[c] += 1 if v < na else -1
        self.bad = sum(1 for d in self.diff if d)
        self.big = {c for c, m in enumerate(self.members) if len(m) > 2}
        self.log: list[tuple[int, int]] = []

    def _new_colour(self) -> int:
        self.members.append(set())
        self.diff.append(0)
        return len(self.members) - 1

    def _move(self, v: int, c: int, log: bool = True) -> None:
        old = self.col[v]
        members, diff = self.members, self.diff
        side = 1 if v < self.na else -1
        before = diff[old]
        diff[old] = before - side
        self.bad += (before != side) - (before != 0)
        before = diff[c]
        diff[c] = before + side
        self.bad += (before != -side) - (before != 0)
        members[old].discard(v)
        members[c].add(v)
        self.col[v] = c
        if len(members[old]) == 2:
            self.big.discard(old)
        if len(members[c]) == 3:
            self.big.add(c)
        if log:
            self.log.append((v, old))

    def _split(self, c: int, nodes: list[int]) -> None:
        """Move `nodes` (all of colour c) to a new colour, logged."""
        new = self._new_colour()
        na, col, log = self.na, self.col, self.log
        side = 0
        for v in nodes:
            col[v] = new
            log.append((v, c))
            side += 1 if v < na else -1
        cls = self.members[c]
        cls.difference_update(nodes)
        self.members[new] = set(nodes)
        diff = self.diff
        before = diff[c]
        diff[c] = before - side
        diff[new] = side
        self.bad += (diff[c] != 0) - (before != 0) + (side != 0)
        if len(cls) <= 2:
            self.big.discard(c)
        if len(nodes) > 2:
            self.big.add(new)

    def mark(self) -> tuple[int, int]:
        """A point to `undo` to: the log's length and the number of colours."""
        return len(self.log), len(self.members)

    def undo(self, mark: tuple[int, int]) -> None:
        """Return to the colouring at `mark`; the colours made since (empty again) are dropped, so memory
        follows the current search path, not every step the search ever took."""
        log = self.log
        moves, colours = mark
        while len(log) > moves:
            v, old = log.pop()
            self._move(v, old, log=False)
        del self.members[colours:], self.diff[colours:]

    def _signature(self, v: int) -> tuple:
        col, width = self.col, self.width
        return tuple(sorted([col[u] * width + code for code, u in self.adj[v]]))

    def refine(self, dirty: set[int]) -> bool:
        """Refine to the coarsest stable partition; False as soon as the two sides' histograms differ."""
        members, col = self.members, self.col
        while dirty and not self.bad:
            by_colour: dict[int, list[int]] = {}
            for v in dirty:
                by_colour.setdefault(col[v], []).append(v)
            splits = []
            for c, nodes in by_colour.items():
                cls = members[c]
                if len(cls) == 1:
                    continue
                groups: dict[tuple, list[int]] = {}
                spend(len(nodes), "refining colours")
                for v in nodes:
                    groups.setdefault(self._signature(v), []).append(v)
                rest_sig = None
                if len(nodes) < len(cls):  # the members not dirty share one signature: take one's
                    rep = next(x for x in cls if x not in dirty)
                    rest_sig = self._signature(rep)
                    groups.setdefault(rest_sig, [])
                if len(groups) > 1:
                    splits.append((c, groups, rest_sig, len(cls) - len(nodes)))
            changed: list[int] = []
            for c, groups, rest_sig, rest_count in splits:
                order = sorted(groups, key=lambda s: (len(groups[s]) + (rest_count if s == rest_sig else 0), s))
                keep = order[-1]
                for sig in order[:-1]:
                    if sig == rest_sig:
                        continue
                    self._split(c, groups[sig])
                    changed.extend(groups[sig])
                if rest_sig is not None and rest_sig != keep:
                    kept = set(groups[keep])
                    moved = [x for x in members[c] if x not in kept]
                    spend(len(moved), "refining colours")
                    self._split(c, moved)
                    changed.extend(moved)
            adj = self.adj
            dirty = {u for v in changed for _, u in adj[v]}
        return not self.bad

    def individualise(self, v: int, w: int) -> bool:
        """Give v (side a) and w (side b) a colour of their own, then refine."""
        new = self._new_colour()
        self._move(v, new)
        self._move(w, new)
        return self.refine({u for x in (v, w) for _, u in self.adj[x]})

    def bijection(self) -> list[int] | None:
        """The node map a -> b of a discrete colouring, if it maps every edge of a onto an edge of b."""
        members, col, na = self.members, self.col, self.na
        m = []
        for v in range(na):
            pair = members[col[v]]
            w = next(x for x in pair if x != v)
            m.append(w)
        spend(self.n, "checking a bijection")
        adj = self.adj
        for v in range(na):
            mapped = sorted((code, m[u] if u < na else -1) for code, u in adj[v])
            if mapped != sorted(adj[m[v]]):
                return None
        return [x - na for x in m]


def isomorphisms(labels_a: Sequence, edges_a: Sequence, labels_b: Sequence,
                 edges_b: Sequence) -> Iterator[list[int]]:
    """Every label- and edge-label-preserving bijection from graph a onto graph b, as a list a -> b.

    Graphs are node labels (any hashable) and (source, target, label) edges. Each isomorphism is
    yielded once; stops early when the caller stops iterating.
    """
    if len(labels_a) != len(labels_b) or len(edges_a) != len(edges_b):
        return
    state = _State(labels_a, edges_a, labels_b, edges_b)
    if not state.refine(set(range(state.n))):
        return
    # A frame is (mark, node of a, its colour, the last node of b tried): the nodes of b left are found again
    # in the colour after undoing to the mark, not stored (stored lists took O(n^2) memory on a deep search:
    # 1.9 GB for 20,000 interchangeable blocks).
    stack: list[tuple[tuple[int, int], int, int, int]] = []
    na = state.na
    descend = True
    while True:
        if descend and not state.bad:
            spend(1, "searching for an isomorphism")
            if not state.big:
                m = state.bijection()
                if m is not None:
                    yield m
            else:
                c = min(state.big, key=lambda c: (len(state.members[c]), c))
                v = min(state.members[c])  # a node of a: they are numbered before those of b
                stack.append((state.mark(), v, c, -1))
        descend = False
        while stack:
            mark, v, c, last = stack[-1]
            state.undo(mark)
            w = _next_after(state.members[c], max(na, last + 1))  # the next node of b to try
            if w is not None:
                stack[-1] = (mark, v, c, w)
                state.individualise(v, w)
                descend = True
                break
            stack.pop()
        if not descend:
            return


def _next_after(members: set[int], low: int) -> int | None:
    """The least member >= `low` (sorting in C beats a Python-level filter)."""
    ordered = sorted(members)
    i = bisect.bisect_left(ordered, low)
    return ordered[i] if i < len(ordered) else None


def isomorphic(labels_a: Sequence, edges_a: Sequence, labels_b: Sequence, edges_b: Sequence) -> bool:
    """True if some label-preserving bijection maps graph a onto graph b (see `isomorphisms`)."""
    return next(isomorphisms(labels_a, edges_a, labels_b, edges_b), None) is not None
