"""Run an experiment grid on a serial, process-pool or Ray back end into a resumable JSONL file.

Each finished episode is appended as one JSON line (written whole, flushed and fsynced), so a killed run
leaves at most a torn last line, which the next run drops before it resumes; episodes whose key is
already in the file are skipped. Workers reuse one env per setting (`episode.make_env`).
"""

from __future__ import annotations

import json
import os
import platform
import subprocess
from collections.abc import Callable, Iterator
from importlib import metadata
from pathlib import Path

from servicerobot.errors import DependencyNotInstalled, ServiceRobotError
from servicerobot.experiments.config import EpisodeSpec, ExperimentConfig
from servicerobot.experiments.episode import run_episode

__all__ = ["BACKENDS", "ResultsError", "finished_keys", "run_grid", "run_metadata", "stable_part"]

BACKENDS = ("serial", "process", "ray")
# Fields that measure time (machine- and load-dependent): left out when records are compared.
TIMING_FIELDS = {"timing": None, "agent": ("planning_time",), "run": None}


class ResultsError(ServiceRobotError):
    """A results file cannot be read or continued."""


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


def finished_keys(path: Path) -> set[str]:
    """Keys of the episodes already in a results file; a torn last line (killed run) is cut off."""
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
    if good_end < len(data):
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


def _one(args: tuple[EpisodeSpec, dict]) -> dict:
    spec, run = args
    return run_episode(spec, run)


def _serial(todo: list[EpisodeSpec], run: dict, workers: int) -> Iterator[dict]:
    for spec in todo:
        yield run_episode(spec, run)


def _process(todo: list[EpisodeSpec], run: dict, workers: int) -> Iterator[dict]:
    import multiprocessing as mp
    from concurrent.futures import ProcessPoolExecutor, as_completed

    if workers <= 1:
        yield from _serial(todo, run, workers)
        return
    # "spawn": a fresh interpreter per worker (fork after importing threads/planners is fragile).
    with ProcessPoolExecutor(workers, mp_context=mp.get_context("spawn")) as pool:
        futures = [pool.submit(_one, (spec, run)) for spec in todo]
        try:
            for future in as_completed(futures):
                yield future.result()
        finally:
            for f in futures:
                f.cancel()


def _ray(todo: list[EpisodeSpec], run: dict, workers: int, ray_address: str | None = None) -> Iterator[dict]:
    try:
        import ray
    except ImportError as exc:
        raise DependencyNotInstalled('the Ray back end needs Ray: pip install "servicerobot[ray]"') from exc
    started = False
    if not ray.is_initialized():
        if ray_address in (None, "local"):
            ray.init(num_cpus=workers, include_dashboard=False, log_to_driver=False)
        else:
            # Workers on other nodes read OPENAI_* from their own environment: keys never travel in
            # Ray's runtime_env, which its dashboard shows.
            ray.init(address=ray_address, log_to_driver=False)
        started = True
    try:
        # One actor per worker keeps its envs (worlds) between episodes, like a process-pool worker.
        actor_cls = ray.remote(num_cpus=1)(_EpisodeActor)
        n = max(1, min(workers, len(todo), int(ray.cluster_resources().get("CPU", workers))))
        actors = [actor_cls.remote() for _ in range(n)]
        pool = ray.util.ActorPool(actors)
        yield from pool.map_unordered(lambda a, spec: a.run.remote(spec, run), todo)
    finally:
        if started:
            ray.shutdown()


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
