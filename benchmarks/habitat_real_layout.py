"""Oracle success in habitat-sim on real-format buildings whose rooms share no wall, or on a whole published
dataset (JSON, last line). Runs in the habitat root (as root):

    scripts/habitat-sim run -- python benchmarks/habitat_real_layout.py [--quick]
        [--building Parlow|Stairwick|PATH ...] [--seeds N] [--first-seed S] [--tasks K] [--simulator habitat|symbolic]
        [--shrunk N]
    scripts/habitat-sim run --bind ROOT -- python benchmarks/habitat_real_layout.py --data ROOT
        [--seeds N] [--first-seed S] [--tasks K] [--agents oracle,search-rag] [--limit N] [--speed STEPS]
        [--adapter POSES [--adapter-instances K]]

Buildings: `Parlow` (one floor) and `Stairwick` (two floors, a staircase on each) are written by
`tests/habitat/buildings.py` in Stanford's 3DSG `.npz` + Context Matters `.json` format with the traits of
real 3DSG room boxes (no two rooms share a wall: apart by 0.15-0.75 m, one box overlapping two others, a
corridor meeting another along 0.9 m, the floor at z = -0.12, room-less furniture, added objects without a
size). A PATH is a real building (a Context Matters instance folder or a 3DSG `.npz`).

For each building and seed: one episode of K tasks (no background events or disturbances, `update_mode`
"both": what is measured is whether the stage lets the robot do what the symbolic world allows). Prints
tasks completed, steps, action errors, env steps/s (`env.step` alone), the executor failures and why each
failed task ended, and how far the robot walked. A building the world refuses (`SceneError`, at load or at
reset) is a row with `refused` and the reason. `--shrunk N`: N generated buildings whose room boxes are
shrunk apart as real ones are, and how many of their stages reach every room.

`--data ROOT`: every instance folder under ROOT (Context Matters' published dataset: `<split>/<Building>/
problem_<k>`, 141 of them in 10 Gibson buildings), each with the oracle and `ServiceAgent` (`search-rag`,
the rule interpreter, verbal + visual updates) on the same episodes; a row per instance (stderr as it goes),
totals per building and over all, and the refused instances with their reasons. `--speed STEPS` adds
`habitat_adapter.speed` on each building's first instance beside a generated building; `--adapter POSES`
adds the adapter's precision/recall per building (`habitat_adapter.adapter`, POSES random poses per
instance).
"""

from __future__ import annotations

import argparse
import json
import platform
import sys
import tempfile
import time
from collections import Counter
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


def _building(name: str, workdir: Path) -> str:
    if Path(name).exists():
        return str(Path(name).resolve())
    sys.path.insert(0, str(ROOT))
    from tests.habitat.buildings import BUILDINGS, write_building

    if name not in BUILDINGS:
        raise SystemExit(f"{name!r} is neither a path nor one of {sorted(BUILDINGS)}")
    return str(write_building(workdir / name, name))


def _episode(env, agent, seed: int, max_steps: int, stats: dict) -> None:
    """One episode of `agent` in `env` from `seed`, its counts added to `stats`."""
    obs, info = env.reset(seed=seed)
    for _ in range(max_steps):
        t = time.perf_counter()
        obs, _, term, trunc, info = env.step(agent.act(obs))
        stats["step_seconds"] += time.perf_counter() - t
        stats["steps"] += 1
        if info["action_error"]:
            stats["action_errors"] += 1
            stats["failures"][info["action_error"].split(": ", 1)[-1][:60]] += 1
        if info["task_failure"]:
            stats["ended"][info["task_failure"][:90]] += 1
        if term or trunc:
            break
    stats["completed"] += info["tasks_completed"]
    stats["tasks"] += info["tasks_total"]
    stats["per_seed"].append(info["tasks_completed"])
    stats["walked"] += getattr(env.unwrapped.world.executor, "distance", 0.0)


def episodes(path: str, simulator: str, seeds: range, n_tasks: int, max_steps: int = 2000,
             variant: str = "oracle") -> dict:
    """`variant` ("oracle", or a `ServiceAgent` variant with the rule interpreter) on one episode of `n_tasks`
    tasks per seed in the building at `path`. A building the world refuses (`SceneError`: at load, or at
    reset when its stage cannot reach a room) is a row with `refused` and the reason, not an abort."""
    import gymnasium as gym

    import servicerobot  # noqa: F401  (registers the gym ids)
    from servicerobot.errors import SceneError
    from servicerobot.experiments.episode import make_agent

    stats = {"completed": 0, "tasks": 0, "steps": 0, "action_errors": 0, "failures": Counter(),
             "ended": Counter(), "per_seed": [], "walked": 0.0, "step_seconds": 0.0}
    t0, seconds, refused = time.time(), [], None
    for seed in seeds:
        t1, env = time.time(), None
        try:
            env = gym.make("ServiceRobot-Habitat-v0", scene_graph=path, simulator=simulator, n_tasks=n_tasks,
                           event_rate=0.0, disturbance_prob=0.0, update_mode="both")
            agent = make_agent(variant, env, {"interpreter": "rules"} if variant != "oracle" else None)
            _episode(env, agent, seed, max_steps, stats)
        except SceneError as error:
            refused = str(error)
            break
        finally:
            if env is not None:
                env.close()
        seconds.append(round(time.time() - t1, 1))
    row = {"building": Path(path).name, "path": path, "simulator": simulator, "variant": variant,
           "seeds": len(seeds), "tasks": stats["tasks"], "completed": stats["completed"],
           "success": round(stats["completed"] / stats["tasks"], 4) if stats["tasks"] else None,
           "steps": stats["steps"], "action_errors": stats["action_errors"],
           "env_steps_per_s": round(stats["steps"] / stats["step_seconds"], 1) if stats["step_seconds"] else None,
           "executor_failures": dict(stats["failures"].most_common(8)),
           "tasks_ended_by": dict(stats["ended"].most_common(8)), "metres_walked": round(stats["walked"], 1),
           "completed_per_seed": stats["per_seed"], "seconds": round(time.time() - t0, 1),
           "seconds_per_seed": seconds}
    if refused is not None:
        row["refused"] = refused
    return row


def dataset_instances(root: Path) -> list[Path]:
    """The instance folders of a published dataset (Context Matters: `<split>/<Building>/problem_<k>`): every
    folder under `root` that holds a 3DSG `.npz`."""
    if not root.is_dir():
        raise SystemExit(f"--data {root}: no such folder; give the root of Context Matters' dataset "
                         "(the folder holding dining_setup/, general/, ...)")
    found = sorted({p.parent for p in root.rglob("*.npz")})
    if not found:
        raise SystemExit(f"--data {root}: no instance folder (one holding a 3DSG .npz) under it")
    return found


def dataset(root: Path, seeds: range, n_tasks: int, variants: list[str], limit: int | None = None) -> dict:
    """Every instance of the dataset at `root`: a row per instance (refused ones with their reason) and the
    totals per building (the building is the instance folder's parent's name)."""
    rows = []
    for path in dataset_instances(root)[:limit]:
        runs = {v: episodes(str(path), "habitat", seeds, n_tasks, variant=v) for v in variants}
        first = runs[variants[0]]
        row = {"instance": str(path.relative_to(root)), "building": path.parent.name,
               "reset": "refused" if "refused" in first else "ok"}
        if "refused" in first:
            row["refused"] = first["refused"]
        for v, run in runs.items():
            row[v] = {k: run[k] for k in ("tasks", "completed", "steps", "action_errors", "env_steps_per_s",
                                          "tasks_ended_by", "executor_failures", "seconds")}
        print(json.dumps(row), file=sys.stderr, flush=True)  # progress, one row per instance
        rows.append(row)
    return {"root": str(root), "instances": len(rows), "seeds": len(seeds), "first_seed": seeds[0] if len(seeds) else None,
            "tasks_per_episode": n_tasks,
            "rows": rows, "per_building": _per_building(rows, variants), "totals": _totals(rows, variants)}


def adapter_on(root: Path, poses: int, limit: int | None = None, per_building: int | None = None) -> dict:
    """The adapter's precision and recall (`habitat_adapter.adapter`: the look-around's sightings against the
    symbolic world's view of the robot's room) per building: its instances (the first `per_building`, default
    all), `poses` random free-floor poses each."""
    from habitat_adapter import adapter  # beside this script

    from servicerobot.scenes.gibson import load_building

    by_building: dict[str, list] = {}
    for path in dataset_instances(root)[:limit]:
        graphs = by_building.setdefault(path.parent.name, [])
        if per_building is None or len(graphs) < per_building:
            graphs.append(load_building(path))
    out = {}
    for building, graphs in sorted(by_building.items()):
        run = adapter(len(graphs), poses, "random", graphs=graphs)
        out[building] = {"scenes": run["scenes"], "poses": run["poses"], "seconds": run["seconds"],
                         "closed_world": run["closed_world"],
                         "enclosed_fixtures_not_in_truth": run["enclosed_fixtures_not_in_truth"],
                         **{k: {m: run[k][m] for m in ("precision", "recall", "truth")}
                            for k in ("in_view", "in_view_items", "in_view_fixtures", "room", "support")}}
        print(json.dumps({"adapter": building, **out[building]}), file=sys.stderr, flush=True)
    return out


def speed_on(root: Path, n_steps: int, limit: int | None = None) -> dict:
    """habitat env steps/s (`habitat_adapter.speed`: moves to random rooms alternating with waits, each a
    look-around percept) on the first instance of each building, and on a generated building, in this one
    process so the figures compare."""
    from habitat_adapter import speed  # beside this script

    first: dict[str, Path] = {}
    for path in dataset_instances(root)[:limit]:
        first.setdefault(path.parent.name, path)
    out = {"generated": speed(n_steps)}
    for building, path in sorted(first.items()):
        out[building] = speed(n_steps, scene_graph=str(path))
    return {name: {k: run[k] for k in ("steps_per_s", "steps_per_cpu_s", "render_fps", "look_arounds_per_s",
                                       "inspections_during_steps", "looks_reused_during_steps")}
            for name, run in out.items()}


def _sum(rows: list[dict], variants: list[str]) -> dict:
    out = {"instances": len(rows), "reset": sum(r["reset"] == "ok" for r in rows)}
    for v in variants:
        done, total = sum(r[v]["completed"] for r in rows), sum(r[v]["tasks"] for r in rows)
        steps = sum(r[v]["steps"] for r in rows)
        step_s = sum(r[v]["steps"] / r[v]["env_steps_per_s"] for r in rows if r[v]["env_steps_per_s"])
        out[v] = {"completed": done, "tasks": total, "success": round(done / total, 4) if total else None,
                  "env_steps_per_s": round(steps / step_s, 1) if step_s else None}
    if len(variants) > 1 and out[variants[0]]["completed"]:
        out[f"{variants[1]}_of_{variants[0]}"] = round(out[variants[1]]["completed"] / out[variants[0]]["completed"], 4)
    return out


def _per_building(rows: list[dict], variants: list[str]) -> dict:
    names = sorted({r["building"] for r in rows})
    return {b: _sum([r for r in rows if r["building"] == b], variants) for b in names}


def _totals(rows: list[dict], variants: list[str]) -> dict:
    out = _sum(rows, variants)
    out["refused"] = {r["instance"]: r["refused"] for r in rows if r["reset"] != "ok"}
    return out


def shrunk(n: int, lo: float = 0.15, hi: float = 0.45, seed: int = 1000) -> dict:
    """Generated buildings made to look like real 3DSG boxes: each room's box shrunk by `lo`-`hi` m per side
    (a wall's thickness and more between rooms), the floor moved by up to 0.5 m; the furniture stays where it
    was (some of it now outside its room). Counts those whose stage reaches every room from the first."""
    from dataclasses import replace

    import numpy as np

    from servicerobot.envs.habitat.executor import HabitatExecutor
    from servicerobot.errors import SceneError
    from servicerobot.scenes.gibson import generate_3dsg, to_household_scene

    ex = HabitatExecutor(inspect=False)
    ex._check_reachable = lambda: None  # counted here instead, the same way for every stage
    reached, refused, t0 = 0, [], time.time()
    for k in range(n):
        rng = np.random.default_rng(seed + k)
        sg = generate_3dsg(rng)
        level = float(rng.uniform(-0.5, 0.5))
        for rid, r in list(sg.rooms.items()):
            cut = rng.uniform(lo, hi, size=4)
            rlo = np.array(r.location[:2]) - np.array(r.size[:2]) / 2 + cut[[0, 2]]
            rhi = np.array(r.location[:2]) + np.array(r.size[:2]) / 2 - cut[[1, 3]]
            sg.rooms[rid] = replace(r, location=(*((rlo + rhi) / 2), r.location[2] + level),
                                    size=(*(rhi - rlo), r.size[2]))
        for oid, o in list(sg.objects.items()):
            sg.objects[oid] = replace(o, location=(o.location[0], o.location[1], o.location[2] + level))
        scene = to_household_scene(sg, rng, n_people=1)
        try:
            ex.reset(scene, scene.init, rng)
            points = [ex._stand_point(r) for r in scene.room_names]
        except SceneError as error:
            refused.append([sg.name, str(error)[:120]])
            continue
        cut_off = []
        for room, point in zip(scene.room_names[1:], points[1:], strict=True):
            ex.position = points[0]
            if ex._walk(point, record=False):
                cut_off.append(room)
        if cut_off:
            refused.append([sg.name, f"cannot reach {cut_off}"])
        else:
            reached += 1
    ex.close()
    return {"buildings": n, "gap_per_side_m": [lo, hi], "stage_reaches_every_room": reached,
            "not": refused, "seconds": round(time.time() - t0, 1)}


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="3 seeds x 3 tasks per building")
    parser.add_argument("--building", action="append", help="Parlow, Stairwick or a path (repeatable)")
    parser.add_argument("--seeds", type=int, default=25)
    parser.add_argument("--first-seed", type=int, default=0, help="seeds FIRST .. FIRST+N-1 (default 0)")
    parser.add_argument("--tasks", type=int, default=4)
    parser.add_argument("--simulator", choices=("habitat", "symbolic"), default="habitat")
    parser.add_argument("--data", type=Path, metavar="ROOT",
                        help="run every instance of a published dataset (Context Matters' root) instead")
    parser.add_argument("--agents", default="oracle,search-rag",
                        help="with --data: the oracle and ServiceAgent variants (rules, verbal + visual updates)")
    parser.add_argument("--limit", type=int, help="with --data: only the first N instances (a subset)")
    parser.add_argument("--adapter-instances", type=int, metavar="K",
                        help="with --adapter: only the first K instances of each building")
    parser.add_argument("--speed", type=int, default=0, metavar="STEPS",
                        help="with --data: also env steps/s on each building's first instance and a generated one")
    parser.add_argument("--adapter", type=int, default=0, metavar="POSES",
                        help="with --data: also the adapter's precision/recall per building, POSES per instance")
    parser.add_argument("--shrunk", type=int, default=0, metavar="N",
                        help="also N generated buildings with room boxes shrunk apart (habitat only)")
    args = parser.parse_args(argv)
    seeds, n_tasks = (3, 3) if args.quick else (args.seeds, args.tasks)
    seeds = range(args.first_seed, args.first_seed + seeds)
    result: dict = {"benchmark": "habitat_real_layout", "python": platform.python_version(),
                    "date": time.strftime("%Y-%m-%d", time.gmtime()), "machine": platform.machine()}
    if args.simulator == "habitat":
        try:
            import habitat_sim
        except ImportError:
            reason = "habitat_sim is not importable: run this inside scripts/habitat-sim's root (docs/install.md)"
            print(reason, file=sys.stderr)
            print(json.dumps({**result, "skipped": reason}))
            return
        result["habitat_sim"] = habitat_sim.__version__
    if args.data is not None:
        if args.simulator != "habitat":
            raise SystemExit("--data runs habitat-sim; leave --simulator at habitat")
        variants = [v.strip() for v in args.agents.split(",") if v.strip()]
        if args.speed:
            result["speed"] = speed_on(args.data, args.speed, args.limit)
        if args.adapter:
            result["adapter"] = adapter_on(args.data, args.adapter, args.limit, args.adapter_instances)
        result["dataset"] = dataset(args.data, seeds, n_tasks, variants, args.limit) if variants else {}
        result["success"] = result["dataset"]["totals"][variants[0]]["success"] if variants else None
        print(json.dumps(result))
        return
    with tempfile.TemporaryDirectory() as tmp:
        runs = [episodes(_building(b, Path(tmp)), args.simulator, seeds, n_tasks)
                for b in args.building or ["Parlow", "Stairwick"]]
    result["runs"] = runs
    if args.shrunk and args.simulator == "habitat":
        result["shrunk_generated"] = shrunk(args.shrunk)
    done, total = sum(r["completed"] for r in runs), sum(r["tasks"] for r in runs)
    result["success"] = round(done / total, 4) if total else None
    print(json.dumps(result))


if __name__ == "__main__":
    main()
