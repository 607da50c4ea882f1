"""Context Matters on generated 3D scene graphs: the offline relaxing planner beside LLM+P without relaxation
and a DELTA-style pipeline, plus two ablations of the relaxer's shifting.

Prints one JSON line: per method, the acceptable-goal rate (all / infeasible / feasible instances) and the
world-success rate with 95% Wilson intervals, agreement with `relaxation_expected` and its confusion
matrix, shifts to an unacceptable object, planner calls and seconds per instance.

    python benchmarks/context_matters.py             # 180 instances (the shipped config's set)
    python benchmarks/context_matters.py --quick     # 24 instances

Ablations: `cm-offline-nogate` drops the functional gate of the shift score (any similar object may stand
in); `cm-offline-noshift` never shifts (everything missing is dropped).

`--local-llm 5 36` instead runs the LLM path (2 outer x 1 inner iterations) on those instances against the
packaged local model (the `local-llm` extra, served by `LocalServer`), as plain chat with a 700-token cap
(a JSON-schema grammar made one answer take over 10 minutes on 2 busy cores), recording to
`cm_real_<i>.json` cassettes. Minutes per instance on a 2-core CPU.
"""

from __future__ import annotations

import argparse
import json
import time

from servicerobot.envs.context_matters import EQUIVALENTS, generate_index
from servicerobot.experiments.cm import score_result, solve
from servicerobot.experiments.stats import wilson
from servicerobot.planners import get_planner
from servicerobot.planners.relaxation import OfflineInterpreter, relaxing_plan

METHODS = ("cm-offline", "llmp-offline", "delta-offline", "cm-offline-nogate", "cm-offline-noshift")


def _rate(k: int, n: int) -> dict:
    lo, hi = wilson(k, n)
    return {"k": k, "n": n, "rate": round(k / n, 4) if n else None, "wilson95": [round(lo, 4), round(hi, 4)]}


def run(method: str, inst, planner):
    """One method on one instance."""
    if method in ("cm-offline-nogate", "cm-offline-noshift"):
        interp = OfflineInterpreter(min_affordance=0.0) if method.endswith("nogate") else \
            OfflineInterpreter(shift_threshold=1.01)
        return relaxing_plan(inst.world(), inst.task, interp, planner, method=method)
    return solve(method, inst.world(), inst.task, {"planner_timeout": 30})


class _CappedLocal:
    """The local llama.cpp server through the openai client: plain chat, at most `max_tokens` per answer."""

    def __init__(self, url: str, name: str, max_tokens: int = 700):
        from openai import OpenAI

        self.client = OpenAI(base_url=url, api_key="local", timeout=1200, max_retries=0)
        self.name, self.max_tokens = name, max_tokens

    def complete(self, messages, *, schema=None, temperature=0.0):
        from servicerobot.language.answers import parse_json_answer
        from servicerobot.language.base import Completion, Usage

        answer = self.client.chat.completions.create(model=self.name, messages=messages, temperature=temperature,
                                                     max_tokens=self.max_tokens)
        text = answer.choices[0].message.content or ""
        usage = Usage(answer.usage.prompt_tokens, answer.usage.completion_tokens, 1) if answer.usage else Usage()
        return Completion(text, parse_json_answer(text, self.name, usage), usage)


def local_llm(indices: list[int], seed: int) -> dict:
    """The LLM path with the packaged local model on generated instances (see the module docstring)."""
    from servicerobot.language.cassette import Cassette
    from servicerobot.language.local_server import LocalServer
    from servicerobot.planners.relaxation import LLMRelaxInterpreter

    runs = []
    with LocalServer(n_ctx=8192) as server:
        model = _CappedLocal(server.url, server.model.name)
        for index in indices:
            inst = generate_index(index, seed)
            interp = LLMRelaxInterpreter(Cassette(f"cm_real_{index}.json", mode="record", model=model))
            start = time.perf_counter()
            result = relaxing_plan(inst.world(), inst.task, interp, get_planner("fast-downward", timeout=20),
                                   max_outer=2, max_inner=1)
            cm = score_result(inst, result)
            runs.append({"instance": index, "variant": inst.variant, "seconds": round(time.perf_counter() - start, 1),
                         "calls": interp.calls, "usage": interp.usage.to_json(),
                         **{k: cm[k] for k in ("planned", "success", "relaxed", "acceptable_goal", "failure")},
                         "first_messages": [it["messages"][:1] for it in result.iterations]})
    return {"benchmark": "context_matters_local_llm", "model": server.model.name, "runs": runs}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--instances", type=int, default=180)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--methods", nargs="*", default=list(METHODS), choices=METHODS)
    parser.add_argument("--quick", action="store_true", help="24 instances")
    parser.add_argument("--local-llm", nargs="+", type=int, metavar="INDEX",
                        help="run the LLM path with the packaged local model on these instances instead")
    args = parser.parse_args()
    if args.local_llm:
        print(json.dumps(local_llm(args.local_llm, args.seed)))
        return
    n = 24 if args.quick else args.instances
    instances = [generate_index(i, args.seed) for i in range(n)]
    planner = get_planner("fast-downward", timeout=30)
    out = {"benchmark": "context_matters", "instances": n, "seed": args.seed,
           "infeasible": sum(i.relaxation_expected for i in instances), "methods": {}}
    for method in args.methods:
        cms, start = [], time.perf_counter()
        bad_shifts = 0
        for inst in instances:
            result = run(method, inst, planner)
            cms.append(score_result(inst, result))
            world = inst.world()
            bad_shifts += sum(world.objects[s["use"]].class_ not in EQUIVALENTS.get(s["missing"], ())
                              for s in result.shifts)
        inf = [c for c in cms if c["relaxation_expected"]]
        fea = [c for c in cms if not c["relaxation_expected"]]
        out["methods"][method] = {
            "acceptable": _rate(sum(bool(c["acceptable_goal"]) for c in cms), len(cms)),
            "acceptable_infeasible": _rate(sum(bool(c["acceptable_goal"]) for c in inf), len(inf)),
            "acceptable_feasible": _rate(sum(bool(c["acceptable_goal"]) for c in fea), len(fea)),
            "world_success": _rate(sum(c["world_success"] for c in cms), len(cms)),
            "cm_success": _rate(sum(c["success"] for c in cms), len(cms)),
            "agreement": _rate(sum(c["agreement"] for c in cms), len(cms)),
            "confusion": {"relaxed_expected": sum(c["relaxed"] and c["relaxation_expected"] for c in cms),
                          "relaxed_unexpected": sum(c["relaxed"] and not c["relaxation_expected"] for c in cms),
                          "kept_expected": sum(not c["relaxed"] and c["relaxation_expected"] for c in cms),
                          "kept_unexpected": sum(not c["relaxed"] and not c["relaxation_expected"] for c in cms)},
            "unacceptable_shifts": bad_shifts,
            "planner_calls_mean": round(sum(c["planner_calls"] for c in cms) / len(cms), 2),
            "seconds_per_instance": round((time.perf_counter() - start) / len(cms), 3),
        }
    print(json.dumps(out))


if __name__ == "__main__":
    main()
