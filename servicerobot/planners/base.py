"""The planner interface: a status enum, a result record, and a `Planner` base that checks inputs once.

`Planner.solve` accepts Domain/Problem objects or PDDL text, checks them with the PDDL parser (an
invalid input becomes an ERROR result carrying the parser's message), then calls the back end's
`_solve(domain_text, problem_text, timeout)`.
"""

from __future__ import annotations

import abc
import dataclasses
import enum
import time
from dataclasses import dataclass
from typing import TYPE_CHECKING

from servicerobot.errors import PDDLError
from servicerobot.pddl.features import UnsupportedFeatureError
from servicerobot.pddl.model import Domain, Problem
from servicerobot.pddl.parser import parse_domain, parse_problem
from servicerobot.pddl.writer import write_domain, write_problem

if TYPE_CHECKING:
    from typing_extensions import Self  # typing.Self needs Python 3.11

__all__ = ["PlanResult", "PlanStatus", "Planner"]


class PlanStatus(enum.Enum):
    """How a planner run ended."""

    SOLVED = "solved"
    UNSOLVABLE = "unsolvable"
    TIMEOUT = "timeout"
    ERROR = "error"
    UNSUPPORTED = "unsupported"


@dataclass(frozen=True)
class PlanResult:
    """The outcome of one planner run.

    Attributes:
        status: how the run ended.
        plan: the actions as `(name arg ...)` strings (empty unless SOLVED).
        planner: which back end (and configuration) ran.
        expanded: expanded search nodes, if the back end reports them.
        search_time: the back end's own search time in seconds, if reported.
        total_time: wall-clock seconds for the whole `solve` call.
        message: a short explanation (the back end's error output for ERROR).
    """

    status: PlanStatus
    plan: tuple[str, ...] = ()
    planner: str = ""
    expanded: int | None = None
    search_time: float | None = None
    total_time: float = 0.0
    message: str = ""

    @property
    def solved(self) -> bool:
        """True if a plan was found."""
        return self.status is PlanStatus.SOLVED


class Planner(abc.ABC):
    """A classical planner back end; use `solve`, implement `_solve`.

    Args:
        timeout: the default time limit in seconds for `solve` (None: no limit).
    """

    name = "planner"

    def __init__(self, timeout: float | None = 60.0):
        self.timeout = self._check_timeout(timeout)

    @property
    def label(self) -> str:
        """The name and configuration reported in `PlanResult.planner`."""
        return self.name

    @staticmethod
    def _check_timeout(timeout: float | None) -> float | None:
        if timeout is not None and not (isinstance(timeout, (int, float)) and timeout > 0):
            raise ValueError(f"timeout must be a positive number of seconds or None, got {timeout!r}")
        return timeout

    def solve(self, domain: Domain | str, problem: Problem | str, timeout: float | None = None) -> PlanResult:
        """Plan for `problem` in `domain` (objects or PDDL text) within `timeout` s (default self.timeout).

        Raises:
            TypeError: the domain or problem is neither a model object nor a string.
            PlannerError: the back end could not be run at all.
        """
        start = time.perf_counter()
        limit = self.timeout if timeout is None else self._check_timeout(timeout)
        try:
            domain_text, problem_text = self._texts(domain, problem)
        except UnsupportedFeatureError:
            domain_text, problem_text = str(domain), str(problem)  # beyond our parser; let the back end judge
        except PDDLError as error:
            return PlanResult(
                PlanStatus.ERROR,
                planner=self.label,
                total_time=time.perf_counter() - start,
                message=f"invalid PDDL input: {error}",
            )
        result = self._solve(domain_text, problem_text, limit)
        return dataclasses.replace(result, total_time=time.perf_counter() - start)

    @staticmethod
    def _texts(domain: Domain | str, problem: Problem | str) -> tuple[str, str]:
        if isinstance(domain, Domain):
            domain_obj, domain_text = domain, write_domain(domain)
        elif isinstance(domain, str):
            domain_obj, domain_text = parse_domain(domain, source="<domain>"), domain
        else:
            raise TypeError(f"domain must be a Domain or PDDL text, got {type(domain).__name__}")
        if isinstance(problem, Problem):
            if problem.domain_name != domain_obj.name:
                parse_problem(write_problem(problem), domain_obj, source="<problem>")  # raises the mismatch
            problem_text = write_problem(problem)
        elif isinstance(problem, str):
            parse_problem(problem, domain_obj, source="<problem>")
            problem_text = problem
        else:
            raise TypeError(f"problem must be a Problem or PDDL text, got {type(problem).__name__}")
        return domain_text, problem_text

    @abc.abstractmethod
    def _solve(self, domain_text: str, problem_text: str, timeout: float | None) -> PlanResult:
        """Run the back end on checked PDDL text; `total_time` is filled in by `solve`."""

    def close(self) -> None:
        """Release the back end's resources (nothing by default)."""

    def __enter__(self) -> Self:
        return self

    def __exit__(self, *exc_info: object) -> None:
        self.close()
