"""ServiceAgent.from_env on ServiceRobot-PDDLGym-v0 (issue 36): it plans on the env's domain and goal with the
chosen planner, acts with action literals, and replans when a step does not lead where the plan said. The
domains are written here, so these tests run without the pddlgym package."""

from __future__ import annotations

import gymnasium as gym
import pytest

import servicerobot  # noqa: F401 - registers the ids
from servicerobot import ServiceAgent
from servicerobot.errors import ServiceRobotError
from servicerobot.planners import FastDownward, get_planner

ID = "ServiceRobot-PDDLGym-v0"

# the action literal `(pick ?x)` triggers operator `pick-up`: the agent must send the literal, not the operator
DOMAIN = """(define (domain toy)
  (:requirements :strips :typing)
  (:types block)
  (:predicates (clear ?x - block) (ontable ?x - block) (on ?x ?y - block) (holding ?x - block) (handempty)
               (pick ?x - block) (put ?x ?y - block))
  ; (:actions pick put)
  (:action pick-up
    :parameters (?x - block)
    :precondition (and (pick ?x) (clear ?x) (ontable ?x) (handempty))
    :effect EFFECT)
  (:action stack
    :parameters (?x ?y - block)
    :precondition (and (put ?x ?y) (holding ?x) (clear ?y))
    :effect (and (not (holding ?x)) (not (clear ?y)) (on ?x ?y) (clear ?x) (handempty)))
)
"""
PICKED = "(and (not (ontable ?x)) (not (clear ?x)) (not (handempty)) (holding ?x))"
PROBLEM = """(define (problem tower) (:domain toy)
  (:objects a b c - block)
  (:init (clear a) (clear b) (clear c) (ontable a) (ontable b) (ontable c) (handempty))
  (:goal (and (on a b) (on b c))))
"""


def _env(tmp_path, effect: str = PICKED, **kwargs):
    (tmp_path / "toy").mkdir()
    (tmp_path / "toy" / "p0.pddl").write_text(PROBLEM, encoding="utf-8")
    domain = tmp_path / "toy.pddl"
    text = DOMAIN.replace("EFFECT", effect)
    if kwargs.get("operators_as_actions"):  # then the domain has no action predicates
        text = text.replace("(and (pick ?x) ", "(and ").replace("(and (put ?x ?y) ", "(and ")
    domain.write_text(text, encoding="utf-8")
    return gym.make(ID, domain_file=str(domain), **kwargs)


def _episode(env, agent, seed: int = 0, limit: int = 60) -> tuple[bool, list[str]]:
    obs, _ = env.reset(seed=seed)
    sent = []
    for _ in range(limit):
        action = agent.act(obs)
        sent.append(action)
        obs, reward, terminated, _, _ = env.step(action)
        if terminated:
            return reward == 1.0, sent
    return False, sent


def test_from_env_plans_with_fast_downward_and_sends_action_literals(tmp_path):
    env = _env(tmp_path)
    agent = ServiceAgent.from_env(env, planner=FastDownward(alias="lama-first", timeout=60))
    done, sent = _episode(env, agent)
    assert done and agent.replans == 1 and not agent.failures
    assert sent == ["(pick b)", "(put b c)", "(pick a)", "(put a b)"]
    assert agent.summary()["steps"] == 4


def test_the_same_agent_runs_episode_after_episode(tmp_path):
    env = _env(tmp_path)
    agent = ServiceAgent.from_env(env, planner=get_planner("builtin"))
    assert _episode(env, agent, seed=0)[0] and _episode(env, agent, seed=1)[0]
    assert agent.replans == 2


def test_operators_as_actions_send_the_operator_itself(tmp_path):
    env = _env(tmp_path, operators_as_actions=True)
    agent = ServiceAgent.from_env(env, planner=get_planner("builtin"))
    done, sent = _episode(env, agent)
    assert done and sent[:2] == ["(pick-up b)", "(stack b c)"]


def test_a_step_that_does_not_go_as_planned_is_replanned(tmp_path):
    # picking up fails half the time (the env draws the outcome): each failure leaves the state as it was,
    # not the one the plan expected, and the agent plans again from there
    env = _env(tmp_path, effect=f"(probabilistic 0.5 {PICKED})")
    agent = ServiceAgent.from_env(env, planner=get_planner("builtin"))
    replans = []
    for seed in range(4):
        before = agent.replans
        done, sent = _episode(env, agent, seed=seed)
        assert done, sent
        replans.append(agent.replans - before)
        assert replans[-1] == 1 + (len(sent) - 4)  # one plan, then one more per failed pick-up
    assert max(replans) > 1


def test_an_unsolvable_goal_is_a_failure_not_a_loop(tmp_path):
    env = _env(tmp_path)
    (tmp_path / "toy" / "p0.pddl").write_text(PROBLEM.replace("(on b c)", "(on b c) (on c a)"), encoding="utf-8")
    agent = ServiceAgent.from_env(env, planner=get_planner("builtin"))
    done, sent = _episode(env, agent, limit=5)
    assert not done and sent == ["(wait)"] * 5
    assert agent.replans == 1 and agent.summary()["failures"] == {"unsolvable": 1}


def test_an_env_without_a_world_or_a_planning_view_is_refused_with_what_works():
    class Plain(gym.Env):
        pass

    with pytest.raises(ServiceRobotError, match=r"Plain has neither a world .* nor a planning_view\(\) "
                                                 r"\(as ServiceRobot-PDDLGym-v0 has\)"):
        ServiceAgent.from_env(Plain())
