"""The household world: a generated home executed by the PDDL interpreter, with people living in it."""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from servicerobot.envs.executor import Executor
from servicerobot.envs.household.events import HumanEvent, HumanProcess
from servicerobot.envs.household.goal_tests import clause_test, literal_test
from servicerobot.envs.household.language import LANGUAGE, join_utterances
from servicerobot.envs.household.state import HouseholdState
from servicerobot.envs.household.tasks import DISTURBANCES, TASK_KINDS, Task, TaskGenerator
from servicerobot.envs.json_text import dumps, facts_json
from servicerobot.envs.options import MAX_TASKS
from servicerobot.envs.world import Utterance, World
from servicerobot.errors import ActionError, SceneError
from servicerobot.limits import excerpt
from servicerobot.pddl import Atom, Interpreter
from servicerobot.scenes.draws import draws
from servicerobot.scenes.household import ROBOT, HouseholdConfig, HouseholdScene, household_domain
from servicerobot.scenes.source import GeneratedHomes, SceneSource

__all__ = ["MAX_EXECUTOR_REPEATS", "HouseholdOptions", "HouseholdWorld", "atom_to_triplet"]

MAX_EXECUTOR_REPEATS = 3  # identical executor failures of one action before the task ends


# The robot's facts -> its self-percept, which they alone decide: shared by every world and episode, so
# a room or item name seen before finds its percept (and the env its JSON) made already.
_SELF_PERCEPTS: dict[frozenset[Atom], dict] = {}


def _mentioned(goal, interpreter: Interpreter) -> frozenset[Atom]:
    """The ground atoms a large goal mentions, on which alone its value depends; empty (test it every step)
    for a small goal, whose test is as cheap, and with derived predicates, which depend on other atoms."""
    if interpreter.axioms is not None:
        return frozenset()
    atoms = goal.mentioned
    return atoms if len(atoms) > 8 else frozenset()


def atom_to_triplet(atom: Atom) -> list:
    """(on a b) -> ["a", "on", "b"]; (dirty a) -> ["a", "dirty", True]: one knowledge-graph edge."""
    return [atom.args[0], atom.predicate, atom.args[1] if len(atom.args) > 1 else True]


def _triplets(atoms: list[Atom]) -> list[list]:
    """`[atom_to_triplet(a) for a in atoms]` without a call per atom (a house's prior has hundreds)."""
    return [[args[0], predicate, args[1]] if len(args) > 1 else [args[0], predicate, True]
            for predicate, args in atoms]


@dataclass(frozen=True)
class HouseholdOptions:
    """How the household world behaves, beyond its size.

    Attributes:
        n_tasks: tasks per episode, announced one after another.
        task_kinds: the kinds to draw from (see `TASK_KINDS`).
        event_rate: chance per step of a background human event.
        double_prob: chance a background event comes with a second one by the same person, reported in
            one utterance.
        disturbance_prob: chance that the active task gets a disturbance (a second one with half that).
        partial_prob: chance a move is reported only partially ("I took the mug from the table").
    """

    n_tasks: int = 4
    task_kinds: tuple[str, ...] = TASK_KINDS
    event_rate: float = 0.05
    double_prob: float = 0.15
    disturbance_prob: float = 0.6
    partial_prob: float = 0.15
    steps_per_goal_object: int = 25

    def __post_init__(self) -> None:
        unknown = [k for k in self.task_kinds if k not in TASK_KINDS]
        if unknown:
            raise SceneError(f"unknown task kinds {unknown}; choose from {list(TASK_KINDS)}")
        if isinstance(self.n_tasks, bool) or not isinstance(self.n_tasks, int) or not 1 <= self.n_tasks <= MAX_TASKS:
            raise SceneError(f"n_tasks must be an integer in [1, {MAX_TASKS}], got {excerpt(self.n_tasks)}")
        for name in ("event_rate", "double_prob", "disturbance_prob", "partial_prob"):
            value = getattr(self, name)
            if not 0.0 <= value <= 1.0:
                raise SceneError(f"{name} must be a probability in [0, 1], got {value}")


class HouseholdWorld(World):
    """A home executed symbolically on the household PDDL domain, with people living in it.

    The home comes from a `SceneSource` (procedural homes by default; iTHOR FloorPlans and 3D scene graphs
    are other sources). An optional `Executor` runs accepted actions in a physical backend and perceives
    through its adapter; without one the PDDL interpreter is the whole simulator.
    """

    name = "household"
    language = LANGUAGE

    def __init__(self, size: str | HouseholdConfig | SceneSource = "default",
                 options: HouseholdOptions | None = None, executor: Executor | None = None):
        self.source = size if isinstance(size, SceneSource) else GeneratedHomes(size)
        self.config = getattr(self.source, "config", None)
        self.options = options or HouseholdOptions()
        self.domain = household_domain()
        self.executor = executor
        # Spaces are fixed per source: an upper bound on entities (robot, rooms, fixtures, items, people), and
        # for sources of fixed buildings the size of their prior, measured on them.
        self.max_entities = self.source.max_entities
        self.n_rooms = self.source.n_rooms
        self.max_prior_chars = getattr(self.source, "max_prior_chars", None)
        self._executor_failures: dict[tuple[str, str], int] = {}
        self._blocked = ""
        self.scene: HouseholdScene | None = None
        self._renderer = None

    # ------------------------------------------------------------------ episode
    def reset(self, rng: np.random.Generator) -> None:
        house_seed, human_seed, task_seed, speech_seed = (
            np.random.default_rng(s) for s in np.random.SeedSequence(int(rng.integers(2**63))).spawn(4))
        kinds = self.options.task_kinds
        self.plan_kinds = [kinds[int(i)] for i in task_seed.integers(len(kinds), size=self.options.n_tasks)]
        # The people's and tasks' other draws are one number at a time, hundreds an episode: the same numbers
        # without numpy's cost per call (see `Draws`). Phrasing choices that depend on what is told get their
        # own stream (a few draws an episode: numpy's own), so every update mode sees the same events.
        people_rng, self.rng = draws(human_seed) or human_seed, draws(task_seed) or task_seed
        self._speech_rng = speech_seed
        self.scene = self.source.generate(house_seed)
        self.entity_index = {name: i for i, name in enumerate(self.scene.entities)}
        self.room_index = {name: i for i, name in enumerate(self.scene.room_names)}
        self.state = HouseholdState(self.scene, self.scene.init)
        self.interpreter = Interpreter.shared(self.domain, self.scene.objects)
        self.humans = HumanProcess(self.state, people_rng, self.options.partial_prob)
        self.tasks = TaskGenerator(self.humans, self.rng, self.options.steps_per_goal_object)
        self._disturb_at: dict[int, str] = {}
        self._percept_cache: tuple[tuple, dict] | None = None
        self._self_cache: tuple[int, dict] | None = None
        self._room_cache: tuple[int, int] = (-1, 0)  # (state version, robot room index)
        self._event_rate = self.options.event_rate
        # the last task asked about: [task, its Goal.holds, the atoms it mentions, state version, value then]
        self._goal_of: list = [None, None, None, -1, False]
        self._mask_cache: tuple[dict, np.ndarray] | None = None
        if self.executor is not None:
            self.executor.reset(self.scene, self.state.atoms, np.random.default_rng(int(rng.integers(2**63))))
            self._synced = self.state.version

    def task_blocked(self) -> str:
        """Why the active task cannot go on ("" while it can): the executor failed one action the same way
        `MAX_EXECUTOR_REPEATS` times."""
        return self._blocked

    def prior(self) -> dict:
        """What the robot is told about the house at the start: the catalogue and every initial fact."""
        entities, rooms = self._catalogue()
        return {"entities": entities, "rooms": rooms, "facts": _triplets(sorted(self.state.live))}

    def prior_json(self) -> str:
        """`dumps(self.prior())`, the same text, its facts written from texts kept per atom (`facts_json`)."""
        entities, rooms = self._catalogue()
        return ('{"entities":' + dumps(entities) + ',"rooms":' + dumps(rooms) + ',"facts":'
                + facts_json(self.state.live) + "}")

    def _catalogue(self) -> tuple[dict, dict]:
        """The prior's entities (type, noun and attributes) and rooms (name -> label)."""
        scene = self.scene
        return ({n: {"type": e.pddl_type, "noun": e.noun, **e.attributes} for n, e in scene.entities.items()},
                {r.name: r.label for r in scene.rooms})

    # ------------------------------------------------------------------ robot
    def execute(self, action: str) -> tuple[str, str]:
        """Run one robot action. Returns (canonical action, error); error is "" when it succeeded.

        Besides the domain's actions the robot may `(wait)`: a no-op that is never an error.
        """
        if action == "(wait)":
            return "(wait)", ""
        try:
            interpreter, state = self.interpreter, self.state
            ground, shown, reason, add, delete = interpreter.transition_text(
                action, state.live if interpreter.axioms is None else state.atoms)
        except ActionError as exc:
            if isinstance(action, str) and action.strip().lower() in ("(wait)", "wait"):
                return "(wait)", ""
            return action if isinstance(action, str) else repr(action), str(exc)
        if reason is not None:
            return shown, f"{shown} is not applicable: {reason}"
        if self.executor is None:
            state.apply(add, delete, disjoint=True)  # compiled effects never add and delete one atom
            return shown, ""
        self._sync()
        error = self.executor.execute(ground, frozenset(add), frozenset(delete))
        if error:
            # The same action failing the same way again and again will not succeed: the task ends.
            key = (shown, str(error))
            count = self._executor_failures[key] = self._executor_failures.get(key, 0) + 1
            if count >= MAX_EXECUTOR_REPEATS:
                self._blocked = f"{shown} failed {count} times in {self.executor.name}: {error}"
            return shown, f"{shown} failed in {self.executor.name}: {error}"
        state.apply(add, delete, disjoint=True)
        self._synced = state.version
        return shown, ""

    def _sync(self) -> None:
        """Mirror what people changed since the last sync into the executor's backend."""
        if self.executor is not None and self._synced != self.state.version:
            self.executor.sync(self.state.atoms)
            self._synced = self.state.version

    # ------------------------------------------------------------------ tasks and people
    def next_task(self, index: int) -> Task | None:
        """Draw task `index` of the episode; falls back to other kinds if the house can't host it now."""
        self._executor_failures, self._blocked = {}, ""
        if index >= len(self.plan_kinds):
            return None
        order = [self.plan_kinds[index]] + [k for k in self.options.task_kinds if k != self.plan_kinds[index]]
        for kind in order:
            task = self.tasks.sample(kind)
            if task is not None and not self.goal_holds(task):
                self._schedule_disturbances(task)
                self._sync()
                return task
        self._sync()
        return None

    def _schedule_disturbances(self, task: Task) -> None:
        self._disturb_at = {}
        cats = DISTURBANCES[task.kind]
        if self.rng.random() < self.options.disturbance_prob:
            self._disturb_at[int(self.rng.integers(2, 16))] = cats[int(self.rng.integers(len(cats)))]
            if self.rng.random() < 0.5:
                self._disturb_at[int(self.rng.integers(8, 30))] = cats[int(self.rng.integers(len(cats)))]

    @property
    def n_tasks(self) -> int:
        return self.options.n_tasks

    def announce(self, task: Task) -> Utterance:
        return Utterance(self.humans.describe.person(task.speaker), task.text, "task")

    def goal_holds(self, task: Task) -> bool:
        known, state = self._goal_of, self.state
        if known[0] is not task:
            known = self._goal_of = self._goal_entry(task)
        mentioned = known[2]
        if mentioned is None:  # a test of the state's indexes: repeated only after a change that may touch it
            version = state.flags_version if known[5] else state.version
            if known[3] != version:
                known[3], known[4] = version, known[1](state)
            return known[4]
        if not mentioned:  # a small goal: testing it is as cheap as checking what changed
            return known[1](state.live if self.interpreter.axioms is None else state.atoms)
        version = state.version
        if known[3] == version - 1:  # one change since: did it touch the goal?
            add, delete = state.last_change
            if mentioned.isdisjoint(add) and mentioned.isdisjoint(delete):
                known[3] = version
                return known[4]
        holds = known[1](state.live)
        known[3], known[4] = version, holds
        return holds

    def _goal_entry(self, task: Task) -> list:
        """`_goal_of` for a task: [task, its test, the atoms it mentions (empty: test every step; None: the
        test reads the state's indexes, and a sixth item says whether it reads only `flags`, so that only their
        changes call for a new test), state version (or flags version), value then]. A goal of ground literals
        and clauses is tested as `goal_tests` says, without grounding it over the house; another is compiled."""
        interpreter = self.interpreter
        form = interpreter.goal_form(task.goal)
        if form is not None:
            test = literal_test(form)
            if test is not None:
                return [task, test, frozenset(), -1, False]
            holds = clause_test(form, interpreter.universe)
            return [task, holds, None, -1, False, not (form.pos or form.neg)]
        goal = interpreter.compile_goal(task.goal)
        return [task, goal.holds, _mentioned(goal, interpreter), -1, False]

    def tick(self, task: Task | None, step_in_task: int) -> list[HumanEvent]:
        """Let people act for one step: maybe a task disturbance, maybe background events."""
        events: list[HumanEvent] = []
        if step_in_task in self._disturb_at and task is not None:
            event = self.tasks.disturb(task, self._disturb_at[step_in_task])
            if event is not None:
                events.append(event)
                self.state.apply(event.add, event.delete)
        if self.humans.rng.random() < self._event_rate:
            protected = task.entities if task is not None else frozenset()
            event = self.humans.background(protected)
            if event is not None:
                events.append(event)
                self.state.apply(event.add, event.delete)
                if self.humans.rng.random() < self.options.double_prob:
                    # The same person does a second thing and reports both in one utterance.
                    second = self.humans.background(protected | {event.actor}, actor=event.actor)
                    if second is not None and second.actor == event.actor:
                        events.append(second)
                        self.state.apply(second.add, second.delete)
        if self.executor is not None:
            self._sync()
        return events

    def utterances(self, events: list[HumanEvent], told: list[bool]) -> list[Utterance]:
        """Group told events into utterances; consecutive events by one person become one sentence."""
        out: list[Utterance] = []
        for event, is_told in zip(events, told):
            if not is_told:
                continue
            speaker = self.humans.describe.person(event.actor)
            if out and out[-1].speaker == speaker and out[-1].kind == "update" and len(out[-1].events) == 1:
                prev = out[-1]
                out[-1] = Utterance(speaker, join_utterances(prev.text, event.utterance, self._speech_rng),
                                    "update", prev.events + (event,))
            else:
                out.append(Utterance(speaker, event.utterance, "update", (event,)))
        return out

    # ------------------------------------------------------------------ perception
    def percept(self) -> dict:
        """Entities in view and every fact about them (closed world within view)."""
        key = (self.state.version,)
        if self._percept_cache is not None and self._percept_cache[0] == key:
            return self._percept_cache[1]
        visible = self.state.visible()
        room = self.state.robot_room()
        # Whose contents are seen in full: the room (who and what is in it), open fixtures, people, robot.
        observed = [room] + [f for f in self.scene.fixtures_in(room) if not self.state.is_closed(f)]
        observed += self.state.people_in(room) + [ROBOT]
        # Every fact the closed-world rule judges: subject in view, or object observed (e.g. the door
        # from the next room into this one, `(connected kitchen hallway)`, seen from the hallway).
        judged = {a for e in visible for a in self.state.about(e)}
        judged.update(a for o in observed for a in self.state.by_arg[o] if len(a.args) == 2 and a.args[1] == o)
        facts = _triplets(sorted(judged))
        result = {"room": room, "entities": {e: self.scene.entities[e].pddl_type for e in visible},
                  "facts": facts, "observed": observed}
        if self.executor is not None:
            result = self.executor.percept(result)
        self._percept_cache = (key, result)
        return result

    def self_percept(self) -> dict:
        """What the robot knows of itself without looking around: its room and its own facts."""
        known, version = self._self_cache, self.state.version
        if known is not None and known[0] == version:
            return known[1]
        key = frozenset(self.state.by_arg[ROBOT])
        result = _SELF_PERCEPTS.get(key)
        if result is None:  # the same dict for the same facts, so the env's JSON cache finds it
            facts = [atom_to_triplet(a) for a in sorted(self.state.about(ROBOT))]
            result = {"room": self.state.robot_room(), "entities": {ROBOT: "robot"}, "facts": facts,
                      "observed": [ROBOT]}
            if len(_SELF_PERCEPTS) >= 1024:
                _SELF_PERCEPTS.clear()
            _SELF_PERCEPTS[key] = result
        self._self_cache = (version, result)
        return result

    def robot_room_index(self) -> int:
        version = self.state.version
        if self._room_cache[0] != version:
            known = self._self_cache  # the self-percept made this step names the room already
            room = known[1]["room"] if known is not None and known[0] == version else self.state.robot_room()
            self._room_cache = (version, self.room_index[room])
        return self._room_cache[1]

    def visible_mask(self) -> np.ndarray:
        percept = self.percept()
        if self._mask_cache is not None and self._mask_cache[0] is percept:
            return self._mask_cache[1].copy()
        mask = np.zeros(self.max_entities, dtype=np.int8)
        mask[[self.entity_index[e] for e in percept["entities"]]] = 1
        self._mask_cache = (percept, mask)
        return mask.copy()

    def true_facts(self) -> frozenset[Atom]:
        return self.state.atoms

    def close(self) -> None:
        """Free the executor's backend (a no-op for the purely symbolic world)."""
        if self.executor is not None:
            self.executor.close()

    # ------------------------------------------------------------------ rendering
    def render_frame(self, overlay: dict, width: int, height: int) -> np.ndarray:
        """A top-down floor plan with the overlay text (task, utterances, plan) below it."""
        from servicerobot.envs.household.rendering import HouseholdRenderer

        if self.executor is not None:
            frame = self.executor.render_frame(overlay, width, height)
            if frame is not None:
                return frame
        r = self._renderer
        if r is None or r.scene is not self.scene or (r.width, r.height) != (width, height):
            self._renderer = r = HouseholdRenderer(self.scene, width, height)
        return r.render(self.state, overlay)
