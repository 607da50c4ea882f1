"""The env's JSON writers (`json_text.dumps`, the C encoder made once; `facts_json`, texts kept per atom) write
what `json.dumps` writes (issue 37)."""

from __future__ import annotations

import json

import gymnasium as gym
import pytest

import servicerobot  # noqa: F401
from servicerobot.envs.json_text import clear_facts, facts_json
from servicerobot.envs.json_text import dumps as _dumps
from servicerobot.pddl import Atom


@pytest.mark.parametrize("value", [
    {"room": "kitchen", "entities": {"robot": "robot"}, "facts": [["robot", "hand-empty", True]], "observed": []},
    [{"speaker": "Ana", "text": "I moved the caf\u00e9 mug \u2014 sorry"}], "plain \"text\"\n", 3, 2.5, None,
    {"x": [float("nan"), float("inf"), -float("inf"), 1e-300, -0.0]}, {"deep": [[[[{"a": (1, 2)}]]]]}, {1: "int key"},
])
def test_dumps_writes_what_json_dumps_writes(value):
    assert _dumps(value) == json.dumps(value, separators=(",", ":"), ensure_ascii=True)


def test_dumps_refuses_what_json_dumps_refuses():
    cyclic: list = []
    cyclic.append(cyclic)
    with pytest.raises(ValueError, match="Circular reference"):
        _dumps(cyclic)
    with pytest.raises(TypeError, match="not JSON serializable"):
        _dumps({"a": object()})
    assert _dumps(["after a failure"]) == '["after a failure"]'


def _facts_by_json_dumps(atoms) -> str:
    triplets = [[a.args[0], a.predicate, a.args[1] if len(a.args) > 1 else True] for a in sorted(atoms)]
    return json.dumps(triplets, separators=(",", ":"), ensure_ascii=True)


@pytest.mark.parametrize("atoms", [
    [], [Atom("on", ("mug_1", "table_1")), Atom("on", ("mug", "table_1")), Atom("on", ("mug_1", "table")),
         Atom("on-top", ("a", "b")), Atom("on", ("a", "b")), Atom("dirty", ("mug_1",)), Atom("o", ("z", "z"))],
    [Atom("in", ("caf\u00e9 \"mug\"", "x\\y")), Atom("in", ("caf\u00e9", "x")), Atom("in", ("a\x00b", "c")),
     Atom("in", ("a", "c")), Atom("in", ("a\x01", "c"))],
])
def test_facts_json_writes_sorted_triplets_as_json_dumps_does(atoms):
    assert facts_json(set(atoms)) == _facts_by_json_dumps(atoms)
    assert facts_json(frozenset(atoms)) == _facts_by_json_dumps(atoms)  # again, from the kept texts
    clear_facts()
    assert facts_json(atoms) == _facts_by_json_dumps(atoms)


def test_a_houses_prior_is_json_dumps_of_the_prior():
    env = gym.make("ServiceRobot-v0", size="small")
    for seed in range(3):
        env.reset(seed=seed)
        world = env.unwrapped.world
        assert world.prior_json() == json.dumps(world.prior(), separators=(",", ":"), ensure_ascii=True)
