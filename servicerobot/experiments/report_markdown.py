"""The Markdown sections and CSV text of a report. Part of `servicerobot.experiments.report`.
"""

from __future__ import annotations

import csv
import io
import json
from collections.abc import Callable, Iterable, Sequence
from typing import Any

from servicerobot.experiments.report_records import ReportPaths, _error_line, _is_error, _tasks
from servicerobot.experiments.report_summary import _ordered, _Summary
from servicerobot.experiments.stats import wilson

DASH = "—"


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


def _cm_section(records: list[dict]) -> list[str]:
    """The Context Matters table (only when some record is a CM record)."""
    from servicerobot.experiments.cm import cm_report_lines

    return cm_report_lines(records)
