"""Context Matters episodes for `servicerobot run`: one instance x one method -> one scored record.

An env entry with `id: ContextMatters` names the instances, either generated or a CM dataset folder:

```yaml
envs:
  - name: cm-generated
    id: ContextMatters
    kwargs: {generated: {seed: 0}}            # seed i of the grid = instance i of the generated set
  - name: cm-dataset
    id: ContextMatters
    kwargs: {dataset: path/to/dataset, split: dining_setup}   # seed i = the split's i-th instance
variants: [cm-offline, llmp-offline, delta-offline]            # and cm-llm / llmp-llm with a model
```

Optional kwargs: `planner_timeout` (s), `llm` ({cassette: path} replays a cassette; else `OpenAIModel.from_env()`),
`use_val` (default true). Each record carries CM's metrics and what CM lacks: agreement with
`relaxation_expected`, whether the final goal is an acceptable one (set equality, else
`servicerobot.pddl.equivalence.equivalent` on the scene's facts), and success in the symbolic world after
executing the plan from the scene's own facts (some acceptable goal holds).
"""

from __future__ import annotations

import json
import time
import traceback
from typing import Any

from servicerobot.errors import ServiceRobotError

__all__ = ["CM_ENV_ID", "CM_VARIANTS", "check_cm_env", "cm_report_lines", "instance_for", "run_cm_episode", "score_result"]

CM_ENV_ID = "ContextMatters"
CM_VARIANTS = ("cm-offline", "cm-llm", "llmp-offline", "llmp-llm", "delta-offline")
_KWARGS = {"generated", "dataset", "split", "planner_timeout", "llm", "use_val"}
_SETS: dict[str, Any] = {}


class CMConfigError(ServiceRobotError, ValueError):
    """A Context Matters env entry is malformed."""


def instance_for(kwargs: dict, index: int):
    """Instance `index` of the set the env kwargs name (generated, or a dataset split)."""
    from servicerobot.envs.context_matters import generate_index, read_split

    unknown = set(kwargs) - _KWARGS
    if unknown:
        raise CMConfigError(f"ContextMatters env: unknown kwargs {sorted(unknown)}; allowed: {sorted(_KWARGS)}")
    if "dataset" in kwargs:
        if "split" not in kwargs:
            raise CMConfigError("ContextMatters env: a dataset needs a split (e.g. split: dining_setup)")
        key = json.dumps([kwargs["dataset"], kwargs["split"]])
        if key not in _SETS:
            _SETS[key] = read_split(kwargs["dataset"], kwargs["split"])
        items = _SETS[key]
        if not 0 <= index < len(items):
            raise CMConfigError(f"seed {index} is out of range: split {kwargs['split']} has {len(items)} instances")
        return items[index]
    gen = kwargs.get("generated")
    if not isinstance(gen, dict):
        raise CMConfigError("ContextMatters env: give generated: {seed: S} or dataset: PATH with split: NAME")
    if index < 0:
        raise CMConfigError(f"seed {index}: instance indices start at 0")
    key = json.dumps(["generated", gen, index], sort_keys=True)
    if key not in _SETS:
        if len(_SETS) > 512:
            _SETS.clear()
        _SETS[key] = generate_index(index, int(gen.get("seed", 0)), float(gen.get("feasible_share", 0.45)))
    return _SETS[key]


_LLM_KEYS = {"cassette", "mode", "base_url", "model", "grammar", "timeout"}


def _model(kwargs: dict):
    """The language model the env kwargs name: `llm: {cassette: PATH}`, `llm: {base_url, model, grammar,
    timeout}` (e.g. `servicerobot llm serve`), or the OPENAI_* environment."""
    llm = kwargs.get("llm") or {}
    if not isinstance(llm, dict) or set(llm) - _LLM_KEYS:
        raise CMConfigError(f"ContextMatters env: llm must be a mapping with keys among {sorted(_LLM_KEYS)}")
    if llm.get("cassette"):
        from servicerobot.language.cassette import Cassette

        return Cassette(llm["cassette"], mode=llm.get("mode", "replay"))
    from servicerobot.language.openai_client import OpenAIModel

    if llm.get("base_url"):
        return OpenAIModel(llm.get("model", "local"), base_url=llm["base_url"], api_key="local",
                           grammar=bool(llm.get("grammar", False)), timeout=float(llm.get("timeout", 300)))
    model = OpenAIModel.from_env()
    if model is None:
        raise CMConfigError("the cm-llm and llmp-llm variants need a language model: set OPENAI_BASE_URL and/or "
                            "OPENAI_API_KEY, or give the env kwargs llm: {base_url: URL} (servicerobot llm serve "
                            "prints one) or llm: {cassette: PATH}")
    return model


def solve(variant: str, world, task: str, kwargs: dict):
    """Run one method on one instance's world; returns a `RelaxationResult`."""
    from servicerobot.planners import get_planner
    from servicerobot.planners.relaxation import (
        LLMRelaxInterpreter,
        OfflineInterpreter,
        delta_plan,
        llmp_plan,
        relaxing_plan,
    )

    if variant not in CM_VARIANTS:
        raise CMConfigError(f"unknown Context Matters variant {variant!r}; choose from {CM_VARIANTS}")
    planner = get_planner("fast-downward", timeout=float(kwargs.get("planner_timeout", 30.0)))
    use_val = bool(kwargs.get("use_val", True))
    if variant == "delta-offline":
        return delta_plan(world, task, planner, use_val=use_val)
    interpreter = LLMRelaxInterpreter(_model(kwargs)) if variant.endswith("-llm") else OfflineInterpreter()
    if variant.startswith("llmp"):
        return llmp_plan(world, task, interpreter, planner, use_val=use_val)
    return relaxing_plan(world, task, interpreter, planner, use_val=use_val, method=variant)


def score_result(instance, result) -> dict:
    """The record's `cm` part: CM's metrics, agreement with relaxation_expected, acceptable goal, world success."""
    from servicerobot.planners.relaxation.core import ground_plan
    from servicerobot.scenes.household import household_domain

    world = instance.world()
    domain = household_domain()
    executed, state = _execute(world, result.plan, domain)
    acceptable = _acceptable(world, result.final_goal, instance.acceptable) if result.success else False
    if instance.acceptable is not None:
        world_success = executed == len(result.plan) and any(_holds_all(g, state) for g in instance.acceptable)
    else:  # a CM dataset instance: no goals to compare with, only the planner's own final goal
        world_success = bool(result.success and result.final_goal is not None and _holds_all(result.final_goal,
                                                                                               state))
    ground = ground_plan(world, result.problem, result.plan, domain) if result.problem else None
    relaxed = result.changed
    return {
        "domain": instance.split,
        "variant_truth": instance.variant, "scene": instance.scene_name, "problem": instance.problem,
        "task": instance.task, "init_loc": instance.init_loc,
        "relaxation_expected": instance.relaxation_expected, "relaxed": relaxed,
        # None: the dataset does not say whether relaxation is expected (CM's pc_assembly): not scored
        "agreement": None if instance.relaxation_expected is None else relaxed == instance.relaxation_expected,
        "planned": result.planned, "grounded": result.grounded, "success": result.success,
        "grounding_score": ground.score if ground else 0.0,
        "relaxations": result.relaxations, "refinements": result.refinements,
        "plan_length": len(result.plan), "planner_calls": result.planner_calls, "expanded": result.expanded,
        "planner_time": result.planner_time,
        "final_goal": list(result.final_goal) if result.final_goal is not None else None,
        "acceptable_goal": acceptable if instance.acceptable is not None else None,
        "world_success": world_success, "executed_steps": executed,
        "statement": result.statement(), "shifts": result.shifts, "dropped": result.dropped,
        "failure": result.failure, "final_task": result.final_task, "extra": result.extra,
        # what the loader did with a dataset's scene graph, and how many task objects reached PDDL
        "scene_load": instance.scene.report.summary() if getattr(instance.scene, "report", None) else None,
        "task_objects": instance.coverage() if instance.task_classes else None,
    }


def _execute(world, plan, domain):
    from servicerobot.pddl import Interpreter

    interp = Interpreter(domain, world.pddl_objects)
    state, done = world.init, 0
    for step in plan:
        try:
            ga = interp.parse_action(step)
        except ServiceRobotError:
            break
        if interp.why_not(ga, state) is not None:
            break
        state, done = interp.apply(ga, state), done + 1
    return done, state


def _holds_all(goal, state) -> bool:
    from servicerobot.pddl import Atom

    for lit in goal:
        negated = lit.startswith("(not ")
        if (Atom.parse(lit[5:-1] if negated else lit) in state) == negated:
            return False
    return True


def _acceptable(world, final_goal, acceptable) -> bool:
    """Is the final goal one of the acceptable goals (as sets, else up to renaming by `equivalent`)?"""
    if acceptable is None or final_goal is None:
        return False
    final = tuple(sorted(final_goal))
    if final in set(acceptable):
        return True
    from servicerobot.pddl.equivalence import GoalTooComplexError, equivalent
    from servicerobot.planners.relaxation.core import build_problem
    from servicerobot.scenes.household import household_domain

    domain = household_domain()
    same_size = [g for g in acceptable if len(g) == len(final)][:16]
    for goal in same_size:
        extra = [tok.strip("()") for lit in (*goal, *final) for tok in lit.split()[1:]]
        try:
            if equivalent(build_problem(world, final, objects=extra), build_problem(world, goal, objects=extra),
                          domain):
                return True
        except GoalTooComplexError:
            continue
    return False


def run_cm_episode(spec, run: dict | None = None) -> dict:
    """One CM instance (the spec's seed) solved by one method (the spec's variant), as a result record."""
    kwargs = dict(spec.env.kwargs)
    record: dict[str, Any] = {"key": spec.key, "run": run or {}, "env": spec.env.name, "env_kwargs": kwargs,
                              "variant": spec.variant, "seed": spec.seed, "kg": None}
    t0 = time.perf_counter()
    try:
        instance = instance_for(kwargs, spec.seed)
        result = solve(spec.variant, instance.world(), instance.task, kwargs)
        cm = score_result(instance, result)
        record.update(status="ok", cm=cm, tasks=[{
            "index": 0, "kind": cm["domain"], "text": instance.task, "completed": cm["world_success"],
            "steps": cm["plan_length"], "events": [], "disturbed": False, "plans": result.planner_calls,
            "actions": cm["plan_length"], "failed_actions": cm["plan_length"] - cm["executed_steps"], "goal": None}],
            agent={"steps": cm["plan_length"], "replans": result.relaxations, "tokens": 0,
                   "planning_time": result.planner_time})
    except Exception:  # noqa: BLE001 - the grid goes on; the record carries the traceback
        record.update(status="error", error=traceback.format_exc(), tasks=[], agent=None)
    record["timing"] = {"wall_s": round(time.perf_counter() - t0, 3)}
    return record


def _rate(k: int, n: int) -> str:
    from servicerobot.experiments.stats import wilson

    if n == 0:
        return "not scored"
    lo, hi = wilson(k, n)
    return f"{k}/{n} = {k / n:.3f} [{lo:.3f}, {hi:.3f}]"


def cm_summary(records: list[dict]) -> list[dict]:
    """One row per env x variant over the CM records: counts for every metric."""
    groups: dict[tuple[str, str], list[dict]] = {}
    for r in records:
        if r.get("status") == "ok" and isinstance(r.get("cm"), dict):
            groups.setdefault((r["env"], r["variant"]), []).append(r["cm"])
    rows = []
    for (env, variant), cms in groups.items():
        # Only instances with acceptable goals are scored on them, and only those with relaxation_expected
        # on agreement; the others count as "not scored", never as failures.
        scored = [c for c in cms if c["acceptable_goal"] is not None]
        infeasible = [c for c in scored if c["relaxation_expected"]]
        feasible = [c for c in scored if c["relaxation_expected"] is False]
        labelled = [c for c in cms if c["relaxation_expected"] is not None]
        succ = [c for c in cms if c["success"]]
        rows.append({
            "env": env, "variant": variant, "n": len(cms),
            "planned": sum(c["planned"] for c in cms), "grounded": sum(c["success"] for c in cms),
            "tp": sum(c["relaxed"] and c["relaxation_expected"] for c in labelled),
            "fp": sum(c["relaxed"] and not c["relaxation_expected"] for c in labelled),
            "fn": sum(not c["relaxed"] and c["relaxation_expected"] for c in labelled),
            "tn": sum(not c["relaxed"] and not c["relaxation_expected"] for c in labelled),
            "labelled": len(labelled), "agreement": sum(bool(c["agreement"]) for c in labelled),
            "scored": len(scored), "acceptable": sum(bool(c["acceptable_goal"]) for c in scored),
            "infeasible": len(infeasible), "acceptable_infeasible": sum(bool(c["acceptable_goal"]) for c in infeasible),
            "feasible": len(feasible), "acceptable_feasible": sum(bool(c["acceptable_goal"]) for c in feasible),
            "world_success": sum(c["world_success"] for c in cms),
            "relaxations_mean": sum(c["relaxations"] for c in cms) / len(cms),
            "refinements_mean": sum(sum(c["refinements"]) for c in cms) / len(cms),
            "plan_length_mean": (sum(c["plan_length"] for c in succ) / len(succ)) if succ else None,
            "expanded_mean": sum(c["expanded"] for c in cms) / len(cms),
            "planner_time_mean": sum(c["planner_time"] for c in cms) / len(cms),
        })
    return rows


def cm_report_lines(records: list[dict]) -> list[str]:
    """The report's Context Matters section (Markdown), or nothing when no record is a CM record."""
    rows = cm_summary(records)
    if not rows:
        return []
    out = ["## Context Matters: relaxation", "",
           ("Rates are k/n = share [95% Wilson interval]. *Acceptable goal*: the final goal is one of the "
           "instance's acceptable goals. *World success*: after executing the plan from the scene's facts, an "
           "acceptable goal holds. *Agreement*: relaxed exactly when `relaxation_expected`. *Not scored*: no "
           "instance of the row carries that ground truth (a CM dataset has no acceptable goals, and its "
           "pc_assembly split no `relaxation_expected`)."), "",
           ("| env | method | n | planned (CM) | planned+grounded (CM) | agreement | acceptable goal | "
           "acceptable, infeasible | acceptable, feasible | world success |"), "|---|---|---|---|---|---|---|---|---|---|"]
    for r in rows:
        out.append(f"| {r['env']} | {r['variant']} | {r['n']} | {_rate(r['planned'], r['n'])} | "
                   f"{_rate(r['grounded'], r['n'])} | {_rate(r['agreement'], r['labelled'])} | "
                   f"{_rate(r['acceptable'], r['scored'])} | {_rate(r['acceptable_infeasible'], r['infeasible'])} | "
                   f"{_rate(r['acceptable_feasible'], r['feasible'])} | {_rate(r['world_success'], r['n'])} |")
    out += ["", ("| env | method | relaxed & expected | relaxed, not expected | not relaxed, expected | "
                "neither | relaxations | refinements | plan length (successful) | planner nodes | planner s |"),
            "|---|---|---|---|---|---|---|---|---|---|---|"]
    for r in rows:
        length = f"{r['plan_length_mean']:.1f}" if r["plan_length_mean"] is not None else "—"
        out.append(f"| {r['env']} | {r['variant']} | {r['tp']} | {r['fp']} | {r['fn']} | {r['tn']} | "
                   f"{r['relaxations_mean']:.2f} | {r['refinements_mean']:.2f} | {length} | "
                   f"{r['expanded_mean']:.0f} | {r['planner_time_mean']:.3f} |")
    return out + [""]


def check_cm_env(env) -> None:
    """Check a ContextMatters env entry once (kwargs, and that its first instance loads)."""
    instance_for(dict(env.kwargs), 0)
