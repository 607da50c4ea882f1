"""Reading an episode-results JSONL file for a report: the records, checked and deduplicated, and what a record says
(tasks, events, agent stats). Part of `servicerobot.experiments.report`.
"""

from __future__ import annotations

import json
import math
import warnings
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from servicerobot.errors import ServiceRobotError
from servicerobot.limits import read_bounded

MAX_REPORT_BYTES = 1 << 30  # a results file a report reads (100,000 episodes of ~2 KB are 0.2 GB)


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
    try:  # a FIFO or a device (/dev/zero) is refused by what it is, unread
        data = read_bounded(path, MAX_REPORT_BYTES, "results file", ReportError)
    except FileNotFoundError:
        raise ReportError(f"results file not found: {path}") from None
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
