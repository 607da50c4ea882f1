"""What interpreters over one domain share across universes: action texts and goal texts, each taken as read
before only where the objects it names have the same types (issue 37: new houses)."""

from __future__ import annotations

import pytest

from servicerobot.errors import ActionError, PDDLSemanticError
from servicerobot.pddl import Atom, Interpreter, parse_domain

DOMAIN = parse_domain(
    """
(define (domain shelf)
  (:requirements :adl)
  (:types thing place - object  book - thing)
  (:predicates (at ?t - thing ?p - place) (read ?b - book) (held ?t - thing))
  (:action pick
    :parameters (?t - thing ?p - place)
    :precondition (at ?t ?p)
    :effect (and (not (at ?t ?p)) (held ?t)))
  (:action study
    :parameters (?b - book)
    :precondition (held ?b)
    :effect (read ?b)))
"""
)


def test_an_action_text_read_in_one_universe_steps_the_same_in_another_with_the_same_types():
    Interpreter.clear_shared()
    first = Interpreter(DOMAIN, {"b1": "book", "desk": "place"})
    second = Interpreter(DOMAIN, {"b1": "book", "desk": "place", "b2": "book"})
    state = {Atom("at", ("b1", "desk"))}
    answer = first.transition_text("(pick b1 desk)", state)
    again = second.transition_text("(pick b1 desk)", state)
    assert again == answer
    assert again[2] is None and again[3] == {Atom("held", ("b1",))}
    assert again[4] == {Atom("at", ("b1", "desk"))}
    # the other interpreter's own methods know the action too
    assert second.applicable(again[0], frozenset(state))
    assert second.why_not(again[0], frozenset()) is not None


def test_an_action_text_is_read_again_where_an_object_has_another_type():
    Interpreter.clear_shared()
    held = {Atom("held", ("b1",))}
    Interpreter(DOMAIN, {"b1": "book", "desk": "place"}).transition_text("(study b1)", held)
    # b1 is a plain thing here: `study` needs a book, so the text is an error in this universe
    other = Interpreter(DOMAIN, {"b1": "thing", "desk": "place"})
    with pytest.raises(ActionError, match="b1 is a thing, but parameter"):
        other.transition_text("(study b1)", held)
    # and an object this universe lacks is unknown here
    with pytest.raises(ActionError, match="unknown object"):
        Interpreter(DOMAIN, {"desk": "place"}).transition_text("(study b1)", set())


def test_a_goal_text_read_in_one_universe_is_checked_again_where_its_objects_differ():
    Interpreter.clear_shared()
    goal, done = "(and (read b1) (held b1))", {Atom("read", ("b1",)), Atom("held", ("b1",))}
    assert Interpreter(DOMAIN, {"b1": "book"}).compile_goal(goal).holds(done)
    same = Interpreter(DOMAIN, {"b1": "book", "b2": "book"}).compile_goal(goal)
    assert same.holds(done) and not same.holds({Atom("read", ("b1",))})
    with pytest.raises(PDDLSemanticError, match="b1 is a thing, but parameter"):
        Interpreter(DOMAIN, {"b1": "thing"}).compile_goal(goal)
    with pytest.raises(PDDLSemanticError, match="unknown object 'b1'"):
        Interpreter(DOMAIN, {"b2": "book"}).compile_goal(goal)


def test_a_quantified_goal_text_ranges_over_each_universes_own_objects():
    Interpreter.clear_shared()
    goal = "(forall (?b - book) (read ?b))"
    assert Interpreter(DOMAIN, {"b1": "book"}).compile_goal(goal).holds({Atom("read", ("b1",))})
    bigger = Interpreter(DOMAIN, {"b1": "book", "b2": "book"}).compile_goal(goal)
    assert not bigger.holds({Atom("read", ("b1",))})
    assert bigger.holds({Atom("read", ("b1",)), Atom("read", ("b2",))})


def test_a_quantified_implication_over_objects_named_as_before_tests_this_universes_objects():
    """The ground parts of `(imply (held ?b) (read ?b))` are kept per object name across universes; each
    goal still ranges over its own universe's books only."""
    Interpreter.clear_shared()
    goal = "(forall (?b - book) (imply (held ?b) (read ?b)))"
    names = [f"b{i}" for i in range(6)]
    first = Interpreter(DOMAIN, {n: "book" for n in names[:5]}).compile_goal(goal)
    second = Interpreter(DOMAIN, {n: "book" for n in names[1:]}).compile_goal(goal)
    held_b0 = {Atom("held", ("b0",))}
    assert not first.holds(held_b0) and second.holds(held_b0)  # b0 is not a book of the second
    held_b5 = {Atom("held", ("b5",))}
    assert first.holds(held_b5) and not second.holds(held_b5 | {Atom("held", ("b1",)), Atom("read", ("b1",))})
    assert second.holds({Atom("held", ("b5",)), Atom("read", ("b5",))})
    assert second.mentioned == {Atom(p, (n,)) for p in ("held", "read") for n in names[1:]}
