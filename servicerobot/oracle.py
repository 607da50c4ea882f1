"""The oracle agent: plans with Fast Downward on the *true* state. The upper bound of every experiment.

It reads the world through `env.unwrapped` (the true state and the active task's ground-truth goal),
which no real agent may do. It proves that generated tasks are solvable and bounds success rates.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from servicerobot.envs.evaluation import relevant_problem  # re-exported: the oracle plans on it
from servicerobot.planners import FastDownward, Planner

__all__ = ["OracleAgent", "relevant_problem"]


@dataclass
class OracleAgent:
    """Plans on the true state and replans whenever the rest of its plan no longer reaches the goal."""

    env: object
    planner: Planner = field(default_factory=lambda: FastDownward(alias="lama-first", timeout=60.0))
    plan: list[str] = field(default_factory=list)
    replans: int = 0
    planning_time: float = 0.0
    failures: int = 0

    @classmethod
    def from_env(cls, env, planner: Planner | None = None) -> OracleAgent:
        return cls(env, planner) if planner is not None else cls(env)

    def act(self, obs=None) -> str:
        """The next action of a plan that reaches the active goal from the true state."""
        base = self.env.unwrapped
        task = base.active_task
        if task is None:
            return "(wait)"
        world = base.world
        if not self._plan_still_works(world, task.goal):
            self._replan(world, task.goal)
        return self.plan.pop(0) if self.plan else "(wait)"

    def _plan_still_works(self, world, goal: str) -> bool:
        if not self.plan:
            return False
        interp = world.interpreter
        state = world.state.atoms
        for text in self.plan:
            action = interp.parse_action(text)
            if not interp.applicable(action, state):
                return False
            state = interp.apply(action, state)
        return interp.compile_goal(goal).holds(state)

    def _replan(self, world, goal: str) -> None:
        # A world may build its own (sparse) oracle problem; the household one is pruned here.
        problem = world.oracle_problem(goal) if hasattr(world, "oracle_problem") else relevant_problem(world, goal)
        result = self.planner.solve(world.domain, problem)
        self.replans += 1
        self.planning_time += result.total_time
        if result.solved:
            self.plan = list(result.plan)
        else:
            self.failures += 1
            self.plan = []
