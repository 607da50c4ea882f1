"""`python -m servicerobot.docs_bench` under hostile files (issue 38): a corrupt figure record, about.json or
results line is refused with a message naming the file and what is wrong (was a raw AttributeError, TypeError
or RecursionError), and a FIFO or a link to /dev/zero is refused by what it is, unread (was a hang, or 3.7 GB)."""

from __future__ import annotations

import json
import os
import sys
import tracemalloc
from pathlib import Path

import pytest

from servicerobot import docs_bench
from servicerobot.docs_bench import DocsBenchError

RECORD = {"title": "Speed", "command": "python benchmarks/speed.py", "machine": "2 cores", "date": "2026-11-27",
          "source": "measured", "figures": {"steps_per_s": 12.5}}
ABOUT = {"command": "servicerobot run grid", "machine": "m1", "date": "2026-11-27"}
RESULT = {"variant": "oracle", "tasks": [{"completed": True, "goal": {"correct": True}}], "agent": {"tokens": 3},
          "timing": {"wall_s": 2.0}}


def _root(tmp_path: Path, record=RECORD, about=ABOUT, results=(RESULT,)) -> Path:
    figures = tmp_path / "benchmarks" / "figures"
    figures.mkdir(parents=True)
    (figures / "speed.json").write_text(record if isinstance(record, str) else json.dumps(record))
    grid = tmp_path / "results" / "grid"
    grid.mkdir(parents=True)
    (grid / "about.json").write_text(about if isinstance(about, str) else json.dumps(about))
    (grid / "results.jsonl").write_text("".join((r if isinstance(r, str) else json.dumps(r)) + "\n" for r in results))
    return tmp_path


def _refused(root: Path, capsys, match: str) -> None:
    with pytest.raises(DocsBenchError, match=match):
        docs_bench.render_page(root)
    assert docs_bench.main(["--root", str(root), "--out", str(root / "page.md")]) == 2
    err = capsys.readouterr().err
    assert err.startswith("docs_bench: ") and "Traceback" not in err and len(err) < 1000
    assert not (root / "page.md").exists()


def test_good_files_still_make_the_page(tmp_path):
    page = docs_bench.render_page(_root(tmp_path))
    assert "| `steps_per_s` | 12.5 |" in page and "| `oracle` | 1 | 1/1 | 1/1 | 3 | 2 |" in page


@pytest.mark.parametrize("record, match", [
    ([RECORD], "a figure record must be a JSON object, got list"),
    ("null", "a figure record must be a JSON object, got NoneType"),
    ('"text"', "a figure record must be a JSON object, got str"),
    ("{not json", "speed.json: not valid JSON"),
    pytest.param("[" * 100_000 + "]" * 100_000, "speed.json: the JSON is nested too deep", id="nested"),
    ({**RECORD, "title": 5}, "'title' must be a text, got 5"),
    ({**RECORD, "command": {"a": 1}}, "'command' must be a text"),
    ({**RECORD, "note": ["x"]}, "'note' must be a text"),
    ({**RECORD, "order": "first"}, r"'order' must be a number \(e.g. 10\), got 'first'"),
    ({**RECORD, "order": None}, "'order' must be a number"),
    ({**RECORD, "order": True}, "'order' must be a number"),
    ({**RECORD, "figures": [1, 2]}, "'figures' must map names to numbers or texts"),
    ({**RECORD, "figures": "fast"}, "'figures' must map names to numbers or texts"),
    ({**RECORD, "figures": {"a": {"b": 1}}}, "'figures' must map names to numbers or texts"),
    ({**RECORD, "table": "rows"}, "'table' must be"),
    ({**RECORD, "table": {"columns": "ab", "rows": []}}, "'table' must be"),
    ({**RECORD, "table": {"columns": ["a"]}}, "'table' must be"),
    ({**RECORD, "table": {"columns": ["a"], "rows": [1]}}, "'table' must be"),
    ({**RECORD, "table": {"columns": ["a"], "rows": [["x", "y"]]}}, "each row as long as the columns"),
    ({**RECORD, "table": {"columns": ["a"], "rows": [[{"x": 1}]]}}, "'table' must be"),
])
def test_a_corrupt_figure_record_is_refused_naming_the_file(tmp_path, capsys, record, match):
    _refused(_root(tmp_path, record=record), capsys, match)


@pytest.mark.parametrize("about, match", [
    ("[]", "about.json: must be a JSON object with texts command, machine, date"),
    ({**ABOUT, "command": 1}, "about.json: must be a JSON object"),
    ({"command": "c"}, "about.json: must be a JSON object"),
    ({**ABOUT, "note": []}, "about.json: must be a JSON object"),
    pytest.param("{" * 50_000, "about.json: ", id="nested"),
])
def test_a_corrupt_about_json_is_refused_naming_it(tmp_path, capsys, about, match):
    _refused(_root(tmp_path, about=about), capsys, match)


@pytest.mark.parametrize("line, match", [
    ("5", "results.jsonl:1: a result record must be a JSON object with a 'variant' text"),
    ({"variant": 5}, "results.jsonl:1: a result record must be"),
    ({"variant": "a", "tasks": "x"}, "'tasks' must be a list of objects"),
    ({"variant": "a", "tasks": [1]}, "'tasks' must be a list of objects"),
    ({"variant": "a", "tasks": [{"goal": 5}]}, "'tasks' must be a list of objects"),
    ({"variant": "a", "agent": {"tokens": "many"}}, "'agent' must be an object whose 'tokens' is a number"),
    ({"variant": "a", "agent": 5}, "'agent' must be an object"),
    ({"variant": "a", "timing": {"wall_s": "slow"}}, "'timing' must be an object whose 'wall_s' is a number"),
    ({"variant": "a", "timing": 5}, "'timing' must be an object"),
    pytest.param("[" * 100_000, "results.jsonl:1: the JSON is nested too deep", id="nested"),
])
def test_a_corrupt_result_line_is_refused_with_its_line(tmp_path, capsys, line, match):
    _refused(_root(tmp_path, results=(line,)), capsys, match)


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="mkfifo, /dev/zero")
@pytest.mark.parametrize("which", ["benchmarks/figures/speed.json", "results/grid/about.json",
                                   "results/grid/results.jsonl"])
@pytest.mark.parametrize("kind", ["fifo", "link to /dev/zero"])
def test_a_fifo_or_a_device_is_refused_unread(tmp_path, capsys, which, kind):
    root = _root(tmp_path)
    path = root / which
    path.unlink()
    if kind == "fifo":
        os.mkfifo(path)
    else:
        path.symlink_to("/dev/zero")
    tracemalloc.start()
    _refused(root, capsys, "must be a regular file, not a (named pipe|character device)")
    assert tracemalloc.get_traced_memory()[1] < 50_000_000
    tracemalloc.stop()


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="mkfifo")
def test_check_against_a_fifo_page_is_refused_not_a_hang(tmp_path, capsys):
    root = _root(tmp_path)
    os.mkfifo(root / "page.md")
    assert docs_bench.main(["--root", str(root), "--out", str(root / "page.md"), "--check"]) == 2
    assert "must be a regular file, not a named pipe" in capsys.readouterr().err


@pytest.mark.parametrize("previous", ["[1]", "{not json", pytest.param("[" * 100_000, id="nested")])
def test_bench_record_leaves_a_corrupt_previous_record_alone(tmp_path, capsys, previous):
    from servicerobot.cli import main

    scripts, figures = tmp_path / "scripts", tmp_path / "figures"
    scripts.mkdir()
    figures.mkdir()
    (scripts / "speed.py").write_text("import json\nprint(json.dumps({'steps_per_s': 1234}))\n")
    (figures / "speed.json").write_text(previous)
    main(["bench", "--benchmarks", str(scripts), "--quick", "--record", str(figures)])
    err = capsys.readouterr().err
    assert "bench: not recording speed: " in err and "Traceback" not in err
    assert (figures / "speed.json").read_text() == previous


@pytest.mark.skipif(not hasattr(os, "mkfifo"), reason="needs FIFOs")
def test_out_that_is_a_fifo_or_a_link_to_one_is_refused_and_left_in_place(tmp_path, capsys):
    """Issue 38 retest: write_atomic renamed the page over the FIFO (as root, `--out /dev/null` would have
    put a plain file in /dev/null's place)."""
    import stat

    root = _root(tmp_path)
    fifo = tmp_path / "pipe"
    os.mkfifo(fifo)
    (tmp_path / "link").symlink_to(fifo)
    for out, shown in ((fifo, f"{fifo} is a named pipe"), (tmp_path / "link", "(a symlink to")):
        assert docs_bench.main(["--root", str(root), "--out", str(out)]) == 2
        err = capsys.readouterr().err
        assert shown in err and "not a regular file; name a file to write" in err
        assert stat.S_ISFIFO(os.stat(fifo).st_mode)
    assert not [p for p in tmp_path.iterdir() if p.name.endswith(".tmp")]


def test_a_root_that_is_not_a_checkout_is_refused_and_nothing_is_written(tmp_path, capsys):
    """Issue 38 retest: a mistyped --root (missing, a file, /dev) wrote an empty page."""
    for root in (tmp_path / "nope", Path(__file__)):
        assert docs_bench.main(["--root", str(root), "--out", str(tmp_path / "page.md")]) == 2
        assert "has no benchmarks/figures folder; --root must be a source checkout" in capsys.readouterr().err
    assert not (tmp_path / "page.md").exists()
