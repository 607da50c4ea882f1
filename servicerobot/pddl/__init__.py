"""The PDDL base layer: parse, check, write and execute PDDL domains and problems, and validate plans."""

from servicerobot.pddl.atoms import Atom, State, format_state
from servicerobot.pddl.features import UnsupportedFeatureError
from servicerobot.pddl.goal import Goal
from servicerobot.pddl.interpreter import GroundAction, Interpreter
from servicerobot.pddl.model import (
    FALSE,
    TRUE,
    Action,
    AddEffect,
    And,
    AtomF,
    DelEffect,
    Domain,
    Effect,
    Equals,
    Exists,
    Forall,
    ForallEffect,
    Formula,
    Imply,
    Literal,
    Not,
    Or,
    Predicate,
    Problem,
    Truth,
    TypeHierarchy,
    WhenEffect,
)
from servicerobot.pddl.parser import load_domain, load_problem, parse_domain, parse_problem
from servicerobot.pddl.sexpr import extract_define, parse_sexpr
from servicerobot.pddl.val import ValResult, val_validate
from servicerobot.pddl.validate import ValidationResult, parse_plan, validate_plan
from servicerobot.pddl.writer import format_formula, write_domain, write_problem

__all__ = [
    "FALSE",
    "TRUE",
    "Action",
    "AddEffect",
    "And",
    "Atom",
    "AtomF",
    "DelEffect",
    "Domain",
    "Effect",
    "Equals",
    "Exists",
    "Forall",
    "ForallEffect",
    "Formula",
    "Goal",
    "GroundAction",
    "Imply",
    "Interpreter",
    "Literal",
    "Not",
    "Or",
    "Predicate",
    "Problem",
    "State",
    "Truth",
    "TypeHierarchy",
    "UnsupportedFeatureError",
    "ValResult",
    "ValidationResult",
    "WhenEffect",
    "extract_define",
    "format_formula",
    "format_state",
    "load_domain",
    "load_problem",
    "parse_domain",
    "parse_plan",
    "parse_problem",
    "parse_sexpr",
    "val_validate",
    "validate_plan",
    "write_domain",
    "write_problem",
]
