"""What the RANS/RFNS reproduction's headers say its numbers are: the GB and MB of the
tables in GB/s and MB/J (O4), and how Table 11's improvement is computed (O7)."""

from __future__ import annotations

import re

import pytest

from ndpkit.reproduce.rans_rfns import DEFAULT_OPTIONS, document, reproduce


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


@pytest.mark.parametrize("improvement", ["reduction", "ee_gain"])
def test_table_11_describes_the_improvement_it_holds(improvement: str) -> None:
    """With `--improvement ee_gain` the JSON described Table 11's improvement as the energy
    reduction (net saving / baseline energy), while the column held the MB/J gain. The
    description given is checked against the HE-on-RFNS row, recomputed from Tables 8 and
    11 as the description says."""
    options = DEFAULT_OPTIONS.with_(improvement=improvement)
    doc = document(reproduce(options), options)
    said = doc["table_columns"]["11"]["improvement_pct"]
    he = next(r for r in doc["tables"]["11"] if (r["server"], r["app"]) == ("rfns", "he"))
    base = next(r for r in doc["tables"]["8"] if (r["server"], r["app"]) == ("rfns", "he"))
    baseline_j, planned_j = base["energy_j"], base["energy_j"] - he["net_saving_j"]
    reduction = he["net_saving_j"] / baseline_j * 100
    ee_gain = (baseline_j / planned_j - 1) * 100  # same D: MB/J goes as 1 / energy
    assert abs(reduction - ee_gain) > 1  # 48.04 % against 92.45 %
    if "MB/J" in said:
        assert he["improvement_pct"] == pytest.approx(ee_gain, rel=1e-9), said
    else:
        assert "baseline energy" in said, said
        assert he["improvement_pct"] == pytest.approx(reduction, rel=1e-9), said
