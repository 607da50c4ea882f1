"""Context Matters: feasible plans for infeasible tasks by goal shifting and relaxation on 3D scene graphs.

`relaxing_plan(world, task, interpreter, planner)` runs Algorithm 1 with an interpreter: `OfflineInterpreter`
(no model: attribute-based shifting, planner-decided relaxation) or `LLMRelaxInterpreter` (a
`LanguageModel` with our prompts). `llmp_plan` (no relaxation) and `delta_plan` (scene pruning, subgoal
decomposition, sequential planning) are the baselines.
"""

from servicerobot.planners.relaxation.baselines import delta_plan, llmp_plan
from servicerobot.planners.relaxation.core import (
    Adjustment,
    Draft,
    RelaxationResult,
    Toolbox,
    build_problem,
    goal_literals,
    ground_plan,
    keep_achievable,
    relaxing_plan,
)
from servicerobot.planners.relaxation.llm import LLMRelaxInterpreter
from servicerobot.planners.relaxation.offline import OfflineInterpreter, attribute_score

__all__ = [
    "Adjustment",
    "Draft",
    "LLMRelaxInterpreter",
    "OfflineInterpreter",
    "RelaxationResult",
    "Toolbox",
    "attribute_score",
    "build_problem",
    "delta_plan",
    "goal_literals",
    "ground_plan",
    "keep_achievable",
    "llmp_plan",
    "relaxing_plan",
]
