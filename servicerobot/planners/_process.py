"""Running a planner binary as a subprocess in its own process group, with a hard time limit."""

from __future__ import annotations

import os
import signal
import subprocess
from collections.abc import Mapping, Sequence
from pathlib import Path

from servicerobot.errors import PlannerError

__all__ = ["run_with_timeout"]


def run_with_timeout(command: Sequence[str], cwd: Path, timeout: float | None, what: str,
                     env: Mapping[str, str] | None = None) -> tuple[int, str, str] | None:
    """(exit code, stdout, stderr), or None when it ran past `timeout`: then the whole group is killed.

    Raises:
        PlannerError: the process could not be started at all.
    """
    try:
        proc = subprocess.Popen(list(command), cwd=cwd, env=dict(env) if env is not None else None,
                                stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                                start_new_session=True)
    except OSError as error:
        raise PlannerError(f"could not start {what}: {error}") from error
    try:
        stdout, stderr = proc.communicate(timeout=timeout)
    except subprocess.TimeoutExpired:
        _kill_group(proc)
        return None
    except BaseException:  # Ctrl-C or an error here must not leave the planner running on its own
        _kill_group(proc)
        raise
    return proc.returncode, stdout, stderr


def _kill_group(proc: subprocess.Popen) -> None:
    try:
        os.killpg(proc.pid, signal.SIGKILL)
    except ProcessLookupError:  # pragma: no cover - it ended before the kill
        pass
    proc.communicate()
