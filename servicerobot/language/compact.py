"""Compact prompts for small local models: short messages, few-shot turns, and enum-constrained schemas.

A small model on a CPU pays for every prompt token, so a compact request shows only what the answer may
use: the retrieved facts as `subject relation object` lines (not the robot's own, not static links between
fixed things), the entities they name plus the rooms and the speaker, and the domain's vocabulary. The
system prompt and the few-shot turns come first and never change, so llama.cpp reuses their evaluation.
The JSON schemas make a grammar-constrained server answer only well-typed triplets and goals over the
shown names, and only the domain's types and relations.
"""

from __future__ import annotations

import re
import string
from collections.abc import Mapping, Sequence
from functools import cache
from importlib import resources

from servicerobot.language.base import Message
from servicerobot.language.candidates import is_fixed, relevance, signatures, static_predicates
from servicerobot.language.interpreter import UTTERANCE_KINDS, Context, entity_phrase
from servicerobot.memory.triplets import atom_to_triplet
from servicerobot.pddl import Atom, Domain

__all__ = ["COMPACT_PROMPTS", "SCHEMA_TITLES", "compact_prefix", "compact_request", "load_turns", "shown_entities"]

COMPACT_PROMPTS = ("classify", "update", "task", "entity_select", "query_graph")
# the title of each prompt's answer schema: `OpenAIModel(slots=True)` names the server's context after it
SCHEMA_TITLES = {"classify": "kind", "update": "update", "task": "goal", "entity_select": "entities",
                 "query_graph": "query_graph"}
_SECTION = re.compile(r"^@@ (system|user|assistant)[ \t]*$", re.MULTILINE)
_MAX_NODES = 6
_NAMED = 8  # things the utterance names that a prompt shows even without a fact about them


@cache
def load_turns(name: str) -> tuple[tuple[str, string.Template], ...]:
    """The prompt `prompts/compact_<name>.txt` as (role, template) turns: a system prompt, few-shot
    user/assistant pairs, and the final user turn."""
    text = resources.files("servicerobot.language").joinpath("prompts", f"compact_{name}.txt").read_text("utf-8")
    parts = _SECTION.split(text)
    return tuple((role, string.Template(body.strip())) for role, body in zip(parts[1::2], parts[2::2]))


def _predicates(domain: Domain) -> str:
    return ", ".join(f"{name}({', '.join(t for _, t in pred.params)})" for name, pred in domain.predicates.items())


def _types(domain: Domain) -> str:
    return ", ".join(f"{t} ({parent})" if parent and parent != "object" else t
                     for t, parent in domain.types.parents.items())


def _person(entities: Mapping[str, Mapping], speaker: str) -> str | None:
    low = (speaker or "").strip().lower()
    for name, info in entities.items():
        if info.get("type") == "person" and (name == low or str(info.get("name", "")).lower() == low):
            return name
    return None


def _shown_facts(context: Context, rel: Mapping[str, float] | None = None) -> list[Atom]:
    """The facts worth showing: not the robot's own, not static ones, not where fixed things stand
    (a fixture's room is in its catalogue line); those about what the utterance names (`rel`) first."""
    static = static_predicates(context.domain)
    out = []
    for atom in context.facts:
        if context.robot in atom.args or (atom.predicate in static and all(is_fixed(context, n) for n in atom.args)):
            continue
        if len(atom.args) == 2 and is_fixed(context, atom.args[0]) and \
                context.entities.get(atom.args[1], {}).get("type") == "room":
            continue  # where a fixture stands (`in-room`, Context Matters' `at`): its catalogue line says it
        out.append(atom)
    rel = rel or {}
    # an entity's facts stay together when cut; the named ones are kept first
    return sorted(out, key=lambda a: (-max(rel.get(n, 0.0) for n in a.args), a.args[0], str(a)))


def shown_entities(context: Context, speaker: str, facts: Sequence[Atom] | None = None, text: str = "",
                   rel: Mapping[str, float] | None = None, named: int = _NAMED) -> list[str]:
    """The entity names a compact update or task prompt shows: those in the shown facts (default: the
    retrieved ones), the rooms, the speaker, the `named` things the utterance names most strongly (`rel`, by
    default from `text`) and the fixtures in the speaker's room and in the rooms the utterance names, whether
    or not memory holds a fact about them (an off light, an empty table); never the robot."""
    facts = context.facts if facts is None else facts
    names = {n for atom in facts for n in atom.args if n in context.entities}
    names.update(n for n, info in context.entities.items() if info.get("type") == "room")
    person = _person(context.entities, speaker)
    if person is not None:
        names.add(person)
    rel = dict(rel) if rel is not None else (relevance(context, text, speaker) if text else {})
    rooms = {n for n in rel if context.entities[n].get("type") == "room"}
    names.update(sorted((n for n in rel if n not in rooms), key=lambda n: (-rel[n], n))[:named])  # rooms: above
    if person is not None:
        rooms.update(a.args[1] for a in context.facts if a.predicate == "in-room" and a.args[0] == person)
    phrases = {entity_phrase(context.entities[r]) for r in rooms if r in context.entities} | rooms
    names.update(n for n, info in context.entities.items() if info.get("room") in phrases)
    names.discard(context.robot)
    return sorted(names)


def _catalogue(entities: Mapping[str, Mapping], names: Sequence[str]) -> str:
    lines = []
    for n in names:
        info = entities[n]
        room = info.get("room")
        where = f" in {entity_phrase(entities[room]) if room in entities else room}" if room else ""
        lines.append(f"{n}: {entity_phrase(info)}{where} ({info.get('type', 'object')})")
    return "\n".join(lines) or "(none)"


def _facts(facts: Sequence[Atom], limit: int) -> str:
    lines = []
    for atom in facts:
        if len(atom.args) in (1, 2):
            s, p, o = atom_to_triplet(atom)
            lines.append(f"{s} {p} {'true' if o is True else o}")
    lines.sort()
    if len(lines) > limit:
        lines = lines[:limit] + [f"... ({len(lines) - limit} more)"]
    return "\n".join(lines) or "(none)"


def _of_type(context: Context, names: Sequence[str]) -> dict[str, list[str]]:
    """Type name -> the shown names of that type or a subtype."""
    types = context.domain.types
    return {t: [n for n in names if types.is_subtype(context.entities[n].get("type", "object"), t)]
            for t in types.types}


def _typed_atoms(context: Context, names: Sequence[str], skip: frozenset[str]) -> list[tuple[str, list[list[str]]]]:
    """(predicate, candidate names per argument) for every predicate all of whose arguments have a name
    (those in `skip` only where some candidate is not fixed)."""
    by_type = _of_type(context, names)
    out = []
    for pred, decl in context.domain.predicates.items():
        args = [by_type.get(t, []) for _, t in decl.params]
        if pred in skip and all(is_fixed(context, n) for a in args for n in a):
            continue  # a static relation among fixed things (room links): nobody changes it
        if 1 <= len(args) <= 2 and all(args):
            out.append((pred, args))
    return out


def _update_schema(context: Context, names: list[str]) -> dict:
    options = []
    types = context.domain.types
    for pred, args in _typed_atoms(context, names, static_predicates(context.domain)):
        if pred == "in-room" and "person" in types:  # people report where they went, not where things are
            args = [[n for n in args[0] if types.is_subtype(context.entities[n].get("type", "object"), "person")],
                    args[1]]
            if not args[0]:
                continue
        last = {"enum": args[1]} if len(args) == 2 else {"enum": ["true"]}
        options.append({"type": "array", "prefixItems": [{"enum": args[0]}, {"enum": [pred]}, last],
                        "items": False, "minItems": 3, "maxItems": 3})
    triplet = {"anyOf": options} if options else {"enum": []}
    return {"title": "update", "type": "object", "additionalProperties": False, "required": ["REMOVE", "ADD"],
            "properties": {"REMOVE": {"type": "array", "items": triplet, "maxItems": 8},
                           "ADD": {"type": "array", "items": triplet, "maxItems": 8}}}


def _alt(words: Sequence[str]) -> str:
    return "(" + "|".join(re.escape(w) for w in words) + ")"


def _controlled(context: Context, typed: list[tuple[str, list[list[str]]]]) -> list[tuple[str, list[list[str]]]]:
    """The typed atoms kept to the arguments some action can change the predicate for (no person's room)."""
    sig, types = signatures(context.domain), context.domain.types
    out = []
    for pred, args in typed:
        sigs = [*sig.add.get(pred, ()), *sig.delete.get(pred, ())]
        kept = [[n for n in arg if any(len(g) == len(args) and types.is_subtype(
            context.entities[n].get("type", "object"), g[i]) for g in sigs)] for i, arg in enumerate(args)]
        if all(kept):
            out.append((pred, kept))
    return out


def _goal_pattern(context: Context, names: list[str]) -> str:
    """A regular expression for well-typed goals: literals over the shown names that some action controls,
    their conjunction, and `forall` over a type of one-argument literals (alone, or joined by `or` / `imply`)."""
    atoms = [rf"\({re.escape(p)} {' '.join(_alt(a) for a in args)}\)"
             for p, args in _controlled(context, _typed_atoms(context, names, frozenset()))]
    unary = [p for p, d in context.domain.predicates.items() if len(d.params) == 1]
    qatom = rf"\({_alt(unary)} \?x\)"
    qlit = rf"({qatom}|\(not {qatom}\))"
    quant = (rf"\(forall \(\?x - {_alt(sorted(context.domain.types.types))}\) "
             rf"({qlit}|\(or {qlit} {qlit}\)|\(imply {qatom} {qlit}\))\)")
    atom = "(" + "|".join(atoms) + ")" if atoms else None
    lit = f"({atom}|\\(not {atom}\\)|{quant})" if atom else quant
    return f"^({lit}|\\(and {lit}( {lit})+\\))$"


def _query_graph_schema(types: list[str], relations: list[str]) -> dict:
    ids = [f"n{i}" for i in range(1, _MAX_NODES + 1)]
    node = {"type": "object", "additionalProperties": False, "required": ["id", "text", "type"],
            "properties": {"id": {"enum": ids}, "text": {"type": "string", "maxLength": 60},
                           "type": {"enum": types}}}
    edge = {"type": "object", "additionalProperties": False, "required": ["source", "relation", "target"],
            "properties": {"source": {"enum": ids}, "relation": {"enum": relations}, "target": {"enum": ids}}}
    return {"title": "query_graph", "type": "object", "additionalProperties": False, "required": ["nodes", "edges"],
            "properties": {"nodes": {"type": "array", "items": node, "minItems": 1, "maxItems": _MAX_NODES},
                           "edges": {"type": "array", "items": edge, "maxItems": _MAX_NODES}}}


def _fixed_values(domain: Domain, robot: str, limit: int) -> dict[str, str]:
    return {"predicates": _predicates(domain), "types": _types(domain), "robot": robot, "limit": str(limit)}


def compact_prefix(prompt: str, domain: Domain, robot: str = "robot", limit: int = 40) -> list[Message]:
    """The turns every compact request of `prompt` begins with for this domain: the system prompt and the
    few-shot turns (what a server can evaluate once and keep)."""
    if prompt not in COMPACT_PROMPTS:
        raise ValueError(f"no compact prompt {prompt!r}; choose from {', '.join(COMPACT_PROMPTS)}")
    values = _fixed_values(domain, robot, limit)
    return [{"role": role, "content": template.safe_substitute(values)} for role, template in load_turns(prompt)[:-1]]


def prompt_view(context: Context, text: str, speaker: str, max_facts: int = 300,
                rel: Mapping[str, float] | None = None) -> tuple[list[Atom], list[str]]:
    """The facts and the entity names an update or task prompt shows for `text` (`rel`: its `relevance`,
    when the caller has it already)."""
    rel = relevance(context, text, speaker) if rel is None else rel
    facts = _shown_facts(context, rel)[:max_facts]
    return facts, shown_entities(context, speaker, facts, rel=rel)


def compact_request(prompt: str, text: str, speaker: str, context: Context | None, *, max_facts: int = 300,
                    limit: int = 40, view: tuple[list[Atom], list[str]] | None = None) -> tuple[list[Message], dict]:
    """The messages and the JSON schema of one compact request (`prompt` is one of `COMPACT_PROMPTS`);
    `view` is the update or task prompt's `prompt_view`, when the caller has it already."""
    if prompt not in COMPACT_PROMPTS:
        raise ValueError(f"no compact prompt {prompt!r}; choose from {', '.join(COMPACT_PROMPTS)}")
    values = {"text": text.strip(), "speaker": speaker or "Someone"}
    if prompt == "classify":
        schema = {"title": "kind", "type": "object", "additionalProperties": False, "required": ["kind"],
                  "properties": {"kind": {"enum": list(UTTERANCE_KINDS)}}}
    else:
        domain = context.domain
        values.update(_fixed_values(domain, context.robot, limit))
        if prompt in ("update", "task"):
            facts, names = view if view is not None else prompt_view(context, text, speaker, max_facts)
            values.update(entities=_catalogue(context.entities, names), facts=_facts(facts, max_facts))
            if prompt == "update":
                schema = _update_schema(context, names)
            else:
                schema = {"title": "goal", "type": "object", "additionalProperties": False, "required": ["goal"],
                          "properties": {"goal": {"type": "string", "pattern": _goal_pattern(context, names)}}}
        elif prompt == "entity_select":
            names = sorted(context.entities)
            values.update(entities=_catalogue(context.entities, names))
            schema = {"title": "entities", "type": "object", "additionalProperties": False, "required": ["entities"],
                      "properties": {"entities": {"type": "array", "items": {"enum": names}, "minItems": 1,
                                                  "maxItems": max(1, min(limit, 8))}}}
        else:
            binary = [n for n, p in domain.predicates.items() if len(p.params) == 2]
            schema = _query_graph_schema(sorted(domain.types.types), binary)
    messages = [{"role": role, "content": template.substitute(values)} for role, template in load_turns(prompt)]
    return messages, schema
