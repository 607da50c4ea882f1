"""The real local model in the agent's loop: `.ci/run` starts `servicerobot llm serve` and passes its URL in
SERVICEROBOT_LOCAL_LLM_URL. Without it the test skips here, and fails in CI (CI=true), where it must run.

Kept short for CI: both utterances of the small house's seed 0 (an update and a task) come at the first
step, so 20 steps and one attempt per update (no verifier retries) make 6 model calls."""

from __future__ import annotations

import json

STEPS = 20  # the utterances are read at step 0; the rest shows the replayed plan acts the same


def _episode(interpreter, seed: int = 0) -> tuple[list[str], object]:
    import gymnasium as gym

    import servicerobot
    from servicerobot.agent import ServiceAgent

    env = gym.make("ServiceRobot-v0", size="small", n_tasks=2, update_mode="verbal")
    assert servicerobot is not None
    agent = ServiceAgent.from_env(env, variant="search-rag", interpreter=interpreter, max_attempts=1)
    obs, _ = env.reset(seed=seed)
    actions = []
    for _ in range(STEPS):
        action = agent.act(obs)
        actions.append(action)
        obs, _, terminated, truncated, _ = env.step(action)
        if terminated or truncated:
            break
    return actions, agent


def test_an_episode_runs_through_the_local_model_and_replays_from_its_cassette(url, tmp_path):
    from servicerobot.language import Cassette, LLMInterpreter
    from servicerobot.language.local_server import local_interpreter

    live = local_interpreter(url)
    path = tmp_path / "local-llm.json"
    recorded = LLMInterpreter(Cassette(path, mode="record", model=live.model), prompts="compact",
                              max_facts=live.max_facts)
    actions, agent = _episode(recorded)
    summary = agent.summary()
    assert summary["interpreter"].startswith("llm:cassette:") and summary["interpreter"].endswith("+compact")
    assert recorded.usage.calls > 0 and summary["tokens"] > 0  # the model answered, tokens were counted
    assert "language model failed" not in summary.get("failures", {}), summary  # no fallback: every call answered
    exchanges = json.loads(path.read_text())["exchanges"]
    assert len(exchanges) == recorded.usage.calls
    assert all(x["data"] is not None for x in exchanges)  # the grammar made every answer parse
    assert {x["schema"]["title"] for x in exchanges} >= {"kind", "query_graph"}
    assert {x["schema"]["title"] for x in exchanges} & {"update", "goal"}  # and an update or a goal was read

    replayed = LLMInterpreter(Cassette(path), prompts="compact", max_facts=live.max_facts)
    again, _ = _episode(replayed)
    assert again == actions  # the cassette reproduces the episode without the model


def test_the_local_model_chooses_among_enumerated_answers(url):
    """The default local interpreter: the server scores candidates (POST /v1/score) for the kinds, the
    update and the goal; every goal it returns parses in the domain, and the usage counts every call."""
    from servicerobot.language.chooser import ChoosingInterpreter
    from servicerobot.language.local_server import local_interpreter

    chooser = local_interpreter(url)
    assert isinstance(chooser, ChoosingInterpreter)
    _, agent = _episode(chooser)
    kinds = {c["kind"] for c in chooser.calls}
    assert {"classify"} <= kinds and kinds & {"task", "update"}
    assert all(c["candidates"] >= 1 and c["tokens"] > 0 for c in chooser.calls), chooser.calls
    assert all(c["candidates"] == 2 for c in chooser.calls if c["kind"] == "classify")
    assert chooser.usage.calls >= len(chooser.calls) and chooser.usage.total_tokens > 0
    summary = agent.summary()
    assert "language model failed" not in summary.get("failures", {}), summary
    goals = [t.goal for t in [agent.task] if t is not None and t.goal]
    for goal in goals:
        agent._pddl_interpreter().compile_goal(goal)  # a chosen goal is always well-formed
