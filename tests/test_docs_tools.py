"""What the README and the tools promise: attributes, benchmark imports, bench --quick, reset options, --version."""

from __future__ import annotations

import ast
import importlib.util
import json
import subprocess
import sys
import time
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


def test_bench_lists_a_script_whose_optional_part_is_missing_as_skipped(tmp_path, capsys):
    (tmp_path / "sim.py").write_text("import json\nprint(json.dumps({'skipped': 'no simulator here'}))\n")
    (tmp_path / "broken.py").write_text("import sys\nsys.exit('crashed')\n")
    assert main(["bench", "--benchmarks", str(tmp_path), "--only", "sim"]) == 0
    assert "sim: skipped (no simulator here)" in capsys.readouterr().err
    assert main(["bench", "--benchmarks", str(tmp_path)]) == 1  # a real failure still fails
    assert "bench: 0 ok, 1 skipped (sim), 1 failed" in capsys.readouterr().err


def test_bench_reads_the_last_line_only_so_pretty_printed_json_fails(tmp_path, capsys):
    # cm_chooser_table.py and pddlgym.py printed json.dumps(..., indent=1): bench took the lone "{" line
    (tmp_path / "pretty.py").write_text("import json\nprint(json.dumps({'x': 1}, indent=1))\n")
    (tmp_path / "trailer.py").write_text("print('{\"x\": 1}')\nprint('done')\n")
    assert main(["bench", "--benchmarks", str(tmp_path)]) == 1
    results = json.loads(capsys.readouterr().out)
    for name in ("pretty", "trailer"):
        assert results[name]["error"].startswith("the last stdout line is not one JSON object")


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


def _alive(pid: int) -> bool:
    try:
        state = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0]
    except (FileNotFoundError, ProcessLookupError):
        return False
    return state != "Z"


def test_bench_kills_a_script_past_its_timeout_and_what_scripts_leave_running(tmp_path, capsys):
    child = "import subprocess, sys\np = subprocess.Popen([sys.executable, '-c', 'import time; time.sleep(120)'])\n"
    (tmp_path / "hangs.py").write_text(child + "open('hangs.pid', 'w').write(str(p.pid))\n"
                                       "import time\ntime.sleep(120)\n")
    (tmp_path / "leaves.py").write_text(child + "open('leaves.pid', 'w').write(str(p.pid))\nprint('{\"ok\": 1}')\n")
    assert main(["bench", "--benchmarks", str(tmp_path), "--timeout", "3"]) == 1
    results = json.loads(capsys.readouterr().out)
    assert results["hangs"]["error"] == "timed out after 3 s (killed with its children)"
    assert results["leaves"]["ok"] == 1
    for name in ("hangs", "leaves"):
        pid = int((tmp_path / f"{name}.pid").read_text())
        for _ in range(50):
            if not _alive(pid):
                break
            time.sleep(0.1)
        assert not _alive(pid), f"{name}.py's child survived bench"
