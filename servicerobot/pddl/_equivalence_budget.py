"""A work and CPU-time budget for one equivalence check, so that no input makes `compare` run unbounded.

Every step of the check that can grow with the input (closure scans, refinement rounds, search
branches, semantic enumeration) spends work units from the budget of the check in progress; when
either the units or the CPU seconds run out it raises `EquivalenceUnknownError`. Work units are
deterministic (the same input stops at the same step on any machine); CPU seconds are the backstop.
"""

from __future__ import annotations

import contextvars
import time
from collections.abc import Iterator
from contextlib import contextmanager

__all__ = [
    "DEFAULT_CPU_SECONDS",
    "DEFAULT_WORK",
    "Budget",
    "EquivalenceUnknownError",
    "GoalTooComplexError",
    "budget",
    "spend",
]

DEFAULT_CPU_SECONDS = 55.0
"""CPU seconds one `compare` may spend, parsing included, before it answers unknown."""

DEFAULT_WORK = 50_000_000
"""Work units (roughly: atoms or graph nodes visited) one `compare` may spend before it answers unknown.
A 90,000-block pair spends about 4 million; the CPU limit usually comes first."""

_CLOCK_EVERY = 1 << 15


class GoalTooComplexError(ValueError):
    """The goal's disjunctive normal form has more than `MAX_TERMS` terms."""


class EquivalenceUnknownError(GoalTooComplexError):
    """The check ran out of its work or CPU-time budget: the answer is unknown (the CLI exits 2)."""


class Budget:
    """Work units and CPU seconds left to one check."""

    __slots__ = ("cpu_limit", "deadline", "limit", "since_clock", "used")

    def __init__(self, work: int = DEFAULT_WORK, cpu_seconds: float | None = DEFAULT_CPU_SECONDS) -> None:
        self.limit = work
        self.used = 0
        self.since_clock = 0
        self.cpu_limit = cpu_seconds
        self.deadline = None if cpu_seconds is None else time.process_time() + cpu_seconds

    def spend(self, units: int, what: str) -> None:
        """Count `units` of work; raise `EquivalenceUnknownError` when the budget is spent."""
        self.used += units
        if self.used > self.limit:
            raise EquivalenceUnknownError(
                f"unknown: gave up {what} after {self.used:,} work units (limit {self.limit:,}); "
                "the problems are too large or too symmetric to decide within the limits")
        self.since_clock += units
        if self.since_clock >= _CLOCK_EVERY:
            self.since_clock = 0
            if self.deadline is not None and time.process_time() > self.deadline:
                raise EquivalenceUnknownError(
                    f"unknown: gave up {what} after {self.cpu_limit:g} CPU seconds; the problems are too "
                    "large or too symmetric to decide within the limits")


_CURRENT: contextvars.ContextVar[Budget | None] = contextvars.ContextVar("equivalence_budget", default=None)


def spend(units: int, what: str) -> None:
    """Spend from the budget of the check in progress (nothing when none is)."""
    b = _CURRENT.get()
    if b is not None:
        b.spend(units, what)


@contextmanager
def budget(work: int = DEFAULT_WORK, cpu_seconds: float | None = DEFAULT_CPU_SECONDS) -> Iterator[Budget]:
    """Run the block under a fresh budget (an enclosing one is kept if it is already running)."""
    outer = _CURRENT.get()
    if outer is not None:
        yield outer
        return
    b = Budget(work, cpu_seconds)
    token = _CURRENT.set(b)
    try:
        yield b
    finally:
        _CURRENT.reset(token)
