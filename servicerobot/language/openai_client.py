"""`OpenAIModel`: a `LanguageModel` for the OpenAI API and OpenAI-compatible servers (vLLM, Ollama, llama.cpp).

The `openai` package is imported when a model is built, not when this module is imported; without it
`DependencyNotInstalled` says how to install the `llm` extra. Structured output asks for a JSON
schema first and falls back to JSON mode, then to plain text with the schema in the prompt, for servers
that reject `json_schema`; the answer's JSON is always parsed from the text. Timeouts, broken
connections, bodies that are not JSON, 429 and 5xx answers are retried with exponential backoff (a
`Retry-After` is honoured, up to a minute); answers that are not JSON of the asked-for outer shape are
asked for again. The API key is handed to the client
and nowhere else: it is not an attribute, not in `repr`, not pickled, and not in any error message.
"""

from __future__ import annotations

import email.utils
import json
import os
import re
import time
from collections.abc import Callable, Sequence
from typing import Any

from servicerobot.errors import DependencyNotInstalled, install_hint
from servicerobot.language.answers import AnswerFormatError, parse_json_answer
from servicerobot.language.base import Completion, LanguageModelError, Message, Scored, Usage

__all__ = ["OpenAIModel"]

_FORMATS = ("json_schema", "json_object", "text")
_NO_KEY = "not-needed"  # local servers accept any key, but the client insists on one
_MAX_RETRY_AFTER = 60.0  # longest wait a server's Retry-After may ask for between two attempts
_JSON_TYPES = {"object": dict, "array": list, "string": str, "number": (int, float), "integer": int,
               "boolean": bool, "null": type(None)}
_HINT = ("Check that OPENAI_BASE_URL (or base_url) points at the server, e.g. http://localhost:8000/v1, "
         "that the server is running, and that it serves the model {model!r}.")


def _import_openai():
    try:
        import openai
    except ImportError as exc:
        raise DependencyNotInstalled(
            f"OpenAIModel needs the openai package: {install_hint('llm')}") from exc
    return openai


def _schema_name(schema: dict) -> str:
    name = re.sub(r"[^A-Za-z0-9_-]+", "_", str(schema.get("title") or "answer")).strip("_")
    return name[:64] or "answer"


def _with_schema_instruction(messages: list[Message], schema: dict) -> list[Message]:
    """The conversation with the JSON schema spelled out (for servers without `json_schema` support)."""
    note = ("Answer with a single JSON object and nothing else (no prose, no code fence). "
            f"It must match this JSON schema:\n{json.dumps(schema, sort_keys=True)}")
    out = [dict(m) for m in messages]
    for m in out:
        if m.get("role") == "system":
            m["content"] = f"{m.get('content', '')}\n\n{note}"
            return out
    return [{"role": "system", "content": note}, *out]


def _mentions_response_format(exc: Exception) -> bool:
    text = f"{exc} {getattr(exc, 'body', '')} {getattr(exc, 'param', '')}".lower()
    return any(word in text for word in ("response_format", "json_schema", "response format", "json_object"))


class OpenAIModel:
    """A chat model behind the OpenAI API or an OpenAI-compatible server.

    Args:
        model: the model name the server knows (e.g. "gpt-4o-mini", "Qwen/Qwen2.5-7B-Instruct").
        base_url: the server's API root, e.g. "http://localhost:8000/v1"; default `OPENAI_BASE_URL`,
            else api.openai.com.
        api_key: default `OPENAI_API_KEY`; a placeholder is used when only a base URL is given.
        timeout: seconds per request.
        max_retries: retries after a timeout, connection error, 429 or 5xx (so at most
            `max_retries + 1` requests per call).
        backoff: seconds before the first retry; doubled for each further one.
        seed: sent to the server for more reproducible sampling (where supported).
        grammar: the server is llama.cpp (llama-cpp-python), which compiles
            `response_format: {"type": "json_object", "schema": ...}` into a grammar: send the schema that
            way (every answer then parses) and leave it out of the prompt.
        slots: ask for the model `<model>/<schema title>`, so a server with one context per kind of request
            (`servicerobot llm serve`) keeps each kind's prompt prefix evaluated; a server that does not
            know the name answers with its default model.
        max_tokens: the most tokens an answer may have (None: the server's limit). A small model under a
            grammar can go on adding conjuncts until its context is full, and a server keeps generating after
            the client gives up, so bound it: `local_interpreter` asks for at most `ANSWER_TOKENS`.
        sleep: the function that waits between retries (tests pass a fake).

    Raises:
        DependencyNotInstalled: the `openai` package is missing.
        LanguageModelError: no API key and no base URL are given or set in the environment.
    """

    def __init__(self, model: str = "gpt-4o-mini", *, base_url: str | None = None, api_key: str | None = None,
                 timeout: float = 30.0, max_retries: int = 3, backoff: float = 1.0, seed: int | None = None,
                 sleep: Callable[[float], None] = time.sleep, grammar: bool = False, slots: bool = False,
                 max_tokens: int | None = None):
        if max_retries < 0 or timeout <= 0 or backoff < 0 or (max_tokens is not None and max_tokens < 1):
            raise ValueError(f"need max_retries >= 0, timeout > 0, backoff >= 0, max_tokens >= 1 or None; got "
                             f"{max_retries}, {timeout}, {backoff}, {max_tokens}")
        self.model = model
        self.name = f"openai:{model}"
        self.base_url = base_url or os.environ.get("OPENAI_BASE_URL") or None
        self.timeout = float(timeout)
        self.max_retries = int(max_retries)
        self.backoff = float(backoff)
        self.seed = seed
        self.sleep = sleep
        self.grammar = bool(grammar)
        self.slots = bool(slots)
        self.max_tokens = max_tokens
        self._format = 0  # index into _FORMATS: how structured output is asked for (falls back once rejected)
        self._client = self._build_client(api_key)

    @classmethod
    def from_env(cls, model: str | None = None, **kwargs: Any) -> OpenAIModel | None:
        """A model configured from `OPENAI_BASE_URL` / `OPENAI_API_KEY` (and `OPENAI_MODEL` for the name);
        None when neither the URL nor the key is set."""
        if not os.environ.get("OPENAI_BASE_URL") and not os.environ.get("OPENAI_API_KEY"):
            return None
        return cls(model or os.environ.get("OPENAI_MODEL") or "gpt-4o-mini", **kwargs)

    def _build_client(self, api_key: str | None):
        openai = _import_openai()
        key = api_key or os.environ.get("OPENAI_API_KEY") or (_NO_KEY if self.base_url else None)
        if not key:
            raise LanguageModelError(
                "no API key for OpenAIModel: set OPENAI_API_KEY (or pass api_key=...), or set OPENAI_BASE_URL "
                "(or base_url=...) to use a local OpenAI-compatible server that needs no key")
        return openai.OpenAI(api_key=key, base_url=self.base_url, timeout=self.timeout, max_retries=0)

    def __repr__(self) -> str:
        return (f"OpenAIModel(model={self.model!r}, base_url={self.base_url!r}, timeout={self.timeout}, "
                f"max_retries={self.max_retries})")

    def __getstate__(self) -> dict:
        # the client holds the key: never pickle it; the copy rebuilds its client from the environment
        state = self.__dict__.copy()
        state["_client"] = None
        return state

    # ------------------------------------------------------------------ calls
    def complete(self, messages: list[Message], *, schema: dict | None = None,
                 temperature: float = 0.0) -> Completion:
        """Answer the conversation; with `schema`, `Completion.data` holds the parsed JSON answer.

        An answer that is not JSON, is cut off, or has the wrong outer shape (a list for an object, a
        required key missing) is asked for again, up to `max_retries` more times; the usage of every attempt is counted.

        Raises:
            AnswerFormatError: a schema was asked for and no answer was JSON of its shape (a `LanguageModelError`).
            LanguageModelError: the server failed after the retries, or refused the request.
        """
        spent = Usage()
        for attempt in range(self.max_retries + 1):
            try:
                completion = self._complete_once(messages, schema, temperature)
                problem = _shape_problem(completion.data, schema) if schema is not None else None
                if problem is None:
                    spent.add(completion.usage)
                    return Completion(completion.text, completion.data, spent)
                error = AnswerFormatError(f"{self.name}'s answer does not have the asked-for shape: {problem}; "
                                          f"the answer began: {completion.text[:200]!r}", completion.text,
                                          completion.usage)
            except AnswerFormatError as exc:
                error = exc
            spent.add(error.usage)
        tries = self.max_retries + 1
        raise AnswerFormatError(f"{error} ({tries} answer(s), none usable)", error.text, spent) from None

    def _complete_once(self, messages: list[Message], schema: dict | None, temperature: float) -> Completion:
        if self._client is None:
            self._client = self._build_client(None)
        while True:
            fmt = _FORMATS[self._format] if schema is not None else "text"
            model = f"{self.model}/{schema['title']}" if self.slots and schema and schema.get("title") else self.model
            kwargs: dict[str, Any] = {"model": model, "temperature": temperature,
                                      "messages": [dict(m) for m in messages]}
            if self.seed is not None:
                kwargs["seed"] = self.seed
            if self.max_tokens is not None:
                kwargs["max_tokens"] = self.max_tokens
            if schema is not None and self.grammar:
                kwargs["response_format"] = {"type": "json_object", "schema": schema}
            elif fmt == "json_schema":
                kwargs["response_format"] = {"type": "json_schema", "json_schema": {
                    "name": _schema_name(schema), "schema": schema, "strict": False}}
            elif schema is not None:
                kwargs["messages"] = _with_schema_instruction(kwargs["messages"], schema)
                if fmt == "json_object":
                    kwargs["response_format"] = {"type": "json_object"}
            try:
                response = self._request(kwargs)
                break
            except _FormatRejected:
                if self.grammar:
                    raise LanguageModelError(
                        f"{self.name} at {self.base_url} rejected a JSON-schema grammar (response_format "
                        "json_object with a schema); grammar=True needs llama-cpp-python's server "
                        "(servicerobot llm serve)") from None
                self._format += 1  # the server will not support it later either: remember
        return self._completion(response, schema)

    def score(self, messages: list[Message], answers: list[str], *, slot: str | None = None,
              beam: int | None = None, keep: Sequence[int] = (), budget: float | None = None) -> Scored:
        """Log-probabilities of each answer as the whole assistant reply, from a server with servicerobot's
        `POST /v1/score` (`servicerobot llm serve`); with `slots`, scored in the context of `slot`.

        Raises:
            LanguageModelError: the server failed after the retries, refused, or cannot score.
        """
        if self._client is None:
            self._client = self._build_client(None)
        body = {"model": f"{self.model}/{slot}" if self.slots and slot else self.model,
                "messages": [dict(m) for m in messages], "answers": list(answers)}
        if beam is not None:
            body["beam"] = int(beam)
            if keep:
                body["keep"] = sorted({int(i) for i in keep})
            if budget is not None:
                body["budget_s"] = float(budget)
        t0 = time.perf_counter()
        data = self._request(body, call=lambda: self._client.post("/score", body=body, cast_to=object))
        logprobs = data.get("logprobs") if isinstance(data, dict) else None
        if not isinstance(logprobs, list) or len(logprobs) != len(answers) or not all(
                isinstance(lp, list) and all(isinstance(v, (int, float)) for v in lp) for lp in logprobs):
            raise LanguageModelError(f"{self.name} at {self.base_url} answered /score without one list of "
                                     f"log-probabilities per answer ({len(answers)} asked)")
        usage = data.get("usage") or {}
        return Scored([[float(v) for v in lp] for lp in logprobs], int(usage.get("prompt_tokens") or 0),
                      int(usage.get("candidate_tokens") or 0), time.perf_counter() - t0, cut=bool(usage.get("cut")))

    def _request(self, kwargs: dict, call: Callable[[], Any] | None = None):
        openai = _import_openai()
        attempts = self.max_retries + 1
        failure = ""
        start = time.monotonic()
        for attempt in range(attempts):
            wait = self.backoff * 2 ** attempt
            try:
                if call is not None:
                    return call()
                return self._client.chat.completions.create(**kwargs)
            except openai.APITimeoutError:
                failure = f"no answer within the {self.timeout:g} s timeout"
            except openai.APIConnectionError as exc:
                failure = f"cannot connect or the connection broke ({exc}: {exc.__cause__ or ''})"
            except openai.APIStatusError as exc:
                status = exc.status_code
                if status == 429 or status >= 500:
                    failure = f"HTTP {status}: {exc.message}"
                    asked = _retry_after(exc)
                    if asked is not None:  # the server says when to come back: honour it (within reason)
                        wait = max(wait, min(asked, _MAX_RETRY_AFTER))
                elif status in (400, 422) and "response_format" in kwargs and _mentions_response_format(exc):
                    raise _FormatRejected from None
                elif status in (404, 405) and call is not None:
                    raise LanguageModelError(
                        f"{self.name} at {self.base_url or 'api.openai.com'} cannot score answers (POST /score: "
                        f"HTTP {status}); scoring needs `servicerobot llm serve`; with another server use the "
                        "generating interpreter (LLMInterpreter)") from None
                else:
                    raise LanguageModelError(self._refusal(status, exc.message)) from None
            except ValueError as exc:  # a 200 whose body is not JSON (a proxy's HTML page, a cut-off body)
                failure = f"the response body is not JSON ({exc})"
            if attempt + 1 < attempts:
                self.sleep(wait)
        raise LanguageModelError(
            f"{self.name} at {self.base_url or 'api.openai.com'} failed {attempts} time(s) in "
            f"{time.monotonic() - start:.1f} s; last: {failure}. " + _HINT.format(model=self.model))

    def _refusal(self, status: int, message: str) -> str:
        where = f"{self.name} at {self.base_url or 'api.openai.com'}"
        if status in (401, 403):
            fix = "Check OPENAI_API_KEY (or api_key=...)."
        elif status == 404:
            fix = f"Check the model name {self.model!r} and that OPENAI_BASE_URL ends with the API root (/v1)."
        else:
            fix = _HINT.format(model=self.model)
        return f"{where} refused the request (HTTP {status}: {message}). {fix}"

    def _completion(self, response, schema: dict | None) -> Completion:
        raw = getattr(response, "usage", None)
        usage = Usage(prompt_tokens=int(getattr(raw, "prompt_tokens", 0) or 0),
                      completion_tokens=int(getattr(raw, "completion_tokens", 0) or 0), calls=1)
        choices = getattr(response, "choices", None) or []
        if not choices:
            raise AnswerFormatError(f"{self.name} returned no choices. " + _HINT.format(model=self.model), "", usage)
        message = choices[0].message
        text = message.content or ""
        if not text and getattr(message, "refusal", None):
            raise AnswerFormatError(f"{self.name} refused to answer: {message.refusal}", "", usage)
        if schema is None:
            return Completion(text=text, data=None, usage=usage)
        try:
            data = parse_json_answer(text, self.name, usage)
        except AnswerFormatError as exc:
            if getattr(choices[0], "finish_reason", None) == "length":
                raise AnswerFormatError(f"{exc} (the answer was cut off at the token limit)", text, usage) from None
            raise
        return Completion(text=text, data=data, usage=usage)


def _retry_after(exc: Exception) -> float | None:
    """Seconds a 429/5xx answer asks the client to wait (`Retry-After`: seconds or an HTTP date; or
    `retry-after-ms`), None when it does not say."""
    headers = getattr(getattr(exc, "response", None), "headers", None) or {}
    try:
        if headers.get("retry-after-ms"):
            return max(0.0, float(headers["retry-after-ms"]) / 1000)
        value = headers.get("retry-after")
        if not value:
            return None
        try:
            return max(0.0, float(value))
        except ValueError:
            when = email.utils.parsedate_to_datetime(value)
            return max(0.0, when.timestamp() - time.time())
    except (TypeError, ValueError, OverflowError):
        return None


def _shape_problem(data: Any, schema: dict) -> str | None:
    """What keeps `data` from the schema's outer shape (its type and required keys), or None. Deeper
    problems are the interpreter's to explain and feed back."""
    names = schema.get("type")
    names = names if isinstance(names, list) else [names] if names else []
    if names and not any(isinstance(data, _JSON_TYPES.get(n, object)) for n in names):
        return f"it should be {' or '.join(names)}, got {type(data).__name__}"
    if isinstance(data, dict):
        missing = [k for k in schema.get("required", ()) if k not in data]
        if missing:
            return f"it lacks {', '.join(map(repr, missing))}"
    return None


class _FormatRejected(Exception):
    """The server rejected the `response_format` (internal: fall back to the next one)."""
