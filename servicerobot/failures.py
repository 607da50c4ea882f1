"""Why an agent failed or gave up on a task: a reason from a fixed list, with the detail that explains it."""

from __future__ import annotations

from dataclasses import dataclass

from servicerobot.planners.base import PlanResult, PlanStatus

__all__ = ["REASONS", "Failure", "planner_failure"]

# Every reason an agent can give; reports count failed tasks by these.
REASONS = (
    "task not heard",        # the task's utterance was never classified as a task (e.g. the model failed)
    "task replaced",         # heard, then another utterance was taken for a new task before this one was done
    "language model failed",  # the model could not be reached or kept answering malformed JSON
    "goal not understood",   # no goal that parses and type-checks against the domain
    "entity unknown",        # the goal names an entity memory does not hold
    "planner timeout",
    "unsolvable",            # the planner proved there is no plan (on what memory believes)
    "invalid problem",       # the planner rejected the problem (its message says why)
    "planner error",         # the planner back end failed to run
    "plan rejected",         # a plan was found but does not reach the goal on memory (or VAL said no)
    "goal believed done",    # memory says the goal holds; the world disagrees
    "goal relaxed",          # unsolvable on memory: the parts kept are believed done, the rest were dropped
    "out of steps",          # a plan was being carried out when the task's step budget ran out
)


@dataclass(frozen=True)
class Failure:
    """One failure: `reason` (one of `REASONS`), `detail` (the message behind it), where and when it happened."""

    reason: str
    detail: str = ""
    stage: str = ""
    step: int = -1

    def __post_init__(self) -> None:
        if self.reason not in REASONS:
            raise ValueError(f"unknown failure reason {self.reason!r}; choose from {REASONS}")

    def to_json(self) -> dict:
        return {"reason": self.reason, "detail": self.detail[:500], "stage": self.stage, "step": self.step}


def planner_failure(result: PlanResult, step: int) -> Failure:
    """The failure a planner result that is not SOLVED stands for."""
    detail = f"{result.planner}: {result.message}".strip(": ")
    if result.status is PlanStatus.TIMEOUT:
        return Failure("planner timeout", detail, "plan", step)
    if result.status is PlanStatus.UNSOLVABLE:
        return Failure("unsolvable", detail, "plan", step)
    if result.status is PlanStatus.UNSUPPORTED or "invalid PDDL input" in result.message:
        return Failure("invalid problem", detail, "plan", step)
    return Failure("planner error", detail, "plan", step)
