"""Reading and writing 3D scene-graph files: Stanford's 3DSG `.npz` (a pickled dict under `output` with `room`
and `object` dicts; loaded with a restricted unpickler, so a file can carry only plain data, within size
limits) and Context Matters' scene `.json`; the record fields both hold. `servicerobot.scenes.gibson.load_3dsg`
and `servicerobot.scenes.real_3dsg.load_scene` read files with these.
"""

from __future__ import annotations

import io
import json
import pickle
import zipfile
from pathlib import Path
from typing import Any

import numpy as np

from servicerobot.errors import SceneError
from servicerobot.files import write_atomic
from servicerobot.limits import excerpt, expanded_size, open_bounded, shorten
from servicerobot.scenes.graph3d import SceneGraph3D, Vec3, _v3

__all__ = ["MAX_JSON_BYTES", "MAX_NPZ_BYTES", "MAX_OUTPUT_BYTES", "MAX_PLAIN_WEIGHT", "save_json", "save_npz"]

_NUMPY_GLOBALS = {
    ("numpy.core.multiarray", "_reconstruct"), ("numpy._core.multiarray", "_reconstruct"),
    ("numpy.core.multiarray", "scalar"), ("numpy._core.multiarray", "scalar"),
    ("numpy", "ndarray"), ("numpy", "dtype"), ("_codecs", "encode"), ("collections", "OrderedDict"),
}


class _DataUnpickler(pickle.Unpickler):
    """Unpickles plain data and numpy arrays only; any other global is refused (no code runs on load)."""

    def find_class(self, module: str, name: str) -> Any:
        if (module, name) in _NUMPY_GLOBALS:
            return super().find_class(module, name)
        raise pickle.UnpicklingError(f"refused to load {module}.{name}: a 3DSG file holds only plain data")


# What a 3DSG file may hold. Stanford's files are ~2 MB zipped with an `output` of tens of MB at most; the caps
# sit far above that and far below what would exhaust a machine (a zip bomb, a pickle of shared references).
MAX_NPZ_BYTES = 256 << 20  # the .npz file itself
MAX_OUTPUT_BYTES = 256 << 20  # its `output.npy` entry, inflated
MAX_JSON_BYTES = 64 << 20  # a Context Matters scene .json
MAX_PLAIN_WEIGHT = 50_000_000  # nodes + string characters of `output` as a tree (shared objects counted per use)
_MAX_DEPTH = 12
_MAX_NPZ_ENTRIES = 64


def _check_plain(value: Any, where: str) -> None:
    """Refuse `value` unless it is plain data (None, str, bytes, bool, numbers, numpy arrays, dicts, lists,
    tuples) nested at most 12 deep whose expansion as a tree stays under `MAX_PLAIN_WEIGHT`.

    A pickle can share one object many times (a list holding the same list 50 times, 7 levels deep, is a
    1 kB file that expands to 50**7 nodes); each object is visited once and its expanded weight memoised."""
    def parts(x: Any):
        if x is None or isinstance(x, (bool, int, float, np.generic)):
            return 1, None
        if isinstance(x, (str, bytes)):
            return 1 + len(x), None
        if isinstance(x, np.ndarray):
            return 1, (x.reshape(-1) if x.dtype == object else ())
        if isinstance(x, dict):
            return 1, [y for kv in x.items() for y in kv]
        if isinstance(x, (list, tuple)):
            return 1, x
        raise SceneError(f"{where}: holds a {type(x).__name__}, not plain scene-graph data")

    expanded_size(value, parts, limit=MAX_PLAIN_WEIGHT, max_depth=_MAX_DEPTH,
                  too_big=lambda: SceneError(f"{where}: 'output' expands to more than {MAX_PLAIN_WEIGHT:,} values and "
                                             "characters (objects shared over and over); a scene graph is far smaller"),
                  too_deep=lambda: SceneError(f"{where}: nested too deeply for a scene graph (more than {_MAX_DEPTH} "
                                              "levels)"))


def _read_npz_output(path: Path) -> dict:
    try:
        with open_bounded(path, MAX_NPZ_BYTES, "3DSG .npz file", SceneError) as fh:
            _check_entry_count(fh, path)
            with zipfile.ZipFile(fh) as archive:
                raw = _inflate_output(archive, path)
    except SceneError:
        raise
    except (zipfile.BadZipFile, zipfile.LargeZipFile, EOFError, OSError, NotImplementedError, RuntimeError,
            ValueError) as error:
        raise SceneError(f"{path}: not a readable .npz archive ({shorten(str(error))})") from error
    return _unpickle_output(raw, path)


def _check_entry_count(fh, path: Path) -> None:
    """Refuse an archive listing more than `_MAX_NPZ_ENTRIES` members before `ZipFile` builds an object
    per member (millions fit in a small file); read from the end-of-central-directory record."""
    end_record = getattr(zipfile, "_EndRecData", None)  # private, but in every CPython since 2.6
    if end_record is None:
        return
    record = end_record(fh)
    fh.seek(0)
    if record and record[zipfile._ECD_ENTRIES_TOTAL] > _MAX_NPZ_ENTRIES:
        raise SceneError(f"{path}: the archive lists {record[zipfile._ECD_ENTRIES_TOTAL]:,} members; a 3DSG .npz "
                         f"has one ('output'), and at most {_MAX_NPZ_ENTRIES} are read")


def _inflate_output(archive: zipfile.ZipFile, path: Path) -> bytes:
    names = archive.namelist()
    if "output.npy" not in names:
        shown = [excerpt(n.removesuffix(".npy"), 40) for n in names[:10]]
        raise SceneError(f"{path}: not a 3DSG .npz: it has no 'output' array (arrays: {', '.join(shown)}"
                         f"{f' and {len(names) - 10:,} more' if len(names) > 10 else ''})")
    info = archive.getinfo("output.npy")
    if info.file_size > MAX_OUTPUT_BYTES:
        raise SceneError(f"{path}: 'output' inflates to {info.file_size:,} bytes, over the limit of "
                         f"{MAX_OUTPUT_BYTES:,}; a 3DSG scene graph is far smaller")
    with archive.open(info) as member:  # the header may understate the size: never inflate past the cap
        raw = member.read(MAX_OUTPUT_BYTES + 1)
    if len(raw) > MAX_OUTPUT_BYTES:
        raise SceneError(f"{path}: 'output' inflates past the limit of {MAX_OUTPUT_BYTES:,} bytes")
    return raw


def _unpickle_output(raw: bytes, path: Path) -> dict:
    stream = io.BytesIO(raw)
    try:
        version = np.lib.format.read_magic(stream)
        shape, _, dtype = (np.lib.format.read_array_header_1_0(stream) if version == (1, 0)
                           else np.lib.format.read_array_header_2_0(stream))
    except ValueError as error:
        raise SceneError(f"{path}: 'output' is not a valid .npy array ({shorten(str(error))})") from error
    if dtype != object or shape != ():
        raise SceneError(f"{path}: 'output' must be a pickled dict (0-d object array), got {dtype} {excerpt(shape)}")
    try:
        value = _DataUnpickler(stream, encoding="latin1").load()  # latin1: numpy arrays pickled by Python 2
    except Exception as error:  # a truncated or hostile pickle fails in many ways
        raise SceneError(f"{path}: cannot read 'output' ({type(error).__name__}: {shorten(str(error))})") from error
    if isinstance(value, np.ndarray):
        value = value.item() if value.shape == () else value
    _check_plain(value, str(path))
    if not isinstance(value, dict):
        raise SceneError(f"{path}: 'output' must hold a dict, got {type(value).__name__}")
    return value


def _keys(record: dict) -> str:
    """A record's keys for an error message: the first ten, each cut short."""
    shown = sorted(shorten(str(k), 40) for k in list(record)[:10])
    return f"[{', '.join(shown)}{f' and {len(record) - 10:,} more' if len(record) > 10 else ''}]"


def _field(record: dict, key: str, where: str) -> Any:
    if key not in record:
        raise SceneError(f"{where} lacks {key!r} (has {_keys(record)})")
    return record[key]


def _int(value: Any, where: str) -> int:
    try:
        out = int(value)
    except (TypeError, ValueError) as error:
        raise SceneError(f"{where} must be an integer id, got {excerpt(value)}") from error
    if out != value and not isinstance(value, str):
        raise SceneError(f"{where} must be an integer id, got {excerpt(value)}")
    return out


def _strings(value: Any, where: str) -> tuple[str, ...]:
    if value is None:
        return ()
    if isinstance(value, str):
        return (value,) if value else ()
    if isinstance(value, (list, tuple, np.ndarray)):
        return tuple(str(x) for x in np.asarray(value, dtype=object).reshape(-1) if x is not None and str(x))
    raise SceneError(f"{where} must be a list of strings, got {excerpt(value)}")


def _geometry(record: dict, where: str) -> tuple[Vec3, Vec3] | None:
    if record.get("location") is not None and record.get("size") is not None:
        return _v3(record["location"], f"{where} location"), _v3(record["size"], f"{where} size")
    bbox = record.get("bbox")
    if bbox is not None and not (isinstance(bbox, (list, tuple, np.ndarray)) and len(bbox) == 0):
        try:
            box = np.asarray(bbox, dtype=float).reshape(-1)
        except (TypeError, ValueError):
            box = np.zeros(0)
        if box.size != 6:
            raise SceneError(f"{where} bbox must be [xmin, ymin, zmin, xmax, ymax, zmax], got {excerpt(bbox)}")
        return _v3((box[:3] + box[3:]) / 2, f"{where} bbox"), _v3(np.abs(box[3:] - box[:3]), f"{where} bbox")
    if record.get("location") is not None:
        return _v3(record["location"], f"{where} location"), (0.0, 0.0, 0.0)
    return None


def _bbox(location: Vec3, size: Vec3) -> list[float]:
    c, s = np.asarray(location), np.asarray(size) / 2
    return [round(float(x), 4) for x in (*(c - s), *(c + s))]


def save_npz(sg: SceneGraph3D, path: str | Path) -> None:
    """Write `sg` as a Stanford-style 3DSG `.npz` (atomically)."""
    rooms = {r.id: {"id": r.id, "scene_category": r.category, "floor_area": r.floor_area,
                    **({"floor_number": r.floor} if r.floor else {}),
                    "location": np.asarray(r.location), "size": np.asarray(r.size),
                    "volume": float(np.prod(r.size)), "parent_building": 1, "label": r.label}
             for r in sg.rooms.values()}
    objects = {o.id: {"id": o.id, "class_": o.class_, "action_affordance": list(o.action_affordance),
                      "material": list(o.material), "location": np.asarray(o.location), "size": np.asarray(o.size),
                      "volume": float(np.prod(o.size)), "parent_room": o.parent_room, "description": o.description,
                      "label": o.label}
               for o in sg.objects.values()}
    output = {"building": {"id": 1, "name": sg.name}, "room": rooms, "object": objects}

    def write(fh) -> None:
        np.savez_compressed(fh, output=np.array(output, dtype=object))

    write_atomic(path, write)


def save_json(sg: SceneGraph3D, path: str | Path) -> None:
    """Write `sg` as a Context Matters scene `.json` (with boxes filled in, atomically)."""
    rooms = {str(r.id): {"id": r.id, "category": r.category, "label": r.label, "bbox": _bbox(r.location, r.size),
                         "objects_in_room": [o.id for o in sg.objects_in(r.id)], "floor_area": r.floor_area,
                         "location": list(r.location), "size": list(r.size)}
             for r in sorted(sg.rooms.values(), key=lambda r: r.id)}
    objects = {str(o.id): {"id": o.id, "class": o.class_, "label": o.label, "parent_room": o.parent_room,
                           "description": o.description, "bbox": _bbox(o.location, o.size),
                           "action_affordance": list(o.action_affordance), "material": list(o.material),
                           "location": list(o.location), "size": list(o.size)}
               for o in sorted(sg.objects.values(), key=lambda o: o.id)}
    data = {"scene_info": {"name": sg.name, "total_rooms": len(rooms), "total_objects": len(objects)},
            "rooms": rooms, "objects": objects}
    write_atomic(path, json.dumps(data, indent=1) + "\n")
