"""Context Matters' published dataset, end to end, in each split's own domain: every instance of a clone on
disk, through `servicerobot.experiments.cm_language.solve_in_split_domain`, with

- `hand`: a stand-in interpreter that answers each task with the goal we wrote by hand for it (`READINGS`
  below: our reading of CM's sentence and the split JSON's `objects`, as clauses over classes and rooms,
  grounded in each scene by `servicerobot.experiments.cm_goals`), and
- `chooser`: the local model through the enumerate-and-choose interpreter (`--url`, `servicerobot llm serve`).

Per split and method: instances; planned and executed (CM's success: a plan ran); refused up front with the
reason; our success (the plan ran and a non-empty final goal that did not already hold holds after it);
agreement with `relaxation_expected`; for the chooser, whether the hand-written goal holds after its plan;
median seconds per instance. Rows are appended one JSON line per instance as it ends (`--rows`; a rerun skips
the keys already there); the last line printed is one JSON object.

The dataset's licence is unstated: nothing of it is in this repository. Clone it outside and pass its path:

    python benchmarks/cm_published.py /path/to/context-matters-dataset            # hand-written goals, 141
    python benchmarks/cm_published.py DATA --per-problem 1                         # one building per problem
    python benchmarks/cm_published.py DATA --url URL --method chooser --rows rows.jsonl
    python benchmarks/cm_published.py DATA --domains /path/to/a/later/clone        # domain files from there
    python benchmarks/cm_published.py --quick                                      # the test fixtures (smoke)
"""

from __future__ import annotations

import argparse
import hashlib
import json
import os
import statistics
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from servicerobot.experiments.cm_goals import Empty, Floors, Make, MoveTo, Put, PutBack, Recycle

_TABLEWARE = ("plate", "fork", "knife", "glass", "napkin")
_PARTS = ("motherboard", "cpu", "ram", "gpu", "psu", "case")
_ACCESSORIES = ("monitor", "keyboard", "mouse")
_RUBBISH = ("cola_can", "banana_peel", "rotting_apple")
_CLOTHES = ("dirty_pants", "dirty_shirt", "dirty_socks", "dirty_underwear", "dirty_jacket")
_OFFICE = ("desk", "lamp", "shelf", "locker")
_MOP = (Floors(("kitchen", "living_room")), Make(("mop",), "clean", each=True))


def _table_for(people: int, extra: tuple[str, ...] = ()) -> tuple:
    """A table set for `people`: a plate (a bowl in its place), fork, knife, glass and napkin each, on the
    dining table."""
    out = [Put(("plate", "bowl"), ("dining_table",), count=people)]
    out += [Put((k,), ("dining_table",), count=people) for k in _TABLEWARE[1:] + extra]
    return tuple(out)


# Our reading of each published task, by split and problem; `SENTENCE` holds a fingerprint of the sentence it
# was written for, so that a changed dataset is noticed (never the sentence itself: the data is not ours).
READINGS = {
    ("general", "problem_1"): (Put(("apple",), ("fridge", "refrigerator"), room="kitchen"),),
    ("general", "problem_2"): (Put(("book",), ("bookshelf",), room="living_room"),),
    ("general", "problem_3"): (Put(("glass", "cup"), ("sink",), room="kitchen"),),
    ("general", "problem_4"): (Put(("shoe",), ("shoe_rack",), room="bathroom"),),
    ("general", "problem_5"): (Put(("newspaper", "magazine"), ("magazine_rack",), room="living_room"),),
    ("general", "problem_6"): (Put(("toy",), ("toy_box",)),),
    ("general", "problem_7"): (Put(("towel",), ("laundry_basket",)),),
    ("general", "problem_8"): (Put(("apple",), ("fruit_bowl",), room="dining_room"),),
    ("general", "problem_9"): (Put(("magazine",), ("magazine_rack",), room="living_room"),),
    ("general", "problem_10"): (Put(("glass",), ("cupboard",), room="kitchen", count=5),),
    ("general", "problem_11"): (Put(("remote", "remote_control"), ("coffee_table",), room="living_room"),),
    ("dining_setup", "problem_1"): _table_for(2),
    ("dining_setup", "problem_2"): _table_for(3),
    ("dining_setup", "problem_3"): _table_for(4),
    ("dining_setup", "problem_4"): _table_for(2, ("bowl", "spoon")),
    ("dining_setup", "problem_5"): (Put(_TABLEWARE + ("spoon", "bowl", "balloon", "rose", "vase"),
                                        ("dining_table",)),),
    ("dining_setup", "problem_6"): (Put(_TABLEWARE + ("spoon", "bowl"), ("dining_table",)),),
    ("house_cleaning", "problem_1"): (Make(_RUBBISH, "discarded", each=True),) + _MOP,
    ("house_cleaning", "problem_2"): (Make(_RUBBISH, "discarded", each=True),) + _MOP,
    ("house_cleaning", "problem_3"): (Make(_RUBBISH, "discarded", each=True),) + _MOP,
    ("house_cleaning", "problem_4"): (Recycle((("cola_can", "metal_bin"), ("empty_glass_bottle", "glass_bin"),
                                               ("empty_plastic_bottle", "plastic_bin"), ("banana_peel", "organic_bin"),
                                               ("rotting_apple", "organic_bin"))),) + _MOP,
    ("laundry", "problem_1"): (Make(_CLOTHES, "clean"),),
    ("laundry", "problem_2"): (Make(_CLOTHES, "clean"),),
    ("laundry", "problem_3"): (Make(("dirty_underwear",), "clean"),),
    ("office_setup", "problem_1"): (Empty(("shelf", "locker")), MoveTo(_OFFICE, "living_room")),
    ("office_setup", "problem_4"): (MoveTo(_OFFICE, "living_room"), PutBack(("shelf", "locker"))),
    ("office_setup", "problem_5"): (MoveTo(_OFFICE, "living_room"), PutBack(("locker",), into="shelf")),
    ("office_setup", "problem_7"): (MoveTo(_OFFICE, "living_room"), PutBack(("locker", "shelf"), into="shelf")),
    ("office_setup", "problem_8"): (MoveTo(("shelf", "locker"), "living_room"), PutBack(("shelf",), into="locker")),
    ("pc_assembly", "problem_1"): (MoveTo(_PARTS[:4] + _ACCESSORIES, "dining_room", optional=()),
                                   MoveTo(_PARTS[4:], "dining_room", optional=_PARTS[4:])),
    ("pc_assembly", "problem_2"): (MoveTo(_PARTS[:4], "dining_room"),
                                   MoveTo(_PARTS[4:], "dining_room", optional=_PARTS[4:])),
    ("pc_assembly", "problem_3"): (MoveTo(_PARTS, "dining_room", count=4),
                                   MoveTo(_ACCESSORIES, "dining_room", count=1)),
}
# Problems CM asks with the same sentence as another one read the same way.
for _split, _same, _as in (("house_cleaning", (5, 6), 4), ("laundry", (4, 5, 6), 1), ("office_setup", (2, 3, 6), 1)):
    for _k in _same:
        READINGS[(_split, f"problem_{_k}")] = READINGS[(_split, f"problem_{_as}")]
SENTENCE = {  # sha1 of the lower-cased sentence (c765521's task.txt), first 10 hex digits
    ("dining_setup", "problem_1"): "a7bc58e0cd",
    ("dining_setup", "problem_2"): "9cf1759bb2",
    ("dining_setup", "problem_3"): "8b66f8358e",
    ("dining_setup", "problem_4"): "4d1d8bb2a0",
    ("dining_setup", "problem_5"): "aeecb10e99",
    ("dining_setup", "problem_6"): "adfb92bafe",
    ("general", "problem_1"): "d7f052437c",
    ("general", "problem_10"): "49413687df",
    ("general", "problem_11"): "2c6267d6c5",
    ("general", "problem_2"): "ded22dbe32",
    ("general", "problem_3"): "9b91a5f525",
    ("general", "problem_4"): "6983ce590c",
    ("general", "problem_5"): "41cd1e7fb1",
    ("general", "problem_6"): "b95b1f9d44",
    ("general", "problem_7"): "c57bb05cc1",
    ("general", "problem_8"): "0a6166ddce",
    ("general", "problem_9"): "d2e0ae0d72",
    ("house_cleaning", "problem_1"): "f7dff39d53",
    ("house_cleaning", "problem_2"): "f7dff39d53",
    ("house_cleaning", "problem_3"): "f7dff39d53",
    ("house_cleaning", "problem_4"): "f30d0ede3d",
    ("house_cleaning", "problem_5"): "f30d0ede3d",
    ("house_cleaning", "problem_6"): "0bf4de26b8",
    ("laundry", "problem_1"): "f039786e58",
    ("laundry", "problem_2"): "f039786e58",
    ("laundry", "problem_3"): "2be2f5eefc",
    ("laundry", "problem_4"): "f039786e58",
    ("laundry", "problem_5"): "f039786e58",
    ("laundry", "problem_6"): "f039786e58",
    ("office_setup", "problem_1"): "1749a16d8f",
    ("office_setup", "problem_2"): "1749a16d8f",
    ("office_setup", "problem_3"): "1749a16d8f",
    ("office_setup", "problem_4"): "13b6426c3d",
    ("office_setup", "problem_5"): "66530f8ea4",
    ("office_setup", "problem_6"): "1749a16d8f",
    ("office_setup", "problem_7"): "414fc548d7",
    ("office_setup", "problem_8"): "77cca4f9c7",
    ("pc_assembly", "problem_1"): "c378fff82d",
    ("pc_assembly", "problem_2"): "9170a3e1a0",
    ("pc_assembly", "problem_3"): "7fca13a77f",
}


def fingerprint(text: str) -> str:
    return hashlib.sha1(text.strip().lower().encode()).hexdigest()[:10]


def _state(row: dict, dw):
    from servicerobot.pddl import Atom

    added = {Atom.parse(a) for a in row.get("facts_added", ())}
    removed = {Atom.parse(a) for a in row.get("facts_removed", ())}
    return (dw.init - removed) | added


def judge(row: dict, inst, hand) -> bool | None:
    """Whether the state another reader's plan reached satisfies our reading, as far as our reading can be
    done in that building: the hand-written goal is planned and relaxed first, and what it keeps is checked,
    any object of a target's classes allowed. None: our reading keeps nothing (a task the building cannot
    host, e.g. no dining table), which this proxy does not judge."""
    from servicerobot.experiments.cm_goals import ground
    from servicerobot.experiments.cm_language import goal_parts, solve_in_split_domain

    hand.current = inst
    ours = solve_in_split_domain(inst, hand)
    kept = set(goal_parts(ours["final_goal"]) or ()) if ours.get("executed") else set()
    if not kept:
        return None
    if not row.get("executed"):
        return False
    dw, clauses = inst.domain_world(), READINGS.get((inst.split, inst.problem), ())
    strict, _ = ground(clauses, dw, inst.world())
    lenient, _ = ground(clauses, dw, inst.world(), any_target=True)
    pairs = zip(strict, lenient) if len(strict) == len(lenient) else ((x, x) for x in strict)
    wanted = [loose for lit, loose in pairs if lit in kept]
    return dw.holds("(and " + " ".join(wanted) + ")", _state(row, dw)) if wanted else None


def run_one(inst, method: str, interpreter, hand) -> dict:
    from servicerobot.experiments.cm_language import solve_in_split_domain

    hand.current = inst
    if method == "chooser":
        calls = len(interpreter.calls)
    row = solve_in_split_domain(inst, hand if method == "hand" else interpreter)
    row.update(method=method, relaxation_expected=inst.relaxation_expected, sentence=fingerprint(inst.task),
               domain_file=os.path.basename(inst.domain_file or ""))
    # a reading was written for one sentence: say so when the dataset's sentence is another one
    row["reading_matches_sentence"] = SENTENCE.get((inst.split, inst.problem)) == row["sentence"]
    dw = inst.domain_world()
    row["domain_warnings"] = len(getattr(dw.domain, "warnings", ()))
    if method == "chooser":
        row["scoring_calls"] = len(interpreter.calls) - calls
        row["hand_goal_holds"] = judge(row, inst, hand)
    # refused up front by the reading, or every part dropped by the planner: either way with the reason
    row["refused"] = bool(row.get("refused")) or row["failure"].startswith("empty goal: every part")
    row["nothing_to_do"] = row["failure"].startswith(("empty goal", "the final goal already holds")) and not row["relaxed"]
    row.pop("trace", None)
    return row


def summary(rows: list[dict]) -> dict:
    """Per method and split: counts of every measure."""
    out: dict = {}
    for method in sorted({r["method"] for r in rows}):
        mine = [r for r in rows if r["method"] == method]
        per: dict = {}
        for split in sorted({r["split"] for r in mine}) + ["all"]:
            rs = [r for r in mine if split in ("all", r["split"])]
            labelled = [r for r in rs if r["relaxation_expected"] is not None]
            ran = [r for r in rs if r["planned"] and r["executed"]]
            row = {"n": len(rs), "planned_executed": len(ran), "refused": sum(r["refused"] for r in rs),
                   "nothing_to_do": sum(r["nothing_to_do"] for r in rs),
                   "handled": len(ran) + sum(r["refused"] or r["nothing_to_do"] for r in rs if r not in ran),
                   "success": sum(bool(r["success"]) for r in rs),
                   "agreement": sum(bool(r["agreement"]) for r in labelled), "labelled": len(labelled),
                   "median_s": round(statistics.median(r.get("wall_s", 0.0) for r in rs), 2) if rs else None,
                   "failures": sorted({r["failure"].split(":")[0] for r in rs if r["failure"] and r not in ran})}
            if method == "chooser":
                judged = [r for r in rs if r.get("hand_goal_holds") is not None]
                row["hand_goal_holds"] = sum(bool(r["hand_goal_holds"]) for r in judged)
                row["hand_goal_judged"] = len(judged)
                row["scoring_calls_median"] = statistics.median(r.get("scoring_calls", 0) for r in rs) if rs else None
            per[split] = row
        out[method] = per
    return out


def instances(root: Path, per_problem: int | None, domains: Path | None, splits=None) -> list:
    from servicerobot.envs.context_matters import read_split, split_names
    from servicerobot.envs.context_matters.cm_domain import find_domain_file

    out = []
    for split in splits or split_names(root):
        insts = read_split(root, split)
        if domains is not None:
            path = find_domain_file(domains, split)
            for inst in insts:
                inst.domain_file = str(path) if path else inst.domain_file
        seen: dict[str, int] = {}
        for inst in insts:
            seen[inst.problem] = seen.get(inst.problem, 0) + 1
            if per_problem is None or seen[inst.problem] <= per_problem:
                out.append(inst)
    return out


def _append(path: Path, row: dict) -> None:
    """One JSON line, flushed to disk; a torn last line of an interrupted run is ended first, never merged."""
    with open(path, "ab+") as fh:
        fh.seek(0, os.SEEK_END)
        if fh.tell():
            fh.seek(-1, os.SEEK_END)
            if fh.read(1) != b"\n":
                fh.write(b"\n")
        fh.write((json.dumps(row, sort_keys=True) + "\n").encode())
        fh.flush()
        os.fsync(fh.fileno())


def _rejudge(args) -> int:
    from servicerobot.experiments.cm_goals import HandInterpreter

    if not args.rows or not args.rows.exists():
        print(json.dumps({"error": "--rejudge needs --rows FILE of an earlier run"}))
        return 2
    hand = HandInterpreter(READINGS)
    by_key = {i.key: i for i in instances(args.root, None, args.domains, args.splits)}
    rows = []
    for line in args.rows.read_text(encoding="utf-8").splitlines():
        try:
            r = json.loads(line)
        except ValueError:
            continue
        if r.get("method") == "chooser" and r["key"] in by_key:
            r["hand_goal_holds"] = judge(r, by_key[r["key"]], hand)
        rows.append(r)
    print(json.dumps({"root": str(args.root), "instances": len({r["key"] for r in rows}), "rejudged": True,
                      "summary": summary(rows)}))
    return 0


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("root", type=Path, nargs="?", default=None,
                        help="a clone of Context Matters' dataset (or any dataset in its layout)")
    parser.add_argument("--quick", action="store_true",
                        help="without a root: a smoke run on the test fixtures written in CM's format (tests/)")
    parser.add_argument("--per-problem", type=int, default=None, help="at most this many buildings per problem")
    parser.add_argument("--method", choices=("hand", "chooser", "both"), default="hand")
    parser.add_argument("--url", default=None, help="the local model server for the chooser (llm serve)")
    parser.add_argument("--timeout", type=float, default=600.0, help="seconds a model call may take")
    parser.add_argument("--rows", type=Path, default=None, help="append a JSON row per instance; a rerun resumes")
    parser.add_argument("--domains", type=Path, default=None, help="take each split's domain file from here")
    parser.add_argument("--splits", nargs="+", default=None)
    parser.add_argument("--rejudge", action="store_true",
                        help="no model: judge the chooser rows already in --rows again (after a change to READINGS "
                             "or to the judge) and print the summary")
    args = parser.parse_args(argv)
    if args.root is None:
        if not args.quick:
            parser.error("give the path of a dataset clone (or --quick for the test fixtures)")
        import tempfile

        sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "tests"))
        from cm_published_fixtures import write_published

        with tempfile.TemporaryDirectory() as tmp:
            write_published(Path(tmp))
            return main([tmp, *(a for a in (argv if argv is not None else sys.argv[1:]) if a != "--quick")])
    from servicerobot.experiments.cm_goals import HandInterpreter

    methods = ("hand", "chooser") if args.method == "both" else (args.method,)
    interpreter = None
    if args.rejudge:
        return _rejudge(args)
    if "chooser" in methods:
        if not args.url:
            print(json.dumps({"skipped": "the chooser needs --url (servicerobot llm serve prints one)"}))
            return 2
        from servicerobot.language.local_server import local_interpreter

        interpreter = local_interpreter(args.url, timeout=args.timeout)
    hand = HandInterpreter(READINGS)
    done: dict[tuple[str, str], dict] = {}
    if args.rows and args.rows.exists():
        for line in args.rows.read_text(encoding="utf-8").splitlines():
            try:
                r = json.loads(line)
                done[(r["key"], r["method"])] = r
            except (ValueError, KeyError):
                continue  # a torn last line from an interrupted run: that instance runs again
    t0 = time.perf_counter()
    rows = []
    for inst in instances(args.root, args.per_problem, args.domains, args.splits):
        for method in methods:
            if (inst.key, method) in done:
                rows.append(done[(inst.key, method)])
                continue
            row = run_one(inst, method, interpreter, hand)
            rows.append(row)
            if args.rows:
                _append(args.rows, row)
            print(json.dumps({"key": inst.key, "method": method, "success": row["success"],
                              "relaxed": row["relaxed"], "agreement": row["agreement"],
                              "failure": row["failure"][:120], "wall_s": row.get("wall_s")}), file=sys.stderr)
    print(json.dumps({"root": str(args.root), "instances": len({r["key"] for r in rows}),
                      "seconds": round(time.perf_counter() - t0, 1), "summary": summary(rows)}))
    return 0


if __name__ == "__main__":
    sys.exit(main())
