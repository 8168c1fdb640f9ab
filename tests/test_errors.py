"""`errors.brief`: a library's error quoted in ours, short."""

from __future__ import annotations

from ndpkit.errors import brief


def test_brief_keeps_the_first_line_with_blanks_closed_up() -> None:
    assert brief(ValueError("bad   header:  'x'      \nsecond line")) == "bad header: 'x'"


def test_brief_cuts_a_long_message() -> None:
    text = brief(ValueError("y" * 500), limit=50)
    assert len(text) == 50 and text.endswith("…")


def test_brief_names_the_type_of_an_empty_message() -> None:
    assert brief(KeyError()) == "KeyError"
    assert brief(OSError("   ")) == "OSError"
