"""Context Matters' free-text tasks through a language model's interpreter, planned in the split's own domain.

When a CM dataset ships its split's PDDL domain (`instance.domain_file`), the scene is written in that
domain (`envs.context_matters.cm_domain.domain_world`) and the task sentence goes to an `Interpreter`'s
`interpret_task` (the local model's enumerate-and-choose `ChoosingInterpreter` by default: code enumerates
the goals the domain's actions can reach over the scene's things, the model scores them). This module builds
what it needs, a `Context` of the split's domain, the scene's things as a catalogue and the scene's facts,
then plans the chosen goal with Fast Downward in the split's domain; when no plan reaches the whole goal,
it relaxes as Context Matters does (the planner decides which goal literals can still be achieved together,
in the order the goal gives them) and says what it dropped. The plan is executed on the scene's facts.

`solve_in_split_domain(instance, interpreter)` returns a record: the task, the chosen goal, what was dropped and
why, the final goal, the plan's length, the facts the plan changed, whether the final goal is one of the
instance's acceptable goals (read back into household words by `cm_domain.household_meaning`), success in
the scene (the plan runs and an acceptable goal holds after it, or, without acceptable goals, the final goal
holds), agreement with `relaxation_expected`, and the wall time. A final goal that is empty or already holds
at the start is a failure with that reason, never a success. An interpreter that finds the task cannot be
done as asked raises `TaskInfeasible` (with what can still be done, or nothing: the instance is then refused
up front with the reason, and counts as relaxed).
"""

from __future__ import annotations

import time
import traceback

from servicerobot.errors import ServiceRobotError, TaskInfeasible

__all__ = ["SPEAKER", "cm_context", "goal_parts", "solve_in_split_domain"]

SPEAKER = "The user"


def cm_context(instance):
    """The `Context` an interpreter reads a CM task with: the split's domain, the scene's things in it
    (class words as the noun; fixtures with their room), and the scene's facts in the domain's predicates."""
    from servicerobot.language.interpreter import Context
    from servicerobot.scenes.household import household_domain

    dw = instance.domain_world()
    if dw is None:
        raise ServiceRobotError(f"{instance.key}: the dataset ships no domain file for split {instance.split} "
                                f"(looked for {instance.split.replace('_', '-')}-domain.pddl, {instance.split}.pddl "
                                "and a domain file in the split folder; see cm_domain.find_domain_file)")
    world = instance.world()
    household = household_domain().types
    entities: dict[str, dict] = {}
    for name, typ in dw.objects.items():
        if name in dw.rooms:
            entities[name] = {"type": typ, "noun": dw.rooms[name].replace("_", " ")}
        elif name == dw.robot:
            entities[name] = {"type": typ, "noun": "robot"}
        else:
            obj = world.objects.get(name)
            info = {"type": typ, "noun": (obj.class_ if obj else name.rsplit("_", 1)[0]).replace("_", " ")}
            htype = world.pddl_objects.get(name, "")
            if htype in household.types and household.is_subtype(htype, "fixture") and dw.room_of.get(name):
                info["room"] = dw.room_of[name]
            entities[name] = info
    return Context(dw.domain, entities, frozenset(dw.init), dw.robot)


def goal_parts(goal: str) -> list[str] | None:
    """The literals of a conjunction of literals (`(and (p a) (not (q b)))` -> two parts), or None when the goal
    is not one (a `forall`, an `or`)."""
    from servicerobot.pddl import parse_sexpr

    try:
        expr = parse_sexpr(goal)
    except Exception:  # noqa: BLE001 - not a formula at all
        return None

    def text(e) -> str:
        return e if isinstance(e, str) else "(" + " ".join(text(x) for x in e) + ")"

    def literal(e) -> bool:
        if isinstance(e, str) or not e:
            return False
        if str(e[0]).lower() == "not":
            return len(e) == 2 and literal(e[1]) and str(e[1][0]).lower() not in ("not", "and", "or")
        return str(e[0]).lower() not in ("and", "or", "forall", "exists", "imply", "when") and all(
            isinstance(x, str) for x in e[1:])

    items = list(expr)
    if items and str(items[0]).lower() == "and":
        parts = items[1:]
        return [text(p) for p in parts] if all(literal(p) for p in parts) else None
    return [text(items)] if literal(items) else None


def _conj(parts) -> str:
    return "(and " + " ".join(parts) + ")" if parts else "(and)"


def solve_in_split_domain(instance, interpreter, planner=None, timeout: float = 30.0) -> dict:
    """Read the instance's task with `interpreter` in the split's own domain, plan, relax, execute, score.

    Raises:
        ServiceRobotError: the instance's split ships no domain (`instance.domain_file` is None).
    """
    from servicerobot.planners import get_planner
    from servicerobot.planners.relaxation.core import keep_achievable

    if instance.domain_file is None:
        raise ServiceRobotError(f"{instance.key}: the dataset ships no domain for split {instance.split}")
    planner = planner or get_planner("fast-downward", timeout=timeout)
    t0 = time.perf_counter()
    dw = instance.domain_world()
    out: dict = {"key": instance.key, "split": instance.split, "task": instance.task, "domain": dw.domain.name,
                 "relaxation_expected": instance.relaxation_expected, "goal": None, "final_goal": None,
                 "dropped": [], "relaxed": False, "planned": False, "executed": False, "success": False,
                 "acceptable_goal": None, "agreement": None, "failure": "", "planner_calls": 0,
                 "refused_objects": len(dw.refused)}
    try:
        context = cm_context(instance)
        t1 = time.perf_counter()
        try:
            goal = interpreter.interpret_task(instance.task, SPEAKER, context)
        except TaskInfeasible as infeasible:  # the reading itself found the task cannot be done as asked
            out["relaxed"] = True
            out["dropped"] = [{"literal": None, "reason": d} for d in infeasible.dropped]
            goal = infeasible.goal
        out["interpret_s"] = round(time.perf_counter() - t1, 2)
    except Exception as error:  # noqa: BLE001 - a task the interpreter cannot read is a failed instance
        out["failure"] = f"interpret: {type(error).__name__}: {str(error)[:300]}"
        out["trace"] = traceback.format_exc()[-1500:]
        out["wall_s"] = round(time.perf_counter() - t0, 2)
        return out
    out["goal"] = goal
    if goal is None:  # refused up front, with the reason: nothing of the task can be done here
        out["refused"] = True
        out["failure"] = "infeasible as asked: " + "; ".join(d["reason"] for d in out["dropped"])
        return _agreement(out, instance, t0)

    def solve(goal_text: str):
        out["planner_calls"] += 1
        return planner.solve(dw.domain, dw.problem_text(goal_text))

    result = solve(goal)
    final = goal
    parts = goal_parts(goal)
    if not result.solved and parts:
        kept, dropped = keep_achievable([], parts, lambda lits: solve(_conj(lits)).solved)
        out["dropped"] += [{"literal": d, "reason": "no plan achieves it together with the parts kept before it"}
                           for d in dropped]
        out["relaxed"] = out["relaxed"] or bool(dropped)
        final = _conj(kept)
        parts = kept
        result = solve(final) if kept else result
    out["final_goal"] = final
    if parts == []:
        out["failure"] = "empty goal: every part was dropped" if out["dropped"] else "empty goal"
    elif _already_true(dw, final):
        out["failure"] = "the final goal already holds at the start: the task asks for nothing to be done"
    elif not result.solved:
        out["failure"] = f"planning: {result.status.value}"
    else:
        out["planned"] = True
        out["plan_length"] = len(result.plan)
        done, state, why = dw.execute(result.plan)
        out["executed"] = done == len(result.plan) and dw.holds(final, state)
        out["facts_added"] = sorted(str(a) for a in state - dw.init)
        out["facts_removed"] = sorted(str(a) for a in dw.init - state)
        if why:
            out["failure"] = f"execution: {why}"
        if instance.acceptable is not None:
            from servicerobot.envs.context_matters.cm_domain import translate_goal

            goals = [translate_goal(g, dw) for g in instance.acceptable]
            out["success"] = out["executed"] and any(g is not None and dw.holds(_conj(g), state) for g in goals)
        else:
            out["success"] = out["executed"]
    if instance.acceptable is not None:
        from servicerobot.envs.context_matters.cm_domain import household_meaning

        meaning = [household_meaning(p, dw) for p in parts] if parts else None
        out["final_goal_household"] = meaning
        out["acceptable_goal"] = bool(meaning and None not in meaning and out["planned"]
                                      and tuple(sorted(set(meaning))) in set(instance.acceptable))
    return _agreement(out, instance, t0)


def _already_true(dw, goal: str) -> bool:
    try:
        return dw.holds(goal, dw.init)
    except Exception:  # noqa: BLE001 - a goal the interpreter cannot compile is not "already true"
        return False


def _agreement(out: dict, instance, t0: float) -> dict:
    if instance.relaxation_expected is not None:
        out["agreement"] = out["relaxed"] == instance.relaxation_expected
    out["wall_s"] = round(time.perf_counter() - t0, 2)
    return out
