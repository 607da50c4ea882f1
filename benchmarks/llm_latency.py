"""Seconds and tokens per call of the local language model (compact prompts, grammar-constrained answers).

Each paraphrase item (`servicerobot/language/paraphrases.json`) makes the calls the agent makes for an
utterance: classify, the retrieval query (query graph for search-rag), and the update or goal. Prints one
JSON line: calls, median / p90 / mean seconds per call, per prompt kind, prompt and completion tokens, the
share of answers that parsed, and the load average before and after (other work on the cores slows the
model down). The server is `$SERVICEROBOT_LOCAL_LLM_URL` (or `--url`), else one is started here
(`servicerobot llm serve`: one context per kind of request, threads following the idle cores, each kind's
fixed prompt prefix evaluated once before the first call unless `--cold`). With neither a URL nor the
`local-llm` extra installed, it prints `{"skipped": why}` and exits 0 (`servicerobot bench` lists it as skipped).

    python benchmarks/llm_latency.py --items 20
    python benchmarks/llm_latency.py --quick          # 2 items

With `--log FILE` the server's llama.cpp timings go to FILE (or, with `--url`, are read from the log of a
server started with `servicerobot llm serve --verbose --log FILE`), and the JSON adds the prompt tokens the
model actually evaluated: those it could not reuse from the previous prompt of the same context.
"""

from __future__ import annotations

import argparse
import importlib.util
import json
import os
import re
import statistics
import sys
import time
from contextlib import ExitStack

from servicerobot.envs.household.language import LANGUAGE as HOUSEHOLD
from servicerobot.errors import install_hint
from servicerobot.language.answers import AnswerFormatError
from servicerobot.language.local_server import (
    DEFAULT_MODEL,
    LOCAL_LLM_URL_VAR,
    LocalServer,
    cache_dir,
    local_interpreter,
    parts_installed,
)
from servicerobot.language.paraphrases import load_paraphrases, setting


class _Timed:
    """Wraps a `LanguageModel` (and its `score`, which the default chooser calls): one row (kind, seconds,
    tokens, parsed) per call."""

    def __init__(self, model):
        self.model, self.name, self.rows = model, model.name, []

    def __getattr__(self, name):
        return getattr(self.model, name)

    def score(self, messages, answers, **options):
        t0 = time.perf_counter()
        row = {"kind": f"score:{options.get('slot') or 'default'}"}
        try:
            scored = self.model.score(messages, answers, **options)
            row.update(prompt=scored.prompt_tokens, completion=scored.candidate_tokens, parsed=True)
            return scored
        except Exception:
            row.update(prompt=0, completion=0, parsed=False)
            raise
        finally:
            row["seconds"] = round(time.perf_counter() - t0, 3)
            self.rows.append(row)
            print(json.dumps(row), file=sys.stderr)

    def complete(self, messages, *, schema=None, temperature=0.0):
        t0 = time.perf_counter()
        row = {"kind": (schema or {}).get("title", "text")}
        try:
            completion = self.model.complete(messages, schema=schema, temperature=temperature)
            row.update(prompt=completion.usage.prompt_tokens, completion=completion.usage.completion_tokens,
                       parsed=completion.data is not None or schema is None)
            return completion
        except AnswerFormatError as exc:
            row.update(prompt=exc.usage.prompt_tokens, completion=exc.usage.completion_tokens, parsed=False)
            raise
        finally:
            row["seconds"] = round(time.perf_counter() - t0, 3)
            self.rows.append(row)
            print(json.dumps(row), file=sys.stderr)


def _stats(values: list[float]) -> dict:
    values = sorted(values)
    return {"calls": len(values), "median_s": round(statistics.median(values), 3),
            "p90_s": round(values[min(len(values) - 1, int(0.9 * len(values)))], 3),
            "mean_s": round(statistics.fmean(values), 3)}


_PROMPT_EVAL = re.compile(r"prompt eval time =\s*([\d.]+) ms /\s*(\d+) tokens")


def _evaluated(log: str | None, offset: int) -> dict:
    """Prompt tokens and seconds llama.cpp spent evaluating prompts, from its timings in `log` past `offset`."""
    if not log or not os.path.exists(log):
        return {}
    with open(log, "rb") as fh:
        fh.seek(offset)
        found = _PROMPT_EVAL.findall(fh.read().decode("utf-8", "replace"))
    return {"prompt_tokens_evaluated": sum(int(n) for _, n in found),
            "prompt_eval_s": round(sum(float(ms) for ms, _ in found) / 1000, 1), "timed_requests": len(found)}


def why_no_server() -> str | None:
    """Why no model server can be started here (None: one can), checked without starting one: the runtime
    (llama-cpp-python[server]) and the default model (its part packages, or the GGUF already joined)."""
    runtime = [m for m in ("llama_cpp", "uvicorn", "fastapi", "sse_starlette", "starlette_context", "pydantic_settings")
               if importlib.util.find_spec(m) is None]  # what LocalServer checks before it starts one
    joined = cache_dir() / DEFAULT_MODEL.filename
    if runtime:
        missing = f"llama-cpp-python[server] (missing: {', '.join(runtime)})"
    elif not (parts_installed() or (joined.is_file() and joined.stat().st_size == DEFAULT_MODEL.size)):
        missing = f"the packaged model {DEFAULT_MODEL.name}"
    else:
        return None
    return (f"no model server: neither --url nor ${LOCAL_LLM_URL_VAR} is set, and one cannot be started here "
            f"without {missing}: {install_hint('local-llm')}")


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--items", type=int, default=20, help="paraphrase items (half updates, half tasks)")
    parser.add_argument("--quick", action="store_true", help="2 items (6 calls)")
    parser.add_argument("--url", default=os.environ.get(LOCAL_LLM_URL_VAR), help="the local server's URL")
    parser.add_argument("--threads", type=int, default=None,
                        help="model threads when a server is started (default 0: the idle cores at each request)")
    parser.add_argument("--cold", action="store_true", help="do not warm a server started here")
    parser.add_argument("--log", default=None, help="the server's log with llama.cpp timings (see above)")
    args = parser.parse_args(argv)
    if not args.url and (reason := why_no_server()):  # an optional part: `servicerobot bench` lists it as skipped
        print(reason, file=sys.stderr)
        print(json.dumps({"benchmark": "llm_latency", "skipped": reason}))
        return 0
    n = 2 if args.quick else args.items
    everything = load_paraphrases()
    updates = [i for i in everything if i.kind == "update"]
    tasks = [i for i in everything if i.kind == "task"]
    items = [x for pair in zip(updates[::3], tasks[::2]) for x in pair][:n]  # spread over the kinds
    place = setting()
    load_before = os.getloadavg()
    offset = os.path.getsize(args.log) if args.log and os.path.exists(args.log) else 0
    with ExitStack() as stack:
        started = warmed = 0.0
        url = args.url
        if not url:
            t0 = time.perf_counter()
            server = stack.enter_context(LocalServer(threads=args.threads, log=args.log, verbose=bool(args.log)))
            url = server.url
            started = time.perf_counter() - t0
            if not args.cold:
                server.warm()
                warmed = time.perf_counter() - t0 - started
            if args.log:  # the calls' timings only, not the warm-up's
                offset = os.path.getsize(args.log)
        interpreter = local_interpreter(url, language=HOUSEHOLD)  # the paraphrases are the household's
        timed = _Timed(interpreter.model)
        interpreter.model = timed
        for item in items:
            context = place.context(item)
            try:
                interpreter.classify(item.text, item.speaker, context)
                interpreter.query_graph(item.text, item.speaker, context.__class__(
                    context.domain, context.entities, frozenset(), context.robot))
                if item.kind == "update":
                    interpreter.interpret_update(item.text, item.speaker, context)
                else:
                    interpreter.interpret_task(item.text, item.speaker, context)
            except Exception as exc:  # noqa: BLE001 - a wrong answer is fine here; time is measured
                print(f"{item.id}: {type(exc).__name__}: {str(exc)[:120]}", file=sys.stderr)
    rows = timed.rows
    kinds = sorted({r["kind"] for r in rows})
    out = {"benchmark": "llm_latency", "model": interpreter.model.name, "items": len(items),
           "server_start_s": round(started, 1), "warm_up_s": round(warmed, 1), "cores": os.cpu_count(),
           "threads": "given server" if args.url else (args.threads or "idle cores per request"),
           "load_avg_before": [round(x, 2) for x in load_before],
           "load_avg_after": [round(x, 2) for x in os.getloadavg()], **_stats([r["seconds"] for r in rows]),
           "per_kind": {k: _stats([r["seconds"] for r in rows if r["kind"] == k]) for k in kinds},
           "prompt_tokens_median": statistics.median(r["prompt"] for r in rows),
           "completion_tokens_median": statistics.median(r["completion"] for r in rows),
           "prompt_tokens_sent": sum(r["prompt"] for r in rows), "completion_tokens": sum(r["completion"] for r in rows),
           **_evaluated(args.log, offset),
           "parsed_share": round(sum(r["parsed"] for r in rows) / max(1, len(rows)), 3)}
    print(json.dumps(out))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
