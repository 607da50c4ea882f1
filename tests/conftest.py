"""Shared fixtures: no test ever sees the developer's OpenAI settings; a local OpenAI-compatible stub."""

from __future__ import annotations

import importlib.util

import pytest
from openai_server import serve

# tests/habitat need habitat-sim: they run inside the root of scripts/habitat-sim (see test_habitat_sandbox.py),
# or here when habitat_sim is installed.
collect_ignore = [] if importlib.util.find_spec("habitat_sim") else ["habitat"]


@pytest.fixture(autouse=True)
def _no_openai_env(monkeypatch):
    for var in ("OPENAI_API_KEY", "OPENAI_BASE_URL", "OPENAI_MODEL"):
        monkeypatch.delenv(var, raising=False)


@pytest.fixture
def stub():
    """A running stub server (stdlib HTTP, localhost, random port); stopped after the test."""
    with serve() as server:
        yield server
