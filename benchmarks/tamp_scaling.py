"""TAMP in scene graphs: dense vs sparse planning time per map, and the incremental object solver on a city
whose roads 13 suspicious objects block.

Scaling: for each map (alley 2x6, grid 10x10, office ~550 places, city ~18,000 places) and seed, one map and
one (N, K) = (3, 3) DNF goal are drawn from the seed and planned twice with Fast Downward (lama-first):
the *dense* direct encoding (every place and edge, every object up front) and the *sparse* encoding with the
incremental object solver. Times are wall-clock seconds of the whole plan call (task planning, refinement,
replanning; map preparation excluded); a run that hits `--timeout` counts as the timeout. `speedup` is the
dense median over the sparse median. CPU seconds (this process plus Fast Downward) are reported too, as the
machine may be shared.

city_blocked: the seed-0 city with 13 suspicious objects blocking roads (`block_roads`), 20 goals, each
planned by the incremental object solver and with all objects up front (both sparse).

`verified`: every solved plan passed `verify_plan` (goal clause, no motion segment enters an avoided place,
no collision). Prints one JSON line; progress goes to stderr.

    python benchmarks/tamp_scaling.py [--quick] [--seeds 10] [--timeout 60]
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import sys
import time

from servicerobot.errors import PlanVerificationError
from servicerobot.planners.tamp import TampPlanner, sample_goal
from servicerobot.scenes.tamp_maps import alley, block_roads, city, grid, office

SMALL_CITY = {"n_objects": 150, "n_suspicious": 4, "blocks": (3, 2), "block_cells": (30, 40)}


def _run(planner: TampPlanner, goal, timeout: float, **options) -> dict:
    try:
        plan = planner.plan(goal, **options)
    except PlanVerificationError as error:
        return {"status": "unverified", "seconds": timeout, "cpu": None, "verified": False, "message": str(error)}
    st = plan.stats
    timed_out = plan.status == "timeout"  # counted at the limit (the killed planner's CPU is not measurable)
    return {"status": plan.status, "seconds": timeout if timed_out else st.total_time,
            "cpu": timeout if timed_out else st.cpu_time, "verified": plan.verified,
            "cost": plan.cost, "fd_calls": st.fd_calls, "iterations": st.iterations,
            "objects_added": len(st.objects_added), "symbols": st.n_symbols,
            "inspected": sorted(a.args[0] for a in plan.actions if a.name == "inspect")}


def _summary(rows: list[dict]) -> dict:
    secs = [r["seconds"] for r in rows]
    cpus = [r["cpu"] for r in rows if r["cpu"] is not None]
    return {"n": len(rows), "solved": sum(r["status"] == "solved" for r in rows),
            "timeouts": sum(r["status"] == "timeout" for r in rows),
            "other": sorted({r["status"] for r in rows} - {"solved", "timeout"}),
            "median_s": round(statistics.median(secs), 3) if secs else None,
            "median_cpu_s": round(statistics.median(cpus), 3) if cpus else None,
            "max_s": round(max(secs), 3) if secs else None}


def scaling(name: str, make, seeds: int, timeout: float, log) -> tuple[dict, list[dict]]:
    dense, sparse, sizes = [], [], []
    for seed in range(seeds):
        m = make(seed)
        sizes.append((len(m.places), len(m.objects)))
        planner = TampPlanner(m, timeout=timeout)
        goal = sample_goal(m, 3, 3, seed)
        d = _run(planner, goal, timeout, encoding="dense", incremental=False)
        s = _run(planner, goal, timeout, encoding="sparse", incremental=True)
        dense.append(d)
        sparse.append(s)
        log(f"{name} seed {seed}: dense {d['status']} {d['seconds']:.2f}s  sparse {s['status']} {s['seconds']:.2f}s")
    ds, ss = _summary(dense), _summary(sparse)
    out = {"places": statistics.median(p for p, _ in sizes), "objects": statistics.median(o for _, o in sizes),
           "dense": ds, "sparse": ss,
           "speedup": round(ds["median_s"] / ss["median_s"], 2) if ss["median_s"] else None,
           "cpu_speedup": round(ds["median_cpu_s"] / ss["median_cpu_s"], 2)
           if ds["median_cpu_s"] and ss["median_cpu_s"] else None}
    return out, dense + sparse


def city_blocked(make, n_blockers: int, n_goals: int, timeout: float, log) -> tuple[dict, list[dict]]:
    m = block_roads(make(0), n_blockers, seed=0)
    blockers = {o for o in m.objects if o.startswith("blocker")}
    planner = TampPlanner(m, timeout=timeout)
    rows = {"incremental": [], "upfront": []}
    for i in range(n_goals):
        goal = sample_goal(m, 3, 3, 1000 + i)
        inc = _run(planner, goal, timeout, encoding="sparse", incremental=True)
        up = _run(planner, goal, timeout, encoding="sparse", incremental=False)
        rows["incremental"].append(inc)
        rows["upfront"].append(up)
        log(f"city_blocked goal {i}: incremental {inc['status']} {inc['seconds']:.2f}s "
            f"(+{inc.get('objects_added', 0)} objects)  upfront {up['status']} {up['seconds']:.2f}s")
    out: dict = {"places": len(m.places), "objects": len(m.objects), "blockers": n_blockers, "goals": n_goals}
    for key, rs in rows.items():
        summ = _summary(rs)
        summ["rate"] = round(summ["solved"] / len(rs), 3) if rs else None
        solved = [r for r in rs if r["status"] == "solved"]
        summ["median_solved_s"] = round(statistics.median(r["seconds"] for r in solved), 3) if solved else None
        summ["mean_objects_added"] = round(statistics.mean(r.get("objects_added", 0) for r in rs), 2) if rs else 0
        summ["plans_inspecting_a_blocker"] = sum(bool(set(r.get("inspected", [])) & blockers) for r in solved)
        out[key] = summ
    return out, rows["incremental"] + rows["upfront"]


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true",
                        help="smoke run: 2 seeds (1 for the city), a small city, 2 blocked-city goals, 5 s limit")
    parser.add_argument("--seeds", type=int, default=None, help="seeds per map (default 10; 2 with --quick)")
    parser.add_argument("--timeout", type=float, default=None, help="seconds per plan call (default 60; 5 quick)")
    parser.add_argument("--goals", type=int, default=None, help="blocked-city goals (default 20; 2 quick)")
    parser.add_argument("--maps", nargs="+", default=["alley", "grid", "office", "city", "city_blocked"],
                        help="which parts to run (default all)")
    args = parser.parse_args(argv)
    seeds = args.seeds or (2 if args.quick else 10)
    timeout = args.timeout or (5.0 if args.quick else 60.0)
    n_goals = args.goals or (2 if args.quick else 20)
    t0 = time.perf_counter()

    def log(msg: str) -> None:
        print(f"[{time.perf_counter() - t0:7.1f}s] {msg}", file=sys.stderr, flush=True)

    make_city = (lambda s: city(s, **SMALL_CITY)) if args.quick else city
    result: dict = {"benchmark": "tamp_scaling", "quick": args.quick, "seeds": seeds, "timeout_s": timeout,
                    "goal": "(N, K) = (3, 3)", "planner": "fast-downward[lama-first]",
                    "dense": "all places and edges, all objects up front, object-place edges <= 10 m and "
                             "object-object edges <= 3 m (Omniplanner's dense grounding)",
                    "sparse": "kept symbols joined by barrier-free shortest paths, incremental object solver",
                    "load_avg_start": [round(x, 2) for x in os.getloadavg()]}
    runs: list[dict] = []
    for name, make in (("alley", alley), ("grid", grid), ("office", office), ("city", make_city)):
        if name not in args.maps:
            continue
        n = min(seeds, 1) if args.quick and name == "city" else seeds
        result[name], rs = scaling(name, make, n, timeout, log)
        runs += rs
    if "city_blocked" in args.maps:
        result["city_blocked"], rs = city_blocked(make_city, 3 if args.quick else 13, n_goals, timeout, log)
        runs += rs
    solved = [r for r in runs if r["status"] in ("solved", "unverified")]
    result["verified"] = {"all": all(r["verified"] for r in solved), "solved_plans": len(solved),
                          "passed": sum(bool(r["verified"]) for r in solved)}
    result["load_avg_end"] = [round(x, 2) for x in os.getloadavg()]
    result["wall_s"] = round(time.perf_counter() - t0, 1)
    print(json.dumps(result))


if __name__ == "__main__":
    main()
