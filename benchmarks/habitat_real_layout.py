"""Oracle success in habitat-sim on real-format buildings whose rooms share no wall (JSON). Runs in the sandbox:

    sudo scripts/habitat-sim run -- python benchmarks/habitat_real_layout.py [--quick]
        [--building Parlow|Stairwick|PATH ...] [--seeds N] [--tasks K] [--simulator habitat|symbolic]
        [--shrunk N]

Buildings: `Parlow` (one floor) and `Stairwick` (two floors, a staircase on each) are written by
`tests/habitat/buildings.py` in Stanford's 3DSG `.npz` + Context Matters `.json` format with the traits of
real 3DSG room boxes (no two rooms share a wall: apart by 0.15-0.75 m, one box overlapping two others, a
corridor meeting another along 0.9 m, the floor at z = -0.12, room-less furniture, added objects without a
size). A PATH is a real building (a Context Matters instance folder or a 3DSG `.npz`), e.g.
`../shared/fixtures/context_matters/dining_setup/Parole/problem_1` where it exists.

For each building and seed: one episode of K tasks with the oracle agent (it plans on the true state), no
background events or disturbances (what is measured is whether the stage lets the robot do what the
symbolic world allows). Prints tasks completed, steps, action errors, the executor failures and why each
failed task ended, and how far the robot walked. `--shrunk N`: N generated buildings whose room boxes are
shrunk apart as real ones are, and how many of their stages reach every room.
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


def episodes(path: str, simulator: str, seeds: range, n_tasks: int, max_steps: int = 2000) -> dict:
    import gymnasium as gym

    import servicerobot  # noqa: F401  (registers the gym ids)
    from servicerobot.oracle import OracleAgent

    done = total = steps = errors = 0
    failures: Counter = Counter()
    ended: Counter = Counter()
    per_seed, walked, seconds = [], 0.0, []
    t0 = time.time()
    for seed in seeds:
        t1 = time.time()
        env = gym.make("ServiceRobot-Habitat-v0", scene_graph=path, simulator=simulator, n_tasks=n_tasks,
                       event_rate=0.0, disturbance_prob=0.0)
        agent = OracleAgent.from_env(env)
        obs, info = env.reset(seed=seed)
        for _ in range(max_steps):
            obs, _, term, trunc, info = env.step(agent.act(obs))
            steps += 1
            if info["action_error"]:
                errors += 1
                failures[info["action_error"].split(": ", 1)[-1][:60]] += 1
            if info["task_failure"]:
                ended[info["task_failure"][:90]] += 1
            if term or trunc:
                break
        done += info["tasks_completed"]
        total += info["tasks_total"]
        per_seed.append(info["tasks_completed"])
        executor = env.unwrapped.world.executor
        walked += getattr(executor, "distance", 0.0)
        env.close()
        seconds.append(round(time.time() - t1, 1))
    return {"building": Path(path).name, "simulator": simulator, "seeds": len(seeds), "tasks": total,
            "completed": done, "success": round(done / total, 4) if total else None, "steps": steps,
            "action_errors": errors, "executor_failures": dict(failures.most_common(8)),
            "tasks_ended_by": dict(ended.most_common(8)), "metres_walked": round(walked, 1),
            "completed_per_seed": per_seed, "seconds": round(time.time() - t0, 1),
            "seconds_per_seed": seconds}


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
    parser.add_argument("--tasks", type=int, default=4)
    parser.add_argument("--simulator", choices=("habitat", "symbolic"), default="habitat")
    parser.add_argument("--shrunk", type=int, default=0, metavar="N",
                        help="also N generated buildings with room boxes shrunk apart (habitat only)")
    args = parser.parse_args(argv)
    seeds, n_tasks = (3, 3) if args.quick else (args.seeds, args.tasks)
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
    with tempfile.TemporaryDirectory() as tmp:
        runs = [episodes(_building(b, Path(tmp)), args.simulator, range(seeds), n_tasks)
                for b in args.building or ["Parlow", "Stairwick"]]
    result["runs"] = runs
    if args.shrunk and args.simulator == "habitat":
        result["shrunk_generated"] = shrunk(args.shrunk)
    done, total = sum(r["completed"] for r in runs), sum(r["tasks"] for r in runs)
    result["success"] = round(done / total, 4) if total else None
    print(json.dumps(result))


if __name__ == "__main__":
    main()
