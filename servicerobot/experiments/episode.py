"""One seeded episode of an experiment grid, scored from simulator state: the record written to JSONL.

Per task: completed (the world's goal check), kind, the event categories it saw, steps, actions and failed
actions, plans made, and the agent's goal scored against the true goal (Planetarium's parseable /
solvable / correct, on the true state of the moment the goal was produced). Per verbal update: whether
memory matches a reference memory fed exactly what was told, seen and done (L3M+P's knowledge-graph
accuracy; a mismatch carried over from the previous update is not counted again).
"""

from __future__ import annotations

import json
import time
import traceback
from dataclasses import dataclass, field
from typing import Any

from servicerobot.envs.evaluation import GoalScorer as _WorldGoalScorer
from servicerobot.experiments.config import EnvConfig, EpisodeSpec

__all__ = ["GoalScorer", "KGScorer", "make_agent", "make_env", "make_interpreter", "run_episode"]

_ENVS: dict[str, Any] = {}  # one env per setting and worker process: worlds are rebuilt by reset(seed)
MEMORY_FREE = ("oracle", "static", "visual-only")  # variants whose memory is not scored against updates


def make_env(env: EnvConfig, cache: bool = True, **extra: Any):
    """`gym.make` for an env config; with `cache`, reuse this process's env for the same setting."""
    import gymnasium as gym

    import servicerobot  # noqa: F401  (registers the ids)

    key = json.dumps([env.env_id, env.kwargs, extra], sort_keys=True)
    if cache and key in _ENVS:
        return _ENVS[key]
    made = gym.make(env.env_id, **env.kwargs, **extra)
    if cache:
        _ENVS[key] = made
    return made


def make_agent(variant: str, env, options: dict[str, Any] | None = None):
    """The agent for a variant: the oracle, or a `ServiceAgent` with the config's options."""
    from servicerobot.oracle import OracleAgent
    from servicerobot.planners import FastDownward

    options = dict(options or {})
    timeout = float(options.pop("planner_timeout", 60.0))
    planner = FastDownward(alias="lama-first", timeout=timeout)
    if variant == "oracle":
        return OracleAgent.from_env(env, planner)
    from servicerobot.agent import ServiceAgent

    interpreter = make_interpreter(options.pop("interpreter", "default"), options.pop("llm", None) or {},
                                   getattr(env.unwrapped.world, "language", None))
    return ServiceAgent.from_env(env, variant=variant, interpreter=interpreter, planner=planner,
                                 keep_history=False, **options)


def make_interpreter(name: str, llm: dict[str, Any], language: Any = None):
    """The language interpreter `agent.interpreter` names (default, rules, llm, local-llm) with its
    `agent.llm` options (timeout, max_retries, backoff, model; mode for local-llm: choose or generate); the
    rule interpreter reads `language` (the world's declared `Language`; default the household's).

    Raises:
        ConfigError: an unknown name, or a model interpreter whose server is not configured.
    """
    from servicerobot.agent import default_interpreter
    from servicerobot.experiments.config import ConfigError

    if name == "default":
        return default_interpreter(language, **{k: v for k, v in llm.items() if k != "mode"})
    if name == "rules":
        from servicerobot.language.rule_interpreter import RuleInterpreter

        return RuleInterpreter(language)
    if name == "llm":
        from servicerobot.language.llm_interpreter import LLMInterpreter
        from servicerobot.language.openai_client import OpenAIModel

        model = OpenAIModel.from_env(**{k: v for k, v in llm.items() if k != "mode"})
        if model is None:
            raise ConfigError("agent.interpreter llm needs OPENAI_BASE_URL (a local server) or OPENAI_API_KEY "
                              "set where the episodes run")
        return LLMInterpreter(model)
    if name == "local-llm":
        from servicerobot.language.local_server import LocalServerError, local_interpreter

        try:
            return local_interpreter(**{k: v for k, v in llm.items() if k in ("timeout", "max_retries", "mode")},
                                     language=language)
        except (LocalServerError, ValueError) as exc:
            raise ConfigError(f"agent.interpreter local-llm: {exc}") from None

    raise ConfigError(f"agent.interpreter must be default, rules, llm or local-llm, got {name!r}")


class KGScorer:
    """Knowledge-graph accuracy after each verbal update, against a reference memory."""

    def __init__(self, world, obs: dict, info: dict):
        from servicerobot.memory.graph import KnowledgeGraph

        self.world = world
        self.reference = KnowledgeGraph.from_prior(world.domain, json.loads(obs["prior"]), keep_history=False)
        self.updates: list[dict] = []
        self.jaccard: list[float] = []
        self._prev_diff: set = set()
        self._pending: list[str] = []  # categories told before the agent's next act
        self.observe(info["oracle"]["events"], None)

    def observe(self, events: list[dict], percept: str | None) -> None:
        """Feed the reference what people told (as said) and what the robot sees."""
        from servicerobot.memory.triplets import Delta
        from servicerobot.memory.updates import apply_percept
        from servicerobot.pddl import Atom

        told = [e for e in events if e["told"]]
        for e in told:
            self.reference.apply(Delta.of((Atom.parse(a) for a in e["told_delete"]),
                                          (Atom.parse(a) for a in e["told_add"])), "told", 0)
        if percept is not None:
            apply_percept(self.reference, json.loads(percept), 0)
        self._pending = sorted({e["category"] for e in told})

    def score(self, memory, step: int) -> None:
        """After the agent has heard this step's utterances: score memory if something was told."""
        if not self._pending:
            return
        mem, ref = memory.facts, self.reference.facts
        diff = mem ^ ref
        self.updates.append({"step": step, "categories": self._pending,
                             "correct": (not diff) or diff <= self._prev_diff})
        self.jaccard.append(len(mem & ref) / max(1, len(mem | ref)))
        self._prev_diff = set(diff)
        self._pending = []

    def action(self, action: str) -> None:
        """The true effect of the robot's own action, as the robot will see it."""
        from servicerobot.errors import ServiceRobotError
        from servicerobot.memory.triplets import Delta

        interp, state = self.world.interpreter, self.world.state.atoms
        try:
            ground = interp.parse_action(action)
        except ServiceRobotError:
            return  # (wait) and malformed actions change nothing
        if interp.applicable(ground, state):
            add, delete = interp.delta(ground, state)
            self.reference.apply(Delta(delete, add), "action", 0)

    def to_json(self) -> dict:
        return {"updates": self.updates,
                "jaccard": round(sum(self.jaccard) / len(self.jaccard), 6) if self.jaccard else None}


class GoalScorer(_WorldGoalScorer):
    """`servicerobot.envs.evaluation.GoalScorer` whose solvable check runs Fast Downward (lama-first, `timeout`
    seconds) and VAL."""

    def __init__(self, world, check_solvable: bool = True, timeout: float = 10.0):
        super().__init__(world, check_solvable, timeout, solve=self._fast_downward if check_solvable else None)

    def _fast_downward(self, domain, problem):
        from servicerobot.planners import FastDownward

        result = FastDownward(alias="lama-first", timeout=self.timeout).solve(domain, problem)
        return list(result.plan) if result.solved else None


@dataclass
class _Task:
    index: int
    kind: str
    text: str
    true_goal: str
    events: set = field(default_factory=set)
    steps: int = 0
    actions: int = 0
    failed_actions: int = 0
    plans_before: int = 0
    goal: dict | None = None

    def to_json(self, completed: bool, plans: int, failure: dict | None = None) -> dict:
        return {"index": self.index, "kind": self.kind, "text": self.text, "completed": completed,
                "steps": self.steps, "events": sorted(self.events),
                "disturbed": bool(self.events & {"reset", "addition", "relocation"}),
                "plans": plans - self.plans_before, "actions": self.actions,
                "failed_actions": self.failed_actions, "goal": self.goal, "failure": failure}


def run_episode(spec: EpisodeSpec, run: dict | None = None, env=None, score_goals: bool = True) -> dict:
    """Run one episode and return its record; a crash becomes a record with status "error"."""
    if spec.env.env_id == "ContextMatters":  # one CM instance x one method (servicerobot.experiments.cm)
        from servicerobot.experiments.cm import run_cm_episode

        return run_cm_episode(spec, run)
    record: dict[str, Any] = {"key": spec.key, "run": run or {}, "env": spec.env.name,
                              "env_kwargs": spec.env.kwargs, "variant": spec.variant, "seed": spec.seed}
    t0 = time.perf_counter()
    try:
        record.update(_play(spec, env, score_goals), status="ok")
    except Exception:  # noqa: BLE001 - the grid goes on; the record carries the traceback
        record.update(status="error", error=traceback.format_exc(), tasks=[], kg=None, agent=None)
    record["timing"] = {"wall_s": round(time.perf_counter() - t0, 3)}
    return record


def _play(spec: EpisodeSpec, env, score_goals: bool) -> dict:
    env = env if env is not None else make_env(spec.env)
    obs, info = env.reset(seed=spec.seed)
    world = env.unwrapped.world
    agent = make_agent(spec.variant, env, spec.agent)
    kg = None if spec.variant in MEMORY_FREE else KGScorer(world, obs, info)
    goals = GoalScorer(world) if score_goals and spec.variant != "oracle" else None
    tasks: list[dict] = []
    current = _new_task(0, info, agent)
    current.events.update(e["category"] for e in info["oracle"]["events"])
    while True:
        action = agent.act(obs)
        if kg is not None:
            kg.score(agent.memory, len(agent.steps))
            kg.action(action)
        if goals is not None and current.goal is None and agent.task is not None and agent.task.goal \
                and agent.task.text == current.text:
            current.goal = goals.score(agent.task.goal, current.true_goal)
        obs, _, terminated, truncated, info = env.step(action)
        current.steps += 1
        if action.strip() != "(wait)":
            current.actions += 1
            current.failed_actions += bool(info["action_error"])
        events = info["oracle"]["events"]
        ended = info["tasks_completed"] + info["tasks_failed"] > len(tasks)
        current.events.update(e["category"] for e in events if not (ended and e["category"] == "setup"))
        if kg is not None:
            kg.observe(events, obs["percept"])
        if ended:
            if goals is not None and current.goal is None:
                current.goal = goals.score(None, current.true_goal)
            tasks.append(current.to_json(bool(info["task_completed"]), agent.replans,
                                         None if info["task_completed"] else why_failed(agent, current.text)))
            if info["oracle"]["goal"] is not None and not (terminated or truncated):
                current = _new_task(len(tasks), info, agent)
                current.events.update(e["category"] for e in events if e["category"] == "setup")
        if terminated or truncated:
            break
    summary = agent.summary() if hasattr(agent, "summary") else {
        "steps": sum(t["steps"] for t in tasks), "replans": agent.replans, "tokens": 0,
        "planning_time": agent.planning_time}
    summary = {k: (round(v, 4) if isinstance(v, float) else v) for k, v in summary.items()}
    return {"tasks": tasks, "kg": kg.to_json() if kg is not None else None, "agent": summary}


def why_failed(agent, text: str) -> dict:
    """The agent's reason for a failed task; running out of steps when it has none to give."""
    from servicerobot.failures import Failure

    ask = getattr(agent, "failure_reason", None)
    failure = ask(text) if ask is not None else None
    if failure is None:
        failure = Failure("out of steps", "the task's step budget ran out", "act", len(getattr(agent, "steps", ())))
    return failure.to_json()


def _new_task(index: int, info: dict, agent) -> _Task:
    return _Task(index, info["oracle"]["task_kind"], info["task"], info["oracle"]["goal"],
                 plans_before=agent.replans)
