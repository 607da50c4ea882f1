"""The household world exported as a PDDLGym domain directory: pddlgym's own PDDLEnv loads and steps it
exactly as our interpreter steps the household domain. Skips without pddlgym (and its gym import)."""

from __future__ import annotations

import importlib.util
import warnings

import numpy as np
import pytest

if importlib.util.find_spec("pddlgym") is None:
    pytest.skip("pddlgym is not installed (python -m servicerobot.envs.pddlgym.install)", allow_module_level=True)

from servicerobot.envs.pddlgym import PDDLGymEnv
from servicerobot.envs.pddlgym.export import export_household
from servicerobot.pddl import Interpreter, parse_domain
from servicerobot.scenes.household import household_domain


@pytest.fixture(scope="module")
def exported(tmp_path_factory):
    return export_household(tmp_path_factory.mktemp("pddlgym-export"), seeds=(0, 1, 2))


def test_export_names_what_pddlgym_cannot_express(exported):
    assert set(exported.omitted) == {"run-washer", "run-dryer"}
    assert all("quantified effect" in why and "precondition" in why for why in exported.omitted.values())
    assert exported.complements["not-closed"] == "closed"
    assert len(exported.problems) == 3 and len(list(exported.problem_dir.glob("*.pddl"))) == 3
    text = exported.domain_file.read_text()
    assert "; (:actions move pick-up" in text and "(:action put-in-op-0" in text and "(:action put-in-op-1" in text
    parse_domain(text)  # the export is PDDL our parser reads too


def test_pddlgym_steps_the_export_as_we_step_the_household_domain(exported):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        try:
            from pddlgym.core import PDDLEnv
        except ImportError as error:
            pytest.skip(f"pddlgym's own environments do not import: {error}")
    theirs = PDDLEnv(str(exported.domain_file), str(exported.problem_dir))
    domain = household_domain()
    complements = set(exported.complements) | {"="}
    for index, problem in enumerate(exported.problems[:2]):
        theirs.fix_problem_index(index)
        tobs, _ = theirs.reset()
        interp = Interpreter(domain, problem.objects)
        goal = interp.compile_goal(problem.goal)
        state = problem.init
        preds = {p.name: p for p in theirs.action_predicates}
        objects = {o.name: o for o in tobs.objects}

        def seen(obs):
            return frozenset((lit.predicate.name, tuple(v.name for v in lit.variables))
                             for lit in obs.literals if lit.predicate.name not in complements)

        assert seen(tobs) == {(a.predicate, a.args) for a in state}
        rng = np.random.default_rng(index)
        for _ in range(12):
            actions = [a for a in interp.applicable_actions(state) if a.name in preds]
            action = actions[int(rng.integers(len(actions)))]
            tobs, reward, done, _, _ = theirs.step(preds[action.name](*[objects[x] for x in action.args]))
            state = interp.apply(action, state)
            assert seen(tobs) == {(a.predicate, a.args) for a in state}, str(action)
            assert (reward == 1.0) == done == goal.holds(state)


def test_our_pddlgym_env_runs_the_export(exported):
    env = PDDLGymEnv(domain_file=exported.domain_file, problem_dir=exported.problem_dir, problem_index=0)
    env.reset(seed=0)
    problem = exported.problems[0]
    visible = set(problem.init)
    assert {a for a in env.literals if a.predicate not in exported.complements} == visible
    action = next(a for a in env.valid_actions() if a.startswith("(move "))
    _, _, _, _, info = env.step(action)
    interp = Interpreter(household_domain(), problem.objects)
    expected = interp.step(action, problem.init)
    assert info["action_error"] is None
    assert {a for a in env.literals if a.predicate not in exported.complements} == expected
