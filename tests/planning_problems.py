"""Planning problems shared by the planner back-end tests: IPC blocksworld / gripper and small households."""

from __future__ import annotations

import dataclasses
import itertools
from types import SimpleNamespace

import numpy as np

from servicerobot.envs.household.state import HouseholdState
from servicerobot.oracle import relevant_problem
from servicerobot.pddl import Interpreter, Problem
from servicerobot.scenes.household import PRESETS, generate_household, household_domain

HOUSEHOLD = household_domain()


def blocks(start: list[list[str]], goal: list[list[str]], arm_empty: bool = True) -> str:
    """A blocksworld problem from towers, bottom block first."""

    def atoms(towers: list[list[str]], with_state: bool) -> list[str]:
        out = []
        for tower in towers:
            out += [f"(on-table {tower[0]})"] if with_state else []
            out += [f"(on {top} {below})" for below, top in itertools.pairwise(tower)]
            out += [f"(clear {tower[-1]})"] if with_state else []
        return out

    names = sorted(b for tower in start for b in tower)
    return (
        f"(define (problem bw) (:domain blocksworld) (:objects {' '.join(names)}) "
        f"(:init {'(arm-empty)' if arm_empty else ''} {' '.join(atoms(start, True))}) "
        f"(:goal (and {' '.join(atoms(goal, False))})))"
    )


def gripper(n: int) -> str:
    balls = [f"ball{i}" for i in range(1, n + 1)]
    init = ["(room rooma)", "(room roomb)", "(gripper left)", "(gripper right)", "(at-robby rooma)",
            "(free left)", "(free right)"]
    init += [f"(ball {b})" for b in balls] + [f"(at {b} rooma)" for b in balls]
    goal = " ".join(f"(at {b} roomb)" for b in balls)
    return (f"(define (problem gripper{n}) (:domain gripper) "
            f"(:objects rooma roomb left right {' '.join(balls)}) "
            f"(:init {' '.join(init)}) (:goal (and {goal})))")


SHUFFLE8 = blocks(
    [["a", "b", "c"], ["d", "e"], ["f", "g", "h"]], [["h", "a", "e"], ["c", "g", "b", "d", "f"]]
)
CYCLE = blocks([["a"], ["b"], ["c"]], [["a", "b", "c", "a"]])  # a on b on c on a: unsolvable


def household_world() -> SimpleNamespace:
    """A small household as the oracle sees it (true state, interpreter)."""
    scene = generate_household(PRESETS["small"], np.random.default_rng(0))
    return SimpleNamespace(scene=scene, state=HouseholdState(scene, scene.init),
                           interpreter=Interpreter(HOUSEHOLD, scene.objects), domain=HOUSEHOLD)


def household_problem(world, goal: str, quantified: bool = True) -> Problem:
    """The oracle's pruned problem for `goal`, keeping the goal as written (quantifiers and all)."""
    problem = relevant_problem(world, goal)
    if quantified:
        problem = dataclasses.replace(problem, goal=world.interpreter.compile_goal(goal).formula)
    return problem


def pick_and_place_goal(world) -> str:
    """`(on ITEM SURFACE)` for an item on a surface and a surface in another room."""
    scene = world.scene
    item, surface = next(a.args for a in sorted(scene.init) if a.predicate == "on")
    room = scene.entities[surface].room
    target = next(n for n, e in scene.entities.items() if e.pddl_type == "surface" and e.room != room)
    return f"(on {item} {target})"
