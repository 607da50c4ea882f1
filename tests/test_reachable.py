"""Goals offered only where a chain of actions could reach them (`servicerobot.language.reachable`), as the
enumeration of candidate goals uses it (`candidates.goal_candidates`)."""

from __future__ import annotations

from servicerobot.language.candidates import goal_candidates
from servicerobot.language.interpreter import Context
from servicerobot.language.reachable import Reachability
from servicerobot.pddl import Atom
from servicerobot.pddl.parser import parse_domain

_DOMAIN = """
(define (domain shelves)
  (:requirements :strips :typing :negative-preconditions)
  (:types robot item shelf room)
  (:predicates (at ?r - robot ?s - shelf) (in-room ?x - object ?m - room) (on ?i - item ?s - shelf)
               (holding ?r - robot ?i - item) (hand-empty ?r - robot)
               (graspable ?i - item) (suspicious ?i - item) (safe ?i - item))
  (:action go :parameters (?r - robot ?from ?to - shelf)
    :precondition (at ?r ?from) :effect (and (not (at ?r ?from)) (at ?r ?to)))
  (:action pick :parameters (?r - robot ?i - item ?s - shelf)
    :precondition (and (at ?r ?s) (on ?i ?s) (hand-empty ?r) (graspable ?i))
    :effect (and (holding ?r ?i) (not (on ?i ?s)) (not (hand-empty ?r))))
  (:action walk :parameters (?r - robot ?m - room) :precondition (hand-empty ?r) :effect (in-room ?r ?m))
  (:action place :parameters (?r - robot ?i - item ?s - shelf ?m - room)
    :precondition (and (at ?r ?s) (holding ?r ?i) (in-room ?s ?m) (in-room ?r ?m))
    :effect (and (on ?i ?s) (hand-empty ?r) (not (holding ?r ?i))))
  (:action inspect :parameters (?r - robot ?i - item)
    :precondition (and (suspicious ?i) (not (safe ?i)))
    :effect (safe ?i)))
"""
_ENTITIES = {"robot": {"type": "robot"}, "mug": {"type": "item"}, "box": {"type": "item"},
             "crate": {"type": "item"}, "top": {"type": "shelf"}, "low": {"type": "shelf"},
             "hall": {"type": "room"}}
_FACTS = {Atom("at", ("robot", "low")), Atom("hand-empty", ("robot",)), Atom("on", ("mug", "low")),
          Atom("on", ("box", "low")), Atom("on", ("crate", "low")), Atom("graspable", ("mug",)),
          Atom("suspicious", ("box",))}


def _context(facts=_FACTS) -> Context:
    return Context(parse_domain(_DOMAIN), _ENTITIES, frozenset(facts), "robot")


def test_a_goal_whose_achiever_needs_a_fact_that_never_changes_is_offered_only_where_it_holds():
    offered = goal_candidates(_context(), list(_ENTITIES))
    assert "(on mug top)" in offered
    assert "(on box top)" not in offered and "(on crate top)" not in offered  # never graspable: never held
    assert "(safe box)" in offered and "(safe mug)" not in offered  # only what is suspicious is inspected
    assert "(forall (?i - item) (safe ?i))" not in offered  # not every item can be made safe
    assert "(forall (?i - item) (imply (suspicious ?i) (safe ?i)))" in offered


def test_a_static_fact_is_checked_only_of_things_the_facts_say_something_of():
    """Retrieved facts may leave a thing out: with nothing known of the crate, nothing is ruled out for want
    of its `graspable`; with its place known (retrieval brings a thing's facts together), it is."""
    facts = {f for f in _FACTS if "crate" not in f.args}
    offered = goal_candidates(_context(facts), list(_ENTITIES))
    assert {"(on mug top)", "(on crate top)"} <= set(offered) and "(on box top)" not in offered
    assert "(on crate top)" not in goal_candidates(_context(), list(_ENTITIES))


def test_a_fact_no_action_changes_for_these_things_is_taken_as_met_when_left_out():
    """`in-room` of a shelf: only robots walk, and the facts hold no room of a shelf; `place` needs one, and
    the goal stays offered (a request's retrieved facts often leave fixtures' rooms out)."""
    context = _context()
    reach = Reachability(context.domain, context.facts, {n: e["type"] for n, e in _ENTITIES.items()})
    assert reach.reachable(Atom("on", ("mug", "top")))
    assert not reach.reachable(Atom("holding", ("robot", "crate")))
    assert reach.reachable(Atom("on", ("mug", "top")), positive=False)


def test_the_pybullet_world_offers_no_unreachable_inspection_or_placement():
    import numpy as np
    import pytest

    pytest.importorskip("pybullet")
    from servicerobot.envs.pybullet.world import PyBulletWorld
    from servicerobot.memory.triplets import triplet_to_atom

    world = PyBulletWorld("default")
    try:
        for seed in range(3):
            world.reset(np.random.default_rng(seed))
            prior = world.prior()
            context = Context(world.domain, prior["entities"], frozenset(triplet_to_atom(t) for t in prior["facts"]))
            offered = goal_candidates(context, list(context.entities))
            suspicious = {f.args[0] for f in context.facts if f.predicate == "suspicious"}
            graspable = {f.args[0] for f in context.facts if f.predicate == "graspable"}
            safe = {g.split()[1].rstrip(")") for g in offered if g.startswith("(safe ")}
            assert safe and safe <= suspicious
            placed = {g.split()[1] for g in offered if g.startswith("(item-on ")}
            assert placed and placed <= graspable
            # facts retrieved about one graspable thing alone ("move the yellow cube ..."): none of the
            # suspicious things' facts, and still no inspection of the cube
            thing = sorted(graspable)[0]
            retrieved = Context(context.domain, context.entities, frozenset(
                f for f in context.facts if thing in f.args))
            assert f"(safe {thing})" not in goal_candidates(retrieved, list(context.entities))
    finally:
        world.close()
