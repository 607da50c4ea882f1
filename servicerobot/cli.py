"""The `servicerobot` command line: `servicerobot demo` runs episodes and writes videos and a summary;
`servicerobot equiv` compares two PDDL problems."""

from __future__ import annotations

import argparse
import json
import sys
import time
from pathlib import Path

__all__ = ["main"]


def _write_atomic(path: Path, text: str) -> None:
    """Write via a temporary file and rename, so a reader never sees half a file."""
    tmp = path.with_suffix(path.suffix + ".tmp")
    tmp.write_text(text)
    tmp.replace(path)


def _demo(args: argparse.Namespace) -> int:
    import gymnasium as gym
    from tqdm import tqdm

    import servicerobot  # noqa: F401
    from servicerobot.oracle import OracleAgent

    out = Path(args.out)
    out.mkdir(parents=True, exist_ok=True)
    rows = []
    env = gym.make("ServiceRobot-v0", size=args.size, n_tasks=args.tasks, render_mode="rgb_array")
    env = gym.wrappers.RecordVideo(env, str(out), name_prefix="servicerobot", episode_trigger=lambda _: True,
                                   disable_logger=True)
    for episode in range(args.episodes):
        agent = OracleAgent.from_env(env)
        obs, info = env.reset(seed=args.seed + episode)
        steps, start = 0, time.perf_counter()
        with tqdm(total=info["tasks_total"], desc=f"episode {episode}", unit="task", leave=False,
                  mininterval=0.5) as bar:
            while True:
                action = agent.act(obs)
                env.unwrapped.set_overlay(plan=agent.plan[:3], last_action=action)
                obs, _, terminated, truncated, info = env.step(action)
                steps += 1
                bar.update(info["tasks_completed"] + info["tasks_failed"] - bar.n)
                bar.set_postfix_str(f"step {steps} | {info['task'][:50]}", refresh=False)
                if terminated or truncated:
                    break
        rows.append({"episode": episode, "seed": args.seed + episode, "steps": steps,
                     "tasks_completed": info["tasks_completed"], "tasks_total": info["tasks_total"],
                     "replans": agent.replans, "planning_s": round(agent.planning_time, 2),
                     "wall_s": round(time.perf_counter() - start, 2)})
        print(f"episode {episode}: {info['tasks_completed']}/{info['tasks_total']} tasks in {steps} steps",
              file=sys.stderr)
    env.close()
    _write_atomic(out / "summary.json", json.dumps(rows, indent=2))
    header = f"{'episode':>7} {'seed':>5} {'tasks':>7} {'steps':>6} {'replans':>7} {'plan s':>7} {'wall s':>7}"
    print(header)
    for r in rows:
        print(f"{r['episode']:>7} {r['seed']:>5} {r['tasks_completed']:>3}/{r['tasks_total']:<3} {r['steps']:>6} "
              f"{r['replans']:>7} {r['planning_s']:>7} {r['wall_s']:>7}")
    done = sum(r["tasks_completed"] for r in rows)
    total = sum(r["tasks_total"] for r in rows)
    print(f"tasks completed: {done}/{total}; videos and summary.json in {out}/")
    return 0


def _equiv(args: argparse.Namespace) -> int:
    from servicerobot.errors import ServiceRobotError
    from servicerobot.pddl.equivalence import GoalTooComplexError, equivalent

    try:
        texts = [Path(p).read_text(encoding="utf-8") for p in (args.domain, args.a, args.b)]
    except OSError as error:
        print(f"servicerobot equiv: cannot read {error.filename}: {error.strerror}", file=sys.stderr)
        return 2
    from servicerobot.pddl import parse_domain, parse_problem

    try:
        domain = parse_domain(texts[0], source=args.domain)
        a = parse_problem(texts[1], domain, source=args.a)
        b = parse_problem(texts[2], domain, source=args.b)
        same = equivalent(a, b, domain, placeholder=args.placeholder)
    except (ServiceRobotError, GoalTooComplexError) as error:
        print(f"servicerobot equiv: {error}", file=sys.stderr)
        return 2
    print("equivalent" if same else "not equivalent")
    return 0 if same else 1


def main(argv: list[str] | None = None) -> int:
    """Entry point of the `servicerobot` console script."""
    parser = argparse.ArgumentParser(prog="servicerobot", description=__doc__)
    sub = parser.add_subparsers(dest="command", required=True)
    demo = sub.add_parser("demo", help="run a few episodes with the oracle agent; write MP4s and a summary")
    demo.add_argument("--out", default="demo-out", help="folder for videos and summary.json")
    demo.add_argument("--episodes", type=int, default=2)
    demo.add_argument("--tasks", type=int, default=3, help="tasks per episode")
    demo.add_argument("--size", default="default", choices=["small", "default", "large"])
    demo.add_argument("--seed", type=int, default=0)
    equiv = sub.add_parser(
        "equiv", help="are two PDDL problems the same task up to renaming? (exit 0 yes, 1 no, 2 error)"
    )
    equiv.add_argument("a", help="first problem file")
    equiv.add_argument("b", help="second problem file")
    equiv.add_argument("--domain", required=True, help="the domain file")
    equiv.add_argument("--placeholder", action="store_true",
                       help="match init and goal with separate renamings (Planetarium's placeholder mode)")
    args = parser.parse_args(argv)
    return {"demo": _demo, "equiv": _equiv}[args.command](args)


if __name__ == "__main__":
    raise SystemExit(main())
