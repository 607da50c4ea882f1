"""The relaxing planner (Algorithm 1, offline interpreter), its baselines, grounding check and CM metrics."""

from __future__ import annotations

from dataclasses import replace

import numpy as np
import pytest

from servicerobot.envs.context_matters import generate_instance
from servicerobot.experiments.cm import _acceptable, score_result
from servicerobot.pddl import Atom
from servicerobot.planners import get_planner
from servicerobot.planners.relaxation import (
    OfflineInterpreter,
    build_problem,
    delta_plan,
    ground_plan,
    llmp_plan,
    relaxing_plan,
)
from servicerobot.scenes.household import household_domain


@pytest.fixture(scope="module")
def planner():
    return get_planner("fast-downward", timeout=20)


def _solve(domain, variant, planner, seed=11, **kw):
    inst = generate_instance(domain, variant, np.random.default_rng(seed))
    return inst, relaxing_plan(inst.world(), inst.task, OfflineInterpreter(**kw), planner)


@pytest.mark.parametrize("domain,variant", [("dining_setup", "feasible"), ("laundry", "feasible"),
                                            ("house_cleaning", "feasible")])
def test_feasible_tasks_are_planned_as_asked(domain, variant, planner):
    inst, result = _solve(domain, variant, planner)
    assert result.success and not result.changed and result.relaxations == 0
    assert result.final_goal in inst.acceptable and result.statement() == "the task was done as asked"


def test_a_missing_plate_is_shifted_to_a_bowl_not_the_frying_pan(planner):
    for seed in range(4):
        inst, result = _solve("dining_setup", "shift:plate", planner, seed=seed)
        world = inst.world()
        assert result.success and result.final_goal in inst.acceptable
        used = {world.objects[s["use"]].class_ for s in result.shifts}
        assert used == {"bowl"}, result.shifts
        assert "frying_pan" not in " ".join(result.final_goal)


def test_too_few_forks_and_nothing_equivalent_drops_the_rest(planner):
    inst, result = _solve("dining_setup", "short:fork", planner)
    assert result.success and not result.shifts
    assert result.dropped and "fork" in result.dropped[0]["requirement"]
    assert "knife" not in " ".join(result.final_goal) and result.final_goal in inst.acceptable


def test_relaxation_without_a_dryer_is_decided_by_the_planner(planner):
    inst, result = _solve("laundry", "no:dryer", planner)
    assert result.success and result.final_goal in inst.acceptable
    assert result.planner_calls >= 3  # the full goal, then subsets until a plan exists
    assert all("wet" in d["literal"] for d in result.dropped)
    assert result.iterations[0]["status"] == "unsolvable"
    assert any("(not (dirty" in lit for lit in result.final_goal)


def test_no_sink_drops_the_washing_but_keeps_the_trash(planner):
    inst, result = _solve("house_cleaning", "no:sink", planner)
    assert result.success and result.final_goal in inst.acceptable
    assert all(lit.startswith("(discarded") for lit in result.final_goal)


def test_a_missing_target_fixture_drops_its_requirement(planner):
    inst, result = _solve("office_setup", "missing_target:chest_of_drawers", planner)
    assert result.success and result.final_goal in inst.acceptable
    assert result.dropped[0]["reason"] == "the scene has no chest of drawers"


def test_a_strict_threshold_turns_a_shift_into_a_drop(planner):
    inst, result = _solve("dining_setup", "shift:plate", planner, shift_threshold=1.01)
    assert result.success and not result.shifts and result.dropped
    assert result.final_goal not in inst.acceptable


def test_baselines_fail_infeasible_tasks_and_solve_feasible_ones(planner):
    inst = generate_instance("dining_setup", "shift:plate", np.random.default_rng(1))
    for result in (llmp_plan(inst.world(), inst.task, OfflineInterpreter(), planner),
                   delta_plan(inst.world(), inst.task, planner)):
        assert not result.success and not result.changed
    inst = generate_instance("laundry", "no:dryer", np.random.default_rng(1))
    assert not llmp_plan(inst.world(), inst.task, OfflineInterpreter(), planner).success
    delta = delta_plan(inst.world(), inst.task, planner)
    assert not delta.success and delta.extra["failed_subgoal"] == 2  # washing works, drying cannot
    inst = generate_instance("pc_assembly", "feasible", np.random.default_rng(1))
    delta = delta_plan(inst.world(), inst.task, planner)
    assert delta.success and delta.extra["subgoals"] == 4 and tuple(sorted(delta.final_goal)) in inst.acceptable


def test_grounding_catches_a_wrong_start_false_facts_and_unknown_objects():
    inst = generate_instance("general", "feasible", np.random.default_rng(4))
    world, domain = inst.world(), household_domain()
    goal = inst.acceptable[0]
    text = build_problem(world, goal)
    assert ground_plan(world, text, [], domain).ok
    other = next(r for r in world.rooms if r != world.init_loc)
    moved = text.replace(f"(in-room robot {world.init_loc})", f"(in-room robot {other})")
    assert any("init_loc" in line for line in ground_plan(world, moved, [], domain).log)
    fake = replace(world, init=world.init - {Atom("hand-empty", ("robot",))})
    assert any("not true in the scene" in line for line in ground_plan(fake, text, [], domain).log)
    bad_step = ground_plan(world, text, [f"(move robot {other} {world.init_loc})"], domain)
    assert not bad_step.ok and bad_step.score == 0.0


def test_unreadable_task_is_a_failed_run(planner):
    inst = generate_instance("general", "feasible", np.random.default_rng(4))
    result = relaxing_plan(inst.world(), "dance a little", OfflineInterpreter(), planner)
    assert not result.success and result.failure.startswith("interpret:")


def test_score_result_fills_every_metric(planner):
    inst, result = _solve("general", "shift:cup", planner)
    cm = score_result(inst, result)
    assert cm["relaxation_expected"] and cm["relaxed"] and cm["agreement"]
    assert cm["acceptable_goal"] and cm["world_success"] and cm["grounding_score"] == 1.0
    assert cm["plan_length"] == len(result.plan) == cm["executed_steps"] > 0
    assert cm["planner_calls"] >= 1 and cm["refinements"] == [0, 0]
    no = llmp_plan(inst.world(), inst.task, OfflineInterpreter(), planner)
    cm = score_result(inst, no)
    assert not cm["relaxed"] and not cm["agreement"] and not cm["acceptable_goal"] and not cm["world_success"]


def test_acceptable_goal_up_to_renaming_of_interchangeable_objects():
    inst = generate_instance("general", "feasible", np.random.default_rng(4))
    world = inst.world()
    goal = list(inst.acceptable[0])
    obj = goal[0].split()[1]
    support = world.support(obj)
    twin = "twin_1"  # an identical object on the same support: the same goal up to renaming
    twin_world = replace(world, pddl_objects={**world.pddl_objects, twin: world.pddl_objects[obj]},
                         init=world.init | {Atom("on" if Atom("on", (obj, support)) in world.init else "inside",
                                                 (twin, support))}, _support={})
    renamed = tuple(sorted(lit.replace(obj, twin) for lit in goal))
    assert renamed not in inst.acceptable
    assert _acceptable(twin_world, renamed, inst.acceptable)
    assert not _acceptable(twin_world, tuple(goal[1:]), inst.acceptable) or len(goal) == 1


def test_shipped_config_and_runner_and_report(tmp_path):
    import json

    from servicerobot.experiments.config import ConfigError, load_config, parse_config
    from servicerobot.experiments.report import write_report
    from servicerobot.experiments.runner import run_grid

    shipped = load_config("context_matters")
    assert len(shipped.seeds) >= 150 and set(shipped.variants) == {"cm-offline", "llmp-offline", "delta-offline"}
    env = {"name": "g", "id": "ContextMatters", "kwargs": {"generated": {"seed": 0}}}
    config = parse_config({"name": "cmtiny", "seeds": {"start": 0, "count": 6},
                           "variants": ["cm-offline", "llmp-offline"], "envs": [env]})
    out = tmp_path / "r.jsonl"
    counts = run_grid(config, out, backend="serial")
    assert counts["ran"] == 12 and counts["errors"] == 0
    records = [json.loads(line) for line in out.read_text().splitlines()]
    cm = {(r["variant"], r["seed"]): r["cm"] for r in records}
    assert all(cm[("cm-offline", s)]["acceptable_goal"] for s in range(6))
    assert all(cm[("llmp-offline", s)]["success"] != cm[("llmp-offline", s)]["relaxation_expected"] for s in range(6))
    text = write_report(out, tmp_path / "report").markdown.read_text()
    assert "## Context Matters: relaxation" in text and "| g | cm-offline | 6 | 6/6 = 1.000" in text
    bad = {"name": "bad", "seeds": [0], "variants": ["cm-offline"],
           "envs": [{"name": "g", "id": "ContextMatters", "kwargs": {"generated": {"seed": 0}, "colour": "red"}}]}
    with pytest.raises(ConfigError, match="colour"):
        parse_config(bad)


def test_llm_variant_without_a_model_says_how_to_get_one(monkeypatch):
    from servicerobot.experiments.cm import CMConfigError, solve

    monkeypatch.delenv("OPENAI_BASE_URL", raising=False)
    monkeypatch.delenv("OPENAI_API_KEY", raising=False)
    inst = generate_instance("general", "feasible", np.random.default_rng(4))
    with pytest.raises(CMConfigError, match="llm serve"):
        solve("cm-llm", inst.world(), inst.task, {})
    with pytest.raises(CMConfigError, match="unknown Context Matters variant"):
        solve("cm-magic", inst.world(), inst.task, {})
