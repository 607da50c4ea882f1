"""Tests for the planner interface and the Fast Downward back end."""

from __future__ import annotations

from pathlib import Path

import pytest

from servicerobot.errors import PlannerError
from servicerobot.pddl import load_domain, parse_problem, validate_plan
from servicerobot.planners import (
    FastDownward,
    Planner,
    PlanResult,
    PlanStatus,
    UnknownPlannerError,
    get_planner,
)
from servicerobot.planners.fast_downward import driver_path, status_for_exit_code

HOUSEHOLD_PATH = Path(__file__).resolve().parents[1] / "servicerobot" / "scenes" / "household.pddl"
HOUSEHOLD = load_domain(HOUSEHOLD_PATH)

PROBLEM = """
(define (problem tidy) (:domain household)
  (:objects kitchen hall attic - room  robot1 - robot  table1 - surface  mug1 - dish  apple1 - food
            fridge1 - fridge  washer1 - washer  shirt1 - clothing)
  (:init (in-room robot1 hall) (connected hall kitchen) (connected kitchen hall) (in-room table1 kitchen)
         (in-room fridge1 kitchen) (closed fridge1) (chills fridge1) (in-room washer1 kitchen)
         (closed washer1)
         (on mug1 table1) (on apple1 table1) (on shirt1 table1) (dirty shirt1) (hand-empty robot1))
  (:goal (and (cold apple1) (forall (?c - clothing) (not (dirty ?c))) (exists (?r - room) (in-room robot1 ?r))
              GOAL)))
"""


def problem_text(extra: str = "") -> str:
    return PROBLEM.replace("GOAL", extra)


def blocks_problem(n: int) -> str:
    blocks = [f"b{i}" for i in range(n)]
    init = (
        ["(ontable b0)"] + [f"(on b{i} b{i - 1})" for i in range(1, n)] + [f"(clear b{n - 1})", "(handempty)"]
    )
    goal = [f"(on b{i - 1} b{i})" for i in range(1, n)]
    return (
        f"(define (problem tower{n}) (:domain blocksworld) (:objects {' '.join(blocks)} - block) "
        f"(:init {' '.join(init)}) (:goal (and {' '.join(goal)})))"
    )


BLOCKSWORLD = """
(define (domain blocksworld) (:requirements :strips :typing) (:types block)
  (:predicates (on ?x - block ?y - block) (ontable ?x - block) (clear ?x - block) (handempty)
               (holding ?x - block))
  (:action pick-up :parameters (?x - block) :precondition (and (clear ?x) (ontable ?x) (handempty))
    :effect (and (not (ontable ?x)) (not (clear ?x)) (not (handempty)) (holding ?x)))
  (:action put-down :parameters (?x - block) :precondition (holding ?x)
    :effect (and (not (holding ?x)) (clear ?x) (handempty) (ontable ?x)))
  (:action stack :parameters (?x - block ?y - block) :precondition (and (holding ?x) (clear ?y))
    :effect (and (not (holding ?x)) (not (clear ?y)) (clear ?x) (handempty) (on ?x ?y)))
  (:action unstack :parameters (?x - block ?y - block) :precondition (and (on ?x ?y) (clear ?x) (handempty))
    :effect (and (holding ?x) (clear ?y) (not (clear ?x)) (not (handempty)) (not (on ?x ?y)))))
"""


@pytest.fixture(scope="module")
def planner():
    with get_planner("fast-downward", timeout=60) as fd:
        yield fd


def test_solves_a_household_problem_with_quantified_goals(planner):
    problem = parse_problem(problem_text(), HOUSEHOLD)
    result = planner.solve(HOUSEHOLD, problem)
    assert result.status is PlanStatus.SOLVED and result.solved
    assert result.planner == "fast-downward[lama-first]"
    assert result.expanded is not None and result.expanded > 0
    assert result.search_time is not None and result.search_time >= 0
    assert result.total_time > 0
    assert all(step.startswith("(") and not step.startswith(";") for step in result.plan)
    assert validate_plan(HOUSEHOLD, problem, result.plan).valid


def test_solves_from_text(planner):
    result = planner.solve(HOUSEHOLD_PATH.read_text(), problem_text())
    assert result.solved
    assert validate_plan(HOUSEHOLD, parse_problem(problem_text(), HOUSEHOLD), result.plan).valid


def test_unsolvable(planner):
    unreachable = planner.solve(HOUSEHOLD, problem_text("(in-room robot1 attic)"))
    assert unreachable.status is PlanStatus.UNSOLVABLE, unreachable.message
    assert not unreachable.solved and unreachable.plan == ()
    contradictory = planner.solve(HOUSEHOLD, problem_text("(discarded mug1) (on mug1 table1)"))
    assert contradictory.status is PlanStatus.UNSOLVABLE, contradictory.message


def test_timeout_kills_the_run():
    planner = FastDownward(timeout=0.05)
    result = planner.solve(BLOCKSWORLD, blocks_problem(30))
    assert result.status is PlanStatus.TIMEOUT
    assert "no plan within 0.05 s" in result.message
    assert result.total_time < 5


def test_search_string_replaces_the_alias():
    planner = FastDownward(search="astar(blind())")
    result = planner.solve(BLOCKSWORLD, blocks_problem(3))
    assert result.solved and result.planner == "fast-downward[astar(blind())]"
    assert len(result.plan) == 6  # optimal: reversing a 3-block tower takes 6 steps


def test_invalid_input_is_an_error_result(planner):
    result = planner.solve(HOUSEHOLD, problem_text("(onn mug1 table1)"))
    assert result.status is PlanStatus.ERROR
    assert "unknown predicate 'onn' in :goal; did you mean 'on'?" in result.message
    result = planner.solve("(define (domain broken)", problem_text())
    assert result.status is PlanStatus.ERROR and "not closed" in result.message
    with pytest.raises(TypeError, match="domain must be a Domain or PDDL text"):
        planner.solve(42, problem_text())  # type: ignore[arg-type]
    with pytest.raises(ValueError, match="timeout must be a positive number"):
        planner.solve(HOUSEHOLD, problem_text(), timeout=-1)


def test_unsupported_features_pass_through_to_the_planner(planner):
    domain = BLOCKSWORLD.replace(
        "(:action pick-up",
        "(:derived (tower-top ?x - block) (and (clear ?x) (not (ontable ?x))))\n  (:action pick-up",
    ).replace("(holding ?x - block))", "(holding ?x - block) (tower-top ?x - block))")
    problem = blocks_problem(3).replace("(:goal (and", "(:goal (and (tower-top b0)")
    result = planner.solve(domain, problem)
    assert result.solved, result.message


def test_get_planner_by_name():
    assert isinstance(get_planner("fd", alias="lama-first"), FastDownward)
    with pytest.raises(
        UnknownPlannerError, match="unknown planner 'fast-downwrd'; did you mean 'fast-downward'"
    ):
        get_planner("fast-downwrd")
    assert issubclass(UnknownPlannerError, PlannerError) and issubclass(UnknownPlannerError, ValueError)


def test_exit_code_mapping():
    assert status_for_exit_code(0)[0] is PlanStatus.SOLVED
    assert status_for_exit_code(2)[0] is PlanStatus.SOLVED
    assert status_for_exit_code(11)[0] is PlanStatus.UNSOLVABLE
    assert status_for_exit_code(12)[0] is PlanStatus.UNSOLVABLE
    assert status_for_exit_code(23)[0] is PlanStatus.TIMEOUT
    assert status_for_exit_code(22)[0] is PlanStatus.ERROR
    assert status_for_exit_code(31)[0] is PlanStatus.ERROR
    assert status_for_exit_code(34)[0] is PlanStatus.UNSUPPORTED
    assert status_for_exit_code(-9) == (PlanStatus.ERROR, "Fast Downward was killed by signal 9")
    assert driver_path().name == "fast-downward.py"


def test_planner_base_contract():
    class Echo(Planner):
        name = "echo"

        def _solve(self, domain_text, problem_text, timeout):
            return PlanResult(PlanStatus.SOLVED, plan=("(noop)",), planner=self.label, message=str(timeout))

    with Echo(timeout=3) as echo:
        result = echo.solve(BLOCKSWORLD, blocks_problem(2))
        assert result.solved and result.plan == ("(noop)",) and result.message == "3"
        assert echo.solve(BLOCKSWORLD, blocks_problem(2), timeout=1.5).message == "1.5"
    with pytest.raises(TypeError):
        Planner()  # type: ignore[abstract]


def _outcome(result: PlanResult) -> tuple:
    return result.status, result.plan, result.expanded


@pytest.mark.parametrize("search", [None, "astar(blind())"])
def test_warm_translator_gives_the_drivers_results(search):
    """The warm path runs the same components with the same options: identical plans and statistics."""
    warm, driver = FastDownward(search=search, warm=True), FastDownward(search=search, warm=False)
    cases = [(BLOCKSWORLD, blocks_problem(n)) for n in (3, 5, 7)]
    cases += [(HOUSEHOLD, problem_text()), (HOUSEHOLD, problem_text("(in-room robot1 attic)"))]
    for domain, problem in cases:
        assert _outcome(warm.solve(domain, problem)) == _outcome(driver.solve(domain, problem))


def test_warm_translator_survives_a_timeout_and_a_fork():
    import multiprocessing

    planner = FastDownward(timeout=0.05)
    assert planner.solve(BLOCKSWORLD, blocks_problem(30)).status is PlanStatus.TIMEOUT
    assert FastDownward().solve(BLOCKSWORLD, blocks_problem(4)).solved  # the server answers again
    with multiprocessing.get_context("fork").Pool(1) as pool:  # a forked worker starts its own server
        statuses = pool.starmap(_solve_status, [(BLOCKSWORLD, blocks_problem(4))] * 2)
    assert statuses == ["solved", "solved"]


def _solve_status(domain: str, problem: str) -> str:
    return FastDownward().solve(domain, problem).status.value


@pytest.mark.parametrize("limit", [0.001, 0.01])
def test_a_tiny_time_limit_is_a_timeout_result(limit):
    result = FastDownward(timeout=limit).solve(BLOCKSWORLD, blocks_problem(12))
    assert result.status is PlanStatus.TIMEOUT
    assert FastDownward().solve(BLOCKSWORLD, blocks_problem(3)).solved
