"""Imports between the packages point down only, and no modules import each other in a circle.

The layers (DESIGN.md): `pddl` <- `scenes` <- `adapters` <- `envs` <- `memory` <- `language` <- `planners` <-
`agent` <- `experiments`, with `errors`, `files` and `limits` below all of them. Every `import` statement
counts, also one inside a function or under `if TYPE_CHECKING:`: a lazy import is still a dependency.
"""

from __future__ import annotations

import ast
from pathlib import Path

import networkx as nx

PACKAGE = Path(__file__).resolve().parent.parent / "servicerobot"

# rank of each top-level package or module of servicerobot: a module may import only ranks <= its own
RANK = {
    "errors": 0, "files": 0, "limits": 0,
    "pddl": 1, "scenes": 2, "adapters": 3, "envs": 4, "memory": 5, "language": 6, "planners": 7,
    "agent": 8, "oracle": 8, "failures": 8,
    "experiments": 9,
    "cli": 10, "docs_bench": 10, "__init__": 10,
}

# Upward imports not fixed yet, each with why: the test fails when one is added and when one of these is gone
# (then delete it here).
KNOWN_UPWARD: set[tuple[str, str]] = set()
# Import circles between modules not broken yet (each a set of files).
KNOWN_CIRCLES: set[frozenset[str]] = set()


def _module(path: Path, package: Path = PACKAGE) -> str:
    parts = path.relative_to(package.parent).with_suffix("").parts
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def _imports(path: Path, package_root: Path = PACKAGE) -> list[str]:
    """Every servicerobot module named by an import statement of `path` (relative imports resolved)."""
    module = _module(path, package_root)
    package = module if path.name == "__init__.py" else module.rsplit(".", 1)[0]
    found = []
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.Import):
            found += [alias.name for alias in node.names]
        elif isinstance(node, ast.ImportFrom):
            base = node.module or ""
            if node.level:
                anchor = package.split(".")[: len(package.split(".")) - node.level + 1]
                base = ".".join([*anchor, *([base] if base else [])])
            # `from servicerobot.pddl import interpreter` names a module; `import Atom` names a member
            found += [f"{base}.{alias.name}" if _is_module(f"{base}.{alias.name}", package_root) else base
                      for alias in node.names]
    return [name for name in found if name == "servicerobot" or name.startswith("servicerobot.")]


def _is_module(name: str, package: Path = PACKAGE) -> bool:
    rel = package.parent.joinpath(*name.split("."))
    return rel.with_suffix(".py").is_file() or (rel / "__init__.py").is_file()


def _top(name: str) -> str:
    parts = name.split(".")
    return parts[1] if len(parts) > 1 else "__init__"


def _files(package: Path = PACKAGE) -> list[Path]:
    return sorted(p for p in package.rglob("*.py") if "__pycache__" not in p.parts)


def upward_imports(package: Path = PACKAGE) -> set[tuple[str, str]]:
    """(file, imported module) pairs where a lower layer imports a higher one."""
    found = set()
    for path in _files(package):
        rel = str(path.relative_to(package.parent))
        module = _module(path, package)
        mine = RANK[_top(module)] if module != "servicerobot" else RANK["__init__"]
        for name in _imports(path, package):
            if name != "servicerobot" and RANK[_top(name)] > mine:
                found.add((rel, name))
    return found


def circles() -> set[frozenset[str]]:
    """Sets of modules that import each other in a circle (package `__init__` re-exports left out)."""
    graph = nx.DiGraph()
    for path in _files():
        if path.name == "__init__.py":
            continue
        for name in _imports(path):
            target = PACKAGE.parent.joinpath(*name.split(".")).with_suffix(".py")
            if target.is_file():
                graph.add_edge(str(path.relative_to(PACKAGE.parent)), str(target.relative_to(PACKAGE.parent)))
    return {frozenset(c) for c in nx.strongly_connected_components(graph) if len(c) > 1}


def test_every_top_level_module_has_a_layer():
    names = {_top(_module(p)) for p in _files() if _module(p) != "servicerobot"}
    assert not names - set(RANK), f"give these a rank in RANK: {sorted(names - set(RANK))}"


def test_imports_point_down_only():
    found = upward_imports()
    new = sorted(found - KNOWN_UPWARD)
    assert not new, "upward imports (move what both layers need into the lower one): " + "; ".join(
        f"{f} imports {m}" for f, m in new)
    fixed = sorted(KNOWN_UPWARD - found)
    assert not fixed, f"fixed, so remove from KNOWN_UPWARD: {fixed}"


def test_no_import_circles():
    found = circles()
    new = [sorted(c) for c in found - KNOWN_CIRCLES]
    assert not new, f"modules importing each other in a circle: {new}"
    fixed = [sorted(c) for c in KNOWN_CIRCLES - found]
    assert not fixed, f"broken, so remove from KNOWN_CIRCLES: {fixed}"


def test_the_checker_sees_lazy_relative_and_type_checking_imports(tmp_path):
    package = tmp_path / "servicerobot"
    for module in ("__init__.py", "pddl/__init__.py", "planners/__init__.py", "agent.py", "experiments/__init__.py",
                   "experiments/episode.py"):
        (package / module).parent.mkdir(parents=True, exist_ok=True)
        (package / module).write_text("")
    probe = package / "pddl" / "probe.py"
    probe.write_text("from typing import TYPE_CHECKING\nif TYPE_CHECKING:\n    from servicerobot.planners import Planner\n"
                     "def f():\n    from ..agent import ServiceAgent\n    import servicerobot.experiments.episode\n"
                     "from servicerobot.pddl import Atom\n")
    expected = {"servicerobot.planners", "servicerobot.agent", "servicerobot.experiments.episode"}
    assert set(_imports(probe, package)) == expected | {"servicerobot.pddl"}
    assert upward_imports(package) == {("servicerobot/pddl/probe.py", name) for name in expected}
