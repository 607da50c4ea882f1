"""Run an experiment grid on a serial, process-pool or Ray back end into a resumable JSONL file.

Each finished episode is appended as one JSON line (written whole, flushed and fsynced), so a killed run
leaves at most a torn last line, which the next run cuts before it resumes; episodes whose key is
already in the file are skipped. A file that is not a results file is refused untouched (`results_file`).
Workers reuse one env per setting (`episode.make_env`).

One run writes a results file at a time (an advisory lock: a second gets `ResultsError`). SIGTERM and
SIGINT stop the run: pool workers are terminated (and die with their parent even on SIGKILL, on Linux),
records already written stay, and the next run resumes. A Ray address that does not answer fails fast.
"""

from __future__ import annotations

import contextlib
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
from servicerobot.experiments.results_file import ResultsError, append_record, finished_keys
from servicerobot.experiments.results_file import results_lock as _results_lock
from servicerobot.language.local_server import WORKER_VAR

__all__ = ["BACKENDS", "ResultsError", "RunInterrupted", "finished_keys", "run_grid", "run_metadata",
           "stable_part"]

BACKENDS = ("serial", "process", "ray")
# Fields that measure time (machine- and load-dependent) or say where an episode ran (`placement`, Ray): left
# out when records are compared.
TIMING_FIELDS = {"timing": None, "agent": ("planning_time",), "run": None, "placement": None}


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


def run_grid(config: ExperimentConfig, out: str | Path, backend: str = "process", workers: int | None = None,
             ray_address: str | None = None, on_record: Callable[[dict], None] | None = None,
             limit: int | None = None, llm_servers: str | None = None,
             episodes_per_gpu: int | None = None) -> dict:
    """Run every episode of `config` not yet in `out`; return counts {total, skipped, ran, errors}.

    `limit` stops after that many new episodes (for tests of resumption). Ray only: `llm_servers` says where
    the model servers are (default `$SERVICEROBOT_LLM_SERVERS`; `servicerobot.experiments.cluster.ModelServers`),
    `episodes_per_gpu` how many GPU episodes share a GPU (default `$SERVICEROBOT_EPISODES_PER_GPU` or 1).
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
        kwargs = {"ray_address": ray_address, "llm_servers": llm_servers,
                  "episodes_per_gpu": episodes_per_gpu} if backend == "ray" else {}
        for record in runner(todo, run, workers or os.cpu_count() or 1, **kwargs):
            append_record(out, record)
            counts["ran"] += 1
            counts["errors"] += record["status"] != "ok"
            if on_record is not None:
                on_record(record)
        return counts


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

    workers = min(workers, len(todo))  # no idle workers (and no queue sized past a C int by --workers 10**12)
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


def _ray(todo: list[EpisodeSpec], run: dict, workers: int, ray_address: str | None = None,
         llm_servers: str | None = None, episodes_per_gpu: int | None = None,
         node_wait: float | None = None) -> Iterator[dict]:
    try:
        import ray
    except ImportError as exc:
        raise DependencyNotInstalled(f"the Ray back end needs Ray: {install_hint('ray')}") from exc
    from servicerobot.experiments import cluster

    # Each env's needs, from its world's declaration; checked against the cluster before anything runs.
    envs = {spec.env.name: spec.env for spec in todo}
    needs = {name: cluster.needs_of(env) for name, env in envs.items()}
    share = cluster.gpu_share(episodes_per_gpu)
    servers = cluster.ModelServers.parse(llm_servers if llm_servers is not None
                                         else os.environ.get(cluster.LLM_SERVERS_VAR))
    if node_wait is None:
        node_wait = cluster.node_wait()
    started = False
    local = ray_address in (None, "local")
    if not ray.is_initialized():
        if local:
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
        groups: dict = {}
        for name, need in needs.items():
            groups.setdefault(need, []).append(name)
        where = ("the private Ray instance on this machine (--ray-address local)" if local and started
                 else f"the Ray cluster at {ray_address!r}" if ray_address not in (None, "local")
                 else "the Ray cluster this process is connected to")
        cluster.check_hosts(groups, ray.nodes(), share, where)
        # One actor per worker keeps its envs (worlds) between episodes, like a process-pool worker.
        actor_cls = ray.remote(_EpisodeActor)
        n = max(1, min(workers, len(todo), int(ray.cluster_resources().get("CPU", workers))))
        yield from _ray_schedule(ray, actor_cls, n, todo, run, needs=needs, share=share, servers=servers,
                                 node_wait=node_wait)
    finally:
        if started:
            ray.shutdown()


class _Pool:
    """The workers for episodes of one kind of needs (a GPU and `unity`, or a CPU), and their queue."""

    def __init__(self, needs):
        self.needs = needs
        self.queue: deque[EpisodeSpec] = deque()
        self.idle: list = []
        self.size = 0  # live actors, idle or busy (or not yet placed)
        self.busy = 0
        self.stuck_since: float | None = None  # since when no live node can run its episodes
        self.envs: set[str] = set()

    @property
    def special(self) -> bool:
        return bool(self.needs.gpu or self.needs.resources)


def _ray_schedule(ray, actor_cls, n: int, todo: list[EpisodeSpec], run: dict, max_losses: int = 3,
                  needs: dict | None = None, share: float = 1.0, servers=None,
                  node_wait: float = 600.0) -> Iterator[dict]:
    """Run `todo` on at most `n` actors, one episode each at a time, each actor asking Ray for what its
    episodes' world needs (`needs`: env name -> `NodeNeeds`; GPU pools are filled first, CPU-only episodes
    take the other slots, and the workers of a pool whose queue is empty give their slot back).

    An episode whose actor dies with its worker or node is run again on a live actor (at most `max_losses`
    times); a dead actor is replaced while a live node can host it. When no live node can run what is left
    (the only GPU node died), the grid waits up to `node_wait` seconds for one to join, then stops with
    `ClusterError` (the records written stay: rerun to resume)."""
    import time

    from servicerobot.envs.world import NodeNeeds
    from servicerobot.experiments import cluster

    needs = needs or {}
    pools: dict[Any, _Pool] = {}
    for spec in todo:
        need = needs.get(spec.env.name) or NodeNeeds()
        pool = pools.setdefault(need, _Pool(need))
        pool.queue.append(spec)
        pool.envs.add(repr(spec.env.name))
    order = sorted(pools.values(), key=lambda p: (not p.needs.gpu, not p.needs.resources))
    running: dict[Any, tuple[Any, _Pool, EpisodeSpec]] = {}
    losses: Counter[str] = Counter()
    started: dict[Any, Any] = {}  # actor -> its `where()` call: done once the actor runs on a node
    never_started = 0  # actors lost before they ever ran (placed on a node that was dying)

    def spawn(pool: _Pool):
        actor = actor_cls.options(**cluster.actor_options(pool.needs, share)).remote(pool.needs, servers)
        started[actor] = actor.where.remote()
        pool.idle.append(actor)
        pool.size += 1
        return actor

    def had_started(actor) -> bool:
        where = started.pop(actor, None)
        if where is None or not ray.wait([where], timeout=0)[0]:
            return False
        try:
            ray.get(where, timeout=0)
        except Exception:  # noqa: BLE001 - any failure: it never ran
            return False
        return True

    def plan() -> None:
        """Retire idle actors of drained pools; give free slots to pools with work, GPU pools first; note
        the pools that no live node can run."""
        for pool in order:
            if not pool.queue and pool.idle:
                for actor in pool.idle:
                    started.pop(actor, None)
                    with contextlib.suppress(Exception):
                        ray.kill(actor)
                pool.size -= len(pool.idle)
                pool.idle = []
        nodes = ray.nodes() if any(p.queue or p.busy for p in order) else []
        for pool in order:
            if not (pool.queue or pool.busy):
                pool.stuck_since = None
                continue
            cap = min(n, cluster.slots(pool.needs, nodes, share))  # what live nodes can run at once
            if cap == 0:  # its node died: its actors (if any) wait for one to join
                if pool.stuck_since is None:
                    pool.stuck_since = time.monotonic()
                    print(f"servicerobot run: no live node can run the episodes of env {', '.join(sorted(pool.envs))} "
                          f"(they need {cluster.describe_needs(pool.needs)}); waiting up to {node_wait:.0f} s for one "
                          f"to join ({cluster.nodes_summary(nodes)})", file=sys.stderr, flush=True)
                continue
            pool.stuck_since = None
            # a pool with work and no worker (its node is gone) keeps one slot for when a node comes back
            reserved = sum(1 for p in order if p is not pool and p.queue and p.size == 0)
            total = sum(p.size for p in order)
            while pool.size < min(cap, len(pool.queue) + pool.busy) and total < n - reserved:
                spawn(pool)
                total += 1

    # GPU and labelled workers first, and placed, before CPU-only ones take the CPUs of GPU nodes.
    first = []
    for pool in order:
        if pool.special:
            cap = cluster.slots(pool.needs, ray.nodes(), share)
            for _ in range(min(cap, len(pool.queue), n - sum(p.size for p in order))):
                first.append(spawn(pool))
    if first:
        ray.wait([started[a] for a in first], num_returns=len(first), timeout=30)
    plan()
    planned = time.monotonic()
    while any(p.queue for p in order) or running:
        if time.monotonic() - planned > 2.0:  # nodes come and go: look again now and then
            plan()
            planned = time.monotonic()
        for pool in order:
            while pool.queue and pool.idle:
                actor, spec = pool.idle.pop(), pool.queue.popleft()
                running[actor.run.remote(spec, run)] = (actor, pool, spec)
                pool.busy += 1
        if not running:
            time.sleep(1.0)
        ready = ray.wait(list(running), num_returns=1, timeout=1.0)[0] if running else []
        if not ready:
            plan()
            planned = time.monotonic()
            late = [p for p in order if p.stuck_since is not None and planned - p.stuck_since > node_wait]
            if late and not any(p.queue or p.busy for p in order if p not in late):
                pool = late[0]
                raise cluster.ClusterError(
                    f"no live node could run the {len(pool.queue) + pool.busy} episode(s) left of env "
                    f"{', '.join(sorted(pool.envs))} (they need {cluster.describe_needs(pool.needs)}) for "
                    f"{node_wait:.0f} s; the finished records are kept: add such a node and run again to resume "
                    "(docs/cluster.md)")
            continue
        ref = ready[0]
        actor, pool, spec = running.pop(ref)
        pool.busy -= 1
        try:
            record = ray.get(ref)
        except ray.exceptions.RayTaskError as exc:
            cause = getattr(exc, "cause", None)
            if isinstance(cause, cluster.ClusterError):
                raise cluster.ClusterError(str(cause)) from None
            raise  # the episode code itself failed outside run_episode's guard: a bug, not a lost node
        except ray.exceptions.RayError as exc:
            if had_started(actor):
                losses[spec.key] += 1
                if losses[spec.key] > max_losses:
                    raise ServiceRobotError(f"episode {spec.key} was lost with its Ray worker {losses[spec.key]} "
                                            f"times; last: {type(exc).__name__}: {exc}") from None
                print(f"servicerobot run: {spec.key} was lost with its Ray worker or node ({type(exc).__name__}); "
                      "running it again", file=sys.stderr, flush=True)
            else:  # the actor died before it ever ran (Ray placed it on a node it had not yet seen die)
                never_started += 1
                if never_started > 10 * n:
                    raise ServiceRobotError(f"{never_started} Ray workers died before they ran an episode; last: "
                                            f"{type(exc).__name__}: {exc}") from None
                print(f"servicerobot run: the Ray worker for {spec.key} died before it started (on a lost node?); "
                      "starting another", file=sys.stderr, flush=True)
            pool.queue.appendleft(spec)
            pool.size -= 1
            with contextlib.suppress(Exception):
                ray.kill(actor)
            plan()
            continue
        pool.idle.append(actor)
        if not pool.queue:
            plan()
        yield record


class _EpisodeActor:
    """A Ray actor that runs episodes, reusing its process's envs. It gives the world the GPU Ray assigned to
    it (by physical id, in the option the world declares), points the interpreter at its node's model server,
    and adds where the episode ran to the record (`placement`, left out when records are compared)."""

    def __init__(self, needs=None, servers=None):
        import ray

        self.needs, self.servers = needs, servers
        self.node_ip = ray.util.get_node_ip_address()
        self.node_id = ray.get_runtime_context().get_node_id()
        self.gpu_ids = [str(g) for g in ray.get_gpu_ids()]
        self._own: list[dict] | None = None  # this node's entry of ray.nodes(), for the llm_server resource

    def where(self) -> dict:
        """The node this actor runs on and the GPUs Ray gave it."""
        return {"node": self.node_ip, "gpus": self.gpu_ids}

    def _model_server(self, spec: EpisodeSpec) -> str | None:
        """The model server this episode's interpreter uses (own node's first), set in this process's
        environment where the interpreter reads it; None when the episode uses no model or none is configured."""
        from servicerobot.experiments.cluster import MODEL_URL_VARS

        var = MODEL_URL_VARS.get(spec.agent.get("interpreter", "default")) if spec.variant != "oracle" else None
        if self.servers is None or var is None:
            return None
        import ray

        def live() -> list[dict]:
            return [node for node in ray.nodes() if node.get("Alive")]

        if self.servers.template and self._own is None:  # what this node declares does not change
            self._own = [node for node in live() if node.get("NodeID") == self.node_id]
        # the own node's server first: no need to list the cluster for it
        url = next((u for u in self.servers.own(self.node_ip, self._own or []) if self.servers.answers(u)), None)
        url = url or self.servers.pick(self.node_ip, live)
        os.environ[var] = url
        return url

    def run(self, spec: EpisodeSpec, run: dict) -> dict:
        from dataclasses import replace

        from servicerobot.experiments.cluster import gpu_options

        given = gpu_options(self.needs, self.gpu_ids) if self.needs is not None else {}
        url = self._model_server(spec)
        placed = replace(spec, env=replace(spec.env, kwargs={**spec.env.kwargs, **given})) if given else spec
        record = run_episode(placed, run)
        record["env_kwargs"] = spec.env.kwargs  # the config's settings; what the node added is in placement
        record["placement"] = {"node": self.node_ip, "gpus": self.gpu_ids, "world_options": given,
                               "llm_server": url}
        return record


def stable_part(record: dict) -> dict:
    """A record without its timing fields: equal for the same seed on any back end or machine."""
    out = dict(record)
    for key, sub in TIMING_FIELDS.items():
        if sub is None:
            out.pop(key, None)
        elif isinstance(out.get(key), dict):
            out[key] = {k: v for k, v in out[key].items() if k not in sub}
    return out
