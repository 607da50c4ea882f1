"""Decompose, then choose (`servicerobot.language.decompose`): numbers read from words, kinds, whole goals
built from a model's answers (a fake scoring model here; the real model is in test_local_llm*.py)."""

from __future__ import annotations

import pytest

from servicerobot.language import decompose
from servicerobot.language.base import Scored
from servicerobot.language.candidates import relevance
from servicerobot.language.chooser import ChoosingInterpreter
from servicerobot.language.interpreter import Context
from servicerobot.pddl import Atom


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
