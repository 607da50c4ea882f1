"""A warm Fast Downward translator: one long-lived process per planner process, forked per task.

Fast Downward's driver starts two Python interpreters per call (the driver, then the translator) before
the C++ search runs; on the small problems an agent plans all day that start-up is most of the time. The
server here imports the translator once and forks a child per task, so each translate pays only its own
work. The child runs exactly the translator's `__main__` logic (same options, same exit codes), and the
search binary is then run with the alias's own options, so plans are the driver's plans.
"""

from __future__ import annotations

import atexit
import json
import os
import select
import signal
import subprocess
import sys
import threading
import time
from pathlib import Path

__all__ = ["WarmTranslator", "translate_exit_code"]

# The server: reads one JSON request per line ({"cwd", "args"}), forks a child that translates in `cwd`,
# answers {"pid"} at once and {"code"} when the child ends. Single-threaded, so fork is safe.
_SERVER = r"""
import json, os, sys, traceback
sys.path.insert(0, sys.argv[1])
from fast_downward.translate import pddl_parser
from fast_downward.translate.main import main
from fast_downward.translate import options as fd_options
out = os.fdopen(os.dup(1), "w", buffering=1)
null = os.open(os.devnull, os.O_RDWR)
os.dup2(null, 1)
for line in sys.stdin:
    request = json.loads(line)
    pid = os.fork()
    if pid == 0:
        code = 0
        try:
            os.chdir(request["cwd"])
            log = os.open("translate.log", os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
            os.dup2(log, 1)
            os.dup2(log, 2)
            sys.stdout = os.fdopen(1, "w", buffering=1)
            sys.stderr = sys.stdout
            sys.argv = ["translate", *request["args"]]
            fd_options.set_options()
            emergency_memory = b"x" * 10**7
            try:
                main()
            except MemoryError:
                del emergency_memory
                print("Translator ran out of memory")
                code = 20
            except pddl_parser.ParseError as error:
                print(error)
                code = 31
        except SystemExit as exit:
            code = exit.code if isinstance(exit.code, int) else 1
        except BaseException:
            traceback.print_exc()
            code = 1
        try:
            sys.stdout.flush()
        finally:
            os._exit(code)
    out.write(json.dumps({"pid": pid}) + "\n")
    _, status = os.waitpid(pid, 0)
    code = os.waitstatus_to_exitcode(status)
    out.write(json.dumps({"code": code}) + "\n")
"""


def translate_exit_code(code: int) -> int:
    """The driver's exit code for a translator exit code (driver/run_components.py: 1 is a critical error)."""
    return 30 if code == 1 else code


class WarmTranslator:
    """A translator server owned by this process (restarted after a fork or if it died)."""

    def __init__(self, bin_dir: Path):
        self.bin_dir = bin_dir
        self._proc: subprocess.Popen | None = None
        self._owner = -1
        self._lock = threading.Lock()
        self._buffer = b""
        atexit.register(self.close)

    def _server(self) -> subprocess.Popen:
        if self._proc is None or self._owner != os.getpid() or self._proc.poll() is not None:
            self._proc = subprocess.Popen(
                [sys.executable, "-c", _SERVER, str(self.bin_dir)], stdin=subprocess.PIPE,
                stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, bufsize=0, start_new_session=True)
            self._owner = os.getpid()
            self._buffer = b""
        return self._proc

    def translate(self, cwd: Path, args: list[str], timeout: float | None) -> tuple[int | None, str]:
        """Run the translator in `cwd`: (exit code or None on timeout, its output)."""
        with self._lock:
            proc = self._server()
            deadline = None if timeout is None else time.monotonic() + timeout
            try:
                proc.stdin.write((json.dumps({"cwd": str(cwd), "args": args}) + "\n").encode())
                # The server answers with the child's pid as soon as it forked: no deadline here, so a
                # tiny time limit still finds the child to kill (the deadline applies to the translation).
                pid = self._read(proc, None)["pid"]
            except (OSError, TypeError, KeyError, ValueError):
                self.close()
                raise
            try:
                answer = self._read(proc, deadline)
            except TimeoutError:
                os.kill(pid, signal.SIGKILL)
                self._read(proc, None)  # the server reaps the child and answers
                return None, _log(cwd)
            except BaseException:
                # Interrupted: never leave a translation running on its own.
                try:
                    os.kill(pid, signal.SIGKILL)
                except ProcessLookupError:  # pragma: no cover - it had just finished
                    pass
                self.close()
                raise
            return int(answer["code"]), _log(cwd)

    def _read(self, proc: subprocess.Popen, deadline: float | None) -> dict:
        """The server's next JSON line (our own buffer: select() cannot see data a file object buffered)."""
        fd = proc.stdout.fileno()
        while b"\n" not in self._buffer:
            if deadline is not None:
                ready, _, _ = select.select([fd], [], [], max(0.0, deadline - time.monotonic()))
                if not ready:
                    raise TimeoutError
            chunk = os.read(fd, 4096)
            if not chunk:
                raise OSError("the warm Fast Downward translator exited unexpectedly")
            self._buffer += chunk
        line, self._buffer = self._buffer.split(b"\n", 1)
        return json.loads(line)

    def close(self) -> None:
        """Stop the server (it is also stopped when this process exits: its stdin closes)."""
        proc, self._proc = self._proc, None
        if proc is not None and self._owner == os.getpid():
            try:
                proc.kill()
                proc.wait(timeout=5)
            except (OSError, subprocess.TimeoutExpired):  # pragma: no cover - already gone
                pass
            for pipe in (proc.stdin, proc.stdout):
                pipe.close()


def _log(cwd: Path) -> str:
    try:
        return (cwd / "translate.log").read_text(encoding="utf-8", errors="replace")
    except OSError:
        return ""
