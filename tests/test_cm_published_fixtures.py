"""Context Matters as *published*, on fixtures written here in its format (`cm_published_fixtures`): split
domains found under every name CM has used; an ill-typed domain read as Fast Downward reads it (a warning
naming file and line) and planned in; scene classes typed into the split domain's own types by meaning
(rubbish -> `disposable`, detergent -> `cleaning-supply`, a shirt -> `cleanable`, a locker -> `movable`); the
initial facts the domain needs that the scene says in words (`dirty_shirt`, a floor to mop, `book into the
shelf`); and the house-cleaning and laundry actions actually applying in a plan that executes."""

from __future__ import annotations

import json
import os
import threading
import time
from pathlib import Path

import pytest
from cm_fixtures import SPLIT_DOMAINS
from cm_published_fixtures import (
    CLEANING,
    CLEANING_DOMAIN,
    LAUNDRY,
    LAUNDRY_DOMAIN,
    OFFICE_DOMAIN,
    OFFICE_ILL_TYPED_LINE,
    SPLITS,
    office_problems,
    write_published,
    write_split_dataset,
)

from servicerobot.envs.context_matters import read_split
from servicerobot.envs.context_matters.cm_domain import find_domain_file, load_split_domain
from servicerobot.errors import PDDLError, SceneError
from servicerobot.pddl import parse_domain
from servicerobot.scenes.gibson_classes import class_key


@pytest.fixture(scope="module")
def fast_downward():
    from servicerobot.errors import PlannerError
    from servicerobot.planners import get_planner
    from servicerobot.planners.fast_downward import driver_path

    try:
        driver_path()
    except PlannerError as error:
        pytest.skip(f"Fast Downward is not installed: {error}")
    with get_planner("fast-downward", timeout=60) as planner:
        yield planner


def _plan_and_run(planner, dw, goal: str) -> tuple[str, ...]:
    """Plan `goal` in the instance's split domain, run the plan on the scene's facts, check the goal holds at
    the end and did not at the start; returns the plan."""
    assert not dw.holds(goal, dw.init), "the goal already holds at the start: the test would prove nothing"
    result = planner.solve(dw.domain, dw.problem_text(goal))
    assert result.solved, (result.status, result.message)
    done, state, why = dw.execute(result.plan)
    assert why == "" and done == len(result.plan), why
    assert dw.holds(goal, state)
    return result.plan


def _steps(plan, action: str) -> list[list[str]]:
    return [step.strip("()").split()[1:] for step in plan if step.strip("()").split()[0] == action]


def _of_class(inst, class_: str) -> list[str]:
    """The scene objects of one class (CM's class key) that the split domain typed, sorted."""
    dw = inst.domain_world()
    return sorted(n for n, o in inst.world().objects.items() if o.class_ == class_ and n in dw.objects)


def _facts(dw, predicate: str) -> set[tuple[str, ...]]:
    return {a.args for a in dw.init if a.predicate == predicate}


def _within(seconds: float, fn, *args, fifos=()):
    """fn(*args) in a thread; (returned, raised) or a test failure if it is still running after `seconds`
    (a FIFO it waits on is then opened for writing so that the thread can end)."""
    box: dict = {}

    def run():
        try:
            box["value"] = fn(*args)
        except BaseException as error:  # noqa: BLE001 - handed to the test
            box["error"] = error

    thread = threading.Thread(target=run, daemon=True)
    start = time.monotonic()
    thread.start()
    thread.join(seconds)
    if thread.is_alive():
        for fifo in fifos:
            try:
                os.close(os.open(fifo, os.O_WRONLY | os.O_NONBLOCK))
            except OSError:
                pass
        pytest.fail(f"{getattr(fn, '__name__', fn)}{args} still running after {seconds} s (blocked on a FIFO?)")
    return box.get("value"), box.get("error"), time.monotonic() - start


# --- 1. an ill-typed split domain, read as Fast Downward reads it ------------------------------------------


def test_an_ill_typed_split_domain_warns_with_file_and_line_and_strict_refuses(tmp_path):
    paths = write_published(tmp_path, ["office_setup"])
    path = find_domain_file(tmp_path, "office_setup")
    assert path == paths["office_setup"] == tmp_path / "office-setup-domain.pddl"
    with pytest.raises(PDDLError):  # our own reading stays strict by default
        parse_domain(OFFICE_DOMAIN)
    domain = load_split_domain(path)
    assert domain.name == "office-rearrange" and "take-out" in domain.actions
    [warning] = domain.warnings
    assert warning.startswith(f"{path}:{OFFICE_ILL_TYPED_LINE}:"), warning
    assert "take-out" in warning and "is-empty" in warning and "movable" in warning and "grabbable" in warning
    with pytest.raises(SceneError, match="office-setup-domain.pddl"):
        load_split_domain(path, strict=True)
    # the instance's own domain carries the warning too
    inst = read_split(tmp_path, "office_setup")[0]
    assert inst.domain_file == str(path) and inst.domain_world().domain.warnings == domain.warnings


def test_an_instance_plans_and_executes_in_the_ill_typed_domain(tmp_path, fast_downward):
    write_published(tmp_path, ["office_setup"])
    inst = read_split(tmp_path, "office_setup")[0]
    dw = inst.domain_world()
    assert dw.domain.warnings
    [book] = _of_class(inst, "book_into_the_shelf")
    [shelf] = _of_class(inst, "shelf")
    [desk] = _of_class(inst, "desk")
    target = next(r for r, c in dw.rooms.items() if c == "bedroom")
    assert dw.room_of[desk] != target
    plan = _plan_and_run(fast_downward, dw, f"(and (in-room {book} {target}) (in-room {desk} {target}))")
    assert [book, shelf] == _steps(plan, "take-out")[0][1:3]  # the action with the ill-typed effect applied
    assert _steps(plan, "shove") and _steps(plan, "shove")[0][1] == desk


# --- 2. domain files under every name CM has used; paths that are not files ---------------------------------


def _general_split(root: Path) -> None:
    write_split_dataset(root, "general", CLEANING)


@pytest.mark.parametrize("split, place, text", [
    ("general", "general.pddl", SPLIT_DOMAINS["general"]),  # beside general.json
    ("house_cleaning", "house-cleaning-domain.pddl", CLEANING_DOMAIN),
    ("laundry", "laundry/laundry-domain.pddl", LAUNDRY_DOMAIN),  # in the split folder
    ("laundry", "laundry/domain.pddl", LAUNDRY_DOMAIN),
    # found only by its (domain NAME): the file name says nothing
    ("office_setup", "rearrange-v2.pddl", OFFICE_DOMAIN.replace("(domain office-rearrange)",
                                                                "(domain office-setup-domain)")),
    ("office_setup", "office_setup/tidy.pddl", OFFICE_DOMAIN.replace("(domain office-rearrange)",
                                                                     "(domain office_setup)")),
])
def test_domain_files_are_found_under_every_name_cm_used(tmp_path, split, place, text):
    if split == "general":
        _general_split(tmp_path)
    else:
        write_split_dataset(tmp_path, split, SPLITS[split][0])
    # decoys: a problem file that names the split as its (:domain ...), a domain of another split, a text
    # file; each sorts before the real one
    (tmp_path / "0-problem.pddl").write_text(f"(define (problem p) (:domain {split.replace('_', '-')}-domain))")
    (tmp_path / "00-other.pddl").write_text(SPLIT_DOMAINS["pc_assembly"].replace(
        "(domain desk-assembly)", "(domain pc-assembly-domain)"))
    (tmp_path / split / "0-notes.pddl").write_text(";; (domain is described elsewhere)\n")
    path = tmp_path / place
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text)
    assert find_domain_file(tmp_path, split) == path
    insts = read_split(tmp_path, split)
    assert insts and all(i.domain_file == str(path) for i in insts)
    dw = insts[0].domain_world()
    assert dw.objects and dw.init
    assert find_domain_file(tmp_path, "dining_setup") is None  # no domain of that split


def test_a_path_that_is_not_a_domain_file_is_refused_at_once(tmp_path):
    cases = {"a folder": tmp_path / "folder-domain.pddl"}
    cases["a folder"].mkdir()
    loop = tmp_path / "loop-domain.pddl"
    os.symlink(loop, loop)
    cases["a symlink loop"] = loop
    big = tmp_path / "big-domain.pddl"
    with open(big, "wb") as fh:  # sparse: 64 MiB that take no disk and must not be read
        fh.truncate(64 << 20)
    cases["a huge file"] = big
    cases["a missing file"] = tmp_path / "missing-domain.pddl"
    fifos = []
    if hasattr(os, "mkfifo"):
        fifo = tmp_path / "fifo-domain.pddl"
        os.mkfifo(fifo)
        fifos.append(fifo)
        cases["a FIFO"] = fifo
    if os.path.exists("/dev/zero"):
        cases["/dev/zero"] = Path("/dev/zero")
        zero = tmp_path / "zero-domain.pddl"
        os.symlink("/dev/zero", zero)
        cases["a link to /dev/zero"] = zero
    for what, path in cases.items():
        value, error, took = _within(5.0, load_split_domain, path, fifos=fifos)
        assert isinstance(error, SceneError), (what, value, error)
        assert str(path) in str(error), (what, str(error))
        assert took < 2.0, (what, took)
    if not fifos:
        pytest.skip("no os.mkfifo here: the FIFO case was not run")


def test_find_domain_file_never_blocks_on_a_fifo_or_a_device(tmp_path):
    if not hasattr(os, "mkfifo"):
        pytest.skip("no os.mkfifo here")
    write_split_dataset(tmp_path, "laundry", LAUNDRY)
    fifos = [tmp_path / "laundry-domain.pddl", tmp_path / "laundry" / "domain.pddl", tmp_path / "a.pddl",
             tmp_path / "laundry" / "b.pddl"]
    for fifo in fifos:  # named like its domain, and .pddl files the (domain NAME) search would open
        os.mkfifo(fifo)
    if os.path.exists("/dev/zero"):
        os.symlink("/dev/zero", tmp_path / "laundry.pddl")
    value, error, _ = _within(5.0, find_domain_file, tmp_path, "laundry", fifos=fifos)
    assert error is None and value is None
    real = tmp_path / "laundry" / "wash.pddl"
    real.write_text(LAUNDRY_DOMAIN.replace("(domain wash-clothes)", "(domain laundry-domain)"))
    value, error, _ = _within(5.0, find_domain_file, tmp_path, "laundry", fifos=fifos)
    assert error is None and value == real
    value, error, _ = _within(5.0, read_split, tmp_path, "laundry", fifos=fifos)
    assert error is None and value[0].domain_file == str(real)


# --- 3. house cleaning: rubbish typed disposable, the floors to mop dirty, throw-away and mop apply ---------


def test_house_cleaning_types_rubbish_and_mop_and_dirties_the_floors_to_mop(tmp_path):
    write_published(tmp_path, ["house_cleaning"])
    inst = read_split(tmp_path, "house_cleaning")[0]
    dw = inst.domain_world()
    report = dw.class_typing
    for rubbish in ("cola_can", "banana_peel", "rotting_apple"):
        assert report[rubbish]["type"] == "disposable", (rubbish, report[rubbish])
        assert report[rubbish]["why"]
        assert all(dw.objects[n] == "disposable" for n in _of_class(inst, rubbish))
    assert report["mop"]["type"] == "mop" and report["rubbish_bin"]["type"] == "bin"
    mopped = {r for r, c in dw.rooms.items() if c in ("kitchen", "living_room")}
    assert len(mopped) == 2 and len(dw.rooms) == 5
    # the task names the bathroom too, but not as a floor to mop
    assert {a for (a,) in _facts(dw, "floor-dirty")} == mopped
    assert {a for (a,) in _facts(dw, "floor-clean")} == set(dw.rooms) - mopped
    [mop] = _of_class(inst, "mop")
    assert (mop,) in _facts(dw, "mop-clean") and (mop,) not in _facts(dw, "mop-soiled")


def test_house_cleaning_goal_plans_and_executes(tmp_path, fast_downward):
    write_published(tmp_path, ["house_cleaning"])
    inst = read_split(tmp_path, "house_cleaning")[0]
    dw = inst.domain_world()
    rubbish = [n for c in ("cola_can", "banana_peel", "rotting_apple") for n in _of_class(inst, c)]
    assert len(rubbish) == 3
    [mop] = _of_class(inst, "mop")
    floors = sorted(r for r, c in dw.rooms.items() if c in ("kitchen", "living_room"))
    goal = ("(and " + " ".join(f"(binned {n})" for n in rubbish) + " "
            + " ".join(f"(floor-clean {r})" for r in floors) + f" (mop-clean {mop}))")
    plan = _plan_and_run(fast_downward, dw, goal)
    assert sorted(s[1] for s in _steps(plan, "throw-out")) == sorted(rubbish)
    assert sorted(s[2] for s in _steps(plan, "mop-floor")) == floors
    assert _steps(plan, "rinse-mop")


# --- 4. laundry: supplies and clothes typed, dirty_shirt dirty, the machine closed and empty ----------------


def test_laundry_types_supplies_and_clothes_and_starts_the_machine_closed_and_empty(tmp_path):
    write_published(tmp_path, ["laundry"])
    inst = read_split(tmp_path, "laundry")[0]
    dw = inst.domain_world()
    report = dw.class_typing
    for supply in ("detergent", "dish_soap"):
        assert report[supply]["type"] == "cleaning-supply" and report[supply]["why"], (supply, report[supply])
    for cloth in ("shirt", "dirty_shirt"):
        assert report[cloth]["type"] == "cleanable" and report[cloth]["why"], (cloth, report[cloth])
    assert report["washing_machine"]["type"] == "washing-machine"
    dirty, clean = _of_class(inst, "dirty_shirt"), _of_class(inst, "shirt")
    assert len(dirty) == 2 and len(clean) == 1
    assert {(n,) for n in dirty} <= _facts(dw, "is-dirty") and not {(n,) for n in dirty} & _facts(dw, "is-clean")
    assert (clean[0],) in _facts(dw, "is-clean") and (clean[0],) not in _facts(dw, "is-dirty")
    [machine] = _of_class(inst, "washing_machine")
    assert (machine,) in _facts(dw, "is-closed") and (machine,) in _facts(dw, "is-empty")
    assert (machine,) not in _facts(dw, "is-open") and not _facts(dw, "topped-up")


def test_laundry_every_dirty_shirt_clean_plans_and_executes(tmp_path, fast_downward):
    write_published(tmp_path, ["laundry"])
    inst = read_split(tmp_path, "laundry")[0]
    dw = inst.domain_world()
    dirty = _of_class(inst, "dirty_shirt")
    plan = _plan_and_run(fast_downward, dw, "(and " + " ".join(f"(is-clean {n})" for n in dirty) + ")")
    supplies = set(_of_class(inst, "detergent") + _of_class(inst, "dish_soap"))
    assert _steps(plan, "refill") and all(s[2] in supplies for s in _steps(plan, "refill"))
    assert sorted(s[1] for s in _steps(plan, "wash")) == dirty
    assert _steps(plan, "open-door") and _steps(plan, "close-door") and len(_steps(plan, "put-inside")) >= 2


# --- 5. office: what the class says is inside starts inside, furniture is movable, empty ones empty ----------


@pytest.mark.parametrize("into", [" into the ", "_into_the_"])
def test_office_things_start_inside_their_furniture(tmp_path, into):
    write_split_dataset(tmp_path, "office_setup", office_problems(into))
    (tmp_path / "office-setup-domain.pddl").write_text(OFFICE_DOMAIN)
    scene = tmp_path / "office_setup" / "Harrowgate" / "problem_1" / "Harrowgate.json"
    assert f"book{into}shelf" in {o["class"] for o in json.loads(scene.read_text())["objects"].values()}
    full, locker_empty = read_split(tmp_path, "office_setup")
    dw = full.domain_world()
    for furniture in ("desk", "shelf", "locker"):
        assert dw.class_typing[furniture]["type"] == "movable", (furniture, dw.class_typing[furniture])
    [book], [laptop] = _of_class(full, "book_into_the_shelf"), _of_class(full, "laptop_into_the_locker")
    [shelf], [locker], [desk] = _of_class(full, "shelf"), _of_class(full, "locker"), _of_class(full, "desk")
    assert dw.objects[book] == dw.objects[laptop] == "grabbable"
    assert _facts(dw, "stored-in") == {(book, shelf), (laptop, locker)}
    located = {a[0] for a in _facts(dw, "in-room")}
    assert book not in located and laptop not in located  # inside, not lying in a room
    assert {shelf, locker, desk} <= located
    empty = {a for (a,) in _facts(dw, "is-empty")}
    assert desk in empty and shelf not in empty and locker not in empty
    assert empty <= {n for n, t in dw.objects.items() if t == "movable"}
    dw2 = locker_empty.domain_world()  # problem_2: nothing in the locker
    empty2 = {a for (a,) in _facts(dw2, "is-empty")}
    assert locker in empty2 and shelf not in empty2 and desk in empty2
    assert not _of_class(locker_empty, "laptop_into_the_locker")


# --- 6. the load report: every class of every instance, typed or refused, with why -------------------------


def _all_instances(root: Path) -> list:
    write_published(root)
    office2 = root / "spaced"
    write_split_dataset(office2, "office_setup", office_problems("_into_the_"))
    (office2 / "office-setup-domain.pddl").write_text(OFFICE_DOMAIN)
    return [i for s in SPLITS for i in read_split(root, s)] + read_split(office2, "office_setup")


def test_the_load_report_covers_every_class_with_why(tmp_path):
    missing = []
    for inst in _all_instances(tmp_path):
        dw = inst.domain_world()
        world = inst.world()
        classes = {o.class_ for o in world.objects.values() if o.class_}
        classes |= {class_key(c) for c in inst.task_classes}
        where = f"{inst.split}/{inst.scene_name}/{inst.problem}"
        for class_ in sorted(classes):
            entry = dw.class_typing.get(class_)
            if entry is None:
                missing.append(f"{where}: {class_}")
                continue
            assert isinstance(entry.get("why"), str) and entry["why"].strip(), (where, class_, entry)
            names = [n for n, o in world.objects.items() if o.class_ == class_]
            if entry["type"] is None:
                assert all(n in dw.refused and n not in dw.objects for n in names), (where, class_)
            else:
                assert entry["type"] in dw.domain.types.types
                assert all(dw.objects.get(n) == entry["type"] for n in names), (where, class_, entry)
    assert not missing, "classes with no entry in the load report (neither typed nor refused):\n" + "\n".join(
        missing)


def test_a_scoring_model_chooses_an_items_type_among_those_that_fit(tmp_path):
    """With a language model, the type of an item among the fitting ones is the one it finds likeliest for
    "A cola can is a kind of ..."; one that fails leaves the lexical choice."""
    from types import SimpleNamespace

    from servicerobot.envs.context_matters.cm_domain import domain_world

    write_published(tmp_path, ["house_cleaning"])
    inst = read_split(tmp_path, "house_cleaning")[0]

    class Prefers:
        def __init__(self, word):
            self.word, self.asked = word, []

        def score(self, messages, answers):
            self.asked.append(answers)
            return SimpleNamespace(logprobs=[[-1.0] if self.word in a else [-9.0] for a in answers])

    model = Prefers("grabbable")
    dw = domain_world(inst.world(), inst.split_domain(), inst.task, scorer=model)
    assert dw.class_typing["cola_can"]["type"] == "grabbable" and dw.class_typing["cola_can"]["how"] == "model"
    assert any("A cola can is a kind of disposable." in answers for answers in model.asked)
    assert dw.class_typing["mop"]["how"] == "words"  # a type named by the class's own words needs no model

    class Broken:
        def score(self, messages, answers):
            raise RuntimeError("the server went away")

    dw = domain_world(inst.world(), inst.split_domain(), inst.task, scorer=Broken())
    assert dw.class_typing["cola_can"]["type"] == "disposable" and dw.class_typing["cola_can"]["how"] == "meaning"
