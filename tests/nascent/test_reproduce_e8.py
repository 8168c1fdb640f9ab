"""E8 run inside `ndpkit.reproduce.nascent2` on small generated TPC-H data: its rows against
statistics recomputed here from the distinct counts `ndpkit.tpc.analysis.analyse` gives on
the same files (and those counts against DuckDB), its fields, and the paper's
figures only in the `paper` column."""

from __future__ import annotations

from collections import defaultdict
from pathlib import Path
from typing import Any

import duckdb
import pytest

import ndpkit.tpc.analysis
from ndpkit.errors import SpecError
from ndpkit.report import Table
from ndpkit.reproduce.nascent2 import Settings, document, reproduce
from ndpkit.tpc import generate_tpch
from ndpkit.tpc.analysis import Analysis, analyse

SF = 0.05
"""Small enough to generate in seconds, large enough that some columns and sort keys reach
2^16 distinct values (l_orderkey: 1.5M·SF = 75,000), so encodable ≠ all."""
FIELDS = ["statistic", "ours", "paper", "note"]
# Spec §11 (Fig. 4), in E8's row order: the column statistic, then per counting view the
# integer keys, their encodable ones, the non-integer keys, theirs, and the encodable fraction.
PAPER_COLUMN = [0.48, *[16, 10, 12, 11, 0.78] * 2]


@pytest.fixture(scope="module")
def tpch_dir(tmp_path_factory: pytest.TempPathFactory) -> Path:
    directory = tmp_path_factory.mktemp(f"tpch-sf{SF}")
    generate_tpch(SF, directory)
    return directory


def _e8(settings: Settings) -> Table:
    tables = reproduce(settings, tables=["E8"])
    assert [t.name for t in tables] == ["E8"]
    return tables[0]


@pytest.fixture(scope="module")
def e8(tpch_dir: Path) -> Table:
    return _e8(Settings(e8_scale_factor=SF, e8_data_dir=tpch_dir))


def _expected_ours(a: Analysis) -> list[float]:
    """E8's `ours` column from the raw distinct counts, encodable meaning < 2^16 (spec §3.2)."""
    per_table: dict[str, list[bool]] = defaultdict(list)
    for c in a.columns:
        per_table[c.table].append(c.distinct < 2**16)
    fractions = [sum(flags) / len(flags) for flags in per_table.values()]
    out = [sum(fractions) / len(fractions)]
    for keys in (list(a.keys), list({k.source: k for k in a.keys}.values())):
        counts: list[float] = []
        for kind in ("integer", "non-integer"):
            mine = [k for k in keys if k.kind == kind]
            counts += [len(mine), sum(k.distinct < 2**16 for k in mine)]
        out += [*counts, (counts[1] + counts[3]) / (counts[0] + counts[2])]
    return out


def _column(rows: list[dict[str, Any]], key: str) -> list[Any]:
    return [r[key] for r in rows]


@pytest.fixture(scope="module")
def direct(tpch_dir: Path) -> Analysis:
    return analyse(SF, tpch_dir)


def test_e8_rows_agree_with_the_analysis_of_the_same_data(e8: Table, direct: Analysis) -> None:
    expected = _expected_ours(direct)
    assert expected[0] < 1 and expected[4] < expected[3]  # the SF is large enough to tell
    rows = document([e8])["E8"]
    assert _column(rows, "ours") == pytest.approx(expected, abs=1e-12)
    assert all(isinstance(v, int) for v in _column(rows, "ours")[1:5])
    assert f"SF {SF:g}" in e8.title


def test_distinct_counts_behind_e8_agree_with_duckdb(direct: Analysis, tpch_dir: Path) -> None:
    con = duckdb.connect()
    for c in direct.columns:
        sql = f"select count(distinct {c.column}) from '{tpch_dir / c.table}.parquet'"
        assert c.distinct == con.sql(sql).fetchall()[0][0], c
    assert next(c.distinct for c in direct.columns if c.column == "l_orderkey") == 75_000


def test_e8_fields_and_paper_column(e8: Table) -> None:
    assert [c.key for c in e8.columns] == FIELDS
    rows = document([e8])["E8"]
    assert len(rows) == 11
    for r in rows:
        assert list(r) == FIELDS
        assert isinstance(r["statistic"], str) and r["statistic"]
        assert isinstance(r["note"], str)
    assert _column(rows, "paper") == PAPER_COLUMN
    assert rows[0]["statistic"] == "columns < 2^16 distinct, mean over tables"


def test_paper_figures_reach_only_the_paper_column(
    e8: Table, tpch_dir: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # Replace the paper's figures by values found nowhere in the data: the reference column
    # follows them, and nothing we compute changes.
    sentinels = {name: 1000.5 + i for i, name in enumerate(ndpkit.tpc.analysis.PAPER)}
    monkeypatch.setattr(ndpkit.tpc.analysis, "PAPER", sentinels)
    marked = document([_e8(Settings(e8_scale_factor=SF, e8_data_dir=tpch_dir))])["E8"]
    rows = document([e8])["E8"]
    assert _column(marked, "ours") == _column(rows, "ours")
    assert set(_column(marked, "paper")) == set(sentinels.values())
    assert not set(_column(marked, "ours")) & set(sentinels.values())
    assert all(str(v) not in r["note"] for r in marked for v in sentinels.values())


def test_e8_generates_its_own_data_at_the_given_sf(tmp_path: Path) -> None:
    table = _e8(Settings(e8_scale_factor=0.01))
    generate_tpch(0.01, tmp_path)
    assert "SF 0.01" in table.title
    ours = _column(document([table])["E8"], "ours")
    assert ours == pytest.approx(_expected_ours(analyse(0.01, tmp_path)), abs=1e-12)


def test_e8_reads_the_given_directory(tmp_path: Path) -> None:
    with pytest.raises(SpecError, match=r"\.parquet: no such TPC-H table file"):
        _e8(Settings(e8_scale_factor=SF, e8_data_dir=tmp_path))
