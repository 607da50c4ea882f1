"""Results files under hostile use: configs checked whole at load (duplicate keys, huge seed counts, bad
options, bad env kwargs), one writer per results file (an advisory lock), SIGTERM/SIGINT/SIGKILL leave no
worker alive and lose no record, and a dead Ray address fails fast, naming it."""

from __future__ import annotations

import json
import os
import signal
import socket
import subprocess
import sys
import time
import tracemalloc
from pathlib import Path

import pytest

from servicerobot.errors import ServiceRobotError
from servicerobot.experiments.config import MAX_EPISODES, ConfigError, load_config, parse_config
from servicerobot.experiments.runner import (
    ResultsError,
    _check_ray_address,
    _results_lock,
    finished_keys,
    run_grid,
)

TINY = {"name": "tiny", "seeds": [0, 1], "variants": ["oracle"], "agent": {"planner_timeout": 20},
        "envs": [{"name": "small", "kwargs": {"size": "small", "n_tasks": 1}}]}


def _write(tmp_path: Path, text: str) -> Path:
    path = tmp_path / "grid.yaml"
    path.write_text(text)
    return path


# ------------------------------------------------------------------ configs
def test_a_repeated_yaml_key_is_rejected_with_its_line(tmp_path):
    path = _write(tmp_path, "name: a\nseeds: [0]\nvariants: [oracle]\nseeds: [1]\n"
                            "envs:\n  - {name: s, kwargs: {size: small}}\n")
    with pytest.raises(ConfigError, match=r"duplicate key 'seeds' \(first at line 2\)"):
        load_config(path)
    nested = _write(tmp_path, "name: a\nseeds: [0]\nvariants: [oracle]\n"
                              "envs:\n  - {name: s, kwargs: {size: small, size: large}}\n")
    with pytest.raises(ConfigError, match="duplicate key 'size'"):
        load_config(nested)


@pytest.mark.parametrize("change, message", [
    ({"variants": ["oracle", "static", "oracle"]}, "variants ['oracle'] are listed more than once"),
    ({"seeds": [0, 1, 0, 2, 1]}, "seeds [0, 1] are listed more than once"),
])
def test_repeated_variants_or_seeds_are_rejected(change, message):
    with pytest.raises(ConfigError) as info:
        parse_config({**TINY, **change})
    assert message in str(info.value)


def test_a_huge_seed_count_is_refused_at_once_without_memory():
    tracemalloc.start()
    with pytest.raises(ConfigError, match=r"100,000,000 seeds .* more than 100,000 episodes"):
        parse_config({**TINY, "seeds": {"start": 0, "count": 100_000_000}})
    peak = tracemalloc.get_traced_memory()[1]
    tracemalloc.stop()
    assert peak < 20_000_000  # refused by the count, never enumerated (no wall-clock check: busy machines)
    # two variants halve the seeds a grid may have
    with pytest.raises(ConfigError, match="at most 50,000 seeds"):
        parse_config({**TINY, "variants": ["oracle", "static"], "seeds": {"start": 0, "count": 50_001}})


def test_seeds_up_to_the_cap_stay_lazy():
    config = parse_config({**TINY, "seeds": {"start": 5, "count": MAX_EPISODES}})
    assert isinstance(config.seeds, range) and config.seeds[-1] == 5 + MAX_EPISODES - 1
    assert config.hash == parse_config({**TINY, "seeds": list(range(5, 5 + MAX_EPISODES))}).hash


@pytest.mark.parametrize("agent, message", [
    ({"planner_timeout": -1}, "agent.planner_timeout must be a positive number"),
    ({"planner_timeout": "fast"}, "agent.planner_timeout must be a positive number"),
    ({"interpreter": "gpt"}, "agent.interpreter must be one of default, rules, llm"),
    ({"max_attempts": 0}, "agent.max_attempts must be an integer >= 1"),
    ({"fallback_to_full": "yes"}, "agent.fallback_to_full must be true or false"),
    ({"relax": 1}, "agent.relax must be true or false"),
    ({"llm": {"timeout": 0}}, "agent.llm.timeout must be a number of seconds > 0"),
    ({"llm": {"max_retries": -1}}, "agent.llm.max_retries must be a int >= 0"),
    ({"llm": {"retries": 3}}, "agent.llm must be a mapping with keys among"),
    ({"llm": {"max_retries": 2.5}}, "agent.llm.max_retries must be a int >= 0"),
])
def test_agent_options_are_checked_at_load(agent, message):
    with pytest.raises(ConfigError) as info:
        parse_config({**TINY, "agent": agent})
    assert message in str(info.value)


@pytest.mark.parametrize("kwargs, message", [
    ({"size": "enormous"}, "enormous"),
    ({"size": "small", "colour": "red"}, "colour"),
    ({"size": "small", "update_mode": "telepathy"}, "update_mode"),
    ({"size": "small", "verbal_share": 3}, "verbal_share"),
])
def test_env_kwargs_are_checked_at_load_by_the_env_itself(kwargs, message):
    data = {**TINY, "envs": [{"name": "ok", "kwargs": {"size": "small"}}, {"name": "bad", "kwargs": kwargs}]}
    with pytest.raises(ConfigError) as info:
        parse_config(data)
    assert "envs[1] ('bad')" in str(info.value) and message in str(info.value)
    with pytest.raises(ConfigError, match="unknown env id 'ServiceRobot-v9'"):
        parse_config({**TINY, "envs": [{"name": "x", "id": "ServiceRobot-v9"}]})


def test_llm_flags_are_checked_and_applied(tmp_path, capsys):
    from servicerobot.cli import main

    path = _write(tmp_path, json.dumps(TINY))
    assert main(["run", str(path), "--out", str(tmp_path / "r.jsonl"), "--llm-timeout", "0"]) == 2
    assert "agent.llm.timeout must be a number of seconds > 0" in capsys.readouterr().err


# ------------------------------------------------------------------ one writer
def test_a_second_writer_gets_a_clear_error_and_the_file_is_untouched(tmp_path):
    out = tmp_path / "r.jsonl"
    run_grid(parse_config({**TINY, "seeds": [0]}), out, backend="serial")
    before = out.read_bytes()
    with _results_lock(out), pytest.raises(ResultsError, match="being written by another `servicerobot run`.*--out"):
        run_grid(parse_config(TINY), out, backend="serial")  # another run holds the file
    assert out.read_bytes() == before
    assert run_grid(parse_config(TINY), out, backend="serial")["ran"] == 1  # free again


# ------------------------------------------------------------------ signals
def _descendants(pid: int) -> set[int]:
    children: dict[int, list[int]] = {}
    for entry in Path("/proc").iterdir():
        if entry.name.isdigit():
            try:
                stat = (entry / "stat").read_text()
            except OSError:
                continue
            ppid = int(stat.rsplit(")", 1)[1].split()[1])
            children.setdefault(ppid, []).append(int(entry.name))
    out, todo = set(), [pid]
    while todo:
        for child in children.get(todo.pop(), []):
            out.add(child)
            todo.append(child)
    return out


def _alive(pid: int) -> bool:
    try:
        state = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0]
    except OSError:
        return False
    return state != "Z"


def _start_run(tmp_path: Path, seeds: int = 16, workers: int = 2) -> tuple[subprocess.Popen, Path, list]:
    config = _write(tmp_path, json.dumps({**TINY, "seeds": list(range(seeds))}))
    out = tmp_path / "r.jsonl"
    cmd = [sys.executable, "-m", "servicerobot.cli", "run", str(config), "--out", str(out), "--workers", str(workers)]
    proc = subprocess.Popen(cmd, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, start_new_session=True)
    deadline = time.time() + 120
    while time.time() < deadline and (not out.exists() or not out.read_text().strip()):
        time.sleep(0.05)
    assert out.read_text().strip(), "no episode finished in 120 s"
    return proc, out, cmd


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="reads /proc")
@pytest.mark.parametrize("sig, code", [(signal.SIGTERM, 143), (signal.SIGINT, 130), (signal.SIGKILL, -9)])
def test_a_signal_leaves_no_worker_alive_and_loses_no_record(tmp_path, sig, code):
    proc, out, cmd = _start_run(tmp_path)
    family = _descendants(proc.pid)
    assert len(family) >= 2  # the pool's workers (and multiprocessing's resource tracker)
    os.kill(proc.pid, sig)  # the main process only, as `kill PID` does
    try:
        assert proc.wait(timeout=10) == code
    finally:
        os.killpg(proc.pid, signal.SIGKILL) if _alive(proc.pid) else None
    deadline = time.time() + 5
    while time.time() < deadline and any(_alive(p) for p in family):
        time.sleep(0.05)
    survivors = [p for p in family if _alive(p)]
    for p in survivors:  # do not leave them behind even when the test fails
        os.kill(p, signal.SIGKILL)
    assert survivors == [], f"alive 5 s after {sig.name}: {survivors}"
    if sig != signal.SIGKILL:
        assert "run the same command again to resume" in proc.stderr.read().decode()
    kept = [json.loads(line) for line in out.read_text().splitlines()]  # every line whole
    assert 1 <= len(kept) < 16 and len({r["key"] for r in kept}) == len(kept)
    assert all(r["status"] == "ok" for r in kept)
    if sig == signal.SIGTERM:
        subprocess.run(cmd, check=True, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, timeout=300)
        keys = [json.loads(line)["key"] for line in out.read_text().splitlines()]
        assert sorted(keys) == sorted(f"tiny/small/oracle/{s}" for s in range(16))  # none lost, none twice


def test_sigterm_stops_a_serial_run_without_an_error_record(tmp_path):
    """In a serial run the episode runs in the main process: the stop must not be caught as its error."""
    proc, out, _ = _start_run(tmp_path, workers=1)
    os.kill(proc.pid, signal.SIGTERM)
    assert proc.wait(timeout=10) == 143
    kept = [json.loads(line) for line in out.read_text().splitlines()]
    assert kept and all(r["status"] == "ok" for r in kept) and len(kept) < 16


# ------------------------------------------------------------------ Ray
def test_a_dead_ray_address_fails_fast_naming_it(tmp_path):
    pytest.importorskip("ray")
    with socket.socket() as s:  # a port nobody listens on
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    start = time.perf_counter()
    with pytest.raises(ServiceRobotError, match=f"no Ray cluster answers at --ray-address '127.0.0.1:{port}'"):
        run_grid(parse_config(TINY), tmp_path / "r.jsonl", backend="ray", ray_address=f"127.0.0.1:{port}")
    assert time.perf_counter() - start < 30
    assert finished_keys(tmp_path / "r.jsonl") == set()


def test_a_port_that_does_not_speak_ray_fails_within_the_budget():
    pytest.importorskip("ray")
    with socket.socket() as server:  # accepts connections, never answers
        server.bind(("127.0.0.1", 0))
        server.listen(8)
        address = f"127.0.0.1:{server.getsockname()[1]}"
        start = time.perf_counter()
        with pytest.raises(ServiceRobotError, match=f"at --ray-address '{address}' did not answer as a Ray cluster"):
            _check_ray_address(address, timeout=4)
    assert time.perf_counter() - start < 8


# ------------------------------------------------------------------ issue 38: files that are not ours, unterminated records
@pytest.mark.parametrize("content", [b"my notes\n", b"API_KEY=abc123", b"[1, 2]\n", b'{"note": "mine"}',
                                     b"\xff\xfe binary", b'{"my": "own JSON, cut short',
                                     pytest.param(b"[" * 100_000, id="nested-100000")])
def test_a_file_that_is_not_a_results_file_is_refused_and_left_as_it_is(tmp_path, capsys, content):
    """`run --out notes.txt` truncated a one-line file (with or without its newline) and wrote records."""
    from servicerobot.cli import main

    out = tmp_path / "notes.txt"
    out.write_bytes(content)
    config = _write(tmp_path, json.dumps({**TINY, "seeds": [0]}))
    assert main(["run", str(config), "--out", str(out)]) == 2
    err = capsys.readouterr().err
    assert "notes.txt" in err and "--out" in err and "Traceback" not in err
    assert "abc123" not in err  # the file's content is never quoted: it may be a secret
    assert out.read_bytes() == content
    with pytest.raises(ResultsError, match="notes.txt"):
        run_grid(parse_config(TINY), out, backend="serial")
    assert out.read_bytes() == content


def test_records_followed_by_a_line_of_ours_missing_is_refused_with_its_line_number(tmp_path):
    out = tmp_path / "r.jsonl"
    run_grid(parse_config({**TINY, "seeds": [0]}), out, backend="serial")
    before = out.read_bytes()
    for tail in (b"my notes\n", b"my notes", b'{"complete": "json but no key"}'):
        out.write_bytes(before + tail)
        with pytest.raises(ResultsError, match=r"line 2 is not a result record"):
            run_grid(parse_config(TINY), out, backend="serial")
        assert out.read_bytes() == before + tail


def test_a_last_record_without_its_newline_gets_one_and_records_are_never_merged(tmp_path):
    """The next record was appended onto the unterminated line: 1 of 3 records readable, and the next resume
    dropped the merged line and ran both episodes again."""
    config = parse_config({**TINY, "seeds": [0, 1, 2]})
    out = tmp_path / "r.jsonl"
    run_grid(config, out, backend="serial", limit=1)
    out.write_bytes(out.read_bytes().rstrip(b"\n"))
    assert finished_keys(out, repair=False) == {"tiny/small/oracle/0"}
    assert run_grid(config, out, backend="serial", limit=1)["ran"] == 1
    lines = out.read_bytes().split(b"\n")
    assert lines[-1] == b"" and [json.loads(x)["key"] for x in lines[:-1]] == ["tiny/small/oracle/0",
                                                                              "tiny/small/oracle/1"]
    assert run_grid(config, out, backend="serial") == {"total": 3, "skipped": 2, "ran": 1, "errors": 0}
    assert run_grid(config, out, backend="serial")["ran"] == 0
    assert len(out.read_text().splitlines()) == 3


def test_a_torn_last_record_is_cut_and_its_episode_runs_again_saying_so(tmp_path, capsys):
    config = parse_config({**TINY, "seeds": [0, 1]})
    out = tmp_path / "r.jsonl"
    run_grid(config, out, backend="serial", limit=1)
    whole = out.read_bytes()
    out.write_bytes(whole + whole[:200])  # a run stopped 200 bytes into its second record
    assert run_grid(config, out, backend="serial")["ran"] == 1
    assert "line 2 was a torn record" in capsys.readouterr().err
    keys = [json.loads(line)["key"] for line in out.read_text().splitlines()]
    assert keys == ["tiny/small/oracle/0", "tiny/small/oracle/1"]
    # a torn line with no record before it: nothing shows the file is ours, so it is not cut
    out.write_bytes(whole[:200])
    with pytest.raises(ResultsError, match="line 1 is an incomplete JSON line and no result record precedes it"):
        finished_keys(out)
    assert out.read_bytes() == whole[:200]


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="/dev/zero, /dev/full, mkfifo")
@pytest.mark.parametrize("target", ["/dev/zero", "/dev/full", "fifo", "folder", "zero-link"])
def test_out_that_is_a_device_a_fifo_or_a_folder_is_refused_by_what_it_is(tmp_path, capsys, target):
    """`--out /dev/zero` read 3.4 GB into memory (MemoryError in finished_keys); a FIFO blocked forever."""
    from servicerobot.cli import main

    path = {"fifo": tmp_path / "fifo", "folder": tmp_path / "folder", "zero-link": tmp_path / "r.jsonl"}.get(
        target, Path(target))
    if target == "fifo":
        os.mkfifo(path)
    elif target == "folder":
        path.mkdir()
    elif target == "zero-link":
        path.symlink_to("/dev/zero")
    tracemalloc.start()
    with pytest.raises(ResultsError, match="must be a regular file|is a folder"):
        finished_keys(path)
    with pytest.raises(ResultsError, match="must be a regular file|is a folder"):
        run_grid(parse_config(TINY), path, backend="serial")
    assert tracemalloc.get_traced_memory()[1] < 50_000_000
    tracemalloc.stop()
    config = _write(tmp_path, json.dumps(TINY))
    assert main(["run", str(config), "--out", str(path)]) == 2
    err = capsys.readouterr().err
    assert "Traceback" not in err and ("regular file" in err or "folder" in err)


def test_a_huge_line_or_name_is_refused_without_reading_it_whole(tmp_path, capsys):
    from servicerobot.cli import main
    from servicerobot.experiments.results_file import MAX_RECORD_BYTES

    sparse = tmp_path / "sparse.jsonl"
    with open(sparse, "wb") as f:  # 3 GB of zeros without a newline, taking no disk space
        f.truncate(3 << 30)
    tracemalloc.start()
    with pytest.raises(ResultsError, match=f"line 1 is longer than {MAX_RECORD_BYTES:,} bytes"):
        finished_keys(sparse)
    assert tracemalloc.get_traced_memory()[1] < 3 * MAX_RECORD_BYTES
    tracemalloc.stop()
    config = _write(tmp_path, json.dumps(TINY))
    code = main(["run", str(config), "--out", str(tmp_path / ("x" * 5000))])
    err = capsys.readouterr().err
    assert code == 2 and "File name too long" in err and "Traceback" not in err and len(err) < 1000


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="/dev/zero, mkfifo")
def test_report_refuses_a_device_or_a_fifo_unread(tmp_path):
    from servicerobot.experiments.report_records import ReportError, load_records

    os.mkfifo(tmp_path / "fifo")
    for path, kind in ((Path("/dev/zero"), "character device"), (tmp_path / "fifo", "named pipe")):
        with pytest.raises(ReportError, match=f"must be a regular file, not a {kind}"):
            load_records(path)


@pytest.mark.parametrize("value", [float("nan"), float("inf"), float("-inf")])
def test_a_timeout_that_is_not_finite_is_refused_in_a_config_and_on_the_command_line(tmp_path, capsys, value):
    """`agent.llm.timeout: .nan` and `--llm-timeout nan` were accepted silently."""
    from servicerobot.cli import main

    with pytest.raises(ConfigError, match=r"agent.llm.timeout must be a number of seconds > 0 \(finite, e.g. 30\)"):
        parse_config({**TINY, "agent": {"llm": {"timeout": value}}})
    with pytest.raises(ConfigError, match=r"agent.llm.backoff must be a float >= 0 \(finite\)"):
        parse_config({**TINY, "agent": {"llm": {"backoff": value}}})
    path = _write(tmp_path, "name: t\nseeds: [0]\nvariants: [oracle]\nagent: {llm: {timeout: .nan}}\n"
                            "envs: [{name: s, kwargs: {size: small}}]\n")
    assert main(["run", str(path), "--out", str(tmp_path / "r.jsonl")]) == 2
    assert "agent.llm.timeout must be" in capsys.readouterr().err
    config = _write(tmp_path, json.dumps(TINY))
    assert main(["run", str(config), "--out", str(tmp_path / "r.jsonl"), f"--llm-timeout={value}"]) == 2
    assert "command line: agent.llm.timeout must be" in capsys.readouterr().err
    assert main(["demo", "--out", str(tmp_path / "demo"), "--no-video", f"--llm-timeout={value}"]) == 2
    assert "demo: agent.llm.timeout must be" in capsys.readouterr().err
    assert not (tmp_path / "demo").exists()
