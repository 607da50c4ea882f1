"""Task success of ServiceAgent variants (and the oracle) over seeded household episodes, with KG accuracy.

Prints one JSON line: per variant, tasks completed / total with a 95% Wilson interval, the same on tasks
that had a reset / addition / relocation event, the share of the oracle's completions, and knowledge-graph
accuracy after each verbal update (L3M+P's scoring: memory must equal the facts the robot was told or saw;
a mismatch counts as correct when it is only the previous step's mismatch carried over).

    python benchmarks/agent_success.py --episodes 200 --variants oracle search-rag --workers 2
    python benchmarks/agent_success.py --episodes 200 --variants visual-only --mode both

Episodes run and are scored by `servicerobot.experiments` (the same records `servicerobot run` writes).
"""

from __future__ import annotations

import argparse
import json
import tempfile
from pathlib import Path

from servicerobot.experiments.config import parse_config
from servicerobot.experiments.runner import run_grid
from servicerobot.experiments.stats import wilson


def _interval(k: int, n: int) -> list[float]:
    return [round(x, 4) for x in wilson(k, n)]


def summarise(records: list[dict]) -> dict:
    """Success, disturbed success, KG and goal accuracy over one variant's episode records."""
    tasks = [t for r in records for t in r["tasks"]]
    done = sum(t["completed"] for t in tasks)
    dist = [t for t in tasks if t["disturbed"]]
    ddone = sum(t["completed"] for t in dist)
    updates = [u for r in records for u in ((r["kg"] or {}).get("updates") or [])]
    ok = sum(u["correct"] for u in updates)
    jaccard = [(r["kg"]["jaccard"], len(r["kg"]["updates"])) for r in records if r["kg"] and r["kg"]["jaccard"]]
    goals = [t["goal"] for t in tasks if t.get("goal")]
    agents = [r["agent"] for r in records if r["agent"]]
    n = max(1, len(records))
    return {"episodes": len(records), "errors": sum(r["status"] != "ok" for r in records),
            "tasks": len(tasks), "completed": done, "rate": round(done / max(1, len(tasks)), 4),
            "wilson95": _interval(done, len(tasks)), "disturbed_tasks": len(dist), "disturbed_completed": ddone,
            "disturbed_rate": round(ddone / max(1, len(dist)), 4), "disturbed_wilson95": _interval(ddone, len(dist)),
            "kg_updates": len(updates), "kg_accuracy": round(ok / len(updates), 4) if updates else None,
            "kg_fact_jaccard": round(sum(j * k for j, k in jaccard) / sum(k for _, k in jaccard), 4) if jaccard else None,
            "goal_correct": round(sum(g["correct"] for g in goals) / len(goals), 4) if goals else None,
            "replans_per_episode": round(sum(a.get("replans", 0) for a in agents) / n, 2),
            "planning_s_per_episode": round(sum(a.get("planning_time", 0.0) for a in agents) / n, 3),
            "seconds_per_episode": round(sum(r["timing"]["wall_s"] for r in records) / n, 3)}


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--episodes", type=int, default=20)
    parser.add_argument("--variants", nargs="+", default=["oracle", "search-rag"])
    parser.add_argument("--mode", default="verbal", choices=("verbal", "visual", "both"))
    parser.add_argument("--size", default="default")
    parser.add_argument("--workers", type=int, default=2)
    parser.add_argument("--records", help="keep the per-episode records (JSONL) here; a rerun resumes")
    parser.add_argument("--quick", action="store_true", help="2 episodes on the small house (a smoke run)")
    args = parser.parse_args(argv)
    if args.quick:
        args.episodes, args.size = min(args.episodes, 2), "small"
    config = parse_config({"name": "agent_success", "variants": args.variants,
                           "seeds": {"start": 0, "count": args.episodes}, "agent": {"interpreter": "rules"},
                           "envs": [{"name": args.size, "kwargs": {"size": args.size, "update_mode": args.mode}}]})
    with tempfile.TemporaryDirectory() as tmp:
        path = Path(args.records or Path(tmp) / "records.jsonl")
        run_grid(config, path, backend="process" if args.workers > 1 else "serial", workers=args.workers)
        records = [json.loads(line) for line in path.read_text().splitlines() if line.strip()]
    result = {"benchmark": "agent_success", "mode": args.mode, "size": args.size, "episodes": args.episodes}
    by_variant = {v: summarise([r for r in records if r["variant"] == v]) for v in args.variants}
    result["variants"] = by_variant
    if "oracle" in by_variant:
        base = by_variant["oracle"]["completed"]
        for s in by_variant.values():
            s["share_of_oracle"] = round(s["completed"] / base, 4) if base else None
    print(json.dumps(result))


if __name__ == "__main__":
    main()
