"""The `LanguageModel` protocol: chat messages in; text, parsed JSON and token usage out."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any, Protocol, runtime_checkable

from servicerobot.errors import ServiceRobotError

__all__ = ["Completion", "LanguageModel", "LanguageModelError", "Message", "Scored", "ScoringModel", "Usage"]

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


@dataclass
class Scored:
    """Log-probabilities of candidate answers: one list per candidate, a value per token (the end of the
    turn included), and what evaluating them cost."""

    logprobs: list[list[float]]
    prompt_tokens: int = 0  # prompt tokens evaluated (a prefix kept from the previous call is not counted)
    candidate_tokens: int = 0  # tokens evaluated for the candidates (shared prefixes once)
    seconds: float = 0.0
    cut: bool = False  # a beam search stopped at its time budget: only its likeliest answer was finished

    def totals(self) -> list[float]:
        """Each candidate's log-probability (the sum over its tokens; -inf for one a beam search pruned)."""
        return [float(sum(lp)) if lp else float("-inf") for lp in self.logprobs]

    @property
    def usage(self) -> Usage:
        return Usage(prompt_tokens=self.prompt_tokens + self.candidate_tokens, completion_tokens=0, calls=1)


@runtime_checkable
class ScoringModel(Protocol):
    """A model that scores given answers to a chat instead of writing one (`servicerobot llm serve`)."""

    name: str

    def score(self, messages: list[Message], answers: list[str], *, slot: str | None = None,
              beam: int | None = None, keep: Sequence[int] = (), budget: float | None = None) -> Scored:
        """Log-probabilities of each answer as the assistant's reply (with `beam`, only of those a beam search
        over the answers keeps, and of those whose indices are in `keep`; the others get empty lists; past
        `budget` seconds a beam search finishes only its likeliest path and says so in `Scored.cut`); raise
        `LanguageModelError` on failure."""
        ...
