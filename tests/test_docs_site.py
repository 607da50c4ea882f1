"""The docs site: it builds with warnings as errors, its benchmarks page is what the files give, and the
pages name what the code has (shipped configs, extras written as a clone installs them)."""

from __future__ import annotations

import importlib
import json
import re
import subprocess
import sys
from pathlib import Path

import pytest
import yaml

from servicerobot import docs_bench
from servicerobot.cli import main
from servicerobot.experiments.config import shipped_configs

ROOT = Path(__file__).resolve().parent.parent
DOCS = ROOT / "docs"
# the public API the reference must show (issue 36): worlds and options, the agent, memory, interpreters and the
# chooser, planners, PDDL, experiments
API_MODULES = {"servicerobot.envs", "servicerobot.envs.options", "servicerobot.agent", "servicerobot.memory",
               "servicerobot.language", "servicerobot.language.rule_interpreter", "servicerobot.language.chooser",
               "servicerobot.planners", "servicerobot.pddl", "servicerobot.experiments"}


def _nav_pages(nav) -> list[str]:
    pages = []
    for item in nav:
        for value in item.values() if isinstance(item, dict) else [item]:
            pages += _nav_pages(value) if isinstance(value, list) else [value]
    return pages


def test_mkdocs_builds_strict(tmp_path):
    pytest.importorskip("mkdocs", reason="the docs extra is not installed: pip install -e \".[docs]\"")
    pytest.importorskip("mkdocstrings", reason="the docs extra is not installed: pip install -e \".[docs]\"")
    out = subprocess.run([sys.executable, "-m", "mkdocs", "build", "--strict", "-f", str(ROOT / "mkdocs.yml"),
                          "-d", str(tmp_path / "site")], check=False, capture_output=True, text=True,
                         timeout=300)
    assert out.returncode == 0, out.stderr[-3000:]
    assert (tmp_path / "site" / "benchmarks" / "index.html").is_file()
    # the API reference: every name a documented module exports has its entry, made from the docstrings
    documented = {}
    for page in sorted((DOCS / "api").glob("*.md")):
        html = (tmp_path / "site" / "api" / (page.stem if page.stem != "index" else "") / "index.html").read_text()
        for module in re.findall(r"^::: (\S+)$", page.read_text(encoding="utf-8"), re.MULTILINE):
            exported = importlib.import_module(module).__all__
            missing = [name for name in exported if f'id="{module}.{name}"' not in html]
            assert not missing, f"docs/api/{page.name}: {module} exports {missing}, which the page does not show"
            documented[module] = page.name
    assert API_MODULES <= set(documented), f"no API page shows {sorted(API_MODULES - set(documented))}"
    agent = (tmp_path / "site" / "api" / "agent" / "index.html").read_text()
    assert "from_env" in agent and "Raises" in agent  # docstring sections rendered, not pasted as text


def test_every_page_is_in_the_nav_and_every_nav_entry_exists():
    config = yaml.safe_load((ROOT / "mkdocs.yml").read_text(encoding="utf-8"))
    nav = _nav_pages(config["nav"])
    assert sorted(nav) == sorted(p.relative_to(DOCS).as_posix() for p in DOCS.rglob("*.md"))
    for page in ("household.md", "pybullet.md", "ai2thor.md", "habitat.md", "agent.md", "local_model.md",
                 "experiments.md", "context_matters.md", "tamp.md", "pddl.md", "equivalence.md",
                 "reliability.md", "benchmarks.md"):
        assert page in nav


def test_benchmarks_page_is_generated_from_the_files():
    assert docs_bench.main(["--check"]) == 0, "run python -m servicerobot.docs_bench and commit docs/benchmarks.md"


def test_benchmarks_page_shows_command_machine_and_date_of_each_figure(tmp_path):
    (tmp_path / "benchmarks" / "figures").mkdir(parents=True)
    record = {"title": "PDDL speed", "command": "python benchmarks/pddl_speed.py", "machine": "2 cores",
              "date": "2026-11-26", "source": "measured", "figures": {"parse_ms": 4.2, "note": "a|b"}}
    (tmp_path / "benchmarks" / "figures" / "pddl_speed.json").write_text(json.dumps(record))
    results = tmp_path / "results" / "grid"
    results.mkdir(parents=True)
    task = {"completed": True, "goal": {"correct": True}}
    lines = [{"variant": "oracle", "tasks": [task, {**task, "completed": False}], "agent": {"tokens": 10},
              "timing": {"wall_s": 3.0}},
             {"variant": "oracle", "tasks": [task], "agent": {"tokens": 30}, "timing": {"wall_s": 5.0}},
             {"variant": "static", "status": "error", "tasks": []}]
    (results / "results.jsonl").write_text("".join(json.dumps(r) + "\n" for r in lines))
    (results / "about.json").write_text(json.dumps({"command": "servicerobot run grid", "machine": "m1",
                                                    "date": "2026-11-20"}))
    (tmp_path / "benchmarks" / "pddl_speed.py").write_text("")
    (tmp_path / "benchmarks" / "new_thing.py").write_text("")
    page = docs_bench.render_page(tmp_path)
    assert "- command: `python benchmarks/pddl_speed.py`" in page and "- date: 2026-11-26" in page
    assert "- `benchmarks/new_thing.py`" in page and "- `benchmarks/pddl_speed.py`" not in page
    assert "| `parse_ms` | 4.2 |" in page and "a\\|b" in page
    assert "| `oracle` | 2 | 2/3 | 3/3 | 20 | 4 |" in page
    assert "| `static` | 1 | 0/0 | — | — | — |" in page
    (results / "about.json").unlink()
    with pytest.raises(ValueError, match="about.json"):
        docs_bench.render_page(tmp_path)
    del record["machine"]
    (tmp_path / "benchmarks" / "figures" / "pddl_speed.json").write_text(json.dumps(record))
    with pytest.raises(ValueError, match="pddl_speed.json: a figure record needs machine"):
        docs_bench.load_figures(tmp_path / "benchmarks" / "figures")


def test_bench_record_writes_a_record_the_page_reads(tmp_path, capsys):
    scripts = tmp_path / "scripts"
    scripts.mkdir()
    (scripts / "speed.py").write_text("import json\nprint(json.dumps({'steps_per_s': 1234}))\n")
    (scripts / "absent.py").write_text("import json\nprint(json.dumps({'skipped': 'no simulator'}))\n")
    figures = tmp_path / "figures"
    figures.mkdir()
    (figures / "speed.json").write_text(json.dumps({"title": "Speed of things", "order": 3}))
    assert main(["bench", "--benchmarks", str(scripts), "--quick", "--record", str(figures)]) == 0
    capsys.readouterr()
    record = json.loads((figures / "speed.json").read_text())
    assert record["title"] == "Speed of things" and record["order"] == 3
    assert record["figures"] == {"steps_per_s": 1234}
    assert record["command"] == "python benchmarks/speed.py --quick"
    assert re.fullmatch(r"\d{4}-\d\d-\d\d \d\d:\d\d UTC", record["date"]) and "-core" in record["machine"]
    assert not (figures / "absent.json").exists()
    assert docs_bench.load_figures(figures)[0]["figures"] == {"steps_per_s": 1234}


def test_docs_name_every_shipped_config():
    text = (DOCS / "experiments.md").read_text(encoding="utf-8")
    missing = [name for name in shipped_configs() if f"`{name}`" not in text]
    assert not missing, f"docs/experiments.md does not name the shipped configs {missing}"


def test_extras_are_written_as_a_clone_installs_them():
    # the package is not on an index: `pip install "servicerobot[x]"` fails for a reader of a clone
    for path in [ROOT / "README.md", *DOCS.glob("*.md")]:
        text = path.read_text(encoding="utf-8")
        assert not re.search(r"servicerobot\[[a-z-]+\]", text), f"{path.name}: write pip install -e \".[extra]\""
