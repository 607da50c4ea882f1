"""IPC benchmark domains shipped as package data: blocksworld, gripper and floor-tile.

The files are written for this package from the public IPC definitions, with Planetarium's predicate
names (`on-table`, `arm-empty` in blocksworld). `text(name)` gives the PDDL, `load(name)` the parsed
`Domain` (parsed once and cached).
"""

from __future__ import annotations

from functools import cache
from importlib import resources

from servicerobot.pddl.model import Domain
from servicerobot.pddl.parser import parse_domain

__all__ = ["NAMES", "load", "text"]

NAMES = ("blocksworld", "gripper", "floor-tile")


@cache
def text(name: str) -> str:
    """The PDDL text of the domain `name` (one of `NAMES`).

    Raises:
        KeyError: `name` is not a shipped domain.
    """
    if name not in NAMES:
        raise KeyError(f"unknown domain {name!r}; shipped domains: {', '.join(NAMES)}")
    return resources.files(__name__).joinpath(f"{name}.pddl").read_text(encoding="utf-8")


@cache
def load(name: str) -> Domain:
    """The parsed domain `name` (cached; treat it as read-only)."""
    return parse_domain(text(name), source=f"{name}.pddl")
