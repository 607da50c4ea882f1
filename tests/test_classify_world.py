"""`benchmarks/classify_world.py`: the world's own utterances, labelled task or update by the world, and
the rule interpreter (which reads the world's templates) hears every one of them right."""

from __future__ import annotations

import importlib.util
import json
from pathlib import Path

BENCH = Path(__file__).resolve().parents[1] / "benchmarks" / "classify_world.py"


def _bench():
    spec = importlib.util.spec_from_file_location("classify_world", BENCH)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_every_task_announcement_is_labelled_a_task_and_the_rest_updates():
    items = _bench().world_utterances([0, 1], size="small", n_tasks=2)
    tasks = [i for i in items if i["kind"] == "task"]
    assert len(tasks) == 4 and {i["seed"] for i in tasks} == {0, 1}
    assert any(i["kind"] == "update" for i in items)  # seed 0 opens with a verbal update
    assert all(i["kind"] in ("task", "update") and i["context"] is not None for i in items)


def test_rules_hear_the_worlds_templates_and_the_json_says_so(tmp_path, capsys, monkeypatch):
    monkeypatch.delenv("SERVICEROBOT_LOCAL_LLM_URL", raising=False)
    rows = tmp_path / "rows.json"
    assert _bench().main(["--seeds", "0-2", "--rows", str(rows)]) == 0
    out = json.loads(capsys.readouterr().out)
    assert out["tasks"] == 12 and "local-llm" not in out
    assert out["rules"]["tasks_heard"] == 12 and out["rules"]["updates_heard"] == out["utterances"] - 12
    answers = json.loads(rows.read_text())["rules"]
    assert len(answers) == out["utterances"] and all("context" not in a for a in answers)


def test_quick_is_seed_zero(capsys, monkeypatch):
    monkeypatch.delenv("SERVICEROBOT_LOCAL_LLM_URL", raising=False)
    assert _bench().main(["--quick"]) == 0
    out = json.loads(capsys.readouterr().out)
    assert out["seeds"] == "0" and out["tasks"] == 4
