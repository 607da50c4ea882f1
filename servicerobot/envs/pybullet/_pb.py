"""Lazy import of pybullet and a guard that silences its C-level chatter on stdout/stderr."""

from __future__ import annotations

import contextlib
import os
import sys
from collections.abc import Iterator
from typing import Any

from servicerobot.errors import DependencyNotInstalled, install_hint

__all__ = ["import_pybullet", "quiet"]

_INSTALL = install_hint("pybullet")


@contextlib.contextmanager
def quiet() -> Iterator[None]:
    """Send file descriptors 1 and 2 to /dev/null: pybullet prints from C ("pybullet build time", b3Warning)."""
    try:
        fds = (sys.stdout.fileno(), sys.stderr.fileno())
    except (AttributeError, OSError, ValueError):  # no real descriptors (e.g. a notebook): nothing to hide
        yield
        return
    for stream in (sys.stdout, sys.stderr):
        with contextlib.suppress(Exception):
            stream.flush()
    saved = [os.dup(fd) for fd in fds]
    devnull = os.open(os.devnull, os.O_WRONLY)
    try:
        for fd in fds:
            os.dup2(devnull, fd)
        yield
    finally:
        for fd, old in zip(fds, saved):
            os.dup2(old, fd)
            os.close(old)
        os.close(devnull)


def import_pybullet() -> tuple[Any, str]:
    """(the pybullet module, pybullet_data's directory); a clear error naming the extra when missing."""
    try:
        with quiet():
            import pybullet
            import pybullet_data
    except ImportError as exc:
        raise DependencyNotInstalled(f"the PyBullet world needs pybullet: {_INSTALL}") from exc
    return pybullet, pybullet_data.getDataPath()


def import_ompl() -> tuple[Any, Any, Any] | None:
    """(ompl.base, ompl.geometric, ompl.util), or None when OMPL is not installed (RRT repair is then off)."""
    try:
        import ompl.base as ob
        import ompl.geometric as og
        import ompl.util as ou
    except ImportError:
        return None
    ou.setLogLevel(ou.LOG_NONE)
    return ob, og, ou
