"""The LAPKT back end (the optional `lapkt` wheel), checked against Fast Downward on the same problems.

The missing-dependency message is tested in test_planners_builtin.py, which runs without lapkt.
"""

from __future__ import annotations

import dataclasses
import importlib.util
import shutil

import pytest

pytest.importorskip("lapkt", reason='LAPKT is optional: pip install -e ".[lapkt]"')

from planning_problems import CYCLE, HOUSEHOLD, SHUFFLE8, blocks, gripper, household_problem, household_world

from servicerobot.errors import DependencyNotInstalled
from servicerobot.pddl import Interpreter, Problem, parse_domain, parse_problem, validate_plan
from servicerobot.pddl.domains import load, text
from servicerobot.planners import FastDownward, PlanStatus, get_planner
from servicerobot.planners.lapkt import DEFAULT_PLANNER, LAPKT, lapkt_planners, prepare_domain
from servicerobot.scenes.household import ROBOT

BLOCKS = load("blocksworld")
GRIPPER = load("gripper")

# a 0-ary action whose only precondition is static: LAPKT 0.2.1 segfaults on it without our guard
NO_FLUENT_PRECONDITION = """
(define (domain guard) (:requirements :strips :typing) (:types thing)
  (:predicates (p ?x - thing) (r) (s))
  (:action a :parameters (?x - thing) :precondition (r) :effect (p ?x))
  (:action b :parameters () :precondition (s) :effect (r)))
"""
GUARD_PROBLEM = (
    "(define (problem g) (:domain guard) (:objects x1 x2 - thing) (:init (s)) (:goal (and (p x1) (p x2))))"
)


ARMLESS = blocks([["a"], ["b"]], [["a", "b"]], arm_empty=False)  # no action is ever applicable


@pytest.fixture(scope="module")
def lapkt():
    try:
        return LAPKT(timeout=60)
    except DependencyNotInstalled as error:  # lapkt without the clingo grounder
        pytest.skip(str(error))


@pytest.fixture(scope="module")
def fd():
    return FastDownward(timeout=60)


@pytest.fixture(scope="module")
def world():
    return household_world()


def household_cases(world) -> dict[str, Problem]:
    item, surface = next(a.args for a in sorted(world.scene.init) if a.predicate == "on")
    room = world.scene.entities[surface].room
    target = next(n for n, e in world.scene.entities.items() if e.pddl_type == "surface" and e.room != room)
    attic = household_problem(world, f"(on {item} {target})")
    attic = dataclasses.replace(attic, objects={**attic.objects, "attic": "room"})
    return {
        "dishes-clean": household_problem(world, "(forall (?d - dish) (not (dirty ?d)))"),
        "pick-and-place": household_problem(world, f"(on {item} {target})"),
        "unreachable-room": dataclasses.replace(
            attic,
            goal=Interpreter.for_problem(HOUSEHOLD, attic).compile_goal(f"(in-room {ROBOT} attic)").formula,
        ),
    }


IPC_CASES = {
    "bw-shuffle8": (BLOCKS, SHUFFLE8),
    "gripper6": (GRIPPER, gripper(6)),
    "bw-cycle": (BLOCKS, CYCLE),
    "bw-armless": (BLOCKS, ARMLESS),
}


def _check_agreement(lapkt, fd, domain, problem) -> None:
    mine, theirs = lapkt.solve(domain, problem), fd.solve(domain, problem)
    assert mine.status is theirs.status, (mine.message, theirs.message)
    if theirs.solved:
        parsed = problem if isinstance(problem, Problem) else parse_problem(problem, domain)
        assert validate_plan(domain, parsed, theirs.plan).valid
        assert validate_plan(domain, parsed, mine.plan).valid, mine.plan
    else:
        assert mine.plan == ()


@pytest.mark.parametrize("case", list(IPC_CASES))
def test_agrees_with_fast_downward_on_ipc_problems(lapkt, fd, case):
    _check_agreement(lapkt, fd, *IPC_CASES[case])


@pytest.mark.parametrize("case", ["dishes-clean", "pick-and-place", "unreachable-room"])
def test_agrees_with_fast_downward_on_household_problems(lapkt, fd, world, case):
    _check_agreement(lapkt, fd, HOUSEHOLD, household_cases(world)[case])


def test_household_plan_keeps_the_object_named_like_its_type(lapkt, world):
    # Tarski refuses an object named like a type; the household robot is `robot - robot`
    problem = household_cases(world)["dishes-clean"]
    assert problem.objects[ROBOT] == "robot"
    result = lapkt.solve(HOUSEHOLD, problem)
    assert result.solved and result.planner == f"lapkt[{DEFAULT_PLANNER}]"
    assert all(step.split()[1] == ROBOT for step in result.plan)
    assert any(step.startswith("(wash ") for step in result.plan)


def test_statistics_are_reported(lapkt):
    solved = lapkt.solve(BLOCKS, SHUFFLE8)
    assert solved.solved and solved.expanded is not None and solved.search_time is not None
    exhausted = lapkt.solve(BLOCKS, CYCLE)  # SIW+ fails, then BFS(f) exhausts the space
    assert exhausted.status is PlanStatus.UNSOLVABLE and "BFS(f) did not found a plan" in exhausted.message
    assert exhausted.expanded > 0 and exhausted.search_time >= 0
    proved = lapkt.solve(BLOCKS, ARMLESS)
    assert proved.status is PlanStatus.UNSOLVABLE and "relaxed reachability" in proved.message


def test_goal_holding_initially_needs_no_run(lapkt):
    result = lapkt.solve(BLOCKS, blocks([["a", "b"]], [["a", "b"]]))
    assert result.solved and result.plan == () and result.expanded == 0


def test_actions_without_fluent_preconditions_are_guarded(lapkt):
    domain = parse_domain(NO_FLUENT_PRECONDITION)
    prepared, guarded = prepare_domain(domain, {"x1": "thing"})
    assert guarded and "servicerobot-lapkt-guard" in str(prepared.actions["b"].precondition)
    assert prepared.actions["a"] == domain.actions["a"]  # (r) is a fluent: b adds it
    result = lapkt.solve(NO_FLUENT_PRECONDITION, GUARD_PROBLEM)
    assert result.solved, result.message
    assert result.plan[0] == "(b)"
    assert validate_plan(domain, parse_problem(GUARD_PROBLEM, domain), result.plan).valid


def test_quantifiers_over_empty_types_are_removed():
    # Tarski fails on (forall (?c - clothing) ...) without clothing: "No constants were defined!"
    objects = {"kitchen": "room", "robot": "robot", "sink": "sink", "washer": "washer", "mug": "dish"}
    prepared, guarded = prepare_domain(HOUSEHOLD, objects)
    assert not guarded
    assert "run-washer" not in prepared.actions  # needs (exists (?c - clothing) ...): never applicable
    assert "make-bed" not in prepared.actions  # no bed to make
    assert prepared.actions["wash"] == HOUSEHOLD.actions["wash"]  # untouched: every type has objects
    with_clothing, _ = prepare_domain(HOUSEHOLD, {**objects, "shirt": "clothing"})
    assert with_clothing.actions["run-washer"] == HOUSEHOLD.actions["run-washer"]


def test_timeout_kills_the_run():
    big = blocks([[f"b{i}" for i in range(60)]], [[f"b{i}" for i in reversed(range(60))]])
    result = LAPKT(timeout=0.2).solve(BLOCKS, big)
    assert result.status is PlanStatus.TIMEOUT and result.message == "no plan within 0.2 s"
    assert result.total_time < 5


def test_other_planners_and_names(lapkt):
    assert DEFAULT_PLANNER in lapkt_planners() and "BFS_f_Planner" in lapkt_planners()
    bfs_f = get_planner("lapkt", planner="BFS_f_Planner")
    result = bfs_f.solve(text("gripper"), gripper(3))
    assert result.solved and result.expanded > 0
    assert validate_plan(GRIPPER, parse_problem(gripper(3), GRIPPER), result.plan).valid
    with pytest.raises(ValueError, match="unknown LAPKT planner 'SIW'; the lapkt wheel offers"):
        LAPKT(planner="SIW")


def test_crash_and_silence_are_errors(lapkt):
    crashed = lapkt._result(-11, "Initial State pruned! No Solution found.", "", None, {})
    assert crashed.status is PlanStatus.ERROR and "killed by signal 11" in crashed.message
    silent = lapkt._result(0, "", "", "", {})
    assert silent.status is PlanStatus.ERROR and "no plan and no verdict" in silent.message
    renamed = lapkt._result(0, "Nodes expanded during search: 3\nNodes expanded during search: 4\n", "",
                            "(MOVE Robot-obj a b)\n", {"robot-obj": "robot"})
    assert renamed.plan == ("(move robot a b)",) and renamed.expanded == 7


def test_missing_grounder_is_reported(monkeypatch):
    real_find_spec = importlib.util.find_spec
    monkeypatch.setattr(importlib.util, "find_spec",
                        lambda name, *a, **k: None if name == "clingo" else real_find_spec(name, *a, **k))
    monkeypatch.setattr(shutil, "which", lambda name, *a, **k: None)
    with pytest.raises(DependencyNotInstalled, match=r'needs clingo.*pip install "servicerobot\[lapkt\]"'):
        LAPKT()
