"""Moved to `servicerobot.pddl.goal_compilation`: it needs only the PDDL layer, and the layers below the
planners (the worlds' goal scoring) use it too. Kept so that planner-side imports keep working."""

from servicerobot.pddl.goal_compilation import achievable_literals, conjunctive_goal, goal_names

__all__ = ["achievable_literals", "conjunctive_goal", "goal_names"]
