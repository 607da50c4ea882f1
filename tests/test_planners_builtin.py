"""The pure-Python planner (GBFS with FF, and BFS) and the planner registry's new names."""

from __future__ import annotations

import dataclasses
import importlib.util

import pytest
from planning_problems import (
    CYCLE,
    HOUSEHOLD,
    SHUFFLE8,
    blocks,
    gripper,
    household_problem,
    household_world,
    pick_and_place_goal,
)

from servicerobot.errors import DependencyNotInstalled
from servicerobot.pddl import Atom, Interpreter, Problem, parse_problem, validate_plan
from servicerobot.pddl.domains import load, text
from servicerobot.planners import PLANNERS, BuiltinPlanner, PlanStatus, get_planner
from servicerobot.planners.builtin import GroundTask
from servicerobot.scenes.household import ROBOT

BLOCKS = load("blocksworld")
GRIPPER = load("gripper")
ALL_DISHES_CLEAN = "(forall (?d - dish) (not (dirty ?d)))"


@pytest.fixture(scope="module")
def world():
    """A small household as the oracle sees it (true state, interpreter)."""
    return household_world()


@pytest.fixture(scope="module")
def gbfs():
    return BuiltinPlanner(timeout=60)


def test_household_quantified_goal(world, gbfs):
    problem = household_problem(world, ALL_DISHES_CLEAN)
    assert not Interpreter.for_problem(HOUSEHOLD, problem).compile_goal(problem.goal).holds(problem.init)
    result = gbfs.solve(HOUSEHOLD, problem)
    assert result.status is PlanStatus.SOLVED, result.message
    assert result.planner == "builtin[gbfs]"
    assert result.expanded is not None and result.expanded > 0
    assert result.search_time is not None and 0 <= result.search_time <= result.total_time
    assert validate_plan(HOUSEHOLD, problem, result.plan).valid
    assert any(step.startswith("(wash ") for step in result.plan)
    assert all(step.startswith("(") and step.endswith(")") for step in result.plan)


def test_heuristic_sees_negative_goals_and_conditional_effects(world):
    # FF counts the washing a "no dish is dirty" goal needs (negative literals are facts of their own)
    task = GroundTask(HOUSEHOLD, household_problem(world, ALL_DISHES_CLEAN))
    h, helpful = task.ff(task.init)
    dirty = sum(1 for a in task.init if a.predicate == "dirty" and world.scene.objects[a.args[0]] == "dish")
    assert h is not None and h >= dirty + 1 and helpful
    # `cold` comes only from the conditional effect of put-in into a fridge
    food = next(name for name, typ in sorted(world.scene.objects.items())
                if typ == "food" and Atom("cold", (name,)) not in world.scene.init)
    problem = household_problem(world, f"(cold {food})")
    task = GroundTask(HOUSEHOLD, problem)
    h, _ = task.ff(task.init)
    assert h is not None and h >= 2  # at least: take it, put it in the fridge
    result = BuiltinPlanner().solve(HOUSEHOLD, problem)
    assert result.solved and validate_plan(HOUSEHOLD, problem, result.plan).valid
    assert any(step.startswith("(put-in ") and "fridge" in step for step in result.plan)


def test_household_pick_and_place_is_fast(world, gbfs):
    problem = household_problem(world, pick_and_place_goal(world))
    result = gbfs.solve(HOUSEHOLD, problem)
    assert result.solved and validate_plan(HOUSEHOLD, problem, result.plan).valid
    assert result.total_time < 3.0  # about 0.05 s on a laptop core; generous for loaded CI machines
    assert any(step.startswith(("(place-on ", "(put-in ")) and ROBOT in step for step in result.plan)


@pytest.mark.parametrize(
    ("domain", "problem"),
    [
        (BLOCKS, blocks([["a", "b", "c", "d"]], [["d", "c", "b", "a"]])),
        (BLOCKS, SHUFFLE8),
        (BLOCKS, blocks([[f"b{i}" for i in range(12)]], [[f"b{i}" for i in reversed(range(12))]])),
        (GRIPPER, gripper(8)),
    ],
    ids=["bw-reverse4", "bw-shuffle8", "bw-reverse12", "gripper8"],
)
def test_ipc_problems(gbfs, domain, problem):
    result = gbfs.solve(domain, problem)
    assert result.status is PlanStatus.SOLVED, result.message
    assert validate_plan(domain, parse_problem(problem, domain), result.plan).valid
    assert result.expanded >= 1


def test_solves_from_text_and_is_deterministic(gbfs):
    first = gbfs.solve(text("blocksworld"), SHUFFLE8)
    second = BuiltinPlanner().solve(text("blocksworld"), SHUFFLE8)
    assert first.solved and first.plan == second.plan and first.expanded == second.expanded


@pytest.mark.parametrize(
    ("domain", "problem", "optimal"),
    [
        (BLOCKS, blocks([["a", "b", "c"]], [["c", "b", "a"]]), 6),
        (BLOCKS, blocks([["a", "b", "c", "d"]], [["d", "c", "b", "a"]]), 8),
        (GRIPPER, gripper(2), 5),
        (GRIPPER, gripper(4), 11),
    ],
    ids=["bw-reverse3", "bw-reverse4", "gripper2", "gripper4"],
)
def test_bfs_finds_shortest_plans(domain, problem, optimal):
    bfs = BuiltinPlanner(algorithm="bfs")
    result = bfs.solve(domain, problem)
    assert result.solved and result.planner == "builtin[bfs]"
    assert len(result.plan) == optimal
    assert validate_plan(domain, parse_problem(problem, domain), result.plan).valid
    assert len(BuiltinPlanner().solve(domain, problem).plan) >= optimal


@pytest.mark.parametrize("algorithm", ["gbfs", "bfs"])
def test_unsolvable(world, algorithm):
    planner = BuiltinPlanner(algorithm=algorithm)
    exhausted = planner.solve(BLOCKS, CYCLE)  # reachable under the relaxation, so the search must exhaust
    assert exhausted.status is PlanStatus.UNSOLVABLE and exhausted.plan == ()
    assert "search space is exhausted" in exhausted.message
    assert exhausted.expanded == 22  # every state of three blocks (13 with the arm empty, 9 holding one)
    attic = household_problem(world, ALL_DISHES_CLEAN)
    attic = dataclasses.replace(attic, objects={**attic.objects, "attic": "room"})
    attic = dataclasses.replace(attic, goal=parse_goal(f"(in-room {ROBOT} attic)", attic))
    unreachable = planner.solve(HOUSEHOLD, attic)
    assert unreachable.status is PlanStatus.UNSOLVABLE
    assert "unreachable even with deletes ignored" in unreachable.message and unreachable.expanded == 0


def parse_goal(goal: str, problem: Problem):
    return Interpreter.for_problem(HOUSEHOLD, problem).compile_goal(goal).formula


def test_expansion_and_time_limits():
    limited = BuiltinPlanner(max_expansions=5).solve(BLOCKS, SHUFFLE8)
    assert limited.status is PlanStatus.TIMEOUT and limited.plan == ()
    assert "expansion limit reached: no plan within 5 expansions" in limited.message
    assert limited.expanded == 5
    bfs = BuiltinPlanner(algorithm="bfs", max_expansions=50).solve(BLOCKS, SHUFFLE8)
    assert bfs.status is PlanStatus.TIMEOUT and bfs.expanded == 50



class _Clock:
    """A clock for the planner's deadline that advances `step` seconds each time it is read."""

    def __init__(self, step: float) -> None:
        self.now, self.step, self.reads = 0.0, step, 0

    def __call__(self) -> float:
        self.reads += 1
        self.now += self.step
        return self.now


def test_deadline_is_honoured_while_grounding(monkeypatch):
    # Behaviour, not wall seconds (issue 25): the deadline's clock is driven by the test. Before, grounding
    # never looked at the clock, so on a loaded machine timeout=0.05 took 12.8-16.3 s (grounding: 0.8 s CPU).
    from servicerobot.planners import builtin

    big = blocks([[f"b{i}" for i in range(40)]], [[f"b{i}" for i in reversed(range(40))]])
    clock = _Clock(step=0.02)  # set at 0.02 s, the deadline (0.07 s) has passed at the 4th read (0.08 s)
    monkeypatch.setattr(builtin, "_clock", clock)
    timed = BuiltinPlanner().solve(BLOCKS, big, timeout=0.05)
    assert timed.status is PlanStatus.TIMEOUT and timed.plan == ()
    assert "time limit reached while grounding" in timed.message and timed.expanded == 0
    assert clock.reads == 4  # read when the deadline is set, then at each check until it has passed
    # a clock that never passes the deadline: grounding completes and the search finds the plan
    frozen = _Clock(step=0.0)
    monkeypatch.setattr(builtin, "_clock", frozen)
    small = blocks([["a", "b", "c"]], [["c", "b", "a"]])
    solved = BuiltinPlanner().solve(BLOCKS, small, timeout=0.05)
    assert solved.solved and frozen.reads > 1


def test_goal_holding_initially():
    problem = blocks([["a", "b"]], [["a", "b"]])
    for algorithm in ("gbfs", "bfs"):
        result = BuiltinPlanner(algorithm=algorithm).solve(BLOCKS, problem)
        assert result.solved and result.plan == () and result.expanded == 0


def test_disjunctive_goals():
    # either tower will do; the goal test sees the whole formula
    problem = blocks([["a"], ["b"], ["c"]], [["a"]]).replace(
        "(:goal (and ))", "(:goal (or (and (on a b) (on b c)) (exists (?x) (and (on c ?x) (on ?x a)))))"
    )
    for algorithm in ("gbfs", "bfs"):
        result = BuiltinPlanner(algorithm=algorithm).solve(BLOCKS, problem)
        assert result.solved and validate_plan(BLOCKS, parse_problem(problem, BLOCKS), result.plan).valid
        assert len(result.plan) == 4 or algorithm == "gbfs"


def test_options_and_errors():
    with pytest.raises(ValueError, match="algorithm must be one of gbfs, bfs"):
        BuiltinPlanner(algorithm="astar")
    with pytest.raises(ValueError, match="max_expansions must be a positive integer"):
        BuiltinPlanner(max_expansions=0)
    planner = BuiltinPlanner()
    broken = planner.solve(text("blocksworld"), SHUFFLE8.replace("(on-table a)", "(on-tabel a)"))
    assert broken.status is PlanStatus.ERROR and "on-tabel" in broken.message
    derived = text("blocksworld").replace(
        "(:action pickup", "(:derived (tower-top ?x) (and (clear ?x) (not (on-table ?x))))\n  (:action pickup"
    )
    assert planner.solve(derived, SHUFFLE8).status is PlanStatus.UNSUPPORTED


def test_registry():
    assert PLANNERS["builtin"] == "servicerobot.planners.builtin:BuiltinPlanner"
    assert PLANNERS["lapkt"] == "servicerobot.planners.lapkt:LAPKT"
    planner = get_planner("builtin", algorithm="bfs", max_expansions=10)
    assert isinstance(planner, BuiltinPlanner) and planner.label == "builtin[bfs]"


def test_lapkt_missing_dependency_names_the_extra(monkeypatch):
    # here, not in test_planners_lapkt.py, so that it runs whether or not lapkt is installed
    real_find_spec = importlib.util.find_spec

    def find_spec(name, *args, **kwargs):
        return None if name == "lapkt" or name.startswith("lapkt.") else real_find_spec(name, *args, **kwargs)

    monkeypatch.setattr(importlib.util, "find_spec", find_spec)
    with pytest.raises(DependencyNotInstalled, match=r'pip install "servicerobot\[lapkt\]"'):
        get_planner("lapkt")
    with pytest.raises(ImportError):  # DependencyNotInstalled is an ImportError too
        get_planner("lapkt", timeout=5)
