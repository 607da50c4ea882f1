"""A pure-Python planner on the PDDL interpreter: greedy best-first search with the FF heuristic, or BFS.

For small problems and machines without planner binaries. The task is grounded once, by relaxed
reachability from the initial state: `successors.candidate_arguments` joins each action's positive
preconditions with the facts reachable so far (negative preconditions count as satisfied) until no
new fact appears. Grounding is not interrupted by the time limit (it takes about 0.05 s on a pruned
small household, 1.5-4 s on a whole default one). Each ground action is then compiled into
delete-relaxed operators over integer fact ids:

* a negative literal `(not p)` of a precondition, an effect condition or the goal becomes a fact
  "p is false", true in a state without `p` and added by every action that deletes `p`, so the
  heuristic sees goals such as "no dish is dirty" (treating negative literals as satisfied would
  make such goals free);
* disjunctions (`or`, `exists`, `imply`) are split into one relaxed operator per disjunct of the
  precondition's DNF; a precondition whose DNF is too large is treated as satisfied;
* a conditional effect is an extra operator whose precondition adds the effect's condition;
* facts no action changes are folded to true or false at compile time.

`algorithm="gbfs"` (default) is lazy greedy best-first search with FF's relaxed-plan heuristic and
helpful actions (preferred operators, in an alternating open list boosted on progress, as in Fast
Downward's lama-first). It is satisficing. `algorithm="bfs"` is breadth-first search: optimal in plan
length, for tiny problems. The goal test always evaluates the real goal formula; the heuristic uses
the goal's DNF (or, if that is too large, `conjunctive_goal`'s conjunction without dead-end pruning).
"""

from __future__ import annotations

import heapq
import time
from collections import deque
from collections.abc import Callable, Iterable
from dataclasses import dataclass

from servicerobot.errors import PDDLError, PDDLSemanticError
from servicerobot.pddl.atoms import Atom, State
from servicerobot.pddl.features import UnsupportedFeatureError
from servicerobot.pddl.grounding import (
    CompiledEffects,
    GAll,
    GNot,
    GroundNode,
    Universe,
    compile_test,
    ground_formula,
)
from servicerobot.pddl.interpreter import GroundAction, Interpreter
from servicerobot.pddl.model import AddEffect, DelEffect, Domain, Effect, ForallEffect, Problem, WhenEffect
from servicerobot.pddl.parser import parse_domain, parse_problem
from servicerobot.pddl.successors import candidate_arguments
from servicerobot.planners.base import Planner, PlanResult, PlanStatus
from servicerobot.planners.goal_compilation import conjunctive_goal

__all__ = ["ALGORITHMS", "BuiltinPlanner", "GroundTask"]

ALGORITHMS = ("gbfs", "bfs")
"""The search algorithms of `BuiltinPlanner`."""

_DNF_LIMIT = 64  # most disjuncts kept when a precondition, condition or goal is split into its DNF
_BOOST = 1000  # preferred-operator boost on progress (Fast Downward's default)
_CLOCK_EVERY = 64  # expansions between two looks at the clock
_CHECK_EVERY = 256  # ground actions between two looks at the clock while grounding
_clock = time.perf_counter  # the deadline's clock (a module attribute, so tests can drive it)


def _no_check() -> None:
    """No deadline."""
_UNREACHED = 10**9  # the h of a state whose relaxation misses the heuristic's goal (when not pruned)


class _TooLarge(Exception):
    """A DNF has more than `_DNF_LIMIT` disjuncts."""


@dataclass(frozen=True)
class _EffectPart:
    """One ground effect bucket: the condition nodes (empty: unconditional), the atoms added and deleted."""

    conditions: tuple[GroundNode, ...]
    adds: tuple[Atom, ...]
    dels: tuple[Atom, ...]


def _effect_parts(
    effects: tuple[Effect, ...], binding: dict[str, str], universe: Universe
) -> list[_EffectPart]:
    """The ground effects of an action, forall expanded, grouped by their `when` conditions."""
    buckets: dict[tuple[GroundNode, ...], tuple[list[Atom], list[Atom]]] = {}

    def walk(effs: tuple[Effect, ...], bind: dict[str, str], conditions: tuple[GroundNode, ...]) -> None:
        for e in effs:
            if isinstance(e, (AddEffect, DelEffect)):
                atom = universe.atom(e.atom.predicate, tuple(bind.get(t, t) for t in e.atom.terms))
                buckets.setdefault(conditions, ([], []))[isinstance(e, DelEffect)].append(atom)
            elif isinstance(e, ForallEffect):
                for inner in universe.bindings(e.params, bind):
                    walk(e.effects, inner, conditions)
            elif isinstance(e, WhenEffect):
                condition = ground_formula(e.condition, bind, universe)
                if condition is not False:
                    walk(e.effects, bind, conditions if condition is True else (*conditions, condition))

    walk(effects, binding, ())
    return [_EffectPart(cond, tuple(adds), tuple(dels)) for cond, (adds, dels) in buckets.items()]


def _compile_effects(parts: list[_EffectPart]) -> CompiledEffects:
    """The effect parts as the interpreter compiles effects: add wins over delete, conditions as tests."""
    adds: frozenset[Atom] = frozenset()
    dels: frozenset[Atom] = frozenset()
    conditional = []
    for part in parts:
        if part.conditions:
            test = compile_test(part.conditions[0] if len(part.conditions) == 1 else GAll(part.conditions))
            conditional.append((test, frozenset(part.adds), frozenset(part.dels)))
        else:
            adds, dels = frozenset(part.adds), frozenset(part.dels)
    return CompiledEffects(adds, dels - adds, tuple(conditional))


def _relaxed_holds(node: GroundNode, facts: set[Atom] | frozenset[Atom]) -> bool:
    """Whether `node` holds when every reached atom is true and every negative literal is satisfied."""
    if node is True or node is False:
        return node
    if isinstance(node, Atom):
        return node in facts
    if isinstance(node, GNot):
        return True
    if isinstance(node, GAll):
        return all(_relaxed_holds(item, facts) for item in node.items)
    return any(_relaxed_holds(item, facts) for item in node.items)


def _top_atoms(node: GroundNode) -> list[Atom]:
    """The positive atoms every model of `node` makes true at the top level (a trigger for the index)."""
    if isinstance(node, Atom):
        return [node]
    if isinstance(node, GAll):
        return [item for item in node.items if isinstance(item, Atom)]
    return []


class GroundTask:
    """A problem ground once for search: reachable actions, their tests and the delete relaxation.

    Args:
        domain: the domain.
        problem: the problem; its goal may be any formula.
        check: called every few hundred steps of grounding and compiling; a deadline raises from it.

    Attributes:
        interpreter: the interpreter over the problem's objects (its universe, goal and grounding).
        actions: the relaxed-reachable ground actions, in domain order, arguments sorted; each is
            compiled once, as the interpreter compiles it (`apply` has `Interpreter.apply`'s semantics).
        goal: the compiled goal (the search's goal test).
    """

    def __init__(self, domain: Domain, problem: Problem, check: Callable[[], None] | None = None):
        self._check = check if check is not None else _no_check
        self.interpreter = interp = Interpreter.for_problem(domain, problem)
        self.init: State = frozenset(problem.init)
        self.goal = interp.compile_goal(problem.goal)
        universe = interp.universe
        actions, pre_nodes, parts = self._ground(domain, universe)
        self.actions: list[GroundAction] = actions
        check = self._check
        self._pre_tests: list[Callable[[State], bool]] = []
        for index, node in enumerate(pre_nodes):
            if index % _CHECK_EVERY == 0:
                check()
            self._pre_tests.append(compile_test(node))
        self._effects = [_compile_effects(action_parts) for action_parts in parts]
        check()

        # fluents: atoms some action adds or deletes; every other atom keeps its initial value
        fluents: dict[Atom, None] = {}
        for action_parts in parts:
            for part in action_parts:
                fluents.update(dict.fromkeys(part.adds))
                fluents.update(dict.fromkeys(part.dels))
        self._fact_id: dict[Atom, int] = {atom: i for i, atom in enumerate(fluents)}
        self._neg_id: dict[Atom, int] = {}
        # the DNFs first: they create the ids of the negative literals that effects must then add
        pre_dnfs = [self._relaxed_dnf((node,)) for node in pre_nodes]
        check()
        cond_dnfs = [[self._relaxed_dnf(part.conditions) for part in action_parts] for action_parts in parts]
        check()
        self._compile_goal(domain, problem, universe)
        self._compile_operators(pre_dnfs, cond_dnfs, parts)
        check()
        self._neg_pairs = tuple(self._neg_id.items())

        # successor index: each action under one positive fluent precondition atom (its trigger)
        self._by_trigger: dict[Atom, list[int]] = {}
        self._untriggered: list[int] = []
        for index, node in enumerate(pre_nodes):
            trigger = next((a for a in _top_atoms(node) if a in self._fact_id), None)
            if trigger is None:
                self._untriggered.append(index)
            else:
                self._by_trigger.setdefault(trigger, []).append(index)

    # ------------------------------------------------------------------ grounding
    def _ground(self, domain: Domain, universe: Universe):
        """The actions reachable from init when negative preconditions count as satisfied (a fixpoint)."""
        interp = self.interpreter
        reached: set[Atom] = set(self.init)
        seen: dict[tuple[str, tuple[str, ...]], GroundNode] = {}
        found: list[tuple[str, tuple[str, ...]]] = []
        parts_of: dict[tuple[str, tuple[str, ...]], list[_EffectPart]] = {}
        new_atoms = True
        while new_atoms:
            facts: dict[str, list[tuple[str, ...]]] = {}
            for atom in reached:
                facts.setdefault(atom.predicate, []).append(atom.args)
            added: list[tuple[str, tuple[str, ...]]] = []
            check = self._check
            for action in domain.actions.values():
                variables = [var for var, _ in action.params]
                for step, args in enumerate(candidate_arguments(action, interp, facts, check)):
                    if step % _CHECK_EVERY == 0:
                        check()
                    key = (action.name, args)
                    if key in parts_of:
                        continue
                    binding = dict(zip(variables, args))
                    node = seen.get(key)
                    if node is None:
                        node = seen[key] = ground_formula(action.precondition, binding, universe)
                    if _relaxed_holds(node, reached):
                        parts_of[key] = _effect_parts(action.effects, binding, universe)
                        added.append(key)
            size = len(reached)
            for key in added:
                for part in parts_of[key]:
                    reached.update(part.adds)
            found.extend(added)
            new_atoms = len(reached) > size
        order = {name: i for i, name in enumerate(domain.actions)}
        found.sort(key=lambda key: (order[key[0]], key[1]))
        actions = [GroundAction(name, args) for name, args in found]
        return actions, [seen[key] for key in found], [parts_of[key] for key in found]

    # ------------------------------------------------------------------ relaxation
    def _literal(self, atom: Atom, positive: bool) -> bool | int:
        """A literal as a fact id, or its constant value when no action changes the atom."""
        if atom not in self._fact_id:
            return (atom in self.init) == positive
        if positive:
            return self._fact_id[atom]
        nid = self._neg_id.get(atom)
        if nid is None:
            nid = self._neg_id[atom] = len(self._fact_id) + len(self._neg_id)
        return nid

    def _dnf(self, node: GroundNode) -> list[frozenset[int]]:
        """The DNF of a ground node over fact ids (an empty list is false).

        Raises:
            _TooLarge: more than `_DNF_LIMIT` disjuncts.
        """
        if node is True or node is False:
            return [frozenset()] if node else []
        if isinstance(node, (Atom, GNot)):
            value = self._literal(node, True) if isinstance(node, Atom) else self._literal(node.atom, False)
            if value is True or value is False:
                return [frozenset()] if value else []
            return [frozenset((value,))]
        if isinstance(node, GAll):
            result = [frozenset()]
            for item in node.items:
                part = self._dnf(item)
                result = list(dict.fromkeys(a | b for a in result for b in part))
                if len(result) > _DNF_LIMIT:
                    raise _TooLarge
            return result
        result = list(dict.fromkeys(d for item in node.items for d in self._dnf(item)))
        if len(result) > _DNF_LIMIT:
            raise _TooLarge
        return result

    def _relaxed_dnf(self, nodes: Iterable[GroundNode]) -> list[frozenset[int]]:
        """The DNF of a conjunction of nodes; a conjunct whose DNF is too large counts as satisfied."""
        result = [frozenset()]
        for node in nodes:
            try:
                part = self._dnf(node)
            except _TooLarge:
                continue
            result = list(dict.fromkeys(a | b for a in result for b in part))
            if len(result) > _DNF_LIMIT:
                common = frozenset.intersection(*result)
                result = [common]
        return result

    def _effect_ids(self, part: _EffectPart) -> tuple[int, ...]:
        """The relaxed adds of an effect: its atoms, and "p is false" for each p it deletes."""
        ids = [self._fact_id[a] for a in part.adds]
        dels = set(part.dels) - set(part.adds)  # add wins over delete
        ids += [self._neg_id[a] for a in part.dels if a in dels and a in self._neg_id]
        return tuple(dict.fromkeys(ids))

    def _compile_operators(
        self,
        pre_dnfs: list[list[frozenset[int]]],
        cond_dnfs: list[list[list[frozenset[int]]]],
        parts: list[list[_EffectPart]],
    ) -> None:
        """Relaxed operators: one per precondition disjunct, plus one per conditional-effect disjunct."""
        ops_pre: list[tuple[int, ...]] = []
        ops_add: list[tuple[int, ...]] = []
        ops_action: list[int] = []
        for index, (pre, action_parts) in enumerate(zip(pre_dnfs, parts)):
            if not pre:
                continue  # the precondition needs a static fact that is false: never applicable
            common = frozenset.intersection(*pre)
            for part, cond in zip(action_parts, cond_dnfs[index]):
                adds = self._effect_ids(part)
                if not adds:
                    continue
                # a conditional effect needs its condition and what every precondition disjunct needs
                for disjunct in (pre if not part.conditions else [common | c for c in cond]):
                    ops_pre.append(tuple(sorted(disjunct)))
                    ops_add.append(adds)
                    ops_action.append(index)
        self._ops_pre = ops_pre
        self._ops_add = ops_add
        self._ops_action = ops_action
        self._npre = [len(pre) for pre in ops_pre]
        self._free_ops = [o for o, pre in enumerate(ops_pre) if not pre]
        by_pre: dict[int, list[int]] = {}
        for o, pre in enumerate(ops_pre):
            for f in pre:
                by_pre.setdefault(f, []).append(o)
        self._ops_by_pre = by_pre

    def _compile_goal(self, domain: Domain, problem: Problem, universe: Universe) -> None:
        node = ground_formula(problem.goal, {}, universe)
        self.prune_dead_ends = True
        try:
            disjuncts = self._dnf(node)
        except _TooLarge:
            self.prune_dead_ends = False  # the conjunction is one way to the goal; others may exist
            try:
                conjunction = conjunctive_goal(domain, problem.goal, dict(problem.objects), self.init)
                disjuncts = self._relaxed_dnf((ground_formula(conjunction, {}, universe),))
            except PDDLSemanticError:
                disjuncts = [frozenset()]  # no guidance: blind search
        self._goal_disjuncts = [tuple(sorted(d)) for d in disjuncts]
        goal_of: dict[int, list[int]] = {}
        for g, disjunct in enumerate(self._goal_disjuncts):
            for f in disjunct:
                goal_of.setdefault(f, []).append(g)
        self._goal_of = goal_of

    # ------------------------------------------------------------------ search interface
    def successors(self, state: State) -> list[int]:
        """The indices of the actions applicable in `state`, ascending."""
        by_trigger = self._by_trigger
        candidates = list(self._untriggered)
        for atom in state:
            found = by_trigger.get(atom)
            if found is not None:
                candidates.extend(found)
        candidates.sort()
        tests = self._pre_tests
        return [i for i in candidates if tests[i](state)]

    def apply(self, index: int, state: State) -> State:
        """The state after action `index` (deletes, then adds; `Interpreter.apply` semantics)."""
        adds, dels, conditional = self._effects[index]
        if conditional:
            adds, dels = set(adds), set(dels)
            for test, cond_adds, cond_dels in conditional:
                if test(state):
                    adds |= cond_adds
                    dels |= cond_dels
            dels -= adds
        return (state - dels) | adds

    def ff(self, state: State) -> tuple[int | None, set[int]]:
        """FF's relaxed-plan length (None: the goal is unreachable) and the helpful actions' indices."""
        fact_id = self._fact_id
        facts = sorted(fact_id[a] for a in state if a in fact_id)
        facts += [nid for atom, nid in self._neg_pairs if atom not in state]
        level: dict[int, int] = dict.fromkeys(facts, 0)
        goal_left = [len(d) for d in self._goal_disjuncts]
        goal_of = self._goal_of
        reached_goal = next((g for g, n in enumerate(goal_left) if n == 0), None)
        counters = self._npre[:]
        ops_by_pre = self._ops_by_pre
        ops_add = self._ops_add
        fired = list(self._free_ops)
        supporter: dict[int, int] = {}
        op_level: dict[int, int] = {}
        layer = facts
        t = 0
        while True:
            for f in layer:
                if reached_goal is None:
                    for g in goal_of.get(f, ()):
                        goal_left[g] -= 1
                        if goal_left[g] == 0 and reached_goal is None:
                            reached_goal = g
                for o in ops_by_pre.get(f, ()):
                    counters[o] -= 1
                    if counters[o] == 0:
                        fired.append(o)
            if reached_goal is not None:
                break
            if not fired:
                return None, set()
            layer = []
            for o in fired:
                op_level[o] = t
                for f in ops_add[o]:
                    if f not in level:
                        level[f] = t + 1
                        supporter[f] = o
                        layer.append(f)
            fired = []
            t += 1
        # extract a relaxed plan backwards from the goal disjunct reached first
        ops_pre, ops_action = self._ops_pre, self._ops_action
        plan_ops: set[int] = set()
        seen: set[int] = set()
        stack = [f for f in self._goal_disjuncts[reached_goal] if level[f] > 0]
        while stack:
            f = stack.pop()
            if f in seen:
                continue
            seen.add(f)
            o = supporter[f]
            if o not in plan_ops:
                plan_ops.add(o)
                stack.extend(p for p in ops_pre[o] if level[p] > 0)
        helpful = {ops_action[o] for o in plan_ops if op_level[o] == 0}
        return len({ops_action[o] for o in plan_ops}), helpful


class _Stop(Exception):
    """The search ran out of time or expansions."""


class BuiltinPlanner(Planner):
    """A pure-Python planner: lazy GBFS with FF and helpful actions (default), or breadth-first search.

    Args:
        algorithm: "gbfs" (greedy best-first search with the FF heuristic; satisficing) or "bfs"
            (breadth-first search; shortest plans, for tiny problems only).
        max_expansions: stop with TIMEOUT after expanding this many states.
        timeout: the default time limit in seconds.
    """

    name = "builtin"

    def __init__(self, algorithm: str = "gbfs", max_expansions: int = 200_000, timeout: float | None = 60.0):
        super().__init__(timeout)
        if algorithm not in ALGORITHMS:
            raise ValueError(f"algorithm must be one of {', '.join(ALGORITHMS)}, got {algorithm!r}")
        if isinstance(max_expansions, bool) or not isinstance(max_expansions, int) or max_expansions < 1:
            raise ValueError(f"max_expansions must be a positive integer, got {max_expansions!r}")
        self.algorithm = algorithm
        self.max_expansions = max_expansions

    @property
    def label(self) -> str:
        """The name and algorithm, e.g. `builtin[gbfs]`."""
        return f"{self.name}[{self.algorithm}]"

    def _solve(self, domain_text: str, problem_text: str, timeout: float | None) -> PlanResult:
        try:
            domain = parse_domain(domain_text, source="<domain>", strict=False)  # as Fast Downward reads it
            problem = parse_problem(problem_text, domain, source="<problem>")
        except UnsupportedFeatureError as error:
            return PlanResult(PlanStatus.UNSUPPORTED, planner=self.label, message=str(error))
        except PDDLError as error:
            return PlanResult(PlanStatus.ERROR, planner=self.label, message=f"invalid PDDL input: {error}")
        return self.plan(domain, problem, timeout)

    def plan(self, domain: Domain, problem: Problem, timeout: float | None = None) -> PlanResult:
        """Search on parsed objects (what `solve` calls after its checks; `total_time` is left 0)."""
        start = time.perf_counter()
        deadline = None if timeout is None else _clock() + timeout
        if domain.derived:  # its relaxation and successor index read basic atoms only
            return PlanResult(PlanStatus.UNSUPPORTED, planner=self.label,
                              message="derived predicates (:derived) are not supported by the builtin planner; "
                                      "use FastDownward, which evaluates them as axioms")
        def check() -> None:
            if deadline is not None and _clock() > deadline:
                raise _Stop("time limit reached while grounding: no plan within the timeout")

        try:
            task = GroundTask(domain, problem, check)
        except PDDLError as error:
            return PlanResult(PlanStatus.ERROR, planner=self.label, message=str(error))
        except _Stop as stop:
            return PlanResult(PlanStatus.TIMEOUT, planner=self.label, expanded=0, message=str(stop))
        ground_time = time.perf_counter() - start
        search_start = time.perf_counter()
        counter = [0]
        search = self._gbfs if self.algorithm == "gbfs" else self._bfs
        try:
            steps, status, reason = search(task, deadline, counter)
        except _Stop as stop:
            steps, status, reason = None, PlanStatus.TIMEOUT, str(stop)
        search_time = time.perf_counter() - search_start
        what = f"{len(task.actions)} ground actions (grounded in {ground_time:.3f} s), {counter[0]} expanded"
        plan = tuple(str(task.actions[i]) for i in steps) if steps is not None else ()
        message = f"{reason}; {what}"
        return PlanResult(status, plan=plan, planner=self.label, expanded=counter[0],
                          search_time=search_time, message=message)

    def _check(self, expanded: int, deadline: float | None) -> None:
        if expanded >= self.max_expansions:
            raise _Stop(f"expansion limit reached: no plan within {self.max_expansions} expansions")
        if deadline is not None and expanded % _CLOCK_EVERY == 0 and _clock() > deadline:
            raise _Stop("time limit reached: no plan within the timeout")

    @staticmethod
    def _path(parents: dict[State, tuple[State, int] | None], state: State) -> list[int]:
        steps: list[int] = []
        link = parents[state]
        while link is not None:
            state, action = link
            steps.append(action)
            link = parents[state]
        steps.reverse()
        return steps

    def _bfs(self, task: GroundTask, deadline: float | None, counter: list[int]):
        goal = task.goal.holds
        init = task.init
        parents: dict[State, tuple[State, int] | None] = {init: None}
        if goal(init):
            return [], PlanStatus.SOLVED, "the goal holds initially"
        if task.ff(init)[0] is None and task.prune_dead_ends:
            return None, PlanStatus.UNSOLVABLE, "the goal is unreachable even with deletes ignored"
        frontier = deque([init])
        while frontier:
            self._check(counter[0], deadline)
            state = frontier.popleft()
            counter[0] += 1
            for index in task.successors(state):
                child = task.apply(index, state)
                if child in parents:
                    continue
                parents[child] = (state, index)
                if goal(child):
                    steps = self._path(parents, child)
                    return steps, PlanStatus.SOLVED, f"shortest plan found: {len(steps)} steps"
                frontier.append(child)
        return None, PlanStatus.UNSOLVABLE, "the search space is exhausted: no plan exists"

    def _gbfs(self, task: GroundTask, deadline: float | None, counter: list[int]):
        goal = task.goal.holds
        init = task.init
        if goal(init):
            return [], PlanStatus.SOLVED, "the goal holds initially"
        h0, _ = task.ff(init)
        if h0 is None and task.prune_dead_ends:
            return None, PlanStatus.UNSOLVABLE, "the goal is unreachable even with deletes ignored"
        parents: dict[State, tuple[State, int] | None] = {}
        # two open lists (all successors, successors by helpful actions); entries are lazy:
        # (parent's h, tie-break, parent state, action), the child is built and evaluated when popped
        queues: tuple[list, list] = ([], [])
        priority = [0, 0]
        tie = 0
        best = h0 if h0 is not None else float("inf")
        queues[0].append((0, 0, None, -1))  # the initial state
        while queues[0] or queues[1]:
            which = 1 if queues[1] and (not queues[0] or priority[1] <= priority[0]) else 0
            priority[which] += 1
            _, _, parent, action = heapq.heappop(queues[which])
            state = init if parent is None else task.apply(action, parent)
            if state in parents:
                continue
            parents[state] = None if parent is None else (parent, action)
            if goal(state):
                steps = self._path(parents, state)
                return steps, PlanStatus.SOLVED, f"plan found: {len(steps)} steps"
            h, helpful = task.ff(state)
            if h is None:
                if task.prune_dead_ends:
                    continue  # a dead end: not even the relaxation reaches the goal
                h = _UNREACHED
            self._check(counter[0], deadline)
            counter[0] += 1
            if h < best:
                best = h
                priority[1] -= _BOOST
            for index in task.successors(state):
                tie += 1
                entry = (h, tie, state, index)
                heapq.heappush(queues[0], entry)
                if index in helpful:
                    heapq.heappush(queues[1], entry)
        return None, PlanStatus.UNSOLVABLE, "the search space is exhausted: no plan exists"

