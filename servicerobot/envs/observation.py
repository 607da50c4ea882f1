"""A typed view of `ServiceRobotEnv` observations (`decode`)."""

from __future__ import annotations

import json
from dataclasses import dataclass, field

import numpy as np

__all__ = ["Observation", "Percept", "decode"]


@dataclass(frozen=True)
class Percept:
    """What the robot sees: its room, the entities in view (name -> type) and facts as triplets."""

    room: str
    entities: dict[str, str]
    facts: list[tuple[str, str, object]]
    observed: tuple[str, ...] = ()


@dataclass(frozen=True)
class Observation:
    """One observation, decoded: utterances as (speaker, text) pairs, the percept, the prior (or None)."""

    utterances: list[tuple[str, str]]
    percept: Percept
    prior: dict | None
    action_result: str
    robot_room: int
    visible: np.ndarray = field(repr=False)

    @property
    def action_failed(self) -> bool:
        return self.action_result not in ("", "ok")


def decode(obs: dict) -> Observation:
    """Parse the JSON text fields of a `ServiceRobotEnv` observation into an `Observation`."""
    said = json.loads(obs["utterances"]) if obs["utterances"] else []
    p = json.loads(obs["percept"])
    percept = Percept(p["room"], dict(p["entities"]), [tuple(f) for f in p["facts"]], tuple(p.get("observed", ())))
    prior = json.loads(obs["prior"]) if obs["prior"] else None
    return Observation([(u["speaker"], u["text"]) for u in said], percept, prior, obs["action_result"],
                       int(obs["robot_room"]), np.asarray(obs["visible"]))
