"""Fast Downward (from the `up-fast-downward` wheel) as a subprocess back end with a hard time limit.

By default the translator runs in a warm server (`_fd_warm`) and the search binary is started directly with
the alias's options: the same components and options as the driver, without its two interpreter start-ups.
Portfolios, and `warm=False`, go through the driver script.

A domain with derived predicates is first compiled for the problem at hand (`compile_derived`): the
non-recursive derived predicates are inlined and the quantifiers of preconditions and goal expanded over the
objects, because FD's relaxation heuristics see little through the axioms it makes of them (an office task
with one `(empty ?c)` axiom runs out of 8 GB in 46 s with lama-first; compiled, a 52-step plan takes 0.5 s).
The plan is a plan for the original task. `compile_derived=False` hands the task over as it is.
"""

from __future__ import annotations

import functools
import importlib.util
import os
import re
import sys
import tempfile
import time
from pathlib import Path

from servicerobot.errors import PDDLError, PlannerError
from servicerobot.pddl.compile_derived import compile_derived
from servicerobot.pddl.features import UnsupportedFeatureError
from servicerobot.pddl.parser import parse_domain, parse_problem
from servicerobot.pddl.writer import write_domain, write_problem
from servicerobot.planners._fd_warm import WarmTranslator, translate_exit_code
from servicerobot.planners._process import run_with_timeout
from servicerobot.planners.base import Planner, PlanResult, PlanStatus

__all__ = ["FastDownward", "driver_path", "status_for_exit_code"]

_EXPANDED = re.compile(r"Expanded (\d+) state\(s\)")
_SEARCH_TIME = re.compile(r"Search time: ([0-9.eE+-]+)s")

# Fast Downward driver exit codes (driver/returncodes.py) -> status and explanation
_EXIT_CODES: dict[int, tuple[PlanStatus, str]] = {
    0: (PlanStatus.SOLVED, "plan found"),
    1: (PlanStatus.SOLVED, "plan found, then out of memory"),
    2: (PlanStatus.SOLVED, "plan found, then out of time"),
    3: (PlanStatus.SOLVED, "plan found, then out of memory and time"),
    10: (PlanStatus.UNSOLVABLE, "the translator proved the task unsolvable"),
    11: (PlanStatus.UNSOLVABLE, "the search proved the task unsolvable"),
    12: (PlanStatus.UNSOLVABLE, "the (incomplete) search found no plan; unsolvability is not proven"),
    13: (PlanStatus.UNSOLVABLE, "no plan within the cost bound"),
    20: (PlanStatus.ERROR, "the translator ran out of memory"),
    21: (PlanStatus.TIMEOUT, "the translator ran out of time"),
    22: (PlanStatus.ERROR, "the search ran out of memory"),
    23: (PlanStatus.TIMEOUT, "the search ran out of time"),
    24: (PlanStatus.TIMEOUT, "the search ran out of memory and time"),
    30: (PlanStatus.ERROR, "translator critical error"),
    31: (PlanStatus.ERROR, "translator input error"),
    32: (PlanStatus.ERROR, "search critical error"),
    33: (PlanStatus.ERROR, "search input error"),
    34: (PlanStatus.UNSUPPORTED, "the search configuration does not support this task"),
    35: (PlanStatus.ERROR, "driver critical error"),
    36: (PlanStatus.ERROR, "driver input error"),
    37: (PlanStatus.UNSUPPORTED, "the driver does not support this configuration"),
}


def status_for_exit_code(code: int) -> tuple[PlanStatus, str]:
    """The PlanStatus and a short explanation for a Fast Downward driver exit code."""
    if code in _EXIT_CODES:
        return _EXIT_CODES[code]
    if code < 0:
        return PlanStatus.ERROR, f"Fast Downward was killed by signal {-code}"
    return PlanStatus.ERROR, f"unexpected Fast Downward exit code {code}"


def driver_path() -> Path:
    """The `fast-downward.py` driver inside the installed `up_fast_downward` package.

    Raises:
        PlannerError: the package or its driver is missing.
    """
    spec = importlib.util.find_spec("up_fast_downward")
    if spec is None or not spec.submodule_search_locations:
        raise PlannerError("Fast Downward is not installed: pip install up-fast-downward")
    for location in spec.submodule_search_locations:
        driver = Path(location) / "downward" / "fast-downward.py"
        if driver.is_file():
            return driver
    raise PlannerError(
        "up_fast_downward has no downward/fast-downward.py; reinstall it: pip install up-fast-downward"
    )


@functools.cache
def _aliases() -> dict[str, list[str]]:
    """The driver's search aliases (driver/aliases.py), loaded as a package of our own name."""
    driver_dir = driver_path().parent / "driver"
    spec = importlib.util.spec_from_file_location(
        "_servicerobot_fd_driver", driver_dir / "__init__.py", submodule_search_locations=[str(driver_dir)])
    package = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = package
    spec.loader.exec_module(package)
    return importlib.import_module(f"{spec.name}.aliases").ALIASES


_WARM: dict[str, WarmTranslator] = {}


def _warm_translator() -> WarmTranslator:
    if "server" not in _WARM:
        _WARM["server"] = WarmTranslator(driver_path().parent / "builds" / "release" / "bin")
    return _WARM["server"]


def _read_plan(tmp: Path, name: str) -> tuple[str, ...] | None:
    """The best plan FD wrote: `name`, or the last of `name.1`, `name.2`, ... for anytime configurations."""
    single = tmp / name
    candidates = (
        [single]
        if single.is_file()
        else sorted(
            (p for p in tmp.glob(f"{name}.*") if p.suffix[1:].isdigit()), key=lambda p: int(p.suffix[1:])
        )
    )
    if not candidates:
        return None
    lines = candidates[-1].read_text(encoding="utf-8").splitlines()
    return tuple(line.strip() for line in lines if line.strip() and not line.strip().startswith(";"))


def _tail(text: str, lines: int = 15) -> str:
    return "\n".join(text.strip().splitlines()[-lines:])


class FastDownward(Planner):
    """Fast Downward run through its driver script in a temporary directory.

    Args:
        alias: a driver alias such as "lama-first" (fast, satisficing) or "seq-opt-lmcut" (optimal).
        search: a search string (e.g. "astar(lmcut())"); when given it replaces `alias`.
        timeout: the default time limit in seconds; the whole process group is killed when it expires.
        warm: translate in a warm server and start the search directly (same plans, ~0.1 s less per call);
            False, or the environment variable SERVICEROBOT_FD_WARM=0, runs the driver script instead.
        compile_derived: inline non-recursive derived predicates and expand quantifiers for the problem
            before FD sees a domain with `:derived` rules (see the module docstring); False leaves them to FD.
    """

    name = "fast-downward"

    def __init__(self, alias: str = "lama-first", search: str | None = None, timeout: float | None = 60.0,
                 warm: bool = True, compile_derived: bool = True):
        super().__init__(timeout)
        self.alias = alias
        self.search = search
        self.warm = warm and os.environ.get("SERVICEROBOT_FD_WARM", "1") != "0"
        self.compile_derived = compile_derived

    @property
    def label(self) -> str:
        """The name and configuration, e.g. `fast-downward[lama-first]`."""
        return f"{self.name}[{self.search or self.alias}]"

    def _command(self) -> list[str]:
        command = [sys.executable, str(driver_path()), "--plan-file", "plan", "--sas-file", "output.sas"]
        if self.search:
            return [*command, "domain.pddl", "problem.pddl", "--search", self.search]
        return [*command, "--alias", self.alias, "domain.pddl", "problem.pddl"]

    def _search_options(self) -> list[str] | None:
        """The search component's options, or None when only the driver can run this configuration."""
        if self.search:
            return ["--search", self.search]
        return _aliases().get(self.alias)

    def _run_warm(self, tmp: Path, options: list[str], timeout: float | None) -> tuple[int, str, str] | None:
        """Translate in the warm server, then run the search binary: (exit code, stdout, stderr) or None."""
        start = time.monotonic()
        code, log = _warm_translator().translate(
            tmp, ["domain.pddl", "problem.pddl", "--sas-file", "output.sas"], timeout)
        if code is None:
            return None
        if code != 0:
            return translate_exit_code(code), log, ""
        left = None if timeout is None else max(0.01, timeout - (time.monotonic() - start))
        search = driver_path().parent / "builds" / "release" / "bin" / "downward"
        command = ["/bin/sh", "-c", 'exec "$0" "$@" < output.sas', str(search), *options,
                   "--internal-plan-file", "plan"]
        ran = run_with_timeout(command, tmp, left, "Fast Downward search")
        if ran is None:
            return None
        returncode, stdout, stderr = ran
        return returncode, log + stdout, stderr

    def _compiled(self, domain_text: str, problem_text: str) -> tuple[str, str]:
        """The texts with derived predicates compiled away where `compile_derived` can; else unchanged."""
        if not self.compile_derived or ":derived" not in domain_text.lower():
            return domain_text, problem_text
        try:
            domain = parse_domain(domain_text, source="<domain>", strict=False)  # as Fast Downward reads it
            problem = parse_problem(problem_text, domain, source="<problem>")
        except (PDDLError, UnsupportedFeatureError):
            return domain_text, problem_text  # beyond our parser: FD gets the task as it is
        compiled = compile_derived(domain, problem)
        if compiled is None:
            return domain_text, problem_text
        return write_domain(compiled[0]), write_problem(compiled[1])

    def _solve(self, domain_text: str, problem_text: str, timeout: float | None) -> PlanResult:
        domain_text, problem_text = self._compiled(domain_text, problem_text)
        with tempfile.TemporaryDirectory(prefix="servicerobot-fd-") as name:
            tmp = Path(name)
            (tmp / "domain.pddl").write_text(domain_text, encoding="utf-8")
            (tmp / "problem.pddl").write_text(problem_text, encoding="utf-8")
            options = self._search_options() if self.warm else None
            if options is not None:
                ran = self._run_warm(tmp, options, timeout)
            else:
                ran = run_with_timeout(self._command(), tmp, timeout, "Fast Downward")
            if ran is None:
                return PlanResult(PlanStatus.TIMEOUT, planner=self.label, message=f"no plan within {timeout} s")
            returncode, stdout, stderr = ran
            plan = _read_plan(tmp, "plan")
        expanded = [int(n) for n in _EXPANDED.findall(stdout)]
        search_times = [float(t) for t in _SEARCH_TIME.findall(stdout)]
        status, explanation = status_for_exit_code(returncode)
        if status is PlanStatus.SOLVED and plan is None:
            status, explanation = (
                PlanStatus.ERROR,
                f"exit code {returncode} but no plan file was written",
            )
        message = explanation
        if status in (PlanStatus.ERROR, PlanStatus.UNSUPPORTED):
            message = f"{explanation} (exit code {returncode}):\n{_tail(stderr + chr(10) + stdout)}"
        return PlanResult(
            status,
            plan=plan if status is PlanStatus.SOLVED and plan is not None else (),
            planner=self.label,
            expanded=expanded[-1] if expanded else None,
            search_time=search_times[-1] if search_times else None,
            message=message,
        )
