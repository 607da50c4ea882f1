"""Retrieval: which of memory's facts an utterance needs, so that prompts and planning problems stay small.

Three strategies, all returning a `RetrievalResult`:

* `retrieve_all(kg)`: the whole memory (the ablation without retrieval).
* `retrieve_neighbourhood(kg, seeds)`: entity-selection retrieval (L3M+P's code): the facts within
  `depth` hops of seed entities that someone (an interpreter, an LLM) selected.
* `SearchRetriever.retrieve(kg, query_graph)`: search-based retrieval (described in the L3M+P paper,
  absent from its code): score every query-graph node against every memory entity with a `Similarity`,
  then find the best assignments of query nodes to entities by depth-first subgraph matching, with a
  similarity cutoff, so that "the cabinet in the bathroom" picks the bathroom's cabinet.

Whatever the seeds, a result always holds what a planner needs to act on them: the **room layer**
(every room and the `connected` facts between rooms), the robot's own facts (where it is, what it
holds), and each seed's **location chain** (what it is on / inside / held by, that holder's own flags
such as `closed`, and the room the holder is in), even where `max_facts` cut the neighbourhood short.
Everything is deterministic: candidates, seeds and facts are visited in sorted order. What retrieval
reads of memory on every call (entity texts, type masks, the room layer) is cached per memory and
rebuilt when `kg.version` changes (~2 ms for 1,000 entities); the similarity caches its candidate
vectors by text, so an update that changes only facts does not re-vectorise entity texts.
"""

from __future__ import annotations

import re
import weakref
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field

import numpy as np

from servicerobot.memory.graph import KnowledgeGraph
from servicerobot.memory.query import QueryEdge, QueryGraph, QueryNode
from servicerobot.memory.similarity import STOP_WORDS, LexicalSimilarity, Similarity, stem
from servicerobot.pddl import Atom

__all__ = ["RetrievalResult", "SearchRetriever", "is_plural", "location_chain", "retrieve_all",
           "retrieve_neighbourhood", "robot_facts", "room_layer", "with_named_states"]

_RAW_WORD = re.compile(r"[A-Za-z0-9]+")
_POSSESSIVE = re.compile(r"['\u2019]s\b")
_QUANTIFIERS = frozenset({"all", "every", "each", "both", "several", "many", "two", "three", "four", "five"})
_PLURALIA_TANTUM = frozenset({"jeans", "pants", "trousers", "shorts", "scissors", "headphones", "earphones",
                              "glasses", "sunglasses", "tongs", "pyjamas", "pajamas", "leggings", "tights"})


@dataclass(frozen=True)
class RetrievalResult:
    """What retrieval found.

    Attributes:
        facts: the retrieved facts (the planner's `:init` and the interpreter's context).
        entities: the entities those facts mention, plus the seeds and every room.
        matches: for logging: search retrieval's query-node -> entity assignments with their scores,
            best first (see `SearchRetriever.match`); entity-selection retrieval's seeds.
        method: "all", "neighbourhood" or "search".
        unmatched: query-node ids that no memory entity resembled above the cutoff.
    """

    facts: frozenset[Atom]
    entities: frozenset[str]
    matches: list[dict] = field(default_factory=list)
    method: str = "all"
    unmatched: tuple[str, ...] = ()

    def to_json(self) -> dict:
        return {"method": self.method, "n_facts": len(self.facts), "n_entities": len(self.entities),
                "matches": self.matches, "unmatched": list(self.unmatched)}


# ---------------------------------------------------------------------------------------------- helpers
def _subtypes_of(kg: KnowledgeGraph, root: str) -> frozenset[str]:
    types = kg.domain.types
    if root not in types:
        return frozenset()
    return frozenset(t for t in types.types if types.is_subtype(t, root))


class _MemoryIndex:
    """What retrieval reads of memory on every call, rebuilt only when memory changes (`kg.version`)."""

    def __init__(self, kg: KnowledgeGraph):
        self.version = kg.version
        self.room_types = _subtypes_of(kg, "room")
        self.hub_types = _subtypes_of(kg, "fixture")
        records = sorted(kg.graph.nodes(data=True), key=lambda nd: nd[0])
        self.names = [n for n, _ in records]
        self.types = [d["type"] for _, d in records]
        self.position = {n: j for j, n in enumerate(self.names)}
        self.texts = [f"{kg.phrase(n)} {d['type']} {d.get('noun') or ''}".strip() for n, d in records]
        self.singular_words = frozenset(str(d["noun"]).lower().split()[-1] for _, d in records
                                        if str(d.get("noun") or "").split())
        self.rooms = [n for n, t in zip(self.names, self.types) if t in self.room_types]
        room_set = set(self.rooms)
        self.room_facts = frozenset(a for r in self.rooms for a in kg.facts_about(r)
                                    if all(x in room_set for x in a.args))
        self._type_masks: dict[str, np.ndarray] = {}
        self._hierarchy = kg.domain.types

    def type_mask(self, type_: str) -> np.ndarray:
        """Which entities are of `type_` or a subtype."""
        mask = self._type_masks.get(type_)
        if mask is None:
            verdict = {t: self._hierarchy.is_subtype(t, type_) for t in set(self.types)}
            mask = np.fromiter((verdict[t] for t in self.types), bool, len(self.types))
            self._type_masks[type_] = mask
        return mask


_INDEXES: weakref.WeakKeyDictionary[KnowledgeGraph, _MemoryIndex] = weakref.WeakKeyDictionary()


def _index(kg: KnowledgeGraph) -> _MemoryIndex:
    index = _INDEXES.get(kg)
    if index is None or index.version != kg.version:
        index = _MemoryIndex(kg)
        _INDEXES[kg] = index
    return index


def room_layer(kg: KnowledgeGraph) -> tuple[list[str], frozenset[Atom]]:
    """Every room (sorted), and every fact whose arguments are all rooms (`connected`)."""
    index = _index(kg)
    return list(index.rooms), index.room_facts


def robot_facts(kg: KnowledgeGraph) -> set[Atom]:
    """The robot's facts, and the facts about whatever it holds (anything it relates to but a room)."""
    if not kg.has_entity(kg.robot):
        return set()
    room_types = _index(kg).room_types
    facts = set(kg.facts_about(kg.robot))
    for atom in list(facts):
        if len(atom.args) == 2 and atom.args[0] == kg.robot and kg.type_of(atom.args[1]) not in room_types:
            facts.update(kg.facts_about(atom.args[1]))
    return facts


def location_chain(kg: KnowledgeGraph, entity: str) -> set[Atom]:
    """What a planner needs to reach `entity`: the facts with it as subject, and for each thing it is
    related to (the surface it is on, the container it is in, the person holding it) that thing's flags
    (`closed`) and the facts placing it in a room."""
    if not kg.has_entity(entity):
        return set()
    room_types = _index(kg).room_types
    own = [a for a in kg.facts_about(entity) if a.args[0] == entity]
    facts = set(own)
    for atom in own:
        if len(atom.args) != 2:
            continue
        holder = atom.args[1]
        if kg.type_of(holder) in room_types:
            continue
        for fact in kg.facts_about(holder):
            if fact.args[0] != holder:
                continue
            if len(fact.args) == 1 or kg.type_of(fact.args[1]) in room_types:
                facts.add(fact)
    return facts


def _assemble(kg: KnowledgeGraph, seeds: Sequence[str], depth: int, max_facts: int, method: str,
              matches: list[dict], unmatched: tuple[str, ...] = ()) -> RetrievalResult:
    index = _index(kg)
    seeds = [s for s in dict.fromkeys(seeds) if kg.has_entity(s)]
    facts = set(index.room_facts)
    facts |= robot_facts(kg)
    if seeds:
        facts |= kg.neighbourhood(seeds, depth=depth, max_facts=max_facts, skip_types=tuple(sorted(index.room_types)))
        for seed in seeds:
            facts |= location_chain(kg, seed)
    entities = {x for a in facts for x in a.args}
    entities.update(seeds)
    entities.update(index.rooms)
    if kg.has_entity(kg.robot):
        entities.add(kg.robot)
    return RetrievalResult(frozenset(facts), frozenset(entities), matches, method, unmatched)


def retrieve_all(kg: KnowledgeGraph) -> RetrievalResult:
    """The whole memory: every fact and every entity."""
    return RetrievalResult(kg.facts, frozenset(kg.graph.nodes), [], "all")


def retrieve_neighbourhood(kg: KnowledgeGraph, seeds: Iterable[str], depth: int = 2,
                           max_facts: int = 300) -> RetrievalResult:
    """Entity-selection retrieval: the seeds' neighbourhood (rooms are reached but not expanded), plus the
    room layer, the robot's facts and the seeds' location chains (those are added on top of `max_facts`).
    Unknown seeds are ignored; seed order decides what the `max_facts` cap keeps (nearest facts first)."""
    seeds = list(dict.fromkeys(seeds))
    known = [s for s in seeds if kg.has_entity(s)]
    return _assemble(kg, known, depth, max_facts, "neighbourhood",
                     [{"seeds": known, "unknown": [s for s in seeds if not kg.has_entity(s)]}])


def with_named_states(result: RetrievalResult, kg: KnowledgeGraph, text: str) -> RetrievalResult:
    """`result` with every one-thing state whose words `text` says ("throw out the broken things": each
    `(broken x)` memory holds, which a search for things by their nouns does not reach)."""
    said = {stem(w) for w in _RAW_WORD.findall(text.lower())}
    extra = set()
    for atom in kg.facts:
        if len(atom.args) == 1:
            words = {stem(w) for w in atom.predicate.lower().split("-")} - STOP_WORDS
            if words and words <= said:
                extra.add(atom)
    extra -= result.facts
    if not extra:
        return result
    return RetrievalResult(result.facts | extra, result.entities | {a.args[0] for a in extra}, result.matches,
                           result.method, result.unmatched)


def is_plural(text: str, singular_words: Iterable[str] = ()) -> bool:
    """Whether a mention denotes a class of things: "the dishes", "all books", "every light".

    A quantifier ("all", "every", "both", ...) makes it plural; otherwise its head (last content word)
    must look like a regular plural, not be capitalised (a name: "Tomas"), not be a plurale tantum
    ("jeans") and not be a word that memory uses to name single things (`singular_words`, e.g. "socks"
    from "pair of socks").
    """
    raw = _RAW_WORD.findall(_POSSESSIVE.sub("", text))
    lower = [w.lower() for w in raw]
    if any(w in _QUANTIFIERS for w in lower):
        return True
    content = [(w, lw) for w, lw in zip(raw, lower) if lw not in STOP_WORDS]
    if not content:
        return False
    word, head = content[-1]
    if word[:1].isupper() or head in _PLURALIA_TANTUM or head in frozenset(singular_words):
        return False
    return stem(head) != head


# ---------------------------------------------------------------------------------------------- search
@dataclass
class _Memo:
    """Per-call caches of graph look-ups."""

    kg: KnowledgeGraph
    room_types: frozenset[str]
    hub_types: frozenset[str]
    neighbours: dict[str, frozenset[str]] = field(default_factory=dict)
    related: dict[tuple[str, str, str], bool] = field(default_factory=dict)
    reachable: dict[str, frozenset[str]] = field(default_factory=dict)

    def nbrs(self, x: str) -> frozenset[str]:
        found = self.neighbours.get(x)
        if found is None:
            g = self.kg.graph
            found = frozenset(g.succ[x]) | frozenset(g.pred[x])
            self.neighbours[x] = found
        return found

    def reach(self, x: str) -> frozenset[str]:
        """Everything an edge from x can reach: x's neighbours, and the neighbours of fixtures next to x."""
        found = self.reachable.get(x)
        if found is None:
            near = self.nbrs(x)
            found = near.union(*(self.nbrs(f) for f in near if self.is_hub(f)))
            self.reachable[x] = found
        return found

    def is_hub(self, x: str) -> bool:
        t = self.kg.type_of(x)
        return t in self.hub_types if self.hub_types else t not in self.room_types


class SearchRetriever:
    """Search-based retrieval: match a query graph against memory, then retrieve around the matches.

    Args:
        similarity: scores node texts against entity texts (an entity's text is its phrase, type and noun).
        cutoff: candidates below this similarity are never assigned.
        max_matches: how many complete assignments to keep (their entities are all retrieved).
        depth, max_facts: the neighbourhood retrieved around the matched entities.
        max_visits: cap on depth-first search steps per query (the best assignments found so far are kept).
        relax_edges: when no assignment satisfies every query edge (a task's edges may state the goal, not
            the present: "put the mug in the sink"), search again ranking by edges satisfied, then score.
            When some do, the most similar assignment ignoring edges is still added (last) if it scores
            more than `relax_margin` above the best edge-satisfying one.
    """

    def __init__(self, similarity: Similarity | None = None, cutoff: float = 0.35, max_matches: int = 3,
                 depth: int = 2, max_facts: int = 300, max_visits: int = 20_000, relax_edges: bool = True,
                 relax_margin: float = 0.1):
        self.similarity = similarity if similarity is not None else LexicalSimilarity()
        self.cutoff = float(cutoff)
        self.max_matches = max(1, int(max_matches))
        self.depth = depth
        self.max_facts = max_facts
        self.max_visits = max_visits
        self.relax_edges = relax_edges
        self.relax_margin = relax_margin

    def __repr__(self) -> str:
        return (f"SearchRetriever(similarity={self.similarity!r}, cutoff={self.cutoff}, "
                f"max_matches={self.max_matches}, depth={self.depth}, max_facts={self.max_facts})")

    # ------------------------------------------------------------------ public
    def retrieve(self, kg: KnowledgeGraph, query: QueryGraph | str) -> RetrievalResult:
        """The facts the query is about: the neighbourhood of every matched entity (best match first),
        plus the room layer, the robot's facts and the matched entities' location chains."""
        matches, unmatched = self._match(kg, _as_query(query))
        seeds: list[str] = []
        for m in matches:
            seeds.extend(m["assignment"].values())
            for members in m["members"].values():
                seeds.extend(members)
        return _assemble(kg, seeds, self.depth, self.max_facts, "search", matches, unmatched)

    def match(self, kg: KnowledgeGraph, query: QueryGraph | str) -> list[dict]:
        """The best assignments, best first. Each is a dict: `score` (mean node similarity), `assignment`
        (node id -> entity, for singular nodes), `similarity` (node id -> score), `members` (plural node id
        -> every entity of the class), `unmatched` (node ids with no candidate), `relaxed_edges` (query
        edges the assignment does not satisfy: see `relax_edges`), `truncated` (the search hit
        `max_visits`). A node whose type the domain does not declare is not type-filtered."""
        return self._match(kg, _as_query(query))[0]

    def scores(self, kg: KnowledgeGraph, texts: Sequence[str]) -> tuple[list[str], np.ndarray]:
        """Entity names (sorted) and the similarity of each text to each of them (no type filter)."""
        index = _index(kg)
        return list(index.names), self._similarity(index, list(texts))

    # ------------------------------------------------------------------ matching
    def _similarity(self, index: _MemoryIndex, queries: list[str]) -> np.ndarray:
        sim = np.array(self.similarity.matrix(queries, index.texts), dtype=np.float64)
        for i, q in enumerate(queries):  # a query that names an entity by its id matches it exactly
            j = index.position.get(q.strip())
            if j is not None:
                sim[i, j] = 1.0
        return sim

    def _match(self, kg: KnowledgeGraph, query: QueryGraph) -> tuple[list[dict], tuple[str, ...]]:
        nodes = list({n.id: n for n in query.nodes}.values())
        if not nodes:
            return [], ()
        index = _index(kg)
        sim = self._similarity(index, [n.text for n in nodes])
        candidates: list[list[tuple[str, float]]] = []
        for i, node in enumerate(nodes):
            row = sim[i]
            if node.type and node.type in kg.domain.types:
                row = np.where(index.type_mask(node.type), row, 0.0)
            idx = np.nonzero(row >= self.cutoff)[0]
            order = idx[np.lexsort((idx, -row[idx]))]
            candidates.append([(index.names[j], float(row[j])) for j in order])
        plural = [is_plural(n.text, index.singular_words) for n in nodes]
        matched = [i for i in range(len(nodes)) if candidates[i]]
        unmatched = tuple(nodes[i].id for i in range(len(nodes)) if not candidates[i])
        if not matched:
            return [], unmatched
        pos = {n.id: i for i, n in enumerate(nodes)}
        edges = [(pos[e.source], e.relation, pos[e.target]) for e in query.edges
                 if e.source in pos and e.target in pos and e.source != e.target
                 and candidates[pos[e.source]] and candidates[pos[e.target]]]
        memo = _Memo(kg, index.room_types, index.hub_types)
        search = _Search(self, memo, nodes, candidates, plural, matched, edges)
        found = search.run(strict=True)
        if edges and self.relax_edges:
            if not found:
                # drop the edges that no pair of candidates satisfies (typically goal relations), then
                # search strictly again; only if that fails too rank by the number of edges satisfied
                possible = [e for e in edges if _edge_possible(memo, e, candidates)]
                if len(possible) < len(edges):
                    dropped = [e for e in edges if e not in possible]
                    search = _Search(self, memo, nodes, candidates, plural, matched, possible)
                    found = search.run(strict=True)
                    for f in found:
                        f.relaxed = f.relaxed + dropped
                if not found:
                    search = _Search(self, memo, nodes, candidates, plural, matched, edges)
                    found = search.run(strict=False)
            else:
                # a task's edges may state the goal ("put Ana's mug in the sink"): if ignoring the edges
                # finds a clearly better resemblance, keep it too, so the referent is retrieved anyway
                free = search.unconstrained()
                if free is not None and free.relaxed and free.score > found[0].score + self.relax_margin:
                    found.append(free)
        return [search.describe(f, unmatched) for f in found], unmatched


def _as_query(query: QueryGraph | str) -> QueryGraph:
    if isinstance(query, str):
        return QueryGraph(nodes=(QueryNode("q0", query),))
    return query


def _edge_holds(memo: _Memo, relation: str, x: str, y: str) -> bool:
    """Whether memory relates x to y as the query edge says.

    A binary domain predicate must hold as stated, `(relation x y)`; any other relation word is satisfied
    by any fact between x and y in either direction. Failing that, a path through a fixture also counts
    when the relation is not a domain predicate or one end is a room ("the mug in the kitchen": the mug
    is on the counter, the counter is in the kitchen).
    """
    key = (relation, x, y)
    cached = memo.related.get(key)
    if cached is not None:
        return cached
    kg = memo.kg
    g = kg.graph
    predicate = kg.domain.predicates.get(relation)
    is_domain = predicate is not None and len(predicate.params) == 2
    if is_domain:
        holds = g.has_edge(x, y, key=relation)
    else:
        holds = g.has_edge(x, y) or g.has_edge(y, x)
    if not holds and (not is_domain or kg.type_of(x) in memo.room_types or kg.type_of(y) in memo.room_types):
        holds = any(memo.is_hub(f) for f in memo.nbrs(x) & memo.nbrs(y))
    memo.related[key] = holds
    return holds


def _edge_possible(memo: _Memo, edge: tuple[int, str, int], candidates: list[list[tuple[str, float]]]) -> bool:
    """Whether any candidate pair satisfies the query edge (searched from the side with fewer candidates)."""
    a, rel, b = edge
    side_a, side_b = [c for c, _ in candidates[a]], [c for c, _ in candidates[b]]
    if len(side_a) <= len(side_b):
        others = frozenset(side_b)
        return any(_edge_holds(memo, rel, x, y) for x in side_a for y in sorted(memo.reach(x) & others) if y != x)
    others = frozenset(side_a)
    return any(_edge_holds(memo, rel, x, y) for y in side_b for x in sorted(memo.reach(y) & others) if y != x)


@dataclass
class _Found:
    sat: int
    score: float
    assignment: dict[int, tuple[str, float]]
    members: dict[int, list[tuple[str, float]]]
    relaxed: list[tuple[int, str, int]]
    truncated: bool = False

    def key(self) -> tuple:
        names = tuple(self.assignment[i][0] for i in sorted(self.assignment))
        return (-self.sat, -self.score, names)


class _Search:
    """Depth-first subgraph matching with branch and bound (one query)."""

    def __init__(self, owner: SearchRetriever, memo: _Memo, nodes: list[QueryNode],
                 candidates: list[list[tuple[str, float]]], plural: list[bool], matched: list[int],
                 edges: list[tuple[int, str, int]]):
        self.owner, self.memo, self.nodes = owner, memo, nodes
        self.candidates, self.plural, self.edges = candidates, plural, edges
        self.n = len(matched)
        singular = [i for i in matched if not plural[i]]
        self.order = sorted(singular, key=lambda i: (len(candidates[i]), i))
        self.plural_nodes = [i for i in matched if plural[i]]
        rank = {i: k for k, i in enumerate(self.order)}
        # edges checked when the later of their two singular ends is assigned
        self.edges_at: list[list[tuple[int, str, int]]] = [[] for _ in self.order]
        self.plural_edges: dict[int, list[tuple[int, str, int]]] = {p: [] for p in self.plural_nodes}
        for a, rel, b in edges:
            if a in rank and b in rank:
                self.edges_at[max(rank[a], rank[b])].append((a, rel, b))
            elif plural[a] and b in rank:
                self.plural_edges[a].append((a, rel, b))
            elif plural[b] and a in rank:
                self.plural_edges[b].append((a, rel, b))
            # edges between two plural nodes are not checked
        self.edges_after = [sum(len(e) for e in self.edges_at[k:]) for k in range(len(self.order) + 1)]
        self.n_plural_edges = sum(len(v) for v in self.plural_edges.values())
        best = [candidates[i][0][1] for i in self.order]
        self.best_after = [sum(best[k:]) for k in range(len(self.order) + 1)]
        self.plural_best = sum(candidates[p][0][1] for p in self.plural_nodes)
        self.candidate_sets = {p: frozenset(c for c, _ in candidates[p]) for p in self.plural_nodes}

    def run(self, strict: bool) -> list[_Found]:
        self.strict = strict
        self.visits = 0
        self.truncated = False
        self.kept: list[_Found] = []
        self.plural_cache: dict[tuple, tuple[list[tuple[str, float]], list]] = {}
        self._dfs(0, {}, set(), 0.0, 0, [])
        for f in self.kept:
            f.truncated = self.truncated
        return self.kept

    def _worst(self) -> tuple[int, float] | None:
        if len(self.kept) < self.owner.max_matches:
            return None
        w = self.kept[-1]
        return (w.sat, w.score)

    def _pruned(self, sat_bound: int, score_sum_bound: float) -> bool:
        worst = self._worst()
        if worst is None:
            return False
        return (sat_bound, score_sum_bound / self.n + 1e-12) < worst

    def _dfs(self, k: int, assigned: dict[int, tuple[str, float]], used: set[str], total: float, sat: int,
             relaxed: list) -> None:
        if k == len(self.order):
            self._leaf(assigned, used, total, sat, relaxed)
            return
        node = self.order[k]
        edges = self.edges_at[k]
        # in strict mode a candidate must be within reach (adjacent, or via a fixture) of its edge partners
        reach = None
        if self.strict and edges:
            reach = frozenset.intersection(*(self.memo.reach(assigned[b if a == node else a][0])
                                             for a, _, b in edges))
        for name, score in self.candidates[node]:
            optimistic = total + score + self.best_after[k + 1] + self.plural_best
            if self._pruned(sat + self.edges_after[k] + self.n_plural_edges, optimistic):
                break  # candidates come in decreasing similarity: none later can do better
            if name in used or (reach is not None and name not in reach):
                continue
            self.visits += 1
            if self.visits > self.owner.max_visits:
                self.truncated = True
                return
            here_sat, here_relaxed = 0, []
            for a, rel, b in edges:
                x = name if a == node else assigned[a][0]
                y = name if b == node else assigned[b][0]
                if _edge_holds(self.memo, rel, x, y):
                    here_sat += 1
                elif self.strict:
                    break
                else:
                    here_relaxed.append((a, rel, b))
            else:
                if here_relaxed and self._pruned(sat + here_sat + self.edges_after[k + 1] + self.n_plural_edges,
                                                 optimistic):
                    continue
                assigned[node] = (name, score)
                used.add(name)
                self._dfs(k + 1, assigned, used, total + score, sat + here_sat, relaxed + here_relaxed)
                del assigned[node]
                used.discard(name)
                if self.truncated:
                    return

    def unconstrained(self) -> _Found | None:
        """The assignment of each singular node to its most similar unused candidate, edges ignored."""
        self.strict = False
        self.plural_cache = {}
        assigned: dict[int, tuple[str, float]] = {}
        used: set[str] = set()
        for node in self.order:
            pick = next(((c, s) for c, s in self.candidates[node] if c not in used), None)
            if pick is None:
                return None
            assigned[node] = pick
            used.add(pick[0])
        sat, relaxed = 0, []
        for k in range(len(self.order)):
            for a, rel, b in self.edges_at[k]:
                if _edge_holds(self.memo, rel, assigned[a][0], assigned[b][0]):
                    sat += 1
                else:
                    relaxed.append((a, rel, b))
        self.kept = []
        self._leaf(assigned, used, 0.0, sat, relaxed)
        return self.kept[0] if self.kept else None

    def _members(self, p: int, assigned: dict[int, tuple[str, float]],
                 used: set[str]) -> tuple[list[tuple[str, float]], list]:
        edges = self.plural_edges[p]
        partners = tuple(assigned[b if a == p else a][0] for a, _, b in edges)
        key = (p, partners, tuple(sorted(used & self.candidate_sets[p])))
        hit = self.plural_cache.get(key)
        if hit is not None:
            return hit
        pool = [(c, s) for c, s in self.candidates[p] if c not in used]
        members = []
        for c, s in pool:
            if all(_edge_holds(self.memo, rel, c if a == p else assigned[a][0], c if b == p else assigned[b][0])
                   for a, rel, b in edges):
                members.append((c, s))
        result: tuple[list[tuple[str, float]], list] = (members, [])
        if not members and edges and not self.strict:
            result = (pool, list(edges))
        self.plural_cache[key] = result
        return result

    def _leaf(self, assigned: dict[int, tuple[str, float]], used: set[str], total: float, sat: int,
              relaxed: list) -> None:
        members: dict[int, list[tuple[str, float]]] = {}
        relaxed = list(relaxed)
        for p in self.plural_nodes:
            found, unsatisfied = self._members(p, assigned, used)
            if not found:
                return
            members[p] = found
            sat += len(self.plural_edges[p]) - len(unsatisfied)
            relaxed.extend(unsatisfied)
        # the score is recomputed in node order so that equal assignments score exactly equal
        score = (sum(s for _, s in (assigned[i] for i in sorted(assigned)))
                 + sum(sum(s for _, s in members[p]) / len(members[p]) for p in sorted(members))) / self.n
        found = _Found(sat, score, dict(assigned), members, relaxed)
        self.kept.append(found)
        self.kept.sort(key=_Found.key)
        del self.kept[self.owner.max_matches:]

    def describe(self, found: _Found, unmatched: tuple[str, ...]) -> dict:
        ids = [n.id for n in self.nodes]
        similarity = {ids[i]: round(s, 4) for i, (_, s) in sorted(found.assignment.items())}
        for p, ms in sorted(found.members.items()):
            similarity[ids[p]] = round(sum(s for _, s in ms) / len(ms), 4)
        return {
            "score": round(found.score, 4),
            "assignment": {ids[i]: name for i, (name, _) in sorted(found.assignment.items())},
            "similarity": similarity,
            "members": {ids[p]: [c for c, _ in ms] for p, ms in sorted(found.members.items())},
            "unmatched": list(unmatched),
            "relaxed_edges": [[ids[a], rel, ids[b]] for a, rel, b in found.relaxed],
            "truncated": found.truncated,
        }


__all__ += ["QueryEdge", "QueryGraph", "QueryNode"]
