"""Write the docs site's benchmarks page from files: `python -m servicerobot.docs_bench`.

Two sources, both in a source checkout:

- `benchmarks/figures/*.json`, one record per measurement: `title`, `command`, `machine`, `date`, `source`
  (how the figures got there), and `figures` (name -> value, as the script printed them) and/or `table`
  (`columns`, `rows`). `servicerobot bench --record benchmarks/figures` writes such records from a run.
- `results/<name>/results.jsonl`, written by `servicerobot run`, each with an `about.json` beside it
  (`command`, `machine`, `date`): one table per results file, tasks done per variant counted from the records.

`--check` exits 1 when the page on disk differs from what the files give (the tests use it).
"""

from __future__ import annotations

import argparse
import json
import math
import statistics
import sys
from collections import defaultdict
from pathlib import Path
from typing import Any

from servicerobot.errors import ServiceRobotError
from servicerobot.files import write_atomic
from servicerobot.limits import excerpt, read_text_bounded

__all__ = ["DocsBenchError", "bench_record", "load_figures", "machine", "main", "read_json", "render_page",
           "results_table"]

ROOT = Path(__file__).resolve().parent.parent
_REQUIRED = ("title", "command", "machine", "date", "source")
MAX_JSON_BYTES = 1 << 20  # a figure record or an about.json
MAX_RESULTS_BYTES = 64 << 20  # a results file the page counts
MAX_PAGE_BYTES = 16 << 20  # the page itself, read back by --check
_ABOUT = ("command", "machine", "date")  # what about.json says of its results file


class DocsBenchError(ServiceRobotError, ValueError):
    """A figure record, about.json or results file the page cannot be written from (the message names the
    file and what is wrong)."""


def _parse_json(text: str, where: str) -> Any:
    try:
        return json.loads(text)
    except RecursionError:
        raise DocsBenchError(f"{where}: the JSON is nested too deep") from None
    except ValueError as error:
        raise DocsBenchError(f"{where}: not valid JSON ({error})") from None


def read_json(path: Path, what: str, cap: int = MAX_JSON_BYTES) -> Any:
    """The JSON value of `path`, read through `limits.read_text_bounded` (a regular file of at most `cap`
    bytes: a FIFO or a link to /dev/zero is refused unread). A missing file raises FileNotFoundError."""
    return _parse_json(read_text_bounded(path, cap, what, DocsBenchError), str(path))


def _is_scalar(value: Any) -> bool:
    return value is None or isinstance(value, (str, bool, int)) or (isinstance(value, float) and math.isfinite(value))


def _check_record(record: Any, path: Path) -> dict:
    """A figure record's shape: the required texts, a numeric `order`, `figures` name -> scalar and/or a
    `table` of scalars whose rows are as wide as its columns."""
    if not isinstance(record, dict):
        raise DocsBenchError(f"{path}: a figure record must be a JSON object, got {type(record).__name__}")
    missing = [k for k in _REQUIRED if not record.get(k)]
    if missing or not (record.get("figures") or record.get("table")):
        raise DocsBenchError(f"{path}: a figure record needs {', '.join(missing) or 'figures or a table'}")
    for key in (*_REQUIRED, "note"):
        if key in record and not isinstance(record[key], str):
            raise DocsBenchError(f"{path}: {key!r} must be a text, got {excerpt(record[key])}")
    order = record.get("order", 100)
    if isinstance(order, bool) or not isinstance(order, (int, float)) or not math.isfinite(order):
        raise DocsBenchError(f"{path}: 'order' must be a number (e.g. 10), got {excerpt(order)}")
    figures = record.get("figures") or {}
    if not isinstance(figures, dict) or not all(isinstance(k, str) and _is_scalar(v) for k, v in figures.items()):
        raise DocsBenchError(f"{path}: 'figures' must map names to numbers or texts, got {excerpt(figures)}")
    table = record.get("table")
    if table:
        columns, rows = (table.get("columns"), table.get("rows")) if isinstance(table, dict) else (None, None)
        if not (isinstance(columns, list) and columns and all(_is_scalar(c) for c in columns)
                and isinstance(rows, list)
                and all(isinstance(r, list) and len(r) == len(columns) and all(map(_is_scalar, r)) for r in rows)):
            raise DocsBenchError(f"{path}: 'table' must be {{\"columns\": [...], \"rows\": [[...], ...]}} with "
                                 "numbers or texts, each row as long as the columns")
    return record


def machine() -> str:
    """This machine in words for a figure record: cores, CPU model, architecture, Python, load average."""
    import os
    import platform

    model = ""
    try:
        for line in Path("/proc/cpuinfo").read_text(encoding="utf-8", errors="replace").splitlines():
            if line.startswith("model name"):
                model = line.split(":", 1)[1].strip()
                break
    except OSError:
        pass
    load = f", load average {os.getloadavg()[0]:.1f} at the start" if hasattr(os, "getloadavg") else ""
    return (f"{os.cpu_count()}-core {platform.machine()}{f' ({model})' if model else ''}, "
            f"Python {platform.python_version()}{load}")


def bench_record(script: str, command: str, figures: dict, where: str, previous: dict | None = None) -> dict:
    """A figure record of one benchmark run, keeping the title and order of the record it replaces."""
    from datetime import datetime, timezone

    previous = previous or {}
    return {"order": previous.get("order", 100), "title": previous.get("title", f"benchmarks/{script}.py"),
            "command": command, "machine": where,
            "date": datetime.now(timezone.utc).strftime("%Y-%m-%d %H:%M UTC"),
            "source": "measured: servicerobot bench --record", "figures": figures}


def _cell(value: object) -> str:
    text = value if isinstance(value, str) else json.dumps(value)
    return text.replace("|", "\\|").replace("\n", " ")


def load_figures(folder: Path) -> list[dict]:
    """The figure records of `folder`, sorted by title; a record missing a required key raises ValueError
    naming the file and the key."""
    records = []
    for path in sorted(folder.glob("*.json")):
        record = _check_record(read_json(path, "figure record"), path)
        records.append({**record, "file": path.name})
    return sorted(records, key=lambda r: (r.get("order", 100), r["title"]))


def _figures_markdown(record: dict) -> list[str]:
    lines = [f"### {record['title']}", "",
             f"- command: `{record['command']}`",
             f"- machine: {record['machine']}",
             f"- date: {record['date']}",
             f"- source: {record['source']} (`benchmarks/figures/{record['file']}`)", ""]
    if record.get("note"):
        lines += [record["note"], ""]
    if record.get("table"):
        table = record["table"]
        lines += ["| " + " | ".join(_cell(c) for c in table["columns"]) + " |",
                  "|" + "---|" * len(table["columns"])]
        lines += ["| " + " | ".join(_cell(c) for c in row) + " |" for row in table["rows"]]
        lines.append("")
    if record.get("figures"):
        lines += ["| figure | value |", "|---|---|"]
        lines += [f"| `{name}` | {_cell(value)} |" for name, value in record["figures"].items()]
        lines.append("")
    return lines


def results_table(path: Path) -> list[list[str]]:
    """Rows (variant, episodes, tasks done, goals correct, tokens / episode, wall s / episode (median)) counted
    from the records of one results file; errored episodes are counted as episodes with no task done."""
    by_variant: dict[str, list[dict]] = defaultdict(list)
    text = read_text_bounded(path, MAX_RESULTS_BYTES, "results file", DocsBenchError)
    for no, line in enumerate(text.splitlines(), start=1):
        if line.strip():
            record = _check_result(_parse_json(line, f"{path}:{no}"), f"{path}:{no}")
            by_variant[record["variant"]].append(record)
    rows = []
    for variant, records in by_variant.items():
        tasks = [t for r in records for t in r.get("tasks", [])]
        scored = [t for t in tasks if isinstance(t.get("goal"), dict)]
        tokens = [r["agent"]["tokens"] for r in records if isinstance(r.get("agent"), dict) and "tokens" in r["agent"]]
        walls = [r["timing"]["wall_s"] for r in records if "wall_s" in (r.get("timing") or {})]
        rows.append([f"`{variant}`", str(len(records)),
                     f"{sum(bool(t.get('completed')) for t in tasks)}/{len(tasks)}",
                     f"{sum(bool(t['goal'].get('correct')) for t in scored)}/{len(scored)}" if scored else "—",
                     f"{round(statistics.mean(tokens)):,}" if tokens else "—",
                     f"{statistics.median(walls):.0f}" if walls else "—"])
    return rows


def _number(value: Any) -> bool:
    return not isinstance(value, bool) and isinstance(value, (int, float)) and math.isfinite(value)


def _check_result(record: Any, where: str) -> dict:
    """The fields of a result record the table counts: a `variant`, `tasks` (objects, `goal` an object or
    absent), `agent.tokens` and `timing.wall_s` numbers where present."""
    if not isinstance(record, dict) or not isinstance(record.get("variant"), str):
        raise DocsBenchError(f"{where}: a result record must be a JSON object with a 'variant' text")
    tasks = record.get("tasks", [])
    if not isinstance(tasks, list) or not all(isinstance(t, dict) and isinstance(t.get("goal", {}), (dict, type(None)))
                                              for t in tasks):
        raise DocsBenchError(f"{where}: 'tasks' must be a list of objects (each 'goal' an object)")
    for part, field in (("agent", "tokens"), ("timing", "wall_s")):
        value = record.get(part)
        if value is not None and not (isinstance(value, dict) and (field not in value or _number(value[field]))):
            raise DocsBenchError(f"{where}: '{part}' must be an object whose '{field}' is a number")
    return record


def _results_markdown(folder: Path, root: Path) -> list[str]:
    about_path = folder / "about.json"
    try:
        about = read_json(about_path, "about.json")
    except FileNotFoundError:
        raise DocsBenchError(f"{about_path}: missing: write the command, machine and date of "
                             f"{folder / 'results.jsonl'} there ({{\"command\": ..., \"machine\": ..., \"date\": ...}})") from None
    if not isinstance(about, dict) or not all(isinstance(about.get(k), str) and about[k] for k in _ABOUT) \
            or not isinstance(about.get("note", ""), str):
        raise DocsBenchError(f"{about_path}: must be a JSON object with texts {', '.join(_ABOUT)} (and an optional "
                             "'note')")
    rel = (folder / "results.jsonl").relative_to(root)
    lines = [f"### `{rel}`", "", f"- command: `{about['command']}`", f"- machine: {about['machine']}",
             f"- date: {about['date']}", ""]
    if about.get("note"):
        lines += [about["note"], ""]
    lines += ["| variant | episodes | tasks done | goals correct | tokens / episode (mean) | wall s / episode (median) |",
              "|---|---|---|---|---|---|"]
    lines += ["| " + " | ".join(row) + " |" for row in results_table(folder / "results.jsonl")]
    return lines + [""]


def render_page(root: Path = ROOT) -> str:
    """The benchmarks page's Markdown, from `root`'s figure records and results files."""
    if not (root / "benchmarks" / "figures").is_dir():  # a mistyped --root gave an empty page, written
        raise DocsBenchError(f"{root}: has no benchmarks/figures folder; --root must be a source checkout")
    lines = ["# Benchmarks", "",
             ("<!-- written by `python -m servicerobot.docs_bench`: edit benchmarks/figures/*.json or results/, "
             "not this file -->"), "",
             ("Every figure below comes from a file: a record in `benchmarks/figures/` (the command that measured "
             "it, the machine, the date, and where the figures came from) or an experiment's results file. "
             "Regenerate this page with `python -m servicerobot.docs_bench`; record a new measurement with "
             "`servicerobot bench --only SCRIPT --record benchmarks/figures` (add `--quick` for a smoke run). "
             "Times depend on the machine and its load: compare figures taken on the same machine and day."), "",
             "## Measurements", ""]
    for record in load_figures(root / "benchmarks" / "figures"):
        lines += _figures_markdown(record)
    records = load_figures(root / "benchmarks" / "figures")
    unrecorded = [s.name for s in sorted((root / "benchmarks").glob("*.py"))
                  if not any(f"benchmarks/{s.name}" in r["command"] for r in records)]
    if unrecorded:
        lines += ["## Scripts with no figure recorded here", "",
                  ("Their figures, where measured, are on the page of their part (e.g. the local model's); "
                  "`servicerobot bench --only NAME --record benchmarks/figures` adds one here."), "",
                  *[f"- `benchmarks/{name}`" for name in unrecorded], ""]
    lines += ["## Experiment results files", "",
              "Counted from each file's records (`servicerobot report FILE` gives the full tables and plots).", ""]
    for results in sorted((root / "results").glob("*/results.jsonl")):
        # an empty file is a run that has not finished an episode yet (read_text_bounded refuses a FIFO or
        # a device, whose stat size is 0 too)
        if read_text_bounded(results, MAX_RESULTS_BYTES, "results file", DocsBenchError).strip():
            lines += _results_markdown(results.parent, root)
    return "\n".join(lines).rstrip() + "\n"


def main(argv: list[str] | None = None) -> int:
    """Write (or with --check, compare) docs/benchmarks.md."""
    parser = argparse.ArgumentParser(prog="python -m servicerobot.docs_bench", description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--root", default=str(ROOT), help="the source checkout (default: this one)")
    parser.add_argument("--out", default=None, help="the page (default ROOT/docs/benchmarks.md)")
    parser.add_argument("--check", action="store_true", help="exit 1 if the page is not what the files give")
    args = parser.parse_args(argv)
    root = Path(args.root)
    out = Path(args.out) if args.out else root / "docs" / "benchmarks.md"
    try:
        text = render_page(root)
        if args.check:
            try:
                current = read_text_bounded(out, MAX_PAGE_BYTES, "benchmarks page", DocsBenchError)
            except FileNotFoundError:
                current = ""
            if current != text:
                print(f"docs_bench: {out} is out of date: run python -m servicerobot.docs_bench", file=sys.stderr)
                return 1
            return 0
        write_atomic(out, text)
    except (ValueError, KeyError, OSError) as error:  # DocsBenchError is a ValueError
        print(f"docs_bench: {error}", file=sys.stderr)
        return 2
    print(f"wrote {out}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
