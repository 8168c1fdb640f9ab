"""`ndpkit sort` checks the key column from the Parquet footers before it reads the table: a
typo in --by, or a key no sort takes (a list, a struct), was an error only once the whole
table was in memory (3 s for TPC-H lineitem at SF 1; a Rust abort where it did not fit)."""

from __future__ import annotations

import re
from pathlib import Path

import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from ndpkit.errors import SpecError
from ndpkit.nascent import tablesort
from ndpkit.nascent.tablesort import plan_sort, read_parquet, sort_parquet


@pytest.fixture
def table_file(tmp_path: Path) -> Path:
    path = tmp_path / "t.parquet"
    table = pa.table({"a": [3, 1, 2], "l": [[1], [2], [3]], "s": [{"x": 1}, {"x": 2}, {"x": 3}]})
    pq.write_table(table, path)
    return path


def _unread(monkeypatch: pytest.MonkeyPatch) -> None:
    """Any read of the table's rows fails the test."""

    def read(path: Path) -> None:
        raise AssertionError(f"the table {path} was read")

    monkeypatch.setattr(tablesort, "read_parquet", read)


@pytest.mark.parametrize("by", ["zz", "l", "s"], ids=["missing", "list", "struct"])
def test_a_key_no_sort_takes_is_refused_before_the_read(
    table_file: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, by: str
) -> None:
    """The same error as after the read (plan_sort's), with nothing read or written."""
    with pytest.raises(SpecError) as after:
        plan_sort(read_parquet(table_file), by, source=str(table_file))
    _unread(monkeypatch)
    out = tmp_path / "o.parquet"
    with pytest.raises(SpecError) as before:
        sort_parquet(table_file, out, by)
    assert str(before.value) == str(after.value)
    assert not out.exists()


def test_a_key_in_another_file_of_a_directory_is_left_to_the_read(tmp_path: Path) -> None:
    """A key in the second file only: the read's error, which names the files that differ,
    not "no column"."""
    (tmp_path / "set").mkdir()
    pq.write_table(pa.table({"a": [1]}), tmp_path / "set" / "p0.parquet")
    pq.write_table(pa.table({"a": [2], "k": [1]}), tmp_path / "set" / "p1.parquet")
    with pytest.raises(SpecError, match=re.escape("has a column 'k', where p0.parquet has")):
        sort_parquet(tmp_path / "set", tmp_path / "o.parquet", "k")


def test_files_of_other_columns_are_refused_before_the_rest_is_read(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A directory holding several tables (TPC-H's eight): the first file whose columns
    differ is named before the files after it are read, not after all of them were."""
    (tmp_path / "set").mkdir()
    for i, name in enumerate(["a", "b", "a"]):
        pq.write_table(pa.table({name: [i]}), tmp_path / "set" / f"p{i}.parquet")
    read: list[str] = []
    real = tablesort._read_file

    def reading(file: Path) -> object:
        read.append(file.name)
        return real(file)

    monkeypatch.setattr(tablesort, "_read_file", reading)
    with pytest.raises(SpecError, match=re.escape("p1.parquet: lacks column 'a', where p0")):
        sort_parquet(tmp_path / "set", tmp_path / "o.parquet", "a")
    assert read == ["p0.parquet", "p1.parquet"]
    assert not (tmp_path / "o.parquet").exists()
