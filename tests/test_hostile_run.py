"""`servicerobot run` under hostile use: configs and flags that are wrong are refused at load with a message
naming them (never a traceback, never an episode-by-episode failure), huge inputs are refused at once, and
SIGTERM of a process-pool run leaves no thread error and reports the finished episodes exactly."""

from __future__ import annotations

import json
import os
import re
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from servicerobot.cli import main
from servicerobot.experiments.config import ConfigError, load_config, parse_config

TINY = {"name": "tiny", "seeds": [0], "variants": ["oracle"], "agent": {"planner_timeout": 20},
        "envs": [{"name": "small", "kwargs": {"size": "small", "n_tasks": 1}}]}


def _config(tmp_path: Path, data) -> Path:
    path = tmp_path / "grid.yaml"
    path.write_text(data if isinstance(data, str) else json.dumps(data))
    return path


def _run_cli(args: list[str], capsys) -> tuple[int, str]:
    code = main(["run", *args])
    err = capsys.readouterr().err
    assert "Traceback" not in err
    return code, err


# ------------------------------------------------------------------ issue 25 item 7: configs and --out
@pytest.mark.parametrize("change, message", [
    ({"envs": 7}, "'envs' must be a list of environments"),
    ({"envs": [{"name": "s", "kwargs": {"n_tasks": "4"}}]}, r"n_tasks must be an integer in \[1, 1000\], got '4'"),
    ({"envs": [{"name": "s", "kwargs": {"n_tasks": 1.5}}]}, r"n_tasks must be an integer in \[1, 1000\], got 1.5"),
    ({"envs": [{"name": "s", "kwargs": {"n_tasks": 10**9}}]}, r"n_tasks must be an integer in \[1, 1000\]"),
    ({"envs": [{"name": "s", "kwargs": {"step_cost": ".nan"}}]}, "step_cost must be a number"),
    ({"envs": [{"name": ["s"]}]}, r"envs\[0\].name must be a string"),
    ({"envs": [{"name": "s", "kwargs": [1]}]}, r"envs\[0\].kwargs must be a mapping"),
    ({"envs": [{"name": "s", "colour": 1}]}, r"envs\[0\] must be a mapping with a 'name'"),
    ({"name": {"a": 1}}, "'name' must be a string"),
    ({"variants": [["oracle"]]}, r"unknown variant \['oracle'\]"),
    ({"seeds": [-1]}, r"seeds must be integers in \[0, 2\*\*63 - 1\].*got -1"),
    ({"seeds": {"start": -5, "count": 3}}, r"seeds run from -5 to -3; a seed must be in \[0, 2\*\*63 - 1\]"),
    ({"seeds": [2**64]}, r"seeds must be integers in \[0, 2\*\*63 - 1\]"),
    ({"seeds": [0, None, 0]}, r"seeds must be integers in \[0, 2\*\*63 - 1\].*got None"),
    ({"seeds": "0-9"}, "'seeds' must be a list of integers"),
    ({"agent": {"planner_timeout": "x" * 100_000}}, r"agent.planner_timeout must be a positive number"),
])
def test_a_bad_config_is_refused_at_load_with_a_short_message(tmp_path, capsys, change, message):
    path = _config(tmp_path, {**TINY, **change})
    with pytest.raises(ConfigError, match=message) as info:
        load_config(path)
    assert len(str(info.value)) < 1500
    code, err = _run_cli([str(path), "--out", str(tmp_path / "r.jsonl")], capsys)
    assert code == 2 and re.search(message, err)
    assert not (tmp_path / "r.jsonl").exists() or (tmp_path / "r.jsonl").read_text() == ""


_LEAF = st.one_of(st.none(), st.booleans(), st.integers(-10**20, 10**20), st.floats(), st.text(max_size=8))
_VALUE = st.recursive(_LEAF, lambda c: st.one_of(st.lists(c, max_size=4), st.dictionaries(
    st.one_of(st.text(max_size=6), st.integers()), c, max_size=4)), max_leaves=10)


@settings(max_examples=120, deadline=None, derandomize=True)
@given(where=st.sampled_from(["name", "seeds", "variants", "envs", "agent", "description", "extra", "env.kwargs",
                              "env.id", "env.name", "agent.llm"]), value=_VALUE)
def test_any_value_anywhere_in_a_config_loads_or_raises_a_config_error(where, value):
    """A fuzzed value at any key: a config or a `ConfigError` with a short message, never another exception
    (a seed list holding None was a raw TypeError)."""
    data = {**TINY, "envs": [dict(TINY["envs"][0])]}
    if where.startswith("env."):
        data["envs"][0][where[4:]] = value
    elif where == "agent.llm":
        data["agent"] = {"llm": value}
    else:
        data[where] = value
    try:
        parse_config(data)
    except ConfigError as exc:
        assert len(str(exc)) < 3000, str(exc)[:300]


def test_n_tasks_of_a_billion_in_a_config_is_refused_without_building_the_env(monkeypatch):
    """Issue 25 item 3: the load check built the env (allocating per task) before refusing anything."""
    import gymnasium as gym

    def no_make(*args, **kwargs):
        raise AssertionError("gym.make ran before the option spec refused the kwargs")

    monkeypatch.setattr(gym, "make", no_make)
    with pytest.raises(ConfigError, match=r"envs\[0\] \('small'\): n_tasks must be an integer in \[1, 1000\]"):
        parse_config({**TINY, "envs": [{"name": "small", "kwargs": {"n_tasks": 10**9}}]})


def test_out_as_a_folder_or_through_a_file_is_refused_by_name(tmp_path, capsys):
    path = _config(tmp_path, TINY)
    (tmp_path / "folder").mkdir()
    code, err = _run_cli([str(path), "--out", str(tmp_path / "folder")], capsys)
    assert code == 2 and "folder: is a folder; name a results file" in err
    (tmp_path / "afile").write_text("")
    code, err = _run_cli([str(path), "--out", str(tmp_path / "afile" / "r.jsonl")], capsys)
    assert code == 2 and "afile is a file, not a folder" in err
    (tmp_path / "dangling").symlink_to(tmp_path / "nowhere")
    code, err = _run_cli([str(path), "--out", str(tmp_path / "dangling" / "r.jsonl")], capsys)
    assert code == 2 and "dangling is a symlink to" in err and "which does not exist" in err
    (tmp_path / "locked").mkdir(mode=0o500)
    if os.geteuid() != 0:  # root writes anywhere
        code, err = _run_cli([str(path), "--out", str(tmp_path / "locked" / "sub" / "r.jsonl")], capsys)
        assert code == 2 and "cannot write" in err and "Permission denied" in err
    code, err = _run_cli([str(path), "--out", str(tmp_path / "new" / "deeper" / "r.jsonl")], capsys)
    assert code == 0 and (tmp_path / "new" / "deeper" / "r.jsonl").read_text().count("\n") == 1  # folders made


@pytest.mark.parametrize("workers", ["0", "-2", "two"])
def test_workers_below_one_is_an_error_not_a_quiet_serial_run(tmp_path, capsys, workers):
    path = _config(tmp_path, TINY)
    with pytest.raises(SystemExit) as info:
        main(["run", str(path), "--out", str(tmp_path / "r.jsonl"), "--workers", workers])
    assert info.value.code == 2
    assert "--workers" in capsys.readouterr().err
    assert not (tmp_path / "r.jsonl").exists()


# ------------------------------------------------------------------ issue 25 item 10: huge inputs at once
def test_a_huge_seed_list_is_refused_without_parsing_it(tmp_path):
    """A 300,000-seed list took 137 s to refuse. Over the 1 MiB config cap it is refused unread; a list just
    under the cap is refused by its length before any seed is looked at (CPU seconds, not wall)."""
    path = _config(tmp_path, {**TINY, "seeds": list(range(300_000))})
    start = time.process_time()
    with pytest.raises(ConfigError, match=r"over the limit of 1,048,576"):
        load_config(path)
    assert time.process_time() - start < 0.5
    path = _config(tmp_path, {**TINY, "seeds": list(range(140_000))})
    assert path.stat().st_size < 1 << 20
    with pytest.raises(ConfigError, match="140,000 seeds make more than 100,000 episodes"):
        load_config(path)


def test_yaml_aliases_that_expand_without_bound_are_refused(tmp_path):
    lines = ["a0: &a0 [x, x, x, x, x, x, x, x, x, x]"]
    lines += [f"a{i}: &a{i} [{', '.join([f'*a{i - 1}'] * 10)}]" for i in range(1, 9)]
    text = "\n".join(lines) + "\nname: t\nseeds: [0]\nvariants: [oracle]\ndescription: *a8\nenvs: []\n"
    path = _config(tmp_path, text)
    with pytest.raises(ConfigError, match="expands to more than 1,000,000 values"):
        load_config(path)


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="/dev/zero")
def test_a_config_that_is_a_device_is_refused(tmp_path):
    link = tmp_path / "zero.yaml"
    link.symlink_to("/dev/zero")
    with pytest.raises(ConfigError, match="must be a regular file, not a character device"):
        load_config(link)


def test_a_repeated_key_is_still_refused_with_its_line_by_the_fast_loader(tmp_path):
    path = _config(tmp_path, "name: a\nseeds: [0]\nvariants: [oracle]\nseeds: [1]\nenvs: []\n")
    with pytest.raises(ConfigError, match=r"duplicate key 'seeds' \(first at line 2\)"):
        load_config(path)


# ------------------------------------------------------------------ issue 25 item 9: SIGTERM of a pool run
@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="signals a process group")
def test_sigterm_of_a_pool_run_has_no_thread_error_and_counts_the_file(tmp_path):
    """SIGTERM of `run --workers 2` printed `InvalidStateError: CANCELLED` from the pool's thread (futures
    cancelled before the workers were killed) and once said 11 finished episodes while the file held 12."""
    config = _config(tmp_path, {**TINY, "seeds": list(range(24))})
    out = tmp_path / "r.jsonl"
    cmd = [sys.executable, "-m", "servicerobot.cli", "run", str(config), "--out", str(out), "--workers", "2"]
    proc = subprocess.Popen(cmd, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, start_new_session=True)
    try:
        deadline = time.time() + 180  # a guard for a loaded machine, not a speed check
        while time.time() < deadline and (not out.exists() or out.read_text().count("\n") < 2):
            time.sleep(0.05)
        assert out.read_text().count("\n") >= 2, "no 2 episodes finished in 180 s"
        os.kill(proc.pid, signal.SIGTERM)
        assert proc.wait(timeout=60) == 143
    finally:
        if proc.poll() is None:
            os.killpg(proc.pid, signal.SIGKILL)
    err = proc.stderr.read().decode()
    assert "InvalidStateError" not in err and "Traceback" not in err and "Exception in thread" not in err, err
    kept = [json.loads(line) for line in out.read_text().splitlines()]
    said = re.search(r"(\d+) of 24 episodes are finished in", err)
    assert said, err
    assert int(said.group(1)) == len(kept) and len(kept) < 24


def test_workers_far_past_the_episodes_runs_them_without_an_overflow(tmp_path, capsys):
    """`--workers 10**12` sized the pool's call queue past a C int (OverflowError traceback, issue 38 retest)."""
    path = _config(tmp_path, TINY)
    code, err = _run_cli([str(path), "--out", str(tmp_path / "r.jsonl"), "--workers", str(10**12)], capsys)
    assert code == 0, err
    assert (tmp_path / "r.jsonl").read_text().count("\n") == 1


def test_out_with_a_nul_byte_is_refused_by_name(tmp_path, capsys):
    """main(['run', ..., '--out', 'a\\x00b']) raised a raw ValueError (issue 38 retest)."""
    path = _config(tmp_path, TINY)
    code, err = _run_cli([str(path), "--out", str(tmp_path / "a\x00b.jsonl")], capsys)
    assert code == 2 and "its name has a NUL byte" in err
