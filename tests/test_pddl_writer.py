"""Round trips between the writer and the parser."""

from __future__ import annotations

from pathlib import Path

import pytest

from servicerobot.pddl import (
    TRUE,
    And,
    Atom,
    AtomF,
    Exists,
    Forall,
    Imply,
    Not,
    Or,
    Problem,
    format_formula,
    load_domain,
    parse_domain,
    parse_problem,
    write_domain,
    write_problem,
)

HOUSEHOLD = Path(__file__).resolve().parents[1] / "servicerobot" / "scenes" / "household.pddl"

PROBLEM = """
(define (problem laundry) (:domain household)
  (:objects kitchen hall - room  robot1 - robot  table1 - surface  mug1 cup1 - dish  fridge1 - fridge
            washer1 - washer  shirt1 - clothing  lamp1 - light)
  (:init (in-room robot1 hall) (connected hall kitchen) (connected kitchen hall) (in-room table1 kitchen)
         (in-room fridge1 kitchen) (on mug1 table1) (hand-empty robot1) (closed fridge1) (chills fridge1)
         (in-room washer1 kitchen) (on shirt1 table1) (dirty shirt1) (on cup1 table1))
  (:goal (and (forall (?c - clothing) (and (not (dirty ?c)) (wet ?c)))
              (or (inside mug1 fridge1) (on mug1 table1))
              (imply (light-on lamp1) (in-room robot1 kitchen))
              (exists (?s - surface ?d - dish) (on ?d ?s))
              (not (= mug1 cup1)))))
"""


@pytest.fixture(scope="module")
def household():
    return load_domain(HOUSEHOLD)


def test_domain_round_trip(household):
    text = write_domain(household)
    assert parse_domain(text) == household
    assert write_domain(parse_domain(text)) == text


def test_problem_round_trip(household):
    problem = parse_problem(PROBLEM, household)
    text = write_problem(problem)
    assert parse_problem(text, household) == problem
    assert "mug1 cup1 - dish" in text  # objects grouped by type
    assert "    (chills fridge1)\n" in text  # init sorted, one atom per line


def test_untyped_and_empty_round_trip():
    domain = parse_domain(
        "(define (domain u) (:requirements :strips) (:constants k) (:predicates (p ?x) (z)) "
        "(:action a :parameters (?x) :precondition (and) :effect (and)) "
        "(:action b :parameters () :effect (z)))"
    )
    text = write_domain(domain)
    assert "- object" not in text
    assert parse_domain(text) == domain
    problem = Problem("q", "u", {"a": "object"}, frozenset({Atom("p", ("a",))}), TRUE)
    assert parse_problem(write_problem(problem), domain) == problem


def test_format_formula():
    f = And(
        (
            Forall((("?x", "t"),), Imply(AtomF("p", ("?x",)), Not(AtomF("q", ("?x", "k"))))),
            Or((Exists((("?y", "t"), ("?z", "u")), AtomF("r", ("?y", "?z"))), AtomF("z", ()))),
        )
    )
    assert format_formula(f) == (
        "(and (forall (?x - t) (imply (p ?x) (not (q ?x k)))) (or (exists (?y - t ?z - u) (r ?y ?z)) (z)))"
    )
    assert format_formula(TRUE) == "(and)"
