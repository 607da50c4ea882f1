"""`ServiceRobot-Habitat-v0`: the household world on Gibson 3D scene graphs, symbolic or in habitat-sim."""

from __future__ import annotations

from typing import Any

from servicerobot.envs.habitat.hosting import HostingScenes
from servicerobot.envs.household.world import HouseholdOptions, HouseholdWorld
from servicerobot.envs.world import NodeNeeds
from servicerobot.errors import SceneError
from servicerobot.scenes.gibson import GibsonScenes

__all__ = ["SIMULATORS", "make_habitat_world", "node_needs"]

SIMULATORS = ("symbolic", "habitat")
_EXECUTOR_OPTIONS = ("width", "height", "render_width", "render_height", "headings", "pitch", "hfov",
                     "min_pixels", "max_range", "gpu_device_id", "camera_height", "inspect")


def node_needs(options: dict[str, Any]) -> NodeNeeds:
    """What an episode needs from a cluster node (`NodeNeeds`): habitat-sim, a node where it is installed (the
    `habitat` resource), and with `gpu_device_id` >= 0 a GPU there (its physical id replaces the configured
    one); the symbolic simulator, a CPU."""
    if options.get("simulator") != "habitat":
        return NodeNeeds()
    gpu = options.get("gpu_device_id")
    if gpu is not None and gpu >= 0:
        return NodeNeeds(gpu=True, resources=("habitat",), gpu_option="gpu_device_id",
                         why="habitat-sim with gpu_device_id >= 0 renders on a GPU")
    return NodeNeeds(resources=("habitat",), why="habitat-sim (simulator='habitat') is installed only where staged")


def make_habitat_world(size: Any = "default", n_tasks: int | None = None, event_rate: float | None = None,
                       disturbance_prob: float | None = None, task_kinds=None, scene_graph: Any = None,
                       simulator: str = "symbolic", n_people: int = 4, n_rooms: int | None = None,
                       connectivity: str = "auto", **executor_options: Any) -> HouseholdWorld:
    """The world `gym.make("ServiceRobot-Habitat-v0", ...)` builds.

    Args:
        scene_graph: a 3DSG `.npz` / Context Matters `.json` path (or a list of them, one drawn per
            episode), a `SceneGraph3D`, or None for a freshly generated Gibson-like building per episode.
        simulator: "symbolic" (the PDDL interpreter alone) or "habitat" (habitat-sim executes and perceives).
        n_people, n_rooms (generated buildings only), connectivity ("auto" | "adjacency" | "full").
        task_kinds: the task kinds to ask for (default all); a given building that can host none of them (no
            bed for make_bed, no washer and dryer for laundry...) raises `SceneError`, and generated buildings
            are drawn again until they host them (`envs.habitat.hosting`).
        executor_options: the habitat executor's camera and perception settings (`HabitatExecutor`).
    """
    if simulator not in SIMULATORS:
        raise SceneError(f"simulator must be one of {SIMULATORS}, got {simulator!r}")
    if size not in ("default", None):
        raise SceneError(f"the habitat world takes no size preset ({size!r}); give n_rooms or a scene_graph")
    unknown = sorted(set(executor_options) - set(_EXECUTOR_OPTIONS))
    if unknown:
        raise SceneError(f"unknown option(s) {unknown} for the habitat world; executor options are "
                         f"{list(_EXECUTOR_OPTIONS)}")
    if executor_options and simulator != "habitat":
        raise SceneError(f"options {sorted(executor_options)} need simulator='habitat'")
    if scene_graph is not None and n_rooms is not None:
        raise SceneError("n_rooms is for generated buildings; it cannot resize a given scene_graph")
    if task_kinds is None:
        source = GibsonScenes(scene_graph, n_people=n_people, n_rooms=n_rooms, connectivity=connectivity)
    else:  # the buildings must host the kinds asked for (a bed to make...): refused or drawn again, not taskless
        HouseholdOptions(task_kinds=tuple(task_kinds))  # unknown kinds: the options' own error first
        source = HostingScenes(scene_graph, task_kinds, n_people=n_people, n_rooms=n_rooms,
                               connectivity=connectivity)
    opts = {"n_tasks": n_tasks, "event_rate": event_rate, "disturbance_prob": disturbance_prob,
            "task_kinds": tuple(task_kinds) if task_kinds is not None else None}
    options = HouseholdOptions(**{k: v for k, v in opts.items() if v is not None})
    executor = None
    if simulator == "habitat":
        from servicerobot.envs.habitat.executor import HabitatExecutor, import_habitat_sim

        import_habitat_sim()  # fail at construction, with the install hint, not at the first reset
        executor = HabitatExecutor(**executor_options)
    world = HouseholdWorld(source, options, executor=executor)
    world.name = "habitat" if simulator == "habitat" else "gibson"
    return world
