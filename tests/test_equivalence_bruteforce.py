"""`equivalent` agrees with brute-force enumeration on random small blocksworld and gripper pairs."""

from __future__ import annotations

import random

from servicerobot.pddl import domains, parse_problem
from servicerobot.pddl._equivalence_bruteforce import brute_force_equivalent, random_pair
from servicerobot.pddl.equivalence import equivalent

PAIRS = 400


def test_agrees_with_brute_force() -> None:
    rng = random.Random(20261121)
    disagreements, positives = [], 0
    for i in range(PAIRS):
        name = "blocksworld" if i % 2 == 0 else "gripper"
        dom = domains.load(name)
        a, b = random_pair(rng, name)
        pa, pb = parse_problem(a, dom), parse_problem(b, dom)
        truth = brute_force_equivalent(dom, pa, pb)
        positives += truth
        if equivalent(pa, pb, dom) != truth:
            disagreements.append((truth, a, b))
    assert not disagreements, disagreements[:3]
    assert PAIRS // 4 < positives < 3 * PAIRS // 4  # both verdicts are well represented
