"""Brute-force problem equivalence for small STRIPS problems, and random pairs to check `equivalent` with.

`brute_force_equivalent` enumerates the reachable states of both problems, the goal states among
them, and every type-preserving bijection of objects; it shares no code with `equivalence` beyond
the parser. `random_pair` draws blocksworld or gripper pairs with at most six objects.
"""

from __future__ import annotations

import itertools
import random
from collections.abc import Iterator

from servicerobot.pddl.atoms import Atom
from servicerobot.pddl.model import (
    AddEffect,
    And,
    AtomF,
    Domain,
    Equals,
    Exists,
    Forall,
    Formula,
    Imply,
    Not,
    Or,
    Problem,
    Truth,
)

__all__ = ["brute_force_equivalent", "random_pair"]

State = frozenset[Atom]


def _ground_actions(domain: Domain, objects: list[str]) -> list[tuple[frozenset, frozenset, frozenset]]:
    out = []
    for action in domain.actions.values():
        for args in itertools.product(objects, repeat=len(action.params)):
            b = {v: o for (v, _), o in zip(action.params, args)}
            pre = (
                action.precondition.parts if isinstance(action.precondition, And) else (action.precondition,)
            )
            out.append(
                (
                    frozenset(p.ground(b) for p in pre),
                    frozenset(e.atom.ground(b) for e in action.effects if isinstance(e, AddEffect)),
                    frozenset(e.atom.ground(b) for e in action.effects if not isinstance(e, AddEffect)),
                )
            )
    return out


def _reachable(domain: Domain, problem: Problem) -> set[State]:
    actions = _ground_actions(domain, list(problem.objects))
    start = frozenset(problem.init)
    seen = {start}
    todo = [start]
    while todo:
        s = todo.pop()
        for pre, add, dele in actions:
            if pre <= s:
                t = (s - dele) | add
                if t not in seen:
                    seen.add(t)
                    todo.append(t)
    return seen


def _holds(f: Formula, s: State, objects: list[str], b: dict[str, str]) -> bool:
    if isinstance(f, AtomF):
        return f.ground(b) in s
    if isinstance(f, Truth):
        return f.value
    if isinstance(f, Equals):
        return b.get(f.a, f.a) == b.get(f.b, f.b)
    if isinstance(f, Not):
        return not _holds(f.f, s, objects, b)
    if isinstance(f, And):
        return all(_holds(p, s, objects, b) for p in f.parts)
    if isinstance(f, Or):
        return any(_holds(p, s, objects, b) for p in f.parts)
    if isinstance(f, Imply):
        return not _holds(f.a, s, objects, b) or _holds(f.b, s, objects, b)
    if isinstance(f, (Forall, Exists)):
        combos = itertools.product(objects, repeat=len(f.params))
        results = (
            _holds(f.body, s, objects, {**b, **dict(zip((v for v, _ in f.params), c))}) for c in combos
        )
        return all(results) if isinstance(f, Forall) else any(results)
    raise TypeError(f)


def brute_force_equivalent(domain: Domain, a: Problem, b: Problem) -> bool:
    """Identity-mode equivalence by enumeration (untyped domains; every object has type `object`)."""
    if len(a.objects) != len(b.objects) or len(a.init) != len(b.init):
        return False
    oa, ob = list(a.objects), list(b.objects)
    goal_a = {s for s in _reachable(domain, a) if _holds(a.goal, s, oa, {})}
    goal_b = {s for s in _reachable(domain, b) if _holds(b.goal, s, ob, {})}
    if len(goal_a) != len(goal_b):
        return False
    for perm in itertools.permutations(ob):
        m = dict(zip(oa, perm))

        def ren(s: State, m: dict[str, str] = m) -> State:
            return frozenset(Atom(x.predicate, tuple(m[y] for y in x.args)) for x in s)

        if ren(a.init) == b.init and all(ren(s) in goal_b for s in goal_a):
            return True
    return False


def _blocks_state(rng: random.Random, blocks: list[str]) -> set[Atom]:
    order = blocks[:]
    rng.shuffle(order)
    state: set[Atom] = set()
    held = order.pop() if rng.random() < 0.25 else None
    towers: list[list[str]] = []
    for x in order:
        if towers and rng.random() < 0.5:
            rng.choice(towers).append(x)
        else:
            towers.append([x])
    for t in towers:
        state.add(Atom("on-table", (t[0],)))
        state.update(Atom("on", (u, v)) for v, u in itertools.pairwise(t))
        state.add(Atom("clear", (t[-1],)))
    state.add(Atom("holding", (held,)) if held else Atom("arm-empty", ()))
    return state


def _gripper_state(rng: random.Random, rooms: list[str], balls: list[str], grippers: list[str]) -> set[Atom]:
    state = {Atom("room", (r,)) for r in rooms} | {Atom("ball", (b,)) for b in balls}
    state |= {Atom("gripper", (g,)) for g in grippers}
    state.add(Atom("at-robby", (rng.choice(rooms),)))
    free = grippers[:]
    for b in balls:
        if free and rng.random() < 0.3:
            g = free.pop(rng.randrange(len(free)))
            state.add(Atom("carry", (b, g)))
        else:
            state.add(Atom("at", (b, rng.choice(rooms))))
    state |= {Atom("free", (g,)) for g in free}
    return state


def _text(name: str, domain: str, objects: list[str], init: set[Atom], goal: str) -> str:
    atoms = " ".join(f"({a.predicate}{''.join(' ' + x for x in a.args)})" for a in sorted(init))
    header = f"(define (problem {name}) (:domain {domain}) (:objects {' '.join(objects)})"
    return f"{header} (:init {atoms}) (:goal {goal}))"


def _lit(a: Atom, positive: bool = True) -> str:
    text = f"({a.predicate}{''.join(' ' + x for x in a.args)})"
    return text if positive else f"(not {text})"


def random_pair(rng: random.Random, domain: str) -> tuple[str, str]:
    """Two problem texts over `domain` ("blocksworld" or "gripper") that are often, not always, equivalent."""
    if domain == "blocksworld":
        objs = [f"b{i}" for i in range(rng.randint(2, 4))]

        def state() -> set[Atom]:
            return _blocks_state(rng, objs)

        static: set[Atom] = set()
    else:
        rooms = ["r0", "r1"]
        grippers = [f"g{i}" for i in range(rng.randint(1, 2))]
        balls = [f"o{i}" for i in range(rng.randint(1, 2))]
        objs = rooms + grippers + balls

        def state() -> set[Atom]:
            return _gripper_state(rng, rooms, balls, grippers)

        static = {
            Atom(t, (o,))
            for t, names in (("room", rooms), ("ball", balls), ("gripper", grippers))
            for o in names
        }
    init_a = state()
    target = sorted(state() - static)
    goal = rng.sample(target, rng.randint(1, len(target)))
    lits = [_lit(x) for x in goal]
    extra_pool = target + sorted(
        set(_blocks_state(rng, objs) if domain == "blocksworld" else state()) - static
    )
    # the second goal: the same plus/minus a few facts, sometimes a negated fact or a disjunction
    lits_b = lits[:]
    roll = rng.random()
    if roll < 0.35:
        lits_b.append(_lit(rng.choice(extra_pool)))
    elif roll < 0.5 and len(lits_b) > 1:
        lits_b.pop(rng.randrange(len(lits_b)))
    elif roll < 0.6:
        lits_b.append(_lit(rng.choice(extra_pool), positive=False))
    elif roll < 0.7:
        x, y = rng.choice(extra_pool), rng.choice(extra_pool)
        lits_b.append(f"(or {_lit(x)} {_lit(y)})")
    init_b = init_a if rng.random() < 0.85 else state()
    rng.shuffle(lits_b)
    names = objs[:]
    rng.shuffle(names)
    ren = dict(zip(objs, (f"x{n}" for n in names)))
    for old, new in ren.items():  # rename objects in the second problem (textual, names are unique tokens)
        lits_b = [_sub(x, old, new) for x in lits_b]
    init_b = {Atom(a.predicate, tuple(ren[x] for x in a.args)) for a in init_b}
    objs_b = [ren[o] for o in objs]
    rng.shuffle(objs_b)
    a_text = _text("a", domain, objs, init_a, f"(and {' '.join(lits)})")
    b_text = _text("b", domain, objs_b, init_b, f"(and {' '.join(lits_b)})")
    return a_text, b_text


def _sub(text: str, old: str, new: str) -> str:
    return " ".join(new if tok == old else tok for tok in _tokens(text))


def _tokens(text: str) -> Iterator[str]:
    yield from text.replace("(", " ( ").replace(")", " ) ").split()
