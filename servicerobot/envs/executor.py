"""The `Executor` interface: a physical backend that runs the skills the symbolic core accepted.

A world on the household domain checks every action with the PDDL interpreter on the true state. With an
executor, an applicable action is then run in the backend (habitat-sim, AI2-THOR's Unity build, ...):
if the backend fails, the symbolic delta is not applied and the backend's message becomes the action's
error. People's changes are mirrored into the backend by `sync`, and what the robot perceives comes from
the backend's observations through an adapter (`percept`).
"""

from __future__ import annotations

import abc
from typing import Any

import numpy as np

from servicerobot.pddl import Atom

__all__ = ["Executor"]


class Executor(abc.ABC):
    """Runs skills in a backend, keeps it in step with the true state, and perceives through an adapter."""

    name: str = "executor"

    @abc.abstractmethod
    def reset(self, scene: Any, facts: frozenset[Atom], rng: np.random.Generator) -> None:
        """Build the backend's scene for a new episode from the scene and its initial facts."""

    @abc.abstractmethod
    def execute(self, action: Any, add: frozenset[Atom], delete: frozenset[Atom]) -> str:
        """Run an applicable ground action; return "" on success or the backend's error message.

        `add`/`delete` are the symbolic effects the core will apply when this returns "".
        """

    @abc.abstractmethod
    def sync(self, facts: frozenset[Atom]) -> None:
        """Bring the backend in line with the true facts after people changed them (diff with the last sync)."""

    def percept(self, symbolic: dict) -> dict:
        """What the robot perceives, from the backend's observations; `symbolic` is the core's percept."""
        return symbolic

    def render_frame(self, overlay: dict, width: int, height: int) -> np.ndarray | None:
        """A frame from the backend, or None to use the world's own renderer."""
        return None

    def close(self) -> None:
        """Free the backend's resources."""
