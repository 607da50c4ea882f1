"""PDDLGym on our stack: parser coverage of its shipped files, step rate of our env vs pddlgym's, planners.

Prints one JSON object:
- `parser`: every `.pddl` file in the installed pddlgym package, read by our parser as is, after a named
  repair (see servicerobot/envs/pddlgym/files.py), or refused, with the reason per file;
- `agreement`: on problem 0 of every registered domain, pddlgym's own env and ours given the same random
  literals: are the literal sets equal after every step?
- `step_rate`: steps per second of `ServiceRobot-PDDLGym-v0` and of pddlgym's own `PDDLEnv` on the same
  problem and the same action literals, measured side by side in one run (rounds alternate), as a ratio;
- `planners`: Fast Downward (warm), builtin and LAPKT through our `Planner` interface on the first problems
  of every deterministic PDDLGym domain: solved / plan length / time per domain, each plan checked by our
  validator and by VAL;
- `agent`: `ServiceAgent.from_env(env)` with Fast Downward on problem 0 of every deterministic domain: the
  share of the problems Fast Downward solves that the agent solves by acting in the env (replanning when a
  step does not lead where the plan said).

    python benchmarks/pddlgym.py [--quick] [--problems 2] [--timeout 10] [--steps 300]
"""

from __future__ import annotations

import argparse
import importlib.util
import json
import platform
import re
import statistics
import sys
import time
import warnings
from pathlib import Path

import numpy as np

# This script is named pddlgym.py: drop its folder from the path so that `pddlgym` is the package.
sys.path[:] = [p for p in sys.path if Path(p or ".").resolve() != Path(__file__).resolve().parent]

from servicerobot.envs.pddlgym import PDDLGymEnv, parse_literal, pddlgym_root, registered_domains
from servicerobot.envs.pddlgym.files import INSTALL_HINT, read_domain_text, split_probabilistic
from servicerobot.pddl import (
    parse_domain,
    parse_problem,
    val_validate,
    validate_plan,
    write_domain,
    write_problem,
)
from servicerobot.planners import get_planner

# deterministic STRIPS domains whose pddlgym side needs no SWI-Prolog (its non-STRIPS inference runs it); not sokoban:
# pddlgym took over 3 CPU-minutes for its 600 steps there
STEP_DOMAINS = ("blocks", "hanoi", "gripper", "depot", "elevator", "ferry", "doors", "travel", "casino",
                "easygripper")
_DOMAIN_HEADER = re.compile(r"\(\s*define\s*\(\s*domain\s", re.IGNORECASE)


def _domain_of(text: str) -> str | None:
    match = re.search(r"\(\s*:domain\s+([^\s()]+)", text, re.IGNORECASE)
    return match.group(1).lower() if match else None


def parser_coverage(quick: bool) -> dict:
    """Read every shipped .pddl file (quick: domains and the first problem of each folder)."""
    package = pddlgym_root().parent
    files = sorted(package.rglob("*.pddl"), key=str)
    domains: dict[Path, object] = {}
    as_is = repaired = 0
    refused: dict[str, str] = {}
    repairs: dict[str, list[str]] = {}
    problems = []
    for path in files:
        raw = path.read_text(encoding="utf-8", errors="replace")
        if not _DOMAIN_HEADER.search(raw):
            problems.append(path)
            continue
        try:
            parse_domain(raw, source=str(path))
            as_is += 1
            text, fixes = raw, []
        except Exception as error:  # noqa: BLE001 - every refusal is reported by file
            text, _, fixes = read_domain_text(path)
            if "probabilistic" in text.lower():
                text, outcomes = split_probabilistic(text)
                fixes.append(f"probabilistic effects of {', '.join(outcomes)} split into one action per outcome")
            try:
                parse_domain(text, source=str(path))
            except Exception as error2:  # noqa: BLE001
                refused[str(path.relative_to(package))] = f"{type(error2).__name__}: {error2}"
                continue
            repaired += 1
            repairs[str(path.relative_to(package))] = [f"refused as is: {str(error).splitlines()[0][:160]}", *fixes]
        domain = parse_domain(text, source=str(path))
        domains[path] = domain
    seen_dirs: set[Path] = set()
    problems_read = problems_total = 0
    for path in problems:
        if quick and path.parent in seen_dirs:
            continue
        seen_dirs.add(path.parent)
        problems_total += 1
        text = path.read_text(encoding="utf-8", errors="replace")
        name = _domain_of(text)
        # pddl/<x>/ and pddl/<x>_test/ belong to pddl/<x>.pddl; other folders to a domain of the declared name
        stem = re.sub(r"_(test|train)$", "", path.parent.name)
        own = domains.get(path.parent.parent / f"{stem}.pddl")
        candidates = [own] if own is not None else [d for f, d in domains.items()
                                                     if f.parent in (path.parent, path.parent.parent)
                                                     and d.name == name]
        if not candidates:
            refused[str(path.relative_to(package))] = f"no domain named {name!r} beside it was read"
            continue
        errors = []
        for domain in candidates:
            try:
                parse_problem(text, domain, source=str(path))
                problems_read += 1
                break
            except Exception as error:  # noqa: BLE001
                errors.append(f"{type(error).__name__}: {error}")
        else:
            refused[str(path.relative_to(package))] = errors[0]
    return {"files": len(files), "domain_files": len(files) - len(problems), "domains_read_as_is": as_is,
            "domains_read_after_repair": repaired, "problem_files_tried": problems_total,
            "problem_files_read": problems_read, "repairs": repairs, "refused": refused}


def _pddlgym_env(name: str):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        from pddlgym.core import PDDLEnv
    spec = registered_domains()[name]
    domain_file, problem_dir = spec.files()
    env = PDDLEnv(str(domain_file), str(problem_dir), operators_as_actions=spec.operators_as_actions,
                  dynamic_action_space=spec.dynamic_action_space)
    env.fix_problem_index(0)
    return env


def step_rate(names: tuple[str, ...], steps: int, rounds: int) -> dict:
    """Our env and pddlgym's on problem 0 of each domain, the same literals, rounds alternating."""
    out = {}
    for name in names:
        print(f"[step_rate] {name}", file=sys.stderr, flush=True)
        ours = PDDLGymEnv(name, problem_index=0)
        ours.reset(seed=0)
        rng = np.random.default_rng(0)
        actions = []
        for _ in range(steps):  # mostly valid literals, some that change nothing
            valid = ours.valid_actions()
            action = valid[int(rng.integers(len(valid)))] if valid and rng.random() < 0.8 \
                else ours.task.sample_literal(rng)
            actions.append(action)
            ours.step(action)
        theirs = _pddlgym_env(name)
        tobs, _ = theirs.reset()
        preds = {p.name: p for p in theirs.action_predicates}
        objects = {o.name: o for o in tobs.objects}
        literals = [preds[p](*[objects[a] for a in args]) for p, args in map(parse_literal, actions)]
        ours_t, theirs_t = [], []
        same = True
        for _ in range(rounds):
            ours.reset(seed=0)
            start = time.perf_counter()
            for action in actions:
                ours.step(action)
            ours_t.append(time.perf_counter() - start)
            theirs.reset()
            start = time.perf_counter()
            for literal in literals:
                tobs, *_ = theirs.step(literal)
            theirs_t.append(time.perf_counter() - start)
            same &= frozenset((lit.predicate.name, tuple(v.name for v in lit.variables)) for lit in tobs.literals
                              if lit.predicate.name != "=") == {(a.predicate, a.args) for a in ours.literals}
        ours_rate, theirs_rate = steps / statistics.median(ours_t), steps / statistics.median(theirs_t)
        out[name] = {"steps": steps, "ours_steps_per_s": round(ours_rate, 1),
                     "pddlgym_steps_per_s": round(theirs_rate, 1), "ratio": round(ours_rate / theirs_rate, 2),
                     "same_final_literals": bool(same)}
    ratios = [v["ratio"] for v in out.values()]
    return {"domains": out, "median_ratio": round(statistics.median(ratios), 2) if ratios else None,
            "min_ratio": min(ratios) if ratios else None}


class _Slow(Exception):
    pass


def agreement(steps: int, seconds: int, only: list[str] | None = None) -> dict:
    """Every registered domain, problem 0: pddlgym's PDDLEnv and ours step the same literals (80 % valid);
    equal literal sets after every step? A domain is cut after `seconds` of CPU time."""
    import signal

    def alarm(*_):
        raise _Slow

    out: dict[str, str] = {}
    # the cap counts this process's CPU time (SIGPROF), so a machine busy with other work cuts no domain short
    previous = signal.signal(signal.SIGPROF, alarm)
    try:
        for name, spec in sorted(registered_domains().items()):
            if only and name not in only:
                continue
            print(f"[agreement] {name}", file=sys.stderr, flush=True)
            _, problem_dir = spec.files()
            if not any(problem_dir.glob("*.pddl")):
                out[name] = "no problems shipped"
                continue
            ours = PDDLGymEnv(name, problem_index=0)
            ours.reset(seed=0)
            if any("probabilistic" in r for r in ours.gym_domain.repairs):
                out[name] = "probabilistic: outcomes are sampled (pddlgym: global np.random), not compared"
                continue
            rng = np.random.default_rng(0)
            done_steps = 0
            signal.setitimer(signal.ITIMER_PROF, seconds)
            try:
                theirs = _pddlgym_env(name)
                tobs, _ = theirs.reset()
                preds = {p.name: p for p in theirs.action_predicates}
                objects = {o.name: o for o in tobs.objects}
                verdict = "same literals"
                for _ in range(steps):
                    valid = ours.valid_actions()
                    action = valid[int(rng.integers(len(valid)))] if valid and rng.random() < 0.8 \
                        else ours.task.sample_literal(rng)
                    pred, args = parse_literal(action)
                    tobs, *_ = theirs.step(preds[pred](*[objects[a] for a in args]))
                    ours.step(action)
                    done_steps += 1
                    theirs_set = {(lit.predicate.name, tuple(v.name for v in lit.variables))
                                  for lit in tobs.literals if lit.predicate.name != "="}
                    if theirs_set != {(a.predicate, a.args) for a in ours.literals}:
                        verdict = f"DIFFERENT after {action}"
                        break
                out[name] = f"{verdict} ({done_steps} steps)"
            except _Slow:
                out[name] = (f"pddlgym too slow: cut after {seconds} CPU-seconds, the {done_steps} steps before had "
                             "the same literals")
            except Exception as error:  # noqa: BLE001 - pddlgym's own failures are reported per domain
                out[name] = f"pddlgym failed: {type(error).__name__}: {str(error)[:120]}"
            finally:
                signal.setitimer(signal.ITIMER_PROF, 0)
            print(f"[agreement] {name}: {out[name]}", file=sys.stderr, flush=True)
    finally:
        signal.signal(signal.SIGPROF, previous)
    counts: dict[str, int] = {}
    for verdict in out.values():
        key = verdict.split(" (")[0].split(":")[0]
        counts[key] = counts.get(key, 0) + 1
    return {"steps": steps, "counts": counts, "domains": out}


def planner_table(problems: int, timeout: float, planners: list[str], only: list[str] | None = None) -> dict:
    """Every deterministic registered domain (or `only` these), its first `problems` problems, each planner;
    one progress line per domain on stderr."""
    table: dict[str, dict] = {}
    available = {}
    for name in planners:
        try:
            available[name] = get_planner(name, timeout=timeout)
        except Exception as error:  # noqa: BLE001 - a missing back end is reported, not fatal
            table.setdefault("_missing", {})[name] = f"{type(error).__name__}: {error}"
    for dname, spec in sorted(registered_domains().items()):
        if only and dname not in only:
            continue
        print(f"[planners] {dname}", file=sys.stderr, flush=True)
        domain_file, problem_dir = spec.files()
        files = sorted(problem_dir.glob("*.pddl"), key=str)[:problems]
        text, _, fixes = read_domain_text(domain_file)
        if "probabilistic" in text.lower():
            table[dname] = {"skipped": "probabilistic effects: a classical planner needs a determinization"}
            continue
        if not files:
            table[dname] = {"skipped": "pddlgym ships no problems for it"}
            continue
        domain = parse_domain(text, source=str(domain_file))
        domain_text = write_domain(domain)
        row: dict[str, dict] = {}
        for pname, planner in available.items():
            solved = valid_ours = valid_val = 0
            lengths, times, notes = [], [], []
            for path in files:
                # PDDLGym writes :goal before :init, which Fast Downward's parser refuses: planners and VAL get
                # the problem as our writer prints it (sections in the standard order)
                problem = parse_problem(path.read_text(encoding="utf-8"), domain, source=str(path))
                result = planner.solve(domain, problem)
                times.append(result.total_time)
                if not result.solved:
                    notes.append(f"{path.name}: {result.status.value} {result.message[:120]}")
                    continue
                solved += 1
                lengths.append(len(result.plan))
                valid_ours += validate_plan(domain, problem, result.plan).valid
                try:
                    verdict = val_validate(domain_text, write_problem(problem), result.plan)
                    valid_val += verdict.valid
                    if not verdict.valid:
                        why = "VAL could not parse the input" if "Parser failed" in verdict.output else "VAL: invalid"
                        notes.append(f"{path.name}: {why} (problem name {problem.name!r})")
                except Exception as error:  # noqa: BLE001 - VAL crashes on some inputs; counted as not valid
                    notes.append(f"{path.name}: VAL {error}")
            row[pname] = {"solved": f"{solved}/{len(files)}",
                          "mean_plan_length": round(statistics.mean(lengths), 1) if lengths else None,
                          "median_time_s": round(statistics.median(times), 3),
                          "valid_ours": valid_ours, "valid_val": valid_val}
            if notes:
                row[pname]["failures"] = notes[:3]
        if fixes:
            row["repairs"] = fixes
        table[dname] = row
    for planner in available.values():
        planner.close()
    return table


def agent_table(timeout: float, only: list[str] | None = None, max_steps: int = 500) -> dict:
    """`ServiceAgent.from_env` with Fast Downward (`lama-first`) on problem 0 of every deterministic registered
    domain that ships problems (or `only` these): does Fast Downward solve the problem the first observation
    states, and does the agent, planning, acting and replanning, reach the goal within `max_steps` steps?"""
    from servicerobot import ServiceAgent
    from servicerobot.planners import FastDownward

    rows: dict[str, dict] = {}
    for dname, spec in sorted(registered_domains().items()):
        domain_file, problem_dir = spec.files()
        if (only and dname not in only) or not any(problem_dir.glob("*.pddl")):
            continue
        if "probabilistic" in read_domain_text(domain_file)[0].lower():
            continue
        print(f"[agent] {dname}", file=sys.stderr, flush=True)
        planner = FastDownward(alias="lama-first", timeout=timeout)
        env = PDDLGymEnv(dname, problem_index=0)
        obs, _ = env.reset(seed=0)
        result = planner.solve(env.gym_domain.domain, env.planning_view().problem(obs))
        row: dict = {"fd": result.status.value, "fd_plan_length": len(result.plan) if result.solved else None}
        agent = ServiceAgent.from_env(env, planner=planner)
        start, done, steps, invalid = time.perf_counter(), False, 0, 0
        while not done and steps < max_steps and agent.failures == []:
            obs, _, done, _, info = env.step(agent.act(obs))
            steps += 1
            invalid += info["action_error"] is not None
        row.update(agent_solved=done, steps=steps, replans=agent.replans, invalid_steps=invalid,
                   seconds=round(time.perf_counter() - start, 2))
        if agent.failures:
            row["agent_failure"] = agent.failures[0].reason
        rows[dname] = row
    fd = [n for n, r in rows.items() if r["fd"] == "solved"]
    solved = [n for n in fd if rows[n]["agent_solved"]]
    return {"planner": f"fast-downward lama-first, {timeout:g} s per call", "max_steps": max_steps,
            "domains": len(rows), "fd_solved": len(fd), "agent_solved_of_fd": len(solved),
            "share": round(len(solved) / len(fd), 3) if fd else None,
            "agent_solved_total": sum(r["agent_solved"] for r in rows.values()), "rows": rows}


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="first problem per folder, 100 steps, 3 domains "
                        "(step rate and agent)")
    parser.add_argument("--problems", type=int, default=2, help="problems per domain for the planner table")
    parser.add_argument("--timeout", type=float, default=10.0, help="seconds per planner call")
    parser.add_argument("--steps", type=int, default=200)
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--planners", nargs="+", default=["fast-downward", "builtin", "lapkt"])
    parser.add_argument("--sections", nargs="+", default=["parser", "step_rate", "agreement", "planners", "agent"])
    parser.add_argument("--domains", nargs="+", help="only these domains (agreement, planners)")
    args = parser.parse_args(argv)
    if importlib.util.find_spec("pddlgym") is None:  # an optional part: `servicerobot bench` lists it as skipped
        reason = f"pddlgym is not installed: {INSTALL_HINT}"
        print(reason, file=sys.stderr)
        print(json.dumps({"benchmark": "pddlgym", "skipped": reason}))
        return
    names = STEP_DOMAINS[:3] if args.quick else STEP_DOMAINS
    steps = 100 if args.quick else args.steps
    problems = 1 if args.quick else args.problems
    out: dict = {"benchmark": "pddlgym", "machine": platform.machine(), "python": platform.python_version(),
                 "date": time.strftime("%Y-%m-%d %H:%M UTC", time.gmtime())}
    try:
        from importlib.metadata import version

        import pddlgym as _  # noqa: F401

        out["pddlgym"] = version("pddlgym")
    except Exception as error:  # noqa: BLE001
        out["pddlgym"] = f"does not import: {error}"
    start = time.perf_counter()
    if "parser" in args.sections:
        out["parser"] = parser_coverage(args.quick)
    if "step_rate" in args.sections:
        out["step_rate"] = step_rate(names, steps, args.rounds)
    if "agreement" in args.sections:
        out["agreement"] = agreement(10 if args.quick else 25, 5 if args.quick else 15, args.domains)
    if "planners" in args.sections:
        out["planners"] = planner_table(problems, args.timeout, args.planners, args.domains)
        out["planners_note"] = ("pddlgym_planners (PDDLGym's FD/FF wrappers) is not on PyPI and downloads its "
                                "planners at run time; it is not compared")
    if "agent" in args.sections:
        out["agent"] = agent_table(args.timeout, args.domains or (list(names) if args.quick else None))
    out["seconds"] = round(time.perf_counter() - start, 1)
    print(json.dumps(out))  # one line: `servicerobot bench` reads the last line


if __name__ == "__main__":
    main()
