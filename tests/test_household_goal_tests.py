"""Goal tests read from the household state's indexes answer as the compiled goal does (issue 37).

`HouseholdWorld.goal_holds` tests a goal of ground literals and one-variable clauses through
`Interpreter.goal_form` and `envs.household.goal_tests`, without grounding it over the house; the answer must
be `Interpreter.compile_goal(goal).holds` on the true atoms, at every step of episodes with every task kind,
busy people and random actions. `Interpreter._written_templated` (a new action text compiled from its template) must
give what the parser's path gives.
"""

from __future__ import annotations

import gymnasium as gym
import numpy as np
import pytest

import servicerobot  # noqa: F401
from servicerobot.envs.household.goal_tests import clause_test
from servicerobot.envs.household.tasks import TASK_KINDS
from servicerobot.oracle import OracleAgent
from servicerobot.pddl import Interpreter
from servicerobot.pddl.goal_forms import Clause, formula_form, literal_form
from servicerobot.scenes.household import household_domain


def _check_goals(env, steps: int, rng: np.random.Generator | None) -> int:
    """Step an episode (the oracle's actions, or random ones when `rng` is given), comparing goal tests."""
    world = env.unwrapped.world
    agent = OracleAgent.from_env(env) if rng is None else None
    obs, _ = env.reset(seed=int(rng.integers(1000)) if rng is not None else 3)
    checked, flags_version, last_flags = 0, -1, None
    for _ in range(steps):
        task = env.unwrapped.active_task
        if task is None:
            break
        compiled = world.interpreter.compile_goal(task.goal)
        assert world.goal_holds(task) == compiled.holds(world.state.live), task.goal
        flags = {p: {a.args[0] for a in world.state.live if a.predicate == p and len(a.args) == 1}
                 for p in world.state.flags}
        assert {p: set(v) for p, v in world.state.flags.items()} == flags
        if world.state.flags_version == flags_version:  # no unary atom changed: the flags are as they were
            assert flags == last_flags
        flags_version, last_flags = world.state.flags_version, flags
        checked += 1
        if rng is None:
            action = agent.act(obs)
        else:
            valid = list(world.interpreter.applicable_actions(world.state.atoms))
            action = str(valid[int(rng.integers(len(valid)))]) if valid else "(wait)"
        obs, _, terminated, truncated, _ = env.step(action)
        if terminated or truncated:
            break
    return checked


@pytest.mark.parametrize("kind", TASK_KINDS)
def test_goal_tests_answer_as_the_compiled_goal(kind):
    checked = 0
    for seed in range(3):
        env = gym.make("ServiceRobot-v0", size="small", task_kinds=[kind], n_tasks=3, event_rate=0.3,
                       disturbance_prob=1.0)
        checked += _check_goals(env, 120, np.random.default_rng(seed))
        env.close()
    env = gym.make("ServiceRobot-v0", size="default", task_kinds=[kind], n_tasks=2)
    checked += _check_goals(env, 200, None)
    assert checked > 100


def test_literal_form_reads_only_ground_literals_written_canonically():
    assert literal_form("(on mug_1 table_1)") == [(True, "on", ("mug_1", "table_1"))]
    assert literal_form("(and (not (dirty c_1)) (not (wet c_1)))") == [(False, "dirty", ("c_1",)),
                                                                        (False, "wet", ("c_1",))]
    assert literal_form("(and (inside a f) (cold a))") == [(True, "inside", ("a", "f")), (True, "cold", ("a",))]
    for text in ("(on a b) (on c d)", "(and (on a b)  (on c d))", "(and (on a b) )", "(On a b)", "(on a b",
                 "(and (or (on a b)))", "(forall (?d - dish) (dirty ?d))", "(on ?x b)", "", "(and)"):
        assert literal_form(text) is None, text


def test_formula_form_takes_clauses_with_a_trigger():
    domain = household_domain()
    interpreter = Interpreter(domain, {"mug_1": "dish", "table_1": "surface", "lamp_1": "light"})
    read = interpreter._goal_formula
    assert formula_form(read("(forall (?i - item) (imply (broken ?i) (discarded ?i)))"))[1] == [
        Clause("item", "broken", ("discarded",), ())]
    assert formula_form(read("(forall (?d - dish) (or (not (dirty ?d)) (discarded ?d)))"))[1] == [
        Clause("dish", "dirty", ("discarded",), ())]
    literals, clauses = formula_form(read("(and (on mug_1 table_1) (forall (?l - light) (not (light-on ?l))))"))
    assert literals == [(True, "on", ("mug_1", "table_1"))] and clauses == [Clause("light", "light-on", (), ())]
    for text in ("(forall (?d - dish) (discarded ?d))", "(exists (?d - dish) (dirty ?d))",
                 "(or (dirty mug_1) (broken mug_1))", "(forall (?d - dish) (on ?d table_1))"):
        assert formula_form(read(text)) is None, text


def test_goal_form_checks_names_and_types_and_is_shared_by_like_universes():
    domain = household_domain()
    Interpreter.clear_shared()
    first = Interpreter(domain, {"mug_1": "dish", "table_1": "surface"})
    form = first.goal_form("(on mug_1 table_1)")
    assert form is not None and form.names == ("mug_1", "table_1")
    assert Interpreter(domain, {"mug_1": "dish", "table_1": "surface", "x": "room"}).goal_form(
        "(on mug_1 table_1)") is form
    assert Interpreter(domain, {"mug_1": "food", "table_1": "surface"}).goal_form("(on mug_1 table_1)") is not form
    assert Interpreter(domain, {"mug_1": "room", "table_1": "surface"}).goal_form("(on mug_1 table_1)") is None
    assert first.goal_form("(on mug_2 table_1)") is None  # unknown object: compile_goal says so
    assert first.goal_form("(under mug_1 table_1)") is None
    assert first.goal_form("(on mug_1)") is None
    assert first.goal_form("(and (on mug_1 table_1)") is None  # malformed: compile_goal raises


def test_clause_test_on_a_state():
    domain = household_domain()
    interpreter = Interpreter(domain, {"cup_1": "dish", "lamp_1": "light", "book_1": "book"})
    form = interpreter.goal_form("(forall (?d - dish) (or (not (dirty ?d)) (discarded ?d)))")

    from types import SimpleNamespace

    state = SimpleNamespace(live=set(), flags={})
    holds = clause_test(form, interpreter.universe)
    state.flags = {"dirty": {"book_1", "cup_9"}}  # not a dish, and not an object of the universe
    assert holds(state)
    state.flags = {"dirty": {"cup_1"}}
    assert not holds(state)
    state.flags = {"dirty": {"cup_1"}, "discarded": {"cup_1"}}
    assert holds(state)


def test_written_templated_compiles_as_the_parser_does():
    env = gym.make("ServiceRobot-v0", size="small")
    env.reset(seed=4)
    world = env.unwrapped.world
    state = world.state.atoms
    objects = dict(world.scene.objects)
    Interpreter.clear_shared()
    fast, slow = Interpreter(world.domain, objects), Interpreter(world.domain, objects)
    rng = np.random.default_rng(0)
    for name, action in world.domain.actions.items():
        for _ in range(20):
            args = [fast.universe.of_type(typ) for _, typ in action.params]
            if not all(args):
                break
            text = f"({' '.join([name, *(a[int(rng.integers(len(a)))] for a in args)])})"
            plain = fast._written_templated(text)
            template = fast._templates[name]
            assert (plain is not None) == (template is not None and not template.quantified)
            ga = slow.parse_action(text)
            expected = (slow.why_not(ga, state), *slow.delta(ga, state))
            got = fast.transition_text(text, set(state))
            assert got[1] == text and got[2:] == (expected[0], *(expected[1:] if expected[0] is None else
                                                                   (frozenset(), frozenset())))
    env.close()


def test_washer_parts_kept_per_names_are_what_the_general_path_grounds():
    from servicerobot.pddl.grounding import Universe, compile_effects
    from servicerobot.pddl.templates import action_template, clear_parts

    domain = household_domain()
    action = domain.actions["run-washer"]
    template = action_template(action, domain.constants)
    args = ("robot", "washer_1", "laundry")
    clear_parts()
    for clothes in (["shirt_1", "sock_2"], ["sock_2", "jeans_1", "shirt_1"], ["shirt_1"]):  # parts reused
        objects = {"robot": "robot", "washer_1": "washer", "laundry": "room", **{c: "clothing" for c in clothes}}
        universe = Universe(domain.types, objects)
        _, effects = template.instantiate(args, universe)
        general = compile_effects(action.effects, dict(zip([v for v, _ in action.params], args)), universe)
        state = {universe.atom("inside", ("shirt_1", "washer_1")), universe.atom("dirty", ("shirt_1",))}
        assert (effects.adds, effects.dels) == (general.adds, general.dels)
        assert [(a, d) for t, a, d in effects.conditional if t(state)] == \
            [(a, d) for t, a, d in general.conditional if t(state)]
        assert len(effects.conditional) == len(general.conditional) == len(clothes)
