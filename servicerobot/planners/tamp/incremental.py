"""The incremental object solver (Algorithm 1 of Ray et al.) and the all-objects-up-front baseline.

Incremental: the first task problem includes only the objects the goal names. Its plan is refined
(`hierarchical.refine`); when a motion cannot get past objects outside the problem, those objects join the
problem (with their facts: suspicious or safe, approach place, the places they block and the places and
edges their discs cover) and the task is planned again, until refinement succeeds, no new object is to
blame, the iteration limit is reached, or time runs out. Up-front: every object is included from the start
and there is a single plan-and-refine round.

Disjunctive goals reach Fast Downward either whole (`strategy="dnf"`: one call; FD compiles the disjunction
into axioms, which LM-cut cannot handle, so optimal runs use `astar(blind())`) or one clause at a time
(`strategy="per-clause"`: one call per clause, conjunctive goals that any configuration handles, the
cheapest plan kept).
"""

from __future__ import annotations

import time
from collections.abc import Sequence
from dataclasses import dataclass

from servicerobot.planners.base import Planner, PlanStatus
from servicerobot.planners.tamp.context import Deadline, TampContext, TampTimeout
from servicerobot.planners.tamp.encodings import TaskAction, TaskProblem, decode_plan, domain_text, encode
from servicerobot.planners.tamp.goals import DnfGoal
from servicerobot.planners.tamp.hierarchical import refine
from servicerobot.planners.tamp.motion import CollisionChecker
from servicerobot.planners.tamp.result import TampPlan, TampStats

__all__ = ["STRATEGIES", "solve"]

STRATEGIES = ("dnf", "per-clause")


@dataclass
class _Task:
    actions: list[TaskAction]
    clause: int
    cost: int
    problem: TaskProblem


class _PlannerFailed(Exception):
    def __init__(self, status: str, message: str):
        super().__init__(message)
        self.status = status


def _cpu() -> float:
    """CPU seconds of this process and of its waited-for children (Fast Downward runs as a child)."""
    try:
        import resource
    except ImportError:  # pragma: no cover - not on Unix
        return time.process_time()
    me, kids = resource.getrusage(resource.RUSAGE_SELF), resource.getrusage(resource.RUSAGE_CHILDREN)
    return me.ru_utime + me.ru_stime + kids.ru_utime + kids.ru_stime


def satisfied_clause(ctx: TampContext, goal: DnfGoal, actions: Sequence[TaskAction],
                     candidates: Sequence[int]) -> int | None:
    """The first of `candidates` whose clause holds after `actions` (replayed symbolically), or None."""
    visited = {ctx.map.start}
    safe = {o for o, obj in ctx.map.objects.items() if not obj.suspicious}
    for a in actions:
        if a.name == "move":
            visited.add(a.args[1])
        else:
            safe.add(a.args[0])
    return next((i for i in candidates if goal.holds(i, visited, safe)), None)


def _task_plan(ctx: TampContext, goal: DnfGoal, included: set[str], encoding: str, strategy: str,
               planner: Planner, deadline: Deadline, stats: TampStats) -> _Task | None:
    """The cheapest task plan over the clauses (None: unsolvable); raises TampTimeout or _PlannerFailed."""
    best: _Task | None = None
    domain = domain_text()
    for clause in ([None] if strategy == "dnf" else range(len(goal.clauses))):
        t0 = time.perf_counter()
        problem = encode(ctx, goal, included, encoding, clause, deadline)
        stats.encode_time += time.perf_counter() - t0
        stats.n_symbols, stats.n_edges = problem.n_symbols, len(problem.edges)
        remaining = deadline.remaining()
        if remaining is not None and remaining <= 0:
            raise TampTimeout("the planning time limit ran out before the task planner ran")
        result = planner.solve(domain, problem.text, timeout=remaining)
        stats.fd_calls += 1
        if result.status is PlanStatus.TIMEOUT:
            stats.timeouts += 1
            raise TampTimeout(f"the task planner ran out of time ({result.message})")
        if result.status in (PlanStatus.ERROR, PlanStatus.UNSUPPORTED):
            raise _PlannerFailed("error", f"{result.planner}: {result.message}")
        if not result.solved:
            continue
        actions = decode_plan(problem, result.plan)
        chosen = satisfied_clause(ctx, goal, actions, problem.clauses)
        if chosen is None:
            raise _PlannerFailed("error", f"{result.planner} returned a plan that satisfies no goal clause")
        cost = sum(a.cost for a in actions)
        if best is None or cost < best.cost:
            best = _Task(actions, chosen, cost, problem)
    return best


def solve(ctx: TampContext, goal: DnfGoal, planner: Planner, checker: CollisionChecker, *,
          encoding: str = "sparse", incremental: bool = True, strategy: str = "dnf", timeout: float | None = 60.0,
          max_iterations: int = 25, rrt_budget: float = 0.3, use_ompl: bool | None = None,
          seed: int = 0) -> TampPlan:
    """Plan `goal` with the incremental object solver (or all objects up front when `incremental` is False)."""
    start = time.perf_counter()
    cpu0 = _cpu()
    deadline = Deadline(timeout)
    stats = TampStats(encoding, incremental, strategy, planner.label)
    included = {s for s in goal.symbols() if s in ctx.map.objects}
    if not incremental:
        included |= set(ctx.map.objects)

    def done(status: str, message: str = "", **kw) -> TampPlan:
        stats.total_time = time.perf_counter() - start
        stats.cpu_time = _cpu() - cpu0
        return TampPlan(status, goal, objects=tuple(sorted(included)), stats=stats, message=message, **kw)

    try:
        for _ in range(max_iterations):
            stats.iterations += 1
            t0 = time.perf_counter()
            try:
                task = _task_plan(ctx, goal, included, encoding, strategy, planner, deadline, stats)
            finally:
                stats.task_time += time.perf_counter() - t0
            if task is None:
                return done("unsolvable", f"the task planner found no plan with {len(included)} objects included")
            t0 = time.perf_counter()
            try:
                ref = refine(ctx, task.actions, goal.avoided(task.clause), included, checker,
                             rrt_budget=rrt_budget, deadline=deadline, use_ompl=use_ompl, seed=seed)
            finally:
                stats.refine_time += time.perf_counter() - t0
            stats.rrt_calls += ref.rrt_calls
            stats.rrt_successes += ref.rrt_successes
            if ref.ok:
                return done("solved", clause=task.clause, actions=tuple(task.actions), steps=tuple(ref.steps),
                            cost=task.cost)
            new = [b for b in ref.blame if b not in included]
            if not incremental or not new:
                return done("failed", "refinement failed: " + "; ".join(ref.failures))
            included.update(new)
            stats.objects_added.extend(new)
        return done("failed", f"no refinable plan after {max_iterations} iterations")
    except TampTimeout as error:
        return done("timeout", str(error))
    except _PlannerFailed as error:
        return done(error.status, str(error))
