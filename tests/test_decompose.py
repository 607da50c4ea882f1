"""Decompose, then choose (`servicerobot.language.decompose`): numbers read from words, kinds, whole goals
built from a model's answers (a fake scoring model here; the real model is in test_local_llm*.py)."""

from __future__ import annotations

import math

import pytest

from servicerobot.language import decompose
from servicerobot.language.base import Scored
from servicerobot.language.candidates import relevance
from servicerobot.language.chooser import ChoosingInterpreter
from servicerobot.language.interpreter import Context
from servicerobot.pddl import Atom


def test_things_named_once_each_by_their_marks_are_counted_and_a_verb_is_no_second_thing():
    marks = frozenset({"white", "yellow"})
    assert decompose.quantity("The white towel and the yellow towel need washing.", "towel", marks) == 2
    assert decompose.quantity("Mop the floor, then clean the mop.", "mop") == 1


@pytest.mark.parametrize("text,noun,count", [
    ("Could you take three apples over to the desk?", "apple", 3),
    ("Bring a couple of apples to the counter.", "apple", 2),
    ("Find all the scattered apples and put them in the fridge.", "apple", None),
    ("Both magazines belong on the shelf.", "magazine", 2),
    ("Remote on the sofa, please.", "remote", 1),
    ("Throw away a cola can and a banana peel.", "cola can", 1),
    ("Wash the dirty dishes.", "dish", None),
    ("Set the table for two people.", "fork", 2),  # a kind the words do not name: as many as the people
    ("Lay the table for two: plates, forks and glasses.", "glass", 2),
    ("Set the kitchen table for dinner, three of us.", "plate", 3),
    ("Three people are coming for dinner.", "plate", 3),
    ("Set up my study: laptop on the desk, three books on the shelf.", "laptop", 1),
    ("Put 4 cups in the sink.", "cup", 4),
])
def test_quantity_reads_numbers_from_words(text, noun, count):
    assert decompose.quantity(text, noun) == count


def _house() -> Context:
    """A kitchen with a dining table, two plates, three forks, a kite, two lights and a sink."""
    from servicerobot.scenes.household import household_domain

    entities = {"kitchen": {"type": "room", "noun": "kitchen"},
                "hall": {"type": "room", "noun": "hall"},
                "table_1": {"type": "surface", "noun": "dining table", "room": "kitchen"},
                "counter_1": {"type": "surface", "noun": "counter", "room": "kitchen"},
                "light_1": {"type": "light", "noun": "light", "room": "kitchen"},
                "light_2": {"type": "light", "noun": "light", "room": "hall"},
                "ana": {"type": "person", "name": "Ana", "noun": "Ana"},
                "robot": {"type": "robot", "noun": "robot"}}
    facts = {Atom("light-on", ("light_1",)), Atom("light-on", ("light_2",)), Atom("in-room", ("ana", "kitchen"))}
    for name in ("plate_1", "plate_2", "fork_1", "fork_2", "fork_3", "kite_1"):
        entities[name] = {"type": "dish" if name[0] in "pf" else "decor", "noun": name.split("_")[0]}
        facts.add(Atom("on", (name, "counter_1")))
    return Context(household_domain(), entities, frozenset(facts), "robot")


def test_kinds_group_things_by_noun_and_mark_the_named_ones():
    context = _house()
    text = "Put the plates on the dining table."
    found = {k.noun: k for k in decompose.kinds(context, text, relevance(context, text, "Ana"))}
    assert sorted(found["fork"].names) == ["fork_1", "fork_2", "fork_3"] and not found["fork"].named
    assert found["plate"].named and found["plate"].count is None  # "the plates": all of them
    assert found["light"].fixed and not found["light"].named  # fixtures: by the model's yes only
    assert "ana" not in {n for k in found.values() for n in k.names}  # people are no kind


class Answers:
    """A fake scoring model: "<kind>: yes" is likely for the kinds in `yes`; an answer containing one of
    `liked` gets -1, another -20 + its length (so whole goals of the liked parts win); records the calls."""

    name = "answers"

    def __init__(self, yes=(), liked=()):
        self.yes, self.liked, self.calls = set(yes), list(liked), []

    def score(self, messages, answers, *, slot=None, beam=None, keep=()) -> Scored:
        self.calls.append({"slot": slot, "answers": list(answers)})
        out = []
        for a in answers:
            kind, _, said = a.partition(": ")
            if said in ("yes", "no") and not a.startswith("Done"):
                out.append([-1.0, -0.1 if (said == "yes") == (kind in self.yes) else -3.0, -0.5])
            else:
                hits = sum(p in a for p in self.liked)
                out.append([-20.0 + 5 * hits - len(a) / 100, -0.5])
        return Scored(out, prompt_tokens=10, candidate_tokens=len(answers))


def test_a_request_that_names_no_kind_gets_the_kinds_the_model_says_yes_to():
    """"Set the table for two": the model's yes to forks and plates (common sense), the words' number (two),
    the model's choice of relation (on the dining table): two plates and two forks on it, never the kite."""
    context = _house()
    model = Answers(yes={"forks", "plates"}, liked=["on the dining table"])
    chooser = ChoosingInterpreter(model)
    goal = chooser.interpret_task("Set the table for two people.", "Ana", context)
    parts = set(goal[5:-1].replace(") (", ")|(").split("|")) if goal.startswith("(and") else {goal}
    assert len([p for p in parts if p.startswith("(on plate_")]) == 2
    assert len([p for p in parts if p.startswith("(on fork_")]) == 2
    assert all(p.endswith(" table_1)") for p in parts) and "kite_1" not in goal
    assert chooser.decomposition["involved"][:2] in ([("plates", 2), ("forks", 2)], [("forks", 2), ("plates", 2)])
    kinds_call = next(c for c in model.calls if c["slot"] == "entities")
    assert "forks: yes" in kinds_call["answers"] and "kites: no" in kinds_call["answers"]


def test_every_kind_of_a_type_becomes_a_forall_where_the_words_say_every():
    context = _house()
    chosen = [k for k in decompose.kinds(context, "turn off every light", {}) if k.noun == "light"]
    chosen[0].keys = decompose.relation_keys(context, chosen[0], [])
    chosen[0].best = "(not (light-on ?))"
    goals = decompose.build(context, chosen, {}, [], "turn off every light")
    assert "(forall (?l - light) (not (light-on ?l)))" in goals
    assert "(and (not (light-on light_1)) (not (light-on light_2)))" in goals  # the things listed, too


def test_the_decision_weighs_the_end_of_the_turn_and_the_kinds():
    short, long = [-2.0, -2.5], [-8.0, -0.2]  # words, then the end of the turn
    assert decompose.decide([short, long], [0.0, 0.0], 1.0, 0.0) == 0  # plain log-probability: the short one
    assert decompose.decide([short, long], [0.0, 0.0], 4.0, 0.0) == 1  # the model is sure the long one is all
    assert decompose.decide([short, long], [-4.6, -0.3], 1.0, 1.0) == 1  # the short one leaves out named kinds


def test_a_goal_names_as_many_of_a_named_kind_as_the_words_ask_for():
    apples = decompose.Kind("apple", ["apple_1", "apple_2", "apple_3", "apple_4"], named=True)  # "all the apples"
    fridge = decompose.Kind("fridge", ["fridge_1"], fixed=True)
    one = "(inside apple_1 fridge_1)"
    every = "(and " + " ".join(f"(inside apple_{i} fridge_1)" for i in range(1, 5)) + ")"
    quantified = "(forall (?a - apple) (inside ?a fridge_1))"
    assert decompose.counted([one, every, quantified, "(closed fridge_1)"], [apples, fridge]) == [-1, 0, 0, 0]
    apples.count = 1  # "an apple": four is the wrong number
    assert decompose.counted([one, every], [apples]) == [0, -1]
    short, long = [-2.0, -2.5], [-6.0, -2.0]  # the one apple is likelier, and as sure to be the end
    assert decompose.decide([short, long], [0.0, 0.0], 2.0, 4.0) == 0
    assert decompose.decide([short, long], [0.0, 0.0], 2.0, 4.0, [-1, 0], 4.0) == 1  # all of them, as asked


def test_the_local_model_says_which_kinds_setting_a_table_involves(url):
    """The real model's common sense: setting the table involves plates and forks, not the kite; the goal built
    from its answers put two of them on the dining table (three model calls beside the enumeration's)."""
    from servicerobot.language.local_server import local_interpreter

    chooser = local_interpreter(url)
    goal = chooser.interpret_task("Set the table for two people.", "Ana", _house())
    found = chooser.decomposition["kinds"]
    assert found["plates"] > found["kites"] and found["forks"] > found["kites"]
    assert "kite_1" not in goal and " table_1)" in goal, goal
    # where the model's yes stands out from its baseline (the 1.5B default: plates and forks), the goals built
    # from its answers offer two things on the table, and the 1.5B picks one of them; the 0.5B that CI serves
    # says yes to every kind about alike, so nothing is involved and the enumeration's answer stands
    if chooser.decomposition["involved"]:
        built = chooser.decomposition["finals"]
        assert any(g.count(" table_1)") >= 2 and "kite_1" not in g for g in built), built


def _cleaning() -> Context:
    """A split domain of Context Matters' kind: a kitchen and a living room with dirty floors, a mop, an apple
    and a rotting apple, a sink and a cupboard (fixtures); a desk that can be moved."""
    from servicerobot.pddl import parse_domain

    domain = parse_domain("""(define (domain cleaning) (:requirements :strips :typing)
      (:types room locatable - object robot grabbable furniture - locatable mop disposable - grabbable)
      (:predicates (at ?x - locatable ?r - room) (inside ?x - grabbable ?f - furniture)
                   (dirty-floor ?r - room) (is-clean ?m - mop) (thrashed ?d - disposable))
      (:action mop :parameters (?r - room ?m - mop) :precondition (dirty-floor ?r)
        :effect (and (not (dirty-floor ?r)) (not (is-clean ?m))))
      (:action wash :parameters (?m - mop) :effect (is-clean ?m))
      (:action throw :parameters (?d - disposable) :effect (thrashed ?d))
      (:action put :parameters (?x - grabbable ?f - furniture) :effect (inside ?x ?f))
      (:action carry :parameters (?x - locatable ?a - room ?b - room) :precondition (at ?x ?a)
        :effect (and (at ?x ?b) (not (at ?x ?a)))))""")
    entities = {"kitchen_1": {"type": "room", "noun": "kitchen"},
                "living_room_2": {"type": "room", "noun": "living room"},
                "dining_room_3": {"type": "room", "noun": "dining room"},
                "mop_4": {"type": "mop", "noun": "mop"},
                "apple_5": {"type": "grabbable", "noun": "apple"},
                "rotting_apple_6": {"type": "disposable", "noun": "rotting apple"},
                "sink_7": {"type": "furniture", "noun": "sink", "room": "kitchen_1"},
                "cupboard_8": {"type": "furniture", "noun": "cupboard", "room": "kitchen_1"},
                "desk_9": {"type": "furniture", "noun": "desk", "room": "living_room_2"},
                "robot": {"type": "robot", "noun": "robot"}}
    facts = {Atom("dirty-floor", ("kitchen_1",)), Atom("dirty-floor", ("living_room_2",)),
             Atom("dirty-floor", ("dining_room_3",)), Atom("at", ("desk_9", "living_room_2"))}
    return Context(domain, entities, frozenset(facts), "robot")


@pytest.mark.parametrize("text,named,not_named", [
    # the head of a longer noun names no kind of its own; rooms are the things asked about where their state is
    ("throw away a rotting apple, then mop the floor in the kitchen and living room",
     {"rotting apple", "kitchen", "living room"}, {"apple", "dining room", "sink", "cupboard"}),
    # fixtures after a preposition are places; as the object of a verb they are the thing moved
    ("put the desk in the kitchen and the apple in the kitchen sink", {"apple", "desk"}, {"sink", "kitchen"}),
    ("take the apple from the desk and cupboard", {"apple"}, {"desk", "cupboard"}),
    ("clean every room", set(), {"kitchen", "living room", "dining room"}),  # "room" names none of them
])
def test_which_kinds_the_words_name(text, named, not_named):
    context = _cleaning()
    found = {k.noun: k for k in decompose.kinds(context, text, relevance(context, text, "Ana"))}
    assert {n for n in named if found[n].named} == named
    assert not {n for n in not_named if found[n].named}
    places = {n for n, k in found.items() if k.place}
    assert places <= not_named  # a fixture named only as a place is marked so (its changes say nothing)


def test_a_kind_asked_to_the_fixture_of_a_named_room_comes_from_every_room():
    """"Bring the apples from around the house to the kitchen sink": the kitchen is where they go, so the
    apples are not only those already in the kitchen."""
    context = _cleaning()
    apples = decompose.Kind("apple", ["apple_5", "apple_x"], named=True)
    where = {"apple_5": "living_room_2", "apple_x": "kitchen_1"}
    lits = ["(inside apple_5 sink_7)", "(inside apple_x sink_7)"]
    assert decompose.pick(context, apples, "(inside ? sink_7)", lits, {}, where, ["kitchen_1"]) == lits
    assert decompose.pick(context, apples, "(at ? dining_room_3)", ["(at apple_5 dining_room_3)",
                                                                   "(at apple_x dining_room_3)"],
                          {}, where, ["kitchen_1"]) == ["(at apple_x dining_room_3)"]  # "the apples in the kitchen"


def test_asked_for_more_than_there_are_every_one_there_is_counts():
    glasses = decompose.Kind("glass", ["glass_1", "glass_2", "glass_3"], named=True, count=5)  # "find 5 glasses"
    one = "(inside glass_1 cupboard_8)"
    three = "(and " + " ".join(f"(inside glass_{i} cupboard_8)" for i in (1, 2, 3)) + ")"
    assert decompose.counted([one, three], [glasses]) == [-1, 0]


@pytest.mark.parametrize("key,text,said", [
    ("(is-clean ?)", "mop the floor and clean the mop", True),
    ("(at ? kitchen_1)", "mop the floor and clean the mop", False),
    ("(not (dirty-floor ?))", "mop the floor in the kitchen", False),  # a negated key: never by its words
    ("(thrashed ?)", "throw away the rotting apple", False),
])
def test_a_relation_is_said_by_the_words_of_its_predicate(key, text, said):
    assert decompose.state_said(key, text) is said


def test_built_goals_leave_out_a_fixture_the_words_name_only_as_a_tool():
    """"Mop the floor, using the mop in the cupboard": a goal about the floor alone is offered beside the one
    that also changes the unnamed fixture the model said yes to."""
    context = _cleaning()
    floor = decompose.Kind("kitchen", ["kitchen_1"], fixed=True, named=True, position=3)
    floor.keys, floor.best = {"(not (dirty-floor ?))": ["(not (dirty-floor kitchen_1))"]}, "(not (dirty-floor ?))"
    desk = decompose.Kind("desk", ["desk_9"], fixed=True, p_yes=0.9)
    desk.keys, desk.best = {"(at ? kitchen_1)": ["(at desk_9 kitchen_1)"]}, "(at ? kitchen_1)"
    goals = decompose.build(context, [floor, desk], {}, [], "mop the kitchen floor")
    assert "(and (not (dirty-floor kitchen_1)) (at desk_9 kitchen_1))" in goals
    assert "(not (dirty-floor kitchen_1))" in goals


def test_a_state_the_words_ask_for_is_offered_though_it_holds_now():
    """"Mop the floor, then clean the mop": the mop is clean now, but mopping dirties it; "the mop is clean"
    is offered, and "the mop is dirty" (the only news, but the opposite of what the words ask) is not."""
    context = _cleaning()
    context = Context(context.domain, context.entities, context.facts | {Atom("is-clean", ("mop_4",))}, "robot")
    mop = decompose.Kind("mop", ["mop_4"], named=True)
    keys = decompose.relation_keys(context, mop, [], "mop the floor, then clean the mop")
    assert keys["(is-clean ?)"] == ["(is-clean mop_4)"] and "(not (is-clean ?))" not in keys
    assert "(is-clean ?)" not in decompose.relation_keys(context, mop, [], "mop the floor")


def test_a_scene_mostly_of_what_the_request_needs_is_split_at_the_gap_in_the_odds():
    """A dining room's kinds: most are tableware, so the median calibration says no to forks; the clear gap
    between the tableware and the vase and apples is the even chance instead. A home's smear of kinds (no
    clear gap, or a gap with one kind or thirty above it) keeps the median's."""
    def kinds(n, named=()):
        return [decompose.Kind(f"k{i}", [f"x{i}"], named=i in named) for i in range(n)]

    dining = [0.73, 0.31, -0.55, -0.61, -1.0, -1.03, -1.06, -2.48, -3.78]
    assert decompose._gap(kinds(9), dining, 0.0) == pytest.approx((-1.06 - 2.48) / 2)
    smear = [0.8, 0.4, 0.1, -0.2, -0.5, -0.9, -1.1, -1.4]
    assert decompose._gap(kinds(8), smear, 0.0) == 0.0
    bulk = [0.9 - 0.1 * i for i in range(30)] + [-6.0]  # thirty kinds above one outlier
    assert decompose._gap(kinds(31), bulk, 0.0) == 0.0
    sure = [3.0, 2.8, -1.0, -1.2, -1.3]  # both above the gap are involved already
    assert decompose._gap(kinds(5), sure, 0.0) == 0.0
    named_first = [5.0] + dining  # a named kind's odds take no part
    assert decompose._gap(kinds(10, named=(0,)), named_first, 0.0) == pytest.approx((-1.06 - 2.48) / 2)


@pytest.mark.parametrize("text", ["wash the dirty underwear", "put the clean plates away",
                                  "Wash dirty underclothing only using the washing machine."])
def test_a_state_said_of_a_thing_as_it_is_asks_for_nothing(text):
    assert not decompose.state_said("(is-dirty ?)", text) and not decompose.state_said("(is-clean ?)", text)


def _office() -> Context:
    """A study with a shelf holding two books and a pen, a locker holding a laptop, a mug on the desk."""
    from servicerobot.scenes.household import household_domain

    entities = {"study": {"type": "room", "noun": "study"},
                "living_room": {"type": "room", "noun": "living room"},
                "shelf_1": {"type": "shelf", "noun": "shelf", "room": "study"},
                "locker_1": {"type": "container", "noun": "locker", "room": "study"},
                "desk_1": {"type": "surface", "noun": "desk", "room": "study"},
                "robot": {"type": "robot", "noun": "robot"}}
    facts = {Atom("inside", ("laptop_1", "locker_1")), Atom("on", ("mug_1", "desk_1"))}
    for name in ("book_1", "book_2", "pen_1"):
        facts.add(Atom("on", (name, "shelf_1")))
    for name, typ in (("book_1", "book"), ("book_2", "book"), ("pen_1", "gadget"), ("laptop_1", "gadget"),
                      ("mug_1", "dish")):
        entities[name] = {"type": typ, "noun": name.split("_")[0]}
    return Context(household_domain(), entities, frozenset(facts), "robot")


@pytest.mark.parametrize("text,named", [
    ("Remove the objects from the shelf and locker, then tidy the study.", {"book", "pen", "laptop"}),
    ("Take everything off the shelf.", {"book", "pen"}),
    ("Put the things in the locker on the desk.", {"laptop"}),
    ("Dust the shelf and the locker.", set()),  # no word for their contents: nothing of them named
])
def test_the_things_in_a_named_fixture_are_named_by_a_word_for_contents(text, named):
    context = _office()
    found = decompose.kinds(context, text, relevance(context, text, "Ana"))
    assert {k.noun for k in found if k.named and not k.fixed} == named
    assert all(k.count is None for k in found if k.noun in named)  # as many as there are


def test_taking_things_out_of_where_they_are_is_a_relation_offered():
    context = _office()
    text = "Remove the books from the shelf."
    found = {k.noun: k for k in decompose.kinds(context, text, relevance(context, text, "Ana"))}
    keys = decompose.relation_keys(context, found["book"], ["living_room"], text)
    assert keys["(not (on ? shelf_1))"] == ["(not (on book_1 shelf_1))", "(not (on book_2 shelf_1))"]
    # where the words do not name the place a thing is in now, no such relation
    other = "Bring the books to the living room."
    assert not any(k.startswith("(not (on") for k in decompose.relation_keys(context, found["book"], ["living_room"],
                                                                            other))
    # nor where they name it but not as where things come from ("organise the shelf")
    tidy = "Organise the shelf: the books go there."
    assert not any(k.startswith("(not (on") for k in decompose.relation_keys(context, found["book"], ["living_room"],
                                                                            tidy))
    both = "Take the books off the desk and shelf."
    assert "(not (on ? shelf_1))" in decompose.relation_keys(context, found["book"], ["living_room"], both)


@pytest.mark.parametrize("text,room", [
    ("Put the desk in the living, then rest.", True),  # a room's name cut short
    ("Put the desk in the living room.", True),
    ("Put the desk in the living area of the study.", False),  # "living" before another word names no room
])
def test_a_room_named_by_the_first_word_of_its_name(text, room):
    context = _office()
    assert ("living_room" in relevance(context, text, "Ana")) == room


def test_a_whole_noun_said_names_no_other_kind_of_its_head():
    """PyBullet's items are nouns with their colour: "the green box" names the green box, not the blue one."""
    from servicerobot.scenes.household import household_domain

    entities = {"robot": {"type": "robot", "noun": "robot"}, "kitchen": {"type": "room", "noun": "kitchen"}}
    for i, colour in enumerate(("green", "blue", "white"), 1):
        entities[f"box_{i}"] = {"type": "gadget", "noun": f"{colour} box", "colour": colour}
    facts = frozenset(Atom("in-room", (f"box_{i}", "kitchen")) for i in (1, 2, 3))
    context = Context(household_domain(), entities, facts, "robot")
    text = "There is a suspicious green box in the kitchen. Could you check it?"
    named = [k.noun for k in decompose.kinds(context, text, relevance(context, text, "Ana")) if k.named]
    assert named == ["green box"]
    text = "Check the boxes."  # the head alone still names every kind of it
    named = {k.noun for k in decompose.kinds(context, text, relevance(context, text, "Ana")) if k.named}
    assert named == {"green box", "blue box", "white box"}


def _ask(odds: list[float], named=()) -> list[float]:
    """Each kind's calibrated P(yes), from a fake model whose log-odds of yes for kind i is odds[i]."""
    found = [decompose.Kind(f"k{i}", [f"x{i}"], named=i in named) for i in range(len(odds))]

    def score(messages, answers):
        return [[odds[i // 2] if i % 2 == 0 else 0.0, -0.1] for i in range(len(answers))]

    decompose.ask_kinds(score, "a request", "Ana", found)
    return [k.p_yes for k in found]


def test_kinds_are_involved_at_fair_odds_where_the_words_name_none():
    """A small dining room: plates, napkins, spoons, forks, knives, glasses and a vase. The median kind is a fork,
    and its calibration would say no to forks; where the words name nothing, fair odds (above -1) involve."""
    odds = [1.09, 0.75, -0.14, -0.49, -0.8, -1.65, -2.14]
    p = _ask(odds)
    assert all(x > decompose._YES_AT for x in p[:5]) and all(x < decompose._YES_AT for x in p[5:])


def test_a_request_naming_its_things_involves_others_less():
    """"Put all the shoes in the bathroom": the vase the model half says yes to is not involved, though the
    same odds without a named kind would be."""
    odds = [3.71, -2.43, -3.44, -3.91, -4.23, -5.56]
    assert _ask(odds, named=(0,))[1] < decompose._YES_AT
    assert _ask(odds)[1] > decompose._YES_AT  # (where nothing is named, the gap below the vase would involve it)


def test_a_model_that_tells_no_kind_apart_involves_none_at_fair_odds():
    """A small model that says yes to every kind alike (odds within half a nat: the 0.5B on "set the table")
    involves nothing by fair odds; the enumeration's answer stands."""
    assert all(x < decompose._YES_AT for x in _ask([-0.74, -0.98, -1.04, -1.17])[1:])


def _taps() -> Context:
    """`_house` with two sinks, one running, and no light memory has on."""
    context = _house()
    entities = {**context.entities, "sink_1": {"type": "sink", "noun": "kitchen sink", "room": "kitchen"},
                "sink_2": {"type": "sink", "noun": "bathroom sink", "room": "hall"}}
    facts = {a for a in context.facts if a.predicate != "light-on"} | {Atom("faucet-on", ("sink_1",))}
    return Context(context.domain, entities, frozenset(facts), "robot")


@pytest.mark.parametrize("key,text,noun,said", [
    ("(not (light-on ?))", "shut off every light", "light", True),  # "off": the opposite of on
    ("(light-on ?)", "shut off every light", "light", False),  # the thing's own noun says no state
    ("(light-on ?)", "turn on the light", "light", True),
    ("(not (closed ?))", "open the fridge", "fridge", True),
    ("(not (is-dirty ?))", "wash the dirty clothes", "clothes", True),  # "wash": the opposite of dirty
    ("(is-dirty ?)", "wash the dirty clothes", "clothes", False),  # "dirty" before its noun: how they are now
    ("(not (wet ?))", "the towels need washing and drying", "towel", True),
    ("(not (light-on ?))", "please make sure no lights or faucets are left on", "light", True),  # under "no"
    ("(light-on ?)", "please make sure no lights or faucets are left on", "light", False),
    ("(cold ?)", "chill it in the fridge", "yogurt", True),  # a word for the state ("chill": cold)
])
def test_a_state_is_said_by_its_words_or_its_opposite_never_by_the_thing_noun(key, text, noun, said):
    assert decompose.state_said(key, text, noun) is said


def test_a_fixture_is_named_by_another_word_that_says_what_changes_of_it():
    """"Every light and tap": a tap is a sink's faucet (`faucet-on`), so both sinks are named; "a glass of
    water" in the kitchen sink names no sink as the thing to change."""
    context = _taps()
    text = "Shut off every light and tap."
    found = {k.noun: k for k in decompose.kinds(context, text, relevance(context, text, "Ana"))}
    assert found["kitchen sink"].named and found["bathroom sink"].named and found["kitchen sink"].count is None
    text = "Put the plates in the kitchen sink."
    found = {k.noun: k for k in decompose.kinds(context, text, relevance(context, text, "Ana"))}
    assert not found["bathroom sink"].named and found["kitchen sink"].place


def test_every_light_and_tap_off_is_one_forall_each_though_memory_has_none_on():
    """The request is news: "off" is offered of lights memory does not have on, and the two sinks' parts
    join into one `forall`, said once."""
    context = _taps()
    text = "Shut off every light and tap."
    chosen = [k for k in decompose.kinds(context, text, relevance(context, text, "Ana")) if k.named]
    for kind in chosen:
        kind.keys = decompose.relation_keys(context, kind, [], text)
        kind.best = next(k for k in kind.keys if k.startswith("(not (") and "-on " in k)
    goals = decompose.build(context, chosen, {}, [], text)
    both = "(and (forall (?l - light) (not (light-on ?l))) (forall (?s - sink) (not (faucet-on ?s))))"
    assert both in goals
    assert not any("(forall (?s" in g and "(not (faucet-on sink_" in g for g in goals)  # said once


def test_the_chooser_reads_lights_and_taps_off_as_both_foralls():
    context = _taps()
    chooser = ChoosingInterpreter(Answers(liked=["off"]))
    goal = chooser.interpret_task("We're leaving; all lights and taps off.", "Ana", context)
    assert "(forall (?l - light) (not (light-on ?l)))" in goal and "(forall (?s - sink) (not (faucet-on ?s)))" in goal


def test_a_state_the_words_ask_for_joins_the_kind_relation():
    """"Chill the pasta in the fridge": the pasta in the fridge and cold, both built."""
    from servicerobot.scenes.household import household_domain

    entities = {"kitchen": {"type": "room", "noun": "kitchen"},
                "fridge_1": {"type": "container", "noun": "fridge", "room": "kitchen"},
                "pasta_1": {"type": "food", "noun": "pasta"}, "robot": {"type": "robot", "noun": "robot"}}
    context = Context(household_domain(), entities, frozenset({Atom("chills", ("fridge_1",)),
                                                               Atom("closed", ("fridge_1",))}), "robot")
    text = "Chill the pasta in the fridge."
    pasta = next(k for k in decompose.kinds(context, text, relevance(context, text, "Ana")) if k.noun == "pasta")
    pasta.keys = decompose.relation_keys(context, pasta, ["fridge_1"], text)
    pasta.best = "(inside ? fridge_1)"
    assert decompose.said_states(pasta, text) == ["(cold ?)"]
    pasta.also = decompose.said_states(pasta, text)
    assert decompose.build(context, [pasta], {}, [], text)[0] == "(and (inside pasta_1 fridge_1) (cold pasta_1))"


@pytest.mark.parametrize("text,noun,state,place,kept", [
    ("Chill the pasta in the fridge.", "pasta", "(cold ?)", "fridge_1", True),  # putting it in chills it
    ("Wash the jeans in the washer.", "pair of jeans", "(not (dirty ?))", "washer_1", False),  # the washer's run
])
def test_a_state_asked_for_keeps_the_place_whose_placing_brings_it_about(text, noun, state, place, kept):
    """Where the model finds the state likelier than the place, the place stays asked for where the action
    that takes a thing there also brings the state about (`put-in` of a container that chills), and not where
    another action does (a washer's run)."""
    from servicerobot.scenes.household import household_domain

    entities = {"kitchen": {"type": "room", "noun": "kitchen"},
                "fridge_1": {"type": "container", "noun": "fridge", "room": "kitchen"},
                "washer_1": {"type": "washer", "noun": "washer", "room": "kitchen"},
                "pasta_1": {"type": "food", "noun": "pasta"},
                "jeans_1": {"type": "clothing", "noun": "pair of jeans"}, "robot": {"type": "robot", "noun": "robot"}}
    facts = frozenset({Atom("chills", ("fridge_1",)), Atom("dirty", ("jeans_1",))})
    context = Context(household_domain(), entities, facts, "robot")
    rel = relevance(context, text, "Ana")
    kind = next(k for k in decompose.kinds(context, text, rel) if k.noun == noun)
    kind.keys = decompose.relation_keys(context, kind, [place], text)
    assert f"(inside ? {place})" in kind.keys and state in kind.keys
    kind.best, kind.also = state, []
    decompose.placed_with_state(context, kind, text, {place})
    assert (kind.best, kind.also) == ((f"(inside ? {place})", [state]) if kept else (state, []))
    decompose.placed_with_state(context, kind, text, set())  # a place the words do not name
    assert kind.best == (f"(inside ? {place})" if kept else state)


def test_a_count_holds_with_the_things_already_there_and_one_relation_for_all():
    """"Both magazines on the shelf" where one is there already: moving the other one is both; one there and
    the other on the bookshelf is not."""
    context = Context(_house().domain, {"magazine_1": {"type": "item", "noun": "magazine"},
                                        "magazine_2": {"type": "item", "noun": "magazine"}},
                      frozenset({Atom("on", ("magazine_1", "shelf_1"))}), "robot")
    magazines = decompose.Kind("magazine", ["magazine_1", "magazine_2"], named=True, count=2)
    other = "(on magazine_2 shelf_1)"
    split = "(and (on magazine_2 shelf_1) (on magazine_1 bookshelf_1))"
    both_elsewhere = "(and (on magazine_1 bookshelf_1) (on magazine_2 bookshelf_1))"
    assert decompose.counted([other, split, both_elsewhere], [magazines], context) == [0, -1, 0]


def test_a_fixture_named_as_the_place_stays_a_place_though_the_model_involves_it():
    """"Store the bread in the fridge": the model says yes to the fridge, which makes it a kind of its own,
    and the bread can still go in it."""
    from servicerobot.scenes.household import household_domain

    entities = {"kitchen": {"type": "room", "noun": "kitchen"},
                "fridge_1": {"type": "fridge", "noun": "fridge", "room": "kitchen"},
                "bread_1": {"type": "food", "noun": "bread"}, "ana": {"type": "person", "name": "Ana", "noun": "Ana"},
                "robot": {"type": "robot", "noun": "robot"}}
    entities |= {f"{n}_1": {"type": "item", "noun": n} for n in ("cup", "book", "vase", "kite")}
    context = Context(household_domain(), entities, frozenset({Atom("closed", ("fridge_1",)),
                                                               Atom("in-room", ("ana", "kitchen"))}), "robot")
    chooser = ChoosingInterpreter(Answers(yes={"breads", "the fridge"}, liked=["the bread is in the fridge"]))
    chooser.interpret_task("Store the bread in the fridge for me.", "Ana", context)
    assert "the fridge" in [label for label, _ in chooser.decomposition["involved"]]
    assert chooser.decomposition["keys"]["breads"] == "(inside ? fridge_1)"


def test_a_word_for_the_thing_says_no_state_and_no_state_joins_its_opposite():
    """"Lights off, taps off": "tap" names the sink (its synonym), so it asks for no `faucet-on`; the sinks'
    chosen key "not running" is never joined by "running"."""
    assert not decompose.state_said("(faucet-on ?)", "make sure nothing is left running: lights off, taps off",
                                    "kitchen sink")
    sink = decompose.Kind("kitchen sink", ["sink_1"], fixed=True, named=True)
    sink.keys = {"(not (faucet-on ?))": ["(not (faucet-on sink_1))"], "(faucet-on ?)": ["(faucet-on sink_1)"]}
    sink.best = "(not (faucet-on ?))"
    assert decompose.said_states(sink, "turn the tap off, it is running") == []


@pytest.mark.parametrize("text,count", [
    ("Get Ana's orange socks clean and dry.", None),
    ("Bring me a pair of socks.", 1),
    ("Bring me two pairs of socks.", 2),
    ("Both pairs of socks go in the basket.", 2),
])
def test_a_kind_counted_in_pairs_is_named_and_counted_by_what_is_paired(text, count):
    """"Socks" name the kind "pair of socks"; "a pair" is one of it, not two."""
    assert decompose.quantity(text, "pair of socks") == count
    from servicerobot.scenes.household import household_domain
    context = Context(household_domain(), {"socks_1": {"type": "clothing", "noun": "pair of socks"},
                                           "kite_1": {"type": "decor", "noun": "kite"}}, frozenset(), "robot")
    found = {k.noun: k for k in decompose.kinds(context, text, relevance(context, text, "Ana"))}
    assert found["pair of socks"].named and not found["kite"].named


@pytest.mark.parametrize("text,unnamed", [("Set the table for two people.", True),
                                          ("Put the plates on the dining table.", False),
                                          ("Switch off every light in the house.", False)])  # a fixture changed
def test_the_kinds_answers_weigh_more_where_the_words_name_nothing_to_move(monkeypatch, text, unnamed):
    weights = []
    real = decompose.decide
    monkeypatch.setattr(decompose, "decide", lambda tokens, fit, end_w, kind_w, *a: weights.append(kind_w)
                        or real(tokens, fit, end_w, kind_w, *a))
    chooser = ChoosingInterpreter(Answers(yes={"forks", "plates"}, liked=["on the dining table"]),
                                  kind_weight=4.0, kind_weight_unnamed=12.0)
    chooser.interpret_task(text, "Ana", _house())
    assert weights == [12.0 if unnamed else 4.0]


def test_all_of_a_kind_counts_only_what_the_goal_moves():
    """"All the towels to the laundry basket": one towel taken to the bathroom where the others are is not all
    of them, though then all three are in the bathroom."""
    context = Context(_house().domain, {f"towel_{i}": {"type": "item", "noun": "towel"} for i in (1, 2, 3)},
                      frozenset(Atom("at", (f"towel_{i}", "bathroom_1")) for i in (2, 3)), "robot")
    towels = decompose.Kind("towel", ["towel_1", "towel_2", "towel_3"], named=True, count=None)
    one = "(at towel_1 bathroom_1)"
    all_three = "(and " + " ".join(f"(inside towel_{i} basket_1)" for i in (1, 2, 3)) + ")"
    assert decompose.counted([one, all_three], [towels], context) == [-1, 0]


def test_a_fixture_named_as_a_tool_is_no_place_things_go():
    """"Wash the dirty clothes using the washing machine": the machine is a tool (the clothes end clean, not
    in it), where "in the fridge" is a place."""
    from servicerobot.scenes.household import household_domain

    entities = {"kitchen": {"type": "room", "noun": "kitchen"},
                "washer_1": {"type": "washer", "noun": "washing machine", "room": "kitchen"},
                "fridge_1": {"type": "fridge", "noun": "fridge", "room": "kitchen"},
                "shirt_1": {"type": "clothing", "noun": "shirt"}}
    context = Context(household_domain(), entities, frozenset(), "robot")
    for text, noun, tool in (("Wash the dirty shirts using the washing machine.", "washing machine", True),
                             ("Put the shirts in the fridge.", "fridge", False)):
        found = {k.noun: k for k in decompose.kinds(context, text, relevance(context, text, "Ana"))}
        assert found[noun].place and found[noun].tool is tool


def test_a_type_word_names_every_kind_of_it_in_the_state_the_words_describe():
    """"All the dirty dishes": the forks are dishes too, named where one of them is dirty; not where none is."""
    context = _house()
    text = "Wash all the dirty dishes."
    dirty = Context(context.domain, context.entities, context.facts | {Atom("dirty", ("fork_2",))}, "robot")
    named = {k.noun for k in decompose.kinds(dirty, text, relevance(dirty, text, "Ana")) if k.named}
    assert "fork" in named and "kite" not in named
    named = {k.noun for k in decompose.kinds(context, text, relevance(context, text, "Ana")) if k.named}
    assert "fork" not in named
    # a type whose word is a kind's own noun names that kind alone
    entities = {**context.entities, "book_1": {"type": "book", "noun": "book", "colour": "purple"},
                "magazine_1": {"type": "book", "noun": "magazine"}}
    books = Context(context.domain, entities, context.facts, "robot")
    text = "The purple book should live on the counter."
    named = {k.noun for k in decompose.kinds(books, text, relevance(books, text, "Ana")) if k.named}
    assert "book" in named and "magazine" not in named
    text = "All the books go on the counter."
    named = {k.noun for k in decompose.kinds(books, text, relevance(books, text, "Ana")) if k.named}
    assert {"book", "magazine"} <= named


def test_a_conditional_forall_is_about_the_things_it_would_change():
    """"Throw out the broken things": a goal over every item that is broken is about the kinds memory knows
    broken things of, none where it knows none (so the kinds answers do not count against it)."""
    context = _house()
    found = decompose.kinds(context, "Throw out the broken things.", {})
    for kind in found:
        kind.p_yes = 0.3
    goal = "(forall (?i - item) (imply (broken ?i) (discarded ?i)))"
    none_broken = decompose.coverage(goal, found, context)
    assert none_broken == pytest.approx(sum(math.log(0.7) for k in found if not k.place))
    broken = Context(context.domain, context.entities, context.facts | {Atom("broken", ("kite_1",))}, "robot")
    assert decompose.coverage(goal, found, broken) == pytest.approx(none_broken - math.log(0.7) + math.log(0.3))
    # an unconditional forall is about every thing of its type
    items = {"plate", "fork", "kite"}
    assert decompose.coverage("(forall (?i - item) (discarded ?i))", found, context) == pytest.approx(
        sum(math.log(0.3 if k.noun in items else 0.7) for k in found if not k.place))


def test_a_word_for_a_fixture_that_says_its_state_names_it():
    """"Switch off every light and faucet": "faucet" names the sinks (as "tap" does) and asks their faucets
    off; the opposite state of a said one is not offered."""
    context = _taps()
    text = "Switch off every light and faucet."
    found = {k.noun: k for k in decompose.kinds(context, text, relevance(context, text, "Ana"))}
    assert found["kitchen sink"].named and found["bathroom sink"].named
    keys = decompose.relation_keys(context, found["kitchen sink"], [], text)
    assert "(not (faucet-on ?))" in keys and "(faucet-on ?)" not in keys


def test_a_room_that_names_where_a_named_fixture_is_is_no_place_to_take_things():
    """"Put the apple in the kitchen cupboard": the kitchen says which cupboard; "the apple is in the kitchen"
    is not offered (the model may like its shorter words), "in the cupboard" is; "to the kitchen" still is
    where no fixture of it is named."""
    context = _cleaning()
    model = Answers(liked=["kitchen"])
    goal = ChoosingInterpreter(model).interpret_task("Put the apple in the kitchen cupboard.", "Ana", context)
    offered = {a for c in model.calls for a in c["answers"]}
    assert "(inside apple_5 cupboard_8)" in goal and "(at apple_5 kitchen_1)" not in goal
    assert not any("apple is in the kitchen" in a for a in offered)
    model = Answers(liked=["kitchen"])
    goal = ChoosingInterpreter(model).interpret_task("Take the apple to the kitchen.", "Ana", context)
    assert "(at apple_5 kitchen_1)" in goal


def test_the_answers_saying_a_state_the_words_say_are_scored_to_their_end_first():
    """A beam call scores at most so many answers to their end; "get rid of the broken stuff" in a house of
    many things keeps "every item that is broken is thrown away" among them, whatever the enumeration order."""
    context = _house()
    entities = dict(context.entities)
    facts = set(context.facts)
    for i in range(40):  # things the words half name ("stuff"): their answers fill what a call scores in full
        entities[f"box_{i}"] = {"type": "decor", "noun": "stuff box", "colour": f"c{i}"}
        facts.add(Atom("on", (f"box_{i}", "counter_1")))
    context = Context(context.domain, entities, frozenset(facts), "robot")

    class Recorder(Answers):
        def score(self, messages, answers, *, slot=None, beam=None, keep=()):
            scored = super().score(messages, answers, slot=slot, beam=beam, keep=keep)
            self.calls[-1]["keep"] = set(keep)
            return scored

    model = Recorder()
    ChoosingInterpreter(model).interpret_task("Could you get rid of the broken stuff?", "Ana", context)
    call = next(c for c in model.calls if c["slot"] != "entities" and len(c["answers"]) > 48)
    broken = [i for i, a in enumerate(call["answers"]) if "broken" in a and "thrown away" in a]
    assert broken and set(broken) <= call["keep"]


def test_a_colour_names_the_thing_whose_noun_it_is_said_before():
    """"Yusuf's grey shirt, the white towel and the yellow towel": white and yellow are towels' colours, not
    a shirt's; where the words name one kind only, a colour anywhere names its things."""
    from servicerobot.scenes.household import household_domain

    entities = {"shirt_1": {"type": "clothing", "noun": "shirt", "colour": "grey"},
                "shirt_2": {"type": "clothing", "noun": "shirt", "colour": "yellow"},
                "towel_1": {"type": "clothing", "noun": "towel", "colour": "white"},
                "towel_2": {"type": "clothing", "noun": "towel", "colour": "yellow"},
                "robot": {"type": "robot", "noun": "robot"}}
    context = Context(household_domain(), entities, frozenset(), "robot")
    rel = relevance(context, "Wash the grey shirt, the white towel and the yellow towel.", "Ana")
    assert rel["shirt_1"] > rel["shirt_2"] and rel["towel_2"] == rel["towel_1"]
    rel = relevance(context, "Wash the shirt, the yellow one.", "Ana")
    assert rel["shirt_2"] > rel["shirt_1"]


def test_an_update_about_a_person_the_words_do_not_name_loses():
    """"Hiro is back in his bedroom", said by Ana: Hiro moved, not Ana, though a model may find the speaker's
    move likelier; "I'm back in the kitchen" moves the speaker."""
    context = _house()
    entities = {**context.entities, "hiro": {"type": "person", "name": "Hiro", "noun": "Hiro"}}
    facts = (context.facts - {Atom("in-room", ("ana", "kitchen"))}) | {Atom("in-room", ("hiro", "hall")),
                                                                       Atom("in-room", ("ana", "hall"))}
    context = Context(context.domain, entities, frozenset(facts), "robot")

    class Speaker(Answers):  # finds every change of Ana's 3 nats likelier
        def score(self, messages, answers, *, slot=None, beam=None, keep=()):
            scored = super().score(messages, answers, slot=slot, beam=beam, keep=keep)
            return Scored([t[:-1] + [t[-1] + (3.0 if "Ana" in a else 0.0)] for a, t in zip(answers, scored.logprobs)],
                          scored.prompt_tokens, scored.candidate_tokens)

    hiro = ChoosingInterpreter(Speaker(liked=["kitchen"])).interpret_update("Hiro is back in the kitchen.", "Ana", context)
    assert Atom("in-room", ("hiro", "kitchen")) in hiro.add
    ana = ChoosingInterpreter(Speaker(liked=["kitchen"])).interpret_update("I'm back in the kitchen.", "Ana", context)
    assert Atom("in-room", ("ana", "kitchen")) in ana.add


def test_a_report_of_two_changes_is_read_as_both_though_the_model_finds_one_a_little_likelier():
    """"The plate is on the dining table and the hall light is off": the union of the two changes is chosen
    where the model finds it less than 2 nats less likely than the likelier one alone."""
    context = _house()

    class TwoChanges(Answers):
        def score(self, messages, answers, *, slot=None, beam=None, keep=()):
            self.calls.append({"slot": slot, "answers": list(answers)})
            def lp(a):
                if "plates" in a or "plate_2" in a or "kitchen" in a:  # one plate, the hall's light
                    return -20.0
                plate, light = "plate" in a and "dining table" in a, "hall" in a and "off" in a
                return -3.0 if plate and light else -2.0 if plate else -2.5 if light else -20.0
            return Scored([[lp(a), 0.0] for a in answers], prompt_tokens=10, candidate_tokens=len(answers))

    delta = ChoosingInterpreter(TwoChanges()).interpret_update(
        "The plate is on the dining table and the hall light is off.", "Ana", context)
    assert Atom("light-on", ("light_2",)) in delta.remove
    assert any(a.predicate == "on" and a.args[1] == "table_1" for a in delta.add)


def test_things_are_taken_from_the_named_room_that_is_not_the_one_they_go_to():
    """"All the plates in the hall on the dining table in the kitchen": the hall's plates, not the kitchen's;
    where the words name only the room they go to, from anywhere."""
    context = _house()
    entities = {**context.entities, "shelf_9": {"type": "surface", "noun": "shelf", "room": "hall"},
                "plate_3": {"type": "dish", "noun": "plate"}}
    context = Context(context.domain, entities, context.facts | {Atom("on", ("plate_3", "shelf_9"))}, "robot")
    plates = decompose.Kind("plate", ["plate_1", "plate_2", "plate_3"], named=True)
    literals = [f"(on {p} table_1)" for p in plates.names]
    where = decompose.rooms_of(context)
    assert decompose.pick(context, plates, "(on ? table_1)", literals, {}, where, ["hall", "kitchen"]) == \
        ["(on plate_3 table_1)"]
    assert len(decompose.pick(context, plates, "(on ? table_1)", literals, {}, where, ["kitchen"])) == 3


def _two_shelves() -> Context:
    """`_house` with a shelf in the kitchen (shelf_8) and one in the hall (shelf_9)."""
    context = _house()
    entities = {**context.entities, "shelf_8": {"type": "surface", "noun": "shelf", "room": "kitchen"},
                "shelf_9": {"type": "surface", "noun": "shelf", "room": "hall"}}
    return Context(context.domain, entities, context.facts, "robot")


def test_a_room_names_the_fixture_it_is_said_of():
    """"The shelf in the hall? All the plates in the kitchen go there": the hall's shelf, not the kitchen's."""
    context = _two_shelves()
    rel = relevance(context, "Could you tidy the shelf in the hall? All the plates in the kitchen go there.", "Ana")
    assert rel["shelf_9"] > rel["shelf_8"]
    rel = relevance(context, "Tidy the shelf in the hall.", "Ana")  # one room named: as before
    assert rel["shelf_9"] > rel["shelf_8"]


def test_a_room_of_a_fixture_the_words_move_stays_a_place_to_take_things_to():
    """"Put the desk and the cupboard in the kitchen", the cupboard already there: the kitchen is where the
    desk goes (the cupboard is a thing moved, not a place that says which kitchen)."""
    context = _cleaning()
    model = Answers(liked=["kitchen"])
    goal = ChoosingInterpreter(model).interpret_task("Put the desk and the cupboard in the kitchen.", "Ana", context)
    assert "(at desk_9 kitchen_1)" in goal


def _fridge() -> Context:
    """A kitchen with a fridge and a counter; three milks in the fridge, cold, one (unmarked) on the counter,
    a broken candle and a whole one."""
    from servicerobot.scenes.household import household_domain

    entities = {"kitchen": {"type": "room", "noun": "kitchen"},
                "olga_bedroom": {"type": "room", "noun": "Olga's bedroom"},
                "fridge_1": {"type": "fridge", "noun": "fridge", "room": "kitchen"},
                "counter_1": {"type": "surface", "noun": "counter", "room": "kitchen"},
                "nightstand_1": {"type": "surface", "noun": "nightstand", "room": "Olga's bedroom"},
                "milk_1": {"type": "food", "noun": "milk"},
                "milk_2": {"type": "food", "noun": "milk", "mark": "large"},
                "milk_3": {"type": "food", "noun": "milk", "mark": "small"},
                "candle_1": {"type": "decor", "noun": "candle"}, "candle_2": {"type": "decor", "noun": "candle"},
                "robot": {"type": "robot", "noun": "robot"}}
    facts = {Atom("on", ("milk_1", "counter_1")), Atom("inside", ("milk_2", "fridge_1")),
             Atom("inside", ("milk_3", "fridge_1")), Atom("cold", ("milk_2",)), Atom("cold", ("milk_3",)),
             Atom("on", ("candle_1", "nightstand_1")), Atom("on", ("candle_2", "counter_1")),
             Atom("broken", ("candle_1",))}
    return Context(household_domain(), entities, frozenset(facts), "robot")


def test_a_state_asked_for_picks_out_no_thing_but_a_state_said_before_the_noun_does():
    """"Make sure the milk is cold again": the cold milks are not the one meant; "the cold milk" is."""
    context = _fridge()
    rel = relevance(context, "Make sure the milk is cold again.", "Ana")
    assert rel["milk_1"] == rel["milk_2"] == rel["milk_3"]
    rel = relevance(context, "Make sure the small milk is cold again.", "Ana")
    assert rel["milk_3"] > rel["milk_1"] == rel["milk_2"]
    rel = relevance(context, "Bring me the cold milk.", "Ana")
    assert rel["milk_2"] > rel["milk_1"]


def test_of_things_named_alike_those_a_request_would_change_are_picked_first():
    context = _fridge()
    milks = decompose.Kind("milk", ["milk_1", "milk_2", "milk_3"], named=True, count=1)
    literals = [f"(cold {m})" for m in milks.names[::-1]]
    assert decompose.pick(context, milks, "(cold ?)", literals, {}, {}, []) == ["(cold milk_1)"]


def test_states_the_words_ask_of_things_are_counted_where_an_answer_leaves_them_out():
    """"Wash and dry them": each thing clean and dry; a forall over a state leaves it out for none."""
    text = "The teal pair of jeans and the red pair of socks are dirty, can you wash and dry them?"
    assert decompose.state_said("(not (wet ?))", text, "pair of jeans")
    assert decompose.quantity(text, "pair of jeans", frozenset({"teal", "red"})) == 1
    assert decompose.quantity("The teal pair of jeans and the brown pair of jeans.", "pair of jeans",
                              frozenset({"teal", "brown"})) == 2
    jeans = decompose.Kind("pair of jeans", ["jeans_1"], named=True, best="(not (dirty ?))",
                           also=["(not (wet ?))"])
    socks = decompose.Kind("pair of socks", ["socks_1"], named=True, best="(not (dirty ?))",
                           also=["(not (wet ?))"])
    goals = ["(and (not (dirty jeans_1)) (not (wet jeans_1)) (not (dirty socks_1)) (not (wet socks_1)))",
             "(and (not (dirty jeans_1)) (not (dirty socks_1)))",
             "(and (not (dirty jeans_1)) (not (wet socks_1)))",
             "(and (inside jeans_1 basket_1) (inside socks_1 basket_1))",
             "(and (forall (?c - clothing) (not (dirty ?c))) (forall (?c - clothing) (not (wet ?c))))"]
    context = Context(_house().domain, {"jeans_1": {"type": "clothing", "noun": "pair of jeans"},
                                        "socks_1": {"type": "clothing", "noun": "pair of socks"},
                                        "robot": {"type": "robot", "noun": "robot"}}, frozenset(), "robot")
    assert decompose.unsaid_states(goals, [jeans, socks], text, context) == [0, 2, 2, 4, 0]
    assert decompose.decide([[-5.0, -0.1], [-3.0, -0.1]], [0.0, 0.0], 2.0, 4.0, unsaid=[0, 2],
                            state_weight=2.0) == 0


def test_things_picked_out_by_a_state_no_action_brings_about_are_what_the_request_is_about():
    """"Get rid of the broken stuff": the broken candle, not every candle; "the milk is cold" names no state."""
    context = _fridge()
    assert decompose.described(context, "Could you get rid of the broken stuff?") == {"candle_1"}
    assert decompose.described(context, "Make sure the milk is cold again.") == set()  # a fridge chills
    candles = decompose.Kind("candle", ["candle_1", "candle_2"], p_yes=0.2)
    decompose.narrow_to_described([candles], {"candle_1"})
    assert candles.names == ["candle_1"] and candles.p_yes >= 0.9
    named = decompose.Kind("candle", ["candle_1", "candle_2"], named=True)
    decompose.narrow_to_described([named], {"candle_1"})
    assert named.names == ["candle_1", "candle_2"]  # "the broken candle and the other candle"


def test_a_thing_on_a_fixture_is_in_the_room_the_fixture_stands_in_by_the_rooms_name():
    assert decompose.rooms_of(_fridge())["candle_1"] == "olga_bedroom"


def test_a_fixture_named_less_strongly_than_another_of_its_noun_is_no_place():
    """"The shelf in the hall": the kitchen's shelf is neither a target nor offered as a place."""
    context = _two_shelves()
    rel = relevance(context, "Could you tidy the shelf in the hall? All the plates in the kitchen go there.", "Ana")
    assert decompose.outnamed(context, rel) == {"shelf_8"}
    assert "shelf_8" not in decompose.targets(context, rel, "ana", ["hall", "kitchen"])
    rel = relevance(context, "Put the plates on a shelf.", "Ana")
    assert decompose.outnamed(context, rel) == set()


def test_all_of_a_kind_in_a_named_room_are_those_there_and_none_goes_back_to_that_room():
    """"All the books in Olga's bedroom go there (the kitchen counter)": the book on Olga's nightstand; one
    from the kitchen is a stray, and a goal putting a book onto Olga's nightstand sends it back."""
    context = _fridge()
    entities = {**context.entities, "book_1": {"type": "book", "noun": "book"},
                "book_2": {"type": "book", "noun": "book"}}
    facts = context.facts | {Atom("on", ("book_1", "nightstand_1")), Atom("on", ("book_2", "counter_1"))}
    context = Context(context.domain, entities, facts, "robot")
    books = decompose.Kind("book", ["book_1", "book_2"], named=True)
    rooms = ["kitchen", "olga_bedroom"]
    assert decompose.sources(context, "(on ? counter_1)", rooms) == ["olga_bedroom"]
    literals = ["(on book_1 counter_1)", "(on book_2 counter_1)"]
    assert decompose.pick(context, books, "(on ? counter_1)", literals, {}, decompose.rooms_of(context), rooms) \
        == ["(on book_1 counter_1)"]
    books.best = "(on ? counter_1)"
    goals = ["(on book_1 counter_1)", "(and (on book_1 counter_1) (on book_2 counter_1))"]
    assert decompose.strays(goals, [books]) == [0, 1]
    assert decompose.counted(goals, [books], context)[0] == 0
    assert decompose.sent_back(["(on book_2 nightstand_1)", "(on book_1 counter_1)"], [books], context, rooms) \
        == [True, False]


def test_a_kind_with_none_in_the_named_room_is_not_asked_for_and_its_things_are_strays():
    """"All the books in Olga's bedroom go there": the magazines (books too, by type) are all elsewhere, so
    none is asked for, and a goal that moves one has a stray."""
    context = _fridge()
    entities = {**context.entities, "book_1": {"type": "book", "noun": "book"},
                "magazine_1": {"type": "book", "noun": "magazine"}}
    facts = context.facts | {Atom("on", ("book_1", "nightstand_1")), Atom("on", ("magazine_1", "counter_1"))}
    context = Context(context.domain, entities, facts, "robot")
    magazines = decompose.Kind("magazine", ["magazine_1"], named=True)
    rooms = ["kitchen", "olga_bedroom"]
    where = decompose.rooms_of(context)
    said = "All the books in Olga's bedroom go on the counter."
    assert decompose.pick(context, magazines, "(on ? counter_1)", ["(on magazine_1 counter_1)"], {}, where,
                          rooms, said) == []
    magazines.best = "(on ? counter_1)"
    assert decompose.strays(["(on book_1 counter_1)", "(and (on book_1 counter_1) (on magazine_1 counter_1))"],
                            [magazines]) == [0, 1]
    # with no room named that things come from, or a room said of something else, every one is asked for
    for named, words in (([], said), (rooms, "Put the magazines on the counter, then tidy Olga's bedroom.")):
        assert decompose.pick(context, decompose.Kind("magazine", ["magazine_1"], named=True), "(on ? counter_1)",
                              ["(on magazine_1 counter_1)"], {}, where, named, words) == ["(on magazine_1 counter_1)"]


@pytest.mark.parametrize("key,text,said", [
    ("(closed ?)", "Turn the kitchen tap off and close the fridge.", True),  # "close" says `closed`
    ("(not (closed ?))", "Close the fridge.", False),
    ("(not (closed ?))", "Open the fridge, please.", True),
    ("(dirty ?)", "The teal mug shouldn't stay dirty.", False),  # a negation in a contraction
    ("(not (dirty ?))", "The teal mug shouldn't stay dirty.", True),
])
def test_a_verb_form_says_the_state_its_participle_names(key, text, said):
    assert decompose.state_said(key, text, "fridge") is said


def _two_sinks_and_lights() -> Context:
    context = _house()
    entities = dict(context.entities)
    entities["bath"] = {"type": "room", "noun": "bathroom"}
    entities["sink_1"] = {"type": "sink", "noun": "kitchen sink", "room": "kitchen"}
    entities["sink_2"] = {"type": "sink", "noun": "bathroom sink", "room": "bathroom"}
    entities["light_3"] = {"type": "light", "noun": "light", "room": "bathroom"}
    return Context(context.domain, entities, context.facts, context.robot)


def test_a_word_for_fixtures_names_those_the_words_tell_apart():
    """"The kitchen tap" is the kitchen sink's, not the bathroom's; "the taps" are both."""
    context = _two_sinks_and_lights()
    for text, named in (("Turn the kitchen tap off.", {"kitchen sink"}),
                        ("Turn the taps off.", {"kitchen sink", "bathroom sink"})):
        found = decompose.kinds(context, text, relevance(context, text, "Ana"))
        assert {k.noun for k in found if k.named and "sink" in k.noun} == named


def test_fixtures_told_apart_by_their_rooms_are_counted_and_no_forall_is_as_many():
    context = _two_sinks_and_lights()
    text = "The bathroom light and the kitchen light should be on."
    lights = next(k for k in decompose.kinds(context, text, relevance(context, text, "Ana")) if k.noun == "light")
    assert lights.count == 2
    goals = ["(forall (?l - light) (light-on ?l))", "(and (light-on light_1) (light-on light_3))"]
    assert decompose.counted(goals, [lights], context) == [-1, 0]


def test_of_all_of_a_kind_those_the_words_tell_apart_are_asked_for_and_the_rest_are_strays():
    """"Wash my purple jeans": of the two pairs, Sami's purple one (the words name it more strongly), however
    many such there are; with no such words, every one."""
    context = _house()
    jeans = decompose.Kind("pair of jeans", ["jeans_1", "jeans_2"], named=True, count=None)
    literals = ["(not (dirty jeans_1))", "(not (dirty jeans_2))"]
    told = decompose.pick(context, jeans, "(not (dirty ?))", literals, {"jeans_1": 2.0, "jeans_2": 4.0}, {}, [])
    assert told == ["(not (dirty jeans_2))"] and jeans.here["(not (dirty ?))"] == ["jeans_2"]
    jeans.best = "(not (dirty ?))"
    assert decompose.strays(["(and (not (dirty jeans_1)) (not (dirty jeans_2)))"], [jeans]) == [1]
    alike = decompose.Kind("pair of jeans", ["jeans_1", "jeans_2"], named=True, count=None)
    assert decompose.pick(context, alike, "(not (dirty ?))", literals, {"jeans_1": 2.0, "jeans_2": 2.0}, {}, []) \
        == literals


def test_a_fixture_named_as_a_place_is_asked_no_state_the_words_do_not_say():
    fridge = decompose.Kind("fridge", ["fridge_1"], fixed=True, place=True)
    goals = ["(and (inside bread_1 fridge_1) (closed fridge_1))", "(and (inside bread_1 fridge_1) (cold bread_1))"]
    assert decompose.states_of_places(goals, [fridge], "Chill the bread in the fridge.") == [True, False]
    assert decompose.states_of_places(goals, [fridge], "Put the bread in the fridge and close it.") == [False, False]


@pytest.mark.parametrize("text,absent", [
    ("Move all apples to the dining table.", "apples"),  # the scene has no apple
    ("Please put the remote controls on the counter.", "remote controls"),
    ("Get rid of the unicorns.", "unicorns"),
    ("Move all plates to the dining table.", None),  # plates are here
    ("Put them on the counter.", None),  # no noun to miss
    ("Throw away everything on the counter.", None),
    ("Set the table for two people.", None),  # no verb that moves a named thing
])
def test_a_request_to_move_things_the_scene_has_none_of_is_told_apart(text, absent):
    context = _house()
    found = decompose.kinds(context, text, relevance(context, text, "Ana"))
    assert decompose.absent_things(context, text, found, []) == absent


def test_a_kind_the_model_relates_to_unknown_words_is_their_reading():
    """"Move the cutlery to the dining table": no thing is called cutlery, but the model says the forks are."""
    context = _house()
    text = "Move the cutlery to the dining table."
    found = decompose.kinds(context, text, relevance(context, text, "Ana"))
    forks = next(k for k in found if k.noun == "fork")
    assert decompose.absent_things(context, text, found, []) == "cutlery"
    forks.p_yes = 0.55  # a weak yes is no reading of the words
    assert decompose.absent_things(context, text, found, [forks]) == "cutlery"
    forks.p_yes = 0.95
    assert decompose.absent_things(context, text, found, [forks]) is None


def test_the_chooser_says_a_request_for_absent_things_cannot_be_done_instead_of_moving_others():
    from servicerobot.errors import TaskInfeasible

    context = _house()
    model = Answers(yes=set(), liked=["on the dining table"])
    with pytest.raises(TaskInfeasible, match="apples"):
        ChoosingInterpreter(model).interpret_task("Move all apples to the dining table.", "Ana", context)
    assert len(model.calls) == 1  # only the kinds question was asked
    # without the kinds question nothing says what the words may mean: no refusal on the words alone
    assert ChoosingInterpreter(Answers(liked=["on the dining table"]), decompose=False).interpret_task(
        "Move all apples to the dining table.", "Ana", context)
    goal = ChoosingInterpreter(Answers(yes={"forks"}, liked=["on the dining table"])).interpret_task(
        "Move the cutlery to the dining table.", "Ana", context)
    assert "fork_" in goal


def test_a_state_said_of_no_noun_picks_things_out_and_one_said_of_a_noun_does_not():
    """"Throw away the broken stuff": the broken things, whatever their kind. "Wash the broken plates": the
    words name plates, and "broken" says which of them; the broken kite is not picked out by the state."""
    context = _house()
    context = Context(context.domain, context.entities,
                      context.facts | {Atom("broken", ("plate_1",)), Atom("broken", ("kite_1",))}, context.robot)
    assert decompose.described(context, "Throw away the broken stuff.") == {"plate_1", "kite_1"}
    assert decompose.described(context, "Get rid of anything broken in the kitchen.") == {"plate_1", "kite_1"}
    assert decompose.described(context, "Throw away the broken plates.") == set()


def test_a_named_kind_the_state_describes_keeps_other_described_things_out():
    plates = decompose.Kind("plate", ["plate_1", "plate_2"], named=True)
    kites = decompose.Kind("kite", ["kite_1"], p_yes=0.1)
    decompose.narrow_to_described([plates, kites], {"plate_1", "kite_1"})
    assert kites.p_yes == 0.1 and plates.names == ["plate_1", "plate_2"]
    decompose.narrow_to_described([kites], {"kite_1"})  # no kind named: the state picks the kite out
    assert kites.p_yes >= 0.9


def test_a_tool_the_words_name_is_no_place_even_where_the_model_does_not_involve_it():
    """"Wash the jeans using the washer": the washer is what the washing is done with, whatever the model says
    of it, so no answer offered puts the jeans in it."""
    from servicerobot.scenes.household import household_domain

    entities = {"kitchen": {"type": "room", "noun": "kitchen"},
                "washer_1": {"type": "washer", "noun": "washer", "room": "kitchen"},
                "jeans_1": {"type": "clothing", "noun": "pair of jeans"}, "robot": {"type": "robot", "noun": "robot"}}
    context = Context(household_domain(), entities, frozenset({Atom("dirty", ("jeans_1",))}), "robot")
    text = "Wash the jeans using the washer."
    chooser = ChoosingInterpreter(Answers(yes={"pairs of jeans"}))
    found, chosen, places = chooser._kinds(text, "Ana", context, relevance(context, text, "Ana"), [])
    assert next(k for k in found if k.noun == "washer").tool and "washer_1" not in places
    assert not any("washer_1" in key for k in chosen for key in k.keys)


def test_an_answer_that_leaves_out_a_noun_the_words_move_things_by_is_counted():
    """"Bring both plates and the forks to the dining table": an answer about the plates alone leaves out the
    forks; "put the kite next to the plates" moves no plate."""
    context = _house()
    text = "Bring both plates and the forks to the dining table."
    found = decompose.kinds(context, text, relevance(context, text, "Ana"))
    plates = "(and (on plate_1 table_1) (on plate_2 table_1))"
    both = "(and (on plate_1 table_1) (on plate_2 table_1) (on fork_1 table_1))"
    every = "(and (on plate_1 table_1) (forall (?f - dish) (on ?f table_1)))"
    assert decompose.unsaid_kinds([plates, both, every], found, context) == [1, 0, 0]
    text = "Put the kite next to the plates."
    found = decompose.kinds(context, text, relevance(context, text, "Ana"))
    assert decompose.unsaid_kinds(["(on kite_1 table_1)"], found, context) == [0]


def test_all_of_a_noun_asks_for_each_kind_it_names_and_one_of_it_for_any():
    cups = decompose.Kind("cup", ["cup_1"], named=True, moved=True)
    more = decompose.Kind("cups", ["cups_2"], named=True, moved=True)  # a scene's other class of the same noun
    goals = ["(on cup_1 table_1)", "(and (on cup_1 table_1) (on cups_2 table_1))"]
    assert decompose.unsaid_kinds(goals, [cups, more], _house()) == [1, 0]  # "all the cups"
    cups.count = more.count = 1
    assert decompose.unsaid_kinds(goals, [cups, more], _house()) == [0, 0]  # "the cup"


@pytest.mark.parametrize("text,count", [
    ("Turn off the lights in the kitchen.", 1),  # of the two lights, the kitchen's
    ("Turn off the lights in the kitchen and the hall.", None),  # both rooms: every light
    ("Turn off the lights.", None),
    ("Turn off the light in the kitchen.", 1),
])
def test_a_plural_fixture_placed_in_rooms_counts_the_things_there(text, count):
    context = _house()
    light = next(k for k in decompose.kinds(context, text, relevance(context, text, "Ana")) if k.noun == "light")
    assert light.count == count


def test_a_noun_taken_from_a_room_that_has_none_of_its_kind_asks_for_none():
    """"All the books in Sami's bedroom go on the shelf" where that bedroom holds magazines and no book: an
    answer without a book leaves nothing out (`pick` found none there)."""
    books = decompose.Kind("book", ["book_1"], named=True, moved=True, best="(on ? table_1)")
    books.here["(on ? table_1)"] = []
    assert decompose.unsaid_kinds(["(on magazine_1 table_1)"], [books], _house()) == [0]
    books.here["(on ? table_1)"] = ["book_1"]
    assert decompose.unsaid_kinds(["(on magazine_1 table_1)"], [books], _house()) == [1]
