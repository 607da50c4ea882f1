"""Atomic file writes: a reader (or a crash) never sees half a file."""

from __future__ import annotations

import os
import stat
import tempfile
from collections.abc import Callable
from pathlib import Path
from typing import IO

__all__ = ["write_atomic"]


def _target(path: Path) -> Path:
    """The file a write to `path` should replace: a symlink's final target (never the link itself), which
    is missing or a regular file (a device, a FIFO or a socket is never replaced: `--out /dev/null` as root
    would put a plain file in /dev/null's place)."""
    target = _link_target(path)
    try:
        mode = os.stat(target).st_mode
    except FileNotFoundError:
        return target
    if not stat.S_ISREG(mode):
        from servicerobot.limits import _kind

        shown = path if target == path else f"{path} (a symlink to {target})"
        raise OSError(f"{shown} is a {_kind(mode)}, not a regular file; name a file to write")
    return target


def _link_target(path: Path) -> Path:
    if not path.is_symlink():
        if path.is_dir():
            raise IsADirectoryError(f"{path} is a folder, not a file; name a file inside it")
        return path
    try:
        target = path.resolve(strict=False)
    except (OSError, RuntimeError) as exc:  # a symlink loop
        raise OSError(f"{path} is a symlink that loops ({exc}); point it at a file") from exc
    if target.is_symlink() or not target.parent.is_dir():
        raise FileNotFoundError(f"{path} is a dangling symlink to {target}; create its folder or remove the link")
    if target.is_dir():
        raise IsADirectoryError(f"{path} is a symlink to the folder {target}; point it at a file")
    return target


def write_atomic(path: str | os.PathLike, data: str | bytes | Callable[[IO[bytes]], None],
                 new_mode: int = 0o644) -> None:
    """Write `data` (text as UTF-8, bytes, or a function writing to a binary handle) to `path` through a
    temporary file in the same folder, fsynced and renamed into place; the folder is created if needed.

    A symlink is followed (its target is replaced, the link stays); an existing file keeps its mode, a new
    one gets `new_mode`."""
    path = _target(Path(path))
    path.parent.mkdir(parents=True, exist_ok=True)
    try:
        mode = stat.S_IMODE(os.stat(path).st_mode)
    except FileNotFoundError:
        mode = new_mode
    fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=f".{path.name}.", suffix=".tmp")
    try:
        with os.fdopen(fd, "wb") as fh:
            if callable(data):
                data(fh)
            else:
                fh.write(data.encode("utf-8") if isinstance(data, str) else data)
            fh.flush()
            os.fsync(fh.fileno())
        os.chmod(tmp, mode)  # mkstemp makes 0600 files
        os.replace(tmp, path)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise
