"""Scene files under hostile use: a 3DSG `.npz` whose pickle shares one list over and over (a "memo bomb"), a
zip bomb, an archive of many members, and Context Matters instance files that are devices, pipes, huge or
garbage. Each is refused with a `SceneError` that names the file, in bounded memory and work, and quotes at
most a short excerpt of what it read."""

from __future__ import annotations

import contextlib
import io
import json
import os
import signal
import struct
import sys
import tracemalloc
import zipfile
from pathlib import Path

import numpy as np
import pytest
from hypothesis import HealthCheck, example, given, settings
from hypothesis import strategies as st

from servicerobot.envs.context_matters import generate_instance, read_split, write_split
from servicerobot.errors import SceneError
from servicerobot.limits import excerpt, read_bounded
from servicerobot.scenes import gibson_files
from servicerobot.scenes.gibson import load_3dsg


@contextlib.contextmanager
def _no_hang(seconds: int = 60):
    """Fail (instead of hanging the suite) if the body runs past `seconds`: a guard, not a speed check;
    the bounded code takes well under a second."""
    if not hasattr(signal, "SIGALRM"):
        yield
        return

    def stop(signum, frame):
        raise AssertionError(f"still running after {seconds} s: the work is not bounded")

    old = signal.signal(signal.SIGALRM, stop)
    signal.alarm(seconds)
    try:
        yield
    finally:
        signal.alarm(0)
        signal.signal(signal.SIGALRM, old)


def _npz_with_output(path: Path, output_npy: bytes, extra: dict[str, bytes] | None = None) -> Path:
    with zipfile.ZipFile(path, "w", zipfile.ZIP_DEFLATED) as archive:
        archive.writestr("output.npy", output_npy)
        for name, data in (extra or {}).items():
            archive.writestr(name, data)
    return path


def _npy(value) -> bytes:
    stream = io.BytesIO()
    np.save(stream, np.array(value, dtype=object), allow_pickle=True)
    return stream.getvalue()


# ------------------------------------------------------------------ .npz
def test_a_pickle_memo_bomb_is_refused_visiting_each_object_once(tmp_path):
    """Issue 25 item 2: a 1 kB file of a list holding one list 50 times, 7 levels deep (50**7 paths)."""
    level: list = []
    for _ in range(7):
        level = [level] * 50
    path = _npz_with_output(tmp_path / "bomb.npz", _npy({"room": {}, "object": {}, "building": {"x": level}}))
    assert path.stat().st_size < 2_000
    with _no_hang(), pytest.raises(SceneError, match=r"bomb\.npz: 'output' expands to more than 50,000,000"):
        load_3dsg(path)


def test_a_shared_string_counts_once_per_use():
    """Sharing a long string is as much a bomb as sharing a list: its characters count at every use."""
    big = "x" * 1_000_000
    with pytest.raises(SceneError, match="expands to more than"):
        gibson_files._check_plain({"room": {}, "object": {}, "a": [big] * 60}, "f.npz")
    gibson_files._check_plain({"room": {}, "object": {}, "a": [big] * 40}, "f.npz")  # 40 M characters: fine


def test_a_reference_cycle_is_refused_as_too_deep():
    loop: list = []
    loop.append(loop)
    with pytest.raises(SceneError, match="nested too deeply"):
        gibson_files._check_plain({"a": loop}, "f.npz")


def test_a_zip_bomb_is_refused_before_inflating(tmp_path, monkeypatch):
    """Issue 25 item 4: the member's size is checked before it is inflated, and inflating stops at the cap
    even when the header understates the size. (The cap is lowered so that the test file stays small.)"""
    monkeypatch.setattr(gibson_files, "MAX_OUTPUT_BYTES", 1 << 20)
    header = _npy({"room": {}, "object": {}})
    path = _npz_with_output(tmp_path / "zip.npz", header + b"\0" * (16 << 20))
    assert path.stat().st_size < 100_000
    tracemalloc.start()
    with pytest.raises(SceneError, match=r"zip\.npz: 'output' inflates to 16,777,\d+ bytes, over the limit of 1,048,576"):
        load_3dsg(path)
    peak = tracemalloc.get_traced_memory()[1]
    tracemalloc.stop()
    assert peak < 2_000_000

    lying = tmp_path / "lying.npz"
    lying.write_bytes(_understate(path.read_bytes(), 1000))
    tracemalloc.start()
    with pytest.raises(SceneError, match=r"lying\.npz: not a readable \.npz archive"):
        load_3dsg(lying)
    peak = tracemalloc.get_traced_memory()[1]
    tracemalloc.stop()
    assert peak < 3_000_000


def _understate(data: bytes, size: int) -> bytes:
    """A zip whose one member claims `size` uncompressed bytes in both its headers."""
    out = bytearray(data)
    local = out.find(b"PK\x03\x04")
    struct.pack_into("<I", out, local + 22, size)
    central = out.find(b"PK\x01\x02")
    struct.pack_into("<I", out, central + 24, size)
    return bytes(out)


def test_an_archive_of_many_members_is_refused_before_listing_them(tmp_path):
    extra = {f"a{i}.npy": b"" for i in range(200)}
    path = _npz_with_output(tmp_path / "many.npz", _npy({"room": {}, "object": {}}), extra)
    with pytest.raises(SceneError, match="lists 201 members"):
        load_3dsg(path)


def test_a_file_over_the_size_cap_is_refused_without_reading_it(tmp_path):
    path = tmp_path / "huge.npz"
    with open(path, "wb") as fh:  # sparse: no disk used
        fh.truncate(gibson_files.MAX_NPZ_BYTES + 1)
    tracemalloc.start()
    with pytest.raises(SceneError, match=r"huge\.npz: the 3DSG \.npz file is 268,435,457 bytes, over the limit"):
        load_3dsg(path)
    assert tracemalloc.get_traced_memory()[1] < 1_000_000
    tracemalloc.stop()


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="needs /dev/zero and FIFOs")
@pytest.mark.parametrize("suffix", [".npz", ".json"])
def test_a_scene_file_that_is_a_device_or_a_pipe_is_refused_without_blocking(tmp_path, suffix):
    link = tmp_path / f"zero{suffix}"
    link.symlink_to("/dev/zero")
    with _no_hang(), pytest.raises(SceneError, match="must be a regular file, not a character device"):
        load_3dsg(link)
    fifo = tmp_path / f"pipe{suffix}"
    os.mkfifo(fifo)
    with _no_hang(), pytest.raises(SceneError, match="must be a regular file, not a named pipe"):
        load_3dsg(fifo)


def test_scene_error_messages_quote_short_excerpts(tmp_path):
    long_key = "k" * 100_000
    path = tmp_path / "keys.npz"
    np.savez(path, output=np.array({long_key: 1, "room": {}}, dtype=object))
    with pytest.raises(SceneError) as info:
        load_3dsg(path)
    assert "lacks the 'object' dict" in str(info.value) and len(str(info.value)) < 500
    scene = tmp_path / "s.json"
    scene.write_text(json.dumps({"rooms": {"1": {"category": "kitchen", "id": "z" * 1_000_000}}, "objects": {}}))
    with pytest.raises(SceneError, match="must be an integer id") as info:
        load_3dsg(scene)
    assert len(str(info.value)) < 500


_LEAF = st.one_of(st.none(), st.booleans(), st.integers(-10**20, 10**20), st.floats(), st.text(max_size=8))
_VALUE = st.recursive(_LEAF, lambda c: st.one_of(st.lists(c, max_size=4), st.dictionaries(st.text(max_size=6), c,
                                                                                            max_size=4)),
                      max_leaves=12)
_FIELDS = ["id", "scene_category", "category", "class_", "class", "parent_room", "location", "size", "bbox",
           "floor_area", "label", "action_affordance", "material", "description", "floor_number", "objects_in_room"]
_RECORD = st.dictionaries(st.sampled_from(_FIELDS), _VALUE, max_size=8)
_RECORDS = st.dictionaries(st.one_of(st.integers(0, 5).map(str), st.text(max_size=3)), st.one_of(_RECORD, _VALUE),
                           max_size=3)


@settings(max_examples=100, deadline=None, derandomize=True, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(rooms=_RECORDS, objects=_RECORDS, building=_VALUE, as_json=st.booleans())
@example(rooms={"1": {"id": 1, "scene_category": "kitchen", "bbox": 3}}, objects={}, building=None, as_json=False)
@example(rooms={"1": {"id": 1, "scene_category": "kitchen", "bbox": ["a", "b"]}}, objects={}, building=None,
         as_json=True)
def test_any_records_in_a_scene_file_load_or_raise_a_scene_error(tmp_path, rooms, objects, building, as_json):
    """Hostile field values (a bbox of strings, an id of a dict, a NaN area, ...) in either format: a graph
    or a `SceneError` with a short message, never another exception (a bbox of 3 or of text was a raw
    TypeError/ValueError)."""
    if as_json:
        path = tmp_path / "s.json"
        path.write_text(json.dumps({"rooms": rooms, "objects": objects, "scene_info": building}))
    else:
        path = tmp_path / "s.npz"
        np.savez(path, output=np.array({"room": rooms, "object": objects, "building": building}, dtype=object))
    try:
        load_3dsg(path)
    except SceneError as exc:
        assert len(str(exc)) < 2000, str(exc)[:300]


# ------------------------------------------------------------------ Context Matters layout
@pytest.fixture
def split(tmp_path) -> tuple[Path, Path]:
    inst = generate_instance("house_cleaning", "feasible", np.random.default_rng(2))
    write_split([inst], tmp_path, "s")
    (folder,) = [p for p in (tmp_path / "s").glob("*/*") if p.is_dir()]
    return tmp_path, folder


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="needs /dev/zero and FIFOs")
@pytest.mark.parametrize("name", ["task.txt", "init_loc.txt", "description.txt"])
def test_an_instance_text_file_that_is_a_device_or_a_pipe_is_refused(split, name):
    """Issue 25 item 5: `task.txt` linked to /dev/zero read until memory ran out."""
    root, folder = split
    (folder / name).unlink()
    (folder / name).symlink_to("/dev/zero")
    with _no_hang(), pytest.raises(SceneError, match=f"{name}: the {name} must be a regular file, not a character"):
        read_split(root, "s")
    (folder / name).unlink()
    os.mkfifo(folder / name)
    with _no_hang(), pytest.raises(SceneError, match="not a named pipe"):
        read_split(root, "s")


@pytest.mark.parametrize("name, size", [("task.txt", 200 << 20), ("init_loc.txt", 50 << 20),
                                        ("acceptable_goals.json", 100 << 20)])
def test_an_oversized_instance_file_is_refused_before_reading(split, name, size):
    root, folder = split
    read_split(root, "s")  # warm: the domain and the scene's caches are built
    with open(folder / name, "wb") as fh:  # sparse
        fh.truncate(size)
    tracemalloc.start()
    with pytest.raises(SceneError, match=rf"{name}: the .* is {size:,} bytes, over the limit") as info:
        read_split(root, "s")
    peak = tracemalloc.get_traced_memory()[1]
    tracemalloc.stop()
    assert peak < 20_000_000  # the file is 50-200 MB
    assert len(str(info.value)) < 500


def test_a_bad_init_loc_is_quoted_as_an_excerpt(split):
    """A 4 kB init_loc that is no room: the message quotes 80 characters of it, not 4,000."""
    root, folder = split
    (folder / "init_loc.txt").write_text("q" * 4000)
    with pytest.raises(SceneError, match=r"init_loc.txt: 'q+'\.\.\. \(3,920 more characters\) is not a room") as info:
        read_split(root, "s")
    assert len(str(info.value)) < 1000


def test_split_file_names_and_scenes_are_checked_before_use(split):
    root, _ = split
    doc = json.loads((root / "s.json").read_text())
    (entry,) = doc["problems"].values()
    for bad in ("../../etc", "x" * 5000, 7):
        (root / "s.json").write_text(json.dumps({**doc, "problems": {"problem_1": {**entry, "graph": [bad]}}}))
        with pytest.raises(SceneError, match="not a scene name") as info:
            read_split(root, "s")
        assert len(str(info.value)) < 500
    (root / "s.json").write_text(json.dumps({**doc, "problems": {"9" * 50_000 + "x": entry}}))
    with _no_hang(), pytest.raises(SceneError, match="not a problem name"):
        read_split(root, "s")
    (root / "s.json").write_text("[" * 100_000)
    with pytest.raises(SceneError, match="nested too deeply"):
        read_split(root, "s")


@settings(max_examples=40, deadline=None, derandomize=True, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(st.binary(max_size=3000), st.sampled_from(["task.txt", "init_loc.txt", "acceptable_goals.json"]))
def test_any_bytes_in_an_instance_file_load_or_raise_a_short_scene_error(split, data, name):
    root, folder = split
    (folder / name).write_bytes(data)
    try:
        read_split(root, "s")
    except SceneError as exc:
        assert len(str(exc)) < 1000, str(exc)[:200]


# ------------------------------------------------------------------ the helpers themselves
def test_excerpt_is_bounded_for_any_value():
    assert excerpt("abc") == "'abc'"
    assert excerpt("x" * 1000) == repr("x" * 80) + "... (920 more characters)"
    nested: list = [list(range(10**5))] * 100
    assert len(excerpt(nested)) <= 160
    assert len(excerpt({i: "y" * 10**6 for i in range(100)})) <= 160


def test_read_bounded_refuses_a_folder(tmp_path):
    with pytest.raises(Exception, match="must be a regular file, not a folder"):
        read_bounded(tmp_path, 10, "thing")
    (tmp_path / "f").write_bytes(b"12345")
    assert read_bounded(tmp_path / "f", 5, "thing") == b"12345"
    with pytest.raises(Exception, match="5 bytes, over the limit of 4"):
        read_bounded(tmp_path / "f", 4, "thing")


@pytest.mark.skipif(not os.path.exists("/proc/self/mem"), reason="needs Linux /proc")
def test_read_bounded_names_the_file_when_a_read_fails():
    """/proc/self/mem is a regular file whose read fails (EIO): `servicerobot equiv` said 'cannot read None'."""
    from servicerobot.errors import ServiceRobotError

    with pytest.raises(ServiceRobotError, match=r"^/proc/self/mem: cannot read the thing: Input/output error"):
        read_bounded("/proc/self/mem", 10, "thing")


def test_read_bounded_refuses_a_name_with_a_nul_byte_by_name(tmp_path):
    from servicerobot.errors import ServiceRobotError

    with pytest.raises(ServiceRobotError, match="cannot open the thing: its name has a NUL byte"):
        read_bounded(f"{tmp_path}/a\x00b", 10, "thing")


def test_a_split_name_near_the_name_limit_loads_without_an_os_error(tmp_path):
    """Issue 38 retest: `<split>.json` fits the 255-byte name limit but `<split>-domain.pddl` does not, and
    find_domain_file raised a raw OSError (File name too long) out of read_split."""
    from servicerobot.envs.context_matters.cm_domain import find_domain_file

    split = "s" * 245
    (tmp_path / f"{split}.json").write_text('{"problems": {}}')
    assert find_domain_file(tmp_path, split) is None
    assert read_split(tmp_path, split) == []
