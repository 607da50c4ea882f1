"""The local model server's gate: every request is checked here before llama.cpp sees it.

One request could kill or stall `servicerobot llm serve`: a grammar llama.cpp cannot parse (SIGSEGV), a
100 MB message (tokenised into GBs, then SIGABRT), 100k tiny messages (minutes of templating while every
other request waited), and a body that is not JSON, an empty message list or a 2,000-deep JSON object
answered HTTP 500. `RequestGuard` wraps the server's ASGI app: it reads at most `RequestLimits.body_bytes`,
parses the JSON with a nesting bound, checks messages, prompts, grammars (`servicerobot.language.gbnf`),
JSON-schema response formats and `max_tokens`, and answers what fails with a 4xx status and the reason;
it answers `GET /v1/models` itself, so a request being evaluated never holds it up.
"""

from __future__ import annotations

import json
import re
from collections.abc import Sequence
from dataclasses import dataclass, field

from servicerobot.language.gbnf import GrammarError, GrammarLimits, check_grammar

__all__ = ["RequestGuard", "RequestLimits", "RequestRefused", "check_body", "check_request"]


@dataclass(frozen=True)
class RequestLimits:
    """What one request may ask of the server.

    Attributes:
        body_bytes: the request body.
        depth: nesting of the body's JSON arrays and objects.
        messages: entries of `messages`.
        text_chars: characters of all messages (or of the prompt) together; the context holds far fewer
            tokens, so a longer prompt could only be refused after the costly part.
        max_tokens: the most tokens one answer may generate; a chat request without `max_tokens` gets this.
        grammar: bounds on a grammar, given or made from a JSON schema.
        vocab: the model's vocabulary size: token ids sent to `/extras/detokenize` must be below it (llama.cpp
            aborts the whole server on one past it); None (unknown) refuses that route.
    """

    body_bytes: int = 4 << 20
    depth: int = 64
    messages: int = 256
    text_chars: int = 200_000
    max_tokens: int = 2_048
    grammar: GrammarLimits = field(default_factory=GrammarLimits)
    vocab: int | None = None


class RequestRefused(ValueError):
    """A request the server will not run: `status` (4xx) and the reason, which says what to change."""

    def __init__(self, status: int, reason: str) -> None:
        super().__init__(reason)
        self.status = status
        self.reason = reason


_DRAIN = 32  # a body over the limit is read (and dropped) up to this many times the limit before the answer
_GENERATING = ("/v1/chat/completions", "/v1/completions", "/v1/engines/copilot-codex/completions")


def _depth_at_most(value, limit: int) -> bool:
    """Whether `value`'s arrays and objects nest at most `limit` deep (iteratively: no recursion limit)."""
    stack = [(value, 1)]
    while stack:
        item, depth = stack.pop()
        if isinstance(item, dict):
            item = list(item.values())
        elif not isinstance(item, list):
            continue
        if depth > limit:
            return False
        stack.extend((child, depth + 1) for child in item if isinstance(child, (dict, list)))
    return True


def _no_constant(name: str):
    raise ValueError(f"{name} is not a JSON number")


def check_body(path: str, raw: bytes, limits: RequestLimits = RequestLimits()) -> dict:
    """The parsed JSON object of a POST to `path`, checked by `check_request`.

    Raises:
        RequestRefused: 413 for a body over `limits.body_bytes`, 400 for one that is not a JSON object or
            nests too deep, 422 for a field the server cannot run.
    """
    if len(raw) > limits.body_bytes:
        raise RequestRefused(413, f"the request body has {len(raw)} bytes; at most {limits.body_bytes}")
    try:
        body = json.loads(raw, parse_constant=_no_constant)
    except RecursionError:
        raise RequestRefused(400, f"the request body nests deeper than {limits.depth} arrays/objects") from None
    except (ValueError, UnicodeDecodeError) as exc:
        raise RequestRefused(400, f"the request body is not JSON ({exc}); send a JSON object with "
                                  "Content-Type: application/json") from None
    if not isinstance(body, dict):
        raise RequestRefused(400, f"the request body must be a JSON object, got {type(body).__name__}")
    if not _depth_at_most(body, limits.depth):
        raise RequestRefused(400, f"the request body nests deeper than {limits.depth} arrays/objects")
    check_request(path, body, limits)
    _check_fields(path, body)
    return body


_MODELS = {"/v1/chat/completions": "CreateChatCompletionRequest", "/v1/completions": "CreateCompletionRequest",
           "/v1/engines/copilot-codex/completions": "CreateCompletionRequest",
           "/v1/embeddings": "CreateEmbeddingRequest", "/extras/tokenize": "TokenizeInputRequest",
           "/extras/tokenize/count": "TokenizeInputRequest", "/extras/detokenize": "DetokenizeInputRequest"}


def _check_fields(path: str, body: dict) -> None:
    """The body against llama-cpp-python's own request model for `path`, which its app would answer with
    HTTP 500 (a role it does not know, `top_k` -100, a `logit_bias` that is not numbers): 422 here."""
    name = _MODELS.get(path)
    if name is None:
        return
    try:
        from llama_cpp.server import types
        from pydantic import ValidationError
    except ImportError:  # no llama.cpp here: nothing will run the request either
        return
    try:
        getattr(types, name).model_validate(body)
    except ValidationError as exc:
        first = exc.errors()[0]
        where = ".".join(str(part) for part in first.get("loc", ()))
        raise RequestRefused(422, f"{where or 'the body'}: {first.get('msg', 'invalid')} ({exc.error_count()} "
                                  "problem(s) in all)") from None


def _text_of(content, where: str) -> int:
    """The characters of one message's content: a string or null (the served chat templates join the
    content as a string: a list of parts failed there with HTTP 500)."""
    if content is None:
        return 0
    if not isinstance(content, str):
        raise RequestRefused(422, f"{where}.content must be a string (this server's chat template takes no list "
                                  "of parts: join the text parts into one string)")
    _utf8(content, f"{where}.content")
    return len(content)


def _utf8(text: str, where: str) -> None:
    try:
        text.encode("utf-8")
    except UnicodeEncodeError:
        raise RequestRefused(422, f"{where} holds a lone surrogate, which is not text (UTF-8)") from None


def _check_messages(messages, limits: RequestLimits) -> None:
    if not isinstance(messages, list) or not messages:
        raise RequestRefused(422, f"messages must be a list of 1 to {limits.messages} messages "
                                  '({"role": ..., "content": ...}), got ' + _shape(messages))
    if len(messages) > limits.messages:
        raise RequestRefused(422, f"{len(messages)} messages; at most {limits.messages} in one request")
    chars = 0
    for i, message in enumerate(messages):
        if not isinstance(message, dict) or not isinstance(message.get("role"), str):
            raise RequestRefused(422, f"messages[{i}] must be an object with a string role")
        chars += _text_of(message.get("content"), f"messages[{i}]")
    if chars > limits.text_chars:
        raise RequestRefused(422, f"the messages hold {chars} characters; at most {limits.text_chars} "
                                  "(the model's context holds far fewer tokens)")


def _shape(value) -> str:
    return "[]" if value == [] else type(value).__name__


def _check_text(value, name: str, most: int | None, limits: RequestLimits) -> None:
    """A string, or a list of at most `most` strings (None: any number), of `limits.text_chars` in all."""
    texts = [value] if isinstance(value, str) else value if isinstance(value, list) else None
    if texts is None or not all(isinstance(t, str) for t in texts) or (most is not None and len(texts) > most):
        raise RequestRefused(422, f"{name} must be a string" + (" or a list of strings" if most is None else
                                                                 f" (or a list of {most})"))
    for text in texts:
        _utf8(text, name)
    chars = sum(len(t) for t in texts)
    if chars > limits.text_chars:
        raise RequestRefused(422, f"{name} holds {chars} characters; at most {limits.text_chars}")


def _check_tokens(tokens, limits: RequestLimits) -> None:
    """Token ids for `/extras/detokenize`: a list of at most `limits.text_chars` integers in [0, vocab)."""
    if limits.vocab is None:
        raise RequestRefused(422, "/extras/detokenize is off: this server does not know its model's vocabulary")
    if not isinstance(tokens, list) or len(tokens) > limits.text_chars:
        raise RequestRefused(422, f"tokens must be a list of at most {limits.text_chars} token ids")
    for i, token in enumerate(tokens):
        if isinstance(token, bool) or not isinstance(token, int) or not 0 <= token < limits.vocab:
            raise RequestRefused(422, f"tokens[{i}] is {str(token)[:40]}; a token id is an integer from 0 to "
                                      f"{limits.vocab - 1}")


def _check_grammar(text, where: str, limits: RequestLimits) -> None:
    try:
        check_grammar(text, limits.grammar)
    except GrammarError as exc:
        raise RequestRefused(422, f"{where}: {exc}") from None


_COUNT_KEYS = ("minLength", "maxLength", "minItems", "maxItems")
_SCHEMA_REPEAT = 100  # llama-cpp-python writes each repetition of a schema out (maxLength 10**9: 1 GB of text)
_QUANTIFIER = re.compile(r"(?<!\\)\{([^}]*)\}")


def _check_schema_counts(schema, where: str) -> None:
    """Refuse repetition counts (`maxLength`, a pattern's `{m,n}`, ...) over `_SCHEMA_REPEAT`, which the
    schema's conversion into a grammar would write out, before it runs."""
    stack = [schema]
    while stack:
        item = stack.pop()
        if isinstance(item, list):
            stack.extend(item)
            continue
        if not isinstance(item, dict):
            continue
        for key, value in item.items():
            if key in _COUNT_KEYS and not (isinstance(value, int) and not isinstance(value, bool)
                                           and 0 <= value <= _SCHEMA_REPEAT):
                raise RequestRefused(422, f"{where}: {key} {value!r}; it must be an integer from 0 to "
                                          f"{_SCHEMA_REPEAT} (each repetition becomes part of the grammar)")
            if key == "pattern" and isinstance(value, str):
                for quantifier in _QUANTIFIER.findall(value):
                    if any(int(n) > _SCHEMA_REPEAT for n in re.findall(r"\d+", quantifier)):
                        raise RequestRefused(422, f"{where}: the pattern's {{{quantifier}}} repeats more than "
                                                  f"{_SCHEMA_REPEAT} times (each repetition becomes part of the "
                                                  "grammar)")
            if isinstance(value, (dict, list)):
                stack.append(value)


def _check_schema(schema, where: str, limits: RequestLimits) -> None:
    """A JSON schema llama-cpp-python turns into a grammar: its counts bounded first, then the grammar made
    here too and checked."""
    if not isinstance(schema, dict):
        raise RequestRefused(422, f"{where} must be a JSON schema (an object), got {type(schema).__name__}")
    _check_schema_counts(schema, where)
    try:
        from llama_cpp.llama_grammar import json_schema_to_gbnf
    except ImportError:  # no llama.cpp here: nothing will compile it either
        return
    try:
        grammar = json_schema_to_gbnf(json.dumps(schema))
    except Exception as exc:  # noqa: BLE001 (the converter raises anything on a schema it cannot read)
        raise RequestRefused(422, f"{where} cannot be made into a grammar: {type(exc).__name__}: {exc}") from None
    _check_grammar(grammar, f"{where} (as a grammar)", limits)


def _check_tools(body: dict, limits: RequestLimits) -> None:
    for key in ("tools", "functions"):
        items = body.get(key)
        if items is None:
            continue
        if not isinstance(items, list):
            raise RequestRefused(422, f"{key} must be a list")
        for i, item in enumerate(items):
            function = item.get("function", item) if isinstance(item, dict) else None
            if not isinstance(function, dict):
                raise RequestRefused(422, f"{key}[{i}] must be an object")
            if function.get("parameters") is not None:
                _check_schema(function["parameters"], f"{key}[{i}].parameters", limits)


def check_request(path: str, body: dict, limits: RequestLimits = RequestLimits()) -> None:
    """Refuse a parsed request to `path` the server cannot run safely. A `max_tokens` left out of a chat
    request, or null in any generating request, is set to `limits.max_tokens`.

    Raises:
        RequestRefused: 422 with the field and what it may be.
    """
    if path in ("/v1/chat/completions", "/v1/score"):
        _check_messages(body.get("messages"), limits)
    elif path in _GENERATING:
        _check_text(body.get("prompt", ""), "prompt", 1, limits)
    elif path in ("/extras/tokenize", "/extras/tokenize/count"):
        _check_text(body.get("input", ""), "input", None, limits)
    elif path == "/extras/detokenize":
        _check_tokens(body.get("tokens"), limits)
    elif path == "/v1/embeddings":
        raise RequestRefused(422, "this server computes no embeddings (its models are loaded without them)")
    if path not in _GENERATING:
        return
    if body.get("logprobs") or body.get("top_logprobs"):  # llama.cpp keeps the last token's logits only
        raise RequestRefused(422, "this server returns no logprobs (its models keep only the last token's logits); "
                                  "score candidate answers with POST /v1/score")
    if body.get("grammar") is not None:
        _check_grammar(body["grammar"], "grammar", limits)
    response_format = body.get("response_format")
    if response_format is not None:
        if not isinstance(response_format, dict):
            raise RequestRefused(422, "response_format must be an object")
        if response_format.get("schema") is not None:
            _check_schema(response_format["schema"], "response_format.schema", limits)
    _check_tools(body, limits)
    tokens = body.get("max_tokens")
    if tokens is None and (path == "/v1/chat/completions" or "max_tokens" in body):
        body["max_tokens"] = limits.max_tokens
    elif tokens is not None and (not isinstance(tokens, int) or isinstance(tokens, bool)
                                 or not 1 <= tokens <= limits.max_tokens):
        raise RequestRefused(422, f"max_tokens must be an integer from 1 to {limits.max_tokens}, got {tokens!r}")


def _refusal(status: int, reason: str) -> bytes:
    return json.dumps({"error": {"message": reason, "type": "invalid_request_error", "code": status},
                       "detail": reason}).encode()


class RequestGuard:
    """ASGI middleware in front of llama-cpp-python's app: each POST body read within `limits` and checked
    (`check_body`), then passed on unchanged (or with `max_tokens` filled in); a refused one is answered
    here with its 4xx status and reason. `GET /v1/models` is answered here from `models` (the served
    aliases), without waiting for the model."""

    def __init__(self, app, limits: RequestLimits = RequestLimits(), models: Sequence[str] = ()) -> None:
        self.app = app
        self.limits = limits
        self.models = list(models)

    async def __call__(self, scope, receive, send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        method, path = scope["method"], scope["path"]
        if method == "GET" and path == "/v1/models" and self.models:
            listing = {"object": "list", "data": [{"id": m, "object": "model", "owned_by": "me", "permissions": []}
                                                  for m in self.models]}
            await self._answer(send, 200, json.dumps(listing).encode())
            return
        if method != "POST":
            await self.app(scope, receive, send)
            return
        from anyio import to_thread

        try:
            raw = await self._read(scope, receive)
            # in a worker thread: a large body takes a second to parse and check, and other requests go on
            body = await to_thread.run_sync(check_body, path, raw, self.limits)
        except RequestRefused as refused:
            await self._answer(send, refused.status, _refusal(refused.status, refused.reason))
            return
        forwarded = json.dumps(body).encode() if path in _GENERATING else raw  # max_tokens may be filled in
        headers = [(k, v) for k, v in scope.get("headers", []) if k.lower() != b"content-length"]
        scope = {**scope, "headers": [*headers, (b"content-length", str(len(forwarded)).encode())]}
        sent = False

        async def replay():
            nonlocal sent
            if not sent:
                sent = True
                return {"type": "http.request", "body": forwarded, "more_body": False}
            return await receive()

        await self.app(scope, replay, send)

    async def _read(self, scope, receive) -> bytes:
        """The body; one over the limit is refused with 413, once the rest of it is read and dropped (up to
        `_DRAIN` times the limit), so that the client sees the answer rather than a reset connection."""
        cap = self.limits.body_bytes
        declared = dict(scope.get("headers", [])).get(b"content-length")
        if declared is not None and declared.isdigit() and int(declared) > cap:
            if int(declared) <= _DRAIN * cap:
                await self._drop(receive)
            raise RequestRefused(413, f"the request body has {int(declared)} bytes; at most {cap}")
        chunks, size = [], 0
        while True:
            message = await receive()
            if message["type"] == "http.disconnect":
                raise RequestRefused(400, "the client closed the request before sending its body")
            chunk = message.get("body", b"")
            size += len(chunk)
            if size > cap:
                chunks.clear()
                await self._drop(receive, message, size, _DRAIN * cap)
                raise RequestRefused(413, f"the request body has more than {cap} bytes; at most {cap}")
            chunks.append(chunk)
            if not message.get("more_body", False):
                return b"".join(chunks)

    @staticmethod
    async def _drop(receive, message=None, size: int = 0, most: int | None = None) -> None:
        """Read the rest of the body without keeping it (up to `most` bytes in all)."""
        while message is None or (message["type"] == "http.request" and message.get("more_body", False)):
            if most is not None and size > most:
                return
            message = await receive()
            size += len(message.get("body", b""))

    @staticmethod
    async def _answer(send, status: int, payload: bytes) -> None:
        await send({"type": "http.response.start", "status": status,
                    "headers": [(b"content-type", b"application/json"),
                                (b"content-length", str(len(payload)).encode())]})
        await send({"type": "http.response.body", "body": payload})
