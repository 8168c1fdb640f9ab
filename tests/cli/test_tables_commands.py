"""Every command's tables at 60, 80 and 200 columns and piped: no cell cut, every row named,
titles at the terminal's width, small numbers readable."""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys

import pytest

from ndpkit.plan.channels import Grouping, group_channels
from ndpkit.report import cell

BOX = re.compile(r"[│┃┏┓┗┛┡┩┌┐└┘┳┻╇━─┬┴]")


def ndpkit(*args: str, columns: int | None) -> str:
    """stdout of `ndpkit ARGS` in a terminal `columns` wide (None: piped, COLUMNS unset)."""
    env = {"NO_COLOR": "1", "PATH": "/usr/bin:/bin"}
    if columns is not None:
        env["COLUMNS"] = str(columns)
    if "PYTHONPATH" in os.environ:  # lets a check run these against another checkout
        env["PYTHONPATH"] = os.environ["PYTHONPATH"]
    result = subprocess.run(
        [sys.executable, "-m", "ndpkit", *args],
        capture_output=True,
        text=True,
        timeout=120,
        env=env,
        check=True,
    )
    return result.stdout


def words(text: str) -> list[str]:
    return sorted(BOX.sub(" ", text).split())


def column_text(text: str, index: int) -> str:
    """Column `index` of a table's body, top to bottom, without spaces: the same whether a
    cell is on one line or wrapped (or folded) over several."""
    rows = [line.split("│") for line in text.splitlines() if line.startswith("│")]
    return "".join(row[index + 1].replace(" ", "") for row in rows)


def assert_fits(text: str, columns: int) -> None:
    assert "…" not in text
    too_wide = [line for line in text.splitlines() if len(line) > columns]
    assert not too_wide, too_wide[:3]


PLAN_ROWS = [
    "method",
    "switch layer",
    "full-gear bottleneck",
    "active engines",
    "SSD → engine",
    "max SSDs per engine (imbalance)",
    "performance (GB/s) baseline → plan",
    "improvement (%)",
]


@pytest.mark.parametrize("columns", [60, 80])
def test_a_plan_in_a_narrow_terminal_names_every_row_and_wraps_long_values(columns: int) -> None:
    wide = ndpkit("plan", "-p", "rfns", "-a", "he", columns=None)
    text = ndpkit("plan", "-p", "rfns", "-a", "he", columns=columns)
    assert_fits(text, columns)
    for row in PLAN_ROWS:
        assert f"│ {row} " in text, row
    # "0 2 4 … 34" and "0 0 2 2 … 34 34" wrap over several lines; no number is lost.
    assert words(text) == words(wide)


def test_a_plan_table_has_no_empty_header_row() -> None:
    text = ndpkit("plan", "-p", "rfns", "-a", "he", columns=200)
    assert "┃" not in text  # no header row at all: the columns are unnamed
    assert text.splitlines()[2].startswith("│ method ")


@pytest.mark.parametrize("columns", [60, 80])
def test_a_channel_plan_names_its_cell_groups_whole(columns: int) -> None:
    text = ndpkit("plan", "-p", "risp-64ch", "-a", "sobel", columns=columns)
    assert_fits(text, columns)
    assert "│ policy (binding) " in text and "│ cell groups " in text
    assert "64 cells × 1 channel (0-63)" in " ".join(BOX.sub(" ", text).split())
    assert "0:0-0" not in text


def test_a_saving_lost_to_the_switch_layer_keeps_its_digits() -> None:
    """All 36 engines on: the plan saves nothing and the switch layer costs a little. That
    is a real loss of a few thousandths of a percent, not -0.01 (nor rounding noise)."""
    plan = json.loads(ndpkit("plan", "-p", "rans", "-a", "lc", "-f", "json", columns=None))
    improvement = plan["plan"]["improvement_pct"]
    assert plan["plan"]["engines_on"] == 36 and -0.01 < improvement < 0
    shown = cell(improvement, 2)
    assert len(shown.strip("-0.")) == 3  # three significant digits
    text = ndpkit("plan", "-p", "rans", "-a", "lc", columns=80)
    assert re.search(rf"│ improvement \(%\) +│ {re.escape(shown)} +│", text)


def test_titles_and_captions_use_the_terminal_width() -> None:
    text = ndpkit("estimate", "-p", "rfns", "-a", "lc", columns=200)
    lines = text.splitlines()
    assert lines[0] == "Estimate — lc on rfns (device split)"
    assert lines[-1] == "bandwidths in GB/s with GB = 1073741824 bytes"


@pytest.mark.parametrize("columns", [60, 80])
def test_platform_fields_and_values_are_never_cut(columns: int) -> None:
    wide = ndpkit("platforms", "show", "rfns", columns=None)
    text = ndpkit("platforms", "show", "rfns", columns=columns)
    assert_fits(text, columns)
    assert "│ switch_layer.port_bandwidth_bytes_per_s │" in text
    assert "│ engines.throughput.fft2d " in text
    assert column_text(text, 0) == column_text(wide, 0)
    assert column_text(text, 1) == column_text(wide, 1)
    if columns == 80:  # at 60 a long word in a value (application-kernel) folds
        assert words(text) == words(wide)


@pytest.mark.parametrize("columns", [60, 80, 200, None])
def test_every_table_of_a_command_fits_the_terminal(columns: int | None) -> None:
    for args in (
        ("platforms", "list"),
        ("simulate", "-p", "rfns", "-a", "he"),
        ("reproduce", "rans-rfns", "--tables", "9,11"),
    ):
        text = ndpkit(*args, columns=columns)
        assert_fits(text, columns or 400)
        if columns is None:
            assert "(continued)" not in text and "[1]" not in text, args
        else:  # split into parts and footnotes, but every word is still there
            assert set(words(ndpkit(*args, columns=None))) <= set(words(text)), args


def test_cell_groups_describe_contiguous_groups_compactly() -> None:
    from ndpkit.cli.model import cell_groups  # noqa: PLC0415 - the rest runs without it

    def shown(channels: int, cells: int, mode: Grouping = "balanced") -> str:
        mapping = group_channels(channels, cells, mode)
        return cell_groups(list(mapping.route), list(mapping.active))

    assert shown(64, 64) == "64 cells × 1 channel (0-63)"
    assert shown(64, 1) == "1 cell × 64 channels (0-63)"
    assert shown(64, 20) == "4 cells × 4 channels (0-15), 16 cells × 3 channels (16-63)"
    assert shown(64, 20, "floor") == "19 cells × 3 channels (0-56), 1 cell × 7 channels (57-63)"
    # Not contiguous: each cell's channels listed.
    assert cell_groups([0, 1, 0, 1], [0, 1]) == "0:0,2 1:1,3"
