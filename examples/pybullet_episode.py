"""Run one PyBullet episode with the oracle planner (an inspection task, then a pick-and-place task) and
write it as an MP4 with the robot's motion in between steps, plus one PNG frame.

    python examples/pybullet_episode.py --seed 0 --out demo-out/pybullet

The oracle plans with Fast Downward on the world's true state (sparse problem: the robot's place and the
approach places); every action is then executed in PyBullet by the world's motion planners. It needs
`pip install -e ".[pybullet]"` in a clone (pybullet, and OMPL for RRT-Connect repairs).
"""

from __future__ import annotations

import argparse
import json
import time
from pathlib import Path

import imageio.v2 as imageio
import numpy as np
from PIL import Image

from servicerobot.envs.core import ServiceRobotEnv
from servicerobot.envs.pybullet.world import PyBulletOptions, PyBulletWorld
from servicerobot.oracle import OracleAgent
from servicerobot.planners import FastDownward


def run(seed: int, out: Path | None, size: str = "default", width: int = 640, height: int = 480,
        fps: int = 12) -> dict:
    """Run the episode; write `out`/pybullet_episode.mp4 and `out`/pybullet_frame.png when `out` is given."""
    world = PyBulletWorld(size, PyBulletOptions(n_tasks=2, task_kinds=("inspect", "pick_place"),
                                                task_order="cycle"))
    env = ServiceRobotEnv(world, update_mode="both", render_mode="rgb_array", width=width, height=height)
    # blind A* returns shortest plans on these small sparse problems (lama-first may take detours)
    agent = OracleAgent(env, FastDownward(search="astar(blind())", timeout=60.0))
    writer = None
    png_saved = False
    if out is not None:
        out.mkdir(parents=True, exist_ok=True)
        writer = imageio.get_writer(out / "pybullet_episode.mp4", fps=fps, codec="libx264", quality=7,
                                    macro_block_size=16)
        world.on_substep = lambda: writer.append_data(env.render())
    start = time.perf_counter()
    obs, info = env.reset(seed=seed)
    log = [{"task": info["task"], "goal": info["oracle"]["goal"]}]
    if writer is not None:
        for _ in range(fps):  # a second on the task announcement
            writer.append_data(env.render())
    steps = 0
    while True:
        action = agent.act(obs)
        env.set_overlay(last_action=action, plan=list(agent.plan))
        obs, reward, terminated, truncated, info = env.step(action)
        steps += 1
        log.append({"action": action, "error": info["action_error"], "reward": round(reward, 3),
                    "completed": info["tasks_completed"]})
        if info["task_completed"] and info["task"]:
            log.append({"task": info["task"], "goal": info["oracle"]["goal"]})
        if writer is not None:
            frame = env.render()
            for _ in range(fps // 2):  # hold each step's result for half a second
                writer.append_data(frame)
            if not png_saved and world.state.held_by("robot"):
                Image.fromarray(frame).save(out / "pybullet_frame.png")
                png_saved = True
        if terminated or truncated:
            break
    wall = time.perf_counter() - start
    if writer is not None:
        writer.close()
        if not png_saved:
            Image.fromarray(env.render()).save(out / "pybullet_frame.png")
    env.close()
    world.close()
    return {"seed": seed, "success": bool(info["success"]), "tasks_completed": info["tasks_completed"],
            "tasks_total": info["tasks_total"], "steps": steps, "episode_wall_s": round(wall, 2),
            "planning_s": round(agent.planning_time, 2), "log": log}


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--size", default="default", choices=["small", "default", "large"])
    ap.add_argument("--out", type=Path, default=Path("demo-out/pybullet"), help="folder for the MP4 and PNG")
    ap.add_argument("--no-video", action="store_true")
    args = ap.parse_args(argv)
    result = run(args.seed, None if args.no_video else args.out, args.size)
    for entry in result.pop("log"):
        print(json.dumps(entry))
    print(json.dumps(result))
    if not args.no_video:
        print(f"wrote {args.out / 'pybullet_episode.mp4'} and {args.out / 'pybullet_frame.png'}")
    return 0 if result["success"] else 1


if __name__ == "__main__":
    np.set_printoptions(precision=3)
    raise SystemExit(main())
