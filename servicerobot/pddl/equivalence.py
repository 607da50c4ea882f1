"""PDDL problem equivalence (the Planetarium idea): do two problems ask for the same thing, up to renaming?

Two problems over one domain are *equivalent* when some type-preserving bijection of their objects
maps the first initial state onto the second and the first goal's set of goal states onto the
second's. We decide this as Planetarium does, by graph isomorphism (colour refinement to a stable
partition, then an individualisation-refinement search on what it cannot split: `_equivalence_match`):
objects are typed nodes, each ground proposition is a node labelled by its predicate with edges to
its arguments labelled by position. In identity mode (the default) one isomorphism must cover init
and goal together; in placeholder mode the init graphs and the goal graphs are matched separately.
Every step spends from a work and CPU-time budget (`_equivalence_budget`); past it `compare` raises
`EquivalenceUnknownError` (the CLI exits 2) instead of running on.

Before matching, each goal is made canonical (see `_equivalence_goal`):

* quantifiers, `imply` and `or` are expanded over the problem's objects (closed world) into a ground
  disjunctive normal form; literals on static predicates are evaluated against :init;
* every term is closed under domain invariants found automatically (`_equivalence_analysis`): mutex
  groups such as "a block is on one thing, on the table or held" add the implied facts
  (blocksworld's clear / on-table / arm-empty completion, gripper's `free` grippers) and detect
  contradictions; blocksworld additionally uses tower acyclicity;
* disjunctive goals over at most `MAX_SEMANTIC_ATOMS` atoms become their prime implicants
  (Quine-McCluskey, with invariant-inconsistent assignments as don't-cares); larger ones are reduced
  by absorption and consensus.

What is decided exactly and what is approximated:

* "Goal states" are approximated by the states consistent with the invariants found (plus tower
  acyclicity in blocksworld). For blocksworld and gripper these are exactly the reachable states,
  and the verdicts agree with brute-force enumeration (tests: random pairs with up to 6 objects,
  conjunctions with negated facts and disjunctions). Elsewhere an implication that needs an
  invariant we do not find is missed, so equivalent goals can be reported different; the facts we
  add are always sound, because every invariant is proved on the action schemas.
* Conjunctive goals (one term after normalisation) are compared by graph isomorphism of the closed
  terms. In identity mode, a pair where either goal has several terms is decided semantically: for
  every bijection mapping init onto init (at most `MAX_SEMANTIC_MAPPINGS`), the goals must agree on
  every invariant-consistent assignment of their atoms (at most `MAX_SEMANTIC_ATOMS` + 2 atoms).
  Beyond those limits, and in placeholder mode, the canonical terms are matched as a graph, which is
  sound but may miss equivalences.
* Goals whose DNF exceeds `MAX_TERMS` terms raise `GoalTooComplexError` (`evaluate`: not correct).
* Placeholder mode copies the static :init facts into each goal graph, as Planetarium does.
"""

from __future__ import annotations

import gc
import re
from collections import Counter
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from functools import lru_cache

from servicerobot.pddl._equivalence_analysis import ProblemInfo, domain_info, problem_info
from servicerobot.pddl._equivalence_budget import (
    DEFAULT_CPU_SECONDS,
    DEFAULT_WORK,
    EquivalenceUnknownError,
    budget,
    spend,
)
from servicerobot.pddl._equivalence_goal import (
    MAX_SEMANTIC_ATOMS,
    MAX_TERMS,
    GoalTooComplexError,
    Term,
    normalise_goal,
)
from servicerobot.pddl._equivalence_goal import (
    consistent as is_consistent,
)
from servicerobot.pddl._equivalence_match import isomorphic, isomorphisms
from servicerobot.pddl._formulas import FormulaReader, PDDLTypeError
from servicerobot.pddl._reader import Reader
from servicerobot.pddl.atoms import Atom
from servicerobot.pddl.features import UnsupportedFeatureError
from servicerobot.pddl.model import Domain, Problem
from servicerobot.pddl.parser import parse_domain, parse_problem
from servicerobot.pddl.sexpr import parse_sexpr
from servicerobot.pddl.writer import format_formula

__all__ = [
    "DEFAULT_CPU_SECONDS",
    "DEFAULT_WORK",
    "MAX_FILE_BYTES",
    "MAX_SEMANTIC_MAPPINGS",
    "MAX_TERMS",
    "EquivalenceUnknownError",
    "EvaluationResult",
    "GoalTooComplexError",
    "NormalProblem",
    "Verdict",
    "compare",
    "equivalent",
    "evaluate",
    "normalise",
]


@dataclass(frozen=True)
class EvaluationResult:
    """Planetarium's three verdicts on a generated problem.

    Attributes:
        parseable: the source parses against the domain and its goal can be normalised.
        solvable: the solver given to `evaluate` finds a plan that a validator accepts
            (`servicerobot.planners.evaluate`: Fast Downward and VAL).
        correct: the source is equivalent to the target.
    """

    parseable: bool
    solvable: bool
    correct: bool


@dataclass(frozen=True)
class NormalProblem:
    """A problem ready for matching: its objects, init and canonical goal terms."""

    problem: Problem
    info: ProblemInfo
    goal: tuple[Term, ...]


@lru_cache(maxsize=32)
def _domain_from_text(text: str) -> Domain:
    return parse_domain(text)


def _as_domain(domain: Domain | str) -> Domain:
    return _domain_from_text(domain) if isinstance(domain, str) else domain


def _check_supported(dom: Domain) -> None:
    if dom.derived:  # the invariant analysis would take derived predicates for static ones
        raise UnsupportedFeatureError(
            f"equivalence over a domain with derived predicates ({', '.join(dom.derived)}) is not supported"
        )


def normalise(problem: Problem | str, domain: Domain | str) -> NormalProblem:
    """Parse (if text) and canonicalise one problem.

    Raises:
        PDDLError: the text does not parse or does not fit the domain.
        GoalTooComplexError: the goal's DNF is too large.
    """
    dom = _as_domain(domain)
    _check_supported(dom)
    prob = parse_problem(problem, dom) if isinstance(problem, str) else problem
    pi = problem_info(domain_info(dom), prob.objects, prob.init)
    return NormalProblem(prob, pi, normalise_goal(prob.goal, pi))


def _static_init(n: NormalProblem) -> list[Atom]:
    static = n.info.info.static
    return [a for a in n.problem.init if a.predicate in static]


class _Graph:
    """A labelled directed graph: node labels and (source, target, label) edges."""

    __slots__ = ("edges", "labels")

    def __init__(self) -> None:
        self.labels: list[tuple] = []
        self.edges: list[tuple[int, int, tuple]] = []


def _graph(n: NormalProblem, init: bool, goal: bool, static_goal: bool) -> _Graph:
    """The scene graph: typed object nodes, proposition nodes, and edges labelled by position."""
    g = _Graph()
    labels, edges = g.labels, g.edges
    constants = n.info.info.domain.constants
    ids = {}
    for name, typ in n.info.objects.items():
        ids[name] = len(labels)
        labels.append(("c", name) if name in constants else ("o", typ))

    def prop(atom: Atom, label: tuple, owner: int | None = None) -> None:
        node = len(labels)
        labels.append(label)
        if len(atom.args) == 1:
            edges.append((node, ids[atom.args[0]], (0,)))
        else:
            positions: dict[int, list[int]] = {}
            for i, arg in enumerate(atom.args):
                positions.setdefault(ids[arg], []).append(i)
            edges.extend((node, obj, tuple(ps)) for obj, ps in positions.items())
        if owner is not None:
            edges.append((node, owner, ("t",)))

    if init:
        for atom in n.problem.init:
            prop(atom, ("i", atom.predicate))
    if goal:
        if static_goal:
            for atom in _static_init(n):
                prop(atom, ("g", atom.predicate, True))
        if not n.goal:
            labels.append(("false",))
        single = len(n.goal) == 1
        for term in n.goal:
            owner = None
            if not single:
                owner = len(labels)
                labels.append(("term",))
            for atom in term.pos:
                prop(atom, ("g", atom.predicate, True), owner)
            for atom in term.neg:
                prop(atom, ("g", atom.predicate, False), owner)
    return g


def _isomorphic(a: _Graph, b: _Graph) -> bool:
    return isomorphic(a.labels, a.edges, b.labels, b.edges)


MAX_SEMANTIC_MAPPINGS = 1000
"""The most init isomorphisms the semantic check of a disjunctive goal tries."""

MAX_FILE_BYTES = 3 << 20
"""The largest PDDL file `servicerobot equiv` reads (a 62,000-block problem): checking two such problems
peaks at 0.82 GB RSS (docs/reliability.md), so a file that would need more is refused by its size, unread."""


def _init_mappings(a: NormalProblem, b: NormalProblem) -> Iterator[dict[str, str]]:
    """The object bijections that map a's init onto b's init (none if there are none)."""
    ga, gb = _graph(a, True, False, False), _graph(b, True, False, False)
    names_a, names_b = list(a.info.objects), list(b.info.objects)
    for m in isomorphisms(ga.labels, ga.edges, gb.labels, gb.edges):
        yield {names_a[i]: names_b[m[i]] for i in range(len(names_a))}


def _satisfied(goal: tuple[Term, ...], true: frozenset[Atom]) -> bool:
    return any(t.pos <= true and not t.neg & true for t in goal)


def _semantic_equivalent(a: NormalProblem, b: NormalProblem) -> bool | None:
    """Decide a disjunctive goal pair by enumerating assignments of the goals' atoms, per init mapping.

    For each bijection that maps init onto init, the goals must agree on every assignment of their
    atoms that the invariants allow. None when the atoms or mappings are too many to enumerate.
    """
    mappings = _init_mappings(a, b)
    atoms_a = {x for t in a.goal for x in t.pos | t.neg}
    atoms_b = {x for t in b.goal for x in t.pos | t.neg}
    consistent: dict[tuple[frozenset[Atom], frozenset[Atom]], bool] = {}
    for count, m in enumerate(mappings):
        if count >= MAX_SEMANTIC_MAPPINGS:
            return None
        inverse = {v: k for k, v in m.items()}
        goal_b = tuple(
            Term(
                frozenset(_rename(x, inverse) for x in t.pos),
                frozenset(_rename(x, inverse) for x in t.neg),
                frozenset(),
            )
            for t in b.goal
        )
        atoms = sorted(atoms_a | {_rename(x, inverse) for x in atoms_b})
        if len(atoms) > MAX_SEMANTIC_ATOMS + 2:
            return None
        every = frozenset(atoms)
        agree = True
        for bits in range(1 << len(atoms)):
            spend(len(atoms), "enumerating the goals' assignments")
            true = frozenset(x for i, x in enumerate(atoms) if bits >> i & 1)
            if _satisfied(a.goal, true) == _satisfied(goal_b, true):
                continue
            ok = consistent.get((true, every))
            if ok is None:
                ok = consistent[(true, every)] = is_consistent(true, every - true, a.info)
            if ok:
                agree = False
                break
        if agree:
            return True
    return False


def _rename(atom: Atom, m: dict[str, str]) -> Atom:
    return Atom(atom.predicate, tuple(m.get(x, x) for x in atom.args))


def _goal_histogram(n: NormalProblem) -> Counter:
    return Counter(
        (sign, a.predicate) for t in n.goal for sign, atoms in ((1, t.pos), (0, t.neg)) for a in atoms
    )


@dataclass(frozen=True)
class Verdict:
    """What `compare` found: `equivalent`, and when not, `reason` says why in one line."""

    equivalent: bool
    reason: str = ""

    def __bool__(self) -> bool:
        return self.equivalent


def _first_difference(a: Counter, b: Counter) -> str:
    key = next(k for k in sorted(set(a) | set(b), key=str) if a[k] != b[k])
    return f"{key}: {a[key]} vs {b[key]}"


def _count_difference(pa: Problem, pb: Problem) -> str | None:
    """Why no renaming can map one problem onto the other, found by counting (O(n)); None if counts agree."""
    if len(pa.objects) != len(pb.objects):
        return f"object counts differ: {len(pa.objects)} vs {len(pb.objects)} objects"
    types_a, types_b = Counter(pa.objects.values()), Counter(pb.objects.values())
    if types_a != types_b:
        return f"object counts per type differ ({_first_difference(types_a, types_b)})"
    if len(pa.init) != len(pb.init):
        return f"initial states differ in size: {len(pa.init)} vs {len(pb.init)} facts"
    preds_a, preds_b = Counter(x.predicate for x in pa.init), Counter(x.predicate for x in pb.init)
    if preds_a != preds_b:
        return f"initial facts per predicate differ ({_first_difference(preds_a, preds_b)})"
    return None


def _goal_type_error(problem: Problem, dom: Domain) -> str | None:
    """The type error in a parsed problem's goal (built in code or parsed without the domain), if any."""
    text = format_formula(problem.goal)
    reader = FormulaReader(Reader(text, "<goal>"), dom.predicates, dom.types,
                           {**dom.constants, **problem.objects}, "object")
    try:
        reader.formula(parse_sexpr(text, "<goal>"), {}, "in :goal")
    except PDDLTypeError as error:
        return str(error)
    return None


def _read(problem: Problem | str | NormalProblem, dom: Domain, label: str) -> tuple[object, str | None]:
    """(the parsed problem, None), or (None, why its goal cannot be well-typed)."""
    if isinstance(problem, NormalProblem):
        return problem, None
    if isinstance(problem, str):
        try:
            return parse_problem(problem, dom, source=label), None
        except PDDLTypeError as error:
            if error.where != "in :goal":
                raise
            return None, f"the goal of problem {label} cannot be well-typed: {error}"
    reason = _goal_type_error(problem, dom)
    return problem, (f"the goal of problem {label} cannot be well-typed: {reason}" if reason else None)


def compare(
    problem_a: Problem | str | NormalProblem,
    problem_b: Problem | str | NormalProblem,
    domain: Domain | str,
    placeholder: bool = False,
    names: tuple[str, str] = ("a", "b"),
    work: int | None = None,
    cpu_seconds: float | None = -1.0,
) -> Verdict:
    """Like `equivalent`, with the reason when not: counts that differ (decided in O(n), before the goals
    are normalised), an ill-typed goal (a verdict, not an error), different goals or initial states.
    `names` label the problems in reasons and parse errors (the CLI passes the file names). `work`
    (units: atoms and graph nodes visited; default `DEFAULT_WORK`) and `cpu_seconds` (default
    `DEFAULT_CPU_SECONDS`, parsing included; None: no limit) bound the check; past either it raises
    `EquivalenceUnknownError` rather than run on.

    Raises:
        PDDLError: a problem does not parse or does not fit the domain (other than an ill-typed goal).
        GoalTooComplexError: a goal's DNF is too large.
        EquivalenceUnknownError: the check ran out of its budget (a `GoalTooComplexError`; CLI exit 2).
    """
    dom = _as_domain(domain)
    _check_supported(dom)
    from servicerobot.pddl import _equivalence_budget as limits  # read at call time: tests lower them

    work = limits.DEFAULT_WORK if work is None else work
    cpu_seconds = limits.DEFAULT_CPU_SECONDS if cpu_seconds == -1.0 else cpu_seconds
    collecting = gc.isenabled()
    gc.disable()  # millions of small tuples: full collections would grow with the heap; no cycles are made
    try:
        with budget(work, cpu_seconds):
            return _compare(problem_a, problem_b, dom, placeholder, names)
    finally:
        if collecting:
            gc.enable()


def _compare(problem_a: Problem | str | NormalProblem, problem_b: Problem | str | NormalProblem, dom: Domain,
             placeholder: bool, names: tuple[str, str]) -> Verdict:
    a, reason_a = _read(problem_a, dom, names[0])
    b, reason_b = _read(problem_b, dom, names[1])
    if reason_a or reason_b:
        return Verdict(False, "; ".join(r for r in (reason_a, reason_b) if r))
    pa = a.problem if isinstance(a, NormalProblem) else a
    pb = b.problem if isinstance(b, NormalProblem) else b
    reason = _count_difference(pa, pb)
    if reason:
        return Verdict(False, reason)
    if pa.objects == pb.objects and pa.init == pb.init and pa.goal == pb.goal:
        return Verdict(True)  # the same problem (names and order aside): the identity renaming, in O(n)
    a = a if isinstance(a, NormalProblem) else normalise(a, dom)
    b = b if isinstance(b, NormalProblem) else normalise(b, dom)
    return _decide(a, b, placeholder)


def _stated_predicates(problem: Problem) -> set[str]:
    """The predicates a goal names as written (before normalisation adds what the invariants imply)."""
    return set(re.findall(r"\(\s*([^\s()]+)", format_formula(problem.goal))) - {"and", "or", "not", "imply",
                                                                                "forall", "exists", "when"}


def _histogram_difference(a: NormalProblem, b: NormalProblem, hist_a: Counter, hist_b: Counter) -> str:
    """Why two goals' fact counts differ, led by a predicate the goals state: `(on x y) (on y z)` vs `(on q r)`
    differ in their 'on' facts (2 vs 1); that the first also implies 'arm-empty' is a consequence, said only when
    the stated facts agree."""
    stated = _stated_predicates(a.problem) | _stated_predicates(b.problem)
    differ = [k for k in set(hist_a) | set(hist_b) if hist_a[k] != hist_b[k]]
    key = min(differ, key=lambda k: (k[1] not in stated, str(k)))
    sign, predicate = key
    facts = f"{'' if sign else 'negated '}{predicate!r} facts"
    if predicate in stated:
        return f"the goals differ in their {facts}: {hist_a[key]} vs {hist_b[key]}"
    return (f"the goals state the same facts, but differ in the {facts} the domain's invariants imply from them: "
            f"{hist_a[key]} vs {hist_b[key]}")


def _decide(a: NormalProblem, b: NormalProblem, placeholder: bool) -> Verdict:
    pa, pb = a.problem, b.problem
    if pa.objects == pb.objects and pa.init == pb.init and a.goal == b.goal:
        return Verdict(True)
    if not placeholder and (len(a.goal) > 1 or len(b.goal) > 1):
        verdict = _semantic_equivalent(a, b)
        if verdict is not None:
            return Verdict(verdict, "" if verdict else "the goals hold in different states under every "
                                                       "renaming that maps one initial state onto the other")
    if len(a.goal) != len(b.goal):
        return Verdict(False, f"the normalised goals have {len(a.goal)} vs {len(b.goal)} disjuncts")
    hist_a, hist_b = _goal_histogram(a), _goal_histogram(b)
    if hist_a != hist_b:
        return Verdict(False, _histogram_difference(a, b, hist_a, hist_b))
    if not placeholder:
        if _isomorphic(_graph(a, True, True, False), _graph(b, True, True, False)):
            return Verdict(True)
        return Verdict(False, "no renaming of objects maps both the initial state and the goal of one onto "
                              "the other")
    if not _isomorphic(_graph(a, True, False, False), _graph(b, True, False, False)):
        return Verdict(False, "no renaming of objects maps one initial state onto the other")
    if not _isomorphic(_graph(a, False, True, True), _graph(b, False, True, True)):
        return Verdict(False, "no renaming of objects maps one goal onto the other")
    return Verdict(True)


def equivalent(
    problem_a: Problem | str | NormalProblem,
    problem_b: Problem | str | NormalProblem,
    domain: Domain | str,
    placeholder: bool = False,
    work: int | None = None,
    cpu_seconds: float | None = -1.0,
) -> bool:
    """True if the two problems are the same task up to a renaming of objects (`compare` says why not).

    Args:
        problem_a: PDDL text, a parsed `Problem`, or the result of `normalise`.
        problem_b: the same for the other problem.
        domain: the domain, as PDDL text (parsed once and cached) or a `Domain`.
        placeholder: match init and goal with separate renamings (Planetarium's placeholder mode).
        work: the work units the check may spend (default `DEFAULT_WORK`, see `compare`).
        cpu_seconds: the CPU seconds it may spend (default `DEFAULT_CPU_SECONDS`; None: no limit).

    A goal that cannot be well-typed (an object of the wrong type in a predicate) gives False.

    Raises:
        PDDLError: a problem does not parse or does not fit the domain.
        GoalTooComplexError: a goal's DNF is too large.
        EquivalenceUnknownError: the check ran out of its budget.
    """
    return compare(problem_a, problem_b, domain, placeholder, work=work, cpu_seconds=cpu_seconds).equivalent


def evaluate(
    source: Problem | str,
    target: Problem | str,
    domain: Domain | str,
    placeholder: bool = False,
    check_solvable: bool = True,
    solver: Callable[[str, str], bool] | None = None,
) -> EvaluationResult:
    """Judge a generated problem against a reference: parseable, solvable, correct.

    An unparseable source gives `EvaluationResult(False, False, False)`; it never raises for the
    source. `solvable` is `solver(domain_text, source_text)`: whether a plan exists that a validator
    accepts. This layer has no planner: `servicerobot.planners.evaluate` passes
    `servicerobot.planners.solvable` (Fast Downward finds a plan and VAL accepts it); with
    `check_solvable=False` solvable is False (not checked).

    Raises:
        PDDLError: the target or the domain does not parse.
        TypeError: `check_solvable` without a `solver`.
    """
    if check_solvable and solver is None:
        raise TypeError("evaluate(check_solvable=True) needs solver=(domain_text, problem_text) -> bool; use "
                        "servicerobot.planners.evaluate (Fast Downward and VAL), or check_solvable=False")
    dom = _as_domain(domain)
    tgt = normalise(target, dom)
    try:
        src = normalise(source, dom)
    except Exception:  # noqa: BLE001 - any failure on generated text means "not parseable"
        return EvaluationResult(False, False, False)
    solvable = False
    if check_solvable:
        from servicerobot.pddl.writer import write_domain, write_problem

        domain_text = domain if isinstance(domain, str) else write_domain(dom)
        source_text = source if isinstance(source, str) else write_problem(src.problem)
        solvable = bool(solver(domain_text, source_text))
    try:
        correct = equivalent(src, tgt, dom, placeholder)
    except GoalTooComplexError:
        correct = False
    return EvaluationResult(True, solvable, correct)
