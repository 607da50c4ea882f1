"""OpenAIModel over real HTTP against a local OpenAI-compatible stub server."""

from __future__ import annotations

import pickle
import socket
import subprocess
import sys

import pytest

pytest.importorskip("openai")


from servicerobot.errors import DependencyNotInstalled
from servicerobot.language import AnswerFormatError, LanguageModel, LanguageModelError, OpenAIModel

SCHEMA = {"title": "kind", "type": "object", "required": ["kind"],
          "properties": {"kind": {"type": "string", "enum": ["task", "update"]}}}
MESSAGES = [{"role": "system", "content": "Classify."}, {"role": "user", "content": "Kira says: hello"}]
SECRET = "sk-test-SECRET-0123456789"


def make(stub, **kwargs) -> tuple[OpenAIModel, list[float]]:
    sleeps: list[float] = []
    options = {"api_key": SECRET, "timeout": 5.0, "max_retries": 2, "backoff": 0.5, "sleep": sleeps.append}
    options.update(kwargs)
    return OpenAIModel("test-model", base_url=stub.url, **options), sleeps


def test_structured_output_sends_the_schema_and_parses_the_answer(stub):
    model, _ = make(stub, seed=7)
    stub.answer({"kind": "task"}, prompt_tokens=42, completion_tokens=3)
    completion = model.complete(MESSAGES, schema=SCHEMA)
    assert isinstance(model, LanguageModel)
    assert completion.data == {"kind": "task"}
    assert completion.text == '{"kind": "task"}'
    assert (completion.usage.prompt_tokens, completion.usage.completion_tokens, completion.usage.calls) == (42, 3, 1)
    request = stub.requests[0]
    assert request["model"] == "test-model"
    assert request["messages"] == MESSAGES
    assert request["temperature"] == 0.0
    assert request["seed"] == 7
    assert request["response_format"] == {"type": "json_schema", "json_schema": {
        "name": "kind", "schema": SCHEMA, "strict": False}}
    assert stub.headers[0]["authorization"] == f"Bearer {SECRET}"


def test_plain_text_and_fenced_json(stub):
    model, _ = make(stub)
    stub.answer("Hello there.")
    stub.answer('```json\n{"kind": "update"}\n```')
    stub.answer('Sure! Here it is: {"kind": "task"} Hope that helps.')
    plain = model.complete(MESSAGES)
    assert (plain.text, plain.data) == ("Hello there.", None)
    assert "response_format" not in stub.requests[0]
    assert model.complete(MESSAGES, schema=SCHEMA).data == {"kind": "update"}
    assert model.complete(MESSAGES, schema=SCHEMA).data == {"kind": "task"}


def test_retries_server_errors_with_exponential_backoff(stub):
    model, sleeps = make(stub)
    stub.error(500, "boom")
    stub.error(503, "overloaded")
    stub.answer({"kind": "task"})
    assert model.complete(MESSAGES, schema=SCHEMA).data == {"kind": "task"}
    assert len(stub.requests) == 3
    assert sleeps == [0.5, 1.0]


def test_retries_rate_limits(stub):
    model, sleeps = make(stub)
    stub.error(429, "slow down")
    stub.answer("ok")
    assert model.complete(MESSAGES).text == "ok"
    assert len(stub.requests) == 2 and sleeps == [0.5]


def test_gives_up_after_the_retries_with_a_fix(stub):
    model, sleeps = make(stub, max_retries=1)
    stub.error(500, "boom")
    stub.error(500, "boom again")
    with pytest.raises(LanguageModelError, match="failed 2 time") as info:
        model.complete(MESSAGES)
    message = str(info.value)
    assert "HTTP 500" in message and "OPENAI_BASE_URL" in message and "test-model" in message
    assert SECRET not in message
    assert sleeps == [0.5]


def test_timeout_is_retried_then_reported(stub):
    model, sleeps = make(stub, timeout=0.2, max_retries=1)
    stub.answer("too late", delay=0.8)
    stub.answer("too late", delay=0.8)
    with pytest.raises(LanguageModelError, match="timeout") as info:
        model.complete(MESSAGES)
    assert "running" in str(info.value)
    assert len(stub.requests) == 2 and sleeps == [0.5]


def test_connection_refused_is_reported():
    with socket.socket() as s:  # a port nobody listens on
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    sleeps: list[float] = []
    model = OpenAIModel("m", base_url=f"http://127.0.0.1:{port}/v1", timeout=2.0, max_retries=2,
                        sleep=sleeps.append)
    with pytest.raises(LanguageModelError, match="cannot connect") as info:
        model.complete(MESSAGES)
    assert f"127.0.0.1:{port}" in str(info.value) and "OPENAI_BASE_URL" in str(info.value)
    assert sleeps == [1.0, 2.0]


def test_client_errors_are_not_retried(stub):
    model, sleeps = make(stub)
    stub.error(401, "invalid api key")
    with pytest.raises(LanguageModelError, match="OPENAI_API_KEY"):
        model.complete(MESSAGES)
    stub.error(404, "model not found")
    with pytest.raises(LanguageModelError, match="model name 'test-model'"):
        model.complete(MESSAGES)
    assert len(stub.requests) == 2 and sleeps == []


def test_json_schema_rejected_falls_back_to_json_object(stub):
    model, _ = make(stub)
    stub.reject_json_schema = True
    stub.answer({"kind": "update"})
    stub.answer({"kind": "task"})
    assert model.complete(MESSAGES, schema=SCHEMA).data == {"kind": "update"}
    first, second = stub.requests[:2]
    assert first["response_format"]["type"] == "json_schema"
    assert second["response_format"] == {"type": "json_object"}
    assert '"enum": ["task", "update"]' in second["messages"][0]["content"]  # the schema, in the prompt
    assert second["messages"][1:] == MESSAGES[1:]
    # the fallback is remembered: the next call asks for json_object straight away
    assert model.complete(MESSAGES, schema=SCHEMA).data == {"kind": "task"}
    assert len(stub.requests) == 3 and stub.requests[2]["response_format"] == {"type": "json_object"}


def test_json_object_rejected_too_falls_back_to_text(stub):
    model, _ = make(stub)
    stub.reject_json_schema = True
    stub.error(400, "unsupported response_format json_object", param="response_format")
    stub.answer('{"kind": "task"}')
    assert model.complete(MESSAGES, schema=SCHEMA).data == {"kind": "task"}
    assert "response_format" not in stub.requests[2]
    assert "JSON schema" in stub.requests[2]["messages"][0]["content"]


def test_other_bad_requests_are_errors_not_fallbacks(stub):
    model, _ = make(stub)
    stub.error(400, "messages must not be empty")
    with pytest.raises(LanguageModelError, match="HTTP 400.*messages must not be empty"):
        model.complete(MESSAGES, schema=SCHEMA)
    assert len(stub.requests) == 1


def test_unparseable_json_is_a_clear_error(stub):
    model, _ = make(stub, max_retries=0)  # one answer (malformed answers are retried: test_hostile_llm.py)
    answer = "I think it is a task. " + "x" * 400
    stub.answer(answer, prompt_tokens=8, completion_tokens=100)
    with pytest.raises(AnswerFormatError, match="not answer valid JSON") as info:
        model.complete(MESSAGES, schema=SCHEMA)
    assert isinstance(info.value, LanguageModelError)
    assert repr(answer[:200]) in str(info.value) and answer[:201] not in str(info.value)
    assert info.value.text == answer
    assert info.value.usage.completion_tokens == 100


def test_truncated_answer_says_so(stub):
    model, _ = make(stub, max_retries=0)
    stub.answer('{"kind": "ta', finish_reason="length")
    with pytest.raises(AnswerFormatError, match="token limit"):
        model.complete(MESSAGES, schema=SCHEMA)


def test_api_key_is_never_shown_or_pickled(stub):
    model, _ = make(stub)
    assert SECRET not in repr(model) and "test-model" in repr(model)
    assert SECRET not in str(vars(model).get("base_url"))
    assert SECRET.encode() not in pickle.dumps(model)


def test_unpickled_model_rebuilds_its_client_from_the_environment(stub, monkeypatch):
    model, _ = make(stub)
    monkeypatch.setenv("OPENAI_API_KEY", "sk-from-env-456")
    copy = pickle.loads(pickle.dumps(model))
    stub.answer("hi")
    assert copy.complete(MESSAGES).text == "hi"
    assert stub.headers[0]["authorization"] == "Bearer sk-from-env-456"


def test_from_env(stub, monkeypatch):
    assert OpenAIModel.from_env() is None
    monkeypatch.setenv("OPENAI_BASE_URL", stub.url)
    model = OpenAIModel.from_env(max_retries=0)
    assert model is not None and model.base_url == stub.url and model.model == "gpt-4o-mini"
    stub.answer("hello")
    assert model.complete(MESSAGES).text == "hello"
    assert stub.headers[0]["authorization"] == "Bearer not-needed"  # local server, no key
    monkeypatch.setenv("OPENAI_MODEL", "qwen")
    assert OpenAIModel.from_env().model == "qwen"


def test_no_key_and_no_url_is_a_clear_error():
    with pytest.raises(LanguageModelError, match="OPENAI_API_KEY.*OPENAI_BASE_URL"):
        OpenAIModel()


def test_missing_openai_names_the_extra(monkeypatch):
    monkeypatch.setitem(sys.modules, "openai", None)  # import openai -> ImportError
    with pytest.raises(DependencyNotInstalled, match=r'pip install "servicerobot\[llm\]"'):
        OpenAIModel(base_url="http://127.0.0.1:1/v1")


def test_importing_the_language_package_does_not_import_openai():
    code = "import sys, servicerobot.language; assert 'openai' not in sys.modules"
    subprocess.run([sys.executable, "-c", code], check=True)
