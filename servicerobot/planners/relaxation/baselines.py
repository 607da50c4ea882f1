"""Baselines under the same runner: LLM+P without relaxation, and a DELTA-style pipeline.

* `llmp_plan`: Algorithm 1 with one outer iteration and no shift or relax: the goal as given, planned.
* `delta_plan` (DELTA, as CM re-implements it): prune the scene graph to the task's objects, decompose the
  goal into subgoals (one per requirement, in the task's order), plan them one after another from the state
  the previous plan left, and fail at the first subgoal that fails. No refinement, no relaxation.
"""

from __future__ import annotations

import time

from servicerobot.pddl import Atom, Interpreter
from servicerobot.planners.base import Planner
from servicerobot.planners.relaxation.core import (
    RelaxationResult,
    Toolbox,
    build_problem,
    empty_goal_failure,
    ground_plan,
    relaxing_plan,
)
from servicerobot.planners.relaxation.offline import OfflineInterpreter

__all__ = ["delta_plan", "llmp_plan"]


def llmp_plan(world, task: str, interpreter, planner: Planner, max_inner: int = 4,
              use_val: bool = True) -> RelaxationResult:
    """LLM+P: one problem for the goal as given, refined on planner feedback, never shifted or relaxed."""
    return relaxing_plan(world, task, interpreter, planner, max_inner=max_inner, relax=False, use_val=use_val,
                         method=f"llmp-{interpreter.name}")


def delta_plan(world, task: str, planner: Planner, use_val: bool = True) -> RelaxationResult:
    """The DELTA-style pipeline with the offline task reader (see the module docstring)."""
    start = time.perf_counter()
    tools = Toolbox(world, planner, use_val=use_val)
    result = RelaxationResult("delta-offline", final_task=task)
    reader = OfflineInterpreter()
    try:
        reader.begin(tools, task)
    except Exception as error:  # noqa: BLE001 - a task it cannot read is a failed run
        result.failure = f"interpret: {error}"
        return result
    slots = reader.slots()
    goal = sorted(lit for slot in slots for lit in slot.literals())
    result.final_goal = tuple(goal)
    gaps = [s for s in slots if s.missing or s.target_missing]
    subgoals = [slot.literals() for slot in slots if slot.literals()]
    result.extra = {"subgoals": len(subgoals), "pruned_objects": 0}
    if gaps:
        result.failure = "grounding: the goal names objects the scene does not have"
        result.refinements = [0]
        return _done(result, tools, start)
    full = build_problem(world, goal)
    pruned = _objects_of(full)
    result.extra["pruned_objects"] = len(pruned)
    interp = Interpreter(tools.domain, world.pddl_objects)
    state = world.init
    plan: list[str] = []
    for k, sub in enumerate(subgoals):
        # Sequential planning: the next subgoal starts from the state the previous plan left.
        step_world = _with_init(world, state)
        check = tools.check(build_problem(step_world, sub, name=f"sub{k}"))
        if not check.ok:
            result.failure = f"planning: subgoal {k + 1} of {len(subgoals)} failed"
            result.extra["failed_subgoal"] = k + 1
            result.iterations.append({"subgoal": sub, "status": check.status, "messages": check.messages[:2]})
            result.refinements = [0]
            return _done(result, tools, start)
        for step in check.plan:
            state = interp.apply(interp.parse_action(step), state)
        plan.extend(check.plan)
        result.iterations.append({"subgoal": sub, "status": "solved", "steps": len(check.plan)})
    result.refinements = [0]
    result.plan, result.problem = tuple(plan), full
    holds = all(_holds(lit, state) for lit in goal)
    result.planned = holds
    if not holds:
        result.failure = "planning: a later subgoal undid an earlier one"
        return _done(result, tools, start)
    ground = ground_plan(world, full, plan, tools.domain)
    result.grounded = ground.ok
    if not ground.ok:
        result.failure = "grounding"
    return _done(result, tools, start)


def _holds(lit: str, state) -> bool:
    negated = lit.startswith("(not ")
    atom = Atom.parse(lit[5:-1] if negated else lit)
    return (atom in state) != negated


def _objects_of(problem_text: str) -> list[str]:
    body = problem_text.split("(:objects", 1)[1].split("(:init", 1)[0]
    names = []
    for line in body.splitlines():
        if " - " in line:
            names.extend(line.split(" - ")[0].split())
    return names


def _with_init(world, state):
    from dataclasses import replace

    return replace(world, init=frozenset(state), _support={})


def _done(result: RelaxationResult, tools: Toolbox, start: float) -> RelaxationResult:
    result.failure = empty_goal_failure(result) or result.failure
    result.planner_calls, result.expanded, result.planner_time = tools.calls, tools.expanded, round(tools.time, 4)
    result.wall_time = round(time.perf_counter() - start, 4)
    return result
