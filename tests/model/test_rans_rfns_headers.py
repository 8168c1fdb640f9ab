"""What the RANS/RFNS reproduction's headers say its numbers are: the GB and MB of the
tables in GB/s and MB/J (O4), and how Table 11's improvement is computed (O7)."""

from __future__ import annotations

import re

import pytest

from ndpkit.reproduce.rans_rfns import DEFAULT_OPTIONS, reproduce


@pytest.mark.parametrize("units", ["binary", "decimal"])
def test_a_table_in_gb_or_mb_says_which_in_its_title(units: str) -> None:
    """`--units decimal` shows the same bytes in decimal GB (108 GiB/s as 115.96): a title
    reading "GB/s" alone left the two readings of one column indistinguishable. Each table
    with a GB/s or MB/J column names, in its title, the bytes its GB or MB stands for, and
    they are the ones the numbers were divided by."""
    options = DEFAULT_OPTIONS.with_(units=units)
    checked = 0
    for table in reproduce(options):
        keys = [c.key for c in table.columns]
        for unit, size, suffix in (
            ("GB", options.gb, "_gb_per_s"),
            ("MB", options.mb, "_mb_per_j"),
        ):
            if not any(key.endswith(suffix) for key in keys):
                continue
            said = re.search(rf"1 {unit} = (\d+)\^(\d+) bytes", table.title)
            assert said is not None, f"Table {table.name} ({units}): {table.title!r}"
            assert int(said.group(1)) ** int(said.group(2)) == size, table.title
            checked += 1
    assert checked == 4  # Tables 4 and 7 (GB/s), 5 and 8 (MB/J)
