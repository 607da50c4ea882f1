"""Fast Downward per-call time, warm translator vs the driver script, on the agent's own problems.

For each house size, the `search-rag` agent's first planning problem of a few seeded episodes is
captured, then solved alternately by `FastDownward(warm=False)` (the driver: two Python start-ups per
call) and `FastDownward(warm=True)` (translator forked from a warm server, search binary started
directly). Prints one JSON line: median seconds per call for both, and whether every plan is identical.

    python benchmarks/planner_startup.py [--sizes small default large] [--seeds 5] [--repeats 3]
"""

from __future__ import annotations

import argparse
import json
import statistics
import time

import gymnasium as gym

import servicerobot  # noqa: F401  (registers the env)
from servicerobot.agent import ServiceAgent
from servicerobot.language.rule_interpreter import RuleInterpreter
from servicerobot.planners import FastDownward


class _Capture(FastDownward):
    """Records the problems the agent asks for, and solves them as usual."""

    def __init__(self):
        super().__init__(timeout=120)
        self.problems = []

    def solve(self, domain, problem, timeout=None):
        self.problems.append((domain, problem))
        return super().solve(domain, problem, timeout)


def _problems(size: str, seeds: int) -> list:
    out = []
    for seed in range(seeds):
        env = gym.make("ServiceRobot-v0", size=size)
        obs, _ = env.reset(seed=seed)
        capture = _Capture()
        agent = ServiceAgent.from_env(env, interpreter=RuleInterpreter(), planner=capture, fallback_to_full=False)
        for _ in range(20):
            obs, *_ = env.step(agent.act(obs))
            if capture.problems:
                out.append(capture.problems[0])
                break
        env.close()
    return out


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sizes", nargs="+", default=["small", "default", "large"])
    parser.add_argument("--seeds", type=int, default=5)
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--quick", action="store_true", help="small and default houses, 2 seeds, 2 repeats")
    args = parser.parse_args(argv)
    if args.quick:
        args.sizes, args.seeds, args.repeats = ["small", "default"], 2, 2
    driver, warm = FastDownward(warm=False, timeout=300), FastDownward(warm=True, timeout=300)
    warm.solve(*_problems("small", 1)[0])  # start the warm server outside the timings
    rows, identical = {}, True
    for size in args.sizes:
        times = {"driver": [], "warm": []}
        for domain, problem in _problems(size, args.seeds):
            for _ in range(args.repeats):
                plans = {}
                for name, planner in (("driver", driver), ("warm", warm)):
                    t0 = time.perf_counter()
                    result = planner.solve(domain, problem)
                    times[name].append(time.perf_counter() - t0)
                    plans[name] = (result.status, result.plan, result.expanded)
                identical &= plans["driver"] == plans["warm"]
        rows[size] = {"calls": len(times["warm"]),
                      "median_driver_s": round(statistics.median(times["driver"]), 4),
                      "median_warm_s": round(statistics.median(times["warm"]), 4),
                      "speedup": round(statistics.median(times["driver"]) / statistics.median(times["warm"]), 2)}
    print(json.dumps({"benchmark": "planner_startup", "sizes": rows, "identical_plans": identical}))


if __name__ == "__main__":
    main()
