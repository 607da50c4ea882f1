"""Tests for in-process plan validation and plan-text parsing."""

from __future__ import annotations

from pathlib import Path

import pytest

from servicerobot.pddl import Atom, GroundAction, load_domain, parse_plan, parse_problem, validate_plan

HOUSEHOLD = Path(__file__).resolve().parents[1] / "servicerobot" / "scenes" / "household.pddl"

PROBLEM = """
(define (problem chill) (:domain household)
  (:objects kitchen hall - room  robot1 - robot  table1 - surface  apple - food  fridge1 - fridge)
  (:init (in-room robot1 hall) (connected hall kitchen) (connected kitchen hall) (in-room table1 kitchen)
         (in-room fridge1 kitchen) (on apple table1) (hand-empty robot1) (closed fridge1) (chills fridge1))
  (:goal (and (cold apple) (closed fridge1) (forall (?f - food) (not (on ?f table1))))))
"""

PLAN = [
    "(move robot1 hall kitchen)",
    "(open robot1 fridge1 kitchen)",
    "(pick-up robot1 apple table1 kitchen)",
    "(put-in robot1 apple fridge1 kitchen)",
    "(close robot1 fridge1 kitchen)",
]


@pytest.fixture(scope="module")
def task():
    domain = load_domain(HOUSEHOLD)
    return domain, parse_problem(PROBLEM, domain)


def test_valid_plan(task):
    result = validate_plan(*task, PLAN)
    assert result.valid
    assert result.steps_executed == 5
    assert result.failed_step is None and result.failed_action is None
    assert result.reason == "" and result.unsatisfied_goals == ()
    assert Atom("cold", ("apple",)) in result.final_state
    assert str(result) == "Plan valid: 5 steps executed and the goal holds."


def test_plan_text_with_comments_timestamps_and_costs(task):
    text = (
        "; a plan written by a planner\n"
        "0: (MOVE robot1 hall kitchen) [1]\n"
        "1.000: (open robot1 fridge1 kitchen)  ; open first\n"
        "\n"
        "(pick-up robot1 apple table1 kitchen) (put-in robot1 apple fridge1 kitchen)\n"
        "close robot1 fridge1 kitchen\n"
        "; cost = 5 (unit cost)\n"
    )
    assert parse_plan(text)[:2] == ["(MOVE robot1 hall kitchen)", "(open robot1 fridge1 kitchen)"]
    assert len(parse_plan(text)) == 5
    assert validate_plan(*task, text).valid


def test_ground_actions_are_accepted(task):
    steps = [GroundAction(s[1:-1].split()[0], tuple(s[1:-1].split()[1:])) for s in PLAN]
    assert validate_plan(*task, steps).valid


def test_failed_precondition(task):
    result = validate_plan(*task, [PLAN[0], PLAN[3]])
    assert not result.valid
    assert result.failed_step == 1
    assert result.failed_action == "(put-in robot1 apple fridge1 kitchen)"
    assert result.steps_executed == 1
    assert result.reason == "precondition (holding robot1 apple) is false"
    assert "(cold apple)" in result.unsatisfied_goals
    assert str(result).startswith(
        "Plan invalid: step 2 (put-in robot1 apple fridge1 kitchen) failed after 1 step executed: "
        "precondition (holding robot1 apple) is false."
    )


def test_unparseable_step(task):
    result = validate_plan(*task, [PLAN[0], "(open robot1 fridge2 kitchen)"])
    assert not result.valid and result.failed_step == 1
    assert "unknown object 'fridge2'" in result.reason
    result = validate_plan(*task, "(move robot1 hall kitchen)\n(move robot1 (hall) kitchen)\n")
    assert result.failed_step == 1 and "expected one action like" in result.reason


def test_unmet_goal(task):
    result = validate_plan(*task, PLAN[:4])
    assert not result.valid
    assert result.failed_step is None
    assert result.steps_executed == 4
    assert result.unsatisfied_goals == ("(closed fridge1)",)
    assert "the goal is not satisfied: (closed fridge1)" in str(result)


def test_empty_plan(task):
    result = validate_plan(*task, [])
    assert not result.valid and result.steps_executed == 0
    assert result.unsatisfied_goals == ("(cold apple)", "(not (on apple table1))")
