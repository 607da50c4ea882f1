"""Run an experiment grid on a serial, process-pool or Ray back end into a resumable JSONL file.

Each finished episode is appended as one JSON line (written whole, flushed and fsynced), so a killed run
leaves at most a torn last line, which the next run drops before it resumes; episodes whose key is
already in the file are skipped. Workers reuse one env per setting (`episode.make_env`).

One run writes a results file at a time (an advisory lock: a second gets `ResultsError`). SIGTERM and
SIGINT stop the run: pool workers are terminated (and die with their parent even on SIGKILL, on Linux),
records already written stay, and the next run resumes. A Ray address that does not answer fails fast.
"""

from __future__ import annotations

import contextlib
import json
import os
import platform
import signal
import socket
import subprocess
import sys
import threading
from collections import Counter, deque
from collections.abc import Callable, Iterator
from importlib import metadata
from pathlib import Path
from typing import Any

from servicerobot.errors import DependencyNotInstalled, ServiceRobotError, install_hint
from servicerobot.experiments.config import EpisodeSpec, ExperimentConfig
from servicerobot.experiments.episode import run_episode
from servicerobot.language.local_server import WORKER_VAR

__all__ = ["BACKENDS", "ResultsError", "RunInterrupted", "finished_keys", "run_grid", "run_metadata",
           "stable_part"]

BACKENDS = ("serial", "process", "ray")
# Fields that measure time (machine- and load-dependent): left out when records are compared.
TIMING_FIELDS = {"timing": None, "agent": ("planning_time",), "run": None}


class ResultsError(ServiceRobotError):
    """A results file cannot be read or continued (or another run is writing it)."""


class RunInterrupted(KeyboardInterrupt):
    """SIGTERM or SIGINT stopped `run_grid`; the records written so far are kept. Not an `Exception`, so
    that no episode's error guard records it as a failed episode."""

    def __init__(self, signum: int):
        super().__init__(f"interrupted by {signal.Signals(signum).name}")
        self.signum = signum


def run_metadata(config: ExperimentConfig) -> dict:
    """What produced the results: config name and hash, git commit, package versions."""
    versions = {"python": platform.python_version()}
    for pkg in ("servicerobot", "gymnasium", "numpy", "networkx", "up-fast-downward", "openai", "ray"):
        try:
            versions[pkg] = metadata.version(pkg)
        except metadata.PackageNotFoundError:
            pass
    return {"config": config.name, "config_hash": config.hash, "git_commit": _git_commit(),
            "versions": versions}


def _git_commit() -> str | None:
    here = Path(__file__).resolve().parent
    try:
        out = subprocess.run(["git", "rev-parse", "--short=12", "HEAD"], cwd=here, capture_output=True,
                             text=True, timeout=5, check=False)
    except (OSError, subprocess.SubprocessError):
        return None
    return out.stdout.strip() or None if out.returncode == 0 else None


def finished_keys(path: Path, repair: bool = True) -> set[str]:
    """Keys of the episodes already in a results file; with `repair`, a torn last line (killed run) is cut
    off (only under the file's lock: it may be a line another run is writing)."""
    if not path.exists():
        return set()
    data = path.read_bytes()
    keys: set[str] = set()
    good_end = 0
    lines = data.split(b"\n")
    for i, line in enumerate(lines):
        if not line.strip():
            good_end += len(line) + (i < len(lines) - 1)
            continue
        try:
            keys.add(json.loads(line)["key"])
        except (ValueError, KeyError, TypeError) as exc:
            if i < len(lines) - 1 and any(rest.strip() for rest in lines[i + 1:]):
                raise ResultsError(f"{path}: line {i + 1} is not a result record ({exc}); the file is not "
                                   "one this tool wrote, or was edited: fix or remove that line") from exc
            break  # only the last line is torn: drop it
        good_end += len(line) + (i < len(lines) - 1)
    if repair and good_end < len(data):
        with open(path, "r+b") as f:
            f.truncate(good_end)
    return keys


def _append(path: Path, record: dict) -> None:
    line = (json.dumps(record, sort_keys=True) + "\n").encode()
    with open(path, "ab") as f:
        f.write(line)
        f.flush()
        os.fsync(f.fileno())


def run_grid(config: ExperimentConfig, out: str | Path, backend: str = "process", workers: int | None = None,
             ray_address: str | None = None, on_record: Callable[[dict], None] | None = None,
             limit: int | None = None) -> dict:
    """Run every episode of `config` not yet in `out`; return counts {total, skipped, ran, errors}.

    `limit` stops after that many new episodes (for tests of resumption).
    """
    if backend not in BACKENDS:
        raise ServiceRobotError(f"unknown back end {backend!r}; choose from {BACKENDS}")
    out = Path(out)
    out.parent.mkdir(parents=True, exist_ok=True)
    if backend == "ray" and ray_address not in (None, "local"):
        _check_ray_address(ray_address)
    with _results_lock(out), _stop_on_signals():
        done = finished_keys(out)
        episodes = config.episodes()
        todo = [s for s in episodes if s.key not in done]
        counts = {"total": len(episodes), "skipped": len(episodes) - len(todo), "ran": 0, "errors": 0}
        if limit is not None:
            todo = todo[:limit]
        run = run_metadata(config)
        if not todo:
            return counts
        runner = {"serial": _serial, "process": _process, "ray": _ray}[backend]
        kwargs = {"ray_address": ray_address} if backend == "ray" else {}
        for record in runner(todo, run, workers or os.cpu_count() or 1, **kwargs):
            _append(out, record)
            counts["ran"] += 1
            counts["errors"] += record["status"] != "ok"
            if on_record is not None:
                on_record(record)
        return counts


@contextlib.contextmanager
def _results_lock(path: Path) -> Iterator[None]:
    """Hold an exclusive advisory lock on the results file while a run writes it."""
    try:
        import fcntl
    except ImportError:  # no flock (Windows): run without the lock
        yield
        return
    fd = os.open(path, os.O_RDWR | os.O_CREAT | os.O_APPEND, 0o644)
    try:
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            raise ResultsError(f"{path} is being written by another `servicerobot run` (it holds the file's "
                               "lock); wait for it to finish, or write to another file with --out") from None
        yield
    finally:
        os.close(fd)  # closing releases the lock


@contextlib.contextmanager
def _stop_on_signals() -> Iterator[None]:
    """Turn SIGTERM and SIGINT into `RunInterrupted` while a grid runs (main thread only)."""
    if threading.current_thread() is not threading.main_thread():
        yield
        return

    def stop(signum, frame):
        raise RunInterrupted(signum)

    old = {sig: signal.signal(sig, stop) for sig in (signal.SIGTERM, signal.SIGINT)}
    try:
        yield
    finally:
        for sig, handler in old.items():
            signal.signal(sig, handler)


def _check_ray_address(address: str, timeout: float = 25.0) -> None:
    """Fail fast, naming the address, when nothing listens at a Ray HOST:PORT, or what listens does not
    answer as a Ray cluster within `timeout` s (ray.init would wait for minutes): a TCP check, then a
    throwaway driver in a child process that is killed when time runs out."""
    import importlib.util

    if importlib.util.find_spec("ray") is None:
        raise DependencyNotInstalled(f"the Ray back end needs Ray: {install_hint('ray')}")
    hint = ("start one with `ray start --head --port PORT` and pass HOST:PORT, 'auto' for the local cluster, "
            "or 'local' for a private instance")
    if address != "auto":
        host, _, port = address.removeprefix("ray://").rpartition(":")
        try:
            with socket.create_connection((host or "127.0.0.1", int(port)), timeout=min(5.0, timeout)):
                pass
        except (OSError, ValueError) as exc:
            raise ServiceRobotError(f"no Ray cluster answers at --ray-address {address!r} ({exc}); {hint}") from None
    probe = "import sys, ray; ray.init(address=sys.argv[1], log_to_driver=False); ray.shutdown()"
    try:
        done = subprocess.run([sys.executable, "-c", probe, address], capture_output=True, text=True,
                              timeout=timeout, check=False)
    except subprocess.TimeoutExpired:
        raise ServiceRobotError(f"what listens at --ray-address {address!r} did not answer as a Ray cluster within "
                                f"{timeout:.0f} s; {hint}") from None
    if done.returncode != 0:
        last = [line for line in done.stderr.splitlines() if line.strip()][-1:] or ["(no message)"]
        raise ServiceRobotError(f"cannot join the Ray cluster at --ray-address {address!r}: {last[0]}; {hint}")


def _one(args: tuple[EpisodeSpec, dict]) -> dict:
    spec, run = args
    return run_episode(spec, run)


def _worker_init(counter=None) -> None:
    """Pool workers leave SIGINT to the parent (which stops them) and die with it, even on SIGKILL. Each
    takes the next index from `counter` as `$SERVICEROBOT_WORKER` (0, 1, ...: e.g. which model server)."""
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    if counter is not None:
        with counter.get_lock():
            os.environ[WORKER_VAR] = str(counter.value)
            counter.value += 1
    if sys.platform.startswith("linux"):
        import ctypes

        with contextlib.suppress(OSError, AttributeError):
            ctypes.CDLL(None, use_errno=True).prctl(1, signal.SIGTERM)  # PR_SET_PDEATHSIG
        if os.getppid() == 1:  # the parent died before prctl
            os._exit(1)


def _kill_workers(pool) -> None:
    """Terminate a process pool's workers now (shutdown alone waits for running episodes)."""
    procs = list((getattr(pool, "_processes", None) or {}).values())
    for p in procs:
        with contextlib.suppress(OSError, ValueError):
            p.terminate()
    for p in procs:
        p.join(timeout=3)
        if p.is_alive():
            p.kill()
            p.join(timeout=2)


def _serial(todo: list[EpisodeSpec], run: dict, workers: int) -> Iterator[dict]:
    for spec in todo:
        yield run_episode(spec, run)


def _process(todo: list[EpisodeSpec], run: dict, workers: int) -> Iterator[dict]:
    import multiprocessing as mp
    from concurrent.futures import FIRST_COMPLETED, ProcessPoolExecutor, wait

    if workers <= 1:
        yield from _serial(todo, run, workers)
        return
    # "spawn": a fresh interpreter per worker (fork after importing threads/planners is fragile).
    context = mp.get_context("spawn")
    pool = ProcessPoolExecutor(workers, mp_context=context, initializer=_worker_init,
                               initargs=(context.Value("i", 0),))
    # At most 2 episodes per worker are submitted at a time, and none is ever cancelled: on a stop the
    # workers are killed and the pool fails what is in flight itself. (Cancelling queued futures first made
    # the pool's manager thread die with InvalidStateError when it then failed them: Python 3.11.)
    queue = deque(todo)
    running: set = set()
    try:
        while queue or running:
            while queue and len(running) < 2 * workers:
                running.add(pool.submit(_one, (queue.popleft(), run)))
            done, running = wait(running, return_when=FIRST_COMPLETED)
            for future in done:
                yield future.result()
    except BaseException:  # a signal, an error, or the consumer stopping: stop the workers too
        _kill_workers(pool)
        pool.shutdown(wait=True)
        raise
    pool.shutdown(wait=True)


def _ray(todo: list[EpisodeSpec], run: dict, workers: int, ray_address: str | None = None) -> Iterator[dict]:
    try:
        import ray
    except ImportError as exc:
        raise DependencyNotInstalled(f"the Ray back end needs Ray: {install_hint('ray')}") from exc
    started = False
    if not ray.is_initialized():
        if ray_address in (None, "local"):
            ray.init(num_cpus=workers, include_dashboard=False, log_to_driver=False)
        else:
            # Workers on other nodes read OPENAI_* from their own environment: keys never travel in
            # Ray's runtime_env, which its dashboard shows.
            try:
                ray.init(address=ray_address, log_to_driver=False)
            except (ConnectionError, RuntimeError, ValueError) as exc:
                raise ServiceRobotError(f"cannot join the Ray cluster at --ray-address {ray_address!r}: {exc}") from None
        started = True
    try:
        # One actor per worker keeps its envs (worlds) between episodes, like a process-pool worker.
        actor_cls = ray.remote(num_cpus=1)(_EpisodeActor)
        n = max(1, min(workers, len(todo), int(ray.cluster_resources().get("CPU", workers))))
        yield from _ray_schedule(ray, actor_cls, n, todo, run)
    finally:
        if started:
            ray.shutdown()


def _ray_schedule(ray, actor_cls, n: int, todo: list[EpisodeSpec], run: dict,
                  max_losses: int = 3) -> Iterator[dict]:
    """Run `todo` on `n` actors, one episode each at a time. An episode whose actor dies with its worker or
    node is run again on a live actor (at most `max_losses` times); a dead actor is replaced while the
    cluster has a free CPU, so a grid survives losing a node."""
    queue = deque(todo)
    idle = [actor_cls.remote() for _ in range(n)]
    running: dict[Any, tuple[Any, EpisodeSpec]] = {}
    losses: Counter[str] = Counter()
    while queue or running:
        while queue and idle:
            actor, spec = idle.pop(), queue.popleft()
            running[actor.run.remote(spec, run)] = (actor, spec)
        (ref,), _ = ray.wait(list(running), num_returns=1)
        actor, spec = running.pop(ref)
        try:
            record = ray.get(ref)
        except ray.exceptions.RayTaskError:
            raise  # the episode code itself failed outside run_episode's guard: a bug, not a lost node
        except ray.exceptions.RayError as exc:
            losses[spec.key] += 1
            if losses[spec.key] > max_losses:
                raise ServiceRobotError(f"episode {spec.key} was lost with its Ray worker {losses[spec.key]} "
                                        f"times; last: {type(exc).__name__}: {exc}") from None
            print(f"servicerobot run: {spec.key} was lost with its Ray worker or node ({type(exc).__name__}); "
                  "running it again", file=sys.stderr, flush=True)
            queue.appendleft(spec)
            with contextlib.suppress(Exception):
                ray.kill(actor)
            if not (idle or running) or ray.available_resources().get("CPU", 0) >= 1:
                idle.append(actor_cls.remote())
            continue
        idle.append(actor)
        yield record


class _EpisodeActor:
    """A Ray actor that runs episodes, reusing its process's envs."""

    def run(self, spec: EpisodeSpec, run: dict) -> dict:
        return run_episode(spec, run)


def stable_part(record: dict) -> dict:
    """A record without its timing fields: equal for the same seed on any back end or machine."""
    out = dict(record)
    for key, sub in TIMING_FIELDS.items():
        if sub is None:
            out.pop(key, None)
        elif isinstance(out.get(key), dict):
            out[key] = {k: v for k, v in out[key].items() if k not in sub}
    return out
