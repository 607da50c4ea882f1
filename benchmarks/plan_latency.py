"""Does retrieval pay? Retrieval-plus-planning time vs planning on the whole knowledge graph, both with Fast Downward.

For each seeded episode of the chosen preset (default `large`: 40 rooms, 800 items, 1,051 entities), the
first task is interpreted by the rule interpreter, then planned twice from the same memory: by the
`search-rag` agent (search retrieval + goal entities + the room/fixture layers -> a small problem) and by
the `full-kg` agent (every fact). Prints one JSON line with both medians and `speedup` (ratio of medians).

    python benchmarks/plan_latency.py --episodes 20
"""

from __future__ import annotations

import argparse
import json
import statistics
import sys
import time

import gymnasium as gym

import servicerobot  # noqa: F401  (registers the env)
from servicerobot.agent import AgentStep, ServiceAgent
from servicerobot.language.rule_interpreter import RuleInterpreter
from servicerobot.planners import FastDownward


def measure(seed: int, size: str, timeout: float) -> dict | None:
    env = gym.make("ServiceRobot-v0", size=size)
    obs, _ = env.reset(seed=seed)
    planner = FastDownward(alias="lama-first", timeout=timeout)
    rag = ServiceAgent.from_env(env, variant="search-rag", interpreter=RuleInterpreter(), planner=planner,
                                fallback_to_full=False, keep_history=False)
    rag.act(obs)  # reads the prior, interprets the task, plans once (warm-up: caches, FD start-up)
    if rag.task is None or rag.task.goal is None:
        return None
    full = ServiceAgent.from_env(env, variant="full-kg", interpreter=RuleInterpreter(), planner=planner,
                                 fallback_to_full=False, keep_history=False)
    full.memory, full.task = rag.memory, rag.task  # the same memory and goal
    out = {"seed": seed, "goal": rag.task.goal[:80]}
    for name, agent in (("search-rag", rag), ("full-kg", full)):
        stats = AgentStep(0)
        t0 = time.perf_counter()
        agent._plan(stats)
        out[name] = {"seconds": time.perf_counter() - t0, "facts": stats.retrieved_facts,
                     "plan_length": len(agent.task.plan), "solved": bool(agent.task.plan)}
    return out


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--episodes", type=int, default=20)
    parser.add_argument("--size", default="large")
    parser.add_argument("--timeout", type=float, default=600.0, help="Fast Downward time limit per call (s)")
    parser.add_argument("--quick", action="store_true", help="2 episodes on the default house (a smoke run)")
    args = parser.parse_args(argv)
    if args.quick:
        args.episodes, args.size, args.timeout = min(args.episodes, 2), "default", min(args.timeout, 20.0)
    rows = []
    for seed in range(args.episodes):
        row = measure(seed, args.size, args.timeout)
        if row is not None:
            rows.append(row)
            print(json.dumps(row), file=sys.stderr, flush=True)
    both = [r for r in rows if r["search-rag"]["solved"] and r["full-kg"]["solved"]]
    rag = statistics.median(r["search-rag"]["seconds"] for r in both)
    full = statistics.median(r["full-kg"]["seconds"] for r in both)
    print(json.dumps({"benchmark": "plan_latency", "size": args.size, "tasks": len(rows), "both_solved": len(both),
               "rag_solved": sum(r["search-rag"]["solved"] for r in rows),
               "full_solved": sum(r["full-kg"]["solved"] for r in rows),
               "median_retrieval_plus_planning_s": round(rag, 4), "median_full_graph_planning_s": round(full, 4),
               "median_facts_retrieved": statistics.median(r["search-rag"]["facts"] for r in both),
               "median_facts_full": statistics.median(r["full-kg"]["facts"] for r in both),
               "speedup": round(full / rag, 2)}))


if __name__ == "__main__":
    main()
