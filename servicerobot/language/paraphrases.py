"""The paraphrase set: utterances outside the household templates with their true deltas and goals, and
how well an interpreter reads them.

The set (`paraphrases.json`, package data) was written by hand for the small house, seed 0: other verbs,
word orders, synonyms and indirect requests than the world speaks. Each item is read against the robot's
prior memory of that house with the facts of the entities the true answer names (and the speaker) as the
retrieved context, so the score measures reading, not retrieval.
"""

from __future__ import annotations

import json
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from functools import cache
from importlib import resources
from typing import Any

from servicerobot.language.interpreter import Context, Interpreter
from servicerobot.memory.triplets import Delta

__all__ = ["ParaphraseItem", "ParaphraseSetting", "evaluate", "load_paraphrases", "setting"]

_FORMAT = "servicerobot-paraphrases/1"


@dataclass(frozen=True)
class ParaphraseItem:
    """One utterance: who says it, its kind, and the true delta (updates) or goal (tasks)."""

    id: str
    speaker: str
    text: str
    kind: str
    delta: Delta | None = None
    goal: str | None = None

    def entities(self) -> list[str]:
        """The names the true answer uses (for a goal: every word but variables; callers keep the known ones)."""
        if self.delta is not None:
            return sorted({n for atom in self.delta.remove | self.delta.add for n in atom.args})
        return sorted({tok for tok in (self.goal or "").replace("(", " ").replace(")", " ").split()
                       if not tok.startswith("?") and tok != "-"})


@cache
def _document(path: str | None = None) -> dict:
    """The set shipped with the package, or another one in its format (`path`: a JSON file)."""
    if path is None:
        text = resources.files("servicerobot.language").joinpath("paraphrases.json").read_text("utf-8")
    else:
        with open(path, encoding="utf-8") as f:
            text = f.read()
    doc = json.loads(text)
    if doc.get("format") != _FORMAT:
        raise ValueError(f"{path or 'paraphrases.json'} is not a {_FORMAT} file (its \"format\" must say so)")
    return doc


def load_paraphrases(path: str | None = None) -> list[ParaphraseItem]:
    """Every item of the set (`path`: another set in the same format), in the file's order."""
    items = []
    for raw in _document(path)["items"]:
        delta = Delta.from_json(raw["delta"]) if raw["kind"] == "update" else None
        items.append(ParaphraseItem(raw["id"], raw["speaker"], raw["text"], raw["kind"], delta, raw.get("goal")))
    return items


@dataclass
class ParaphraseSetting:
    """The world the set is about, and the robot's prior memory of it."""

    env: Any
    memory: Any

    def context(self, item: ParaphraseItem) -> Context:
        """The domain, the whole catalogue, and the facts of the true answer's entities and the speaker."""
        kg = self.memory
        seeds = [n for n in [*item.entities(), item.speaker.lower()] if kg.has_entity(n)]
        facts = {a for n in seeds for a in kg.facts_about(n)}
        return Context(kg.domain, kg.entities, frozenset(facts), kg.robot)


def setting(path: str | None = None) -> ParaphraseSetting:
    """The world the set was written for (the shipped one: the small house, seed 0), and the robot's prior
    memory of it."""
    import gymnasium as gym

    import servicerobot  # noqa: F401  (registers the ids)
    from servicerobot.envs.observation import decode
    from servicerobot.memory.graph import KnowledgeGraph

    world = _document(path)["world"]
    env = gym.make(world["env"], size=world["size"], n_tasks=2, update_mode="verbal")
    obs, _ = env.reset(seed=world["seed"])
    kg = KnowledgeGraph.from_prior(env.unwrapped.world.domain, decode(obs).prior, "robot")
    return ParaphraseSetting(env, kg)


def evaluate(interpreter: Interpreter, items: Sequence[ParaphraseItem] | None = None,
             place: ParaphraseSetting | None = None,
             on_item: Callable[[dict], None] | None = None) -> dict:
    """Classify and interpret every item; the share right of each, and one row per item.

    An update is right when its delta equals the true one; a task when its goal is equivalent to the true
    goal (Planetarium's check, on the true state). Any error counts as wrong and is recorded.
    """
    from servicerobot.envs.evaluation import GoalScorer

    items = list(items if items is not None else load_paraphrases())
    place = place or setting()
    scorer = GoalScorer(place.env.unwrapped.world, check_solvable=False)
    rows = []
    for item in items:
        context = place.context(item)
        row: dict[str, Any] = {"id": item.id, "kind": item.kind, "text": item.text}
        t0 = time.perf_counter()
        try:
            row["classified"] = interpreter.classify(item.text, item.speaker, context)
        except Exception as exc:  # noqa: BLE001 - any failure to read is a wrong answer, recorded
            row["classified"] = f"error: {exc}"
        try:
            if item.kind == "update":
                delta = interpreter.interpret_update(item.text, item.speaker, context)
                row["answer"] = delta.to_json()
                row["correct"] = delta == item.delta
            else:
                goal = interpreter.interpret_task(item.text, item.speaker, context)
                row["answer"] = goal
                row["correct"] = bool(scorer.score(goal, item.goal)["correct"])
        except Exception as exc:  # noqa: BLE001
            row["answer"] = f"error: {type(exc).__name__}: {str(exc)[:200]}"
            row["correct"] = False
        row["seconds"] = round(time.perf_counter() - t0, 3)
        rows.append(row)
        if on_item is not None:
            on_item(row)
    return {"interpreter": interpreter.name, "items": len(rows), **_shares(rows), "rows": rows}


def _shares(rows: list[dict]) -> dict:
    def share(selected: list[dict], key: Callable[[dict], bool]) -> float | None:
        return round(sum(map(key, selected)) / len(selected), 3) if selected else None

    updates = [r for r in rows if r["kind"] == "update"]
    tasks = [r for r in rows if r["kind"] == "task"]
    return {"classify_accuracy": share(rows, lambda r: r["classified"] == r["kind"]),
            "update_accuracy": share(updates, lambda r: r["correct"]),
            "task_accuracy": share(tasks, lambda r: r["correct"]),
            "accuracy": share(rows, lambda r: r["correct"] and r["classified"] == r["kind"]),
            "updates": len(updates), "tasks": len(tasks)}
