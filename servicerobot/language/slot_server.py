"""llama-cpp-python's OpenAI-compatible server with one model context ("slot") per kind of request.

llama.cpp reuses only the prefix a prompt shares with the previous prompt of the same context. The agent's
calls alternate between kinds (classify, query graph, update, goal) whose system prompts and few-shot turns
differ, so with one context every call evaluated its whole prompt again. Here a request whose model name is
`<alias>/<slot>` runs in that slot's own context (loaded on first use; the weights are one shared mmap), so
each kind's fixed prefix is evaluated once; any other name runs in the default context. With `--threads 0`
the prompt is evaluated on the cores idle just before each request, and tokens are generated on one thread:
on 2 idle cores 2 threads evaluated a prompt 1.9x as fast as 1 but generated only 1.2x as fast, while with
more threads than free cores llama.cpp slows down 4-6x. Greedy answers under a grammar take the short
path of `servicerobot.language.greedy_grammar` (the same tokens, 20 instead of ~29 ms each on one thread).
Every request is checked first by `servicerobot.language.request_guard` (sizes, counts, grammars), and what
llama.cpp could not run is answered 4xx with the reason.

    python -m servicerobot.language.slot_server --model M.gguf --alias NAME --slots kind,update --port 8000
"""

from __future__ import annotations

import argparse
import os
import sys
import time

from servicerobot.language import greedy_grammar
from servicerobot.language.request_guard import RequestGuard, RequestLimits

__all__ = ["MAX_ANSWERS", "add_score_route", "idle_cores", "main", "usable_cores"]

MAX_ANSWERS = 4096  # candidates one /v1/score request may ask about
_MAX_ANSWER_CHARS = 2000
_SAMPLE_S = 0.1  # how long the idle cores are watched before a request: ~20 scheduler ticks on 2 cores


def usable_cores() -> int:
    """The CPU cores this process may run on."""
    try:
        return len(os.sched_getaffinity(0))
    except AttributeError:  # not Linux
        return os.cpu_count() or 1


def _cpu_times() -> tuple[int, int]:
    """(idle, total) jiffies over all cores, from /proc/stat."""
    with open("/proc/stat") as fh:
        values = [int(v) for v in fh.readline().split()[1:]]
    return values[3] + values[4], sum(values)  # idle + iowait


def idle_cores(sample: float = _SAMPLE_S) -> float:
    """How many cores sat idle during the next `sample` seconds (the machine's whole count where /proc/stat
    is unreadable)."""
    try:
        idle0, total0 = _cpu_times()
        time.sleep(sample)
        idle1, total1 = _cpu_times()
    except (OSError, ValueError, IndexError):
        return float(os.cpu_count() or 1)
    if total1 <= total0:
        return float(os.cpu_count() or 1)
    return (idle1 - idle0) / (total1 - total0) * (os.cpu_count() or 1)


def _threads_for_now(most: int) -> int:
    """Threads for the next request: the idle cores (rounded down, a half-busy core counts as busy), 1..most."""
    return max(1, min(most, int(idle_cores() + 0.25)))


class _SharedModel:
    """A loaded `llama_cpp._internals.LlamaModel` lent to another `Llama`, which must not free it."""

    def __init__(self, model) -> None:
        self._shared = model

    def __getattr__(self, name: str):
        return getattr(self._shared, name)

    def close(self) -> None:
        """The owner frees the model."""


def _load_sharing(settings, model):
    """A `Llama` for `settings` with a context of its own over the already loaded `model`'s weights.

    llama.cpp repacks quantised weights for the CPU into memory of their own, so a second load of the same
    GGUF costs its size again (six slots of the 1.5B model took 13 GB): every slot shares the first's."""
    import llama_cpp._internals as internals
    from llama_cpp.server.model import LlamaProxy

    loader = internals.LlamaModel
    internals.LlamaModel = lambda *args, **kwargs: _SharedModel(model)
    try:
        return LlamaProxy.load_llama_from_model_settings(settings)
    finally:
        internals.LlamaModel = loader


def _resident_proxy(threads: int, most: int, verbose: bool = False):
    """A `LlamaProxy` that keeps every slot's context loaded (over one copy of the weights) instead of
    swapping one model in and out."""
    import llama_cpp
    from llama_cpp.server.model import LlamaProxy

    class ResidentProxy(LlamaProxy):
        def __init__(self, models) -> None:
            super().__init__(models)
            self._loaded = {self._default_model_alias: self._current_model}

        def __call__(self, model: str | None = None):
            alias = model if model in self._model_settings_dict else self._default_model_alias
            llama = self._loaded.get(alias)
            if llama is None:
                base = self._loaded[self._default_model_alias]
                llama = self._loaded[alias] = _load_sharing(self._model_settings_dict[alias], base._model)
                greedy_grammar.install(llama)  # same tokens, without matching the whole vocabulary each time
            if threads == 0:
                n = _threads_for_now(most)
                llama_cpp.llama_set_n_threads(llama.ctx, 1, n)  # (generation, prompt evaluation)
                if verbose:
                    print(f"slot {alias}: {n} thread(s) for the prompt", file=sys.stderr, flush=True)
            return llama

        def free(self) -> None:
            default = self._loaded.pop(self._default_model_alias, None)
            for llama in self._loaded.values():  # the slots sharing its weights first
                llama.close()
            if default is not None:
                default.close()
            self._loaded.clear()

    return ResidentProxy


def add_score_route(app, threads: int, most: int, verbose: bool = False) -> None:
    """`POST /v1/score` (servicerobot's extension of the OpenAI API): `{"model": "<alias>[/<slot>]",
    "messages": [...], "answers": ["...", ...]}` -> `{"logprobs": [[per token], ...], "usage": {...}}`, each
    answer scored as the assistant's whole reply (`servicerobot.language.scoring`). Each slot scores in a
    context of its own beside its chat context, so its prompt prefix stays evaluated between calls."""
    from fastapi import Body, Depends, HTTPException
    from llama_cpp.server.app import get_llama_proxy
    from starlette.concurrency import run_in_threadpool

    from servicerobot.language.scoring import CandidateScorer

    scorers: dict[str, CandidateScorer] = {}

    def run(llama_proxy, model: str | None, messages: list, answers: list, beam: int | None,
            keep: list[int], budget: float | None) -> dict:
        alias = model if model in llama_proxy._model_settings_dict else llama_proxy._default_model_alias
        llama = llama_proxy(alias)
        scorer = scorers.get(alias)
        if scorer is None:
            scorer = scorers[alias] = CandidateScorer(llama, n_ctx=4096, n_batch=512, threads=threads or 1)
        n = threads or _threads_for_now(most)
        scorer.set_threads(n)
        t0 = time.perf_counter()
        scored = scorer.score(messages, answers, beam=beam, keep=keep, budget=budget)
        if verbose:
            print(f"score {alias}: {len(answers)} answers, {scored.prompt_tokens} prompt + "
                  f"{scored.candidate_tokens} candidate tokens, {n} thread(s), "
                  f"{time.perf_counter() - t0:.2f} s", file=sys.stderr, flush=True)
        return {"model": alias, "logprobs": scored.logprobs,
                "usage": {"prompt_tokens": scored.prompt_tokens, "candidate_tokens": scored.candidate_tokens,
                          "completion_tokens": 0, "cut": scored.cut}}

    @app.post("/v1/score", tags=["servicerobot"])
    async def score(body: dict = Body(...), llama_proxy=Depends(get_llama_proxy)) -> dict:  # noqa: B008
        messages, answers = body.get("messages"), body.get("answers")
        if not isinstance(messages, list) or not messages or not all(
                isinstance(m, dict) and isinstance(m.get("role"), str) and isinstance(m.get("content"), str)
                for m in messages):
            raise HTTPException(422, "messages must be a non-empty list of {role, content} strings")
        if not isinstance(answers, list) or not answers or len(answers) > MAX_ANSWERS or not all(
                isinstance(a, str) and 0 < len(a) <= _MAX_ANSWER_CHARS for a in answers):
            raise HTTPException(422, f"answers must be a list of 1..{MAX_ANSWERS} non-empty strings of at most "
                                     f"{_MAX_ANSWER_CHARS} characters")
        model = body.get("model") if isinstance(body.get("model"), str) else None
        beam = body.get("beam")
        if beam is not None and (not isinstance(beam, int) or isinstance(beam, bool) or not 1 <= beam <= 64):
            raise HTTPException(422, f"beam must be an integer from 1 to 64, got {beam!r}")
        keep = body.get("keep", [])
        if not isinstance(keep, list) or not all(isinstance(i, int) and not isinstance(i, bool) and
                                                 0 <= i < len(answers) for i in keep) or (keep and beam is None):
            raise HTTPException(422, f"keep must be a list of answer indices (0..{len(answers) - 1}) given with "
                                     f"beam, got {str(keep)[:80]}")
        budget = body.get("budget_s")
        if budget is not None and (isinstance(budget, bool) or not isinstance(budget, (int, float)) or
                                   not 0 <= budget <= 3600 or beam is None):
            raise HTTPException(422, f"budget_s must be seconds from 0 to 3600 given with beam, got {str(budget)[:40]}")
        try:
            return await run_in_threadpool(run, llama_proxy, model, messages, answers, beam, keep, budget)
        except ValueError as exc:  # too long for the scoring context, an unusable template
            raise HTTPException(422, str(exc)) from None


def _vocab_size(model_path: str) -> int:
    """The model's vocabulary size, from its vocabulary alone (the weights are not loaded)."""
    from llama_cpp import Llama

    return Llama(model_path=model_path, vocab_only=True, verbose=False).n_vocab()


def main(argv: list[str] | None = None) -> int:
    """Serve until the process is stopped."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--model", required=True, help="the GGUF file")
    parser.add_argument("--alias", required=True, help="the default model name; slots answer to ALIAS/SLOT")
    parser.add_argument("--slots", default="", help="comma-separated slot names (schema titles)")
    parser.add_argument("--host", default="127.0.0.1")
    parser.add_argument("--port", type=int, required=True)
    parser.add_argument("--n-ctx", type=int, default=8192)
    parser.add_argument("--n-batch", type=int, default=64)
    parser.add_argument("--threads", type=int, default=0,
                        help="model threads; 0: the idle cores at each request for the prompt, 1 for generating")
    parser.add_argument("--max-threads", type=int, default=4, help="the most threads --threads 0 uses")
    parser.add_argument("--verbose", action="store_true", help="llama.cpp's timings per request on stderr")
    args = parser.parse_args(argv)
    if args.threads < 0 or args.max_threads < 1:
        parser.error(f"--threads must be >= 0 and --max-threads >= 1, got {args.threads} and {args.max_threads}")

    import uvicorn
    from llama_cpp.server import app as server_app
    from llama_cpp.server.settings import ModelSettings, ServerSettings

    most = max(1, min(args.max_threads, usable_cores()))
    start = args.threads or 1  # the context is built with this; --threads 0 resets it per request
    common = {"model": args.model, "n_ctx": args.n_ctx, "n_batch": args.n_batch, "n_threads": start,
              "n_threads_batch": start, "cache": False, "verbose": args.verbose,
              # the server's default computes the vocabulary's logits for every prompt token (151k x 896
              # per token for Qwen2.5) and keeps them: only the last token's are sampled
              "logits_all": False}
    slots = [s.strip() for s in args.slots.split(",") if s.strip()]
    models = [ModelSettings(model_alias=args.alias, **common)]
    models += [ModelSettings(model_alias=f"{args.alias}/{slot}", **common) for slot in slots]
    # create_app builds its proxy from this module global; the stock one keeps a single model loaded
    server_app.LlamaProxy = _resident_proxy(args.threads, most, args.verbose)
    app = server_app.create_app(server_settings=ServerSettings(host=args.host, port=args.port),
                                model_settings=models)
    add_score_route(app, args.threads, most, args.verbose)
    # every request is checked before llama.cpp sees it; /v1/models is answered without waiting for the model
    guarded = RequestGuard(app, RequestLimits(vocab=_vocab_size(args.model)), models=[m.model_alias for m in models])
    uvicorn.run(guarded, host=args.host, port=args.port, log_level="warning")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
