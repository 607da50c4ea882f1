"""Experiment reports: turn an episode-results JSONL file into Markdown tables, CSV/JSON aggregates and plots.

One record per episode (see `write_report` for the files written). Records are grouped by environment
config x agent variant; task success carries a 95% Wilson score interval. The parts, by concern:
`report_records` (reading and checking records), `report_summary` (aggregates), `report_markdown` (tables),
`report_plots` (PNGs); this module writes the files.

    from servicerobot.experiments.report import write_report
    paths = write_report("runs/smoke/results.jsonl", "runs/smoke/report")
"""

from __future__ import annotations

import json
import os
from pathlib import Path

from servicerobot.experiments.report_markdown import (  # DASH, PLOTS, _kg_curve: importable here as before the split
    DASH,  # noqa: F401
    _cm_section,
    _csv_text,
    _errors_section,
    _failures_section,
    _metadata,
    _pivot_section,
    _plots_section,
    _table1,
)
from servicerobot.experiments.report_plots import PLOTS, _draw_plots  # noqa: F401
from servicerobot.experiments.report_records import (
    ReportError,
    ReportPaths,
    ReportWarning,
    _dedupe,
    _events,
    _tasks,
    _validate,
    load_records,
)
from servicerobot.experiments.report_summary import (
    KIND_COLUMNS,
    SUMMARY_COLUMNS,
    _counts,
    _kg_counts,
    _kg_curve,  # noqa: F401
    _kind_rows,
    _summarize,
    summary_rows,
)
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


# --------------------------------------------------------------------------- writing


def _write_text(path: Path, text: str) -> None:
    write_atomic(path, text)


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
