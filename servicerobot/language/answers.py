"""Reading JSON out of a language model's answer text, and the error for an answer that holds none."""

from __future__ import annotations

import json
import re
from typing import Any

from servicerobot.language.base import LanguageModelError, Usage

__all__ = ["AnswerFormatError", "parse_json_answer", "strip_fences"]

_FENCE = re.compile(r"^```[A-Za-z0-9_-]*[ \t]*\n?(.*?)\n?```$", re.DOTALL)


class AnswerFormatError(LanguageModelError, ValueError):
    """The model answered, but not in the asked-for format (e.g. text that is not JSON).

    Unlike a server failure this is worth a retry with feedback. `text` is the whole answer and
    `usage` the tokens the answer cost (they were spent even though the answer is useless).
    """

    def __init__(self, message: str, text: str = "", usage: Usage | None = None):
        super().__init__(message)
        self.text = text
        self.usage = usage if usage is not None else Usage()


def strip_fences(text: str) -> str:
    """`text` without surrounding whitespace and without a Markdown code fence (```json ... ```)."""
    text = text.strip()
    match = _FENCE.match(text)
    return match.group(1).strip() if match else text


def parse_json_answer(text: str, who: str = "the model", usage: Usage | None = None) -> Any:
    """The JSON value in an answer: the whole text, a fenced block, or the outermost {...} in prose.

    Raises:
        AnswerFormatError: no JSON could be read; the message quotes the first 200 characters.
    """
    body = strip_fences(text or "")
    try:
        return json.loads(body)
    except json.JSONDecodeError as exc:
        error = exc
    start, end = body.find("{"), body.rfind("}")
    if 0 <= start < end:
        try:
            return json.loads(body[start:end + 1])
        except json.JSONDecodeError:
            pass
    raise AnswerFormatError(
        f"{who} did not answer valid JSON ({error.msg} at line {error.lineno} column {error.colno}); "
        f"the answer began: {(text or '')[:200]!r}", text or "", usage)
