"""Dense and sparse PDDL encodings of an inspection problem (domain: `servicerobot/scenes/inspection.pddl`).

- **Dense** (the direct encoding, the baseline): every place, every place-place edge (cost = centre distance
  in cm), the included objects, and, as in the public dense grounding of MIT-SPARK's Omniplanner, object-place
  edges within 10 m and object-object edges within 3 m (costs = barrier-free shortest paths, so optimal plan
  costs are unchanged).
- **Sparse**: only the *kept* places: the start, the places the goal visits, the approach places of the
  included objects, and the *barrier* places: places a goal clause avoids and places an included suspicious
  object blocks. Every pair of kept places is joined by an edge whose cost is the shortest path over the full
  places graph that never passes *through* a barrier place. A path through a barrier must therefore step onto
  it explicitly (marking it visited / needing its blocker safe), which keeps the sparse encoding exact: its
  optimal plans cost the same as the dense encoding's. With a single clause (`clause=i`) the clause's avoided
  places are instead removed from the graph outright and their literals dropped (they then hold trivially).

Objects: an included object is a symbol joined only to its approach place; it brings `suspicious`/`safe`
facts, `blocks` facts for the places its inflated footprint covers, and removes the places and edges its disc
covers (for everyone). Objects outside `objects` are ignored (the incremental solver adds them on demand).
"""

from __future__ import annotations

import re
import time
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, field
from importlib import resources

from servicerobot.errors import TampError
from servicerobot.planners.tamp.context import Deadline, TampContext
from servicerobot.planners.tamp.goals import DnfGoal

__all__ = ["ENCODINGS", "TaskAction", "TaskProblem", "decode_plan", "dense_problem", "domain_text", "encode",
           "sparse_problem"]

ENCODINGS = ("dense", "sparse")
INSPECT_COST = 100
NEAR_PLACE = 10.0  # m: object-place edges of the direct (dense) encoding
NEAR_OBJECT = 3.0  # m: object-object edges of the direct encoding


def domain_text() -> str:
    """The inspection domain (PDDL text shipped with the package)."""
    return resources.files("servicerobot.scenes").joinpath("inspection.pddl").read_text(encoding="utf-8")


@dataclass(frozen=True)
class TaskAction:
    """One task-plan action in map names: `move` (args: from, to) or `inspect` (args: object)."""

    name: str
    args: tuple[str, ...]
    cost: int

    def __str__(self) -> str:
        return f"({self.name} {' '.join(self.args)})"


@dataclass
class TaskProblem:
    """A PDDL problem for the inspection domain plus what is needed to read its plans back."""

    encoding: str
    text: str
    goal: DnfGoal
    clauses: tuple[int, ...]  # indices (in the original goal) of the clauses this problem's goal encodes
    places: tuple[str, ...]
    objects: tuple[str, ...]
    edges: dict[tuple[str, str], int]  # directed symbol edges -> cost (cm)
    to_map: dict[str, str] = field(repr=False)  # PDDL identifier -> map symbol
    build_time: float = 0.0

    @property
    def n_symbols(self) -> int:
        return len(self.places) + len(self.objects)


def encode(ctx: TampContext, goal: DnfGoal, objects: Iterable[str] = (), encoding: str = "sparse",
           clause: int | None = None, deadline: Deadline | None = None) -> TaskProblem:
    """The `encoding` ("dense" or "sparse") problem for `goal` (or only its clause `clause`) with the goal's
    objects plus `objects` included.

    Raises:
        TampError: unknown encoding.
        TampTimeout: the deadline passed while building.
    """
    if encoding == "dense":
        return dense_problem(ctx, goal, objects, clause, deadline)
    if encoding == "sparse":
        return sparse_problem(ctx, goal, objects, clause, deadline)
    raise TampError(f"unknown encoding {encoding!r}; use one of {', '.join(ENCODINGS)}")


def _included(ctx: TampContext, goal: DnfGoal, objects: Iterable[str]) -> list[str]:
    names = set(objects) | {s for s in goal.symbols() if s in ctx.map.objects}
    unknown = sorted(n for n in names if n not in ctx.map.objects)
    if unknown:
        raise TampError(f"objects {unknown} are not in map {ctx.map.name!r}")
    return sorted(names)


def _clauses(goal: DnfGoal, clause: int | None) -> tuple[int, ...]:
    if clause is None:
        return tuple(range(len(goal.clauses)))
    if not 0 <= clause < len(goal.clauses):
        raise TampError(f"clause {clause} does not exist; the goal has {len(goal.clauses)} clauses")
    return (clause,)


def _object_part(ctx: TampContext, included: Sequence[str], removed: frozenset[int],
                 edges: dict[tuple[str, str], int]) -> tuple[list[tuple[str, ...]], set[str]]:
    """Facts of the included objects; adds their approach edges to `edges`; returns facts and blocked places."""
    facts: list[tuple[str, ...]] = []
    blocked: set[str] = set()
    for o in included:
        obj = ctx.map.objects[o]
        fp = ctx.footprint(o)
        facts.append(("suspicious" if obj.suspicious else "safe", o))
        if obj.suspicious:
            for p in sorted(fp.blocked - removed):
                facts.append(("blocks", o, ctx.names[p]))
                blocked.add(ctx.names[p])
        if fp.approach is not None and fp.approach not in removed:
            a = ctx.names[fp.approach]
            edges[(o, a)] = edges[(a, o)] = fp.approach_cost
    return facts, blocked


def _text(ctx: TampContext, map_name: str, places: Iterable[str], objects: Sequence[str],
          edges: dict[tuple[str, str], int], facts: list[tuple[str, ...]], goal: DnfGoal, clauses: tuple[int, ...],
          dropped: frozenset[str]) -> tuple[str, dict[str, str]]:
    pn = ctx.pddl_names
    start = pn[ctx.map.start]
    title = re.sub(r"[^a-z0-9_-]", "_", map_name.lower()) or "map"
    lines = [f"(define (problem inspect-{title})", "  (:domain inspection)",
             "  (:objects " + " ".join(pn[p] for p in places) + " - place"
             + ("\n    " + " ".join(pn[o] for o in objects) + " - obj" if objects else "") + ")",
             f"  (:init (at {start}) (visited {start}) (= (total-cost) 0)"]
    lines += ["    (" + " ".join([f[0], *(pn[a] for a in f[1:])]) + ")" for f in facts]
    lines += [f"    (connected {pn[a]} {pn[b]}) (= (distance {pn[a]} {pn[b]}) {w})" for (a, b), w in edges.items()]
    lines[-1] += ")"
    symbols = {*places, *objects}
    parts = []
    for i in clauses:
        lits = [lit for lit in goal.clauses[i] if lit.symbol not in dropped]
        if any(lit.kind != "avoid" and lit.symbol not in symbols for lit in lits):
            continue  # it needs a symbol that objects' discs removed from the problem: it cannot hold
        body = " ".join(_lit(lit, pn) for lit in lits if lit.symbol in symbols) or f"(visited {start})"
        parts.append(f"(and {body})")
    if not parts:  # no clause can hold; a goal the translator proves unsolvable at once
        parts = [f"(and (visited {start}) (not (visited {start})))"]
    goal_text = parts[0] if len(parts) == 1 else "(or " + " ".join(parts) + ")"
    lines += [f"  (:goal {goal_text})", "  (:metric minimize (total-cost)))"]
    return "\n".join(lines) + "\n", {pn[s]: s for s in symbols}


def _checker(deadline: Deadline | None) -> Callable[[], None]:
    """A no-argument check of `deadline` that names the encoding in its TampTimeout."""
    if deadline is None:
        return _never
    return lambda: deadline.check("encoding the task problem")


def _never() -> None:
    """No deadline."""


def _lit(lit, pn: dict[str, str]) -> str:
    atom = f"({lit.predicate} {pn[lit.symbol]})"
    return atom if lit.positive else f"(not {atom})"


def dense_problem(ctx: TampContext, goal: DnfGoal, objects: Iterable[str] = (), clause: int | None = None,
                  deadline: Deadline | None = None) -> TaskProblem:
    """Every place and place-place edge (minus what included objects' discs cover), plus included objects and
    their near-object edges (`_near_edges`)."""
    t0 = time.perf_counter()
    check = _checker(deadline)
    goal.check(ctx.map)
    clauses = _clauses(goal, clause)
    included = _included(ctx, goal, objects)
    check()
    removed, removed_edges = ctx.statics(included, soft=True)
    check()
    if clause is not None:  # one clause: what its avoided places rule out geometrically goes too
        nodes, edges_out = ctx.avoid_filter(goal.avoided(clause))
        check()
        removed = removed | (nodes - {ctx.index[p] for p in goal.avoided(clause)})
        removed_edges = removed_edges | edges_out
    names = ctx.names
    edges: dict[tuple[str, str], int] = {}
    for u, nbrs in enumerate(ctx.adj):
        if u % 256 == 0:
            check()
        if u in removed:
            continue
        for v, w in nbrs:
            if v not in removed and ((u, v) if u < v else (v, u)) not in removed_edges:
                edges[(names[u], names[v])] = w
    check()
    places = [n for i, n in enumerate(names) if i not in removed]
    facts, blocked = _object_part(ctx, included, removed, edges)
    check()
    idx = ctx.index
    barrier = {idx[p] for p in blocked} | {idx[lit.symbol] for i in clauses for lit in goal.clauses[i]
                                          if lit.kind == "avoid" and lit.symbol in idx}
    _near_edges(ctx, included, removed, removed_edges, barrier, edges, deadline)
    check()
    text, to_map = _text(ctx, ctx.map.name, places, included, edges, facts, goal, clauses, frozenset())
    check()
    return TaskProblem("dense", text, goal, clauses, tuple(places), tuple(included), edges, to_map,
                       time.perf_counter() - t0)


def _near_edges(ctx: TampContext, included: Sequence[str], removed: frozenset[int], removed_edges: frozenset,
                barrier: set[int], edges: dict[tuple[str, str], int], deadline: Deadline | None) -> None:
    """The direct encoding's object edges (as in Omniplanner's dense grounding): each object joined to every
    place within `NEAR_PLACE` m and every object within `NEAR_OBJECT` m. Costs are barrier-free shortest
    paths through the object's approach place, so optimal plans cost what they cost without these edges."""
    # Paths behind these edges must be ones refinement will find: they never enter what refinement's A*
    # excludes (objects' discs, places geometrically ruled out by any avoided place) and never pass through
    # a barrier. An object whose approach place is a barrier gets no such edges (entering the object enters
    # that place, which the PDDL move to the object would not mark visited).
    avoided = {ctx.names[b] for b in barrier}
    excluded = set(removed) | set(ctx.statics(included)[0]) | set(ctx.avoid_filter(avoided)[0])
    excluded -= barrier
    approach = {o: ctx.footprint(o).approach for o in included}
    approach = {o: a for o, a in approach.items() if a is not None and a not in excluded and a not in barrier}
    if not approach:
        return
    _checker(deadline)()
    near = {o: [int(p) for p in ctx.places_near(ctx.map.objects[o].position, NEAR_PLACE) if int(p) not in excluded]
            for o in approach}
    _checker(deadline)()
    targets = set(approach.values()).union(*near.values())
    dist = ctx.barrier_distances(sorted(set(approach.values())), targets, barrier, frozenset(excluded),
                                 removed_edges, deadline)
    names = ctx.names
    check = _checker(deadline)
    for o, a in approach.items():
        check()
        cost = ctx.footprint(o).approach_cost
        for p in near[o]:
            if p != a and (a, p) in dist:
                edges[(o, names[p])] = edges[(names[p], o)] = dist[(a, p)] + cost
        here = ctx.map.objects[o].position
        for o2, a2 in approach.items():
            if o2 != o and ctx.map.distance(here, ctx.map.objects[o2].position) <= NEAR_OBJECT:
                d = 0 if a2 == a else dist.get((a, a2))
                if d is not None:
                    edges[(o, o2)] = d + cost + ctx.footprint(o2).approach_cost


def sparse_problem(ctx: TampContext, goal: DnfGoal, objects: Iterable[str] = (), clause: int | None = None,
                   deadline: Deadline | None = None) -> TaskProblem:
    """The start, goal places, approach places and barrier places, pairwise joined by barrier-free paths."""
    t0 = time.perf_counter()
    check = _checker(deadline)
    goal.check(ctx.map)
    clauses = _clauses(goal, clause)
    included = _included(ctx, goal, objects)
    check()
    removed, removed_edges = ctx.statics(included, soft=True)
    check()
    idx = ctx.index
    avoided = {lit.symbol for i in clauses for lit in goal.clauses[i] if lit.kind == "avoid" and lit.symbol in idx}
    dropped: frozenset[str] = frozenset()
    if clause is not None:  # one clause: its avoided places, and what they rule out geometrically, vanish
        nodes, edges_out = ctx.avoid_filter(avoided)
        check()
        removed = removed | nodes
        removed_edges = removed_edges | edges_out
        dropped, avoided = frozenset(avoided), set()
    edges: dict[tuple[str, str], int] = {}
    facts, blocked = _object_part(ctx, included, removed, edges)
    check()
    barrier = {idx[p] for p in avoided | blocked}
    kept = {ctx.start} | barrier
    kept |= {idx[lit.symbol] for i in clauses for lit in goal.clauses[i] if lit.kind == "visit" and lit.symbol in idx}
    kept |= {ctx.footprint(o).approach for o in included if ctx.footprint(o).approach is not None}
    kept = {k for k in kept if k not in removed or k == ctx.start}
    order = sorted(kept)
    dist = ctx.barrier_distances(order, kept, barrier, removed, removed_edges, deadline)
    for (s, t), d in dist.items():
        edges[(ctx.names[s], ctx.names[t])] = d
    places = [ctx.names[k] for k in order]
    check()
    text, to_map = _text(ctx, ctx.map.name, places, included, edges, facts, goal, clauses, dropped)
    check()
    return TaskProblem("sparse", text, goal, clauses, tuple(places), tuple(included), edges, to_map,
                       time.perf_counter() - t0)


def decode_plan(problem: TaskProblem, plan: Iterable[str]) -> list[TaskAction]:
    """Fast Downward plan lines -> TaskActions in map names, with their costs.

    Raises:
        TampError: an action or symbol the problem does not have (a planner or encoding bug).
    """
    out = []
    for line in plan:
        parts = line.strip().strip("()").split()
        if not parts:
            continue
        name, args = parts[0].lower(), tuple(problem.to_map.get(a.lower(), "") for a in parts[1:])
        if "" in args:
            raise TampError(f"plan step {line!r} names a symbol that problem does not define")
        if name == "move":
            cost = problem.edges.get(args)
            if cost is None:
                raise TampError(f"plan step {line!r} moves along an edge the problem does not have")
        elif name == "inspect":
            cost = INSPECT_COST
        else:
            raise TampError(f"plan step {line!r} is not an inspection-domain action")
        out.append(TaskAction(name, args, cost))
    return out
