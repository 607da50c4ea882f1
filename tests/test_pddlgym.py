"""ServiceRobot-PDDLGym-v0: PDDLGym's shipped environments on our interpreter, against pddlgym's own PDDLEnv.

Skips without the `pddlgym` package (install: python -m servicerobot.envs.pddlgym.install; see docs/pddlgym.md).
"""

from __future__ import annotations

import importlib.util
import warnings

import gymnasium as gym
import numpy as np
import pytest
from gymnasium.utils.env_checker import check_env

import servicerobot  # noqa: F401 - registers the ids

if importlib.util.find_spec("pddlgym") is None:
    pytest.skip("pddlgym is not installed (python -m servicerobot.envs.pddlgym.install)", allow_module_level=True)

from servicerobot.envs.pddlgym import PDDLGymEnv, parse_literal, registered_domains
from servicerobot.envs.pddlgym.files import read_domain_text
from servicerobot.pddl import parse_domain, parse_problem

# deterministic STRIPS domains whose pddlgym side runs without SWI-Prolog and steps in milliseconds
COMPARED = ("blocks", "gripper", "hanoi", "depot", "elevator", "easygripper", "ferry", "casino",
            "blocks_operator_actions", "conditionalblocks")


def _pddlgym_core():
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        try:
            import pddlgym.core
        except ImportError as error:  # gym or scikit-image missing beside pddlgym
            pytest.skip(f"pddlgym's own environments do not import: {error}")
    return pddlgym.core


def _theirs(obs) -> frozenset:
    return frozenset((lit.predicate.name, tuple(v.name for v in lit.variables))
                     for lit in obs.literals if lit.predicate.name != "=")


def _ours(env) -> frozenset:
    return frozenset((a.predicate, a.args) for a in env.unwrapped.literals)


def test_every_registered_domain_with_problems_passes_check_env():
    table = registered_domains()
    assert len(table) >= 70 and "blocks" in table and table["gripper"].operators_as_actions
    checked = []
    for name in sorted(table):
        _domain_file, problem_dir = table[name].files()
        if not any(problem_dir.glob("*.pddl")):  # pddlgym registers three domains that ship no problems
            with pytest.raises(ValueError, match="no problem files"):
                PDDLGymEnv(name, problem_index=0)
            continue
        env = PDDLGymEnv(name, problem_index=0)
        check_env(env, skip_render_check=True)
        checked.append(name)
        if any((problem_dir.parent / f"{name}_test").glob("*.pddl")):  # PDDLEnv<Name>Test-v0
            test_env = PDDLGymEnv(name, test=True)
            obs, info = test_env.reset(seed=1)
            assert "_test" in info["problem_file"] and test_env.observation_space.contains(obs)
    assert len(checked) >= 70


def test_gym_make_id_and_pddlgym_conventions():
    env = gym.make("ServiceRobot-PDDLGym-v0", domain="blocks", problem_index=0)
    obs, info = env.reset(seed=0)
    assert set(obs) == {"literals", "objects", "goal"}
    assert "(handempty robot)" in obs["literals"].splitlines()
    assert info["problem_file"].endswith("problem1.pddl") and info["action_error"] is None
    valid = env.unwrapped.valid_actions()
    assert valid and all(v.startswith("(pickup ") for v in valid)  # all blocks on the table, hand empty
    # PDDLGym's own spelling of a literal works, and so does PDDL's
    obs2, reward, terminated, truncated, info = env.step("pickup(a:block)")
    assert info["action_error"] is None and "(holding a)" in obs2["literals"].splitlines()
    assert (reward, terminated, truncated) == (0.0, False, False)
    # an action no operator executes changes nothing and says why (PDDLGym: silently nothing)
    obs3, reward, _, _, info = env.step("(pickup b)")
    assert obs3 == obs2 and reward == 0.0 and "no operator" in info["action_error"]
    _, _, _, _, info = env.step("(fly a)")
    assert "unknown action predicate" in info["action_error"]
    # PDDLGym's action_space.sample(obs): a literal; dynamic spaces sample only valid ones
    sampled = env.action_space.sample(obs3)
    assert parse_literal(sampled)[0] in {"pickup", "putdown", "stack", "unstack"}
    dyn = gym.make("ServiceRobot-PDDLGym-v0", domain="blocks", problem_index=0, dynamic_action_space=True)
    o, _ = dyn.reset(seed=3)
    for _ in range(5):
        assert dyn.action_space.sample(o) in dyn.unwrapped.valid_actions()


def test_reaching_the_goal_rewards_one_and_terminates():
    env = PDDLGymEnv("blocks", problem_index=0)
    obs, _ = env.reset(seed=0)
    goal = obs["goal"]
    assert goal.startswith("(and")
    rng = np.random.default_rng(0)
    # breadth-first over valid literals finds a plan; execute it
    from collections import deque

    start = env.state
    parents = {start: None}
    queue = deque([start])
    task = env.task
    while queue:
        state = queue.popleft()
        if task.goal_reached(state):
            break
        for lit in task.valid_literals(state):
            nxt, _ = task.step(state, lit, rng)
            if nxt not in parents:
                parents[nxt] = (state, lit)
                queue.append(nxt)
    plan = []
    while parents[state] is not None:
        state, lit = parents[state]
        plan.append(lit)
    rewards = [env.step(lit)[1:3] for lit in reversed(plan)]
    assert rewards[-1] == (1.0, True) and all(r == (0.0, False) for r in rewards[:-1])


@pytest.mark.parametrize("name", COMPARED)
def test_random_rollouts_match_pddlgym_literal_for_literal(name):
    core = _pddlgym_core()
    spec = registered_domains()[name]
    domain_file, problem_dir = spec.files()
    theirs = core.PDDLEnv(str(domain_file), str(problem_dir), operators_as_actions=spec.operators_as_actions,
                          dynamic_action_space=spec.dynamic_action_space)
    ours = PDDLGymEnv(name)
    rng = np.random.default_rng(7)
    for seed in (0, 1):
        tobs, tinfo = theirs.reset(seed=seed)
        _, info = ours.reset(seed=seed)
        assert info["problem_file"] == tinfo["problem_file"]  # reset(seed) picks PDDLGym's problem
        assert _theirs(tobs) == _ours(ours)
        preds = {p.name: p for p in theirs.action_predicates}
        objects = {o.name: o for o in tobs.objects}
        for _ in range(15):
            valid = ours.valid_actions()
            if valid and rng.random() < 0.8:
                action = valid[int(rng.integers(len(valid)))]
            else:
                action = ours.task.sample_literal(rng)  # usually one that changes nothing
            pred, args = parse_literal(action)
            tobs, treward, tdone, _, _ = theirs.step(preds[pred](*[objects[a] for a in args]))
            _, reward, done, _, _ = ours.step(action)
            assert _theirs(tobs) == _ours(ours), action
            assert (reward, done) == (treward, tdone)


def test_derived_predicates_appear_in_observations():
    env = PDDLGymEnv("derivedblocks", problem_index=0)
    env.reset(seed=0)
    assert set(env.gym_domain.domain.derived) == {"above", "busy"}
    env.step(next(a for a in env.valid_actions() if a.startswith("(pickup")))
    held = {a.args[0] for a in env.literals if a.predicate == "holding"}
    busy = {a.args[1] for a in env.literals if a.predicate == "busy"}
    assert held and busy == held  # (busy ?robot ?y) is derived from (handfull ?robot) (holding ?y)
    assert all(a.predicate != "busy" for a in env.state)  # states keep basic atoms; observations add derived


def _exploding_trace(env, seed: int) -> list:
    env.reset(seed=seed)
    rng = np.random.default_rng(seed)
    trace = []
    for _ in range(10):
        valid = env.valid_actions()
        if not valid:
            break
        env.step(valid[int(rng.integers(len(valid)))])
        trace.append(env.literals)
    return trace


def test_probabilistic_effects_are_sampled_from_the_env_rng():
    env = PDDLGymEnv("explodingblocks", problem_index=0)
    assert any("probabilistic" in r for r in env.gym_domain.repairs)
    exploded = []
    for seed in range(20):
        trace = _exploding_trace(env, seed)
        exploded.append(any(a.predicate in ("destroyed", "table-destroyed") for a in trace[-1]))
    assert any(exploded) and not all(exploded)  # p = 0.1 per put-down or stack
    assert _exploding_trace(env, 3) == _exploding_trace(env, 3)  # same seed, same outcomes


def test_repairs_are_named_and_every_domain_and_first_problem_parse():
    table = registered_domains()
    repaired = {}
    for name in sorted(table):
        domain_file, problem_dir = table[name].files()
        text, _, repairs = read_domain_text(domain_file)
        if repairs:
            repaired[name] = repairs
        if "probabilistic" in text:
            continue  # split by the loader; covered by the probabilistic test
        domain = parse_domain(text, source=str(domain_file))
        first = sorted(problem_dir.glob("*.pddl"), key=str)[:1]
        for path in first:
            parse_problem(path.read_text(), domain, source=str(path))
    assert "closing parenthesis" in repaired["navigation2"][0]
    assert "'-ball' -> '- ball'" in repaired["easygripper"][0]
    assert set(repaired) == {"easygripper", *(f"navigation{i}" for i in range(2, 11))}


def test_render_modes():
    env = PDDLGymEnv("hanoi", problem_index=0, render_mode="ansi")
    env.reset(seed=0)
    assert "(on " in env.render()
    env = PDDLGymEnv("gripper", problem_index=0, render_mode="rgb_array")  # no PDDLGym drawing: text image
    env.reset(seed=0)
    frame = env.render()
    assert frame.dtype == np.uint8 and frame.ndim == 3 and frame.shape[2] == 3 and frame.min() < 128


@pytest.mark.parametrize("name", ["blocks", "sokoban"])
def test_rgb_array_is_pddlgym_own_drawing_of_the_same_state(name):
    core = _pddlgym_core()
    import pddlgym.rendering

    env = PDDLGymEnv(name, problem_index=0, render_mode="rgb_array")
    env.reset(seed=0)
    spec = registered_domains()[name]
    domain_file, problem_dir = spec.files()
    theirs = core.PDDLEnv(str(domain_file), str(problem_dir), operators_as_actions=spec.operators_as_actions)
    theirs.fix_problem_index(0)
    tobs, _ = theirs.reset()
    expected = np.asarray(getattr(pddlgym.rendering, spec.render)(tobs.literals))[:, :, :3]
    frame = env.render()
    assert frame.shape == expected.shape and np.array_equal(frame, expected)


@pytest.mark.parametrize("name", ["blocks", "gripper", "derivedblocks"])
def test_service_agent_solves_problem_0_with_fast_downward(name):
    # literals that trigger operators (blocks), operators as actions (gripper), derived predicates (derivedblocks)
    from servicerobot import ServiceAgent
    from servicerobot.planners import FastDownward

    env = gym.make("ServiceRobot-PDDLGym-v0", domain=name, problem_index=0)
    agent = ServiceAgent.from_env(env, planner=FastDownward(alias="lama-first", timeout=60))
    obs, _ = env.reset(seed=0)
    for _ in range(200):
        obs, reward, terminated, _, info = env.step(agent.act(obs))
        assert info["action_error"] is None
        if terminated:
            break
    assert terminated and reward == 1.0 and agent.replans == 1 and not agent.failures
