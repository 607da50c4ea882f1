"""Oracle success rate: the share of generated tasks the oracle agent completes (upper bound, solvability).

Runs N seeded episodes of the default config with the oracle agent (Fast Downward on the true state) and
prints one JSON line: tasks completed / total with a 95% Wilson interval, per task kind, planning time.

    python benchmarks/oracle_success.py [--episodes 200] [--workers 2] [--size default]
"""

from __future__ import annotations

import argparse
import json
import time
from collections import Counter
from multiprocessing import Pool

import gymnasium as gym

import servicerobot  # noqa: F401
from servicerobot.experiments.stats import wilson
from servicerobot.oracle import OracleAgent


def run_episode(args: tuple[int, str, str]) -> dict:
    seed, size, mode = args
    env = gym.make("ServiceRobot-v0", size=size, update_mode=mode)
    agent = OracleAgent.from_env(env)
    obs, info = env.reset(seed=seed)
    kind = info["oracle"]["task_kind"]
    kinds, done_kinds, steps, resolved = [kind], [], 0, 0
    while True:
        obs, _, term, trunc, info = env.step(agent.act(obs))
        steps += 1
        if info["task_completed"]:
            done_kinds.append(kind)
        if info["tasks_completed"] + info["tasks_failed"] > resolved:
            resolved = info["tasks_completed"] + info["tasks_failed"]
            kind = info["oracle"]["task_kind"]
            if kind:
                kinds.append(kind)
        if term or trunc:
            break
    env.close()
    return {"seed": seed, "completed": info["tasks_completed"], "total": info["tasks_total"], "steps": steps,
            "kinds": kinds, "done_kinds": done_kinds, "replans": agent.replans,
            "planning_s": agent.planning_time, "planner_failures": agent.failures}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--episodes", type=int, default=200)
    parser.add_argument("--workers", type=int, default=2)
    parser.add_argument("--size", default="default")
    parser.add_argument("--mode", default="verbal")
    parser.add_argument("--quick", action="store_true", help="4 episodes on the small house (a smoke run)")
    args = parser.parse_args()
    if args.quick:
        args.episodes, args.size = min(args.episodes, 4), "small"
    start = time.perf_counter()
    jobs = [(seed, args.size, args.mode) for seed in range(args.episodes)]
    with Pool(args.workers) as pool:
        rows = pool.map(run_episode, jobs, chunksize=1)
    completed = sum(r["completed"] for r in rows)
    total = sum(r["total"] for r in rows)
    low, high = wilson(completed, total)
    by_kind_total = Counter(k for r in rows for k in r["kinds"])
    by_kind_done = Counter(k for r in rows for k in r["done_kinds"])
    print(json.dumps({
        "benchmark": "oracle_success", "episodes": len(rows), "size": args.size, "mode": args.mode,
        "tasks_completed": completed, "tasks_total": total, "success_rate": round(completed / total, 4),
        "wilson95": [round(low, 4), round(high, 4)],
        "per_kind": {k: [by_kind_done[k], by_kind_total[k]] for k in sorted(by_kind_total)},
        "failed_seeds": [r["seed"] for r in rows if r["completed"] < r["total"]],
        "mean_replans_per_episode": round(sum(r["replans"] for r in rows) / len(rows), 2),
        "planner_failures": sum(r["planner_failures"] for r in rows),
        "mean_planning_s_per_episode": round(sum(r["planning_s"] for r in rows) / len(rows), 2),
        "wall_s": round(time.perf_counter() - start, 1),
    }))


if __name__ == "__main__":
    main()
