"""The offline interpreter of Algorithm 1: no language model.

It reads the task generator's controlled English (`parse_task`), grounds each requirement in the scene
(objects of the class, the target fixture in the named room), writes the problem itself, and when the goal
cannot be met it
1. shifts: fills each missing object with the most similar unused scene object, scored from 3DSG
   attributes against what the missing class is (its profile: household type, affordances, materials,
   description), each attribute list matched by similarity of its words and phrases (`phrase_overlap`;
   sentence embeddings when `EmbeddingSimilarity` is installed, word/character similarity otherwise),
   accepted only above `shift_threshold`;
2. drops what no object can fill (a missing target, too few objects and nothing similar);
3. relaxes with the planner: keeps the largest set of goal literals it can find a plan for, heaviest
   requirements first (greedy by weight: a whole requirement, else literal by literal).
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

from servicerobot.envs.context_matters.goals import Requirement, TaskGoal, literal, parse_task
from servicerobot.envs.context_matters.objects import PROFILES
from servicerobot.planners.relaxation.core import Adjustment, Draft, Toolbox, build_problem, keep_achievable

__all__ = ["OfflineInterpreter", "Slot", "attribute_score", "phrase_overlap"]

_ITEM_TYPES = frozenset({"dish", "food", "clothing", "book", "gadget", "decor"})


@dataclass
class Slot:
    """One requirement grounded in the scene: chosen objects, how many are missing, the target."""

    index: int
    requirement: Requirement
    objects: list[str] = field(default_factory=list)
    missing: int = 0
    target: str | None = None
    target_missing: bool = False

    def literals(self) -> list[str]:
        if self.target_missing:
            return []
        return [literal(self.requirement.relation, o, self.target) for o in self.objects]


_PROFILE_WORDS = frozenset(a for p in PROFILES.values() for a in p.affordances)


def _default_phrases():
    from servicerobot.memory.similarity import LexicalSimilarity

    return LexicalSimilarity()


def phrase_overlap(a, b, similarity=None) -> float:
    """How much two lists of phrases say the same, in [0, 1]: the F1 of soft matching, each phrase counting
    as much as its best match on the other side by `similarity` ("hold" meets "hold food"; identical lists
    give 1, lists with nothing alike 0). Replaces exact-string set overlap, which real 3DSG words defeat."""
    a, b = [x for x in dict.fromkeys(a) if x], [x for x in dict.fromkeys(b) if x]
    if not a or not b:
        return 0.0
    if set(a) == set(b):
        return 1.0
    m = np.asarray((similarity or _default_phrases()).matrix(a, b), dtype=float)
    exact = np.array([[x == y for y in b] for x in a], dtype=float)
    m = np.maximum(m, exact)
    recall, precision = float(m.max(axis=1).mean()), float(m.max(axis=0).mean())
    return 2 * recall * precision / (recall + precision) if recall + precision else 0.0


FOREIGN_MATCH = 0.5  # the least similarity of one affordance pair for an object described in other words


def _best_match(a, b, similarity=None) -> float:
    m = np.asarray((similarity or _default_phrases()).matrix(list(a), list(b)), dtype=float)
    return float(m.max()) if m.size else 0.0


def attribute_score(class_: str, obj, text_similarity: float, min_affordance: float = 0.75,
                    similarity=None) -> float:
    """How well a scene object can stand in for a missing class, in [0, 1], from 3DSG attributes matched by
    similarity of their words (`phrase_overlap`), not by exact strings.

    Functional equivalence gates the score: a candidate of another household type scores 0, and so does one
    whose affordances, in the profiles' own words, overlap less than `min_affordance` with the class's (an
    orange is eaten like an apple but also peeled; a magazine is read like a book but also browsed). A real
    3DSG object described in other words ("grab", "eat from", "set on": under half its affordances are
    profile words) cannot be held to the profiles' phrasing: it passes when one of its affordances is like
    one of the class's (similarity >= `FOREIGN_MATCH`), and its text stands in for the affordance part of the score; so does the text of an
    object with no affordances at all (Context Matters' added objects).
    """
    prof = PROFILES.get(class_)
    if prof is None:
        return 0.5 * text_similarity
    if obj.pddl_type != prof.pddl_type:
        return 0.0
    affordance = phrase_overlap(prof.affordances, obj.affordances, similarity)
    own_words = sum(a in _PROFILE_WORDS for a in obj.affordances)
    foreign = own_words * 2 < len(obj.affordances)
    if not obj.affordances or foreign:
        # Function known only in other words (or not at all, as for Context Matters' added objects): one of
        # its affordances must clearly be one of the class's ("hold" / "hold food") when it has any, and the
        # text speaks for the rest.
        if obj.affordances and min_affordance > 0 and _best_match(prof.affordances, obj.affordances,
                                                                  similarity) < FOREIGN_MATCH:
            return 0.0
        affordance = max(affordance, text_similarity)
    elif affordance < min_affordance:
        return 0.0
    return (0.3 + 0.35 * affordance + 0.15 * phrase_overlap(prof.materials, obj.materials, similarity)
            + 0.2 * text_similarity)


def _similarity():
    from servicerobot.memory.similarity import EmbeddingSimilarity, LexicalSimilarity

    return EmbeddingSimilarity() if EmbeddingSimilarity.available() else LexicalSimilarity()


class OfflineInterpreter:
    """Algorithm 1's interpreter without a language model (see the module docstring)."""

    name = "offline"

    def __init__(self, shift_threshold: float = 0.62, similarity=None, min_affordance: float = 0.75):
        self.shift_threshold = shift_threshold
        self.min_affordance = min_affordance
        self.similarity = similarity
        self.tools: Toolbox | None = None

    # ------------------------------------------------------------------ Algorithm 1
    def begin(self, tools: Toolbox, task: str) -> None:
        self.tools, self.world = tools, tools.world
        self.goal: TaskGoal = parse_task(task)
        self.substitutes: dict[int, list[str]] = {}
        self.dropped_reqs: set[int] = set()
        self.dropped_literals: set[str] = set()
        self.shifted: set[int] = set()
        self.reduced: dict[int, int] = {}
        self.task = task

    def slots(self) -> list[Slot]:
        """The requirements grounded in the scene with the current substitutes."""
        world, out = self.world, []
        for i, req in enumerate(self.goal.requirements):
            slot = Slot(i, req)
            if req.target is not None:
                targets = world.of_class([req.target], req.room) or world.of_class([req.target])
                slot.target = targets[0].label if targets else None
                slot.target_missing = slot.target is None
            if req.count is None:
                found = world.of_class(req.classes, req.room)
                if req.state == "dirty":
                    found = [o for o in found if o.dirty]
                slot.objects = [o.label for o in found]
            else:
                found = [o.label for o in world.of_class([req.class_])]
                n = self.reduced.get(i, req.count)
                chosen = (found + self.substitutes.get(i, []))[:n]
                slot.objects, slot.missing = chosen, n - len(chosen)
            out.append(slot)
        return out

    def current_literals(self) -> list[tuple[str, float]]:
        """The goal literals now asked for, each with its requirement's weight."""
        return [(lit, slot.requirement.weight) for slot in self.slots() if slot.index not in self.dropped_reqs
                for lit in slot.literals() if lit not in self.dropped_literals]

    def problem(self, goal_text: str, feedback: str) -> Draft:
        gaps = []
        for slot in self.slots():
            if slot.index in self.dropped_reqs:
                continue
            req = slot.requirement
            if slot.target_missing:
                gaps.append(f"no {req.target.replace('_', ' ')} for '{req.relation} {req.class_}'")
            elif slot.missing:
                gaps.append(f"{slot.missing} {req.class_}(s) missing ({req.count} needed, "
                            f"{len(slot.objects)} in the scene)")
        if gaps:
            return Draft(None, goal_text, "the goal names objects the scene does not have: " + "; ".join(gaps))
        return Draft(build_problem(self.world, [lit for lit, _ in self.current_literals()]), goal_text)

    def refine(self, draft: Draft, diagnostics: str) -> Draft | None:
        return None  # the problem is built from the scene's own facts: nothing a rewrite could fix

    def adjust(self, draft: Draft, diagnostics: str) -> Adjustment | None:
        shifts, dropped = self._shift_and_drop()
        if not shifts and not dropped and draft.problem is not None:
            dropped = self._relax_with_planner()
        if not shifts and not dropped:
            return None
        return Adjustment(self._text(), shifts, dropped)

    # ------------------------------------------------------------------ shift, drop, relax
    def _shift_and_drop(self) -> tuple[list[dict], list[dict]]:
        shifts, dropped = [], []
        for slot in self.slots():
            req = slot.requirement
            if slot.index in self.dropped_reqs:
                continue
            if slot.target_missing:
                self.dropped_reqs.add(slot.index)
                dropped.append({"requirement": f"{req.relation} {req.class_} {req.target}",
                                "reason": f"the scene has no {req.target.replace('_', ' ')}"})
                continue
            if not slot.missing:
                continue
            if slot.index not in self.shifted:
                self.shifted.add(slot.index)
                picks = self._equivalents(req.class_, slot.missing)
                self.substitutes.setdefault(slot.index, []).extend(label for label, _ in picks)
                shifts.extend({"missing": req.class_, "use": label, "score": round(score, 3)}
                              for label, score in picks)
            have = len(self.slots()[slot.index].objects)
            if have < req.count:
                self.reduced[slot.index] = have
                dropped.append({"requirement": f"{req.count - have} x {req.relation} {req.class_}"
                                + (f" {req.target}" if req.target else ""),
                                "reason": f"only {have} {req.class_}(s) or equivalents in the scene"})
        return shifts, dropped

    def _used(self) -> set[str]:
        used = set()
        for slot in self.slots():
            used.update(slot.objects)
            if slot.target:
                used.add(slot.target)
        return used

    def _equivalents(self, class_: str, k: int) -> list[tuple[str, float]]:
        """Up to `k` unused scene items most like `class_`, each scoring at least `shift_threshold`."""
        used = self._used()
        candidates = [o for o in self.world.objects.values() if o.pddl_type in _ITEM_TYPES
                      and o.class_ != class_ and o.label not in used and o.label in self.world.pddl_objects]
        if not candidates:
            return []
        if self.similarity is None:
            self.similarity = _similarity()
        prof = PROFILES.get(class_)
        query = (f"{class_.replace('_', ' ')}; used to {', '.join(prof.affordances)}; made of "
                 f"{', '.join(prof.materials)}; {prof.description}") if prof else class_.replace("_", " ")
        text = np.asarray(self.similarity.matrix([query], [o.text() for o in candidates]))[0]
        scored = sorted(((attribute_score(class_, o, float(t), self.min_affordance, self.similarity), o.label)
                         for o, t in zip(candidates, text)), key=lambda st: (-st[0], st[1]))
        return [(label, score) for score, label in scored if score >= self.shift_threshold][:k]

    def _relax_with_planner(self) -> list[dict]:
        """Drop the literals outside the heaviest achievable subset (decided by the planner)."""
        weighted = self.current_literals()
        groups: dict[float, list[str]] = {}
        order: list[tuple[float, int]] = []
        for idx, (lit, weight) in enumerate(weighted):
            key = weight
            if key not in groups:
                groups[key] = []
                order.append((key, idx))
            groups[key].append(lit)
        kept: list[str] = []
        dropped = []
        for weight, _ in sorted(order, key=lambda wi: (-wi[0], wi[1])):
            group = groups[weight]
            if self.tools.solvable(kept + group):
                kept += group
                continue
            kept, lost = keep_achievable(kept, group, self.tools.solvable)
            self.dropped_literals.update(lost)
            dropped += [{"literal": lit, "reason": "no plan achieves it together with the more important goals"}
                        for lit in lost]
        return dropped

    def _text(self) -> str:
        """The task sentence with what was shifted and dropped, as the robot would report it."""
        notes = [f"{label} for a {self.goal.requirements[i].class_}" for i, labels in self.substitutes.items()
                 for label in labels]
        text = self.task
        if notes:
            text += "; using " + ", ".join(notes)
        if self.dropped_reqs or self.dropped_literals:
            text += "; without " + ", ".join(
                [self.goal.requirements[i].relation + " " + self.goal.requirements[i].class_
                 for i in sorted(self.dropped_reqs)] + sorted(self.dropped_literals))
        return text
