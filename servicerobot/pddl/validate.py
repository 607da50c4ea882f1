"""Validate a plan in-process: execute it step by step with the interpreter and check the goal."""

from __future__ import annotations

import re
from collections.abc import Iterable
from dataclasses import dataclass, field

from servicerobot.errors import ActionError
from servicerobot.pddl.atoms import Atom, State
from servicerobot.pddl.interpreter import GroundAction, Interpreter
from servicerobot.pddl.model import Domain, Problem

__all__ = ["ValidationResult", "parse_plan", "validate_plan"]

_TIMESTAMP = re.compile(r"^\s*\d+(?:\.\d*)?\s*:\s*")
_DURATION = re.compile(r"\s*\[[^\]]*\]\s*$")


@dataclass(frozen=True)
class ValidationResult:
    """The outcome of executing a plan.

    Attributes:
        valid: every step was applicable and the goal holds at the end.
        steps_executed: how many steps were applied.
        failed_step: the 0-based index of the step that could not be parsed or applied, or None.
        failed_action: that step as written, or None.
        reason: the unmet precondition, the parse error, or the unmet goal; "" when valid.
        unsatisfied_goals: the goal parts unmet in the last state reached.
        final_state: the last state reached.
        cost: the cost of the steps executed: with action costs, the initial `(total-cost)` plus each step's
            cost (VAL's "Final value"); otherwise the number of steps.
        metric: True if the domain has action costs (the cost is not just the length).
    """

    valid: bool
    steps_executed: int
    failed_step: int | None
    failed_action: str | None
    reason: str
    unsatisfied_goals: tuple[str, ...]
    final_state: State = field(repr=False)
    cost: float = 0
    metric: bool = False

    def __str__(self) -> str:
        steps = f"{self.steps_executed} step{'s' if self.steps_executed != 1 else ''}"
        if self.valid:
            cost = f" (cost {self.cost:g})" if self.metric else ""
            return f"Plan valid: {steps} executed{cost} and the goal holds."
        if self.failed_step is not None:
            text = (
                f"Plan invalid: step {self.failed_step + 1} {self.failed_action} failed after {steps} "
                "executed: "
                f"{self.reason}."
            )
            if self.unsatisfied_goals:
                text += f" Unmet goal parts at that point: {', '.join(self.unsatisfied_goals)}."
            return text
        return f"Plan invalid: {steps} executed, but {self.reason}."


def _split_line(line: str) -> list[str]:
    """The actions on one plan line: comments, `0:` timestamps and `[1]` durations removed."""
    line = line.split(";", 1)[0]
    line = _DURATION.sub("", _TIMESTAMP.sub("", line)).strip()
    if not line:
        return []
    pieces, depth, start = [], 0, None
    for i, char in enumerate(line):
        if char == "(":
            if depth == 0:
                start = i
            depth += 1
        elif char == ")":
            depth -= 1
            if depth < 0:
                return [line]
            if depth == 0:
                pieces.append(line[start : i + 1])
        elif depth == 0 and not char.isspace():
            return [line]  # text outside parentheses: one action without them (or garbage to report)
    return pieces if depth == 0 and pieces else [line]


def parse_plan(plan: str | Iterable[str | GroundAction]) -> list[str | GroundAction]:
    """Plan text (one `(action args)` per line) or a sequence of steps -> a list of steps.

    `;` comments and blank lines are dropped; IPC `0: (a b) [1]` timestamps and durations are tolerated.
    """
    if isinstance(plan, str):
        return [piece for line in plan.splitlines() for piece in _split_line(line)]
    steps: list[str | GroundAction] = []
    for step in plan:
        if isinstance(step, str):
            pieces = _split_line(step)
            steps.extend(pieces if len(pieces) <= 1 else [step.strip()])
        else:
            steps.append(step)
    return steps


def validate_plan(
    domain: Domain, problem: Problem, plan: str | Iterable[str | GroundAction]
) -> ValidationResult:
    """Execute `plan` from the problem's initial state and check its goal (PDDL semantics, like VAL)."""
    interpreter = Interpreter.for_problem(domain, problem)
    goal = interpreter.compile_goal(problem.goal)
    state = problem.init
    steps = parse_plan(plan)
    metric = domain.has_action_costs
    cost = problem.values.get(Atom("total-cost", ()), 0) if metric else 0
    for index, step in enumerate(steps):
        try:
            if isinstance(step, GroundAction):
                ga = interpreter.ground(step.name, step.args)
            else:
                ga = interpreter.parse_action(step)
            reason = interpreter.why_not(ga, state)
            step_cost = interpreter.cost(ga) if reason is None else 0
        except ActionError as error:
            reason = str(error)
        if reason is None:
            state = interpreter.apply(ga, state)
            cost += step_cost
            continue
        return ValidationResult(False, index, index, str(step), reason, tuple(goal.unsatisfied(state)), state,
                                cost, metric)
    unmet = tuple(goal.unsatisfied(state))
    if unmet:
        reason = f"the goal is not satisfied: {', '.join(unmet)}"
        return ValidationResult(False, len(steps), None, None, reason, unmet, state, cost, metric)
    return ValidationResult(True, len(steps), None, None, "", (), state, cost, metric)
