"""A Context Matters-style table with free-text tasks: the local model choosing goals in each split's own domain,
next to the offline path. Prints one JSON object (rows per instance with --rows).

The instances are the project's generated Context Matters set (`generate_index(i, 0)`, i < N: six splits in
turn, feasible and infeasible variants, ground truth from what the generator added), written in Context
Matters' exact layout (`<split>.json`, `<split>/<Scene>/problem_k/{Scene.npz, Scene.json, task.txt, init_loc.txt,
description.txt}`) with a CM-style domain file per split (`tests/cm_fixtures.py`'s `SPLIT_DOMAINS`: our own
domains in CM's style, never theirs). Each `task.txt` holds a free-text task written by hand for that instance
(`TASKS` below: varied wording, not the generator's controlled English); the controlled sentence the generator
wrote stays beside it in `controlled_task.txt` (not a CM file: ground truth for the offline row).

Rows of the table (columns: success, acceptable goal, relaxation agreement):
- `chooser, split domain`: `servicerobot.experiments.cm_language.solve_in_split_domain` with the local model's
  `ChoosingInterpreter` (`local_interpreter()`): the free text, the split's domain, Fast Downward, CM's
  planner-decided relaxation;
- `offline, free text`: the offline relaxer (`cm-offline`) on the same free-text task (it reads only the
  controlled English);
- `offline, controlled English`: `cm-offline` on the generator's own sentence (household domain).

    python benchmarks/cm_chooser_table.py --url URL --n 36 --rows rows.jsonl   # URL: `servicerobot llm serve`'s
    python benchmarks/cm_chooser_table.py --n 36                                 # offline rows only
    python benchmarks/cm_chooser_table.py --quick                                # 6 instances, offline only
"""

from __future__ import annotations

import argparse
import json
import sys
import tempfile
import time
from pathlib import Path

# One sentence per generated instance i (generate_index(i, 0)), written by hand from what the instance asks
# (its split, room, count, class and target), in the way a person might say it; Context Matters' own tasks
# are as terse ("set the table for two people").
TASKS = {
    0: "Lay the dining room table for two: plates, forks and glasses.",
    1: "The kitchen is a mess. Get rid of the rubbish and wash up the dirty dishes.",
    2: "Get my workspace in the bedroom ready: laptop onto the desk, a couple of books up on the bookshelf, and "
       "the pen put away in the chest of drawers.",
    3: "There's dirty laundry in the bedroom, please wash it and dry it.",
    4: "I need my PC set up on the bedroom desk - the tower, the screen, keyboard and mouse.",
    5: "Could you take three apples over to the desk in the bedroom?",
    6: "We're two for lunch in the kitchen, please set the table.",
    7: "Tidy up the kitchen: the trash goes in the bin and the dirty dishes need washing.",
    8: "Prepare the bedroom office: put the laptop on the desk, two books on the bookshelf, and the pen goes in "
       "the chest of drawers.",
    9: "Please wash and dry the dirty clothes lying in the bathroom.",
    10: "Put the computer together on the desk in the living room: the computer, its monitor, the keyboard and "
        "the mouse.",
    11: "Bring a couple of apples to the counter in the bedroom.",
    12: "Three people are coming for dinner; get the kitchen table ready for them.",
    13: "Clean the kitchen up: throw out the garbage and do the dirty dishes.",
    14: "Set up a home office in the bedroom. The laptop belongs on the desk, two books on the bookshelf and the "
        "pen in the chest of drawers.",
    15: "The bathroom has dirty clothes in it; get them washed and dried.",
    16: "Assemble the PC in the living room - the computer, monitor, keyboard and mouse all go on the desk.",
    17: "Please carry three books to the coffee table in the bedroom.",
    18: "Set two places at the kitchen table.",
    19: "Could you clean the kitchen? Throw away whatever is trash and wash the dirty dishes.",
    20: "Make the bedroom into an office for me: laptop on the desk, two books onto the bookshelf, pen in the "
        "chest of drawers.",
    21: "Do the laundry from the bedroom, washed and dried please.",
    22: "Set up the computer on the desk in the home office, with the monitor, the keyboard and the mouse.",
    23: "I'd like two apples on the dining table in the bedroom.",
    24: "Set the kitchen table for three, please.",
    25: "Please clear the rubbish out of the kitchen and wash the dishes that are dirty.",
    26: "Organise the bedroom desk: the laptop on the desk, two books on the shelf and a pen in the drawers.",
    27: "Wash the dirty clothes in the bedroom and then dry them.",
    28: "Could you build my computer setup on the bedroom desk? Computer, monitor, keyboard, mouse.",
    29: "Three cups to the bedroom's coffee table, please.",
    30: "Set the kitchen table for dinner, three of us.",
    31: "Take out the trash and wash the dirty dishes in the kitchen.",
    32: "Set up my study in the bedroom: laptop on the desk, three books on the bookshelf and the pen in the "
        "chest of drawers.",
    33: "Please do the laundry in the bedroom: clean and dry the dirty clothes.",
    34: "Put the monitor, keyboard, mouse and the computer on the desk in the bedroom.",
    35: "Put two books on the coffee table in the living room.",
}
CONTROLLED = "controlled_task.txt"


def write(root: Path, n: int) -> list[str]:
    """Instances 0..n-1 in CM's layout under `root` with their free-text tasks and the splits' domains;
    returns the splits written."""
    sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "tests"))
    from cm_fixtures import write_domains

    from servicerobot.envs.context_matters import generate_index, write_split

    if n > len(TASKS):
        raise SystemExit(f"only {len(TASKS)} tasks are written; --n {n} asks for more")
    by_split: dict[str, list] = {}
    for i in range(n):
        inst = generate_index(i, 0)
        by_split.setdefault(inst.split, []).append(inst)
    for split, instances in by_split.items():
        path = write_split(instances, root, split, scene_format="both")
        doc = json.loads(path.read_text())
        for inst in instances:
            free = TASKS[int(inst.problem.rsplit("_", 1)[1])]
            folder = root / split / inst.scene_name / inst.problem
            (folder / CONTROLLED).write_text(inst.task + "\n")
            (folder / "task.txt").write_text(free + "\n")
            doc["problems"][inst.problem]["goal"] = free
        path.write_text(json.dumps(doc, indent=1) + "\n")
    write_domains(root, list(by_split))
    return list(by_split)


def _offline(inst, task: str) -> dict:
    from servicerobot.experiments.cm import score_result, solve

    t0 = time.perf_counter()
    result = solve("cm-offline", inst.world(), task, {})
    cm = score_result(inst, result)
    return {"success": bool(cm["world_success"]), "acceptable_goal": bool(cm["acceptable_goal"]),
            "agreement": cm["agreement"], "relaxed": cm["relaxed"], "failure": cm["failure"][:200],
            "wall_s": round(time.perf_counter() - t0, 2)}


def run(root: Path, url: str | None, rows_path: Path | None, only: set[str] | None = None,
        offline: bool = True, timeout: float = 120.0, budget_s: float | None = None) -> list[dict]:
    from servicerobot.envs.context_matters import read_split, split_names
    from servicerobot.experiments.cm_language import solve_in_split_domain

    interpreter = None
    if url:
        from servicerobot.language.local_server import local_interpreter

        interpreter = local_interpreter(url, timeout=timeout)
        interpreter.budget_s = budget_s
    instances = [inst for split in split_names(root) for inst in read_split(root, split)]
    # split by split: the model server keeps the prompt prefix (the split domain's vocabulary) between calls
    instances.sort(key=lambda inst: (inst.split, int(inst.problem.rsplit("_", 1)[1])))
    rows = []
    for inst in instances:
        if only and inst.key not in only:
            continue
        folder = root / inst.split / inst.scene_name / inst.problem
        controlled = (folder / CONTROLLED).read_text().strip()
        row = {"key": inst.key, "split": inst.split, "variant": inst.variant, "task": inst.task,
               "controlled_task": controlled, "relaxation_expected": inst.relaxation_expected,
               "domain_file": Path(inst.domain_file).name if inst.domain_file else None}
        if offline:
            row.update(offline_controlled=_offline(inst, controlled), offline_free=_offline(inst, inst.task))
        if interpreter is not None:
            calls = len(interpreter.calls)
            row["chooser"] = solve_in_split_domain(inst, interpreter)
            row["chooser"]["scoring_calls"] = interpreter.calls[calls:]
        rows.append(row)
        if rows_path is not None:
            with rows_path.open("a", encoding="utf-8") as fh:
                fh.write(json.dumps(row) + "\n")
        print(json.dumps({"done": len(rows), "key": inst.key, **{k: (row[k]["success"], row[k]["acceptable_goal"])
                                                                for k in ("offline_controlled", "offline_free",
                                                                          "chooser") if k in row}}),
              file=sys.stderr, flush=True)
    return rows


def _wrong_goal_kinds(rows: list[dict]) -> dict:
    """How the chooser's final goals that are not acceptable miss: the right parts but too few of them (a
    proper subset of an acceptable goal), or a part no acceptable goal has (a wrong thing or relation)."""
    from servicerobot.envs.context_matters import generate_index

    kinds: dict[str, int] = {}
    for r in rows:
        c = r.get("chooser")
        if not c or c.get("acceptable_goal") or c.get("failure") or c.get("goal") is None:
            continue
        truth = generate_index(int(r["key"].rsplit("_", 1)[1]), 0).acceptable
        mine = set(c.get("final_goal_household") or [None])
        if c.get("final_goal_household") is None:
            kind = "not a conjunction of literals (a forall)"
        elif None in mine:
            kind = "a part with no household meaning"
        elif any(mine < set(g) for g in truth):
            kind = "right parts, too few"
        else:
            kind = "a wrong thing or relation"
        kinds[kind] = kinds.get(kind, 0) + 1
    return kinds


def summary(rows: list[dict]) -> dict:
    """Per method: success, acceptable goal and relaxation agreement as k/n, plus by split."""
    out = {}
    for method in ("chooser", "offline_free", "offline_controlled"):
        got = [r[method] for r in rows if method in r]
        if not got:
            continue
        # agreement over every instance with relaxation_expected, failed ones included (they did not relax)
        labelled = [(r[method], r["relaxation_expected"]) for r in rows
                    if method in r and r["relaxation_expected"] is not None]
        row = {"n": len(got), "success": sum(bool(g["success"]) for g in got),
               "acceptable_goal": sum(bool(g["acceptable_goal"]) for g in got),
               "agreement": f"{sum(bool(g['relaxed']) == e for g, e in labelled)}/{len(labelled)}",
               "by_split": {}}
        for split in sorted({r["split"] for r in rows}):
            mine = [r[method] for r in rows if method in r and r["split"] == split]
            row["by_split"][split] = (f"{sum(bool(g['success']) for g in mine)}/{len(mine)} success, "
                                      f"{sum(bool(g['acceptable_goal']) for g in mine)}/{len(mine)} acceptable")
        if method == "chooser":
            walls = sorted(g.get("wall_s", 0) for g in got)
            row["wall_s_median"] = walls[len(walls) // 2]
            row["failures"] = {}
            row["wrong_goals"] = _wrong_goal_kinds(rows)
            for g in got:
                kind = (g.get("failure") or "").split(":")[0] or ("wrong goal" if not g["acceptable_goal"] else "")
                if kind:
                    row["failures"][kind] = row["failures"].get(kind, 0) + 1
        out[method] = row
    return out


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--n", type=int, default=36, help="instances (generate_index(i, 0), i < N; at most 36)")
    parser.add_argument("--url", default=None, help="the local model server (`servicerobot llm serve`); "
                        "without it only the offline rows run")
    parser.add_argument("--root", default=None, help="write the instances here (default: a temp dir)")
    parser.add_argument("--rows", default=None, help="append one JSON row per instance to this file as it ends")
    parser.add_argument("--quick", action="store_true", help="6 instances, offline only")
    parser.add_argument("--no-offline", action="store_true", help="only the chooser's rows (needs --url)")
    parser.add_argument("--only", nargs="+", default=None, metavar="KEY", help="only these instances "
                        "(split/Scene/problem_k), e.g. to rerun one whose model call timed out")
    parser.add_argument("--timeout", type=float, default=120.0, help="seconds per model call (default 120)")
    parser.add_argument("--budget-s", type=float, default=None,
                        help="seconds a beam-searched call may take before only its likeliest answer is finished")
    parser.add_argument("--from-rows", nargs="+", default=None, metavar="FILE",
                        help="no run: summarise rows files of earlier runs (rows of one instance merged by key)")
    args = parser.parse_args(argv)
    if args.from_rows:
        merged: dict[str, dict] = {}
        for path in args.from_rows:
            for line in Path(path).read_text(encoding="utf-8").splitlines():
                if line.strip():
                    row = json.loads(line)
                    merged.setdefault(row["key"], {}).update(row)
        rows = list(merged.values())
        print(json.dumps({"instances": len(rows), "summary": summary(rows)}))
        return 0
    n = 6 if args.quick else args.n
    url = None if args.quick else args.url
    with tempfile.TemporaryDirectory() as tmp:
        root = Path(args.root) if args.root else Path(tmp)
        root.mkdir(parents=True, exist_ok=True)
        t0 = time.perf_counter()
        splits = write(root, n)
        rows = run(root, url, Path(args.rows) if args.rows else None, set(args.only) if args.only else None,
                   offline=not args.no_offline, timeout=args.timeout, budget_s=args.budget_s)
        print(json.dumps({"instances": len(rows), "splits": splits, "seconds": round(time.perf_counter() - t0, 1),
                          "summary": summary(rows)}))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
