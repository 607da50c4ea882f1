"""Run every Python snippet of the README and of the docs pages (docs/*.md), in order, as a reader would paste it.

Each snippet runs in a fresh namespace that holds the imports of the snippets before it in the same file (the
README's snippets build on the quick start's `import gymnasium as gym, servicerobot`). A docs snippet whose code
is the same as one already run (the README's) is not run twice. A snippet is skipped, with
the reason printed, when the line before its fence is `<!-- snippet: skip (reason) -->` (for optional
back ends such as habitat-sim or a local LLM server), when a module it imports is not installed, or when
it raises `DependencyNotInstalled`.
"""

from __future__ import annotations

import ast
import importlib.util
import re
from dataclasses import dataclass
from pathlib import Path

import pytest

from servicerobot.errors import DependencyNotInstalled

ROOT = Path(__file__).resolve().parent.parent
README = ROOT / "README.md"
DOCS = sorted((ROOT / "docs").glob("*.md"))
_FENCE = re.compile(r"^```python[^\n]*\n(.*?)^```", re.DOTALL | re.MULTILINE)
_SKIP = re.compile(r"<!--\s*snippet:\s*skip\s*(?:\((?P<reason>[^)]*)\))?\s*-->\s*$")


@dataclass(frozen=True)
class Snippet:
    line: int
    code: str
    skip: str | None  # the reason given by a skip marker


def snippets(text: str) -> list[Snippet]:
    """The ```python fences of a Markdown text, with the skip marker on the non-blank line above each."""
    found = []
    for match in _FENCE.finditer(text):
        before = [ln for ln in text[: match.start()].splitlines() if ln.strip()]
        marker = _SKIP.search(before[-1]) if before else None
        reason = (marker.group("reason") or "marked skip") if marker else None
        found.append(Snippet(text.count("\n", 0, match.start()) + 1, match.group(1), reason))
    return found


def _imports(code: str) -> list[ast.stmt]:
    return [node for node in ast.parse(code).body if isinstance(node, (ast.Import, ast.ImportFrom))]


def missing_modules(code: str) -> list[str]:
    """Top-level modules the snippet imports that are not installed."""
    names = []
    for node in _imports(code):
        if isinstance(node, ast.Import):
            names += [alias.name for alias in node.names]
        elif node.module and not node.level:
            names.append(node.module)
    return sorted({n for n in names if importlib.util.find_spec(n.split(".")[0]) is None})


SNIPPETS = snippets(README.read_text(encoding="utf-8"))
PAGES = {page.name: snippets(page.read_text(encoding="utf-8")) for page in DOCS}
_RUN_IN_README = {s.code for s in SNIPPETS}
DOC_CASES = [(name, i) for name, found in PAGES.items() for i, s in enumerate(found) if s.code not in _RUN_IN_README]


def _run(name: str, found: list[Snippet], index: int) -> None:
    """Run snippet `index` of a file's snippets after the imports of those before it; skip as the module says."""
    snippet = found[index]
    where = f"{name}:{snippet.line}"
    if snippet.skip:
        pytest.skip(f"{where}: {snippet.skip}")
    missing = missing_modules(snippet.code)
    if missing:
        pytest.skip(f"{where}: needs {', '.join(missing)}, which is not installed")
    namespace: dict = {"__name__": "__readme__"}
    for earlier in found[:index]:
        if not earlier.skip and not missing_modules(earlier.code):
            exec(compile(ast.Module(_imports(earlier.code), []), name, "exec"), namespace)  # noqa: S102
    try:
        exec(compile(snippet.code, where, "exec"), namespace)  # noqa: S102
    except DependencyNotInstalled as error:  # an optional back end reached through gym.make or a planner
        pytest.skip(f"{where}: {error}")
    finally:
        env = namespace.get("env")
        if env is not None and hasattr(env, "close"):
            env.close()


def test_the_readme_has_python_snippets():
    assert len(SNIPPETS) >= 3


def test_the_docs_pages_have_python_snippets_of_their_own():
    assert len(DOC_CASES) >= 5
    assert {"agent.md", "pybullet.md", "tamp.md"} <= set(PAGES)


def test_snippet_parser_reads_skip_markers():
    text = ("x\n<!-- snippet: skip (needs habitat-sim) -->\n\n```python\nimport habitat_sim\n```\n"
            "```python\nprint(1)\n```\n<!-- snippet: skip -->\n```python\nraise SystemExit\n```\n")
    found = snippets(text)
    assert [(s.line, s.skip) for s in found] == [(4, "needs habitat-sim"), (7, None), (11, "marked skip")]
    assert missing_modules("import os\nfrom no_such_module_xyz import thing\n") == ["no_such_module_xyz"]


@pytest.mark.parametrize("index", range(len(SNIPPETS)), ids=[f"README.md:{s.line}" for s in SNIPPETS])
def test_readme_snippet_runs(index, capsys):
    _run("README.md", SNIPPETS, index)


@pytest.mark.parametrize(("name", "index"), DOC_CASES, ids=[f"docs/{n}:{PAGES[n][i].line}" for n, i in DOC_CASES])
def test_docs_snippet_runs(name, index, capsys):
    _run(f"docs/{name}", PAGES[name], index)
