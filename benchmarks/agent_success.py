"""Task success of ServiceAgent variants (and the oracle) over seeded household episodes, with KG accuracy.

Prints one JSON line: per variant, tasks completed / total with a 95% Wilson interval, the same on tasks
that had a reset / addition / relocation event, the share of the oracle's completions, and knowledge-graph
accuracy after each verbal update (L3M+P's scoring: memory must equal the facts the robot was told or saw;
a mismatch counts as correct when it is only the previous step's mismatch carried over).

    python benchmarks/agent_success.py --episodes 200 --variants oracle search-rag --workers 2
    python benchmarks/agent_success.py --episodes 200 --variants visual-only --mode both
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from concurrent.futures import ProcessPoolExecutor

import gymnasium as gym

import servicerobot  # noqa: F401  (registers the env)
from servicerobot.agent import ServiceAgent
from servicerobot.experiments.stats import wilson
from servicerobot.memory.graph import KnowledgeGraph
from servicerobot.memory.triplets import Delta
from servicerobot.memory.updates import apply_percept
from servicerobot.oracle import OracleAgent
from servicerobot.pddl import Atom

DISTURBANCES = ("reset", "addition", "relocation")


def _apply_told(reference: KnowledgeGraph, events: list[dict]) -> None:
    """What people told about these events, applied to the reference memory as it was said."""
    for e in events:
        if e["told"]:
            reference.apply(Delta.of((Atom.parse(a) for a in e["told_delete"]),
                                     (Atom.parse(a) for a in e["told_add"])), "told", 0)


def run_episode(args: tuple) -> dict:
    """One seeded episode: per-task outcomes and, for agents, KG accuracy after each verbal update."""
    variant, seed, mode, size = args
    env = gym.make("ServiceRobot-v0", size=size, update_mode=mode)
    obs, info = env.reset(seed=seed)
    world = env.unwrapped.world
    agent = OracleAgent.from_env(env) if variant == "oracle" else ServiceAgent.from_env(
        env, variant=variant, keep_history=False)
    reference = None if variant == "oracle" else KnowledgeGraph.from_prior(
        world.domain, json.loads(obs["prior"]), keep_history=False)
    if reference is not None:  # the first task's setup events, told with the first observation
        _apply_told(reference, info["oracle"]["events"])
    tasks, current = [], {"kind": info["oracle"]["task_kind"], "disturbed": False}
    updates = correct = 0
    jaccard = []
    mismatches: list[dict] = []
    prev_diff: set = set()
    told_this_step = bool(json.loads(obs["utterances"]))
    t0 = time.perf_counter()
    while True:
        action = agent.act(obs)
        if reference is not None and told_this_step:
            mem, ref = agent.memory.facts, reference.facts
            diff = mem ^ ref
            updates += 1
            ok = (not diff) or diff <= prev_diff
            correct += ok
            if not ok and len(mismatches) < 5:
                mismatches.append({"step": len(agent.steps), "memory_only": sorted(map(str, mem - ref)),
                                   "reference_only": sorted(map(str, ref - mem))})
            jaccard.append(len(mem & ref) / max(1, len(mem | ref)))
            prev_diff = set(diff)
        if reference is not None:  # the true effect of the robot's own action, as the robot will see it
            try:
                ground = world.interpreter.parse_action(action)
                if world.interpreter.applicable(ground, world.state.atoms):
                    add, delete = world.interpreter.delta(ground, world.state.atoms)
                    reference.apply(Delta(delete, add), "action", 0)
            except Exception:  # noqa: BLE001, S110 - (wait) and malformed actions change nothing
                pass
        obs, _, terminated, truncated, info = env.step(action)
        events = info["oracle"]["events"]
        told = [e for e in events if e["told"]]
        if reference is not None:
            _apply_told(reference, events)
            apply_percept(reference, json.loads(obs["percept"]), 0)
        told_this_step = bool(told) and variant not in ("static", "visual-only")
        if any(e["category"] in DISTURBANCES for e in events):
            current["disturbed"] = True
        if info["tasks_completed"] + info["tasks_failed"] > len(tasks):
            tasks.append({**current, "completed": bool(info["task_completed"])})
            current = {"kind": info["oracle"]["task_kind"], "disturbed": False}
        if terminated or truncated:
            break
    out = {"variant": variant, "seed": seed, "tasks": tasks, "seconds": time.perf_counter() - t0,
           "kg_updates": updates, "kg_correct": correct, "kg_jaccard": sum(jaccard) / max(1, len(jaccard)),
           "kg_mismatches": mismatches}
    if variant != "oracle":
        out.update(agent.summary())
    return out


def _interval(k: int, n: int) -> list[float]:
    return [round(x, 4) for x in wilson(k, n)]


def summarise(records: list[dict]) -> dict:
    tasks = [t for r in records for t in r["tasks"]]
    done = sum(t["completed"] for t in tasks)
    dist = [t for t in tasks if t["disturbed"]]
    ddone = sum(t["completed"] for t in dist)
    upd = sum(r["kg_updates"] for r in records)
    ok = sum(r["kg_correct"] for r in records)
    return {"episodes": len(records), "tasks": len(tasks), "completed": done, "rate": round(done / max(1, len(tasks)), 4),
            "wilson95": _interval(done, len(tasks)), "disturbed_tasks": len(dist), "disturbed_completed": ddone,
            "disturbed_rate": round(ddone / max(1, len(dist)), 4), "disturbed_wilson95": _interval(ddone, len(dist)),
            "kg_updates": upd, "kg_accuracy": round(ok / upd, 4) if upd else None,
            "kg_fact_jaccard": round(sum(r["kg_jaccard"] * r["kg_updates"] for r in records) / upd, 4) if upd else None,
            "replans_per_episode": round(sum(r.get("replans", 0) for r in records) / len(records), 2),
            "planning_s_per_episode": round(sum(r.get("planning_time", 0.0) for r in records) / len(records), 3),
            "seconds_per_episode": round(sum(r["seconds"] for r in records) / len(records), 3)}


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--episodes", type=int, default=20)
    parser.add_argument("--variants", nargs="+", default=["oracle", "search-rag"])
    parser.add_argument("--mode", default="verbal", choices=("verbal", "visual", "both"))
    parser.add_argument("--size", default="default")
    parser.add_argument("--workers", type=int, default=2)
    parser.add_argument("--records", help="write per-episode records (JSONL) here")
    args = parser.parse_args(argv)
    jobs = [(v, s, args.mode, args.size) for v in args.variants for s in range(args.episodes)]
    with ProcessPoolExecutor(args.workers) as pool:
        records = list(pool.map(run_episode, jobs, chunksize=1))
    if args.records:
        with open(args.records, "w") as f:
            f.writelines(json.dumps(r) + "\n" for r in records)
    result = {"benchmark": "agent_success", "mode": args.mode, "size": args.size, "episodes": args.episodes}
    by_variant = {v: summarise([r for r in records if r["variant"] == v]) for v in args.variants}
    result["variants"] = by_variant
    if "oracle" in by_variant:
        base = by_variant["oracle"]["completed"]
        for s in by_variant.values():
            s["share_of_oracle"] = round(s["completed"] / base, 4) if base else None
    json.dump(result, sys.stdout)
    print()


if __name__ == "__main__":
    main()
