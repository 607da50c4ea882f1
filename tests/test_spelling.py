"""Misspelt names mended before a request is read (`servicerobot.language.spelling`)."""

from __future__ import annotations

import pytest

from servicerobot.language.spelling import correct

_KNOWN = {"rubbish", "refrigerator", "kitchen", "table", "cable", "bottle", "napkin", "bookshelf"}


@pytest.mark.parametrize("text,mended", [
    ("throw away the rubbsih", "throw away the rubbish"),  # two letters swapped
    ("put it in the refridgerator", "put it in the refrigerator"),  # one letter too many
    ("wipe the kitchn", "wipe the kitchen"),  # one letter left out
    ("wipe the tabel", "wipe the tabel"),  # too short a word to tell a slip from another word
    ("the bottel please", "the bottle please"),
    ("Rubbsih first", "Rubbish first"),  # a capital kept
    ("the bookshelfs", "the bookshelfs"),  # a plural of a known word is no slip
    ("a tablet and a cable", "a tablet and a cable"),  # "tablet" is "table" with a letter more, but short
    ("refrigirator", "refrigerator"),  # one letter mistyped in a long word
    ("refirgirator", "refirgirator"),  # two slips: left alone
])
def test_a_word_one_slip_from_one_known_word_is_mended(text, mended):
    assert correct(text, _KNOWN) == mended


def test_a_slip_near_two_known_words_is_left_alone():
    assert correct("the botles", {"bottles", "boltes"}) == "the botles"
