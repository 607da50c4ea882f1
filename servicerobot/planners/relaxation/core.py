"""Context Matters' Algorithm 1 around any interpreter: problem generation with planner/validator feedback,
a grounding check of the plan in the 3D scene graph, and goal shifting / relaxation between attempts.

At most `max_outer` outer iterations. Each one asks the interpreter for a problem for the current goal,
plans with the given planner, validates the plan (in-process PDDL semantics and VAL), and refines the
problem with the failure messages up to `max_inner` times. A valid plan is then grounded in the scene:
the problem's objects must exist, its robot must start at `init_loc`, its initial facts must be true in
the scene, and the plan must execute on the scene's own facts. On success the loop stops; otherwise the
interpreter shifts or relaxes the goal (and must say what it changed) and the next iteration starts over.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Iterable
from dataclasses import asdict, dataclass, field
from typing import Protocol

from servicerobot.errors import PDDLError, PlannerError
from servicerobot.pddl import TRUE, And, AtomF, Interpreter, Not, parse_problem, validate_plan
from servicerobot.pddl.writer import format_formula
from servicerobot.planners.base import Planner, PlanResult

__all__ = [
    "Adjustment",
    "AlgorithmInterpreter",
    "CheckResult",
    "Draft",
    "GroundingResult",
    "RelaxationResult",
    "Toolbox",
    "build_problem",
    "empty_goal_failure",
    "goal_literals",
    "ground_plan",
    "keep_achievable",
    "relaxing_plan",
]


@dataclass
class Draft:
    """A problem the interpreter wrote for a goal (None when it could not write one, with the reason)."""

    problem: str | None
    goal_text: str
    message: str = ""


@dataclass
class Adjustment:
    """A shifted or relaxed goal and exactly what changed: `shifts` ({missing, use, score}) and `dropped`
    ({literal or requirement, reason})."""

    goal_text: str
    shifts: list[dict] = field(default_factory=list)
    dropped: list[dict] = field(default_factory=list)
    rejected: list[dict] = field(default_factory=list)  # proposed shifts refused ({missing, use, reason})


@dataclass
class CheckResult:
    """Planning and validation of one problem."""

    ok: bool
    status: str
    plan: tuple[str, ...] = ()
    messages: list[str] = field(default_factory=list)
    expanded: int = 0
    planner_time: float = 0.0


@dataclass
class GroundingResult:
    """CM's grounding check (plus our init-fact check): `score` = share of plan steps that executed."""

    ok: bool
    score: float
    log: list[str] = field(default_factory=list)


@dataclass
class RelaxationResult:
    """What one run of Algorithm 1 (or a baseline) produced, with CM's metrics and what was changed."""

    method: str
    planned: bool = False
    grounded: bool = False
    plan: tuple[str, ...] = ()
    problem: str | None = None
    final_goal: tuple[str, ...] | None = None
    final_task: str = ""
    shifts: list[dict] = field(default_factory=list)
    dropped: list[dict] = field(default_factory=list)
    relaxations: int = 0
    refinements: list[int] = field(default_factory=list)
    planner_calls: int = 0
    expanded: int = 0
    planner_time: float = 0.0
    wall_time: float = 0.0
    failure: str = ""
    iterations: list[dict] = field(default_factory=list)
    extra: dict = field(default_factory=dict)

    @property
    def success(self) -> bool:
        """Planned and grounded, for a goal that asks for something: an empty goal (everything dropped, or
        nothing asked) is a failure, with the reason in `failure`."""
        return self.planned and self.grounded and self.final_goal != ()

    @property
    def changed(self) -> bool:
        """True if the goal was shifted or relaxed."""
        return bool(self.shifts or self.dropped)

    def statement(self) -> str:
        """What the robot says it changed, in words."""
        parts = [f"used {s['use']} in place of a missing {s['missing']}" for s in self.shifts]
        parts += [f"dropped {d.get('literal') or d.get('requirement')} ({d['reason']})" for d in self.dropped]
        return "; ".join(parts) or "the task was done as asked"

    def to_json(self) -> dict:
        out = asdict(self)
        out["plan"] = list(self.plan)
        out["final_goal"] = list(self.final_goal) if self.final_goal is not None else None
        out["statement"] = self.statement()
        out["changed"] = self.changed
        out["success"] = self.success
        return out


class Toolbox:
    """The planner, domain and scene an interpreter may use, counting every planner call."""

    def __init__(self, world, planner: Planner, domain=None, use_val: bool = True):
        from servicerobot.scenes.household import household_domain

        self.world = world
        self.planner = planner
        self.domain = domain or household_domain()
        self.use_val = use_val
        self.calls = 0
        self.expanded = 0
        self.time = 0.0

    def solve(self, problem_text: str) -> PlanResult:
        """Plan for a problem text with the planner (counted)."""
        result = self.planner.solve(self.domain, problem_text)
        self.calls += 1
        self.expanded += int(result.expanded or 0)
        self.time += float(result.total_time or 0.0)
        return result

    def solvable(self, literals: Iterable[str]) -> bool:
        """True if the planner finds a plan for these goal literals on the scene (decided, never guessed)."""
        return self.solve(build_problem(self.world, literals)).solved

    def check(self, problem_text: str) -> CheckResult:
        """Parse, plan and validate (in-process semantics, then VAL when installed)."""
        try:
            problem = parse_problem(problem_text, self.domain, source="<generated problem>")
        except PDDLError as error:
            return CheckResult(False, "invalid", messages=[f"the problem does not parse: {error}"])
        result = self.solve(problem_text)
        stats = {"expanded": int(result.expanded or 0), "planner_time": float(result.total_time or 0.0)}
        if not result.solved:
            return CheckResult(False, result.status.value,
                               messages=[f"the planner found no plan ({result.status.value}): {result.message}"[:600]],
                               **stats)
        check = validate_plan(self.domain, problem, result.plan)
        if not check.valid:
            return CheckResult(False, "invalid-plan", result.plan, [f"plan validation: {check}"], **stats)
        if self.use_val:
            try:
                from servicerobot.pddl.val import val_validate
                from servicerobot.pddl.writer import write_domain

                verdict = val_validate(write_domain(self.domain), problem_text, list(result.plan))
            except PlannerError as error:
                if "not installed" not in str(error):
                    return CheckResult(False, "val-error", result.plan, [f"VAL: {error}"], **stats)
            else:
                if not verdict.valid:
                    return CheckResult(False, "val-invalid", result.plan,
                                       ["VAL rejected the plan: " + verdict.output[-400:]], **stats)
        return CheckResult(True, "solved", result.plan, [], **stats)


def build_problem(world, literals: Iterable[str], name: str = "cm", objects: Iterable[str] = ()) -> str:
    """A problem over the scene for a conjunction of goal literals, keeping only the objects that matter
    (CM's rule): rooms, the robot, the goal's objects (and `objects`), what they rest on, and the fixtures
    actions need."""
    literals = list(literals)
    keep = set(world.rooms) | {world.robot} | set(objects)
    for lit in literals:
        keep.update(tok.strip("()") for tok in lit.split()[1:] if tok.strip("()") in world.pddl_objects)
    for obj in list(keep):
        support = world.support(obj)
        if support is not None:
            keep.add(support)
    text = " ".join(literals)
    tool_types = {"trashcan"} if "(discarded" in text else set()
    tool_types |= {"sink", "washer"} if "(dirty" in text else set()
    tool_types |= {"washer", "dryer"} if "(wet" in text else set()
    keep.update(n for n, t in world.pddl_objects.items() if t in tool_types)
    keep = {k for k in keep if k in world.pddl_objects}
    init = sorted(str(a) for a in world.init if all(arg in keep for arg in a.args))
    by_type: dict[str, list[str]] = {}
    for obj in sorted(keep):
        by_type.setdefault(world.pddl_objects[obj], []).append(obj)
    objects = "\n".join(f"    {' '.join(names)} - {typ}" for typ, names in sorted(by_type.items()))
    goal = "(and " + " ".join(literals) + ")" if literals else "(and)"
    return (f"(define (problem {name})\n  (:domain household)\n  (:objects\n{objects}\n  )\n  (:init\n    "
            + "\n    ".join(init) + f"\n  )\n  (:goal {goal})\n)\n")


def keep_achievable(kept: Iterable[str], candidates: Iterable[str],
                    solvable: Callable[[list[str]], bool]) -> tuple[list[str], list[str]]:
    """CM's planner-decided relaxation, one goal part at a time: each candidate joins the kept parts when the
    planner can still achieve them all together; returns (kept, dropped), each in the order given."""
    kept, dropped = list(kept), []
    for part in candidates:
        if solvable([*kept, part]):
            kept.append(part)
        else:
            dropped.append(part)
    return kept, dropped


def goal_literals(problem_text: str, domain) -> tuple[str, ...] | None:
    """The goal of a problem as sorted literal strings, or None when it is not a conjunction of literals."""
    try:
        problem = parse_problem(problem_text, domain, source="<problem>")
    except PDDLError:
        return None
    goal = problem.goal
    if goal == TRUE:
        return ()
    parts = goal.parts if isinstance(goal, And) else (goal,)
    out = []
    for part in parts:
        if isinstance(part, AtomF) or (isinstance(part, Not) and isinstance(part.f, AtomF)):
            out.append(format_formula(part))
        else:
            return None
    return tuple(sorted(out))


def ground_plan(world, problem_text: str, plan: Iterable[str], domain) -> GroundingResult:
    """CM's grounding check of a plan in the scene graph, plus: the problem's facts must be the scene's."""
    log: list[str] = []
    try:
        problem = parse_problem(problem_text, domain, source="<problem>")
    except PDDLError as error:
        return GroundingResult(False, 0.0, [f"the problem does not parse: {error}"])
    unknown = sorted(o for o in problem.objects if o not in world.pddl_objects)
    if unknown:
        log.append(f"objects not in the 3D scene graph: {', '.join(unknown[:10])}")
    starts = sorted(a.args[1] for a in problem.init if a.predicate == "in-room" and a.args[0] == world.robot)
    if starts != [world.init_loc]:
        log.append(f"the robot must start in {world.init_loc} (init_loc), the problem says {starts or 'nowhere'}")
    false = sorted(str(a) for a in problem.init if a not in world.init and a.predicate != "connected")
    if false:
        log.append(f"initial facts not true in the scene: {', '.join(false[:10])}")
    steps = list(plan)
    interpreter = Interpreter(domain, world.pddl_objects)
    state = world.init
    done = 0
    for step in steps:
        try:
            ga = interpreter.parse_action(step)
        except PDDLError as error:
            log.append(f"step {done + 1} {step}: {error}")
            break
        reason = interpreter.why_not(ga, state)
        if reason is not None:
            log.append(f"step {done + 1} {step} cannot run in the scene: {reason}")
            break
        state = interpreter.apply(ga, state)
        done += 1
    score = done / len(steps) if steps else 1.0
    return GroundingResult(not log and score == 1.0, score, log)


class AlgorithmInterpreter(Protocol):
    """What Algorithm 1 asks of an interpreter (LLM or offline)."""

    name: str

    def begin(self, tools: Toolbox, task: str) -> None:
        """Start on a task in a scene."""

    def problem(self, goal_text: str, feedback: str) -> Draft:
        """A problem for the goal; `feedback` is the last grounding log."""

    def refine(self, draft: Draft, diagnostics: str) -> Draft | None:
        """A corrected problem after planner/validator failures, or None when nothing can be corrected."""

    def adjust(self, draft: Draft, diagnostics: str) -> Adjustment | None:
        """Shift and relax the goal, or None when it cannot be changed further."""


def relaxing_plan(world, task: str, interpreter: AlgorithmInterpreter, planner: Planner, max_outer: int = 4,
                  max_inner: int = 4, relax: bool = True, use_val: bool = True, method: str = "") -> RelaxationResult:
    """Run Algorithm 1 on a task in a `CMWorld`; `relax=False` is LLM+P: one attempt, no shift or relax."""
    start = time.perf_counter()
    tools = Toolbox(world, planner, use_val=use_val)
    result = RelaxationResult(method or interpreter.name, final_task=task)
    try:
        interpreter.begin(tools, task)
    except Exception as error:  # noqa: BLE001 - an interpreter that cannot read the task is a failed run
        result.failure = f"interpret: {error}"
        return _finish(result, tools, start)
    goal_text, feedback = task, ""
    for outer in range(max_outer if relax else 1):
        draft = interpreter.problem(goal_text, feedback)
        refinements = 0
        check = tools.check(draft.problem) if draft.problem else CheckResult(False, "no-problem", messages=[draft.message])
        while not check.ok and refinements < max_inner and draft.problem is not None:
            better = interpreter.refine(draft, "\n".join(check.messages))
            if better is None:
                break
            draft, refinements = better, refinements + 1
            check = tools.check(draft.problem) if draft.problem else CheckResult(False, "no-problem",
                                                                                 messages=[draft.message])
        result.refinements.append(refinements)
        ground = ground_plan(world, draft.problem, check.plan, tools.domain) if check.ok else None
        result.iterations.append({"goal": goal_text, "status": check.status, "messages": check.messages[:3],
                                  "grounding": ground.log if ground else None,
                                  "grounding_score": ground.score if ground else None})
        result.problem, result.final_task = draft.problem, goal_text
        if check.ok:
            result.planned, result.plan = True, check.plan
            result.final_goal = goal_literals(draft.problem, tools.domain)
            result.grounded = ground.ok
            if ground.ok:
                return _finish(result, tools, start)
            feedback = "\n".join(ground.log)
        else:
            result.planned, result.plan, result.grounded = False, (), False
            result.final_goal = goal_literals(draft.problem, tools.domain) if draft.problem else None
            feedback = "\n".join(check.messages)
        if not relax or outer == max_outer - 1:
            break
        adjustment = interpreter.adjust(draft, feedback)
        if adjustment is None:
            break
        result.relaxations += 1
        result.shifts.extend(adjustment.shifts)
        result.dropped.extend(adjustment.dropped)
        if adjustment.rejected:
            result.extra.setdefault("rejected_shifts", []).extend(adjustment.rejected)
        goal_text = adjustment.goal_text
    result.failure = result.failure or ("grounding" if result.planned else "planning")
    return _finish(result, tools, start)


def empty_goal_failure(result: RelaxationResult) -> str:
    """The failure reason of a run whose final goal is empty ("" when it is not)."""
    if result.final_goal != () or not result.planned:
        return ""
    if result.dropped:
        return (f"empty goal: all {len(result.dropped)} part(s) of the task were dropped "
                f"({'; '.join(str(d.get('literal') or d.get('requirement')) for d in result.dropped[:4])})")
    return "empty goal: the task asks for nothing the scene has (no goal literal to achieve)"


def _finish(result: RelaxationResult, tools: Toolbox, start: float) -> RelaxationResult:
    result.failure = empty_goal_failure(result) or result.failure
    result.planner_calls, result.expanded, result.planner_time = tools.calls, tools.expanded, round(tools.time, 4)
    result.wall_time = round(time.perf_counter() - start, 4)
    return result
