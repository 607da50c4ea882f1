"""Hand-written readings of Context Matters tasks (`servicerobot.experiments.cm_goals`), grounded in each
instance's scene in its split's own domain, on fixtures written here in CM's format: a reading the scene
allows becomes a goal that plans; what the scene lacks is dropped with its reason (`TaskInfeasible`), and a
reading with nothing left is refused up front, which counts as a relaxation."""

from __future__ import annotations

import pytest
from cm_published_fixtures import write_published

from servicerobot.envs.context_matters import read_split
from servicerobot.errors import TaskInfeasible
from servicerobot.experiments.cm_goals import Floors, HandInterpreter, Make, MoveTo, Put, ground
from servicerobot.experiments.cm_language import solve_in_split_domain

_CLEAN = (Make(("cola_can", "banana_peel", "rotting_apple"), "discarded", each=True),
          Floors(("kitchen", "living_room")), Make(("mop",), "clean", each=True))


@pytest.fixture
def cleaning(tmp_path):
    write_published(tmp_path, ["house_cleaning"])
    return read_split(tmp_path, "house_cleaning")[0]


def test_a_reading_grounds_in_the_split_domains_own_predicates(cleaning):
    dw, world = cleaning.domain_world(), cleaning.world()
    lits, dropped = ground(_CLEAN, dw, world)
    assert dropped == []
    preds = sorted(lit.strip("()").split()[0] for lit in lits)
    assert preds == ["binned"] * 3 + ["floor-clean"] * 2 + ["mop-clean"]
    assert {dw.rooms[lit.strip("()").split()[1]] for lit in lits if "floor" in lit} == {"kitchen", "living_room"}


def test_the_hand_goal_plans_executes_and_succeeds(cleaning):
    hand = HandInterpreter({("house_cleaning", "problem_1"): _CLEAN})
    hand.current = cleaning
    row = solve_in_split_domain(cleaning, hand)
    assert row["planned"] and row["executed"] and row["success"], row["failure"]
    assert not row["relaxed"] and row["agreement"] is True and row["plan_length"] >= 8
    assert any(f.startswith("(binned ") for f in row["facts_added"])


def test_what_the_scene_lacks_is_dropped_with_its_reason(cleaning):
    dw, world = cleaning.domain_world(), cleaning.world()
    clauses = (Make(("cola_can", "pineapple"), "discarded", each=True), Floors(("kitchen", "garage")))
    lits, dropped = ground(clauses, dw, world)
    assert len(lits) == 2 and any("pineapple" in d for d in dropped) and any("garage" in d for d in dropped)
    hand = HandInterpreter({("house_cleaning", "problem_1"): clauses})
    hand.current = cleaning
    with pytest.raises(TaskInfeasible) as caught:
        hand.interpret_task(cleaning.task, "user", None)
    assert caught.value.goal.count("(") == 3 and len(caught.value.dropped) == 2
    row = solve_in_split_domain(cleaning, hand)  # relaxed by the reading: the rest still plans and runs
    assert row["relaxed"] and row["executed"] and row["agreement"] is False
    assert {d["reason"] for d in row["dropped"]} == set(caught.value.dropped)


def test_a_reading_with_nothing_left_is_refused_up_front(cleaning):
    hand = HandInterpreter({("house_cleaning", "problem_1"): (Put(("cola_can",), ("fruit_bowl",)),
                                                              MoveTo(("desk",), "ballroom"))})
    hand.current = cleaning
    row = solve_in_split_domain(cleaning, hand)
    assert row["refused"] and row["relaxed"] and not row["planned"] and not row["success"]
    assert row["failure"].startswith("infeasible as asked:") and "fruit bowl" in row["failure"]
    assert "ballroom" in row["failure"]


def test_counted_things_the_scene_has_too_few_of(cleaning):
    dw, world = cleaning.domain_world(), cleaning.world()
    bins = sorted(n for n in dw.objects if n.startswith("rubbish_bin"))
    assert bins
    lits, dropped = ground((MoveTo(("cola_can", "banana_peel"), "kitchen", count=3),), dw, world)
    assert len(lits) == 2 and dropped == ["3 of cola_can/banana_peel asked, the scene has 2"]


def test_judging_accepts_any_object_of_the_target_class(tmp_path):
    """To judge another reader's goal, a thing may go to any object of the reading's target classes; the
    reading's own goal names one."""
    write_published(tmp_path, ["office_setup"])
    inst = read_split(tmp_path, "office_setup")[0]
    dw, world = inst.domain_world(), inst.world()
    clause = (Put(("laptop",), ("shelf", "locker")),)
    [strict], _ = ground(clause, dw, world)
    [lenient], _ = ground(clause, dw, world, any_target=True)
    assert strict.startswith("(stored-in laptop") and lenient.startswith("(or (stored-in laptop")
    assert strict in lenient and lenient.count("(stored-in") == 2
    assert dw.holds(lenient, dw.init) and not dw.holds(f"(not {lenient})", dw.init)  # it starts in the locker


def test_judging_a_move_to_a_room_accepts_a_thing_on_or_in_something_there(tmp_path):
    """"Gather the laptop in the bedroom": another reader who put it in the locker that stands in the bedroom
    reached the reading; the reading's own goal names the room."""
    write_published(tmp_path, ["office_setup"])
    inst = read_split(tmp_path, "office_setup")[0]
    dw, world = inst.domain_world(), inst.world()
    clause = (MoveTo(("laptop",), "bedroom"),)
    [strict], _ = ground(clause, dw, world)
    [lenient], _ = ground(clause, dw, world, any_target=True)
    assert strict == "(in-room laptop_into_the_locker_104 bedroom_2)" and strict in lenient
    assert "(stored-in laptop_into_the_locker_104 locker_102)" in lenient
    assert dw.holds(lenient, dw.init) and not dw.holds(strict, dw.init)  # it starts in the bedroom's locker


def test_judging_a_counted_move_accepts_any_things_of_the_classes(cleaning):
    """"At least one of the rubbish in the kitchen": judged, any one of them there will do; the reading's own
    goal names the one it picked."""
    dw, world = cleaning.domain_world(), cleaning.world()
    clause = (MoveTo(("cola_can", "banana_peel"), "kitchen", count=1),)
    [strict], _ = ground(clause, dw, world)
    [lenient], _ = ground(clause, dw, world, any_target=True)
    loc, thing, room = strict.strip("()").split()
    other = next(n for n in sorted(dw.objects) if n.startswith(("cola_can", "banana_peel")) and n != thing)
    moved = lambda t: {a for a in dw.init if not (a.predicate == loc and a.args[0] == t)} | {
        type(next(iter(dw.init)))(loc, (t, room))}
    assert dw.holds(lenient, moved(other)) and not dw.holds(strict, moved(other))
    assert dw.holds(lenient, moved(thing))


def test_a_target_the_scene_lacks_in_a_named_room_becomes_that_room(cleaning):
    """"Put the cans in the fruit bowl in the kitchen" with no fruit bowl: the closest feasible reading is the
    cans in the kitchen, and the reading says what it dropped."""
    dw, world = cleaning.domain_world(), cleaning.world()
    lits, dropped = ground((Put(("cola_can",), ("fruit_bowl",), room="kitchen"),), dw, world)
    loc = dw.roles["location"]
    assert lits and all(lit.startswith(f"({loc} cola_can") and dw.rooms[lit.strip("()").split()[2]] == "kitchen"
                        for lit in lits)
    assert dropped == ["no fruit bowl in the kitchen in the scene for the cola_can: in the kitchen instead"]
