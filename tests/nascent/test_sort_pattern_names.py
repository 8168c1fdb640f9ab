"""Columns named like a Polars pattern ('^k$'): Polars runs many Series methods as an
expression on `pl.col(name)`, which reads such a name as a regular expression. It matched no
column, and `ndpkit sort` ended in a traceback (IndexError, ShapeError) where the name is
a valid Parquet column name like any other. Each test sorts through one of the places that
met it: the key, the gather, `--keep-schema`'s sample and dictionary count, and a
directory's null-typed shard."""

from __future__ import annotations

import decimal
from pathlib import Path

import duckdb
import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from ndpkit.nascent.tablesort import GROUP_LIMIT, sort_parquet

KEY = "^k$"
PAYLOAD = "^p$"
ROWS = 40


def _keys(kind: str) -> pa.Array:
    """`kind` keys with ties and a null; more distinct values than GROUP_LIMIT where the
    gather is to run, fewer where the filters are."""
    values = [(i * 7) % 13 for i in range(ROWS)]
    values[5] = None
    if kind == "int":
        return pa.array(values, pa.int64())
    if kind == "few_strings":
        return pa.array([None if v is None else "abc"[v % 3] for v in values])
    if kind == "strings":
        return pa.array([None if v is None else f"s{v:02d}" for v in values])
    if kind == "float":
        return pa.array([None if v is None else v / 2 - 3 for v in values], pa.float64())
    assert kind == "decimal"
    return pa.array(
        [None if v is None else decimal.Decimal(v).scaleb(-1) for v in values],
        pa.decimal128(9, 1),
    )


def _write(path: Path, kind: str) -> Path:
    table = pa.table(
        {
            "rid": pa.array(range(ROWS), pa.int64()),
            KEY: _keys(kind),
            PAYLOAD: pa.array([f"p{i}" for i in range(ROWS)]).dictionary_encode(),
        }
    )
    pq.write_table(table, path)
    return path


def _duckdb_rids(source: str, descending: bool = False) -> list[int]:
    order = "DESC" if descending else "ASC"
    query = (
        f"SELECT rid FROM read_parquet('{source}', file_row_number=true, filename=true) "
        f'ORDER BY "{KEY}" {order} NULLS LAST, filename, file_row_number'
    )
    return [row[0] for row in duckdb.sql(query).fetchall()]


@pytest.mark.parametrize("kind", ["int", "few_strings", "strings", "float", "decimal"])
@pytest.mark.parametrize(
    ("engine", "devices", "descending"), [("host", 1, False), ("nascent2", 3, True)]
)
def test_a_key_named_like_a_pattern_sorts_as_duckdb_orders(
    tmp_path: Path, kind: str, engine: str, devices: int, descending: bool
) -> None:
    source = _write(tmp_path / "in.parquet", kind)
    out = tmp_path / "out.parquet"
    report = sort_parquet(source, out, KEY, descending=descending, devices=devices, engine=engine)
    if kind == "few_strings":  # the filters' path, not the gather's
        assert report.distinct is not None and report.distinct <= GROUP_LIMIT
    sorted_table = pq.read_table(out)
    assert sorted_table.column("rid").to_pylist() == _duckdb_rids(str(source), descending)
    assert sorted_table.column_names == ["rid", KEY, PAYLOAD]


def test_a_payload_named_like_a_pattern_is_gathered_into_each_partition(
    tmp_path: Path,
) -> None:
    source = _write(tmp_path / "in.parquet", "int")
    out = tmp_path / "parts"
    sort_parquet(source, out, KEY, devices=2, merge=False)
    for device, rows in enumerate([range(0, ROWS // 2), range(ROWS // 2, ROWS)]):
        part = pq.read_table(out / f"device-{device:02d}" / "part-0000.parquet")
        keys = part.column(KEY).to_pylist()
        assert sorted(part.column("rid").to_pylist()) == list(rows)
        assert keys == sorted(keys, key=lambda k: (k is None, k))
        assert part.column(PAYLOAD).to_pylist() == [f"p{r}" for r in part["rid"].to_pylist()]


@pytest.mark.parametrize("kind", ["int", "strings"])
def test_keep_schema_keeps_columns_named_like_a_pattern(tmp_path: Path, kind: str) -> None:
    source = _write(tmp_path / "in.parquet", kind)
    out = tmp_path / "out.parquet"
    sort_parquet(source, out, KEY, keep_schema=True)
    assert pq.read_schema(out).remove_metadata() == pq.read_schema(source).remove_metadata()
    assert pq.read_table(out).column("rid").to_pylist() == _duckdb_rids(str(source))


def test_a_shard_whose_pattern_named_column_is_all_null_reads_in_the_others_type(
    tmp_path: Path,
) -> None:
    """A shard whose column is of Arrow's null type (pandas writes an all-None column so)
    is cast to the type the other shards give it, by the column's position. The shard is
    the first: Polars' concatenation takes a Null column after a typed one, not before."""
    shards = tmp_path / "shards"
    shards.mkdir()
    _write(shards / "part-1.parquet", "int")
    nulls = pa.table(
        {
            "rid": pa.array(range(ROWS, ROWS + 3), pa.int64()),
            KEY: pa.array([2, 1, 0], pa.int64()),
            PAYLOAD: pa.nulls(3, pa.null()),
        }
    )
    pq.write_table(nulls, shards / "part-0.parquet")
    out = tmp_path / "out.parquet"
    sort_parquet(shards, out, KEY)
    sorted_table = pq.read_table(out)
    assert sorted_table.column("rid").to_pylist() == _duckdb_rids(f"{shards}/*.parquet")
    rids, payloads = sorted_table["rid"].to_pylist(), sorted_table[PAYLOAD].to_pylist()
    payload = dict(zip(rids, payloads, strict=True))
    assert [payload[r] for r in range(ROWS, ROWS + 3)] == [None] * 3
    assert payload[0] == "p0"
