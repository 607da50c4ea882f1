"""The household state's indexes and the step-rate shortcuts agree with recomputing from the atoms."""

from __future__ import annotations

import re
from bisect import bisect_right

import gymnasium as gym
import numpy as np
import pytest

import servicerobot  # noqa: F401
from servicerobot.envs.household.events import _background_kinds
from servicerobot.envs.household.language import EVENT_TEMPLATES, TASK_TEMPLATES, capitalize, render_template
from servicerobot.envs.household.state import LOCATION_PREDICATES
from servicerobot.pddl import Atom
from servicerobot.scenes.household import ROBOT


def _check_indexes(world) -> None:
    """Every index of the state, recomputed from its atoms."""
    state = world.state
    atoms = state.atoms
    assert atoms == frozenset(state.live)
    where = {}
    for a in atoms:
        if a.predicate in LOCATION_PREDICATES:
            where[a.args[1] if a.predicate == "holding" else a.args[0]] = a
    assert state.where == where
    assert state.placed == {i for i, a in where.items() if a.predicate in ("on", "inside", "held-by")}
    assert state.held == {i for i, a in where.items() if a.predicate == "held-by"}
    flags: dict[str, set[str]] = {}
    for a in atoms:
        if len(a.args) == 1:
            flags.setdefault(a.predicate, set()).add(a.args[0])
    assert {p: names for p, names in state.flags.items() if names} == flags
    for name, indexed in state.by_arg.items():
        assert indexed == {a for a in atoms if name in a.args}
    for item in world.humans.items:
        assert state.location(item) == where.get(item)


def _random_episode(seed: int, steps: int, **kwargs):
    """Steps an env with applicable actions and some junk (seeded), yielding the env after each step."""
    env = gym.make("ServiceRobot-v0", event_rate=0.5, disturbance_prob=1.0, **kwargs)
    env.reset(seed=seed)
    rng = np.random.default_rng(seed)
    world = env.unwrapped.world
    for i in range(steps):
        actions = sorted(str(g) for g in world.interpreter.applicable_actions(world.state.atoms))
        action = "(fly robot)" if rng.random() < 0.1 or not actions else actions[int(rng.integers(len(actions)))]
        _, _, term, trunc, _ = env.step(action)
        yield env
        if term or trunc:
            env.reset(seed=seed + 1000 + i)


@pytest.mark.parametrize("seed", [0, 1])
def test_indexes_follow_actions_and_people(seed):
    for env in _random_episode(seed, 120):
        _check_indexes(env.unwrapped.world)


def test_atoms_is_a_snapshot():
    env = gym.make("ServiceRobot-v0")
    env.reset(seed=3)
    state = env.unwrapped.world.state
    before = state.atoms
    assert state.atoms is before  # the same object while nothing changes
    kept = set(before)
    room = state.robot_room()
    nxt = next(a.args[1] for a in sorted(before) if a.predicate == "connected" and a.args[0] == room)
    env.step(f"(move robot {room} {nxt})")
    assert set(before) == kept  # the old snapshot did not change
    assert state.atoms != before and state.robot_room() == nxt


def test_goal_value_reused_only_when_untouched():
    """The world re-tests a large goal only after changes to its atoms: every step agrees with testing it."""
    for env in _random_episode(5, 150, task_kinds=["wash_dishes", "discard_broken", "lights_off"]):
        base = env.unwrapped
        task = base.active_task
        if task is None:
            continue
        world = base.world
        assert world.goal_holds(task) == world.interpreter.compile_goal(task.goal).holds(world.state.atoms)


def test_goal_value_after_one_and_after_two_changes():
    env = gym.make("ServiceRobot-v0", n_tasks=1, task_kinds=["wash_dishes"], disturbance_prob=0.0)
    env.reset(seed=2)
    world, task = env.unwrapped.world, env.unwrapped.active_task
    state = world.state
    dirty = sorted(a for a in state.atoms if a.predicate == "dirty" and a.args[0] in world.tasks.of_type["dish"])
    assert dirty and not world.goal_holds(task)
    room = state.robot_room()
    door = next(a for a in sorted(state.atoms) if a.predicate == "connected" and a.args[0] == room)
    here, there = frozenset({Atom("in-room", (ROBOT, room))}), frozenset({Atom("in-room", (ROBOT, door.args[1]))})
    state.apply(there, here)  # one change the goal does not mention: its value is kept
    assert not world.goal_holds(task)
    state.apply(frozenset(), frozenset(dirty))  # every dish clean, then a change it does not mention
    state.apply(here, there)
    assert world.goal_holds(task)
    state.apply(frozenset(dirty[:1]), frozenset())  # one change it mentions
    assert not world.goal_holds(task)


def test_self_percept_and_room_match_the_state():
    for env in _random_episode(7, 80):
        world = env.unwrapped.world
        percept = world.self_percept()
        assert percept["room"] == world.state.robot_room()
        assert percept["facts"] == [[a.args[0], a.predicate, a.args[1] if len(a.args) > 1 else True]
                                    for a in sorted(world.state.about(ROBOT))]
        assert world.robot_room_index() == world.room_index[world.state.robot_room()]


def test_background_kind_draw_is_numpys_choice():
    """One random() searched in the cdf: the same kind and the same generator state as rng.choice(n, p=p)."""
    kinds, p, cdf = _background_kinds()
    for seed in range(200):
        a, b = np.random.default_rng(seed), np.random.default_rng(seed)
        for _ in range(20):
            assert int(a.choice(len(kinds), p=p)) == bisect_right(cdf, b.random())
        assert a.bit_generator.state == b.bit_generator.state


def _render_every_field(template: str, **fields: str) -> str:
    """render_template as it was: a `_cap` variant of every field, used or not."""
    full = dict(fields)
    for key, value in fields.items():
        full.setdefault(f"{key}_cap", capitalize(value))
    return capitalize(template.format(**full))


def test_render_template_capitalises_what_the_template_uses():
    values = ["the mug", "Ana's red mug", "my bed", "", "éclair"]
    for table in (EVENT_TEMPLATES, TASK_TEMPLATES):
        for templates in table.values():
            for template in templates:
                names = {n.removesuffix("_cap") for n in re.findall(r"{(\w+)}", template)}
                for i in range(len(values)):
                    fields = {n: values[(i + k) % len(values)] for k, n in enumerate(sorted(names))}
                    assert render_template(template, **fields) == _render_every_field(template, **fields)
