"""A simulated GPU cluster on this machine (no GPU, no model): three `ray start` nodes on loopback addresses,
a grid mixing a GPU world and a CPU world, per-node language model servers, and the GPU node lost mid-grid.

- head 127.0.0.2: 1 CPU, a model server (`llm_server` resource; a `CountingServer` on 127.0.0.2);
- CPU node 127.0.0.3: 1 CPU, a model server (on 127.0.0.3, the same port);
- GPU node 127.0.0.4: 1 CPU, `--num-gpus=1` with `CUDA_VISIBLE_DEVICES=3` (a fake GPU whose physical id is 3)
  and the `unity` resource; no model server (its workers fall back to another node's);
- after the GPU node's raylet and workers are killed mid-grid, a new GPU node 127.0.0.5 (physical id 5).

The GPU world is the real AI2-THOR world with `controller='unity'` (its own resource declaration, its real
`UnityThor` executor) whose Controller replays recorded THOR metadata (`tests/cluster_probe.py`): the replay
logs the `gpu_device` the executor gave it, so the test checks what the executor got, not what the runner
meant to give. Every episode asks the fake model servers through the real `openai` client (`interpreter:
llm`). Records must be each key once and equal to a serial run's (timings and placement aside).

Kept short: 1 CPU per node, 8 episodes, a driver inside the test process (one `ray.init` for both grids).
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

pytest.importorskip("ray", reason="the simulated cluster needs Ray: pip install -e '.[ray]'")

from cluster_probe import FIXTURE, PROBE_ID, CountingServer
from ray_processes import children, cmdline, wait_until

from servicerobot.experiments.config import parse_config
from servicerobot.experiments.runner import run_grid, stable_part

RAY = shutil.which("ray")
HEAD, CPU_NODE, GPU_NODE, GPU_NODE_2 = "127.0.0.2", "127.0.0.3", "127.0.0.4", "127.0.0.5"
PHYSICAL = {GPU_NODE: 3, GPU_NODE_2: 5}  # CUDA_VISIBLE_DEVICES of each GPU node's raylet
SEEDS = [0, 1, 2, 3]
GRID = {"name": "gpu-cluster", "seeds": SEEDS, "variants": ["static"],
        "agent": {"planner_timeout": 20, "interpreter": "llm"},
        "envs": [{"name": "thor-unity", "id": f"cluster_probe:{PROBE_ID}",
                  "kwargs": {"controller": "unity", "n_tasks": 1, "event_rate": 0.0}},
                 {"name": "household", "kwargs": {"size": "small", "n_tasks": 1}}]}
TOKENS_PER_REQUEST = 15  # what CountingServer reports as each answer's usage
NO_HOST = {**GRID, "name": "no-host", "envs": [{"name": "habitat-gpu", "id": "ServiceRobot-Habitat-v0",
                                                "kwargs": {"simulator": "habitat", "gpu_device_id": 0}}]}
# The driver, in a process of its own (Ray reads its auth settings when it is imported): it waits for the three
# nodes, runs a grid no node can host (refused up front), then the grid, through one `ray.init`.
DRIVER = """
import json, sys, time
import ray
import cluster_probe  # registers the probe id; the workers import it through PYTHONPATH
from servicerobot.experiments.cluster import ClusterError
from servicerobot.experiments.config import parse_config
from servicerobot.experiments.runner import run_grid

address, grid, no_host, out, never, servers, report_path = sys.argv[1:]
ray.init(address=address, log_to_driver=False)
deadline = time.monotonic() + 90
while sum(n["Alive"] for n in ray.nodes()) < 3:
    assert time.monotonic() < deadline, "three live nodes: not within 90 s"
    time.sleep(0.5)
report = {}
try:
    run_grid(parse_config(json.loads(no_host), check_envs=False), never, backend="ray")
except ClusterError as exc:
    report["refused"] = str(exc)
report["counts"] = run_grid(parse_config(json.loads(grid), check_envs=False), out, backend="ray", workers=3,
                            llm_servers=servers)
with open(report_path, "w") as f:
    json.dump(report, f)
"""

pytestmark = [
    pytest.mark.slow,
    pytest.mark.skipif(RAY is None or not sys.platform.startswith("linux"),
                       reason="needs the `ray` command and Linux loopback addresses"),
    pytest.mark.skipif(not FIXTURE.is_file(), reason="the recorded THOR metadata (../shared/fixtures/ai2thor) is absent"),
    pytest.mark.skipif(__import__("importlib").util.find_spec("alfworld") is None,
                       reason='iTHOR layouts need alfworld: pip install --no-deps "alfworld>=0.4.2"'),
]


def _free_port(*hosts: str) -> int:
    """A port free on every one of `hosts`."""
    for _ in range(50):
        with socket.socket() as s:
            s.bind((hosts[0], 0))
            port = s.getsockname()[1]
        try:
            for host in hosts[1:]:
                with socket.socket() as s:
                    s.bind((host, port))
            return port
        except OSError:
            continue
    raise AssertionError(f"no port free on all of {hosts}")


def _ports() -> list[str]:
    """Ports of its own for a node started beside others on this machine (two `ray start` at once can pick the
    same "free" port: a raylet then dies with "bind: Address already in use")."""
    names = ("--node-manager-port", "--object-manager-port", "--metrics-export-port", "--runtime-env-agent-port",
             "--dashboard-agent-listen-port", "--dashboard-agent-grpc-port")
    socks = []
    for _ in names:  # all held open at once, so that they differ
        s = socket.socket()
        s.bind(("", 0))
        socks.append(s)
    ports = [str(s.getsockname()[1]) for s in socks]
    for s in socks:
        s.close()
    low = 20000 + 1000 * (int(ports[0]) % 20)  # worker ports: a range of its own
    return [x for pair in zip(names, ports) for x in pair] + ["--min-worker-port", str(low),
                                                             "--max-worker-port", str(low + 999)]


class _Node:
    """`ray start --block ...` in its own session; `stop()` ends it (SIGTERM, then SIGKILL to its group)."""

    def __init__(self, args: list[str], env: dict, log: Path):
        self.log = log
        with open(log, "wb") as out:
            self.proc = subprocess.Popen([RAY, "start", "--block", *args], env=env, stdout=out,
                                         stderr=subprocess.STDOUT, start_new_session=True)

    def started(self) -> bool:
        return b"Ray runtime started" in self.log.read_bytes()

    @classmethod
    def up(cls, args, env: dict, log: Path, tries: int = 3, timeout: float = 150) -> _Node:
        """A node that has started, trying `tries` times: on 2 busy cores a raylet can miss the 30 s Ray gives it
        to register, and `ray start` then gives up. `args` is a function of the attempt (fresh ports)."""
        for attempt in range(tries):
            node = cls(args(), env, log.with_name(f"{log.stem}-{attempt}.log"))
            deadline = time.monotonic() + timeout
            while not node.started() and node.proc.poll() is None and time.monotonic() < deadline:
                time.sleep(0.2)
            if node.started():
                return node
            node.stop()
        raise AssertionError(f"`ray start` failed {tries} times: see {log.stem}-*.log")

    def kill_raylet(self, ip: str) -> None:
        """Lose the node: its raylet and the workers it started, by PID (SIGKILL)."""
        raylets = [p for p in children(self.proc.pid) if "raylet/raylet" in cmdline(p)]
        assert len(raylets) == 1 and ip in cmdline(raylets[0])
        for pid in [raylets[0], *children(raylets[0])]:
            with contextlib.suppress(ProcessLookupError):
                os.kill(pid, signal.SIGKILL)

    def stop(self) -> None:
        with contextlib.suppress(ProcessLookupError):
            os.kill(self.proc.pid, signal.SIGTERM)
        with contextlib.suppress(subprocess.TimeoutExpired):
            self.proc.wait(timeout=20)
        with contextlib.suppress(ProcessLookupError):
            os.killpg(self.proc.pid, signal.SIGKILL)
        self.proc.wait(timeout=10)


def _records(path: Path) -> list[dict]:
    return [json.loads(line) for line in path.read_text().splitlines() if line.strip()] if path.exists() else []


def test_gpu_episodes_go_to_the_gpu_node_with_its_id_and_workers_use_their_nodes_model_server(
        tmp_path, monkeypatch):
    port = 0
    llm_port = _free_port(HEAD, CPU_NODE)
    temp = Path(tempfile.mkdtemp(prefix="sr-gpu-", dir="/tmp"))  # Ray's socket paths must stay short
    probe_log = tmp_path / "probe.jsonl"
    token = secrets.token_hex(32)
    ray_env = {"RAY_USAGE_STATS_ENABLED": "0", "RAY_AUTH_MODE": "token", "RAY_AUTH_TOKEN": token,
               "RAY_ENABLE_WINDOWS_OR_OSX_CLUSTER": "1"}
    base = {k: v for k, v in os.environ.items() if not k.startswith(("OPENAI_", "SERVICEROBOT_", "CUDA_"))}
    tests_dir = str(Path(__file__).resolve().parent)
    env = {**base, **ray_env, "PYTHONPATH": os.pathsep.join(filter(None, [tests_dir, base.get("PYTHONPATH")])),
           "SR_PROBE_LOG": str(probe_log)}
    gpu_env = {**env, "SR_PROBE_EPISODE_DELAY": "1.0"}  # a GPU episode is in flight when its node is lost
    common = ["--num-cpus", "1", "--object-store-memory", "80000000", "--temp-dir", str(temp),
              "--include-log-monitor=false"]
    servers = {HEAD: CountingServer(HEAD, llm_port), CPU_NODE: CountingServer(CPU_NODE, llm_port)}
    nodes: list[_Node] = []
    out = tmp_path / "cluster.jsonl"
    try:
        def head_args() -> list[str]:
            nonlocal port
            port = _free_port(HEAD)
            return ["--head", "--port", str(port), "--node-ip-address", HEAD, "--include-dashboard=false",
                    "--resources", '{"llm_server": 1}', *common]

        nodes.append(_Node.up(head_args, env, tmp_path / "head.log"))
        join = ["--address", f"{HEAD}:{port}"]
        # one node after the other: a raylet must register within 30 s (Ray's own limit), hard on 2 busy cores
        nodes.append(_Node.up(lambda: [*join, "--node-ip-address", CPU_NODE, "--resources", '{"llm_server": 1}',
                                       *_ports(), *common], env, tmp_path / "cpu.log"))
        gpu = _Node.up(lambda: [*join, "--node-ip-address", GPU_NODE, "--num-gpus", "1", "--resources",
                                '{"unity": 1}', *_ports(), *common],
                       {**gpu_env, "CUDA_VISIBLE_DEVICES": str(PHYSICAL[GPU_NODE])}, tmp_path / "gpu.log")
        nodes.append(gpu)
        report = tmp_path / "report.json"
        with open(tmp_path / "driver.log", "wb") as log:
            driver = subprocess.Popen([sys.executable, "-c", DRIVER, f"{HEAD}:{port}", json.dumps(GRID),
                                       json.dumps(NO_HOST), str(out), str(tmp_path / "never.jsonl"),
                                       f"http://{{node_ip}}:{llm_port}/v1", str(report)],
                                      env=env, stdout=log, stderr=subprocess.STDOUT)
        try:
            # The GPU node is lost once it has finished a GPU episode, with the next one in flight.
            wait_until("a first GPU record", lambda: any(r["env"] == "thor-unity" for r in _records(out))
                  or driver.poll() is not None, 240)
            at_kill = len([r for r in _records(out) if r["env"] == "thor-unity"])
            gpu.kill_raylet(GPU_NODE)
            nodes.append(_Node.up(lambda: [*join, "--node-ip-address", GPU_NODE_2, "--num-gpus", "1", "--resources",
                                           '{"unity": 1}', *_ports(), *common],
                                  {**gpu_env, "CUDA_VISIBLE_DEVICES": str(PHYSICAL[GPU_NODE_2])}, tmp_path / "gpu2.log"))
            driver.wait(timeout=300)
        finally:
            if driver.poll() is None:
                driver.kill()
                driver.wait()
    finally:
        for node in reversed(nodes):
            node.stop()
        for server in servers.values():
            server.stop()
        shutil.rmtree(temp, ignore_errors=True)
    stderr = (tmp_path / "driver.log").read_text(errors="replace")
    assert driver.returncode == 0, stderr[-3000:]
    done = json.loads(report.read_text())
    # Up front: a world no node can host is refused at once, naming what is missing and how to add it.
    assert "'habitat-gpu' needs a node with a GPU and the custom resource `habitat`" in done["refused"]
    assert "127.0.0.4: 1 CPU, 1 GPU, unity" in done["refused"] and "--num-gpus" in done["refused"]
    assert not _records(tmp_path / "never.jsonl")
    assert at_kill < len(SEEDS)
    assert "was lost with its Ray worker or node" in stderr  # the GPU episode in flight was run again

    records = _records(out)
    keys = [r["key"] for r in records]
    assert sorted(keys) == sorted(f"gpu-cluster/{e}/static/{s}" for e in ("thor-unity", "household") for s in SEEDS)
    assert done["counts"]["ran"] == len(records) and done["counts"]["errors"] == 0

    # Every GPU episode ran on a GPU node and its world was given that node's physical GPU id ...
    for r in records:
        where = r["placement"]
        if r["env"] == "thor-unity":
            assert where["node"] in PHYSICAL, where
            assert where["gpus"] == [str(PHYSICAL[where["node"]])]
            assert where["world_options"] == {"gpu_device": PHYSICAL[where["node"]]}
            assert r["env_kwargs"] == GRID["envs"][0]["kwargs"]  # the config's, not the node's
        else:
            assert where["gpus"] == [] and where["world_options"] == {}
    # ... which is what the executor handed the Controller, on that node (one line per episode started).
    seen = [json.loads(line) for line in probe_log.read_text().splitlines()]
    on_ray = [s for s in seen if s["node"] is not None]
    # every GPU episode; the one lost with the node adds a line only where it got as far as starting its Controller
    # before the node went (on a loaded machine it may not have: its loss is checked in the driver's log above)
    assert len(on_ray) >= len(SEEDS)
    assert all(s["node"] in PHYSICAL and s["gpu_device"] == PHYSICAL[s["node"]] for s in on_ray), on_ray
    assert {s["node"] for s in on_ray} == set(PHYSICAL)

    # Each worker asked its own node's model server; the GPU nodes (none of their own) fell back to the first
    # other that answered (the head's, in address order); the servers counted the requests.
    for r in records:
        node = r["placement"]["node"]
        assert r["placement"]["llm_server"] == servers.get(node, servers[HEAD]).url, r["placement"]
        assert r["agent"]["tokens"] > 0
    asked = {ip: sum(r["agent"]["tokens"] for r in records if r["placement"]["llm_server"] == s.url)
             // TOKENS_PER_REQUEST for ip, s in servers.items()}
    assert servers[CPU_NODE].requests == asked[CPU_NODE]  # nothing lost there
    assert servers[HEAD].requests >= asked[HEAD]  # plus those of the GPU episode lost with its node
    assert asked[CPU_NODE] > 0 and asked[HEAD] > 0

    # The same records as a serial run (timings and placement aside).
    serial_server = CountingServer("127.0.0.1")
    try:
        monkeypatch.setenv("OPENAI_BASE_URL", serial_server.url)
        serial = tmp_path / "serial.jsonl"
        run_grid(parse_config(GRID, check_envs=False), serial, backend="serial")
    finally:
        serial_server.stop()
    expected = {r["key"]: stable_part(r) for r in _records(serial)}
    assert {r["key"]: stable_part(r) for r in records} == expected
