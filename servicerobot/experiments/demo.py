"""`servicerobot demo`: a few episodes of ServiceRobot-v0 with the default agent, one MP4 each, a summary."""

from __future__ import annotations

import json
import re
import sys
import time
import warnings
from collections import Counter
from pathlib import Path

from servicerobot.files import write_atomic

__all__ = ["belief_line", "print_summary", "run_demo", "waiting_line"]

_TOKEN = re.compile(r"[a-z][a-z0-9_\-]*")


def belief_line(agent, limit: int = 4) -> str:
    """What memory believes about the entities of the current goal, e.g. "mug_1 on table_2; fridge_1 closed"."""
    task, memory = agent.task, agent.memory
    if task is None or task.goal is None or memory is None:
        return ""
    shown = []
    for name in agent.goal_entities():
        for atom in memory.facts_about(name):
            if atom.args[0] == name and atom.predicate not in ("is-a",):
                shown.append(" ".join((atom.args[0], atom.predicate, *atom.args[1:])))
                break
        if len(shown) == limit:
            break
    if not shown:  # a quantified goal ("every dish clean"): how many facts of its predicates memory holds
        counts = Counter(a.predicate for a in memory.facts)
        shown = [f"{p}: {counts[p]} believed" for p in dict.fromkeys(_TOKEN.findall(task.goal)) if p in counts]
    return "; ".join(shown[:limit])


def waiting_line(agent, action: str) -> str:
    """Why the agent answered `(wait)`, e.g. "goal believed done: memory holds (on mug_1 table_2)"; "" for
    any other action."""
    if action.strip() != "(wait)":
        return ""
    if agent.task is None:
        return "no task: nobody has asked for anything since the last task ended"
    failure = agent.failure_reason()
    if failure is None:
        return "no plan yet for the current task"
    return f"{failure.reason}: {failure.detail}" if failure.detail else failure.reason


# how many frames the "task failed" banner stays up (the demo's video runs at the env's render_fps)
BANNER_STEPS = 40


def run_demo(out: str | Path, episodes: int = 2, tasks: int = 3, size: str = "default", seed: int = 0,
             variant: str = "search-rag", video: bool = True, interpreter: str = "default",
             llm: dict | None = None) -> list[dict]:
    """Run the episodes, write `episode-N.mp4` files and `summary.json` into `out`; return the rows.

    Each row lists its tasks with their outcome ("completed", "failed" with the agent's reason, or "open" when
    the episode ended first). A line per finished task goes to stderr as it happens (with a tqdm bar on a
    terminal). `interpreter` and `llm` are a config's `agent.interpreter` and `agent.llm` (see
    `make_interpreter`).
    """
    import gymnasium as gym
    from tqdm import tqdm

    import servicerobot  # noqa: F401
    from servicerobot.agent import ServiceAgent
    from servicerobot.experiments.config import check_agent
    from servicerobot.experiments.episode import make_interpreter, why_failed

    check_agent({"llm": llm or {}}, "demo")  # --llm-timeout nan is refused here, as in a config
    out = Path(out)
    out.mkdir(parents=True, exist_ok=True)
    env = gym.make("ServiceRobot-v0", size=size, n_tasks=tasks, render_mode="rgb_array" if video else None)
    if video:
        with warnings.catch_warnings():  # an existing --out folder is fine: our file names are fixed
            warnings.simplefilter("ignore", UserWarning)
            env = gym.wrappers.RecordVideo(env, str(out), name_prefix="servicerobot",
                                           episode_trigger=lambda _: True, disable_logger=True)
    rows = []
    tty = sys.stderr.isatty()
    for episode in range(episodes):
        agent = ServiceAgent.from_env(env, variant=variant, interpreter=make_interpreter(interpreter, llm or {}))
        obs, info = env.reset(seed=seed + episode)
        steps, start, banner_until = 0, time.perf_counter(), -1
        outcomes: list[dict] = []
        text = info["task"]
        with tqdm(total=info["tasks_total"], desc=f"episode {episode}", unit="task", leave=False,
                  mininterval=0.5, file=sys.stderr, disable=not tty) as bar:
            while True:
                action = agent.act(obs)
                plan = list(agent.task.plan) if agent.task is not None else []
                failure = agent.failure_reason() if agent.task is not None and not plan else None
                if failure is not None and failure.reason != "goal believed done":
                    plan = [f"none ({failure.reason})"]
                goal_entities = agent.goal_entities() if agent.task is not None and agent.task.goal else []
                env.unwrapped.set_overlay(plan=plan, last_action=action, belief=belief_line(agent),
                                          waiting=waiting_line(agent, action), highlight=goal_entities)
                if steps >= banner_until:
                    env.unwrapped.set_overlay(banner="")
                obs, _, terminated, truncated, info = env.step(action)
                steps += 1
                if info["tasks_completed"] + info["tasks_failed"] > len(outcomes):
                    outcome = _outcome(len(outcomes), text, bool(info["task_completed"]), agent, why_failed)
                    outcomes.append(outcome)
                    if outcome["outcome"] == "failed":
                        env.unwrapped.set_overlay(banner=f"task failed: {outcome['reason']} ({text})")
                        banner_until = steps + BANNER_STEPS
                    line = (f"episode {episode} task {len(outcomes)}/{info['tasks_total']}: {outcome['outcome']}"
                            f"{' (' + outcome['reason'] + ')' if outcome['outcome'] == 'failed' else ''}"
                            f" after {steps} steps: {text}")
                    if tty:
                        bar.write(line, file=sys.stderr)
                    else:  # plain lines in logs and pipes
                        print(line, file=sys.stderr, flush=True)
                text = info["task"]
                bar.update(info["tasks_completed"] + info["tasks_failed"] - bar.n)
                bar.set_postfix_str(f"step {steps} | {info['task'][:50]}", refresh=False)
                if terminated or truncated:
                    break
        for index in range(len(outcomes), info["tasks_total"]):  # the episode ended before these were given
            outcomes.append({"index": index, "task": None, "outcome": "open", "reason": None, "detail": None})
        summary = agent.summary()
        rows.append({"episode": episode, "seed": seed + episode, "steps": steps,
                     "tasks_completed": info["tasks_completed"], "tasks_total": info["tasks_total"],
                     "tasks_failed": info["tasks_failed"], "tasks": outcomes, "failures": summary["failures"],
                     "replans": summary["replans"], "planning_s": round(summary["planning_time"], 2),
                     "updates_applied": summary["updates_applied"], "interpreter": summary["interpreter"],
                     "wall_s": round(time.perf_counter() - start, 2),
                     "video": str(out / f"servicerobot-episode-{episode}.mp4") if video else None})
    env.close()
    write_atomic(out / "summary.json", json.dumps(rows, indent=2))
    return rows


def _outcome(index: int, text: str, completed: bool, agent, why_failed) -> dict:
    """One task's entry in the summary: its text, "completed" or "failed", and for a failed task the agent's
    reason (`servicerobot.failures.REASONS`) and detail."""
    if completed:
        return {"index": index, "task": text, "outcome": "completed", "reason": None, "detail": None}
    failure = why_failed(agent, text)
    return {"index": index, "task": text, "outcome": "failed", "reason": failure["reason"],
            "detail": failure.get("detail")}


def print_summary(rows: list[dict], out: Path) -> None:
    """The summary table on stdout: a line per episode, then each failed task with its reason."""
    print(f"{'episode':>7} {'seed':>5} {'tasks':>7} {'steps':>6} {'replans':>7} {'plan s':>7} {'wall s':>7}")
    for r in rows:
        print(f"{r['episode']:>7} {r['seed']:>5} {r['tasks_completed']:>3}/{r['tasks_total']:<3} {r['steps']:>6} "
              f"{r['replans']:>7} {r['planning_s']:>7} {r['wall_s']:>7}")
    for r in rows:
        for task in r.get("tasks", []):
            if task["outcome"] != "completed":
                why = f" ({task['reason']}: {(task['detail'] or '')[:100]})" if task["reason"] else ""
                print(f"  episode {r['episode']} task {task['index'] + 1}: {task['outcome']}{why}"
                      f"{': ' + task['task'] if task['task'] else ''}")
    done = sum(r["tasks_completed"] for r in rows)
    total = sum(r["tasks_total"] for r in rows)
    interp = rows[0]["interpreter"] if rows else "?"
    print(f"tasks completed: {done}/{total} (ServiceAgent, {interp} interpreter); videos and summary.json in {out}/")
