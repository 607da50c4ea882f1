"""The habitat executor: runs the household world's accepted actions in habitat-sim and perceives through it.

The robot walks navmesh geodesics (`pathfinder.find_path`) to rooms and to the furniture it handles; items
and container doors are kinematic rigid objects moved for pick/place/open/close and for what people do;
percepts come from semantic + depth images of a look around (`adapters.habitat`); `render_frame` is the
robot camera's RGB image. habitat_sim is imported only here, on first use.
"""

from __future__ import annotations

import contextlib
import hashlib
import itertools
import os
import shutil
import tempfile
from dataclasses import replace
from pathlib import Path
from typing import Any

import numpy as np

from servicerobot.adapters.habitat import (
    SemanticIndex,
    View,
    household_percept,
    observe,
    seen_fraction,
    surveyed,
)
from servicerobot.envs.executor import Executor
from servicerobot.envs.habitat.stage import (
    SHELL_T,
    TOP_OPEN,
    WALL_HEIGHT,
    Stage,
    build_stage,
    floor_levels,
    from_habitat,
    front_side,
    stage_layout,
    to_habitat,
)
from servicerobot.envs.habitat.viewing import SURFACES, oblique, support_points
from servicerobot.errors import DependencyNotInstalled, SceneError, install_hint
from servicerobot.pddl import Atom
from servicerobot.scenes.gibson import (
    GibsonScene,
    Object3D,
    class_type,
    place_spot,
    save_json,
    support_of,
)
from servicerobot.scenes.graph3d import rest_bottom
from servicerobot.scenes.household import ROBOT

__all__ = ["HabitatExecutor", "import_habitat_sim"]

_HIDDEN_Y = -30.0  # items people hold or that were thrown away wait below the floor
_SEEN = 0.5  # the share of a receptacle's support surface a look-around must show, else the robot goes to look
_RECEPTACLE_TYPES = SURFACES | {"container", "openable", "sink", "fridge", "washer", "dryer"}  # what holds items
_INSTALL = ("habitat-sim is not installed. Install it with conda (`conda install habitat-sim -c conda-forge "
            "-c aihabitat`, add `headless` on a cluster; docs/install.md), or use simulator=\"symbolic\". The "
            f"stage builder also needs trimesh: {install_hint('habitat')}.")


def import_habitat_sim():
    """habitat_sim and magnum, or `DependencyNotInstalled` saying how to install them."""
    try:
        import habitat_sim
        import magnum
        import quaternion  # noqa: F401  (numpy-quaternion ships with habitat-sim)
    except ImportError as error:
        raise DependencyNotInstalled(_INSTALL) from error
    return habitat_sim, magnum


def _yaw_quat(yaw: float):
    import quaternion

    return quaternion.from_rotation_vector([0.0, yaw, 0.0])


class HabitatExecutor(Executor):
    """habitat-sim as the household world's backend for scenes made from 3D scene graphs (`GibsonScene`).

    Args:
        width, height: the perception camera (semantic + depth) resolution.
        render_width, render_height: the RGB camera `render()` shows.
        headings: views per head tilt in the look-around every percept is made of (evenly spread yaw).
        pitch: the head tilt(s) of the look-around in radians (negative looks down), one or a sequence: each
            tilt adds `headings` views; the RGB camera uses the first. The default two (17 and 52 degrees
            down) tile the view from 88 degrees down to 20 up (4:3 images, hfov 90). hfov in degrees.
        camera_height: the head camera's height above the floor, metres.
        inspect: look at the open receptacles of the robot's room whose support surface (a table's top, a
            cabinet's floor) the look-around shows less than half of, or whose front opening it sees from
            more than 55 degrees off: the robot drives to each along the navmesh, looks and drives back
            (`inspections`, `inspection_distance` count what that costs).
        min_pixels, max_range: what counts as in view.
        gpu_device_id: habitat-sim's GPU; -1 renders without CUDA (EGL/llvmpipe on a CPU machine).
    """

    name = "habitat"

    def __init__(self, width: int = 160, height: int = 120, render_width: int = 320, render_height: int = 240,
                 headings: int = 4, pitch: float | tuple[float, ...] = (-0.3, -0.9), hfov: float = 90.0,
                 min_pixels: int = 2, max_range: float = 8.0, gpu_device_id: int = -1, agent_radius: float = 0.2,
                 camera_height: float = 1.5, inspect: bool = True):
        if headings < 1:
            raise SceneError(f"headings must be >= 1, got {headings}")
        tilts = tuple(float(t) for t in np.atleast_1d(np.asarray(pitch, dtype=float)))
        if not tilts or not all(-np.pi / 2 <= t <= np.pi / 2 for t in tilts):
            raise SceneError(f"pitch must be one or more head tilts in [-pi/2, pi/2] radians, got {pitch!r}")
        if not 0.2 <= camera_height <= 2.4:
            raise SceneError(f"camera_height must be in [0.2, 2.4] m (below the walls' 2.6 m), got {camera_height}")
        self.width, self.height, self.render_size = width, height, (render_width, render_height)
        self.headings, self.tilts, self.hfov, self.camera_height = headings, tilts, hfov, camera_height
        self.pitch, self.inspect = tilts[0], inspect
        self.min_pixels, self.max_range = min_pixels, max_range
        self.gpu_device_id, self.agent_radius = gpu_device_id, agent_radius
        self.sim = None
        self._stage_key: str | None = None
        self._workdir = Path(tempfile.mkdtemp(prefix="servicerobot-habitat-"))
        self.distance = 0.0  # metres walked along geodesics, over the executor's life
        self.views_rendered = 0
        self.looks_reused = 0  # percepts that reused the last look-around's images: nothing had moved since
        self._version = 0  # bumped whenever the robot's images could change: an item, a door or a new stage
        self._last_look: tuple | None = None
        self.inspections = 0  # look-arounds that drove to receptacles to look, and the metres that took
        self.inspection_distance = 0.0
        self.moved: list[str] = []  # furniture the stage moved because it cut a room off (`_clear_way`)
        self._cleared = None

    # ------------------------------------------------------------------ episode
    def reset(self, scene: GibsonScene, facts: frozenset[Atom], rng: np.random.Generator) -> None:
        if not isinstance(scene, GibsonScene) or scene.source_graph is None:
            raise SceneError("the habitat executor needs a scene made from a 3D scene graph (GibsonScenes)")
        habitat_sim, _ = import_habitat_sim()
        # The stage's frame: every floor's level at z = 0, floors side by side (`stage_layout`).
        self.scene, self.graph, self.rng = scene, stage_layout(scene.source_graph), rng
        self._levels = floor_levels(scene.source_graph)
        self.oid_of: dict[str, int] = {name: node for name, (layer, node) in scene.node_of.items() if layer == "object"}
        key = self._graph_key()
        if key != self._stage_key or self.sim is None:
            self._open(key, habitat_sim)
        elif getattr(self, "_cleared", None):
            self.graph, moved_source, self.moved, moves = self._cleared
            scene.source_graph = moved_source.copy()
            for oid, delta in moves:
                self._move_fixture_entities(oid, delta)
        rom = self.sim.get_rigid_object_manager()
        rom.remove_all_objects()
        self._version += 1
        self.name_of_sid: dict[int, str] = {self.stage.semantic_of[node]: name for name, node in self.oid_of.items()}
        self.pose: dict[int, np.ndarray] = {}  # 3DSG id -> current centre (3DSG frame)
        self.bodies: dict[int, Any] = {}
        tm = self.sim.get_object_template_manager()
        cube = tm.get_template_handles("cubeSolid")[0]
        for oid in self.stage.items:
            self.bodies[oid] = self._add_box(tm, rom, cube, f"item_{oid}", self.graph.objects[oid].size,
                                             self.stage.semantic_of[oid])
        self.panels: dict[int, Any] = {}
        for oid, (lo, hi) in self.stage.door_panels.items():
            body = self._add_box(tm, rom, cube, f"door_{oid}", tuple(hi - lo), self.stage.semantic_of[oid])
            body.translation = self._mn.Vector3(*to_habitat((lo + hi) / 2))
            self.panels[oid] = (body, (lo + hi) / 2)
        self.facts = frozenset()
        self._apply(facts, initial=True)
        self.yaw = 0.0
        self.position = self._stand_point(self._room_of(facts, ROBOT))

    def _graph_key(self) -> str:
        sg = self.graph
        text = repr((sg.name, sorted(sg.rooms.items()), sorted(sg.objects.items()), sorted(self.scene.doors)))
        return hashlib.sha256(text.encode()).hexdigest()[:16]

    def _open(self, key: str, habitat_sim) -> None:
        self._rebuild(habitat_sim, key)
        self._stage_key = key
        self._cleared = None
        if not self._clear_way(habitat_sim):
            self._check_reachable()
        if self.moved:  # the next episodes in this building find the same stage: the same move in their graph
            self._cleared = (self.graph, self.scene.source_graph, list(self.moved), list(self._moves))

    def _rebuild(self, habitat_sim, key: str | None = None) -> None:
        """The stage, simulator and navmesh of `self.graph` (in the folder of `key`, else of the last one)."""
        if self.sim is not None:
            self.sim.close()
            self.sim = None
        key = key or self._stage_key
        folder = self._workdir / key
        if folder.exists():
            shutil.rmtree(folder)
        ids = {name: node for name, (layer, node) in self.scene.node_of.items() if layer == "room"}
        doors = [(ids[a], ids[b]) for a, b in self.scene.doors]
        self.stage: Stage = build_stage(self.graph, folder, doors)
        save_json(self.graph, folder / "scene_graph.json")  # what the stage was built from, for inspection
        _, self._mn = import_habitat_sim()
        bc = habitat_sim.SimulatorConfiguration()
        bc.scene_id = self.stage.scene_id
        bc.enable_physics = False
        bc.load_semantic_mesh = True
        bc.gpu_device_id = self.gpu_device_id
        bc.random_seed = int(self.rng.integers(2**31))
        agents = []
        perception = [(f"{kind}{k}", sensor, tilt, (self.width, self.height)) for k, tilt in enumerate(self.tilts)
                      for kind, sensor in (("depth", habitat_sim.SensorType.DEPTH),
                                           ("semantic", habitat_sim.SensorType.SEMANTIC))]
        for sensors in ([("rgb", habitat_sim.SensorType.COLOR, self.pitch, self.render_size)], perception):
            specs = []
            for uuid, kind, tilt, (w, h) in sensors:
                spec = habitat_sim.CameraSensorSpec()
                spec.uuid, spec.sensor_type, spec.resolution = uuid, kind, [h, w]
                spec.position, spec.orientation = [0.0, self.camera_height, 0.0], [tilt, 0.0, 0.0]
                spec.hfov = self.hfov
                specs.append(spec)
            ac = habitat_sim.agent.AgentConfiguration()
            ac.sensor_specifications = specs
            ac.height, ac.radius = 1.5, self.agent_radius
            agents.append(ac)
        self.sim = habitat_sim.Simulator(habitat_sim.Configuration(bc, agents))
        self._version += 1
        ns = habitat_sim.NavMeshSettings()
        ns.set_defaults()
        ns.agent_height, ns.agent_radius = 1.5, self.agent_radius
        ns.cell_size, ns.cell_height = 0.05, 0.05
        if not self.sim.recompute_navmesh(self.sim.pathfinder, ns, include_static_objects=False):
            raise SceneError(f"habitat-sim could not build a navmesh for {self.graph.name}")
        self._footprints = [tuple(np.asarray(x)[:2] for x in o.box) for o in self.graph.objects.values()
                            if o.id not in self.stage.items]
        self._solid = [(o.id, *(np.asarray(x, dtype=float) for x in o.box)) for o in self.graph.objects.values()
                       if o.id not in self.stage.items]  # furniture boxes: (id, lo, hi)
        self._fronts = {o.id: front_side(o, self.graph) for o in self.graph.objects.values()
                        if o.id not in self.stage.items}
        self._receptacles = [o.id for o in self.graph.objects.values() if o.id not in self.stage.items
                             and class_type(o.class_) in _RECEPTACLE_TYPES]
        movable = frozenset(self.stage.semantic_of[oid] for oid in self.stage.items)
        self.index = SemanticIndex.from_semantic_scene(self.sim.semantic_scene, movable)
        # Region k of the .house is room stage.region_rooms[k]; the household names them by their labels.
        room_name = {node: name for name, (layer, node) in self.scene.node_of.items() if layer == "room"}
        self.region_room = {k: room_name[rid] for k, rid in enumerate(self.stage.region_rooms)}
        self._habitat_sim = habitat_sim
        self._approaches: dict[str, np.ndarray] = {}  # fixture -> where the robot stands to handle it

    def _cut_off(self) -> list[str]:
        """The rooms the stage does not let the robot reach from the first room of their floor (floors meet by
        stairs), or where it finds no free floor to stand on: [] when the stage is as the symbolic world says."""
        by_floor: dict[str, list[str]] = {}
        for name, (layer, node) in sorted(self.scene.node_of.items()):
            if layer == "room":
                by_floor.setdefault(self.graph.rooms[node].floor, []).append(name)
        cut = []
        for rooms in by_floor.values():
            points = {}
            for room in rooms:
                try:
                    points[room] = self._stand_point(room)
                except SceneError:
                    cut.append(room)
            reached = [r for r in rooms if r in points]
            for room in reached[1:]:
                self.position = points[reached[0]]
                if self._walk(points[room], record=False):
                    cut.append(room)
        self.distance = 0.0
        return cut

    def _unreachable_fixtures(self) -> list[str]:
        """The furniture of reachable rooms that the robot cannot walk up to from any side."""
        out = []
        for name, (layer, node) in sorted(self.scene.node_of.items()):
            entity = self.scene.entities.get(name)
            if layer != "object" or node in self.stage.items or entity is None or entity.room is None:
                continue
            with contextlib.suppress(SceneError):  # a room without floor is `_cut_off`'s
                if not self._reachable(self._stand_point(entity.room), self._approach_point(name)):
                    out.append(name)
        return out

    def _check_reachable(self) -> None:
        """Every room's stand point is reachable from the others of its floor (floors meet by stairs), as the
        symbolic world's doors say; else `SceneError` naming the rooms, before any task is given."""
        by_floor: dict[str, list[str]] = {}
        for name, (layer, node) in sorted(self.scene.node_of.items()):
            if layer == "room":
                by_floor.setdefault(self.graph.rooms[node].floor, []).append(name)
        for rooms in by_floor.values():
            start, cut = self._stand_point(rooms[0]), []
            for room in rooms[1:]:
                self.position = start
                if self._walk(self._stand_point(room), record=False):
                    cut.append(room)
            if cut:
                raise SceneError(
                    f"{self.graph.name}: the habitat stage cannot reach {cut} from {rooms[0]} (the symbolic world "
                    "connects them): furniture fills their doorways or their floor; check those rooms' boxes and "
                    "their furniture's boxes in the 3DSG")
        self.distance = 0.0

    def _clear_way(self, habitat_sim, most: int = 12) -> bool:
        """When furniture cuts a room off (or covers its floor), or else leaves a piece of furniture with no side
        the robot can walk up to, move what blocks it: each of the `most` pieces nearest what is cut off
        (pieces whose size the file does not give first: `report.default_sized`) is pushed against each wall
        of its room in turn, with what rests on it, until the stage reaches every room and every piece. The move goes into the scene's own graph as well (one geometry for both worlds)
        and is said in its load report (`report.notes`) and in `moved`. Returns whether the stage was (or now
        is) clear."""
        self.moved: list[str] = []
        self._moves: list[tuple[int, np.ndarray]] = []
        cut = self._cut_off()
        if not cut:
            cut = self._unreachable_fixtures()
            if not cut:
                return True
        source = self.scene.source_graph
        report = getattr(source, "report", None)
        guessed = set(getattr(report, "default_sized", []) or [])
        cut_ids = [self.scene.node_of[r] for r in cut]
        boxes = [self.graph.rooms[i] if layer == "room" else self.graph.objects[i] for layer, i in cut_ids]
        floors = {self.graph.rooms[b.id if layer == "room" else b.parent_room].floor
                  for (layer, _), b in zip(cut_ids, boxes, strict=True)}

        def gap(obj) -> float:
            return min(float(np.linalg.norm(np.maximum(np.abs(np.subtract(obj.location[:2], r.location[:2]))
                                                       - np.divide(r.size[:2], 2) - np.divide(obj.size[:2], 2), 0.0)))
                       for r in boxes)

        pieces = [o for o in self.graph.objects.values() if o.id not in self.stage.items
                  and self.graph.rooms[o.parent_room].floor in floors]
        pieces = sorted(pieces, key=lambda o: (o.id not in guessed, round(gap(o), 2), o.id))[:most]
        graph, scene_graph = self.graph, source
        for obj in pieces:
            room = graph.rooms[obj.parent_room]
            for axis, sign in ((0, -1), (0, 1), (1, -1), (1, 1)):
                delta = np.zeros(3)
                edge = room.location[axis] + sign * (room.size[axis] / 2 - obj.size[axis] / 2 - 0.05)
                delta[axis] = edge - obj.location[axis]
                if abs(delta[axis]) < 0.1:
                    continue
                self.graph = _moved(graph, obj.id, delta)
                self._rebuild(habitat_sim)
                if not self._cut_off() and not self._unreachable_fixtures():
                    self.scene.source_graph = _moved(scene_graph, obj.id, delta)
                    note = (f"{obj.label} moved {abs(delta[axis]):.2f} m {'-+'[sign > 0]}{'xy'[axis]} (to the wall of "
                            f"{room.label}), with what rests on it: it cut {sorted(cut)} off in habitat-sim")
                    self.moved.append(note)
                    self._move_fixture_entities(obj.id, delta)
                    self._moves.append((obj.id, delta))
                    if report is not None:
                        self.scene.source_graph.report = replace(report, notes=[*report.notes, note])
                    return True
        self.graph = graph
        self._rebuild(habitat_sim)
        return False

    def _move_fixture_entities(self, oid: int, delta: np.ndarray) -> None:
        """The symbolic scene's floor-plan position of a fixture the stage moved, moved as well."""
        for name, (layer, node) in self.scene.node_of.items():
            entity = self.scene.entities.get(name)
            if layer == "object" and node == oid and entity is not None and entity.pos is not None:
                self.scene.entities[name] = replace(entity, pos=(entity.pos[0] + float(delta[0]),
                                                                 entity.pos[1] + float(delta[1])))

    def _add_box(self, tm, rom, cube: str, handle: str, size, semantic_id: int):
        template = tm.get_template_by_handle(cube)
        sx, sy, sz = (max(float(s), 0.01) for s in size)
        template.scale = np.array([sx / 2, sz / 2, sy / 2])  # the primitive cube spans [-1, 1]; habitat is y-up
        tm.register_template(template, handle)
        body = rom.add_object_by_template_handle(handle)
        body.motion_type = self._habitat_sim.physics.MotionType.KINEMATIC
        body.semantic_id = semantic_id
        return body

    # ------------------------------------------------------------------ state mirroring
    def _room_of(self, facts: frozenset[Atom], entity: str) -> str:
        for a in facts:
            if a.predicate == "in-room" and a.args[0] == entity:
                return a.args[1]
        raise SceneError(f"{entity} is in no room")

    def _apply(self, facts: frozenset[Atom], initial: bool = False) -> None:
        """Move items and doors so habitat shows `facts` (only what differs from the last facts)."""
        changed = facts - self.facts
        if facts != self.facts:
            self._version += 1
        # Larger items first: a small one then finds room beside them or lies on top, where it shows; a big
        # one piled over a small one would hide it from every camera (a plate over a knife in a sink).
        for atom in sorted(changed, key=lambda a: (-self._footprint(a), a)):
            if atom.predicate in ("on", "inside") and atom.args[0] in self.oid_of:
                self._put(atom.args[0], atom.args[1], atom.predicate, keep=initial)
            elif atom.predicate in ("held-by", "discarded") and atom.args[0] in self.oid_of:
                self._hide(atom.args[0])
            elif atom.predicate == "holding":
                self._to_hand(atom.args[1])
        for oid, (body, centre) in self.panels.items():
            name = self._name_of_oid(oid)
            is_closed = name is not None and Atom("closed", (name,)) in facts
            target = centre if is_closed else np.array([centre[0], centre[1], _HIDDEN_Y])
            body.translation = self._mn.Vector3(*to_habitat(target))
        self._shut_in(facts)
        self.facts = facts

    def _shut_in(self, facts: frozenset[Atom]) -> None:
        """Items in a closed container that its box cannot hold (a real 3DSG fridge box can be 7 cm deep) wait
        below the floor while it is closed, so no camera sees what its door hides; they stand at their spot
        in it (`pose`) again when it opens."""
        for atom in facts:
            if atom.predicate != "inside" or atom.args[0] not in self.oid_of or atom.args[1] not in self.oid_of:
                continue
            oid, fid = self.oid_of[atom.args[0]], self.oid_of[atom.args[1]]
            if fid not in self.panels or oid not in self.pose:
                continue
            lo, hi = self.graph.objects[fid].box
            half = np.asarray(self.graph.objects[oid].size) / 2
            p = self.pose[oid]
            sticks_out = bool(np.any(p - half < lo - 1e-3) or np.any(p + half > hi + 1e-3))
            shut = sticks_out and Atom("closed", (atom.args[1],)) in facts
            self.bodies[oid].translation = self._mn.Vector3(*to_habitat(
                np.array([p[0], p[1], _HIDDEN_Y]) if shut else p))

    def _footprint(self, atom: Atom) -> float:
        """The floor area of the item an on/inside atom places (0 for any other atom)."""
        if atom.predicate not in ("on", "inside") or atom.args[0] not in self.oid_of:
            return 0.0
        size = self.graph.objects[self.oid_of[atom.args[0]]].size
        return round(float(size[0] * size[1]), 6)

    def _name_of_oid(self, oid: int) -> str | None:
        return self.name_of_sid.get(self.stage.semantic_of[oid])

    def _set(self, oid: int, centre: np.ndarray) -> None:
        centre = np.asarray(centre, dtype=float)
        if oid not in self.pose or not np.array_equal(self.pose[oid], centre):
            self._version += 1
        self.pose[oid] = centre
        self.bodies[oid].translation = self._mn.Vector3(*to_habitat(centre))

    def _put(self, item: str, fixture: str, relation: str, keep: bool = False) -> None:
        oid, fid = self.oid_of[item], self.oid_of[fixture]
        obj = self.graph.objects[oid]
        # Solid bodies do not interpenetrate: the 3DSG's own spot is kept only when it is clear of the items
        # placed so far (generated 3DSGs put a quarter of their items partly inside another one), and for an
        # item on a surface only when it rests on the top: a real 3DSG box can lie within the surface's own
        # box (a plate sunk into a bed, books within a bookshelf), where the solid box would hide it.
        kept_at = support_of(self.graph, obj)
        if (keep and (kept_at == ("on", fid) or (kept_at == ("inside", fid) and relation == "inside"))
                and not self._clash(oid, np.asarray(obj.location)) and not self._buried(oid, fid, obj.location)):
            self._set(oid, np.asarray(obj.location))
            return
        holder = self._in_its_room(self.graph.objects[fid], obj.size)
        best = None
        for _ in range(40):  # the spot overlapping the fewest things already there, then under the fewest
            spot = np.asarray(place_spot(holder, obj.size, relation, self.rng))
            clash = self._clash(oid, spot)
            score = (len(clash) + self._buried(oid, fid, spot), len(self._over(oid, spot)))
            if best is None or score < best[0]:
                best = (score, clash, spot)
            if score == (0, 0):
                break
        _, clash, spot = best
        # A pile stays under a roof: a closed-front container's (a fridge, a cabinet: one that rose through it
        # would show what its door hides), else the room's ceiling (CM puts 17 books on one 0.6 m magazine
        # rack, a pile that rose to 7 m, out of every camera's view). An item that would rise through it
        # shares the space of the pile's top, as high as it fits under the roof.
        roof = holder.box[1][2] - SHELL_T if relation == "inside" and class_type(holder.class_) not in TOP_OPEN \
            else WALL_HEIGHT
        first = spot
        while clash:  # no free spot left: it rests on top of what is there, as a pile does
            top = max(self.pose[o][2] + self.graph.objects[o].size[2] / 2 for o in clash)
            spot = np.array([spot[0], spot[1], top + obj.size[2] / 2 + 0.002])
            if spot[2] + obj.size[2] / 2 > roof:
                spot = np.array([spot[0], spot[1], max(first[2], roof - obj.size[2] / 2)])
                break
            clash = self._clash(oid, spot)
        self._set(oid, spot)

    def _in_its_room(self, holder: Object3D, size) -> Object3D:
        """`holder` cut to the part of its box inside its room's box, where that holds a box of `size` (x-y): an
        item the symbolic world puts there is seen from that room (Kemblesville's refrigerator_9 reaches
        0.24 m into empty_room_6, the rest of it behind the room's wall); else `holder` as it is."""
        room = self.graph.rooms.get(holder.parent_room)
        if room is None or not all(room.size[:2]):
            return holder
        lo, hi = (np.asarray(x, dtype=float) for x in holder.box)
        r_lo = np.asarray(room.location[:2]) - np.asarray(room.size[:2]) / 2
        r_hi = np.asarray(room.location[:2]) + np.asarray(room.size[:2]) / 2
        c_lo, c_hi = np.maximum(lo[:2], r_lo), np.minimum(hi[:2], r_hi)
        if np.allclose(c_lo, lo[:2]) and np.allclose(c_hi, hi[:2]) or np.any(c_hi - c_lo < np.asarray(size[:2])):
            return holder
        centre = (*((c_lo + c_hi) / 2), holder.location[2])
        return replace(holder, location=tuple(float(v) for v in centre), size=(*(c_hi - c_lo), holder.size[2]))

    def _rests_at(self, oid: int, fid: int, reach: float = 0.3) -> bool:
        """Whether item `oid` stands at `fid` in the stage: within `reach` of its box, or on a pile of items
        that stands on it (a crowded surface piles up: `_put`)."""
        lo, hi = (np.asarray(x, dtype=float) for x in self.graph.objects[fid].box)
        p = self.pose[oid]
        bottom = p[2] - self.graph.objects[oid].size[2] / 2  # a tall vase's centre stands high over its couch
        if np.any(p[:2] < lo[:2] - reach) or np.any(p[:2] > hi[:2] + reach) or p[2] < lo[2] - reach:
            return False
        pile = sum(self.graph.objects[o].size[2] for o, q in self.pose.items() if o != oid and q[2] < p[2]
                   and np.all(q[:2] >= lo[:2] - reach) and np.all(q[:2] <= hi[:2] + reach) and q[2] > lo[2] - reach)
        return bool(bottom <= hi[2] + reach + pile)

    def _buried(self, oid: int, fid: int, spot) -> int:
        """How many pieces of furniture other than its holder `fid` the box of `oid` would be inside of at
        `spot` (real 3DSG chairs stand half under a table: an item there would be hidden in the chair's box)."""
        half = np.asarray(self.graph.objects[oid].size) / 2
        lo, hi = np.asarray(spot) - half, np.asarray(spot) + half
        return sum(1 for f in self._solid if f[0] != fid and np.all(np.minimum(hi, f[2]) - np.maximum(lo, f[1]) > 1e-3))

    def _over(self, oid: int, spot: np.ndarray) -> list[int]:
        """The items already placed that would lie over the box of `oid` at `spot`, hiding it from above."""
        size = np.asarray(self.graph.objects[oid].size)
        top = spot[2] + size[2] / 2
        return [other for other, p in self.pose.items() if other != oid
                and p[2] - self.graph.objects[other].size[2] / 2 >= top - 1e-3
                and np.all(np.abs(p[:2] - spot[:2]) < (size[:2] + np.asarray(self.graph.objects[other].size[:2])) / 2)]

    def _clash(self, oid: int, spot: np.ndarray) -> list[int]:
        """The items already placed that the box of `oid` would overlap at `spot`."""
        size = np.asarray(self.graph.objects[oid].size)
        return [other for other, p in self.pose.items() if other != oid and
                np.all(np.abs(p - spot) < (size + np.asarray(self.graph.objects[other].size)) / 2 - 1e-3)]

    def _hide(self, item: str) -> None:
        oid = self.oid_of[item]
        self._set(oid, np.array([self.pose.get(oid, np.zeros(3))[0], 0.0, _HIDDEN_Y]))

    def _to_hand(self, item: str) -> None:
        # At hand height inside the robot's body: carried along, below the camera's view.
        p = from_habitat(self.position) if hasattr(self, "position") else np.zeros(3)
        self._set(self.oid_of[item], np.array([p[0], p[1], 0.9]))

    # ------------------------------------------------------------------ robot
    def _free(self, point: np.ndarray) -> bool:
        """Whether the robot's base can stand at `point`: on the floor and outside every piece of furniture.

        Recast also finds floor inside the tall open shells (a fridge, a wardrobe) and on top of beds; the
        navmesh is built from the render mesh, so these are ruled out here rather than in the mesh.
        """
        if not np.all(np.isfinite(point)) or abs(float(point[1])) > 0.15:
            return False
        x, y = from_habitat(point)[:2]
        return not any(lo[0] < x < hi[0] and lo[1] < y < hi[1] for lo, hi in self._footprints)

    def _floor_point(self, x: float, y: float) -> np.ndarray | None:
        """The free navigable point snapped from (x, y), or from rings around it when that one is not free."""
        for radius in (0.0, 0.3, 0.6, 0.9, 1.2, 1.6, 2.0):
            for angle in np.linspace(0, 2 * np.pi, 1 if radius == 0 else 12, endpoint=False):
                query = to_habitat((x + radius * np.cos(angle), y + radius * np.sin(angle), 0.0))
                point = np.asarray(self.sim.pathfinder.snap_point(query))
                if self._free(point):
                    return point
        return None

    def _in_room(self, point: np.ndarray, room: str) -> bool:
        r = self.graph.rooms[self.scene.node_of[room][1]]
        p = from_habitat(point)
        return bool(np.all(np.abs(p[:2] - np.asarray(r.location[:2])) < np.asarray(r.size[:2]) / 2))

    def _stand_point(self, room: str) -> np.ndarray:
        """Where `move` brings the robot: the free floor nearest the room's middle (anywhere in it if the
        middle is crowded)."""
        r = self.graph.rooms[self.scene.node_of[room][1]]
        point = self._floor_point(r.location[0], r.location[1])
        if point is None or not self._in_room(point, room):
            point = self.random_pose(room, np.random.default_rng(0), margin=0.0)
        if point is None:
            raise SceneError(f"{room} has no free navigable floor the robot can stand on (furniture fills it, or "
                             "it is narrower than the robot's 0.4 m); check its box and its objects' boxes in the 3DSG")
        return point

    def random_pose(self, room: str, rng: np.random.Generator, margin: float = 0.3) -> np.ndarray | None:
        """A uniformly drawn free navigable point of `room` (None after 50 draws fail): the robot's base there."""
        r = self.graph.rooms[self.scene.node_of[room][1]]
        half = np.asarray(r.size[:2]) / 2 - margin
        for _ in range(50):
            x, y = np.asarray(r.location[:2]) + rng.uniform(-half, half)
            point = np.asarray(self.sim.pathfinder.snap_point(to_habitat((x, y, 0.0))))
            if self._free(point) and self._in_room(point, room):
                return point
        return None

    def _approach_point(self, fixture: str) -> np.ndarray:
        """Where the robot stands to handle a piece of furniture: in front of it, on the navmesh, where the
        robot can walk to from its room's stand point; else in front of another side (the front first, then
        its back, then the short sides). Where no side can be walked to, the front's point (the walk there
        fails, naming it); where no side has floor, the room's stand point."""
        cached = self._approaches.get(fixture)
        if cached is not None:
            return cached
        obj: Object3D = self.graph.objects[self.oid_of[fixture]]
        front = self._fronts.get(obj.id) or front_side(obj, self.graph)
        home = self._stand_point(self.scene.entities[fixture].room)
        found = []
        for axis, sign in dict.fromkeys([front, (front[0], -front[1]), (1 - front[0], 1), (1 - front[0], -1)]):
            p = np.array(obj.location, dtype=float)
            p[axis] += sign * (obj.size[axis] / 2 + self.agent_radius + 0.35)
            candidate = self._floor_point(p[0], p[1])
            if candidate is not None:
                found.append(candidate)
                if self._reachable(home, candidate):
                    break
        # None reachable: the front's point all the same, so walking there fails and says why.
        point = found[-1] if found and self._reachable(home, found[-1]) else (found[0] if found else home)
        self._approaches[fixture] = point
        return point

    def _viewpoint(self, fixture: str, seen_top: float = -np.inf) -> np.ndarray:
        """Where the robot looks at a receptacle from: where it handles it (`_approach_point`), or, where its
        support surface or the top of what the robot saw resting there (`seen_top`: a pile) is above the
        head camera, farther back on the same side, where the camera's upward view reaches 0.3 m over it at
        the receptacle's front edge (over a 2 m shelf from 2.3 m away: from the approach point, 0.55 m off,
        the camera sees its underside only): that distance, else 0.8 or 0.6 of it, whichever first is free
        floor of its room the robot can walk to from the approach point; else the approach point."""
        point = self._approach_point(fixture)
        obj = self.graph.objects[self.oid_of[fixture]]
        rise = max(float(support_points(obj, 2)[0, 2]), seen_top) + 0.3 - self.camera_height
        up = max(self.tilts) + np.arctan(np.tan(np.deg2rad(self.hfov) / 2) * self.height / self.width)
        here = from_habitat(point)[:2] - np.asarray(obj.location[:2])
        if rise <= 0 or up <= 0.05 or not np.linalg.norm(here):
            return point
        axis = int(np.argmax(np.abs(here)))  # the side the approach point faces
        edge = obj.location[axis] + np.sign(here[axis]) * obj.size[axis] / 2
        for share in (1.0, 0.8, 0.6):
            xy = np.array(obj.location[:2], dtype=float)
            xy[1 - axis] = from_habitat(point)[1 - axis]
            xy[axis] = edge + np.sign(here[axis]) * share * rise / np.tan(up)
            if abs(xy[axis] - edge) <= abs(here[axis]) - obj.size[axis] / 2:
                break  # no farther back than the approach point itself
            candidate = self._floor_point(xy[0], xy[1])
            if candidate is not None and self._in_room(candidate, self.scene.entities[fixture].room) and \
                    abs(from_habitat(candidate)[axis] - edge) > abs(here[axis]) - obj.size[axis] / 2 and \
                    self._reachable(point, candidate):
                return candidate
        return point

    def _reachable(self, start: np.ndarray, goal: np.ndarray) -> bool:
        """Whether the navmesh joins two points (habitat positions)."""
        path = self._habitat_sim.ShortestPath()
        path.requested_start = np.asarray(start, dtype=np.float32)
        path.requested_end = np.asarray(goal, dtype=np.float32)
        return bool(self.sim.pathfinder.find_path(path) and len(path.points) > 0)

    def _walk(self, target: np.ndarray, record: bool = True) -> str:
        """Drive along the navmesh geodesic to `target` ("" or why not); `record` keeps it as `last_path`."""
        path = self._habitat_sim.ShortestPath()
        path.requested_start = np.asarray(self.position, dtype=np.float32)
        path.requested_end = np.asarray(target, dtype=np.float32)
        if not self.sim.pathfinder.find_path(path) or len(path.points) == 0:
            return f"no navigable path from {np.round(from_habitat(self.position)[:2], 2).tolist()} to " \
                   f"{np.round(from_habitat(target)[:2], 2).tolist()}"
        points = [np.asarray(p) for p in path.points]
        if record:
            self.last_path = [from_habitat(p) for p in points]  # 3DSG coordinates, for inspection and tests
        for a, b in itertools.pairwise(points):
            if np.linalg.norm(b - a) > 1e-3:
                self.yaw = float(np.arctan2(-(b[0] - a[0]), -(b[2] - a[2])))  # habitat faces -z at yaw 0
        self.distance += float(path.geodesic_distance)
        self.position = points[-1]
        return ""

    def _take_stairs(self, room: str, rise: float) -> None:
        """Come out of the stairs at `room`'s stand point on its floor (floors lie side by side in the stage:
        stairs are not geometry); a flight counts twice its rise as distance."""
        point = self._stand_point(room)
        self.last_path = [*getattr(self, "last_path", []), from_habitat(point)]
        self.distance += 2 * rise
        self.position = point

    def _face(self, fixture: str) -> None:
        c = to_habitat(self.graph.objects[self.oid_of[fixture]].location)
        self.yaw = float(np.arctan2(-(c[0] - self.position[0]), -(c[2] - self.position[2])))

    def execute(self, action: Any, add: frozenset[Atom], delete: frozenset[Atom]) -> str:
        name, args = action.name, action.args
        if name == "move":
            here, there = (self.graph.rooms[self.scene.node_of[r][1]].floor for r in args[1:3])
            if here == there:
                error = self._walk(self._stand_point(args[2]))
            else:  # stairs: to the staircase room's stand point, then out at the room it leads to
                error = self._walk(self._stand_point(args[1]))
                if not error:
                    self._take_stairs(args[2], abs(self._levels[there] - self._levels[here]))
        else:
            target = next((a for a in args[1:] if a in self.oid_of and self.oid_of[a] not in self.bodies), None)
            error = ""
            if target is not None:
                error = self._walk(self._approach_point(target))
                if not error:
                    self._face(target)
            if not error and name in ("pick-up", "take-out"):
                item, holder = args[1], args[2]
                if not self._rests_at(self.oid_of[item], self.oid_of[holder]):
                    error = f"{item} is not at {holder} in the simulator"
        if error:
            return error
        self._apply((self.facts - delete) | add)
        self._carry()
        return ""

    def _carry(self) -> None:
        """What the robot holds goes where it went."""
        for atom in self.facts:
            if atom.predicate == "holding" and atom.args[1] in self.oid_of:
                self._to_hand(atom.args[1])

    def sync(self, facts: frozenset[Atom]) -> None:
        self._apply(facts)

    # ------------------------------------------------------------------ perception and rendering
    def _place_agent(self, agent_id: int, yaw: float) -> None:
        state = self._habitat_sim.AgentState()
        state.position = np.asarray(self.position, dtype=np.float32)
        state.rotation = _yaw_quat(yaw)
        self.sim.get_agent(agent_id).set_state(state)

    def _views(self, yaws) -> list[View]:
        """Semantic + depth views at the robot's position, at each of `yaws` and every head tilt."""
        import quaternion

        views = []
        for yaw in yaws:
            self._place_agent(1, yaw)
            obs = self.sim.get_sensor_observations(agent_ids=1)
            states = self.sim.get_agent(1).get_state().sensor_states
            for t in range(len(self.tilts)):
                sensor = states[f"depth{t}"]
                views.append(View(np.asarray(obs[f"semantic{t}"]), np.asarray(obs[f"depth{t}"]),
                                  np.asarray(sensor.position), quaternion.as_rotation_matrix(sensor.rotation),
                                  self.hfov))
        self.views_rendered += len(views)
        return views

    def look_around(self) -> list[View]:
        """Semantic + depth views at the robot's position: `headings` yaws apart, at every head tilt."""
        return self._views(self.yaw + 2 * np.pi * k / self.headings for k in range(self.headings))

    def _open_receptacles_here(self) -> list[int]:
        """The open receptacles of the room the robot stands in (3DSG ids)."""
        room = self.region_room.get(self.index.region_at(from_habitat(self.position)))
        if room is None:
            return []
        out = []
        for oid in self._receptacles:
            name = self._name_of_oid(oid)
            if (name in self.scene.entities and self.scene.entities[name].room == room
                    and Atom("closed", (name,)) not in self.facts):
                out.append(oid)
        return out

    def inspect_receptacles(self, views: list[View]) -> list[View]:
        """Views of the open receptacles of the room the robot stands in whose support surface `views` show
        less than half of (a table behind a wardrobe), or front-opening ones seen obliquely (a cabinet from
        its side): the robot drives to each (nearest first) along the navmesh (to `_viewpoint`: farther back where
        its surface, or a pile seen on it, is above the camera), faces it, looks, drives back."""
        todo = []
        for oid in self._open_receptacles_here():
            obj, front = self.graph.objects[oid], self.stage.openings.get(oid)
            if ((front is not None and oblique(obj, front, from_habitat(self.position))) or
                    seen_fraction(views, support_points(obj), max_range=self.max_range) < _SEEN):
                todo.append(oid)
        if not todo:
            return []
        seen = [s for s in observe(views, self.index, self.min_pixels, self.max_range).values()
                if s.semantic_id in self.index.movable]
        start, yaw, walked = self.position, self.yaw, self.distance
        extra = []
        while todo:
            here = from_habitat(self.position)[:2]
            oid = min(todo, key=lambda o: float(np.linalg.norm(np.asarray(self.graph.objects[o].location[:2]) - here)))
            todo.remove(oid)
            name = self._name_of_oid(oid)
            if self._walk(self._viewpoint(name, _top_over(self.graph.objects[oid], seen)), record=False):
                continue
            self._carry()
            self._face(name)
            extra += self._views([self.yaw])
        self._walk(start, record=False)
        self.position, self.yaw = start, yaw
        self._carry()
        self.inspections += 1
        self.inspection_distance += self.distance - walked
        return extra

    def surveyed_receptacles(self, views: list[View], sightings: dict) -> frozenset[str]:
        """The open receptacles of the robot's room whose whole support surface `views` account for
        (`adapters.habitat.surveyed`, on an 8 x 8 grid): each spot shows bare, or lies under an item seen
        resting right there, at the height a lone item rests (`rest_bottom`): one higher lies on a pile.
        Another receptacle, however much of it shows, tells nothing of what it does not show."""
        covers: dict[int, list] = {}
        for s in sightings.values():
            if s.semantic_id not in self.index.movable or s.support is None:
                continue
            relation, holder_sid = s.support
            holder = self.oid_of.get(self.name_of_sid.get(holder_sid, ""))
            # On a pile, it lies an item's thickness higher (a fork's is 2 cm): what it lies on may hide another.
            if holder is None or s.bottom > rest_bottom(self.graph.objects[holder], s.top - s.bottom, relation) + 0.015:
                continue
            half = np.asarray(self.index.objects[s.semantic_id].size[:2]) / 2 + 0.02
            covers.setdefault(holder, []).append((s.centre[:2] - half, s.centre[:2] + half))
        return frozenset(self._name_of_oid(oid) for oid in self._open_receptacles_here()
                         if surveyed(views, support_points(self.graph.objects[oid], 8), covers.get(oid, ()),
                                     max_range=self.max_range))

    def _look(self) -> list[View]:
        """The look-around's views, and with `inspect` those of the receptacles it drove to."""
        views = self.look_around()
        if self.inspect:
            views += self.inspect_receptacles(views)
        return views

    def _look_key(self) -> tuple:
        """What the look-around's images depend on: the stage, the robot's pose, the items' and doors' places
        (`_version`) and whether it drives to look (`inspect`)."""
        return (id(self.sim), np.asarray(self.position, dtype=np.float32).tobytes(), float(self.yaw),
                self._version, self.inspect)

    def _looked(self) -> tuple[list[View], dict]:
        """The look-around's views and sightings (`observe`); the last ones again where neither the robot nor
        any item or door has moved since they were taken (the images would be the same), counted in
        `looks_reused`."""
        key = self._look_key()
        if self._last_look is not None and self._last_look[0] == key:
            self.looks_reused += 1
            return self._last_look[1], self._last_look[2]
        views = self._look()
        sightings = observe(views, self.index, self.min_pixels, self.max_range)
        # After the look: its drives moved what the robot holds and back, and the robot stands where it stood.
        key = self._look_key()
        self._last_look = (key, views, sightings)
        return views, sightings

    def sightings(self):
        return self._looked()[1]

    def percept(self, symbolic: dict) -> dict:
        room = symbolic["room"]
        fixtures = self.scene.fixtures_in(room)
        types = {n: e.pddl_type for n, e in self.scene.entities.items()}
        views, sightings = self._looked()
        return household_percept(sightings, self.name_of_sid, self.region_room, symbolic, self.facts,
                                 types, fixtures, self.surveyed_receptacles(views, sightings))

    def render_frame(self, overlay: dict, width: int, height: int) -> np.ndarray | None:
        """The robot's RGB camera above the text panel every world's frames have (task, utterances, action,
        plan, counts, failure banner)."""
        from servicerobot.envs.panel import TextPanel, panel_height, with_panel

        self._place_agent(0, self.yaw)
        rgb = np.asarray(self.sim.get_sensor_observations(agent_ids=0)["rgb"])[..., :3]
        panel = getattr(self, "_text_panel", None)
        if panel is None or (panel.width, panel.panel_h) != (width, panel_height(height)):
            panel = self._text_panel = TextPanel(width, panel_height(height))
        return with_panel(rgb, overlay, width, height, panel)

    def __del__(self) -> None:
        # An env dropped without close(): close the simulator explicitly, or habitat-sim 0.2.2 aborts the
        # process when the next one starts ("GL::Context::current(): no current context").
        with contextlib.suppress(Exception):  # at interpreter shutdown modules may be gone
            self.close()

    def close(self) -> None:
        if getattr(self, "sim", None) is not None:
            self.sim.close()
            self.sim = None
        workdir = getattr(self, "_workdir", None)
        if workdir is not None and os.path.isdir(workdir):
            shutil.rmtree(workdir, ignore_errors=True)


def _top_over(obj: Object3D, sightings) -> float:
    """The highest top of the items of `sightings` seen over `obj`'s footprint, above its top (a pile on it)."""
    lo, hi = obj.box
    tops = [s.top for s in sightings if np.all(s.centre[:2] >= np.asarray(lo[:2]))
            and np.all(s.centre[:2] <= np.asarray(hi[:2])) and s.bottom >= hi[2] - 0.05]
    return max(tops, default=-np.inf)


def _moved(sg, oid: int, delta: np.ndarray):
    """A copy of graph `sg` with object `oid` moved by `delta` (x, y, z), and the items resting on or in it."""
    out = sg.copy()
    riders = [o.id for o in sg.objects.values() if o.id != oid and support_of(sg, o) is not None
              and support_of(sg, o)[1] == oid]
    for k in (oid, *riders):
        o = out.objects[k]
        out.objects[k] = replace(o, location=tuple(float(v) for v in np.add(o.location, delta)))
    return out
