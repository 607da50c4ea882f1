"""LLM interpreter (being written)."""

__all__ = ["LLMRelaxInterpreter"]


class LLMRelaxInterpreter:
    name = "llm"
