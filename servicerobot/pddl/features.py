"""What PDDL this package reads: the requirement flags it knows and the error for features it does not."""

from __future__ import annotations

from servicerobot.errors import PDDLSemanticError

__all__ = ["KNOWN_REQUIREMENTS", "SUPPORTED_REQUIREMENTS", "UnsupportedFeatureError"]


class UnsupportedFeatureError(PDDLSemanticError):
    """Valid PDDL that this package does not handle (numeric fluents, durative actions, `either`, ...).

    Planners may still accept such text; `Planner.solve` passes it through unchecked.
    """


SUPPORTED_REQUIREMENTS = frozenset(
    {
        ":strips",
        ":typing",
        ":negative-preconditions",
        ":disjunctive-preconditions",
        ":equality",
        ":existential-preconditions",
        ":universal-preconditions",
        ":quantified-preconditions",
        ":conditional-effects",
        ":adl",
        ":action-costs",
        ":derived-predicates",
    }
)
"""Requirement flags whose features the parser and the interpreter implement."""

KNOWN_REQUIREMENTS = SUPPORTED_REQUIREMENTS | {
    ":numeric-fluents",
    ":fluents",
    ":object-fluents",
    ":durative-actions",
    ":duration-inequalities",
    ":continuous-effects",
    ":timed-initial-literals",
    ":preferences",
    ":constraints",
}
"""Every requirement flag of PDDL 1.2 to 3.1."""
