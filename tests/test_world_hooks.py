"""The shared world mechanism: scene sources and executors plug into the household core."""

import gymnasium as gym
import numpy as np
import pytest

import servicerobot  # noqa: F401
from servicerobot.envs import ServiceRobotEnv
from servicerobot.envs.executor import Executor
from servicerobot.envs.household.world import HouseholdOptions, HouseholdWorld
from servicerobot.errors import SceneError
from servicerobot.oracle import OracleAgent
from servicerobot.pddl import Atom
from servicerobot.scenes.household import generate_household
from servicerobot.scenes.source import GeneratedHomes, SceneSource


class TwoHomes(SceneSource):
    """Alternates between a small home and a smaller copy of it: entity counts vary per episode."""

    name = "two-homes"

    def __init__(self):
        self.small = GeneratedHomes("small")
        self.max_entities, self.n_rooms = self.small.max_entities, self.small.n_rooms
        self.calls = 0

    def generate(self, rng):
        self.calls += 1
        scene = self.small.generate(rng)
        if self.calls % 2 == 0:
            return scene
        # Drop the last book and its facts: fewer entities than the bound.
        drop = [n for n, e in scene.entities.items() if e.pddl_type == "book"][-1]
        del scene.entities[drop]
        scene.init = frozenset(a for a in scene.init if drop not in a.args)
        return scene


class Backend(Executor):
    """A backend that keeps its own copy of the facts and refuses to pick up one named item."""

    name = "test-backend"

    def __init__(self, refuse: str = ""):
        self.refuse, self.facts, self.syncs, self.actions = refuse, frozenset(), 0, []

    def reset(self, scene, facts, rng):
        self.facts = facts

    def execute(self, action, add, delete):
        if self.refuse and self.refuse in action.args:
            return f"{self.refuse} is stuck"
        self.actions.append(str(action))
        self.facts = (self.facts - delete) | add
        return ""

    def sync(self, facts):
        self.syncs += 1
        self.facts = facts

    def percept(self, symbolic):
        return dict(symbolic, backend=True)


def test_generated_homes_match_the_household_generator():
    rng_a, rng_b = np.random.default_rng(3), np.random.default_rng(3)
    assert GeneratedHomes("small").generate(rng_a).init == generate_household("small", rng_b).init
    with pytest.raises(SceneError, match="unknown size preset"):
        GeneratedHomes("huge")


def test_a_scene_source_with_varying_entity_counts_fits_the_spaces():
    env = ServiceRobotEnv(HouseholdWorld(TwoHomes(), HouseholdOptions(n_tasks=1)), update_mode="both")
    for seed in range(3):
        obs, _ = env.reset(seed=seed)
        assert env.observation_space.contains(obs)
        assert obs["visible"].shape == (env.world.max_entities,)


def test_executor_mirrors_the_true_state_and_its_failures_change_nothing():
    backend = Backend()
    world = HouseholdWorld("small", HouseholdOptions(n_tasks=2, event_rate=0.5), executor=backend)
    env = ServiceRobotEnv(world, update_mode="both")
    agent = OracleAgent.from_env(env)
    obs, _ = env.reset(seed=1)
    for _ in range(60):
        obs, _, term, trunc, _ = env.step(agent.act(obs))
        # The backend always ends a step where the true state is (actions applied, people mirrored).
        world._sync()
        assert backend.facts == world.state.atoms
        if term or trunc:
            break
    assert backend.actions and backend.syncs > 0
    assert '"backend":true' in obs["percept"] or env.update_mode == "verbal"



def test_an_action_the_backend_refuses_changes_nothing_and_says_why():
    backend = Backend()
    world = HouseholdWorld("small", HouseholdOptions(n_tasks=1, event_rate=0.0), executor=backend)
    ServiceRobotEnv(world).reset(seed=0)
    atoms = world.state.atoms
    item, surface = next(a.args for a in sorted(atoms) if a.predicate == "on")
    room = next(a.args[1] for a in atoms if a.predicate == "in-room" and a.args[0] == surface)
    robot_at = {a for a in atoms if a.predicate == "in-room" and a.args[0] == "robot"}
    world.state.apply({Atom("in-room", ("robot", room))}, robot_at)
    backend.refuse = item
    before = world.state.atoms
    _, error = world.execute(f"(pick-up robot {item} {surface} {room})")
    assert "stuck" in error and "test-backend" in error
    assert world.state.atoms == before
    backend.refuse = ""
    _, error = world.execute(f"(pick-up robot {item} {surface} {room})")
    assert error == "" and Atom("holding", ("robot", item)) in world.state.atoms
    assert backend.facts == world.state.atoms


def test_unknown_world_options_are_rejected_with_their_names():
    with pytest.raises(SceneError, match="unknown option.*colour_scheme"):
        gym.make("ServiceRobot-v0", colour_scheme="dark")
