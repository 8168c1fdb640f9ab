"""`ndpkit sort` of tables with thousands of columns: the checks done once per column stay
linear in the columns. Asking Polars for a frame's schema (or its column names) builds it
anew each time; asked once per column, `--keep-schema` took 25 s for a table of 4,000
columns and 20 rows whose plain sort took 0.7 s."""

from __future__ import annotations

import time
from pathlib import Path

import numpy as np
import polars as pl
import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from ndpkit.nascent import tablesort
from ndpkit.nascent.tablesort import sort_parquet


def _wide(path: Path, columns: int) -> Path:
    """A table of `columns` int64 columns and 5 rows, in reverse order of `c1`."""
    pq.write_table(pa.table({f"c{i}": np.arange(5)[::-1] * i for i in range(columns)}), path)
    return path


def _schema_builds(monkeypatch: pytest.MonkeyPatch) -> list[int]:
    """A counter of Polars' builds of a DataFrame's schema or column names."""
    builds = [0]
    for name in ("schema", "columns"):
        prop = getattr(pl.DataFrame, name)

        def counted(frame: pl.DataFrame, prop: property = prop) -> object:
            builds[0] += 1
            return prop.fget(frame)  # type: ignore[misc]

        monkeypatch.setattr(pl.DataFrame, name, property(counted))
    return builds


def test_keep_schema_builds_polars_schema_a_fixed_number_of_times(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """As many of Polars' schema builds for 600 columns as for 6: none per column."""
    counts = []
    for columns in (6, 600):
        src = _wide(tmp_path / f"w{columns}.parquet", columns)
        builds = _schema_builds(monkeypatch)
        sort_parquet(src, tmp_path / f"o{columns}.parquet", "c1", keep_schema=True)
        monkeypatch.undo()
        counts.append(builds[0])
        got = pq.read_table(tmp_path / f"o{columns}.parquet")
        assert got.schema == pq.read_schema(src)
        assert got.column("c1").to_pylist() == [0, 1, 2, 3, 4]
    assert counts[1] == counts[0], counts


def test_duplicate_column_names_are_found_in_linear_time() -> None:
    """The check for two columns of one name (Polars refuses them) compared each name with
    every name before it: 40,000 columns took seconds. The duplicate is still named."""
    names = [f"c{i}" for i in range(40_000)] + ["c39999"]
    schema = pa.schema([pa.field(n, pa.int8()) for n in names])
    footer = tablesort._Footer(parquet=None, schema=schema, leaves=[])  # type: ignore[arg-type]
    start = time.perf_counter()
    error = tablesort._unloadable(Path("wide.parquet"), footer)
    assert time.perf_counter() - start < 2.0
    assert error is not None
    assert "two columns are named 'c39999'" in str(error)
