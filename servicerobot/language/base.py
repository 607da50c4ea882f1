"""The `LanguageModel` protocol: chat messages in; text, parsed JSON and token usage out."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Protocol, runtime_checkable

from servicerobot.errors import ServiceRobotError

__all__ = ["Completion", "LanguageModel", "LanguageModelError", "Message", "Usage"]

Message = dict[str, str]  # {"role": "system" | "user" | "assistant", "content": "..."}


class LanguageModelError(ServiceRobotError, RuntimeError):
    """A language model could not answer (server unreachable, timeout after retries, refused request)."""


@dataclass
class Usage:
    """Token counts, summed over calls."""

    prompt_tokens: int = 0
    completion_tokens: int = 0
    calls: int = 0

    @property
    def total_tokens(self) -> int:
        return self.prompt_tokens + self.completion_tokens

    def add(self, other: Usage) -> None:
        self.prompt_tokens += other.prompt_tokens
        self.completion_tokens += other.completion_tokens
        self.calls += other.calls

    def to_json(self) -> dict:
        return {"prompt_tokens": self.prompt_tokens, "completion_tokens": self.completion_tokens,
                "calls": self.calls}


@dataclass(frozen=True)
class Completion:
    """One answer: the raw text, the parsed JSON when a schema was asked for, and its token usage."""

    text: str
    data: Any = None
    usage: Usage = field(default_factory=Usage)


@runtime_checkable
class LanguageModel(Protocol):
    """Anything that completes a chat; `schema` (a JSON schema) asks for structured JSON output."""

    name: str

    def complete(self, messages: list[Message], *, schema: dict | None = None,
                 temperature: float = 0.0) -> Completion:
        """Answer the conversation; raise `LanguageModelError` when no answer can be had."""
        ...
