"""Where a new house's time goes: the parts of its reset, and of its steps, beside CartPole-v1 in the same run.

Houses the process has not seen, as in `env_throughput.py`'s `new_house_*`: the oracle's actions on 20 seeds
are recorded (untimed), every shared cache is emptied, then each house is reset and its episode replayed once,
in process CPU time (which other processes on a busy machine stretch less than wall time). The reset and
the parts it calls are wrapped with timers (`reset_ms` and `reset_parts_ms`: the house's generation, of it
the items' placing, the state's indexes, the interpreter, the people and tasks, the prior and its JSON, the
first task; `reset_rest_ms` is the rest: seeding, reset's own lines and the first observation), and so are
the parts of a step
(`step_parts_us`: the action, of it the first reading of an action text this house had not stepped, the
people, the goal test, of it reading a goal as ground literals and clauses and compiling a goal of another
shape, the next task, the observation, the info), with a timer's own cost (measured on an empty method) taken
off each reading; parts overlap where one calls another (the next task tests its goal, and a goal is read or
compiled inside `goal_holds`; a part the code under test lacks is left out). `step_us` is a new house's step
in that pass, `reset_in_cartpole_steps` the reset in CartPole steps of the same run. Repeated `--rounds` times over other
seeds; each figure is the round's median. Prints one JSON line:

    python benchmarks/env_new_house_breakdown.py [--size default] [--houses 20] [--rounds 3] [--quick]
"""

from __future__ import annotations

import argparse
import json
import statistics
import time

import gymnasium as gym
from env_step_breakdown import _Empty, _Timers  # benchmarks/, the script's directory
from env_throughput import _forget_shared, _record

import servicerobot  # noqa: F401
from servicerobot.envs import core
from servicerobot.envs.household import world as household_world
from servicerobot.pddl import Interpreter
from servicerobot.scenes import household as household_scene
from servicerobot.scenes import source

RESET_PARTS = {  # what ServiceRobotEnv.reset calls (a house's generation first)
    "generation (GeneratedHomes.generate)": (source.GeneratedHomes, "generate"),
    "  of it, the items (_place_items)": (household_scene, "_place_items"),
    "state indexes (HouseholdState)": (household_world, "HouseholdState"),
    "interpreter (Interpreter.shared)": (Interpreter, "shared"),
    "people (HumanProcess)": (household_world, "HumanProcess"),
    "tasks (TaskGenerator)": (household_world, "TaskGenerator"),
    "prior (world.prior)": (household_world.HouseholdWorld, "prior"),
    "prior's JSON (_dumps)": (core, "_dumps"),
    "prior as JSON text (world.prior_json)": (household_world.HouseholdWorld, "prior_json"),
    "first task (_start_task)": (core.ServiceRobotEnv, "_start_task"),
}
STEP_PARTS = {  # what ServiceRobotEnv.step calls
    "world.execute (the action)": (household_world.HouseholdWorld, "execute"),
    "  of it, an action text new to the house (Interpreter._stepped_new)": (Interpreter, "_stepped_new"),
    "world.tick (people)": (household_world.HouseholdWorld, "tick"),
    "world.goal_holds": (household_world.HouseholdWorld, "goal_holds"),
    "  of it, reading a goal as literals and clauses (Interpreter.goal_form)": (Interpreter, "goal_form"),
    "  of it, goal compilation (Interpreter.compile_goal)": (Interpreter, "compile_goal"),
    "_start_task (next task)": (core.ServiceRobotEnv, "_start_task"),
    "_observation": (core.ServiceRobotEnv, "_observation"),
    "_info": (core.ServiceRobotEnv, "_info"),
}


def _present(parts: dict[str, tuple]) -> dict[str, tuple]:
    """The parts the code under test has (an older commit may lack a method: its part is left out)."""
    return {label: (owner, name) for label, (owner, name) in parts.items() if hasattr(owner, name)}


def _timer_cost(timers: _Timers) -> float:
    """Seconds a timer adds to one call it wraps (the same wrapping as the parts', on an empty method)."""
    empty = _Empty()
    timers.wrap(_Empty, "nothing", "empty")
    timers.on = True
    for _ in range(100_000):
        empty.nothing()
    timers.on = False
    timers.restore()
    return timers.seconds["empty"] / timers.calls["empty"]


def _round(seeds: list[int], size: str, cartpole_steps: int) -> dict:
    episodes = _record("ServiceRobot-v0", seeds, size=size)
    env = gym.make("ServiceRobot-v0", size=size)
    env.reset(seed=seeds[0] - 1)  # gym's env checker inspects an env's first reset and step: not a house's cost
    env.step("(wait)")
    _forget_shared()
    # The reset's timers count only during resets, the steps' only during steps (some methods are in both).
    resets, stepping = _Timers(), _Timers()
    for label, (owner, name) in _present(RESET_PARTS).items():
        resets.wrap(owner, name, label)
    resets.wrap(core.ServiceRobotEnv, "reset", "reset")
    for label, (owner, name) in _present(STEP_PARTS).items():
        stepping.wrap(owner, name, label)
    stepping.wrap(core.ServiceRobotEnv, "step", "step")
    steps = 0
    try:
        for seed, actions in zip(seeds, episodes):
            resets.on = True
            env.reset(seed=seed)
            resets.on, stepping.on = False, True
            for action in actions:
                env.step(action)
            stepping.on = False
            steps += len(actions)
    finally:
        stepping.restore()
        resets.restore()
    env.close()
    tick = _timer_cost(_Timers())
    seconds = {label: max(0.0, timers.seconds[label] - tick * timers.calls[label])
               for timers in (resets, stepping) for label in timers.seconds}
    houses = len(seeds)
    step_inner = sum(stepping.calls[label] for label in STEP_PARTS if not label.startswith("  "))
    reset_inner = sum(resets.calls[label] for label in RESET_PARTS if not label.startswith("  "))
    reset = (seconds["reset"] - tick * reset_inner) / houses  # a timer inside costs its whole reading
    cart = gym.make("CartPole-v1")
    cart.reset(seed=0)
    cart.action_space.seed(0)
    actions = [cart.action_space.sample() for _ in range(cartpole_steps)]
    start = time.process_time()
    for a in actions:
        _, _, term, trunc, _ = cart.step(a)
        if term or trunc:
            cart.reset()
    cart_step = (time.process_time() - start) / cartpole_steps
    return {
        "reset_ms": reset * 1e3, "reset_in_cartpole_steps": reset / cart_step,
        "reset_parts_ms": {label.strip(): seconds.get(label, 0.0) / houses * 1e3 for label in RESET_PARTS},
        "reset_rest_ms": (reset - sum(seconds.get(label, 0.0) for label in RESET_PARTS
                                      if not label.startswith("  ")) / houses) * 1e3,
        "step_us": (seconds["step"] - tick * step_inner) / steps * 1e6, "cartpole_step_us": cart_step * 1e6,
        "step_parts_us": {label.strip(): seconds.get(label, 0.0) / steps * 1e6 for label in STEP_PARTS},
        "steps": steps,
    }


def _median(rounds: list[dict], key: str) -> float | dict:
    if isinstance(rounds[0][key], dict):
        return {k: round(statistics.median(r[key][k] for r in rounds), 3) for k in rounds[0][key]}
    return round(statistics.median(r[key] for r in rounds), 3)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--size", default="default")
    parser.add_argument("--houses", type=int, default=20)
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--quick", action="store_true", help="3 houses, 1 round (a smoke run)")
    args = parser.parse_args()
    if args.quick:
        args.houses, args.rounds = 3, 1
    rounds = [_round(list(range(1000 + 100 * r, 1000 + 100 * r + args.houses)), args.size, 100_000)
              for r in range(args.rounds)]
    out = {"benchmark": "env_new_house_breakdown", "size": args.size, "houses": args.houses, "rounds": args.rounds}
    for key in ("reset_ms", "reset_in_cartpole_steps", "reset_parts_ms", "reset_rest_ms", "step_us",
                "cartpole_step_us", "step_parts_us"):
        out[key] = _median(rounds, key)
    out["ratio_to_cartpole"] = round(out["cartpole_step_us"] / out["step_us"], 3)
    out["steps_per_round"] = rounds[0]["steps"]
    print(json.dumps(out))


if __name__ == "__main__":
    main()
