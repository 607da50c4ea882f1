"""Tests for the s-expression reader, `extract_define` and `Atom`."""

from __future__ import annotations

import pytest

from servicerobot.errors import PDDLParseError
from servicerobot.pddl import Atom, extract_define, parse_sexpr
from servicerobot.pddl.sexpr import position_of, tokenize


def test_parse_sexpr_nests_lowercases_and_skips_comments():
    expr = parse_sexpr("(Define ; a comment (with parens)\n  (Domain HH) (:Types a - b))")
    assert expr == ["define", ["domain", "hh"], [":types", "a", "-", "b"]]


def test_tokens_remember_their_position():
    text = "(define\n  (domain x))"
    tokens = tokenize(text)
    domain = next(t for t in tokens if t == "domain")
    assert position_of(text, domain.offset) == (2, 4)
    expr = parse_sexpr(text)
    assert position_of(text, expr[1].offset) == (2, 3)


@pytest.mark.parametrize(
    ("text", "line", "column", "words"),
    [
        ("", 1, 1, "empty"),
        ("   \n ; only a comment\n", 3, 1, "empty"),
        ("(a (b c)\n", 1, 1, "not closed"),
        ("(a\n  (b (c d)\n  (e f))", 1, 1, "1 '(' not closed"),
        ("(a (b\n (c)", 1, 4, "2 '(' not closed"),
        ("(a b))", 1, 6, "unexpected text ')'"),
        ("(a b)\n(c)", 2, 1, "after the end of the expression"),
        ("hello (define)", 1, 1, "expected '(' but found 'hello'"),
        (")(", 1, 1, "unbalanced ')'"),
    ],
)
def test_parse_errors_carry_line_and_column(text, line, column, words):
    with pytest.raises(PDDLParseError) as info:
        parse_sexpr(text, source="f.pddl")
    assert (info.value.line, info.value.column) == (line, column)
    assert words in str(info.value)
    assert str(info.value).startswith(f"f.pddl:{line}:{column}: ")


def test_parse_sexpr_rejects_non_strings():
    with pytest.raises(PDDLParseError, match="expected PDDL text"):
        parse_sexpr(None)  # type: ignore[arg-type]


def test_extract_define_from_llm_chatter():
    chatter = (
        "Sure! Here is the problem (as requested):\n```pddl\n"
        "(define (problem p) ; note: ) in a comment\n  (:domain d) (:goal (and)))\n```\nHope this helps (:"
    )
    text = extract_define(chatter)
    assert text.startswith("(define (problem p)")
    assert text.endswith("(:goal (and)))")
    assert parse_sexpr(text)[0] == "define"
    assert extract_define("( DEFINE (domain x))") == "( DEFINE (domain x))"


@pytest.mark.parametrize("text", ["no pddl here", "(definedness)", "(define (domain x)"])
def test_extract_define_errors(text):
    with pytest.raises(PDDLParseError):
        extract_define(text)


def test_atom_str_parse_and_speed_friendly_tuple():
    atom = Atom.parse("(ON Mug_1 table_1)")
    assert atom == Atom("on", ("mug_1", "table_1"))
    assert str(atom) == "(on mug_1 table_1)"
    assert str(Atom("hand-empty", ())) == "(hand-empty)"
    assert hash(atom) == hash(("on", ("mug_1", "table_1")))


@pytest.mark.parametrize("text", ["(on (a) b)", "(on ?x b)", "()", "on a b", "(on a"])
def test_atom_parse_errors(text):
    with pytest.raises(PDDLParseError):
        Atom.parse(text)
