"""RuleInterpreter: every household utterance read back into the delta people told and the goal they meant."""

from __future__ import annotations

import json

import gymnasium as gym
import pytest

import servicerobot  # noqa: F401
from servicerobot.language.interpreter import Context, Interpreter
from servicerobot.language.rule_interpreter import NotUnderstood, RuleInterpreter
from servicerobot.memory.graph import KnowledgeGraph
from servicerobot.memory.triplets import Delta
from servicerobot.oracle import OracleAgent
from servicerobot.pddl import Atom
from servicerobot.scenes.household import household_domain


def test_is_an_interpreter():
    assert isinstance(RuleInterpreter(), Interpreter)


def test_updates_and_tasks_match_ground_truth_over_oracle_episodes():
    """Memory is synced to the truth before each step's events; the reading must equal what was told."""
    domain = household_domain()
    ri = RuleInterpreter()
    checked_updates = checked_tasks = 0
    for seed in (0, 1, 2):
        env = gym.make("ServiceRobot-v0", event_rate=0.3, n_tasks=3)
        obs, info = env.reset(seed=seed)
        world = env.unwrapped.world
        oracle = OracleAgent.from_env(env)
        kg = KnowledgeGraph.from_prior(domain, json.loads(obs["prior"]), keep_history=False)
        done = False
        while not done:
            events = info["oracle"]["events"]
            before = set(world.state.atoms)
            for e in reversed(events):
                before = (before - {Atom.parse(a) for a in e["add"]}) | {Atom.parse(a) for a in e["delete"]}
            for u in json.loads(obs["utterances"]):
                ctx = Context(domain, kg.entities, frozenset(before))
                if ri.classify(u["text"], u["speaker"], ctx) == "task":
                    truth_now = Context(domain, kg.entities, world.state.atoms)
                    assert ri.interpret_task(u["text"], u["speaker"], truth_now) == info["oracle"]["goal"], u
                    checked_tasks += 1
                    continue
                told = [e for e in events if e["told"] and e["utterance"][1:] in u["text"]]
                add = {Atom.parse(a) for e in told for a in e["told_add"]}
                delete = {Atom.parse(a) for e in told for a in e["told_delete"]}
                delta = ri.interpret_update(u["text"], u["speaker"], ctx)
                assert delta.add == {a for a in add if a not in before}, u
                assert delta.remove == {a for a in delete if a in before and a not in add}, u
                before = (before - delta.remove) | delta.add
                checked_updates += 1
            kg.apply(Delta.of(kg.facts - world.state.atoms, world.state.atoms - kg.facts), "sync", 0)
            obs, _, terminated, truncated, info = env.step(oracle.act(obs))
            done = terminated or truncated
    assert checked_updates >= 20 and checked_tasks >= 9


def test_text_outside_the_templates_is_not_understood():
    env = gym.make("ServiceRobot-v0", size="small")
    obs, _ = env.reset(seed=0)
    kg = KnowledgeGraph.from_prior(household_domain(), json.loads(obs["prior"]))
    ctx = Context(kg.domain, kg.entities, kg.facts)
    ri = RuleInterpreter()
    with pytest.raises(NotUnderstood, match="no household event template"):
        ri.interpret_update("The cat knocked the unicorn off the moon.", "Ana", ctx)
    with pytest.raises(NotUnderstood, match="no household task template"):
        ri.interpret_task("Please fetch the unicorn.", "Ana", ctx)
    assert ri.classify("Could you bring me the moon?", "Ana") == "task"
    assert ri.usage.total_tokens == 0
