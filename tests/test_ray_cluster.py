"""A real two-node Ray cluster on this machine (`ray start --head` and `ray start --address`, loopback
addresses only, a fresh auth token): a grid runs through `--ray-address HOST:PORT`, the worker node's raylet
and its workers are killed by PID mid-grid, and the grid still completes with every key once and the serial records.

Ray rewrites a worker's `127.0.0.1` to the host's routable address (and a head's, when it may take worker
nodes), so the head node is 127.0.0.2 and the worker node 127.0.0.3: both loopback.
"""

from __future__ import annotations

import contextlib
import json
import os
import secrets
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import pytest
from ray_processes import children, cmdline, wait_until

from servicerobot.experiments.config import parse_config
from servicerobot.experiments.runner import run_grid, stable_part

pytest.importorskip("ray")
RAY = shutil.which("ray")
HEAD, WORKER = "127.0.0.2", "127.0.0.3"
GRID = {"name": "cluster", "seeds": list(range(8)), "variants": ["oracle"], "agent": {"planner_timeout": 20},
        "envs": [{"name": "small", "kwargs": {"size": "small", "n_tasks": 1}}]}
pytestmark = [pytest.mark.slow,
              pytest.mark.skipif(RAY is None or not sys.platform.startswith("linux"),
                                 reason="needs the `ray` command and Linux loopback addresses")]


def _free_port(host: str) -> int:
    with socket.socket() as s:
        s.bind((host, 0))
        return s.getsockname()[1]


@contextlib.contextmanager
def _ray_node(args: list[str], env: dict, log: Path):
    """`ray start --block ...` in its own session; stopped (SIGTERM, then SIGKILL to its group) afterwards."""
    with open(log, "wb") as out:
        proc = subprocess.Popen([RAY, "start", "--block", *args], env=env, stdout=out, stderr=subprocess.STDOUT,
                                start_new_session=True)
    try:
        yield proc
    finally:
        with contextlib.suppress(ProcessLookupError):
            os.kill(proc.pid, signal.SIGTERM)
        try:
            proc.wait(timeout=20)
        except subprocess.TimeoutExpired:
            pass
        with contextlib.suppress(ProcessLookupError):
            os.killpg(proc.pid, signal.SIGKILL)
        proc.wait(timeout=10)


@contextlib.contextmanager
def _started_node(args, env: dict, log: Path, tries: int = 3, timeout: float = 150):
    """`_ray_node` once it has started, trying `tries` times (`args`: a function of the attempt): on 2 busy
    cores a raylet can miss the 30 s Ray gives it to register, and `ray start` then gives up."""
    for attempt in range(tries):
        with contextlib.ExitStack() as stack:
            proc = stack.enter_context(_ray_node(args(), env, log))
            deadline = time.monotonic() + timeout
            while b"Ray runtime started" not in log.read_bytes() and proc.poll() is None \
                    and time.monotonic() < deadline:
                time.sleep(0.2)
            if b"Ray runtime started" in log.read_bytes():
                yield proc
                return
        log.rename(log.with_name(f"{log.stem}-failed-{attempt}.log"))
    raise AssertionError(f"`ray start` failed {tries} times: see {log.stem}-failed-*.log")


def test_a_grid_survives_losing_a_node(tmp_path):
    port = 0
    temp = Path(tempfile.mkdtemp(prefix="sr-ray-", dir="/tmp"))  # Ray's socket paths must stay short
    env = {**os.environ, "RAY_USAGE_STATS_ENABLED": "0", "RAY_AUTH_MODE": "token",
           "RAY_AUTH_TOKEN": secrets.token_hex(32), "RAY_ENABLE_WINDOWS_OR_OSX_CLUSTER": "1"}
    common = ["--num-cpus", "1", "--object-store-memory", "80000000", "--temp-dir", str(temp)]
    config = tmp_path / "grid.yaml"
    config.write_text(json.dumps(GRID))
    out = tmp_path / "cluster.jsonl"

    def head_args() -> list[str]:
        nonlocal port
        port = _free_port(HEAD)
        return ["--head", "--port", str(port), "--node-ip-address", HEAD, "--include-dashboard=false", *common]

    try:
        with _started_node(head_args, env, tmp_path / "head.log"), \
                _started_node(lambda: ["--address", f"{HEAD}:{port}", "--node-ip-address", WORKER, *common], env,
                              tmp_path / "worker.log") as worker:
            raylets = [p for p in children(worker.pid) if "raylet/raylet" in cmdline(p)]
            assert len(raylets) == 1 and WORKER in cmdline(raylets[0])
            run = subprocess.Popen([sys.executable, "-m", "servicerobot.cli", "run", str(config), "--out",
                                    str(out), "--workers", "2", "--ray-address", f"{HEAD}:{port}"],
                                   env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE)
            try:
                wait_until("a first record", lambda: out.exists() and out.read_text().strip(), 180)
                # The worker node is lost mid-grid: its raylet and the workers it started (an actor whose
                # raylet died can still finish a short episode or two before it notices, and then nothing
                # was in flight to lose).
                for pid in [raylets[0], *children(raylets[0])]:
                    with contextlib.suppress(ProcessLookupError):
                        os.kill(pid, signal.SIGKILL)
                at_kill = len(out.read_text().splitlines())
                _, stderr = run.communicate(timeout=240)
            finally:
                if run.poll() is None:
                    run.kill()
                    run.wait()
        assert run.returncode == 0, stderr.decode()[-2000:]
    finally:
        shutil.rmtree(temp, ignore_errors=True)
    assert at_kill < len(GRID["seeds"])
    # an episode in flight on the lost node was run again: its worker had started it ("was lost with its Ray
    # worker or node") or Ray had placed a fresh worker there that died before it ran ("died before it
    # started"); which one depends on when the node dies
    said = stderr.decode()
    assert "was lost with its Ray worker or node" in said or "died before it started" in said, said[-2000:]
    records = [json.loads(line) for line in out.read_text().splitlines()]
    keys = [r["key"] for r in records]
    assert sorted(keys) == sorted(f"cluster/small/oracle/{s}" for s in GRID["seeds"])  # each exactly once
    serial = tmp_path / "serial.jsonl"
    run_grid(parse_config(GRID), serial, backend="serial")
    expected = {r["key"]: stable_part(r) for r in map(json.loads, serial.read_text().splitlines())}
    assert {r["key"]: stable_part(r) for r in records} == expected
