"""Tests for the interpreter: grounding errors, preconditions, effects, why_not, goals, enumeration."""

from __future__ import annotations

from pathlib import Path

import pytest

from servicerobot.errors import ActionError, PDDLParseError, PDDLSemanticError
from servicerobot.pddl import Atom, GroundAction, Interpreter, load_domain, parse_domain, parse_problem

HOUSEHOLD = Path(__file__).resolve().parents[1] / "servicerobot" / "scenes" / "household.pddl"

LAB = parse_domain(
    """
(define (domain lab)
  (:requirements :adl)
  (:types thing room - object  lamp - thing)
  (:constants hub - room)
  (:predicates (at ?t - thing ?r - room) (on ?l - lamp) (broken ?t - thing) (marked ?r - room) (safe)
               (flag ?t - thing))
  (:action switch
    :parameters (?l - lamp ?r - room)
    :precondition (and (at ?l ?r) (or (not (on ?l)) (broken ?l)))
    :effect (on ?l))
  (:action mark
    :parameters (?r - room)
    :precondition (exists (?l - lamp) (and (at ?l ?r) (on ?l)))
    :effect (marked ?r))
  (:action certify
    :parameters ()
    :precondition (forall (?l - lamp) (imply (on ?l) (not (broken ?l))))
    :effect (safe))
  (:action blackout
    :parameters (?r - room)
    :precondition (not (= ?r hub))
    :effect (forall (?l - lamp) (when (at ?l ?r) (and (not (on ?l)) (flag ?l)))))
  (:action toggle-flag
    :parameters (?t - thing)
    :precondition (and)
    :effect (and (not (flag ?t)) (flag ?t)))
  (:action unbreak
    :parameters (?t - thing)
    :precondition (not (broken ?t))
    :effect (not (broken ?t))))
"""
)

OBJECTS = {"l1": "lamp", "l2": "lamp", "l3": "lamp", "box": "thing", "lab1": "room", "lab2": "room"}


def atoms(*texts: str) -> frozenset[Atom]:
    return frozenset(Atom.parse(t) for t in texts)


@pytest.fixture
def lab():
    return Interpreter(LAB, OBJECTS)


@pytest.fixture
def state():
    return atoms("(at l1 lab1)", "(at l2 lab1)", "(at l3 lab2)", "(on l2)", "(broken l2)", "(at box hub)")


# --------------------------------------------------------------------------- grounding
def test_ground_is_cached_and_case_insensitive(lab):
    ga = lab.ground("switch", ["l1", "lab1"])
    assert ga is lab.ground("switch", ("l1", "lab1"))
    assert ga is lab.ground("SWITCH", ["L1", " lab1 "])
    assert ga == GroundAction("switch", ("l1", "lab1"))
    assert str(ga) == "(switch l1 lab1)"
    assert str(lab.ground("certify", [])) == "(certify)"
    assert hash(ga) == hash(GroundAction("switch", ("l1", "lab1")))
    assert "hub" in lab.objects  # domain constants join the objects


@pytest.mark.parametrize(
    ("name", "args", "words"),
    [
        (
            "swich",
            ["l1", "lab1"],
            "unknown action 'swich'; did you mean 'switch'?; the actions are switch, mark,",
        ),
        ("switch", ["l1"], "switch takes 2 arguments (switch ?l - lamp ?r - room), but (switch l1) has 1"),
        ("switch", ["l9", "lab1"], "unknown object 'l9' in (switch l9 lab1); did you mean 'l"),
        ("switch", ["box", "lab1"], "box is a thing, but parameter ?l of switch needs a lamp"),
        ("switch", ["lab1", "l1"], "lab1 is a room, but parameter ?l of switch needs a lamp"),
        ("switch", "l1 lab1", "must be a sequence of object names"),
        ("switch", [1, 2], "must be object names (strings)"),
        (None, [], "an action name must be a string"),
    ],
)
def test_ground_errors(lab, name, args, words):
    with pytest.raises(ActionError) as info:
        lab.ground(name, args)
    assert words in str(info.value)


def test_parse_action_forms(lab):
    expected = lab.ground("switch", ["l1", "lab1"])
    for text in ["(switch l1 lab1)", "switch l1 lab1", "  ( SWITCH   L1\tlab1 )\n", "(switch l1 lab1)"]:
        assert lab.parse_action(text) is expected


@pytest.mark.parametrize(
    ("text", "words"),
    [
        ("", "empty action"),
        ("   ", "empty action"),
        ("()", "empty action"),
        ("(switch l1 lab1", "never closed"),
        ("switch l1 lab1)", "without nested or unbalanced parentheses"),
        ("(switch (l1) lab1)", "without nested or unbalanced parentheses"),
        ("(switch l1 lab1) (mark lab1)", "without nested or unbalanced parentheses"),
        (42, "got int"),
        (None, "got NoneType"),
        ("(fly l1)", "unknown action 'fly'"),
    ],
)
def test_parse_action_garbage(lab, text, words):
    with pytest.raises(ActionError) as info:
        lab.parse_action(text)
    assert words in str(info.value)
    assert "expected one action like" in str(info.value) or "unknown action" in str(info.value)


# --------------------------------------------------------------------------- preconditions
def test_negative_and_disjunctive_preconditions(lab, state):
    assert lab.applicable(lab.parse_action("(switch l1 lab1)"), state)  # not on
    assert lab.applicable(lab.parse_action("(switch l2 lab1)"), state)  # on, but broken
    state2 = state - atoms("(broken l2)")
    assert not lab.applicable(lab.parse_action("(switch l2 lab1)"), state2)
    assert lab.why_not(lab.parse_action("(switch l2 lab1)"), state2) == (
        "precondition (or (not (on l2)) (broken l2)) is false: none of its 2 alternatives holds"
    )
    assert lab.why_not(lab.parse_action("(switch l1 lab2)"), state) == "precondition (at l1 lab2) is false"


def test_exists_precondition(lab, state):
    mark1, mark2 = lab.parse_action("(mark lab1)"), lab.parse_action("(mark lab2)")
    assert lab.applicable(mark1, state)
    assert not lab.applicable(mark2, state)
    assert lab.why_not(mark2, state) == (
        "precondition (exists (?l - lamp) (and (at ?l lab2) (on ?l))) is false: no lamp satisfies it"
    )
    empty = Interpreter(LAB, {"lab1": "room"})
    assert empty.why_not(empty.parse_action("(mark lab1)"), frozenset()).endswith(": there is no lamp")


def test_forall_imply_precondition(lab, state):
    certify = lab.parse_action("(certify)")
    assert not lab.applicable(certify, state)  # l2 is on and broken
    assert lab.why_not(certify, state) == (
        "precondition (forall (?l - lamp) (imply (on ?l) (not (broken ?l)))) is false for ?l = l2"
    )
    assert lab.applicable(certify, state - atoms("(on l2)"))
    assert lab.applicable(certify, frozenset())


def test_equality_and_negated_atom_messages(lab, state):
    assert not lab.applicable(lab.parse_action("(blackout hub)"), state)
    assert lab.why_not(lab.parse_action("(blackout hub)"), state) == "precondition (not (= hub hub)) is false"
    assert lab.why_not(lab.parse_action("(unbreak l2)"), state) == (
        "precondition (not (broken l2)) is false: (broken l2) is true"
    )
    assert lab.why_not(lab.parse_action("(unbreak l1)"), state) is None


def test_step_raises_with_the_reason(lab, state):
    with pytest.raises(
        ActionError, match=r"cannot apply \(switch l1 lab2\): precondition \(at l1 lab2\) is false"
    ):
        lab.step(lab.parse_action("(switch l1 lab2)"), state)
    assert atoms("(on l1)") <= lab.step("(switch l1 lab1)", state)


# --------------------------------------------------------------------------- effects
def test_forall_when_effects(lab, state):
    state = state | atoms("(on l1)", "(on l3)")
    blackout = lab.parse_action("(blackout lab1)")
    adds, dels = lab.delta(blackout, state)
    assert adds == atoms("(flag l1)", "(flag l2)")
    assert dels == atoms("(on l1)", "(on l2)")
    after = lab.apply(blackout, state)
    assert atoms("(on l3)", "(flag l1)", "(flag l2)") <= after
    assert not atoms("(on l1)", "(on l2)", "(flag l3)") & after
    assert lab.delta(blackout, frozenset()) == (frozenset(), frozenset())


def test_delete_then_add(lab, state):
    toggle = lab.parse_action("(toggle-flag box)")
    assert lab.delta(toggle, state) == (atoms("(flag box)"), frozenset())
    assert Atom("flag", ("box",)) in lab.apply(toggle, state)
    assert Atom("flag", ("box",)) in lab.apply(toggle, state | atoms("(flag box)"))


def test_apply_returns_a_frozenset_and_leaves_the_input_alone(lab, state):
    before = frozenset(state)
    after = lab.apply(lab.parse_action("(switch l1 lab1)"), set(state))
    assert type(after) is frozenset
    assert state == before
    assert after - state == atoms("(on l1)")


def test_household_run_washer_and_put_in():
    domain = load_domain(HOUSEHOLD)
    interp = Interpreter(
        domain,
        {
            "k": "room",
            "r": "robot",
            "w": "washer",
            "s1": "clothing",
            "s2": "clothing",
            "f": "fridge",
            "a": "food",
        },
    )
    state = atoms(
        "(in-room r k)",
        "(in-room w k)",
        "(closed w)",
        "(inside s1 w)",
        "(dirty s1)",
        "(dirty s2)",
        "(in-room f k)",
        "(chills f)",
        "(holding r a)",
    )
    run = interp.parse_action("(run-washer r w k)")
    assert interp.applicable(run, state)
    after = interp.apply(run, state)
    assert Atom("wet", ("s1",)) in after and Atom("dirty", ("s1",)) not in after
    assert Atom("dirty", ("s2",)) in after and Atom("wet", ("s2",)) not in after
    assert "exists (?c - clothing) (inside ?c w)" in interp.why_not(run, state - atoms("(inside s1 w)"))
    put_in = interp.parse_action("(put-in r a f k)")
    assert interp.why_not(put_in, state) is None
    assert Atom("cold", ("a",)) in interp.step(put_in, state)


# --------------------------------------------------------------------------- goals
def test_goal_conjunction_text_and_caching(lab, state):
    goal = lab.compile_goal("(:goal (and (at l1 lab1) (not (on l1)) (on l2)))")
    assert goal.holds(state)
    assert goal is lab.compile_goal("(:goal (and (at l1 lab1) (not (on l1)) (on l2)))")
    assert goal.atoms == atoms("(at l1 lab1)", "(on l2)")
    assert goal.negative_atoms == atoms("(on l1)")
    assert goal.unsatisfied(state) == []
    assert goal.unsatisfied(state | atoms("(on l1)")) == ["(not (on l1))"]


def test_goal_forall_imply_exists(lab, state):
    goal = lab.compile_goal(
        "(and (forall (?l - lamp) (imply (at ?l lab1) (on ?l))) (exists (?r - room) (marked ?r))"
        " (or (safe) (on l3)))"
    )
    assert not goal.holds(state)
    assert goal.unsatisfied(state) == ["(on l1)", "(exists (?r - room) (marked ?r))", "(or (safe) (on l3))"]
    done = state | atoms("(on l1)", "(marked hub)", "(safe)")
    assert goal.holds(done) and goal.unsatisfied(done) == []
    assert Atom("marked", ("hub",)) in goal.atoms  # quantifiers expand over constants too


def test_goal_from_formula_objects(lab, state):
    problem = parse_problem(
        "(define (problem p) (:domain lab) (:objects l1 - lamp lab1 - room) (:init) "
        "(:goal (forall (?l - lamp) (not (on ?l)))))",
        LAB,
    )
    goal = lab.compile_goal(problem.goal)
    assert goal is lab.compile_goal(problem.goal)
    assert goal.unsatisfied(state) == ["(not (on l2))"]


@pytest.mark.parametrize(
    ("text", "error", "words"),
    [
        ("(on l9)", PDDLSemanticError, "unknown object 'l9' in the goal; did you mean 'l"),
        ("(onn l1)", PDDLSemanticError, "unknown predicate 'onn' in the goal; did you mean 'on'?"),
        ("(on lab1)", PDDLSemanticError, "lab1 is a room, but parameter ?l of 'on' needs a lamp"),
        ("(and (on l1)", PDDLParseError, "not closed"),
    ],
)
def test_goal_errors(lab, text, error, words):
    with pytest.raises(error) as info:
        lab.compile_goal(text)
    assert words in str(info.value)


# --------------------------------------------------------------------------- enumeration
def test_applicable_actions_matches_brute_force(lab, state):
    found = list(lab.applicable_actions(state))
    brute = []
    for action in LAB.actions.values():
        from itertools import product

        for args in product(*(lab.universe.of_type(t) for _, t in action.params)):
            ga = lab.ground(action.name, args)
            if lab.applicable(ga, state):
                brute.append(ga)
    assert sorted(map(str, found)) == sorted(map(str, brute))
    assert len(found) == len(set(found))
    assert list(lab.applicable_actions(state)) == found  # deterministic order


def test_for_problem_checks_domain_name():
    problem = parse_problem("(define (problem p) (:domain other) (:objects l1 - lamp) (:init) (:goal (and)))")
    with pytest.raises(PDDLSemanticError, match="is for domain 'other'"):
        Interpreter.for_problem(LAB, problem)
    with pytest.raises(PDDLSemanticError, match="unknown type 'lmp'; did you mean 'lamp'"):
        Interpreter(LAB, {"x": "lmp"})
    with pytest.raises(PDDLSemanticError, match="constant 'hub'"):
        Interpreter(LAB, {"hub": "thing"})


def test_pickling_rebuilds_the_interpreter_and_goals(lab, state):
    import pickle

    ga = lab.parse_action("(mark lab1)")
    copy = pickle.loads(pickle.dumps(lab))
    assert copy.applicable(pickle.loads(pickle.dumps(ga)), state)
    goal = pickle.loads(pickle.dumps(lab.compile_goal("(forall (?l - lamp) (on ?l))")))
    assert goal.unsatisfied(state) == ["(on l1)", "(on l3)"]
    assert pickle.loads(pickle.dumps(LAB)) == LAB
