"""TAMP planning: goals, dense vs sparse encodings, refinement, the incremental object solver, verification."""

from __future__ import annotations

import itertools
import math

import numpy as np
import pytest

from servicerobot.errors import PlanVerificationError, TampError, TampGoalError
from servicerobot.planners import FastDownward, PlanResult, PlanStatus
from servicerobot.planners.tamp import (
    DiscChecker,
    MotionStep,
    TampContext,
    TampPlan,
    TampPlanner,
    TaskAction,
    dense_problem,
    parse_goal,
    rrt_connect,
    sample_goal,
    sparse_problem,
    verify_plan,
)
from servicerobot.planners.tamp.geometry import segment_enters_polygon
from servicerobot.planners.tamp.hierarchical import refine
from servicerobot.scenes.tamp_maps import alley, grid, office

OPTIMAL = FastDownward(search="astar(blind())", timeout=None)  # admissible, and it handles the DNF's axioms


@pytest.fixture(scope="module")
def grid_planner():
    return TampPlanner(grid(0), planner=OPTIMAL, timeout=60)


@pytest.fixture(scope="module")
def alley_planner():
    return TampPlanner(alley(0), planner=OPTIMAL, timeout=60)


# --- goals ----------------------------------------------------------------------------------------------


def test_parse_goal_round_trips():
    text = "(or (and (visited p0_2) (not (visited p1_1))) (and (safe o0)))"
    goal = parse_goal(text)
    assert str(goal) == text
    assert goal.avoided(0) == {"p1_1"} and goal.symbols() == {"p0_2", "p1_1", "o0"}
    assert parse_goal("(visited P3)").clauses[0][0].symbol == "P3"  # names keep their case


@pytest.mark.parametrize(("text", "message"), [
    ("(or (and (visited p0_2))", "balanced"),
    ("(or (and (seen p0_2)))", "unknown goal predicate 'seen'"),
    ("(or (and (not (safe o0))))", "only makes objects safe"),
    ("(or (and (visited p0_2) (not (visited p0_2))))", "both visits and avoids p0_2"),
    ("(or (and))", "clause 0 of the goal is empty"),
    ("(or (and (visited p0 p1)))", "expected a literal"),
    ("", "empty"),
])
def test_malformed_goals_give_clear_errors(text, message):
    with pytest.raises(TampGoalError, match=message):
        parse_goal(text)


@pytest.mark.parametrize(("text", "message"), [
    ("(or (and (visited p0_22)))", "neither a place nor an object.*did you mean 'p0_2'"),
    ("(or (and (safe p0_2)))", "only objects can be made safe"),
    ("(or (and (visited p0_2) (not (visited p0_0))))", "the robot starts in 'p0_0'"),
])
def test_goals_that_do_not_fit_the_map_are_rejected(grid_planner, text, message):
    with pytest.raises(TampGoalError, match=message):
        grid_planner.plan(text)


def test_sample_goal_is_seeded_and_well_formed():
    m = office(0)
    a, b, c = sample_goal(m, 3, 3, seed=7), sample_goal(m, 3, 3, seed=7), sample_goal(m, 3, 3, seed=8)
    assert a == b and a != c
    for goal in (a, c, sample_goal(m, 4, 2, seed=1)):
        goal.check(m)
        for clause in goal.clauses:
            assert any(lit.kind != "avoid" for lit in clause)
            assert len({lit.symbol for lit in clause}) == len(clause)
            assert m.start not in {lit.symbol for lit in clause}
    assert len(a.clauses) == 3 and all(len(c) == 3 for c in a.clauses)
    with pytest.raises(TampGoalError, match="n_clauses >= 1"):
        sample_goal(m, 0, 3, seed=1)


# --- geometry, checker, search --------------------------------------------------------------------------


def test_segment_enters_polygon_is_exact_at_the_boundary():
    square = ((1.0, 0.0), (2.0, 0.0), (2.0, 1.0), (1.0, 1.0))
    assert segment_enters_polygon((0.5, 0.5), (2.5, 0.5), square)  # crosses it
    assert segment_enters_polygon((0.5, 1.5), (1.5, 0.5), square)  # cuts its corner
    assert segment_enters_polygon((1.5, 0.5), (1.5, 0.5), square)  # a point inside
    assert not segment_enters_polygon((0.5, -0.5), (1.0, 0.0), square)  # ends on a corner
    assert not segment_enters_polygon((0.5, 0.5), (1.5, 1.5), square)  # touches a corner in passing
    assert not segment_enters_polygon((0.0, 0.0), (3.0, 0.0), square)  # slides along an edge


def test_disc_checker_inflates_suspicious_objects_until_inspected():
    m = alley(0)  # o0 sits between the lanes at (4, 1), suspicious
    checker = DiscChecker(m, robot_radius=0.25)
    a, b = m.places["p0_2"].centre, m.places["p0_5"].centre  # along the lower lane, 0.5 m from the object
    assert checker.blocking(a, b) == ["o0"]
    assert not checker.point_free(m.places["p0_3"].centre)
    checker.set_inspected(["o0"])
    assert checker.blocking(a, b) == []
    assert checker.point_free(m.places["p0_3"].centre)
    assert DiscChecker(m, 0.25, known_objects=[]).blocking(a, b) == []
    with pytest.raises(TampError, match="not objects of map"):
        DiscChecker(m, 0.25, known_objects=["ghost"])


def test_astar_never_enters_avoided_places():
    m = grid(0)
    ctx = TampContext(m)
    rng = np.random.default_rng(0)
    for _ in range(30):
        avoided = {str(p) for p in rng.choice([p for p in m.places if p != m.start], size=12, replace=False)}
        target = str(rng.choice([p for p in m.places if p not in avoided and p != m.start]))
        nodes, edges = ctx.avoid_filter(avoided)
        path = ctx.astar(ctx.start, ctx.index[target], nodes, edges)
        if path is None:
            continue
        names = [ctx.names[i] for i in path]
        assert not set(names) & avoided
        for u, v in itertools.pairwise(path):
            a, b = tuple(ctx.centres[u]), tuple(ctx.centres[v])
            assert not any(segment_enters_polygon(a, b, m.places[p].polygon) for p in avoided)
    wall = {f"p{r}_1" for r in range(10)}  # a full column: nothing beyond it is reachable
    nodes, edges = ctx.avoid_filter(wall)
    assert ctx.astar(ctx.start, ctx.index["p0_5"], nodes, edges) is None


def test_scipy_and_python_shortest_paths_agree():
    pytest.importorskip("scipy")
    m = office(0)
    ctx = TampContext(m)
    rng = np.random.default_rng(1)
    kept = sorted({int(i) for i in rng.choice(len(ctx.names), size=25, replace=False)})
    barrier = set(kept[::3])
    removed = {int(i) for i in rng.choice(len(ctx.names), size=30, replace=False)} - set(kept)
    fast = ctx._scipy_distances(kept, set(kept), barrier, removed, frozenset(), None)
    slow = {(s, t): d for s in kept for t, d in ctx._dijkstra(s, set(kept), barrier, removed, frozenset()).items()}
    assert fast == slow and fast


@pytest.mark.parametrize("use_ompl", [False, True])
def test_rrt_connect_finds_a_way_around_a_wall(use_ompl):
    if use_ompl:
        pytest.importorskip("ompl", reason="OMPL is not installed")

    def valid(p):
        return not (4 < p[0] < 6 and p[1] < 8)

    def clear(p):  # the wall shrunk by the checking resolution: sampled edges may graze its corners
        return not (4.05 < p[0] < 5.95 and p[1] < 7.95)

    path = rrt_connect((1, 1), (9, 1), valid, (0, 0, 10, 10), budget=2.0, seed=3, use_ompl=use_ompl)
    assert path is not None and path[0] == pytest.approx((1, 1)) and path[-1] == pytest.approx((9, 1))
    for a, b in itertools.pairwise(path):
        n = max(1, int(math.dist(a, b) / 0.01))
        assert all(clear((a[0] + (b[0] - a[0]) * k / n, a[1] + (b[1] - a[1]) * k / n)) for k in range(n + 1))
    assert rrt_connect((1, 1), (5, 1), valid, (0, 0, 10, 10), budget=0.2, use_ompl=use_ompl) is None


# --- encodings ------------------------------------------------------------------------------------------


def test_sparse_problem_is_much_smaller_than_dense():
    m = office(0)
    ctx = TampContext(m)
    goal = sample_goal(m, 3, 3, seed=0)
    dense, sparse = dense_problem(ctx, goal, m.objects), sparse_problem(ctx, goal)
    assert dense.n_symbols > 500 and sparse.n_symbols < 40
    assert set(sparse.places) >= {m.start} | {lit.symbol for c in goal.clauses for lit in c if lit.symbol in m.places}


@pytest.mark.parametrize("seed", [0, 1, 2])
def test_sparse_and_dense_plans_cost_the_same(grid_planner, alley_planner, seed):
    for planner in (alley_planner, grid_planner):
        goal = sample_goal(planner.map, 3, 3, seed=seed)
        dense = planner.plan(goal, encoding="dense", incremental=False)
        sparse = planner.plan(goal, encoding="sparse", incremental=False)
        assert dense.solved and sparse.solved, (dense.message, sparse.message)
        assert dense.cost == sparse.cost > 0
        assert dense.verified and sparse.verified
        assert sparse.stats.n_symbols < dense.stats.n_symbols


def test_per_clause_strategy_matches_one_disjunctive_call(grid_planner):
    goal = sample_goal(grid_planner.map, 3, 3, seed=4)
    one = grid_planner.plan(goal, strategy="dnf", incremental=False)
    per = grid_planner.plan(goal, strategy="per-clause", incremental=False)
    assert one.solved and per.solved and one.cost == per.cost
    assert one.stats.fd_calls == 1 and per.stats.fd_calls == 3


def test_unknown_options_are_rejected(grid_planner):
    with pytest.raises(TampError, match="unknown encoding 'medium'"):
        grid_planner.plan("(visited p0_2)", encoding="medium")
    with pytest.raises(TampError, match="unknown strategy"):
        grid_planner.plan("(visited p0_2)", strategy="greedy")


# --- incremental object solver --------------------------------------------------------------------------


def test_object_free_motion_collides_and_blames_the_blocker():
    m = alley(0)
    ctx = TampContext(m)
    checker = DiscChecker(m, ctx.robot_radius)
    plan = [TaskAction("move", ("p0_0", "p0_5"), 500)]  # what a planner that ignores o0 would do
    ref = refine(ctx, plan, (), (), checker, rrt_budget=0.2, use_ompl=False)
    assert not ref.ok and ref.blame == ["o0"]


def test_incremental_solver_adds_the_blocking_object_then_succeeds(alley_planner):
    plan = alley_planner.plan("(or (and (visited p0_5)))", incremental=True)
    assert plan.solved and plan.verified
    assert plan.stats.objects_added == ["o0"] and plan.stats.iterations == 2
    assert "(inspect o0)" in [str(a) for a in plan.actions]
    assert plan.objects == ("o0",)
    checker = DiscChecker(alley_planner.map, 0.25)
    assert verify_plan(alley_planner.map, plan, checker=checker).ok


def test_up_front_solver_plans_with_every_object_at_once(alley_planner):
    plan = alley_planner.plan("(or (and (visited p0_5)))", incremental=False)
    assert plan.solved and plan.stats.iterations == 1 and plan.stats.objects_added == []
    assert "(inspect o0)" in [str(a) for a in plan.actions]


class _Clock:
    """The planning deadline's clock, driven by the test: `now` moves only when the test moves it."""

    def __init__(self, jump_after: int | None = None) -> None:
        self.now, self.reads, self.jump_after = 0.0, 0, jump_after

    def __call__(self) -> float:
        self.reads += 1
        if self.jump_after is not None and self.reads > self.jump_after:
            self.now = 1e9  # the deadline has long passed
        return self.now


class _TimingOutPlanner:
    """A task planner that reports a timeout and records the time limit it was given."""

    label = "stub"

    def __init__(self) -> None:
        self.limits: list[float | None] = []

    def solve(self, domain: str, problem: str, timeout: float | None = None) -> PlanResult:
        self.limits.append(timeout)
        return PlanResult(PlanStatus.TIMEOUT, planner=self.label, message="search time limit")


def test_timeouts_are_enforced_and_counted(monkeypatch):
    # Behaviour, not wall seconds (issue 25): the deadline's clock is the test's. Before, a real 0.3 s deadline
    # on a loaded machine sometimes passed while encoding (fd_calls 0) and the test failed or retried.
    from servicerobot.planners.tamp import graph

    m = office(0)
    goal = sample_goal(m, 3, 3, seed=0)
    stub = _TimingOutPlanner()
    monkeypatch.setattr(graph, "_clock", _Clock())  # time stands still: encoding completes
    plan = TampPlanner(m, timeout=0.3, planner=stub).plan(goal, encoding="dense", incremental=False)
    assert plan.status == "timeout" and not plan.solved and "task planner ran out of time" in plan.message
    assert plan.stats.fd_calls == 1 and plan.stats.timeouts == 1
    assert stub.limits == [pytest.approx(0.3)]  # the planner gets what is left of the deadline, no more


@pytest.mark.parametrize("encoding", ["dense", "sparse"])
def test_the_deadline_is_honoured_while_encoding(monkeypatch, encoding):
    from servicerobot.planners.tamp import graph

    m = office(0)
    stub = _TimingOutPlanner()
    clock = _Clock(jump_after=1)  # read once to set the deadline; it has passed at the next look
    monkeypatch.setattr(graph, "_clock", clock)
    plan = TampPlanner(m, timeout=0.3, planner=stub).plan(sample_goal(m, 3, 3, seed=0), encoding=encoding,
                                                          incremental=False)
    assert plan.status == "timeout" and "while encoding the task problem" in plan.message
    assert plan.stats.fd_calls == 0 and stub.limits == [] and clock.reads == 2  # stopped at the first look


# --- verification ---------------------------------------------------------------------------------------


def _hand_plan(m, polyline, places) -> TampPlan:
    goal = parse_goal("(or (and (visited p0_2) (not (visited p0_1))))")
    action = TaskAction("move", (m.start, "p0_2"), 200)
    return TampPlan("solved", goal, clause=0, actions=(action,),
                    steps=(MotionStep(action, tuple(places), tuple(polyline)),), cost=200)


def test_verifier_catches_a_motion_through_an_avoided_place():
    m = grid(0)
    c = {p: m.places[p].centre for p in ("p0_0", "p1_1", "p0_2")}
    around = _hand_plan(m, [c["p0_0"], c["p1_1"], c["p0_2"]], ["p0_0", "p1_1", "p0_2"])
    assert verify_plan(m, around).ok  # its diagonals only touch p0_1's corners
    # same place path, but the motion cuts straight through p0_1
    through = _hand_plan(m, [c["p0_0"], (1.5, 0.4), c["p0_2"]], ["p0_0", "p1_1", "p0_2"])
    report = verify_plan(m, through)
    assert not report.ok and any("enters place 'p0_1'" in v for v in report.violations)
    with pytest.raises(PlanVerificationError, match="p0_1"):
        verify_plan(m, through, strict=True)
    skipping = _hand_plan(m, [c["p0_0"], c["p0_2"]], ["p0_0", "p0_2"])  # not adjacent, and through p0_1
    assert len(verify_plan(m, skipping).violations) >= 2


def test_verifier_checks_the_clause_and_collisions(alley_planner):
    m = alley_planner.map
    plan = alley_planner.plan("(or (and (visited p0_5)))", incremental=False)
    wrong = parse_goal("(or (and (visited p1_0) (not (visited p0_5))))")
    report = verify_plan(m, plan, goal=wrong, clause=0)
    assert not report.ok and any("enters place 'p0_5'" in v or "enters 'p0_5'" in v for v in report.violations)
    no_inspect = TampPlan("solved", plan.goal, 0, tuple(a for a in plan.actions if a.name != "inspect"),
                          tuple(s for s in plan.steps if s.action.name != "inspect"), plan.cost)
    report = verify_plan(m, no_inspect, checker=DiscChecker(m, 0.25))
    assert not report.ok and any("collides with o0" in v for v in report.violations)
