"""Knowledge-graph memory: triplets, the verifier (adversarial deltas), percept and language updates, persistence."""

from __future__ import annotations

import json

import gymnasium as gym
import pytest

import servicerobot  # noqa: F401
from servicerobot.language.interpreter import Context
from servicerobot.memory.graph import KnowledgeGraph, MemoryFileError
from servicerobot.memory.triplets import Delta, DeltaFormatError, atom_to_triplet, triplet_to_atom
from servicerobot.memory.updates import apply_percept, update_from_language
from servicerobot.memory.verifier import Verifier, functional_groups
from servicerobot.pddl import Atom
from servicerobot.scenes.household import household_domain


@pytest.fixture(scope="module")
def prior():
    env = gym.make("ServiceRobot-v0", size="small")
    obs, _ = env.reset(seed=3)
    return json.loads(obs["prior"])


@pytest.fixture
def kg(prior):
    return KnowledgeGraph.from_prior(household_domain(), prior)


def _item_on_surface(kg):
    return next(a for a in sorted(kg.facts) if a.predicate == "on")


def test_triplets_round_trip_and_reject_malformed():
    assert triplet_to_atom(atom_to_triplet(Atom("on", ("mug_1", "table_1")))) == Atom("on", ("mug_1", "table_1"))
    assert triplet_to_atom(["mug_1", "dirty", "true"]) == Atom("dirty", ("mug_1",))
    with pytest.raises(DeltaFormatError, match="REMOVE the true one"):
        triplet_to_atom(["mug_1", "dirty", False])
    with pytest.raises(DeltaFormatError, match="REMOVE and ADD"):
        Delta.from_json(["not", "an", "object"])
    with pytest.raises(DeltaFormatError, match="twice"):
        Delta.from_json({"ADD": [["a", "dirty", True], ["a", "dirty", True]]})
    d = Delta.from_json({"remove": [{"subject": "a", "relation": "on", "object": "b"}], "ADD": []})
    assert d.remove == {Atom("on", ("a", "b"))}


def test_graph_mirrors_facts_and_queries(kg, prior):
    assert len(kg) == len(prior["facts"])
    on = _item_on_surface(kg)
    assert on in kg.facts_about(on.args[0]) and on in kg.facts_about(on.args[1])
    assert kg.graph.has_edge(on.args[0], on.args[1], key="on")
    near = kg.neighbourhood([on.args[0]], depth=1)
    assert on in near and len(near) <= 300
    assert on.args[0] in kg.search(kg.phrase(on.args[0]))[:3]
    assert kg.of_type("item") and all(kg.domain.types.is_subtype(kg.type_of(n), "item") for n in kg.of_type("item"))


def test_functional_groups_are_proved_from_the_domain():
    groups = {frozenset(g) for g in functional_groups(household_domain())}
    assert frozenset({("on", 0), ("inside", 0), ("held-by", 0), ("holding", 1), ("discarded", 0)}) in groups
    assert frozenset({("in-room", 0)}) in groups


@pytest.mark.parametrize("delta, message", [
    (Delta.of(add=[Atom("onn", ("robot", "kitchen"))]), "unknown predicate 'onn'"),
    (Delta.of(add=[Atom("dirty", ("robot", "kitchen"))]), "takes 1 argument"),
    (Delta.of(add=[Atom("dirty", ("unicorn_7",))]), "unknown entity 'unicorn_7'"),
    (Delta.of(add=[Atom("made", ("robot",))]), "must be a bed"),
])
def test_verifier_rejects_bad_deltas_precisely_and_memory_is_unchanged(kg, delta, message):
    before = kg.facts
    problems = Verifier(kg.domain).check(delta, kg)
    assert problems and message in problems[0]
    assert kg.facts == before


def test_verifier_rejects_second_location_duplicate_add_and_absent_remove(kg):
    v = Verifier(kg.domain)
    on = _item_on_surface(kg)
    other = next(s for s in kg.of_type("surface") if s != on.args[1])
    second = v.check(Delta.of(add=[Atom("on", (on.args[0], other))]), kg)
    assert second and "allows one" in second[0] and f"also REMOVE ({on.args[0]}, on, {on.args[1]})" in second[0]
    assert not v.check(Delta.of(remove=[on], add=[Atom("on", (on.args[0], other))]), kg)
    assert "already holds" in v.check(Delta.of(add=[on]), kg)[0]
    absent = v.check(Delta.of(remove=[Atom("on", (on.args[0], other))]), kg)
    assert "does not hold" in absent[0] and str(on.args[1]) in absent[0]


class _Scripted:
    """An interpreter whose answers are given by the test (no model involved)."""

    name = "scripted"

    def __init__(self, answers):
        self.answers = list(answers)
        self.feedback = []

    def interpret_update(self, text, speaker, context, feedback=()):
        self.feedback.append(list(feedback))
        answer = self.answers.pop(0)
        if isinstance(answer, Exception):
            raise answer
        return answer


def test_language_update_retries_with_feedback_then_applies_whole(kg):
    on = _item_on_surface(kg)
    other = next(s for s in kg.of_type("surface") if s != on.args[1])
    bad = Delta.of(add=[Atom("on", (on.args[0], other))])  # forgets to remove the old location
    good = Delta.of(remove=[on], add=[Atom("on", (on.args[0], other))])
    interp = _Scripted([DeltaFormatError("broken JSON"), bad, good])
    context = Context(kg.domain, kg.entities, kg.facts)
    outcome = update_from_language(kg, "I moved it", "Ana", interp, context, step=4, verifier=Verifier(kg.domain))
    assert outcome.accepted and outcome.attempts == 3
    assert "could not be read" in interp.feedback[1][0] and "allows one" in interp.feedback[2][0]
    assert Atom("on", (on.args[0], other)) in kg and on not in kg
    assert kg.history[-1].source == "language" and kg.history[-1].step == 4


def test_rejected_language_update_never_changes_memory(kg):
    before = kg.facts
    interp = _Scripted([Delta.of(add=[Atom("dirty", ("ghost",))])] * 3)
    outcome = update_from_language(kg, "the ghost is dirty", "Ana", interp, Context(kg.domain, kg.entities, kg.facts),
                                   step=1, verifier=Verifier(kg.domain), max_attempts=3)
    assert not outcome.accepted and len(outcome.problems) == 3
    assert kg.facts == before and kg.history[-1].source == "language-dropped"


def test_percept_is_closed_world_within_view(kg):
    on = _item_on_surface(kg)
    item, surface = on.args
    other = next(s for s in kg.of_type("surface") if s != surface)
    # The item is seen on another surface: it is no longer where memory had it.
    apply_percept(kg, {"entities": {item: kg.type_of(item)}, "facts": [[item, "on", other]], "observed": []}, 2)
    assert Atom("on", (item, other)) in kg and on not in kg
    # The other surface is observed (its contents seen) and the item is not on it any more.
    apply_percept(kg, {"entities": {other: kg.type_of(other)},
                       "facts": [list(atom_to_triplet(a)) for a in kg.facts_about(other) if a.args[0] == other],
                       "observed": [other]}, 3)
    assert Atom("on", (item, other)) not in kg
    # A never-seen entity in the percept joins memory with its type.
    apply_percept(kg, {"entities": {"mug_99": "dish"}, "facts": [["mug_99", "dirty", True]], "observed": []}, 4)
    assert kg.type_of("mug_99") == "dish" and Atom("dirty", ("mug_99",)) in kg


def test_save_load_round_trip_and_corrupt_files(kg, tmp_path):
    on = _item_on_surface(kg)
    kg.apply(Delta.of(remove=[on]), "language", 7, "I took it")
    path = tmp_path / "memory.json"
    kg.save(path)
    back = KnowledgeGraph.load(path, household_domain())
    assert back.facts == kg.facts and back.entities == kg.entities
    assert back.history[-1].text == "I took it" and back.history[-1].delta.remove == {on}
    assert not list(tmp_path.glob(".memory.json.*"))  # no temp file left behind
    (tmp_path / "bad.json").write_text('{"format": 1, "domain": "household", "ent')
    with pytest.raises(MemoryFileError, match="corrupt JSON"):
        KnowledgeGraph.load(tmp_path / "bad.json", household_domain())
    with pytest.raises(MemoryFileError, match="no memory file"):
        KnowledgeGraph.load(tmp_path / "missing.json", household_domain())


def test_percept_of_the_true_state_never_removes_a_true_fact():
    """The percept lists every fact the closed-world rule judges: a memory that equals the truth is left
    unchanged by every percept along an oracle episode (before the fix, seeing the hallway removed
    `(connected kitchen hallway)`: its object was observed, its subject not in view)."""
    from servicerobot.oracle import OracleAgent

    env = gym.make("ServiceRobot-v0", update_mode="visual", n_tasks=2)
    obs, _ = env.reset(seed=0)
    world = env.unwrapped.world
    agent = OracleAgent.from_env(env)
    memory = KnowledgeGraph.from_prior(world.domain, json.loads(obs["prior"]))
    rooms = set()
    for _ in range(40):
        truth = world.state.atoms
        memory.apply(Delta.of(remove=memory.facts - truth, add=truth - memory.facts), "truth", 0)
        percept = json.loads(obs["percept"])
        rooms.add(percept["room"])
        changed = apply_percept(memory, percept, 0)
        assert not changed.remove and not changed.add, (percept["room"], changed)
        obs, _, terminated, truncated, _ = env.step(agent.act(obs))
        if terminated or truncated:
            break
    assert len(rooms) >= 2  # the robot walked through several rooms
