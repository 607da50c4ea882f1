"""PDDLGym on our stack: its environments on our interpreter, and our household world as a PDDLGym domain.

`gym.make("ServiceRobot-PDDLGym-v0", domain="blocks", problem_index=0)` runs a PDDLGym environment with
PDDLGym's conventions; `export_household` writes the household domain and seeded problems in PDDLGym's
dialect. The `pddlgym` package is needed only for its PDDL files (found without importing it) and for
its own renderers and environments, which the tests and benchmarks compare against.
"""

from servicerobot.envs.pddlgym.env import LiteralSpace, PDDLGymEnv, load_domain, observation_state
from servicerobot.envs.pddlgym.files import (
    PDDLGymDialectError,
    PDDLGymFileError,
    PDDLGymMissingError,
    PDDLGymSpec,
    pddlgym_root,
    registered_domains,
)
from servicerobot.envs.pddlgym.task import (
    Operator,
    PDDLGymDomain,
    PDDLGymTask,
    parse_literal,
)

__all__ = [
    "LiteralSpace",
    "Operator",
    "PDDLGymDialectError",
    "PDDLGymDomain",
    "PDDLGymEnv",
    "PDDLGymFileError",
    "PDDLGymMissingError",
    "PDDLGymSpec",
    "PDDLGymTask",
    "load_domain",
    "observation_state",
    "parse_literal",
    "pddlgym_root",
    "registered_domains",
]
