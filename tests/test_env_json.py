"""The env's JSON writer (`core._dumps`, the C encoder made once) writes what `json.dumps` writes (issue 37)."""

from __future__ import annotations

import json

import pytest

from servicerobot.envs.core import _dumps


@pytest.mark.parametrize("value", [
    {"room": "kitchen", "entities": {"robot": "robot"}, "facts": [["robot", "hand-empty", True]], "observed": []},
    [{"speaker": "Ana", "text": "I moved the caf\u00e9 mug \u2014 sorry"}], "plain \"text\"\n", 3, 2.5, None,
    {"x": [float("nan"), float("inf"), -float("inf"), 1e-300, -0.0]}, {"deep": [[[[{"a": (1, 2)}]]]]}, {1: "int key"},
])
def test_dumps_writes_what_json_dumps_writes(value):
    assert _dumps(value) == json.dumps(value, separators=(",", ":"), ensure_ascii=True)


def test_dumps_refuses_what_json_dumps_refuses():
    cyclic: list = []
    cyclic.append(cyclic)
    with pytest.raises(ValueError, match="Circular reference"):
        _dumps(cyclic)
    with pytest.raises(TypeError, match="not JSON serializable"):
        _dumps({"a": object()})
    assert _dumps(["after a failure"]) == '["after a failure"]'
