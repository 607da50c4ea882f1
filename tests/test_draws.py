"""`Draws` gives numpy's own numbers and leaves the generator where numpy's calls would (issue 37: resets)."""

from __future__ import annotations

import random

import numpy as np
import pytest

from servicerobot.scenes.draws import Draws, draws
from servicerobot.scenes.household import generate_household

# small ranges, ranges whose rejection step is often taken (near 2**32), and 2**32 itself
_RANGES = [1, 2, 3, 5, 7, 10, 13, 100, 1000, 2**31 - 1, 2**31 + 1, 3 * 2**30, 2**32 - 5, 2**32]


@pytest.mark.parametrize("trial", range(40))
def test_draws_match_numpy_call_for_call_and_sync_leaves_the_same_state(trial):
    plan = random.Random(trial)
    reference, ours = np.random.default_rng(trial), np.random.default_rng(trial)
    if trial % 2:  # a spare 32-bit half buffered before the draws start
        reference.integers(7), ours.integers(7)
    fast = Draws(ours, batch=plan.choice([1, 3, 64, 256]))
    for _ in range(plan.randint(0, 600)):
        if plan.random() < 0.4:
            assert fast.random() == reference.random()
        else:
            n = plan.choice(_RANGES)
            assert fast.integers(n) == int(reference.integers(n))
    fast.sync()
    assert ours.bit_generator.state == reference.bit_generator.state
    # the same Draws goes on after a sync (as long as nothing drew from the generator itself meanwhile)
    assert fast.integers(50) == int(reference.integers(50)) and fast.random() == reference.random()
    fast.sync()
    assert ours.bit_generator.state == reference.bit_generator.state
    assert ours.integers(1000) == reference.integers(1000) and ours.random() == reference.random()


def test_other_methods_go_to_the_generator_in_its_place_in_the_stream():
    reference, ours = np.random.default_rng(5), np.random.default_rng(5)
    fast = Draws(ours)
    for _ in range(30):
        assert fast.integers(2, 16) == int(reference.integers(2, 16))
        assert fast.integers(9) == int(reference.integers(9)) and fast.random() == reference.random()
        assert fast.choice(["a", "b", "c", "d"], size=2, replace=False).tolist() == \
            reference.choice(["a", "b", "c", "d"], size=2, replace=False).tolist()
        assert fast.integers(4, size=3).tolist() == reference.integers(4, size=3).tolist()
    fast.sync()
    assert ours.bit_generator.state == reference.bit_generator.state


def test_draws_refuse_ranges_numpy_would_draw_otherwise():
    fast = Draws(np.random.default_rng(0))
    with pytest.raises(ValueError, match="n >= 1"):
        fast.integers(0)
    with pytest.raises(ValueError, match="up to 2\\*\\*32"):
        fast.integers(2**32 + 1)


def test_a_generator_that_is_not_pcg64_is_drawn_from_directly():
    assert draws(np.random.Generator(np.random.MT19937(0))) is None
    first = generate_household("small", np.random.Generator(np.random.MT19937(3)))
    again = generate_household("small", np.random.Generator(np.random.MT19937(3)))
    assert first.init == again.init and first.entities == again.entities


def test_generating_a_house_leaves_the_generator_as_numpy_draws_would():
    # the house's draws all go through Draws; what follows them sees numpy's stream at the same place
    rng = np.random.default_rng(11)
    generate_household("small", rng)
    after = rng.bit_generator.state
    again = np.random.default_rng(11)
    generate_household("small", again)
    assert again.bit_generator.state == after
    assert after != np.random.default_rng(11).bit_generator.state
