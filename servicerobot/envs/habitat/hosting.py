"""Which task kinds a building can host: a bed to make, a washer, a dryer and clothes for laundry, a fridge and
food it keeps for keep_cold... `task_kinds` on the habitat world asks for kinds; a building that hosts none of
them is refused up front (a given 3DSG) or drawn again (a generated one), so no episode starts without a task.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np

from servicerobot.envs.household.events import HumanProcess
from servicerobot.envs.household.state import HouseholdState
from servicerobot.envs.household.tasks import TaskGenerator
from servicerobot.errors import SceneError
from servicerobot.scenes.gibson import GibsonScene, GibsonScenes, to_household_scene
from servicerobot.scenes.gibson_classes import ITEM_TYPES

__all__ = ["KIND_NEEDS", "MAX_DRAWS", "HostingScenes", "missing_kinds"]

MAX_DRAWS = 200  # generated buildings drawn for one episode before the best one is taken (or none is)


def _of(scene: GibsonScene, *types: str) -> list[str]:
    return sorted(n for n, e in scene.entities.items() if e.pddl_type in types)


def _cold(scene: GibsonScene) -> bool:
    fridges = _of(scene, "fridge")
    return bool(fridges) and any(scene.entities[i].attributes.get("perishable") and scene.accepts(fridges[0], i)
                                 for i in _of(scene, "food"))


def _shelved(scene: GibsonScene) -> bool:
    return any(scene.accepts(s, b) for s in _of(scene, "shelf") for b in _of(scene, "book"))


# What each task kind of `envs.household.tasks` needs from the house before it can be asked (its sampler also
# looks at the state: these are the things no state change can make).
KIND_NEEDS: dict[str, tuple[str, Callable[[GibsonScene], bool]]] = {
    "pick_place": ("an item", lambda s: bool(_of(s, *ITEM_TYPES))),
    "hand_over": ("an item", lambda s: bool(_of(s, *ITEM_TYPES))),
    "wash_dishes": ("a sink and a dish", lambda s: bool(_of(s, "sink")) and bool(_of(s, "dish"))),
    "make_bed": ("a bed", lambda s: bool(_of(s, "bed"))),
    "discard_broken": ("a bin and an item", lambda s: bool(_of(s, "trashcan")) and bool(_of(s, *ITEM_TYPES))),
    "keep_cold": ("a fridge and perishable food it takes", _cold),
    "lights_off": ("a lamp or a sink", lambda s: bool(_of(s, "light", "sink"))),
    "laundry": ("a washer, a dryer and clothes",
                lambda s: bool(_of(s, "washer")) and bool(_of(s, "dryer")) and bool(_of(s, "clothing"))),
    "organise_shelf": ("a shelf and a book it takes", _shelved),
}


def missing_kinds(scene: GibsonScene, kinds) -> dict[str, str]:
    """The kinds of `kinds` that cannot be asked in `scene` as it starts, each with what it lacks: the things
    `KIND_NEEDS` lists, else the task generator itself finds none to ask (every book already on its shelf)."""
    out = {k: KIND_NEEDS[k][0] for k in kinds if k in KIND_NEEDS and not KIND_NEEDS[k][1](scene)}
    rest = [k for k in kinds if k not in out]
    if rest:
        humans = HumanProcess(HouseholdState(scene, scene.init), np.random.default_rng(0))
        tasks = TaskGenerator(humans, np.random.default_rng(0))
        for kind in rest:
            if tasks.sample(kind) is None:
                out[kind] = f"{KIND_NEEDS.get(kind, ('what it needs',))[0]} in a state that asks for it"
    return out


class HostingScenes(GibsonScenes):
    """`GibsonScenes` whose buildings host the task kinds asked for.

    Given buildings that host none of them raise `SceneError` at construction, naming what each lacks.
    Generated buildings are drawn again (from the episode's own random stream, so seeds stay reproducible)
    until one hosts every kind, at most `MAX_DRAWS` times, then the draw that hosts the most is taken; when
    none hosts any of them (a 2-room building has no bedroom), construction raises `SceneError`.
    """

    def __init__(self, scene_graph: Any = None, task_kinds=(), **kwargs: Any):
        super().__init__(scene_graph, **kwargs)
        self.kinds = tuple(task_kinds)
        if self.graphs:
            refused = {}
            for g in self.graphs:
                missing = missing_kinds(to_household_scene(g.copy(), np.random.default_rng(0), self.n_people,
                                                           self.connectivity), self.kinds)
                if len(missing) == len(self.kinds):
                    refused[g.name] = missing
            if refused:
                lacks = "; ".join(f"{name} lacks " + ", ".join(f"{need} ({kind})" for kind, need in m.items())
                                  for name, m in refused.items())
                raise SceneError(f"task_kinds {list(self.kinds)}: no task of these kinds can be asked in "
                                 f"{sorted(refused)}: {lacks}. Give buildings that have them, or other task kinds")
        else:
            self.generate(np.random.default_rng(0))  # fails now, not at the first reset, if none ever hosts them

    def generate(self, rng: np.random.Generator) -> GibsonScene:
        if self.graphs:
            return super().generate(rng)
        best: tuple[int, GibsonScene] | None = None
        for _ in range(MAX_DRAWS):
            scene = super().generate(rng)
            missing = missing_kinds(scene, self.kinds)
            if not missing:
                return scene
            if len(missing) < len(self.kinds) and (best is None or len(missing) < best[0]):
                best = (len(missing), scene)
        if best is None:
            needs = ", ".join(f"{KIND_NEEDS[k][0]} ({k})" for k in self.kinds)
            rooms = f"{self.rooms_wanted}-room" if self.rooms_wanted else "generated"
            raise SceneError(f"task_kinds {list(self.kinds)}: none of {MAX_DRAWS} {rooms} buildings drawn had "
                             f"{needs}; ask for other kinds" + (" or more rooms" if self.rooms_wanted else ""))
        return best[1]
