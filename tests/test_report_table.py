"""Terminal tables: every cell whole at any width, long text as footnotes."""

from __future__ import annotations

import csv
import io
import json

import pytest
from rich.console import Console

from ndpkit.report import Column, Table, cell, to_rich
from ndpkit.report.table import to_csv

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
    """A long first column (a quantity's name) stays in the table at any width: wrapped at
    its spaces when nothing else can give, never cut."""
    rows = [{"what": f"energy of the switch layer {i} (J)", "value": float(i)} for i in range(3)]
    table = Table("t", "title", [Column("what", "what", None), Column("value", "value", 1)], rows)
    assert "│ energy of the switch layer 2 (J) │" in render(table, 60)
    text = render(table, 40)
    assert "[1]" not in text and "…" not in text
    assert "│ energy of the switch layer 2 │" in text and "│ (J)" in text
    assert max(len(line) for line in text.splitlines()) <= 40


def test_a_narrow_terminal_gets_several_tables_that_repeat_the_row_names():
    wide, narrow = render(TABLE, None), render(TABLE, 60)
    assert "(continued)" not in wide
    assert narrow.count("(continued)") >= 1
    # Each part names its rows: the app and platform columns head every part.
    parts = narrow.count("┃ app  ┃ platform ┃")
    assert parts == narrow.count("(continued)") + 1


def test_only_rounding_noise_shows_as_zero_without_a_sign():
    assert cell(-1e-13, 2) == "0.00"
    assert cell(4e-12, None) == "0"
    assert cell(-0.0, None) == "0"
    assert cell(-0.0, 2) == "0.00"
    # A small but real negative saving (the switch layer's cost with every engine on).
    assert cell(-0.0075729, 2) == "-0.00757"
    assert cell(-12.5, 1) == "-12.5"


@pytest.mark.parametrize(
    ("value", "digits", "text"),
    [
        (0.000446, 3, "0.000446"),  # was 0.000 s
        (0.0161, 1, "0.0161"),  # was 0.0 J
        (0.29862, 2, "0.299"),  # was 0.30 GB
        (0.5, 0, "0.500"),
        (0.334, 3, "0.334"),
        (3.2189e-05, 3, "3.22e-05"),
        (-3.2189e-07, 4, "-3.22e-07"),
        (1.0, 0, "1"),
        (2.75093, 4, "2.7509"),
        (15616.04, 1, "15,616.0"),
    ],
)
def test_small_numbers_keep_three_significant_digits(value: float, digits: int, text: str):
    assert cell(value, digits) == text


KEY_VALUE = Table(
    "plan",
    "Plan — he on rfns, a title longer than the table itself",
    [Column("item", "", None), Column("value", "", None)],
    [
        {"item": "method", "value": "paper"},
        {"item": "active engines", "value": " ".join(str(i) for i in range(0, 36, 2))},
        {"item": "SSD → engine", "value": " ".join(str(i - i % 2) for i in range(36))},
        {"item": "max SSDs per engine (imbalance)", "value": "2 (1.00x)"},
        {"item": "performance (GB/s) baseline → plan", "value": "36.00 → 36.00"},
        {"item": "TOML table", "value": "[engines]"},
    ],
    note="baseline: full gear on the same server without a switch layer, a long caption",
)


@pytest.mark.parametrize("width", [None, 200, 80, 60, 40])
def test_a_table_of_text_wraps_its_values_and_keeps_every_row_name_whole(width: int | None):
    text = render(KEY_VALUE, width)
    assert "…" not in text
    if width is not None:
        assert max(len(line) for line in text.splitlines()) <= width
    if width is None or width >= 60:  # at 40 even the row names must wrap
        for row in KEY_VALUE.rows:
            assert f"│ {row['item']} " in text, (width, row["item"])
    words = " ".join(f"{row['item']} {row['value']}" for row in KEY_VALUE.rows).split()
    shown = text.replace("│", " ").split()
    assert all(shown.count(w) >= words.count(w) for w in words), width
    assert "[engines]" in text  # a cell is data, not Rich markup


def test_a_table_without_headers_has_no_empty_header_row():
    lines = render(KEY_VALUE, None).splitlines()
    assert "┃" not in "".join(lines)
    assert lines[2].startswith("│ method ")


def test_title_and_caption_wrap_at_the_terminal_not_at_the_table():
    narrow = Table(
        "estimate",
        "Estimate — lc on edge16 (device split)",
        [Column("quantity", "quantity", None), Column("value", "value", 4)],
        [{"quantity": "time_s", "value": 0.3736}],
        note="bandwidths in GB/s with GB = 1073741824 bytes",
    )
    lines = render(narrow, 200).splitlines()
    assert lines[0] == "Estimate — lc on edge16 (device split)"
    assert lines[-1] == "bandwidths in GB/s with GB = 1073741824 bytes"
    assert max(len(line) for line in render(narrow, 30).splitlines()) <= 30


def test_csv_names_each_rows_table_even_where_rows_have_a_table_column() -> None:
    plain = Table("stages", "Stages", [Column("app", "App", None)], [{"app": "he"}])
    tpc = Table("tables", "Tables", [Column("table", "Table", None)], [{"table": "region"}])
    assert to_csv([plain]) == "table,app\nstages,he\n"
    rows = list(csv.reader(io.StringIO(to_csv([plain, tpc]))))
    assert rows == [["section", "app", "table"], ["stages", "he", ""], ["tables", "", "region"]]


def test_csv_writes_a_list_as_json() -> None:
    """str() wrote Python's repr: `data show -f csv` gave a Parquet data set's columns as
    ['x0', 'x1'], which no CSV reader's JSON parser takes, and a quote in a name came out
    in Python's escaping."""
    table = Table(
        "dataset",
        "",
        [Column("field", "field", None), Column("value", "value", None)],
        [{"field": "columns", "value": ["x0", 'it\'s "x"']}, {"field": "shape", "value": (8,)}],
    )
    rows = list(csv.DictReader(io.StringIO(to_csv([table]))))
    assert [json.loads(r["value"]) for r in rows] == [["x0", 'it\'s "x"'], [8]]


def test_csv_writes_a_yes_or_no_as_json() -> None:
    """`evaluate -f csv` wrote `verified` as Python's `True`, where its JSON says `true` and
    its table `yes`; 1 and 0 stay numbers."""
    columns = [Column("app", "app", None), Column("verified", "verified", None)]
    rows = [{"app": "lc", "verified": True}, {"app": "he", "verified": False}]
    table = Table("measured", "", columns, [*rows, {"app": "x", "verified": 1}])
    assert (
        to_csv([table]) == "table,app,verified\nmeasured,lc,true\nmeasured,he,false\nmeasured,x,1\n"
    )
