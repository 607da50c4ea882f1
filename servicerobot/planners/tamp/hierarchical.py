"""Hierarchical refinement of a task plan: task action -> place path (A*) -> motion (straight segments,
repaired with RRT-Connect where they collide).

For each `move`, A* runs over the full places graph and never enters a place the chosen goal clause avoids
(nor a place whose centre lies in one, nor an edge crossing one), a place an included object's disc covers,
or, while an included suspicious object is not yet inspected, a place or edge its inflated footprint covers.
The place path becomes straight segments between place centres, checked with the collision checker. A run of
colliding segments is replaced by an RRT-Connect path (OMPL when installed, else a pure-Python RRT-Connect)
inside a box around it, whose states must be collision-free, on the map and outside avoided places; the
result is re-checked exactly. When repair fails, the objects the straight segments hit are *blamed*: if some
are not in the task problem yet, the incremental solver adds them and replans; if all are, the failing
edges are banned and A* tries again (twice at most).
"""

from __future__ import annotations

import itertools
import math
from collections.abc import Collection, Sequence
from dataclasses import dataclass, field

from servicerobot.planners.tamp.context import Deadline, Edge, TampContext, edge_key
from servicerobot.planners.tamp.encodings import TaskAction
from servicerobot.planners.tamp.geometry import point_depth, segment_enters_polygon
from servicerobot.planners.tamp.motion import CollisionChecker, InspectionAware
from servicerobot.planners.tamp.result import MotionStep
from servicerobot.planners.tamp.rrt import rrt_connect

__all__ = ["Refinement", "refine"]

Point = tuple[float, float]
MARGIN = 0.02  # metres of clearance RRT-Connect keeps beyond the exact checks
_MARGIN = [(MARGIN * math.cos(k * math.pi / 4), MARGIN * math.sin(k * math.pi / 4)) for k in range(8)]


@dataclass
class Refinement:
    """The outcome of refining one task plan.

    Attributes:
        ok: every action was refined into a collision-free motion.
        steps: the refined actions (those that failed carry their unrepaired straight-segment motion).
        blame: objects outside the task problem whose collisions could not be repaired.
        failures: one line per action that failed, saying why.
    """

    ok: bool
    steps: list[MotionStep]
    blame: list[str] = field(default_factory=list)
    failures: list[str] = field(default_factory=list)
    rrt_calls: int = 0
    rrt_successes: int = 0


def _symbol_place(ctx: TampContext, symbol: str) -> int:
    if symbol in ctx.index:
        return ctx.index[symbol]
    approach = ctx.footprint(symbol).approach
    if approach is None:
        raise ValueError(f"object {symbol!r} has no approach place")
    return approach


def refine(ctx: TampContext, actions: Sequence[TaskAction], avoided: Collection[str], included: Collection[str],
           checker: CollisionChecker, *, rrt_budget: float = 0.3, collect_all: bool = True,
           deadline: Deadline | None = None, use_ompl: bool | None = None, seed: int = 0) -> Refinement:
    """Refine `actions` (a task plan over `included` objects) for a goal clause avoiding `avoided` places.

    With `collect_all`, refinement goes on after a failed move (from the move's target) so that one pass
    blames every object in the way; otherwise it stops at the first failure.
    """
    avoid_nodes, avoid_edges = ctx.avoid_filter(avoided)
    avoid_polys = [ctx.polygons[i] for i in avoid_nodes]
    static_nodes, static_edges = ctx.statics(included)
    suspicious = [o for o in included if ctx.map.objects[o].suspicious]
    inspected: set[str] = set()
    aware = isinstance(checker, InspectionAware)
    if aware:
        checker.set_inspected(())
    here = ctx.start
    out = Refinement(True, [])
    for act in actions:
        if deadline is not None:
            deadline.check()
        if act.name == "inspect":
            inspected.add(act.args[0])
            if aware:
                checker.set_inspected(inspected)
            c = tuple(map(float, ctx.centres[here]))
            out.steps.append(MotionStep(act, (ctx.names[here],), (c,)))
            continue
        src, dst = _symbol_place(ctx, act.args[0]), _symbol_place(ctx, act.args[1])
        if src == dst:
            c = tuple(map(float, ctx.centres[src]))
            out.steps.append(MotionStep(act, (ctx.names[src],), (c,)))
            here = dst
            continue
        nodes = set(avoid_nodes) | static_nodes
        edges = set(avoid_edges) | static_edges
        for o in suspicious:
            if o not in inspected:
                fp = ctx.footprint(o)
                nodes |= fp.blocked
                edges |= fp.soft_edges
        step, reason, blame = None, "", []
        for _attempt in range(3):
            path = ctx.astar(src, dst, nodes, edges)
            if path is None:
                reason = (f"{act}: no place path from {ctx.names[src]} to {ctx.names[dst]} that avoids the "
                          f"clause's places and the known objects")
                break
            poly, repaired, bad, names, calls, wins = _motion(ctx, path, checker, avoid_polys, rrt_budget,
                                                             use_ompl, seed, deadline)
            out.rrt_calls += calls
            out.rrt_successes += wins
            if not bad:
                step = MotionStep(act, tuple(ctx.names[i] for i in path), tuple(poly), repaired)
                break
            blame = [n for n in names if n not in included]
            if blame:
                reason = f"{act}: straight motion hits {', '.join(names)} and RRT-Connect found no way around"
                step = MotionStep(act, tuple(ctx.names[i] for i in path), tuple(poly), repaired)
                break
            edges |= bad
            reason = f"{act}: motion hits included objects {', '.join(names)} and no detour was found"
        if step is None or blame:
            out.ok = False
            out.failures.append(reason)
            out.blame.extend(b for b in blame if b not in out.blame)
            if step is None:
                step = MotionStep(act, (ctx.names[src], ctx.names[dst]),
                                  (tuple(map(float, ctx.centres[src])), tuple(map(float, ctx.centres[dst]))))
            out.steps.append(step)
            if not collect_all:
                return out
        else:
            out.steps.append(step)
        here = dst
    return out


def _motion(ctx: TampContext, path: list[int], checker: CollisionChecker, avoid_polys: list, budget: float,
            use_ompl: bool | None, seed: int, deadline: Deadline | None
            ) -> tuple[list[Point], bool, set[Edge], list[str], int, int]:
    """(polyline, repaired?, unrepairable edges, objects they hit, RRT calls, RRT successes) for a place path."""
    pts: list[Point] = [tuple(map(float, ctx.centres[i])) for i in path]
    colliding = _colliding_segments(pts, checker)
    if not colliding:
        return pts, False, set(), [], 0, 0
    runs: list[list[int]] = []
    for k in colliding:
        if runs and k == runs[-1][-1] + 1:
            runs[-1].append(k)
        else:
            runs.append([k])

    def valid(p: Point) -> bool:
        # a small clearance margin: RRT checks edges only at its resolution, and the result is re-checked
        # exactly, so states that merely graze an obstacle or an avoided place would fail that check
        return checker.point_free(p) and all(checker.point_free((p[0] + dx, p[1] + dy)) for dx, dy in _MARGIN) \
            and all(point_depth(p, poly) < -MARGIN for poly in avoid_polys) and ctx.disc_on_map(p)

    out: list[Point] = []
    last = 0
    bad: set[Edge] = set()
    names: list[str] = []
    calls = wins = 0
    repaired = False
    for run in runs:
        if run[-1] + 1 <= last:  # the previous window already covered this run
            continue
        i, j = max(run[0], last), run[-1] + 1  # segment k joins pts[k] and pts[k + 1]
        while i > last and not valid(pts[i]):
            i -= 1
        while j < len(pts) - 1 and not valid(pts[j]):
            j += 1
        if deadline is not None:
            deadline.check()
        window = pts[i:j + 1]
        margin = max(3 * ctx.max_edge, 2.0)
        box = (min(x for x, _ in window) - margin, min(y for _, y in window) - margin,
               max(x for x, _ in window) + margin, max(y for _, y in window) + margin)
        calls += 1
        detour = rrt_connect(pts[i], pts[j], valid, box, budget=budget, resolution=0.05, seed=seed,
                             use_ompl=use_ompl)
        if detour is not None and _clean(detour, checker, avoid_polys):
            wins += 1
            repaired = True
            out.extend(pts[last:i])
            out.extend(detour[:-1])
            last = j
            continue
        for k in range(i, j):
            hit = checker.blocking(pts[k], pts[k + 1])
            if hit:
                bad.add(edge_key(path[k], path[k + 1]))
                names.extend(n for n in hit if n not in names)
    out.extend(pts[last:])
    return out, repaired, bad, names, calls, wins


def _colliding_segments(pts: list[Point], checker: CollisionChecker) -> list[int]:
    """Indices k of colliding segments pts[k]-pts[k+1]; collinear runs are checked as one segment first."""
    out: list[int] = []
    k = 0
    n = len(pts)
    while k < n - 1:
        j = k + 1
        dx, dy = pts[j][0] - pts[k][0], pts[j][1] - pts[k][1]
        while j + 1 < n and abs((pts[j + 1][0] - pts[j][0]) * dy - (pts[j + 1][1] - pts[j][1]) * dx) < 1e-9 and \
                (pts[j + 1][0] - pts[j][0]) * dx + (pts[j + 1][1] - pts[j][1]) * dy > 0:
            j += 1
        if checker.blocking(pts[k], pts[j]):
            out.extend(m for m in range(k, j) if checker.blocking(pts[m], pts[m + 1]))
        k = j
    return out


def _clean(poly: list[Point], checker: CollisionChecker, avoid_polys: list) -> bool:
    return all(not checker.blocking(a, b) and not any(segment_enters_polygon(a, b, pg) for pg in avoid_polys)
               for a, b in itertools.pairwise(poly))
