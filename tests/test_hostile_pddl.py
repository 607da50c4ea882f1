"""Hostile input to the PDDL equivalence API and CLI: exit codes, deep nesting, binary files, huge pairs,
ill-typed goals."""

from __future__ import annotations

import re

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import servicerobot.pddl.equivalence as eq
from servicerobot.cli import main
from servicerobot.errors import PDDLError, PDDLParseError
from servicerobot.pddl import domains, load_problem, parse_problem
from servicerobot.pddl.equivalence import GoalTooComplexError, compare, equivalent
from servicerobot.pddl.model import And, AtomF, Problem
from servicerobot.pddl.sexpr import MAX_NESTING, parse_sexpr

BW = domains.text("blocksworld")
INIT2 = "(clear a) (clear b) (on-table a) (on-table b) (arm-empty)"


def bw(objs: str, init: str, goal: str, name: str = "p") -> str:
    return f"(define (problem {name}) (:domain blocksworld) (:objects {objs}) (:init {init}) (:goal {goal}))"


def tower(n: int) -> str:
    """A blocksworld problem with n blocks on the table and a goal stacking them into one tower."""
    objs = " ".join(f"b{i}" for i in range(n))
    init = " ".join(f"(on-table b{i}) (clear b{i})" for i in range(n)) + " (arm-empty)"
    goal = "(and " + " ".join(f"(on b{i} b{i + 1})" for i in range(n - 1)) + ")"
    return bw(objs, init, goal)


def _files(tmp_path, **texts: str | bytes) -> list[str]:
    paths = []
    for name, text in texts.items():
        path = tmp_path / f"{name}.pddl"
        path.write_bytes(text if isinstance(text, bytes) else text.encode())
        paths.append(str(path))
    return paths


def test_nesting_too_deep_names_line_and_column():
    deep = "(and\n " + "(not " * (MAX_NESTING + 5) + "(x)" + ")" * (MAX_NESTING + 5) + ")"
    with pytest.raises(PDDLParseError, match=r"nesting too deep at 2:\d+") as info:
        parse_sexpr(deep)
    assert info.value.line == 2
    # the deepest nesting accepted goes through the whole equivalence pipeline without RecursionError
    depth = MAX_NESTING - 8
    goal = "(and " * depth + "(on a b)" + ")" * depth
    assert equivalent(bw("a b", INIT2, goal), bw("a b", INIT2, "(on a b)"), BW)
    nots = "(not (not " * (depth // 2) + "(on a b)" + "))" * (depth // 2)
    assert equivalent(bw("a b", INIT2, nots), bw("a b", INIT2, "(on a b)"), BW)


def test_goal_nested_500_levels_is_a_parse_error_not_a_recursion_error():
    goal = "(and " * 500 + "(on a b)" + ")" * 500
    with pytest.raises(PDDLParseError, match="nesting too deep"):
        equivalent(bw("a b", INIT2, goal), bw("a b", INIT2, "(on a b)"), BW)


def test_non_utf8_file_is_a_clear_parse_error(tmp_path):
    (path,) = _files(tmp_path, bad=b"(define (problem p)\n (:domain \xff\xfe blocksworld))")
    with pytest.raises(PDDLParseError, match=r"bad.pddl:2:\d+: not UTF-8 text: byte 0xff"):
        load_problem(path)


def test_cli_exit_codes(tmp_path, capsys):
    domain, a, b, c, binary, deep, typo = _files(
        tmp_path,
        d=BW,
        a=bw("a b", INIT2, "(on a b)"),
        b=bw("x y", "(clear y) (clear x) (on-table x) (on-table y) (arm-empty)", "(on y x)"),
        c=bw("a b c", INIT2 + " (clear c) (on-table c)", "(on a b)"),
        binary=bytes(range(256)) * 4,
        deep=bw("a b", INIT2, "(and " * 500 + "(on a b)" + ")" * 500),
        typo=bw("a b", INIT2, "(onn a b)"),
    )
    def run(x: str, y: str) -> int:
        return main(["equiv", x, y, "--domain", domain])

    assert run(a, b) == 0 and capsys.readouterr().out.strip() == "equivalent"
    assert run(a, c) == 1
    out = capsys.readouterr()
    assert out.out.strip() == "not equivalent" and "object counts differ: 2 vs 3" in out.err
    assert run(a, binary) == 2 and "not UTF-8" in capsys.readouterr().err
    assert run(a, deep) == 2 and "nesting too deep at 1:" in capsys.readouterr().err
    assert run(a, typo) == 2 and "did you mean 'on'" in capsys.readouterr().err
    assert run(a, str(tmp_path / "missing.pddl")) == 2 and "missing.pddl" in capsys.readouterr().err
    assert run(binary, a) == 2  # a binary file as the first problem too
    assert main(["equiv", a, b, "--domain", binary]) == 2 and "not UTF-8" in capsys.readouterr().err


def test_cli_ill_typed_goal_is_a_verdict(tmp_path, capsys):
    typed_domain = """(define (domain shelf) (:requirements :typing) (:types book room)
      (:predicates (at ?b - book ?r - room))
      (:action move :parameters (?b - book ?r - room ?s - room) :precondition (at ?b ?r)
        :effect (and (not (at ?b ?r)) (at ?b ?s))))"""

    def shelf(goal: str) -> str:
        return (f"(define (problem p) (:domain shelf) (:objects b1 - book r1 r2 - room) (:init (at b1 r1)) "
                f"(:goal {goal}))")

    domain, good, wrong = _files(tmp_path, d=typed_domain, good=shelf("(at b1 r2)"), wrong=shelf("(at r1 b1)"))
    assert main(["equiv", good, wrong, "--domain", domain]) == 1
    out = capsys.readouterr()
    assert out.out.strip() == "not equivalent"
    assert "cannot be well-typed" in out.err and "r1 is a room, but parameter ?b of 'at' needs a book" in out.err
    assert "wrong.pddl" in out.err


def test_cli_help_documents_exit_codes(capsys):
    with pytest.raises(SystemExit) as info:
        main(["equiv", "--help"])
    assert info.value.code == 0
    text = capsys.readouterr().out
    for line in ("0  the problems are equivalent", "1  they are not", "2  bad input"):
        assert line in text


def test_cli_internal_error_exits_2(tmp_path, capsys, monkeypatch):
    domain, a, b = _files(tmp_path, d=BW, a=bw("a b", INIT2, "(on a b)"), b=bw("a b", INIT2, "(on b a)"))

    def boom(*args, **kwargs):
        raise RuntimeError("simulated bug")

    monkeypatch.setattr(eq, "normalise", boom)
    assert main(["equiv", a, b, "--domain", domain]) == 2
    assert "internal error (RuntimeError: simulated bug)" in capsys.readouterr().err


def test_counts_decide_different_sizes_before_normalising(monkeypatch):
    big, small = tower(2000), tower(3)

    def no_normalise(*args, **kwargs):
        raise AssertionError("normalise must not run when the object counts differ")

    monkeypatch.setattr(eq, "normalise", no_normalise)
    verdict = compare(big, small, BW)
    assert not verdict and verdict.reason == "object counts differ: 2000 vs 3 objects"
    assert not equivalent(small, big, BW)
    other = tower(3).replace("(clear b2)", "")
    assert compare(small, other, BW).reason == "initial states differ in size: 7 vs 6 facts"
    swapped = small.replace("(on-table b0)", "(holding b0)")
    assert compare(small, swapped, BW).reason == "initial facts per predicate differ (holding: 0 vs 1)"


def test_ill_typed_goal_is_a_verdict_in_the_api():
    dom = domains.load("blocksworld")
    typed = parse_problem(bw("a b", INIT2, "(on a b)"), dom)
    # blocksworld is untyped, so build a typed domain where a goal can be ill-typed
    from servicerobot.pddl import parse_domain

    shelf = parse_domain("""(define (domain shelf) (:requirements :typing) (:types book room)
      (:predicates (at ?b - book ?r - room)) (:action noop :parameters () :precondition (and) :effect (and)))""")
    good = "(define (problem p) (:domain shelf) (:objects b1 - book r1 - room) (:init) (:goal (at b1 r1)))"
    bad = good.replace("(at b1 r1)", "(at r1 b1)")
    verdict = compare(good, bad, shelf)
    assert not verdict and "goal of problem b cannot be well-typed" in verdict.reason
    assert equivalent(good, bad, shelf) is False
    # a Problem built in code (or parsed without the domain) is checked the same way
    built = Problem("p", "shelf", {"b1": "book", "r1": "room"}, frozenset(), And((AtomF("at", ("r1", "b1")),)))
    assert "goal of problem a cannot be well-typed" in compare(built, good, shelf).reason
    assert equivalent(parse_problem(bad), parse_problem(good, shelf), shelf) is False
    assert equivalent(typed, typed, dom)


_PAIR_A = bw("a b c", INIT2 + " (clear c) (on-table c)", "(and (on a b) (or (on b c) (not (clear c))))")
_PAIR_B = bw("x y z", "(clear x) (clear y) (clear z) (on-table x) (on-table y) (on-table z) (arm-empty)",
             "(and (on x y) (or (on y z) (not (clear z))))")


@settings(max_examples=300, deadline=None, derandomize=True)
@given(st.lists(st.tuples(st.integers(0, len(_PAIR_B) - 1), st.sampled_from(list("() ?-;:\n\xff\x00aoz9=")),
                          st.booleans()), min_size=1, max_size=6))
def test_random_edits_of_a_problem_never_crash_compare(edits):
    """Random character edits of a problem only ever give a verdict or a PDDLError (the CLI's exit 2)."""
    text = list(_PAIR_B)
    for index, char, insert in edits:
        index %= len(text) + 1
        if insert:
            text.insert(index, char)
        elif index < len(text):
            text[index] = char
    try:
        verdict = compare(_PAIR_A, "".join(text), BW)
    except (PDDLError, GoalTooComplexError):
        return
    assert isinstance(verdict.equivalent, bool) and (verdict.equivalent or verdict.reason)


def test_the_same_large_problem_is_equivalent_without_normalising(monkeypatch):
    def no_normalise(*args, **kwargs):
        raise AssertionError("normalise must not run for two copies of one problem")

    big = tower(3000)
    monkeypatch.setattr(eq, "normalise", no_normalise)
    assert compare(big, big.replace("(define (problem p)", "(define (problem copy)"), BW)


# -- (either ...) types: a union, as Fast Downward reads them (issue 25, item 11) -------------------------

STORAGE = """(define (domain storage-mini) (:requirements :typing)
  (:types hoist surface place area - object  container depot - place  storearea transitarea - area
          area crate - surface)
  (:predicates (clear ?s - storearea) (in ?x - (either storearea crate) ?p - place) (available ?h - hoist)
               (lifting ?h - hoist ?c - crate) (at ?h - hoist ?a - area) (on ?c - crate ?s - storearea)
               (connected ?a1 ?a2 - area))
  (:action lift :parameters (?h - hoist ?c - crate ?a1 - storearea ?a2 - area ?p - place)
    :precondition (and (connected ?a1 ?a2) (at ?h ?a2) (available ?h) (on ?c ?a1) (in ?a1 ?p))
    :effect (and (not (on ?c ?a1)) (clear ?a1) (not (available ?h)) (lifting ?h ?c) (not (in ?c ?p))))
  (:action drop :parameters (?h - hoist ?c - crate ?a1 - storearea ?a2 - area ?p - place)
    :precondition (and (connected ?a1 ?a2) (at ?h ?a2) (lifting ?h ?c) (clear ?a1) (in ?a1 ?p))
    :effect (and (not (lifting ?h ?c)) (available ?h) (not (clear ?a1)) (on ?c ?a1) (in ?c ?p))))"""


def storage_problem(goal: str = "(and (on c1 s2) (in c1 d1))", extra_objects: str = "") -> str:
    return f"""(define (problem sp) (:domain storage-mini)
  (:objects h1 - hoist c1 - crate s1 s2 - storearea t1 - transitarea d1 - depot {extra_objects})
  (:init (at h1 t1) (available h1) (connected s1 t1) (connected t1 s1) (connected s2 t1) (connected t1 s2)
         (on c1 s1) (in c1 d1) (in s1 d1) (in s2 d1) (clear s2))
  (:goal {goal}))"""


def test_either_types_parse_ground_plan_and_write_back():
    from servicerobot.pddl import parse_domain, validate_plan, write_domain
    from servicerobot.planners import BuiltinPlanner

    dom = parse_domain(STORAGE)
    assert dom.predicates["in"].params[0][1] == "(either storearea crate)"
    types = dom.types
    assert types.is_subtype("crate", "(either storearea crate)") and types.is_subtype("storearea", "(either storearea crate)")
    assert not types.is_subtype("hoist", "(either storearea crate)")
    assert types.is_subtype("(either storearea crate)", "surface")  # both members are surfaces
    assert not types.is_subtype("(either storearea crate)", "area")
    assert types.ancestors("(either storearea crate)") == ("surface", "object")
    prob = parse_problem(storage_problem(), dom)
    assert set(dom.objects_of_type(prob.objects, "(either storearea crate)")) == {"c1", "s1", "s2"}
    result = BuiltinPlanner().solve(STORAGE, storage_problem(), timeout=None)
    assert result.solved and len(result.plan) == 2
    assert validate_plan(dom, prob, result.plan).valid
    again = parse_domain(write_domain(dom))  # the union is written back as PDDL
    assert again.predicates["in"] == dom.predicates["in"]


@pytest.mark.parametrize(("goal", "words"), [
    ("(in h1 d1)", "h1 is a hoist, but parameter ?x of 'in' needs a (either storearea crate)"),
    ("(in t1 d1)", "t1 is a transitarea"),
])
def test_an_object_outside_the_union_is_a_type_error(goal, words):
    from servicerobot.pddl import parse_domain

    with pytest.raises(PDDLError, match=re.escape(words)):
        parse_problem(storage_problem(goal), parse_domain(STORAGE))


@pytest.mark.parametrize("bad", ["(either)", "(either ?x)", "(either (a) b)", "(oneof a b)"])
def test_malformed_either_is_a_parse_error_naming_the_place(bad):
    from servicerobot.pddl import parse_domain

    with pytest.raises(PDDLParseError, match=r"\d+:\d+"):
        parse_domain(STORAGE.replace("(either storearea crate)", bad, 1))


def test_either_with_one_member_is_that_type_and_objects_may_be_declared_with_a_union():
    from servicerobot.pddl import parse_domain

    small = parse_domain("(define (domain d) (:requirements :typing) (:types crate) "
                         "(:predicates (p ?x - (either crate crate))))")
    assert small.predicates["p"].params[0][1] == "crate"
    dom = parse_domain(STORAGE)
    prob = parse_problem(storage_problem(extra_objects="u1 - (either crate storearea)"), dom)
    assert prob.objects["u1"] == "(either crate storearea)"
    assert "u1" in dom.objects_of_type(prob.objects, "surface")  # a union of surfaces is a surface
    assert "u1" not in dom.objects_of_type(prob.objects, "crate")  # but not necessarily a crate


def test_equivalence_over_a_domain_with_either_types():
    from servicerobot.pddl import parse_domain

    dom = parse_domain(STORAGE)
    assert equivalent(storage_problem(), storage_problem("(and (in c1 d1) (on c1 s2))"), dom)
    assert not equivalent(storage_problem(), storage_problem("(on c1 s1)"), dom)
