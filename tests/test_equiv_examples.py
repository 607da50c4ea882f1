"""The example pairs of `servicerobot equiv` (examples/equiv/, shown in docs/equivalence.md): each gives the
verdict and the reason the page says."""

from __future__ import annotations

from pathlib import Path

import pytest

from servicerobot.cli import main
from servicerobot.pddl import domains

EXAMPLES = Path(__file__).resolve().parent.parent / "examples" / "equiv"

# (first, second, domain, exit status, the reason on stderr for a pair that is not equivalent)
PAIRS = [
    ("renamed-a", "renamed-b", "blocksworld", 0, ""),
    ("implied-a", "implied-b", "blocksworld", 0, ""),
    ("tower-a", "pair-b", "blocksworld", 1, "why: the goals differ in their 'on' facts: 2 vs 1"),
    ("gripper-a", "gripper-b", "gripper", 1,
     "why: no renaming of objects maps both the initial state and the goal of one onto the other"),
]


@pytest.mark.parametrize(("a", "b", "domain", "status", "why"), PAIRS, ids=[f"{a}~{b}" for a, b, *_ in PAIRS])
def test_example_pair(a, b, domain, status, why, capsys, monkeypatch):
    monkeypatch.chdir(EXAMPLES)
    assert main(["equiv", f"{a}.pddl", f"{b}.pddl", "--domain", domain]) == status
    out, err = capsys.readouterr()
    assert out.strip() == ("equivalent" if status == 0 else "not equivalent")
    assert err.strip() == why
    # the verdict does not depend on the order of the pair
    assert main(["equiv", f"{b}.pddl", f"{a}.pddl", "--domain", domain]) == status
    capsys.readouterr()


def test_every_example_file_is_in_a_pair_and_the_docs_show_each_pair():
    files = {p.stem for p in EXAMPLES.glob("*.pddl")}
    assert files == {name for a, b, *_ in PAIRS for name in (a, b)}
    page = (EXAMPLES.parent.parent / "docs" / "equivalence.md").read_text(encoding="utf-8")
    for a, b, domain, _, why in PAIRS:
        assert f"servicerobot equiv {a}.pddl {b}.pddl --domain {domain}" in page
        assert why.removeprefix("why: ") in page


def test_a_domain_file_of_the_same_name_wins_over_the_shipped_domain(tmp_path, capsys, monkeypatch):
    for name in ("tower-a", "pair-b"):
        (tmp_path / f"{name}.pddl").write_text((EXAMPLES / f"{name}.pddl").read_text())
    (tmp_path / "blocksworld").write_text(domains.text("gripper"))  # a file named like a shipped domain
    monkeypatch.chdir(tmp_path)
    assert main(["equiv", "tower-a.pddl", "pair-b.pddl", "--domain", "blocksworld"]) == 2  # read as gripper
    assert "servicerobot equiv:" in capsys.readouterr().err
