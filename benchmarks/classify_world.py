"""Task-or-update classification of the household world's own utterances, by the rule interpreter and the
local model: what decides whether the agent hears a task at all (Table I with the model lost most of its
tasks there).

The utterances are every one said in episodes of the Table I setting (default house, 4 tasks, verbal
updates; the robot only waits), labelled by the world: a task's announcement is a task, anything else
(verbal updates, remarks) an update. Prints one JSON line: per interpreter, tasks heard as tasks, updates
heard as updates, seconds per call (median); `--rows FILE` writes every answer. The model is the server at
`$SERVICEROBOT_LOCAL_LLM_URL` (or `--url`); with neither, only the rule interpreter is scored.

    python benchmarks/classify_world.py --seeds 0-9
    python benchmarks/classify_world.py --quick      # seed 0
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import sys
import time

from servicerobot.files import write_atomic
from servicerobot.language.local_server import LOCAL_LLM_URL_VAR, local_interpreter
from servicerobot.language.rule_interpreter import RuleInterpreter


def world_utterances(seeds: list[int], size: str = "default", n_tasks: int = 4) -> list[dict]:
    """Every distinct (speaker, text) said in these episodes, with the world's label, the seed and the
    context the agent classifies it in (its prior memory's entities, no facts)."""
    import gymnasium as gym

    import servicerobot  # noqa: F401  (registers the ids)
    from servicerobot.envs.observation import decode
    from servicerobot.language.interpreter import Context
    from servicerobot.memory.graph import KnowledgeGraph

    seen: dict[tuple[str, str], dict] = {}
    for seed in seeds:
        env = gym.make("ServiceRobot-v0", size=size, n_tasks=n_tasks, update_mode="verbal")
        obs, info = env.reset(seed=seed)
        domain = env.unwrapped.world.domain
        kg = KnowledgeGraph.from_prior(domain, decode(obs).prior, "robot")
        context = Context(domain, kg.entities, frozenset(), "robot")
        tasks, said = {info["task"]}, []
        while True:
            said += decode(obs).utterances
            obs, _, terminated, truncated, info = env.step("(wait)")
            if info.get("task"):
                tasks.add(info["task"])
            if terminated or truncated:
                break
        env.close()
        for speaker, text in said:
            seen.setdefault((speaker, text), {"seed": seed, "speaker": speaker, "text": text, "context": context,
                                              "kind": "task" if text in tasks else "update"})
    return list(seen.values())


def _seeds(text: str) -> list[int]:
    lo, _, hi = text.partition("-")
    return list(range(int(lo), int(hi or lo) + 1))


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--seeds", default="0-9", help="episode seeds, e.g. 0-9 (default) or 3")
    parser.add_argument("--quick", action="store_true", help="seed 0 only (about 30 utterances)")
    parser.add_argument("--url", default=os.environ.get(LOCAL_LLM_URL_VAR), help="the local server's URL")
    parser.add_argument("--rows", help="write every answer to this JSON file")
    args = parser.parse_args(argv)
    if args.quick:
        args.seeds = "0"
    items = world_utterances(_seeds(args.seeds))
    interpreters = {"rules": RuleInterpreter()}
    if args.url:
        interpreters["local-llm"] = local_interpreter(args.url)
    out: dict = {"benchmark": "classify_world", "seeds": args.seeds, "utterances": len(items),
                 "tasks": sum(i["kind"] == "task" for i in items)}
    rows: dict = {}
    for label, interpreter in interpreters.items():
        answers, seconds = [], []
        for item in items:
            t0 = time.perf_counter()
            try:
                kind = interpreter.classify(item["text"], item["speaker"], item["context"])
            except Exception as exc:  # noqa: BLE001 - a failed call is a wrong answer, recorded
                kind = f"error: {exc}"
            seconds.append(time.perf_counter() - t0)
            answers.append({**{k: v for k, v in item.items() if k != "context"}, "answer": kind})
        right = {k: sum(a["answer"] == a["kind"] for a in answers if a["kind"] == k) for k in ("task", "update")}
        out[label] = {"tasks_heard": right["task"], "updates_heard": right["update"],
                      "accuracy": round(sum(right.values()) / len(items), 3) if items else None,
                      "s_per_call_median": round(statistics.median(seconds), 3) if seconds else None}
        rows[label] = answers
    if args.rows:
        write_atomic(args.rows, json.dumps(rows, indent=1))
    print(json.dumps(out))
    return 0


if __name__ == "__main__":
    sys.exit(main())
