"""Experiment report: Wilson intervals, JSONL loading, Markdown/CSV/JSON aggregates and PNG plots."""

from __future__ import annotations

import csv
import json
import math
import sys

import pytest
from PIL import Image

from servicerobot.errors import ServiceRobotError
from servicerobot.experiments.report import (
    SUMMARY_COLUMNS,
    ReportError,
    ReportWarning,
    _kg_curve,
    load_records,
    summary_rows,
    write_report,
)
from servicerobot.experiments.stats import wilson

PNG_SIGNATURE = b"\x89PNG\r\n\x1a\n"
Z = 1.96


def wilson_closed_form(k: int, n: int) -> tuple[float, float]:
    """The Wilson interval in its other textbook form, as an independent check."""
    root = Z * math.sqrt(Z * Z + 4 * k * (n - k) / n)
    return (2 * k + Z * Z - root) / (2 * (n + Z * Z)), (2 * k + Z * Z + root) / (2 * (n + Z * Z))


def goal(parseable: bool, solvable: bool, correct: bool) -> dict:
    return {"agent": "(and (on a b))", "true": "(and (on a b))", "parseable": parseable, "solvable": solvable,
            "correct": correct}


def task(kind: str, completed: bool, events=(), goal=None, actions=10, failed=0, plans=1, index=0) -> dict:
    return {"index": index, "kind": kind, "text": f"please {kind}", "completed": completed, "steps": actions,
            "events": list(events), "disturbed": bool(events), "plans": plans, "actions": actions,
            "failed_actions": failed, "goal": goal}


def upd(correct: bool, *categories: str, step: int = 1) -> dict:
    return {"step": step, "categories": list(categories), "correct": correct}


def record(env: str, variant: str, seed: int, tasks, kg=None, agent=None, *, status="ok", error=None,
           commit="551e4b7", python="3.11.7", size="small", wall=1.5) -> dict:
    rec = {
        "key": f"smoke/{env}/{variant}/{seed}",
        "run": {"config": "smoke", "config_hash": "ab12cd34", "git_commit": commit,
                "versions": {"servicerobot": "0.1.0", "python": python, "gymnasium": "1.1.1"}},
        "env": env, "env_kwargs": {"size": size, "update_mode": "verbal"},
        "variant": variant, "seed": seed, "status": status, "tasks": tasks, "kg": kg,
        "timing": {"wall_s": wall}, "something_new": {"ignored": True},
    }
    if agent is not None:
        rec["agent"] = agent
    if error is not None:
        rec["error"] = error
    return rec


def agent(tokens, planning, replans) -> dict:
    return {"steps": 50, "replans": replans, "tokens": tokens, "planning_time": planning, "expanded": 10,
            "updates_applied": 2, "updates_dropped": 0}


SMALL, DEFAULT = "household-small", "household-default"
TRACEBACK = 'Traceback (most recent call last):\n  File "x.py", line 1, in <module>\nValueError: planner exploded'


def main_group() -> list[dict]:
    """household-small / search-rag, hand-computed below: 4 episodes (1 error), 6 tasks, 4 completed."""
    return [
        record(SMALL, "search-rag", 0, [
            task("pick_place", True, ["relocation"], goal(True, True, True), actions=10, failed=1, plans=2),
            task("fetch", False, [], goal(True, False, False), actions=8, failed=2, plans=3, index=1),
        ], kg={"updates": [upd(True, "relocation"), upd(False, "relocation", step=5)], "jaccard": 0.99},
            agent=agent(1000, 2.0, 1)),
        # Seed 3 before seed 1 in the file: the KG curve must still follow seed order.
        record(SMALL, "search-rag", 3, [
            task("fetch", True, ["addition"], goal(False, False, False), actions=9, failed=1, plans=1),
            task("pick_place", False, ["relocation"], None, actions=5, failed=2, plans=2, index=1),
        ], kg={"updates": [upd(True, "addition"), upd(False, "relocation"), upd(True, "relocation", "addition")],
               "jaccard": 0.89}, agent=agent(2000, 9.0, 2), commit="deadbee", python="3.12.1", wall=4.5),
        record(SMALL, "search-rag", 1, [
            task("pick_place", True, ["reset", "relocation"], goal(True, True, True), actions=12, plans=1),
            task("clean", True, [], goal(True, True, False), actions=6, plans=1, index=1),
        ], kg={"updates": [upd(True, "reset"), upd(True, "relocation")]}, agent=agent(3000, 4.0, 3), wall=3.5),
        record(SMALL, "search-rag", 2, [], kg=None, status="error", error=TRACEBACK),
    ]


def other_groups() -> list[dict]:
    out = []
    for env, size in ((SMALL, "small"), (DEFAULT, "default")):
        for seed in range(3):
            # Oracle: no goal scoring, no KG; completes everything.
            out.append(record(env, "oracle", seed, [task("pick_place", True, ["reset"]),
                                                    task("fetch", True, index=1)],
                              agent=agent(0, 0.5 + seed, 0), size=size))
            out.append(record(env, "llm-plain", seed, [task("pick_place", seed == 0, ["relocation"],
                                                            goal(True, seed != 2, seed == 0))],
                              kg={"updates": [upd(seed != 1, "relocation")]},
                              agent=agent(500, 1.0, 1), size=size))
        if env == DEFAULT:
            out.append(record(env, "search-rag", 0, [task("clean", False, goal=goal(True, True, False))],
                              kg={"updates": []}, agent=agent(800, 3.0, 0), size=size))
    return out


@pytest.fixture
def records() -> list[dict]:
    return main_group() + other_groups()


@pytest.fixture(scope="module")
def report(tmp_path_factory):
    """One full report shared by the read-only tests (drawing the plots is the slow part)."""
    tmp_path = tmp_path_factory.mktemp("report")
    results = tmp_path / "results.jsonl"
    results.write_text("".join(json.dumps(r) + "\n" for r in main_group() + other_groups()))
    paths = write_report(results, tmp_path / "report")
    return paths, paths.markdown.read_text()


def md_table(md: str, *headings: str) -> list[dict[str, str]]:
    """The first Markdown table after the given headings (each searched after the previous one)."""
    lines = md.splitlines()
    pos = 0
    for heading in headings:
        pos = lines.index(heading, pos) + 1
    while not lines[pos].startswith("|"):
        pos += 1
    header = [c.strip() for c in lines[pos].strip("|").split(" | ")]
    rows = []
    for line in lines[pos + 2:]:
        if not line.startswith("|"):
            break
        rows.append(dict(zip(header, (c.strip() for c in line.strip().strip("|").split(" | ")))))
    return rows


def interval(k: int, n: int) -> str:
    lo, hi = wilson_closed_form(k, n)
    return f"{k / n:.3f} [{lo:.3f}, {hi:.3f}]"


# --------------------------------------------------------------------------- stats


@pytest.mark.parametrize(("k", "n"), [(0, 1), (1, 1), (4, 6), (3, 4), (17, 40), (0, 10), (99, 100), (500, 1000)])
def test_wilson_matches_closed_form(k, n):
    lo, hi = wilson(k, n)
    exp_lo, exp_hi = wilson_closed_form(k, n)
    assert lo == pytest.approx(max(0.0, exp_lo), abs=1e-12)
    assert hi == pytest.approx(min(1.0, exp_hi), abs=1e-12)
    assert 0.0 <= lo <= k / n <= hi <= 1.0


def test_wilson_edge_cases():
    assert wilson(0, 0) == (0.0, 1.0)
    assert wilson(0, 10)[0] == 0.0
    assert wilson(0, 10)[1] == pytest.approx(Z * Z / (10 + Z * Z))  # 0.2775
    assert wilson(10, 10)[1] == 1.0
    lo99, hi99 = wilson(5, 10, z=2.576)
    lo95, hi95 = wilson(5, 10)
    assert lo99 < lo95 < 0.5 < hi95 < hi99
    with pytest.raises(ValueError):
        wilson(3, 2)
    with pytest.raises(ValueError):
        wilson(-1, 2)


# --------------------------------------------------------------------------- the full report


def test_report_writes_every_file(report):
    paths, _ = report
    names = sorted(p.name for p in paths.files)
    assert names == sorted(["report.md", "summary.csv", "by_task_kind.csv", "report.json",
                            "success_by_variant.png", "kg_accuracy_over_time.png", "planning_time.png"])
    assert paths.skipped_plots == {}
    for png in paths.plots.values():
        data = png.read_bytes()
        assert data[:8] == PNG_SIGNATURE and len(data) > 1000
        with Image.open(png) as image:
            image.verify()
        with Image.open(png) as image:
            assert image.width > 100 and image.height > 100
    leftovers = [p.name for p in paths.out_dir.iterdir() if p.name.startswith(".") or p.suffix == ".tmp"]
    assert leftovers == []


def test_markdown_table1_counts_and_intervals(report):
    _, md = report
    rows = {(r["Env config"], r["Variant"]): r for r in md_table(md, "## 1. Task success by environment "
                                                                     "config x variant")}
    assert list(rows) == [(SMALL, "search-rag"), (SMALL, "oracle"), (SMALL, "llm-plain"),
                          (DEFAULT, "search-rag"), (DEFAULT, "oracle"), (DEFAULT, "llm-plain")]
    main = rows[(SMALL, "search-rag")]
    assert (main["Episodes"], main["Tasks"], main["Completed"]) == ("4", "6", "4")
    assert main["Success [95% CI]"] == interval(4, 6)
    assert main["Disturbed success [95% CI]"] == "3/4 " + interval(3, 4).replace("0.750", "(0.750)", 1)
    assert (main["Goals scored"], main["Goal parseable"], main["Goal solvable"], main["Goal correct"]) == \
        ("5", "0.800", "0.600", "0.400")
    assert main["KG accuracy"] == "5/7 (0.714)"
    assert main["Plan accuracy"] == "0.880 (44/50)"
    assert main["Plans/task"] == "1.67"
    assert main["Tokens/ep"] == "2000"
    assert main["Planning s/ep (median / mean)"] == "4.00 / 5.00"
    assert main["Replans/ep"] == "2.00"
    assert main["KG Jaccard (mean)"] == "0.940"  # the two episodes that report one
    assert main["Updates applied / dropped"] == "6 / 0"  # 2 / 0 in each of the three with agent stats
    assert main["Wall s/ep (median)"] == "2.5"  # 1.5, 1.5 (the error), 3.5, 4.5
    assert main["Episodes with errors"] == "1"

    oracle = rows[(SMALL, "oracle")]
    assert oracle["Success [95% CI]"] == interval(6, 6)
    assert oracle["Goal parseable"] == oracle["Goal correct"] == oracle["KG accuracy"] == "—"
    assert oracle["KG Jaccard (mean)"] == "—"
    assert oracle["Disturbed success [95% CI]"].startswith("3/3 (1.000)")
    llm = rows[(DEFAULT, "llm-plain")]
    assert llm["Success [95% CI]"] == interval(1, 3)
    assert llm["KG accuracy"] == "2/3 (0.667)"
    assert llm["Goal solvable"] == "0.667"
    assert rows[(DEFAULT, "search-rag")]["KG accuracy"] == "—"  # an empty update list scores nothing


def test_markdown_metadata_and_breakdowns(report):
    _, md = report
    assert "`551e4b7`" in md and "`deadbee`" in md and "more than one git commit" in md
    assert "`ab12cd34`" in md and "`smoke`" in md
    assert "python `3.11.7`, `3.12.1`" in md

    kinds = {r["Task kind"]: r for r in md_table(md, "## 2. Success per task kind", f"### {SMALL}")}
    assert set(kinds) == {"pick_place", "fetch", "clean"}
    assert kinds["pick_place"]["search-rag"].startswith("2/3 (0.667) [")
    assert kinds["fetch"]["search-rag"].startswith("1/2 (0.500)")
    assert kinds["clean"]["search-rag"].startswith("1/1 (1.000)")
    assert kinds["clean"]["oracle"] == "—"
    lo, hi = wilson_closed_form(2, 3)
    assert kinds["pick_place"]["search-rag"] == f"2/3 (0.667) [{lo:.3f}, {hi:.3f}]"

    events = {r["Update type"]: r for r in md_table(md, "## 3. Success per update type", f"### {SMALL}")}
    assert set(events) == {"relocation", "reset", "addition"}
    assert events["relocation"]["search-rag"].startswith("2/3 ")
    assert events["reset"]["search-rag"].startswith("1/1 ")
    assert events["addition"]["search-rag"].startswith("1/1 ")
    assert events["reset"]["oracle"].startswith("3/3 ")
    assert events["relocation"]["llm-plain"].startswith("1/3 ")

    kg = {r["Update category"]: r for r in md_table(md, "## 4. KG accuracy per update category", f"### {SMALL}")}
    assert kg["relocation"]["search-rag"].startswith("3/5 (0.600)")
    assert kg["addition"]["search-rag"].startswith("2/2 ")
    assert kg["reset"]["search-rag"].startswith("1/1 ")
    assert kg["relocation"]["oracle"] == "—"

    errors = md[md.index("## 5. Errors"):md.index("## Plots")]
    assert "`smoke/household-small/search-rag/2`: ValueError: planner exploded" in errors
    assert "Traceback" not in errors and "1 episode(s)" in errors
    assert "![Task success" in md and "(success_by_variant.png)" in md and "Skipped" not in md


def test_csv_and_json_parse_back(report):
    paths, _ = report
    with paths.summary_csv.open(newline="") as fh:
        reader = csv.DictReader(fh)
        assert tuple(reader.fieldnames) == SUMMARY_COLUMNS
        rows = {(r["env"], r["variant"]): r for r in reader}
    assert len(rows) == 6
    main = rows[(SMALL, "search-rag")]
    lo, hi = wilson_closed_form(4, 6)
    assert int(main["tasks"]) == 6 and int(main["completed"]) == 4 and int(main["error_episodes"]) == 1
    assert float(main["success_rate"]) == pytest.approx(4 / 6, abs=1e-6)
    assert float(main["success_lo"]) == pytest.approx(lo, abs=1e-6)
    assert float(main["success_hi"]) == pytest.approx(hi, abs=1e-6)
    assert float(main["plan_accuracy"]) == pytest.approx(0.88)
    assert float(main["kg_accuracy"]) == pytest.approx(5 / 7, abs=1e-6)
    assert float(main["planning_s_median"]) == 4.0 and float(main["tokens_per_episode"]) == 2000.0
    assert rows[(SMALL, "oracle")]["goal_correct"] == "" and rows[(SMALL, "oracle")]["kg_accuracy"] == ""

    with paths.by_task_kind_csv.open(newline="") as fh:
        kinds = {(r["env"], r["variant"], r["kind"]): r for r in csv.DictReader(fh)}
    pick = kinds[(SMALL, "search-rag", "pick_place")]
    assert (int(pick["tasks"]), int(pick["completed"])) == (3, 2)
    assert float(pick["success_lo"]) == pytest.approx(wilson_closed_form(2, 3)[0], abs=1e-6)
    assert int(kinds[(DEFAULT, "oracle", "fetch")]["tasks"]) == 3

    data = json.loads(paths.json.read_text())
    assert isinstance(data, list) and len(data) == 6
    by_key = {(r["env"], r["variant"]): r for r in data}
    assert by_key[(SMALL, "search-rag")]["completed"] == 4
    assert by_key[(SMALL, "oracle")]["goal_correct"] is None
    assert by_key[(SMALL, "search-rag")]["success_lo"] == pytest.approx(float(main["success_lo"]))


def test_summary_rows_and_list_input(tmp_path, records):
    rows = summary_rows(records)
    assert [r["tasks"] for r in rows] == [6, 6, 3, 1, 6, 3]
    paths = write_report(records[:2], tmp_path / "out")
    assert "Source: in-memory records" in paths.markdown.read_text()


def test_kg_curve_follows_seed_order():
    # Seeds 3, 0, 1 in file order; pooled in seed order: 0 -> [T, F], 1 -> [T, T], 3 -> [T, F, T].
    curve = _kg_curve(main_group())
    flags = [True, False, True, True, True, False, True]
    assert curve == pytest.approx([sum(flags[:i]) / i for i in range(1, 8)])
    assert curve[-1] == pytest.approx(5 / 7)


# --------------------------------------------------------------------------- loading


def test_truncated_last_line_is_skipped(tmp_path, records):
    path = tmp_path / "results.jsonl"
    text = "".join(json.dumps(r) + "\n" for r in records[:3]) + json.dumps(records[3])[:40]
    path.write_text(text)
    with pytest.warns(ReportWarning, match=r"results\.jsonl:4: skipping truncated"):
        loaded = load_records(path)
    assert [r["key"] for r in loaded] == [r["key"] for r in records[:3]]


def test_corrupt_middle_line_names_file_and_line(tmp_path, records):
    path = tmp_path / "results.jsonl"
    lines = [json.dumps(r) for r in records[:3]]
    lines.insert(1, '{"key": "broken", "env": ')
    path.write_text("\n".join(lines) + "\n")
    with pytest.raises(ReportError, match=r"results\.jsonl:2: corrupt record"):
        load_records(path)
    path.write_text(json.dumps(records[0]) + "\n\n[1, 2]\n" + json.dumps(records[1]) + "\n")
    with pytest.raises(ReportError, match=r"results\.jsonl:3: .*JSON object"):
        load_records(path)


def test_record_without_env_is_rejected(tmp_path, records):
    path = tmp_path / "results.jsonl"
    bad = dict(records[1])
    del bad["env"]
    path.write_text(json.dumps(records[0]) + "\n" + json.dumps(bad) + "\n")
    with pytest.raises(ReportError, match=r"results\.jsonl:2: .*'env'"):
        load_records(path)
    with pytest.raises(ReportError, match=r"record 1: .*'tasks'"):
        write_report([records[0], {**records[0], "tasks": "nope"}], tmp_path / "out")


def test_missing_and_empty_results(tmp_path):
    with pytest.raises(ReportError, match="not found"):
        load_records(tmp_path / "nope.jsonl")
    empty = tmp_path / "empty.jsonl"
    empty.write_text("\n  \n")
    assert load_records(empty) == []
    with pytest.raises(ReportError, match="no episode records") as info:
        write_report(empty, tmp_path / "out")
    assert isinstance(info.value, ServiceRobotError)
    with pytest.raises(ReportError, match="no episode records"):
        write_report([], tmp_path / "out")
    only_truncated = tmp_path / "trunc.jsonl"
    only_truncated.write_text('{"key": "a", "env"')
    with pytest.warns(ReportWarning), pytest.raises(ReportError, match="no episode records"):
        write_report(only_truncated, tmp_path / "out")
    assert not (tmp_path / "out" / "report.md").exists()


def test_duplicate_keys_keep_the_later_record(records):
    again = dict(records[0], tasks=[task("fetch", True)])
    with pytest.warns(ReportWarning, match="duplicate episode key"):
        rows = summary_rows(records + [again])
    main = next(r for r in rows if (r["env"], r["variant"]) == (SMALL, "search-rag"))
    assert (main["episodes"], main["tasks"], main["completed"]) == (4, 5, 4)


# --------------------------------------------------------------------------- sparse data


def test_oracle_only_skips_kg_plot(tmp_path, records):
    oracle = [r for r in records if r["variant"] == "oracle"]
    paths = write_report(oracle, tmp_path / "out")
    md = paths.markdown.read_text()
    assert set(paths.plots) == {"success_by_variant", "planning_time"}
    assert not (tmp_path / "out" / "kg_accuracy_over_time.png").exists()
    assert "_Skipped: no scored knowledge-graph updates._" in md
    assert "No scored knowledge-graph updates" in md
    assert "_No episode ended with an error._" in md


def test_minimal_records_are_tolerated(tmp_path):
    minimal = [{"env": "e", "variant": "v", "whatever": [1, 2]}, {"env": "e", "variant": "v", "seed": 2,
                                                                   "tasks": [{"completed": True}]}]
    paths = write_report(minimal, tmp_path / "out")
    row = json.loads(paths.json.read_text())[0]
    assert (row["episodes"], row["tasks"], row["completed"], row["error_episodes"]) == (2, 1, 1, 0)
    assert row["plan_accuracy"] is None and row["planning_s_median"] is None
    assert set(paths.skipped_plots) == {"kg_accuracy_over_time", "planning_time"}
    assert "unknown" in paths.by_task_kind_csv.read_text()


def test_env_kwargs_tell_configs_apart(tmp_path):
    recs = [{"env": "h", "variant": "v", "env_kwargs": {"size": "small", "update_mode": mode},
             "tasks": [{"completed": True, "kind": "k"}]} for mode in ("verbal", "percept")]
    envs = [r["env"] for r in summary_rows(recs)]
    assert envs == ["h (update_mode=verbal)", "h (update_mode=percept)"]


def test_without_matplotlib_plots_are_skipped(tmp_path, records, monkeypatch):
    monkeypatch.setitem(sys.modules, "matplotlib.figure", None)
    paths = write_report(records, tmp_path / "out")
    assert paths.plots == {} and len(paths.skipped_plots) == 3
    assert "matplotlib is not installed" in paths.markdown.read_text()
    assert not list((tmp_path / "out").glob("*.png"))


def test_rewrite_replaces_files(tmp_path, records):
    out = tmp_path / "out"
    write_report(records, out)
    paths = write_report(records[:1], out)
    assert len(json.loads(paths.json.read_text())) == 1
    assert sorted(p.name for p in out.iterdir()) == sorted(p.name for p in paths.files)
    paths = write_report([r for r in records if r["variant"] == "oracle"], out)
    assert not (out / "kg_accuracy_over_time.png").exists()  # a stale plot would contradict report.md
    assert sorted(p.name for p in out.iterdir()) == sorted(p.name for p in paths.files)
