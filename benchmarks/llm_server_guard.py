"""Hostile requests against a local model server of its own (issue 38): each must be answered 4xx with a
reason while the server lives, answers `/v1/models` meanwhile, and stays small.

Starts `servicerobot llm serve --model 0.5b --threads 1` on a free port (never a server someone else uses),
sends the issue's reproducers and more (crashing grammars, a 100 MB body, 100k messages, non-JSON, deep
JSON, schemas that would be written out to GBs), polls `/v1/models` while the largest are checked, then asks
one real grammar-constrained question. Prints one JSON line: requests, how many were sent (all, unless the
server died) and got the expected status, the unexpected ones, whether the server lived, the slowest `/v1/models` answer during the large requests,
and the server's peak RSS. Without the `local-llm` extra it prints `{"skipped": why}` and exits 0.

    python benchmarks/llm_server_guard.py            # the 100 MB body included
    python benchmarks/llm_server_guard.py --quick    # a 10 MB body instead
"""

from __future__ import annotations

import argparse
import importlib.util
import json
import threading
import time
import urllib.error
import urllib.request

from servicerobot.errors import install_hint
from servicerobot.language.local_server import SMALL_MODEL, LocalServer, parts_installed

CHAT = "/v1/chat/completions"


def _cases(model: str, big_mb: int) -> list[tuple[str, str, bytes, int]]:
    """(name, path, body, expected status)."""
    hello = [{"role": "user", "content": "hello"}]

    def chat(**fields) -> bytes:
        return json.dumps({"model": model, "messages": hello, **fields}).encode()

    def schema(s) -> bytes:
        return chat(response_format={"type": "json_object", "schema": s})

    deep = '{"model": "m", "messages": [], "x": ' + "[" * 2000 + "]" * 2000 + "}"
    return [
        ("grammar ((((", CHAT, chat(grammar="root ::= (((("), 422),
        ("grammar left recursion", CHAT, chat(grammar='root ::= root "a" | "a"'), 422),
        ("grammar nullable left recursion", CHAT, chat(grammar='root ::= ("a"?)*'), 422),
        ("grammar 5000 nested groups", CHAT, chat(grammar="root ::= " + "(" * 5000 + '"a"' + ")" * 5000), 422),
        ("grammar {3,2}", CHAT, chat(grammar='root ::= "a"{3,2}'), 422),
        ("grammar count 10**11", CHAT, chat(grammar='root ::= "a"{99999999999}'), 422),
        ("grammar undefined rule", CHAT, chat(grammar="root ::= x"), 422),
        ("schema maxLength 10**9", CHAT, schema({"type": "string", "maxLength": 10**9}), 422),
        ("schema pattern x{1,100000}", CHAT, schema({"type": "string", "pattern": "^x{1,100000}$"}), 422),
        (f"{big_mb} MB score message", "/v1/score", json.dumps({"model": model, "answers": ["a"], "messages": [
            {"role": "user", "content": "x" * (big_mb << 20)}]}).encode(), 413),
        ("100k one-character messages", CHAT, json.dumps({"model": model, "messages": [
            {"role": "user", "content": "a"}] * 100_000}).encode(), 422),
        ("300k-character message", CHAT, json.dumps({"model": model, "messages": [
            {"role": "user", "content": "a " * 150_000}]}).encode(), 422),
        ("not JSON", CHAT, b"this is not json", 400),
        ("JSON array", CHAT, b"[1, 2]", 400),
        ("messages []", CHAT, json.dumps({"model": model, "messages": []}).encode(), 422),
        ("2000-deep JSON", CHAT, deep.encode(), 400),
        ("NaN", CHAT, b'{"messages": [{"role": "user", "content": "a"}], "temperature": NaN}', 400),
        ("lone surrogate", CHAT, b'{"messages": [{"role": "user", "content": "\\ud800"}]}', 422),
        ("max_tokens 10**9", CHAT, chat(max_tokens=10**9), 422),
        ("two prompts", "/v1/completions", json.dumps({"prompt": ["a", "b"]}).encode(), 422),
        ("tokenize 300k characters", "/extras/tokenize", json.dumps({"input": "a" * 300_000}).encode(), 422),
    ]


def _post(base: str, path: str, body: bytes, timeout: float = 300) -> tuple[int, str]:
    request = urllib.request.Request(base + path, body, {"Content-Type": "application/json"})
    try:
        with urllib.request.urlopen(request, timeout=timeout) as response:
            return response.status, response.read().decode()
    except urllib.error.HTTPError as error:
        return error.code, error.read().decode()
    except (urllib.error.URLError, OSError) as error:
        return 0, str(error)


def _peak_rss_mb(pid: int) -> float:
    with open(f"/proc/{pid}/status") as fh:
        return next(int(line.split()[1]) for line in fh if line.startswith("VmHWM")) / 1024


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="a 10 MB body instead of 100 MB")
    args = parser.parse_args(argv)
    if importlib.util.find_spec("llama_cpp") is None or not parts_installed(SMALL_MODEL):
        print(json.dumps({"benchmark": "llm_server_guard",
                          "skipped": f"needs the local model (llama-cpp-python and the 0.5B parts): {install_hint('local-llm')}"}))
        return 0
    with LocalServer(model=SMALL_MODEL, threads=1, n_ctx=2048) as server:
        base = server.url.removesuffix("/v1")
        pid = server.process.pid
        cases = _cases(SMALL_MODEL.name, 10 if args.quick else 100)
        unexpected, models_s, sent = [], [], 0
        for name, path, body, expected in cases:
            sent += 1
            done = threading.Event()

            def poll(done: threading.Event = done) -> None:
                while not done.is_set():
                    t0 = time.perf_counter()
                    try:
                        with urllib.request.urlopen(f"{server.url}/models", timeout=300) as response:
                            response.read()
                    except OSError:  # the server died: the main loop says so
                        return
                    models_s.append(time.perf_counter() - t0)
                    time.sleep(0.05)

            poller = threading.Thread(target=poll, daemon=True)
            poller.start()
            status, text = _post(base, path, body)
            done.set()
            poller.join()
            if status != expected:
                unexpected.append(f"{name}: {status or 'no answer'} (expected {expected}) {text[:120]}")
            if server.process.poll() is not None:
                break
        alive = server.process.poll() is None
        status, text = _post(base, CHAT, json.dumps({"model": SMALL_MODEL.name, "max_tokens": 2, "temperature": 0,
                                                     "messages": [{"role": "user", "content": "Is 2 + 2 = 4?"}],
                                                     "grammar": 'root ::= "yes" | "no"'}).encode()) if alive else (0, "")
        answer = json.loads(text)["choices"][0]["message"]["content"] if status == 200 else None
        print(json.dumps({"benchmark": "llm_server_guard", "requests": len(cases), "sent": sent,
                          "as_expected": sent - len(unexpected), "unexpected": "; ".join(unexpected) or "none",
                          "server": "alive" if alive else "died", "answer_after": answer or "none",
                          "models_polls": len(models_s), "models_max_s": round(max(models_s, default=0.0), 3),
                          "server_peak_rss_mb": round(_peak_rss_mb(pid), 1) if alive else "died"}))
    return 0 if alive and not unexpected and answer in ("yes", "no") else 1


if __name__ == "__main__":
    raise SystemExit(main())
