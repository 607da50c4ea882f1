"""A tiny OpenAI-compatible chat server for tests: canned answers from a queue, over real HTTP.

`POST /v1/chat/completions` pops the next queued reply (an answer, an HTTP error, or a slow answer)
and records the request body and headers (names lowercased). With `reject_json_schema` set, requests asking for a
`json_schema` response format get the 400 a server without structured output sends, without using
up a queued reply. An empty queue answers 418 with a message saying so (never retried by clients).
"""

from __future__ import annotations

import json
import threading
import time
from collections import deque
from contextlib import contextmanager
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer


@dataclass
class Reply:
    status: int = 200
    content: str = ""
    delay: float = 0.0
    usage: tuple[int, int] = (10, 5)
    body: dict | None = None
    headers: dict = field(default_factory=dict)


class OpenAIStub:
    """The server; `url` is the base URL to give a client (ends with /v1)."""

    def __init__(self) -> None:
        self.replies: deque[Reply] = deque()
        self.requests: list[dict] = []
        self.headers: list[dict] = []
        self.reject_json_schema = False
        self._lock = threading.Lock()
        stub = self

        class Handler(BaseHTTPRequestHandler):
            def log_message(self, *args) -> None:  # keep test output quiet
                pass

            def do_POST(self) -> None:
                length = int(self.headers.get("Content-Length", 0))
                raw = self.rfile.read(length)
                try:
                    body = json.loads(raw)
                except json.JSONDecodeError:
                    body = {"_raw": raw.decode("utf-8", "replace")}
                with stub._lock:
                    stub.requests.append(body)
                    stub.headers.append({k.lower(): v for k, v in self.headers.items()})
                    reply = stub._next(self.path, body)
                if reply.delay:
                    time.sleep(reply.delay)
                payload = json.dumps(reply.body).encode()
                try:
                    self.send_response(reply.status)
                    self.send_header("Content-Type", "application/json")
                    self.send_header("Content-Length", str(len(payload)))
                    for key, value in reply.headers.items():
                        self.send_header(key, value)
                    self.end_headers()
                    self.wfile.write(payload)
                except (BrokenPipeError, ConnectionResetError):  # the client gave up (timeout test)
                    pass

        self._server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self._server.daemon_threads = True
        self.url = f"http://127.0.0.1:{self._server.server_address[1]}/v1"
        self._thread = threading.Thread(target=self._server.serve_forever, kwargs={"poll_interval": 0.02},
                                        daemon=True)
        self._thread.start()

    # ------------------------------------------------------------------ what the test queues
    def answer(self, content: str | dict, *, prompt_tokens: int = 10, completion_tokens: int = 5,
               delay: float = 0.0, finish_reason: str = "stop") -> None:
        """Queue a 200 answer (a dict is sent as its JSON text)."""
        text = content if isinstance(content, str) else json.dumps(content)
        self.replies.append(Reply(200, text, delay, (prompt_tokens, completion_tokens),
                                  body={"finish_reason": finish_reason}))

    def error(self, status: int, message: str = "stub error", *, param: str | None = None) -> None:
        """Queue an HTTP error answer in the OpenAI error format."""
        self.replies.append(Reply(status, body={"error": {"message": message, "type": "stub_error",
                                                          "param": param, "code": None}},
                                  headers={"Retry-After": "0"} if status == 429 else {}))

    # ------------------------------------------------------------------ serving
    def _next(self, path: str, body: dict) -> Reply:
        if path.rstrip("/") != "/v1/chat/completions":
            return Reply(404, body={"error": {"message": f"no route {path}", "type": "not_found"}})
        response_format = body.get("response_format") or {}
        if self.reject_json_schema and response_format.get("type") == "json_schema":
            return Reply(400, body={"error": {
                "message": "response_format of type json_schema is not supported by this server",
                "type": "invalid_request_error", "param": "response_format", "code": None}})
        if not self.replies:
            return Reply(418, body={"error": {"message": "stub: no canned reply queued", "type": "stub"}})
        reply = self.replies.popleft()
        if reply.status != 200:
            return reply
        p, c = reply.usage
        reply.body = {
            "id": f"chatcmpl-{len(self.requests)}", "object": "chat.completion", "created": 0,
            "model": body.get("model", "stub"),
            "choices": [{"index": 0, "finish_reason": reply.body["finish_reason"],
                         "message": {"role": "assistant", "content": reply.content}}],
            "usage": {"prompt_tokens": p, "completion_tokens": c, "total_tokens": p + c},
        }
        return reply

    def stop(self) -> None:
        self._server.shutdown()
        self._server.server_close()


@contextmanager
def serve():
    stub = OpenAIStub()
    try:
        yield stub
    finally:
        stub.stop()
