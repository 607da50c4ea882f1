"""ServiceRobot-PDDLGym-v0 under hostile use (issue 38): files that are devices, pipes, folders, huge or not
UTF-8; probabilistic effects and free parameters whose products explode; options of the wrong type; huge
seeds and action texts. Each gives a named error (or a bounded `info["action_error"]`) in bounded memory and
time. These tests build their own domains, so they run without the pddlgym package."""

from __future__ import annotations

import contextlib
import os
import re
import signal
import tracemalloc
from pathlib import Path

import gymnasium as gym
import numpy as np
import pytest

import servicerobot  # noqa: F401 - registers the ids
from servicerobot.envs.options import OptionError, check_make_options
from servicerobot.envs.pddlgym import PDDLGymDialectError, PDDLGymFileError
from servicerobot.envs.pddlgym import task as task_module
from servicerobot.envs.pddlgym.files import MAX_DOMAIN_BYTES, MAX_OUTCOMES
from servicerobot.envs.pddlgym.task import MAX_UNBOUND
from servicerobot.errors import ActionError
from servicerobot.experiments.config import ConfigError, parse_config

ID = "ServiceRobot-PDDLGym-v0"
MEMORY = 100 << 20  # far below the 1 GB the issue allows: the refusals read and build almost nothing

TOY = """(define (domain toy)
  (:requirements :strips :typing)
  (:types block)
  (:predicates (clear ?x - block) (ontable ?x - block) (pick ?x - block))
  ; (:actions pick)
  (:action pick-up
    :parameters (?x - block)
    :precondition (and (pick ?x) (clear ?x) (ontable ?x))
    :effect (and (not (ontable ?x)) (not (clear ?x))))
)
"""
PROBLEM = """(define (problem p0) (:domain toy)
  (:objects a b - block)
  (:init (clear a) (ontable a) (clear b) (ontable b) (pick a) (pick b))
  (:goal (and (not (ontable a)) (not (ontable b)))))
"""


@contextlib.contextmanager
def _bounded(seconds: int = 60):
    """Fail instead of hanging (a guard, not a speed check) and assert the peak Python allocation."""
    def stop(signum, frame):
        raise AssertionError(f"still running after {seconds} s: the work is not bounded")

    old = signal.signal(signal.SIGALRM, stop)
    signal.alarm(seconds)
    tracemalloc.start()
    try:
        yield
    finally:
        peak = tracemalloc.get_traced_memory()[1]
        tracemalloc.stop()
        signal.alarm(0)
        signal.signal(signal.SIGALRM, old)
    assert peak < MEMORY, f"peak allocation {peak:,} bytes"


def _domain(folder: Path, text: str = TOY, problem: str = PROBLEM, name: str = "toy") -> Path:
    (folder / name).mkdir(exist_ok=True)
    (folder / name / "p0.pddl").write_text(problem, encoding="utf-8")
    path = folder / f"{name}.pddl"
    path.write_text(text, encoding="utf-8")
    return path


def test_the_toy_domain_runs(tmp_path):
    env = gym.make(ID, domain_file=str(_domain(tmp_path)))
    obs, info = env.reset(seed=0)
    assert "(ontable a)" in obs["literals"] and info["action_error"] is None
    obs, reward, terminated, _, info = env.step("(pick a)")
    assert "(ontable a)" not in obs["literals"] and reward == 0.0 and not terminated
    assert env.step("pick(b:block)")[1:3] == (1.0, True)


@pytest.mark.skipif(not hasattr(os, "mkfifo"), reason="needs named pipes")
def test_devices_pipes_folders_and_huge_files_are_refused_by_what_they_are(tmp_path):
    _domain(tmp_path)
    link = tmp_path / "zero.pddl"
    link.symlink_to("/dev/zero")
    sparse = tmp_path / "sparse.pddl"
    with open(sparse, "wb") as fh:
        fh.truncate(3 << 30)  # 3 GB of holes: no disk used
    big = tmp_path / "big.pddl"
    with open(big, "wb") as fh:
        fh.truncate(30 << 20)
    fifo = tmp_path / "fifo.pddl"
    os.mkfifo(fifo)
    cases = {"/dev/zero": "not a character device", str(link): "not a character device",
             str(sparse): "3,221,225,472 bytes, over the limit", str(big): "31,457,280 bytes, over the limit",
             str(fifo): "not a named pipe", str(tmp_path): "not a folder"}
    for path, why in cases.items():
        with _bounded(), pytest.raises(PDDLGymFileError, match=why):
            gym.make(ID, domain_file=path, problem_dir=str(tmp_path / "toy"))
    assert MAX_DOMAIN_BYTES < 30 << 20


def test_missing_empty_and_non_utf8_files_are_named(tmp_path):
    with pytest.raises(PDDLGymFileError, match="nope.pddl: the domain file does not exist"):
        gym.make(ID, domain_file=str(tmp_path / "nope.pddl"), problem_dir=str(tmp_path))
    with pytest.raises(OptionError, match="domain_file must be a file path or None, got ''"):
        gym.make(ID, domain_file="")
    latin = tmp_path / "latin.pddl"
    latin.write_bytes(TOY.replace("toy", "t\xf6y").encode("latin-1"))
    with pytest.raises(PDDLGymFileError, match=r"not UTF-8 text \(byte 17 is 0xf6\)"):
        gym.make(ID, domain_file=str(latin), problem_dir=str(tmp_path))
    with pytest.raises(PDDLGymFileError, match=r"none has no problem files \(no such folder\)"):
        gym.make(ID, domain_file=str(_domain(tmp_path)), problem_dir=str(tmp_path / "none"))
    (tmp_path / "empty").mkdir()
    with pytest.raises(PDDLGymFileError, match="has no problem files"):
        gym.make(ID, domain_file=str(_domain(tmp_path)), problem_dir=str(tmp_path / "empty"))


@pytest.mark.skipif(not hasattr(os, "mkfifo"), reason="needs named pipes")
def test_a_problem_file_that_is_a_pipe_is_refused_at_reset(tmp_path):
    domain = _domain(tmp_path)
    (tmp_path / "toy" / "p0.pddl").unlink()
    os.mkfifo(tmp_path / "toy" / "p0.pddl")
    env = gym.make(ID, domain_file=str(domain))
    with _bounded(), pytest.raises(PDDLGymFileError, match="problem file must be a regular file, not a named pipe"):
        env.reset(seed=0)


def _probabilistic(effects: int, p: str = "0.5") -> str:
    blocks = " ".join(f"(probabilistic {p} (flag{i}))" for i in range(effects))
    flags = " ".join(f"(flag{i})" for i in range(effects))
    return TOY.replace("(pick ?x - block))", f"(pick ?x - block) {flags})").replace(
        ":effect (and (not (ontable ?x)) (not (clear ?x))))", f":effect (and (not (ontable ?x)) {blocks}))")


def test_probabilistic_effects_are_counted_before_they_are_multiplied_out(tmp_path):
    # 20 binary effects: 2**20 deterministic actions (a MemoryError before); refused with the count
    with _bounded(), pytest.raises(PDDLGymDialectError, match=r"2 x 2 x .* outcomes, 1,048,576 together, over the "
                                                            r"limit of 1,024"):
        gym.make(ID, domain_file=str(_domain(tmp_path, _probabilistic(20), name="p20")))
    assert 2 ** 10 <= MAX_OUTCOMES  # ten binary effects still split
    env = gym.make(ID, domain_file=str(_domain(tmp_path, _probabilistic(10), name="p10")))
    env.reset(seed=0)
    obs = env.step("(pick a)")[0]
    assert "(ontable a)" not in obs["literals"]


@pytest.mark.parametrize("p, why", [("nan", "probability 'nan' must be a number in"),
                                    ("-0.5", "probability '-0.5' must be a number in"),
                                    ("abc", "probability 'abc' must be a number in"),
                                    ("0.8", "add up to 1.6, over 1")])
def test_probabilities_that_are_not_probabilities_are_refused(tmp_path, p, why):
    text = _probabilistic(1, p)
    if p == "0.8":
        text = text.replace("(probabilistic 0.8 (flag0))", "(probabilistic 0.8 (flag0) 0.8 (clear ?x))")
    with pytest.raises(PDDLGymDialectError, match=why):
        gym.make(ID, domain_file=str(_domain(tmp_path, text, name="bad")))


FREE30 = TOY.replace(":parameters (?x - block)", ":parameters (?x - block " + " ".join(f"?f{i}" for i in range(30))
                     + " - block)")


def test_unbound_parameters_are_counted_before_they_are_enumerated(tmp_path):
    env = gym.make(ID, domain_file=str(_domain(tmp_path, FREE30, name="free30")))
    env.reset(seed=0)
    with _bounded():
        obs, _, _, _, info = env.step("(pick a)")
    assert "30 parameter(s) (?f0, ?f1" in info["action_error"] and "1,073,741,824 combinations" in info["action_error"]
    assert "(ontable a)" in obs["literals"]  # nothing changed
    with _bounded(), pytest.raises(ActionError, match=f"1,073,741,824 combinations, over the limit of {MAX_UNBOUND:,}"):
        env.unwrapped.valid_actions()
    dynamic = gym.make(ID, domain_file=str(_domain(tmp_path, FREE30, name="free30")), dynamic_action_space=True)
    obs, _ = dynamic.reset(seed=0)
    with _bounded(), pytest.raises(ActionError, match="1,073,741,824 combinations"):
        dynamic.action_space.sample(obs)
    assert env.action_space.sample(obs) in ("(pick a)", "(pick b)")  # the non-dynamic draw lists nothing


def test_listing_valid_literals_stops_at_its_join_budget(tmp_path, monkeypatch):
    # every pair of 12 blocks linked: (join ?a ?b ?c ?d) matches 144 x 144 link facts, over a budget of 20,000
    # steps (the real budget, 500,000, goes through the same check)
    monkeypatch.setattr(task_module, "MAX_JOIN_STEPS", 20_000)
    domain = TOY.replace("(pick ?x - block))", "(pick ?x - block) (link ?x ?y - block) (join ?a ?b ?c ?d - block))")
    domain = domain.replace("; (:actions pick)", "; (:actions pick join)").replace("\n)\n", """
  (:action joined
    :parameters (?a ?b ?c ?d - block)
    :precondition (and (join ?a ?b ?c ?d) (link ?a ?b) (link ?c ?d))
    :effect (and (clear ?a)))
)
""")
    blocks = [f"b{i}" for i in range(12)]
    links = " ".join(f"(link {x} {y})" for x in blocks for y in blocks)
    problem = (f"(define (problem p0) (:domain toy) (:objects {' '.join(blocks)} - block) (:init {links}) "
               "(:goal (clear b0)))")
    env = gym.make(ID, domain_file=str(_domain(tmp_path, domain, problem, name="joins")))
    env.reset(seed=0)
    with _bounded(), pytest.raises(ActionError, match="over 20,000 join steps"):
        env.unwrapped.valid_actions()


def test_a_few_unbound_parameters_still_bind_to_the_first_sorted_binding(tmp_path):
    free2 = TOY.replace(":parameters (?x - block)", ":parameters (?x ?y ?z - block)")
    env = gym.make(ID, domain_file=str(_domain(tmp_path, free2, name="free2")))
    env.reset(seed=0)
    assert env.step("(pick a)")[4]["action_error"] is None
    assert env.unwrapped.valid_actions() == ["(pick b)"]


@pytest.mark.parametrize("kwargs, why", [
    ({"problem_index": "abc"}, "problem_index must be an integer in"),
    ({"problem_index": -1}, "problem_index must be an integer in"),
    ({"problem_index": 3}, r"problem_index 3 is out of range: .* has 1 problems \(0 to 0\)"),
    ({"render_mode": 0}, "render_mode must be one of 'ansi', 'rgb_array' or None, got 0"),
    ({"render_mode": "human"}, "render_mode must be one of"),
    ({"operators_as_actions": "no"}, "operators_as_actions must be true or false or None, got 'no'"),
    ({"dynamic_action_space": 1}, "dynamic_action_space must be true or false"),
    ({"test": "yes"}, "test must be true or false"),
    ({"problem_dir": 5}, "problem_dir must be a file path"),
    ({"colour": "red"}, r"unknown option\(s\) \['colour'\] for the pddlgym world"),
])
def test_bad_options_are_named(tmp_path, kwargs, why):
    with pytest.raises(OptionError, match=why):
        gym.make(ID, domain_file=str(_domain(tmp_path)), **kwargs)


def test_domain_file_of_the_wrong_type_is_an_option_error():
    for value in (123, b"/tmp/x.pddl", ["a"]):
        with pytest.raises(OptionError, match="domain_file must be a file path or None"):
            gym.make(ID, domain_file=value)
    with pytest.raises(OptionError, match="domain must be a non-empty string"):
        gym.make(ID, domain=7)


def test_reset_takes_huge_seeds_and_checks_its_problem_index(tmp_path):
    env = gym.make(ID, domain_file=str(_domain(tmp_path)))
    first = env.reset(seed=2 ** 70)[0]
    assert env.reset(seed=2 ** 70)[0] == first
    with pytest.raises(OptionError, match="problem_index must be an integer"):
        env.reset(options={"problem_index": "abc"})
    with pytest.raises(OptionError, match="out of range"):
        env.reset(options={"problem_index": 1})
    assert env.reset(options={"problem_index": 0})[1]["problem_index"] == 0


def test_a_seed_below_2_32_draws_pddlgyms_problem(tmp_path):
    domain = _domain(tmp_path)
    for k in range(1, 5):
        (tmp_path / "toy" / f"p{k}.pddl").write_text(PROBLEM.replace("problem p0", f"problem p{k}"), encoding="utf-8")
    env = gym.make(ID, domain_file=str(domain))
    for seed in (0, 7, 2 ** 32 - 1):
        assert env.reset(seed=seed)[1]["problem_index"] == int(np.random.RandomState(seed).choice(5))


def test_a_huge_action_text_is_quoted_as_an_excerpt(tmp_path):
    env = gym.make(ID, domain_file=str(_domain(tmp_path)))
    obs, _ = env.reset(seed=0)
    with _bounded():
        after, _, _, _, info = env.step("x" * 2 ** 20)
    assert after == obs and "1,048,576 characters is over the limit of 4,096" in info["action_error"]
    assert len(info["action_error"]) < 300
    long_name = env.step("(" + "y" * 3000 + " a)")[4]["action_error"]
    assert long_name.startswith("unknown action predicate 'yyy") and len(long_name) < 400


def _config(kwargs: dict) -> dict:
    return {"name": "pg", "seeds": [0], "variants": ["full-kg"],
            "envs": [{"name": "toy", "id": ID, "kwargs": kwargs}]}


def test_configs_check_pddlgym_options_against_the_pddlgym_table(tmp_path):
    domain = str(_domain(tmp_path))
    config = parse_config(_config({"domain_file": domain, "problem_index": 0}))
    assert config.envs[0].env_id == ID
    assert check_make_options(ID, {"domain": "sokoban"})["domain"] == "sokoban"
    with pytest.raises(ConfigError, match="operators_as_actions must be true or false"):
        parse_config(_config({"domain_file": domain, "operators_as_actions": "no"}))
    with pytest.raises(ConfigError, match=r"unknown option\(s\) \['size'\] for the pddlgym world"):
        parse_config(_config({"domain_file": domain, "size": "small"}))



@pytest.mark.parametrize("options, shown", [({"problem_idx": 0}, "'problem_idx'"), ([1], "[1]"),
                                            ({"problem_index": 0, "seed": 1}, "'seed'")])
def test_reset_options_other_than_problem_index_are_refused_not_ignored(tmp_path, options, shown):
    """Issue 38 retest: a mistyped option was ignored and a random problem ran (ServiceRobot-v0 refuses them)."""
    env = gym.make(ID, domain_file=str(_domain(tmp_path)))
    with pytest.raises(OptionError, match=r"reset\(\) options may hold only 'problem_index', got .*" + re.escape(shown)):
        env.reset(seed=0, options=options)
    assert env.reset(seed=0, options={})[1]["action_error"] is None
