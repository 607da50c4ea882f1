"""What the README and the tools promise: attributes, benchmark imports, bench --quick, reset options, --version."""

from __future__ import annotations

import ast
import importlib.util
import json
import subprocess
import sys
from pathlib import Path

import gymnasium as gym
import pytest

import servicerobot
from servicerobot.cli import main

ROOT = Path(__file__).resolve().parent.parent


def test_subpackages_are_attributes_after_import_servicerobot():
    code = ("import servicerobot; print(servicerobot.oracle.OracleAgent.__name__, "
            "servicerobot.pddl.parse_domain.__name__, servicerobot.memory.KnowledgeGraph.__name__)")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True, timeout=120)
    assert out.stdout.split() == ["OracleAgent", "parse_domain", "KnowledgeGraph"]
    with pytest.raises(AttributeError, match="no attribute 'nothing'"):
        servicerobot.nothing  # noqa: B018


def test_pybullet_render_benchmark_imports():
    pytest.importorskip("pybullet")
    spec = importlib.util.spec_from_file_location("pybullet_render", ROOT / "benchmarks" / "pybullet_render.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)  # failed before: cannot import name 'PyBulletOracle'
    assert callable(module.main)


def _declares_quick(script: Path) -> bool:
    """True if the script's argument parser declares `--quick` (read from its syntax tree: running 13
    scripts' imports would cost the suite half a minute)."""
    for node in ast.walk(ast.parse(script.read_text(encoding="utf-8"))):
        if isinstance(node, ast.Call) and getattr(node.func, "attr", "") == "add_argument" and node.args:
            first = node.args[0]
            if isinstance(first, ast.Constant) and first.value == "--quick":
                return True
    return False


def test_every_benchmark_script_accepts_quick():
    scripts = sorted((ROOT / "benchmarks").glob("*.py"))
    assert scripts
    missing = [s.name for s in scripts if not _declares_quick(s)]
    assert not missing, f"benchmark scripts without --quick (bench --quick passes it to every one): {missing}"


def test_bench_quick_passes_quick_to_every_script_and_prints_progress(tmp_path, capsys):
    # neither script mentions the option by name, so only an unconditional --quick reaches them
    (tmp_path / "a.py").write_text("import json, sys\nprint(json.dumps({'argv': sys.argv[1:]}))\n")
    (tmp_path / "b.py").write_text("import sys\nif len(sys.argv) == 1:\n    sys.exit('slow: full size')\n"
                                   "print('{\"ok\": 1}')\n")
    assert main(["bench", "--benchmarks", str(tmp_path), "--quick"]) == 0
    out = capsys.readouterr()
    results = json.loads(out.out)
    assert results["a"]["argv"] == ["--quick"] and results["b"]["ok"] == 1
    assert "bench [1/2] a: running" in out.err and "bench [1/2] a: ok in" in out.err
    assert "bench [2/2] b: ok in" in out.err


def test_reset_rejects_unknown_options():
    env = gym.make("ServiceRobot-v0", size="small")
    env.reset(seed=0, options={})
    env.reset(seed=0, options=None)
    with pytest.raises(ValueError, match="reset\\(\\) takes no options, got 'size'.*gym.make"):
        env.reset(seed=0, options={"size": "large"})


def test_version(capsys):
    with pytest.raises(SystemExit) as info:
        main(["--version"])
    assert info.value.code == 0
    assert capsys.readouterr().out.strip() == f"servicerobot {servicerobot.__version__}"
