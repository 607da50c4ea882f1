"""The results file of `servicerobot run`: one JSON record per line, appended whole and fsynced.

Only a file that is ours is ever opened for writing: missing, empty, or holding result records (JSON objects
with a string "key"). Anything else (a user's notes, a device, a FIFO, a folder) is refused, naming the file,
before a byte of it changes. On resume an unterminated last line is repaired under the file's lock: a complete
record gets its newline, a torn one (a run killed mid-write) is cut and its episode runs again; two records
are never merged. Reading streams the file line by line, so memory is bounded by a line, not by the file.
"""

from __future__ import annotations

import contextlib
import json
import os
import sys
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path

from servicerobot.errors import ServiceRobotError
from servicerobot.limits import open_bounded, open_regular, shorten

__all__ = ["MAX_RECORDS", "MAX_RECORD_BYTES", "MAX_RESULTS_BYTES", "ResultsError", "append_record",
           "finished_keys", "results_lock"]

MAX_RESULTS_BYTES = 4 << 30  # a results file larger than this is not one a grid of <= 100,000 episodes wrote
MAX_RECORD_BYTES = 16 << 20  # one record's line (a typical one is 1-2 KB)
MAX_RECORDS = 1_000_000  # records in one file (ten full-size grids): bounds the keys held in memory


class ResultsError(ServiceRobotError):
    """A results file cannot be read or continued (or another run is writing it)."""


@dataclass
class _Scan:
    """What one pass over a results file found."""

    keys: set[str] = field(default_factory=set)
    records: int = 0
    end: int = 0  # bytes read
    unterminated: bool = False  # the last line is a complete record without its newline
    torn_line: int | None = None  # the line number of a torn last record
    torn_at: int = 0  # where it starts (the length the file is cut to)


_NOT_JSON = "it is not JSON"


def _record_key(line: bytes) -> tuple[str | None, str]:
    """(the key, "") if `line` is a result record, else (None, what it is instead). The line itself is never
    quoted in a message: a file mistaken for results may hold a secret (`API_KEY=...`)."""
    try:
        record = json.loads(line)
    except UnicodeDecodeError:
        return None, "it is not UTF-8 text"
    except ValueError:
        return None, _NOT_JSON
    except RecursionError:
        return None, "it is JSON nested too deep"
    if not isinstance(record, dict):
        return None, f"it is a JSON {type(record).__name__}, not an object"
    key = record.get("key")
    return (key, "") if isinstance(key, str) else (None, "it is a JSON object without a string 'key'")


def _not_ours(path: Path, no: int, why: str) -> ResultsError:
    return ResultsError(f"{_name(path)} is not a results file of `servicerobot run` (line {no} is not a result "
                        f"record: {why}); it is left as it is: pass another --out (or delete the file yourself if it "
                        "is a results file you no longer need)")


def _scan(path: Path, fh) -> _Scan:
    scan, no = _Scan(), 0
    while True:
        line = fh.readline(MAX_RECORD_BYTES + 1)
        if not line:
            return scan
        no += 1
        terminated = line.endswith(b"\n")
        if len(line) > MAX_RECORD_BYTES:
            raise ResultsError(f"{_name(path)}: line {no} is longer than {MAX_RECORD_BYTES:,} bytes, which no result "
                               "record is; this is not a results file of `servicerobot run`: pass another --out")
        start, scan.end = scan.end, scan.end + len(line)
        if not line.strip():
            continue
        key, why = _record_key(line)
        if key is not None:
            scan.records += 1
            if scan.records > MAX_RECORDS:
                raise ResultsError(f"{_name(path)} holds more than {MAX_RECORDS:,} records; start a new results "
                                   "file with --out")
            scan.keys.add(key)
            scan.unterminated = not terminated
            continue
        # a run killed mid-write leaves an unterminated last line: the start of a JSON object
        torn = not terminated and line.startswith(b'{"') and why == _NOT_JSON
        if scan.records == 0:  # nothing shows the file is ours
            if torn:
                raise ResultsError(f"{_name(path)}: line {no} is an incomplete JSON line and no result record "
                                   "precedes it; if a run was killed while writing its first record, delete the "
                                   "file, else pass another --out (the file is left as it is)")
            raise _not_ours(path, no, why)
        if not torn:
            raise ResultsError(f"{_name(path)}: line {no} is not a result record ({why}); the file was edited, or "
                               "lines were added that `servicerobot run` did not write: fix or remove that line (the "
                               "file is left as it is)")
        scan.torn_line, scan.torn_at = no, start
        return scan


def finished_keys(path: str | os.PathLike, repair: bool = True) -> set[str]:
    """Keys of the episodes already in a results file (none if it is missing).

    With `repair` (only under the file's lock: the last line may be one another run is writing) an
    unterminated last record gets its newline, and a torn last line is cut (said on stderr); its episode is
    not among the keys, so it runs again.

    Raises:
        ResultsError: the file is not ours (a user's file, a folder, a device, a FIFO), a line other than
            the last is not a record (naming it), or the file is too large.
    """
    path = Path(path)
    try:
        fh = open_bounded(path, MAX_RESULTS_BYTES, "results file", ResultsError)
    except FileNotFoundError:
        return set()
    except OSError as exc:  # a name too long, a symlink loop, ...
        raise ResultsError(f"{_name(path)}: cannot open the results file: {exc.strerror or exc}") from None
    with fh:
        scan = _scan(path, fh)
    if repair and scan.torn_line is not None:
        with _open_ours(path, os.O_WRONLY) as fd:
            os.ftruncate(fd, scan.torn_at)
            os.fsync(fd)
        print(f"servicerobot run: {_name(path)}: line {scan.torn_line} was a torn record (a run stopped while "
              f"writing it); cut it ({scan.end - scan.torn_at:,} bytes): its episode runs again",
              file=sys.stderr, flush=True)
    elif repair and scan.unterminated:
        with _open_ours(path, os.O_WRONLY | os.O_APPEND) as fd:
            os.write(fd, b"\n")
            os.fsync(fd)
    return scan.keys


def append_record(path: Path, record: dict) -> None:
    """Append `record` as one line, written whole, flushed and fsynced."""
    line = (json.dumps(record, sort_keys=True) + "\n").encode()
    with _open_ours(path, os.O_WRONLY | os.O_APPEND) as fd:
        view = memoryview(line)
        while view:
            view = view[os.write(fd, view):]
        os.fsync(fd)


@contextlib.contextmanager
def results_lock(path: Path) -> Iterator[None]:
    """Hold an exclusive advisory lock on the results file while a run writes it (creating it, empty, if
    missing). The file is opened read-only (a lock needs no write access), and refused unless regular."""
    try:
        import fcntl
    except ImportError:  # no flock (Windows): run without the lock
        yield
        return
    with _open_ours(path, os.O_RDONLY | os.O_CREAT) as fd:
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            raise ResultsError(f"{_name(path)} is being written by another `servicerobot run` (it holds the "
                               "file's lock); wait for it to finish, or write to another file with --out") from None
        yield  # closing releases the lock


@contextlib.contextmanager
def _open_ours(path: Path, flags: int) -> Iterator[int]:
    """A descriptor of `path` opened with `flags`, refused (without blocking) unless it is a regular file."""
    fd = open_regular(path, flags, "results file", ResultsError)
    try:
        yield fd
    finally:
        os.close(fd)


def _name(path: Path) -> str:
    """The file's name for a message, shortened when it is absurdly long."""
    return shorten(str(path), 200)
