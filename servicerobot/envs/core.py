"""`ServiceRobotEnv`: the Gymnasium environment shared by every world backend."""

from __future__ import annotations

import string
from typing import Any, ClassVar

import gymnasium as gym
import numpy as np
from gymnasium import spaces

from servicerobot.envs.json_text import dumps as _dumps
from servicerobot.envs.json_text import quote as _quote
from servicerobot.envs.options import (
    ENV_OPTIONS,
    WORLD_IDS,
    WORLDS,
    OptionError,
    check_env_options,
    check_options,
)
from servicerobot.envs.world import Utterance, World
from servicerobot.limits import excerpt

__all__ = ["CHARSET", "MAX_ACTION_CHARS", "MAX_ERROR_CHARS", "UPDATE_MODES", "WORLD_IDS", "ServiceRobotEnv",
           "make_env"]

UPDATE_MODES = ("verbal", "visual", "both")
MAX_ACTION_CHARS = 512  # the action space's max_length: a longer action is refused without being parsed
MAX_ERROR_CHARS = 1024  # info["action_error"] and obs["action_result"] (whose space allows 2048)
# JSON is written with ensure_ascii, so printable ASCII covers every observation string.
CHARSET = frozenset(string.printable) - frozenset("\x0b\x0c")


class ServiceRobotEnv(gym.Env):
    """A lifelong service robot in a home: people give tasks and change things; the robot acts by skills.

    ## Description
    Each episode holds `n_tasks` tasks, announced one after another by people in natural language
    ("Could you put Ana's red mug in the cabinet?"). Meanwhile people change the house and, depending on
    `update_mode`, tell the robot ("I moved the blue plate to the sink."). The robot must keep track of
    the house, plan and act. Success is computed from the true state, never by a language model.

    ## Action Space
    `Text`: one ground skill in PDDL syntax, e.g. `(pick-up robot mug_3 counter_1 kitchen)`. The skills
    are the household domain's actions (`servicerobot.scenes.household_domain()`). A malformed,
    unknown or inapplicable action leaves the world unchanged, costs `invalid_penalty`, and
    `info["action_error"]` says precisely why. The env never raises on an action.

    ## Observation Space
    `Dict` with:

    | key | space | content |
    |---|---|---|
    | `utterances` | Text | JSON list of `{"speaker", "text"}`: what people said since the last step (tasks and updates, not labelled) |
    | `percept` | Text | JSON `{"room", "entities": {name: type}, "facts": [[s, p, o], ...], "observed": [name, ...]}`; closed world within view: an absent fact whose subject is a visible entity, or whose object is an `observed` entity (a room, an open fixture, a person, the robot: what is in or on it is seen in full), is false. In `verbal` mode only the robot and its room are perceived. Unary facts have `o = true`. |
    | `prior` | Text | JSON of the house as the robot knows it at reset (`entities` with attributes, `rooms`, `facts`); `""` after the first observation |
    | `action_result` | Text | `"ok"`, the error message of the last action, or `""` after reset |
    | `robot_room` | Discrete(n_rooms) | index of the robot's room |
    | `visible` | MultiBinary(max_entities) | which entities are in view (entity order of `prior["entities"]`) |

    `servicerobot.envs.decode(obs)` turns it into a typed `Observation`.

    ## Rewards
    +1 when the active task's goal holds in the true state (the next task starts), `-step_cost` every
    step, `-invalid_penalty` for an action that failed.

    ## Episode End
    Terminated when every task is resolved and the last one was completed; truncated when the last task
    ran out of its step budget (`task.budget`, scaled by the number of objects in its goal). A task that
    runs out of budget is recorded as failed and the next one starts.

    ## Info
    `success` (all tasks so far completed), `task_completed` (this step), `task` (active task text),
    `action_error` ("" when fine), `tasks_completed`, `tasks_failed`, `tasks_total`, `task_failure` (why a
    task ended failed at this step: out of steps, or an action the executor failed the same way 3 times;
    "" otherwise), and under
    `oracle`, for evaluation only: the active task's ground-truth `goal` and `task_kind`, and this step's
    human `events` with their true deltas and what was told.

    ## Arguments
    `world` ("household", "pybullet", "ai2thor", "habitat" or a `World`), then that world's options:
    `size` ("small" | "default" | "large" or a `HouseholdConfig`), `update_mode` ("verbal" | "visual" |
    "both"), `verbal_share` (share of events people report), `n_tasks`, `event_rate`, `disturbance_prob`,
    `task_kinds`, `step_cost`, `invalid_penalty`, `render_mode` ("rgb_array"), `width`, `height`. Each
    world's options, their types, ranges and defaults are declared in `servicerobot.envs.options` (listed in
    docs/options.md); a bad one raises `OptionError` naming it and its range before anything is built.
    With a `World` object only the env's own options (`update_mode` ... `height`) may be given.

    ## Registered Configurations
    `ServiceRobot-v0` (household, default size, verbal updates).
    """

    metadata: ClassVar[dict[str, Any]] = {"render_modes": ["rgb_array"], "render_fps": 4}

    def __init__(self, world: str | World = "household", **options: Any):
        # Every option is checked (type and range, see `servicerobot.envs.options`) before anything is built.
        if isinstance(world, str):
            opts = check_options(world, options)
            given = set(options)
            world = _make_world(world, {k: v for k, v in opts.items() if k not in ENV_OPTIONS}, given)
        elif isinstance(world, World):
            opts = check_env_options(options)
        else:
            raise OptionError(f"world must be a world name {list(WORLDS)} or a World, got {excerpt(world)}")
        self.options = opts  # every option, checked, defaults filled in
        self.world = world
        self.update_mode, self.verbal_share = opts["update_mode"], opts["verbal_share"]
        self.step_cost, self.invalid_penalty = opts["step_cost"], opts["invalid_penalty"]
        self.render_mode, self.width, self.height = opts["render_mode"], opts["width"], opts["height"]

        n = world.max_entities
        self.observation_space = spaces.Dict({
            "utterances": spaces.Text(max_length=8192, min_length=0, charset=CHARSET),
            "percept": spaces.Text(max_length=4096 + 160 * n, min_length=0, charset=CHARSET),
            # A world of fixed buildings measures its prior (a big real building outgrows the per-entity bound).
            "prior": spaces.Text(max_length=max(8192 + 400 * n, getattr(world, "max_prior_chars", None) or 0),
                                 min_length=0, charset=CHARSET),
            "action_result": spaces.Text(max_length=2048, min_length=0, charset=CHARSET),
            "robot_room": spaces.Discrete(world.n_rooms),
            "visible": spaces.MultiBinary(n),
        })
        self.action_space = spaces.Text(max_length=MAX_ACTION_CHARS, min_length=0, charset=CHARSET)
        self._task = None
        self._blocked = getattr(world, "task_blocked", None)  # why the active task cannot go on, if it can say
        self._overlay: dict[str, Any] = {}
        self._percept_json: dict[int, tuple[Any, str]] = {}  # id(percept) -> (percept, its JSON)
        self._no_entities = np.zeros(n, dtype=np.int8)

    # ------------------------------------------------------------------ gym API
    def reset(self, *, seed: int | None = None, options: dict | None = None):
        """Start an episode: a new house and task list from `seed`. `options` is unused and must be empty;
        world settings (size, update_mode, n_tasks, ...) are passed to `gym.make` instead."""
        if options:
            names = ", ".join(map(repr, options)) if isinstance(options, dict) else repr(options)
            raise ValueError(f"reset() takes no options, got {names}; pass settings such as size or "
                             "update_mode to gym.make('ServiceRobot-v0', ...) instead")
        super().reset(seed=seed)
        world_rng, speech_seed = (np.random.default_rng(s) for s in
                                  np.random.SeedSequence(int(self.np_random.integers(2**63))).spawn(2))
        self._speech_rng = speech_seed
        self.world.reset(world_rng)
        self._n_tasks = self.world.n_tasks
        self._task_index = 0
        self._step_in_task = 0
        self._completed = 0
        self._failed = 0
        self._last_utterances: list[dict] = []
        self._task_failure = ""
        self._overlay = {}
        prior = self.world.prior_json()
        self._step_events: list[tuple[Any, bool]] = []
        utterances = self._start_task()
        obs = self._observation(utterances, "", prior)
        info = self._info("", task_completed=False)
        return obs, info

    def step(self, action: Any):
        if self._task is None:
            raise gym.error.ResetNeeded("the episode is over: call reset() before step()")
        world, task = self.world, self._task
        self._task_failure = ""
        if type(action) is str and len(action) <= MAX_ACTION_CHARS:  # _execute's checks, for the usual action
            executed, error = world.execute(action)
            if error and len(error) > MAX_ERROR_CHARS:
                error = _cut(error)
        else:
            executed, error = _execute(world, action)
        step_in_task = self._step_in_task = self._step_in_task + 1
        events = world.tick(task, step_in_task)
        utterances = self._tell(events) if events else []
        reward = -self.step_cost - (self.invalid_penalty if error else 0.0)
        terminated = truncated = False
        task_completed = False
        if world.goal_holds(task):
            reward += 1.0
            self._completed += 1
            task_completed = True
            last_ok = True
        elif ((blocked := self._blocked()) if self._blocked is not None else "") or step_in_task >= task.budget:
            self._failed += 1
            self._task_failure = blocked or "out of steps: the task's step budget ran out"
            last_ok = False
        else:
            last_ok = None
        if last_ok is not None:
            self._task_index += 1
            self._step_in_task = 0
            utterances += self._start_task()
            if self._task is None:
                terminated, truncated = last_ok, not last_ok
        obs = self._observation(utterances, error or "ok", "")
        info = self._info(error, task_completed)
        self._overlay["last_action"] = executed
        return obs, reward, terminated, truncated, info

    def close(self) -> None:
        """Free the world's resources (a PyBullet world's physics client) now, not at garbage collection."""
        close = getattr(self.world, "close", None)
        if close is not None:
            close()
        super().close()

    def render(self):
        if self.render_mode != "rgb_array":
            return None
        return self.world.render_frame(self.overlay(), self.width, self.height)

    def overlay(self) -> dict[str, Any]:
        """The text a rendered frame shows: the task (or how the episode ended), utterances, counts of tasks
        completed, failed and in all, and what `set_overlay` added (plan, belief, waiting, banner)."""
        if self._task is not None:
            task = self._task.text
        elif self._failed:  # never "all tasks done" when one failed
            task = f"(episode over: {self._completed} completed, {self._failed} failed)"
        else:
            task = "(all tasks done)"
        return {"task": task, "utterances": self._last_utterances, "tasks_completed": self._completed,
                "tasks_failed": self._failed, "tasks_total": self.world.n_tasks, **self._overlay}

    @property
    def active_task(self):
        """The task being worked on (evaluation and oracle use only: it holds the ground-truth goal)."""
        return self._task

    def set_overlay(self, **lines: Any) -> None:
        """Extra text for rendered frames (e.g. an agent's current plan and beliefs)."""
        self._overlay.update(lines)

    # ------------------------------------------------------------------ internals
    def _start_task(self) -> list[Utterance]:
        """Announce the next task (after its setup events, which people may report)."""
        self._task = self.world.next_task(self._task_index)
        if self._task is None:
            return []
        utterances = self._tell(list(self._task.setup))
        utterances.append(self.world.announce(self._task))
        return utterances

    def _tell(self, events: list) -> list[Utterance]:
        if not events:
            return []
        # One draw per event whatever the mode, so every mode sees the same episode.
        rng, share, heard = self._speech_rng, self.verbal_share, self.update_mode != "visual"
        told = [rng.random() < share and heard for _ in events]
        self._step_events.extend(zip(events, told))
        return self.world.utterances(events, told)

    def _observation(self, utterances: list[Utterance], result: str, prior: str) -> dict:
        if utterances:
            said = [u.to_obs() for u in utterances]
            self._last_utterances = said
            if all(type(u) is Utterance and type(u.speaker) is str and type(u.text) is str for u in utterances):
                # what _dumps writes for these to_obs() dicts, without its encoder's set-up
                said_json = "[" + ",".join(['{"speaker":' + _quote(u.speaker) + ',"text":' + _quote(u.text) + "}"
                                            for u in utterances]) + "]"
            else:
                said_json = _dumps(said)
        else:
            said_json = "[]"
        world = self.world
        if self.update_mode == "verbal":
            percept = world.self_percept()
            visible = self._no_entities.copy()
        else:
            percept = world.percept()
            visible = world.visible_mask()
        # Worlds return the same dict while nothing changed (and may return an earlier one again, e.g. the
        # robot's own facts when it walks back into a room), so JSON is kept per dict for recent ones.
        cached = self._percept_json.get(id(percept))
        if cached is None or cached[0] is not percept:
            if len(self._percept_json) >= 256:
                self._percept_json.clear()
            cached = self._percept_json[id(percept)] = (percept, _dumps(percept))
        return {"utterances": said_json, "percept": cached[1], "prior": prior, "action_result": result,
                "robot_room": world.robot_room_index(), "visible": visible}

    def _info(self, error: str, task_completed: bool) -> dict:
        task = self._task
        if self._step_events:
            events = [dict(e.to_json(), told=told) for e, told in self._step_events]
            self._step_events = []
        else:
            events = []
        n_tasks = self._n_tasks
        if task is None:
            return {"success": self._completed == n_tasks, "task_completed": task_completed, "task": "",
                    "action_error": error, "tasks_completed": self._completed, "tasks_failed": self._failed,
                    "tasks_total": n_tasks, "task_failure": self._task_failure,
                    "oracle": {"goal": None, "task_kind": None, "events": events}}
        return {"success": self._completed == n_tasks, "task_completed": task_completed, "task": task.text,
                "action_error": error, "tasks_completed": self._completed, "tasks_failed": self._failed,
                "tasks_total": n_tasks, "task_failure": self._task_failure,
                "oracle": {"goal": task.goal, "task_kind": task.kind, "events": events}}


def _execute(world: World, action: Any) -> tuple[str, str]:
    """`world.execute(action)`, except that an action too long to be a skill is refused unread, and an error
    message longer than `MAX_ERROR_CHARS` is cut: `info["action_error"]` quotes only a short excerpt."""
    text = action if isinstance(action, str) else excerpt(action)
    if len(text) > MAX_ACTION_CHARS:
        return "", (f"the action is {len(text):,} characters long; a skill is at most {MAX_ACTION_CHARS:,} "
                    f"(e.g. '(pick-up robot mug_1 table_1 kitchen)'): {excerpt(text)}")
    executed, error = world.execute(text)
    if len(error) > MAX_ERROR_CHARS:
        error = _cut(error)
    return executed, error


def _cut(error: str) -> str:
    """An error message cut to `MAX_ERROR_CHARS`, saying how much was left out."""
    return f"{error[:MAX_ERROR_CHARS - 60]}... ({len(error) - MAX_ERROR_CHARS + 60:,} more characters)"


def make_env(**options: Any) -> ServiceRobotEnv:
    """The registered ids' entry point: `ServiceRobotEnv(**options)`.

    A function rather than the class, so that `gym.make` leaves `render_mode` to the env's own check (it
    reads a class's `metadata` first and fails on a non-string render_mode with a raw AttributeError)."""
    return ServiceRobotEnv(**options)


def _make_world(name: str, options: dict[str, Any], given: set[str]) -> World:
    """Build a world by name from its checked options (`given`: those the caller set, not defaulted)."""
    if name == "household":
        from servicerobot.envs.household.world import HouseholdOptions, HouseholdWorld

        opts = {k: v for k, v in options.items() if k != "size" and v is not None}
        return HouseholdWorld(options["size"], HouseholdOptions(**opts))
    if name == "pybullet":
        from servicerobot.envs.pybullet.world import make_pybullet_world

        return make_pybullet_world(**options)
    if name == "ai2thor":
        from servicerobot.envs.ai2thor.world import make_ai2thor_world

        return make_ai2thor_world(**options)
    from servicerobot.envs.habitat.world import _EXECUTOR_OPTIONS, make_habitat_world

    # camera settings are passed only when set: with simulator='symbolic' they are an error, not a default
    return make_habitat_world(**{k: v for k, v in options.items() if k not in _EXECUTOR_OPTIONS or k in given})
