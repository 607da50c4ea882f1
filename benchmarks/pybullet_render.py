"""Speed of the PyBullet world: render FPS, time per skill, episode wall time with the oracle.

Prints one JSON line:
  render_fps_320x240 / render_fps_640x480: frames per second of `render_frame` (TinyRenderer + overlay),
  reset_s: mean `world.reset` time (layout, places graph, PyBullet scene),
  skill_ms: median milliseconds of `world.execute` per action name (goto / move include motion planning),
  blocking_us: mean microseconds of one `CollisionChecker.blocking` call on a 1 m segment,
  episode_wall_s: mean wall time of an oracle episode (4 tasks, no video), with its success rate.

    python benchmarks/pybullet_render.py --seeds 3
"""

from __future__ import annotations

import argparse
import json
import statistics
import time
from collections import defaultdict

import numpy as np

from servicerobot.envs.core import ServiceRobotEnv
from servicerobot.envs.pybullet.world import PyBulletOptions, PyBulletWorld
from servicerobot.oracle import OracleAgent
from servicerobot.planners import FastDownward


def render_fps(world: PyBulletWorld, width: int, height: int, frames: int = 30) -> float:
    x, y, yaw = world.sim.robot_pose()
    overlay = {"task": "Put the red mug on the table in the kitchen.", "tasks_completed": 0, "tasks_total": 4,
               "last_action": "(goto robot kitchen_table)"}
    world.render_frame(overlay, width, height)  # camera fit and fonts
    start = time.perf_counter()
    for k in range(frames):
        world.sim.set_robot(x, y, yaw + 0.01 * (k + 1))  # a pose change defeats the frame cache
        world.render_frame(overlay, width, height)
    world.sim.set_robot(x, y, yaw)
    return frames / (time.perf_counter() - start)


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--seeds", type=int, default=3)
    ap.add_argument("--size", default="default", choices=["small", "default", "large"])
    ap.add_argument("--quick", action="store_true", help="1 seed on the small apartment (a smoke run)")
    args = ap.parse_args(argv)
    if args.quick:
        args.seeds, args.size = 1, "small"

    skill_ms: dict[str, list[float]] = defaultdict(list)
    fps320, fps640, resets, blocking, walls, successes = [], [], [], [], [], []
    for seed in range(args.seeds):
        world = PyBulletWorld(args.size, PyBulletOptions(n_tasks=4, task_order="cycle"))
        t = time.perf_counter()
        world.reset(np.random.default_rng(seed))
        resets.append(time.perf_counter() - t)
        fps320.append(render_fps(world, 320, 240))
        fps640.append(render_fps(world, 640, 480))
        rng = np.random.default_rng(seed)
        pts = [world.tamp_map.places[n].centre for n in world.tamp_map.places]
        t = time.perf_counter()
        for _ in range(50):
            a = pts[int(rng.integers(len(pts)))]
            world.checker.blocking(a, (a[0] + 1.0, a[1]))
        blocking.append((time.perf_counter() - t) / 50 * 1e6)
        names = sorted(world.tamp_map.places)
        for _ in range(5):
            here = world.adapter.robot_place()
            t = time.perf_counter()
            world.execute(f"(move robot {here} {names[int(rng.integers(len(names)))]})")
            skill_ms["move"].append((time.perf_counter() - t) * 1e3)
        world.close()

        world = PyBulletWorld(args.size, PyBulletOptions(n_tasks=4, task_order="cycle"))
        env = ServiceRobotEnv(world, update_mode="both")
        agent = OracleAgent(env, FastDownward(search="astar(blind())", timeout=60.0))
        start = time.perf_counter()
        obs, info = env.reset(seed=seed)
        while True:
            action = agent.act(obs)
            t = time.perf_counter()
            name = action.strip("()").split()[0] if action.strip("()") else "?"
            obs, _, terminated, truncated, info = env.step(action)
            skill_ms[name].append((time.perf_counter() - t) * 1e3)
            if terminated or truncated:
                break
        walls.append(time.perf_counter() - start)
        successes.append(info["tasks_completed"] / info["tasks_total"])
        world.close()

    print(json.dumps({
        "size": args.size, "seeds": args.seeds,
        "render_fps_320x240": round(statistics.mean(fps320), 1),
        "render_fps_640x480": round(statistics.mean(fps640), 1),
        "reset_s": round(statistics.mean(resets), 3),
        "skill_ms": {k: round(statistics.median(v), 2) for k, v in sorted(skill_ms.items())},
        "blocking_us": round(statistics.mean(blocking), 1),
        "episode_wall_s": round(statistics.mean(walls), 2),
        "oracle_task_success": round(statistics.mean(successes), 3),
    }))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
