"""Every item of a generated house has its own description, so tasks and reports name one thing."""

from __future__ import annotations

from collections import Counter

import numpy as np
import pytest

from servicerobot.scenes.household import PRESETS, generate_household


@pytest.mark.parametrize("size,seeds", [("default", range(10)), ("large", range(3))])
def test_item_descriptions_are_unique(size, seeds):
    for seed in seeds:
        scene = generate_household(PRESETS[size], np.random.default_rng(seed))
        phrases = Counter(e.describe() for e in scene.entities.values()
                          if e.pos is None and e.pddl_type not in ("room", "person", "robot"))
        assert [p for p, n in phrases.items() if n > 1] == [], (size, seed)
