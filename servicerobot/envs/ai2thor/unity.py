"""The `unity` AI2-THOR executor: skills as actions of the real `ai2thor.controller.Controller`.

Navigation teleports to the fixture's interaction pose (ALFWorld's precomputed pose, else THOR's
`GetInteractablePoses`); then PickupObject / PutObject / OpenObject / CloseObject / ToggleObjectOn|Off /
CleanObject act on the objectId. People's changes are mirrored with PlaceObjectAtPoint (on spawn points
from GetSpawnCoordinatesAboveReceptacle), DirtyObject / CleanObject, BreakObject, OpenObject / CloseObject
and ToggleObjectOn|Off; an item a person carries is disabled until it is put back. A failed THOR action's
`errorMessage` becomes the action's error. Needs a GPU node (CloudRendering) and the Unity build; this
machine has neither, so the executor is tested against a replay of recorded metadata only.
"""

from __future__ import annotations

import os
from collections.abc import Callable
from pathlib import Path
from typing import Any

import numpy as np

from servicerobot.adapters.ai2thor import ThorNaming, metadata_objects, percept_from_metadata
from servicerobot.envs.ai2thor.skills import NAVIGATE_TO, NOT_IN_THOR, TARGET, THOR_ACTION
from servicerobot.envs.ai2thor.symbolic import merge_percept, region_spot
from servicerobot.envs.executor import Executor
from servicerobot.envs.household.state import HouseholdState
from servicerobot.errors import SceneError, install_hint
from servicerobot.pddl import Atom
from servicerobot.scenes.ithor import ThorScene
from servicerobot.scenes.thor_types import canonical_type

__all__ = ["UnityThor", "make_controller"]

_EXTRA = install_hint("ai2thor")


def _has_nvidia_gpu() -> bool:
    return any(Path("/dev").glob("nvidia*"))


def make_controller(scene: str, width: int, height: int, platform: str | None = None,
                    gpu_device: int | None = None, local_executable_path: str | None = None, **settings: Any):
    """A real `ai2thor.controller.Controller`, with errors that say what is missing and how to fix it."""
    try:
        from ai2thor.controller import Controller
    except ImportError as exc:
        raise SceneError(f"controller='unity' needs the ai2thor package ({exc}); {_EXTRA}") from exc
    kwargs: dict[str, Any] = dict(scene=scene, width=width, height=height, gridSize=0.25, snapToGrid=False,
                                  visibilityDistance=1.5, renderInstanceSegmentation=False, **settings)
    if platform is None and not os.environ.get("DISPLAY"):
        platform = "CloudRendering"
    if platform is not None:
        import ai2thor.platform as platforms

        cls = getattr(platforms, platform, None) if isinstance(platform, str) else platform
        if cls is None:
            raise SceneError(f"unknown THOR platform {platform!r}; use 'CloudRendering' (headless GPU node) "
                             "or 'Linux64' (with an X display)")
        if getattr(cls, "__name__", "") == "CloudRendering" and not _has_nvidia_gpu():
            raise SceneError("controller='unity' with CloudRendering needs an NVIDIA GPU with Vulkan (no /dev/nvidia* "
                             "here): run on a GPU node, or use controller='symbolic' on CPU")
        kwargs["platform"] = cls
    if gpu_device is not None:
        kwargs["gpu_device"] = int(gpu_device)
    if local_executable_path is not None:
        if not Path(local_executable_path).exists():
            raise SceneError(f"local_executable_path {local_executable_path!r} does not exist: pre-stage the THOR "
                             "Unity build there (copy ~/.ai2thor/releases/<build> from a machine with internet)")
        kwargs["local_executable_path"] = str(local_executable_path)
    try:
        return Controller(**kwargs)
    except Exception as exc:  # ai2thor raises plain Exceptions for a missing build or display
        text = str(exc)
        hint = ("the Unity build could not be found or downloaded: pass local_executable_path= to a pre-staged "
                "build" if any(w in text.lower() for w in ("download", "build", "release", "connection"))
                else "check the GPU (gpu_device=) and the Vulkan driver")
        raise SceneError(f"AI2-THOR Controller failed to start ({type(exc).__name__}: {text}); {hint}") from exc


class UnityThor(Executor):
    """Runs skills in the real AI2-THOR (Unity) simulator; perceives through the shared adapter."""

    name = "ai2thor-unity"

    def __init__(self, width: int = 300, height: int = 300, platform: str | None = None,
                 gpu_device: int | None = None, local_executable_path: str | None = None,
                 controller_factory: Callable[..., Any] | None = None):
        self.width, self.height = width, height
        self.settings = {"platform": platform, "gpu_device": gpu_device,
                         "local_executable_path": local_executable_path}
        self.factory = controller_factory or make_controller
        self.controller = None
        self.event = None
        self.calls: list[tuple[str, dict]] = []  # every THOR action sent, for logs and tests

    # ------------------------------------------------------------------ THOR
    def _step(self, action: str, **kwargs: Any):
        self.calls.append((action, kwargs))
        self.event = self.controller.step(action=action, **kwargs)
        return self.event

    def _ok(self, event) -> str:
        meta = event.metadata
        if meta["lastActionSuccess"]:
            return ""
        return str(meta.get("errorMessage") or f"{meta.get('lastAction', 'action')} failed")

    def _id(self, entity: str) -> str:
        if entity not in self.ids:
            raise KeyError(entity)
        return self.ids[entity]

    # ------------------------------------------------------------------ Executor
    def reset(self, scene: Any, facts: frozenset[Atom], rng: np.random.Generator) -> None:
        if not isinstance(scene, ThorScene):
            raise TypeError(f"{self.name} runs iTHOR scenes (ThorScene), got {type(scene).__name__}")
        self.scene = scene
        if self.controller is None:
            self.controller = self.factory(scene=scene.floorplan, width=self.width, height=self.height,
                                           **self.settings)
            self.event = self.controller.last_event
        else:
            self.event = self.controller.reset(scene=scene.floorplan)
        self.calls = []
        need = {}
        for name, obj in scene.thor.items():
            if scene.entities[name].pos is None:
                t = obj.object_type
                need[t] = need.get(t, 0) + 1
        self._step("InitialRandomSpawn", randomSeed=int(rng.integers(2**31)), forceVisible=False,
                   numPlacementAttempts=5, placeStationary=True,
                   numDuplicatesOfType=[{"objectType": t, "count": n} for t, n in sorted(need.items())])
        self.ids = self._match(metadata_objects(self.event.metadata))
        self.naming = ThorNaming.from_scene(scene)
        self.naming.entity = {oid: n for n, oid in self.ids.items()}
        live_faucets = [o for o in metadata_objects(self.event.metadata) if o.get("objectType") == "Faucet"]
        self.naming.faucet_sink = {}
        self.faucet = {}
        for sink in scene.faucets:
            if live_faucets and sink in self.ids:
                pos = scene.thor[sink].position
                f = min(live_faucets, key=lambda o: _dist(o, pos))
                self.faucet[sink] = str(f["objectId"])
                self.naming.faucet_sink[self.faucet[sink]] = sink
        self.state = HouseholdState(scene, frozenset())
        self._mirror(facts)
        self._absent_states(facts)
        x, z = region_spot(scene, self.state.robot_room())
        self._teleport(x, z, 0.0, 0.0)

    def _match(self, objects: list) -> dict[str, str]:
        """Entity -> live objectId: the same id when THOR has it, else the nearest unused object of its type."""
        live = {str(o["objectId"]): o for o in objects}
        used: set[str] = set()
        ids: dict[str, str] = {}
        for name, obj in self.scene.thor.items():
            if obj.object_id in live and not obj.synthesized:
                ids[name] = obj.object_id
                used.add(obj.object_id)
        for name, obj in self.scene.thor.items():
            if name in ids:
                continue
            cands = [o for oid, o in live.items() if oid not in used
                     and canonical_type(str(o.get("objectType"))) == canonical_type(obj.object_type)]
            if cands:
                best = min(cands, key=lambda o: _dist(o, obj.position))
                ids[name] = str(best["objectId"])
                used.add(ids[name])
        return ids

    def _teleport(self, x: float, z: float, rotation: float, horizon: float) -> str:
        y = float(self.event.metadata["agent"]["position"]["y"])
        return self._ok(self._step("Teleport", position={"x": x, "y": y, "z": z},
                                   rotation={"x": 0.0, "y": rotation, "z": 0.0}, horizon=horizon, standing=True))

    def _approach(self, entity: str) -> str:
        obj = self.scene.thor[entity]
        if obj.pose is not None and not obj.synthesized:
            return self._teleport(*obj.pose)
        event = self._step("GetInteractablePoses", objectId=self._id(entity), standings=[True])
        poses = event.metadata.get("actionReturn") or []
        if not event.metadata["lastActionSuccess"] or not poses:
            return f"no interactable pose for {self._id(entity)}"
        p = poses[0]
        return self._ok(self._step("Teleport", position={"x": p["x"], "y": p["y"], "z": p["z"]},
                                   rotation={"x": 0.0, "y": p["rotation"], "z": 0.0}, horizon=p["horizon"],
                                   standing=p.get("standing", True)))

    def execute(self, action: Any, add: frozenset[Atom], delete: frozenset[Atom]) -> str:
        if action.name in NOT_IN_THOR:
            return NOT_IN_THOR[action.name]
        try:
            if action.name == "move":
                error = self._teleport(*region_spot(self.scene, action.args[2]), 0.0, 0.0)
            else:
                error = self._skill(action)
        except KeyError as exc:
            error = f"{exc.args[0]} has no object in this THOR scene"
        if error:
            return error
        self.state.apply(add, delete)
        return ""

    def _skill(self, action: Any) -> str:
        if action.name in NAVIGATE_TO:
            error = self._approach(action.args[NAVIGATE_TO[action.name]])
            if error:
                return error
        target = TARGET[action.name]
        object_id = self.faucet[action.args[1]] if target == "faucet" else self._id(action.args[target])
        if action.name == "take-from":
            error = self._ok(self._step("EnableObject", objectId=object_id))
            return error or self._ok(self._step("PickupObject", objectId=object_id, forceAction=True))
        extra = {"forceAction": True} if action.name == "throw-away" else {}
        return self._ok(self._step(THOR_ACTION[action.name], objectId=object_id, **extra))

    def sync(self, facts: frozenset[Atom]) -> None:
        self._mirror(facts)

    def _mirror(self, facts: frozenset[Atom]) -> None:
        """Make THOR match `facts` (people's changes): placements, then object states."""
        add, delete = facts - self.state.atoms, self.state.atoms - facts
        for atom in sorted(add):
            try:
                self._mirror_atom(atom, True)
            except KeyError:
                continue  # an entity without a THOR object (a type this FloorPlan build lacks)
        for atom in sorted(delete):
            try:
                self._mirror_atom(atom, False)
            except KeyError:
                continue
        self.state.apply(add, delete)

    def _absent_states(self, facts: frozenset[Atom]) -> None:
        """THOR's defaults differ from an episode's start: open what is open, switch off what is off."""
        for name, entity in self.scene.entities.items():
            if name not in self.ids or entity.pos is None:
                continue
            kind, object_id = entity.pddl_type, self.ids[name]
            if kind in ("openable", "fridge") and Atom("closed", (name,)) not in facts:
                self._step("OpenObject", objectId=object_id, forceAction=True)
            elif kind == "light" and Atom("light-on", (name,)) not in facts:
                self._step("ToggleObjectOff", objectId=object_id, forceAction=True)
            elif kind == "bed" and Atom("made", (name,)) not in facts:
                self._step("DirtyObject", objectId=object_id, forceAction=True)

    def _mirror_atom(self, atom: Atom, added: bool) -> None:
        p, args = atom.predicate, atom.args
        if p in ("on", "inside") and added:
            item, fixture = args
            if any(a.predicate == "held-by" for a in self.state.by_arg[item] if a.args[0] == item):
                self._step("EnableObject", objectId=self._id(item))
            event = self._step("GetSpawnCoordinatesAboveReceptacle", objectId=self._id(fixture), anywhere=True)
            points = event.metadata.get("actionReturn") or []
            if points:
                self._step("PlaceObjectAtPoint", objectId=self._id(item), position=points[0])
        elif p == "held-by" and added:
            self._step("DisableObject", objectId=self._id(args[0]))
        elif p == "discarded" and added:
            cans = [n for n in self.scene.thor if self.scene.entities[n].pddl_type == "trashcan"]
            if cans:
                self._step("PutObject", objectId=self._id(cans[0]), forceAction=True)
        elif p == "closed":
            self._step("CloseObject" if added else "OpenObject", objectId=self._id(args[0]), forceAction=True)
        elif p == "light-on":
            self._step("ToggleObjectOn" if added else "ToggleObjectOff", objectId=self._id(args[0]),
                       forceAction=True)
        elif p == "faucet-on" and args[0] in self.faucet:
            self._step("ToggleObjectOn" if added else "ToggleObjectOff", objectId=self.faucet[args[0]],
                       forceAction=True)
        elif p == "dirty":
            self._step("DirtyObject" if added else "CleanObject", objectId=self._id(args[0]), forceAction=True)
        elif p == "made":
            self._step("CleanObject" if added else "DirtyObject", objectId=self._id(args[0]), forceAction=True)
        elif p == "broken" and added:
            self._step("BreakObject", objectId=self._id(args[0]), forceAction=True)

    # ------------------------------------------------------------------ observations
    def _view(self) -> Callable[[Any], bool]:
        """In the robot's region and not inside something closed (THOR's own `visible` reaches 1.5 m; the
        household percept is room-wide)."""
        live = {str(o["objectId"]): o for o in metadata_objects(self.event.metadata)}
        here, pts = self.state.robot_room(), self.scene.reachable

        def in_view(obj) -> bool:
            pos = obj.get("position") or {}
            i = int(np.argmin((pts[:, 0] - float(pos.get("x", 0.0))) ** 2 + (pts[:, 1] - float(pos.get("z", 0.0))) ** 2))
            if self.scene.room_names[int(self.scene.point_region[i])] != here and not obj.get("isPickedUp"):
                return False
            parents = obj.get("parentReceptacles") or []
            return not any(live.get(str(q), {}).get("openable") and not live[str(q)].get("isOpen") for q in parents)

        return in_view

    def percept(self, symbolic: dict) -> dict:
        thor = percept_from_metadata(self.event.metadata, self.naming, self._view())
        return merge_percept(symbolic, thor, self.naming)

    def render_frame(self, overlay: dict, width: int, height: int) -> np.ndarray | None:
        """THOR's camera frame above the text panel every world's frames have."""
        frame = getattr(self.event, "frame", None)
        if frame is None:
            return None
        from servicerobot.envs.panel import TextPanel, panel_height, with_panel

        panel = getattr(self, "_text_panel", None)
        if panel is None or (panel.width, panel.panel_h) != (width, panel_height(height)):
            panel = self._text_panel = TextPanel(width, panel_height(height))
        return with_panel(np.asarray(frame, dtype=np.uint8), overlay, width, height, panel)

    def close(self) -> None:
        if self.controller is not None:
            self.controller.stop()
            self.controller = None


def _dist(obj, pos: tuple[float, float, float]) -> float:
    p = obj.get("position") or {}
    return sum((float(p.get(k, 0.0)) - v) ** 2 for k, v in zip(("x", "y", "z"), pos))
