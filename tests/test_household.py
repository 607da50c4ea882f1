"""The household generator, the human event process and the task generator."""

from __future__ import annotations

import numpy as np
import pytest

from servicerobot.envs.household import TASK_KINDS, HouseholdOptions, HouseholdWorld
from servicerobot.envs.household.state import LOCATION_PREDICATES
from servicerobot.errors import SceneError
from servicerobot.pddl import Atom
from servicerobot.scenes import PRESETS, generate_household, household_domain


def test_domain_is_all_unary_or_binary():
    domain = household_domain()
    assert all(1 <= len(p.params) <= 2 for p in domain.predicates.values())
    for needed in ("move", "pick-up", "place-on", "put-in", "open", "close", "switch-off-light", "wash",
                   "hand-over", "take-from", "throw-away", "make-bed", "run-washer", "run-dryer"):
        assert needed in domain.actions


@pytest.mark.parametrize("preset", ["small", "default", "large"])
def test_sizes(preset):
    scene = generate_household(preset, np.random.default_rng(0))
    cfg = PRESETS[preset]
    types = [e.pddl_type for e in scene.entities.values()]
    assert types.count("room") == cfg.n_rooms
    assert types.count("person") == cfg.n_people
    items = [n for n, e in scene.entities.items() if e.pos is None and e.pddl_type not in ("room", "person", "robot")]
    assert len(items) == cfg.n_items
    if preset == "default":
        fixtures = [e for e in scene.entities.values() if e.pos is not None]
        assert 35 <= len(fixtures) <= 50
    if preset == "large":
        assert len(scene.entities) >= 1000


def test_generation_is_seeded():
    a = generate_household("default", np.random.default_rng(5))
    b = generate_household("default", np.random.default_rng(5))
    c = generate_household("default", np.random.default_rng(6))
    assert a.init == b.init and a.entities == b.entities and a.doors == b.doors
    assert a.init != c.init


def test_every_item_has_exactly_one_location_and_attributes():
    scene = generate_household("default", np.random.default_rng(1))
    for name, e in scene.entities.items():
        if e.pos is None and e.pddl_type not in ("room", "person", "robot"):
            locs = [a for a in scene.init if a.args[0] == name and a.predicate in LOCATION_PREDICATES]
            assert len(locs) == 1, name
            assert {"category", "material"} <= set(e.attributes)
    descriptions = [e.describe() for e in scene.entities.values() if e.attributes.get("colour")]
    assert len(set(descriptions)) >= 0.95 * len(descriptions)


def test_rooms_are_connected():
    import networkx as nx

    scene = generate_household("large", np.random.default_rng(2))
    g = nx.Graph(scene.doors)
    g.add_nodes_from(scene.room_names)
    assert nx.is_connected(g)


@pytest.mark.parametrize("kind", TASK_KINDS)
def test_each_task_kind_is_generated_with_a_goal_that_does_not_hold_yet(kind):
    world = HouseholdWorld("default", HouseholdOptions(task_kinds=(kind,), n_tasks=1))
    texts = set()
    for seed in range(6):
        world.reset(np.random.default_rng(seed))
        task = world.next_task(0)
        assert task is not None and task.kind == kind
        assert not world.goal_holds(task)
        assert task.budget >= 40
        texts.add(task.text)
        world.interpreter.compile_goal(task.goal)  # parses and type-checks against the objects
    assert len(texts) >= 2  # varied phrasing


def test_disturbances_target_the_task():
    world = HouseholdWorld("default", HouseholdOptions(task_kinds=("wash_dishes",), n_tasks=1))
    world.reset(np.random.default_rng(0))
    task = world.next_task(0)
    event = world.tasks.disturb(task, "addition")
    assert event is not None and event.category == "addition"
    assert any(a.predicate == "dirty" for a in event.add)


def test_human_events_keep_one_location_per_item():
    world = HouseholdWorld("default", HouseholdOptions(event_rate=1.0))
    world.reset(np.random.default_rng(3))
    kinds = set()
    for _ in range(400):
        for e in world.tick(None, 0):
            kinds.add(e.kind)
            assert e.utterance and e.utterance[0].isupper()
            assert e.told <= e.add and e.told_removed <= e.delete
    assert len(kinds) >= 10
    for item in world.humans.items:
        locs = [a for a in world.state.atoms if a.args[0] == item and a.predicate in ("on", "inside", "held-by")]
        assert len(locs) <= 1, (item, locs)
    assert Atom("hand-empty", ("robot",)) in world.state.atoms


def test_options_are_validated():
    with pytest.raises(SceneError, match="probability"):
        HouseholdOptions(event_rate=2.0)
    with pytest.raises(SceneError, match="n_tasks"):
        HouseholdOptions(n_tasks=0)
