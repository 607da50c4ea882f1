"""The habitat tier: tests/habitat against the real habitat-sim 0.2.2, in the root that the project's own
`scripts/habitat-sim setup` builds (a Debian 13 root with Python 3.13 and habitat-sim from PyPI; docs/install.md).

Skipped when we are not root, and when setup said this machine cannot build the root (its reason is in
`<root>.unavailable`: no network, no magnum cache, ...). Under CI (CI=true) a root that is neither ready nor
reported unavailable fails here, and so does any failure inside it, with its output.
"""

from __future__ import annotations

import os
import re
import subprocess
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
SCRIPT = ROOT / "scripts" / "habitat-sim"
IN_CI = os.environ.get("CI", "").lower() == "true"


def _tail(text: str, n: int = 60) -> str:
    return "\n".join(text.splitlines()[-n:])


def _habitat_root() -> Path:
    out = subprocess.run(["bash", str(SCRIPT), "where"], check=True, capture_output=True, text=True, timeout=30)
    return Path(out.stdout.strip())


def test_the_script_says_where_its_root_is_and_refuses_unknown_commands(tmp_path):
    env = {**os.environ, "SERVICEROBOT_HABITAT_ROOT": str(tmp_path / "r")}
    out = subprocess.run(["bash", str(SCRIPT), "where"], capture_output=True, text=True, env=env, timeout=30)
    assert out.returncode == 0 and out.stdout.strip() == str(tmp_path / "r")
    bad = subprocess.run(["bash", str(SCRIPT), "frobnicate"], capture_output=True, text=True, env=env, timeout=30)
    assert bad.returncode == 2 and "setup" in bad.stdout + bad.stderr


def test_run_on_a_root_not_set_up_says_so_and_exits_3(tmp_path):
    if os.geteuid() != 0:
        pytest.skip("scripts/habitat-sim needs root")
    env = {**os.environ, "SERVICEROBOT_HABITAT_ROOT": str(tmp_path / "r")}
    out = subprocess.run(["bash", str(SCRIPT), "run", "--", "true"], capture_output=True, text=True, env=env,
                         timeout=30)
    assert out.returncode == 3, out.stderr
    assert "is not set up: run" in out.stderr and (tmp_path / "r.unavailable").is_file()


def test_habitat_tests_pass_inside_the_root():
    if os.geteuid() != 0:
        if IN_CI:
            pytest.fail("CI=true but the suite does not run as root, which scripts/habitat-sim needs")
        pytest.skip("the habitat root needs root (chroot, mounts)")
    root = _habitat_root()
    if not (root / ".servicerobot-habitat" / "ready").is_file():
        reason = Path(f"{root}.unavailable")
        if reason.is_file():
            pytest.skip(f"scripts/habitat-sim setup could not build {root} here: {reason.read_text().strip()}")
        if IN_CI:
            pytest.fail(f"CI=true but {root} is not set up and setup left no reason: .ci/run runs "
                        "scripts/habitat-sim setup before the tests")
        pytest.skip(f"{root} is not built: run scripts/habitat-sim setup (docs/install.md)")
    command = ["bash", str(SCRIPT), "run", "--", "python", "-m", "pytest", "tests/habitat", "-q",
               "-p", "no:cacheprovider"]
    try:
        result = subprocess.run(command, check=False, cwd=ROOT, capture_output=True, text=True, timeout=900)
    except subprocess.TimeoutExpired as error:
        pytest.fail(f"the habitat tier ran past 900 s: {' '.join(command)}\n{_tail(str(error.stdout or ''))}")
    output = result.stdout + result.stderr
    assert result.returncode == 0, f"habitat tier failed (exit {result.returncode}):\n{_tail(output)}"
    passed = re.search(r"(\d+) passed", output)
    assert passed and int(passed.group(1)) >= 5, f"the habitat tier ran too few tests:\n{_tail(output)}"
    assert "skipped" not in output, f"habitat tests skipped inside the root:\n{_tail(output)}"
