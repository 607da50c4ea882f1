"""`Cassette`: record a language model's answers to a JSON file, and replay them without the model.

Each exchange is keyed by the SHA-256 of the canonical JSON of (messages, schema, temperature). Replay
serves the answers recorded under a key in the order they were recorded (the last one again once they
run out), so a run that asked the same question twice replays exactly. Answers that were not valid JSON
are recorded too and raise the same `AnswerFormatError` on replay, so retry loops replay faithfully.

The file holds the messages, the answers and token counts, never request headers or an API key; as a
last guard, the value of `OPENAI_API_KEY` is redacted from anything written. Writes are atomic.
"""

from __future__ import annotations

import hashlib
import json
import os
import threading
from collections.abc import Iterable
from pathlib import Path
from typing import Any

from servicerobot.files import write_atomic
from servicerobot.language.answers import AnswerFormatError
from servicerobot.language.base import Completion, LanguageModel, LanguageModelError, Message, Usage

__all__ = ["CASSETTE_FORMAT", "Cassette", "cassette_key"]

CASSETTE_FORMAT = "servicerobot-cassette/1"
_MODES = ("replay", "record", "auto")


def cassette_key(messages: Iterable[Message], schema: dict | None, temperature: float) -> str:
    """The SHA-256 of the canonical JSON of one request (what a cassette looks answers up by)."""
    canonical = json.dumps({"messages": [dict(m) for m in messages], "schema": schema,
                            "temperature": float(temperature)},
                           sort_keys=True, separators=(",", ":"), ensure_ascii=False)
    return hashlib.sha256(canonical.encode("utf-8")).hexdigest()


def _redact(text: str) -> str:
    key = os.environ.get("OPENAI_API_KEY", "")
    return text.replace(key, "<redacted>") if len(key) >= 8 else text


class Cassette:
    """A `LanguageModel` that records another model's answers or replays recorded ones.

    Args:
        path: the cassette file (JSON).
        mode: "replay" serves recorded answers only; "record" starts a new cassette and asks `model`
            every time; "auto" replays what is recorded and asks `model` (and records) otherwise.
        model: the model to record; required for "record", optional for "auto".

    Raises:
        ValueError: unknown mode, or "record" without a model.
        LanguageModelError: "replay" of a file that does not exist or is not a cassette.

    Examples:
        >>> cassette = Cassette("episode.json", mode="record", model=OpenAIModel())  # doctest: +SKIP
        >>> Cassette("episode.json").complete(messages)  # the same answers, offline  # doctest: +SKIP
    """

    def __init__(self, path: str | os.PathLike, mode: str = "replay", model: LanguageModel | None = None):
        if mode not in _MODES:
            raise ValueError(f"Cassette mode must be one of {_MODES}, got {mode!r}")
        if mode == "record" and model is None:
            raise ValueError('Cassette(mode="record") needs the model to record, e.g. model=OpenAIModel()')
        self.path = Path(path)
        self.mode = mode
        self.model = model
        self.hits = 0
        self.misses = 0
        self._lock = threading.Lock()
        self._exchanges: list[dict] = []
        self._recorded_model = model.name if model is not None else None
        if mode != "record":
            if self.path.exists():
                self._load()
            elif mode == "replay":
                raise LanguageModelError(
                    f"no cassette at {self.path}; record one first with "
                    f'Cassette({str(self.path)!r}, mode="record", model=OpenAIModel(...))')
        self._index: dict[str, list[dict]] = {}
        for exchange in self._exchanges:
            self._index.setdefault(exchange["key"], []).append(exchange)
        self._served: dict[str, int] = {}
        self.name = f"cassette:{self._recorded_model or self.path.stem}"

    def __repr__(self) -> str:
        return f"Cassette({str(self.path)!r}, mode={self.mode!r}, model={self.model!r})"

    def __len__(self) -> int:
        return len(self._exchanges)

    def _load(self) -> None:
        try:
            doc = json.loads(self.path.read_text(encoding="utf-8"))
        except (OSError, json.JSONDecodeError) as exc:
            raise LanguageModelError(f"cannot read cassette {self.path}: {exc}") from exc
        if not isinstance(doc, dict) or doc.get("format") != CASSETTE_FORMAT \
                or not isinstance(doc.get("exchanges"), list):
            raise LanguageModelError(f"{self.path} is not a {CASSETTE_FORMAT} file; re-record it with "
                                     'mode="record" and a model')
        self._exchanges = doc["exchanges"]
        self._recorded_model = self._recorded_model or doc.get("model")

    def _save(self) -> None:
        doc = {"format": CASSETTE_FORMAT, "model": self._recorded_model, "exchanges": self._exchanges}
        text = _redact(json.dumps(doc, indent=1, ensure_ascii=False, sort_keys=True)) + "\n"
        write_atomic(self.path, text)

    # ------------------------------------------------------------------ LanguageModel
    def complete(self, messages: list[Message], *, schema: dict | None = None,
                 temperature: float = 0.0) -> Completion:
        """The recorded answer to this request (replay), or the wrapped model's answer, recorded.

        Raises:
            LanguageModelError: replay found no answer for the request (re-record the cassette).
            AnswerFormatError: the recorded (or live) answer was not valid JSON.
        """
        key = cassette_key(messages, schema, temperature)
        with self._lock:
            recorded = self._index.get(key)
            if recorded and self.mode != "record":
                n = self._served.get(key, 0)
                self._served[key] = n + 1
                self.hits += 1
                return self._replay(recorded[min(n, len(recorded) - 1)])
            if self.model is None:
                last = next((m.get("content", "") for m in reversed(messages)), "")
                raise LanguageModelError(
                    f"cassette {self.path} has no answer for this request (key {key[:12]}; last message "
                    f"{last[:120]!r}); the prompts changed since it was recorded. Re-record it with "
                    f'Cassette({str(self.path)!r}, mode="record", model=OpenAIModel(...))')
            self.misses += 1
        exchange: dict[str, Any] = {"key": key, "messages": [dict(m) for m in messages], "schema": schema,
                                    "temperature": float(temperature)}
        try:
            completion = self.model.complete(messages, schema=schema, temperature=temperature)
        except AnswerFormatError as exc:
            exchange.update(text=exc.text, data=None, usage=exc.usage.to_json(), error=str(exc))
            self._record(key, exchange)
            raise
        exchange.update(text=completion.text, data=completion.data, usage=completion.usage.to_json())
        self._record(key, exchange)
        return completion

    def _record(self, key: str, exchange: dict) -> None:
        with self._lock:
            self._exchanges.append(exchange)
            self._index.setdefault(key, []).append(exchange)
            self._served[key] = len(self._index[key])
            self._save()

    @staticmethod
    def _replay(exchange: dict) -> Completion:
        u = exchange.get("usage") or {}
        usage = Usage(int(u.get("prompt_tokens", 0)), int(u.get("completion_tokens", 0)), int(u.get("calls", 1)))
        if exchange.get("error"):
            raise AnswerFormatError(exchange["error"], exchange.get("text", ""), usage)
        return Completion(text=exchange.get("text", ""), data=exchange.get("data"), usage=usage)
