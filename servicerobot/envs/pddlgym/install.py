"""Install pddlgym 0.0.7 next to this project's pillow, leaving `pip check` clean.

pddlgym 0.0.7 (the current release) declares `pillow<10,>=8`; this project needs `pillow>=10`, and pddlgym
runs on it (its sprite renderers' `Image.ANTIALIAS`, removed in Pillow 10, is restored by our renderer).
A `--no-deps` install works but leaves `pip check` broken (and gym's own requirement, gym-notices,
missing). This script downloads the release wheel with pip, checks its SHA-256, rewrites only that one
requirement to `pillow>=8` under the local version `0.0.7+pillow10`, and installs the result with its
requirements resolved by pip (gym 0.26.2, gym-notices, scikit-image, ...):

    python -m servicerobot.envs.pddlgym.install          # then: pip check
"""

from __future__ import annotations

import argparse
import base64
import hashlib
import subprocess
import sys
import tempfile
import zipfile
from pathlib import Path

from servicerobot.limits import read_bounded

__all__ = ["LOCAL_VERSION", "WHEEL_SHA256", "install", "relax_pillow"]

RELEASE = "0.0.7"
LOCAL_VERSION = "0.0.7+pillow10"
WHEEL = f"pddlgym-{RELEASE}-py3-none-any.whl"
WHEEL_SHA256 = "ff601704bef2d27008700e63252d753975a5766409e4e3ba1a9cbfb163252800"  # PyPI's pddlgym 0.0.7 wheel
PILLOW_PIN = "Requires-Dist: pillow <10,>=8"
GYM = "gym==0.26.2"  # the last gym release; pddlgym asks for gym>=0.24


class InstallError(RuntimeError):
    """The download is not the wheel this script knows, or pip failed."""


def _digest(data: bytes) -> str:
    return "sha256=" + base64.urlsafe_b64encode(hashlib.sha256(data).digest()).rstrip(b"=").decode()


def relax_pillow(wheel: Path, out_dir: Path) -> Path:
    """A copy of the pddlgym wheel whose only change is `pillow>=8` for `pillow<10,>=8`, under
    `LOCAL_VERSION` (dist-info folder, METADATA's Version and RECORD rewritten to match).

    Raises:
        InstallError: the wheel does not declare the pin this rewrite expects.
    """
    old_info, new_info = f"pddlgym-{RELEASE}.dist-info/", f"pddlgym-{LOCAL_VERSION}.dist-info/"
    target = out_dir / f"pddlgym-{LOCAL_VERSION}-py3-none-any.whl"
    with zipfile.ZipFile(wheel) as src:
        members = {info.filename: src.read(info) for info in src.infolist() if not info.is_dir()}
    metadata = members.get(old_info + "METADATA", b"").decode("utf-8")
    if PILLOW_PIN not in metadata.splitlines() or f"Version: {RELEASE}" not in metadata.splitlines():
        raise InstallError(f"{wheel.name}: its METADATA does not declare Version: {RELEASE} and {PILLOW_PIN!r}; "
                           "this rewrite is for that release only")
    metadata = metadata.replace(PILLOW_PIN, "Requires-Dist: pillow >=8").replace(
        f"Version: {RELEASE}", f"Version: {LOCAL_VERSION}", 1)
    renamed = {(new_info + name[len(old_info):] if name.startswith(old_info) else name): data
               for name, data in members.items()}
    renamed[new_info + "METADATA"] = metadata.encode("utf-8")
    record = [f"{name},{_digest(data)},{len(data)}" for name, data in renamed.items() if name != new_info + "RECORD"]
    renamed[new_info + "RECORD"] = ("\n".join([*record, new_info + "RECORD,,"]) + "\n").encode("utf-8")
    with zipfile.ZipFile(target, "w", zipfile.ZIP_DEFLATED) as dst:
        for name, data in renamed.items():
            dst.writestr(name, data)
    return target


def _pip(*args: str) -> None:
    command = [sys.executable, "-m", "pip", *args]
    if subprocess.run(command, check=False).returncode != 0:
        raise InstallError(f"failed: {' '.join(command)}")


def install(quiet: bool = False) -> Path:
    """Download, check, rewrite and install pddlgym (see the module docstring); returns the installed wheel's
    name. Raises InstallError when the download is not the known wheel or pip fails."""
    flags = ["--quiet"] if quiet else []
    with tempfile.TemporaryDirectory() as tmp:
        folder = Path(tmp)
        _pip("download", *flags, "--no-deps", "--only-binary=:all:", f"pddlgym=={RELEASE}", "-d", str(folder))
        wheel = folder / WHEEL
        data = read_bounded(wheel, 64 << 20, "downloaded pddlgym wheel", InstallError) if wheel.is_file() else b""
        if hashlib.sha256(data).hexdigest() != WHEEL_SHA256:
            raise InstallError(f"the downloaded {WHEEL} is not the release this script checked (SHA-256 "
                               f"{WHEEL_SHA256}); install it by hand as docs/pddlgym.md says")
        relaxed = relax_pillow(wheel, folder)
        _pip("install", *flags, str(relaxed), GYM)
        return Path(relaxed.name)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description="Install pddlgym 0.0.7 beside pillow>=10 with `pip check` clean.")
    parser.add_argument("--quiet", action="store_true", help="pass --quiet to pip")
    args = parser.parse_args(argv)
    try:
        name = install(args.quiet)
    except InstallError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 1
    print(f"installed {name}; `pip check` should now report no broken requirements")
    return 0


if __name__ == "__main__":
    sys.exit(main())
