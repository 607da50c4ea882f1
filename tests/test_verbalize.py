"""English renderings of goals and facts (`servicerobot.language.verbalize`), which the chooser scores."""

from __future__ import annotations

import pytest

from servicerobot.language.verbalize import Verbalizer

ENTITIES = {
    "kitchen": {"type": "room", "noun": "kitchen"},
    "hallway": {"type": "room", "noun": "hallway"},
    "bread_1": {"type": "food", "noun": "bread"},
    "fridge_1": {"type": "fridge", "noun": "fridge", "room": "kitchen"},
    "light_1": {"type": "light", "noun": "light", "room": "kitchen"},
    "light_2": {"type": "light", "noun": "light", "room": "hallway"},
    "notebook_2": {"type": "book", "noun": "notebook", "colour": "red"},
    "notebook_3": {"type": "book", "noun": "notebook", "colour": "black", "owner": "Ana"},
    "shelf_1": {"type": "shelf", "noun": "bookshelf", "room": "kitchen"},
    "jeans_2": {"type": "clothing", "noun": "pair of jeans", "colour": "purple", "owner": "Sami"},
    "mug_1": {"type": "dish", "noun": "mug"},
    "mug_2": {"type": "dish", "noun": "mug"},
    "ana": {"type": "person", "noun": "Ana"},
}


@pytest.fixture
def say():
    return Verbalizer(ENTITIES, sorted(ENTITIES))


@pytest.mark.parametrize("goal, text", [
    ("(held-by notebook_3 ana)", "Ana has Ana's black notebook"),
    ("(not (light-on light_2))", "the light in the hallway is off"),  # a shared phrase gets the room
    ("(inside bread_1 fridge_1)", "the bread is in the fridge"),  # a unique one does not
    ("(forall (?c - clothing) (not (dirty ?c)))", "every piece of clothing is clean"),
    ("(forall (?d - dish) (or (not (dirty ?d)) (discarded ?d)))", "every dish is clean or is thrown away"),
    ("(forall (?i - item) (imply (broken ?i) (discarded ?i)))", "every item that is broken is thrown away"),
    # conjunctions say a shared subject, or a shared predicate and object, once
    ("(and (inside bread_1 fridge_1) (cold bread_1))", "the bread is in the fridge and cold"),
    ("(and (not (dirty jeans_2)) (not (wet jeans_2)))", "Sami's purple pair of jeans is clean and dry"),
    ("(and (on notebook_2 shelf_1) (on notebook_3 shelf_1))",
     "the red notebook and Ana's black notebook are on the bookshelf"),
    ("(and (forall (?l - light) (not (light-on ?l))) (forall (?s - sink) (not (faucet-on ?s))))",
     "every light is off and every tap is off"),
    ("(and (held-by jeans_2 ana) (not (wet jeans_2)))", ("Ana has Sami's purple pair of jeans and Sami's purple "
                                                        "pair of jeans is dry")),
])
def test_goals_are_said_as_people_say_them(say, goal, text):
    assert say.goal(goal) == text


def test_names_two_things_share_get_told_apart(say):
    assert say.goal("(not (dirty mug_1))") == "the mug (mug_1) is clean"
    assert say.name("mug_2") == "the mug (mug_2)"
    # shown alone, a mug needs no name in brackets
    assert Verbalizer(ENTITIES, ["mug_1", "ana"]).goal("(held-by mug_1 ana)") == "Ana has the mug"


def test_predicates_without_a_phrase_are_said_with_their_own_words():
    say = Verbalizer({"box_1": {"type": "box", "noun": "box"}, "room_a": {"type": "room", "noun": "lab"}})
    assert say.goal("(is-sealed box_1)") == "the box is sealed"
    assert say.goal("(not (is-sealed box_1))") == "the box is not sealed"
    assert say.goal("(frozen box_1)") == "the box is frozen"
    assert say.goal("(not (stored-in box_1 room_a))") == "it is not so that the box stored in the lab"
    assert say.fact("closed", ["box_1"]) == "the box is closed"
    assert say.goal("(exists (?b - box) (cold ?b))") == "some box is cold"


def test_changes_say_what_is_true_now(say):
    from servicerobot.pddl import Atom

    moved = say.change([Atom("on", ("bread_1", "shelf_1"))], [Atom("inside", ("bread_1", "fridge_1"))])
    assert moved == "the bread is in the fridge"  # the old place goes unsaid
    assert say.change([Atom("on", ("bread_1", "shelf_1"))], []) == "the bread is not on the bookshelf"
    assert say.change([Atom("dirty", ("jeans_2",)), Atom("wet", ("jeans_2",))], []) == \
        "Sami's purple pair of jeans is clean and dry"
    assert say.change([], [Atom("in-room", ("ana", "hallway")), Atom("light-on", ("light_1",))]) == \
        "Ana is in the hallway and the light in the kitchen is on"
