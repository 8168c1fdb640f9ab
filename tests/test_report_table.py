"""Terminal tables: every cell whole at any width, long text as footnotes."""

from __future__ import annotations

import io

import pytest
from rich.console import Console

from ndpkit.report import Column, Table, cell, to_rich

TABLE = Table(
    "predicted",
    "Predicted on each platform",
    [
        Column(key, header, digits)
        for key, header, digits in [
            ("app", "app", None),
            ("platform", "platform", None),
            ("time_s", "time (s)", 3),
            ("energy_j", "energy (J)", 1),
            ("ee", "MB/J", 2),
            ("speedup", "× CNS (time)", 2),
            ("plan", "plan", None),
            ("note", "note", None),
        ]
    ],
    [
        {
            "app": "knn8",
            "platform": "cns",
            "time_s": 0.334,
            "energy_j": 204.8,
            "ee": 650.1,
            "speedup": 1.0,
            "plan": None,
            "note": "no NDP engines: the host runs every split whole",
        },
        {
            "app": "knn8",
            "platform": "rfns",
            "time_s": 1.0301,
            "energy_j": 15616.04,
            "ee": 8.52,
            "speedup": 0.3247,
            "plan": "28/36 on",
            "note": "the only split at the shortest time",
        },
        {
            "app": "lc",
            "platform": "rans",
            "time_s": 0.478,
            "energy_j": 119.4,
            "ee": 317.23,
            "speedup": 0.14,
            "plan": "36/36 on",
            "note": None,
        },
    ],
    note="a caption",
)


def render(table: Table, width: int | None) -> str:
    out = io.StringIO()
    console = Console(file=out, width=width or 400, force_terminal=False, soft_wrap=False)
    for part in to_rich(table, width):
        console.print(part)
    return out.getvalue()


@pytest.mark.parametrize("width", [None, 140, 80, 60])
def test_every_cell_is_shown_whole_and_no_line_is_too_wide(width: int | None):
    text = render(TABLE, width)
    assert "…" not in text
    for value in ("15,616.0", "0.334", "1.030", "650.10", "28/36 on", "36/36 on", "0.32"):
        assert value in text, (width, value)
    if width is not None:
        assert max(len(line) for line in text.splitlines()) <= width


def test_long_text_becomes_numbered_footnotes_only_when_the_table_is_too_wide():
    narrow = render(TABLE, 100)
    assert "[1] no NDP engines: the host runs every split whole" in narrow
    assert "[2] the only split at the shortest time" in narrow
    assert "a caption" in narrow
    wide = render(TABLE, None)
    assert "│ no NDP engines: the host runs every split whole │" in wide
    assert "[1]" not in wide


def test_row_names_are_never_footnotes():
    """A long first column (a quantity's name) stays in the table at any width."""
    rows = [{"what": f"energy of the switch layer {i} (J)", "value": float(i)} for i in range(3)]
    table = Table("t", "title", [Column("what", "what", None), Column("value", "value", 1)], rows)
    text = render(table, 40)
    assert "energy of the switch layer 2 (J)" in text and "[1]" not in text


def test_a_narrow_terminal_gets_several_tables_that_repeat_the_row_names():
    wide, narrow = render(TABLE, None), render(TABLE, 60)
    assert "(continued)" not in wide
    assert narrow.count("(continued)") >= 1
    # Each part names its rows: the app and platform columns head every part.
    parts = narrow.count("┃ app  ┃ platform ┃")
    assert parts == narrow.count("(continued)") + 1


def test_values_that_round_to_zero_show_no_sign():
    assert cell(-0.0038, 2) == "0.00"
    assert cell(-0.0, None) == "0"
    assert cell(-0.0051, 2) == "-0.01"
    assert cell(-12.5, 1) == "-12.5"
