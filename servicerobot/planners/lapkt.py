"""LAPKT (the `lapkt` wheel) as a subprocess back end: SIW+ then BFS(f) by default, with a hard time limit.

The wheel has no `python -m lapkt` and no console entry point; it installs a `lapkt_cmd.py` script
that parses `PLANNER -d DOMAIN -p PROBLEM [options]` with `lapkt.parseargs.process_arguments` and
runs `lapkt.load_planner.Planner`. We run the same three lines with `python -c` (so the script's
location does not matter) in a fresh process group, in a temporary directory, and kill the group when
the time limit expires. The planner writes its plan to a file (`;;` comment lines when it found none)
and its statistics to stdout; its exit status says nothing (it prints `PLANNER_EXIT_CODE: SUCCESS`
whatever happened) unless Python or the C++ core crashed. `PlanResult.expanded` is the sum of the
"Nodes expanded during search" that each stage prints; SIW+ counts only its last IW sub-search there
(often 0 when SIW+ succeeds), so it is a lower bound. `search_time` is the stages' own search time;
Tarski's parsing and grounding (most of a run on small tasks, about 0.3-0.6 s) is outside it.

The wheel grounds with Tarski, which needs `clingo` (the `lapkt` extra installs it). Before handing a
task over we work around what Tarski and LAPKT 0.2.1 do not handle (found by running them):

* derived predicates: non-recursive ones are compiled away for the problem (`compile_derived`, as for
  Fast Downward), so the rewriting below applies; a domain with recursive ones goes over as it is;
* quantified and disjunctive goals: LAPKT silently drops quantified goal parts, so the goal is
  expanded with `conjunctive_goal` first;
* Tarski has one namespace for types, predicates and objects: a problem object named like a type or
  a predicate (the household robot is the object `robot` of type `robot`) is renamed for the run and
  renamed back in the plan;
* Tarski cannot expand a universal effect or quantifier over a type without objects ("No constants
  were defined!"): such parts are simplified away for the problem at hand (they are vacuous);
* LAPKT crashes (SIGSEGV, after "Initial State pruned!") on a ground action without a fluent
  precondition: such actions get an always-true fluent guard.
"""

from __future__ import annotations

import dataclasses
import importlib.util
import os
import re
import shutil
import sys
import tempfile
from collections.abc import Mapping
from pathlib import Path

from servicerobot.errors import DependencyNotInstalled, PDDLError, PDDLSemanticError, install_hint
from servicerobot.pddl.atoms import Atom
from servicerobot.pddl.compile_derived import compile_derived
from servicerobot.pddl.explain import conjuncts
from servicerobot.pddl.features import UnsupportedFeatureError
from servicerobot.pddl.grounding import substitute
from servicerobot.pddl.interpreter import Interpreter
from servicerobot.pddl.model import (
    FALSE,
    TRUE,
    Action,
    AddEffect,
    And,
    AtomF,
    Domain,
    Effect,
    Exists,
    Forall,
    ForallEffect,
    Formula,
    Imply,
    Not,
    Or,
    Predicate,
    Problem,
    Truth,
    WhenEffect,
    effect_predicates,
)
from servicerobot.pddl.parser import parse_domain, parse_problem
from servicerobot.pddl.writer import write_domain, write_problem
from servicerobot.planners._process import run_with_timeout
from servicerobot.planners.base import Planner, PlanResult, PlanStatus
from servicerobot.planners.goal_compilation import conjunctive_goal

__all__ = ["DEFAULT_PLANNER", "LAPKT", "lapkt_planners"]

DEFAULT_PLANNER = "SIW_PLUS_BFS_F_Planner"
"""The wheel's SIW-then-BFS(f) planner: SIW+ (its log calls the stage "SIW"), then BFS(f) if SIW+ fails.

It stops at the first plan. `AT_LAPKT_Planner` adds an anytime RWA* stage that runs until it proves
its last plan optimal, so under a time limit it ends as TIMEOUT (the kill discards its plans).
"""

INSTALL_HINT = install_hint("lapkt")

_RUNNER = (
    "from lapkt.parseargs import process_arguments\n"
    "from lapkt.load_planner import Planner\n"
    "Planner(process_arguments()).solve()\n"
)
_EXPANDED = re.compile(r"Nodes expanded during search: (\d+)")
_SEARCH_TIME = re.compile(r"search completed in ([0-9.eE+-]+) secs")
_GUARD = "servicerobot-lapkt-guard"  # the always-true fluent (a name no PDDL reader lowercases away)


def lapkt_planners() -> tuple[str, ...]:
    """The planner names the installed wheel offers (its command's sub-commands), in its order.

    Raises:
        DependencyNotInstalled: the `lapkt` package is missing.
    """
    spec = importlib.util.find_spec("lapkt")
    if spec is None or not spec.submodule_search_locations:
        raise DependencyNotInstalled(f"LAPKT is not installed: {INSTALL_HINT}")
    for location in spec.submodule_search_locations:
        config = Path(location) / "planner" / "lapkt_planner_config.yml"
        if config.is_file():
            text = config.read_text(encoding="utf-8")
            return tuple(re.findall(r"^([A-Za-z_]\w*)\s*:", text, flags=re.MULTILINE))
    raise DependencyNotInstalled(f"the lapkt package has no planner/lapkt_planner_config.yml: {INSTALL_HINT}")


def _check_grounder() -> None:
    """Tarski grounds with gringo: the `clingo` module (pip) or a `gringo` binary on PATH."""
    if importlib.util.find_spec("clingo") is None and shutil.which("gringo") is None:
        raise DependencyNotInstalled(
            "LAPKT's Tarski grounder needs clingo (or a gringo binary), which is not installed: "
            + INSTALL_HINT
        )


# ---------------------------------------------------------------------- task rewriting for Tarski / LAPKT
def _simplify(f: Formula, empty: set[str]) -> Formula:
    """`f` with quantifiers over types without objects evaluated (forall: true, exists: false)."""
    if isinstance(f, (Forall, Exists)):
        if any(typ in empty for _, typ in f.params):
            return TRUE if isinstance(f, Forall) else FALSE
        body = _simplify(f.body, empty)
        return body if isinstance(body, Truth) else type(f)(f.params, body)
    if isinstance(f, Not):
        inner = _simplify(f.f, empty)
        return Truth(not inner.value) if isinstance(inner, Truth) else Not(inner)
    if isinstance(f, (And, Or)):
        absorbing = isinstance(f, Or)  # true absorbs a disjunction, false a conjunction
        parts = []
        for part in (_simplify(p, empty) for p in f.parts):
            if isinstance(part, Truth):
                if part.value == absorbing:
                    return part
                continue
            parts.append(part)
        if not parts:
            return Truth(not absorbing)
        return parts[0] if len(parts) == 1 else type(f)(tuple(parts))
    if isinstance(f, Imply):
        return _simplify(Or((Not(f.a), f.b)), empty)
    return f


def _simplify_effects(effects: tuple[Effect, ...], empty: set[str]) -> tuple[Effect, ...]:
    out: list[Effect] = []
    for e in effects:
        if isinstance(e, ForallEffect):
            if not any(typ in empty for _, typ in e.params):
                inner = _simplify_effects(e.effects, empty)
                if inner:
                    out.append(ForallEffect(e.params, inner))
        elif isinstance(e, WhenEffect):
            condition = _simplify(e.condition, empty)
            inner = _simplify_effects(e.effects, empty)
            if condition == TRUE:
                out.extend(inner)
            elif condition != FALSE and inner:
                out.append(WhenEffect(condition, inner))
        else:
            out.append(e)
    return tuple(out)


def prepare_domain(domain: Domain, objects: Mapping[str, str]) -> tuple[Domain, bool]:
    """The domain as LAPKT 0.2.1 can run it for these objects, and whether the guard fluent was added.

    Quantifiers and actions over types without objects are evaluated away; actions whose
    precondition has no positive fluent atom at the top level get the guard `(servicerobot-lapkt-guard)`;
    action costs are dropped (the problem written for LAPKT has no cost values either).
    """
    empty = {typ for typ in domain.types.types if not domain.objects_of_type(objects, typ)}
    actions: dict[str, Action] = {}
    for name, action in domain.actions.items():
        if any(typ in empty for _, typ in action.params):
            continue  # no ground instance
        precondition = _simplify(action.precondition, empty)
        if precondition == FALSE:
            continue
        actions[name] = dataclasses.replace(  # cost=(): LAPKT's width-based search minimises plan length
            action, precondition=precondition, effects=_simplify_effects(action.effects, empty), cost=()
        )
    fluents = set().union(*(effect_predicates(a.effects) for a in actions.values()))
    guarded = False
    for name, action in actions.items():
        if not any(isinstance(c, AtomF) and c.predicate in fluents for c in conjuncts(action.precondition)):
            guard = AtomF(_GUARD)
            actions[name] = dataclasses.replace(
                action,
                precondition=And((guard, *conjuncts(action.precondition))),
                effects=(*action.effects, AddEffect(guard)),
            )
            guarded = True
    predicates = dict(domain.predicates)
    if guarded:
        predicates[_GUARD] = Predicate(_GUARD)
    return dataclasses.replace(domain, predicates=predicates, actions=actions, functions={}), guarded


def _renaming(domain: Domain, problem: Problem) -> dict[str, str]:
    """New names for the problem objects that share a name with a type or predicate (Tarski forbids it)."""
    taken = set(domain.types.types) | set(domain.predicates) | set(domain.constants) | set(problem.objects)
    reserved = set(domain.types.types) | set(domain.predicates)
    renaming: dict[str, str] = {}
    for name in problem.objects:
        if name in reserved:
            new, n = f"{name}-obj", 1
            while new in taken:
                n += 1
                new = f"{name}-obj{n}"
            taken.add(new)
            renaming[name] = new
    return renaming


def _rename_problem(problem: Problem, renaming: Mapping[str, str], goal: Formula) -> Problem:
    def atom(a: Atom) -> Atom:
        return Atom(a.predicate, tuple(renaming.get(x, x) for x in a.args))

    return Problem(
        problem.name,
        problem.domain_name,
        {renaming.get(name, name): typ for name, typ in problem.objects.items()},
        frozenset(atom(a) for a in problem.init),
        substitute(goal, dict(renaming)) if renaming else goal,
    )


def _tail(text: str, lines: int = 15) -> str:
    return "\n".join(text.strip().splitlines()[-lines:])


# ---------------------------------------------------------------------- the planner
class LAPKT(Planner):
    """LAPKT's planners from the `lapkt` wheel, run in a subprocess.

    Args:
        planner: a planner class of the wheel (see `lapkt_planners()`); the default runs SIW+ and,
            if that fails, BFS(f).
        timeout: the default time limit in seconds; the whole process group is killed when it expires.

    Raises:
        DependencyNotInstalled: `lapkt` (or the clingo grounder it needs) is not installed.
        ValueError: the wheel has no planner of that name.
    """

    name = "lapkt"

    def __init__(self, planner: str = DEFAULT_PLANNER, timeout: float | None = 60.0):
        super().__init__(timeout)
        known = lapkt_planners()
        _check_grounder()
        if planner not in known:
            raise ValueError(f"unknown LAPKT planner {planner!r}; the lapkt wheel offers {', '.join(known)}")
        self.planner = planner

    @property
    def label(self) -> str:
        """The name and planner class, e.g. `lapkt[SIW_PLUS_BFS_F_Planner]`."""
        return f"{self.name}[{self.planner}]"

    def _command(self) -> list[str]:
        return [
            sys.executable, "-c", _RUNNER, self.planner,
            "-d", "domain.pddl", "-p", "problem.pddl", "--plan_file", "plan.ipc", "--log_file", "lapkt.log",
        ]  # fmt: skip

    def _prepare(self, domain_text: str, problem_text: str) -> tuple[str, str, dict[str, str]] | PlanResult:
        """The texts to run and the renaming to undo, or a result reached without running LAPKT."""
        try:
            domain = parse_domain(domain_text, source="<domain>", strict=False)  # as Fast Downward reads it
            problem = parse_problem(problem_text, domain, source="<problem>")
        except UnsupportedFeatureError:
            return domain_text, problem_text, {}  # beyond our parser: LAPKT gets the task as it is
        first: dict[str, str] = {}
        if domain.derived:  # compiled away where it can be; else the goal rewriting below cannot run
            first = _renaming(domain, problem)  # before problem objects become domain constants
            compiled = compile_derived(domain, _rename_problem(problem, first, problem.goal))
            if compiled is None or compiled[0].derived:
                return domain_text, problem_text, {}  # the goal rewriting below does not know axioms
            domain, problem = compiled
        if Interpreter.for_problem(domain, problem).compile_goal(problem.goal).holds(problem.init):
            return PlanResult(
                PlanStatus.SOLVED, planner=self.label, expanded=0, message="the goal holds initially"
            )
        try:
            goal = conjunctive_goal(domain, problem.goal, problem.objects, problem.init)
        except PDDLSemanticError as error:
            return PlanResult(PlanStatus.UNSOLVABLE, planner=self.label, message=str(error))
        lapkt_domain, guarded = prepare_domain(domain, problem.objects)
        renaming = _renaming(domain, problem)
        prepared = _rename_problem(problem, renaming, goal)
        if guarded:
            prepared = dataclasses.replace(prepared, init=prepared.init | {Atom(_GUARD, ())})
        back = {new: old for old, new in first.items()}  # undo both renamings, the later one first
        for middle, new in renaming.items():
            back[new] = back.pop(middle, middle)
        return write_domain(lapkt_domain), write_problem(prepared), back

    def _solve(self, domain_text: str, problem_text: str, timeout: float | None) -> PlanResult:
        try:
            prepared = self._prepare(domain_text, problem_text)
        except PDDLError as error:
            return PlanResult(PlanStatus.ERROR, planner=self.label, message=f"invalid PDDL input: {error}")
        if isinstance(prepared, PlanResult):
            return prepared
        domain_out, problem_out, back = prepared
        with tempfile.TemporaryDirectory(prefix="servicerobot-lapkt-") as name:
            tmp = Path(name)
            (tmp / "domain.pddl").write_text(domain_out, encoding="utf-8")
            (tmp / "problem.pddl").write_text(problem_out, encoding="utf-8")
            ran = run_with_timeout(self._command(), tmp, timeout, "LAPKT",
                                   env={**os.environ, "TMPDIR": name})  # Tarski's gringo files go away with the directory
            if ran is None:
                return PlanResult(PlanStatus.TIMEOUT, planner=self.label, message=f"no plan within {timeout} s")
            returncode, stdout, stderr = ran
            plan_file = tmp / "plan.ipc"
            plan_text = plan_file.read_text(encoding="utf-8") if plan_file.is_file() else None
        return self._result(returncode, stdout, stderr, plan_text, back)

    def _result(
        self, code: int, stdout: str, stderr: str, plan_text: str | None, back: Mapping[str, str]
    ) -> PlanResult:
        expanded = [int(n) for n in _EXPANDED.findall(stdout)]
        times = [float(t) for t in _SEARCH_TIME.findall(stdout)]
        stats = {
            "expanded": sum(expanded) if expanded else None,
            "search_time": sum(times) if times else None,
        }
        if code != 0:
            if "ReachabilityLPUnsolvable" in stderr:
                return PlanResult(
                    PlanStatus.UNSOLVABLE,
                    planner=self.label,
                    message="Tarski's relaxed reachability analysis proved the task unsolvable",
                )
            why = f"killed by signal {-code}" if code < 0 else f"exit code {code}"
            return PlanResult(
                PlanStatus.ERROR,
                planner=self.label,
                message=f"LAPKT failed ({why}):\n{_tail(stderr + chr(10) + stdout)}",
                **stats,
            )
        lines = [line.strip() for line in (plan_text or "").splitlines() if line.strip()]
        steps = [line for line in lines if not line.startswith(";")]
        if steps:
            plan = tuple(_rename_step(step, back) for step in steps)
            return PlanResult(
                PlanStatus.SOLVED,
                plan=plan,
                planner=self.label,
                message=f"plan found: {len(plan)} steps",
                **stats,
            )
        if plan_text is not None and any("no solution" in line.lower() for line in lines):
            comments = "; ".join(line.lstrip("; ") for line in lines)
            return PlanResult(
                PlanStatus.UNSOLVABLE,
                planner=self.label,
                message=f"LAPKT found no plan ({comments}); unsolvability is not proven",
                **stats,
            )
        return PlanResult(
            PlanStatus.ERROR,
            planner=self.label,
            message=f"LAPKT wrote no plan and no verdict:\n{_tail(stderr + chr(10) + stdout)}",
            **stats,
        )


def _rename_step(step: str, back: Mapping[str, str]) -> str:
    """`(name arg ...)` in our spelling: lowercase, renamed objects restored."""
    words = step.strip().strip("()").lower().split()
    if not words:
        return step
    return "(" + " ".join([words[0], *(back.get(w, w) for w in words[1:])]) + ")"
