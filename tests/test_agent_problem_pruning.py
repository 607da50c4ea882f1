"""The agent's planning problem keeps only the items its goal needs (the rest multiply FD's operators)."""

from __future__ import annotations

import re

import gymnasium as gym

import servicerobot  # noqa: F401
from servicerobot.agent import ServiceAgent
from servicerobot.language.rule_interpreter import RuleInterpreter
from servicerobot.pddl import Problem
from servicerobot.planners import FastDownward


class _Recording(FastDownward):
    def __init__(self):
        super().__init__(timeout=60)
        self.problems: list[Problem] = []

    def solve(self, domain, problem, timeout=None):
        self.problems.append(problem)
        return super().solve(domain, problem, timeout)


def test_idle_retrieved_items_are_left_out_of_the_problem():
    env = gym.make("ServiceRobot-v0", size="default", n_tasks=2, task_kinds=["keep_cold", "pick_place"])
    planner = _Recording()
    agent = ServiceAgent.from_env(env, variant="search-rag", interpreter=RuleInterpreter(), planner=planner)
    obs, _ = env.reset(seed=0)
    domain = agent.domain
    for _ in range(60):
        obs, *_ = env.step(agent.act(obs))
        if planner.problems and agent.task is not None and agent.task.goal:
            break
    assert planner.problems, "the agent never planned"
    problem = planner.problems[-1]
    needed = set(re.findall(r"[a-z0-9_\-]+", agent.task.goal))
    held = {a.args[1] for a in problem.init if a.predicate == "holding"}
    items = {n for n, t in problem.objects.items() if domain.types.is_subtype(t, "item")}
    assert items and items <= needed | held, sorted(items - needed - held)
    # Retrieval itself returned other items: the pruning is what removed them.
    facts = agent._retrieve_for(agent.task.text, agent.task.speaker, agent.task).facts
    retrieved_items = {n for a in facts for n in a.args
                       if agent.memory.has_entity(n) and domain.types.is_subtype(agent.memory.type_of(n), "item")}
    assert retrieved_items - needed - held
