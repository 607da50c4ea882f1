"""`ChoosingInterpreter`: code enumerates what an utterance may mean; a small model scores the options.

A small local model writes PDDL badly but ranks given answers well. For each utterance this interpreter
shows the model the same compact prompt a generating interpreter would (`servicerobot.language.compact`),
then asks the server for the log-likelihood of each candidate reply (`ScoringModel.score`, one batched
evaluation over the candidates' token trie) and keeps the most likely:

- classification: `{"kind": "task"}` against `{"kind": "update"}`;
- tasks: the goals of `candidates.goal_candidates` over the shown names (controllable, not true now,
  `forall` over types), each said in English (`verbalize.Verbalizer`: "Done when: the bread is in the fridge
  and cold") after a prompt that shows the things and facts in English too (36 of 50 paraphrased tasks right
  so, 30 in PDDL); then conjunctions of the best few and groups over the kinds of things the words name
  ("all three apples are on the desk in the bedroom", `_groups`); then unions of the best answer per
  (relation, object) ("the laptop on the desk, both books on the bookshelf and the pen in the drawers",
  `_unions`). Parts are ranked by their log-probability without the end of the turn, answers chosen by the
  whole with a lexical prior (`_UNNAMED`, `_MISSED`, `_CLAUSE`);
  Decomposed too (`servicerobot.language.decompose`, issue 34): the model says which kinds of things the
  request involves (yes/no per kind) and what should become true of each; code builds whole goals of any
  length from the answers ("two plates and two forks on the dining table" for "set the table for two") and
  the model chooses among them and the answer above (`decompose.decide`). Three calls per task: the kinds;
  the singles and the kinds' relations; every joined and built answer;
- updates: the changes of `candidates.delta_candidates` that agree with memory, then unions of the best few.

With no candidate at all (nothing shown that the domain's actions can change) a task or an update goes to
the generating interpreter, which also answers entity selection and query graphs (retrieval).
"""

from __future__ import annotations

import json
import re
from collections.abc import Sequence
from itertools import combinations

from servicerobot.envs.language import Language
from servicerobot.errors import TaskInfeasible
from servicerobot.language import decompose, spelling
from servicerobot.language.base import LanguageModelError, Scored, ScoringModel, Usage
from servicerobot.language.candidates import (
    _stem,
    delta_candidates,
    goal_candidates,
    merge,
    receivers,
    relevance,
    signatures,
)
from servicerobot.language.compact import SCHEMA_TITLES, _person, compact_request, load_turns, prompt_view
from servicerobot.language.interpreter import UTTERANCE_KINDS, Context, Interpreter, QueryGraph, entity_phrase
from servicerobot.language.rule_interpreter import declared_changes, declared_goals, template_likeness
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
_UNNAMED = 2.0  # nats a task answer loses per kind of thing in it the words do not name
# nats an update loses per person in it the words do not name (the 65 paraphrased updates, replayed from their
# recorded scores: 57 right at 0, 58 at 1-2, 59 at 3-8, none lost)
_UNNAMED_PERSON = 4.0
# nats a union of two changes is allowed over the likeliest single change (the same 65 updates replayed with every
# union of the five likeliest: 59 right at 0-1, 61 at 2 (u61, u65: "out of the fridge and no longer cold", "the mug
# is filthy; I'm heading to the kitchen"), 60 at 3-4 (u38 lost), 57-58 at 5-6)
_UPDATE_PART = 2.0
# nats a change the world's language declares gains, times how much of its most alike template the words say
# ("I took the milk out of the fridge": the household's `warm`, moved and no longer cold). On the 150 reports of
# Table I's episodes the model put the plain move 2.5-5.5 nats above "... and not cold" for `warm`'s own sentences
# (3 and 5 left them so); the bonus is per kind, so which thing a report is about stays the model's choice
_DECLARED = 8.0
_KEEP_DECLARED = 16  # declared changes scored to their end whatever the beam (the likeliest-worded first)
_MISSED = 3.0  # nats a task answer loses per kind of thing the words name (not a room, a person) it leaves out
_CLAUSE = 4.0  # nats allowed per further clause of a task answer (another relation and object, another state)
_CLAUSES = 2  # ... for at most this many further clauses
_GROUP_KEYS = 4  # (relation, object) keys whose things are grouped ("plates, forks and glasses on the table")
_FULL = 64  # joined answers scored to their end (no beam) when at most this many
_BEAM = 8  # partial answers kept at each branching of the candidates (None: score every candidate)
_MAX_SEQ_KEPT = 48  # answers of a beam call scored to their end whatever the beam (the server's 64 sequences less the beam)
# choosing between the enumerated and the built goals (`decompose.decide`): the weight of the end of the turn and of
# how well a goal agrees with the model's answers about kinds; chosen on the dev sets' recorded candidates (36
# CM-style instances, 50 paraphrased tasks: docs/local_model.md)
_END_WEIGHT = 2.0
_KIND_WEIGHT = 4.0
_STATE_SAID = 2.0  # nats a kind's relation or state gains where the words say its predicate ("clean the mop")
# nats a whole answer loses per state the words ask of its things that it leaves out ("chill the bread in the
# fridge": in the fridge, not cold; "wash the bowl and bring it to me": brought, not washed): more than the
# model's words ever make up (it puts "... and cold" 7-8 nats lower, ", clean" 11), so such an answer loses to
# any that says the state, and stands only where none does
_UNSAID = 50.0
# words that say how things should be: none of the world's own 257 reports in Table I's ten seeds, nor of the
# paraphrases' 65 reports, has one; the model heard 8 of the paraphrases' 13 requests so worded as reports, by
# at most 0.7 nats
_SHOULD = re.compile(r"\b(?:should|shouldn't|ought|belongs?|(?:go|goes) (?:on|in|into|back))\b", re.IGNORECASE)
_WISHED = 2.0
_COUNT_WEIGHT = 8.0  # ... and of naming as many of a named kind as the words ask for (`decompose.counted`)
# where the words name no movable kind ("set the table for two"), what is moved comes from the model's yes alone, and
# the words of each further kind cost more than its yes brings: the kinds weigh three times as much (dev sets: the 36
# CM-style instances change in their two such tasks only, both to more of the table; the paraphrases in none)
_KIND_WEIGHT_UNNAMED = 12.0


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
        decompose: build whole goals from the model's answers about kinds and relations (`decompose`), and
            choose between them and the enumerated answer with `end_weight` and `kind_weight`
            (`kind_weight_unnamed` where the words name no movable kind).
        joins: also offer conjunctions, groups and unions of the enumerated answers (in the third call, beside
            the built goals).
        budget_s: seconds a beam-searched call may take before the server finishes only its likeliest answer
            (the call's record says `cut`); None: no bound.
        language: the world's declared `Language`: the changes its events mean ("out of the fridge": moved and
            no longer cold) are offered beside the enumerated ones (`rule_interpreter.declared_changes`), and
            so are the goals its tasks mean (`rule_interpreter.declared_goals`); a request that says every word
            of a task template is read as that kind, the model choosing which things.
    """

    def __init__(self, model: ScoringModel, generator: Interpreter | None = None, *, max_facts: int = 16,
                 max_candidates: int = _MAX_CANDIDATES, beam: int | None = _BEAM, decompose: bool = True,
                 end_weight: float = _END_WEIGHT, kind_weight: float = _KIND_WEIGHT, joins: bool = True,
                 budget_s: float | None = None, count_weight: float = _COUNT_WEIGHT,
                 kind_weight_unnamed: float = _KIND_WEIGHT_UNNAMED, language: Language | None = None):
        self.model = model
        self.language = language
        self.generator = generator
        self.max_facts = int(max_facts)
        self.max_candidates = int(max_candidates)
        self.beam = beam
        self.decompose = bool(decompose)
        self.joins = bool(joins)
        if budget_s is not None and not (isinstance(budget_s, (int, float)) and 0 < budget_s < float("inf")):
            raise ValueError(f"budget_s must be a positive number of seconds or None, got {budget_s!r}")
        self.budget_s = budget_s
        self.end_weight = float(end_weight)
        self.kind_weight = float(kind_weight)
        self.kind_weight_unnamed = float(kind_weight_unnamed)
        self.count_weight = float(count_weight)
        self.name = f"choose:{model.name}"
        self.usage = Usage()
        self.calls: list[dict] = []  # per scoring call: kind, candidates, seconds (for benchmarks)
        self.decomposition: dict = {}  # what the last task's decomposition found (for benchmarks)
        self._answered: dict[str, str] = {}  # the last update answer per utterance
        self._rejected: dict[str, set[str]] = {}  # answers a verifier refused, per utterance

    def __repr__(self) -> str:
        return f"ChoosingInterpreter({self.model!r})"

    def _token_scores(self, kind: str, messages: list, answers: list[str], full: bool = False,
                      slot: str | None = None, keep: Sequence[int] = ()) -> Scored:
        """Each answer's log-probability per token, the end of the turn last ([] for one the beam cut); `full`:
        every answer scored to its end (no beam), for the few long joined answers whose shared beginnings a
        beam would cut before the part that tells them apart."""
        beam = self.beam if self.beam is not None and len(answers) > self.beam and not full else None
        extra = {}
        if beam is not None:
            if keep := [i for i in keep if i < len(answers)]:
                extra["keep"] = keep
            if self.budget_s is not None:
                extra["budget"] = self.budget_s
        scored = self.model.score(messages, answers, slot=slot or SCHEMA_TITLES[kind], beam=beam, **extra)
        self.usage.add(scored.usage)
        self.calls.append({"kind": kind, "candidates": len(answers), "seconds": round(scored.seconds, 3),
                           "tokens": scored.prompt_tokens + scored.candidate_tokens, "cut": scored.cut})
        return scored

    def _choose(self, kind: str, messages: list, options: list, render,
                keep: Sequence[int] = ()) -> tuple[object, float, list[float]]:
        """The most likely option, its log-probability, and every option's (those at `keep` scored to their end
        whatever the beam)."""
        totals = self._token_scores(kind, messages, [render(o) for o in options], keep=keep).totals()
        best = max(range(len(options)), key=lambda i: totals[i])
        return options[best], totals[best], totals

    # ------------------------------------------------------------------ Interpreter
    def classify(self, text: str, speaker: str, context: Context | None = None) -> str:
        """"task" or "update": whichever answer the model finds likelier, a task `_WISHED` nats likelier where
        the words say how things should be ("the towels belong in the basket", "no light should stay on")."""
        messages, _ = compact_request("classify", text, speaker, context)
        _, _, totals = self._choose("classify", messages, list(UTTERANCE_KINDS), lambda k: json.dumps({"kind": k}))
        wished = _WISHED * bool(_SHOULD.search(text.replace("\u2019", "'")))
        scores = {k: t + (wished if k == "task" else 0.0) for k, t in zip(UTTERANCE_KINDS, totals)}
        return max(UTTERANCE_KINDS, key=lambda k: scores[k])

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
        """The likeliest goal among the enumerated ones, conjunctions of the best few, groups, unions and whole
        goals built from the model's answers about kinds and relations, said in English; three scoring calls.

        1. which kinds of things the request involves (`decompose.ask_kinds`, yes/no per kind);
        2. the enumerated single goals (beam search; those only about things the words name scored to their
           end) and each involved kind's relations and states (to their end), in one call;
        3. the joined answers: conjunctions, groups and unions of the best singles and the goals
           `decompose.build` makes from the answers of 1 and 2, beside the best single; the best of the
           enumeration's answers by the lexical prior, then between it and the built goals by `decompose.decide`.
        """
        text = spelling.correct(text, spelling.vocabulary(context))
        rel = relevance(context, text, speaker)
        view = prompt_view(context, text, speaker, self.max_facts, rel)
        named_rooms = _named_rooms(context, rel)
        options = goal_candidates(context, view[1], asked=_asked(context, view[1], rel))
        refused = " ".join(feedback)
        if feedback:  # a goal the planner or parser refused: never offer it again
            options = [g for g in options if g not in refused] or options
        if not options:
            return self._generate("interpret_task", text, speaker, context, feedback)
        options = self._ranked(options, _args, rel)
        found, chosen, places = self._kinds(text, speaker, context, rel, named_rooms)  # call 1
        # (only where the model was asked which kinds the words mean: "move the cutlery" may mean the forks)
        missing = decompose.absent_things(context, text, found, chosen) if self.decompose else None
        if missing is not None:  # "move all apples to the fruit bowl" where there are none: no fruit bowl moved
            self.decomposition["absent"] = missing
            raise TaskInfeasible(f"nothing here is called what the words ask to move ({missing!r}): no thing in "
                                 "this scene is named by those words and the model relates no kind of thing to "
                                 "them; name something the scene has")
        # "the kitchen cupboard": the kitchen says where the cupboard is, no place of its own to take things to
        # (a fixture the words name as a thing to move, "put the locker in the living room", says no such thing)
        said = {_stem(w) for w in re.findall(r"[a-z]+", text.lower())}
        moved = {n for k in found if k.named and not k.place for n in k.names}
        held = decompose.held_rooms(context, [n for n in rel if n not in moved
                                              and decompose.holder_head(context, n) in said])
        # nor is a fixture named less strongly than another of its noun ("the bookshelf in the living room")
        held |= decompose.outnamed(context, rel) - moved
        options = [g for g in options if not _into(g, held, context)] or options
        # the people the words say a thing goes to ("bring the remote over to me", "take the book to Hiro"):
        # an answer that gives nothing to one of them is no reading of the words (the model finds "the remote
        # is on the sofa" 15 nats likelier than "Chloe has the remote", whose end it expects later)
        to = receivers(context, text, speaker, rel)
        options = [g for g in options if to <= set(_args(g))] or options
        # where the words name rooms, no thing goes to a room they do not name ("put the desk, the lamp ... in the
        # living room and then ...": the model liked "the desk is in the kitchen", whose end of turn comes sooner)
        if named_rooms:
            others = {n for n, e in context.entities.items() if e.get("type") == "room"} - set(named_rooms)
            options = [g for g in options if not _into(g, others, context)] or options
        names = sorted(set(view[1]) | set(places) | {n for k in chosen for n in k.names}) if chosen else view[1]
        say = Verbalizer(context.entities, names, context.domain, rooms=named_rooms, facts=context.facts)
        messages = english_messages("task", text, speaker, (view[0], names), say)
        render = lambda goal: _DONE + say.goal(goal)
        options = _distinct(options, render)
        unnamed = lambda goal: _unnamed(goal, rel, context, say)
        named = _named_kinds(rel, context, say, text)
        missed = lambda goal: len(named - _covered(goal, context, say))
        ninf = float("-inf")

        def scores_of(goals: Sequence[str], tokens: Sequence[Sequence[float]]) -> tuple[list[float], list[float]]:
            """Each goal's score and part score. A score is the model's log-probability, less a prior against
            kinds of things the words do not name and against leaving out kinds they do name, plus an
            allowance for each further clause (saying more costs the model tokens even where the words ask for
            it). A part score leaves out the end of the turn and the priors about what is left out: how right
            the answer is as far as it goes ("the laptop is on the desk" is right but the model expects more
            after it), which ranks the parts that groups and unions are built from."""
            prior = lambda g: -_UNNAMED * unnamed(g) - _MISSED * missed(g) + _CLAUSE * min(_clauses(g) - 1, _CLAUSES)
            return ([sum(t) + prior(g) if t else ninf for g, t in zip(goals, tokens)],
                    [sum(t[:-1]) - _UNNAMED * unnamed(g) if t else ninf for g, t in zip(goals, tokens)])

        # call 2: the singles (beam; answers only about named things kept to their end, so that their relation
        # and object can still be grouped and joined) and each kind's relations
        where = decompose.rooms_of(context)
        # a room that says where a named fixture is ("the kitchen sink") is no room things come from either
        from_rooms = [r for r in named_rooms if r not in held]
        asked = [(kind, key, decompose.pick(context, kind, key, lits, rel, where, from_rooms, text))
                 for kind in chosen for key, lits in kind.keys.items()]
        asked = [a for a in asked if not refused or decompose.conjoin(a[2]) not in refused][:_MAX_SEQ_KEPT]
        relation_goals = [decompose.conjoin(lits) for _, _, lits in asked]
        room = _MAX_SEQ_KEPT - len(asked)
        # those saying a state the words say first ("get rid of the broken stuff": every broken item thrown
        # away, which a beam cut at "every" would lose behind "every dish is clean")
        keep = sorted((i for i, g in enumerate(options) if not unnamed(g)),
                      key=lambda i: not _says_state(options[i], said))[:room]
        keep += [len(options) + j for j in range(len(asked))]
        tokens = self._token_scores("task", messages, [render(g) for g in options + relation_goals], keep=keep).logprobs
        totals, part_lps = scores_of(options, tokens[:len(options)])
        best = options[max(range(len(options)), key=lambda i: totals[i])]
        named_places = {n for n in places if rel.get(n, 0.0) >= 2.0}
        for kind in chosen:  # each kind's likeliest relation, its end of turn left out (more parts may follow)
            mine = [(sum(t[:-1]) + _STATE_SAID * decompose.state_said(key, text, kind.noun) if t else ninf, key)
                    for (k, key, _), t in zip(asked, tokens[len(options):]) if k is kind]
            kind.best = max(mine)[1] if mine else None
            kind.also = decompose.said_states(kind, text)
            # "chill it in the fridge": in the fridge and cold; "wash it and bring it to me": clean and mine
            decompose.placed_with_state(context, kind, text, named_places, to)
        chosen = [k for k in chosen if k.best is not None]
        joined: list[str] = []
        if self.joins:
            order = sorted(range(len(options)), key=lambda i: -part_lps[i])
            top = [options[i] for i in order[:_CONJOIN_FROM] if part_lps[i] > ninf]
            parts = {options[i]: part_lps[i] for i in order}
            groups = _groups(parts, say, counts(text), named, context, named_rooms)
            joined = [c for c in _conjunctions(top, _kept_true(context, top)) + groups if c not in parts]
            # what is asked of several kinds of things at once: the best answer about each (relation, object)
            # joined ("the laptop on the desk, both books on the shelf and the pen in the drawers")
            scored = {g: lp for g, lp in parts.items() if lp > ninf}
            joined += [u for u in _unions(scored, dict(zip(options, totals))) if u not in parts and u not in joined]
        built = [g for g in decompose.build(context, chosen, rel, from_rooms, text)
                 if not refused or g not in refused] if chosen else []
        # the goals the world's declared task kinds mean over the named things, where the words are worded like
        # the kind ("make sure the milk is cold again": in the fridge and cold, `keep_cold`)
        declared = self._declared_goals(text, speaker, context, _focus(context, view[1], rel), rel)
        by_words = {render(g): v for g, v in declared.items()}  # the same sentence is the same answer
        finals = _distinct([best] + built + joined + [g for g in declared if not refused or g not in refused],
                           render)  # a built goal said as a joined one is built
        if to <= set(_args(best)):  # (where no single answer gives them anything, none is left out)
            finals = [g for g in finals if to <= set(_args(g))]
        # nothing goes back to where the words take it from ("all the books in Olga's bedroom go there"), and a
        # fixture named as a place gets no state the words do not ask of it ("chill the bread in the fridge":
        # the model likes the fridge closed after, by 7 nats)
        back = decompose.sent_back(finals, chosen, context, from_rooms)
        back = [b or s for b, s in zip(back, decompose.states_of_places(finals, found, text))]
        kept_finals = [g for g, b in zip(finals, back) if g in built or not b]
        if any(g not in built for g in kept_finals):
            finals = kept_finals
            best = best if best in finals else next(g for g in finals if g not in built)
        if self.decomposition:
            self.decomposition.update(keys={k.label(): k.best for k in chosen}, finals=finals)
        if len(finals) == 1:
            return best
        # call 3: every joined and built answer (and the best single again: its score is the same as before)
        full = len(finals) <= _FULL
        said = [render(g) for g in finals]
        priors = [by_words.get(s, 0.0) for s in said]  # what each answer gains as a declared goal
        kept = [] if full else list(dict.fromkeys(
            [0] + sorted((i for i, p in enumerate(priors) if p), key=lambda i: -priors[i])[:_KEEP_DECLARED]
            + [i for i, g in enumerate(finals) if g in built]))[:_MAX_SEQ_KEPT]
        tokens = self._token_scores("task", messages, said, full=full, keep=kept).logprobs
        final_totals, _ = scores_of(finals, tokens)
        # as many of each named kind as the words ask for ("all the apples": not one of them), in the
        # enumeration's answers as in the built ones
        numbers = decompose.counted(finals, found, context)
        # and every state the words ask of the things it names ("wash and dry them": each clean and dry)
        unsaid = decompose.unsaid_states(finals, chosen, text, context)
        # ... and something of every noun the words name things to move by ("all glasses and cups": not the
        # cups alone, which the model finds 23 nats likelier)
        unsaid = [u + k for u, k in zip(unsaid, decompose.unsaid_kinds(finals, found, context))]
        # and only the things of a kind in the room the words take them from count as it ("all the books in
        # Olga's bedroom": a book from the study is one too many)
        numbers = [n - s for n, s in zip(numbers, decompose.strays(finals, chosen))]
        value = lambda i: final_totals[i] + self.count_weight * numbers[i] - _UNSAID * unsaid[i]
        enumerated = [i for i, g in enumerate(finals) if g not in built or g == best]
        first = max(enumerated, key=lambda i: value(i) + priors[i])
        # the words are one of the world's own task sentences, every word of its template said: what the world
        # declares it means, the model choosing which things ("the milk is cold again": in the fridge and cold)
        # (and about every thing the words name apart from the rest of its noun: "put the apple and the cheese
        # on the counter" is no one `put`)
        apart = {_head_noun(context, n) for n in _told_apart(rel, context, text)}
        # (a thing is about its noun and its type: magazines are books, "all the books in Sami's bedroom")
        about = lambda g: {w for n in set(_args(g)) | decompose.quantified(g, context) if n in context.entities
                           for w in (_head_noun(context, n), str(context.entities[n].get("type", "")))}
        whole = [i for i, p in enumerate(priors) if p >= _DECLARED and final_totals[i] > ninf
                 and apart <= about(finals[i])]
        if whole:
            return finals[max(whole, key=value)]
        if not built:
            return finals[first]
        among = [first] + [i for i, g in enumerate(finals) if g in built and i != first]
        fit = [decompose.coverage(finals[i], found, context) for i in among]
        self.decomposition.update(scores=[(round(sum(tokens[i][:-1]), 3), round(tokens[i][-1], 3)) if tokens[i] else None
                                          for i in among], fit=[round(f, 3) for f in fit],
                                  counted=[numbers[i] for i in among], unsaid=[unsaid[i] for i in among],
                                  said=[said[i] for i in among],
                                  goals=[finals[i] for i in among])
        kind_weight = self.kind_weight if decompose.names_changed(found) else self.kind_weight_unnamed
        return finals[among[decompose.decide([tokens[i] for i in among], fit, self.end_weight, kind_weight,
                                             [numbers[i] for i in among], self.count_weight,
                                             [unsaid[i] for i in among], _UNSAID,
                                             [priors[i] for i in among])]]

    def _declared_goals(self, text: str, speaker: str, context: Context, focus: Sequence[str],
                        rel: dict[str, float]) -> dict[str, float]:
        """The goals the world's language declares over the things in `focus` and the people and rooms the
        words name, for the task kinds the words are worded like, each with the nats it gains: `_DECLARED`
        times how much of the kind's likeliest template the words say (`rule_interpreter.template_likeness`);
        none where no language is given or no template is said."""
        if self.language is None:
            return {}
        likeness = template_likeness(self.language.tasks, text)
        if not any(likeness.values()):
            return {}
        # not a fixture named less strongly than another of its noun ("the bookshelf in the living room")
        outnamed = decompose.outnamed(context, rel)
        names = [n for n in focus if n not in outnamed
                 and (context.entities[n].get("type") not in ("person", "room") or rel.get(n))]
        goals = declared_goals(self.language, context, names, speaker, together=_told_apart(rel, context, text))
        scored = {g: _DECLARED * max(likeness.get(k, 0.0) for k in kinds) for g, kinds in goals.items()}
        return {g: v for g, v in scored.items() if v > 0}

    def _kinds(self, text: str, speaker: str, context: Context, rel: dict[str, float],
               rooms: list[str]) -> tuple[list, list, list[str]]:
        """The kinds of things in the scene, those the request involves (the model's yes/no per kind, one
        call) with their relations and states over the places it may name, and those places."""
        self.decomposition = {}
        if not self.decompose:
            return [], [], []
        found = decompose.kinds(context, text, rel)
        if not found:
            return [], [], []
        decompose.ask_kinds(lambda m, a: self._token_scores("task", m, a, full=True, slot="entities").logprobs,
                            text, speaker, found)
        decompose.narrow_to_described(found, decompose.described(context, text))
        chosen = decompose.involved(found)
        self.decomposition = {"kinds": {k.label(): round(k.p_yes, 2) for k in found},
                              "involved": [(k.label(), k.count) for k in chosen]}
        person = _person(context.entities, speaker)
        # a place named ("in the fridge") stays one; a tool named ("using the washing machine") is none
        subjects = [n for k in chosen if not k.place for n in k.names] + [n for k in found if k.tool for n in k.names]
        places = decompose.targets(context, rel, person, rooms, exclude=subjects)
        for kind in chosen:
            kind.keys = decompose.relation_keys(context, kind, places, text)
        return found, [k for k in chosen if k.keys], places

    def interpret_update(self, text: str, speaker: str, context: Context, feedback: Sequence[str] = ()) -> Delta:
        """The likeliest change among the enumerated ones and unions of the best few."""
        text = spelling.correct(text, spelling.vocabulary(context))
        rel = relevance(context, text, speaker)
        view = prompt_view(context, text, speaker, self.max_facts, rel)
        named_rooms = _named_rooms(context, rel)
        say = Verbalizer(context.entities, view[1], context.domain, rooms=named_rooms)
        messages = english_messages("update", text, speaker, view, say)
        render = lambda d: _NOW + say.change(d.remove, d.add)
        names = view[1]
        focus = _focus(context, names, rel)
        options = delta_candidates(context, focus, rooms=named_rooms)
        declared: dict[Delta, set[str]] = {}
        likeness: dict[str, float] = {}
        if self.language is not None:  # what the world's people's reports mean in its own terms
            things = [n for n in focus if context.entities.get(n, {}).get("type") != "room"]
            declared = declared_changes(self.language, context, things + named_rooms, speaker)
            likeness = template_likeness(self.language.events, text)
            enumerated = set(options)
            options += [d for d in declared if d not in enumerated]
        # a change the world declares for reports worded like this one gains ("out of the fridge": `warm`)
        prior = lambda d: _DECLARED * max((likeness[k] for k in declared.get(d, ())), default=0.0)
        # a fixture named less strongly than another of its noun is not the one reported ("the light in the
        # dining room" is no bedroom's light)
        outnamed = decompose.outnamed(context, rel)
        options = [d for d in options if not outnamed & {n for a in d.add | d.remove for n in a.args}] or options
        refused = self._refused(text, feedback)
        options = [d for d in options if format_delta(d) not in refused] or options
        if not options:
            return self._generate("interpret_update", text, speaker, context, feedback)
        options = self._ranked(options, lambda d: [n for a in d.add | d.remove for n in a.args], rel)
        # the declared changes the words are most like are scored to their end whatever the beam
        keep = sorted((i for i, d in enumerate(options) if prior(d) > 0), key=lambda i: -prior(options[i]))
        _, _, totals = self._choose("update", messages, options, render, keep=keep[:_KEEP_DECLARED])
        # a change of a person the words do not name loses as a task answer's unnamed kind does ("the kitchen
        # tap is on" is no news of where the speaker is; "Hiro is back in his bedroom" none of the speaker)
        unnamed = _unnamed_people(context, text, speaker, rel)
        unnamed_loss = lambda d: _UNNAMED_PERSON * len(unnamed & {n for a in d.add | d.remove for n in a.args})
        # a state the words say gains, either way ("I wore the shirt, it needs washing": dirty, not dry)
        state_gain = lambda d: _STATE_SAID * any(decompose.reported_states(text, context, a) for a in d.add | d.remove)
        # and so does a change of a thing the words do not name at all ("the kitchen tap is on": no news of the
        # kitchen's light, which the model found likelier by 2-4 nats)
        unsaid_thing = lambda d: _UNNAMED_PERSON * len({a.args[0] for a in d.add | d.remove
                                                 if not rel.get(a.args[0]) and a.args[0] in context.entities
                                                 and context.entities[a.args[0]].get("type") not in ("person", "room")})
        totals = [t - unnamed_loss(d) - unsaid_thing(d) + state_gain(d) + prior(d) for t, d in zip(totals, options)]
        best_lp = max(totals)
        best = options[totals.index(best_lp)]
        self._answered[text] = format_delta(best)
        order = sorted(range(len(options)), key=lambda i: -totals[i])
        top = [options[i] for i in order[:_PAIRS_FROM] if totals[i] >= best_lp - _UNION_MARGIN]
        unions = [u for a, b in combinations(top, 2) if (u := merge([a, b])) is not None]
        if unions:
            _, _, scores = self._choose("update", messages, unions, render)
            scores = [t - unnamed_loss(u) - unsaid_thing(u) + state_gain(u) for t, u in zip(scores, unions)]
            union_lp = max(scores)
            union = unions[scores.index(union_lp)]
            # saying a second change costs the model words even where the words report it
            if union_lp + _UPDATE_PART > best_lp:
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


_SELF_WORDS = frozenset({"i", "i'm", "i've", "i'll", "im", "me", "my", "myself", "we", "we're", "we've", "us", "our"})


def _unnamed_people(context: Context, text: str, speaker: str, rel: dict[str, float]) -> set[str]:
    """The people the words do not name: not by name, nor the speaker by "I", "me", "my" or "we"."""
    said = set(re.findall(r"[a-z']+", text.lower()))
    me = (speaker or "").strip().lower()
    return {n for n, e in context.entities.items() if e.get("type") == "person"
            and rel.get(n, 0.0) < 1.0 and not (n.lower() == me and said & _SELF_WORDS)}


_CONNECTIVES = frozenset({"and", "or", "not", "imply", "forall", "exists"})


def _says_state(goal: str, said: set[str]) -> bool:
    """Whether the words say a state a goal's predicates name ("broken" of `broken`; not "on", "in")."""
    return any(decompose.predicate_words(p) & said for p in re.findall(r"\(([a-z][\w-]*)", goal)
               if p not in _CONNECTIVES)


def _into(goal: str, rooms: set[str], context: Context) -> bool:
    """Whether a goal is one literal taking a thing to one of `rooms` (or fixtures)."""
    args = _args(goal)[1:] if not goal.startswith(("(not", "(and", "(forall", "(or")) else []
    return len(args) == 2 and args[1] in rooms and \
        context.entities.get(args[0], {}).get("type") not in ("person", "robot", "room")


def _unnamed(goal: str, rel: dict[str, float], context: Context, say: Verbalizer) -> int:
    """How many kinds of things (alike phrases) a goal is about that the words do not name."""
    return len({say._phrase(n) for n in _args(goal) if n in context.entities and n != context.robot
                and not rel.get(n)})


def _covered(goal: str, context: Context, say: Verbalizer) -> set[str]:
    """The kinds of things (alike phrases) a goal is about: those it names, and every thing of a type it
    quantifies over ("every light is off" covers the light in the kitchen)."""
    kinds = {say._phrase(n) for n in _args(goal)}
    quantified = re.findall(r"\((?:forall|exists) \(\?\S+ - (\S+)\)", goal)
    if quantified:
        types = context.domain.types
        kinds |= {say._phrase(n) for n, info in context.entities.items()
                  if any(types.is_subtype(str(info.get("type", "object")), t) for t in quantified
                         if str(info.get("type", "object")) in types)}
    return kinds


def _named_kinds(rel: dict[str, float], context: Context, say: Verbalizer, text: str = "") -> set[str]:
    """The kinds of things (alike phrases) the words name most strongly by their own head noun (not through a
    synonym: "laundry" names the clothes, not the laundry basket), rooms and people aside: of the things that
    share a head noun, those named best ("the teal bowl", not the white one; "the dining table", not the coffee
    table), and of those the ones within 1 of the best."""
    return {say._phrase(n) for n in _best_named(rel, context, text)}


def _told_apart(rel: dict[str, float], context: Context, text: str) -> list[str]:
    """The things the words name side by side, each told apart from the rest of its noun ("the grey shirt and
    Ximena's blue pair of socks"; not every milk for "the milk")."""
    best = _best_named(rel, context, text)
    head = lambda n: _head_noun(context, n)
    least: dict[str, float] = {}
    for n in {head(m) for m in best}:
        alike = [m for m, e in context.entities.items() if head(m) == n and e.get("type") not in ("room", "person")]
        least[n] = min(rel.get(m, 0.0) for m in alike) if len(alike) > 1 else -1.0
    return [n for n in best if rel[n] > least[head(n)]]


def _best_named(rel: dict[str, float], context: Context, text: str = "") -> list[str]:
    """The things behind `_named_kinds`: of the things named by their own head noun, those named best of their
    noun and within 1 of the best of all."""
    said = {_stem(w) for w in re.findall(r"[a-z0-9]+", text.lower())}
    head = lambda n: _head_noun(context, n)
    things = {n: r for n, r in rel.items() if context.entities[n].get("type") not in ("room", "person", "robot")
              and (not text or _stem(head(n)) in said)}
    top: dict[str, float] = {}
    for n, r in things.items():
        top[head(n)] = max(top.get(head(n), 0.0), r)
    best = max(things.values(), default=0.0)
    return [n for n, r in things.items() if r >= top[head(n)] and r >= best - 1.0]


def _head_noun(context: Context, name: str) -> str:
    """The last word of an entity's noun ("rack" of "shoe rack")."""
    return (str(context.entities[name].get("noun") or name).lower().split() or [name])[-1]


def _clauses(goal: str) -> int:
    """How many clauses the English of a goal has: its literals' distinct (relation, object) or state (`both
    plates are on the table` is one; `the bread is in the fridge and cold` two); 1 for any other formula."""
    parts = [goal] if _literal_key(goal) else _parts(goal)
    return max(1, len({_literal_key(p)[:2] for p in parts}))


def _named_rooms(context: Context, rel: dict[str, float]) -> list[str]:
    """The rooms the words name (in full: "the bedroom", "Hiro's bedroom")."""
    return [n for n in rel if context.entities[n].get("type") == "room"]


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
    # a state kept true goes with its own thing only ("the shirt is clean and dry", not another shirt dry)
    out = [c for c in out if c is None or not any(k in c and _args(k)[-1] not in
                                                   [a for p in _parts(c) if p != k for a in _args(p)]
                                                   for k in kept)]
    return [c for c in dict.fromkeys(out) if c is not None]


def _distinct(options: list, render) -> list:
    """The options whose English differs (`(is-clean x)` and `(not (is-dirty x))` both say "x is clean"): the
    first of each."""
    seen, out = set(), []
    for o in options:
        said = render(o)
        if said not in seen:
            seen.add(said)
            out.append(o)
    return out


_COUNT_WORDS = {w: n for w, n in decompose.NUMBER_WORDS.items() if n > 1}  # the words that count several


def counts(text: str) -> list[int]:
    """The numbers of things an utterance says ("for two", "three apples", "a couple of books"): 2..12."""
    out = []
    for w in re.findall(r"[a-z0-9]+", text.lower()):
        n = _COUNT_WORDS.get(w) or (int(w) if w.isdigit() and 1 < int(w) <= 12 else None)
        if n and n not in out:
            out.append(n)
    return out


def _literal_key(goal: str) -> tuple[str, tuple[str, ...], str] | None:
    """(polarity and predicate, the other arguments, the subject) of a literal; None for any other formula."""
    negated = goal.startswith("(not (")
    inner = goal[5:-1].strip() if negated else goal
    words = inner.strip("()").split()
    if inner.count("(") != 1 or len(words) < 2 or words[0] in ("and", "or", "not", "forall", "exists", "imply"):
        return None
    return ("not " if negated else "") + words[0], tuple(words[2:]), words[1]


def _groups(scores: dict[str, float], say: Verbalizer, numbers: Sequence[int], named: set[str] = frozenset(),
            context: Context | None = None, rooms: Sequence[str] = (), keys: int = _GROUP_KEYS,
            kinds: int = 4) -> list[str]:
    """Conjunctions of one relation to one object (or one state) over several things, for requests about
    kinds of things ("set the table": plates, forks and glasses on it; "wash the laundry"): per (relation,
    object) among the `keys` best-scored ones, the things of each kind (alike phrase) best first, all of a
    kind or as many as the words count, and the kinds joined: those the words name (`named`) first, then in
    the order of their best thing's score. With `context`: the same over only the things in the `rooms` the
    words name ("the dirty dishes in the kitchen"), and each group with a second state the best-scored keys
    ask of the same things ("washed and dried": clean and dry)."""
    by_key: dict[tuple, list[tuple[float, str, str]]] = {}
    for goal, lp in scores.items():
        key = _literal_key(goal)
        if key is not None:
            by_key.setdefault(key[:2], []).append((lp, key[2], goal))
    # keys by their best single's score; a thing the scoring beam cut (-inf) still joins its kind
    ranked = sorted((k for k in by_key if max(lp for lp, _, _ in by_key[k]) > float("-inf")),
                    key=lambda k: -max(lp for lp, _, _ in by_key[k]))[:keys]
    where = decompose.rooms_of(context) if context is not None and rooms else {}
    out: list[str] = []
    for key in ranked:
        kinds_of: dict[str, list[str]] = {}
        for lp, subject, goal in sorted(by_key[key], key=lambda x: -x[0]):
            if context is None or not decompose.holds(goal, context):  # a group is news for every thing in it
                kinds_of.setdefault(say._phrase(subject), []).append(goal)
        # the kinds the words name, then the best other kind (or the two best when none is named)
        order = [k for k in kinds_of if k in named]
        order += [k for k in kinds_of if k not in named][:max(1, 2 - len(order))]
        kind_lists = [kinds_of[k] for k in order][:kinds]
        here = [[g for g in k if where.get(_literal_key(g)[2]) in rooms] for k in kind_lists] if where else []
        for lists in (kind_lists, [k for k in here if k]):
            if sum(len(k) for k in lists) < 2 and lists is kind_lists:
                continue
            for size in [None, *numbers]:
                picks = [k if size is None else k[:size] for k in lists]
                for n in range(1, len(picks) + 1):
                    parts = [g for k in picks[:n] for g in k]
                    if parts and (len(parts) >= 2 or lists is not kind_lists):
                        out.append(f"(and {' '.join(parts)})" if len(parts) > 1 else parts[0])
    if context is not None:
        out += [g for key in ranked if not key[1] for group in list(out) if (g := _with_state(group, key, context))]
    return list(dict.fromkeys(out))


def _with_state(group: str, key: tuple[str, tuple[str, ...]], context: Context) -> str | None:
    """`group` (one state over several things) with the state `key` asked of the same things too, where the
    domain's predicate takes them; None when it is the group's own state or fits none of them."""
    parts = _parts(group) or ([group] if _literal_key(group) else [])
    keys = {_literal_key(p)[:2] for p in parts}
    if not parts or len(keys) != 1 or next(iter(keys))[1] or key in keys:
        return None
    negated, pred = key[0].startswith("not "), key[0].removeprefix("not ")
    decl = context.domain.predicates.get(pred)
    if decl is None or len(decl.params) != 1:
        return None
    extra = [f"(not ({pred} {s}))" if negated else f"({pred} {s})" for s in (_literal_key(p)[2] for p in parts)
             if context.domain.types.is_subtype(str(context.entities.get(s, {}).get("type", "object")),
                                                decl.params[0][1])]
    return f"(and {' '.join(parts + extra)})" if extra else None


def _unions(scores: dict[str, float], whole: dict[str, float] | None = None, most: int = 3,
            each: int = 3) -> list[str]:
    """Answers about several (relation, object) keys at once, for a request about several relations: the
    `most` best keys (by their best answer's score: a literal or a conjunction of literals about that key),
    joined in that order, each with its best answer by `whole` (default `scores`: the "two books" that
    the words count rather than the one book that is as right as far as it goes) that agrees with those
    already taken (a thing is never put in two places), each key's `each` best answers first in the join."""
    whole = scores if whole is None else whole
    per_key: dict[tuple, list[tuple[float, float, list[str]]]] = {}
    for goal, lp in scores.items():
        parts = [goal] if _literal_key(goal) else _parts(goal)
        keys = {_literal_key(p)[:2] for p in parts}
        if parts and len(keys) == 1:
            per_key.setdefault(keys.pop(), []).append((whole.get(goal, lp), lp, parts))
    ranked = sorted(per_key.values(), key=lambda answers: -max(lp for _, lp, _ in answers))[:most]
    ranked = [[(w, parts) for w, _, parts in sorted(answers, key=lambda x: -x[0])] for answers in ranked]

    def agree(taken: list[str], parts: list[str]) -> bool:
        return all(_compatible(a, b) for a in taken for b in parts)

    out = []
    for first in range(len(ranked)):
        for lp, start in ranked[first][:each]:
            taken = list(start)
            for other in ranked[first + 1:]:
                fit = next((parts for _, parts in other if agree(taken, parts)), None)
                if fit is not None:
                    taken += fit
                    if len(taken) > len(start):
                        out.append(f"(and {' '.join(dict.fromkeys(taken))})")
    return list(dict.fromkeys(out))


def _parts(goal: str) -> list[str]:
    """The literals of `(and <literal> ...)`, or [] for anything else."""
    if not goal.startswith("(and "):
        return []
    out, depth, start = [], 0, None
    for i, ch in enumerate(goal[5:-1], 5):
        if ch == "(":
            depth += 1
            if depth == 1:
                start = i
        elif ch == ")":
            depth -= 1
            if depth == 0:
                out.append(goal[start:i + 1])
    return out if all(_literal_key(p) for p in out) else []


def _compatible(a: str, b: str) -> bool:
    """Two goals that may be asked together: not the same literal twice, not a literal and its negation, not
    one thing in two relations to other things (on the table and on the shelf)."""
    strip = lambda g: g[5:-1] if g.startswith("(not ") else g
    if strip(a) == strip(b):
        return False
    ka, kb = _literal_key(a), _literal_key(b)
    return not (ka and kb and ka[1] and kb[1] and ka[2] == kb[2] and not a.startswith("(not ")
                and not b.startswith("(not "))
