"""Cassette: record a real model over HTTP, replay offline; keys, misses, secrets, atomic files."""

from __future__ import annotations

import json

import pytest

pytest.importorskip("openai")


from servicerobot.language import (
    AnswerFormatError,
    Cassette,
    LanguageModel,
    LanguageModelError,
    OpenAIModel,
    cassette_key,
)

SCHEMA = {"type": "object", "properties": {"kind": {"type": "string"}}, "required": ["kind"]}
SECRET = "sk-test-SECRET-cassette-987654"


def conversation(text: str) -> list[dict]:
    return [{"role": "system", "content": "Classify."}, {"role": "user", "content": text}]


def model_for(stub) -> OpenAIModel:
    return OpenAIModel("test-model", base_url=stub.url, api_key=SECRET, timeout=5.0, max_retries=0)


def test_record_then_replay_with_the_server_stopped(stub, tmp_path):
    path = tmp_path / "tape.json"
    recorder = Cassette(path, mode="record", model=model_for(stub))
    assert isinstance(recorder, LanguageModel)
    stub.answer({"kind": "task"}, prompt_tokens=30, completion_tokens=4)
    stub.answer("free text", prompt_tokens=20, completion_tokens=2)
    stub.answer({"kind": "update"}, prompt_tokens=31, completion_tokens=5)
    live = [recorder.complete(conversation("a"), schema=SCHEMA),
            recorder.complete(conversation("b")),
            recorder.complete(conversation("a"), schema=SCHEMA)]  # same request, a different answer
    assert len(stub.requests) == 3 and len(recorder) == 3
    stub.stop()

    player = Cassette(path)  # replay is the default
    assert player.name == "cassette:openai:test-model"
    replayed = [player.complete(conversation("a"), schema=SCHEMA),
                player.complete(conversation("b")),
                player.complete(conversation("a"), schema=SCHEMA)]
    assert replayed == live  # text, data and usage, in recorded order per request
    assert replayed[0].data == {"kind": "task"} and replayed[2].data == {"kind": "update"}
    assert replayed[0].usage.prompt_tokens == 30 and replayed[0].usage.calls == 1
    # once a request's answers run out, the last one is served again
    assert player.complete(conversation("a"), schema=SCHEMA).data == {"kind": "update"}
    assert player.hits == 4 and player.misses == 0


def test_the_key_covers_messages_schema_and_temperature():
    base = cassette_key(conversation("a"), SCHEMA, 0.0)
    assert base == cassette_key(conversation("a"), dict(reversed(list(SCHEMA.items()))), 0)
    assert len({base, cassette_key(conversation("b"), SCHEMA, 0.0), cassette_key(conversation("a"), None, 0.0),
                cassette_key(conversation("a"), SCHEMA, 0.7)}) == 4


def test_replay_miss_says_how_to_re_record(stub, tmp_path):
    path = tmp_path / "tape.json"
    stub.answer("hi")
    Cassette(path, mode="record", model=model_for(stub)).complete(conversation("a"))
    with pytest.raises(LanguageModelError, match='mode="record"') as info:
        Cassette(path).complete(conversation("something new"))
    assert "something new" in str(info.value) and str(path) in str(info.value)


def test_replay_of_a_missing_or_foreign_file(tmp_path):
    with pytest.raises(LanguageModelError, match="no cassette at .*record one"):
        Cassette(tmp_path / "absent.json")
    (tmp_path / "other.json").write_text('{"hello": 1}')
    with pytest.raises(LanguageModelError, match="not a servicerobot-cassette"):
        Cassette(tmp_path / "other.json")
    with pytest.raises(ValueError, match="needs the model"):
        Cassette(tmp_path / "x.json", mode="record")
    with pytest.raises(ValueError, match="mode"):
        Cassette(tmp_path / "x.json", mode="rewind")


def test_auto_replays_hits_and_records_misses(stub, tmp_path):
    path = tmp_path / "tape.json"
    stub.answer("first")
    Cassette(path, mode="record", model=model_for(stub)).complete(conversation("a"))
    auto = Cassette(path, mode="auto", model=model_for(stub))
    stub.answer("second")
    assert auto.complete(conversation("a")).text == "first"  # hit: no request
    assert auto.complete(conversation("b")).text == "second"  # miss: asked and recorded
    assert len(stub.requests) == 2 and (auto.hits, auto.misses) == (1, 1)
    stub.stop()
    replay = Cassette(path)
    assert [replay.complete(conversation(t)).text for t in "ab"] == ["first", "second"]


def test_record_mode_starts_a_new_cassette(stub, tmp_path):
    path = tmp_path / "tape.json"
    stub.answer("old")
    Cassette(path, mode="record", model=model_for(stub)).complete(conversation("old"))
    stub.answer("new")
    Cassette(path, mode="record", model=model_for(stub)).complete(conversation("new"))
    replay = Cassette(path)
    assert len(replay) == 1 and replay.complete(conversation("new")).text == "new"


def test_malformed_answers_are_recorded_and_replayed_as_errors(stub, tmp_path):
    path = tmp_path / "tape.json"
    recorder = Cassette(path, mode="record", model=model_for(stub))
    stub.answer("not json at all", completion_tokens=9)
    with pytest.raises(AnswerFormatError):
        recorder.complete(conversation("a"), schema=SCHEMA)
    stub.stop()
    with pytest.raises(AnswerFormatError, match="not json at all") as info:
        Cassette(path).complete(conversation("a"), schema=SCHEMA)
    assert info.value.text == "not json at all" and info.value.usage.completion_tokens == 9


def test_no_api_key_or_headers_in_the_file(stub, tmp_path, monkeypatch):
    monkeypatch.setenv("OPENAI_API_KEY", SECRET)
    path = tmp_path / "tape.json"
    recorder = Cassette(path, mode="record", model=model_for(stub))
    stub.answer(f"the key is {SECRET}")  # even an answer that echoes the key
    recorder.complete(conversation("tell me the key"))
    assert stub.headers[0]["authorization"] == f"Bearer {SECRET}"  # it was sent to the server...
    text = path.read_text()
    assert SECRET not in text and "<redacted>" in text  # ...but never written
    assert "authorization" not in text.lower() and "bearer" not in text.lower()
    assert SECRET not in repr(recorder)
    doc = json.loads(text)
    assert doc["format"] == "servicerobot-cassette/1" and doc["model"] == "openai:test-model"
    assert set(doc["exchanges"][0]) == {"key", "messages", "schema", "temperature", "text", "data", "usage"}
    assert [p.name for p in tmp_path.iterdir()] == ["tape.json"]  # no temp file left behind
