"""Where a replayed household step's time goes, beside one CartPole-v1 step measured in the same run.

The oracle's actions on a few seeded episodes are recorded (untimed), then replayed many times as in
`env_throughput.py` (houses seen before), all in process CPU time (which other processes on a busy machine
stretch less than wall time). One pass runs untimed inside (`env_step_us`: `env.step`, gym's wrappers
included); another (alternating with it) wraps `ServiceRobotEnv.step` and each part it calls with a timer, and takes
a timer's own cost, measured on an empty method, off each reading: `timed_step_us` is `ServiceRobotEnv.step`
in that pass (without gym's wrappers), `parts_us_per_step` what it spends in each part, and `step_itself_us`
the rest (its own lines and the action's length check). The parts are approximate: timers slow what they
time a little, beyond what is taken off.
Prints one JSON line:

    python benchmarks/env_step_breakdown.py [--size default] [--episodes 3] [--rounds 40] [--quick]
"""

from __future__ import annotations

import argparse
import json
import time
from collections import Counter

import gymnasium as gym
from env_throughput import _record  # benchmarks/, the script's directory

import servicerobot  # noqa: F401
from servicerobot.envs import core
from servicerobot.envs.household import world as household_world

PARTS = {  # what ServiceRobotEnv.step calls, in order
    "world.execute (action lookup, state change)": (household_world.HouseholdWorld, "execute"),
    "world.tick (people)": (household_world.HouseholdWorld, "tick"),
    "_tell (what people say)": (core.ServiceRobotEnv, "_tell"),
    "world.goal_holds": (household_world.HouseholdWorld, "goal_holds"),
    "_start_task (next task)": (core.ServiceRobotEnv, "_start_task"),
    "_observation": (core.ServiceRobotEnv, "_observation"),
    "_info": (core.ServiceRobotEnv, "_info"),
}


class _Timers:
    """Wraps methods with CPU-time counters that count only while `on`."""

    def __init__(self) -> None:
        self.on = False
        self.seconds: Counter = Counter()
        self.calls: Counter = Counter()
        self._undo: list = []

    def wrap(self, owner: type, name: str, label: str) -> None:
        method = getattr(owner, name)
        clock, seconds, calls = time.process_time, self.seconds, self.calls

        def timed(*args, **kwargs):
            if not self.on:
                return method(*args, **kwargs)
            start = clock()
            try:
                return method(*args, **kwargs)
            finally:
                seconds[label] += clock() - start
                calls[label] += 1

        setattr(owner, name, timed)
        self._undo.append((owner, name, method))

    def restore(self) -> None:
        for owner, name, method in reversed(self._undo):
            setattr(owner, name, method)
        self._undo = []


class _Empty:
    def nothing(self) -> None:
        return None


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--size", default="default")
    parser.add_argument("--episodes", type=int, default=3)
    parser.add_argument("--rounds", type=int, default=40, help="replays of the recorded episodes")
    parser.add_argument("--quick", action="store_true", help="1 episode, 3 rounds (a smoke run)")
    args = parser.parse_args()
    if args.quick:
        args.episodes, args.rounds = 1, 3

    seeds = list(range(args.episodes))
    episodes = _record("ServiceRobot-v0", seeds, size=args.size)
    env = gym.make("ServiceRobot-v0", size=args.size)
    for seed, actions in zip(seeds, episodes):  # compile the houses' actions and goals first, untimed
        env.reset(seed=seed)
        for action in actions:
            env.step(action)

    def replay() -> tuple[int, float]:
        steps, seconds = 0, 0.0
        for seed, actions in zip(seeds, episodes):
            env.reset(seed=seed)
            timers.on = True
            start = time.process_time()
            for action in actions:
                env.step(action)
            seconds += time.process_time() - start
            timers.on = False
            steps += len(actions)
        return steps, seconds

    # Untimed and timed passes alternate, so that a change of load falls on both alike.
    timers = _Timers()
    steps = timed_steps = 0
    seconds = 0.0
    for _ in range(args.rounds):
        n, s = replay()  # untimed inside
        steps, seconds = steps + n, seconds + s
        for label, (owner, name) in PARTS.items():
            timers.wrap(owner, name, label)
        timers.wrap(core.ServiceRobotEnv, "step", "step")
        try:
            timed_steps += replay()[0]
        finally:
            timers.restore()
    env_step = seconds / steps * 1e6
    # A timer's cost: inside its reading (`between`), and all of it as seen from an enclosing timer (`whole`).
    empty = _Empty()
    start = time.process_time()
    for _ in range(100_000):
        empty.nothing()
    bare = time.process_time() - start
    timers.wrap(_Empty, "nothing", "empty")
    timers.on = True
    start = time.process_time()
    for _ in range(100_000):
        empty.nothing()
    whole = (time.process_time() - start - bare) / 100_000
    timers.on = False
    timers.restore()
    between = timers.seconds["empty"] / timers.calls["empty"]
    parts = {label: max(0.0, timers.seconds[label] - between * timers.calls[label]) / timed_steps * 1e6
             for label in PARTS}
    inner_calls = sum(timers.calls[label] for label in PARTS)
    step = (timers.seconds["step"] - between * timers.calls["step"] - whole * inner_calls) / timed_steps * 1e6

    cart = gym.make("CartPole-v1")
    cart.reset(seed=0)
    cart.action_space.seed(0)
    actions = [cart.action_space.sample() for _ in range(100_000)]
    start = time.process_time()
    for a in actions:
        _, _, term, trunc, _ = cart.step(a)
        if term or trunc:
            cart.reset()
    cart_step = (time.process_time() - start) / len(actions) * 1e6
    print(json.dumps({
        "benchmark": "env_step_breakdown", "size": args.size, "steps": steps,
        "env_step_us": round(env_step, 2), "cartpole_step_us": round(cart_step, 2),
        "ratio_to_cartpole": round(cart_step / env_step, 3),
        "parts_us_per_step": {k: round(v, 2) for k, v in parts.items()},
        "timed_step_us": round(step, 2), "step_itself_us": round(step - sum(parts.values()), 2),
        "calls_per_step": {k: round(timers.calls[k] / timed_steps, 3) for k in PARTS},
        "timer_overhead_us": round(whole * 1e6, 2),
    }))


if __name__ == "__main__":
    main()
