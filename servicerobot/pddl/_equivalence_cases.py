"""Large equivalence cases for the scaling benchmark and the hostile tests: same-size blocksworld pairs.

`same_size_pair(n, seed, equal)` draws a random blocksworld state of n blocks as :init and another as
the goal (every fact of it, a conjunction); the second problem is the first with its objects renamed
and every list shuffled, and, when `equal` is False, one goal literal changed (an `on` moved to
another block). `table_to_tower(n)` is n blocks on the table with the goal of one n-block tower.
"""

from __future__ import annotations

import random

from servicerobot.pddl._equivalence_bruteforce import _blocks_state, _lit
from servicerobot.pddl.atoms import Atom

__all__ = ["renamed", "same_size_pair", "table_to_tower"]


def _problem(name: str, objects: list[str], init: list[Atom], goal: list[str]) -> str:
    atoms = " ".join(_lit(a) for a in init)
    return (f"(define (problem {name}) (:domain blocksworld) (:objects {' '.join(objects)})\n"
            f" (:init {atoms})\n (:goal (and {' '.join(goal)})))\n")


def renamed(objects: list[str], init: list[Atom], goal: list[Atom], rng: random.Random,
            name: str = "b") -> str:
    """The problem with its objects renamed (a random bijection) and objects, init and goal shuffled."""
    names = [f"x{i}" for i in range(len(objects))]
    rng.shuffle(names)
    ren = dict(zip(objects, names))
    objs = list(names)
    rng.shuffle(objs)
    init_b = [Atom(a.predicate, tuple(ren[x] for x in a.args)) for a in init]
    goal_b = [_lit(Atom(a.predicate, tuple(ren[x] for x in a.args))) for a in goal]
    rng.shuffle(init_b)
    rng.shuffle(goal_b)
    return _problem(name, objs, init_b, goal_b)


def same_size_pair(n: int, seed: int = 0, equal: bool = True) -> tuple[str, str]:
    """Two n-block problems: the second renamed and shuffled; with `equal` False, one goal literal changed.

    The goal is a random tower layout (its `on` and `on-table` facts); the change moves the top block
    of one goal tower onto the top of another, so both goals stay satisfiable.
    """
    rng = random.Random(seed)
    objects = [f"b{i}" for i in range(n)]
    init = sorted(_blocks_state(rng, objects))
    goal = sorted(a for a in _blocks_state(rng, objects) if a.predicate in ("on", "on-table"))
    text_a = _problem("a", objects, init, [_lit(a) for a in goal])
    goal_b = list(goal)
    if not equal and n > 1:
        covered = {a.args[1] for a in goal if a.predicate == "on"}
        tops = [o for o in objects if o not in covered]
        if len(tops) < 2:  # one tower: put its top block on the table instead
            i = next(i for i, a in enumerate(goal_b) if a.predicate == "on" and a.args[0] == tops[0])
            goal_b[i] = Atom("on-table", (tops[0],))
        else:
            x, z = rng.sample(tops, 2)
            i = next(i for i, a in enumerate(goal_b) if a.args[0] == x)
            goal_b[i] = Atom("on", (x, z))
    return text_a, renamed(objects, init, goal_b, rng)


def table_to_tower(n: int, seed: int = 0) -> tuple[str, str]:
    """n blocks on the table, goal one tower of all n; the second problem is the first renamed."""
    rng = random.Random(seed)
    objects = [f"b{i}" for i in range(n)]
    init = [Atom("arm-empty", ())]
    init += [Atom(p, (o,)) for o in objects for p in ("on-table", "clear")]
    goal = [Atom("on", (objects[i], objects[i + 1])) for i in range(n - 1)]
    return _problem("a", objects, init, [_lit(a) for a in goal]), renamed(objects, init, goal, rng)
