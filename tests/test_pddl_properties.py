"""Property tests: the action reader never crashes, random executions keep states consistent, and compiled
goals agree with a direct recursive evaluation."""

from __future__ import annotations

import itertools
from pathlib import Path

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from servicerobot.errors import ActionError
from servicerobot.pddl import (
    And,
    Atom,
    AtomF,
    Exists,
    Forall,
    Imply,
    Interpreter,
    Not,
    Or,
    load_domain,
    parse_problem,
)

HOUSEHOLD = load_domain(Path(__file__).resolve().parents[1] / "servicerobot" / "scenes" / "household.pddl")

PROBLEM = parse_problem(
    """
(define (problem small-house) (:domain household)
  (:objects kitchen bedroom - room  robot1 - robot  alice - person  table1 - surface  shelf1 - shelf
            bed1 - bed  fridge1 - fridge  sink1 - sink  washer1 - washer  lamp1 - light  bin1 - trashcan
            mug1 - dish  apple1 - food  shirt1 - clothing  novel1 - book)
  (:init (in-room robot1 kitchen) (hand-empty robot1) (connected kitchen bedroom) (connected bedroom kitchen)
         (in-room alice bedroom) (in-room table1 kitchen) (in-room shelf1 bedroom) (in-room bed1 bedroom)
         (in-room fridge1 kitchen) (in-room sink1 kitchen) (in-room washer1 kitchen) (in-room lamp1 bedroom)
         (in-room bin1 kitchen) (closed fridge1) (chills fridge1) (closed washer1)
         (on mug1 table1) (dirty mug1) (on apple1 table1) (on shirt1 bed1) (dirty shirt1)
         (held-by novel1 alice))
  (:goal (and (made bed1) (forall (?i - item) (not (dirty ?i))))))
""",
    HOUSEHOLD,
)

INTERP = Interpreter.for_problem(HOUSEHOLD, PROBLEM)
ACTIONS = list(HOUSEHOLD.actions.values())
OBJECTS = list(INTERP.objects)
ITEMS = [o for o, t in INTERP.objects.items() if HOUSEHOLD.types.is_subtype(t, "item")]
WORDS = [a.name for a in ACTIONS] + OBJECTS + ["(", ")", " ", "\t", "\n", "?x", "-", "PICK-UP", ";", "()"]


@settings(max_examples=300, deadline=None)
@given(st.text(max_size=60))
def test_parse_action_on_arbitrary_text_raises_only_action_error(text):
    try:
        ga = INTERP.parse_action(text)
    except ActionError as error:
        assert str(error).isascii()
    else:
        assert ga.name in HOUSEHOLD.actions


@settings(max_examples=300, deadline=None)
@given(st.lists(st.sampled_from(WORDS), max_size=8).map(" ".join))
def test_parse_action_on_near_miss_text_raises_only_action_error(text):
    try:
        ga = INTERP.parse_action(text)
    except ActionError:
        return
    assert INTERP.parse_action(str(ga)) is ga


def _check_consistent(state: frozenset[Atom]) -> None:
    types = HOUSEHOLD.types
    for atom in state:
        predicate = HOUSEHOLD.predicates[atom.predicate]
        assert len(atom.args) == predicate.arity
        for arg, (_, typ) in zip(atom.args, predicate.params):
            assert types.is_subtype(INTERP.objects[arg], typ), atom
    rooms = [a for a in state if a.predicate == "in-room" and a.args[0] == "robot1"]
    assert len(rooms) == 1
    holding = [a for a in state if a.predicate == "holding"]
    assert len(holding) + (Atom("hand-empty", ("robot1",)) in state) == 1
    for item in ITEMS:
        places = [
            a for a in state if a.predicate in ("on", "inside", "holding", "held-by") and item in a.args
        ]
        assert len(places) <= 1, places


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    st.lists(
        st.tuples(st.integers(0, len(ACTIONS) - 1), st.lists(st.integers(0, 99), min_size=4, max_size=4)),
        max_size=40,
    )
)
def test_random_ground_actions_keep_the_state_consistent(steps):
    state = PROBLEM.init
    _check_consistent(state)
    for action_index, picks in steps:
        action = ACTIONS[action_index]
        args = [OBJECTS[p % len(OBJECTS)] for p in picks[: action.arity]]
        try:
            ga = INTERP.ground(action.name, args)
        except ActionError:
            continue  # a type mismatch: reported, never executed
        applicable = INTERP.applicable(ga, state)
        assert (INTERP.why_not(ga, state) is None) == applicable
        adds, dels = INTERP.delta(ga, state)
        assert INTERP.apply(ga, state) == (state - dels) | adds
        if applicable:
            state = INTERP.apply(ga, state)
            _check_consistent(state)


@settings(max_examples=30, deadline=None)
@given(st.integers(0, 10**6))
def test_random_walk_over_applicable_actions(seed):
    import random

    rng = random.Random(seed)
    state = PROBLEM.init
    for _ in range(15):
        options = list(INTERP.applicable_actions(state))
        assert options, "the robot can always move"
        state = INTERP.step(rng.choice(options), state)
        _check_consistent(state)


# --------------------------------------------------------------------------- goals vs a direct evaluation
LIGHTS = {"l1": "light", "l2": "light", "k": "room", "b": "room"}
LIGHT_INTERP = Interpreter(HOUSEHOLD, LIGHTS)
LIGHT_ATOMS = [Atom("light-on", (name,)) for name in ("l1", "l2")] + [
    Atom("in-room", (light, room)) for light in ("l1", "l2") for room in ("k", "b")
]


def _evaluate(f, binding, state) -> bool:
    if isinstance(f, AtomF):
        return Atom(f.predicate, tuple(binding.get(t, t) for t in f.terms)) in state
    if isinstance(f, Not):
        return not _evaluate(f.f, binding, state)
    if isinstance(f, And):
        return all(_evaluate(p, binding, state) for p in f.parts)
    if isinstance(f, Or):
        return any(_evaluate(p, binding, state) for p in f.parts)
    if isinstance(f, Imply):
        return not _evaluate(f.a, binding, state) or _evaluate(f.b, binding, state)
    values = [o for o, t in LIGHTS.items() if HOUSEHOLD.types.is_subtype(t, f.params[0][1])]
    results = (_evaluate(f.body, {**binding, f.params[0][0]: v}, state) for v in values)
    return any(results) if isinstance(f, Exists) else all(results)


def _formulas(variables: tuple[str, ...]):
    lights = list(variables) + ["l1", "l2"]
    leaves = st.one_of(
        st.builds(lambda x: AtomF("light-on", (x,)), st.sampled_from(lights)),
        st.builds(
            lambda x, r: AtomF("in-room", (x, r)), st.sampled_from(lights), st.sampled_from(["k", "b"])
        ),
    )

    def extend(children):
        return st.one_of(
            st.builds(Not, children),
            st.builds(lambda ps: And(tuple(ps)), st.lists(children, min_size=1, max_size=3)),
            st.builds(lambda ps: Or(tuple(ps)), st.lists(children, min_size=1, max_size=3)),
            st.builds(Imply, children, children),
        )

    return st.recursive(leaves, extend, max_leaves=6)


quantified = st.one_of(
    _formulas(()),
    st.builds(lambda body: Forall((("?v", "light"),), body), _formulas(("?v",))),
    st.builds(lambda body: Exists((("?v", "light"),), body), _formulas(("?v",))),
)


@settings(max_examples=150, deadline=None)
@given(quantified, st.sets(st.sampled_from(LIGHT_ATOMS)))
def test_compiled_goals_agree_with_direct_evaluation(formula, atoms):
    state = frozenset(atoms)
    goal = LIGHT_INTERP.compile_goal(formula)
    expected = _evaluate(formula, {}, state)
    assert goal.holds(state) == expected
    assert (goal.unsatisfied(state) == []) == expected


def test_goal_over_every_state_of_a_tiny_universe():
    goal = LIGHT_INTERP.compile_goal(
        "(forall (?l - light) (imply (light-on ?l) (exists (?r - room) (in-room ?l ?r))))"
    )
    formula = goal.formula
    for bits in itertools.product((0, 1), repeat=len(LIGHT_ATOMS)):
        state = frozenset(a for a, bit in zip(LIGHT_ATOMS, bits) if bit)
        assert goal.holds(state) == _evaluate(formula, {}, state)
