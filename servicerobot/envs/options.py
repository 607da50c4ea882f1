"""The options of every world, declared once: name, type, allowed range, default and meaning.

`gym.make(id, **options)` checks its options here before it allocates anything (a bad one raises
`OptionError` naming it and its allowed range), experiment configs check their env kwargs here, and
`docs/options.md` is written from these tables (`python -m servicerobot.envs.options > docs/options.md`).
Checks across options (e.g. camera settings need `simulator='habitat'`) stay in each world's factory,
which runs right after these and still before any allocation.
"""

from __future__ import annotations

import math
import numbers
import os
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from servicerobot.errors import SceneError
from servicerobot.limits import excerpt

__all__ = ["ENV_OPTIONS", "MAX_TASKS", "OWN_TABLES", "WORLDS", "WORLD_IDS", "Option", "OptionError", "check_env_options", "check_make_options",
           "check_options", "defaults",
           "options_markdown", "world_options"]

MAX_TASKS = 1000  # tasks per episode: each takes steps; 10**9 of them is a typo, not an experiment
MAX_FRAME = 4096  # pixels per side of a rendered or sensed image
MAX_LIST = 1000  # items in a list option (scenes, scene graphs, task kinds)


class OptionError(SceneError):
    """A world option has the wrong type or is out of range; the message names it and what it may be."""


@dataclass(frozen=True)
class Option:
    """One option: its `kind` ("int", "float", "bool", "choice", "kinds", "text", "path", "callable" or
    "custom"), the closed range [`low`, `high`] of a number, the `choices` of a choice or of a list of
    kinds, whether None is allowed, and the text of its allowed values and meaning for messages and docs."""

    name: str
    kind: str
    default: Any
    meaning: str
    low: float | None = None
    high: float | None = None
    choices: tuple = ()
    none_ok: bool = False
    allowed_text: str = ""  # for "custom" options: what may be given
    validate: Callable[[Any], Any] | None = None  # for "custom" options: returns the value or raises ValueError

    def allowed(self) -> str:
        """What this option may be, in words ("an integer in [1, 1000]")."""
        if self.kind == "int":
            text = f"an integer in [{self.low:g}, {self.high:g}]"
        elif self.kind == "float":
            text = f"a number in [{self.low:g}, {self.high:g}]"
        elif self.kind == "bool":
            text = "true or false"
        elif self.kind == "choice":
            text = "one of " + ", ".join(repr(c) for c in self.choices)
        elif self.kind == "kinds":
            text = "a non-empty list of " + ", ".join(repr(c) for c in self.choices)
        elif self.kind == "text":
            text = "a non-empty string"
        elif self.kind == "path":
            text = "a file path"
        elif self.kind == "callable":
            text = "a callable"
        else:
            text = self.allowed_text
        return text + (" or None" if self.none_ok and self.kind != "custom" else "")

    def check(self, value: Any, world: str) -> Any:
        """`value` in canonical form (a tuple for a list, a float for a number), or `OptionError`."""
        if value is None and self.none_ok:
            return None
        try:
            return self._check(value)
        except (ValueError, TypeError) as exc:
            why = f" ({exc})" if str(exc) else ""
            raise OptionError(f"{self.name} must be {self.allowed()}, got {excerpt(value)}{why} "
                              f"[{world} world: {self.meaning}]") from None

    def _check(self, value: Any) -> Any:
        kind = self.kind
        if kind == "int":
            if isinstance(value, bool) or not isinstance(value, numbers.Integral):
                raise TypeError("")
            value = int(value)
            if not self.low <= value <= self.high:
                raise ValueError("")
            return value
        if kind == "float":
            if isinstance(value, bool) or not isinstance(value, numbers.Real):
                raise TypeError("")
            value = float(value)
            if not (math.isfinite(value) and self.low <= value <= self.high):
                raise ValueError("")
            return value
        if kind == "bool":
            if not isinstance(value, bool):
                raise TypeError("")
            return value
        if kind == "choice":
            for choice in self.choices:
                if type(value) is type(choice) and value == choice:
                    return choice
            raise ValueError("")
        if kind == "kinds":
            if not isinstance(value, (list, tuple)) or not value or len(value) > MAX_LIST:
                raise TypeError("")
            bad = [k for k in value if not (isinstance(k, str) and k in self.choices)]
            if bad:
                raise ValueError(f"unknown task kinds {excerpt(bad)}")
            return tuple(value)
        if kind == "text":
            if not isinstance(value, str) or not value or len(value) > 4096:
                raise TypeError("")
            return value
        if kind == "path":
            if not isinstance(value, (str, os.PathLike)) or not os.fspath(value) or len(os.fspath(value)) > 4096:
                raise TypeError("")
            return value
        if kind == "callable":
            if not callable(value):
                raise TypeError("")
            return value
        return self.validate(value)


# ---------------------------------------------------------------------------------------------- validators
def _household_size(value: Any) -> Any:
    from servicerobot.scenes.household import PRESETS, HouseholdConfig
    from servicerobot.scenes.source import SceneSource

    if isinstance(value, str) and value in PRESETS or isinstance(value, (HouseholdConfig, SceneSource)):
        return value
    raise ValueError("")


def _pybullet_size(value: Any) -> Any:
    from servicerobot.envs.pybullet.layout import PRESETS, LayoutConfig

    if isinstance(value, str) and value in PRESETS or isinstance(value, LayoutConfig):
        return value
    raise ValueError("")


_ITHOR_GROUPS = ("kitchens", "living_rooms", "bedrooms", "bathrooms", "all")


def _ithor_scene(value: Any) -> Any:
    from servicerobot.scenes.ithor import FLOORPLANS

    if isinstance(value, str):
        if value in _ITHOR_GROUPS or value in FLOORPLANS:
            return value
        raise ValueError(f"unknown iTHOR scene {excerpt(value)}")
    if isinstance(value, (list, tuple)) and value and len(value) <= MAX_LIST:
        bad = [v for v in value if not (isinstance(v, str) and v in FLOORPLANS)]
        if bad:
            raise ValueError(f"unknown iTHOR scene {excerpt(bad[0])}")
        return tuple(value)
    raise TypeError("")


def _scene_graph(value: Any) -> Any:
    from servicerobot.scenes.gibson import SceneGraph3D

    def one(v: Any) -> bool:
        return isinstance(v, SceneGraph3D) or (isinstance(v, (str, os.PathLike)) and 0 < len(os.fspath(v)) <= 4096)

    if one(value):
        return value
    if isinstance(value, (list, tuple)) and value and len(value) <= MAX_LIST and all(one(v) for v in value):
        return list(value)
    raise TypeError("")


def _pitch(value: Any) -> Any:
    values = value if isinstance(value, (list, tuple)) else [value]
    if not values or len(values) > 16 or not all(
            isinstance(v, numbers.Real) and not isinstance(v, bool) and abs(float(v)) <= math.pi / 2 for v in values):
        raise ValueError("")
    return value if not isinstance(value, list) else tuple(value)


def _fixed(*allowed: Any) -> Callable[[Any], Any]:
    def check(value: Any) -> Any:
        if any(value is a or (type(value) is type(a) and value == a) for a in allowed):
            return value
        raise ValueError("")

    return check


# ---------------------------------------------------------------------------------------------- the tables
def _env_options(update_mode: str, width: int, height: int) -> tuple[Option, ...]:
    """Options of `ServiceRobotEnv` itself (every world), with a world's defaults."""
    return (
        Option("update_mode", "choice", update_mode, "how people's changes reach the robot: 'verbal' (only told), "
               "'visual' (only seen), 'both'", choices=("verbal", "visual", "both")),
        Option("verbal_share", "float", 1.0, "share of human events that people report", low=0.0, high=1.0),
        Option("step_cost", "float", 0.01, "reward subtracted every step", low=0.0, high=1000.0),
        Option("invalid_penalty", "float", 0.1, "reward subtracted for an action that fails", low=0.0, high=1000.0),
        Option("render_mode", "choice", None, "'rgb_array' for `render()` frames, None for none",
               choices=("rgb_array",), none_ok=True),
        # 128 x 64 is the smallest frame every renderer draws (the text panel needs 128 pixels across)
        Option("width", "int", width, "rendered frame width, pixels", low=128, high=MAX_FRAME),
        Option("height", "int", height, "rendered frame height, pixels", low=64, high=MAX_FRAME),
    )


ENV_OPTIONS = tuple(o.name for o in _env_options("verbal", 640, 480))


def _tasks(event_rate: float) -> tuple[Option, ...]:
    return (
        Option("n_tasks", "int", 4, "tasks per episode, announced one after another", low=1, high=MAX_TASKS),
        Option("event_rate", "float", event_rate, "chance per step of a background human event", low=0.0, high=1.0),
    )


def _household_kinds() -> tuple[str, ...]:
    from servicerobot.envs.household.tasks import TASK_KINDS

    return TASK_KINDS


def _people() -> int:
    from servicerobot.scenes.vocabulary import PEOPLE_NAMES

    return len(PEOPLE_NAMES)


def _build() -> dict[str, tuple[Option, ...]]:
    from servicerobot.envs.pybullet.tasks import TASK_KINDS as PYBULLET_KINDS
    from servicerobot.scenes.gibson import MAX_GENERATED_ROOMS
    from servicerobot.scenes.ithor import HOSTED_TASK_KINDS

    disturbance = Option("disturbance_prob", "float", 0.6, "chance that a task gets a disturbance (a person "
                         "moves something it needs)", low=0.0, high=1.0)
    household_kinds = Option("task_kinds", "kinds", None, "the task kinds drawn from (None: all)",
                             choices=_household_kinds(), none_ok=True)
    n_people = _people()
    return {
        "household": (
            Option("size", "custom", "default", "the generated home's size",
                   allowed_text="one of the presets 'small', 'default', 'large', a HouseholdConfig or a SceneSource",
                   validate=_household_size),
            *_tasks(0.05), disturbance, household_kinds,
            *_env_options("verbal", 640, 480),
        ),
        "pybullet": (
            Option("size", "custom", "default", "the apartment's size (2, 3 or 4 rooms)",
                   allowed_text="one of the presets 'small', 'default', 'large' or a LayoutConfig", validate=_pybullet_size),
            *_tasks(0.02),
            Option("task_kinds", "kinds", None, "the task kinds drawn from (None: both)", choices=PYBULLET_KINDS,
                   none_ok=True),
            *_env_options("both", 320, 240),
        ),
        "ai2thor": (
            Option("scene", "custom", "FloorPlan1", "the iTHOR FloorPlan(s) drawn from, one per episode",
                   allowed_text="a FloorPlan name (FloorPlan1-30 kitchens, 201-230 living rooms, 301-330 bedrooms, "
                                "401-430 bathrooms), 'kitchens', 'living_rooms', 'bedrooms', 'bathrooms', 'all', "
                                "or a non-empty list of FloorPlan names", validate=_ithor_scene),
            Option("controller", "choice", "symbolic", "'symbolic' (THOR's rules on CPU) or 'unity' (the ai2thor "
                   "Controller; needs a GPU node)", choices=("symbolic", "unity")),
            *_tasks(0.02), disturbance,
            Option("task_kinds", "kinds", None, "the task kinds drawn from (None: L3M+P Table II's five)",
                   choices=HOSTED_TASK_KINDS, none_ok=True),
            Option("n_people", "int", 3, "people living there (THOR has none: they exist symbolically)",
                   low=1, high=n_people),
            Option("size", "custom", "default", "not used: choose scenes with `scene`",
                   allowed_text="'default' or None (iTHOR scenes have no size preset; choose scenes with scene=...)",
                   validate=_fixed("default", None)),
            Option("frame_size", "int", 300, "side of the executor's square camera frame, pixels", low=64,
                   high=MAX_FRAME),
            Option("platform", "text", None, "Unity only: the ai2thor platform (e.g. 'CloudRendering')",
                   none_ok=True),
            Option("gpu_device", "int", None, "Unity only: the GPU to render on", low=0, high=255, none_ok=True),
            Option("local_executable_path", "path", None, "Unity only: a local THOR build to run", none_ok=True),
            Option("controller_factory", "callable", None, "Unity only: builds the Controller (tests, custom set-ups)",
                   none_ok=True),
            *_env_options("both", 480, 480),
        ),
        "habitat": (
            Option("scene_graph", "custom", None, "the building(s): a 3DSG .npz or Context Matters .json (one drawn "
                   "per episode from a list), or None for a generated Gibson-like building per episode",
                   allowed_text="None, a file path, a SceneGraph3D, or a non-empty list of those",
                   validate=_scene_graph),
            Option("simulator", "choice", "symbolic", "'symbolic' (the PDDL interpreter alone) or 'habitat' "
                   "(habitat-sim executes and perceives)", choices=("symbolic", "habitat")),
            *_tasks(0.02), disturbance, household_kinds,
            Option("n_people", "int", 4, "people living there", low=1, high=n_people),
            Option("n_rooms", "int", None, "rooms of a generated building (None: 8); not with scene_graph",
                   low=2, high=MAX_GENERATED_ROOMS, none_ok=True),
            Option("connectivity", "choice", "auto", "which rooms doors join: 'auto', 'adjacency' (touching rooms) "
                   "or 'full'", choices=("auto", "adjacency", "full")),
            Option("size", "custom", "default", "not used: give n_rooms or a scene_graph",
                   allowed_text="'default' or None (the habitat world takes no size preset; give n_rooms or a "
                                "scene_graph)", validate=_fixed("default", None)),
            Option("render_width", "int", 320, "habitat only: width of rendered frames, pixels", low=128,
                   high=MAX_FRAME),
            Option("render_height", "int", 240, "habitat only: height of rendered frames, pixels", low=64,
                   high=MAX_FRAME),
            Option("headings", "int", 4, "habitat only: camera headings looked at per perception", low=1, high=64),
            Option("pitch", "custom", (-0.3, -0.9), "habitat only: camera tilt(s), radians",
                   allowed_text="a number or a list of up to 16 numbers in [-pi/2, pi/2]", validate=_pitch),
            Option("hfov", "float", 90.0, "habitat only: horizontal field of view, degrees", low=1.0, high=179.0),
            Option("min_pixels", "int", 2, "habitat only: pixels an object must cover to be seen", low=1,
                   high=MAX_FRAME * MAX_FRAME),
            Option("max_range", "float", 8.0, "habitat only: farthest distance seen, metres", low=0.1, high=1000.0),
            Option("gpu_device_id", "int", -1, "habitat only: GPU for rendering (-1: none)", low=-1, high=255),
            Option("camera_height", "float", 1.5, "habitat only: camera height, metres (below the 2.6 m walls)",
                   low=0.2, high=2.4),
            Option("inspect", "bool", True, "habitat only: open receptacles to look inside"),
            *_env_options("both", 320, 240),
        ),
    }


def _pddlgym_options() -> tuple[Option, ...]:
    """`ServiceRobot-PDDLGym-v0`'s options (not a world of `ServiceRobotEnv`: an env of its own)."""
    return (
        Option("domain", "text", "blocks", "a domain name as pddlgym registers it ('blocks', 'sokoban', ...)"),
        Option("problem_index", "int", None, "fix the problem (index in the sorted problem files); None: one per "
               "reset, as pddlgym draws it", low=0, high=MAX_PROBLEMS - 1, none_ok=True),
        Option("test", "bool", False, "use the domain's `_test` problems (pddlgym's `PDDLEnv<Name>Test-v0`)"),
        Option("operators_as_actions", "bool", None, "the operators are the actions (None: as pddlgym registers "
               "the domain)", none_ok=True),
        Option("dynamic_action_space", "bool", None, "`action_space.sample(obs)` draws only literals that change "
               "the state (None: as pddlgym registers the domain)", none_ok=True),
        Option("domain_file", "path", None, "a domain file outside pddlgym (then `domain` is ignored)", none_ok=True),
        Option("problem_dir", "path", None, "the folder of problem files for `domain_file` (None: the domain "
               "file's path without `.pddl`)", none_ok=True),
        Option("render_mode", "choice", None, "'ansi' (the literals as text), 'rgb_array' (a drawing) or None",
               choices=("ansi", "rgb_array"), none_ok=True),
    )


MAX_PROBLEMS = 100_000  # problem files in one folder

WORLDS = ("household", "pybullet", "ai2thor", "habitat")
WORLD_IDS = {"household": "ServiceRobot-v0", "pybullet": "ServiceRobot-PyBullet-v0",
             "ai2thor": "ServiceRobot-AI2THOR-v0", "habitat": "ServiceRobot-Habitat-v0"}  # registered ids
# registered ids that are envs of their own (not `ServiceRobotEnv` worlds): id -> the name of their table
OWN_TABLES = {"ServiceRobot-PDDLGym-v0": "pddlgym"}
_TABLES: dict[str, tuple[Option, ...]] = {}


def world_options(world: str) -> tuple[Option, ...]:
    """The option spec of `world` (one of `WORLDS`, or a table of `OWN_TABLES`: "pddlgym")."""
    if not _TABLES:
        _TABLES.update(_build(), pddlgym=_pddlgym_options())
    if world not in _TABLES:
        raise OptionError(f"unknown world {excerpt(world)}; available: {list(WORLDS)}")
    return _TABLES[world]


def check_env_options(options: dict[str, Any]) -> dict[str, Any]:
    """The env's own options (for an env given a `World` object), checked, with the others at their defaults."""
    spec = {o.name: o for o in _env_options("verbal", 640, 480)}
    unknown = sorted(str(k) for k in options if k not in spec)
    if unknown:
        shown = ", ".join(excerpt(k, 40) for k in unknown[:10]) + (" ..." if len(unknown) > 10 else "")
        raise OptionError(f"options [{shown}] are for a world built by name; pass "
                          f"them to the world object instead (the env itself takes {sorted(spec)})")
    out = {name: o.default for name, o in spec.items()}
    for name, value in options.items():
        out[name] = spec[name].check(value, "any")
    return out


def defaults(world: str) -> dict[str, Any]:
    """Every option of `world` at its default."""
    return {o.name: o.default for o in world_options(world)}


def check_options(world: str, options: dict[str, Any]) -> dict[str, Any]:
    """`options` checked against `world`'s spec, in canonical form, with every other option at its default.

    Raises:
        OptionError: an unknown option (all of them are named, with the known ones), or a bad value (named,
            with its allowed range and meaning).
    """
    spec = {o.name: o for o in world_options(world)}
    unknown = sorted(str(k) for k in options if k not in spec)
    if unknown:
        shown = ", ".join(excerpt(k, 40) for k in unknown[:10]) + (" ..." if len(unknown) > 10 else "")
        raise OptionError(f"unknown option(s) [{shown}] for the {world} world; its "
                          f"options are {sorted(spec)} (see docs/options.md)")
    out = {name: o.default for name, o in spec.items()}
    for name, value in options.items():
        out[name] = spec[name].check(value, world)
    return out


def check_make_options(env_id: str, kwargs: dict[str, Any]) -> dict[str, Any]:
    """What `gym.make(env_id, **kwargs)` checks first: the options of the id's world (or of `kwargs["world"]`),
    or of the id's own table (`OWN_TABLES`)."""
    import gymnasium as gym

    if env_id in OWN_TABLES:
        return check_options(OWN_TABLES[env_id], kwargs)
    world = {**gym.spec(env_id).kwargs, **kwargs}.get("world", "household")
    if not isinstance(world, str):
        return check_env_options({k: v for k, v in kwargs.items() if k != "world"})
    return check_options(world, {k: v for k, v in kwargs.items() if k != "world"})


def options_markdown() -> str:
    """docs/options.md: one table per world, written from the spec."""
    lines = ["# Environment options", "",
             "<!-- Written by `python -m servicerobot.envs.options > docs/options.md` from",
             "     servicerobot/envs/options.py; tests/test_hostile_options.py checks that they match. -->", "",
             "Every option `gym.make` takes, per world. A value outside its range raises `OptionError` (a",
             "`SceneError`) naming the option, what it may be and what it means, before anything is built;",
             "experiment configs check their env `kwargs` the same way when they load.", ""]
    titles = [(f"`{WORLD_IDS[world]}` ({world} world)", world) for world in WORLDS]
    titles += [(f"`{env_id}` ({table}: an env of its own)", table) for env_id, table in OWN_TABLES.items()]
    for title, table in titles:
        lines += [f"## {title}", "", "| option | default | allowed | meaning |", "|---|---|---|---|"]
        for o in world_options(table):
            default = "None" if o.default is None else repr(o.default)
            lines.append(f"| `{o.name}` | `{default}` | {o.allowed()} | {o.meaning} |".replace("\n", " "))
        lines.append("")
    return "\n".join(lines)


if __name__ == "__main__":
    print(options_markdown(), end="")
