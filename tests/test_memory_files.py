"""Hostile memory files: symlinks, file modes, random corruption and facts the domain does not allow."""

from __future__ import annotations

import json
import os
import stat

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from servicerobot.memory.graph import KnowledgeGraph, MemoryFileError
from servicerobot.memory.triplets import Delta
from servicerobot.pddl import Atom
from servicerobot.scenes.household import household_domain

DOMAIN = household_domain()


def _memory() -> KnowledgeGraph:
    kg = KnowledgeGraph(DOMAIN)
    kg.add_entity("robot", "robot", noun="robot")
    kg.add_entity("kitchen", "room", noun="kitchen")
    kg.add_entity("hallway", "room", noun="hallway")
    kg.add_entity("mug_1", "dish", noun="mug", colour="red")
    kg.apply(Delta.of(add=[Atom("in-room", ("robot", "kitchen")), Atom("connected", ("kitchen", "hallway")),
                           Atom("dirty", ("mug_1",))]), "prior", 0)
    kg.apply(Delta.of(remove=[Atom("dirty", ("mug_1",))]), "language", 3, "I washed the mug")
    return kg


SAVED = json.dumps(_memory().to_json()).encode()


def _mode(path) -> int:
    return stat.S_IMODE(os.stat(path).st_mode)


def test_new_memory_file_is_private(tmp_path):
    path = tmp_path / "memory.json"
    _memory().save(path)
    assert _mode(path) == 0o600


def test_save_keeps_the_mode_of_an_existing_file(tmp_path):
    path = tmp_path / "memory.json"
    path.write_text("{}")
    os.chmod(path, 0o600)
    _memory().save(path)
    assert _mode(path) == 0o600
    os.chmod(path, 0o640)
    _memory().save(path)
    assert _mode(path) == 0o640


def test_save_through_a_symlink_writes_its_target(tmp_path):
    target = tmp_path / "real" / "memory.json"
    target.parent.mkdir()
    target.write_text("{}")
    os.chmod(target, 0o600)
    link = tmp_path / "memory.json"
    link.symlink_to(target)
    _memory().save(link)
    assert link.is_symlink() and os.readlink(link) == str(target)
    assert _mode(target) == 0o600
    assert KnowledgeGraph.load(link, DOMAIN).facts == _memory().facts
    assert not list(tmp_path.glob(".memory.json.*")) and not list(target.parent.glob(".memory.json.*"))


def test_save_refuses_a_dangling_or_looping_symlink(tmp_path):
    dangling = tmp_path / "dangling.json"
    dangling.symlink_to(tmp_path / "nowhere" / "memory.json")
    with pytest.raises(MemoryFileError, match="dangling.json.*symlink"):
        _memory().save(dangling)
    loop_a, loop_b = tmp_path / "a.json", tmp_path / "b.json"
    loop_a.symlink_to(loop_b)
    loop_b.symlink_to(loop_a)
    with pytest.raises(MemoryFileError, match="symlink"):
        _memory().save(loop_a)


def test_save_onto_a_folder_is_a_clear_error(tmp_path):
    with pytest.raises(MemoryFileError, match="is a folder"):
        _memory().save(tmp_path)


def test_load_rejects_facts_the_domain_does_not_allow(tmp_path):
    data = _memory().to_json()
    cases = {
        "unknown predicate 'flying'": ["mug_1", "flying", True],
        "takes 1 argument": ["mug_1", "dirty", "kitchen"],
        "must be a room": ["robot", "in-room", "mug_1"],
        "unknown entity 'cellar'": ["robot", "in-room", "cellar"],
        "would have 2 values": ["robot", "in-room", "hallway"],
    }
    for message, fact in cases.items():
        bad = {**data, "facts": [*data["facts"], fact]}
        path = tmp_path / "bad.json"
        path.write_text(json.dumps(bad))
        with pytest.raises(MemoryFileError, match=message):
            KnowledgeGraph.load(path, DOMAIN)


def test_load_rejects_a_symlink_loop_and_a_folder(tmp_path):
    loop_a, loop_b = tmp_path / "a.json", tmp_path / "b.json"
    loop_a.symlink_to(loop_b)
    loop_b.symlink_to(loop_a)
    with pytest.raises(MemoryFileError):
        KnowledgeGraph.load(loop_a, DOMAIN)
    with pytest.raises(MemoryFileError, match="folder"):
        KnowledgeGraph.load(tmp_path, DOMAIN)


_JSON = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats(allow_nan=True) | st.text(max_size=8),
    lambda children: st.lists(children, max_size=4) | st.dictionaries(st.text(max_size=6), children, max_size=4),
    max_leaves=12,
)


def _set_path(data, path, value):
    """`data` with the value at `path` (a list of keys/indices, taken modulo each container) replaced."""
    if not path or not isinstance(data, (dict, list)) or not data:
        return value
    if isinstance(data, dict):
        key = sorted(data)[path[0] % len(data)]
        return {**data, key: _set_path(data[key], path[1:], value)}
    index = path[0] % len(data)
    return [*data[:index], _set_path(data[index], path[1:], value), *data[index + 1:]]


def _load(tmp_path, blob: bytes):
    path = tmp_path / "corrupt.json"
    path.write_bytes(blob)
    try:
        KnowledgeGraph.load(path, DOMAIN)
    except MemoryFileError:
        pass


_SETTINGS = settings(max_examples=150, deadline=None, derandomize=True,
                     suppress_health_check=[HealthCheck.function_scoped_fixture])


@_SETTINGS
@given(st.lists(st.tuples(st.integers(0, len(SAVED) - 1), st.integers(0, 255)), min_size=1, max_size=8))
def test_random_byte_corruption_only_raises_memory_file_error(tmp_path, flips):
    blob = bytearray(SAVED)
    for index, value in flips:
        blob[index] = value
    _load(tmp_path, bytes(blob))


@_SETTINGS
@given(st.integers(0, len(SAVED)))
def test_truncated_file_only_raises_memory_file_error(tmp_path, length):
    _load(tmp_path, SAVED[:length])


@_SETTINGS
@given(st.lists(st.integers(0, 50), min_size=1, max_size=5), _JSON)
def test_structural_corruption_only_raises_memory_file_error(tmp_path, path, value):
    data = _set_path(json.loads(SAVED), path, value)
    _load(tmp_path, json.dumps(data).encode())


def test_a_failed_save_leaves_the_previous_file_intact(tmp_path):
    path = tmp_path / "memory.json"
    _memory().save(path)
    before = path.read_bytes()
    kg = _memory()
    kg.add_entity("box_1", "decor", tags={"fragile"})  # a set: not a JSON value
    with pytest.raises(MemoryFileError, match="entity attributes must be JSON values"):
        kg.save(path)
    kg = _memory()
    kg.add_entity("box_1", "decor", weight=float("nan"))
    with pytest.raises(MemoryFileError, match="JSON"):
        kg.save(path)
    assert path.read_bytes() == before and not list(tmp_path.glob(".memory.json.*"))
    assert KnowledgeGraph.load(path, DOMAIN).facts == _memory().facts


@pytest.mark.parametrize("mode", ["verbal", "both"])
def test_memories_of_real_episodes_pass_the_load_checks(tmp_path, mode):
    """The load-time domain checks accept what an agent really believes (memory after percepts and talk)."""
    import gymnasium as gym

    import servicerobot

    env = gym.make("ServiceRobot-v0", size="small", update_mode=mode, n_tasks=2)
    agent = servicerobot.ServiceAgent.from_env(env)
    obs, _ = env.reset(seed=1)
    for step in range(200):
        obs, _, terminated, truncated, _ = env.step(agent.act(obs))
        if step % 15 == 0 or terminated or truncated:
            agent.memory.save(tmp_path / "memory.json")
            assert KnowledgeGraph.load(tmp_path / "memory.json", agent.memory.domain).facts == agent.memory.facts
        if terminated or truncated:
            break
