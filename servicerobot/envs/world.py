"""The `World` interface: the hooks one simulation backend gives `ServiceRobotEnv`."""

from __future__ import annotations

import abc
from dataclasses import dataclass
from typing import Any

import numpy as np

from servicerobot.envs.json_text import dumps
from servicerobot.envs.language import Language

__all__ = ["NodeNeeds", "Utterance", "World"]


@dataclass(frozen=True)
class NodeNeeds:
    """What one episode of a world needs from the machine that runs it, declared once by the world's module
    (`node_needs(options)` beside its factory); the experiment runner's Ray back end asks a cluster for it.

    `gpu`: the episode renders on a GPU, whose physical id the runner passes in the world option `gpu_option`
    (Vulkan and EGL pick devices by physical index: they ignore `CUDA_VISIBLE_DEVICES`). `resources`: Ray
    custom resources naming what must be staged on the node (`ray start --resources '{"unity": 1}'`: the THOR
    build, habitat-sim). A world module without `node_needs` runs anywhere with a CPU.
    """

    gpu: bool = False
    resources: tuple[str, ...] = ()
    gpu_option: str | None = None
    why: str = ""  # for messages: what needs it ("AI2-THOR's Unity controller renders on a GPU")


@dataclass(frozen=True)
class Utterance:
    """Something a person said: a task or an update. `events` are the world events it reports."""

    speaker: str
    text: str
    kind: str  # "task" | "update" (evaluation only: the robot must tell them apart itself)
    events: tuple = ()

    def to_obs(self) -> dict:
        return {"speaker": self.speaker, "text": self.text}


class World(abc.ABC):
    """A simulation backend: true state, robot skills, people, tasks and perception.

    `ServiceRobotEnv` owns the episode loop (task sequence, rewards, budgets, observation encoding);
    a world only answers these hooks. `reset` must draw every random choice from the generator it is
    given, so one seed gives one episode.
    """

    name: str = "world"
    n_tasks: int
    max_entities: int
    n_rooms: int
    domain: Any
    language: Language  # what its people say and what it means, declared beside the world (`envs.language`)

    @abc.abstractmethod
    def reset(self, rng: np.random.Generator) -> None:
        """Build a new episode's world."""

    @abc.abstractmethod
    def prior(self) -> dict:
        """What the robot knows at the start (entity catalogue and facts)."""

    def prior_json(self) -> str:
        """`prior()` as the observation's compact JSON text."""
        return dumps(self.prior())

    @abc.abstractmethod
    def execute(self, action: str) -> tuple[str, str]:
        """Run one robot skill; return (canonical action, error message or "")."""

    @abc.abstractmethod
    def next_task(self, index: int):
        """The task with this index in the episode (setup events in `task.setup`), or None when done."""

    @abc.abstractmethod
    def announce(self, task) -> Utterance:
        """The utterance in which a person gives the task."""

    @abc.abstractmethod
    def goal_holds(self, task) -> bool:
        """Whether the task's ground-truth goal holds in the true state."""

    @abc.abstractmethod
    def tick(self, task, step_in_task: int) -> list:
        """Advance the people for one step; return the events that happened (already applied)."""

    @abc.abstractmethod
    def utterances(self, events: list, told: list[bool]) -> list[Utterance]:
        """What people say about the events that are told."""

    @abc.abstractmethod
    def percept(self) -> dict:
        """What the robot perceives now: {"room", "entities": {name: type}, "facts": [[s, p, o], ...]}."""

    @abc.abstractmethod
    def self_percept(self) -> dict:
        """The robot's own facts and room only (what `verbal` mode perceives), in `percept()`'s format."""

    @abc.abstractmethod
    def robot_room_index(self) -> int:
        """Index of the robot's room."""

    @abc.abstractmethod
    def visible_mask(self) -> np.ndarray:
        """int8 mask over entities (length `max_entities`) of what is in view."""

    def task_blocked(self) -> str:
        """Why the active task cannot go on ("" while it can), e.g. a physical executor that keeps failing one
        action; the env then ends the task as failed with this reason."""
        return ""

    def render_frame(self, overlay: dict, width: int, height: int) -> np.ndarray:
        """An RGB frame of the world; worlds without a renderer raise NotImplementedError."""
        raise NotImplementedError(f"the {self.name} world has no renderer")
