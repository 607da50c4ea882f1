"""`LLMInterpreter`: the `Interpreter` protocol answered by a language model with JSON-schema outputs.

Prompts are package data (`servicerobot/language/prompts/*.txt`, L3M+P style): the domain's
predicates, the entity catalogue as `name (type): phrase`, the retrieved facts as
`subject -> predicate -> object` lines, and the utterance. Messages from earlier rejected attempts
(`feedback`) are added as one more user message listing each problem, so the model can correct
itself. Answers are only parsed here; checking them against memory and the domain is the caller's
verifier's job.
"""

from __future__ import annotations

import re
import string
from collections.abc import Mapping, Sequence
from functools import cache
from importlib import resources
from typing import Any

from servicerobot.errors import PDDLParseError
from servicerobot.language.answers import AnswerFormatError, parse_json_answer, strip_fences
from servicerobot.language.base import LanguageModel, LanguageModelError, Message, Usage
from servicerobot.language.compact import compact_request
from servicerobot.language.interpreter import (
    UTTERANCE_KINDS,
    Context,
    QueryEdge,
    QueryGraph,
    QueryNode,
    entity_phrase,
)
from servicerobot.memory.triplets import Delta, DeltaFormatError, atom_to_triplet
from servicerobot.pddl import Atom, Domain, parse_sexpr, write_domain

__all__ = [
    "CLASSIFY_SCHEMA",
    "ENTITIES_SCHEMA",
    "GOAL_SCHEMA",
    "QUERY_GRAPH_SCHEMA",
    "UPDATE_SCHEMA",
    "LLMInterpreter",
    "format_entities",
    "format_facts",
    "load_prompt",
]

_TRIPLET = {"type": "object", "additionalProperties": False, "required": ["subject", "relation", "object"],
            "properties": {"subject": {"type": "string"}, "relation": {"type": "string"},
                           "object": {"type": "string"}}}
UPDATE_SCHEMA = {"title": "update", "type": "object", "additionalProperties": False, "required": ["REMOVE", "ADD"],
                 "properties": {"REMOVE": {"type": "array", "items": _TRIPLET},
                                "ADD": {"type": "array", "items": _TRIPLET}}}
GOAL_SCHEMA = {"title": "goal", "type": "object", "additionalProperties": False, "required": ["goal"],
               "properties": {"goal": {"type": "string"}}}
CLASSIFY_SCHEMA = {"title": "kind", "type": "object", "additionalProperties": False, "required": ["kind"],
                   "properties": {"kind": {"type": "string", "enum": list(UTTERANCE_KINDS)}}}
ENTITIES_SCHEMA = {"title": "entities", "type": "object", "additionalProperties": False,
                   "required": ["entities"],
                   "properties": {"entities": {"type": "array", "items": {"type": "string"}}}}
QUERY_GRAPH_SCHEMA = {
    "title": "query_graph", "type": "object", "additionalProperties": False, "required": ["nodes", "edges"],
    "properties": {
        "nodes": {"type": "array", "items": {
            "type": "object", "additionalProperties": False, "required": ["id", "text", "type"],
            "properties": {"id": {"type": "string"}, "text": {"type": "string"},
                           "type": {"type": ["string", "null"]}}}},
        "edges": {"type": "array", "items": {
            "type": "object", "additionalProperties": False, "required": ["source", "relation", "target"],
            "properties": {"source": {"type": "string"}, "relation": {"type": "string"},
                           "target": {"type": "string"}}}}}}

_SECTION = re.compile(r"^@@ (system|user)[ \t]*$", re.MULTILINE)


@cache
def load_prompt(name: str) -> dict[str, string.Template]:
    """The prompt `prompts/<name>.txt` as templates: {"system": ..., "user": ...} (or {"text": ...}
    for a file without `@@ system` / `@@ user` sections)."""
    text = resources.files("servicerobot.language").joinpath("prompts", f"{name}.txt").read_text("utf-8")
    parts = _SECTION.split(text)
    if len(parts) == 1:
        return {"text": string.Template(text.strip())}
    return {role: string.Template(body.strip()) for role, body in zip(parts[1::2], parts[2::2])}


def format_entities(entities: Mapping[str, Mapping]) -> str:
    """The catalogue as sorted `name (type): phrase` lines."""
    return "\n".join(f"{name} ({info.get('type', 'object')}): {entity_phrase(info)}"
                     for name, info in sorted(entities.items())) or "(none)"


def format_facts(facts: frozenset[Atom] | Sequence[Atom], limit: int) -> str:
    """Facts as sorted `subject -> predicate -> object` lines, at most `limit` of them."""
    lines = []
    for atom in facts:
        if len(atom.args) in (1, 2):
            s, p, o = atom_to_triplet(atom)
            lines.append(f"{s} -> {p} -> {'true' if o is True else o}")
    lines.sort()  # by subject: an entity's facts stay together
    if len(lines) > limit:
        lines = lines[:limit] + [f"... ({len(lines) - limit} more facts not shown)"]
    return "\n".join(lines) or "(none)"


def _format_predicates(domain: Domain) -> str:
    out = []
    for name, pred in domain.predicates.items():
        types = [typ for _, typ in pred.params]
        if len(types) == 2:
            out.append(f"- {name}({types[0]}, {types[1]}): triplet [{types[0]}, \"{name}\", {types[1]}]")
        elif len(types) == 1:
            out.append(f"- {name}({types[0]}): triplet [{types[0]}, \"{name}\", \"true\"]")
    return "\n".join(out)


def _format_types(domain: Domain) -> str:
    return ", ".join(f"{t}: {parent}" for t, parent in domain.types.parents.items())


def _feedback_turn(feedback: Sequence[str]) -> list[Message]:
    """One more user message listing the problems of earlier rejected answers (none without problems)."""
    problems = [str(p).strip() for p in feedback if str(p).strip()]
    if not problems:
        return []
    listing = "\n".join(f"- {p}" for p in problems)
    return [{"role": "user", "content": load_prompt("feedback")["text"].substitute(problems=listing)}]


def _normal_name(name: str) -> str:
    return re.sub(r"[\s-]+", "_", name.strip().lower())


class LLMInterpreter:
    """An `Interpreter` backed by a `LanguageModel` (an `OpenAIModel`, or a `Cassette` replaying one).

    Args:
        model: the language model.
        max_facts: at most this many retrieved facts go into a prompt (sorted, the rest cut).
        temperature: the sampling temperature of every call.
        prompts: "full" (the L3M+P-style prompts) or "compact" (short prompts with few-shot turns and
            enum-constrained schemas for small local models: `servicerobot.language.compact`).

    Each call asks once; retrying with `feedback` is the caller's loop. Malformed answers raise
    `DeltaFormatError` (updates, entities, graphs) or `PDDLParseError` (goals), both `ValueError`s
    whose messages are fit to be fed back; `LanguageModelError` means the model could not be reached.
    """

    def __init__(self, model: LanguageModel, *, max_facts: int = 300, temperature: float = 0.0,
                 prompts: str = "full"):
        if prompts not in ("full", "compact"):
            raise ValueError(f'LLMInterpreter prompts must be "full" or "compact", got {prompts!r}')
        self.model = model
        self.max_facts = int(max_facts)
        self.temperature = float(temperature)
        self.prompts = prompts
        self.name = f"llm:{model.name}" + ("+compact" if prompts == "compact" else "")
        self.usage = Usage()

    def __repr__(self) -> str:
        return f"LLMInterpreter({self.model!r}, max_facts={self.max_facts})"

    # ------------------------------------------------------------------ plumbing
    def _messages(self, prompt: str, feedback: Sequence[str] = (), **values: Any) -> list[Message]:
        templates = load_prompt(prompt)
        messages = [{"role": role, "content": templates[role].substitute(values)} for role in ("system", "user")]
        return messages + _feedback_turn(feedback)

    def _ask(self, prompt: str, schema: dict, feedback: Sequence[str] = (), **values: Any) -> Any:
        """Ask the model; the parsed JSON answer. Bad JSON raises `AnswerFormatError` (usage counted)."""
        if self.prompts == "compact":
            messages, schema = compact_request(prompt, values["text"], values["speaker"], values.get("context"),
                                               max_facts=self.max_facts, limit=int(values.get("limit", 40)))
            messages += _feedback_turn(feedback)
        else:
            messages = self._messages(prompt, feedback, **values)
        try:
            completion = self.model.complete(messages, schema=schema, temperature=self.temperature)
        except AnswerFormatError as exc:
            self.usage.add(exc.usage)
            raise
        self.usage.add(completion.usage)
        if completion.data is not None:
            return completion.data
        return parse_json_answer(completion.text, self.model.name)

    def _context_values(self, text: str, speaker: str, context: Context) -> dict[str, str]:
        if self.prompts == "compact":  # compact_request formats the context itself
            return {"text": text.strip(), "speaker": speaker or "Someone", "context": context}
        return {"text": text.strip(), "speaker": speaker or "Someone", "robot": context.robot,
                "domain_name": context.domain.name, "entities": format_entities(context.entities),
                "facts": format_facts(context.facts, self.max_facts)}

    # ------------------------------------------------------------------ Interpreter
    def classify(self, text: str, speaker: str, context: Context | None = None) -> str:
        """"task" or "update"."""
        try:
            data = self._ask("classify", CLASSIFY_SCHEMA, text=text.strip(), speaker=speaker or "Someone")
        except AnswerFormatError as exc:  # the caller names the utterance
            raise LanguageModelError(f"the answer was not usable JSON: {exc}") from exc
        kind = str(data.get("kind", "")).strip().lower() if isinstance(data, Mapping) else ""
        if kind not in UTTERANCE_KINDS:
            raise LanguageModelError(f"{self.model.name} classified {text!r} as {data!r}; expected "
                                     '{"kind": "task"} or {"kind": "update"}')
        return kind

    def interpret_update(self, text: str, speaker: str, context: Context,
                         feedback: Sequence[str] = ()) -> Delta:
        """The REMOVE/ADD answer as a `Delta`.

        Raises:
            DeltaFormatError: the answer is not JSON or not REMOVE/ADD triplets (feed the message back).
        """
        values = self._context_values(text, speaker, context)
        values.update(predicates=_format_predicates(context.domain), types=_format_types(context.domain))
        try:
            data = self._ask("update", UPDATE_SCHEMA, feedback, **values)
        except AnswerFormatError as exc:
            raise DeltaFormatError(f"the answer was not valid JSON: {exc}") from exc
        return Delta.from_json(data)

    def interpret_task(self, text: str, speaker: str, context: Context, feedback: Sequence[str] = ()) -> str:
        """The goal formula, stripped, parentheses checked; several formulas are joined with `and`.

        Raises:
            PDDLParseError: no goal, or a goal that is not one balanced s-expression (feed it back).
        """
        values = self._context_values(text, speaker, context)
        values.update(domain_pddl=write_domain(context.domain).strip())
        try:
            data = self._ask("task", GOAL_SCHEMA, feedback, **values)
        except AnswerFormatError as exc:
            raise PDDLParseError(f'the answer was not valid JSON {{"goal": "(...)"}}: {exc}') from exc
        goal = data.get("goal") if isinstance(data, Mapping) else None
        if not isinstance(goal, str) or not goal.strip():
            raise PDDLParseError(f'the answer must be {{"goal": "<PDDL goal formula>"}}, got {data!r}')
        return _clean_goal(goal)

    def select_entities(self, text: str, speaker: str, context: Context, limit: int = 40) -> list[str]:
        """The catalogue names the model picked (case-insensitive), unknown names dropped, at most `limit`."""
        values = self._context_values(text, speaker, context)
        try:
            data = self._ask("entity_select", ENTITIES_SCHEMA, limit=limit, **values)
        except AnswerFormatError as exc:
            raise DeltaFormatError(f"the entity selection was not valid JSON: {exc}") from exc
        names = data.get("entities") if isinstance(data, Mapping) else data
        if not isinstance(names, list):
            raise DeltaFormatError(f'the answer must be {{"entities": [names]}}, got {data!r}')
        known = {_normal_name(name): name for name in context.entities}
        chosen: list[str] = []
        for name in names:
            match = known.get(_normal_name(name)) if isinstance(name, str) else None
            if match is not None and match not in chosen:
                chosen.append(match)
        return chosen[:max(0, limit)]

    def query_graph(self, text: str, speaker: str, context: Context) -> QueryGraph:
        """The nodes and edges the model read; edges between unknown node ids and unknown types dropped."""
        values = self._context_values(text, speaker, context)
        values.update(predicates=", ".join(str(p) for p in context.domain.predicates.values()),
                      types=_format_types(context.domain))
        try:
            data = self._ask("query_graph", QUERY_GRAPH_SCHEMA, **values)
        except AnswerFormatError as exc:
            raise DeltaFormatError(f"the query graph was not valid JSON: {exc}") from exc
        if not isinstance(data, Mapping) or not isinstance(data.get("nodes", []), list) \
                or not isinstance(data.get("edges", []), list):
            raise DeltaFormatError(f'the answer must be {{"nodes": [...], "edges": [...]}}, got {data!r}')
        types = set(context.domain.types.types)
        nodes: dict[str, QueryNode] = {}
        for item in data.get("nodes", []):
            if not isinstance(item, Mapping) or not str(item.get("id", "")).strip():
                continue
            node_id = str(item["id"]).strip()
            typ = str(item.get("type") or "").strip().lower() or None
            nodes.setdefault(node_id, QueryNode(node_id, str(item.get("text", "")).strip(),
                                                typ if typ in types else None))
        edges = []
        for item in data.get("edges", []):
            if not isinstance(item, Mapping):
                continue
            source, target = str(item.get("source", "")).strip(), str(item.get("target", "")).strip()
            relation = str(item.get("relation", "")).strip().lower()
            if source in nodes and target in nodes and relation:
                edge = QueryEdge(source, relation, target)
                if edge not in edges:
                    edges.append(edge)
        return QueryGraph(tuple(nodes.values()), tuple(edges))


_GOAL_WRAPPER = re.compile(r"^\(\s*:goal\b(.*)\)$", re.DOTALL | re.IGNORECASE)


def _clean_goal(goal: str) -> str:
    text = strip_fences(goal)
    match = _GOAL_WRAPPER.match(text)
    if match:
        text = match.group(1).strip()
    try:
        parse_sexpr(text, source="goal")
    except PDDLParseError as exc:
        try:  # several formulas side by side: their conjunction
            parse_sexpr(f"(and {text})", source="goal")
        except PDDLParseError:
            raise PDDLParseError(f"the goal {text[:200]!r} is not one PDDL formula: {exc}") from None
        if not text.startswith("("):
            raise PDDLParseError(f"the goal {text[:200]!r} is not one PDDL formula: {exc}") from None
        text = f"(and {text})"
    return text
