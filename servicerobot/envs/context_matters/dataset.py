"""Read and write Context Matters' dataset layout, so their instances run here and ours run there.

    <root>/<split>.json                      {"problems": {"problem_k": {"description", "graph": [scenes],
                                               "goal", "objects", "relaxation_expected"}}, "domain": {...}}
    <root>/<split>/<Scene>/problem_k/        <Scene>.json and/or <Scene>.npz (the 3DSG), task.txt,
                                             init_loc.txt, description.txt
                                             (+ acceptable_goals.json: our ground truth, which CM lacks)

A missing or corrupt file raises `SceneError` naming the file and what is wrong with it.
"""

from __future__ import annotations

import json
import os
import re
from pathlib import Path

from servicerobot.envs.context_matters.tasks import CMInstance
from servicerobot.errors import SceneError
from servicerobot.files import write_atomic
from servicerobot.limits import excerpt, read_text_bounded, shorten

__all__ = ["ACCEPTABLE_FILE", "read_split", "split_names", "write_split"]

ACCEPTABLE_FILE = "acceptable_goals.json"
_FORMATS = ("json", "npz", "both")


def _problem_number(name: str) -> tuple[int, str]:
    match = re.search(r"(\d+)$", name)
    return (int(match.group(1)) if match else -1, name)


def write_split(instances: list[CMInstance], root: str | Path, split: str, scene_format: str = "json") -> Path:
    """Write instances as one CM split under `root`; returns the split's JSON path.

    Raises:
        SceneError: an unknown `scene_format`, or two instances with the same scene and problem.
    """
    from servicerobot.scenes.gibson import save_json, save_npz
    from servicerobot.scenes.household import household_domain

    if scene_format not in _FORMATS:
        raise SceneError(f"scene_format must be one of {_FORMATS}, got {scene_format!r}")
    root = Path(root)
    problems: dict[str, dict] = {}
    seen = set()
    for inst in instances:
        key = (inst.scene_name, inst.problem)
        if key in seen:
            raise SceneError(f"two instances are {inst.problem} on scene {inst.scene_name}; problem names must be "
                             "unique per scene")
        seen.add(key)
        entry = problems.setdefault(inst.problem, {"description": inst.description, "graph": [], "goal": inst.task,
                                                   "objects": {}, "relaxation_expected": inst.relaxation_expected})
        if entry["goal"] != inst.task or entry["relaxation_expected"] != inst.relaxation_expected:
            raise SceneError(f"{inst.problem}: instances of one problem must share the goal and "
                             "relaxation_expected (CM's layout stores them once per problem)")
        entry["graph"].append(inst.scene_name)
        folder = root / split / inst.scene_name / inst.problem
        folder.mkdir(parents=True, exist_ok=True)
        if scene_format in ("json", "both"):
            save_json(inst.scene, folder / f"{inst.scene_name}.json")
        if scene_format in ("npz", "both"):
            save_npz(inst.scene, folder / f"{inst.scene_name}.npz")
        write_atomic(folder / "task.txt", inst.task + "\n")
        write_atomic(folder / "init_loc.txt", inst.init_loc + "\n")
        write_atomic(folder / "description.txt", inst.description + "\n")
        if inst.acceptable is not None:
            write_atomic(folder / ACCEPTABLE_FILE, json.dumps({"variant": inst.variant,
                                                               "acceptable_goals": [list(g) for g in inst.acceptable]},
                                                              indent=1) + "\n")
    domain = household_domain()
    doc = {"problems": dict(sorted(problems.items(), key=lambda kv: _problem_number(kv[0]))),
           "domain": {"name": domain.name, "actions": [{"name": a} for a in domain.actions],
                      "objects": [{"type": t} for t in domain.types.parents]}}
    path = root / f"{split}.json"
    write_atomic(path, json.dumps(doc, indent=1) + "\n")
    return path


def split_names(root: str | Path) -> list[str]:
    """The splits of a dataset folder: every `<name>.json` with a `<name>/` folder beside it."""
    root = Path(root)
    return sorted(p.stem for p in root.glob("*.json") if (root / p.stem).is_dir())


# Size caps: a CM task is a sentence, an init_loc a room label; the caps are far above both.
MAX_TEXT_BYTES = {"task.txt": 64 << 10, "init_loc.txt": 4 << 10, "description.txt": 256 << 10}
MAX_SPLIT_BYTES = 64 << 20  # <split>.json
MAX_ACCEPTABLE_BYTES = 16 << 20  # acceptable_goals.json
_NAME = re.compile(r"(?!\.\.?$)[A-Za-z0-9_.-]{1,128}")  # a scene or problem: one path component


def _read_text(path: Path) -> str:
    try:
        text = read_text_bounded(path, MAX_TEXT_BYTES[path.name], path.name, SceneError).strip()
    except FileNotFoundError:
        raise SceneError(f"{path}: missing; every CM instance folder needs task.txt and init_loc.txt") from None
    if not text:
        raise SceneError(f"{path}: the file is empty")
    return text


def _read_json(path: Path, cap: int, what: str):
    """A JSON file read within `cap` bytes; a bad one raises `SceneError` quoting a short excerpt."""
    text = read_text_bounded(path, cap, what, SceneError)
    try:
        return json.loads(text)
    except json.JSONDecodeError as exc:
        raise SceneError(f"{path}: not a readable JSON {what}: {shorten(str(exc))}") from None
    except RecursionError:
        raise SceneError(f"{path}: the {what} is nested too deeply") from None


def read_split(root: str | Path, split: str, similarity=None) -> list[CMInstance]:
    """Every instance of one split, problem by problem (CM's order), scene by scene.

    A problem without `relaxation_expected` (CM's pc_assembly) loads with it None: such instances are not
    scored on relaxation agreement. An instance folder holding both `<Scene>.npz` and `<Scene>.json` is read
    from both (the `.npz`'s geometry, the `.json`'s text: `servicerobot.scenes.real_3dsg.load_scene`); each
    instance's `scene.report` says what the loader did, object by object, and `instance.task_classes` holds
    the classes the split entry's `objects` names (for `task_object_coverage`). `similarity` types classes
    whose words do not decide (`servicerobot.scenes.open_vocab.type_class`; e.g. `EmbeddingSimilarity()`).

    When the dataset ships the split's own PDDL domain (CM's `dining-setup-domain.pddl` beside the split file,
    or a domain file in the split folder: `cm_domain.find_domain_file`), every instance's `domain_file` names
    it (parsed only when used: `instance.split_domain()`, `instance.domain_world()`).

    Raises:
        SceneError: the split file or an instance file is missing or corrupt (the message names it).
    """
    from servicerobot.envs.context_matters.cm_domain import find_domain_file
    from servicerobot.scenes.gibson import load_3dsg
    from servicerobot.scenes.real_3dsg import split_task_classes

    root = Path(root)
    path = root / f"{split}.json"
    try:
        doc = _read_json(path, MAX_SPLIT_BYTES, "split file")
    except FileNotFoundError:
        known = split_names(root) if root.is_dir() else []
        raise SceneError(f"{path}: no such split file; splits in {root}: {known or 'none'}") from None
    if not isinstance(doc, dict) or not isinstance(doc.get("problems"), dict):
        raise SceneError(f"{path}: a CM split file is an object with a 'problems' mapping")
    domain_path = find_domain_file(root, split)
    out = []
    for name in doc["problems"]:  # before sorting by their numbers
        if not _NAME.fullmatch(name):
            raise SceneError(f"{path} problems.{excerpt(name, 40)}: not a problem name (letters, digits, '_', '-' "
                             "and '.', at most 128 characters)")
    for name, entry in sorted(doc["problems"].items(), key=lambda kv: _problem_number(kv[0])):
        where = f"{path} problems.{name}"
        if not isinstance(entry, dict) or not isinstance(entry.get("graph"), list) or not entry["graph"]:
            raise SceneError(f"{where}: needs a non-empty 'graph' list of scene names")
        expected = entry.get("relaxation_expected")
        if expected is not None and not isinstance(expected, bool):
            raise SceneError(f"{where}: 'relaxation_expected' must be true, false or absent, got "
                             f"{excerpt(expected)}")
        task_classes = tuple(sorted(split_task_classes(entry.get("objects"))))
        for scene in entry["graph"]:
            if not isinstance(scene, str) or not _NAME.fullmatch(scene):
                raise SceneError(f"{where}: 'graph' lists {excerpt(scene)}, not a scene name (letters, digits, "
                                 "'_', '-' and '.', at most 128 characters)")
            instance = _read_instance(root / split / str(scene) / name, split, name, str(scene), expected,
                                      str(entry.get("description", "")), load_3dsg, similarity)
            instance.task_classes = task_classes
            instance.domain_file = str(domain_path) if domain_path is not None else None
            out.append(instance)
    return out


def _read_instance(folder: Path, split: str, problem: str, scene: str, expected: bool | None, description: str,
                   load_3dsg, similarity=None) -> CMInstance:
    from servicerobot.scenes.real_3dsg import load_scene

    if not folder.is_dir():
        raise SceneError(f"{folder}: instance folder missing (the split file lists scene {scene} for {problem})")
    candidates = [folder / f"{scene}.json", folder / f"{scene}.npz"]
    present = [p for p in candidates if os.path.lexists(p)]  # the loaders refuse a non-file
    if not present:
        raise SceneError(f"{folder}: no scene graph; expected {candidates[0].name} or {candidates[1].name}")
    scene_path = present[-1]  # the .npz when there is one: it has the real geometry
    try:
        sg = load_scene(present[::-1], similarity) if len(present) == 2 else load_3dsg(scene_path, similarity)
    except SceneError as exc:
        if str(scene_path) in str(exc):
            raise
        raise SceneError(f"{scene_path}: {exc}") from exc
    sg.name = scene
    task = _read_text(folder / "task.txt")
    init_loc = _read_text(folder / "init_loc.txt")
    labels = {r.label for r in sg.rooms.values()}
    if init_loc not in labels:
        raise SceneError(f"{folder / 'init_loc.txt'}: {excerpt(init_loc)} is not a room of {scene_path.name}; "
                         f"rooms are {excerpt(sorted(labels))}")
    desc_path = folder / "description.txt"
    if os.path.lexists(desc_path):
        description = _read_text(desc_path)
    acceptable, variant = None, ""
    acc_path = folder / ACCEPTABLE_FILE
    if os.path.lexists(acc_path):
        data = _read_json(acc_path, MAX_ACCEPTABLE_BYTES, "list of acceptable goals")
        try:
            acceptable = tuple(tuple(str(x) for x in goal) for goal in data["acceptable_goals"])
            variant = str(data.get("variant", ""))
        except (AttributeError, KeyError, TypeError) as exc:
            raise SceneError(f"{acc_path}: not a list of acceptable goals ({shorten(str(exc))})") from exc
    return CMInstance(split, problem, sg, task, init_loc, description, expected, acceptable, variant)
