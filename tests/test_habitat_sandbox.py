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
    out = subprocess.run(["bash", str(SCRIPT), "where"], check=False, capture_output=True, text=True, env=env, timeout=30)
    assert out.returncode == 0 and out.stdout.strip() == str(tmp_path / "r")
    bad = subprocess.run(["bash", str(SCRIPT), "frobnicate"], check=False, capture_output=True, text=True, env=env, timeout=30)
    assert bad.returncode == 2 and "setup" in bad.stdout + bad.stderr


def test_each_checkout_has_its_own_root_unless_one_is_named(tmp_path):
    import hashlib

    env = {k: v for k, v in os.environ.items() if k != "SERVICEROBOT_HABITAT_ROOT"}
    out = subprocess.run(["bash", str(SCRIPT), "where"], check=False, capture_output=True, text=True, env=env, timeout=30)
    digest = hashlib.sha256(str(ROOT).encode()).hexdigest()[:8]
    assert out.returncode == 0 and out.stdout.strip() == f"/var/tmp/servicerobot-habitat-{digest}"
    named = subprocess.run(["bash", str(SCRIPT), "where", "--root", str(tmp_path / "mine")], check=False, capture_output=True,
                           text=True, env=env, timeout=30)
    assert named.stdout.strip() == str(tmp_path / "mine")


def test_bind_needs_an_existing_folder(tmp_path):
    out = subprocess.run(["bash", str(SCRIPT), "run", "--bind", str(tmp_path / "missing"), "--", "true"],
                         check=False, capture_output=True, text=True, timeout=30)
    assert out.returncode == 1 and "--bind needs an existing directory" in out.stderr


def test_run_on_a_root_not_set_up_says_so_and_exits_3(tmp_path):
    if os.geteuid() != 0:
        pytest.skip("scripts/habitat-sim needs root")
    env = {**os.environ, "SERVICEROBOT_HABITAT_ROOT": str(tmp_path / "r")}
    out = subprocess.run(["bash", str(SCRIPT), "run", "--", "true"], check=False, capture_output=True, text=True, env=env,
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
    # Context Matters' published dataset, where it sits beside the checkout, is shown inside the root too.
    dataset = ROOT.parent / "cm-dataset"
    bind = ["--bind", str(dataset)] if (dataset / "dining_setup").is_dir() else []
    command = ["bash", str(SCRIPT), "run", *bind, "--", "python", "-m", "pytest", "tests/habitat", "-q", "-rs",
               "-p", "no:cacheprovider"]
    try:
        result = subprocess.run(command, check=False, cwd=ROOT, capture_output=True, text=True, timeout=900)
    except subprocess.TimeoutExpired as error:
        pytest.fail(f"the habitat tier ran past 900 s: {' '.join(command)}\n{_tail(str(error.stdout or ''))}")
    output = result.stdout + result.stderr
    assert result.returncode == 0, f"habitat tier failed (exit {result.returncode}):\n{_tail(output)}"
    passed = re.search(r"(\d+) passed", output)
    assert passed and int(passed.group(1)) >= 5, f"the habitat tier ran too few tests:\n{_tail(output)}"
    skips = [line for line in output.splitlines() if line.startswith("SKIPPED")]
    assert all("Context Matters' dataset is not at" in line for line in skips) and (not skips or not bind), \
        f"habitat tests skipped inside the root:\n{_tail(output)}"
