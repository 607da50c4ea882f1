"""`ChoosingInterpreter`: code enumerates what an utterance may mean; a small model scores the options.

A small local model writes PDDL badly but ranks given answers well. For each utterance this interpreter
shows the model the same compact prompt a generating interpreter would (`servicerobot.language.compact`),
then asks the server for the log-likelihood of each candidate reply (`ScoringModel.score`, one batched
evaluation over the candidates' token trie) and keeps the most likely:

- classification: `{"kind": "task"}` against `{"kind": "update"}`;
- tasks: the goals of `candidates.goal_candidates` over the shown names (controllable, not true now,
  `forall` over types), then conjunctions of the best few, each said in English (`verbalize.Verbalizer`:
  "Done when: the bread is in the fridge and cold") after a prompt that shows the things and facts in
  English too: the 1.5B model chose the right goal for 36 of 50 paraphrased tasks so, 30 in PDDL;
- updates: the changes of `candidates.delta_candidates` that agree with memory, then unions of the best few.

With no candidate at all (nothing shown that the domain's actions can change) a task or an update goes to
the generating interpreter, which also answers entity selection and query graphs (retrieval).
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from itertools import combinations

from servicerobot.language.base import LanguageModelError, ScoringModel, Usage
from servicerobot.language.candidates import delta_candidates, goal_candidates, merge, relevance, signatures
from servicerobot.language.compact import SCHEMA_TITLES, compact_request, load_turns, prompt_view
from servicerobot.language.interpreter import UTTERANCE_KINDS, Context, QueryGraph, entity_phrase
from servicerobot.language.verbalize import Verbalizer
from servicerobot.memory.triplets import Delta
from servicerobot.pddl import Atom

__all__ = ["ChoosingInterpreter", "english_messages", "format_delta"]

_MAX_CANDIDATES = 160  # candidates scored per call (the most relevant kept)
_PAIRS_FROM = 4  # unions of updates are formed from this many best single changes
_CONJOIN_FROM = 6  # conjunctions of goals from this many best single goals
_DONE = "Done when: "  # how the English task prompt's answers begin
_NOW = "Now: "  # how the English update prompt's answers begin
_UNION_MARGIN = 3.0  # unions are formed of single changes at most this many nats below the best
_FOCUS = 4  # movable things and fixtures a reported change may be about (the most strongly named)
_BEAM = 8  # partial answers kept at each branching of the candidates (None: score every candidate)


def english_messages(prompt: str, text: str, speaker: str, view: tuple[list[Atom], list[str]],
                     say: Verbalizer) -> list[dict]:
    """An English prompt (`prompts/compact_choose_<prompt>.txt`, "task" or "update"): the shown things and
    facts in words."""
    facts = [say.fact(a.predicate, a.args) for a in view[0] if a.args]
    values = {"things": ", ".join(say.name(n) for n in view[1]) or "none", "facts": "; ".join(facts) or "none",
              "speaker": (speaker or "Someone")[:1].upper() + (speaker or "Someone")[1:], "text": text.strip()}
    return [{"role": role, "content": template.substitute(values)}
            for role, template in load_turns(f"choose_{prompt}")]


def _triplet(atom: Atom) -> list[str]:
    return [atom.args[0], atom.predicate, atom.args[1] if len(atom.args) == 2 else "true"]


def format_delta(delta: Delta) -> str:
    """A change as the compact update prompt's few-shot answers write it."""
    return json.dumps({"REMOVE": [_triplet(a) for a in sorted(delta.remove)],
                       "ADD": [_triplet(a) for a in sorted(delta.add)]})


def _args(formula: str) -> list[str]:
    return [w for w in formula.replace("(", " ").replace(")", " ").split() if not w.startswith("?")]


class ChoosingInterpreter:
    """An `Interpreter` whose model chooses among candidates that code enumerates.

    Args:
        model: a `ScoringModel` (an `OpenAIModel` on `servicerobot llm serve`).
        generator: the generating interpreter for retrieval queries and for utterances with no candidate
            (an `LLMInterpreter` with compact prompts on the same server); None: those raise.
        max_facts: at most this many memory facts go into a prompt (the most relevant first; every prompt
            token costs a CPU model time, and the candidates carry what memory says of the named things).
        max_candidates: at most this many single candidates are scored per call (the most relevant).
        beam: how many partial answers a scoring call keeps at each branching (None: every candidate is
            scored in full, ~10x the tokens).
    """

    def __init__(self, model: ScoringModel, generator=None, *, max_facts: int = 16,
                 max_candidates: int = _MAX_CANDIDATES, beam: int | None = _BEAM):
        self.model = model
        self.generator = generator
        self.max_facts = int(max_facts)
        self.max_candidates = int(max_candidates)
        self.beam = beam
        self.name = f"choose:{model.name}"
        self.usage = Usage()
        self.calls: list[dict] = []  # per scoring call: kind, candidates, seconds (for benchmarks)
        self._answered: dict[str, str] = {}  # the last update answer per utterance
        self._rejected: dict[str, set[str]] = {}  # answers a verifier refused, per utterance

    def __repr__(self) -> str:
        return f"ChoosingInterpreter({self.model!r})"

    def _score(self, kind: str, messages: list, answers: list[str]) -> list[float]:
        beam = self.beam if self.beam is not None and len(answers) > self.beam else None
        scored = self.model.score(messages, answers, slot=SCHEMA_TITLES[kind], beam=beam)
        self.usage.add(scored.usage)
        self.calls.append({"kind": kind, "candidates": len(answers), "seconds": round(scored.seconds, 3),
                           "tokens": scored.prompt_tokens + scored.candidate_tokens})
        return scored.totals()

    def _choose(self, kind: str, messages: list, options: list, render) -> tuple[object, float, list[float]]:
        """The most likely option, its log-probability, and every option's."""
        totals = self._score(kind, messages, [render(o) for o in options])
        best = max(range(len(options)), key=lambda i: totals[i])
        return options[best], totals[best], totals

    # ------------------------------------------------------------------ Interpreter
    def classify(self, text: str, speaker: str, context: Context | None = None) -> str:
        """"task" or "update": whichever answer the model finds likelier."""
        messages, _ = compact_request("classify", text, speaker, context)
        kind, _, _ = self._choose("classify", messages, list(UTTERANCE_KINDS), lambda k: json.dumps({"kind": k}))
        return kind

    def _ranked(self, options: list, names_of, rel: dict[str, float]) -> list:
        """At most `max_candidates` options, those naming what the utterance names most strongly first; a
        quantified goal names no thing and is always kept ("throw away anything broken" in a big house)."""
        if len(options) <= self.max_candidates:
            return options
        score = [float("inf") if isinstance(o, str) and o.startswith("(forall") else
                 sum(rel.get(n, 0.0) for n in set(names_of(o))) for o in options]
        order = sorted(range(len(options)), key=lambda i: -score[i])  # stable: enumeration order breaks ties
        return [options[i] for i in sorted(order[:self.max_candidates])]

    def interpret_task(self, text: str, speaker: str, context: Context, feedback: Sequence[str] = ()) -> str:
        """The likeliest goal among the enumerated ones and conjunctions of the best few, said in English."""
        rel = relevance(context, text, speaker)
        view = prompt_view(context, text, speaker, self.max_facts, rel)
        say = Verbalizer(context.entities, view[1])
        messages = english_messages("task", text, speaker, view, say)
        options = goal_candidates(context, view[1], asked=_asked(context, view[1], rel))
        if feedback:  # a goal the planner or parser refused: never offer it again
            refused = " ".join(feedback)
            options = [g for g in options if g not in refused] or options
        if not options:
            return self._generate("interpret_task", text, speaker, context, feedback)
        options = self._ranked(options, _args, rel)
        render = lambda goal: _DONE + say.goal(goal)
        best, best_lp, totals = self._choose("task", messages, options, render)
        top = [options[i] for i in sorted(range(len(options)), key=lambda i: -totals[i])[:_CONJOIN_FROM]
               if totals[i] > float("-inf")]
        conjunctions = _conjunctions(top, _kept_true(context, top))
        if conjunctions:
            both, both_lp, _ = self._choose("task", messages, conjunctions, render)
            if both_lp > best_lp:
                return both
        return best

    def interpret_update(self, text: str, speaker: str, context: Context, feedback: Sequence[str] = ()) -> Delta:
        """The likeliest change among the enumerated ones and unions of the best few."""
        rel = relevance(context, text, speaker)
        view = prompt_view(context, text, speaker, self.max_facts, rel)
        say = Verbalizer(context.entities, view[1])
        messages = english_messages("update", text, speaker, view, say)
        render = lambda d: _NOW + say.change(d.remove, d.add)
        names = view[1]
        named_rooms = [n for n in rel if context.entities[n].get("type") == "room"]
        options = delta_candidates(context, _focus(context, names, rel), rooms=named_rooms)
        refused = self._refused(text, feedback)
        options = [d for d in options if format_delta(d) not in refused] or options
        if not options:
            return self._generate("interpret_update", text, speaker, context, feedback)
        options = self._ranked(options, lambda d: [n for a in d.add | d.remove for n in a.args], rel)
        best, best_lp, totals = self._choose("update", messages, options, render)
        self._answered[text] = format_delta(best)
        order = sorted(range(len(options)), key=lambda i: -totals[i])
        top = [options[i] for i in order[:_PAIRS_FROM] if totals[i] >= best_lp - _UNION_MARGIN]
        unions = [u for a, b in combinations(top, 2) if (u := merge([a, b])) is not None]
        if unions:
            union, union_lp, _ = self._choose("update", messages, unions, render)
            if union_lp > best_lp:
                self._answered[text] = format_delta(union)
                return union
        return best

    def _refused(self, text: str, feedback: Sequence[str]) -> set[str]:
        """The answers already given for `text` that the caller refused (it came back with feedback)."""
        if not feedback:
            self._rejected.pop(text, None)
            return set()
        rejected = self._rejected.setdefault(text, set())
        if text in self._answered:
            rejected.add(self._answered[text])
        return rejected

    def _generate(self, method: str, *args):
        if self.generator is None:
            raise LanguageModelError(f"{self.name}: nothing in memory fits {args[0][:120]!r} and no generating "
                                     "interpreter is set to write an answer")
        before = self.generator.usage.total_tokens
        try:
            return getattr(self.generator, method)(*args)
        finally:
            self.usage.add(Usage(self.generator.usage.total_tokens - before, 0, 1))

    def select_entities(self, text: str, speaker: str, context: Context, limit: int = 40) -> list[str]:
        """The generating interpreter's selection (retrieval), else the entities the words name."""
        if self.generator is not None:
            return self._generate("select_entities", text, speaker, context, limit)
        rel = relevance(context, text, speaker)
        return sorted(rel, key=lambda n: (-rel[n], n))[:limit]

    def query_graph(self, text: str, speaker: str, context: Context) -> QueryGraph:
        """The generating interpreter's query graph (search-based retrieval)."""
        if self.generator is None:
            raise LanguageModelError(f"{self.name} writes no query graphs; give it a generating interpreter")
        return self._generate("query_graph", text, speaker, context)


def _focus(context: Context, names: Sequence[str], rel: dict[str, float]) -> list[str]:
    """The shown names a reported change may be about: the things the words name most strongly (at most
    `_FOCUS` movable ones, `_FOCUS` fixtures and every person and room shown); all shown when none is named."""
    named = [n for n in names if rel.get(n, 0) > 0]
    if not named:
        return list(names)
    best = max(rel[n] for n in named)
    def fixed(n: str) -> bool:
        return bool(context.entities.get(n, {}).get("room"))

    out = [n for n in names if context.entities.get(n, {}).get("type") in ("person", "room")]
    for pick in (lambda n: not fixed(n), fixed):
        ranked = sorted((n for n in named if pick(n) and n not in out), key=lambda n: (-rel[n], n))
        out += [n for n in ranked[:_FOCUS] if rel[n] >= best - 2.5 or n == ranked[0]]
    rooms = {entity_phrase(context.entities[n]) for n in named if context.entities[n].get("type") == "room"}
    out += [n for n in names if fixed(n) and context.entities[n].get("room") in rooms]  # "the kitchen is lit"
    return sorted(set(out))


def _asked(context: Context, names: Sequence[str], rel: dict[str, float], most: int = 3) -> list[str]:
    """The things (not people or rooms) the words name most strongly: at most `most`, within 1 of the best."""
    things = [n for n in names if rel.get(n, 0) > 0 and context.entities.get(n, {}).get("type") not in
              ("person", "room", "robot")]
    if not things:
        return []
    best = max(rel[n] for n in things)
    return sorted((n for n in things if rel[n] >= best - 1.0), key=lambda n: (-rel[n], n))[:most]


def _kept_true(context: Context, goals: Sequence[str]) -> list[str]:
    """One-argument facts false now about the things `goals` name that an action could make true (a wash
    makes clothes wet): `(not (wet jeans_2))`, for a request to keep them so ("clean and dry")."""
    domain, sig = context.domain, signatures(context.domain)
    names = list(dict.fromkeys(a for g in goals for a in _args(g) if a in context.entities))
    out = []
    for name in names:
        typ = str(context.entities[name].get("type", "object"))
        for pred, decl in domain.predicates.items():
            if len(decl.params) != 1 or not domain.types.is_subtype(typ, decl.params[0][1]):
                continue
            atom = Atom(pred, (name,))
            if atom not in context.facts and sig.can(domain, pred, [typ], True) and sig.can(domain, pred, [typ], False):
                out.append(f"(not {atom})")
    return out


def _conjunctions(top: Sequence[str], kept: Sequence[str], most: int = 4) -> list[str]:
    """Conjunctions the best single goals (`top`, best first) may be parts of: every pair, the best three and
    four, the goals that share a predicate and a last argument ("both books on the shelf"), and each goal with
    the facts `kept` about its things."""
    def conj(parts) -> str | None:
        parts = list(dict.fromkeys(parts))
        if len(parts) < 2 or not all(_compatible(a, b) for a, b in combinations(parts, 2)):
            return None
        return f"(and {' '.join(parts)})"

    pool = list(top) + [k for k in kept if k not in top]
    out = [conj(pair) for pair in combinations(pool, 2) if pair[0] in top]
    out += [conj(top[:k]) for k in range(3, min(most, len(top)) + 1)]
    groups: dict[tuple, list[str]] = {}
    for goal in top:
        words = goal.strip("()").split()
        if len(words) == 3 and not goal.startswith("(not"):
            groups.setdefault((words[0], words[2]), []).append(goal)
    out += [conj(g) for g in groups.values() if len(g) >= 3]
    for goal in top:
        mine = [k for k in kept if _args(k)[-1] in _args(goal)]
        out.append(conj([goal, *mine]))
    return [c for c in dict.fromkeys(out) if c is not None]


def _compatible(a: str, b: str) -> bool:
    """Two goals that may be asked together: not the same literal twice, not a literal and its negation."""
    strip = lambda g: g[5:-1] if g.startswith("(not ") else g
    return strip(a) != strip(b)
