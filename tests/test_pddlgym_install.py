"""The pddlgym install recipe (issue 36): the release wheel rewritten to accept our pillow, nothing else changed,
and a RECORD pip can verify. Runs on a wheel built here (no download)."""

from __future__ import annotations

import base64
import hashlib
import zipfile

import pytest

from servicerobot.envs.pddlgym.install import LOCAL_VERSION, PILLOW_PIN, InstallError, relax_pillow

INFO = "pddlgym-0.0.7.dist-info/"
METADATA = ("Metadata-Version: 2.1\nName: pddlgym\nVersion: 0.0.7\nRequires-Dist: matplotlib\n"
            f"{PILLOW_PIN}\nRequires-Dist: gym >=0.24.0\n")


def _wheel(path, metadata: str = METADATA):
    with zipfile.ZipFile(path, "w") as wheel:
        wheel.writestr("pddlgym/__init__.py", "x = 1\n")
        wheel.writestr("pddlgym/pddl/blocks.pddl", "(define (domain blocks))\n")
        wheel.writestr(INFO + "METADATA", metadata)
        wheel.writestr(INFO + "WHEEL", "Wheel-Version: 1.0\nRoot-Is-Purelib: true\nTag: py3-none-any\n")
        wheel.writestr(INFO + "RECORD", "stale\n")
    return path


def test_only_the_pillow_pin_and_the_version_change(tmp_path):
    out = relax_pillow(_wheel(tmp_path / "pddlgym-0.0.7-py3-none-any.whl"), tmp_path)
    assert out.name == f"pddlgym-{LOCAL_VERSION}-py3-none-any.whl"
    new_info = f"pddlgym-{LOCAL_VERSION}.dist-info/"
    with zipfile.ZipFile(out) as wheel:
        names = set(wheel.namelist())
        metadata = wheel.read(new_info + "METADATA").decode()
        record = wheel.read(new_info + "RECORD").decode().splitlines()
        assert wheel.read("pddlgym/pddl/blocks.pddl") == b"(define (domain blocks))\n"
        for line in record:
            name, digest, size = line.rsplit(",", 2)
            if name == new_info + "RECORD":
                assert digest == size == ""
                continue
            data = wheel.read(name)
            assert digest == "sha256=" + base64.urlsafe_b64encode(hashlib.sha256(data).digest()).rstrip(b"=").decode()
            assert int(size) == len(data)
    assert names == {"pddlgym/__init__.py", "pddlgym/pddl/blocks.pddl", new_info + "METADATA", new_info + "WHEEL",
                     new_info + "RECORD"}
    assert len(record) == len(names)
    assert "Requires-Dist: pillow >=8" in metadata.splitlines() and "<10" not in metadata
    assert f"Version: {LOCAL_VERSION}" in metadata and "Requires-Dist: gym >=0.24.0" in metadata


def test_a_wheel_without_the_expected_pin_is_refused(tmp_path):
    wheel = _wheel(tmp_path / "pddlgym-0.0.7-py3-none-any.whl", METADATA.replace(PILLOW_PIN, "Requires-Dist: pillow"))
    with pytest.raises(InstallError, match="does not declare Version: 0.0.7 and 'Requires-Dist: pillow <10,>=8'"):
        relax_pillow(wheel, tmp_path)


def test_the_docs_ci_and_pyproject_give_this_one_command():
    from pathlib import Path

    root = Path(__file__).resolve().parent.parent
    command = "python -m servicerobot.envs.pddlgym.install"
    for name in ("README.md", "docs/install.md", "docs/pddlgym.md", "pyproject.toml", ".ci/run"):
        text = (root / name).read_text(encoding="utf-8")
        assert command in text, f"{name} does not give {command}"
        if name != "docs/pddlgym.md":  # that page names the earlier --no-deps recipe and why it is not used
            assert 'install --no-deps "pddlgym' not in text, f"{name} still gives the --no-deps recipe"
