"""AI2-THOR world: every iTHOR FloorPlan loads, and the oracle completes the tasks set on them.

For each FloorPlan and seed, one episode of `ServiceRobot-AI2THOR-v0` (symbolic executor, update mode
"both", people acting) runs with the oracle agent (Fast Downward on the true state) over the L3M+P Table II
kinds the FloorPlan hosts. Prints one JSON line: FloorPlans loaded, tasks completed / total with a 95%
Wilson interval, per kind, per room kind, executor errors and wall time.

    python benchmarks/ai2thor_oracle.py [--seeds 2] [--workers 2] [--n-tasks 3] [--quick]
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from collections import Counter
from multiprocessing import Pool

import gymnasium as gym

import servicerobot  # noqa: F401
from servicerobot.envs.ai2thor import TABLE2_KINDS
from servicerobot.errors import DependencyNotInstalled
from servicerobot.experiments.stats import wilson
from servicerobot.oracle import OracleAgent
from servicerobot.scenes.ithor import FLOORPLANS, floorplan_kind, hosts, load_floorplan


def run_episode(job: tuple[str, int, int]) -> dict:
    scene, seed, n_tasks = job
    kinds = [k for k in TABLE2_KINDS if hosts(scene, k)]
    env = gym.make("ServiceRobot-AI2THOR-v0", scene=scene, task_kinds=kinds, n_tasks=n_tasks)
    agent = OracleAgent.from_env(env)
    obs, info = env.reset(seed=seed)
    kind = info["oracle"]["task_kind"]
    kinds_seen, done, resolved, steps, errors = [kind], [], 0, 0, []
    while True:
        obs, _, term, trunc, info = env.step(agent.act(obs))
        steps += 1
        if info["action_error"]:
            errors.append(info["action_error"])
        if info["task_completed"]:
            done.append(kind)
        if info["tasks_completed"] + info["tasks_failed"] > resolved:
            resolved = info["tasks_completed"] + info["tasks_failed"]
            kind = info["oracle"]["task_kind"]
            if kind:
                kinds_seen.append(kind)
        if term or trunc:
            break
    env.close()
    return {"scene": scene, "seed": seed, "completed": info["tasks_completed"], "total": info["tasks_total"],
            "kinds": kinds_seen, "done": done, "steps": steps, "errors": errors}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--seeds", type=int, default=2)
    parser.add_argument("--workers", type=int, default=2)
    parser.add_argument("--n-tasks", type=int, default=3)
    parser.add_argument("--quick", action="store_true", help="one FloorPlan of each room kind, one seed")
    args = parser.parse_args()
    start = time.perf_counter()
    scenes = list(FLOORPLANS)
    if args.quick:
        scenes, args.seeds = ["FloorPlan1", "FloorPlan201", "FloorPlan301", "FloorPlan401"], 1
    loaded = 0
    try:
        for name in scenes:
            scene = load_floorplan(name)
            loaded += bool(scene.thor) and len(scene.rooms) >= 1
    except DependencyNotInstalled as error:  # alfworld (the FloorPlans) is optional: `servicerobot bench` skips
        print(error, file=sys.stderr)
        print(json.dumps({"benchmark": "ai2thor_oracle", "skipped": str(error)}))
        return
    jobs = [(s, seed, args.n_tasks) for s in scenes for seed in range(args.seeds)]
    with Pool(args.workers) as pool:
        rows = pool.map(run_episode, jobs, chunksize=1)
    completed, total = sum(r["completed"] for r in rows), sum(r["total"] for r in rows)
    low, high = wilson(completed, total)
    kinds_total = Counter(k for r in rows for k in r["kinds"])
    kinds_done = Counter(k for r in rows for k in r["done"])
    room_total, room_done = Counter(), Counter()
    for r in rows:
        room_total[floorplan_kind(r["scene"])] += r["total"]
        room_done[floorplan_kind(r["scene"])] += r["completed"]
    print(json.dumps({
        "benchmark": "ai2thor_oracle", "controller": "symbolic", "floorplans_loaded": loaded,
        "floorplans": len(scenes), "seeds": args.seeds, "episodes": len(rows),
        "tasks_completed": completed, "tasks_total": total, "success_rate": round(completed / total, 4),
        "wilson95": [round(low, 4), round(high, 4)],
        "per_kind": {k: [kinds_done[k], kinds_total[k]] for k in sorted(kinds_total)},
        "per_room_kind": {k: [room_done[k], room_total[k]] for k in sorted(room_total)},
        "failed": [[r["scene"], r["seed"]] for r in rows if r["completed"] < r["total"]],
        "executor_errors": sum(len(r["errors"]) for r in rows),
        "error_examples": sorted({e for r in rows for e in r["errors"]})[:5],
        "steps": sum(r["steps"] for r in rows),
        "wall_s": round(time.perf_counter() - start, 1),
    }))


if __name__ == "__main__":
    main()
