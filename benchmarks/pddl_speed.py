"""PDDL interpreter speed on the default household: µs per applicability test, apply and goal check.

Prints one JSON line. The state is a real generated house (~900 atoms); actions are cached after first use.

    python benchmarks/pddl_speed.py
"""

from __future__ import annotations

import argparse
import json
import time
import timeit

import numpy as np

from servicerobot.pddl import Interpreter, parse_domain
from servicerobot.scenes import generate_household, household_domain, household_domain_text


def _us(fn, number: int = 20000, scale: int = 1) -> float:
    number //= scale
    return min(timeit.repeat(fn, number=number, repeat=5)) / number * 1e6


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="a tenth of the timing loops")
    scale = 10 if parser.parse_args().quick else 1
    start = time.perf_counter()
    for _ in range(20 // scale):
        parse_domain(household_domain_text())
    parse_ms = (time.perf_counter() - start) / (20 // scale) * 1e3
    scene = generate_household("default", np.random.default_rng(0))
    state = scene.init
    interp = Interpreter(household_domain(), scene.objects)
    room = next(a.args[1] for a in state if a.predicate == "in-room" and a.args[0] == "robot")
    other = next(a.args[1] for a in state if a.predicate == "connected" and a.args[0] == room)
    move = interp.parse_action(f"(move robot {room} {other})")
    conj = interp.compile_goal("(and (made bed_1) (not (light-on light_1)) (on book_1 bookshelf_1))")
    forall = interp.compile_goal("(forall (?d - dish) (or (not (dirty ?d)) (discarded ?d)))")
    print(json.dumps({
        "benchmark": "pddl_speed", "atoms_in_state": len(state), "objects": len(scene.objects),
        "parse_domain_ms": round(parse_ms, 2),
        "applicable_us": round(_us(lambda: interp.applicable(move, state), scale=scale), 3),
        "apply_us": round(_us(lambda: interp.apply(move, state), 5000, scale), 2),
        "goal_conjunction_us": round(_us(lambda: conj.holds(state), scale=scale), 3),
        "goal_forall_dishes_us": round(_us(lambda: forall.holds(state), 5000, scale), 2),
        "dishes": sum(1 for t in scene.objects.values() if t == "dish"),
    }))


if __name__ == "__main__":
    main()
