"""Tasks and people of the PyBullet world: inspection and pick-and-place requests, and people who move things.

Tasks reuse the household `Task` record (text, speaker, ground-truth PDDL goal, budget); events reuse
`HumanEvent` (true delta, utterance), so the env's episode loop and `info["oracle"]` work unchanged.
"""

from __future__ import annotations

from typing import Any, Protocol

import numpy as np

from servicerobot.envs.household.events import HumanEvent
from servicerobot.envs.household.tasks import Task
from servicerobot.envs.language import Language, Phrasing
from servicerobot.pddl import Atom
from servicerobot.scenes.apartment import Layout

__all__ = ["LANGUAGE", "PEOPLE", "TASK_KINDS", "PyBulletTasks"]
PEOPLE: tuple[str, ...] = ("Ana", "Ben", "Chloe", "Dev")

LANGUAGE = Language(
    "pybullet",
    tasks={
        "inspect": Phrasing((
            "Please inspect the suspicious {item} in the {room}.",
            "There is a suspicious {item} in the {room}. Could you check it?",
            "Could you inspect the {item} in the {room}? It looks suspicious.",
        ), goal="(safe {item})"),
        "pick_place": Phrasing((
            "Put the {item} on the {furniture} in the {room}.",
            "Could you bring the {item} to the {furniture} in the {room}?",
            "Please move the {item} from the {source} to the {furniture} in the {room}.",
        ), goal="(item-on {item} {furniture})"),
    },
    events={
        "move": Phrasing(("I moved the {item} to the {furniture} in the {room}.",),
                         remove=("(item-on {item} ?)",), add=("(item-on {item} {furniture})",)),
    },
    fields={"item": "item", "furniture": "fixture", "source": "fixture", "room": "room"},
)
"""What people in the PyBullet apartment say and what it means; tasks and events are rendered from it and the
rule interpreter reads it (`servicerobot.envs.language`)."""
TASK_KINDS: tuple[str, ...] = tuple(LANGUAGE.tasks)


class TaskWorld(Protocol):
    """What tasks and people read and change of the world (`PyBulletWorld` has it; named here so that this
    module and the world's do not import each other)."""

    layout: Layout
    state: Any  # the true state: `.atoms`
    sim: Any  # the PyBullet scene: `set_item`, `settle`
    adapter: Any  # poses -> facts: `furniture`, `items`

    def free_spot(self, item: str, furniture: str) -> tuple[float, float] | None: ...

    def refresh(self) -> None: ...


class PyBulletTasks:
    """Draws tasks from the world's current true state, and people's background events."""

    def __init__(self, world: TaskWorld, rng: np.random.Generator, human_rng: np.random.Generator,
                 budgets: dict[str, int]):
        self.world = world
        self.rng = rng
        self.human_rng = human_rng
        self.budgets = budgets

    def _pick(self, seq):
        return seq[int(self.rng.integers(len(seq)))] if seq else None

    def _say(self, kind: str, **fields: str) -> str:
        return self._pick(LANGUAGE.tasks[kind].templates).format(**fields)

    def _room_label(self, room: str) -> str:
        return next(r.label for r in self.world.layout.rooms if r.name == room)

    def sample(self, kind: str) -> Task | None:
        """A task of `kind` whose goal is false now, or None when the apartment offers none."""
        w = self.world
        atoms = w.state.atoms
        speaker = self._pick(list(PEOPLE))
        if kind == "inspect":
            boxes = [i for i in w.layout.items if i.suspicious and Atom("safe", (i.name,)) not in atoms]
            item = self._pick(boxes)
            if item is None:
                return None
            text = self._say(kind, item=item.noun, room=self._room_label(item.room))
            return Task(kind, text, speaker, LANGUAGE.goal(kind, item=item.name), frozenset({item.name}),
                        self.budgets[kind])
        if kind == "pick_place":
            where = {a.args[0]: a.args[1] for a in atoms if a.predicate == "item-on"}
            options = []
            for item in w.layout.items:
                if item.name not in where:
                    continue
                for f in w.layout.furniture:
                    if f.name != where[item.name] and w.free_spot(item.name, f.name) is not None:
                        options.append((item, f))
            if not options:
                return None
            item, f = options[int(self.rng.integers(len(options)))]
            source = w.adapter.furniture[where[item.name]].kind
            text = self._say(kind, item=item.noun, furniture=f.kind, source=source, room=self._room_label(f.room))
            return Task(kind, text, speaker, LANGUAGE.goal(kind, item=item.name, furniture=f.name),
                        frozenset({item.name, f.name}), self.budgets[kind])
        return None

    def background(self, protected: frozenset[str]) -> HumanEvent | None:
        """Someone moves an item the active task does not name from one piece of furniture to another."""
        w = self.world
        rng = self.human_rng
        where = {a.args[0]: a.args[1] for a in w.state.atoms if a.predicate == "item-on"}
        items = [i for i in sorted(where) if i not in protected]
        if not items:
            return None
        item = items[int(rng.integers(len(items)))]
        targets = [f.name for f in w.layout.furniture if f.name != where[item] and f.name not in protected]
        order = [targets[int(k)] for k in rng.permutation(len(targets))]
        for target in order:
            spot = w.free_spot(item, target)
            if spot is None:
                continue
            before = w.state.atoms
            w.sim.set_item(item, *spot, support=target)
            w.sim.settle()
            w.refresh()
            add, delete = w.state.atoms - before, before - w.state.atoms
            f = w.adapter.furniture[target]
            noun = w.adapter.items[item].noun
            actor = PEOPLE[int(rng.integers(len(PEOPLE)))]
            (template,) = LANGUAGE.events["move"].templates
            text = template.format(item=noun, furniture=f.kind, room=self._room_label(f.room))
            return HumanEvent("move", actor, frozenset(add), frozenset(delete), text, told=frozenset(add),
                              told_removed=frozenset(delete), category="background", entities=(item,))
        return None
