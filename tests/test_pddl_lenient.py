"""Domains that are ill-typed as written, read as Fast Downward reads them (`parse_domain(..., strict=False)`),
and deep type hierarchies. The domains here are written for these tests in the shape of Context Matters'
office domains: an effect that passes an item where a box is wanted, and a derived predicate whose body
quantifies over `object`."""

from __future__ import annotations

import pytest

from servicerobot.errors import PDDLParseError, PDDLSemanticError
from servicerobot.pddl import (
    Atom,
    Interpreter,
    PDDLTypeError,
    parse_domain,
    parse_problem,
    validate_plan,
    write_domain,
)
from servicerobot.pddl.grounding import Universe, compile_effects

# line 11 passes the item ?i to (vacant ?b - box); line 15 asks (vacant ?i) of an item too
SHELF = """(define (domain shelf-setup)
  (:requirements :strips :typing :negative-preconditions :equality :conditional-effects
                 :existential-preconditions)
  (:types place thing - object agent item box - thing)
  (:predicates (located ?t - thing ?p - place) (carrying ?a - agent ?i - item) (hands-free ?a - agent)
               (stored ?i - item ?b - box) (vacant ?b - box) (labelled ?i - item))
  (:action take_out
    :parameters (?a - agent ?i - item ?b - box ?p - place)
    :precondition (and (located ?a ?p) (located ?b ?p) (stored ?i ?b) (hands-free ?a))
    :effect (and (not (stored ?i ?b))
                 (when (not (exists (?y - item) (and (stored ?y ?b) (not (= ?y ?i))))) (vacant ?i))
                 (carrying ?a ?i) (not (hands-free ?a))))
  (:action label
    :parameters (?a - agent ?i - item)
    :precondition (and (carrying ?a ?i) (vacant ?i))
    :effect (labelled ?i))
  (:action walk
    :parameters (?a - agent ?from - place ?to - place)
    :precondition (and (located ?a ?from) (not (= ?from ?to)))
    :effect (and (not (located ?a ?from)) (located ?a ?to))))
"""

SHELF_PROBLEM = """(define (problem relabel) (:domain shelf-setup)
  (:objects hall study - place  r1 - agent  book_1 pen_1 - item  crate_1 crate_2 - box)
  (:init (located r1 study) (hands-free r1) (located crate_1 hall) (stored book_1 crate_1)
         (located crate_2 hall) (stored pen_1 crate_2) (stored book_1 crate_2))
  (:goal (and (labelled book_1) (located r1 study))))
"""


def _fast_downward():
    from servicerobot.planners import get_planner
    from servicerobot.planners.fast_downward import driver_path

    try:
        driver_path()
    except Exception as error:  # noqa: BLE001
        pytest.skip(str(error))
    return get_planner("fast-downward")


def _execute(domain, problem, plan):
    """Step through `plan` in the Interpreter (each step must be applicable); the last state."""
    interp = Interpreter.for_problem(domain, problem)
    state = problem.init
    for text in plan:
        assert interp.why_not(interp.parse_action(text), state) is None, text
        state = interp.step(text, state)
    assert interp.compile_goal(problem.goal).holds(state)
    return interp, state


def test_strict_refuses_an_ill_typed_argument_with_its_position():
    with pytest.raises(PDDLTypeError) as caught:
        parse_domain(SHELF, source="shelf.pddl")
    message = str(caught.value)
    assert message.startswith("shelf.pddl:11:96: variable ?i is an item, but parameter ?b of 'vacant' needs a box "
                              "in the effect of action 'take_out'")
    assert "strict=False" in message


def test_lenient_reads_it_and_says_where():
    domain = parse_domain(SHELF, source="shelf.pddl", strict=False)
    assert len(domain.warnings) == 2
    effect, precondition = domain.warnings
    assert effect.startswith("shelf.pddl:11:96: ill-typed as written: variable ?i is an item, but parameter ?b "
                             "of 'vacant' needs a box in the effect of action 'take_out'")
    assert "Fast Downward reads it" in effect
    assert precondition.startswith("shelf.pddl:15:49: ill-typed as written:")
    assert "in the precondition of action 'label'" in precondition
    # only the argument-type check is relaxed
    for broken, error in [
        (SHELF.replace("(vacant ?i))\n", "(vacant ?i ?b))\n"), PDDLSemanticError),  # arity
        (SHELF.replace("(labelled ?i))", "(labeled ?i))"), PDDLSemanticError),  # unknown predicate
        (SHELF.replace("(labelled ?i))", "(labelled ?j))"), PDDLSemanticError),  # undeclared variable
        (SHELF.replace("(labelled ?i))", "(labelled ?i)"), PDDLParseError),  # unbalanced
    ]:
        with pytest.raises(error):
            parse_domain(broken, strict=False)
    # a well-typed domain read leniently has no warnings; the writer keeps what was read
    assert parse_domain(SHELF.replace("(vacant ?i)", "(labelled ?i)"), strict=False).warnings == ()
    again = parse_domain(write_domain(domain), strict=False)
    assert again.actions == domain.actions and len(again.warnings) == 2


def test_the_ill_typed_effect_fires_in_the_interpreter():
    domain = parse_domain(SHELF, strict=False)
    problem = parse_problem(SHELF_PROBLEM, domain)
    interp = Interpreter.for_problem(domain, problem)
    state = interp.step("walk r1 study hall", problem.init)
    # crate_1 holds only book_1: the `when` (with `exists` inside) fires and adds the ill-typed atom
    alone = interp.apply(interp.parse_action("(take_out r1 book_1 crate_1 hall)"), state)
    assert Atom("vacant", ("book_1",)) in alone and Atom("stored", ("book_1", "crate_1")) not in alone
    assert interp.why_not(interp.parse_action("label r1 book_1"), alone) is None
    assert "(label r1 book_1)" in map(str, interp.applicable_actions(alone))
    # crate_2 holds pen_1 too: the condition is false, nothing ill-typed is added
    shared = interp.apply(interp.parse_action("(take_out r1 book_1 crate_2 hall)"), state)
    assert Atom("vacant", ("book_1",)) not in shared
    assert "(vacant book_1) is false" in interp.why_not(interp.parse_action("label r1 book_1"), shared)
    # grounding directly, as a planner's successor function would
    universe = Universe(domain.types, problem.objects)
    binding = {"?a": "r1", "?i": "book_1", "?b": "crate_1", "?p": "hall"}
    (test, adds, _), = compile_effects(domain.actions["take_out"].effects, binding, universe).conditional
    assert adds == {Atom("vacant", ("book_1",))} and test(state)


def test_fast_downward_plans_an_ill_typed_domain_and_the_interpreter_executes_it():
    planner = _fast_downward()
    domain = parse_domain(SHELF, strict=False)
    result = planner.solve(domain, SHELF_PROBLEM)
    assert result.solved, result.message
    assert any(step.startswith("(take_out r1 book_1 crate_1") for step in result.plan), result.plan
    problem = parse_problem(SHELF_PROBLEM, domain)
    _, state = _execute(domain, problem, result.plan)
    assert Atom("labelled", ("book_1",)) in state
    assert validate_plan(domain, problem, result.plan).valid


# the derived predicate quantifies over `object` though `inside` wants a gadget: it may hold for the gadgets,
# so even strict reading accepts it (a variable of a supertype overlaps the parameter's type)
OFFICE = """(define (domain office-push)
  (:requirements :strips :typing :derived-predicates)
  (:types zone movable - object bot gadget crate - movable)
  (:predicates (at ?m - movable ?z - zone) (inside ?g - gadget ?c - crate) (holding ?b - bot ?g - gadget)
               (free ?b - bot) (adjacent ?x - zone ?y - zone) DECLARED)
  (:derived (clear ?c - crate) (forall (?x - object) (not (inside ?x ?c))))
  (:action unload
    :parameters (?b - bot ?g - gadget ?c - crate ?z - zone)
    :precondition (and (at ?b ?z) (at ?c ?z) (inside ?g ?c) (free ?b))
    :effect (and (not (inside ?g ?c)) (holding ?b ?g) (not (free ?b))))
  (:action drop
    :parameters (?b - bot ?g - gadget ?z - zone)
    :precondition (and (at ?b ?z) (holding ?b ?g))
    :effect (and (not (holding ?b ?g)) (free ?b) (at ?g ?z)))
  (:action push
    :parameters (?b - bot ?c - crate ?from - zone ?to - zone)
    :precondition (and (at ?b ?from) (at ?c ?from) (adjacent ?from ?to) (clear ?c))
    :effect (and (not (at ?b ?from)) (at ?b ?to) (not (at ?c ?from)) (at ?c ?to))))
"""

OFFICE_PROBLEM = """(define (problem move-crate) (:domain office-push)
  (:objects lobby office - zone  b1 - bot  lamp_1 stapler_1 - gadget  crate_1 - crate)
  (:init (at b1 lobby) (free b1) (at crate_1 lobby) (inside lamp_1 crate_1) (inside stapler_1 crate_1)
         (adjacent lobby office) (adjacent office lobby))
  (:goal (at crate_1 office)))
"""


@pytest.mark.parametrize("declared", ["(clear ?c - crate)", ""])
@pytest.mark.parametrize("strict", [True, False])
def test_a_derived_predicate_over_object_plans_and_executes(declared, strict):
    domain = parse_domain(OFFICE.replace("DECLARED", declared), strict=strict)
    assert domain.warnings == () and "clear" in domain.derived and domain.predicates["clear"].arity == 1
    problem = parse_problem(OFFICE_PROBLEM, domain)
    interp = Interpreter.for_problem(domain, problem)
    assert "(clear crate_1) is false" in interp.why_not(interp.parse_action("push b1 crate_1 lobby office"),
                                                       problem.init)
    planner = _fast_downward()
    result = planner.solve(domain, OFFICE_PROBLEM)
    assert result.solved, result.message
    assert result.plan[-1] == "(push b1 crate_1 lobby office)"
    _, state = _execute(domain, problem, result.plan)
    assert Atom("at", ("crate_1", "office")) in state


def test_an_ill_typed_derived_rule_is_a_warning_when_lenient():
    disjoint = OFFICE.replace("DECLARED", "").replace("(?x - object)", "(?x - zone)")
    with pytest.raises(PDDLTypeError, match=r":6:65: variable \?x is a zone, but parameter \?g of 'inside' "
                                            r"needs a gadget in derived predicate 'clear'"):
        parse_domain(disjoint)
    domain = parse_domain(disjoint, source="office.pddl", strict=False)
    assert len(domain.warnings) == 1 and domain.warnings[0].startswith("office.pddl:6:65: ill-typed as written")
    assert "in derived predicate 'clear'" in domain.warnings[0]
    problem = parse_problem(OFFICE_PROBLEM, domain)
    interp = Interpreter.for_problem(domain, problem)
    # no zone is ever inside a crate: the crate counts as clear at once
    assert interp.why_not(interp.parse_action("push b1 crate_1 lobby office"), problem.init) is None


def _chain(n: int) -> str:
    types = " ".join(["t1 - object", *(f"t{i} - t{i - 1}" for i in range(2, n + 1))])
    return (f"(define (domain chain) (:requirements :typing) (:types {types})"
            f" (:predicates (p ?x - t1) (q ?x - t{n}))"
            f" (:action a :parameters (?x - t{n} ?y - t1) :precondition (and (p ?x) (q ?y)) :effect (p ?y)))")


def test_a_deep_type_chain_parses_without_recursion():
    n = 20_000
    domain = parse_domain(_chain(n))
    types = domain.types
    deepest = f"t{n}"
    assert types.is_subtype(deepest, "object") and types.is_subtype(deepest, "t1")
    assert types.is_subtype(deepest, f"t{n // 2}") and not types.is_subtype(f"t{n // 2}", deepest)
    assert not types.is_subtype("t1", "t2") and types.is_subtype("t2", "t2")
    ancestors = types.ancestors(deepest)
    assert len(ancestors) == n and ancestors[0] == f"t{n - 1}" and ancestors[-1] == "object"
    assert len(types.descendants("t1")) == n - 1
    assert domain.objects_of_type({"a": deepest, "b": "t3", "c": "object"}, "t3") == ("a", "b")


def test_a_deep_type_cycle_is_refused():
    n = 5_000
    text = _chain(n).replace("t1 - object", f"t1 - t{n}")
    with pytest.raises(PDDLSemanticError, match="the types form a cycle"):
        parse_domain(text)
