"""Aggregates of episode records per environment config x variant (rates with 95% Wilson intervals), per task kind
and per update category. Part of `servicerobot.experiments.report`.
"""

from __future__ import annotations

import json
import statistics
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass
from typing import Any

from servicerobot.experiments.report_records import (
    _agent,
    _dedupe,
    _disturbed,
    _is_error,
    _num,
    _seed_order,
    _tasks,
    _updates,
    _validate,
)
from servicerobot.experiments.stats import wilson

SUMMARY_COLUMNS = (
    "env", "variant", "episodes", "error_episodes",
    "tasks", "completed", "success_rate", "success_lo", "success_hi",
    "disturbed_tasks", "disturbed_completed", "disturbed_rate", "disturbed_lo", "disturbed_hi",
    "goals_scored", "goal_parseable", "goal_solvable", "goal_correct",
    "kg_updates", "kg_correct", "kg_accuracy",
    "actions", "failed_actions", "plan_accuracy", "plans", "plans_per_task",
    "tokens_per_episode", "planning_s_median", "planning_s_mean", "replans_per_episode",
    "kg_jaccard_mean", "updates_applied", "updates_dropped", "wall_s_median",
)


KIND_COLUMNS = ("env", "variant", "kind", "tasks", "completed", "success_rate", "success_lo", "success_hi")


def _env_labels(records: list[dict]) -> list[str]:
    """One label per record: the env name, plus the env_kwargs that tell apart configs sharing that name."""
    kwargs_by_env: dict[str, dict[str, dict]] = {}
    for r in records:
        kwargs = r.get("env_kwargs") or {}
        kwargs_by_env.setdefault(r["env"], {})[json.dumps(kwargs, sort_keys=True, default=str)] = kwargs
    labels = []
    for r in records:
        variants = list(kwargs_by_env[r["env"]].values())
        if len(variants) == 1:
            labels.append(r["env"])
            continue
        kwargs = r.get("env_kwargs") or {}
        keys = sorted({k for v in variants for k in v})
        differing = [k for k in keys if len({json.dumps(v.get(k), default=str) for v in variants}) > 1]
        labels.append(f"{r['env']} ({', '.join(f'{k}={kwargs.get(k)}' for k in differing)})")
    return labels


def _ordered(values: Iterable[str]) -> list[str]:
    return list(dict.fromkeys(values))


# --------------------------------------------------------------------------- aggregation


def _round(value: float | None, digits: int = 6) -> float | None:
    return None if value is None else round(value, digits)


def _share(k: int, n: int) -> float | None:
    return k / n if n else None


def _rate_stats(k: int, n: int) -> tuple[float | None, float | None, float | None]:
    if not n:
        return None, None, None
    lo, hi = wilson(k, n)
    return k / n, lo, hi


def _aggregate(env: str, variant: str, records: list[dict]) -> dict[str, Any]:
    tasks = [t for r in records for t in _tasks(r)]
    completed = sum(bool(t.get("completed")) for t in tasks)
    disturbed = [t for t in tasks if _disturbed(t)]
    disturbed_completed = sum(bool(t.get("completed")) for t in disturbed)
    goals = [t["goal"] for t in tasks if isinstance(t.get("goal"), dict)]
    updates = [u for r in records for u in _updates(r)]
    kg_correct = sum(u["correct"] for u in updates)
    with_actions = [t for t in tasks if _num(t.get("actions")) is not None]
    actions = sum(int(_num(t["actions"])) for t in with_actions)
    failed = sum(int(_num(t.get("failed_actions")) or 0) for t in with_actions)
    plan_counts = [_num(t.get("plans")) for t in tasks if _num(t.get("plans")) is not None]
    agents = [_agent(r) for r in records if r.get("agent")]

    def per_episode(name: str) -> list[float]:
        return [v for a in agents if (v := _num(a.get(name))) is not None]

    tokens, planning, replans = per_episode("tokens"), per_episode("planning_time"), per_episode("replans")
    jaccard = [v for r in records if isinstance(r.get("kg"), dict) and (v := _num(r["kg"].get("jaccard"))) is not None]
    walls = [v for r in records if isinstance(r.get("timing"), dict) and (v := _num(r["timing"].get("wall_s"))) is not None]
    rate, lo, hi = _rate_stats(completed, len(tasks))
    d_rate, d_lo, d_hi = _rate_stats(disturbed_completed, len(disturbed))
    row = {
        "env": env, "variant": variant, "episodes": len(records),
        "error_episodes": sum(_is_error(r) for r in records),
        "tasks": len(tasks), "completed": completed, "success_rate": rate, "success_lo": lo, "success_hi": hi,
        "disturbed_tasks": len(disturbed), "disturbed_completed": disturbed_completed,
        "disturbed_rate": d_rate, "disturbed_lo": d_lo, "disturbed_hi": d_hi,
        "goals_scored": len(goals),
        "goal_parseable": _share(sum(g.get("parseable") is True for g in goals), len(goals)),
        "goal_solvable": _share(sum(g.get("solvable") is True for g in goals), len(goals)),
        "goal_correct": _share(sum(g.get("correct") is True for g in goals), len(goals)),
        "kg_updates": len(updates), "kg_correct": kg_correct, "kg_accuracy": _share(kg_correct, len(updates)),
        "actions": actions, "failed_actions": failed,
        "plan_accuracy": 1 - failed / actions if actions else None,
        "plans": int(sum(plan_counts)), "plans_per_task": _share(int(sum(plan_counts)), len(plan_counts)),
        "tokens_per_episode": statistics.fmean(tokens) if tokens else None,
        "planning_s_median": statistics.median(planning) if planning else None,
        "planning_s_mean": statistics.fmean(planning) if planning else None,
        "replans_per_episode": statistics.fmean(replans) if replans else None,
        "kg_jaccard_mean": statistics.fmean(jaccard) if jaccard else None,
        "updates_applied": int(sum(per_episode("updates_applied"))),
        "updates_dropped": int(sum(per_episode("updates_dropped"))),
        "wall_s_median": statistics.median(walls) if walls else None,
    }
    return {k: _round(v) if isinstance(v, float) else v for k, v in row.items()}


@dataclass
class _Summary:
    records: list[dict]
    labels: list[str]
    envs: list[str]
    variants: list[str]
    groups: dict[tuple[str, str], list[dict]]
    rows: list[dict[str, Any]]


def _summarize(records: list[dict]) -> _Summary:
    labels = _env_labels(records)
    envs, variants = _ordered(labels), _ordered(r["variant"] for r in records)
    groups: dict[tuple[str, str], list[dict]] = {}
    for label, record in zip(labels, records):
        groups.setdefault((label, record["variant"]), []).append(record)
    ordered = {(e, v): groups[(e, v)] for e in envs for v in variants if (e, v) in groups}
    rows = [_aggregate(e, v, recs) for (e, v), recs in ordered.items()]
    return _Summary(records, labels, envs, variants, ordered, rows)


def summary_rows(records: Sequence[dict]) -> list[dict[str, Any]]:
    """Table 1 (success by env config x variant) as a list of rows keyed by `SUMMARY_COLUMNS`."""
    checked = [_validate(r, f"record {i}") for i, r in enumerate(records)]
    return _summarize(_dedupe(checked)).rows


def _counts(tasks: Iterable[dict], key: Callable[[dict], Iterable[str]]) -> dict[str, list[int]]:
    """category -> [completed, total] over the tasks that have that category."""
    out: dict[str, list[int]] = {}
    for task in tasks:
        for cat in set(key(task)):
            cell = out.setdefault(cat, [0, 0])
            cell[0] += bool(task.get("completed"))
            cell[1] += 1
    return dict(sorted(out.items()))


def _kg_counts(records: Iterable[dict]) -> dict[str, list[int]]:
    out: dict[str, list[int]] = {}
    for record in records:
        for update in _updates(record):
            for cat in set(update.get("categories") or ["(uncategorised)"]):
                cell = out.setdefault(str(cat), [0, 0])
                cell[0] += update["correct"]
                cell[1] += 1
    return dict(sorted(out.items()))


def _kind_rows(summary: _Summary) -> list[dict]:
    rows = []
    for (env, variant), recs in summary.groups.items():
        for kind, (k, n) in _counts((t for r in recs for t in _tasks(r)),
                                    lambda t: [str(t.get("kind") or "unknown")]).items():
            rate, lo, hi = _rate_stats(k, n)
            rows.append({"env": env, "variant": variant, "kind": kind, "tasks": n, "completed": k,
                         "success_rate": _round(rate), "success_lo": _round(lo), "success_hi": _round(hi)})
    return rows


def _kg_curve(records: list[dict]) -> list[float]:
    """Cumulative share of correct KG updates: each episode's updates in order, episodes sorted by seed."""
    correct, curve = 0, []
    for i, update in enumerate((u for r in sorted(records, key=_seed_order) for u in _updates(r)), start=1):
        correct += update["correct"]
        curve.append(correct / i)
    return curve
