"""Process helpers shared by the loopback Ray cluster tests (test_ray_cluster*.py): wait for a condition,
find a node's raylet among its child processes."""

from __future__ import annotations

import contextlib
import time
from pathlib import Path


def wait_until(what: str, ready, timeout: float) -> None:
    """Poll `ready()` until it is true; fail naming `what` after `timeout` seconds."""
    deadline = time.monotonic() + timeout
    while not ready():
        if time.monotonic() > deadline:
            raise AssertionError(f"{what}: not within {timeout:.0f} s")
        time.sleep(0.2)


def children(pid: int) -> list[int]:
    """The ids of the direct child processes of `pid` (from /proc)."""
    out = []
    for entry in Path("/proc").iterdir():
        if entry.name.isdigit():
            with contextlib.suppress(OSError):
                if int((entry / "stat").read_text().rsplit(")", 1)[1].split()[1]) == pid:
                    out.append(int(entry.name))
    return out


def cmdline(pid: int) -> str:
    """The command line of `pid`, "" when it is gone."""
    try:
        return Path(f"/proc/{pid}/cmdline").read_bytes().replace(b"\0", b" ").decode(errors="replace")
    except OSError:
        return ""
