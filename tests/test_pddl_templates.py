"""The interpreter's fast paths agree with its general one: action templates vs grounding each formula,
the one-test form of quantified implications vs a closure per object, and interpreters shared by universe."""

from __future__ import annotations

import itertools
import random
from pathlib import Path

import pytest

from servicerobot.errors import ActionError
from servicerobot.pddl import Atom, Interpreter, load_domain, parse_problem
from servicerobot.pddl.grounding import compile_effects, compile_test, ground_formula
from servicerobot.pddl.interpreter import _SHARED
from servicerobot.pddl.templates import action_template

ROOT = Path(__file__).resolve().parent
HOUSEHOLD = load_domain(ROOT.parent / "servicerobot" / "scenes" / "household.pddl")
CORPUS = sorted((ROOT / "pddl_corpus").glob("*-domain.pddl"))

EQUALITY_DOMAIN = """
(define (domain eq) (:requirements :strips :typing :equality :conditional-effects)
  (:types thing)
  (:constants home - thing)
  (:predicates (at ?x - thing ?y - thing) (marked ?x - thing) (seen ?x - thing))
  (:action hop :parameters (?a - thing ?b - thing)
    :precondition (and (at ?a home) (not (= ?a ?b)) (not (marked ?b)))
    :effect (and (not (at ?a home)) (at ?a ?b) (marked ?b)
                 (when (seen ?a) (and (seen ?b) (not (seen ?a))))
                 (when (= ?a home) (marked ?a))))
  (:action same :parameters (?a - thing ?b - thing)
    :precondition (= ?a ?b)
    :effect (and (seen ?a) (not (seen ?a)))))
"""


def _domains():
    from servicerobot.pddl import parse_domain

    yield "household", HOUSEHOLD, None
    yield "equality", parse_domain(EQUALITY_DOMAIN, source="eq.pddl"), {"a": "thing", "b": "thing", "c": "thing"}
    for path in CORPUS:
        problem_path = path.with_name(path.name.replace("-domain", "-problem"))
        domain = load_domain(path)
        yield path.stem, domain, parse_problem(problem_path.read_text(), domain).objects


def _household_objects() -> dict[str, str]:
    return {"kitchen": "room", "hall": "room", "robot1": "robot", "ana": "person", "table1": "surface",
            "fridge1": "fridge", "sink1": "sink", "washer1": "washer", "dryer1": "dryer", "bin1": "trashcan",
            "bed1": "bed", "lamp1": "light", "cab1": "openable", "mug1": "dish", "mug2": "dish",
            "shirt1": "clothing", "apple1": "food"}


def _random_states(interp: Interpreter, rng: random.Random, n: int) -> list[frozenset[Atom]]:
    """Random sets of well-typed atoms over the interpreter's objects (not necessarily reachable)."""
    universe = interp.universe
    atoms = []
    for pred in interp.domain.predicates.values():
        if pred.name in interp.domain.functions:
            continue
        pools = [universe.of_type(t) for _, t in pred.params]
        atoms += [Atom(pred.name, args) for args in itertools.product(*pools)]
    return [frozenset(a for a in atoms if rng.random() < p) for p in (0.1, 0.3, 0.5, 0.8) for _ in range(n)]


@pytest.mark.parametrize("name,domain,objects", list(_domains()), ids=lambda v: v if isinstance(v, str) else "")
def test_templates_match_the_general_grounding(name, domain, objects):
    objects = objects if objects is not None else _household_objects()
    interp = Interpreter(domain, objects)
    rng = random.Random(0)
    states = _random_states(interp, rng, 5)
    templated = 0
    for action in domain.actions.values():
        template = action_template(action, domain.constants)
        if template is None:
            continue
        templated += 1
        pools = [interp.universe.of_type(t) for _, t in action.params]
        combos = list(itertools.product(*pools))
        for args in rng.sample(combos, min(len(combos), 60)):
            binding = dict(zip((v for v, _ in action.params), args))
            general_pre = compile_test(ground_formula(action.precondition, binding, interp.universe))
            general_eff = compile_effects(action.effects, binding, interp.universe)
            pre, eff = template.instantiate(args, interp.universe)
            assert (eff.adds, eff.dels) == (general_eff.adds, general_eff.dels), (action.name, args)
            for state in states:
                assert pre(state) == general_pre(state), (action.name, args, sorted(state))
                fired = [(a, d) for t, a, d in eff.conditional if t(state)]
                general_fired = [(a, d) for t, a, d in general_eff.conditional if t(state)]
                assert (frozenset().union(*(a for a, _ in fired)), frozenset().union(*(d for _, d in fired))) == (
                    frozenset().union(*(a for a, _ in general_fired)),
                    frozenset().union(*(d for _, d in general_fired)))
    assert templated >= 1, f"no action of {name} has a template"


def test_household_templates_cover_every_action():
    plain = {n for n, a in HOUSEHOLD.actions.items() if action_template(a, HOUSEHOLD.constants) is None}
    assert plain == set()
    quantified = {n for n, a in HOUSEHOLD.actions.items() if action_template(a, HOUSEHOLD.constants).quantified}
    assert quantified == {"run-washer", "run-dryer"}  # forall effects and exists preconditions


@pytest.mark.parametrize("n_clothes", [0, 1, 3])
def test_quantified_templates_read_each_universe_objects(n_clothes):
    """run-washer's template grounds its exists and forall over the universe's clothes, as the general path
    does, and is not shared with a universe that has other clothes."""
    objects = {k: v for k, v in _household_objects().items() if v != "clothing"}
    objects |= {f"shirt{i}": "clothing" for i in range(n_clothes)}
    interp = Interpreter(HOUSEHOLD, objects)
    rng = random.Random(n_clothes)
    action = HOUSEHOLD.actions["run-washer"]
    args = ("robot1", "washer1", "kitchen")
    binding = dict(zip((v for v, _ in action.params), args))
    general_pre = compile_test(ground_formula(action.precondition, binding, interp.universe))
    general_eff = compile_effects(action.effects, binding, interp.universe)
    for state in _random_states(interp, rng, 10):
        assert interp.applicable(interp.ground("run-washer", args), state) == general_pre(state)
        changed = interp.delta(interp.ground("run-washer", args), state)
        fired = [(a, d) for t, a, d in general_eff.conditional if t(state)]
        adds = general_eff.adds.union(*(a for a, _ in fired))
        assert changed == (adds, general_eff.dels.union(*(d for _, d in fired)) - adds)
    other = Interpreter(HOUSEHOLD, {**objects, "shirt9": "clothing"})
    state = frozenset({Atom("inside", ("shirt9", "washer1")), Atom("dirty", ("shirt9",))})
    assert other.delta(other.ground("run-washer", args), state) == (
        frozenset({Atom("wet", ("shirt9",))}), frozenset({Atom("dirty", ("shirt9",))}))


def test_interpreter_with_templates_executes_like_the_general_path():
    objects = _household_objects()
    fast, slow = Interpreter(HOUSEHOLD, objects), Interpreter(HOUSEHOLD, objects)
    slow._templates = dict.fromkeys(slow._templates)  # forces ground_formula / compile_effects
    rng = random.Random(1)
    for state in _random_states(fast, rng, 3):
        for ga in list(slow.applicable_actions(state))[:40]:
            text = str(ga)
            assert fast.why_not(text, state) is None
            assert fast.apply(fast.parse_action(text), state) == slow.apply(ga, state)
            assert fast.delta(text, state) == slow.delta(ga, state)


@pytest.mark.parametrize("n", [2, 5, 40])
@pytest.mark.parametrize("either", [False, True])
def test_quantified_implications_match_a_direct_evaluation(n, either):
    objects = {f"d{i}": "dish" for i in range(n)} | {"sink1": "sink"}
    interp = Interpreter(HOUSEHOLD, objects)
    then = "(or (inside ?d sink1) (broken ?d))" if either else "(inside ?d sink1)"
    goal = interp.compile_goal(f"(and (forall (?d - dish) (imply (dirty ?d) {then})) (not (broken d0)))")
    rng = random.Random(n)
    dishes = [f"d{i}" for i in range(n)]
    for _ in range(300):
        state = frozenset(Atom(p, (d, *rest)) for d in dishes for p, rest, share in
                          (("dirty", (), 0.3), ("inside", ("sink1",), 0.6), ("broken", (), 0.1))
                          if rng.random() < share)
        expected = Atom("broken", ("d0",)) not in state and all(
            Atom("dirty", (d,)) not in state or Atom("inside", (d, "sink1")) in state
            or (either and Atom("broken", (d,)) in state) for d in dishes)
        assert goal.holds(state) == expected
        assert (goal.unsatisfied(state) == []) == expected


def test_shared_interpreters_are_reused_per_universe_and_bounded():
    _SHARED.clear()
    objects = _household_objects()
    first = Interpreter.shared(HOUSEHOLD, objects)
    assert Interpreter.shared(HOUSEHOLD, dict(objects)) is first
    other = Interpreter.shared(HOUSEHOLD, {**objects, "mug3": "dish"})
    assert other is not first and "mug3" in other.objects and "mug3" not in first.objects
    for i in range(8):
        Interpreter.shared(HOUSEHOLD, {**objects, f"extra{i}": "book"})
    assert len(_SHARED) == 8
    assert Interpreter.shared(HOUSEHOLD, objects) is not first  # evicted: the least recently used
    _SHARED.clear()


def test_parse_cache_keeps_errors_and_canonical_actions():
    interp = Interpreter(HOUSEHOLD, _household_objects())
    for _ in range(2):
        with pytest.raises(ActionError, match="unknown object"):
            interp.parse_action("(pick-up robot1 mug9 table1 kitchen)")
        with pytest.raises(ActionError):
            interp.parse_action(["not", "text"])
    a = interp.parse_action("(PICK-UP robot1 mug1 table1 kitchen)")
    b = interp.parse_action("pick-up robot1 mug1 table1 kitchen")
    assert a is b and str(a) == "(pick-up robot1 mug1 table1 kitchen)"


def test_templated_actions_are_shared_across_universes_but_still_type_checked():
    objects = _household_objects()
    a = Interpreter(HOUSEHOLD, objects)
    b = Interpreter(HOUSEHOLD, {**objects, "mug7": "dish"})
    text = "(pick-up robot1 mug1 table1 kitchen)"
    assert b._compiled[b.parse_action(text)] is a._compiled[a.parse_action(text)]
    state = frozenset({Atom("in-room", ("robot1", "kitchen")), Atom("in-room", ("table1", "kitchen")),
                       Atom("on", ("mug1", "table1")), Atom("hand-empty", ("robot1",))})
    assert a.why_not(text, state) is None and b.why_not(text, state) is None
    assert b.apply(b.parse_action(text), state) == a.apply(a.parse_action(text), state)
    other = Interpreter(HOUSEHOLD, {**objects, "kitchen": "dish"})  # the same name, another type
    with pytest.raises(ActionError, match="needs a room"):
        other.parse_action(text)


def test_a_step_by_text_equals_parse_then_transition_with_conditional_effects():
    from servicerobot.pddl import parse_domain

    domain = parse_domain(EQUALITY_DOMAIN, source="eq.pddl")
    interp = Interpreter(domain, {"a": "thing", "b": "thing", "c": "thing"})
    states = _random_states(interp, random.Random(1), 4)
    fired = 0
    for text in ("(hop a b)", "(hop home c)", "(same b b)", "(hop c a)"):
        ga = interp.parse_action(text)
        for state in states:
            for _ in range(2):  # the second time from the cache by text
                got = interp.transition_text(text, set(state))
                assert got == (ga, str(ga), *interp.transition(ga, state)), (text, sorted(state))
            fired += got[2] is None and bool(got[3] - interp.delta(ga, frozenset())[0])
    assert fired  # some state made a conditional effect fire


def test_an_action_written_as_printed_steps_like_any_other_spelling():
    """`(move robot1 kitchen hall)` (as str(GroundAction) writes it) skips parse_action's general steps; other
    spellings and bad actions still go through them, with the same answers and errors."""
    objects = _household_objects()
    state = {Atom("in-room", ("robot1", "kitchen")), Atom("connected", ("kitchen", "hall"))}
    answers = []
    for text in ("(move robot1 kitchen hall)", "( MOVE robot1  Kitchen hall )", "move robot1 kitchen hall"):
        ga, shown, reason, adds, dels = Interpreter(HOUSEHOLD, objects).transition_text(text, state)
        answers.append((ga, shown, reason, adds, dels))
    assert answers[0] == answers[1] == answers[2]
    assert answers[0][3] == {Atom("in-room", ("robot1", "hall"))}
    for bad, words in (("(move robot1 kitchen mug1)", "mug1 is a dish"), ("(move robot1 kitchen)", "wrong arity"),
                       ("(move robot1 kitchen attic)", "unknown object 'attic'")):
        with pytest.raises(ActionError, match=words):
            Interpreter(HOUSEHOLD, objects).transition_text(bad, state)
