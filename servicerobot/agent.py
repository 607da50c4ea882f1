"""`ServiceAgent`: the lifelong planner-agent (L3M+P's loop): sense -> update -> plan -> act -> monitor -> replan.

Each step the agent reads the env observation: the result of its last action (applied to memory, or
learnt from when it failed), the percept (closed world within view), and what people said (each
utterance classified as a task or an update). Updates go through the interpreter and the verifier into
the knowledge graph. A task is turned into a PDDL goal, the relevant facts are retrieved, a problem is
built (`:objects`/`:init` from the retrieved facts) and solved by a classical planner; the plan is checked
on memory after every step and replanned when it no longer reaches the goal.

Variants mirror L3M+P's ablations:

| variant | memory updates | retrieval | replans when |
|---|---|---|---|
| `static` | none (own actions only) | search | the plan breaks on memory or an action fails |
| `full-kg` | verbal + percept | whole graph | " |
| `entity-rag` | verbal + percept | entity selection + neighbourhood | " |
| `search-rag` (default) | verbal + percept | query graph + subgraph matching | " |
| `visual-only` | percept only (ignores what people report) | search | an action fails |

A `-noverify` suffix applies language updates without the verifier.
"""

from __future__ import annotations

import re
import time
from collections import deque
from dataclasses import dataclass, field
from typing import Any, Protocol

from servicerobot.envs.observation import Observation, decode
from servicerobot.errors import (
    ActionError,
    PDDLError,
    PDDLSemanticError,
    PlannerError,
    ServiceRobotError,
    TaskInfeasible,
)
from servicerobot.failures import Failure, planner_failure
from servicerobot.language.base import LanguageModelError, Usage
from servicerobot.language.interpreter import Context, Interpreter, QueryGraph
from servicerobot.memory.graph import KnowledgeGraph
from servicerobot.memory.retrieval import (
    SearchRetriever,
    retrieve_all,
    retrieve_neighbourhood,
    with_named_states,
)
from servicerobot.memory.triplets import Delta
from servicerobot.memory.updates import apply_percept, update_from_language
from servicerobot.memory.verifier import Verifier
from servicerobot.pddl import (
    And,
    Atom,
    AtomF,
    Domain,
    Exists,
    Forall,
    Imply,
    Not,
    Or,
    Problem,
    format_formula,
    val_validate,
    write_domain,
    write_problem,
)
from servicerobot.pddl import Interpreter as PDDLInterpreter
from servicerobot.planners import FastDownward, Planner
from servicerobot.planners.goal_compilation import conjunctive_goal, goal_names
from servicerobot.planners.relaxation.core import keep_achievable

__all__ = ["VARIANTS", "AgentStep", "ObservedState", "ServiceAgent", "default_interpreter"]

VARIANTS = ("static", "full-kg", "entity-rag", "search-rag", "visual-only")
_FAILED_PRE = re.compile(r"precondition (\((?:not )?\(?[^()]*\)?\)) is false")
_TOKEN = re.compile(r"[a-z0-9_\-]+")
_LOCATED_BY = ("on", "inside", "held-by")  # (item, holder) predicates: where an item stands


def _item_guards(domain: Domain) -> frozenset[str]:
    """The predicates through which an item an action does not name can forbid it: those inside a precondition's
    quantifier over items where fewer items make it truer (`not exists`, or `forall`), as tamp-world's `move`
    asks that no unsafe box guards the place. Empty when leaving items out can only take plans away."""
    types = domain.types
    found: set[str] = set()

    def over_items(params) -> bool:
        return any(t in types and (types.is_subtype(t, "item") or types.is_subtype("item", t)) for _, t in params)

    def predicates(f) -> set[str]:
        if isinstance(f, AtomF):
            return {f.predicate}
        parts = (f.parts if isinstance(f, (And, Or)) else (f.f,) if isinstance(f, Not)
                 else (f.a, f.b) if isinstance(f, Imply) else (f.body,) if isinstance(f, (Exists, Forall)) else ())
        return set().union(*(predicates(p) for p in parts)) if parts else set()

    def walk(f, positive: bool) -> None:
        if isinstance(f, (Exists, Forall)):
            if over_items(f.params) and isinstance(f, Forall) == positive:
                found.update(predicates(f.body))
            walk(f.body, positive)
        elif isinstance(f, (And, Or)):
            for part in f.parts:
                walk(part, positive)
        elif isinstance(f, Not):
            walk(f.f, not positive)
        elif isinstance(f, Imply):
            walk(f.a, not positive)
            walk(f.b, positive)

    for action in domain.actions.values():
        walk(action.precondition, True)
    return frozenset(found)


def default_interpreter(language: Any = None, **llm: Any) -> Interpreter:
    """An LLM interpreter when `OPENAI_API_KEY` or `OPENAI_BASE_URL` is set, else the rule interpreter of
    `language` (a world's `Language`; default the household's); `llm` goes to `OpenAIModel` (`model`,
    `timeout`, `max_retries`, `backoff`)."""
    from servicerobot.language.openai_client import OpenAIModel

    model = OpenAIModel.from_env(**llm)
    if model is None:
        from servicerobot.language.rule_interpreter import RuleInterpreter

        return RuleInterpreter(language)
    from servicerobot.language.llm_interpreter import LLMInterpreter

    return LLMInterpreter(model)


class ObservedState(Protocol):
    """What an env whose observation is its whole state offers the agent (`PDDLGymEnv.planning_view()`):
    the domain to plan on, the problem an observation states, and the env action for a planned step."""

    domain: Domain

    def problem(self, obs: dict) -> Problem: ...

    def action(self, step: str) -> str: ...


@dataclass
class AgentStep:
    """Per-step statistics: tokens spent, facts retrieved, planning time and expanded nodes, replans."""

    step: int
    action: str = "(wait)"
    tokens: int = 0
    retrieved_facts: int = 0
    planning_time: float = 0.0
    expanded: int = 0
    replanned: bool = False
    updates_applied: int = 0
    updates_dropped: int = 0

    def to_json(self) -> dict:
        return dict(self.__dict__)


@dataclass
class _TaskState:
    text: str
    speaker: str
    goal: str | None = None
    plan: deque = field(default_factory=deque)
    explored: set = field(default_factory=set)
    looked: set = field(default_factory=set)  # rooms seen since the task came (to check a goal memory thinks holds)
    failed_plans: int = 0
    failed_at: int = -1  # memory version when planning last failed
    retry_at: int = 0  # step before which a failed plan is not retried (unless an action fails)
    tried_full: bool = False  # whether planning on the whole graph was tried for this task
    query: Any = None  # the interpreter's retrieval query for this task (query graph or entity names)
    failure: Failure | None = None  # why the task has no goal or no plan now (None while all is well)
    started: int = 0  # the step the task was heard
    asked: str | None = None  # the goal as interpreted, when `goal` is a relaxation of it
    dropped: list[str] = field(default_factory=list)  # the parts of `asked` relaxation dropped
    absent_at: int | None = None  # entities memory knew when the words named nothing it holds (read again on news)


class ServiceAgent:
    """The planner-agent; `act(obs)` returns the next action text for `ServiceRobotEnv.step`.

    Args:
        domain: the robot's PDDL domain (`from_env` takes the world's).
        variant: which memory updates and retrieval it uses, one of `VARIANTS`, optionally with `-noverify`
            (language updates applied without the verifier); docs/agent.md has the table.
        interpreter: reads utterances into goals and memory updates (default: `default_interpreter()`).
        planner: plans on memory (default: Fast Downward's lama-first, 60 s).
        robot: the robot's name in the domain.
        max_attempts: tries per utterance, each with the previous try's feedback.
        fallback_to_full: when a plan fails on the retrieved facts, plan once more on the whole graph.
        keep_history: memory keeps what each change replaced (`KnowledgeGraph`).
        validate_with_val: VAL must also accept each plan.
        relax: for a goal unsolvable on memory, plan for the part that can be reached.
        observed: for an env whose observation is its whole state (PDDLGym): plan on that state.

    Raises:
        ServiceRobotError: an unknown variant.
    """

    def __init__(self, domain: Domain, *, variant: str = "search-rag", interpreter: Interpreter | None = None,
                 planner: Planner | None = None, robot: str = "robot", max_attempts: int = 3,
                 fallback_to_full: bool = True, keep_history: bool = True, validate_with_val: bool = False,
                 relax: bool = False, observed: ObservedState | None = None):
        base = variant.removesuffix("-noverify")
        if base not in VARIANTS:
            raise ServiceRobotError(f"unknown agent variant {variant!r}; choose from "
                                    f"{', '.join(VARIANTS)} (optionally with -noverify)")
        self.domain = domain
        self.variant = variant
        self.base_variant = base
        self.verify = not variant.endswith("-noverify")
        self.interpreter = interpreter if interpreter is not None else default_interpreter()
        self.planner = planner if planner is not None else FastDownward(alias="lama-first", timeout=60.0)
        self.robot = robot
        self.max_attempts = max_attempts
        self.fallback_to_full = fallback_to_full
        self.keep_history = keep_history
        self.validate_with_val = validate_with_val
        self.relax = relax
        self.relaxed: list[dict] = []  # every relaxed task this episode: the goal asked, kept, dropped
        self.val_rejections = 0
        self.observed = observed  # set for an env whose observation is its whole state (PDDLGym): plan on it
        self.verifier = Verifier(domain) if observed is None else None
        self.searcher = SearchRetriever()
        self.memory: KnowledgeGraph | None = None
        self.task: _TaskState | None = None
        self.steps: list[AgentStep] = []
        self.replans = 0
        self.dropped_updates: list[Any] = []
        self.failures: list[Failure] = []  # every fault this episode, in order (model, goal, planner)
        self.replaced: list[tuple[str, Failure]] = []  # each task a later one replaced, why it was not done
        self._pddl: tuple[int, PDDLInterpreter] | None = None
        self._last_action: str | None = None
        self._sees = False
        self._structure_cache: tuple[int, frozenset[Atom]] | None = None
        self._state_plan: deque[str] = deque()  # with `observed`: the steps left, the state the next should see
        self._expected: frozenset[Atom] | None = None
        self._unsolved: frozenset[Atom] | None = None  # the state planning last failed on

    @classmethod
    def from_env(cls, env, variant: str = "search-rag", interpreter: Interpreter | None = None,
                 **kwargs: Any) -> ServiceAgent:
        """An agent for `env`'s world: its domain (the robot's skills), default planner, and by default the
        interpreter `default_interpreter` gives for the world's declared language (`world.language`)."""
        world = getattr(env.unwrapped, "world", None)
        view = getattr(env.unwrapped, "planning_view", None)
        if world is None and callable(view):  # its observation is the whole state: plan on it directly
            observed = view()
            return cls(observed.domain, variant=variant, interpreter=interpreter, observed=observed, **kwargs)
        if world is None:
            raise ServiceRobotError(
                f"ServiceAgent.from_env: {type(env.unwrapped).__name__} has neither a world (as ServiceRobotEnv's "
                "ids have) nor a planning_view() (as ServiceRobot-PDDLGym-v0 has); use one of those envs, or "
                "build ServiceAgent(domain, ...) and feed it ServiceRobotEnv observations")
        if interpreter is None:
            interpreter = default_interpreter(getattr(world, "language", None))
        return cls(world.domain, variant=variant, interpreter=interpreter, **kwargs)

    # ------------------------------------------------------------------ the loop
    def act(self, obs: dict | Observation) -> str:
        """Sense, update memory, (re)plan and return one action."""
        if self.observed is not None:
            return self._act_on_state(obs)
        o = obs if isinstance(obs, Observation) else decode(obs)
        if o.prior is not None:
            self._start(o.prior)
        stats = AgentStep(len(self.steps))
        tokens_before = self.interpreter.usage.total_tokens
        failed = self._sense_action_result(o)
        if self.base_variant != "static":
            self._sees = len(o.percept.entities) > 1
            apply_percept(self.memory, _percept_dict(o), stats.step)
        for speaker, text in o.utterances:
            self._hear(speaker, text, stats)
        action = self._next_action(failed, stats)
        stats.action = action
        stats.tokens = self.interpreter.usage.total_tokens - tokens_before
        self.steps.append(stats)
        self._last_action = action
        return action

    def _act_on_state(self, obs: dict) -> str:
        """The loop where the observation is the whole state: plan on it, act, and replan when the state is
        not the one the last step should have led to (the step failed, or an outcome was drawn)."""
        stats = AgentStep(len(self.steps))
        problem = self.observed.problem(obs)
        state = problem.init
        if (not self._state_plan or state != self._expected) and state != self._unsolved:
            self._plan_state(problem, stats)
        action = "(wait)"
        if self._state_plan:
            step = self._state_plan.popleft()
            interp = PDDLInterpreter.shared(self.domain, problem.objects)
            ga = interp.parse_action(step)
            self._expected = interp.apply(ga, state) if interp.applicable(ga, state) else None
            action = self.observed.action(step)
        stats.action = action
        self.steps.append(stats)
        return action

    def _plan_state(self, problem: Problem, stats: AgentStep) -> None:
        t0 = time.perf_counter()
        self._state_plan.clear()
        try:
            result = self.planner.solve(self.domain, problem)
            failure = None if result.solved else planner_failure(result, stats.step)
        except (PlannerError, PDDLError, ServiceRobotError, TimeoutError) as exc:
            result, failure = None, Failure("planner error", f"{type(exc).__name__}: {exc}", "plan", stats.step)
        stats.planning_time += time.perf_counter() - t0
        stats.expanded += (result.expanded or 0) if result is not None else 0
        stats.replanned = True
        self.replans += 1
        if failure is not None:
            self.failures.append(failure)
            self._unsolved = problem.init  # not again on this state: wait for it to change
            return
        self._state_plan.extend(result.plan)
        self._unsolved = None

    def _start(self, prior: dict) -> None:
        self.memory = KnowledgeGraph.from_prior(self.domain, prior, self.robot, keep_history=self.keep_history)
        self.task = None
        self.steps = []
        self.replans = 0
        self.failures = []
        self.replaced = []
        self._last_action = None
        self._pddl = None

    def _pddl_interpreter(self) -> PDDLInterpreter:
        key = len(self.memory.graph)
        if self._pddl is None or self._pddl[0] != key:
            self._pddl = (key, PDDLInterpreter(self.domain, self.memory.objects))
        return self._pddl[1]

    def _sense_action_result(self, o: Observation) -> bool:
        """Apply the effects of the last action to memory, or learn from its failure. True if it failed."""
        action, self._last_action = self._last_action, None
        if action is None or action == "(wait)":
            return False
        interp = self._pddl_interpreter()
        step = len(self.steps)
        if not o.action_failed:
            try:
                ground = interp.parse_action(action)
                add, delete = interp.delta(ground, self.memory.facts)
            except (ActionError, PDDLError):
                return False
            self.memory.apply(Delta(delete, add), "action", step, action)
            return False
        m = _FAILED_PRE.search(o.action_result)
        if m:  # the world told us which believed fact is wrong
            text = m.group(1)
            negated = text.startswith("(not ")
            try:
                atom = Atom.parse(text[5:-1] if negated else text)
            except PDDLError:
                return True
            if atom.predicate in self.domain.predicates and all(self.memory.has_entity(n) for n in atom.args):
                self.memory.apply(Delta.of(add=[atom]) if negated else Delta.of(remove=[atom]), "failure", step,
                                  o.action_result)
        return True

    def _context(self, facts: frozenset[Atom] | None = None) -> Context:
        return Context(self.domain, self.memory.entities, self.memory.facts if facts is None else facts, self.robot)

    def _fail(self, reason: str, detail: str, stage: str) -> Failure:
        failure = Failure(reason, detail, stage, len(self.steps))
        self.failures.append(failure)
        return failure

    def _hear(self, speaker: str, text: str, stats: AgentStep) -> None:
        try:
            kind = self.interpreter.classify(text, speaker, self._context(frozenset()))
        except (LanguageModelError, ValueError) as exc:  # the utterance is dropped; the episode goes on
            self._fail("language model failed" if isinstance(exc, LanguageModelError) else "task not heard",
                       f"could not classify {text[:120]!r}: {exc}", "classify")
            stats.updates_dropped += 1
            return
        if kind == "task":
            self._abandon(self.task, text)
            self.task = _TaskState(text, speaker, started=stats.step)
            self._interpret_task(stats)
            return
        if self.base_variant in ("static", "visual-only"):
            return
        context = self._context(self._retrieve_for(text, speaker).facts)
        outcome = update_from_language(self.memory, text, speaker, self.interpreter, context, stats.step,
                                       self.verifier if self.verify else None, self.max_attempts)
        if outcome.accepted:
            stats.updates_applied += 1
        else:
            stats.updates_dropped += 1
            self.dropped_updates.append(outcome)

    def _interpret_task(self, stats: AgentStep, previous: Failure | None = None) -> None:
        """Read the task's words into its goal; on failure record why (`previous`: the failure of an earlier
        reading of the same words, kept instead of recording the same one again)."""
        task = self.task
        retrieved = self._retrieve_for(task.text, task.speaker, task)
        feedback: list[str] = []
        failure = None
        for _ in range(self.max_attempts):
            try:
                goal = self.interpreter.interpret_task(task.text, task.speaker, self._context(retrieved.facts),
                                                       tuple(feedback))
            except LanguageModelError as exc:  # already retried by the model: asking again would not help
                failure = ("language model failed", f"no goal for {task.text[:120]!r}: {exc}")
                break
            except TaskInfeasible as exc:  # the words name nothing memory holds: asking again would not help
                if exc.goal is not None:
                    goal = exc.goal
                else:
                    failure = ("entity unknown", f"{task.text[:120]!r}: {exc}")
                    task.absent_at = len(self.memory.entities)
                    break
            except (PDDLError, ServiceRobotError, ValueError) as exc:
                failure = ("goal not understood", f"{exc}")
                feedback = [f"the goal is not valid PDDL for this domain: {exc}"]
                continue
            try:
                self._pddl_interpreter().compile_goal(goal)  # parse and type-check against the domain
            except (PDDLError, ServiceRobotError, ValueError) as exc:
                unknown = isinstance(exc, PDDLSemanticError) and "unknown object" in str(exc)
                failure = ("entity unknown" if unknown else "goal not understood", f"goal {goal[:200]}: {exc}")
                feedback = [f"the goal is not valid PDDL for this domain: {exc}"]
                continue
            task.goal = goal
            self._doubt(goal)
            return
        task.goal = None
        same = previous is not None and (previous.reason, previous.detail) == failure
        task.failure = previous if same else self._fail(*failure, "task")

    def _doubt(self, goal: str) -> None:
        """A request is news: when memory already holds a new task's whole goal, the person would not have
        asked, so memory is taken to be stale about the goal's one-argument literals ("make the bed" while
        memory believes it made: the bed is unmade) and the plan achieves them instead of the task being
        believed done at once; of a `forall` over one type, every thing of the type ("switch off every light").
        Relations (`on`, `inside`) are left alone: memory must keep a place for a thing."""
        compiled = self._pddl_interpreter().compile_goal(goal)
        if self.memory is None or not compiled.holds(self.memory.facts):
            return
        formula = compiled.formula
        remove, add = [], []
        for part in formula.parts if isinstance(formula, And) else (formula,):
            # "switch off every light" while memory believes every light off: some light is on after all
            names = None
            if isinstance(part, Forall) and len(part.params) == 1:
                (var, typ), part = part.params[0], part.body
                names = self.memory.of_type(typ)
            negated = isinstance(part, Not)
            literal = part.f if negated else part
            if not isinstance(literal, AtomF) or len(literal.terms) != 1:
                continue
            if names is not None and literal.terms == (var,):
                (add if negated else remove).extend(Atom(literal.predicate, (n,)) for n in names)
            elif names is None and not literal.terms[0].startswith("?"):
                (add if negated else remove).append(Atom(literal.predicate, literal.terms))
        if remove or add:
            self.memory.apply(Delta.of(remove, add), "request", len(self.steps), goal)

    # ------------------------------------------------------------------ retrieval and planning
    def _retrieve_for(self, text: str, speaker: str, task: _TaskState | None = None):
        """Retrieve from memory what `text` is about. The interpreter's part (entity selection or the
        query graph: a model call) is made once per task and reused when replanning."""
        kg = self.memory
        if self.base_variant == "full-kg":
            return retrieve_all(kg)
        query = task.query if task is not None else None
        if query is None:
            try:
                if self.base_variant == "entity-rag":
                    query = self.interpreter.select_entities(text, speaker, self._context(frozenset()))
                else:
                    query = self.interpreter.query_graph(text, speaker, self._context(frozenset()))
            except (LanguageModelError, ValueError) as exc:  # retrieve nothing; planning falls back to all
                self._fail("language model failed", f"no retrieval query for {text[:120]!r}: {exc}", "retrieve")
                query = [] if self.base_variant == "entity-rag" else QueryGraph()
            if task is not None:
                task.query = query
        if self.base_variant == "entity-rag":
            found = retrieve_neighbourhood(kg, list(query) + [self.robot])
        else:
            found = self.searcher.retrieve(kg, query)
        return with_named_states(found, kg, text)

    def _planning_facts(self, task: _TaskState, full: bool = False) -> frozenset[Atom]:
        """The facts a problem needs: what retrieval finds for the task, the facts of the goal's entities
        and of those that make it false now, and the house's structure (rooms, doors, fixtures: the upper
        layers of the scene graph, always small next to the objects). With `full` (the fallback), the whole
        graph instead of what retrieval found; without idle items either way, except for `full-kg`."""
        kg = self.memory
        if self.base_variant == "full-kg":
            return kg.facts
        names = goal_names(task.goal, self._pddl_interpreter().compile_goal(task.goal), kg.facts)
        if full:
            return frozenset(self._without_idle_items(set(kg.facts), names))
        facts = set(self._retrieve_for(task.text, task.speaker, task).facts)
        for name in names:
            if kg.has_entity(name):
                facts.update(kg.facts_about(name))
        facts.update(self._structure())
        return frozenset(self._without_idle_items(facts, names))

    def _without_idle_items(self, facts: set[Atom], names: set[str]) -> set[Atom]:
        """Drop retrieved items the goal does not need: neither named by it, nor making it false, nor held.

        In the household domain an action changes only the items it names, so an idle item keeps every
        fact it has and cannot matter to the goal; kept, each one multiplies the operators Fast Downward
        grounds (an item can go on any surface: 65 idle items on the large house meant 18,500 operators and
        2.8 s of translation for a one-item goal). Domains without an `item` type are left as they are, and so
        are the items through which an action that does not name them can be forbidden (`_item_guards`:
        tamp-world's unsafe boxes that guard places), since leaving them out makes plans that fail on memory.
        """
        types = self.domain.types
        if "item" not in types:
            return facts
        keep = names | {a.args[1] for a in self.memory.facts_about(self.robot) if a.predicate == "holding"}
        guards = _item_guards(self.domain)
        if guards:
            keep |= {n for a in facts if a.predicate in guards for n in a.args}
        idle = {n for a in facts for n in a.args if n not in keep and self.memory.has_entity(n)
                and types.is_subtype(self.memory.type_of(n), "item")}
        return {a for a in facts if idle.isdisjoint(a.args)} if idle else facts

    def _structure(self) -> frozenset[Atom]:
        """Facts among rooms and fixtures (doors, where fixtures are, which are closed or chill)."""
        kg = self.memory
        if self._structure_cache is None or self._structure_cache[0] != kg.version:
            nodes = kg.graph.nodes
            fixed = {n for n, d in nodes(data=True) if d.get("room") is not None or d["type"] == "room"}
            facts = frozenset(a for n in fixed for a in kg.facts_about(n) if all(x in fixed for x in a.args))
            self._structure_cache = (kg.version, facts)
        return self._structure_cache[1]

    def _plan(self, stats: AgentStep, full: bool = False) -> None:
        task = self.task
        kg = self.memory
        t0 = time.perf_counter()
        facts = self._planning_facts(task, full)
        step = len(self.steps)
        result = problem = None
        try:
            problem = self._problem(task.goal, facts)
            result = self.planner.solve(self.domain, problem)
        except PlannerError as exc:
            failure = Failure("planner error", str(exc), "plan", step)
        except TimeoutError as exc:  # a back end that raises instead of returning a TIMEOUT result
            label = getattr(self.planner, "label", type(self.planner).__name__)
            failure = Failure("planner timeout", f"{label}: {exc or 'no answer within the time limit'}", "plan", step)
        except (PDDLError, ServiceRobotError) as exc:  # e.g. no action can make a goal literal true
            failure = Failure("unsolvable" if problem is None else "invalid problem", str(exc), "plan", step)
        stats.retrieved_facts = len(facts)
        stats.planning_time += time.perf_counter() - t0
        stats.expanded += (result.expanded or 0) if result is not None else 0
        stats.replanned = True
        self.replans += 1
        if result is not None:
            if result.solved and self._reaches_goal(list(result.plan)) and self._val_accepts(problem, result.plan):
                task.plan = deque(result.plan)
                task.failure = None
                return
            failure = planner_failure(result, step) if not result.solved else Failure(
                "plan rejected", f"{result.planner}'s plan of {len(result.plan)} step(s) does not reach the goal "
                "on memory" + (" or VAL rejected it" if self.validate_with_val else ""), "plan", step)
        if not full and self.fallback_to_full and not task.tried_full:
            task.tried_full = True  # L3M+P: rebuild :init from the whole graph and re-plan, once per task
            self._plan(stats, full=True)
            return
        if failure.reason == "unsolvable" and self.relax and not task.dropped:
            self.failures.append(failure)  # the goal asked stays unsolvable on memory, whatever is kept
            t0 = time.perf_counter()
            relaxed = self._relax(facts)
            stats.planning_time += time.perf_counter() - t0
            if relaxed:
                self._plan(stats, full)  # for what relaxation kept
                return
        task.failure = failure
        self.failures.append(failure)
        task.plan = deque()
        task.failed_plans += 1
        task.failed_at = kg.version
        task.retry_at = len(self.steps) + min(32, 2 ** task.failed_plans)

    def _problem(self, goal: str, facts: frozenset[Atom]) -> Problem:
        """The planning problem for `goal` on `facts` (its objects: theirs, the robot's, the goal's).

        Raises:
            PDDLError: no action can make a part of the goal true on these facts.
        """
        kg = self.memory
        objects = {n: kg.type_of(n) for a in facts for n in a.args}
        objects[self.robot] = kg.type_of(self.robot)
        for name in _TOKEN.findall(goal):
            if kg.has_entity(name):
                objects[name] = kg.type_of(name)
        formula = self._pddl_interpreter().compile_goal(goal).formula
        return Problem("task", self.domain.name, objects, facts,
                       conjunctive_goal(self.domain, formula, objects, facts))

    def _relax(self, facts: frozenset[Atom]) -> bool:
        """Context Matters' relaxation on memory: keep the goal's conjuncts the planner can still achieve
        together (in the order given), drop the rest and make what is kept the task's goal; False when the
        goal has one part or none of its parts can be kept."""
        task = self.task
        formula = self._pddl_interpreter().compile_goal(task.goal).formula
        if not isinstance(formula, And) or len(formula.parts) < 2:
            return False

        def solvable(kept: list[str]) -> bool:
            try:
                problem = self._problem(f"(and {' '.join(kept)})", facts)
            except (PDDLError, ServiceRobotError):
                return False
            return self.planner.solve(self.domain, problem).solved

        kept, dropped = keep_achievable([], [format_formula(p) for p in formula.parts], solvable)
        if not kept:
            return False
        task.asked, task.dropped = task.goal, dropped
        task.goal = kept[0] if len(kept) == 1 else f"(and {' '.join(kept)})"
        self.relaxed.append({"task": task.text, "asked": task.asked, "goal": task.goal, "dropped": dropped})
        return True

    def _val_accepts(self, problem: Problem, plan) -> bool:
        """With `validate_with_val`, VAL must also accept the plan for the problem it was made for."""
        if not self.validate_with_val:
            return True
        ok = val_validate(write_domain(self.domain), write_problem(problem), list(plan)).valid
        self.val_rejections += not ok
        return ok

    def _reaches_goal(self, plan: list[str]) -> bool:
        """The plan is applicable on memory and ends in the goal (our interpreter as validator)."""
        interp = self._pddl_interpreter()
        state = self.memory.facts
        try:
            for text in plan:
                ground = interp.parse_action(text)
                if not interp.applicable(ground, state):
                    return False
                state = interp.apply(ground, state)
        except (ActionError, PDDLError):
            return False
        return interp.compile_goal(self.task.goal).holds(state)

    def _next_action(self, failed: bool, stats: AgentStep) -> str:
        task = self.task
        if task is not None and task.goal is None and task.absent_at is not None and self._sees:
            # the words named nothing memory held: read them again once the robot has seen more, else look
            if len(self.memory.entities) != task.absent_at:
                previous, task.failure, task.absent_at = task.failure, None, None
                self._interpret_task(stats, previous)
            if task.goal is None:
                return self._explore()
        if task is None or task.goal is None:
            return "(wait)"
        if self._pddl_interpreter().compile_goal(task.goal).holds(self.memory.facts):
            task.plan.clear()
            # A task asked for looks done in memory: when the robot can see, it goes to look first.
            return self._look_at_goal() if self._sees else "(wait)"
        if self.base_variant == "visual-only":
            broken = failed or not task.plan
        else:
            broken = failed or not task.plan or not self._reaches_goal(list(task.plan))
        # Planning again on unchanged memory would fail again: wait for news (or explore).
        # After a failed attempt, retry with exponential back-off (memory changes every step while
        # the robot walks around and looks; each attempt costs a planner call).
        if broken and (failed or (task.failed_at != self.memory.version and stats.step >= task.retry_at)):
            self._plan(stats)
        if task.plan:
            task.explored.clear()
            return task.plan.popleft()
        return self._explore()

    def _explore(self) -> str:
        """No plan: when the robot can see, walk to the nearest room not visited since planning failed."""
        if not self._sees:
            return "(wait)"
        return self._walk_to(lambda room: room not in self.task.explored)

    def _look_at_goal(self) -> str:
        """Walk to the nearest room, not yet looked at for this task, of an entity the goal names (every
        room for a goal that names none, e.g. "throw away anything broken")."""
        kg, task = self.memory, self.task
        named = self.goal_entities()
        rooms = {self._room_of(n) for n in named} if named else set(kg.of_type("room"))
        rooms -= task.looked | {None}
        return self._walk_to(rooms.__contains__, task.looked) if rooms else "(wait)"

    def goal_entities(self) -> list[str]:
        """The entities the current task's goal names (not the robot), in order of mention."""
        task, kg = self.task, self.memory
        if task is None or task.goal is None or kg is None:
            return []
        return [n for n in dict.fromkeys(_TOKEN.findall(task.goal)) if kg.has_entity(n) and n != self.robot]

    def _room_of(self, name: str) -> str | None:
        """The room memory places an entity in, following on / inside / held-by to where it stands."""
        kg = self.memory
        for _ in range(4):
            rooms = kg.values("in-room", name)
            if rooms:
                return rooms[0]
            holders = [a.args[1] for a in kg.facts_about(name)
                       if len(a.args) == 2 and a.args[0] == name and a.predicate in _LOCATED_BY]
            if not holders:
                return None
            name = holders[0]
        return None

    def _walk_to(self, wanted, visited: set | None = None) -> str:
        """One move along the shortest known path to the nearest room for which `wanted(room)` holds."""
        kg = self.memory
        here = next(iter(kg.values("in-room", self.robot)), None)
        if here is None:
            return "(wait)"
        (visited if visited is not None else self.task.explored).add(here)
        parents = {here: None}
        queue = deque([here])
        while queue:
            room = queue.popleft()
            if room != here and wanted(room):
                while parents[room] != here:
                    room = parents[room]
                return f"(move {self.robot} {here} {room})"
            for nxt in kg.values("connected", room):
                if nxt not in parents:
                    parents[nxt] = room
                    queue.append(nxt)
        return "(wait)"

    # ------------------------------------------------------------------ reporting
    @property
    def usage(self) -> Usage:
        return self.interpreter.usage

    def failure_reason(self, text: str | None = None) -> Failure | None:
        """Why the task `text` (default: the current one) is not done: None while the agent has no
        complaint (e.g. it is still walking), else the `Failure` that explains it best."""
        task = self.task
        if task is None or (text is not None and task.text != text):  # not the current task: why?
            replaced = [f for t, f in self.replaced if t == text]
            if replaced:
                return replaced[-1]
            heard = [f for f in self.failures if f.stage == "classify" and (text or "")[:120] in f.detail]
            if heard:
                return heard[-1]
            return Failure("task not heard", "no utterance was classified as this task", "classify", len(self.steps))
        if task.failure is not None:
            return task.failure
        if task.goal is None:
            return Failure("goal not understood", "no goal was produced", "task", len(self.steps))
        if self.memory is not None and self._pddl_interpreter().compile_goal(task.goal).holds(self.memory.facts):
            if task.dropped:
                return Failure("goal relaxed", f"memory holds what was kept, {task.goal[:200]}; dropped as "
                               f"unachievable on memory: {' '.join(task.dropped)[:200]}", "plan", len(self.steps))
            return Failure("goal believed done", f"memory holds {task.goal[:200]}", "act", len(self.steps))
        if task.plan:
            return Failure("out of steps", f"{len(task.plan)} planned action(s) left", "act", len(self.steps))
        return None

    def _abandon(self, task: _TaskState | None, by: str) -> None:
        """The utterance `by`, taken for a new task, replaces `task`: remember why `task` is not done (its own
        failure, or "task replaced" while it was under way)."""
        if task is None or task.text == by:
            return
        failure = self.failure_reason(task.text)
        if failure is None or failure.reason == "out of steps":  # it was under way: the new task stopped it
            failure = Failure("task replaced", f"replaced at step {len(self.steps)} by {by[:120]!r}, taken for a "
                              f"new task{f' ({len(task.plan)} planned action(s) left)' if task.plan else ''}",
                              "classify", len(self.steps))
        self.replaced.append((task.text, failure))

    def summary(self) -> dict:
        """Totals over the episode so far, with the failure reason of every task replaced before memory
        believed it done (and the current task's, when it has one) and the count of faults by reason."""
        open_tasks = [{"task": text, **f.to_json()} for text, f in self.replaced if f.reason != "goal believed done"]
        current = self.failure_reason() if self.task is not None else None
        if current is not None and current.reason != "goal believed done":
            open_tasks.append({"task": self.task.text, **current.to_json()})
        reasons: dict[str, int] = {}
        for f in self.failures:
            reasons[f.reason] = reasons.get(f.reason, 0) + 1
        return {"variant": self.variant, "interpreter": self.interpreter.name, "steps": len(self.steps),
                "replans": self.replans, "tokens": self.usage.total_tokens,
                "planning_time": sum(s.planning_time for s in self.steps),
                "expanded": sum(s.expanded for s in self.steps),
                "updates_applied": sum(s.updates_applied for s in self.steps),
                "updates_dropped": sum(s.updates_dropped for s in self.steps),
                "failures": dict(sorted(reasons.items())), "unfinished_tasks": open_tasks,
                **({"relaxed": self.relaxed} if self.relaxed else {})}


def _percept_dict(o: Observation) -> dict:
    p = o.percept
    return {"room": p.room, "entities": p.entities, "facts": p.facts, "observed": p.observed}
