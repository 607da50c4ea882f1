"""Tests for the domain and problem parser: structure, line:column syntax errors, semantic checks."""

from __future__ import annotations

import time
from pathlib import Path

import pytest

from servicerobot.errors import PDDLParseError, PDDLSemanticError
from servicerobot.pddl import (
    FALSE,
    TRUE,
    AddEffect,
    And,
    Atom,
    AtomF,
    DelEffect,
    Equals,
    Exists,
    Forall,
    ForallEffect,
    Imply,
    Not,
    Or,
    UnsupportedFeatureError,
    WhenEffect,
    load_domain,
    load_problem,
    parse_domain,
    parse_problem,
)

HOUSEHOLD = Path(__file__).resolve().parents[1] / "servicerobot" / "scenes" / "household.pddl"

BLOCKSWORLD = """
(define (domain BlocksWorld)
  (:requirements :strips :typing)
  (:types block)
  (:predicates (on ?x - block ?y - block) (ontable ?x - block) (clear ?x - block)
               (handempty) (holding ?x - block))
  (:action pick-up
    :parameters (?x - block)
    :precondition (and (clear ?x) (ontable ?x) (handempty))
    :effect (and (not (ontable ?x)) (not (clear ?x)) (not (handempty)) (holding ?x)))
  (:action put-down
    :parameters (?x - block)
    :precondition (holding ?x)
    :effect (and (not (holding ?x)) (clear ?x) (handempty) (ontable ?x)))
  (:action stack
    :parameters (?x - block ?y - block)
    :precondition (and (holding ?x) (clear ?y))
    :effect (and (not (holding ?x)) (not (clear ?y)) (clear ?x) (handempty) (on ?x ?y)))
  (:action unstack
    :parameters (?x - block ?y - block)
    :precondition (and (on ?x ?y) (clear ?x) (handempty))
    :effect (and (holding ?x) (clear ?y) (not (clear ?x)) (not (handempty)) (not (on ?x ?y)))))
"""

BW_PROBLEM = """
(define (problem three) (:domain blocksworld)
  (:objects a b c - block)
  (:init (ontable a) (ontable b) (on c a) (clear b) (clear c) (handempty))
  (:goal (and (on a b) (on b c))))
"""

SMALL_HH_PROBLEM = """
(define (problem tiny) (:domain household)
  (:objects kitchen hall - room  robot1 - robot  table1 - surface  mug1 - dish  fridge1 - fridge)
  (:init (in-room robot1 hall) (connected hall kitchen) (connected kitchen hall) (in-room table1 kitchen)
         (in-room fridge1 kitchen) (on mug1 table1) (hand-empty robot1) (closed fridge1))
  (:goal (and (inside mug1 fridge1) (forall (?d - dish) (not (dirty ?d))))))
"""


@pytest.fixture(scope="module")
def household():
    return load_domain(HOUSEHOLD)


def test_household_domain_parses(household):
    assert household.name == "household"
    assert ":conditional-effects" in household.requirements
    assert len(household.actions) == 18
    assert household.types.is_subtype("fridge", "container")
    assert household.types.is_subtype("fridge", "object")
    assert not household.types.is_subtype("sink", "openable")
    assert household.types.ancestors("fridge") == ("openable", "container", "fixture", "locatable", "object")
    assert set(household.types.descendants("openable")) == {"fridge", "washer", "dryer"}
    assert household.predicates["on"].params == (("?i", "item"), ("?s", "surface"))
    washer = household.actions["run-washer"]
    assert washer.params == (("?r", "robot"), ("?w", "washer"), ("?room", "room"))
    assert washer.precondition.parts[-1] == Exists((("?c", "clothing"),), AtomF("inside", ("?c", "?w")))
    assert washer.effects == (
        ForallEffect(
            (("?c", "clothing"),),
            (
                WhenEffect(
                    AtomF("inside", ("?c", "?w")),
                    (DelEffect(AtomF("dirty", ("?c",))), AddEffect(AtomF("wet", ("?c",)))),
                ),
            ),
        ),
    )
    put_in = household.actions["put-in"]
    assert WhenEffect(AtomF("chills", ("?c",)), (AddEffect(AtomF("cold", ("?i",))),)) in put_in.effects


def test_household_domain_parses_fast():
    text = HOUSEHOLD.read_text()
    parse_domain(text)
    best = min(_timed(parse_domain, text) for _ in range(20))
    assert best < 0.005, f"parsing household.pddl took {best * 1e3:.2f} ms"


def _timed(fn, *args) -> float:
    start = time.perf_counter()
    fn(*args)
    return time.perf_counter() - start


def test_blocksworld_domain_and_problem():
    domain = parse_domain(BLOCKSWORLD)
    assert domain.name == "blocksworld"  # names are lowercased
    assert list(domain.actions) == ["pick-up", "put-down", "stack", "unstack"]
    assert domain.predicates["handempty"].arity == 0
    problem = parse_problem(BW_PROBLEM, domain)
    assert problem.objects == {"a": "block", "b": "block", "c": "block"}
    assert Atom("on", ("c", "a")) in problem.init
    assert problem.goal == And((AtomF("on", ("a", "b")), AtomF("on", ("b", "c"))))
    assert domain.objects_of_type(problem.objects, "block") == ("a", "b", "c")


def test_problem_without_domain_is_only_syntax_checked():
    problem = parse_problem(SMALL_HH_PROBLEM.replace("(on mug1 table1)", "(onn mug1 table1)"))
    assert Atom("onn", ("mug1", "table1")) in problem.init
    assert problem.domain_name == "household"


def test_formula_forms_and_constants():
    domain = parse_domain(
        """(define (domain f) (:requirements :adl)
        (:types t) (:constants k - t) (:predicates (p ?x - t) (q ?x - t ?y - t))
        (:action a :parameters (?x - t)
          :precondition (and (or (p ?x) (not (p k))) (imply (p ?x) (q ?x k)) (= ?x ?x) (not (= ?x k))
                             (exists (?y - t) (q ?x ?y)) (forall (?y - t) (p ?y)) (and) (or))
          :effect (and (p ?x) (not (p k)) (forall (?y - t) (when (p ?y) (q ?x ?y)))
                       (increase (total-cost) 1)))
        (:action b :parameters ()))"""
    )
    pre = domain.actions["a"].precondition
    assert pre.parts[0] == Or((AtomF("p", ("?x",)), Not(AtomF("p", ("k",)))))
    assert pre.parts[1] == Imply(AtomF("p", ("?x",)), AtomF("q", ("?x", "k")))
    assert pre.parts[2] == Equals("?x", "?x")
    assert pre.parts[3] == Not(Equals("?x", "k"))
    assert isinstance(pre.parts[5], Forall)
    assert pre.parts[6:] == (TRUE, FALSE)
    assert len(domain.actions["a"].effects) == 3  # the action-cost increase is dropped
    assert domain.actions["b"].precondition == TRUE and domain.actions["b"].effects == ()
    assert domain.constants == {"k": "t"}


def test_action_costs_are_accepted():
    domain = parse_domain(
        BLOCKSWORLD.replace(":typing)", ":typing :action-costs) (:functions (total-cost) - number)")
    )
    problem = parse_problem(
        BW_PROBLEM.replace("(handempty))", "(handempty) (= (total-cost) 0))").replace(
            "(on b c))))", "(on b c))) (:metric minimize (total-cost)))"
        ),
        domain,
    )
    assert ":action-costs" in domain.requirements
    assert len(problem.init) == 6


def test_untyped_domain():
    domain = parse_domain(
        "(define (domain u) (:predicates (p ?x) (r ?x ?y)) (:action a :parameters (?x ?y) "
        ":precondition (r ?x ?y) :effect (p ?x)))"
    )
    assert domain.predicates["r"].params == (("?x", "object"), ("?y", "object"))
    problem = parse_problem(
        "(define (problem q) (:domain u) (:objects a b) (:init (r a b)) (:goal (p a)))", domain
    )
    assert problem.objects == {"a": "object", "b": "object"}


def test_load_problem_names_the_file(tmp_path, household):
    path = tmp_path / "bad.pddl"
    path.write_text(SMALL_HH_PROBLEM.replace("(on mug1 table1)", "(on mug1 tabel1)"))
    with pytest.raises(PDDLSemanticError) as info:
        load_problem(path, household)
    assert str(info.value).startswith(f"{path}:5:45: ")
    assert "unknown object 'tabel1' in :init; did you mean 'table1'?" in str(info.value)


# --------------------------------------------------------------------------- syntax errors
@pytest.mark.parametrize(
    ("text", "line", "column", "words"),
    [
        ("(define (domain d)\n  (:predicates (p ?x)\n", 2, 3, "not closed"),
        (
            "(define (domain d)\n  (:predicate (p)))",
            2,
            4,
            "unknown section ':predicate'; did you mean ':predicates'?",
        ),
        ("(define (domain d)\n  (:types a - ))", 2, 13, "a type name must follow '-'"),
        ("(define (domain d)\n  (:types - a))", 2, 11, "'-' must follow at least one name"),
        ("(define (problem d) (:domain x))", 1, 9, "this looks like a problem, use parse_problem"),
        ("(domain d)", 1, 1, "expected '(define (domain <name>) ...)'"),
        ("(define (domain d) (:action a :parameters (?x) :pre (p ?x)))", 1, 48, "unexpected ':pre'"),
        (
            "(define (domain d) (:predicates (p ?x)) (:action a :effect (not (and (p ?x)))))",
            1,
            60,
            "only an atom",
        ),
        (
            "(define (domain d) (:predicates (p)) (:action a :precondition (not (p) (p))))",
            1,
            63,
            "'not' takes 1 argument",
        ),
        (
            "(define (domain d) (:predicates (p)) (:action a :precondition (when (p) (p))))",
            1,
            64,
            "'when' is a conditional effect",
        ),
        (
            "(define (domain d) (:predicates (p ?x)) (:action a :parameters (x)))",
            1,
            65,
            "expected a variable",
        ),
        ("(define (domain d) (:requirements :strips) (:requirements :typing))", 1, 44, "appears twice"),
    ],
)
def test_domain_syntax_errors(text, line, column, words):
    with pytest.raises(PDDLParseError) as info:
        parse_domain(text)
    assert words in str(info.value)
    assert (info.value.line, info.value.column) == (line, column), str(info.value)


def test_problem_syntax_errors(household):
    with pytest.raises(PDDLParseError, match="no '\\(:goal ...\\)' section"):
        parse_problem("(define (problem p) (:domain household) (:objects) (:init))", household)
    with pytest.raises(PDDLParseError, match="negative literals are not allowed in :init"):
        parse_problem(SMALL_HH_PROBLEM.replace("(closed fridge1)", "(not (closed fridge1))"), household)
    with pytest.raises(PDDLParseError, match="exactly one formula"):
        parse_problem(SMALL_HH_PROBLEM.replace("(:goal (and", "(:goal (dirty mug1) (and"), household)
    with pytest.raises(PDDLParseError) as info:
        parse_problem(SMALL_HH_PROBLEM.replace("(hand-empty robot1)", "(hand-empty ?r)"), household)
    assert "variables are not allowed in :init" in str(info.value)
    assert info.value.line == 5


# --------------------------------------------------------------------------- semantic errors
@pytest.mark.parametrize(
    ("old", "new", "words"),
    [
        ("(on mug1 table1)", "(onn mug1 table1)", "unknown predicate 'onn' in :init; did you mean 'on'?"),
        (
            "(on mug1 table1)",
            "(on mug1)",
            "predicate 'on' takes 2 arguments (on ?i - item ?s - surface), but",
        ),
        (
            "(on mug1 table1)",
            "(on mug1 fridge1)",
            "fridge1 is a fridge, but parameter ?s of 'on' needs a surface in :init",
        ),
        (
            "(closed fridge1)",
            "(closed table1)",
            "table1 is a surface, but parameter ?c of 'closed' needs a container",
        ),
        (
            "(inside mug1 fridge1)",
            "(inside mugg1 fridge1)",
            "unknown object 'mugg1' in :goal; did you mean 'mug1'?",
        ),
        ("mug1 - dish", "mug1 - dsh", "'mug1' in :objects has unknown type 'dsh'; did you mean 'dish'?"),
        (
            "(:domain household)",
            "(:domain kitchen)",
            "is for domain 'kitchen', but the domain given is 'household'",
        ),
        (
            "(forall (?d - dish)",
            "(forall (?d - dishes)",
            "unknown type 'dishes' in the variables of 'forall' in :goal",
        ),
        (
            "(not (dirty ?d))",
            "(not (dirty ?x))",
            "undeclared variable ?x in :goal; the variables in scope are ?d",
        ),
        (
            "(not (dirty ?d))",
            "(not (made ?d))",
            "variable ?d is a dish, but parameter ?b of 'made' needs a bed in :goal",
        ),
        (
            "robot1 - robot",
            "robot1 - robot robot1 - person",
            "'robot1' is declared as a robot and as a person",
        ),
    ],
)
def test_problem_semantic_errors(household, old, new, words):
    assert old in SMALL_HH_PROBLEM
    with pytest.raises(PDDLSemanticError) as info:
        parse_problem(SMALL_HH_PROBLEM.replace(old, new, 1), household, source="p.pddl")
    assert words in str(info.value)
    assert str(info.value).startswith("p.pddl:")


def test_semantic_error_position(household):
    with pytest.raises(PDDLSemanticError) as info:
        parse_problem(SMALL_HH_PROBLEM.replace("(on mug1 table1)", "(onn mug1 table1)"), household)
    assert str(info.value).startswith("<string>:5:37: unknown predicate 'onn'")


DOMAIN_TEMPLATE = """(define (domain d) (:requirements :adl)
  (:types item room - object dish - item) (:constants home - room)
  (:predicates (at ?i - item ?r - room) (clean ?d - dish))
  (:action act :parameters (?i - item ?r - room)
    :precondition {pre}
    :effect {eff}))"""


@pytest.mark.parametrize(
    ("pre", "eff", "words"),
    [
        (
            "(att ?i ?r)",
            "(and)",
            "unknown predicate 'att' in the precondition of action 'act'; did you mean 'at'?",
        ),
        ("(at ?i)", "(and)", "predicate 'at' takes 2 arguments"),
        ("(at ?i ?x)", "(and)", "undeclared variable ?x in the precondition of action 'act'"),
        (
            "(at ?i hom)",
            "(and)",
            "unknown constant 'hom' in the precondition of action 'act'; did you mean 'home'?",
        ),
        ("(at ?r ?r)", "(and)", "variable ?r is a room, but parameter ?i of 'at' needs an item"),
        (
            "(at ?i home)",
            "(clean home)",
            "home is a room, but parameter ?d of 'clean' needs a dish in the effect",
        ),
        ("(and)", "(not (att ?i ?r))", "unknown predicate 'att' in the effect of action 'act'"),
        ("(and)", "(forall (?x - dish) (clean ?y))", "undeclared variable ?y in the effect of action 'act'"),
        ("(and)", "(forall (?x - plate) (clean ?x))", "unknown type 'plate'"),
    ],
)
def test_domain_semantic_errors(pre, eff, words):
    with pytest.raises(PDDLSemanticError) as info:
        parse_domain(DOMAIN_TEMPLATE.format(pre=pre, eff=eff))
    assert words in str(info.value)


def test_supertype_variable_is_accepted_where_it_may_match():
    # ?i is an item; clean needs a dish (a subtype): the atom may hold, so this is not an error
    domain = parse_domain(DOMAIN_TEMPLATE.format(pre="(not (clean ?i))", eff="(clean ?i)"))
    assert domain.actions["act"].effects == (AddEffect(AtomF("clean", ("?i",))),)


@pytest.mark.parametrize(
    ("text", "words"),
    [
        (
            "(define (domain d) (:predicates (p ?x)) (:action a :parameters (?x ?x)))",
            "variable ?x is declared twice",
        ),
        ("(define (domain d) (:predicates (p) (p)))", "predicate 'p' is declared twice"),
        ("(define (domain d) (:action a) (:action a))", "action 'a' is defined twice"),
        ("(define (domain d) (:types a - b b - a))", "the types form a cycle"),
        ("(define (domain d) (:types a - b b - c c - a))", "the types form a cycle"),
        (
            "(define (domain d) (:requirements :negative-precondition))",
            "did you mean ':negative-preconditions'?",
        ),
        ("(define (domain d) (:types t) (:predicates (p ?x - tt)))", "unknown type 'tt'"),
    ],
)
def test_more_domain_errors(text, words):
    with pytest.raises((PDDLSemanticError, PDDLParseError)) as info:
        parse_domain(text)
    assert words in str(info.value)


# --------------------------------------------------------------------------- unsupported features
@pytest.mark.parametrize(
    ("text", "words"),
    [
        ("(define (domain d) (:types a b - (either c e)))", "'(either ...)' is supported in parameters"),
        (
            "(define (domain d) (:functions (fuel) - number) (:action a :effect (decrease (fuel) 1)))",
            "numeric fluents are not supported",
        ),
        (
            "(define (domain d) (:predicates (p)) (:action a :effect (increase (fuel) 1)))",
            "numeric fluents are not supported",
        ),
        (
            "(define (domain d) (:predicates (p)) (:action a :precondition (> (fuel) 1)))",
            "numeric fluents are not supported",
        ),
        (
            "(define (domain d) (:predicates (p)) (:constraints (p)))",
            "trajectory constraints (:constraints) are not supported",
        ),
        ("(define (domain d) (:durative-action a))", "durative actions"),
    ],
)
def test_unsupported_features_say_so(text, words):
    with pytest.raises(UnsupportedFeatureError) as info:
        parse_domain(text)
    assert words in str(info.value)
    assert isinstance(info.value, PDDLSemanticError)


def test_numeric_init_is_unsupported(household):
    with pytest.raises(UnsupportedFeatureError, match="numeric fluents"):
        parse_problem(SMALL_HH_PROBLEM.replace("(closed fridge1)", "(= (battery robot1) 3)"), household)
