"""The PyBullet world: a multi-room apartment in real physics, the robot's skills run by motion planners.

Actions are ground actions of the `tamp-world` domain (`tamp_world.pddl`), e.g. `(goto robot kitchen_table)`,
`(move robot p3 p17)`, `(inspect robot box_2)`, `(pick robot mug_1 kitchen_table)`,
`(place robot mug_1 office_desk)`. The world first checks the action's precondition with the PDDL
interpreter on the true state, then executes it geometrically: base motions by A* over the places graph,
straight segments checked in PyBullet and blocked ones repaired with OMPL's RRT-Connect; inspection needs a
line of sight; grasping is by attachment; placing finds a free spot on the top and lets the item settle.
The true state is then read back from the geometry by `servicerobot.adapters.pybullet.PyBulletAdapter`,
so task success is decided by where things are in the simulator.
"""

from __future__ import annotations

import itertools
import math
from collections.abc import Callable
from dataclasses import dataclass
from importlib import resources

import numpy as np

from servicerobot.adapters.pybullet import PyBulletAdapter, atom_to_triplet
from servicerobot.envs.options import MAX_TASKS
from servicerobot.envs.pybullet.collision import CollisionChecker
from servicerobot.envs.pybullet.layout import (
    INFLATION,
    PRESETS,
    ROBOT,
    Layout,
    LayoutConfig,
    generate_layout,
)
from servicerobot.envs.pybullet.motion import KeepOut, MotionPlanner
from servicerobot.envs.pybullet.sim import Sim
from servicerobot.envs.pybullet.tasks import LANGUAGE, TASK_KINDS, PyBulletTasks
from servicerobot.envs.world import Utterance, World
from servicerobot.errors import ActionError, SceneError
from servicerobot.limits import excerpt
from servicerobot.pddl import Atom, Domain, Interpreter, Problem, parse_domain
from servicerobot.scenes.tamp_map import TampMap

__all__ = ["PyBulletOptions", "PyBulletWorld", "TrueState", "make_pybullet_world", "tamp_world_domain",
           "tamp_world_domain_text"]

_DOMAIN_CACHE: dict[str, Domain] = {}


def tamp_world_domain_text() -> str:
    """The `tamp-world` PDDL domain shipped as package data."""
    return resources.files("servicerobot.envs.pybullet").joinpath("tamp_world.pddl").read_text()


def tamp_world_domain() -> Domain:
    """The parsed `tamp-world` domain (parsed once per process)."""
    if "tamp-world" not in _DOMAIN_CACHE:
        _DOMAIN_CACHE["tamp-world"] = parse_domain(tamp_world_domain_text(), source="tamp_world.pddl")
    return _DOMAIN_CACHE["tamp-world"]


@dataclass(frozen=True)
class PyBulletOptions:
    """How the PyBullet world behaves, beyond the apartment's size.

    Attributes:
        n_tasks: tasks per episode.
        task_kinds: kinds to draw from ("inspect", "pick_place").
        task_order: "random" (each task's kind drawn from `task_kinds`) or "cycle" (in the given order).
        event_rate: chance per step that a person moves an item the task does not name (and says so).
        inspect_budget, pick_place_budget: step budget of a task of each kind.
        rrt_time: time budget of one RRT-Connect repair, seconds.
        drive_step: spacing of the kinematic base poses while driving, metres.
        frame_every: how often (metres driven) `on_substep` is called while driving.
    """

    n_tasks: int = 4
    task_kinds: tuple[str, ...] = TASK_KINDS
    task_order: str = "random"
    event_rate: float = 0.0
    inspect_budget: int = 10
    pick_place_budget: int = 16
    rrt_time: float = 1.0
    drive_step: float = 0.05
    frame_every: float = 0.25

    def __post_init__(self) -> None:
        unknown = [k for k in self.task_kinds if k not in TASK_KINDS]
        if unknown or not self.task_kinds:
            raise SceneError(f"unknown task kinds {unknown}; choose from {list(TASK_KINDS)}")
        if isinstance(self.n_tasks, bool) or not isinstance(self.n_tasks, int) or not 1 <= self.n_tasks <= MAX_TASKS:
            raise SceneError(f"n_tasks must be an integer in [1, {MAX_TASKS}], got {excerpt(self.n_tasks)}")
        if self.task_order not in ("random", "cycle"):
            raise SceneError(f"task_order must be 'random' or 'cycle', got {self.task_order!r}")
        if not 0.0 <= self.event_rate <= 1.0:
            raise SceneError(f"event_rate must be a probability in [0, 1], got {self.event_rate}")


class TrueState:
    """The world's true atoms (`atoms`, replaced on change) and a `version` bumped on every change."""

    def __init__(self) -> None:
        self.atoms: frozenset[Atom] = frozenset()
        self.version = 0

    def __contains__(self, atom: Atom) -> bool:
        return atom in self.atoms

    def held_by(self, holder: str) -> list[str]:
        return sorted(a.args[1] for a in self.atoms if a.predicate == "holding" and a.args[0] == holder)


class PyBulletWorld(World):
    """A seeded apartment in PyBullet (DIRECT mode, CPU only), with inspection and pick-and-place tasks.

    Args:
        size: "small" (2 rooms), "default" (3), "large" (4) or a `LayoutConfig`.
        options: task and execution options.

    Attributes (after `reset`): `layout` (the spec), `tamp_map` (rooms > places > objects), `sim` (the
    PyBullet scene), `adapter`, `checker` (the `CollisionChecker` the TAMP planners accept), `motion`,
    `state` (true atoms), `interpreter`, `last_path` (the last base motion, for rendering).
    `on_substep`, when set, is called while the robot drives (every `options.frame_every` metres), e.g. to
    record video frames in between steps.
    """

    name = "pybullet"
    language = LANGUAGE

    def __init__(self, size: str | LayoutConfig = "default", options: PyBulletOptions | None = None):
        if isinstance(size, str):
            if size not in PRESETS:
                raise SceneError(f"unknown size preset {size!r}; presets are {sorted(PRESETS)}")
            size = PRESETS[size]
        self.config = size
        self.options = options or PyBulletOptions()
        self.domain = tamp_world_domain()
        # Entities the robot can see come first (their order is the `visible` mask's); places follow, up to
        # the config's bound, so the observation spaces are the same for every seed.
        self.max_entities = size.n_entities + size.max_places
        self.n_rooms = size.n_rooms
        self.sim = Sim()
        self.on_substep: Callable[[], None] | None = None
        self.layout: Layout | None = None
        self._renderer = None

    def close(self) -> None:
        """Disconnect the physics client."""
        self.sim.close()

    def __del__(self) -> None:
        sim = getattr(self, "sim", None)
        if sim is not None:
            sim.close()

    @property
    def n_tasks(self) -> int:
        return self.options.n_tasks

    # ------------------------------------------------------------------ episode
    def reset(self, rng: np.random.Generator) -> None:
        layout_rng, task_rng, human_rng, motion_rng = (
            np.random.default_rng(s) for s in np.random.SeedSequence(int(rng.integers(2**63))).spawn(4))
        self.layout = generate_layout(self.config, layout_rng)
        self.tamp_map: TampMap = self.layout.tamp_map
        self.sim.build(self.layout)
        self.adapter = PyBulletAdapter(self.sim, self.layout, self.tamp_map)
        self.checker = CollisionChecker(self.sim)
        w, h = self.layout.extent
        self.motion = MotionPlanner(self.tamp_map, self.checker, (0.0, 0.0, w, h), self.options.rrt_time)
        self._motion_seed = int(motion_rng.integers(2**31))
        self._motions = 0
        self.objects: dict[str, str] = dict(self.adapter.types)
        self.objects.update({name: "place" for name in self.tamp_map.places})
        self.entity_index = {name: i for i, name in enumerate(self.objects)}
        self.room_index = {r.name: i for i, r in enumerate(self.layout.rooms)}
        self.interpreter = Interpreter(self.domain, self.objects)
        self.safe: set[str] = set()
        self.visited: set[str] = {self.tamp_map.start}
        self.last_path: list[tuple[float, float]] = []
        self.last_error = ""
        self.state = TrueState()
        self._percept_cache: tuple[int, dict] | None = None
        self._self_cache: tuple[int, dict] | None = None
        self.refresh()
        opts = self.options
        self.tasks = PyBulletTasks(self, task_rng, human_rng,
                                   {"inspect": opts.inspect_budget, "pick_place": opts.pick_place_budget})
        kinds = opts.task_kinds
        draws = task_rng.integers(len(kinds), size=opts.n_tasks)
        if opts.task_order == "cycle":
            draws = np.arange(opts.n_tasks) % len(kinds)
        self.plan_kinds = [kinds[int(i)] for i in draws]

    def refresh(self) -> None:
        """Re-read the true state from the simulator (after anything moved)."""
        atoms = self.adapter.facts(self.safe, self.visited)
        if atoms != self.state.atoms:
            self.state.atoms = atoms
            self.state.version += 1

    def true_facts(self) -> frozenset[Atom]:
        return self.state.atoms

    def prior(self) -> dict:
        """What the robot is told at the start: every entity (places last) and every initial fact."""
        entities: dict[str, dict] = {ROBOT: {"type": "robot", "noun": "robot"}}
        for r in self.layout.rooms:
            entities[r.name] = {"type": "room", "noun": r.label}
        for f in self.layout.furniture:
            entities[f.name] = {"type": "furniture", "noun": f.kind, "room": f.room}
        for i in self.layout.items:
            entities[i.name] = {"type": i.kind, "noun": i.noun, "colour": i.colour}
        for name, pl in self.tamp_map.places.items():
            entities[name] = {"type": "place", "room": pl.region, "x": pl.centre[0], "y": pl.centre[1]}
        return {"entities": entities, "rooms": {r.name: r.label for r in self.layout.rooms},
                "facts": [atom_to_triplet(a) for a in sorted(self.state.atoms)]}

    # ------------------------------------------------------------------ robot
    def execute(self, action: str) -> tuple[str, str]:
        """Check the action on the true state, then run it in the simulator; (canonical action, error)."""
        if isinstance(action, str) and action.strip().lower() in ("(wait)", "wait"):
            self.last_error = ""
            return "(wait)", ""
        try:
            ground = self.interpreter.parse_action(action)
        except ActionError as exc:
            self.last_error = str(exc)
            return action if isinstance(action, str) else repr(action), str(exc)
        reason = self.interpreter.why_not(ground, self.state.atoms)
        if reason is not None:
            self.last_error = f"{ground} is not applicable: {reason}"
            return str(ground), self.last_error
        error = getattr(self, f"_do_{ground.name}")(*ground.args)
        self.refresh()
        self.last_error = f"{ground} failed: {error}" if error else ""
        return str(ground), self.last_error

    def _keep_out(self) -> tuple[set[str], list[KeepOut]]:
        guards = self.tamp_map.metadata["guards"]
        unsafe = [i for i in self.layout.items if i.suspicious and i.name not in self.safe]
        avoid = {p for i in unsafe for p in guards.get(i.name, ())}
        return avoid, [KeepOut(i.name, i.position, i.radius + INFLATION) for i in unsafe]

    def _drive_to(self, place: str) -> str:
        avoid, keep_out = self._keep_out()
        x, y, _ = self.sim.robot_pose()
        result = self.motion.plan((x, y), place, avoid, keep_out, seed=self._motion_seed + self._motions)
        self._motions += 1
        if result.error:
            return result.error
        self.last_path = result.path
        self._drive(result.path)
        self.visited.add(place)
        return ""

    def _drive(self, path: list[tuple[float, float]]) -> None:
        """Move the base kinematically along `path` (a carried item follows)."""
        step, every = self.options.drive_step, self.options.frame_every
        since = 0.0
        yaw = self.sim.robot_pose()[2]
        for a, b in itertools.pairwise(path):
            length = math.dist(a, b)
            if length < 1e-9:
                continue
            yaw = math.atan2(b[1] - a[1], b[0] - a[0])
            n = max(1, math.ceil(length / step))
            for k in range(1, n + 1):
                t = k / n
                self.sim.set_robot(a[0] + t * (b[0] - a[0]), a[1] + t * (b[1] - a[1]), yaw)
                since += length / n
                if self.on_substep is not None and since >= every:
                    since = 0.0
                    self.on_substep()
        self.sim.set_robot(*path[-1], yaw)

    def _face(self, target: tuple[float, float]) -> None:
        x, y, _ = self.sim.robot_pose()
        self.sim.set_robot(x, y, math.atan2(target[1] - y, target[0] - x))

    def _do_move(self, robot: str, origin: str, to: str) -> str:
        return self._drive_to(to)

    def _do_goto(self, robot: str, target: str) -> str:
        place = self.tamp_map.metadata["approach"][target]
        error = self._drive_to(place)
        if not error:
            self._face(self._xy(target))
        return error

    def _xy(self, name: str) -> tuple[float, float]:
        lo, hi = self.sim.aabb(name)
        return (lo[0] + hi[0]) / 2, (lo[1] + hi[1]) / 2

    def _do_inspect(self, robot: str, item: str) -> str:
        self._face(self._xy(item))
        if not self.adapter.sees([item]):
            return f"{item} is not in line of sight from {self.adapter.robot_place()}"
        self.safe.add(item)
        return ""

    def _do_pick(self, robot: str, item: str, furniture: str) -> str:
        self._face(self._xy(item))
        self.sim.attach(item)
        return ""

    def _do_place(self, robot: str, item: str, furniture: str) -> str:
        x, y, _ = self.sim.robot_pose()
        spot = self.free_spot(item, furniture, near=(x, y))
        if spot is None:
            return f"there is no free space for {item} on {furniture}"
        self._face(spot)
        self.sim.detach(*spot, support=furniture)
        support = self.adapter.support_of(item)
        if support != furniture:
            return f"{item} did not come to rest on {furniture}"
        return ""

    def free_spot(self, item: str, furniture: str, near: tuple[float, float] | None = None,
                  ) -> tuple[float, float] | None:
        """A point on `furniture`'s top where `item` stands clear of the other items (nearest `near`)."""
        f = self.adapter.furniture[furniture]
        spec = self.adapter.items[item]
        margin = spec.half + 0.04
        x0, y0, x1, y1 = f.rect
        if x1 - x0 < 2 * margin or y1 - y0 < 2 * margin:
            return None
        xs = np.arange(x0 + margin, x1 - margin + 1e-9, 0.05)
        ys = np.arange(y0 + margin, y1 - margin + 1e-9, 0.05)
        grid = np.array([(x, y) for x in xs for y in ys])
        ok = np.ones(len(grid), dtype=bool)
        for other in self.adapter.items.values():
            if other.name == item or other.name == self.sim.held:
                continue
            ox, oy = self._xy(other.name)
            if not (x0 - 0.2 <= ox <= x1 + 0.2 and y0 - 0.2 <= oy <= y1 + 0.2):
                continue
            gap = spec.radius + other.radius + 0.05
            ok &= np.hypot(grid[:, 0] - ox, grid[:, 1] - oy) >= gap
        if not ok.any():
            return None
        grid = grid[ok]
        ref = near if near is not None else f.centre
        k = int(np.argmin(np.hypot(grid[:, 0] - ref[0], grid[:, 1] - ref[1])))
        return round(float(grid[k, 0]), 3), round(float(grid[k, 1]), 3)

    # ------------------------------------------------------------------ tasks and people
    def next_task(self, index: int):
        """Task `index` of the episode; another kind stands in when the apartment can't host the drawn one."""
        if index >= len(self.plan_kinds):
            return None
        kind = self.plan_kinds[index]
        for k in [kind] + [k for k in self.options.task_kinds if k != kind]:
            task = self.tasks.sample(k)
            if task is not None and not self.goal_holds(task):
                return task
        return None

    def announce(self, task) -> Utterance:
        return Utterance(task.speaker, task.text, "task")

    def goal_holds(self, task) -> bool:
        """Whether the goal holds in the state read from the simulator's geometry."""
        return self.interpreter.compile_goal(task.goal).holds(self.state.atoms)

    def tick(self, task, step_in_task: int) -> list:
        if self.options.event_rate <= 0.0 or self.tasks.human_rng.random() >= self.options.event_rate:
            return []
        protected = task.entities if task is not None else frozenset()
        held = frozenset(self.state.held_by(ROBOT))
        event = self.tasks.background(protected | held)
        return [event] if event is not None else []

    def utterances(self, events: list, told: list[bool]) -> list[Utterance]:
        return [Utterance(e.actor, e.utterance, "update", (e,)) for e, t in zip(events, told) if t]

    # ------------------------------------------------------------------ perception
    def percept(self) -> dict:
        if self._percept_cache is None or self._percept_cache[0] != self.state.version:
            self._percept_cache = (self.state.version, self.adapter.percept(self.state.atoms))
        return self._percept_cache[1]

    def self_percept(self) -> dict:
        if self._self_cache is None or self._self_cache[0] != self.state.version:
            self._self_cache = (self.state.version, self.adapter.self_percept(self.state.atoms))
        return self._self_cache[1]

    def robot_room_index(self) -> int:
        return self.room_index[self.adapter.robot_room()]

    def visible_mask(self) -> np.ndarray:
        mask = np.zeros(self.max_entities, dtype=np.int8)
        mask[[self.entity_index[e] for e in self.percept()["entities"]]] = 1
        return mask

    # ------------------------------------------------------------------ planning support (oracle only)
    def oracle_problem(self, goal: str) -> Problem:
        """A planning problem over the true state with the places that matter: the robot's place and every
        `approach` place (the sparse problem of hierarchical TAMP)."""
        places = {self.adapter.robot_place(), *self.tamp_map.metadata["approach"].values()}
        objects = {n: t for n, t in self.objects.items() if t != "place" or n in places}
        init = frozenset(a for a in self.state.atoms if all(arg in objects for arg in a.args))
        formula = self.interpreter.compile_goal(goal).formula
        return Problem("oracle", self.domain.name, objects, init, formula)

    # ------------------------------------------------------------------ rendering
    def render_frame(self, overlay: dict, width: int, height: int) -> np.ndarray:
        """An oblique TinyRenderer view of the apartment with the overlay text below."""
        from servicerobot.envs.pybullet.rendering import PyBulletRenderer

        r = self._renderer
        if r is None or r.layout is not self.layout or (r.width, r.height) != (width, height):
            self._renderer = r = PyBulletRenderer(self.sim, self.layout, width, height)
        if "action_result" not in overlay:
            overlay = {**overlay, "action_result": self.last_error or "ok"}
        return r.render(overlay, self.last_path)


def make_pybullet_world(size="default", n_tasks: int = 4, event_rate: float | None = None,
                        task_kinds=None) -> PyBulletWorld:
    """The world `ServiceRobotEnv(world="pybullet", ...)` builds, from options checked against its spec
    (`servicerobot.envs.options`: household-only options such as `disturbance_prob` are refused there).

    Pass a `PyBulletWorld(size, PyBulletOptions(...))` to `ServiceRobotEnv(world=...)` for the other options.
    """
    opts: dict = {"n_tasks": n_tasks}
    if event_rate is not None:
        opts["event_rate"] = event_rate
    if task_kinds is not None:
        opts["task_kinds"] = tuple(task_kinds)
    return PyBulletWorld(size, PyBulletOptions(**opts))
