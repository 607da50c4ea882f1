"""A language model that misbehaves on purpose (a real HTTP server on 127.0.0.1) never ends an episode.

The client retries 5xx/429 (honouring Retry-After), timeouts, broken connections, bodies that are not JSON,
and answers that are not JSON of the asked-for shape; after the retries the agent takes its failure path
(update dropped, task failed with the reason). A seeded fuzz mixes faults into good answers.
"""

from __future__ import annotations

import email.utils
import json
import random
import time

import gymnasium as gym
import pytest

import servicerobot  # noqa: F401
from servicerobot import ServiceAgent
from servicerobot.planners import FastDownward

pytest.importorskip("openai")
from misbehaving_server import (
    MisbehavingServer,
    answering,
    hang,
    ok,
    raw,
    reset,
    schema_name,
    status,
    truncated,
)

from servicerobot.language import AnswerFormatError, LanguageModelError, LLMInterpreter, OpenAIModel

SCHEMA = {"title": "kind", "type": "object", "required": ["kind"],
          "properties": {"kind": {"type": "string", "enum": ["task", "update"]}}}
MESSAGES = [{"role": "user", "content": "Kira says: hello"}]
GOOD = {"kind": "task"}

# Each fault, as the server sends it; the client must retry past it.
FAULTS = {
    "http 500": lambda: status(500),
    "http 502 html": lambda: raw("<html><body>Bad gateway</body></html>", code=502),
    "http 503": lambda: status(503),
    "http 429": lambda: status(429, {"Retry-After": "0"}),
    "hang past the timeout": lambda: hang(1.5),
    "truncated body": truncated,
    "connection reset": reset,
    "body not json": lambda: raw("{this is not json"),
    "html body with 200": lambda: raw("<html>proxy login</html>"),
    "empty body": lambda: raw(""),
    "no choices": lambda: raw(json.dumps({"id": "x", "object": "chat.completion", "created": 0, "model": "m",
                                          "choices": []})),
    "content not json": lambda: ok("Sure, it is a task!"),
    "content cut off": lambda: ok('{"kind": "ta'),
    "content a list": lambda: ok([{"kind": "task"}]),
    "content missing key": lambda: ok({"type": "task"}),
    "content a string": lambda: ok('"task"'),
}


def _model(url: str, **kwargs) -> tuple[OpenAIModel, list[float]]:
    sleeps: list[float] = []
    options = {"timeout": 0.5, "max_retries": 2, "backoff": 0.25, "sleep": sleeps.append}
    options.update(kwargs)
    return OpenAIModel("m", base_url=url, **options), sleeps


@pytest.mark.parametrize("fault", sorted(FAULTS))
def test_each_fault_is_retried_then_answered(fault):
    with MisbehavingServer() as server:
        server.push(FAULTS[fault](), ok(GOOD))
        model, sleeps = _model(server.url)
        completion = model.complete(MESSAGES, schema=SCHEMA)
        assert completion.data == GOOD and server.requests == 2
    assert len(sleeps) <= 1  # transport faults back off once; malformed answers are asked again at once


@pytest.mark.parametrize("fault", sorted(FAULTS))
def test_a_fault_that_persists_is_a_clear_error_not_a_crash(fault):
    with MisbehavingServer(default=FAULTS[fault]()) as server:
        model, _ = _model(server.url, max_retries=1, timeout=0.3)
        with pytest.raises(LanguageModelError) as info:  # AnswerFormatError is one too
            model.complete(MESSAGES, schema=SCHEMA)
        assert server.requests == 2
    message = str(info.value)
    assert ("failed 2 time" in message or "none usable" in message) and "m" in message


def test_retry_after_is_honoured_in_seconds_dates_and_ms():
    with MisbehavingServer() as server:
        later = email.utils.formatdate(time.time() + 3, usegmt=True)
        server.push(status(429, {"Retry-After": "2"}), status(503, {"Retry-After": later}),
                    status(429, {"retry-after-ms": "1500"}), status(429, {"Retry-After": "86400"}), ok(GOOD))
        model, sleeps = _model(server.url, max_retries=4, backoff=0.01)
        assert model.complete(MESSAGES, schema=SCHEMA).data == GOOD
    assert sleeps[0] == 2.0 and 1.0 <= sleeps[1] <= 3.0 and sleeps[2] == 1.5
    assert sleeps[3] == 60.0  # a day is capped at a minute


def test_retry_after_really_waits():
    with MisbehavingServer() as server:
        server.push(status(429, {"Retry-After": "1"}), ok(GOOD))
        model = OpenAIModel("m", base_url=server.url, timeout=2.0, max_retries=1, backoff=0.01)
        assert model.complete(MESSAGES, schema=SCHEMA).data == GOOD
        gap = server.arrivals[1] - server.arrivals[0]
    assert 0.95 <= gap < 3.0


def test_a_hanging_server_costs_the_timeout_not_minutes():
    with MisbehavingServer(default=hang(30)) as server:
        model, _ = _model(server.url, timeout=0.3, max_retries=1, backoff=0.0)
        start = time.monotonic()
        with pytest.raises(LanguageModelError, match="0.3 s timeout"):
            model.complete(MESSAGES, schema=SCHEMA)
        assert time.monotonic() - start < 3.0


def test_malformed_answers_count_their_tokens():
    with MisbehavingServer() as server:
        server.push(ok("no json here"), ok([1]), ok(GOOD))
        model, sleeps = _model(server.url)
        completion = model.complete(MESSAGES, schema=SCHEMA)
    assert completion.data == GOOD and completion.usage.calls == 3 and completion.usage.total_tokens == 45
    assert sleeps == []
    with MisbehavingServer(default=ok("never json")) as server:
        model, _ = _model(server.url, max_retries=2)
        with pytest.raises(AnswerFormatError, match="3 answer") as info:
            model.complete(MESSAGES, schema=SCHEMA)
    assert info.value.usage.calls == 3


# ------------------------------------------------------------------ whole episodes
def _smart(goal_of, fault_rate: float, rng: random.Random, tried: list[str]):
    """Answer as a good model would (the true goal for tasks), but misbehave at `fault_rate`."""
    names = sorted(FAULTS)
    good = answering({
        "kind": lambda body: {"kind": "task" if goal_of["task"] in json.dumps(body) else "update"},
        "query_graph": {"nodes": [], "edges": []}, "goal": lambda body: {"goal": goal_of["goal"]},
        "update": {"REMOVE": [], "ADD": []}, "entities": {"entities": []}})

    def run(handler, body):
        if rng.random() < fault_rate:
            name = rng.choice([n for n in names if n != "hang past the timeout"] + ["hang past the timeout"])
            tried.append(name)
            return FAULTS[name]()(handler, body)
        tried.append(f"ok:{schema_name(body)}")
        return good(handler, body)
    return run


def _play(env, agent, seed: int, goal_of: dict) -> tuple[dict, int]:
    obs, info = env.reset(seed=seed)
    goal_of.update(task=info["task"], goal=info["oracle"]["goal"])
    steps = 0
    while True:
        obs, _, terminated, truncated, info = env.step(agent.act(obs))
        steps += 1
        goal_of.update(task=info["task"], goal=info["oracle"]["goal"] or "")
        if terminated or truncated:
            return info, steps


def _agent(env, url: str, timeout: float = 0.3, max_retries: int = 2) -> ServiceAgent:
    model = OpenAIModel("m", base_url=url, timeout=timeout, max_retries=max_retries, backoff=0.0)
    return ServiceAgent.from_env(env, interpreter=LLMInterpreter(model),
                                 planner=FastDownward(alias="lama-first", timeout=20))


@pytest.mark.parametrize("fault", ["http 500", "hang past the timeout", "truncated body", "content not json",
                                   "content a list", "connection reset"])
def test_a_model_that_always_misbehaves_never_ends_an_episode(fault):
    env = gym.make("ServiceRobot-v0", size="small", n_tasks=2, event_rate=0.02)
    with MisbehavingServer(default=FAULTS[fault]()) as server:
        agent = _agent(env, server.url, timeout=0.2, max_retries=1)
        info, steps = _play(env, agent, 1, {})
    assert info["tasks_completed"] == 0 and info["tasks_failed"] == 2 and steps > 10
    summary = agent.summary()
    assert summary["failures"].get("language model failed", 0) >= 2
    assert all(f.detail for f in agent.failures)


def test_fuzz_faults_mixed_into_good_answers():
    """Seeded: a third of all requests misbehave (every kind of fault); episodes end normally and most tasks
    are still done (the retries absorb the faults)."""
    rng = random.Random(11)
    tried: list[str] = []
    goal_of: dict = {"task": "", "goal": ""}
    env = gym.make("ServiceRobot-v0", size="small", n_tasks=2, event_rate=0.1)
    completed = total = 0
    with MisbehavingServer(default=_smart(goal_of, 1 / 3, rng, tried)) as server:
        agent = _agent(env, server.url)
        for seed in (1, 2, 3):
            info, _ = _play(env, agent, seed, goal_of)
            completed += info["tasks_completed"]
            total += info["tasks_total"]
    faults = [t for t in tried if not t.startswith("ok:")]
    print(f"fuzz: {len(tried)} requests, {len(faults)} faults of {len(set(faults))} kinds, "
          f"tasks {completed}/{total}")
    assert len(faults) >= 10 and len(set(faults)) >= 6, faults
    assert completed >= total - 2, (completed, total, agent.summary())
