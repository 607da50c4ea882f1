"""Retrieval speed on the large household memory (~1,000 entities): ms per search and neighbourhood retrieval.

Prints one JSON line. Queries are built from entity phrases (every 50th entity), some with an edge to the
room their fixture is in ("the mug in the kitchen"), plus a plural class query ("the dishes").
The first search call (which builds the similarity index of memory's entity texts) is reported apart,
and so are searches right after a memory update (which rebuild the per-memory index).

    python benchmarks/retrieval_speed.py
"""

from __future__ import annotations

import argparse
import json
import statistics
import time

import gymnasium as gym

import servicerobot  # noqa: F401  (registers the environments)
from servicerobot.language.interpreter import QueryEdge, QueryGraph, QueryNode
from servicerobot.memory.graph import KnowledgeGraph
from servicerobot.memory.retrieval import SearchRetriever, retrieve_neighbourhood
from servicerobot.memory.triplets import Delta
from servicerobot.pddl import Atom
from servicerobot.scenes.household import household_domain


def _queries(kg: KnowledgeGraph, n: int = 20) -> list[QueryGraph]:
    names = sorted(kg.graph.nodes)
    step = max(1, len(names) // n)
    queries = []
    for k, name in enumerate(names[::step][:n - 1]):
        node = QueryNode("x", kg.phrase(name), kg.type_of(name) if k % 2 else None)
        room = next((a.args[1] for a in kg.facts_about(name) if a.predicate == "in-room"), None)
        if room is None:
            holder = next((a.args[1] for a in kg.facts_about(name) if a.predicate in ("on", "inside")
                           and a.args[0] == name), None)
            room = kg.values("in-room", holder)[0] if holder and kg.values("in-room", holder) else None
        if room is not None and k % 3 == 0:
            queries.append(QueryGraph((node, QueryNode("r", kg.phrase(room), "room")),
                                      (QueryEdge("x", "in-room", "r"),)))
        else:
            queries.append(QueryGraph((node,)))
    queries.append(QueryGraph((QueryNode("d", "the dishes", "dish"),)))
    return queries


def _ms(fn, repeat: int = 5) -> float:
    times = []
    for _ in range(repeat):
        start = time.perf_counter()
        fn()
        times.append((time.perf_counter() - start) * 1e3)
    return min(times)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="the default house instead of the large one")
    env = gym.make("ServiceRobot-v0", size="default" if parser.parse_args().quick else "large")
    obs, _ = env.reset(seed=0)
    kg = KnowledgeGraph.from_prior(household_domain(), json.loads(obs["prior"]))
    retriever = SearchRetriever()
    queries = _queries(kg)
    start = time.perf_counter()
    retriever.retrieve(kg, queries[0])
    first_ms = (time.perf_counter() - start) * 1e3
    search = [_ms(lambda q=q: retriever.retrieve(kg, q)) for q in queries]
    facts = [len(retriever.retrieve(kg, q).facts) for q in queries]
    seeds = [m for q in queries for match in retriever.match(kg, q)[:1] for m in match["assignment"].values()]
    neighbourhood = [_ms(lambda s=s: retrieve_neighbourhood(kg, [s])) for s in seeds]
    # after memory changes, the per-memory index (entity texts, type masks, room layer) is rebuilt once
    dish = kg.of_type("dish")[0]
    after_update = []
    for q in queries:
        flip = Atom("broken", (dish,))
        kg.apply(Delta.of(add=[flip]) if flip not in kg else Delta.of(remove=[flip]), "bench", 0)
        start = time.perf_counter()
        retriever.retrieve(kg, q)
        after_update.append((time.perf_counter() - start) * 1e3)
    print(json.dumps({
        "benchmark": "retrieval_speed", "entities": kg.graph.number_of_nodes(), "facts": len(kg.facts),
        "queries": len(queries), "first_search_ms": round(first_ms, 2),
        "search_median_ms": round(statistics.median(search), 3), "search_max_ms": round(max(search), 3),
        "search_after_update_median_ms": round(statistics.median(after_update), 3),
        "neighbourhood_median_ms": round(statistics.median(neighbourhood), 3),
        "retrieved_facts_median": statistics.median(facts),
    }))


if __name__ == "__main__":
    main()
