"""ServiceAgent: variants, the loop on real episodes (Fast Downward), failure learning, and the LLM path."""

from __future__ import annotations

import json

import gymnasium as gym
import pytest

import servicerobot  # noqa: F401
from servicerobot import ServiceAgent
from servicerobot.agent import default_interpreter
from servicerobot.errors import ServiceRobotError
from servicerobot.language.rule_interpreter import RuleInterpreter


def _run(env, agent, seed):
    obs, info = env.reset(seed=seed)
    while True:
        obs, _, terminated, truncated, info = env.step(agent.act(obs))
        if terminated or truncated:
            return info


def test_unknown_variant_is_a_clear_error():
    env = gym.make("ServiceRobot-v0", size="small")
    with pytest.raises(ServiceRobotError, match="unknown agent variant 'smart'.*search-rag"):
        ServiceAgent.from_env(env, variant="smart")


def test_without_api_settings_the_rule_interpreter_is_used():
    assert isinstance(default_interpreter(), RuleInterpreter)


def test_search_rag_agent_completes_small_episodes_with_verbal_updates():
    env = gym.make("ServiceRobot-v0", size="small", n_tasks=3, event_rate=0.2)
    agent = ServiceAgent.from_env(env)
    completed = total = 0
    for seed in (0, 1):
        info = _run(env, agent, seed)
        completed += info["tasks_completed"]
        total += info["tasks_total"]
        summary = agent.summary()
        assert summary["replans"] >= 1 and summary["tokens"] == 0
        assert any(s.retrieved_facts for s in agent.steps)
        assert any(r.source == "language" for r in agent.memory.history)
    assert completed >= total - 1


def test_plans_are_validated_by_val_when_asked():
    env = gym.make("ServiceRobot-v0", size="small", n_tasks=1)
    checked = ServiceAgent.from_env(env, validate_with_val=True)
    with_val = _run(env, checked, 1)
    without = _run(env, ServiceAgent.from_env(env), 1)
    assert checked.replans >= 1 and checked.val_rejections == 0  # VAL agrees with our interpreter
    assert with_val["tasks_completed"] == without["tasks_completed"]


def test_visual_only_ignores_what_people_say():
    env = gym.make("ServiceRobot-v0", size="small", n_tasks=2, event_rate=0.3, update_mode="both")
    agent = ServiceAgent.from_env(env, variant="visual-only")
    _run(env, agent, 0)
    sources = {r.source for r in agent.memory.history}
    assert "language" not in sources and "percept" in sources


def test_noverify_variant_skips_the_verifier():
    env = gym.make("ServiceRobot-v0", size="small")
    agent = ServiceAgent.from_env(env, variant="entity-rag-noverify")
    assert agent.base_variant == "entity-rag" and not agent.verify


def test_a_failed_precondition_corrects_memory():
    env = gym.make("ServiceRobot-v0", size="small")
    agent = ServiceAgent.from_env(env)
    obs, _ = env.reset(seed=0)
    agent.act(obs)
    wrong = next(a for a in sorted(agent.memory.facts) if a.predicate == "on")
    item, surface = wrong.args
    room = next(a.args[1] for a in agent.memory.facts_about(surface) if a.predicate == "in-room")
    agent._last_action = f"(pick-up robot {item} {surface} {room})"
    obs = dict(obs, prior="", utterances="[]",
               action_result=f"(pick-up robot {item} {surface} {room}) is not applicable: precondition {wrong} is false")
    agent.act(obs)
    assert wrong not in agent.memory
    assert any(r.source == "failure" and r.delta.remove == {wrong} for r in agent.memory.history)


def test_llm_interpreter_agent_over_http(monkeypatch, stub):
    pytest.importorskip("openai")
    env = gym.make("ServiceRobot-v0", size="small", n_tasks=1)
    for seed in range(50):  # a first task without setup events: the only utterance is the task
        obs, info = env.reset(seed=seed)
        if len(json.loads(obs["utterances"])) == 1:
            break
    goal = info["oracle"]["goal"]
    monkeypatch.setenv("OPENAI_BASE_URL", stub.url)
    agent = ServiceAgent.from_env(env)
    assert agent.interpreter.name != "rules"
    # The agent asks: what kind the utterance is; which memory nodes it mentions; the goal.
    stub.answer({"kind": "task"})
    stub.answer({"nodes": [], "edges": []})
    stub.answer({"goal": goal})
    action = agent.act(obs)
    assert agent.task is not None and agent.task.goal == goal
    assert action.startswith("(") and agent.usage.total_tokens > 0
    assert agent._reaches_goal([action, *agent.task.plan])


def test_a_seeing_agent_goes_to_look_when_memory_thinks_the_task_is_done():
    """Someone unmade the bed and said so; visual-only did not listen, so memory holds the goal. Asked to
    make the bed, it walks to the bed's room, sees it unmade, and makes it (before: it waited)."""
    env = gym.make("ServiceRobot-v0", n_tasks=2, update_mode="both", task_kinds=["make_bed"])
    agent = ServiceAgent.from_env(env, variant="visual-only")
    info = _run(env, agent, 1)
    assert info["tasks_completed"] == 2
    assert agent.replans >= 1 and any(s.action.startswith("(make-bed") for s in agent.steps)


def test_a_request_for_what_memory_believes_done_makes_memory_doubt_it():
    """"Make the bed" while memory believes the bed made: the person would not ask, so memory drops the
    one-argument facts of the goal and the plan makes the bed; places (`on`) stay, and nothing changes when
    the goal does not already hold."""
    import gymnasium as gym

    from servicerobot.agent import ServiceAgent
    from servicerobot.memory.triplets import Delta
    from servicerobot.pddl import Atom

    env = gym.make("ServiceRobot-v0", size="small", n_tasks=1)
    obs, _ = env.reset(seed=0)
    agent = ServiceAgent.from_env(env)
    agent.act(obs)
    kg = agent.memory
    bed = kg.of_type("bed")[0]
    item, place = next((a.args[0], a.args[1]) for a in kg.facts if a.predicate == "on")
    kg.apply(Delta.of([Atom("dirty", (item,))], [Atom("made", (bed,))]), "test", 0)
    agent._doubt(f"(and (made {bed}) (on {item} {place}))")
    assert Atom("made", (bed,)) not in kg and Atom("on", (item, place)) in kg
    assert kg.history[-1].source == "request"
    agent._doubt(f"(not (dirty {item}))")  # memory holds it clean: the request says it is dirty
    assert Atom("dirty", (item,)) in kg
    version = kg.version
    agent._doubt(f"(made {bed})")  # not believed done now: nothing to doubt
    assert kg.version == version
    # "switch off every light" while memory believes every light off: every light is doubted
    lights = kg.of_type("light")
    kg.apply(Delta.of([Atom("light-on", (n,)) for n in lights if Atom("light-on", (n,)) in kg], []), "test", 0)
    agent._doubt("(forall (?l - light) (not (light-on ?l)))")
    assert lights and all(Atom("light-on", (n,)) in kg for n in lights)
    env.close()
