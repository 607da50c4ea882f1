"""Accuracy of the rule interpreter and the local language model on the paraphrase set (115 utterances
outside the household templates, `servicerobot/language/paraphrases.json`).

Prints one JSON line: per interpreter, classification accuracy, update accuracy (delta equal to the true
one), task accuracy (goal equivalent to the true one) and seconds per item; with `--rows FILE` every
answer is written there. The model is the server at `$SERVICEROBOT_LOCAL_LLM_URL` (or `--url`); with
neither, `--serve` starts one (`servicerobot llm serve`), else only the rule interpreter is scored.

    python benchmarks/paraphrases.py --serve --rows paraphrase-rows.json
    python benchmarks/paraphrases.py --quick            # 4 items
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import sys
from contextlib import ExitStack

from servicerobot.envs.household.language import LANGUAGE as HOUSEHOLD
from servicerobot.files import write_atomic
from servicerobot.language.local_server import LOCAL_LLM_URL_VAR, MODES, LocalServer, local_interpreter
from servicerobot.language.paraphrases import evaluate, load_paraphrases, setting
from servicerobot.language.rule_interpreter import RuleInterpreter


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="2 updates and 2 tasks (under a minute)")
    parser.add_argument("--url", default=os.environ.get(LOCAL_LLM_URL_VAR), help="the local server's URL")
    parser.add_argument("--serve", action="store_true", help="start the local server when no URL is given")
    parser.add_argument("--items", type=int, default=None,
                        help="only the first N items, updates and tasks alternating (a fixed subset)")
    parser.add_argument("--rules-only", action="store_true")
    parser.add_argument("--mode", choices=MODES, default="choose",
                        help="how the local model answers: choose among enumerated candidates, or generate")
    parser.add_argument("--rows", help="write every answer to this JSON file")
    parser.add_argument("--set", dest="path", default=None,
                        help="another set in the same format (e.g. benchmarks/data/requests_round4.json)")
    args = parser.parse_args(argv)
    everything = load_paraphrases(args.path)
    updates = [i for i in everything if i.kind == "update"]
    tasks = [i for i in everything if i.kind == "task"]
    # alternate the kinds, so that a run stopped early still covers both
    items = [x for pair in zip(updates, tasks) for x in pair] + updates[len(tasks):] + tasks[len(updates):]
    if args.quick or args.items is not None:
        if args.items is not None and args.items < 1:
            parser.error(f"--items must be at least 1, got {args.items}")
        items = items[:4 if args.quick else args.items]
    place = setting(args.path)
    out: dict = {"benchmark": "paraphrases", "set": args.path or "paraphrases.json", "items": len(items)}
    rows: dict = {}
    with ExitStack() as stack:
        interpreters = {"rules": RuleInterpreter()}
        url = args.url
        if not args.rules_only and not url and args.serve:
            url = stack.enter_context(LocalServer()).url
        if not args.rules_only and url:
            # the paraphrases are said in the household, whose declared language the chooser reads as the agent does
            interpreters[f"local-llm:{args.mode}"] = local_interpreter(url, mode=args.mode, language=HOUSEHOLD)
        for label, interpreter in interpreters.items():
            done: list[dict] = []

            def on_item(row: dict, label: str = label, done: list = done) -> None:
                print(f"{label} {row['id']} classified={row['classified']} correct={row['correct']} "
                      f"{row['seconds']}s", file=sys.stderr)
                done.append(row)
                if args.rows:  # kept up to date, so a run stopped early keeps what it measured
                    write_atomic(args.rows, json.dumps({**rows, label: done}, indent=1) + "\n")

            result = evaluate(interpreter, items, place, on_item=on_item)
            rows[label] = result.pop("rows")
            result["median_s_per_item"] = round(statistics.median(r["seconds"] for r in rows[label]), 3)
            result["tokens"] = interpreter.usage.total_tokens
            calls = getattr(interpreter, "calls", None)
            if calls:  # the chooser's scoring calls
                result["scoring_calls"] = len(calls)
                result["median_candidates_per_call"] = statistics.median(c["candidates"] for c in calls)
                result["median_s_per_scoring_call"] = round(statistics.median(c["seconds"] for c in calls), 3)
                result["p90_s_per_scoring_call"] = round(sorted(c["seconds"] for c in calls)[
                    int(0.9 * (len(calls) - 1))], 3)
            out[label] = result
    if args.rows:
        write_atomic(args.rows, json.dumps(rows, indent=1) + "\n")
    print(json.dumps(out))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
