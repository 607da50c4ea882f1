"""servicerobot: simulation environments and a planner-agent for lifelong, language-driven service robots.

Importing the package registers the Gymnasium ids (``gym.make("ServiceRobot-v0")``).
"""

from gymnasium.envs.registration import register, registry

__version__ = "0.1.0"

# Each id's options and their defaults are declared in servicerobot.envs.options (docs/options.md).
for _id, _world in (("ServiceRobot-v0", "household"), ("ServiceRobot-PyBullet-v0", "pybullet"),
                    ("ServiceRobot-AI2THOR-v0", "ai2thor"), ("ServiceRobot-Habitat-v0", "habitat")):
    if _id not in registry:
        register(id=_id, entry_point="servicerobot.envs.core:make_env", kwargs={"world": _world})
# PDDLGym's environments on our interpreter (docs/pddlgym.md); kwargs: domain, problem_index, test, ...
if "ServiceRobot-PDDLGym-v0" not in registry:
    register(id="ServiceRobot-PDDLGym-v0", entry_point="servicerobot.envs.pddlgym.env:make_env",
             kwargs={"domain": "blocks", "problem_index": None})

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
