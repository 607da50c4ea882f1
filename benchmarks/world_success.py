"""One agent on every world: tasks `ServiceAgent` completes against the oracle's, per world, over seeded episodes.

The agent is `ServiceAgent` (search-rag) with the rule interpreter each world's declared language builds
(`servicerobot.envs.language`), and with `--url` also with the local model (an OpenAI-compatible server such
as `servicerobot llm serve` starts: the `local-llm` interpreter). The oracle plans on the true state with the
true goal, so agent / oracle is the share of the achievable tasks the agent achieves. Prints a Markdown table,
then one JSON line.

    python benchmarks/world_success.py --episodes 20
    python benchmarks/world_success.py --episodes 2 --worlds household pybullet --url http://127.0.0.1:8771/v1

Episodes run and are scored by `servicerobot.experiments` (the same records `servicerobot run` writes).
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import tempfile
from pathlib import Path

from servicerobot.envs.options import WORLD_IDS
from servicerobot.experiments.config import parse_config
from servicerobot.experiments.runner import run_grid

WORLDS = {  # world -> its env kwargs (AI2-THOR and Habitat without their simulators: symbolic executors)
    "household": {},
    "pybullet": {},
    "ai2thor": {"controller": "symbolic"},
    "habitat": {"simulator": "symbolic"},
}


def available(worlds: list[str]) -> tuple[list[str], dict[str, str]]:
    """The worlds that can be built here, and why each other one cannot (a missing optional package)."""
    import gymnasium as gym

    import servicerobot  # noqa: F401  (registers the ids)
    from servicerobot.errors import DependencyNotInstalled

    ok, skipped = [], {}
    for w in worlds:
        try:
            gym.make(WORLD_IDS[w], **WORLDS[w]).close()
        except (DependencyNotInstalled, ImportError) as exc:
            skipped[w] = f"{type(exc).__name__}: {exc}"
        else:
            ok.append(w)
    return ok, skipped


def _count(records: list[dict]) -> dict:
    tasks = [t for r in records for t in r["tasks"]]
    return {"episodes": len(records), "errors": sum(r["status"] != "ok" for r in records), "tasks": len(tasks),
            "completed": sum(t["completed"] for t in tasks),
            "s_per_episode": round(sum(r["timing"]["wall_s"] for r in records) / max(1, len(records)), 1)}


def run(worlds: list[str], episodes: int, interpreter: str, variants: list[str], workers: int,
        records: Path, n_tasks: int | None = None) -> dict:
    """`variants` episodes on each world; {world: {variant: {"episodes", "errors", "tasks", "completed"}}}."""
    tasks = {"n_tasks": n_tasks} if n_tasks else {}
    config = parse_config({
        "name": f"world_success_{interpreter}" + (f"_{n_tasks}" if n_tasks else ""), "variants": variants,
        "seeds": {"start": 0, "count": episodes}, "agent": {"interpreter": interpreter},
        "envs": [{"name": w, "id": WORLD_IDS[w], "kwargs": {**WORLDS[w], **tasks}} for w in worlds]})
    run_grid(config, records, backend="process" if workers > 1 else "serial", workers=workers)
    rows = [json.loads(line) for line in records.read_text().splitlines() if line.strip()]
    rows = [r for r in rows if r["key"].startswith(config.name + "/") and r["seed"] < episodes]
    return {w: {v: _count([r for r in rows if r["env"] == w and r["variant"] == v]) for v in variants}
            for w in worlds}


def table(results: dict[str, dict]) -> list[str]:
    """Markdown rows: per world and interpreter, agent and oracle completions and their ratio."""
    lines = ["| world | interpreter | agent tasks | oracle tasks | agent / oracle | agent s / episode |",
             "|---|---|---|---|---|---|"]
    for interpreter, by_world in results.items():
        for world, r in by_world.items():
            a, o = r["agent"], r["oracle"]
            share = f"{a['completed'] / o['completed']:.0%}" if o["completed"] else "n/a"
            lines.append(f"| {world} | {interpreter} | {a['completed']}/{a['tasks']} | {o['completed']}/{o['tasks']} "
                         f"| {share} | {a['s_per_episode']} |")
    return lines


def figures(results: dict[str, dict]) -> dict[str, object]:
    """Flat figures (name -> number or text, what `servicerobot bench --record` keeps): per interpreter and
    world, the agent's and the oracle's tasks, the agent's share of the oracle's, seconds per agent episode."""
    out: dict[str, object] = {}
    for interpreter, by_world in results.items():
        for world, r in by_world.items():
            a, o = r["agent"], r["oracle"]
            key = f"{world} {interpreter}"
            out[f"{key} agent tasks"] = f"{a['completed']}/{a['tasks']}" + (f" ({a['errors']} errors)" if a["errors"] else "")
            out[f"{key} oracle tasks"] = f"{o['completed']}/{o['tasks']}" + (f" ({o['errors']} errors)" if o["errors"] else "")
            out[f"{key} agent / oracle"] = round(a["completed"] / o["completed"], 4) if o["completed"] else None
            out[f"{key} agent s / episode"] = a["s_per_episode"]
    return out


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--episodes", type=int, default=20, help="seeds 0 .. episodes-1 per world (default 20)")
    parser.add_argument("--worlds", nargs="+", default=list(WORLDS), choices=list(WORLDS))
    parser.add_argument("--url", help="an OpenAI-compatible local model server (e.g. http://127.0.0.1:8771/v1): "
                        "also run the agent with the local model")
    parser.add_argument("--llm-episodes", type=int, help="episodes per world with the model (default --episodes)")
    parser.add_argument("--workers", type=int, default=1, help="episodes run at once (default 1)")
    parser.add_argument("--records", help="keep the per-episode records (JSONL) here; a rerun resumes")
    parser.add_argument("--quick", action="store_true", help="1 episode of 1 task per world (a smoke run)")
    args = parser.parse_args(argv)
    if args.episodes < 1:
        parser.error(f"--episodes must be at least 1, got {args.episodes}")
    n_tasks = None
    if args.quick:
        args.episodes, n_tasks = 1, 1
    worlds, skipped = available(args.worlds)
    for world, why in skipped.items():
        print(f"skipped {world}: {why}", file=sys.stderr)
    if not worlds:
        print(json.dumps({"benchmark": "world_success", "skipped": "no world can be built here: "
                          + "; ".join(f"{w}: {why}" for w, why in skipped.items())}))
        return
    results: dict[str, dict] = {}
    with tempfile.TemporaryDirectory() as tmp:
        path = Path(args.records or Path(tmp) / "records.jsonl")
        rules = run(worlds, args.episodes, "rules", ["oracle", "search-rag"], args.workers, path, n_tasks)
        results["rules"] = {w: {"agent": r["search-rag"], "oracle": r["oracle"]} for w, r in rules.items()}
        if args.url:  # the oracle's episodes are the same: only the agent runs again, on the first seeds
            os.environ["SERVICEROBOT_LOCAL_LLM_URL"] = args.url
            n = min(args.llm_episodes or args.episodes, args.episodes)
            llm = run(worlds, n, "local-llm", ["search-rag"], args.workers, path, n_tasks)
            oracle = run(worlds, n, "rules", ["oracle"], args.workers, path, n_tasks)  # already run: read back
            results["local-llm"] = {w: {"agent": llm[w]["search-rag"], "oracle": oracle[w]["oracle"]} for w in worlds}
    for line in table(results):
        print(line)
    print(json.dumps({"benchmark": "world_success", "episodes": args.episodes, **figures(results),
                      **({"skipped worlds": "; ".join(f"{w}: {why}" for w, why in skipped.items())} if skipped else {})}))


if __name__ == "__main__":
    main()
