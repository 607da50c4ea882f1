"""Our household world as a PDDLGym domain directory that `pddlgym.core.PDDLEnv` loads and steps.

PDDLGym's dialect executes STRIPS operators (literal preconditions and effects) triggered by action
literals; its fast (non-Prolog) inference takes positive literals only. So the export compiles:

- each action `a` to an action predicate `(a <its parameters>)` that triggers it: an action literal is the
  same text as our ground action, `(pick-up robot mug_1 table_1 kitchen)`;
- a negative precondition or goal literal `(not (p x))` to `(not-p x)`, a complement predicate kept true
  exactly when `p` is false (initialised over every well-typed tuple, updated by every effect on `p`);
- an effect `(when c e)` with one literal `c` to two operators triggered by the same literal (`c` and
  `not c`): PDDLGym picks the one whose precondition holds;
- quantified goals to their conjunction over the problem's objects.

Actions PDDLGym's operators cannot express (a quantified or conditional effect over a set of objects, a
quantified or disjunctive precondition) are left out and named in `HouseholdExport.omitted`; tasks whose
goals stay disjunctive after grounding are skipped for the next task of the same house.
"""

from __future__ import annotations

import itertools
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np

from servicerobot.pddl.atoms import Atom
from servicerobot.pddl.grounding import Universe
from servicerobot.pddl.model import (
    FALSE,
    TRUE,
    AddEffect,
    And,
    AtomF,
    DelEffect,
    Domain,
    Exists,
    Forall,
    ForallEffect,
    Formula,
    Imply,
    Not,
    Or,
    Problem,
    Truth,
    WhenEffect,
)

__all__ = ["HouseholdExport", "compile_goal_literals", "export_household", "to_pddlgym_domain"]


@dataclass(frozen=True)
class HouseholdExport:
    """What `export_household` wrote.

    Attributes:
        domain_file, problem_dir: the files to give `pddlgym.core.PDDLEnv(domain_file, problem_dir)`.
        problems: our Problem for each problem file, in PDDLGym's order (sorted file names).
        complements: complement predicate -> the predicate it negates (absent from our states).
        omitted: action -> why PDDLGym's dialect cannot express it.
        skipped_tasks: (seed, task kind, why) for tasks whose goals could not be exported.
    """

    domain_file: Path
    problem_dir: Path
    problems: tuple[Problem, ...]
    complements: dict[str, str]
    omitted: dict[str, str]
    skipped_tasks: tuple[tuple[int, str, str], ...] = field(default=())


def _literals(f: Formula) -> list[tuple[bool, AtomF]] | None:
    """A conjunction of literals as (positive, atom) pairs, or None if `f` is anything else."""
    if isinstance(f, Truth):
        return [] if f.value else None
    if isinstance(f, AtomF):
        return [(True, f)]
    if isinstance(f, Not) and isinstance(f.f, AtomF):
        return [(False, f.f)]
    if isinstance(f, And):
        out: list[tuple[bool, AtomF]] = []
        for part in f.parts:
            sub = _literals(part)
            if sub is None:
                return None
            out += sub
        return out
    return None


def _ground(f: Formula, universe: Universe, binding: dict[str, str]) -> Formula:
    """`f` with quantifiers expanded over the universe and variables substituted."""
    if isinstance(f, AtomF):
        return AtomF(f.predicate, tuple(binding.get(t, t) for t in f.terms))
    if isinstance(f, Not):
        return Not(_ground(f.f, universe, binding))
    if isinstance(f, And):
        return And(tuple(_ground(p, universe, binding) for p in f.parts))
    if isinstance(f, Or):
        return Or(tuple(_ground(p, universe, binding) for p in f.parts))
    if isinstance(f, Imply):
        return Or((Not(_ground(f.a, universe, binding)), _ground(f.b, universe, binding)))
    if isinstance(f, (Forall, Exists)):
        parts = tuple(_ground(f.body, universe, b) for b in universe.bindings(f.params, binding))
        return And(parts) if isinstance(f, Forall) else Or(parts)
    return f


def _simplify(f: Formula) -> Formula:
    """Flatten nested and/or, push `not` inward, drop empty parts; an `or` of one part is that part."""
    if isinstance(f, Not):
        inner = f.f
        if isinstance(inner, Not):
            return _simplify(inner.f)
        if isinstance(inner, And):
            return _simplify(Or(tuple(Not(p) for p in inner.parts)))
        if isinstance(inner, Or):
            return _simplify(And(tuple(Not(p) for p in inner.parts)))
        if isinstance(inner, Truth):
            return FALSE if inner.value else TRUE
        return f
    if isinstance(f, (And, Or)):
        conj = isinstance(f, And)
        parts: list[Formula] = []
        for p in (_simplify(p) for p in f.parts):
            if isinstance(p, type(f)):
                parts += p.parts
            elif isinstance(p, Truth):
                if p.value != conj:
                    return p
            else:
                parts.append(p)
        if not parts:
            return TRUE if conj else FALSE
        return parts[0] if len(parts) == 1 else (And(tuple(parts)) if conj else Or(tuple(parts)))
    return f


def compile_goal_literals(goal: Formula, universe: Universe) -> list[tuple[bool, AtomF]] | None:
    """The goal as a conjunction of ground literals (quantifiers expanded), or None if it is disjunctive."""
    return _literals(_simplify(_ground(goal, universe, {})))


def _atom_text(positive: bool, atom: AtomF | Atom, complements: dict[str, str]) -> str:
    name, terms = (atom.predicate, atom.terms) if isinstance(atom, AtomF) else (atom.predicate, atom.args)
    if not positive:
        name = next(c for c, p in complements.items() if p == name)
    return f"({name}{' ' if terms else ''}{' '.join(terms)})"


def _effect_lines(effects: Iterable[AddEffect | DelEffect], complements: dict[str, str]) -> list[str]:
    negated = {p: c for c, p in complements.items()}
    lines = []
    for e in effects:
        atom = e.atom
        args = " ".join(atom.terms)
        sep = " " if args else ""
        if isinstance(e, AddEffect):
            lines.append(f"({atom.predicate}{sep}{args})")
            if atom.predicate in negated:
                lines.append(f"(not ({negated[atom.predicate]}{sep}{args}))")
        else:
            lines.append(f"(not ({atom.predicate}{sep}{args}))")
            if atom.predicate in negated:
                lines.append(f"({negated[atom.predicate]}{sep}{args})")
    return lines


def _negated_predicates(domain: Domain, goals: Sequence[list[tuple[bool, AtomF]]]) -> set[str]:
    found = {a.predicate for goal in goals for positive, a in goal if not positive}
    for action in domain.actions.values():
        for positive, atom in _literals(action.precondition) or []:
            if not positive:
                found.add(atom.predicate)
        for e in action.effects:
            if isinstance(e, WhenEffect):
                for _, atom in _literals(e.condition) or []:
                    found.add(atom.predicate)  # the split needs `not c` for the other operator
    return found


def to_pddlgym_domain(domain: Domain, goals: Sequence[list[tuple[bool, AtomF]]] = ()
                      ) -> tuple[str, dict[str, str], dict[str, str]]:
    """(PDDLGym domain text, complement predicate -> predicate, omitted action -> why) for `domain`.

    `goals` are the exported problems' goals as literals, so their negated predicates get complements too.
    """
    complements: dict[str, str] = {}
    for pred in sorted(_negated_predicates(domain, goals)):
        name = f"not-{pred}"
        while name in domain.predicates or name in domain.actions:
            name = f"not-{name}"
        complements[name] = pred
    negated = {p: c for c, p in complements.items()}
    omitted: dict[str, str] = {}
    operators: list[str] = []
    triggers: list[str] = []
    for action in domain.actions.values():
        pre = _literals(action.precondition)
        plain = [e for e in action.effects if isinstance(e, (AddEffect, DelEffect))]
        whens = [e for e in action.effects if isinstance(e, WhenEffect)]
        why = []
        if pre is None:
            why.append("its precondition is not a conjunction of literals (quantified or disjunctive)")
        if any(isinstance(e, ForallEffect) for e in action.effects):
            why.append("a quantified effect over the problem's objects (PDDLGym's operators have neither "
                       "quantified nor conditional effects)")
        if why:
            omitted[action.name] = "; ".join(why)
            continue
        bad = [w for w in whens if len(_literals(w.condition) or []) != 1
               or not all(isinstance(x, (AddEffect, DelEffect)) for x in w.effects)]
        if bad:
            omitted[action.name] = "a conditional effect whose condition is not one literal"
            continue
        params = " ".join(f"{v} - {t}" for v, t in action.params)
        trigger = f"({action.name}{' ' if action.params else ''}{' '.join(v for v, _ in action.params)})"
        triggers.append(f"({action.name}{' ' if params else ''}{params})")
        for k, choice in enumerate(itertools.product((True, False), repeat=len(whens))):
            conds = list(pre)
            effects = list(plain)
            for holds, w in zip(choice, whens):
                (positive, atom), = _literals(w.condition)
                conds.append((positive == holds, atom))
                if holds:
                    effects += list(w.effects)
            pre_lines = [trigger] + [_atom_text(p, a, complements) for p, a in conds]
            eff_lines = _effect_lines(effects, complements)
            suffix = "" if not whens else f"-{k}"
            operators.append(
                f"  (:action {action.name}-op{suffix}\n"
                f"    :parameters ({params})\n"
                f"    :precondition (and {' '.join(pre_lines)})\n"
                f"    :effect (and {' '.join(eff_lines)})\n  )\n")
    types_lines = []
    by_parent: dict[str, list[str]] = {}
    for t in domain.types.types[1:]:
        by_parent.setdefault(domain.types.parents.get(t, "object"), []).append(t)
    for parent, children in by_parent.items():
        types_lines.append(f"    {' '.join(children)} - {parent}\n")
    preds = [str(p) for p in domain.predicates.values()]
    preds += [str(type(domain.predicates[p])(c, domain.predicates[p].params)) for c, p in complements.items()]
    used = [t for t in triggers if t.split()[0][1:].rstrip(")") not in omitted]
    del negated
    action_names = " ".join(a.name for a in domain.actions.values() if a.name not in omitted)
    constants = ""
    if domain.constants:
        constants = "  (:constants " + " ".join(f"{n} - {t}" for n, t in domain.constants.items()) + ")\n"
    text = (
        f"; {domain.name} exported by servicerobot for PDDLGym; complement predicates: "
        f"{', '.join(f'{c} = not {p}' for c, p in complements.items()) or 'none'}\n"
        f"(define (domain {domain.name})\n"
        "  (:requirements :strips :typing)\n"
        "  (:types\n" + "".join(types_lines) + "  )\n" + constants +
        "  (:predicates\n" + "".join(f"    {p}\n" for p in preds + used) + "  )\n"
        f"  ; (:actions {action_names})\n\n" + "\n".join(operators) + ")\n")
    return text, complements, omitted


def _problem_text(problem: Problem, domain: Domain, literals: list[tuple[bool, AtomF]],
                  complements: dict[str, str]) -> str:
    universe = Universe(domain.types, {**domain.constants, **problem.objects})
    init = sorted(problem.init)
    extra: list[Atom] = []
    for comp, pred in complements.items():
        params = domain.predicates[pred].params
        for values in itertools.product(*(universe.of_type(t) for _, t in params)):
            if Atom(pred, tuple(values)) not in problem.init:
                extra.append(Atom(comp, tuple(values)))
    objects = "".join(f"    {n} - {t}\n" for n, t in problem.objects.items() if n not in domain.constants)
    goal = " ".join(_atom_text(p, a, complements) for p, a in literals)
    return (f"(define (problem {problem.name})\n  (:domain {domain.name})\n  (:objects\n{objects}  )\n"
            "  (:init\n" + "".join(f"    {a}\n" for a in init + extra) + "  )\n"
            f"  (:goal (and {goal}))\n)\n")


def export_household(out_dir: str | Path, seeds: Iterable[int] = (0, 1, 2), size: str = "small",
                     tasks_per_seed: int = 1) -> HouseholdExport:
    """Write the household domain and one problem per seed (the house, and the first task of that seed
    whose goal PDDLGym can state) as `out_dir/household.pddl` and `out_dir/household/`.

    Raises:
        SceneError: an unknown house size.
    """
    from servicerobot.envs.household.world import HouseholdOptions, HouseholdWorld

    out = Path(out_dir)
    world = HouseholdWorld(size, HouseholdOptions(n_tasks=max(4, tasks_per_seed)))
    domain = world.domain
    problems: list[tuple[str, Problem, list]] = []
    skipped: list[tuple[int, str, str]] = []
    for seed in seeds:
        world.reset(np.random.default_rng(seed))
        kept = 0
        for index in range(world.n_tasks):
            task = world.next_task(index)
            if task is None:
                break
            universe = Universe(domain.types, {**domain.constants, **world.scene.objects})
            goal = world.interpreter.compile_goal(task.goal).formula
            literals = compile_goal_literals(goal, universe)
            if literals is None:
                skipped.append((seed, task.kind, "its goal is disjunctive once grounded"))
                continue
            name = f"household-seed{seed}-task{index}"
            problems.append((name, Problem(name, domain.name, dict(world.scene.objects), world.state.atoms,
                                           goal), literals))
            kept += 1
            if kept >= tasks_per_seed:
                break
    text, complements, omitted = to_pddlgym_domain(domain, [lits for _, _, lits in problems])
    problem_dir = out / "household"
    problem_dir.mkdir(parents=True, exist_ok=True)
    domain_file = out / "household.pddl"
    domain_file.write_text(text, encoding="utf-8")
    for name, problem, literals in problems:
        (problem_dir / f"{name}.pddl").write_text(_problem_text(problem, domain, literals, complements),
                                                  encoding="utf-8")
    ordered = sorted(problems, key=lambda item: str(problem_dir / f"{item[0]}.pddl"))
    return HouseholdExport(domain_file, problem_dir, tuple(p for _, p, _ in ordered), complements, omitted,
                           tuple(skipped))
