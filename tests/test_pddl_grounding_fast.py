"""Grounding's fast paths (issue 37) give what the general path gives: a quantifier over a body of literals
is the conjunction (or disjunction) of its body per object, atoms are one object per name in every
universe, and one walk finds a node's positive and negated atoms."""

from __future__ import annotations

import pytest

from servicerobot.pddl import Atom, Interpreter, grounding, parse_domain
from servicerobot.pddl.grounding import (
    Universe,
    compile_test,
    ground_formula,
    node_atoms,
    node_literals,
    substitute,
)
from servicerobot.pddl.model import And, Exists, Forall, Or

DOMAIN = parse_domain("""
(define (domain fast) (:requirements :strips :typing :negative-preconditions :equality)
  (:types item place - object dish - item)
  (:constants shelf - place)
  (:predicates (broken ?i - item) (gone ?i - item) (on ?i - item ?p - place) (lit ?p - place) (free ?p - place)))
""")
OBJECTS = {"cup": "dish", "plate": "dish", "book": "item", "lamp": "item", "desk": "place"}

BODIES = [
    "(imply (broken ?x) (gone ?x))",
    "(or (not (broken ?x)) (gone ?x))",
    "(and (broken ?x) (not (gone ?x)))",
    "(not (broken ?x))",
    "(broken ?x)",
    "(on ?x shelf)",
    "(and (on ?x shelf) (on ?x desk))",           # two literals of one predicate: the general path
    "(or (broken ?x) (broken ?x))",               # a duplicate literal: the general path
    "(imply (lit desk) (gone ?x))",               # a literal without ?x: the general path
    "(and (broken ?x) (gone ?x) (not (on ?x desk)))",
    "(not (and (broken ?x) (gone ?x)))",
    "(not (imply (broken ?x) (gone ?x)))",
]


def _read(text: str, interp: Interpreter):
    return interp._read_goal(text, "<test>")


@pytest.mark.parametrize("body", BODIES)
@pytest.mark.parametrize("quantifier", ["forall", "exists"])
@pytest.mark.parametrize("typ", ["item", "dish"])
@pytest.mark.parametrize("negate", [False, True])
def test_quantifier_over_literals_is_its_expansion(body, quantifier, typ, negate):
    interp = Interpreter(DOMAIN, OBJECTS)
    universe = interp.universe
    formula = _read(f"({quantifier} (?x - {typ}) {body})", interp)
    assert isinstance(formula, (Forall, Exists))
    # The same formula with the quantifier written out object by object (no quantifier: no fast path).
    parts = tuple(substitute(formula.body, {"?x": value}) for value in universe.of_type(typ))
    expanded = And(parts) if quantifier == "forall" else Or(parts)
    fast = ground_formula(formula, {}, universe, negate)
    assert fast == ground_formula(expanded, {}, universe, negate)
    # and the compiled tests agree on states
    states = [frozenset(), frozenset({Atom("broken", ("cup",))}),
              frozenset({Atom("broken", ("cup",)), Atom("gone", ("cup",)), Atom("lit", ("desk",))}),
              frozenset(Atom(p, (o,)) for p in ("broken", "gone") for o in ("cup", "plate", "book", "lamp"))]
    for state in states:
        assert compile_test(fast)(state) == compile_test(ground_formula(expanded, {}, universe, negate))(state)


def test_a_quantifier_over_one_object_or_none():
    interp = Interpreter(DOMAIN, {"cup": "dish", "desk": "place"})
    universe = interp.universe
    one = ground_formula(_read("(forall (?x - dish) (imply (broken ?x) (gone ?x)))", interp), {}, universe)
    assert one == ground_formula(_read("(imply (broken cup) (gone cup))", interp), {}, universe)
    empty = Interpreter(DOMAIN, {"desk": "place"})
    assert ground_formula(_read("(forall (?x - item) (broken ?x))", empty), {}, empty.universe) is True
    assert ground_formula(_read("(exists (?x - item) (broken ?x))", empty), {}, empty.universe) is False


def test_atoms_are_one_object_across_universes_until_cleared():
    a = Universe(DOMAIN.types, OBJECTS).atom("broken", ("cup",))
    b = Universe(DOMAIN.types, {"cup": "dish"}).atom("broken", ("cup",))
    assert a is b and a == Atom("broken", ("cup",)) and type(a) is Atom
    Interpreter.clear_shared()  # benchmarks of new houses forget them
    c = Universe(DOMAIN.types, OBJECTS).atom("broken", ("cup",))
    assert c == a and c is not a


def test_node_literals_is_node_atoms_both_ways():
    interp = Interpreter(DOMAIN, OBJECTS)
    for body in BODIES:
        node = ground_formula(_read(f"(forall (?x - item) {body})", interp), {}, interp.universe)
        assert node_literals(node) == (node_atoms(node), node_atoms(node, positive=False))


def test_unknown_object_type_is_named_in_the_error():
    with pytest.raises(Exception, match="object 'cup' has unknown type 'mug'"):
        Universe(DOMAIN.types, {"desk": "place", "cup": "mug", "pot": "mug"})


def test_literal_forms_are_kept_per_formula():
    interp = Interpreter(DOMAIN, OBJECTS)
    formula = _read("(forall (?x - item) (imply (broken ?x) (gone ?x)))", interp)
    form = grounding._literal_form(formula.body, False)
    assert form == (grounding.GAny, (("broken", ("?x",), False), ("gone", ("?x",), True)))
    assert grounding._literal_form(formula.body, False) is form
    assert grounding._literal_form(_read("(forall (?x - item) (exists (?p - place) (on ?x ?p)))",
                                         interp).body, False) is None
