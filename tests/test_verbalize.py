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
    # the states of a thing someone is to have said after it, other parts first
    ("(and (held-by jeans_2 ana) (not (wet jeans_2)))", "Ana has Sami's purple pair of jeans, dry"),
    ("(and (held-by jeans_2 ana) (not (dirty jeans_2)) (not (wet jeans_2)) (on notebook_2 shelf_1))",
     "the red notebook is on the bookshelf and Ana has Sami's purple pair of jeans, clean and dry"),
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
    assert say.goal("(not (stored-in box_1 room_a))") == "the box is not in the lab"  # said as `inside` is
    assert say.goal("(not (guards box_1 room_a))") == "it is not so that the box guards the lab"
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


CM_DOMAIN = """(define (domain chores)
  (:requirements :strips :typing)
  (:types room locatable - object  robot grabbable surface washer - locatable  cloth - grabbable)
  (:predicates (at ?x - locatable ?r - room) (is-holding ?w - robot ?x - grabbable) (is-free ?w - robot)
    (is-on ?x - grabbable ?s - surface) (thrashed ?x - grabbable) (is-dirty ?x - cloth)
    (loaded ?x - cloth ?m - washer) (dirty-floor ?r - room) (is-refilled ?m - washer)))"""


def test_another_domains_words_are_said_like_the_households():
    """Context Matters-style predicates (`is-on`, `at` over a room, `is-holding`, `is-free`, the misspelt
    `thrashed`, `dirty-floor` of a room) get the household's English, from their words and parameter types."""
    from servicerobot.pddl import parse_domain

    entities = {"plate_1": {"type": "grabbable", "noun": "plate"}, "table_2": {"type": "surface", "noun": "table"},
                "kitchen_3": {"type": "room", "noun": "kitchen"}, "robot": {"type": "robot", "noun": "robot"},
                "shirt_4": {"type": "cloth", "noun": "shirt"}, "washer_5": {"type": "washer", "noun": "washer"}}
    say = Verbalizer(entities, sorted(entities), domain=parse_domain(CM_DOMAIN))
    assert say.goal("(is-on plate_1 table_2)") == "the plate is on the table"
    assert say.goal("(at plate_1 kitchen_3)") == "the plate is in the kitchen"  # a room: "in", not "at"
    assert say.goal("(is-holding robot plate_1)") == "the robot holds the plate"
    assert say.fact("is-free", ["robot"]) == "the robot holds nothing"
    assert say.goal("(thrashed plate_1)") == "the plate is thrown away"
    assert say.goal("(not (is-dirty shirt_4))") == "the shirt is clean"
    assert say.goal("(loaded shirt_4 washer_5)") == "the shirt is loaded in the washer"
    assert say.goal("(not (dirty-floor kitchen_3))") == "the floor in the kitchen is clean"
    assert say.goal("(is-refilled washer_5)") == "the washer is refilled"
    # without the domain a place is not known to be a room
    assert Verbalizer(entities).goal("(at plate_1 kitchen_3)") == "the plate is at the kitchen"


def test_alike_things_are_counted_in_a_conjunction():
    entities = {f"plate_{i}": {"type": "dish", "noun": "plate"} for i in range(3)}
    entities |= {"fork_9": {"type": "dish", "noun": "fork"}, "table_1": {"type": "surface", "noun": "table"},
                 "glass_7": {"type": "dish", "noun": "glass"}, "glass_8": {"type": "dish", "noun": "glass"},
                 "shirt_1": {"type": "clothing", "noun": "shirt"}, "towel_2": {"type": "clothing", "noun": "towel"}}
    say = Verbalizer(entities, sorted(entities))
    assert say.goal("(and (on plate_0 table_1) (on plate_1 table_1) (on plate_2 table_1) (on fork_9 table_1) "
                    "(on glass_7 table_1) (on glass_8 table_1))") == \
        "all three plates, the fork and both glasses are on the table"
    assert say.goal("(and (on plate_0 table_1) (on plate_2 table_1))") == \
        "two of the three plates (plate_0, plate_2) are on the table"
    assert say.goal("(and (on fork_9 table_1) (not (dirty shirt_1)) (not (dirty towel_2)))") == \
        "the fork is on the table and the shirt and the towel are clean"
    assert say.goal("(and (not (dirty shirt_1)) (not (dirty towel_2)) (not (wet shirt_1)) (not (wet towel_2)))") \
        == "the shirt and the towel are clean and dry"


@pytest.mark.parametrize("phrase, many", [("plate", "plates"), ("glass", "glasses"), ("knife", "knives"),
                                          ("pair of jeans", "pairs of jeans"), ("chest of drawers", "chests of drawers"),
                                          ("Ana's red berry", "Ana's red berries"), ("box", "boxes"), ("toy", "toys")])
def test_plurals(phrase, many):
    from servicerobot.language.verbalize import plural

    assert plural(phrase) == many


def test_a_group_with_the_rest_already_there_is_said_of_them_all():
    """"Collect all the books onto the bookshelf" where two of four already are: the goal names two, and says
    "all four books"; without the facts it says which two of the four."""
    from servicerobot.pddl import Atom

    entities = {f"book_{i}": {"type": "book", "noun": "book"} for i in range(4)}
    entities["shelf_1"] = {"type": "shelf", "noun": "bookshelf"}
    goal = "(and (on book_0 shelf_1) (on book_1 shelf_1))"
    there = [Atom("on", ("book_2", "shelf_1")), Atom("on", ("book_3", "shelf_1"))]
    assert Verbalizer(entities, sorted(entities), facts=there).goal(goal) == "all four books are on the bookshelf"
    assert Verbalizer(entities, sorted(entities), facts=there[:1]).goal(goal).startswith("two of the four books (")
    assert Verbalizer(entities, sorted(entities)).goal(goal).startswith("two of the four books (")


@pytest.mark.parametrize("phrase,many,head", [("cups", "cups", "cups"), ("bus", "buses", "bus"),
                                              ("book into the shelf", "books into the shelf", "book"),
                                              ("chest of drawers", "chests of drawers", "chest"),
                                              ("cola can", "cola cans", "can")])
def test_plural_and_head_of_noun_phrases(phrase, many, head):
    from servicerobot.language.verbalize import head_noun, plural

    assert plural(phrase) == many and head_noun(phrase) == head


def test_a_noun_that_says_its_colour_is_said_with_it_once():
    """The PyBullet world's items' nouns carry their colour: "the blue cube", not "the blue blue cube"."""
    from servicerobot.pddl import parse_domain

    domain = parse_domain("""(define (domain t) (:requirements :strips :typing)
      (:types item furniture - object) (:predicates (item-on ?i - item ?f - furniture)))""")
    entities = {"cube_1": {"type": "item", "noun": "blue cube", "colour": "blue"},
                "desk_2": {"type": "furniture", "noun": "desk"}}
    say = Verbalizer(entities, sorted(entities), domain=domain)
    assert say.name("cube_1") == "the blue cube"


def test_a_fixture_whose_room_is_given_by_its_phrase_is_said_with_that_room():
    # the household catalogue gives a fixture's room as people say it ("dining room"), not by its entity name
    entities = {"dining_room": {"type": "room", "noun": "dining room"},
                "ivy_bedroom": {"type": "room", "noun": "Ivy's bedroom"},
                "light_6": {"type": "light", "noun": "light", "room": "Ivy's bedroom", "owner": "Ivy"},
                "light_7": {"type": "light", "noun": "light", "room": "dining room"},
                "light_8": {"type": "light", "noun": "light", "room": "dining room"}}
    say = Verbalizer(entities, ["light_6", "light_7"])
    assert say.goal("(light-on light_7)") == "the light in the dining room is on"
    assert say.name("light_6") == "Ivy's light"
    # where the words name the owner's room, the thing is said as they say it
    assert Verbalizer(entities, ["light_6"], rooms=["ivy_bedroom"]).name("light_6") == "the light in Ivy's bedroom"
    # two of one phrase in one room still need their names
    assert "light_8" in Verbalizer(entities, ["light_7", "light_8"]).name("light_8")
