"""Hand-written equivalent and non-equivalent PDDL problem pairs for `servicerobot.pddl.equivalence`."""

from __future__ import annotations

import re

import pytest

from servicerobot.cli import main
from servicerobot.pddl import domains, parse_problem
from servicerobot.pddl.equivalence import EvaluationResult, equivalent, evaluate, normalise
from servicerobot.scenes import household_domain_text

BW = domains.text("blocksworld")
GR = domains.text("gripper")
FT = domains.text("floor-tile")
HH = household_domain_text()


def bw(objs: str, init: str, goal: str) -> str:
    return f"(define (problem p) (:domain blocksworld) (:objects {objs}) (:init {init}) (:goal {goal}))"


def rename(text: str, mapping: dict[str, str]) -> str:
    """Rename whole object tokens."""
    return re.sub(r"(?<=[\s(])([a-z]\w*)(?=[\s)])", lambda m: mapping.get(m.group(1), m.group(1)), text)


SYM = "(arm-empty) (on-table a) (on-table b) (clear a) (clear b)"
ASYM = "(arm-empty) (on-table a) (on-table b) (on c a) (clear b) (clear c)"
SYM3 = "(arm-empty) (on-table a) (on-table b) (on-table c) (clear a) (clear b) (clear c)"

BLOCKS_CASES = [
    # (init, objects, goal a, goal b, identity-mode verdict)
    (SYM, "a b", "(on a b)", "(on a b)", True),
    (SYM, "a b", "(and (on a b) (clear a))", "(and (clear a) (on a b))", True),  # reordered
    (SYM, "a b", "(on a b)", "(and (on a b) (clear a) (on-table b) (arm-empty))", True),  # implied facts
    (SYM, "a b", "(on a b)", "(on b a)", True),  # swap is an automorphism of the symmetric init
    (ASYM, "a b c", "(on a b)", "(on b a)", False),  # not with an asymmetric init
    (SYM3, "a b c", "(on a b)", "(and (on a b) (clear a))", False),  # c may sit on a
    (SYM3, "a b c", "(and (on a b) (on b c))", "(and (on a b) (on b c) (clear a) (on-table c))", True),
    (SYM, "a b", "(and (on a b) (on b a))", "(and (holding a) (holding b))", True),  # both unsatisfiable
    (SYM, "a b", "(on a b)", "(and (on a b) (not (on b a)))", True),  # negation implied
    (SYM, "a b", "(forall (?x) (on-table ?x))", "(and (on-table a) (on-table b))", True),
    (SYM, "a b", "(forall (?x) (clear ?x))", "(and (clear a) (clear b))", True),
    (SYM, "a b", "(forall (?x) (clear ?x))", "(and (clear a) (clear b) (arm-empty))", True),
    (
        SYM,
        "a b",
        "(forall (?x) (clear ?x))",
        "(and (on-table a) (on-table b))",
        True,
    ),  # nothing stacked or held
    (SYM, "a b", "(forall (?x) (clear ?x))", "(on-table a)", False),
    (SYM, "a b", "(not (arm-empty))", "(exists (?x) (holding ?x))", True),
    (SYM, "a b", "(arm-empty)", "(and (arm-empty) (or (clear a) (clear b)))", True),  # some top is clear
    (SYM, "a b", "(or (on a b) (on b a))", "(on a b)", False),
    (SYM3, "a b c", "(imply (on a b) (clear a))", "(or (not (on a b)) (clear a))", True),
    (SYM, "a b", "(and (on a b) (not (clear a)))", "(holding b)", False),
]


@pytest.mark.parametrize(("init", "objs", "ga", "gb", "expected"), BLOCKS_CASES)
def test_blocksworld_pairs(init: str, objs: str, ga: str, gb: str, expected: bool) -> None:
    assert equivalent(bw(objs, init, ga), bw(objs, init, gb), BW) is expected
    assert equivalent(bw(objs, init, gb), bw(objs, init, ga), BW) is expected


def test_renaming_and_object_order() -> None:
    a = bw("a b c", ASYM, "(and (on a b) (on b c))")
    renamed = rename(ASYM, {"a": "x", "b": "y", "c": "z"})
    b = bw("z x y", renamed, "(and (on y z) (on x y))")
    assert equivalent(a, b, BW)
    assert not equivalent(a, bw("z x y", renamed, "(and (on x y) (on y x))"), BW)


def test_placeholder_mode_matches_init_and_goal_separately() -> None:
    a, b = bw("a b c", ASYM, "(on a b)"), bw("a b c", ASYM, "(on b a)")
    assert not equivalent(a, b, BW)
    assert equivalent(a, b, BW, placeholder=True)
    assert not equivalent(a, bw("a b c", ASYM, "(and (on a b) (on b c))"), BW, placeholder=True)
    assert not equivalent(a, bw("a b c", SYM3, "(on a b)"), BW, placeholder=True)  # inits differ


def test_different_inits_are_not_equivalent() -> None:
    assert not equivalent(bw("a b c", ASYM, "(on a b)"), bw("a b c", SYM3, "(on a b)"), BW)
    assert not equivalent(bw("a b c", SYM3, "(on a b)"), bw("a b", SYM, "(on a b)"), BW)


def gr(init_extra: str, goal: str) -> str:
    return (
        "(define (problem g) (:domain gripper) (:objects r1 r2 left right b1 b2) (:init (room r1) (room r2) "
        "(gripper left) (gripper right) (ball b1) (ball b2) (at-robby r1) (free left) (free right) "
        f"(at b1 r1) {init_extra}) (:goal {goal}))"
    )


@pytest.mark.parametrize(
    ("ga", "gb", "expected"),
    [
        ("(and (at b1 r2) (at b2 r2))", "(and (at b2 r2) (at b1 r2) (free left) (free right))", True),
        ("(and (at b1 r2) (at b2 r2))", "(and (at b1 r2) (at b2 r2) (ball b1) (room r2))", True),
        ("(at b1 r2)", "(and (at b1 r2) (free left))", False),
        ("(carry b1 left)", "(carry b1 right)", True),  # grippers are interchangeable
        ("(carry b1 left)", "(carry b2 left)", True),  # both balls start in r1
        ("(and (carry b1 left) (carry b2 right))", "(and (carry b1 left) (carry b2 left))", False),
        ("(forall (?b) (imply (ball ?b) (at ?b r2)))", "(and (at b1 r2) (at b2 r2))", True),
    ],
)
def test_gripper_pairs(ga: str, gb: str, expected: bool) -> None:
    assert equivalent(gr("(at b2 r1)", ga), gr("(at b2 r1)", gb), GR) is expected


def test_gripper_asymmetric_balls() -> None:
    assert not equivalent(gr("(at b2 r2)", "(carry b1 left)"), gr("(at b2 r2)", "(carry b2 left)"), GR)


FT_INIT = (
    "(robot-at r1 t1) (robot-has r1 white) (available-color white) (available-color black) "
    "(clear t2) (clear t3) (clear t4) (up t3 t1) (up t4 t2) (down t1 t3) (down t2 t4) "
    "(right t2 t1) (right t4 t3) (left t1 t2) (left t3 t4)"
)


def ft(goal: str) -> str:
    return (
        "(define (problem f) (:domain floor-tile) "
        "(:objects t1 t2 t3 t4 - tile r1 - robot white black - color)"
        f" (:init {FT_INIT}) (:goal {goal}))"
    )


def test_floortile_static_facts_and_mutexes() -> None:
    goal = "(and (painted t3 white) (painted t4 black))"
    assert equivalent(
        ft(goal), ft("(and (painted t4 black) (painted t3 white) (up t3 t1) (available-color black))"), FT
    )
    assert equivalent(ft(goal), ft(f"(and {goal[5:-1]} (not (clear t3)))"), FT)
    assert not equivalent(ft(goal), ft("(and (painted t3 black) (painted t4 white))"), FT)
    assert not equivalent(ft(goal), ft("(and (painted t3 white) (painted t3 black))"), FT)
    assert equivalent(ft(goal), ft(goal), FT, placeholder=True)


def hh(init_extra: str, goal: str) -> str:
    return (
        "(define (problem h) (:domain household) "
        "(:objects kitchen hall - room robby - robot cup plate - dish "
        "sink1 - sink shelf1 - shelf) (:init (in-room robby kitchen) (in-room sink1 kitchen) "
        "(in-room shelf1 hall) (connected kitchen hall) (connected hall kitchen) (hand-empty robby) "
        f"(on cup shelf1) (on plate shelf1) {init_extra}) (:goal {goal}))"
    )


@pytest.mark.parametrize(
    ("ga", "gb", "expected"),
    [
        ("(and (inside cup sink1) (inside plate sink1))", "(forall (?d - dish) (inside ?d sink1))", True),
        (
            "(and (inside cup sink1) (inside plate sink1))",
            "(and (inside cup sink1) (inside plate sink1) (not (on cup shelf1)) (hand-empty robby))",
            True,
        ),
        ("(inside cup sink1)", "(inside plate sink1)", True),
        ("(inside cup sink1)", "(and (inside cup sink1) (hand-empty robby))", False),
        ("(forall (?d - dish) (not (dirty ?d)))", "(and (not (dirty cup)) (not (dirty plate)))", True),
        ("(exists (?d - dish) (inside ?d sink1))", "(or (inside cup sink1) (inside plate sink1))", True),
        ("(exists (?d - dish) (inside ?d sink1))", "(inside cup sink1)", False),
        ("(in-room robby hall)", "(and (in-room robby hall) (not (in-room robby kitchen)))", True),
        ("(and (holding robby cup) (holding robby plate))", "(and (inside cup sink1) (on cup shelf1))", True),
    ],
)
def test_household_pairs(ga: str, gb: str, expected: bool) -> None:
    init = "(dirty cup) (dirty plate)"
    assert equivalent(hh(init, ga), hh(init, gb), HH) is expected


def test_household_asymmetric_items() -> None:
    assert not equivalent(
        hh("(dirty cup)", "(inside cup sink1)"), hh("(dirty cup)", "(inside plate sink1)"), HH
    )


def test_accepts_parsed_problems_and_domains() -> None:
    dom = domains.load("blocksworld")
    a, b = parse_problem(bw("a b", SYM, "(on a b)"), dom), bw("a b", SYM, "(on b a)")
    assert equivalent(a, b, dom)
    assert normalise(a, dom).goal == normalise(bw("a b", SYM, "(and (on a b) (clear a))"), BW).goal


def test_domains_package_data() -> None:
    for name in domains.NAMES:
        assert domains.load(name).name == name
        assert "(define" in domains.text(name)
    with pytest.raises(KeyError):
        domains.text("rovers")


def test_evaluate_unparseable_source_never_raises() -> None:
    target = bw("a b", SYM, "(on a b)")
    assert evaluate("Sure! (define (problem", target, BW, check_solvable=False) == EvaluationResult(
        False, False, False
    )
    assert evaluate(bw("a b", SYM, "(on-tabel a)"), target, BW, check_solvable=False).parseable is False
    assert evaluate(bw("a b", SYM, "(on b a)"), target, BW, check_solvable=False) == EvaluationResult(
        True, False, True
    )


def test_evaluate_with_planner() -> None:
    from servicerobot.planners.fast_downward import driver_path

    try:
        driver_path()
    except Exception:  # noqa: BLE001
        pytest.skip("Fast Downward is not installed")
    from servicerobot.planners import evaluate as evaluate_with_planner

    target = bw("a b", SYM, "(on a b)")
    assert evaluate_with_planner(bw("a b", SYM, "(on b a)"), target, BW) == EvaluationResult(True, True, True)
    result = evaluate_with_planner(bw("a b", SYM, "(and (on a b) (on b a))"), target, BW)
    assert result == EvaluationResult(True, False, False)


def test_evaluate_takes_the_solvable_check_from_the_caller() -> None:
    """The PDDL layer has no planner: `evaluate` asks the solver it is given, with the domain and the source's
    text, and refuses to guess when asked to check without one."""
    target = bw("a b", SYM, "(on a b)")
    source = bw("p q", rename(SYM, {"a": "p", "b": "q"}), "(on q p)")
    asked = []

    def solver(domain_text: str, problem_text: str) -> bool:
        asked.append((domain_text, problem_text))
        return "(on q p)" in problem_text

    assert evaluate(source, target, BW, solver=solver) == EvaluationResult(True, True, True)
    assert asked == [(BW, source)]
    assert evaluate(source, target, BW, solver=lambda d, p: False) == EvaluationResult(True, False, True)
    assert evaluate("(define (problem", target, BW, solver=solver) == EvaluationResult(False, False, False)
    assert len(asked) == 1  # an unparseable source is never handed to the solver
    with pytest.raises(TypeError, match="servicerobot.planners.evaluate"):
        evaluate(source, target, BW)


def test_cli(tmp_path, capsys) -> None:
    (tmp_path / "d.pddl").write_text(BW)
    (tmp_path / "a.pddl").write_text(bw("a b", SYM, "(on a b)"))
    (tmp_path / "b.pddl").write_text(bw("x y", rename(SYM, {"a": "x", "b": "y"}), "(on y x)"))
    (tmp_path / "c.pddl").write_text(bw("a b c", ASYM, "(on a b)"))
    (tmp_path / "bad.pddl").write_text("(define (problem")
    args = ["--domain", str(tmp_path / "d.pddl")]
    assert main(["equiv", str(tmp_path / "a.pddl"), str(tmp_path / "b.pddl"), *args]) == 0
    assert capsys.readouterr().out.strip() == "equivalent"
    assert main(["equiv", str(tmp_path / "a.pddl"), str(tmp_path / "c.pddl"), *args]) == 1
    assert capsys.readouterr().out.strip() == "not equivalent"
    assert main(["equiv", str(tmp_path / "a.pddl"), str(tmp_path / "bad.pddl"), *args]) == 2
    assert main(["equiv", str(tmp_path / "a.pddl"), str(tmp_path / "missing.pddl"), *args]) == 2
    assert "missing.pddl" in capsys.readouterr().err
