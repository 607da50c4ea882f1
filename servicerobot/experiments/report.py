"""Experiment reports: turn an episode-results JSONL file into Markdown tables, CSV/JSON aggregates and plots.

One record per episode (see `write_report` for the files written). Records are grouped by environment
config x agent variant; task success carries a 95% Wilson score interval.

    from servicerobot.experiments.report import write_report
    paths = write_report("runs/smoke/results.jsonl", "runs/smoke/report")
"""

from __future__ import annotations

import contextlib
import csv
import io
import json
import math
import os
import statistics
import warnings
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from servicerobot.errors import ServiceRobotError
from servicerobot.experiments.stats import wilson
from servicerobot.files import write_atomic

__all__ = [
    "SUMMARY_COLUMNS",
    "ReportError",
    "ReportPaths",
    "ReportWarning",
    "load_records",
    "summary_rows",
    "write_report",
]

DASH = "—"

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

PLOTS = {
    "success_by_variant": "success_by_variant.png",
    "kg_accuracy_over_time": "kg_accuracy_over_time.png",
    "planning_time": "planning_time.png",
}


class ReportError(ServiceRobotError, ValueError):
    """The results cannot be reported: missing or corrupt file, malformed record, nothing to report."""


class ReportWarning(UserWarning):
    """Something in the results was skipped (a truncated last line, a duplicate episode key)."""


@dataclass(frozen=True)
class ReportPaths:
    """The files `write_report` wrote; `skipped_plots` maps a plot name to why it was not drawn."""

    out_dir: Path
    markdown: Path
    summary_csv: Path
    by_task_kind_csv: Path
    json: Path
    plots: dict[str, Path] = field(default_factory=dict)
    skipped_plots: dict[str, str] = field(default_factory=dict)

    @property
    def files(self) -> list[Path]:
        """Every file written, Markdown first."""
        return [self.markdown, self.summary_csv, self.by_task_kind_csv, self.json, *self.plots.values()]


# --------------------------------------------------------------------------- loading and validation


def load_records(path: str | Path) -> list[dict]:
    """Read episode records from a JSONL file; a corrupt *last* line (an interrupted run) is skipped
    with a `ReportWarning`, a corrupt line anywhere else raises `ReportError` naming file and line."""
    path = Path(path)
    try:
        data = path.read_bytes()
    except FileNotFoundError:
        raise ReportError(f"results file not found: {path}") from None
    except IsADirectoryError:
        raise ReportError(f"results path is a directory, not a JSONL file: {path}") from None
    except OSError as exc:
        raise ReportError(f"cannot read results file {path}: {exc}") from exc
    lines = [(no, raw) for no, raw in enumerate(data.split(b"\n"), start=1) if raw.strip()]
    records = []
    for i, (no, raw) in enumerate(lines):
        try:
            record = json.loads(raw.decode("utf-8"))
        except ValueError as exc:  # JSONDecodeError and UnicodeDecodeError are ValueErrors
            problem: str | None = str(exc)
        else:
            problem = None if isinstance(record, dict) else f"expected a JSON object, got {type(record).__name__}"
        if problem is not None:
            if i == len(lines) - 1:
                warnings.warn(f"{path}:{no}: skipping truncated or corrupt last line ({problem})",
                              ReportWarning, stacklevel=2)
                break
            raise ReportError(f"{path}:{no}: corrupt record: {problem}")
        records.append(_validate(record, f"{path}:{no}"))
    return records


def _validate(record: Any, where: str) -> dict:
    """Check the fields the report relies on; unknown keys are ignored, optional ones may be absent."""
    if not isinstance(record, dict):
        raise ReportError(f"{where}: expected an episode record (a JSON object), got {type(record).__name__}")
    for key in ("env", "variant"):
        if not isinstance(record.get(key), str) or not record[key]:
            raise ReportError(f"{where}: record has no valid {key!r} (a non-empty string)")
    tasks = record.get("tasks")
    if tasks is not None and (not isinstance(tasks, list) or not all(isinstance(t, dict) for t in tasks)):
        raise ReportError(f"{where}: 'tasks' must be a list of objects")
    for key in ("kg", "agent", "run", "env_kwargs"):
        if record.get(key) is not None and not isinstance(record[key], dict):
            raise ReportError(f"{where}: {key!r} must be an object or null")
    updates = (record.get("kg") or {}).get("updates")
    if updates is not None and (not isinstance(updates, list) or not all(isinstance(u, dict) for u in updates)):
        raise ReportError(f"{where}: 'kg.updates' must be a list of objects")
    return record


def _dedupe(records: list[dict]) -> list[dict]:
    """Keep the last record per episode key (a resumed run may append an episode again)."""
    position: dict[str, int] = {}
    out: list[dict | None] = []
    for record in records:
        key = record.get("key")
        if isinstance(key, str) and key in position:
            warnings.warn(f"duplicate episode key {key!r}: keeping the later record", ReportWarning, stacklevel=3)
            out[position[key]] = None
        if isinstance(key, str):
            position[key] = len(out)
        out.append(record)
    return [r for r in out if r is not None]


# --------------------------------------------------------------------------- field access


def _num(value: Any) -> float | None:
    if isinstance(value, bool) or not isinstance(value, (int, float)) or not math.isfinite(value):
        return None
    return float(value)


def _tasks(record: dict) -> list[dict]:
    return record.get("tasks") or []


def _events(task: dict) -> list[str]:
    events = task.get("events") or []
    return [str(e) for e in events] if isinstance(events, list) else []


def _disturbed(task: dict) -> bool:
    flag = task.get("disturbed")
    return bool(flag) if isinstance(flag, bool) else bool(_events(task))


def _updates(record: dict) -> list[dict]:
    return [u for u in (record.get("kg") or {}).get("updates") or [] if isinstance(u.get("correct"), bool)]


def _agent(record: dict) -> dict:
    return record.get("agent") or {}


def _is_error(record: dict) -> bool:
    return record.get("status", "ok") != "ok" or bool(record.get("error"))


def _error_line(error: Any) -> str:
    """The informative line of an error: for a traceback its last line (the exception), else the first."""
    lines = [line.strip() for line in str(error or "").splitlines() if line.strip()]
    if not lines:
        return "(no error message recorded)"
    line = lines[-1] if lines[0].startswith("Traceback") else lines[0]
    return line if len(line) <= 200 else line[:197] + "..."


def _seed_order(record: dict) -> tuple:
    seed = _num(record.get("seed"))
    return (seed is None, seed or 0.0, str(record.get("key", "")))


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


# --------------------------------------------------------------------------- formatting


def _esc(value: Any) -> str:
    return str(value).replace("|", "\\|").replace("\n", " ")


def _md_table(header: Sequence[str], rows: Iterable[Sequence[Any]]) -> list[str]:
    lines = ["| " + " | ".join(_esc(h) for h in header) + " |", "|" + "---|" * len(header)]
    lines += ["| " + " | ".join(_esc(c) for c in row) + " |" for row in rows]
    return lines + [""]


def _f(value: float | None, digits: int = 3) -> str:
    return DASH if value is None else f"{value:.{digits}f}"


def _interval(rate: float | None, lo: float | None, hi: float | None) -> str:
    return DASH if rate is None else f"{rate:.3f} [{lo:.3f}, {hi:.3f}]"


def _kn(k: int, n: int) -> str:
    """'k/n (rate) [lo, hi]' with the 95% Wilson interval; a dash when n == 0."""
    if not n:
        return DASH
    lo, hi = wilson(k, n)
    return f"{k}/{n} ({k / n:.3f}) [{lo:.3f}, {hi:.3f}]"


def _share_cell(share: float | None, n: int) -> str:
    return DASH if share is None or not n else f"{share:.3f}"


def _distinct(values: Iterable[Any]) -> str:
    seen = _ordered(str(v) for v in values if v not in (None, ""))
    return ", ".join(f"`{v}`" for v in seen) if seen else DASH


def _metadata(summary: _Summary, source: str | None) -> list[str]:
    records = summary.records
    runs = [r.get("run") or {} for r in records]
    versions: dict[str, list[str]] = {}
    for run in runs:
        for pkg, ver in (run.get("versions") or {}).items():
            versions.setdefault(str(pkg), []).append(str(ver))
    kwargs: dict[str, list[str]] = {}
    for label, r in zip(summary.labels, records):
        kwargs.setdefault(label, []).append(json.dumps(r.get("env_kwargs") or {}, sort_keys=True, default=str))
    n_tasks = sum(len(_tasks(r)) for r in records)
    n_errors = sum(_is_error(r) for r in records)
    lines = [
        "# Experiment report", "",
        f"Source: `{source}`" if source else "Source: in-memory records",
        "",
        (f"{len(records)} episodes ({n_errors} with errors), {n_tasks} tasks, "
         f"{len(summary.envs)} environment config(s) x {len(summary.variants)} variant(s)."),
        "", "## Run metadata", "",
        f"- Configs: {_distinct(run.get('config') for run in runs)}",
        f"- Config hashes: {_distinct(run.get('config_hash') for run in runs)}",
        f"- Git commits: {_distinct(run.get('git_commit') for run in runs)}",
        "- Package versions: " + ("; ".join(f"{pkg} {_distinct(vals)}" for pkg, vals in sorted(versions.items()))
                                  or DASH),
        "- Environment configs: " + "; ".join(f"{label} {_distinct(kw)}" for label, kw in kwargs.items()),
        f"- Variants: {_distinct(summary.variants)}",
        "",
    ]
    if len(_ordered(str(run.get("git_commit")) for run in runs)) > 1:
        lines += ["> Note: the records come from more than one git commit.", ""]
    return lines


def _table1(rows: list[dict]) -> list[str]:
    header = ["Env config", "Variant", "Episodes", "Tasks", "Completed", "Success [95% CI]",
              "Disturbed success [95% CI]", "Goals scored", "Goal parseable", "Goal solvable", "Goal correct",
              "KG accuracy", "Plan accuracy", "Plans/task", "Tokens/ep", "Planning s/ep (median / mean)",
              "Replans/ep", "KG Jaccard (mean)", "Updates applied / dropped", "Wall s/ep (median)",
              "Episodes with errors"]
    body = []
    for r in rows:
        goals = r["goals_scored"]
        body.append([
            r["env"], r["variant"], r["episodes"], r["tasks"], r["completed"],
            _interval(r["success_rate"], r["success_lo"], r["success_hi"]),
            _kn(r["disturbed_completed"], r["disturbed_tasks"]),
            goals if goals else DASH,
            _share_cell(r["goal_parseable"], goals), _share_cell(r["goal_solvable"], goals),
            _share_cell(r["goal_correct"], goals),
            f"{r['kg_correct']}/{r['kg_updates']} ({r['kg_accuracy']:.3f})" if r["kg_updates"] else DASH,
            f"{r['plan_accuracy']:.3f} ({r['actions'] - r['failed_actions']}/{r['actions']})"
            if r["actions"] else DASH,
            _f(r["plans_per_task"], 2), _f(r["tokens_per_episode"], 0),
            DASH if r["planning_s_median"] is None
            else f"{r['planning_s_median']:.2f} / {r['planning_s_mean']:.2f}",
            _f(r["replans_per_episode"], 2), _f(r["kg_jaccard_mean"]),
            f"{r['updates_applied']} / {r['updates_dropped']}" if r["updates_applied"] or r["updates_dropped"] else DASH,
            _f(r["wall_s_median"], 1), r["error_episodes"],
        ])
    # A column no row has data for (e.g. goal and memory columns of a Context Matters grid) is left out.
    keep = [i for i in range(len(header)) if i < 2 or any(row[i] != DASH for row in body)]
    header, body = [header[i] for i in keep], [[row[i] for i in keep] for row in body]
    return [
        "## 1. Task success by environment config x variant", "",
        *_md_table(header, body),
        ("Intervals are 95% Wilson score intervals. Disturbed tasks are tasks during which the world changed "
         "(reset / addition / relocation events). Goal columns are shares of the scored goals (oracle goals "
         "are not scored). KG accuracy: correct knowledge-graph updates / updates. Plan accuracy: share of "
         "executed robot actions that succeeded. Per-episode columns average over episodes with agent stats. "
         "Columns without data in any row are left out. "
         "KG Jaccard: memory's facts M vs a reference R that took every told update and percept exactly, "
         "|M & R| / |M | R| after each step with an update, averaged per episode, then over episodes. Updates: "
         "heard updates the agent applied / dropped (after the verifier), summed. Wall s/ep: the median "
         "episode's wall-clock seconds."),
        "",
    ]


def _pivot_section(title: str, summary: _Summary, counts: Callable[[list[dict]], dict[str, list[int]]],
                   first_column: str, empty: str) -> list[str]:
    """One table per env config: rows are categories, columns variants, cells 'k/n (rate) [lo, hi]'."""
    lines = [f"## {title}", ""]
    any_rows = False
    for env in summary.envs:
        cells = {v: counts(recs) for (e, v), recs in summary.groups.items() if e == env}
        cats = sorted({c for table in cells.values() for c in table})
        if not cats:
            continue
        any_rows = True
        if len(summary.envs) > 1:
            lines += [f"### {env}", ""]
        body = [[cat, *(_kn(*cells[v].get(cat, (0, 0))) for v in cells)] for cat in cats]
        lines += _md_table([first_column, *cells], body)
    if not any_rows:
        lines += [f"_{empty}_", ""]
    return lines


def _errors_section(summary: _Summary) -> list[str]:
    failing = [(label, r) for label, r in zip(summary.labels, summary.records) if _is_error(r)]
    lines = ["## 5. Errors", ""]
    if not failing:
        return lines + ["_No episode ended with an error._", ""]
    lines += [f"{len(failing)} episode(s) ended with an error:", ""]
    for label, r in failing:
        key = r.get("key") or f"{label}/{r['variant']}/{r.get('seed')}"
        lines.append(f"- `{_esc(key)}`: {_esc(_error_line(r.get('error')))}")
    return lines + [""]


def _failure_reasons(records: Iterable[dict]) -> dict[str, int]:
    """Failed tasks counted by the reason their record gives."""
    out: dict[str, int] = {}
    for record in records:
        for task in _tasks(record):
            if task.get("completed"):
                continue
            failure = task.get("failure")
            reason = str(failure.get("reason")) if isinstance(failure, dict) else "(no reason recorded)"
            out[reason] = out.get(reason, 0) + 1
    return dict(sorted(out.items()))


def _failures_section(summary: _Summary) -> list[str]:
    """Failed tasks by reason: one table per env config, a column per variant."""
    lines = ["## 6. Why tasks failed", ""]
    any_rows = False
    for env in summary.envs:
        cells = {v: _failure_reasons(recs) for (e, v), recs in summary.groups.items() if e == env}
        reasons = sorted({r for table in cells.values() for r in table})
        if not reasons:
            continue
        any_rows = True
        if len(summary.envs) > 1:
            lines += [f"### {env}", ""]
        lines += _md_table(["Reason", *cells], [[r, *(cells[v].get(r, 0) for v in cells)] for r in reasons])
    if not any_rows:
        return lines + ["_No task failed._", ""]
    return lines + ["Counts of failed tasks by the reason in their record (`servicerobot.failures.REASONS`).", ""]


def _plots_section(paths: ReportPaths) -> list[str]:
    titles = {
        "success_by_variant": "Task success by variant (95% Wilson intervals)",
        "kg_accuracy_over_time": "Cumulative KG update accuracy",
        "planning_time": "Planning time per episode",
    }
    lines = ["## Plots", ""]
    for name, title in titles.items():
        if name in paths.plots:
            lines += [f"### {title}", "", f"![{title}]({paths.plots[name].name})", ""]
        else:
            lines += [f"### {title}", "", f"_Skipped: {paths.skipped_plots.get(name, 'not drawn')}._", ""]
    return lines


def _csv_text(columns: Sequence[str], rows: Iterable[dict]) -> str:
    buffer = io.StringIO()
    writer = csv.DictWriter(buffer, fieldnames=list(columns), lineterminator="\n")
    writer.writeheader()
    for row in rows:
        writer.writerow({k: "" if row.get(k) is None else row[k] for k in columns})
    return buffer.getvalue()


def _kind_rows(summary: _Summary) -> list[dict]:
    rows = []
    for (env, variant), recs in summary.groups.items():
        for kind, (k, n) in _counts((t for r in recs for t in _tasks(r)),
                                    lambda t: [str(t.get("kind") or "unknown")]).items():
            rate, lo, hi = _rate_stats(k, n)
            rows.append({"env": env, "variant": variant, "kind": kind, "tasks": n, "completed": k,
                         "success_rate": _round(rate), "success_lo": _round(lo), "success_hi": _round(hi)})
    return rows


# --------------------------------------------------------------------------- writing


def _write_text(path: Path, text: str) -> None:
    write_atomic(path, text)


def _kg_curve(records: list[dict]) -> list[float]:
    """Cumulative share of correct KG updates: each episode's updates in order, episodes sorted by seed."""
    correct, curve = 0, []
    for i, update in enumerate((u for r in sorted(records, key=_seed_order) for u in _updates(r)), start=1):
        correct += update["correct"]
        curve.append(correct / i)
    return curve


def _colour(variant: str, summary: _Summary) -> str:
    """The same colour for a variant in every plot."""
    return f"C{summary.variants.index(variant) % 10}"


def _group_label(env: str, variant: str, summary: _Summary) -> str:
    return variant if len(summary.envs) == 1 else f"{env}\n{variant}"


def _draw_plots(summary: _Summary, out: Path) -> tuple[dict[str, Path], dict[str, str]]:
    """Draw the PNG plots; returns (written, skipped-with-reason)."""
    try:
        # Figure objects with no pyplot: no GUI backend is touched, and nothing global changes.
        from matplotlib.figure import Figure
        from matplotlib.ticker import MaxNLocator
    except ImportError:
        skipped = dict.fromkeys(PLOTS, "matplotlib is not installed (pip install matplotlib)")
        _remove_stale(out, skipped)
        return {}, skipped
    written: dict[str, Path] = {}
    skipped: dict[str, str] = {}

    def save(name: str, fig: Figure) -> None:
        path = out / PLOTS[name]
        fig.tight_layout()
        write_atomic(path, lambda fh: fig.savefig(fh, format="png", dpi=120))
        written[name] = path

    rows = [r for r in summary.rows if r["tasks"]]
    if rows:
        fig = Figure(figsize=(max(7.0, 3.2 + 0.6 * len(summary.rows)), 4))
        ax = fig.add_subplot()
        width = 0.8 / len(summary.variants)
        for i, variant in enumerate(summary.variants):
            mine = [(summary.envs.index(r["env"]), r) for r in rows if r["variant"] == variant]
            if not mine:
                continue
            xs = [x - 0.4 + width * (i + 0.5) for x, _ in mine]
            rates = [r["success_rate"] for _, r in mine]
            err = [[r["success_rate"] - r["success_lo"] for _, r in mine],
                   [r["success_hi"] - r["success_rate"] for _, r in mine]]
            ax.bar(xs, rates, width, yerr=err, capsize=3, label=variant, color=_colour(variant, summary))
        ax.set_xticks(range(len(summary.envs)))
        ax.set_xticklabels(summary.envs)
        ax.set_ylim(0, 1.05)
        ax.set_ylabel("task success rate")
        ax.set_title("Task success (95% Wilson intervals)")
        ax.legend(fontsize="small", loc="upper left", bbox_to_anchor=(1.01, 1.0))
        save("success_by_variant", fig)
    else:
        skipped["success_by_variant"] = "no tasks in any episode"

    series = []
    for (env, variant), recs in summary.groups.items():
        curve = _kg_curve(recs)
        if curve:
            series.append((env, variant, curve))
    if series:
        fig = Figure(figsize=(8.5, 4))
        ax = fig.add_subplot()
        for env, variant, curve in series:
            ax.plot(range(1, len(curve) + 1), curve, color=_colour(variant, summary),
                    linestyle=("-", "--", ":", "-.")[summary.envs.index(env) % 4],
                    label=_group_label(env, variant, summary).replace("\n", " / "))
        ax.set_ylim(0, 1.05)
        ax.xaxis.set_major_locator(MaxNLocator(integer=True))  # updates are counted: no tick at 1.5
        ax.set_xlabel("KG updates (episode order, episodes sorted by seed)")
        ax.set_ylabel("cumulative share correct")
        ax.set_title("Knowledge-graph update accuracy")
        ax.legend(fontsize="small", loc="upper left", bbox_to_anchor=(1.01, 1.0))
        save("kg_accuracy_over_time", fig)
    else:
        skipped["kg_accuracy_over_time"] = "no scored knowledge-graph updates"

    boxes = []
    for (env, variant), recs in summary.groups.items():
        times = [v for r in recs if (v := _num(_agent(r).get("planning_time"))) is not None]
        if times:
            boxes.append((_group_label(env, variant, summary), times, _colour(variant, summary)))
    if boxes:
        fig = Figure(figsize=(max(5.0, 1.0 + 1.1 * len(boxes)), 4.5))
        ax = fig.add_subplot()
        parts = ax.boxplot([times for _, times, _ in boxes], showmeans=True, patch_artist=True,
                           meanprops={"marker": "^", "markerfacecolor": "black", "markeredgecolor": "black"})
        for patch, (_, _, colour) in zip(parts["boxes"], boxes):
            patch.set_facecolor(colour)
            patch.set_alpha(0.6)
        ax.set_xticks(range(1, len(boxes) + 1))
        ax.set_xticklabels([label for label, _, _ in boxes], fontsize="small", rotation=30, ha="right")
        ax.set_ylim(bottom=0)
        ax.set_ylabel("planning seconds per episode")
        ax.set_title("Planning time per episode")
        save("planning_time", fig)
    else:
        skipped["planning_time"] = "no per-episode planning times"
    _remove_stale(out, skipped)
    return written, skipped


def _remove_stale(out: Path, skipped: dict[str, str]) -> None:
    """Delete a skipped plot's file left by an earlier report in the same folder: it would not match."""
    for name in skipped:
        with contextlib.suppress(FileNotFoundError):
            (out / PLOTS[name]).unlink()


def _cm_section(records: list[dict]) -> list[str]:
    """The Context Matters table (only when some record is a CM record)."""
    from servicerobot.experiments.cm import cm_report_lines

    return cm_report_lines(records)


def write_report(results: str | Path | list[dict], out_dir: str | Path) -> ReportPaths:
    """Write report.md, summary.csv, by_task_kind.csv, report.json and PNG plots into `out_dir`.

    `results` is a JSONL path (see `load_records`) or a list of episode records. Every file is written
    atomically. Raises `ReportError` for unreadable or empty results.
    """
    if isinstance(results, (str, os.PathLike)):
        source: str | None = str(results)
        records = load_records(results)
    elif isinstance(results, (list, tuple)):
        source = None
        records = [_validate(r, f"record {i}") for i, r in enumerate(results)]
    else:
        raise ReportError(f"results must be a JSONL path or a list of records, got {type(results).__name__}")
    if not records:
        raise ReportError(f"no episode records in {source or 'the given list'}: nothing to report")
    records = _dedupe(records)
    out = Path(out_dir)
    try:
        out.mkdir(parents=True, exist_ok=True)
    except (FileExistsError, NotADirectoryError):
        raise ReportError(f"report output path exists and is not a directory: {out}") from None
    except OSError as exc:
        raise ReportError(f"cannot create report directory {out}: {exc}") from exc

    summary = _summarize(records)
    plots, skipped = _draw_plots(summary, out)
    paths = ReportPaths(out, out / "report.md", out / "summary.csv", out / "by_task_kind.csv",
                        out / "report.json", plots, skipped)
    _write_text(paths.summary_csv, _csv_text(SUMMARY_COLUMNS, summary.rows))
    _write_text(paths.by_task_kind_csv, _csv_text(KIND_COLUMNS, _kind_rows(summary)))
    _write_text(paths.json, json.dumps(summary.rows, indent=2) + "\n")

    def tasks_of(recs: list[dict]) -> list[dict]:
        return [t for r in recs for t in _tasks(r)]

    markdown = [
        *_metadata(summary, source),
        *_table1(summary.rows),
        *_pivot_section("2. Success per task kind", summary,
                        lambda recs: _counts(tasks_of(recs), lambda t: [str(t.get("kind") or "unknown")]),
                        "Task kind", "No tasks."),
        *_pivot_section("3. Success per update type", summary,
                        lambda recs: _counts(tasks_of(recs), _events), "Update type",
                        "No task saw a world update."),
        *_pivot_section("4. KG accuracy per update category", summary, _kg_counts, "Update category",
                        "No scored knowledge-graph updates (e.g. only oracle or memoryless variants)."),
        *_cm_section(records),
        *_errors_section(summary),
        *_failures_section(summary),
        *_plots_section(paths),
    ]
    _write_text(paths.markdown, "\n".join(markdown).rstrip("\n") + "\n")
    return paths
