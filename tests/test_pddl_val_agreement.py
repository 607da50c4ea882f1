"""Our `validate_plan` must agree with VAL on Fast Downward plans and on mutated (mostly invalid) copies.

Problems: seeded random household problems and blocksworld problems. Each solved plan is checked as is
and after mutations (drop / swap / duplicate a step, change an argument, truncate, reverse, ...).
"""

from __future__ import annotations

from concurrent.futures import ThreadPoolExecutor
from itertools import pairwise

import numpy as np
import pytest

from servicerobot.pddl import (
    Interpreter,
    parse_domain,
    parse_problem,
    val_validate,
    validate_plan,
    write_domain,
    write_problem,
)
from servicerobot.planners import FastDownward
from servicerobot.scenes import household_domain_text

# The shipped domain as is: VAL must accept it (it type-checks `(closed ?c)` in take-out and put-in).
HOUSEHOLD_FOR_VAL = household_domain_text()

BLOCKSWORLD = """
(define (domain blocksworld)
  (:requirements :strips :typing)
  (:types block)
  (:predicates (on ?x - block ?y - block) (ontable ?x - block) (clear ?x - block) (handempty)
               (holding ?x - block))
  (:action pick-up :parameters (?x - block)
    :precondition (and (clear ?x) (ontable ?x) (handempty))
    :effect (and (not (ontable ?x)) (not (clear ?x)) (not (handempty)) (holding ?x)))
  (:action put-down :parameters (?x - block)
    :precondition (holding ?x)
    :effect (and (not (holding ?x)) (clear ?x) (handempty) (ontable ?x)))
  (:action stack :parameters (?x - block ?y - block)
    :precondition (and (holding ?x) (clear ?y))
    :effect (and (not (holding ?x)) (not (clear ?y)) (clear ?x) (handempty) (on ?x ?y)))
  (:action unstack :parameters (?x - block ?y - block)
    :precondition (and (on ?x ?y) (clear ?x) (handempty))
    :effect (and (holding ?x) (clear ?y) (not (clear ?x)) (not (handempty)) (not (on ?x ?y)))))
"""


def household_problem(rng: np.random.Generator, index: int) -> str:
    """A small random household problem with 1-3 goal conditions (quantified ones included)."""
    rooms = ["kitchen", "hall", "bedroom"][: int(rng.integers(2, 4))]
    objects = {room: "room" for room in rooms}
    init = [f"(connected {a} {b})" for a, b in pairwise(rooms)]
    init += [f"(connected {b} {a})" for a, b in pairwise(rooms)]
    objects["robot1"] = "robot"
    init += [f"(in-room robot1 {rng.choice(rooms)})", "(hand-empty robot1)"]
    tables = []
    for room in rooms:
        tables.append(f"table_{room}")
        objects[f"table_{room}"] = "surface"
        objects[f"lamp_{room}"] = "light"
        init += [f"(in-room table_{room} {room})", f"(in-room lamp_{room} {room})"]
        if rng.random() < 0.5:
            init.append(f"(light-on lamp_{room})")
    fixtures = {"fridge1": "fridge", "sink1": "sink", "washer1": "washer", "bed1": "bed", "bin1": "trashcan"}
    for name, typ in fixtures.items():
        objects[name] = typ
        init.append(f"(in-room {name} {'kitchen' if typ in ('fridge', 'sink') else rng.choice(rooms)})")
    init += ["(chills fridge1)", "(closed washer1)"] + (["(closed fridge1)"] if rng.random() < 0.7 else [])
    objects["alice"] = "person"
    init.append(f"(in-room alice {rng.choice(rooms)})")
    items = []
    for i, typ in enumerate(rng.choice(["dish", "food", "clothing", "book"], size=int(rng.integers(2, 5)))):
        name = f"{typ}{i}"
        items.append((name, str(typ)))
        objects[name] = str(typ)
        init.append(f"(on {name} {rng.choice(tables)})")
        if typ in ("dish", "clothing") and rng.random() < 0.7:
            init.append(f"(dirty {name})")
    goals = []
    for name, typ in items:
        options = [
            f"(on {name} {rng.choice(tables)})",
            f"(held-by {name} alice)",
            f"(discarded {name})",
            f"(exists (?s - surface) (on {name} ?s))",
        ]
        if typ == "food":
            options.append(f"(cold {name})")
        if typ == "dish":
            options.append(f"(and (not (dirty {name})) (on {name} {rng.choice(tables)}))")
        if typ == "clothing":
            options.append("(forall (?c - clothing) (not (dirty ?c)))")
        if rng.random() < 0.6:
            goals.append(str(rng.choice(options)))
    extra = [
        "(made bed1)",
        "(forall (?l - light) (not (light-on ?l)))",
        f"(light-on lamp_{rooms[-1]})",
        "(forall (?l - light) (imply (in-room ?l kitchen) (light-on ?l)))",
        "(closed fridge1)",
    ]
    goals += [str(g) for g in rng.choice(extra, size=int(rng.integers(1, 3)), replace=False)]
    grouped: dict[str, list[str]] = {}
    for name, typ in objects.items():
        grouped.setdefault(typ, []).append(name)
    objects_text = " ".join(f"{' '.join(names)} - {typ}" for typ, names in grouped.items())
    return (
        f"(define (problem house{index}) (:domain household)\n  (:objects {objects_text})\n"
        f"  (:init {' '.join(init)})\n  (:goal (and {' '.join(goals)})))\n"
    )


def blocksworld_problem(rng: np.random.Generator, index: int) -> str:
    """Random towers of 4-6 blocks to rearrange into other random towers."""
    blocks = [f"b{i}" for i in range(int(rng.integers(4, 7)))]

    def towers() -> list[str]:
        order = list(rng.permutation(blocks))
        facts, below = [], None
        for block in order:
            if below is None or rng.random() < 0.3:
                facts.append(f"(ontable {block})")
            else:
                facts.append(f"(on {block} {below})")
            below = block
        return facts

    init = towers()
    tops = {b for b in blocks if not any("(on " in f and f.split()[2] == f"{b})" for f in init)}
    init += [f"(clear {b})" for b in sorted(tops)] + ["(handempty)"]
    goal = [f for f in towers() if f.startswith("(on")]
    return (
        f"(define (problem bw{index}) (:domain blocksworld) (:objects {' '.join(blocks)} - block)\n"
        f"  (:init {' '.join(init)})\n  (:goal (and {' '.join(goal) or '(handempty)'})))\n"
    )


def mutations(plan: list[str], interp: Interpreter, rng: np.random.Generator, final) -> list[list[str]]:
    """The plan itself and mutated copies (same arities: VAL crashes on a wrong argument count)."""
    steps = [p[1:-1].split() for p in plan]
    out = [plan]
    extra = list(interp.applicable_actions(final))
    if extra:
        out.append([*plan, str(extra[int(rng.integers(len(extra)))])])  # one more applicable step

    def text(parts: list[list[str]]) -> list[str]:
        return [f"({' '.join(p)})" for p in parts]

    n = len(steps)
    if n > 1:
        i = int(rng.integers(n))
        out.append(text(steps[:i] + steps[i + 1 :]))  # drop a step
        i, j = sorted(rng.choice(n, size=2, replace=False))
        swapped = list(steps)
        swapped[i], swapped[j] = swapped[j], swapped[i]
        out.append(text(swapped))  # swap two steps
        out.append(text(steps[::-1]))  # reverse
    out.append(text(steps[:-1]))  # truncate
    i = int(rng.integers(n))
    out.append(text(steps[: i + 1] + steps[i:]))  # duplicate a step
    with_args = [k for k, s in enumerate(steps) if len(s) > 1]
    if with_args:
        k = int(rng.choice(with_args))
        a = int(rng.integers(1, len(steps[k])))
        typ = interp.objects[steps[k][a]]
        same_type = [o for o, t in interp.objects.items() if t == typ and o != steps[k][a]]
        if same_type:
            changed = [list(s) for s in steps]
            changed[k][a] = str(rng.choice(same_type))
            out.append(text(changed))  # another object of the same type
        changed = [list(s) for s in steps]
        changed[k][a] = str(rng.choice(list(interp.objects)))
        out.append(text(changed))  # any object, often of the wrong type
        changed = [list(s) for s in steps]
        changed[k][a] = "nowhere_9"
        out.append(text(changed))  # an unknown object
    return out


@pytest.mark.slow
def test_validate_plan_agrees_with_val():
    rng = np.random.default_rng(20240611)
    household = parse_domain(HOUSEHOLD_FOR_VAL)
    blocksworld = parse_domain(BLOCKSWORLD)
    tasks = [(household, household_problem(rng, i)) for i in range(11)]
    tasks += [(blocksworld, blocksworld_problem(rng, i)) for i in range(5)]
    tasks = [(domain, parse_problem(text, domain)) for domain, text in tasks]
    planner = FastDownward(timeout=30)
    with ThreadPoolExecutor(max_workers=2) as pool:
        results = list(pool.map(lambda task: planner.solve(*task), tasks))
    checked = valid = solved = 0
    disagreements = []
    for (domain, problem), result in zip(tasks, results):
        if not result.solved:
            continue
        solved += 1
        domain_text, problem_text = write_domain(domain), write_problem(problem)
        interp = Interpreter.for_problem(domain, problem)
        final = validate_plan(domain, problem, result.plan).final_state
        for plan in mutations(list(result.plan), interp, rng, final):
            ours = validate_plan(domain, problem, plan)
            theirs = val_validate(domain_text, problem_text, plan)
            checked += 1
            valid += ours.valid
            if ours.valid != theirs.valid:
                disagreements.append((problem.name, plan, str(ours), theirs.output[-800:]))
    print(
        f"\nVAL agreement: {checked} plans on {solved} solved problems, {valid} valid, "
        f"{checked - valid} invalid"
    )
    assert not disagreements, disagreements[:3]
    assert solved >= 12
    assert checked >= 100
    assert valid >= solved and checked - valid >= 60


def test_val_rejects_an_invalid_plan_and_accepts_a_valid_one():
    problem = (
        "(define (problem p) (:domain blocksworld) (:objects a b - block) "
        "(:init (ontable a) (ontable b) (clear a) (clear b) (handempty)) (:goal (on a b)))"
    )
    good = val_validate(BLOCKSWORLD, problem, ["(pick-up a)", "(stack a b)"])
    assert good.valid and "Plan valid" in good.output
    bad = val_validate(BLOCKSWORLD, problem, "(stack a b)\n")
    assert not bad.valid and "Plan failed" in bad.output
