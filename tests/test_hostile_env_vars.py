"""Environment variables and model-server answers under hostile use (issue 38): a bad value is refused with a
message naming the variable and a valid example, never a raw ValueError, KeyError or IndexError, and a server
whose `/models` answer never ends is read no further than a cap."""

from __future__ import annotations

import threading
import tracemalloc
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

import pytest

from servicerobot.experiments.cluster import NODE_WAIT_VAR, ClusterError, ModelServers, node_wait
from servicerobot.experiments.config import parse_config
from servicerobot.experiments.runner import run_grid
from servicerobot.language.local_server import DEFAULT_MODEL, served_model
from servicerobot.limits import read_stream_bounded

TINY = {"name": "tiny", "seeds": [0], "variants": ["oracle"], "agent": {"planner_timeout": 20},
        "envs": [{"name": "small", "kwargs": {"size": "small", "n_tasks": 1}}]}


@pytest.mark.parametrize("text", ["abc", "  ", "0x10", "1,5", "nan", "inf", "-1", "1e3", "9" * 400, "٣"])
def test_a_bad_node_wait_names_the_variable_and_an_example(text):
    with pytest.raises(ClusterError) as info:
        node_wait(text)
    message = str(info.value)
    assert NODE_WAIT_VAR in message and "e.g. 600" in message and len(message) < 400


@pytest.mark.parametrize("text, seconds", [(None, 600.0), ("", 600.0), ("0", 0.0), (" 2.5 ", 2.5), ("30", 30.0)])
def test_a_good_node_wait_is_read(monkeypatch, text, seconds):
    monkeypatch.delenv(NODE_WAIT_VAR, raising=False)
    assert node_wait(text) == seconds


def test_a_bad_node_wait_stops_a_ray_run_before_ray_starts(tmp_path, monkeypatch):
    """`SERVICEROBOT_RAY_NODE_WAIT=abc` was a raw ValueError from runner.py."""
    ray = pytest.importorskip("ray")
    monkeypatch.setenv(NODE_WAIT_VAR, "abc")
    with pytest.raises(ClusterError, match=f"{NODE_WAIT_VAR} must be a number of seconds"):
        run_grid(parse_config(TINY), tmp_path / "r.jsonl", backend="ray")
    assert not ray.is_initialized()


@pytest.mark.parametrize("text, placeholder", [
    ("http://{node_ip}:{port}/v1", "'{port}'"),  # was KeyError when a worker formatted it
    ("http://{node_ip}:{0}/v1", "'{0}'"),  # was IndexError
    ("http://{0}:8080/v1", "'{0}'"),
    ("http://{node_ip!r}:8080/v1", "'{node_ip!r}'"),
    ("10.0.0.1=http://{x}:8080/v1", "'{x}'"),
])
def test_a_url_with_an_unknown_placeholder_is_refused_at_parse(text, placeholder):
    with pytest.raises(ClusterError) as info:
        ModelServers.parse(text)
    message = str(info.value)
    assert f"unknown placeholder {placeholder}" in message and "http://{node_ip}:8080/v1" in message


@pytest.mark.parametrize("text", ["http://{node_ip:8080/v1", "http://node}:8080/v1"])
def test_a_url_with_a_lone_brace_is_refused_at_parse(text):
    with pytest.raises(ClusterError, match=r"the only placeholder is \{node_ip\}"):
        ModelServers.parse(text)


def test_a_node_ip_template_still_formats():
    servers = ModelServers.parse("http://{node_ip}:8080/v1, http://shared:9/v1")
    nodes = [{"Alive": True, "NodeManagerAddress": "10.0.0.2", "Resources": {"llm_server": 1}}]
    assert servers.candidates("10.0.0.2", nodes) == ["http://10.0.0.2:8080/v1", "http://shared:9/v1"]


class _Endless(BaseHTTPRequestHandler):
    """`GET /v1/models` answered with a 200 whose body never ends (until the client hangs up)."""

    sent = 0

    def do_GET(self):
        self.send_response(200)
        self.send_header("Content-Type", "application/json")
        self.end_headers()
        chunk = b'{"data": [' + b" " * 65_526
        try:
            while True:
                self.wfile.write(chunk)
                type(self).sent += len(chunk)
        except OSError:
            pass

    def log_message(self, *args):
        pass


def test_a_models_answer_that_never_ends_is_read_no_further_than_the_cap():
    """`served_model` read it whole: MemoryError at 3.7 GB."""
    server = ThreadingHTTPServer(("127.0.0.1", 0), _Endless)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        tracemalloc.start()
        name = served_model(f"http://127.0.0.1:{server.server_address[1]}/v1", timeout=10)
        peak = tracemalloc.get_traced_memory()[1]
        tracemalloc.stop()
    finally:
        server.shutdown()
        server.server_close()
    assert name == DEFAULT_MODEL.name  # as for any server whose answer cannot be read
    assert peak < 20_000_000


def test_read_stream_bounded_stops_past_its_cap():
    import io

    assert read_stream_bounded(io.BytesIO(b"x" * 100), 100, "answer") == b"x" * 100
    with pytest.raises(ValueError, match="the answer is longer than the limit of 99 bytes"):
        read_stream_bounded(io.BytesIO(b"x" * 100), 99, "answer", ValueError)


class _Trickle(BaseHTTPRequestHandler):
    """`GET /v1/models` answered a byte at a time, each well within the client's socket timeout, never ending."""

    def do_GET(self):
        import time

        self.send_response(200)
        self.send_header("Content-Type", "application/json")
        self.end_headers()
        try:
            while True:
                self.wfile.write(b" ")
                self.wfile.flush()
                time.sleep(0.05)
        except OSError:
            pass

    def log_message(self, *args):
        pass


def test_a_models_answer_that_trickles_forever_is_given_up_on():
    """Issue 38 retest: each byte came within the socket timeout, so `served_model` waited for 1 MB (hours)."""
    server = ThreadingHTTPServer(("127.0.0.1", 0), _Trickle)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    names = []
    try:
        reader = threading.Thread(target=lambda: names.append(
            served_model(f"http://127.0.0.1:{server.server_address[1]}/v1", timeout=1)), daemon=True)
        reader.start()
        reader.join(120)  # a bound on a hang (old code: ~14 hours), not a speed target
    finally:
        server.shutdown()
        server.server_close()
    assert names == [DEFAULT_MODEL.name]


def test_read_stream_bounded_gives_up_on_a_stream_past_its_deadline():
    class Endless:
        reads = 0

        def read1(self, n):
            self.reads += 1
            return b"x"

    stream = Endless()
    with pytest.raises(ValueError, match="the answer did not finish within 0 s"):
        read_stream_bounded(stream, 1 << 20, "answer", ValueError, deadline_s=0)
    assert stream.reads == 1
