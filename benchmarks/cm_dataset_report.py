"""What the loader makes of a Context Matters dataset folder: per split, instances loaded, room-less objects
placed or refused, unlabelled objects, room categories outside the table, how classes were typed, task-object
coverage with every dropped object and its reason, floors and their stairs, the prior's size against the
observation space, and, for a split that ships its own PDDL domain, the scene written in it (every class's type
in that domain and why, objects refused with their reasons, which predicate played which part, the domain's
warnings when it is ill-typed as written). Prints one JSON object.

    python benchmarks/cm_dataset_report.py PATH     # a dataset in CM's layout (e.g. their published one)
    python benchmarks/cm_dataset_report.py          # the test fixtures (tests/cm_fixtures.py), in a temp dir
                                                    # (--fixtures says so; --quick, which bench passes, too)
"""

from __future__ import annotations

import argparse
import json
import sys
import tempfile
import time
from collections import Counter
from pathlib import Path


def report(root: Path) -> dict:
    import numpy as np

    from servicerobot.envs.context_matters import read_split, split_names
    from servicerobot.errors import SceneError
    from servicerobot.scenes.gibson import GibsonScenes, to_household_scene
    from servicerobot.scenes.gibson_classes import class_key
    from servicerobot.scenes.real_3dsg import prior_chars

    out: dict = {"root": str(root), "splits": {}}
    typed = total = 0
    dropped: list[dict] = []
    hows: Counter = Counter()
    t0 = time.perf_counter()
    for split in split_names(root):
        row: dict = {}
        try:
            instances = read_split(root, split)
        except SceneError as error:
            out["splits"][split] = {"error": str(error)}
            continue
        row["instances"] = len(instances)
        row["relaxation_expected_absent"] = sum(i.relaxation_expected is None for i in instances)
        placed = refused = unlabelled = 0
        unknown_rooms: Counter = Counter()
        cross_floor, stairs, worlds = 0, 0, 0
        for inst in instances:
            rep = inst.scene.report
            placed += len(rep.placed)
            refused += len(rep.refused)
            unlabelled += len(rep.unlabelled)
            for cat, labels in rep.unknown_room_categories.items():
                unknown_rooms[cat] += len(labels)
            cov = inst.coverage()
            typed, total = typed + cov["typed"], total + cov["objects"]
            dropped += [dict(d, instance=inst.key) for d in cov["dropped"]]
            for t in rep.typing.values():
                hows[t.how] += 1
            world = inst.world()
            worlds += 1
            floor = {world_room: inst.scene.rooms[rid].floor for world_room, (kind, rid) in
                     to_household_scene(inst.scene.copy(), np.random.default_rng(0), 1).node_of.items()
                     if kind == "room"}
            cross_floor += sum(a.predicate == "connected" and floor[a.args[0]] != floor[a.args[1]] for a in world.init)
            stairs += 2 * len(rep.stairs)
        row.update(placed_by_position=placed, refused=refused, unlabelled=unlabelled,
                   unknown_room_categories=dict(unknown_rooms), worlds_built=worlds,
                   cross_floor_connections=cross_floor, stair_connections=stairs)
        scenes = {i.scene_name: i.scene for i in instances}
        sizes = {}
        for name, sg in scenes.items():
            source = GibsonScenes(sg, n_people=4)
            n = source.max_entities
            sizes[name] = {"prior_chars": prior_chars(to_household_scene(sg.copy(), np.random.default_rng(0), 4)),
                           "old_bound": 8192 + 400 * n, "space": max(8192 + 400 * n, source.max_prior_chars)}
        row["prior"] = sizes
        row["domain_file"] = instances[0].domain_file and Path(instances[0].domain_file).name
        if instances[0].domain_file:  # the split ships its own domain: the scene written in it, per instance
            try:
                worlds_in = [inst.domain_world() for inst in instances]
            except SceneError as error:
                row["domain_world"] = {"error": str(error)}
            else:
                reasons: Counter = Counter(r for dw in worlds_in for r in dw.refused.values())
                task_in = task_all = 0
                for inst, dw in zip(instances, worlds_in):  # task objects in PDDL: do they get a type here too?
                    world, classes = inst.world(), set(inst.task_classes)
                    mine = [o.label for o in world.objects.values() if o.label in world.pddl_objects
                            and (o.class_ in classes or class_key(o.class_) in classes)]
                    task_all += len(mine)
                    task_in += sum(label in dw.objects for label in mine)
                classes: dict[str, dict] = {}
                for dw in worlds_in:  # every class of the split, once, with its type in the split domain and why
                    for class_, entry in dw.class_typing.items():
                        classes.setdefault(class_, entry)
                row["domain_world"] = {
                    "domain": worlds_in[0].domain.name, "roles": worlds_in[0].roles,
                    "warnings": list(worlds_in[0].domain.warnings),
                    "class_typing": dict(sorted(classes.items())),
                    "typed": sum(len(dw.objects) - len(dw.rooms) - 1 for dw in worlds_in),
                    "refused": sum(len(dw.refused) for dw in worlds_in),
                    "refused_reasons": dict(reasons.most_common(5)),
                    "task_objects_typed": f"{task_in}/{task_all}"}
        out["splits"][split] = row
    out["task_objects"] = {"typed": typed, "total": total, "share": round(typed / total, 4) if total else None,
                           "dropped": dropped}
    out["class_typing"] = dict(hows)
    out["seconds"] = round(time.perf_counter() - t0, 2)
    return out


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("path", nargs="?")
    parser.add_argument("--fixtures", action="store_true", help="write and read the test fixtures (the default)")
    parser.add_argument("--quick", action="store_true", help="the same: the fixtures are small")
    args = parser.parse_args()
    if args.fixtures or args.quick or not args.path:
        sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
        from tests.cm_fixtures import write_dataset, write_domains

        with tempfile.TemporaryDirectory() as tmp:
            write_dataset(Path(tmp))
            write_domains(Path(tmp))
            print(json.dumps(report(Path(tmp))))
        return
    print(json.dumps(report(Path(args.path))))


if __name__ == "__main__":
    main()
