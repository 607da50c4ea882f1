"""Scene sources: where a symbolic world's houses come from (generated homes, iTHOR FloorPlans, 3D scene graphs).

Every world that runs on the household domain is the same symbolic core fed by a `SceneSource`. A source
yields `HouseholdScene`s whose entity count never exceeds `max_entities` and whose room count never exceeds
`n_rooms`, so a Gymnasium observation space fixed at construction fits every episode.
"""

from __future__ import annotations

import abc

import numpy as np

from servicerobot.errors import SceneError
from servicerobot.scenes.household import PRESETS, HouseholdConfig, HouseholdScene, generate_household

__all__ = ["GeneratedHomes", "SceneSource"]


class SceneSource(abc.ABC):
    """Yields one `HouseholdScene` per episode, drawn only from the generator it is given."""

    name: str = "scenes"
    max_entities: int
    n_rooms: int

    @abc.abstractmethod
    def generate(self, rng: np.random.Generator) -> HouseholdScene:
        """The scene of a new episode."""


class GeneratedHomes(SceneSource):
    """Procedural homes of one `HouseholdConfig` (the household world's default source)."""

    name = "household"

    def __init__(self, config: str | HouseholdConfig = "default"):
        if isinstance(config, str):
            if config not in PRESETS:
                raise SceneError(f"unknown size preset {config!r}; presets are {sorted(PRESETS)}")
            config = PRESETS[config]
        self.config = config
        # Counts are exact per config, so one probe fixes the spaces.
        probe = generate_household(config, np.random.default_rng(0))
        self.max_entities = len(probe.entities)
        self.n_rooms = len(probe.rooms)

    def generate(self, rng: np.random.Generator) -> HouseholdScene:
        return generate_household(self.config, rng)
