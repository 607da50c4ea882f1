"""Test helpers for the simulated Ray cluster (tests/test_ray_cluster_gpu.py), importable by Ray workers.

- `ServiceRobotProbe-AI2THOR-v0` (used as `cluster_probe:ServiceRobotProbe-AI2THOR-v0`, which makes gymnasium
  import this module in a worker): the real AI2-THOR world with `controller='unity'`, its real `UnityThor`
  executor and its real resource declaration, whose `ai2thor.controller.Controller` is a REPLAY of recorded
  THOR metadata (no Unity build or GPU here). The replay appends what the executor gave the Controller
  (`gpu_device`, `platform`), with the node and process, to the JSONL file `$SR_PROBE_LOG` when it starts and
  at every reset (one line per episode), and takes `$SR_PROBE_EPISODE_DELAY` seconds to do so.
- `CountingServer`: a tiny OpenAI-compatible HTTP server on a given loopback address that counts the chat
  requests it gets and answers each by its JSON schema's title (every utterance is an update that changes
  nothing), so that `openai`'s real client talks to it without a model.
"""

from __future__ import annotations

import json
import os
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

from gymnasium.envs.registration import register, registry

FIXTURE = Path(__file__).resolve().parents[1] / ".." / "shared" / "fixtures" / "ai2thor" / \
    "instance_segmentation_metadata.json"
PROBE_ID = "ServiceRobotProbe-AI2THOR-v0"
LOG_VAR = "SR_PROBE_LOG"
DELAY_VAR = "SR_PROBE_EPISODE_DELAY"  # seconds each episode's Controller start or reset takes (a GPU episode in flight)
_POSE = {"x": 0.25, "y": 0.9009992480278015, "z": -1.0, "rotation": 90.0, "horizon": 30.0, "standing": True}
_SPAWN = [{"x": -1.1, "y": 0.95, "z": -0.6}]


class _Event:
    def __init__(self, metadata: dict):
        self.metadata, self.frame = metadata, None


def _node_ip() -> str | None:
    try:
        import ray

        return ray.util.get_node_ip_address() if ray.is_initialized() else None
    except ImportError:
        return None


class ReplayController:
    """Stands in for `ai2thor.controller.Controller`: answers every action with the recorded metadata."""

    def __init__(self, **settings):
        self.metadata = json.loads(FIXTURE.read_text())
        self.settings = settings
        self._log("start")
        time.sleep(float(os.environ.get(DELAY_VAR) or 0))
        self.last_event = self._answer("Initialize")

    def _log(self, what: str) -> None:
        path = os.environ.get(LOG_VAR)
        if path:
            line = json.dumps({"what": what, "gpu_device": self.settings.get("gpu_device"),
                               "platform": self.settings.get("platform"), "node": _node_ip(), "pid": os.getpid(),
                               "cuda_visible_devices": os.environ.get("CUDA_VISIBLE_DEVICES")})
            with open(path, "a") as f:
                f.write(line + "\n")

    def _answer(self, action: str) -> _Event:
        meta = dict(self.metadata)
        meta.update(lastAction=action, lastActionSuccess=True, errorMessage="",
                    actionReturn={"GetInteractablePoses": [_POSE],
                                  "GetSpawnCoordinatesAboveReceptacle": _SPAWN}.get(action))
        return _Event(meta)

    def step(self, action: str, **kwargs):
        self.last_event = self._answer(action)
        return self.last_event

    def reset(self, scene: str):
        self._log("reset")
        time.sleep(float(os.environ.get(DELAY_VAR) or 0))
        self.last_event = self._answer("Initialize")
        return self.last_event

    def stop(self) -> None:
        pass


def make_probe_env(**options):
    """The AI2-THOR world with the Unity executor driving a `ReplayController`."""
    from servicerobot.envs.core import make_env

    return make_env(controller_factory=ReplayController, **options)


if PROBE_ID not in registry:
    register(id=PROBE_ID, entry_point="cluster_probe:make_probe_env", kwargs={"world": "ai2thor"})


_ANSWERS = {"kind": {"kind": "update"}, "update": {"REMOVE": [], "ADD": []}, "goal": {"goal": "(and)"},
            "entities": {"entities": []}, "query_graph": {"nodes": [], "edges": []}}


class CountingServer:
    """An OpenAI-compatible server on `host` (a loopback address) counting `POST /v1/chat/completions`."""

    def __init__(self, host: str, port: int = 0):
        self.host = host
        self.requests = 0
        self._lock = threading.Lock()
        server = self

        class Handler(BaseHTTPRequestHandler):
            def log_message(self, *args) -> None:
                pass

            def _send(self, status: int, body: dict) -> None:
                payload = json.dumps(body).encode()
                self.send_response(status)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(payload)))
                self.end_headers()
                self.wfile.write(payload)

            def do_GET(self) -> None:
                if self.path.rstrip("/") == "/v1/models":
                    self._send(200, {"object": "list", "data": [{"id": "fake", "object": "model"}]})
                else:
                    self._send(404, {"error": {"message": f"no route {self.path}", "type": "not_found"}})

            def do_POST(self) -> None:
                body = json.loads(self.rfile.read(int(self.headers.get("Content-Length", 0))) or b"{}")
                if self.path.rstrip("/") != "/v1/chat/completions":
                    self._send(404, {"error": {"message": f"no route {self.path}", "type": "not_found"}})
                    return
                with server._lock:
                    server.requests += 1
                fmt = body.get("response_format") or {}
                schema = fmt.get("schema") or (fmt.get("json_schema") or {}).get("schema") or {}
                content = json.dumps(_ANSWERS.get(schema.get("title"), {}))
                self._send(200, {"id": "chatcmpl-fake", "object": "chat.completion", "created": 0,
                                 "model": body.get("model", "fake"),
                                 "choices": [{"index": 0, "finish_reason": "stop",
                                              "message": {"role": "assistant", "content": content}}],
                                 "usage": {"prompt_tokens": 10, "completion_tokens": 5, "total_tokens": 15}})

        self._server = ThreadingHTTPServer((host, port), Handler)
        self._server.daemon_threads = True
        self.port = self._server.server_address[1]
        self.url = f"http://{host}:{self.port}/v1"
        self._thread = threading.Thread(target=self._server.serve_forever, kwargs={"poll_interval": 0.05},
                                        daemon=True)
        self._thread.start()

    def stop(self) -> None:
        self._server.shutdown()
        self._server.server_close()
