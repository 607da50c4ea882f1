"""`ServiceRobot-AI2THOR-v0`: the household core on iTHOR FloorPlans, run by a symbolic or a Unity executor."""

from __future__ import annotations

from typing import Any

from servicerobot.envs.household.world import HouseholdOptions, HouseholdWorld
from servicerobot.envs.world import NodeNeeds
from servicerobot.errors import SceneError
from servicerobot.scenes.ithor import IthorScenes

__all__ = ["CONTROLLERS", "TABLE2_KINDS", "make_ai2thor_world", "node_needs"]

CONTROLLERS = ("symbolic", "unity")
# L3M+P Table II's five kinds (its "clean bed" is the household make_bed): the default on iTHOR.
TABLE2_KINDS = ("pick_place", "wash_dishes", "make_bed", "discard_broken", "keep_cold")


def node_needs(options: dict[str, Any]) -> NodeNeeds:
    """What an episode needs from a cluster node (`NodeNeeds`): the Unity controller, a GPU (its physical id
    goes to `gpu_device`) on a node with the THOR build staged (the `unity` resource); the symbolic one, a CPU."""
    if options.get("controller") == "unity":
        return NodeNeeds(gpu=True, resources=("unity",), gpu_option="gpu_device",
                         why="AI2-THOR's Unity controller renders on a GPU")
    return NodeNeeds()


def make_ai2thor_world(scene: str | list[str] = "FloorPlan1", controller: str = "symbolic", n_tasks: int = 4,
                       event_rate: float | None = None, disturbance_prob: float | None = None,
                       task_kinds=None, n_people: int = 3, size: Any = "default", frame_size: int = 300,
                       platform: str | None = None, gpu_device: int | None = None,
                       local_executable_path: str | None = None, controller_factory=None) -> HouseholdWorld:
    """The world `gym.make("ServiceRobot-AI2THOR-v0", ...)` builds.

    Args:
        scene: a FloorPlan ("FloorPlan1"), a list of them, a group ("kitchens", "living_rooms", "bedrooms",
            "bathrooms") or "all"; one is drawn per episode among those hosting the task kinds.
        controller: "symbolic" (THOR's rules on CPU) or "unity" (the real `ai2thor` Controller, GPU node).
        task_kinds: household kinds iTHOR can host (default: L3M+P Table II's five).
        platform, gpu_device, local_executable_path, controller_factory: Unity controller settings
            (see `UnityThor`).
    """
    if controller not in CONTROLLERS:
        raise SceneError(f"controller must be one of {CONTROLLERS}, got {controller!r}")
    if size not in ("default", None):
        raise SceneError(f"size does not apply to iTHOR scenes (got {size!r}); choose scenes with scene=...")
    kinds = tuple(task_kinds) if task_kinds is not None else TABLE2_KINDS
    source = IthorScenes(scene, kinds, n_people)
    opts: dict[str, Any] = {"n_tasks": n_tasks, "task_kinds": kinds}
    if event_rate is not None:
        opts["event_rate"] = event_rate
    if disturbance_prob is not None:
        opts["disturbance_prob"] = disturbance_prob
    unity_only = {"platform": platform, "gpu_device": gpu_device, "local_executable_path": local_executable_path,
                  "controller_factory": controller_factory}
    if controller == "symbolic":
        from servicerobot.envs.ai2thor.symbolic import SymbolicThor

        given = sorted(k for k, v in unity_only.items() if v is not None)
        if given:
            raise SceneError(f"options {given} are for controller='unity'")
        executor = SymbolicThor(frame_size, frame_size)
    else:
        from servicerobot.envs.ai2thor.unity import UnityThor

        executor = UnityThor(width=frame_size, height=frame_size, **unity_only)
    world = HouseholdWorld(source, HouseholdOptions(**opts), executor=executor)
    world.name = "ai2thor"
    return world
