"""TampMap <-> spark-dsg `DynamicSceneGraph` (the scene-graph format of MIT SPARK's Hydra), and JSON files.

Layers: ROOMS hold the regions, PLACES the places (2D places with their boundary polygon; sibling edges are
the connectivity; a room is each place's parent), OBJECTS the objects (bounding box; metadata
`{"name", "label", "suspicious", "radius"}`; a place is each object's parent). Map-level fields (name,
start, inflation, metadata) travel in the graph metadata under "tamp".

Real Hydra graphs have 3D places without boundaries: they get square polygons of side `place_size` around
their x-y position (default: the median distance to the nearest other place), places without a room go to
a region "unassigned", objects get the radius of half the larger side of their bounding box, and the start
is the first place (by id) of the largest connected component unless the metadata names one.

spark-dsg is the optional extra `dsg` (`pip install -e ".[dsg]"`); it is imported only when used.
"""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path
from typing import Any

import networkx as nx
import numpy as np

from servicerobot.errors import DependencyNotInstalled, SceneError, install_hint
from servicerobot.scenes.tamp_map import MapObject, Place, Region, TampMap

__all__ = ["from_spark_dsg", "load_dsg", "save_dsg", "to_spark_dsg"]


def _spark() -> Any:
    try:
        import spark_dsg
    except ImportError as error:
        raise DependencyNotInstalled(
            f"spark-dsg is needed to read and write scene graphs: {install_hint('dsg')}") from error
    return spark_dsg


def to_spark_dsg(tamp_map: TampMap) -> Any:
    """A spark_dsg.DynamicSceneGraph holding the map's regions, places (2D, with boundaries) and objects."""
    sd = _spark()
    g = sd.DynamicSceneGraph()
    room_ids: dict[str, Any] = {}
    centres: dict[str, list] = {}
    for p in tamp_map.places.values():
        centres.setdefault(p.region, []).append(p.centre)
    for i, (name, region) in enumerate(tamp_map.regions.items()):
        attrs = sd.RoomNodeAttributes()
        attrs.name = name
        c = np.mean(centres.get(name, [(0.0, 0.0)]), axis=0)
        attrs.position = np.array([c[0], c[1], 0.0])
        attrs.metadata.set({"name": name, "kind": region.kind})
        room_ids[name] = sd.NodeSymbol("R", i)
        g.add_node(sd.DsgLayers.ROOMS, room_ids[name], attrs)
    place_ids: dict[str, Any] = {}
    for i, p in enumerate(tamp_map.places.values()):
        attrs = sd.Place2dNodeAttributes()
        attrs.name = p.name
        attrs.position = np.array([p.centre[0], p.centre[1], 0.0])
        attrs.boundary = [np.array([x, y, 0.0]) for x, y in p.polygon]
        attrs.metadata.set({"name": p.name, "region": p.region})
        place_ids[p.name] = sd.NodeSymbol("p", i)
        g.add_node(sd.DsgLayers.PLACES, place_ids[p.name], attrs)
        if p.region in room_ids:
            g.insert_edge(room_ids[p.region], place_ids[p.name])
    for a, b in tamp_map.edges:
        g.insert_edge(place_ids[a], place_ids[b])
    for i, o in enumerate(tamp_map.objects.values()):
        attrs = sd.ObjectNodeAttributes()
        attrs.name = o.name
        attrs.position = np.array([o.position[0], o.position[1], 0.0])
        attrs.bounding_box = sd.BoundingBox(np.full(3, 2 * o.radius, dtype=np.float32),
                                            np.array([o.position[0], o.position[1], o.radius], dtype=np.float32))
        attrs.metadata.set({"name": o.name, "label": o.label, "suspicious": bool(o.suspicious), "radius": o.radius})
        sym = sd.NodeSymbol("O", i)
        g.add_node(sd.DsgLayers.OBJECTS, sym, attrs)
        if o.place in place_ids:
            g.insert_edge(place_ids[o.place], sym)
    g.metadata.set({"tamp": {"name": tamp_map.name, "start": tamp_map.start, "inflation": tamp_map.inflation,
                             "metadata": tamp_map.metadata}})
    return g


def _plain(value: Any) -> Any:
    """spark-dsg hands metadata back as read-only mapping proxies: turn them into plain dicts and lists."""
    if isinstance(value, Mapping):
        return {k: _plain(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [_plain(v) for v in value]
    return value


def _meta(attrs: Any) -> dict:
    data = _plain(attrs.metadata.get())
    return data if isinstance(data, dict) else {}


def _square(x: float, y: float, h: float) -> tuple[tuple[float, float], ...]:
    return ((x - h, y - h), (x + h, y - h), (x + h, y + h), (x - h, y + h))


def from_spark_dsg(graph: Any, place_size: float | None = None, name: str | None = None) -> TampMap:
    """The TampMap of a spark_dsg.DynamicSceneGraph (ours, or Hydra's with 3D places).

    Raises:
        SceneError: the graph has no places.
    """
    sd = _spark()
    tamp = _meta(graph).get("tamp", {})
    places_layer = graph.get_layer(sd.DsgLayers.PLACES)
    nodes = sorted(places_layer.nodes, key=lambda n: n.id.value)
    if not nodes:
        raise SceneError("the scene graph has no places (layer PLACES is empty)")
    rooms: dict[int, str] = {}
    regions: dict[str, Region] = {}
    if graph.has_layer(sd.DsgLayers.ROOMS):
        for r in graph.get_layer(sd.DsgLayers.ROOMS).nodes:
            meta = _meta(r.attributes)
            rname = meta.get("name") or r.id.str(True)
            rooms[r.id.value] = rname
            regions[rname] = Region(rname, meta.get("kind", "room"))
    key_name: dict[int, str] = {}
    pos = np.array([n.attributes.position[:2] for n in nodes], dtype=float)
    if place_size is None:
        d = np.hypot(pos[:, None, 0] - pos[None, :, 0], pos[:, None, 1] - pos[None, :, 1]) if len(pos) <= 4000 \
            else None
        if d is not None and len(pos) > 1:
            np.fill_diagonal(d, np.inf)
            nn = d.min(axis=1)
            nn = nn[(nn > 1e-6) & np.isfinite(nn)]
            place_size = float(np.median(nn)) if len(nn) else 1.0
        else:
            place_size = 1.0
    places: dict[str, Place] = {}
    for n, (x, y) in zip(nodes, pos.tolist()):
        attrs = n.attributes
        meta = _meta(attrs)
        pname = meta.get("name") or n.id.str(True)
        key_name[n.id.value] = pname
        parent = n.get_parent()
        region = meta.get("region") or (rooms.get(parent) if parent is not None else None) or "unassigned"
        if region not in regions:
            regions[region] = Region(region, "region")
        boundary = list(getattr(attrs, "boundary", []) or [])
        polygon = tuple((float(b[0]), float(b[1])) for b in boundary) if len(boundary) >= 3 \
            else _square(x, y, place_size / 2)
        places[pname] = Place(pname, (float(x), float(y)), polygon, region)
    edges = []
    for e in places_layer.edges:
        a, b = key_name.get(e.source), key_name.get(e.target)
        if a is not None and b is not None and a != b:
            edges.append((a, b))
    objects: dict[str, MapObject] = {}
    if graph.has_layer(sd.DsgLayers.OBJECTS):
        for n in sorted(graph.get_layer(sd.DsgLayers.OBJECTS).nodes, key=lambda n: n.id.value):
            attrs = n.attributes
            meta = _meta(attrs)
            oname = meta.get("name") or n.id.str(True)
            dims = np.asarray(attrs.bounding_box.dimensions, dtype=float)
            radius = float(meta.get("radius", 0.5 * max(dims[0], dims[1]) if dims.size >= 2 else 0.25))
            parent = n.get_parent()
            place = key_name.get(parent, "") if parent is not None else ""
            x, y = (float(v) for v in attrs.position[:2])
            if place not in places:
                place = min(places, key=lambda k: (places[k].centre[0] - x) ** 2 + (places[k].centre[1] - y) ** 2)
            label = meta.get("label") or (attrs.name if attrs.name and not attrs.name.startswith("O(") else
                                          f"class{attrs.semantic_label}")
            objects[oname] = MapObject(oname, (x, y), radius, str(label), bool(meta.get("suspicious", False)), place)
    start = tamp.get("start")
    if start not in places:
        g = nx.Graph(edges)
        g.add_nodes_from(places)
        biggest = max(nx.connected_components(g), key=len)
        start = next(p for p in places if p in biggest)
    return TampMap(name or tamp.get("name", "dsg"), regions, places, edges, objects, start,
                   float(tamp.get("inflation", 0.5)), dict(tamp.get("metadata", {})))


def save_dsg(tamp_map: TampMap, path: str | Path) -> Path:
    """Write the map as a spark-dsg scene graph (JSON for a .json path, spark-dsg's binary otherwise)."""
    path = Path(path)
    to_spark_dsg(tamp_map).save(str(path), include_mesh=False)
    return path


def load_dsg(path: str | Path, place_size: float | None = None) -> TampMap:
    """Read a spark-dsg scene graph file into a TampMap (see `from_spark_dsg`).

    Raises:
        SceneError: the file does not exist or has no places.
    """
    path = Path(path)
    if not path.is_file():
        raise SceneError(f"no scene graph file at {path}")
    sd = _spark()
    return from_spark_dsg(sd.DynamicSceneGraph.load(str(path)), place_size=place_size, name=None)
