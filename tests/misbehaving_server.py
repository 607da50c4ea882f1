"""An OpenAI-compatible chat server on 127.0.0.1 that misbehaves on purpose (for the hostile LLM tests).

Each `POST /v1/chat/completions` takes the next queued behaviour, or `default` when the queue is empty:
`ok(content)` a well-formed answer, `status(code, headers)` an HTTP error in the OpenAI format, `hang(s)`
sleep then answer, `truncated()` a body cut short of its Content-Length, `raw(body)` a 200 whose body is
`body` as is, `reset()` close the connection without answering, `answering(table)` a good answer chosen by the asked-for
schema's name (kind, query_graph, goal, update, entities). Every request's arrival time is kept.
"""

from __future__ import annotations

import json
import os
import socket
import threading
import time
from collections import deque
from collections.abc import Callable
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

__all__ = ["MisbehavingServer", "answering", "hang", "ok", "raw", "reset", "status", "truncated"]

Behaviour = Callable[[BaseHTTPRequestHandler, dict], None]


def _envelope(content: str, model: str) -> bytes:
    return json.dumps({"id": "chatcmpl-x", "object": "chat.completion", "created": 0, "model": model,
                       "choices": [{"index": 0, "finish_reason": "stop",
                                    "message": {"role": "assistant", "content": content}}],
                       "usage": {"prompt_tokens": 10, "completion_tokens": 5, "total_tokens": 15}}).encode()


def _send(handler: BaseHTTPRequestHandler, code: int, payload: bytes, headers: dict | None = None,
          length: int | None = None) -> None:
    handler.send_response(code)
    handler.send_header("Content-Type", "application/json")
    handler.send_header("Content-Length", str(len(payload) if length is None else length))
    for key, value in (headers or {}).items():
        handler.send_header(key, value)
    handler.end_headers()
    handler.wfile.write(payload)
    handler.wfile.flush()


def ok(content: str | dict) -> Behaviour:
    text = content if isinstance(content, str) else json.dumps(content)
    return lambda h, body: _send(h, 200, _envelope(text, body.get("model", "m")))


def schema_name(body: dict) -> str:
    """The name of the JSON schema a request asks for ("" when it asks for none)."""
    return ((body.get("response_format") or {}).get("json_schema") or {}).get("name", "")


def answering(table: dict) -> Behaviour:
    """A well-formed answer from `table[schema name]` (a dict, or a function of the request body)."""
    def run(h, body):
        answer = table[schema_name(body)]
        ok(answer(body) if callable(answer) else answer)(h, body)
    return run


def status(code: int, headers: dict | None = None, message: str = "misbehaving on purpose") -> Behaviour:
    payload = json.dumps({"error": {"message": message, "type": "server_error", "param": None,
                                    "code": None}}).encode()
    return lambda h, body: _send(h, code, payload, headers)


def hang(seconds: float, then: Behaviour | None = None) -> Behaviour:
    def run(h, body):
        time.sleep(seconds)
        (then or ok({"kind": "task"}))(h, body)
    return run


def truncated() -> Behaviour:
    def run(h, body):
        payload = _envelope('{"kind": "task"}', body.get("model", "m"))
        _send(h, 200, payload[: len(payload) // 2], length=len(payload))
        h.close_connection = True
        h.connection.shutdown(socket.SHUT_RDWR)
    return run


def raw(payload: bytes | str, code: int = 200) -> Behaviour:
    data = payload.encode() if isinstance(payload, str) else payload
    return lambda h, body: _send(h, code, data)


def reset() -> Behaviour:
    def run(h, body):
        h.close_connection = True
        h.connection.shutdown(socket.SHUT_RDWR)
    return run


class MisbehavingServer:
    """The server (a context manager); `url` is the base URL for a client (ends with /v1)."""

    def __init__(self, default: Behaviour | None = None) -> None:
        self.queue: deque[Behaviour] = deque()
        self.default = default or status(500)
        self.arrivals: list[float] = []
        self.bodies: list[dict] = []
        self._lock = threading.Lock()
        server = self

        class Handler(BaseHTTPRequestHandler):
            def log_message(self, *args) -> None:
                pass

            def do_POST(self) -> None:
                raw_body = self.rfile.read(int(self.headers.get("Content-Length", 0)))
                try:
                    body = json.loads(raw_body)
                except ValueError:
                    body = {}
                with server._lock:
                    server.arrivals.append(time.monotonic())
                    server.bodies.append(body)
                    behaviour = server.queue.popleft() if server.queue else server.default
                try:
                    behaviour(self, body)
                except OSError:  # the client gave up (timeouts) or we cut the line on purpose
                    pass

        self._server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self._server.daemon_threads = True
        self.url = f"http://127.0.0.1:{self._server.server_address[1]}/v1"
        self._thread = threading.Thread(target=self._server.serve_forever, kwargs={"poll_interval": 0.02},
                                        daemon=True)
        self._thread.start()

    def push(self, *behaviours: Behaviour) -> None:
        self.queue.extend(behaviours)

    @property
    def requests(self) -> int:
        return len(self.arrivals)

    def __enter__(self):
        return self

    def __exit__(self, *exc) -> None:
        self._server.shutdown()
        self._server.server_close()
        if os.environ.get("SR_HOSTILE_LOG"):  # for the README's figures: requests served per server
            with open(os.environ["SR_HOSTILE_LOG"], "a") as log:
                log.write(f"{self.requests}\n")
