"""Environment throughput: steps/s of ServiceRobot-v0 vs CartPole-v1 in the same run, render FPS, memory.

Prints one JSON line. The household actions are real: the oracle agent's actions are recorded on a few
seeded episodes first (untimed), then the same episodes are replayed (timed) so that the mix of moves,
pick-ups, failed actions and human events is what an agent sees. `ratio_to_cartpole` replays houses the
process has seen (their actions and goals compiled already, as with a fixed scene), timed in rounds that
alternate with CartPole-v1's, so that load from other processes falls on both alike (`cpu_ratio_to_cartpole`:
the same in process CPU time, which other processes do not stretch); `new_house_*` replays
20 other seeds once each after emptying every shared cache, as training on fresh seeds would, each house
followed by a share of CartPole's steps (`new_house_cartpole_steps_per_s`, its baseline): resets untimed as
above, and timed (`new_house_with_resets_*`, `new_house_reset_ms`, and that reset in CartPole steps); the
`*_cpu_*` figures are the same in process CPU time. Usage:

    python benchmarks/env_throughput.py [--size default] [--episodes 3] [--steps 20000]
"""

from __future__ import annotations

import argparse
import json
import os
import time
import tracemalloc

import gymnasium as gym

import servicerobot  # noqa: F401
from servicerobot.oracle import OracleAgent
from servicerobot.pddl import Interpreter


def _forget_shared() -> None:
    """Empty every cache shared across houses: the interpreter's tables and atoms, and the prior's texts
    per atom (where the code under test keeps them)."""
    Interpreter.clear_shared()
    try:
        from servicerobot.envs.json_text import clear_facts
    except ImportError:  # an older commit
        return
    clear_facts()


def _record(env_id: str, seeds: list[int], **kwargs) -> list[list[str]]:
    """The oracle's actions on each seeded episode of `env_id` (untimed)."""
    episodes = []
    for seed in seeds:
        env = gym.make(env_id, **kwargs)
        agent = OracleAgent.from_env(env)
        obs, _ = env.reset(seed=seed)
        actions = []
        while True:
            action = agent.act(obs)
            actions.append(action)
            obs, _, term, trunc, _ = env.step(action)
            if term or trunc:
                break
        env.close()
        episodes.append(actions)
    return episodes


def _replay_rate(env_id: str, seeds: list[int], episodes: list[list[str]], min_steps: int, **kwargs) -> float:
    """Steps/s replaying recorded episodes (resets untimed) until at least `min_steps` steps.

    Replays see each house again, so the interpreter shared by that universe has its actions grounded and
    its goals compiled already (as over a fixed scene, or a seed seen before).
    """
    env = gym.make(env_id, **kwargs)
    steps, elapsed = 0, 0.0
    while steps < min_steps:
        for seed, actions in zip(seeds, episodes):
            env.reset(seed=seed)
            start = time.perf_counter()
            for action in actions:
                env.step(action)
            elapsed += time.perf_counter() - start
            steps += len(actions)
    env.close()
    return steps / elapsed


def _side_by_side(seeds: list[int], episodes: list[list[str]], min_steps: int, cartpole_steps: int,
                  **kwargs) -> tuple[float, float, float, float]:
    """(household steps/s as `_replay_rate`, CartPole-v1 steps/s over `cartpole_steps` seeded random actions,
    resets included), timed in alternating rounds: one pass over the recorded episodes, then a share of
    CartPole's steps; then the same two rates in process CPU time (what a busy machine's other processes
    do not change)."""
    env = gym.make("ServiceRobot-v0", **kwargs)
    cart = gym.make("CartPole-v1")
    cart.reset(seed=0)
    cart.action_space.seed(0)
    actions = [cart.action_space.sample() for _ in range(cartpole_steps)]
    rounds = -(-min_steps // max(1, sum(len(e) for e in episodes)))
    chunk = -(-cartpole_steps // rounds)
    steps = cart_steps = 0
    elapsed = cart_elapsed = cpu = cart_cpu = 0.0
    while steps < min_steps or cart_steps < cartpole_steps:
        for seed, recorded in zip(seeds, episodes):
            env.reset(seed=seed)
            start, start_cpu = time.perf_counter(), time.process_time()
            for action in recorded:
                env.step(action)
            elapsed += time.perf_counter() - start
            cpu += time.process_time() - start_cpu
            steps += len(recorded)
        share = actions[cart_steps:cart_steps + chunk]
        start, start_cpu = time.perf_counter(), time.process_time()
        for a in share:
            _, _, term, trunc, _ = cart.step(a)
            if term or trunc:
                cart.reset()
        cart_elapsed += time.perf_counter() - start
        cart_cpu += time.process_time() - start_cpu
        cart_steps += len(share)
    env.close()
    return steps / elapsed, cart_steps / cart_elapsed, steps / cpu, cart_steps / cart_cpu


def _new_house_rates(seeds: list[int], episodes: list[list[str]], size: str, cartpole_steps: int) -> dict:
    """Houses the process has not seen: every shared cache is emptied first, then each recorded episode is
    replayed once, in order (each house new, after the others, as in training on fresh seeds), each house
    followed by a share of CartPole-v1's steps (resets included) so that load falls on both alike.

    Returns steps/s with resets untimed (`steps_per_s`, as `_replay_rate`) and with each house's reset timed
    (`with_resets_steps_per_s`; and as a ratio to CartPole in process CPU time), the mean reset in ms, and
    CartPole's steps/s over its interleaved shares; in process CPU time, which other processes on a busy
    machine stretch less, the ratio with resets untimed (`cpu_ratio`) and a reset in CartPole steps."""
    env = gym.make("ServiceRobot-v0", size=size)
    env.reset(seed=seeds[0] - 1)  # gym's env checker inspects an env's first reset and step: not a house's cost
    env.step("(wait)")
    _forget_shared()
    cart = gym.make("CartPole-v1")
    cart.reset(seed=1)
    cart.action_space.seed(1)
    chunk = -(-cartpole_steps // len(seeds))
    actions = [cart.action_space.sample() for _ in range(chunk * len(seeds))]
    steps = cart_steps = 0
    stepping = resetting = cart_elapsed = cpu = cart_cpu = step_cpu = 0.0
    for i, (seed, recorded) in enumerate(zip(seeds, episodes)):
        start, start_cpu = time.perf_counter(), time.process_time()
        env.reset(seed=seed)
        reset_done, reset_done_cpu = time.perf_counter(), time.process_time()
        for action in recorded:
            env.step(action)
        end = time.perf_counter()
        cpu += time.process_time() - start_cpu
        step_cpu += time.process_time() - reset_done_cpu
        resetting += reset_done - start
        stepping += end - reset_done
        steps += len(recorded)
        start, start_cpu = time.perf_counter(), time.process_time()
        for a in actions[i * chunk:(i + 1) * chunk]:
            _, _, term, trunc, _ = cart.step(a)
            if term or trunc:
                cart.reset()
        cart_elapsed += time.perf_counter() - start
        cart_cpu += time.process_time() - start_cpu
        cart_steps += chunk
    env.close()
    return {"steps_per_s": steps / stepping, "with_resets_steps_per_s": steps / (stepping + resetting),
            "reset_ms": resetting / len(seeds) * 1e3, "cartpole_steps_per_s": cart_steps / cart_elapsed,
            "with_resets_cpu_ratio": (steps / cpu) / (cart_steps / cart_cpu),
            "cpu_ratio": (steps / step_cpu) / (cart_steps / cart_cpu),
            "reset_cpu_in_cartpole_steps": (cpu - step_cpu) / len(seeds) * (cart_steps / cart_cpu)}


def _steady_rate(size: str, n: int) -> float:
    """Steps/s within one long task: the robot walks between connected rooms (every action valid)."""
    env = gym.make("ServiceRobot-v0", size=size, n_tasks=1, task_kinds=["make_bed"])
    env.reset(seed=0)
    world = env.unwrapped.world
    object.__setattr__(env.unwrapped.active_task, "budget", 10**9)
    neighbours: dict[str, list[str]] = {}
    for a in world.state.atoms:
        if a.predicate == "connected":
            neighbours.setdefault(a.args[0], []).append(a.args[1])
    room, steps = world.state.robot_room(), 0
    start = time.perf_counter()
    while steps < n:
        nxt = neighbours[room][steps % len(neighbours[room])]
        env.step(f"(move robot {room} {nxt})")
        room, steps = nxt, steps + 1
    return n / (time.perf_counter() - start)


def _ai2thor_rate(seeds: list[int], min_steps: int) -> float | None:
    """Steps/s of ServiceRobot-AI2THOR-v0's symbolic executor (FloorPlan1, update mode "both", so every
    step builds THOR metadata and reads it back through the adapter), replaying recorded oracle actions."""
    import importlib.util

    if importlib.util.find_spec("alfworld") is None:
        return None
    episodes = _record("ServiceRobot-AI2THOR-v0", seeds, scene="FloorPlan1")
    return _replay_rate("ServiceRobot-AI2THOR-v0", seeds, episodes, min_steps, scene="FloorPlan1")


def _render_fps(size: str, frames: int) -> float:
    """Frames/s of env.render() while the robot walks from room to room (so every frame changes)."""
    env = gym.make("ServiceRobot-v0", size=size, render_mode="rgb_array", n_tasks=1, task_kinds=["make_bed"])
    env.reset(seed=0)
    object.__setattr__(env.unwrapped.active_task, "budget", 10**9)
    world = env.unwrapped.world
    env.render()  # the first frame builds the static background
    room, elapsed = world.state.robot_room(), 0.0
    for i in range(frames):
        neighbours = sorted(a.args[1] for a in world.state.atoms if a.predicate == "connected" and a.args[0] == room)
        nxt = neighbours[i % len(neighbours)]
        env.step(f"(move robot {room} {nxt})")
        room = nxt
        start = time.perf_counter()
        env.render()
        elapsed += time.perf_counter() - start
    env.close()
    return frames / elapsed


def _memory_per_env(size: str, n: int = 4) -> float:
    tracemalloc.start()
    envs = []
    for i in range(n):
        env = gym.make("ServiceRobot-v0", size=size)
        env.reset(seed=i)
        envs.append(env)
    current, _ = tracemalloc.get_traced_memory()
    tracemalloc.stop()
    return current / n / 2**20


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--size", default="default")
    parser.add_argument("--episodes", type=int, default=3)
    parser.add_argument("--steps", type=int, default=20000, help="minimum timed household steps")
    parser.add_argument("--quick", action="store_true", help="1 episode, 2,000 steps (a smoke run)")
    args = parser.parse_args()
    if args.quick:
        args.episodes, args.steps = 1, min(args.steps, 2000)
    seeds = list(range(args.episodes))
    episodes = _record("ServiceRobot-v0", seeds, size=args.size)
    household, cartpole, household_cpu, cartpole_cpu = _side_by_side(seeds, episodes, args.steps, 50000,
                                                                     size=args.size)
    new_seeds = list(range(1000, 1000 + (3 if args.quick else 20)))
    cold = _new_house_rates(new_seeds, _record("ServiceRobot-v0", new_seeds, size=args.size), args.size, 50000)
    steady = _steady_rate(args.size, args.steps)
    ai2thor = _ai2thor_rate(seeds, args.steps)
    print(json.dumps({
        "benchmark": "env_throughput", "size": args.size, "steps_per_s": round(household, 1),
        "cartpole_steps_per_s": round(cartpole, 1), "ratio_to_cartpole": round(household / cartpole, 3),
        "cpu_ratio_to_cartpole": round(household_cpu / cartpole_cpu, 3),
        "new_house_steps_per_s": round(cold["steps_per_s"], 1),
        "new_house_cartpole_steps_per_s": round(cold["cartpole_steps_per_s"], 1),
        "new_house_ratio_to_cartpole": round(cold["steps_per_s"] / cold["cartpole_steps_per_s"], 3),
        "new_house_with_resets_steps_per_s": round(cold["with_resets_steps_per_s"], 1),
        "new_house_with_resets_ratio_to_cartpole": round(cold["with_resets_steps_per_s"]
                                                         / cold["cartpole_steps_per_s"], 3),
        "new_house_with_resets_cpu_ratio_to_cartpole": round(cold["with_resets_cpu_ratio"], 3),
        "new_house_reset_ms": round(cold["reset_ms"], 3),
        "new_house_reset_in_cartpole_steps": round(cold["reset_ms"] / 1e3 * cold["cartpole_steps_per_s"], 1),
        "new_house_cpu_ratio_to_cartpole": round(cold["cpu_ratio"], 3),
        "new_house_reset_cpu_in_cartpole_steps": round(cold["reset_cpu_in_cartpole_steps"], 1),
        "steady_steps_per_s": round(steady, 1), "steady_ratio_to_cartpole": round(steady / cartpole, 3),
        "render_fps": round(_render_fps(args.size, 200), 1), "memory_mb_per_env": round(_memory_per_env(args.size), 2),
        "recorded_steps_per_pass": sum(len(e) for e in episodes), "cpus": os.cpu_count(),
        "ai2thor_symbolic_steps_per_s": None if ai2thor is None else round(ai2thor, 1),
    }))


if __name__ == "__main__":
    main()
