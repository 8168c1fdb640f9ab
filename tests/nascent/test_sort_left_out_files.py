"""A directory's hidden files and those pyarrow and Spark pass over are no rows of the table,
for `ndpkit sort` as for `data import` (`files.is_left_out`)."""

from __future__ import annotations

from pathlib import Path

import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from ndpkit.errors import SpecError
from ndpkit.nascent.tablesort import parquet_inputs, sort_parquet


def _table_with_leftovers(root: Path) -> None:
    """Two parts, and what a failed Spark job, a killed `data tpch` and an editor leave."""
    root.mkdir()
    pq.write_table(pa.table({"k": [3, 1]}), root / "part-0.parquet")
    pq.write_table(pa.table({"k": [2]}), root / "part-1.parquet")
    (root / "_temporary" / "0").mkdir(parents=True)
    pq.write_table(pa.table({"k": [9, 9]}), root / "_temporary" / "0" / "part-0.parquet")
    (root / ".tpch-x1y2").mkdir()
    pq.write_table(pa.table({"k": [8]}), root / ".tpch-x1y2" / "lineitem.parquet")
    pq.write_table(pa.table({"k": [7]}), root / ".part-1.parquet.swp.parquet")
    pq.write_table(pa.table({"k": [6]}), root / "_metadata.parquet")
    (root / "_SUCCESS").write_bytes(b"")


def test_left_out_files_and_directories_are_not_read(tmp_path: Path) -> None:
    _table_with_leftovers(tmp_path / "t")
    assert [p.name for p in parquet_inputs(tmp_path / "t")] == ["part-0.parquet", "part-1.parquet"]
    out = tmp_path / "sorted.parquet"
    sort_parquet(tmp_path / "t", out, "k")
    assert pq.read_table(out).column("k").to_pylist() == [1, 2, 3]


def test_a_directory_of_left_out_files_only_has_no_table(tmp_path: Path) -> None:
    (tmp_path / "t" / "_temporary").mkdir(parents=True)
    pq.write_table(pa.table({"k": [1]}), tmp_path / "t" / "_temporary" / "part-0.parquet")
    with pytest.raises(SpecError, match=r"no \.parquet files in this directory"):
        parquet_inputs(tmp_path / "t")


def test_a_left_out_name_given_as_the_input_itself_is_read(tmp_path: Path) -> None:
    """Only what lies inside the directory is passed over: the input named is the input."""
    _table_with_leftovers(tmp_path / "_t")
    assert len(parquet_inputs(tmp_path / "_t")) == 2
    assert parquet_inputs(tmp_path / "_t" / "_metadata.parquet")[0].name == "_metadata.parquet"
