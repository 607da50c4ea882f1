"""The places graph with integer costs, barrier-restricted shortest paths (for sparse edges) and A* (for
refining moves).

Costs are integer centimetres: an edge costs round(100 * centre distance), so sums are exact and the dense
and sparse encodings of one goal have the same optimal cost.
"""

from __future__ import annotations

import heapq
import itertools
import math
import time
from collections.abc import Collection, Iterable, Sequence

import numpy as np

from servicerobot.errors import TampError

__all__ = ["Deadline", "Edge", "PlacesGraph", "TampTimeout", "edge_key"]

Edge = tuple[int, int]


def edge_key(u: int, v: int) -> Edge:
    """The undirected key of edge u-v."""
    return (u, v) if u < v else (v, u)


class TampTimeout(TampError):
    """The planning deadline passed (raised inside the planner, reported as a TIMEOUT status)."""


_clock = time.perf_counter  # the deadline's clock (a module attribute, so tests can drive it)


class Deadline:
    """A wall-clock deadline; `check()` raises TampTimeout once it has passed."""

    def __init__(self, seconds: float | None):
        self.end = None if seconds is None else _clock() + seconds

    def remaining(self) -> float | None:
        """Seconds left (negative once passed); None without a deadline."""
        return None if self.end is None else self.end - _clock()

    def check(self, during: str = "") -> None:
        """Raise TampTimeout if the deadline has passed; `during` names the phase in the message."""
        if self.end is not None and _clock() > self.end:
            raise TampTimeout("the planning time limit ran out" + (f" while {during}" if during else ""))


class PlacesGraph:
    """Places as indices 0..n-1 with centres and weighted adjacency lists; searches over them."""

    def __init__(self, names: Sequence[str], centres: Sequence[tuple[float, float]],
                 edges: Iterable[tuple[str, str]]):
        self.names: list[str] = list(names)
        self.index: dict[str, int] = {n: i for i, n in enumerate(self.names)}
        self.centres = np.array(centres, dtype=float).reshape(-1, 2)
        self.adj: list[list[tuple[int, int]]] = [[] for _ in self.names]
        self.max_edge = 0.0
        for a, b in edges:
            u, v = self.index[a], self.index[b]
            if u == v:
                continue
            d = math.dist(self.centres[u], self.centres[v])
            w = max(1, round(100 * d))
            self.adj[u].append((v, w))
            self.adj[v].append((u, w))
            self.max_edge = max(self.max_edge, d)
        self._darrays: tuple[np.ndarray, np.ndarray, np.ndarray] | None = None

    def warm_up(self) -> None:
        """Do the one-off work of the first search now (edge arrays, importing scipy when installed)."""
        self._directed_edges()
        try:
            import scipy.sparse.csgraph  # noqa: F401
        except ImportError:
            pass

    # --- search ------------------------------------------------------------------------------------------
    def barrier_distances(self, sources: Iterable[int], targets: Collection[int], barrier: Collection[int],
                          removed: Collection[int] = frozenset(), removed_edges: Collection[Edge] = frozenset(),
                          deadline: Deadline | None = None) -> dict[tuple[int, int], int]:
        """Shortest-path costs from each source to each target whose paths never pass *through* a barrier
        or removed place (a barrier may be the source or the target; removed places are never entered).

        Uses scipy's compiled Dijkstra when scipy is installed, else a pure-Python one (same results).
        """
        sources = list(sources)
        try:
            from scipy.sparse import csr_matrix  # noqa: F401
        except ImportError:
            out: dict[tuple[int, int], int] = {}
            target_set = set(targets)
            for s in sources:
                if deadline is not None:
                    deadline.check()
                for t, d in self._dijkstra(s, target_set, barrier, removed, removed_edges).items():
                    out[(s, t)] = d
            return out
        return self._scipy_distances(sources, targets, barrier, removed, removed_edges, deadline)

    def _directed_edges(self) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        if self._darrays is None:
            u = [a for a, nbrs in enumerate(self.adj) for _ in nbrs]
            v = [b for nbrs in self.adj for b, _ in nbrs]
            w = [c for nbrs in self.adj for _, c in nbrs]
            self._darrays = (np.array(u, dtype=np.int64), np.array(v, dtype=np.int64), np.array(w, dtype=np.float64))
        return self._darrays

    def _scipy_distances(self, sources: list[int], targets: Collection[int], barrier: Collection[int],
                         removed: Collection[int], removed_edges: Collection[Edge],
                         deadline: Deadline | None) -> dict[tuple[int, int], int]:
        from scipy.sparse import csr_matrix
        from scipy.sparse.csgraph import dijkstra

        n = len(self.names)
        eu, ev, ew = self._directed_edges()
        gone = np.zeros(n, dtype=bool)
        gone[list(removed)] = True
        wall = np.zeros(n, dtype=bool)
        wall[list(barrier)] = True
        keep = ~gone[eu] & ~gone[ev]
        if removed_edges:
            lo, hi = np.minimum(eu, ev), np.maximum(eu, ev)
            bad = np.array(sorted(a * n + b for a, b in removed_edges), dtype=np.int64)
            keep &= ~np.isin(lo * n + hi, bad)
        base = keep & ~wall[eu]
        twins = [s for s in dict.fromkeys(sources) if wall[s]]
        us, vs, ws = [eu[base]], [ev[base]], [ew[base]]
        for k, s in enumerate(twins):  # a barrier source starts from a copy of itself with its out-edges
            sel = keep & (eu == s)
            us.append(np.full(int(sel.sum()), n + k, dtype=np.int64))
            vs.append(ev[sel])
            ws.append(ew[sel])
        size = n + len(twins)
        graph = csr_matrix((np.concatenate(ws), (np.concatenate(us), np.concatenate(vs))), shape=(size, size))
        twin_of = {s: n + k for k, s in enumerate(twins)}
        tlist = np.array(sorted(set(targets)), dtype=np.int64)
        out: dict[tuple[int, int], int] = {}
        order = list(dict.fromkeys(sources))
        for i in range(0, len(order), 64):
            if deadline is not None:
                deadline.check()
            batch = order[i:i + 64]
            dist = dijkstra(graph, directed=True, indices=[twin_of.get(s, s) for s in batch])[:, tlist]
            for row, s in enumerate(batch):
                for t, d in zip(tlist.tolist(), dist[row].tolist()):
                    if t != s and d != math.inf:
                        out[(s, t)] = round(d)
        return out

    def _dijkstra(self, s: int, targets: set[int], barrier: Collection[int], removed: Collection[int],
                  removed_edges: Collection[Edge]) -> dict[int, int]:
        inf = math.inf
        dist = {s: 0}
        found: dict[int, int] = {}
        left = len(targets - {s})
        heap = [(0, s)]
        adj = self.adj
        pop, push = heapq.heappop, heapq.heappush
        while heap and left:
            d, u = pop(heap)
            if d > dist[u]:
                continue
            if u in targets and u != s and u not in found:
                found[u] = d
                left -= 1
            if u != s and u in barrier:
                continue
            for v, w in adj[u]:
                if v in removed or (removed_edges and ((u, v) if u < v else (v, u)) in removed_edges):
                    continue
                nd = d + w
                if nd < dist.get(v, inf):
                    dist[v] = nd
                    push(heap, (nd, v))
        return found

    def astar(self, s: int, t: int, blocked: Collection[int] = frozenset(),
              blocked_edges: Collection[Edge] = frozenset()) -> list[int] | None:
        """A cheapest path s..t (place indices) never entering `blocked` places (s and t excepted) nor using
        `blocked_edges`; None when there is none."""
        if s == t:
            return [s]
        cx, cy = self.centres[:, 0], self.centres[:, 1]
        tx, ty = cx[t], cy[t]
        inf = math.inf
        g = {s: 0}
        parent = {s: -1}
        heap = [(0.0, 0, s)]
        adj = self.adj
        pop, push, hypot = heapq.heappop, heapq.heappush, math.hypot
        closed: set[int] = set()
        while heap:
            _, gu, u = pop(heap)
            if u in closed:
                continue
            closed.add(u)
            if u == t:
                path = [u]
                while parent[path[-1]] >= 0:
                    path.append(parent[path[-1]])
                return path[::-1]
            for v, w in adj[u]:
                if v in closed or (v != t and v in blocked) or \
                        (blocked_edges and ((u, v) if u < v else (v, u)) in blocked_edges):
                    continue
                gv = gu + w
                if gv < g.get(v, inf):
                    g[v] = gv
                    parent[v] = u
                    push(heap, (gv + 99.0 * hypot(cx[v] - tx, cy[v] - ty), gv, v))
        return None

    def path_cost(self, path: list[int]) -> int:
        """The integer cost of a place path."""
        total = 0
        for u, v in itertools.pairwise(path):
            total += next(w for x, w in self.adj[u] if x == v)
        return total
