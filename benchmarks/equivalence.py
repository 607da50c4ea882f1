"""Benchmark `servicerobot.pddl.equivalence.equivalent`: milliseconds per pair, parsing included.

Generates 1,000 blocksworld and gripper pairs of up to 80 propositions (init + goal), half of them
renamed-and-shuffled copies (equivalent), half with a goal changed by one fact, and prints one JSON
line: median_ms, p95_ms, count, and how many pairs were equivalent. With `--brute-force N` it also
checks N small random pairs against brute-force enumeration and reports the agreement. The scaling
series times pairs of different sizes (n vs n+1 blocks, n = 10 ... 10,000, parsing included), which the
object counts decide in O(n); `growth_per_10x` is the time ratio of each step (10 = linear).

The same-size series (CPU seconds, parsing included, one run each) times what the counts cannot
decide: random n-block pairs renamed and shuffled (`equal`) or with one goal literal changed
(`different`), n = 10, 100, 1,000, 10,000 (`--same-size-max`), and n blocks on the table vs the goal of
one n-block tower, renamed (`tower`). `--big N` adds one more pair of each kind at N blocks (90,000 is
the 5 MB pair of issue 25).

Run: `python benchmarks/equivalence.py [--pairs 1000] [--brute-force 500] [--scaling-max 10000]
[--same-size-max 10000] [--big 90000] [--quick]`
"""

from __future__ import annotations

import argparse
import itertools
import json
import random
import statistics
import time

from servicerobot.pddl import domains, parse_problem
from servicerobot.pddl._equivalence_bruteforce import (
    _blocks_state,
    _gripper_state,
    _lit,
    _text,
    brute_force_equivalent,
    random_pair,
)
from servicerobot.pddl._equivalence_cases import same_size_pair, table_to_tower
from servicerobot.pddl.atoms import Atom
from servicerobot.pddl.equivalence import EquivalenceUnknownError, compare, equivalent


def _tower(n: int) -> str:
    """n blocks on the table; the goal stacks them into one tower."""
    objs = " ".join(f"b{i}" for i in range(n))
    init = " ".join(f"(on-table b{i}) (clear b{i})" for i in range(n)) + " (arm-empty)"
    goal = " ".join(f"(on b{i} b{i + 1})" for i in range(n - 1))
    return f"(define (problem t{n}) (:domain blocksworld) (:objects {objs}) (:init {init}) (:goal (and {goal})))"


def _scaling(largest: int) -> dict:
    """Milliseconds to decide n vs n+1 blocks (best of 3) for n = 10, 100, ... up to `largest`."""
    domain = domains.text("blocksworld")
    series, n = [], 10
    while n <= largest:
        a, b = _tower(n), _tower(n + 1)
        best = float("inf")
        for _ in range(3):
            start = time.perf_counter()
            verdict = compare(a, b, domain)
            best = min(best, time.perf_counter() - start)
        assert not verdict, "pairs of different sizes are never equivalent"
        series.append({"objects": n, "bytes": len(a) + len(b), "ms": round(best * 1000, 2)})
        n *= 10
    growth = [round(y["ms"] / x["ms"], 1) for x, y in itertools.pairwise(series)]
    return {"scaling_different_sizes": series, "growth_per_10x": growth}


def _cpu(a: str, b: str, domain) -> tuple[str, float]:
    """(verdict: equivalent / different / unknown, CPU seconds) of one compare, parsing included."""
    start = time.process_time()
    try:
        verdict = "equivalent" if compare(a, b, domain) else "different"
    except EquivalenceUnknownError:
        verdict = "unknown"
    return verdict, round(time.process_time() - start, 3)


def _same_size(largest: int, big: int) -> dict:
    """CPU seconds of same-size pairs (equal, one goal literal changed, renamed table->tower)."""
    domain = domains.load("blocksworld")
    sizes, n = [], 10
    while n <= largest:
        sizes.append(n)
        n *= 10
    if big:
        sizes.append(big)
    rows = []
    for n in sizes:
        for kind in ("equal", "different", "tower"):
            a, b = table_to_tower(n) if kind == "tower" else same_size_pair(n, seed=n, equal=kind == "equal")
            verdict, seconds = _cpu(a, b, domain)
            rows.append({"kind": kind, "blocks": n, "bytes": len(a) + len(b), "verdict": verdict,
                         "cpu_s": seconds})
    return {"same_size_cpu_s": rows, "same_size_max_cpu_s": max(r["cpu_s"] for r in rows)}


def _pair(rng: random.Random) -> tuple[str, str, str]:
    if rng.random() < 0.5:
        name = "blocksworld"
        objs = [f"b{i}" for i in range(rng.randint(4, 24))]
        init = _blocks_state(rng, objs)
        goal = sorted(_blocks_state(rng, objs))
        static: set[Atom] = set()
    else:
        name = "gripper"
        rooms = [f"r{i}" for i in range(rng.randint(2, 4))]
        grippers = ["left", "right"]
        balls = [f"ball{i}" for i in range(rng.randint(2, 14))]
        objs = rooms + grippers + balls
        init = _gripper_state(rng, rooms, balls, grippers)
        static = {a for a in init if a.predicate in ("room", "ball", "gripper")}
        goal = sorted(_gripper_state(rng, rooms, balls, grippers) - static)
    goal = rng.sample(goal, rng.randint(max(1, len(goal) // 2), len(goal)))
    while len(init) + len(goal) > 80:
        goal.pop()
    lits = [_lit(a) for a in goal]
    ren = dict(zip(objs, rng.sample([f"n{i}" for i in range(len(objs))], len(objs))))
    lits_b = [_lit(Atom(a.predicate, tuple(ren[x] for x in a.args))) for a in goal]
    if rng.random() < 0.5 and len(lits_b) > 1:
        lits_b.pop(rng.randrange(len(lits_b)))
    rng.shuffle(lits_b)
    init_b = {Atom(a.predicate, tuple(ren[x] for x in a.args)) for a in init}
    objs_b = rng.sample(list(ren.values()), len(objs))
    return (
        domains.text(name),
        _text("a", name, objs, init, f"(and {' '.join(lits)})"),
        _text("b", name, objs_b, init_b, f"(and {' '.join(lits_b)})"),
    )


def main() -> None:
    """Time the pairs and print one JSON line."""
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--pairs", type=int, default=1000)
    ap.add_argument("--brute-force", type=int, default=0, help="also cross-check this many small pairs")
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--scaling-max", type=int, default=10000, help="largest n of the scaling series (0: skip)")
    ap.add_argument("--same-size-max", type=int, default=10000,
                    help="largest n of the same-size series (0: skip)")
    ap.add_argument("--big", type=int, default=0, help="one more same-size pair of each kind at this many blocks")
    ap.add_argument("--quick", action="store_true",
                    help="100 pairs, 50 brute-force checks at most, same-size series up to 1,000")
    args = ap.parse_args()
    if args.quick:
        args.pairs, args.brute_force = min(args.pairs, 100), min(args.brute_force, 50)
        args.same_size_max = min(args.same_size_max, 1000)
    rng = random.Random(args.seed)
    pairs = [_pair(rng) for _ in range(args.pairs)]
    for d, a, b in pairs[:20]:  # warm up: domain parsing and analysis are cached
        equivalent(a, b, d)
    times, positive = [], 0
    for d, a, b in pairs:
        start = time.perf_counter()
        positive += equivalent(a, b, d)
        times.append((time.perf_counter() - start) * 1000)
    times.sort()
    row = {
        "benchmark": "equivalence",
        "median_ms": round(statistics.median(times), 3),
        "p95_ms": round(times[int(0.95 * (len(times) - 1))], 3),
        "max_ms": round(times[-1], 3),
        "count": len(times),
        "equivalent": positive,
    }
    if args.brute_force:
        agree = 0
        for i in range(args.brute_force):
            name = "blocksworld" if i % 2 == 0 else "gripper"
            dom = domains.load(name)
            a, b = random_pair(rng, name)
            pa, pb = parse_problem(a, dom), parse_problem(b, dom)
            agree += brute_force_equivalent(dom, pa, pb) == equivalent(pa, pb, dom)
        row["brute_force_agreement"] = f"{agree}/{args.brute_force}"
    if args.scaling_max:
        row.update(_scaling(args.scaling_max))
    if args.same_size_max or args.big:
        row.update(_same_size(args.same_size_max, args.big))
    print(json.dumps(row))


if __name__ == "__main__":
    main()
