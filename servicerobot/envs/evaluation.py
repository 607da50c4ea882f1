"""Evaluation on the true state of a world: the problem a goal poses there, and a generated goal scored
against the task's true goal (Planetarium's parseable / solvable / correct).

This is ground truth for evaluation, like `info["oracle"]`: the oracle agent, the experiment runner and the
paraphrase benchmark all use it, so it lives with the worlds, below them. It never plans: the solvable check
takes a `solve` function from the caller (`servicerobot.experiments.episode.GoalScorer` passes Fast Downward).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence

from servicerobot.pddl import Domain, Problem
from servicerobot.pddl.goal_compilation import conjunctive_goal, goal_names
from servicerobot.scenes.household import ROBOT

__all__ = ["GoalScorer", "Solve", "relevant_problem"]

# (domain, problem) -> a plan, or None when none was found
Solve = Callable[[Domain, Problem], "Sequence[str] | None"]


def relevant_problem(world, goal: str) -> Problem:
    """A planning problem over the true state, pruned to the items the goal depends on.

    Every room, fixture and person is kept; items are kept when the goal names them, when they make the
    ground goal false now, or when the robot holds them. In the household domain the robot can only
    change an item it acts on, so items left out keep satisfying the goal: the pruning is sound. A world that
    builds its own problem (`oracle_problem(goal)`: PyBullet's sparse places) is asked for it instead.
    """
    if hasattr(world, "oracle_problem"):
        return world.oracle_problem(goal)
    scene, state = world.scene, world.state
    compiled = world.interpreter.compile_goal(goal)
    keep_items = goal_names(goal, compiled, state.atoms) | set(state.held_by(ROBOT))
    objects = {name: e.pddl_type for name, e in scene.entities.items()
               if e.pos is not None or e.pddl_type in ("room", "person", "robot") or name in keep_items}
    init = frozenset(a for a in state.atoms if all(arg in objects for arg in a.args))
    goal_formula = conjunctive_goal(world.domain, compiled.formula, objects, init)
    return Problem("oracle", "household", objects, init, goal_formula)


class GoalScorer:
    """Planetarium's verdicts on the agent's goal against the task's true goal, on the true state now.

    `correct` compares the goals as written (quantifiers expanded by the equivalence check). `solvable`
    (only with `solve`) asks `solve` for a plan to a conjunction that implies the agent's goal (quantified
    goals would make a planner's translator slow) and VAL to accept that plan for the goal as written. A goal
    whose DNF is too large for the equivalence check counts as correct only when it is the true goal word for
    word (`decided: false` marks a "not correct" that was not proved).
    """

    def __init__(self, world, check_solvable: bool = True, timeout: float = 10.0, solve: Solve | None = None):
        if check_solvable and solve is None:
            raise ValueError("GoalScorer(check_solvable=True) needs a solve function (domain, problem) -> plan; "
                             "servicerobot.experiments.episode.GoalScorer passes Fast Downward")
        self.world = world
        self.check_solvable = check_solvable
        self.timeout = timeout
        self.solve = solve

    def score(self, agent_goal: str | None, true_goal: str) -> dict:
        """{agent, true, parseable, solvable, correct} (and `decided` when the goals were too large to compare)."""
        from servicerobot.errors import PDDLSemanticError
        from servicerobot.pddl.equivalence import GoalTooComplexError, evaluate

        out = {"agent": agent_goal, "true": true_goal, "parseable": False, "solvable": False, "correct": False}
        if not agent_goal:
            return out
        interp = self.world.interpreter
        try:
            agent_formula = interp.compile_goal(agent_goal).formula
        except Exception:  # noqa: BLE001 - any failure on generated text means "not parseable"
            return out
        # One problem (objects, init) for both goals, so equivalence judges the goals alone.
        try:
            base = relevant_problem(self.world, f"(and {agent_goal} {true_goal})")
        except PDDLSemanticError:  # the goals contradict each other (a model wrote (not (cold x))): not equal
            out.update(parseable=True)
            if self.check_solvable:
                try:
                    alone = relevant_problem(self.world, agent_goal)
                except PDDLSemanticError:
                    return out
                out["solvable"] = self._solvable(Problem("agent", alone.domain_name, alone.objects, alone.init,
                                                         agent_formula))
            return out
        true_formula = interp.compile_goal(true_goal).formula
        source = Problem("agent", base.domain_name, base.objects, base.init, agent_formula)
        target = Problem("truth", base.domain_name, base.objects, base.init, true_formula)
        try:
            verdict = evaluate(source, target, self.world.domain, check_solvable=False)
            out.update(parseable=verdict.parseable, correct=verdict.correct)
        except GoalTooComplexError:  # e.g. "every dish clean" over 40 dishes: DNF too large to compare
            same = " ".join(agent_goal.split()) == " ".join(true_goal.split())
            out.update(parseable=True, correct=same, decided=same)
        if out["parseable"] and self.check_solvable:
            out["solvable"] = self._solvable(source)
        return out

    def _solvable(self, problem: Problem) -> bool:
        from servicerobot.errors import ServiceRobotError
        from servicerobot.pddl.val import val_validate
        from servicerobot.pddl.writer import write_domain, write_problem

        domain = self.world.domain
        try:
            goal = conjunctive_goal(domain, problem.goal, problem.objects, problem.init)
        except ServiceRobotError:
            return False  # no action can reach some literal of every way to satisfy it
        easy = Problem(problem.name, problem.domain_name, problem.objects, problem.init, goal)
        plan = self.solve(domain, easy)
        if plan is None:
            return False
        return val_validate(write_domain(domain), write_problem(problem), list(plan)).valid
