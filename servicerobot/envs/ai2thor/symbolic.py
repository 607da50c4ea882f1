"""The `symbolic` AI2-THOR executor: THOR's rules on a `ThorScene`, with THOR-schema metadata as output.

The PDDL interpreter decides what a skill changes; this executor adds the rules THOR enforces that the
household domain does not (a receptacle takes only the object types in THOR's receptacle table), moves the
agent to the interaction pose of what it acts on, and emits `event.metadata` in THOR's schema. The robot
perceives through `servicerobot.adapters.ai2thor`, the same adapter the Unity executor uses.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from servicerobot.adapters.ai2thor import ThorNaming, percept_from_metadata
from servicerobot.envs.ai2thor.metadata import AGENT_HEIGHT, scene_metadata, vec
from servicerobot.envs.ai2thor.skills import NAVIGATE_TO, NOT_IN_THOR, THOR_ACTION
from servicerobot.envs.executor import Executor
from servicerobot.envs.household.state import HouseholdState
from servicerobot.envs.household.world import atom_to_triplet
from servicerobot.pddl import Atom
from servicerobot.scenes.household import ROBOT
from servicerobot.scenes.ithor import ThorScene

__all__ = ["SymbolicThor", "merge_percept", "region_spot"]


def region_spot(scene: ThorScene, room: str) -> tuple[float, float]:
    """The reachable grid point of `room` nearest its centroid (where `move` teleports the agent)."""
    r = scene.room_names.index(room)
    pts = scene.reachable[scene.point_region == r]
    c = pts.mean(0)
    p = pts[int(np.argmin(((pts - c) ** 2).sum(1)))]
    return float(p[0]), float(p[1])


def _triplet_atom(f: list) -> Atom:
    return Atom(f[1], (f[0],)) if f[2] is True else Atom(f[1], (f[0], f[2]))


def merge_percept(symbolic: dict, thor: dict, naming: ThorNaming) -> dict:
    """The robot's percept: THOR objects from the adapter, the rest (rooms, people, the robot) from the core.

    People are symbolic in AI2-THOR, so what they hold and where they are comes from the true state.
    """
    facts = {_triplet_atom(f) for f in thor["facts"]}
    facts |= {_triplet_atom(f) for f in symbolic["facts"]
              if f[0] not in naming.kinds or f[1] == "held-by"}
    entities = {n: t for n, t in symbolic["entities"].items() if n not in naming.kinds}
    entities.update(thor["entities"])
    observed = [o for o in symbolic["observed"] if o not in naming.kinds]
    closed = {a.args[0] for a in facts if a.predicate == "closed"}
    observed[1:1] = [e for e in thor["entities"] if naming.room.get(e) is not None and e not in closed]
    return {"room": symbolic["room"], "entities": entities, "facts": [atom_to_triplet(a) for a in sorted(facts)],
            "observed": observed}


class SymbolicThor(Executor):
    """THOR's rules executed symbolically on an iTHOR FloorPlan; observations are THOR metadata."""

    name = "ai2thor-symbolic"

    def __init__(self, width: int = 300, height: int = 300):
        self.width, self.height = width, height
        self.scene: ThorScene | None = None
        self._renderer = None

    # ------------------------------------------------------------------ Executor
    def reset(self, scene: Any, facts: frozenset[Atom], rng: np.random.Generator) -> None:
        if not isinstance(scene, ThorScene):
            raise TypeError(f"{self.name} runs iTHOR scenes (ThorScene), got {type(scene).__name__}")
        self.scene = scene
        self.state = HouseholdState(scene, facts)
        self.naming = ThorNaming.from_scene(scene)
        x, z = region_spot(scene, self.state.robot_room())
        self.agent = self._agent(x, z, 0.0, 0.0)
        self._last = ("Initialize", True, "")
        self._cache: tuple[Any, dict] | None = None
        self._records: dict[str, tuple] = {}

    def execute(self, action: Any, add: frozenset[Atom], delete: frozenset[Atom]) -> str:
        if action.name in NOT_IN_THOR:
            return NOT_IN_THOR[action.name]
        thor_action = THOR_ACTION.get(action.name, action.name)
        if action.name in ("place-on", "put-in"):
            item, fixture = action.args[1], action.args[2]
            if not self.scene.accepts(fixture, item):
                error = (f"{self.scene.thor[item].object_type} cannot be placed in or on "
                         f"{self.scene.thor[fixture].object_type} (THOR's receptacle restrictions)")
                self._last = (thor_action, False, error)
                self._cache = None
                return error
        if action.name == "move":
            x, z = region_spot(self.scene, action.args[2])
            self.agent = self._agent(x, z, self.agent["rotation"]["y"], 0.0)
        elif action.name in NAVIGATE_TO:
            target = self.scene.thor.get(action.args[NAVIGATE_TO[action.name]])
            if target is not None and target.pose is not None:
                x, z, rot, horizon = target.pose
                self.agent = self._agent(x, z, rot, horizon)
        self.state.apply(add, delete)
        self._last = (thor_action, True, "")
        self._cache = None
        return ""

    def sync(self, facts: frozenset[Atom]) -> None:
        self.state.apply(facts - self.state.atoms, self.state.atoms - facts)
        self._cache = None

    # ------------------------------------------------------------------ observations
    def metadata(self, only_visible: bool = False) -> dict:
        """The current `event.metadata` in THOR's schema (`only_visible`: the objects in view only)."""
        key = (self.state.version, self._last, self.agent["position"]["x"], self.agent["position"]["z"],
               only_visible)
        if self._cache is not None and self._cache[0] == key:
            return self._cache[1]
        visible = set(self.state.visible())
        action, success, error = self._last
        meta = scene_metadata(self.scene, self.state, self.agent, visible, action, success, error,
                              self.width, self.height, only_visible, self._records)
        self._cache = (key, meta)
        return meta

    def percept(self, symbolic: dict) -> dict:
        thor = percept_from_metadata(self.metadata(only_visible=True), self.naming)
        return merge_percept(symbolic, thor, self.naming)

    def render_frame(self, overlay: dict, width: int, height: int) -> np.ndarray:
        from servicerobot.envs.ai2thor.rendering import ThorRenderer

        r = self._renderer
        if r is None or r.scene is not self.scene or (r.width, r.height) != (width, height):
            self._renderer = r = ThorRenderer(self.scene, width, height)
        return r.render(self.state, self.agent, overlay)

    @staticmethod
    def _agent(x: float, z: float, rotation: float, horizon: float) -> dict:
        return {"name": "agent", "position": vec(x, AGENT_HEIGHT, z), "rotation": vec(0.0, rotation, 0.0),
                "cameraHorizon": float(horizon), "isStanding": True, "inHighFrictionArea": False}

    @property
    def robot(self) -> str:
        return ROBOT
