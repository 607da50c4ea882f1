"""Bounds on what servicerobot reads and quotes: files are read only when regular and small enough, and an
error message quotes a short excerpt of the input at fault, never the whole of it."""

from __future__ import annotations

import math
import os
import reprlib
import stat
import time
from collections.abc import Callable, Iterable
from typing import IO, Any

from servicerobot.errors import ServiceRobotError

__all__ = ["EXCERPT_CHARS", "excerpt", "expanded_size", "open_bounded", "open_regular", "read_bounded",
           "read_stream_bounded", "read_text_bounded", "shorten"]

EXCERPT_CHARS = 80  # what an error message quotes of a value it complains about

_REPR = reprlib.Repr()
_REPR.maxstring = _REPR.maxother = EXCERPT_CHARS
_REPR.maxlevel, _REPR.maxlist, _REPR.maxtuple, _REPR.maxdict, _REPR.maxset = 3, 6, 6, 6, 6


def excerpt(value: Any, limit: int = EXCERPT_CHARS) -> str:
    """`value` quoted for an error message: a string's first `limit` characters with how many more follow,
    anything else as a `reprlib` repr (bounded without walking the whole value)."""
    if isinstance(value, str):
        if len(value) <= limit:
            return repr(value)
        return f"{value[:limit]!r}... ({len(value) - limit:,} more characters)"
    try:
        text = _REPR.repr(value)
    except Exception:  # noqa: BLE001 - a hostile __repr__ must not turn an error message into another error
        text = f"<a {type(value).__name__}>"
    return text if len(text) <= 2 * limit else text[:2 * limit - 3] + "..."


def shorten(text: str, limit: int = 300) -> str:
    """`text` (e.g. another error's message) as is when short, else its first `limit` characters and a count
    of the rest."""
    return text if len(text) <= limit else f"{text[:limit]}... ({len(text) - limit:,} more characters)"


def open_regular(path: str | os.PathLike, flags: int, what: str, error: type[Exception] = ServiceRobotError,
                 mode: int = 0o644) -> int:
    """A descriptor of `path` opened with `flags` (e.g. `os.O_WRONLY | os.O_APPEND`) if it is a regular file
    (after symlinks); else `error` naming the file, `what` it should be and what it is. A FIFO or a device is
    refused by what it is (never by its stat size), without blocking on it. A missing file raises
    FileNotFoundError (callers word that themselves) unless `flags` has O_CREAT."""
    try:
        fd = os.open(path, flags | getattr(os, "O_NONBLOCK", 0) | getattr(os, "O_CLOEXEC", 0), mode)
    except FileNotFoundError:
        raise
    except IsADirectoryError:  # O_CREAT or a write flag on a folder
        raise error(f"{_shown(path)}: the {what} must be a regular file, not a folder; point it at a file") from None
    except OSError as exc:
        raise error(f"{_shown(path)}: cannot open the {what}: {exc.strerror or exc}") from None
    except ValueError:  # os.open's own refusal of a NUL byte in the name
        raise error(f"{_shown(path)}: cannot open the {what}: its name has a NUL byte") from None
    try:
        info = os.fstat(fd)
        if not stat.S_ISREG(info.st_mode):
            raise error(f"{_shown(path)}: the {what} must be a regular file, not a {_kind(info.st_mode)}; "
                        "point it at a file")
    except BaseException:
        os.close(fd)
        raise
    return fd


def open_bounded(path: str | os.PathLike, cap: int, what: str, error: type[Exception] = ServiceRobotError) -> IO[bytes]:
    """`path` opened for binary reading if it is a regular file (after symlinks) of at most `cap` bytes; else
    `error` naming the file, `what` it should be and the limit. A FIFO or a device is refused without
    blocking on it. A missing file raises FileNotFoundError (callers word that themselves)."""
    fd = open_regular(path, os.O_RDONLY, what, error)
    try:
        size = os.fstat(fd).st_size
        if size > cap:
            raise error(f"{_shown(path)}: the {what} is {size:,} bytes, over the limit of {cap:,}; "
                        "is this the right file?")
        return os.fdopen(fd, "rb")
    except BaseException:
        os.close(fd)
        raise


def read_bounded(path: str | os.PathLike, cap: int, what: str, error: type[Exception] = ServiceRobotError) -> bytes:
    """The bytes of `path`, checked as `open_bounded` does, and never more than `cap` of them (a file that
    grows while it is read raises `error` too)."""
    with open_bounded(path, cap, what, error) as fh:
        try:
            data = _read_capped(fh, cap)
        except OSError as exc:  # e.g. EIO from /proc/self/mem: the error names the file, not None
            raise error(f"{_shown(path)}: cannot read the {what}: {exc.strerror or exc}") from None
    if data is None:
        raise error(f"{_shown(path)}: the {what} grew past the limit of {cap:,} bytes while being read")
    return data


def read_stream_bounded(stream: IO[bytes], cap: int, what: str, error: type[Exception] = ServiceRobotError,
                        deadline_s: float | None = None) -> bytes:
    """At most `cap` bytes of `stream` (an HTTP response, a pipe) up to its end; one that goes on past `cap`
    (a body that never ends) raises `error` after reading `cap` + 1 bytes, not the whole of it. With
    `deadline_s`, a stream still unfinished that many seconds in (a peer sending a byte at a time, each read
    within the socket's timeout) raises `error` too: it is read in pieces as they arrive (`read1`)."""
    data = _read_capped(stream, cap) if deadline_s is None else _read_until(stream, cap, time.monotonic() + deadline_s)
    if data is None:
        raise error(f"the {what} is longer than the limit of {cap:,} bytes")
    if data is _LATE:
        raise error(f"the {what} did not finish within {deadline_s:g} s")
    return data


_LATE = b"late"  # a sentinel (by identity) for _read_until


def _read_until(stream: IO[bytes], cap: int, deadline: float) -> bytes | None:
    """`stream` to its end, None past `cap` bytes, `_LATE` once `deadline` (monotonic) has passed."""
    read = getattr(stream, "read1", None) or stream.read
    chunks, total = [], 0
    while True:
        chunk = read(min(1 << 16, cap + 1 - total))
        if not chunk:
            return b"".join(chunks)
        chunks.append(chunk)
        total += len(chunk)
        if total > cap:
            return None
        if time.monotonic() > deadline:
            return _LATE


def _read_capped(fh: IO[bytes], cap: int) -> bytes | None:
    """`fh` to its end, or None as soon as it has given more than `cap` bytes (in chunks: read(cap) would
    allocate `cap` bytes for a small file)."""
    return _read_until(fh, cap, math.inf)


def read_text_bounded(path: str | os.PathLike, cap: int, what: str,
                      error: type[Exception] = ServiceRobotError) -> str:
    """`read_bounded` decoded as UTF-8; a file that is not UTF-8 raises `error` naming the byte offset."""
    data = read_bounded(path, cap, what, error)
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise error(f"{_shown(path)}: the {what} is not UTF-8 text (byte {exc.start:,} is {data[exc.start]:#04x})") from None


def _shown(path: str | os.PathLike) -> str:
    """A path for an error message: as is, or shortened when absurdly long (a 5,000-character name)."""
    text = os.fspath(path)
    return shorten(text, 200) if isinstance(text, str) else repr(text)


def _kind(mode: int) -> str:
    for test, name in ((stat.S_ISDIR, "folder"), (stat.S_ISCHR, "character device"), (stat.S_ISBLK, "block device"),
                       (stat.S_ISFIFO, "named pipe"), (stat.S_ISSOCK, "socket")):
        if test(mode):
            return name
    return "special file"


def expanded_size(value: Any, parts: Callable[[Any], tuple[int, Iterable[Any] | None]], *, limit: int,
                  max_depth: int, too_big: Callable[[], Exception], too_deep: Callable[[], Exception]) -> int:
    """The size of `value` expanded as a tree (an object shared many times counts at each use), computed
    visiting each object once: YAML aliases or a pickle's shared references can expand a small file
    exponentially. `parts(x)` gives x's own weight and its children (None for a leaf, whose size is its
    weight); past `limit` or deeper than `max_depth` the walk raises `too_big()` / `too_deep()`."""
    sizes: dict[int, int] = {}
    keep = []  # the ids memoised must stay distinct: hold their objects until the walk ends

    def walk(x: Any, depth: int) -> int:
        if depth > max_depth:
            raise too_deep()
        known = sizes.get(id(x))
        if known is not None:
            return known
        weight, children = parts(x)
        if children is None:
            return weight
        total = weight
        for child in children:
            total += walk(child, depth + 1)
            if total > limit:
                raise too_big()
        sizes[id(x)] = total
        keep.append(x)
        return total

    return walk(value, 0)

