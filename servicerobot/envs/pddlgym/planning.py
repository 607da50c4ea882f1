"""What `ServiceAgent` needs to plan on a PDDLGym environment, whose observation is the whole state.

`LiteralPlanning` is the env's answer to `ServiceAgent.from_env` (`PDDLGymEnv.planning_view()`): the
executable domain (action literals taken out of preconditions, probabilistic effects split per outcome,
so a classical planner reads it), the planning problem an observation states (its literals less the
derived ones, its objects, its goal), and the action literal that asks the env for a planned step.
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import cached_property

from servicerobot.envs.pddlgym.task import (
    Operator,
    PDDLGymDomain,
    literal_text,
    observation_state,
    parse_literal,
)
from servicerobot.errors import ActionError
from servicerobot.limits import excerpt
from servicerobot.pddl.atoms import Atom
from servicerobot.pddl.interpreter import Interpreter
from servicerobot.pddl.model import Domain, Problem

__all__ = ["LiteralPlanning"]


@dataclass(frozen=True)
class LiteralPlanning:
    """A PDDLGym domain as the agent plans on it (see the module docstring)."""

    gym_domain: PDDLGymDomain

    @property
    def domain(self) -> Domain:
        """The executable domain: what a planner is given."""
        return self.gym_domain.domain

    def problem(self, obs: dict) -> Problem:
        """The planning problem of an observation: its objects (less the domain's constants), its literals
        less the derived ones, and its goal."""
        domain = self.domain
        objects = {}
        for line in obs["objects"].splitlines():
            name, _, typ = line.partition(" - ")
            if name.strip() and name.strip() not in domain.constants:
                objects[name.strip()] = typ.strip()
        init = frozenset(a for a in observation_state(obs) if a.predicate not in domain.derived)
        goal = Interpreter.shared(domain, objects).compile_goal(obs["goal"]).formula
        return Problem("observed", domain.name, objects, init, goal)

    def action(self, step: str) -> str:
        """The action literal that asks the env for a planned step `(operator args...)` (an outcome `name~k`
        of a probabilistic operator asks for the operator: the env draws the outcome).

        Raises:
            ActionError: the step is not one of this domain's operators.
        """
        name, args = parse_literal(step)
        op = self._operators.get(name.split("~", 1)[0])
        if op is None:
            raise ActionError(f"{excerpt(step)} is not a step of an operator of {self.gym_domain.name}")
        if op.trigger is None:
            return literal_text(op.name, args)
        atom: Atom = op.trigger.ground(dict(zip((v for v, _ in op.params), args)))
        return literal_text(atom.predicate, atom.args)

    @cached_property
    def _operators(self) -> dict[str, Operator]:
        return {op.name: op for ops in self.gym_domain.operators.values() for op in ops}

