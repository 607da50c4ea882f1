"""Shared fixtures: no test ever sees the developer's OpenAI settings; a local OpenAI-compatible stub; the URL
of a served local model."""

from __future__ import annotations

import importlib.util
import os

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


@pytest.fixture
def url():
    """The local model server's URL (`servicerobot llm serve`); skipped without one, a failure in CI."""
    from servicerobot.language.local_server import LOCAL_LLM_URL_VAR

    value = os.environ.get(LOCAL_LLM_URL_VAR)
    if not value:
        if os.environ.get("CI") == "true":
            pytest.fail(f"{LOCAL_LLM_URL_VAR} is not set in CI: .ci/run must start `servicerobot llm serve`")
        pytest.skip(f"no local model server ({LOCAL_LLM_URL_VAR} unset; start one with `servicerobot llm serve`)")
    return value
