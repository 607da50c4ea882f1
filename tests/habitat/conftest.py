"""Shared fixtures of the habitat tests."""

from __future__ import annotations

import numpy as np
import pytest


@pytest.fixture(scope="module")
def start_executor():
    """A function that builds a household scene from a 3DSG (seed 0, one person) and resets a `HabitatExecutor`
    on it (`facts(scene)`, default the scene's own init): (scene, executor); every executor is closed after the
    module."""
    from servicerobot.envs.habitat.executor import HabitatExecutor
    from servicerobot.scenes.gibson import to_household_scene

    started = []

    def start(sg, facts=None):
        rng = np.random.default_rng(0)
        scene = to_household_scene(sg, rng, n_people=1)
        ex = HabitatExecutor()
        started.append(ex)
        ex.reset(scene, scene.init if facts is None else facts(scene), rng)
        return scene, ex

    yield start
    for ex in started:
        ex.close()
