"""PDDL that Fast Downward accepts, we accept: static action costs, derived predicates, a type under two
parents, a variable repeated in a predicate declaration. The corpus in tests/pddl_corpus/ (written for
these tests) is checked against VAL and solved by Fast Downward."""

from __future__ import annotations

import pickle
from pathlib import Path

import pytest

from servicerobot.errors import PDDLSemanticError
from servicerobot.pddl import (
    Atom,
    Interpreter,
    PDDLTypeError,
    UnsupportedFeatureError,
    load_domain,
    load_problem,
    parse_domain,
    parse_problem,
    validate_plan,
    write_domain,
    write_problem,
)
from servicerobot.pddl.equivalence import equivalent
from servicerobot.planners import BuiltinPlanner, FastDownward, PlanStatus

CORPUS = Path(__file__).parent / "pddl_corpus"


def load(name: str):
    domain = load_domain(CORPUS / f"{name}-domain.pddl")
    return domain, load_problem(CORPUS / f"{name}-problem.pddl", domain)


def texts(name: str) -> tuple[str, str]:
    return ((CORPUS / f"{name}-domain.pddl").read_text(), (CORPUS / f"{name}-problem.pddl").read_text())


# (corpus, plan, valid, cost): plans VAL judges the same way, with the same "Final value"
CASES = [
    ("roads", ["(honk van depot)", "(drive van depot farm)", "(drive van farm port)"], True, 8),
    ("roads", ["(drive van depot mill)", "(drive van mill depot)", "(drive van depot farm)",
               "(drive van farm port)"], True, 11),
    ("roads", ["(drive van depot mill)", "(drive van mill port)"], False, 11),  # depot never visited
    ("roads", ["(drive van depot port)"], False, 0),  # no road
    ("towers", ["(lift a b)", "(put-down a)", "(pick c)", "(drop c b)"], True, 4),
    ("towers", ["(pick b)"], False, 0),  # b is under a: not exposed, so not ready
    ("towers", ["(pick c)", "(drop c a)"], False, 2),  # c above a above b, but a is not exposed
    ("towers", ["(lift a b)", "(drop a a)"], False, 1),  # (= ?x ?y)
    ("zoo", ["(feed cat yard)", "(feed lion yard)", "(walk yard house)", "(bring-in cat house)",
             "(bring-in sofa house)"], True, 5),
    ("zoo", ["(walk yard house)", "(bring-in lion house)"], False, 1),  # a lion is not indoor
    ("zoo", ["(walk yard yard)"], False, 0),  # (near yard yard) is not given
]


@pytest.mark.parametrize(("name", "plan", "valid", "cost"), CASES)
def test_corpus_plans(name, plan, valid, cost):
    domain, problem = load(name)
    result = validate_plan(domain, problem, plan)
    assert (result.valid, result.cost) == (valid, cost), str(result)


def test_corpus_agrees_with_val():
    val = pytest.importorskip("servicerobot.pddl.val")
    try:
        val.validate_binary()
    except Exception as error:  # noqa: BLE001
        pytest.skip(str(error))
    for name, plan, valid, cost in CASES:
        domain, problem = load(name)
        for domain_text, problem_text in (texts(name), (write_domain(domain), write_problem(problem))):
            verdict = val.val_validate(domain_text, problem_text, plan)
            assert verdict.valid == valid, (name, plan, verdict.output[-800:])
            if valid:
                assert f"Final value: {cost} " in verdict.output, (name, plan)


@pytest.mark.parametrize("name", ["roads", "towers", "zoo"])
def test_fast_downward_solves_the_corpus_from_text_and_objects(name):
    from servicerobot.planners.fast_downward import driver_path

    try:
        driver_path()
    except Exception as error:  # noqa: BLE001
        pytest.skip(str(error))
    domain, problem = load(name)
    optimal = {"roads": 8, "towers": 4, "zoo": 5}[name]
    for inputs in (texts(name), (domain, problem)):
        result = FastDownward(search="astar(blind())").solve(*inputs)
        assert result.status is PlanStatus.SOLVED, result.message
        checked = validate_plan(domain, problem, result.plan)
        assert checked.valid and checked.cost == optimal, str(checked)


def test_builtin_planner_plans_with_costs_and_refuses_derived_predicates():
    domain, problem = load("roads")
    result = BuiltinPlanner().solve(domain, problem)
    assert result.status is PlanStatus.SOLVED and validate_plan(domain, problem, result.plan).valid
    domain, problem = load("towers")
    result = BuiltinPlanner().solve(domain, problem)
    assert result.status is PlanStatus.UNSUPPORTED and "FastDownward" in result.message


def test_round_trip_keeps_costs_derived_rules_and_parents():
    for name in ("roads", "towers", "zoo"):
        domain, problem = load(name)
        assert parse_domain(write_domain(domain)) == domain
        assert parse_problem(write_problem(problem), domain) == problem
    domain, problem = load("roads")
    assert problem.metric == "minimize (total-cost)" and domain.has_action_costs
    assert problem.values[Atom("road-length", ("farm", "port"))] == 3
    assert problem.values[Atom("total-cost", ())] == 0


def test_derived_predicates_in_the_interpreter():
    domain, problem = load("towers")
    interp = Interpreter.for_problem(domain, problem)
    full = interp.closure(problem.init)
    assert {Atom("above", ("a", "b")), Atom("exposed", ("a",)), Atom("ready", ("c",))} <= full
    assert Atom("exposed", ("b",)) not in full and not full & {Atom("above", ("b", "a"))}
    assert [str(ga) for ga in interp.applicable_actions(problem.init)] == ["(lift a b)", "(pick c)"]
    assert "(ready b)" in interp.why_not(interp.parse_action("(pick b)"), problem.init)
    state = problem.init
    for step in ("(pick c)", "(drop c a)"):
        state = interp.step(step, state)
    assert Atom("above", ("c", "b")) in interp.closure(state) and Atom("above", ("c", "b")) not in state
    goal = interp.compile_goal("(above c b)")
    assert goal.holds(state) and not goal.holds(problem.init)
    assert interp.compile_goal(problem.goal).unsatisfied(state) == ["(exposed a)"]
    copy = pickle.loads(pickle.dumps(interp))
    assert copy.closure(state) == interp.closure(state)


def test_a_type_under_two_parents_is_a_subtype_of_both():
    domain, _ = load("zoo")
    types = domain.types
    assert types.is_subtype("pet", "animal") and types.is_subtype("pet", "indoor")
    assert not types.is_subtype("animal", "indoor") and set(types.ancestors("pet")) == {"animal", "indoor", "object"}
    assert domain.predicates["near"].params == (("?x", "place"), ("?x", "place"))
    with pytest.raises(PDDLSemanticError, match="cycle"):
        parse_domain("(define (domain d) (:types a - b a - c c - a))")


DOMAIN = """(define (domain c) (:requirements :typing :action-costs) (:types t u)
  (:predicates (p ?x - t) (q ?x - t))
  (:functions (total-cost) - number (w ?x - t) - number)
  (:action a :parameters (?x - t) :precondition (q ?x) :effect (and (p ?x) (increase (total-cost) (w ?x)))))"""


@pytest.mark.parametrize(("text", "error", "words"), [
    (DOMAIN.replace("(increase (total-cost) (w ?x))", "(increase (total-cost) -2)"), PDDLSemanticError,
     "must not be negative"),
    (DOMAIN.replace("(and (p ?x) (increase (total-cost) (w ?x)))",
                    "(when (q ?x) (increase (total-cost) 1))"), UnsupportedFeatureError, "inside 'forall' or 'when'"),
    (DOMAIN.replace("(increase (total-cost) (w ?x))", "(increase (w ?x) 1)"), UnsupportedFeatureError,
     "numeric fluents are not supported"),
    (DOMAIN.replace("(w ?x))", "(fuel ?x))"), UnsupportedFeatureError, "not a static cost function"),
    (DOMAIN.replace("(w ?x - t) - number", "(w ?x - t) - object"), UnsupportedFeatureError,
     "only numeric functions"),
    (DOMAIN.replace("(w ?x))", "(w))"), PDDLSemanticError, "takes 1 argument"),
    ("(define (domain d) (:predicates (p) (q)) (:derived (q) (p)) (:action a :effect (q)))", PDDLSemanticError,
     "changes the derived predicate 'q'"),
    ("(define (domain d) (:predicates (p) (q)) (:derived (q) (not (q))))", PDDLSemanticError,
     "cannot be stratified"),
    ("(define (domain d) (:predicates (p ?x)) (:derived (p) (and)))", PDDLSemanticError, "has 0 parameter"),
])
def test_cost_and_derived_errors(text, error, words):
    with pytest.raises(error, match=words):
        parse_domain(text)


def test_problem_cost_errors_and_missing_values():
    domain = parse_domain(DOMAIN)
    problem = "(define (problem p) (:domain c) (:objects k - t z - u) (:init (q k) {}) (:goal (p k)) {})"
    with pytest.raises(UnsupportedFeatureError, match="only the metric 'minimize \\(total-cost\\)'"):
        parse_problem(problem.format("", "(:metric maximize (total-cost))"), domain)
    with pytest.raises(PDDLSemanticError, match="two values"):
        parse_problem(problem.format("(= (w k) 1) (= (w k) 2)", ""), domain)
    with pytest.raises(PDDLTypeError, match="z is an? u, but parameter \\?x of 'w' needs a t"):
        parse_problem(problem.format("(= (w z) 1)", ""), domain)
    with pytest.raises(PDDLSemanticError, match="derived predicate"):
        parse_problem("(define (problem p) (:domain towers) (:objects a - disc) (:init (exposed a)) (:goal (and)))",
                      load("towers")[0])
    missing = parse_problem(problem.format("", ""), domain)
    result = validate_plan(domain, missing, ["(a k)"])
    assert not result.valid and "the cost (w k) of (a k) has no value" in result.reason
    priced = parse_problem(problem.format("(= (w k) 2.5) (= (total-cost) 1)", ""), domain)
    assert validate_plan(domain, priced, ["(a k)"]).cost == 3.5


def test_equivalence_refuses_derived_predicates_clearly():
    domain, problem = load("towers")
    with pytest.raises(UnsupportedFeatureError, match="derived predicates"):
        equivalent(problem, problem, domain)


def test_lapkt_gets_a_cost_free_domain():
    from servicerobot.planners.lapkt import prepare_domain

    domain, problem = load("roads")
    prepared, _ = prepare_domain(domain, problem.objects)
    text = write_domain(prepared)
    assert "total-cost" not in text and "road-length" not in text and parse_domain(text).actions["drive"]
