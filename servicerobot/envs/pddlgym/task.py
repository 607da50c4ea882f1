"""PDDLGym's semantics on our interpreter: action literals, operators that they trigger, and outcomes.

In a PDDLGym domain an *action* is a ground literal of an action predicate (`(stack a b)`), declared in
`:predicates` and named in a `; (:actions ...)` comment; an operator whose precondition contains that
literal executes it when the rest of its precondition holds, its other parameters bound by the state.
With `operators_as_actions` the operators themselves are the actions. PDDLGym keeps action literals out
of states (problem files list them in :init for planners) and samples probabilistic effects.

`PDDLGymDomain` reads a domain file and its problem folder; `PDDLGymTask` executes one problem.
"""

from __future__ import annotations

import dataclasses
import itertools
import re
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from servicerobot.envs.pddlgym.files import (
    MAX_PROBLEM_BYTES,
    PDDLGymDialectError,
    PDDLGymFileError,
    read_domain_text,
    read_pddl_file,
    split_probabilistic,
)
from servicerobot.errors import ActionError
from servicerobot.limits import excerpt, shorten
from servicerobot.pddl._suggest import did_you_mean, name_list
from servicerobot.pddl.atoms import Atom, State
from servicerobot.pddl.explain import conjuncts
from servicerobot.pddl.interpreter import GroundAction, Interpreter
from servicerobot.pddl.model import TRUE, Action, And, AtomF, Exists, Forall, Imply, Not, Or, Problem
from servicerobot.pddl.parser import parse_domain, parse_problem
from servicerobot.pddl.successors import CHECK_EVERY, candidate_arguments

__all__ = ["Operator", "PDDLGymDialectError", "PDDLGymDomain", "PDDLGymTask", "literal_text", "observation_state",
           "parse_literal"]

_PDDLGYM_FORM = re.compile(r"^\s*([^\s()]+)\((.*)\)\s*$")
_FREE_PRODUCT_LIMIT = 64  # candidate bindings enumerated once per literal; beyond this, joined with the state
MAX_UNBOUND = 100_000  # values of the parameters that neither a literal nor a precondition fact binds
MAX_JOIN_STEPS = 500_000  # steps of the join that lists the literals valid in a state (shipped domains: <= 100k)
MAX_LITERAL_CHARS = 4096  # an action literal's text


def observation_state(obs: dict) -> frozenset[Atom]:
    """The atoms of an observation's `literals` text (one `(p a b)` per line)."""
    return frozenset(Atom(p[0], tuple(p[1:])) for p in (line.strip()[1:-1].split()
                                                         for line in obs["literals"].splitlines()) if p)


@dataclass(frozen=True)
class Operator:
    """One PDDLGym operator on our domain: the action literal that triggers it and its outcomes.

    `outcomes` are (probability, name of a deterministic action in `PDDLGymDomain.domain`); one outcome of
    probability 1 unless the operator has probabilistic effects. `trigger` is None with operators as actions.
    """

    name: str
    params: tuple[tuple[str, str], ...]
    trigger: AtomF | None
    outcomes: tuple[tuple[float, str], ...]


def _mentions(formula, names: frozenset[str]) -> bool:
    if isinstance(formula, AtomF):
        return formula.predicate in names
    if isinstance(formula, (And, Or)):
        return any(_mentions(p, names) for p in formula.parts)
    if isinstance(formula, Not):
        return _mentions(formula.f, names)
    if isinstance(formula, Imply):
        return _mentions(formula.a, names) or _mentions(formula.b, names)
    if isinstance(formula, (Exists, Forall)):
        return _mentions(formula.body, names)
    return False


class PDDLGymDomain:
    """A PDDLGym domain file and problem folder, parsed by our parser and ready for `PDDLGymTask`.

    Args:
        domain_file: the domain's `.pddl` file.
        problem_dir: the folder of problem files; they are ordered as PDDLGym orders them (sorted paths).
        operators_as_actions: PDDLGym's flag: the operators are the actions.

    Attributes:
        domain: the executable domain: action literals removed from preconditions, probabilistic effects
            split into one action per outcome (`name~k`).
        action_predicates: action predicate name -> its typed parameters.
        operators: action predicate name -> the operators it triggers, in file order.
        repairs: what had to be repaired in the file before our parser read it (see `read_domain_text`).

    Raises:
        PDDLError: the domain file is not PDDL our parser reads; `PDDLGymDialectError` for dialect misuse.
        PDDLGymFileError: the domain file cannot be read or the problem folder is not a folder.
    """

    def __init__(self, domain_file: str | Path, problem_dir: str | Path, operators_as_actions: bool = False):
        self.domain_file = Path(domain_file)
        self.problem_dir = Path(problem_dir)
        self.operators_as_actions = operators_as_actions
        text, names, repairs = read_domain_text(self.domain_file)
        if not self.problem_dir.is_dir():
            what = "it is not a folder" if self.problem_dir.exists() else "no such folder"
            raise PDDLGymFileError(f"{shorten(str(self.problem_dir), 200)} has no problem files ({what}); give "
                                   "problem_dir=<the folder of the problem .pddl files>")
        outcomes: dict[str, tuple[tuple[float, str], ...]] = {}
        if "probabilistic" in text.lower():
            text, outcomes = split_probabilistic(text)
            if outcomes:
                repairs.append(f"split the probabilistic effects of {', '.join(outcomes)} into one action "
                               "per outcome")
        self.repairs = tuple(repairs)
        parsed = parse_domain(text, source=str(self.domain_file))
        base_of = {variant: base for base, options in outcomes.items() for _, variant in options}
        self.operators: dict[str, list[Operator]] = {}
        if operators_as_actions:
            self.action_predicates = {}
            for name, action in parsed.actions.items():
                base = base_of.get(name, name)
                if base in self.action_predicates:
                    continue
                self.action_predicates[base] = action.params
                self.operators[base] = [Operator(base, action.params, None, outcomes.get(base, ((1.0, name),)))]
            self.domain = parsed
        else:
            known = frozenset(n for n in names if n in parsed.predicates)
            if not known:
                raise PDDLGymDialectError(
                    f"{self.domain_file}: no action predicates; PDDLGym names them in a '; (:actions ...)' "
                    "comment, or the domain must be loaded with operators_as_actions=True")
            self.action_predicates = {n: parsed.predicates[n].params for n in names if n in known}
            actions: dict[str, Action] = {}
            for name, action in parsed.actions.items():
                parts = conjuncts(action.precondition)
                triggers = [p for p in parts if isinstance(p, AtomF) and p.predicate in known]
                rest = tuple(p for p in parts if not (isinstance(p, AtomF) and p.predicate in known))
                if len(triggers) > 1 or any(_mentions(p, known) for p in rest) or _mentions_effects(action, known):
                    raise PDDLGymDialectError(
                        f"{self.domain_file}: action {name!r} uses an action predicate other than as one "
                        "top-level conjunct of its precondition")
                pre = TRUE if not rest else rest[0] if len(rest) == 1 else And(rest)
                actions[name] = dataclasses.replace(action, precondition=pre)
                base = base_of.get(name, name)
                if triggers and (name == base or name.endswith("~0")):
                    self.operators.setdefault(triggers[0].predicate, []).append(
                        Operator(base, action.params, triggers[0], outcomes.get(base, ((1.0, name),))))
            self.domain = dataclasses.replace(parsed, actions=actions)
        self.problem_files = tuple(sorted(self.problem_dir.glob("*.pddl"), key=str))
        self._problems: dict[int, Problem] = {}

    @property
    def name(self) -> str:
        """The domain's name as declared in its file."""
        return self.domain.name

    def problem(self, index: int) -> Problem:
        """The `index`-th problem (PDDLGym's order), parsed on first use.

        Raises:
            IndexError: no such problem.
            PDDLError: the problem file is not PDDL our parser reads.
            PDDLGymFileError: it cannot be read (not a regular file, too large, not UTF-8).
        """
        if not 0 <= index < len(self.problem_files):
            raise IndexError(f"problem_index {index} is out of range: {self.problem_dir} has "
                             f"{len(self.problem_files)} problems")
        found = self._problems.get(index)
        if found is None:
            path = self.problem_files[index]
            text = read_pddl_file(path, MAX_PROBLEM_BYTES, "problem file")
            found = self._problems[index] = parse_problem(text, self.domain, source=str(path))
        return found

    def task(self, index: int) -> PDDLGymTask:
        """A `PDDLGymTask` over the `index`-th problem."""
        return PDDLGymTask(self, self.problem(index))


def _mentions_effects(action: Action, names: frozenset[str]) -> bool:
    from servicerobot.pddl.model import effect_predicates

    return bool(effect_predicates(action.effects) & names)


def parse_literal(text: object) -> tuple[str, tuple[str, ...]]:
    """(predicate, args) of an action literal in any of PDDLGym's or PDDL's spellings: `(stack a b)`,
    `stack a b`, `stack(a,b)` or `stack(a:block,b:block)` (what `str()` of a PDDLGym Literal gives).

    Raises:
        ActionError: not one literal.
    """
    if not isinstance(text, str):
        text = str(text)  # a pddlgym Literal
    if len(text) > MAX_LITERAL_CHARS:
        raise ActionError(f"an action literal of {len(text):,} characters is over the limit of {MAX_LITERAL_CHARS:,}: "
                          f"{excerpt(text)}")
    match = _PDDLGYM_FORM.match(text)
    if match and not text.lstrip().startswith("("):
        args = [a.split(":", 1)[0].strip().lower() for a in match.group(2).split(",")] if match.group(2).strip() else []
        if any(not a or " " in a for a in args):
            raise ActionError(f"expected an action literal like 'stack(a,b)', got {excerpt(text)}")
        return match.group(1).lower(), tuple(args)
    body = text.strip()
    if body.startswith("(") and body.endswith(")"):
        body = body[1:-1]
    if "(" in body or ")" in body or not body.split():
        raise ActionError(f"expected one action literal like '(stack a b)' or 'stack(a,b)', got {excerpt(text)}")
    words = body.lower().split()
    return words[0], tuple(words[1:])


class PDDLGymTask:
    """One PDDLGym problem executed on our interpreter: initial state, goal, and PDDLGym's step.

    States hold basic atoms only; `literals(state)` adds the derived ones, as PDDLGym's observations do.
    """

    def __init__(self, gym_domain: PDDLGymDomain, problem: Problem):
        self.gym_domain = gym_domain
        self.problem = problem
        actions = gym_domain.action_predicates
        self.interpreter = Interpreter(gym_domain.domain, problem.objects, problem.values)
        self.objects = self.interpreter.objects
        self.init: State = frozenset(a for a in problem.init if a.predicate not in actions)
        self.goal = self.interpreter.compile_goal(problem.goal)
        self._candidates: dict[tuple[Operator, tuple[str, ...]], list[tuple[str, ...]] | None] = {}
        self._resolved: dict[tuple[str, tuple[str, ...]], tuple] = {}

    # ------------------------------------------------------------------ observation
    def literals(self, state: State) -> frozenset[Atom]:
        """The true literals PDDLGym shows: the state with its derived atoms."""
        return self.interpreter.closure(state)

    def goal_reached(self, state: State) -> bool:
        """True if the problem's goal holds in `state`."""
        return self.goal.holds(state)

    # ------------------------------------------------------------------ actions
    def check_literal(self, name: str, args: tuple[str, ...]) -> str | None:
        """None if `(name args...)` is a well-formed action literal of this problem, else why not."""
        params = self.gym_domain.action_predicates.get(name)
        if params is None:
            return (f"unknown action predicate {excerpt(name)}{did_you_mean(name, self.gym_domain.action_predicates)}; "
                    f"the action predicates are {name_list(self.gym_domain.action_predicates)}")
        if len(args) != len(params):
            return f"wrong arity: {name} takes {len(params)} argument(s), got {len(args)}"
        for arg in args:
            if arg not in self.objects:
                return f"unknown object {excerpt(arg)}{did_you_mean(arg, self.objects)}"
        return None

    def _bindings(self, op: Operator, args: tuple[str, ...], state: State) -> Iterator[tuple[str, ...]]:
        """Argument tuples of `op` that the literal `args` allows (free parameters joined with `state`)."""
        if op.trigger is None:
            yield args
            return
        key = (op, args)
        if key in self._candidates:
            cached = self._candidates[key]
            yield from (self._joined(op, args, state) if cached is None else cached)
            return
        is_subtype, universe = self.gym_domain.domain.types.is_subtype, self.interpreter.universe
        params = dict(op.params)
        binding: dict[str, str] = {}
        for term, arg in zip(op.trigger.terms, args):
            if term in params:
                if binding.setdefault(term, arg) != arg or not is_subtype(self.objects[arg], params[term]):
                    self._candidates[key] = []
                    return
            elif term != arg:
                self._candidates[key] = []
                return
        free = [(var, typ) for var, typ in op.params if var not in binding]
        size = 1
        for _, typ in free:
            size *= len(universe.of_type(typ))
        if size > _FREE_PRODUCT_LIMIT:
            self._candidates[key] = None
            yield from self._joined(op, args, state)
            return
        found = []
        for values in itertools.product(*(universe.of_type(t) for _, t in free)):
            full = {**binding, **dict(zip((v for v, _ in free), values))}
            found.append(tuple(full[v] for v, _ in op.params))
        found.sort()
        self._candidates[key] = found
        yield from found

    def _joined(self, op: Operator, args: tuple[str, ...], state: State) -> Iterator[tuple[str, ...]]:
        """Bindings of `op` that agree with the literal and match its positive precondition atoms in `state`."""
        params = dict(op.params)
        binding = {}
        for term, arg in zip(op.trigger.terms, args):
            if term in params and (binding.setdefault(term, arg) != arg or not self.gym_domain.domain.types.is_subtype(
                    self.objects[arg], params[term])):
                return
        action = self.gym_domain.domain.actions[op.outcomes[0][1]]
        self._refuse_unbound(action, set(binding))
        atoms = [c for c in conjuncts(action.precondition) if isinstance(c, AtomF)]
        facts: dict[str, list[tuple[str, ...]]] = {}
        for atom in self.literals(state):
            facts.setdefault(atom.predicate, []).append(atom.args)
        atoms.sort(key=lambda a: len(facts.get(a.predicate, ())))
        universe = self.interpreter.universe
        variables = [v for v, _ in op.params]
        seen: set[tuple[str, ...]] = set()

        def join(index: int, bound: dict[str, str]) -> Iterator[tuple[str, ...]]:
            if index == len(atoms):
                free = [v for v in variables if v not in bound]
                for values in itertools.product(*(universe.of_type(params[v]) for v in free)):
                    full = {**bound, **dict(zip(free, values))}
                    yield tuple(full[v] for v in variables)
                return
            atom = atoms[index]
            for fact in facts.get(atom.predicate, ()):
                new = dict(bound)
                for term, value in zip(atom.terms, fact):
                    if term in params:
                        if new.setdefault(term, value) != value:
                            break
                    elif term != value:
                        break
                else:
                    if all(self.gym_domain.domain.types.is_subtype(self.objects[new[v]], params[v])
                           for v in new if v in params):
                        yield from join(index + 1, new)

        for found in join(0, binding):
            if found not in seen:
                seen.add(found)
                yield found

    def _refuse_unbound(self, action: Action, bound: set[str]) -> None:
        """ActionError when the parameters of `action` that neither `bound` nor a top-level positive precondition
        atom binds take more than `MAX_UNBOUND` values together (counted, never listed)."""
        in_atoms = {t for c in conjuncts(action.precondition) if isinstance(c, AtomF) for t in c.terms}
        free = [(v, t) for v, t in action.params if v not in bound and v not in in_atoms]
        count = 1
        for _, typ in free:
            count *= len(self.interpreter.universe.of_type(typ))
        if count > MAX_UNBOUND:
            names = ", ".join(v for v, _ in free[:8]) + (", ..." if len(free) > 8 else "")
            raise ActionError(f"operator {excerpt(action.name)} has {len(free)} parameter(s) ({names}) that neither "
                              f"the action literal nor a precondition fact binds: {count:,} combinations, over the "
                              f"limit of {MAX_UNBOUND:,}; bind them in the action literal or a precondition")

    def resolve(self, name: str, args: tuple[str, ...], state: State) -> tuple[tuple[float, GroundAction], ...]:
        """The outcomes of the first operator (file order) that the literal triggers in `state`, with the
        first binding (sorted) of its free parameters; empty if the literal changes nothing (PDDLGym's
        invalid action)."""
        for op in self.gym_domain.operators.get(name, ()):
            ground = self.interpreter.ground
            first = op.outcomes[0][1]
            for full in sorted(self._bindings(op, args, state)):
                ga = ground(first, full)
                if self.interpreter.applicable(ga, state):
                    return tuple((p, ground(variant, full)) for p, variant in op.outcomes)
        return ()

    def step(self, state: State, literal: str | object, rng: np.random.Generator | None = None
             ) -> tuple[State, str | None]:
        """PDDLGym's transition: (next state, None) or (the same state, why the literal changes nothing).

        Raises:
            ActionError: the text is not an action literal of this problem.
        """
        name, args = parse_literal(literal)
        problem = self.check_literal(name, args)
        if problem is not None:
            raise ActionError(problem)
        outcomes = self.resolve(name, args, state)
        if not outcomes:
            ops = self.gym_domain.operators.get(name, ())
            return state, (f"no operator's precondition holds for {literal_text(name, args)}"
                           f" (operators: {', '.join(op.name for op in ops) or 'none'})")
        if len(outcomes) == 1:
            ga = outcomes[0][1]
        else:
            rng = rng if rng is not None else np.random.default_rng()
            probs = np.array([p for p, _ in outcomes], dtype=float)
            ga = outcomes[int(rng.choice(len(outcomes), p=probs / probs.sum()))][1]
        return self.interpreter.apply(ga, state), None

    def valid_literals(self, state: State) -> list[str]:
        """Every action literal that changes `state` through some operator, sorted, as `(name args...)`;
        like PDDLGym's action spaces, literals that repeat an object are left out."""
        found: set[tuple[str, tuple[str, ...]]] = set()
        by_action = {op.outcomes[0][1]: op for ops in self.gym_domain.operators.values() for op in ops}
        for ga in self._applicable(state, by_action):
            op = by_action[ga.name]
            if op.trigger is None:
                literal = (op.name, ga.args)
            else:
                atom = op.trigger.ground(dict(zip((v for v, _ in op.params), ga.args)))
                literal = (atom.predicate, atom.args)
            if len(set(literal[1])) == len(literal[1]):
                found.add(literal)
        return [literal_text(n, a) for n, a in sorted(found)]

    def _applicable(self, state: State, names) -> Iterator[GroundAction]:
        """The applicable ground actions of the actions `names` (the successor join of `pddl.successors`, its
        unbound parameters counted first and its steps bounded by `MAX_JOIN_STEPS`).

        Raises:
            ActionError: an action has too many unbound parameter values, or the join takes too many steps.
        """
        actions = [a for a in self.gym_domain.domain.actions.values() if a.name in names]
        for action in actions:
            self._refuse_unbound(action, set())
        full = self.literals(state)
        facts: dict[str, list[tuple[str, ...]]] = {}
        for atom in full:
            facts.setdefault(atom.predicate, []).append(atom.args)
        checks = [0]

        def check() -> None:
            checks[0] += 1
            if checks[0] * CHECK_EVERY > MAX_JOIN_STEPS:
                raise ActionError(f"listing the valid literals took over {MAX_JOIN_STEPS:,} join steps; this "
                                  "problem has too many ways to bind its operators to list them")

        for action in actions:
            for args in sorted(candidate_arguments(action, self.interpreter, facts, check)):
                ga = self.interpreter.ground(action.name, args)
                if self.interpreter.applicable(ga, full):
                    yield ga

    def sample_literal(self, rng: np.random.Generator) -> str:
        """A well-typed action literal without repeated objects, uniformly at random (PDDLGym's non-dynamic
        `action_space.sample`), drawn without listing them all (footwear has 5.6e8)."""
        universe = self.interpreter.universe
        preds = sorted(self.gym_domain.action_predicates.items())
        pools = [[universe.of_type(t) for _, t in params] for _, params in preds]
        sizes = np.array([float(np.prod([len(p) for p in pool])) for pool in pools])
        if sizes.sum() == 0:
            raise ActionError("this problem has no well-typed action literal")
        for _ in range(10_000):
            k = int(rng.choice(len(preds), p=sizes / sizes.sum()))
            values = tuple(pool[int(rng.integers(len(pool)))] for pool in pools[k])
            if len(set(values)) == len(values):
                return literal_text(preds[k][0], values)
        raise ActionError("every well-typed action literal repeats an object")


def literal_text(name: str, args: tuple[str, ...]) -> str:
    """`(name arg ...)`: an action literal as the env shows and reads it."""
    return f"({name}{' ' if args else ''}{' '.join(args)})"
