"""DNF inspection goals: literals over `visited` / `not visited` / `safe`, parsing, checking and sampling.

A goal is a disjunction of clauses, each a conjunction of literals: `(visited s)` (go to place or object s),
`(not (visited p))` (never enter place p) and `(safe o)` (inspect suspicious object o, unless it is not
suspicious). The sampler draws N clauses of K literals that are satisfiable in principle:
- every clause has at least one visit or safe literal (a clause of avoids alone holds at the start);
- literals in a clause name distinct symbols, so a clause never asks to visit and avoid one place;
- the start place is never avoided (the robot is already there);
- half of the avoided places lie on a shortest path from the start to a place the clause needs (so avoiding
  them matters), the other half anywhere; a clause is redrawn when its avoided places cut the start off from
  a place it needs (object occupancy is ignored here; suspicious objects can be inspected).
"""

from __future__ import annotations

import re
from dataclasses import dataclass

import networkx as nx
import numpy as np

from servicerobot.errors import TampGoalError
from servicerobot.pddl._suggest import did_you_mean
from servicerobot.scenes.tamp_map import TampMap

__all__ = ["DnfGoal", "GoalLiteral", "parse_goal", "sample_goal"]

_TOKENS = re.compile(r"[()]|[^\s()]+")


@dataclass(frozen=True)
class GoalLiteral:
    """`(visited s)`, `(not (visited s))` or `(safe o)`."""

    predicate: str
    symbol: str
    positive: bool = True

    def __post_init__(self) -> None:
        if self.predicate not in ("visited", "safe"):
            raise TampGoalError(f"unknown goal predicate {self.predicate!r}; use 'visited' or 'safe'")
        if self.predicate == "safe" and not self.positive:
            raise TampGoalError(f"(not (safe {self.symbol})) cannot be a goal: inspecting only makes objects safe")

    @property
    def kind(self) -> str:
        """"visit", "avoid" or "safe"."""
        return "safe" if self.predicate == "safe" else ("visit" if self.positive else "avoid")

    def __str__(self) -> str:
        atom = f"({self.predicate} {self.symbol})"
        return atom if self.positive else f"(not {atom})"


@dataclass(frozen=True)
class DnfGoal:
    """A disjunction of conjunctive clauses of `GoalLiteral`s."""

    clauses: tuple[tuple[GoalLiteral, ...], ...]

    def __post_init__(self) -> None:
        if not self.clauses:
            raise TampGoalError("a goal needs at least one clause, e.g. '(or (and (visited p1)))'")
        for i, clause in enumerate(self.clauses):
            if not clause:
                raise TampGoalError(f"clause {i} of the goal is empty; give it at least one literal")
            visit = {lit.symbol for lit in clause if lit.kind == "visit"}
            both = sorted(visit & {lit.symbol for lit in clause if lit.kind == "avoid"})
            if both:
                raise TampGoalError(f"clause {i} both visits and avoids {', '.join(both)}; it can never hold")

    def avoided(self, clause: int) -> frozenset[str]:
        """The places clause `clause` must never enter."""
        return frozenset(lit.symbol for lit in self.clauses[clause] if lit.kind == "avoid")

    def symbols(self) -> frozenset[str]:
        """Every place and object the goal names."""
        return frozenset(lit.symbol for clause in self.clauses for lit in clause)

    def clause_goal(self, clause: int) -> DnfGoal:
        """The goal made of clause `clause` alone."""
        return DnfGoal((self.clauses[clause],))

    def holds(self, clause: int, visited: set[str] | frozenset[str], safe: set[str] | frozenset[str]) -> bool:
        """Whether clause `clause` holds given the visited symbols and the safe objects."""
        for lit in self.clauses[clause]:
            if lit.kind == "visit" and lit.symbol not in visited:
                return False
            if lit.kind == "avoid" and lit.symbol in visited:
                return False
            if lit.kind == "safe" and lit.symbol not in safe:
                return False
        return True

    def check(self, tamp_map: TampMap) -> None:
        """Raise TampGoalError if a literal names an unknown symbol, a place as `safe`, or avoids the start."""
        for i, clause in enumerate(self.clauses):
            for lit in clause:
                s = lit.symbol
                if s not in tamp_map.places and s not in tamp_map.objects:
                    raise TampGoalError(f"goal literal {lit} in clause {i} names {s!r}, which is neither a place "
                                        f"nor an object of map {tamp_map.name!r}"
                                        f"{did_you_mean(s, [*tamp_map.places, *tamp_map.objects])}")
                if lit.kind == "safe" and s not in tamp_map.objects:
                    raise TampGoalError(f"goal literal {lit} in clause {i}: only objects can be made safe, "
                                        f"{s!r} is a place")
                if lit.kind == "avoid" and s == tamp_map.start:
                    raise TampGoalError(f"goal literal {lit} in clause {i} can never hold: the robot starts in "
                                        f"{s!r}; drop the literal or move the start")

    def __str__(self) -> str:
        parts = " ".join("(and " + " ".join(map(str, c)) + ")" for c in self.clauses)
        return f"(or {parts})"


def _read(text: str) -> list:
    tokens = _TOKENS.findall(text)
    if not tokens:
        raise TampGoalError("the goal text is empty; expected e.g. '(or (and (visited p1) (safe o2)))'")
    stack: list[list] = [[]]
    for tok in tokens:
        if tok == "(":
            stack.append([])
        elif tok == ")":
            if len(stack) == 1:
                raise TampGoalError(f"unbalanced ')' in goal {text.strip()!r}")
            done = stack.pop()
            stack[-1].append(done)
        else:
            stack[-1].append(tok)
    if len(stack) != 1 or len(stack[0]) != 1:
        raise TampGoalError(f"goal {text.strip()!r} must be one parenthesised expression with balanced parentheses")
    return stack[0][0]


def _literal(expr) -> GoalLiteral:
    positive = True
    if isinstance(expr, list) and len(expr) == 2 and str(expr[0]).lower() == "not":
        positive, expr = False, expr[1]
    if not (isinstance(expr, list) and len(expr) == 2 and all(isinstance(x, str) for x in expr)):
        raise TampGoalError(f"expected a literal like (visited p1), (not (visited p2)) or (safe o1), got {expr!r}")
    return GoalLiteral(expr[0].lower(), expr[1], positive)


def parse_goal(text: str) -> DnfGoal:
    """Read `(or (and lit ...) ...)`, a single `(and ...)` or a single literal (names keep their case).

    Raises:
        TampGoalError: malformed text, an unknown predicate, or a clause that cannot hold.
    """
    expr = _read(text)
    if not isinstance(expr, list) or not expr:
        raise TampGoalError(f"expected a parenthesised goal, got {text.strip()!r}")
    head = str(expr[0]).lower()
    clauses = expr[1:] if head == "or" else [expr]
    result = []
    for clause in clauses:
        if isinstance(clause, list) and clause and str(clause[0]).lower() == "and":
            result.append(tuple(_literal(x) for x in clause[1:]))
        else:
            result.append((_literal(clause),))
    return DnfGoal(tuple(result))


def sample_goal(tamp_map: TampMap, n_clauses: int = 3, n_literals: int = 3, seed: int | np.random.Generator | None = None,
                *, weights: tuple[float, float, float] = (0.4, 0.3, 0.3), max_tries: int = 200) -> DnfGoal:
    """A random DNF goal with `n_clauses` clauses of `n_literals` literals (visit / avoid / safe by `weights`).

    `safe` literals name suspicious objects; without any, `visit` takes their share.

    Raises:
        TampGoalError: the map is too small for the literal counts, or no satisfiable clause was found.
    """
    rng = seed if isinstance(seed, np.random.Generator) else np.random.default_rng(seed)
    if n_clauses < 1 or n_literals < 1:
        raise TampGoalError(f"need n_clauses >= 1 and n_literals >= 1, got {n_clauses} and {n_literals}")
    blocked = _occupied(tamp_map)
    places = sorted(p for p in tamp_map.places if p != tamp_map.start and p not in blocked)
    if len(places) < n_literals:
        raise TampGoalError(f"map {tamp_map.name!r} has {len(places) + 1} places, too few for {n_literals} literals")
    suspicious = sorted(o for o, obj in tamp_map.objects.items() if obj.suspicious and obj.place in tamp_map.places)
    w = np.array(weights if suspicious else (weights[0] + weights[2], weights[1], 0.0), dtype=float)
    w = w / w.sum()
    graph = tamp_map.graph
    clauses = []
    for _ in range(n_clauses):
        for _try in range(max_tries):
            clause = _draw_clause(tamp_map, graph, places, suspicious, n_literals, w, rng)
            if clause is not None:
                clauses.append(clause)
                break
        else:
            raise TampGoalError(f"no satisfiable clause of {n_literals} literals found in {max_tries} tries on "
                                f"map {tamp_map.name!r}; lower n_literals or the avoid weight")
    return DnfGoal(tuple(clauses))


def _occupied(tamp_map: TampMap) -> set[str]:
    """Places whose centre a robot of the map's radius cannot stand on because an object is there."""
    names, centres = tamp_map._centres
    rr = tamp_map.metadata.get("robot_radius", 0.25)
    out: set[str] = set()
    for o in tamp_map.objects.values():
        d = np.hypot(centres[:, 0] - o.position[0], centres[:, 1] - o.position[1])
        out.update(names[i] for i in np.nonzero(d < o.radius + rr)[0].tolist())
    return out


def _draw_clause(tamp_map: TampMap, graph: nx.Graph, places: list[str], suspicious: list[str], k: int,
                 w: np.ndarray, rng: np.random.Generator) -> tuple[GoalLiteral, ...] | None:
    # visits and safes first, so that avoided places can be drawn on the way to them
    kinds = sorted(rng.choice(3, size=k, p=w).tolist(), key=(0, 2, 1).index)
    if kinds[0] == 1:  # all avoids: the start would satisfy the clause already
        kinds[0] = 0
    used: set[str] = {tamp_map.start}
    literals: list[GoalLiteral] = []
    needed: list[str] = []
    for kind in kinds:
        if kind == 2:
            free = [o for o in suspicious if o not in used]
            if not free:
                return None
            o = free[int(rng.integers(len(free)))]
            literals.append(GoalLiteral("safe", o))
            needed.append(tamp_map.objects[o].place)
            used.add(o)
            continue
        if kind == 1 and needed and rng.random() < 0.5:
            target = needed[int(rng.integers(len(needed)))]
            path = nx.shortest_path(graph, tamp_map.start, target, weight="weight")[1:-1]
            candidates = [p for p in path if p not in used and p not in needed]
        else:
            candidates = []
        if not candidates:
            candidates = places
        p = candidates[int(rng.integers(len(candidates)))]
        if p in used or (kind == 1 and p in needed):
            return None
        used.add(p)
        literals.append(GoalLiteral("visited", p, positive=(kind == 0)))
        if kind == 0:
            needed.append(p)
    avoided = {lit.symbol for lit in literals if lit.kind == "avoid"}
    if avoided & set(needed):
        return None
    if avoided:
        view = nx.restricted_view(graph, avoided, [])
        reach = nx.node_connected_component(view, tamp_map.start)
        if any(p not in reach for p in needed):
            return None
    return tuple(literals)
