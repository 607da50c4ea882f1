"""Language: the `LanguageModel` protocol, the OpenAI-compatible client, record/replay cassettes, prompts,
and the interpreters that turn what people say into memory deltas and PDDL goals.

Importing this package does not import `openai`; `OpenAIModel` imports it when a model is built.
"""

from servicerobot.language.answers import AnswerFormatError, parse_json_answer
from servicerobot.language.base import Completion, LanguageModel, LanguageModelError, Message, Usage
from servicerobot.language.cassette import Cassette, cassette_key
from servicerobot.language.interpreter import (
    UTTERANCE_KINDS,
    Context,
    Interpreter,
    QueryEdge,
    QueryGraph,
    QueryNode,
    entity_phrase,
)
from servicerobot.language.llm_interpreter import LLMInterpreter, format_entities, format_facts, load_prompt
from servicerobot.language.openai_client import OpenAIModel

__all__ = [
    "UTTERANCE_KINDS",
    "AnswerFormatError",
    "Cassette",
    "Completion",
    "Context",
    "Interpreter",
    "LLMInterpreter",
    "LanguageModel",
    "LanguageModelError",
    "Message",
    "OpenAIModel",
    "QueryEdge",
    "QueryGraph",
    "QueryNode",
    "Usage",
    "cassette_key",
    "entity_phrase",
    "format_entities",
    "format_facts",
    "load_prompt",
    "parse_json_answer",
]
