"""servicerobot: simulation environments and a planner-agent for lifelong, language-driven service robots.

Importing the package registers the Gymnasium ids (``gym.make("ServiceRobot-v0")``).
"""

from gymnasium.envs.registration import register, registry

__version__ = "0.1.0"

if "ServiceRobot-v0" not in registry:
    register(id="ServiceRobot-v0", entry_point="servicerobot.envs.core:ServiceRobotEnv",
             kwargs={"world": "household"})
if "ServiceRobot-PyBullet-v0" not in registry:
    register(id="ServiceRobot-PyBullet-v0", entry_point="servicerobot.envs.core:ServiceRobotEnv",
             kwargs={"world": "pybullet", "size": "default", "update_mode": "both", "n_tasks": 4,
                     "event_rate": 0.02, "width": 320, "height": 240})
if "ServiceRobot-AI2THOR-v0" not in registry:
    register(id="ServiceRobot-AI2THOR-v0", entry_point="servicerobot.envs.core:ServiceRobotEnv",
             kwargs={"world": "ai2thor", "scene": "FloorPlan1", "controller": "symbolic", "update_mode": "both",
                     "n_tasks": 4, "event_rate": 0.02, "width": 480, "height": 480})
if "ServiceRobot-Habitat-v0" not in registry:
    register(id="ServiceRobot-Habitat-v0", entry_point="servicerobot.envs.core:ServiceRobotEnv",
             kwargs={"world": "habitat", "scene_graph": None, "simulator": "symbolic", "update_mode": "both",
                     "n_tasks": 4, "event_rate": 0.02, "width": 320, "height": 240})

__all__ = ["ServiceAgent", "__version__"]


_SUBMODULES = frozenset({"adapters", "agent", "cli", "envs", "errors", "experiments", "files", "language",
                         "memory", "oracle", "pddl", "planners", "scenes"})


def __getattr__(name: str):
    # The agent pulls in planners and memory; import it (and any subpackage) only when asked for.
    if name == "ServiceAgent":
        from servicerobot.agent import ServiceAgent

        return ServiceAgent
    if name in _SUBMODULES:
        import importlib

        return importlib.import_module(f"servicerobot.{name}")
    raise AttributeError(f"module 'servicerobot' has no attribute {name!r}")
