"""Experiment grids: config checks, records scored from simulator state, identical records on every back end,
resumption after a kill, failing episodes recorded, the demo's videos and summary, the CLI."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from servicerobot.experiments.config import ConfigError, load_config, parse_config, shipped_configs
from servicerobot.experiments.episode import GoalScorer, make_env
from servicerobot.experiments.runner import ResultsError, finished_keys, run_grid, stable_part

TINY = {"name": "tiny", "seeds": [0, 1], "variants": ["oracle", "search-rag"],
        "agent": {"planner_timeout": 20, "interpreter": "rules"},
        "envs": [{"name": "small", "kwargs": {"size": "small", "n_tasks": 2}}]}


def _records(path: Path) -> list[dict]:
    return [json.loads(line) for line in path.read_text().splitlines() if line.strip()]


@pytest.fixture(scope="module")
def serial_results(tmp_path_factory) -> list[dict]:
    out = tmp_path_factory.mktemp("serial") / "r.jsonl"
    counts = run_grid(parse_config(TINY), out, backend="serial")
    assert counts == {"total": 4, "skipped": 0, "ran": 4, "errors": 0}
    return _records(out)


def test_shipped_configs_load_and_mirror_the_papers():
    assert {"smoke", "l3mp_table1", "l3mp_table2"} <= set(shipped_configs())
    t1 = load_config("l3mp_table1")
    assert len(t1.variants) == 7 and "static" in t1.variants and "search-rag" in t1.variants
    t2 = load_config("l3mp_table2")
    kinds = {e.kwargs["task_kinds"][0] for e in t2.envs}
    assert kinds == {"pick_place", "wash_dishes", "make_bed", "discard_broken", "keep_cold"}
    assert set(t2.variants) == {"search-rag", "visual-only"} and len(t2.seeds) * t2.envs[0].kwargs["n_tasks"] == 20
    assert len(load_config("smoke").episodes()) == 4


@pytest.mark.parametrize("change, message", [
    ({"variants": ["psychic"]}, "unknown variant 'psychic'"),
    ({"seeds": "many"}, "'seeds' must be"),
    ({"envs": []}, "at least one environment"),
    ({"colour": "red"}, "unknown keys ['colour']"),
    ({"agent": {"temperature": 1}}, "'agent' must be a mapping"),
    ({"envs": [{"name": "a"}, {"name": "a"}]}, "unique"),
])
def test_bad_configs_say_what_is_wrong(change, message):
    with pytest.raises(ConfigError, match=None) as err:
        parse_config({**TINY, **change})
    assert message in str(err.value)


def test_unknown_config_name_lists_the_shipped_ones():
    with pytest.raises(ConfigError, match="l3mp_table1"):
        load_config("no_such_grid")


def test_config_hash_changes_with_content():
    assert parse_config(TINY).hash == parse_config(dict(TINY)).hash
    assert parse_config(TINY).hash != parse_config({**TINY, "seeds": [0, 2]}).hash


def test_records_are_scored_from_the_simulator(serial_results):
    by_key = {r["key"]: r for r in serial_results}
    assert set(by_key) == {f"tiny/small/{v}/{s}" for v in ("oracle", "search-rag") for s in (0, 1)}
    for r in serial_results:
        assert r["status"] == "ok" and len(r["tasks"]) == 2
        assert r["run"]["config_hash"] == parse_config(TINY).hash and "servicerobot" in r["run"]["versions"]
        for t in r["tasks"]:
            assert t["kind"] and t["text"] and t["steps"] >= 1 and 0 <= t["failed_actions"] <= t["actions"]
    agent = [r for r in serial_results if r["variant"] == "search-rag"]
    assert all(r["kg"] is not None and r["kg"]["updates"] for r in agent)
    goals = [t["goal"] for r in agent for t in r["tasks"]]
    assert all(g is not None and g["true"] for g in goals)
    assert any(g["correct"] for g in goals)
    assert all(r["kg"] is None and all(t["goal"] is None for t in r["tasks"])
               for r in serial_results if r["variant"] == "oracle")


def test_goal_scorer_tells_right_from_wrong_goals():
    env = make_env(parse_config(TINY).envs[0], cache=False)
    env.reset(seed=3)
    world = env.unwrapped.world
    truth = env.unwrapped.active_task.goal
    scorer = GoalScorer(world)
    assert scorer.score(truth, truth)["correct"] is True
    other = next(a for a in sorted(world.state.atoms, key=str) if a.predicate == "in-room" and a.args[0] != "robot")
    rooms = sorted(n for n, e in world.scene.entities.items() if e.pddl_type == "room")
    wrong = f"(in-room {other.args[0]} {next(r for r in rooms if r != other.args[1])})"
    verdict = scorer.score(wrong, truth)
    assert verdict["parseable"] is True and verdict["correct"] is False
    broken = scorer.score("(and (on the-apple", truth)
    assert broken["parseable"] is False and broken["correct"] is False
    assert scorer.score(None, truth)["parseable"] is False
    env.close()


def test_process_pool_gives_the_same_records_as_serial(serial_results, tmp_path):
    out = tmp_path / "p.jsonl"
    run_grid(parse_config(TINY), out, backend="process", workers=2)
    assert {r["key"]: stable_part(r) for r in _records(out)} == \
        {r["key"]: stable_part(r) for r in serial_results}


@pytest.mark.slow
def test_ray_gives_the_same_records_as_serial(serial_results, tmp_path):
    ray = pytest.importorskip("ray")
    ray.init(num_cpus=2, include_dashboard=False, log_to_driver=False)
    try:
        out = tmp_path / "ray.jsonl"
        run_grid(parse_config(TINY), out, backend="ray", workers=2)
    finally:
        ray.shutdown()
    assert {r["key"]: stable_part(r) for r in _records(out)} == \
        {r["key"]: stable_part(r) for r in serial_results}


def test_rerun_resumes_and_drops_a_torn_last_line(tmp_path):
    config = parse_config({**TINY, "variants": ["oracle"]})
    out = tmp_path / "r.jsonl"
    assert run_grid(config, out, backend="serial", limit=1)["ran"] == 1
    with open(out, "a") as f:
        f.write('{"key": "tiny/small/oracle/1", "tas')  # a run killed mid-write
    assert finished_keys(out) == {"tiny/small/oracle/0"}
    counts = run_grid(config, out, backend="serial")
    assert counts["skipped"] == 1 and counts["ran"] == 1
    keys = [r["key"] for r in _records(out)]
    assert sorted(keys) == ["tiny/small/oracle/0", "tiny/small/oracle/1"]
    assert run_grid(config, out, backend="serial")["ran"] == 0


def test_a_corrupt_middle_line_is_not_silently_dropped(tmp_path):
    out = tmp_path / "r.jsonl"
    out.write_text('{"key": "a"}\nnot json\n{"key": "b"}\n')
    with pytest.raises(ResultsError, match="line 2"):
        finished_keys(out)


def test_a_failing_episode_is_recorded_and_the_grid_goes_on(tmp_path):
    config = parse_config({**TINY, "variants": ["oracle"], "seeds": [0],
                           "envs": [{"name": "broken", "kwargs": {"size": "enormous"}},
                                    {"name": "small", "kwargs": {"size": "small", "n_tasks": 1}}]},
                          check_envs=False)  # past the load-time check (test_hostile_results.py), fails per episode
    out = tmp_path / "r.jsonl"
    counts = run_grid(config, out, backend="serial")
    assert counts["ran"] == 2 and counts["errors"] == 1
    by_env = {r["env"]: r for r in _records(out)}
    assert by_env["broken"]["status"] == "error" and "enormous" in by_env["broken"]["error"]
    assert by_env["small"]["status"] == "ok"


@pytest.mark.slow
def test_killing_a_run_and_starting_again_completes_the_grid(tmp_path):
    config = tmp_path / "grid.yaml"
    config.write_text(json.dumps({**TINY, "variants": ["oracle"], "seeds": list(range(6))}))
    out = tmp_path / "r.jsonl"
    cmd = [sys.executable, "-m", "servicerobot.cli", "run", str(config), "--out", str(out), "--workers", "2"]
    proc = subprocess.Popen(cmd, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, start_new_session=True)
    deadline = time.time() + 120
    while time.time() < deadline and (not out.exists() or not out.read_text().strip()):
        time.sleep(0.05)
    os.killpg(proc.pid, signal.SIGKILL)
    proc.wait()
    first = len(finished_keys(out))
    assert 1 <= first < 6
    subprocess.run(cmd, check=True, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, timeout=300)
    keys = [r["key"] for r in _records(out)]
    assert sorted(keys) == sorted(f"tiny/small/oracle/{s}" for s in range(6))  # none missing, none twice


def test_cli_run_and_report(tmp_path):
    from servicerobot.cli import main

    config = tmp_path / "grid.yaml"
    config.write_text(json.dumps({**TINY, "variants": ["oracle"], "seeds": [0]}))
    out = tmp_path / "r.jsonl"
    assert main(["run", str(config), "--out", str(out), "--workers", "1"]) == 0
    assert main(["report", str(out), "--out", str(tmp_path / "rep")]) == 0
    assert "| small | oracle |" in (tmp_path / "rep" / "report.md").read_text()
    assert main(["run", "no_such_grid"]) == 2


def test_demo_writes_videos_and_a_summary(tmp_path):
    from servicerobot.experiments.demo import run_demo

    rows = run_demo(tmp_path, episodes=1, tasks=1, size="small", seed=0)
    assert rows[0]["tasks_total"] == 1 and rows[0]["steps"] >= 1
    video = Path(rows[0]["video"])
    assert video.exists() and video.stat().st_size > 1000
    assert json.loads((tmp_path / "summary.json").read_text()) == rows


def test_demo_takes_the_interpreter_and_llm_flags(tmp_path, monkeypatch, capsys):
    """`demo --interpreter llm` without a configured server says what to set (exit 2); with a server the
    flags reach the client (a server that always fails: each failed call is one request, no retries)."""
    from misbehaving_server import MisbehavingServer, status

    from servicerobot.cli import main

    monkeypatch.delenv("OPENAI_BASE_URL", raising=False)
    monkeypatch.delenv("OPENAI_API_KEY", raising=False)
    args = ["demo", "--no-video", "--episodes", "1", "--tasks", "1", "--size", "small", "--out", str(tmp_path)]
    assert main([*args, "--interpreter", "llm"]) == 2
    assert "OPENAI_BASE_URL" in capsys.readouterr().err
    pytest.importorskip("openai")
    with MisbehavingServer(status(500)) as server:
        monkeypatch.setenv("OPENAI_BASE_URL", server.url)
        assert main([*args, "--interpreter", "llm", "--llm-timeout", "2", "--llm-max-retries", "0"]) == 0
        requests = server.requests
    (row,) = json.loads((tmp_path / "summary.json").read_text())
    failed_calls = row["failures"]["language model failed"]
    assert row["tasks_completed"] == 0 and failed_calls >= 1
    assert requests == failed_calls  # --llm-max-retries 0: one request per call (the default retries)


def test_bench_collects_each_scripts_last_json_line(tmp_path, capsys):
    from servicerobot.cli import main

    (tmp_path / "fast.py").write_text("import sys, json\nprint('warming up')\nprint(json.dumps({'x': len(sys.argv)}))\n")
    (tmp_path / "broken.py").write_text("raise SystemExit('no data')\n")
    out = tmp_path / "bench.json"
    assert main(["bench", "--benchmarks", str(tmp_path), "--out", str(out)]) == 1  # one script failed
    results = json.loads(out.read_text())
    assert results["fast"]["x"] == 1 and "no data" in results["broken"]["error"]
    assert main(["bench", "--benchmarks", str(tmp_path), "--only", "fast"]) == 0
