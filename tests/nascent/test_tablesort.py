"""`ndpkit sort`'s pipeline against DuckDB: the same rows in the same order as
`ORDER BY key [DESC], file_row_number` (the documented stable tie rule), nulls where DuckDB
puts them, for every key type; plus multi-device partitions, the NASCENT2 engine, and bad
input."""

from __future__ import annotations

import datetime as dt
import decimal
import os
import re
from pathlib import Path

import duckdb
import hypothesis.strategies as st
import numpy as np
import polars as pl
import pyarrow as pa
import pyarrow.parquet as pq
import pytest
from hypothesis import given, settings

from ndpkit.errors import SpecError
from ndpkit.nascent.keys import DICTIONARY_LIMIT, SortKeys, _raw_keys, sort_keys
from ndpkit.nascent.tablesort import (
    ENGINES,
    GROUP_LIMIT,
    KeyGroups,
    in_key_order,
    input_schema,
    key_groups,
    parquet_inputs,
    partition_bounds,
    plan_sort,
    read_parquet,
    sort_frame,
    sort_parquet,
    write_sorted,
)

ROWS = 3_000


def _table(rows: int, seed: int) -> pa.Table:
    """Every key type, each with nulls and many ties; `rid` is the original row number."""
    rng = np.random.default_rng(seed)

    def nulls(values: list[object], share: float = 0.1) -> list[object]:
        return [None if rng.random() < share else v for v in values]

    floats = rng.choice([-1.5, -0.0, 0.0, 2.25, np.inf, -np.inf, np.nan, 3.0e38], rows)
    words = ["", "a", "ab", "B", "é", "zz", "Ünïcode", "a" * 40]
    return pa.table(
        {
            "rid": pa.array(np.arange(rows), pa.int64()),
            "i64": pa.array(nulls(rng.integers(-(2**62), 2**62, rows).tolist()), pa.int64()),
            "i8": pa.array(nulls(rng.integers(-5, 5, rows).tolist()), pa.int8()),
            "u32": pa.array(nulls(rng.integers(0, 2**32 - 1, rows).tolist()), pa.uint32()),
            "f64": pa.array(nulls(floats.tolist()), pa.float64()),
            "f32": pa.array(nulls(floats.astype(np.float32).tolist()), pa.float32()),
            "low_str": pa.array(nulls(rng.choice(words, rows).tolist())),
            "high_str": pa.array(nulls([f"k{v}" for v in rng.integers(0, 10**9, rows)])),
            "day": pa.array(
                nulls(
                    [
                        dt.date(2000, 1, 1) + dt.timedelta(days=int(d))
                        for d in rng.integers(-400, 400, rows)
                    ]
                ),
                pa.date32(),
            ),
            "price": pa.array(
                nulls(
                    [
                        decimal.Decimal(int(c)).scaleb(-2)
                        for c in rng.integers(-(10**6), 10**6, rows)
                    ]
                ),
                pa.decimal128(15, 2),
            ),
            "wide": pa.array(
                nulls([decimal.Decimal(int(c)) * 10**20 for c in rng.integers(-50, 50, rows)]),
                pa.decimal128(38, 0),
            ),
            "flag": pa.array(nulls(rng.random(rows) < 0.5)),
            "blob": pa.array(nulls([w.encode() for w in rng.choice(words, rows)]), pa.binary()),
            "payload": pa.array(rng.random(rows)),
        }
    )


@pytest.fixture(scope="module")
def table_file(tmp_path_factory: pytest.TempPathFactory) -> Path:
    path = tmp_path_factory.mktemp("tables") / "t.parquet"
    pq.write_table(_table(ROWS, seed=3), path, row_group_size=700)  # several row groups
    return path


def duckdb_order(path: Path, key: str, descending: bool) -> list[int]:
    direction = "DESC" if descending else "ASC"
    query = (
        f"SELECT rid FROM read_parquet('{path}', file_row_number=true) "
        f"ORDER BY {key} {direction}, file_row_number"
    )
    return [r[0] for r in duckdb.sql(query).fetchall()]


KEYS = [
    "i64",
    "i8",
    "u32",
    "f64",
    "f32",
    "low_str",
    "high_str",
    "day",
    "price",
    "wide",
    "flag",
    "blob",
]


@pytest.mark.parametrize("descending", [False, True], ids=["asc", "desc"])
@pytest.mark.parametrize("key", KEYS)
def test_rows_match_duckdb_order_by(
    table_file: Path, tmp_path: Path, key: str, descending: bool
) -> None:
    out = tmp_path / "sorted.parquet"
    sort_parquet(table_file, out, key, descending=descending)
    got = pq.read_table(out).column("rid").to_pylist()
    assert got == duckdb_order(table_file, key, descending)


@pytest.mark.parametrize("devices", [2, 5])
def test_merged_devices_equal_one_device(table_file: Path, tmp_path: Path, devices: int) -> None:
    for key in ("low_str", "f64", "price"):
        out = tmp_path / f"{key}.parquet"
        report = sort_parquet(table_file, out, key, devices=devices)
        assert report.devices == devices and report.merged
        assert pq.read_table(out).column("rid").to_pylist() == duckdb_order(table_file, key, False)


def test_whole_rows_are_carried_unchanged(table_file: Path, tmp_path: Path) -> None:
    out = tmp_path / "sorted.parquet"
    sort_parquet(table_file, out, "low_str", devices=3)
    original = pl.read_parquet(table_file)
    result = pl.read_parquet(out)
    assert result.schema == original.schema
    # Every row, all columns, is the original row its rid names.
    back = original[result["rid"].to_numpy()]
    assert result.equals(back, null_equal=True)


def test_output_keeps_the_input_arrow_schema(table_file: Path, tmp_path: Path) -> None:
    """Polars reads strings as large_string and every column as nullable; with keep_schema
    the output is cast back to what the input declared, merged or in partitions. Without,
    it has Polars' types."""
    declared = pa.schema(
        [
            pa.field("k", pa.int32(), nullable=False),
            pa.field("s", pa.string(), nullable=False),
            pa.field("b", pa.binary()),
            pa.field("t", pa.timestamp("s")),
            pa.field("n", pa.float64()),
        ]
    )
    table = pa.table(
        {
            "k": [3, 1, 2, 1],
            "s": ["c", "a", "b", "a2"],
            "b": [b"x", None, b"z", b"w"],
            "t": [0, 10, None, 5],
            "n": [1.0, None, 2.0, 0.5],
        },
        schema=declared.with_metadata({b"pandas": b"{}"}),
    )
    src = tmp_path / "declared.parquet"
    pq.write_table(table, src)
    out = tmp_path / "o.parquet"
    sort_parquet(src, out, "k", devices=2)
    polars_types = pq.read_schema(out)
    assert polars_types.field("s").type == pa.large_string() and polars_types.field("k").nullable
    report = sort_parquet(src, out := tmp_path / "kept.parquet", "k", devices=2, keep_schema=True)
    assert report.schema == "input"
    # What the file declares (Parquet keeps timestamps in ms at the coarsest).
    want = pq.read_schema(src).remove_metadata()
    assert want.field("s").type == pa.string() and not want.field("k").nullable
    assert pq.read_schema(out).remove_metadata() == want
    assert pq.read_table(out).column("s").to_pylist() == ["a", "a2", "b", "c"]
    sort_parquet(src, tmp_path / "parts", "s", devices=2, merge=False, keep_schema=True)
    for part in sorted((tmp_path / "parts").rglob("*.parquet")):
        assert pq.read_schema(part).remove_metadata() == want
    # The fixture's every key type (decimals, dates, booleans, binary…) comes back too.
    sort_parquet(table_file, tmp_path / "all.parquet", "price", devices=3, keep_schema=True)
    want = pq.read_schema(table_file).remove_metadata()
    assert pq.read_schema(tmp_path / "all.parquet").remove_metadata() == want


def test_files_with_differing_schemas_cannot_keep_one(tmp_path: Path) -> None:
    """Shards that declare different nullability still concatenate (Polars reads both as
    nullable) and sort in Polars' types; no one schema is theirs, so --keep-schema is refused
    before the sort, naming the file that differs, and nothing is written."""
    strict = pa.schema([pa.field("k", pa.int64(), nullable=False), pa.field("s", pa.string())])
    for d, schema in enumerate((strict, strict.set(0, pa.field("k", pa.int64())))):
        shard = tmp_path / "set" / f"device-{d:02d}" / "shard-0000.parquet"
        shard.parent.mkdir(parents=True)
        pq.write_table(pa.table({"k": [2 - d, 5 + d], "s": ["x", "y"]}, schema=schema), shard)
    out = tmp_path / "o.parquet"
    with pytest.raises(SpecError, match=r"other than shard-0000\.parquet's") as caught:
        sort_parquet(tmp_path / "set", out, "k", keep_schema=True)
    assert caught.value.source == str(tmp_path / "set" / "device-01" / "shard-0000.parquet")
    assert caught.value.field == "--keep-schema"
    assert not out.exists()
    report = sort_parquet(tmp_path / "set", out, "k")
    assert report.schema == "polars"
    got = pq.read_table(out)
    assert got.column("k").to_pylist() == [1, 2, 5, 6]
    assert got.schema.field("s").type == pa.large_string()
    assert got.schema.field("k").nullable


def _shard_directory(table_file: Path, root: Path) -> Path:
    """The fixture's table split over three device-NN/ directories, one shard each."""
    whole = pq.read_table(table_file)
    for d, (start, stop) in enumerate(partition_bounds(ROWS, 3)):
        shard = root / f"device-{d:02d}" / "shard-0000.parquet"
        shard.parent.mkdir(parents=True)
        pq.write_table(whole.slice(start, stop - start), shard)
    return root


def test_a_directory_with_one_schema_keeps_it(table_file: Path, tmp_path: Path) -> None:
    _shard_directory(table_file, tmp_path / "set")
    report = sort_parquet(tmp_path / "set", tmp_path / "o.parquet", "low_str", keep_schema=True)
    assert report.schema == "input"
    want = pq.read_schema(table_file).remove_metadata()
    assert pq.read_schema(tmp_path / "o.parquet").remove_metadata() == want
    assert pq.read_table(tmp_path / "o.parquet").column("rid").to_pylist() == duckdb_order(
        table_file, "low_str", False
    )


def test_a_type_that_does_not_cast_back_is_refused(tmp_path: Path) -> None:
    """No type Polars reads fails to cast back (every Arrow type we tried came back), so the
    check is shown on a frame that does not match its file's declared types."""
    src = tmp_path / "in.parquet"
    pq.write_table(pa.table({"k": [1, 2], "s": pa.array([1, 2], pa.int8())}), src)
    frame = pl.DataFrame({"k": [1, 2], "s": [[1], [2]]})  # s: a list, not int8
    with pytest.raises(SpecError, match=r"column 's' is int8 in the input") as caught:
        input_schema(src, frame)
    assert caught.value.source == str(src) and caught.value.field == "--keep-schema"
    assert input_schema(src, pl.read_parquet(src)) == pq.read_schema(src).remove_metadata()


def test_unmerged_partitions_are_each_sorted(table_file: Path, tmp_path: Path) -> None:
    out = tmp_path / "parts"
    report = sort_parquet(table_file, out, "i8", devices=3, merge=False, descending=True)
    assert not report.merged
    for d, (start, stop) in enumerate(partition_bounds(ROWS, 3)):
        part = out / f"device-{d:02d}" / "part-0000.parquet"
        rids = pq.read_table(part).column("rid").to_pylist()
        query = (
            f"SELECT rid FROM read_parquet('{table_file}') WHERE rid >= {start} AND rid < {stop} "
            "ORDER BY i8 DESC, rid"
        )
        assert rids == [r[0] for r in duckdb.sql(query).fetchall()]


@pytest.mark.parametrize("key", ["i64", "low_str", "day", "flag", "f64"])
def test_nascent2_engine_gives_the_same_rows_and_counts(table_file: Path, key: str) -> None:
    table = pl.read_parquet(table_file)
    host, _ = sort_frame(table, key, devices=2)
    device, report = sort_frame(table, key, devices=2, engine="nascent2")
    assert device[0]["rid"].to_list() == host[0]["rid"].to_list()
    assert [c["device"] for c in report.counts] == [0, 1]
    flow = "A" if key in ("i64", "day", "flag") else "B"
    for c in report.counts:
        assert c["flow"] == flow
        assert c["sort"]["compare_swaps"] > 0 and c["sort"]["elements"] > 0
        if flow == "B":  # the decoder mapped every key and decoded every sorted NKey
            assert c["map"]["keys"] == c["sort"]["elements"] == c["decode"]["keys"]


def test_nascent2_rejects_what_a_16_bit_dictionary_cannot_hold() -> None:
    table = pl.DataFrame({"s": [f"v{i:06d}" for i in range(70_000)][::-1]})
    with pytest.raises(SpecError, match="70000 distinct values") as err:
        sort_frame(table, "s", engine="nascent2")
    assert err.value.field == "--engine"
    small = table.head(65_536)  # exactly 2^16 distinct values still fit
    frames, report = sort_frame(small, "s", engine="nascent2")
    assert report.encoding == "dictionary" and report.distinct == 65_536
    assert frames[0]["s"].to_list() == sorted(small["s"].to_list())


def test_already_sorted_input_skips_the_gather(table_file: Path, tmp_path: Path) -> None:
    report = sort_parquet(table_file, tmp_path / "o.parquet", "rid", devices=3)
    assert report.already_sorted
    assert pq.read_table(tmp_path / "o.parquet").column("rid").to_pylist() == list(range(ROWS))


@pytest.mark.parametrize("key", ["low_str", "flag", "blob"])
@pytest.mark.parametrize("descending", [False, True], ids=["asc", "desc"])
def test_few_key_values_are_shuffled_by_filters(
    table_file: Path, key: str, descending: bool
) -> None:
    """These keys span ≤ GROUP_LIMIT values, so the host shuffles by one filter per value;
    the rows must still be DuckDB's, with one device or merged from several."""
    table = pl.read_parquet(table_file)
    for devices in (1, 3):
        plan = plan_sort(table, key, descending=descending, devices=devices)
        assert isinstance(plan.outputs[0][2], KeyGroups)
        frames, _ = sort_frame(table, key, descending=descending, devices=devices)
        assert frames[0]["rid"].to_list() == duckdb_order(table_file, key, descending)
    engine_plan = plan_sort(table, key, descending=descending, engine="nascent2")
    assert not isinstance(engine_plan.outputs[0][2], KeyGroups)  # the kernel's Eq. 4 gather


def test_key_groups_rank_the_values_and_put_nulls_last() -> None:
    column = pl.Series("k", [3, None, -1, 3, 0, None, -1], dtype=pl.Int16)
    groups = key_groups(sort_keys(column))
    assert groups is not None
    assert groups.count == 6  # -1 … 3 span five keys; the nulls are a sixth group
    assert groups.ids.tolist() == [4, 5, 0, 4, 1, 5, 0]
    desc = key_groups(sort_keys(column, descending=True))
    assert desc is not None and desc.ids.tolist() == [0, 5, 4, 0, 3, 5, 4]
    wide = pl.Series("k", [0, GROUP_LIMIT])  # spans GROUP_LIMIT + 1 keys
    assert key_groups(sort_keys(wide)) is None
    assert key_groups(sort_keys(pl.Series("k", [None, None], dtype=pl.Int8))) is None


@pytest.mark.parametrize(
    ("values", "descending", "expected"),
    [
        ([1, 2, 2, 9], False, True),
        ([1, 2, 2, 9], True, False),
        ([9, 2, 2, 1], True, True),
        ([1, 2, None, None], False, True),
        ([1, None, 2, None], False, False),  # a null before a valid row is out of place
        ([None, None], False, True),
        ([], False, True),
    ],
)
def test_in_key_order_is_the_stable_sorts_identity(
    values: list[int | None], descending: bool, expected: bool
) -> None:
    keys = sort_keys(pl.Series("k", values, dtype=pl.Int64), descending=descending)
    assert in_key_order(keys) is expected
    order = np.lexsort((np.arange(len(keys)), keys.keys, ~_valid(keys)))
    assert expected == bool(np.array_equal(order, np.arange(len(keys))))


def _valid(keys: SortKeys) -> np.ndarray:
    return np.ones(len(keys), bool) if keys.valid is None else keys.valid


def test_grouped_keys_already_in_order_skip_the_shuffle(tmp_path: Path) -> None:
    path = tmp_path / "t.parquet"
    pl.DataFrame({"k": ["a", "a", "b", None], "v": [1, 2, 3, 4]}).write_parquet(path)
    report = sort_parquet(path, tmp_path / "o.parquet", "k")
    assert report.already_sorted
    assert pl.read_parquet(tmp_path / "o.parquet")["v"].to_list() == [1, 2, 3, 4]


def test_empty_table(tmp_path: Path) -> None:
    path = tmp_path / "empty.parquet"
    pq.write_table(_table(0, seed=1), path)
    sort_parquet(path, tmp_path / "o.parquet", "f64", devices=3)
    assert pq.read_table(tmp_path / "o.parquet").num_rows == 0


def test_a_directory_of_shards_is_one_table(table_file: Path, tmp_path: Path) -> None:
    _shard_directory(table_file, tmp_path / "set")
    sort_parquet(tmp_path / "set", tmp_path / "o.parquet", "price")
    got = pq.read_table(tmp_path / "o.parquet").column("rid").to_pylist()
    assert got == duckdb_order(table_file, "price", False)


def test_a_shard_whose_suffix_is_in_capitals_is_read(tmp_path: Path) -> None:
    """`a.PARQUET` was passed over in a directory: its rows were silently missing."""
    (tmp_path / "set").mkdir()
    pq.write_table(pa.table({"k": [3, 1, 2]}), tmp_path / "set" / "a.PARQUET")
    pq.write_table(pa.table({"k": [5, 4]}), tmp_path / "set" / "b.parquet")
    sort_parquet(tmp_path / "set", tmp_path / "o.parquet", "k")
    assert pq.read_table(tmp_path / "o.parquet").column("k").to_pylist() == [1, 2, 3, 4, 5]


def test_bad_inputs_name_the_file_and_field(table_file: Path, tmp_path: Path) -> None:
    with pytest.raises(SpecError, match="--by") as err:
        sort_parquet(table_file, tmp_path / "o.parquet", "nope")
    assert str(table_file) in str(err.value)
    corrupt = tmp_path / "corrupt.parquet"
    corrupt.write_bytes(b"PAR1 not really parquet")
    with pytest.raises(SpecError, match="not a readable Parquet file") as err:
        sort_parquet(corrupt, tmp_path / "o.parquet", "x")
    assert str(corrupt) in str(err.value)
    with pytest.raises(SpecError, match="no such file"):
        sort_parquet(tmp_path / "missing.parquet", tmp_path / "o.parquet", "x")
    nested = tmp_path / "nested.parquet"
    pq.write_table(pa.table({"l": pa.array([[1], [2, 3]])}), nested)
    with pytest.raises(SpecError, match="cannot sort by a column of type"):
        sort_parquet(nested, tmp_path / "o.parquet", "l")
    assert not (tmp_path / "o.parquet").exists()


def _damage_pages(path: Path, column: str) -> None:
    """Overwrite the header of the leaf column `column`'s first page in each row group, as
    a bad disk block would."""
    meta = pq.ParquetFile(path).metadata
    index = [meta.schema.column(i).path for i in range(meta.num_columns)].index(column)
    data = bytearray(path.read_bytes())
    for group in range(meta.num_row_groups):
        chunk = meta.row_group(group).column(index)
        start = chunk.dictionary_page_offset or chunk.data_page_offset
        data[start : start + 8] = b"\xff" * 8
    path.write_bytes(bytes(data))


@pytest.mark.parametrize("keep_schema", [False, True])
def test_a_column_name_that_is_not_utf8_is_an_unreadable_file(
    tmp_path: Path, keep_schema: bool
) -> None:
    """pyarrow's footer read raised UnicodeDecodeError: a traceback, exit status 1."""
    src, out = tmp_path / "in.parquet", tmp_path / "out.parquet"
    pq.write_table(pa.table({"k": [3, 1, 2], "qqqqqq": ["c", "a", "b"]}), src)
    src.write_bytes(src.read_bytes().replace(b"qqqqqq", b"q\xffqqqq"))
    with pytest.raises(SpecError, match="not a readable Parquet file") as caught:
        sort_parquet(src, out, "k", keep_schema=keep_schema)
    assert caught.value.source == str(src)
    assert not out.exists()


@pytest.mark.parametrize(
    "column",
    [pa.array([5, 6], pa.duration("s")), pa.array([[5], [6]], pa.list_(pa.duration("s")))],
    ids=["seconds", "nested-seconds"],
)
def test_a_damaged_page_read_before_polars_reads_is_an_unreadable_file(
    tmp_path: Path, column: pa.Array
) -> None:
    """The check of duration[s] values reads their pages with pyarrow before Polars reads
    the file: a damaged page raised OSError ("Couldn't deserialize thrift"), a traceback."""
    src, out = tmp_path / "in.parquet", tmp_path / "out.parquet"
    pq.write_table(pa.table({"k": [2, 1], "d": column}), src, compression="none")
    _damage_pages(src, "d" if pa.types.is_duration(column.type) else "d.list.element")
    with pytest.raises(SpecError, match="not a readable Parquet file") as caught:
        sort_parquet(src, out, "k")
    assert caught.value.source == str(src)
    assert not out.exists()


def test_out_never_destroys_what_a_sort_did_not_write(table_file: Path, tmp_path: Path) -> None:
    precious = tmp_path / "home"
    (precious / "docs").mkdir(parents=True)
    (precious / "docs" / "thesis.tex").write_text("years of work")
    for merge in (True, False):
        with pytest.raises(SpecError, match="--out") as err:
            sort_parquet(table_file, precious, "i8", devices=2, merge=merge)
        assert str(precious) in str(err.value)
    assert (precious / "docs" / "thesis.tex").read_text() == "years of work"
    # a file where partitions would go is refused too
    single = tmp_path / "single.parquet"
    single.write_bytes(b"x")
    with pytest.raises(SpecError, match="not a directory of partitions"):
        sort_parquet(table_file, single, "i8", devices=2, merge=False)
    assert single.read_bytes() == b"x"


def test_partitions_replace_a_previous_run(table_file: Path, tmp_path: Path) -> None:
    out = tmp_path / "parts"
    sort_parquet(table_file, out, "i8", devices=3, merge=False)
    sort_parquet(table_file, out, "i8", devices=2, merge=False)
    assert sorted(p.parent.name for p in out.rglob("*.parquet")) == ["device-00", "device-01"]


@pytest.mark.parametrize("keep_schema", [False, True], ids=["polars", "pyarrow"])
def test_a_failed_write_leaves_the_old_output(
    table_file: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, keep_schema: bool
) -> None:
    out = tmp_path / "o.parquet"
    out.write_bytes(b"previous result")

    def broken(_: object, where: Path, **kwargs: object) -> None:
        Path(where).write_bytes(b"half")
        raise OSError(28, "No space left on device")

    if keep_schema:
        monkeypatch.setattr(pq, "write_table", broken)
    else:
        monkeypatch.setattr(pl.DataFrame, "write_parquet", broken)
    with pytest.raises(SpecError, match="No space left"):
        sort_parquet(table_file, out, "i8", keep_schema=keep_schema)
    assert out.read_bytes() == b"previous result"
    assert [p.name for p in tmp_path.iterdir()] == ["o.parquet"]


@settings(max_examples=60, deadline=None)
@given(
    values=st.lists(st.one_of(st.none(), st.floats(allow_nan=True, width=64)), max_size=60),
    descending=st.booleans(),
)
def test_float_keys_order_like_duckdb(values: list[float | None], descending: bool) -> None:
    column = pl.Series("x", values, dtype=pl.Float64)
    frames, _ = sort_frame(column.to_frame().with_row_index("rid"), "x", descending=descending)
    direction = "DESC" if descending else "ASC"
    arrow = pa.table(
        {"rid": pa.array(range(len(values)), pa.int64()), "x": pa.array(values, pa.float64())}
    )
    con = duckdb.connect()
    con.register("t", arrow)
    expected = con.sql(f"SELECT rid FROM t ORDER BY x {direction}, rid").fetchall()
    assert frames[0]["rid"].to_list() == [r[0] for r in expected]


@settings(max_examples=60, deadline=None)
@given(values=st.lists(st.integers(-(2**63), 2**63 - 1), max_size=80), descending=st.booleans())
def test_integer_keys_are_order_preserving(values: list[int], descending: bool) -> None:
    keys = sort_keys(pl.Series("x", values, dtype=pl.Int64), descending=descending).keys
    order = np.argsort(keys, kind="stable")
    reference = sorted(range(len(values)), key=lambda i: -values[i] if descending else values[i])
    assert order.tolist() == reference


def test_partition_bounds_tile_the_rows() -> None:
    assert partition_bounds(10, 3) == [(0, 3), (3, 6), (6, 10)]
    assert partition_bounds(0, 2) == [(0, 0), (0, 0)]
    with pytest.raises(SpecError, match="at least one device"):
        partition_bounds(5, 0)


@pytest.mark.parametrize(
    ("second", "message"),
    [
        ({"a": [1], "b": [2]}, "has a column 'b', where p0.parquet has ['a']"),
        ({"a": ["x"]}, "column 'a' is String, but Int64 in p0.parquet"),
    ],
)
def test_a_directory_whose_files_differ_names_the_file_and_column(
    tmp_path: Path, second: dict[str, list[object]], message: str
) -> None:
    folder = tmp_path / "table"
    folder.mkdir()
    pq.write_table(pa.table({"a": [1, 2]}), folder / "p0.parquet")
    pq.write_table(pa.table(second), folder / "p1.parquet")
    with pytest.raises(SpecError, match=re.escape(message)) as caught:
        read_parquet(folder)
    assert str(folder / "p1.parquet") in str(caught.value)


@pytest.mark.parametrize("descending", [False, True], ids=["asc", "desc"])
@pytest.mark.parametrize("dictionary_first", [True, False], ids=["dict-first", "plain-first"])
def test_shards_with_dictionary_and_plain_strings_sort_as_strings(
    tmp_path: Path, descending: bool, dictionary_first: bool
) -> None:
    """One shard's dictionary<string> (pyarrow's; Polars reads it as Categorical) beside
    another's plain strings is one string column, as DuckDB reads it: it was refused as
    shards whose types differ."""
    folder = tmp_path / "table"
    folder.mkdir()
    words = [["b", "a", None, "zz"], ["a", "é", "", "b"]]
    shards = [
        pa.table(
            {
                "k": pa.array(w).dictionary_encode() if (j == 0) == dictionary_first else w,
                "s": pa.array(w[::-1]).dictionary_encode() if j == 1 else w[::-1],
                "rid": [4 * j + i for i in range(4)],
            }
        )
        for j, w in enumerate(words)
    ]
    for j, shard in enumerate(shards):
        pq.write_table(shard, folder / f"p{j}.parquet")
    out = tmp_path / "sorted.parquet"
    sort_parquet(folder, out, "k", descending=descending)
    query = (
        f"SELECT rid, k, s FROM read_parquet('{folder}/*.parquet') "
        f"ORDER BY k {'DESC' if descending else 'ASC'}, rid"
    )
    got = pq.read_table(out).select(["rid", "k", "s"]).to_pylist()
    assert [tuple(r.values()) for r in got] == duckdb.sql(query).fetchall()


def _wide_keys(rows: int) -> pa.Table:
    """Three key types with `rows` distinct values each (every row's own), in shuffled order,
    and 10 % nulls, which no dictionary holds."""
    rng = np.random.default_rng(11)
    values = rng.permutation(rows)
    valid = rng.random(rows) >= 0.1
    return pa.table(
        {
            "rid": pa.array(np.arange(rows)),
            "f": pa.array(values / 7.0, mask=~valid),
            "s": pa.array([f"k{v:07d}" for v in values], mask=~valid),
            "b": pa.array([int(v).to_bytes(4, "big") for v in values], pa.binary(), mask=~valid),
        }
    )


@pytest.mark.parametrize("key", ["f", "s", "b"])
def test_nascent2_counts_each_devices_dictionary_alike_for_every_key_type(
    tmp_path: Path, key: str
) -> None:
    """NASCENT2 dictionary encodes each device's table on its own (spec §3.2, §9.4): 2¹⁶
    distinct values per device partition, whatever the key's type. 150,000 rows with about
    135,000 distinct keys are too many for one device and fit on three (~45,000 each)."""
    path = tmp_path / "wide.parquet"
    pq.write_table(_wide_keys(150_000), path)
    table = pl.read_parquet(path)
    with pytest.raises(SpecError) as caught:
        sort_frame(table, key, engine="nascent2", source=str(path))
    assert (caught.value.source, caught.value.field) == (str(path), "--engine")
    assert re.match(
        rf"column '{key}' has \d+ distinct values: more than the 65536", caught.value.detail
    )
    assert "use --engine host" in caught.value.detail
    for merge in (True, False):
        frames, report = sort_frame(table, key, devices=3, merge=merge, engine="nascent2")
        assert [c["flow"] for c in report.counts] == ["B"] * 3
        if merge:
            assert frames[0]["rid"].to_list() == duckdb_order(path, key, False)
        else:
            bounds = partition_bounds(table.height, 3)
            got = [f["rid"].to_list() for f in frames]
            assert got == [
                [r for r in duckdb_order(path, key, False) if start <= r < stop]
                for start, stop in bounds
            ]


def test_nascent2_names_the_device_whose_dictionary_overflows() -> None:
    """Two devices: the first partition's keys are all distinct, the second's all equal."""
    n = DICTIONARY_LIMIT + 1
    table = pl.DataFrame({"f": np.concatenate([np.arange(n) / 3.0, np.zeros(n)])})
    with pytest.raises(SpecError, match=rf"column 'f' has, on device 0 of 2, {n} distinct"):
        sort_frame(table, "f", devices=2, engine="nascent2", source="t.parquet")
    flipped = table.reverse()
    with pytest.raises(SpecError, match=rf"column 'f' has, on device 1 of 2, {n} distinct"):
        sort_frame(flipped, "f", devices=2, engine="nascent2", source="t.parquet")


def test_one_device_unmerged_is_a_partition(table_file: Path, tmp_path: Path) -> None:
    """--no-merge writes OUT/device-NN/part-0000.parquet for one device as for several."""
    for key in ("i64", "rid", "flag"):  # a gather, already in order, few key values
        out = tmp_path / key
        report = sort_parquet(table_file, out, key, devices=1, merge=False)
        assert not report.merged and report.seconds["merge"] == 0.0
        assert [p.relative_to(out).as_posix() for p in sorted(out.rglob("*"))] == [
            "device-00",
            "device-00/part-0000.parquet",
        ]
        part = pq.read_table(out / "device-00" / "part-0000.parquet")
        assert part.column("rid").to_pylist() == duckdb_order(table_file, key, False)


def test_one_device_runs_no_merge_and_reports_none(table_file: Path, tmp_path: Path) -> None:
    for engine in ENGINES:  # i64 is gathered: the single partition's order is the output's
        report = sort_parquet(table_file, tmp_path / f"{engine}.parquet", "i64", engine=engine)
        assert report.merged and not report.already_sorted
        assert report.seconds["merge"] == 0.0


def test_a_table_without_columns_says_so(tmp_path: Path) -> None:
    path = tmp_path / "none.parquet"
    pq.write_table(pa.table({}), path)
    with pytest.raises(SpecError, match=r"no column 'a'; the table has no columns$"):
        sort_parquet(path, tmp_path / "o.parquet", "a")


def test_fifos_are_refused_before_any_read(tmp_path: Path) -> None:
    """Polars' read of a FIFO blocks in native code, where no signal reaches it."""
    fifo = tmp_path / "in.parquet"
    os.mkfifo(fifo)
    with pytest.raises(SpecError, match="not a regular file") as caught:
        parquet_inputs(fifo)
    assert caught.value.source == str(fifo)
    folder = tmp_path / "table"
    folder.mkdir()
    pq.write_table(pa.table({"a": [1]}), folder / "p0.parquet")
    os.mkfifo(folder / "p1.parquet")
    with pytest.raises(SpecError, match="not a regular file") as caught:
        parquet_inputs(folder)
    assert caught.value.source == str(folder / "p1.parquet")


def test_a_directory_named_like_a_parquet_file_is_read_once(tmp_path: Path) -> None:
    """Spark names a table's directory x.parquet: its files are the table, once."""
    folder = tmp_path / "table"
    (folder / "x.parquet").mkdir(parents=True)
    pq.write_table(pa.table({"a": [2, 1]}), folder / "x.parquet" / "part-0.parquet")
    assert parquet_inputs(folder) == [folder / "x.parquet" / "part-0.parquet"]
    assert read_parquet(folder)["a"].to_list() == [2, 1]


@pytest.mark.parametrize("where", ["input", "shard", "output"])
def test_a_path_that_is_not_utf8_is_refused_by_name(tmp_path: Path, where: str) -> None:
    """Polars takes only UTF-8 paths: b"\\xff.parquet" ended the sort in a TypeError."""
    odd = tmp_path / "set" / os.fsdecode(b"\xff.parquet")
    odd.parent.mkdir()
    pq.write_table(pa.table({"k": [2, 1]}), tmp_path / "in.parquet")
    odd.write_bytes((tmp_path / "in.parquet").read_bytes())  # pyarrow cannot write it either
    src, out = {
        "input": (odd, tmp_path / "out.parquet"),
        "shard": (odd.parent, tmp_path / "out.parquet"),
        "output": (tmp_path / "in.parquet", tmp_path / os.fsdecode(b"\xfe.parquet")),
    }[where]
    with pytest.raises(SpecError, match="not valid UTF-8") as caught:
        sort_parquet(src, out, "k")
    assert caught.value.source == str(out if where == "output" else odd)
    assert caught.value.field == ("--out" if where == "output" else None)
    assert not out.exists() and not [p for p in tmp_path.iterdir() if p.name.startswith(".")]


def test_a_relative_path_in_a_directory_that_is_not_utf8_blames_the_directory(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A relative path is opened from the current directory: where that directory's path
    is not UTF-8, the error said the file's own (UTF-8) name was and to rename it."""
    here = tmp_path / os.fsdecode(b"d\xff")
    here.mkdir()
    pq.write_table(pa.table({"k": [2, 1]}), tmp_path / "in.parquet")
    (here / "in.parquet").write_bytes((tmp_path / "in.parquet").read_bytes())
    monkeypatch.chdir(here)
    with pytest.raises(SpecError, match=r"current directory .* is not valid UTF-8") as caught:
        sort_parquet(Path("in.parquet"), Path("out.parquet"), "k")
    assert caught.value.source in ("in.parquet", "out.parquet")
    assert "rename" not in str(caught.value)
    assert not (here / "out.parquet").exists()
    # An absolute path names the part that is not UTF-8.
    with pytest.raises(SpecError, match=r"not valid UTF-8 \(at 'd\\udcff'\)"):
        sort_parquet(here / "in.parquet", tmp_path / "out.parquet", "k")


def test_a_damaged_page_that_panics_polars_is_an_unreadable_file(tmp_path: Path) -> None:
    """A page header whose encoding is not one Parquet has made Polars panic, which was
    reported as "Polars cannot load this file", the words for a valid file of a type
    Polars lacks; pyarrow, asked after the panic, says what is wrong."""
    src, out = tmp_path / "in.parquet", tmp_path / "out.parquet"
    keys = pa.array([None if i % 3 == 0 else i % 5 for i in range(200)], pa.int16())
    pq.write_table(pa.table({"k": keys}), src, compression="none")
    data = bytearray(src.read_bytes())
    data[pq.ParquetFile(src).metadata.row_group(0).column(0).data_page_offset + 13] = 0x7F
    src.write_bytes(bytes(data))
    with pytest.raises(SpecError, match="not a readable Parquet file") as caught:
        sort_parquet(src, out, "k")
    assert caught.value.source == str(src) and not out.exists()


def test_a_shard_directory_that_is_a_symbolic_link_is_read(tmp_path: Path) -> None:
    """A data set whose device-01/ links to another disk lost that shard's rows without a
    word: `Path.rglob` does not follow links to directories (it follows links to files)."""
    folder, elsewhere = tmp_path / "set", tmp_path / "disk1" / "shard"
    (folder / "device-00").mkdir(parents=True)
    elsewhere.mkdir(parents=True)
    pq.write_table(pa.table({"k": [3, 1]}), folder / "device-00" / "part-0000.parquet")
    pq.write_table(pa.table({"k": [2, 0]}), elsewhere / "part-0000.parquet")
    (folder / "device-01").symlink_to(elsewhere, target_is_directory=True)
    assert parquet_inputs(folder) == [
        folder / "device-00" / "part-0000.parquet",
        folder / "device-01" / "part-0000.parquet",
    ]
    sort_parquet(folder, tmp_path / "o.parquet", "k")
    assert pq.read_table(tmp_path / "o.parquet").column("k").to_pylist() == [0, 1, 2, 3]


def test_a_directory_is_read_with_numbers_in_names_compared_as_numbers(tmp_path: Path) -> None:
    """DuckDB's data_10.parquet came before data_2.parquet, and a data set's device-100/
    before device-11/: equal keys kept that order, not the table's."""
    folder = tmp_path / "set"
    names = [f"device-{d}/data_{i}.parquet" for d in (9, 10, 100) for i in (0, 2, 10)]
    for row, name in enumerate(names):
        (folder / name).parent.mkdir(parents=True, exist_ok=True)
        pq.write_table(pa.table({"k": [0], "row": [row]}), folder / name)
    assert parquet_inputs(folder) == [folder / name for name in names]
    sort_parquet(folder, tmp_path / "o.parquet", "k")
    assert pq.read_table(tmp_path / "o.parquet")["row"].to_pylist() == list(range(len(names)))


def test_a_directory_reached_twice_through_links_is_read_once(tmp_path: Path) -> None:
    """A link to an ancestor does not loop, and a second link to one shard reads it once."""
    folder = tmp_path / "set"
    (folder / "device-00").mkdir(parents=True)
    pq.write_table(pa.table({"k": [3, 1]}), folder / "device-00" / "part-0000.parquet")
    (folder / "device-00" / "up").symlink_to("..", target_is_directory=True)
    (folder / "device-01").symlink_to("device-00", target_is_directory=True)
    assert parquet_inputs(folder) == [folder / "device-00" / "part-0000.parquet"]
    assert read_parquet(folder)["k"].to_list() == [3, 1]


MARS = pa.timestamp("s", "Mars/Base")
"""A time zone no database has."""


@pytest.mark.parametrize(
    ("columns", "message"),
    [
        (
            {"d": pa.array([decimal.Decimal(10**39), None], pa.decimal256(40, 0)), "r": [1, 2]},
            "d: unsupported type decimal256(40, 0): decimals of up to 38 digits can be read",
        ),
        (
            pa.Table.from_arrays([pa.array([1, 2]), pa.array(["x", "y"])], names=["a", "a"]),
            "a: two columns are named 'a'",
        ),
        # Polars panicked on these two (a Rust backtrace, then a traceback and exit 1).
        (
            {"k": [2, 1], "lv": pa.array([[1], [2]], pa.list_view(pa.int32()))},
            "lv: unsupported type list_view<element: int32>: Polars cannot read list views",
        ),
        (
            {"k": [2, 1], "t": pa.array([0, 1], pa.timestamp("us", tz="+05:30"))},
            "t: time zone '+05:30' is an offset of part of an hour",
        ),
        (
            {"k": [2, 1], "l": pa.array([[0], [1]], pa.list_(pa.timestamp("us", tz="+05:30")))},
            "l: time zone '+05:30' is an offset of part of an hour",
        ),
        # These panicked Polars too (Rust's panic message, then "Polars cannot load this
        # file" naming no column).
        (
            {"k": [2, 1], "t": pa.array([0, 1], pa.timestamp("us", tz="+15:00"))},
            "t: time zone '+15:00' is not one Polars can read",
        ),
        (
            {"k": [2, 1], "t": pa.array([0, 1], pa.timestamp("ms", tz="Z"))},
            "t: time zone 'Z' is not one Polars can read",
        ),
        (
            {"k": [2, 1], "s": pa.array([{"t": 0}, None], pa.struct([("t", MARS)]))},
            "s: time zone 'Mars/Base' is not one Polars can read",
        ),
    ],
    ids=[
        "decimal256",
        "duplicate-names",
        "list-view",
        "half-hour-offset",
        "nested-offset",
        "offset-past-14-hours",
        "zulu",
        "nested-unknown-name",
    ],
)
def test_valid_parquet_polars_cannot_load_names_the_column(
    tmp_path: Path, columns: dict[str, object] | pa.Table, message: str
) -> None:
    path = tmp_path / "in.parquet"
    pq.write_table(columns if isinstance(columns, pa.Table) else pa.table(columns), path)
    with pytest.raises(SpecError) as caught:
        read_parquet(path)
    assert str(caught.value).startswith(f"{path}: {message}")
    assert "not a readable Parquet file" not in str(caught.value)


def test_a_full_disk_under_polars_writer_is_one_error_not_a_traceback(
    table_file: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Polars reports ENOSPC as a ComputeError ending in "(os error 28)". The error names
    the file and the option it came from, as every other --out error does."""

    def full(self: pl.DataFrame, *_: object, **__: object) -> None:
        raise pl.exceptions.ComputeError("failed to write: No space left (os error 28)")

    monkeypatch.setattr(pl.DataFrame, "write_parquet", full)
    out = tmp_path / "sorted.parquet"
    with pytest.raises(SpecError, match="cannot write: No space left on device") as caught:
        sort_parquet(table_file, out, "i64")
    assert (caught.value.source, caught.value.field) == (str(out), "--out")
    assert str(caught.value).startswith(f"{out}: --out: cannot write: ")
    assert list(tmp_path.iterdir()) == []  # no temporary file left


def test_a_whole_hour_offset_is_read(tmp_path: Path) -> None:
    """Polars reads "-08:00" (as Etc/GMT+8): only offsets of part of an hour are refused."""
    path = tmp_path / "in.parquet"
    pq.write_table(pa.table({"t": pa.array([1, 0], pa.timestamp("us", tz="-08:00"))}), path)
    assert read_parquet(path)["t"].dt.epoch("us").to_list() == [1, 0]


def test_shards_of_other_decimal_types_are_refused(tmp_path: Path) -> None:
    """Polars' concatenation cast the second shard to decimal(5, 2): 123456789012.345 became
    null and 2.999 became 3.00, with exit status 0."""
    shards = tmp_path / "shards"
    shards.mkdir()
    dec = decimal.Decimal
    small = pa.array([dec("1.25"), dec("0.50")], pa.decimal128(5, 2))
    wide = pa.array([dec("123456789012.345"), dec("2.999")], pa.decimal128(20, 3))
    pq.write_table(pa.table({"k": small}), shards / "part-0.parquet")
    pq.write_table(pa.table({"k": wide}), shards / "part-1.parquet")
    with pytest.raises(SpecError, match=r"column 'k' is Decimal\(precision=20, scale=3\)"):
        read_parquet(shards)


def test_a_file_named_like_a_glob_is_read_as_named(tmp_path: Path) -> None:
    """x[1].parquet was read as the pattern, so x1.parquet's rows were sorted instead."""
    pq.write_table(pa.table({"k": [3, 1, 2]}), tmp_path / "x[1].parquet")
    pq.write_table(pa.table({"k": [30, 10, 20, 40]}), tmp_path / "x1.parquet")
    assert read_parquet(tmp_path / "x[1].parquet")["k"].to_list() == [3, 1, 2]
    assert sorted(read_parquet(tmp_path)["k"].to_list()) == [1, 2, 3, 10, 20, 30, 40]


def test_a_directory_named_tilde_is_not_home(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """`./~/t.parquet` was read from $HOME, and a sort's temporary written there."""
    monkeypatch.chdir(tmp_path)
    monkeypatch.setenv("HOME", str(tmp_path / "home"))
    (tmp_path / "home").mkdir()
    (tmp_path / "~").mkdir()
    pq.write_table(pa.table({"k": [2, 1]}), tmp_path / "~" / "t.parquet")
    pq.write_table(pa.table({"k": [9, 8, 7]}), tmp_path / "home" / "t.parquet")
    sort_parquet(Path("./~/t.parquet"), Path("./~/out.parquet"), "k")
    assert pq.read_table(tmp_path / "~" / "out.parquet")["k"].to_pylist() == [1, 2]
    assert sorted(p.name for p in (tmp_path / "home").iterdir()) == ["t.parquet"]


def test_keep_schema_keeps_an_extension_type(tmp_path: Path) -> None:
    """Polars reads arrow.json back on large_string; the cast back failed after the sort."""
    src, out = tmp_path / "in.parquet", tmp_path / "out.parquet"
    column = pa.array(['{"a":1}', "[]", None], pa.json_())
    pq.write_table(pa.table({"k": [3, 1, 2], "j": column}), src)
    sort_parquet(src, out, "k", keep_schema=True)
    written = pq.read_table(out)
    assert written.schema.equals(pq.read_schema(src).remove_metadata())
    assert written["j"].to_pylist() == ["[]", None, '{"a":1}']


JSON_VALUES = pa.ExtensionArray.from_storage(pa.json_(), pa.array(['{"a":1}', "[]", "2"]))


NESTED_JSON = pytest.mark.parametrize(
    "column",
    [
        pa.ListArray.from_arrays(pa.array([0, 1, 1, 3], pa.int32()), JSON_VALUES),
        pa.StructArray.from_arrays([JSON_VALUES], names=["j"]),
        pa.FixedSizeListArray.from_arrays(JSON_VALUES, 1),
        pa.MapArray.from_arrays(pa.array([0, 1, 2, 3], pa.int32()), pa.array("abc"), JSON_VALUES),
    ],
    ids=["list", "struct", "array", "map"],
)


@NESTED_JSON
def test_an_extension_type_nested_in_a_column_is_written(tmp_path: Path, column: pa.Array) -> None:
    """Polars reads a list (struct, array, map) of arrow.json but panicked writing it: a
    traceback after the whole sort. pyarrow writes that output, in Polars' types."""
    src, out = tmp_path / "in.parquet", tmp_path / "out.parquet"
    pq.write_table(pa.table({"k": [3, 1, 2], "c": column}), src)
    assert sort_parquet(src, out, "k").schema == "polars"
    assert pq.read_table(out)["c"].to_pylist() == column.take([1, 2, 0]).to_pylist()


@NESTED_JSON
def test_keep_schema_refuses_an_extension_type_nested_in_a_column(
    tmp_path: Path, column: pa.Array
) -> None:
    """docs/sort.md: --keep-schema refuses such a column before the sort. The check that
    the columns cast back panicked Polars on it instead: a PanicException traceback."""
    src, out = tmp_path / "in.parquet", tmp_path / "out.parquet"
    pq.write_table(pa.table({"k": [3, 1, 2], "c": column}), src)
    with pytest.raises(SpecError, match=r"'c' is .* does not cast back") as caught:
        sort_parquet(src, out, "k", keep_schema=True)
    assert caught.value.source == str(src) and caught.value.field == "--keep-schema"
    assert not out.exists()


def test_a_shard_whose_column_is_all_null_joins_the_others(tmp_path: Path) -> None:
    """pandas writes an all-None column as type null; Polars fills it without loss, and the
    check for decimals of other types must not refuse it."""
    shards = tmp_path / "shards"
    shards.mkdir()
    pq.write_table(pa.table({"k": [1, 2], "c": ["a", "b"]}), shards / "part-0.parquet")
    nulls = pa.array([None, None], pa.null())
    pq.write_table(pa.table({"k": [3, 4], "c": nulls}), shards / "part-1.parquet")
    assert read_parquet(shards).to_dict(as_series=False) == {
        "k": [1, 2, 3, 4],
        "c": ["a", "b", None, None],
    }


@pytest.mark.parametrize("null_first", [True, False], ids=["null first", "null last"])
def test_an_all_null_shard_column_joins_in_either_order(tmp_path: Path, null_first: bool) -> None:
    """Polars' concatenation took a Null column after a typed one but not before it."""
    shards = tmp_path / "shards"
    shards.mkdir()
    typed = pa.table({"k": [1], "c": pa.array([decimal.Decimal("1.5")], pa.decimal128(5, 1))})
    nulls = pa.table({"k": [2], "c": pa.array([None], pa.null())})
    first, second = (nulls, typed) if null_first else (typed, nulls)
    pq.write_table(first, shards / "part-0.parquet")
    pq.write_table(second, shards / "part-1.parquet")
    assert sorted(read_parquet(shards)["k"].to_list()) == [1, 2]


@pytest.mark.parametrize(
    "kinds",
    [
        (pa.list_(pa.decimal128(10, 2)), pa.list_(pa.decimal128(12, 3))),
        (pa.struct([("a", pa.decimal128(10, 2))]), pa.struct([("a", pa.decimal128(18, 3))])),
    ],
    ids=["list", "struct"],
)
def test_shards_of_other_nested_decimal_types_are_refused(
    tmp_path: Path, kinds: tuple[pa.DataType, pa.DataType]
) -> None:
    """Polars cast a nested decimal to the first shard's type too: 2.999 became 3.00."""
    shards = tmp_path / "shards"
    shards.mkdir()
    for i, kind in enumerate(kinds):
        number = decimal.Decimal("2.99" if i == 0 else "2.999")
        value = [number] if pa.types.is_list(kind) else {"a": number}
        path = shards / f"part-{i}.parquet"
        pq.write_table(pa.table({"k": [i], "d": pa.array([value], kind)}), path)
    with pytest.raises(SpecError, match=r"column 'd' is .*Decimal\(precision=1[28], scale=3\)"):
        read_parquet(shards)


def test_a_failed_concatenation_names_the_column_at_fault(tmp_path: Path) -> None:
    """It named an all-null column, which Polars takes, instead of the one it refused."""
    shards = tmp_path / "shards"
    shards.mkdir()
    pq.write_table(pa.table({"k": [1], "c": ["a"], "d": [1]}), shards / "part-0.parquet")
    nulls = pa.array([None], pa.null())
    pq.write_table(pa.table({"k": [2], "c": nulls, "d": [1.5]}), shards / "part-1.parquet")
    with pytest.raises(SpecError, match=r"column 'd' is Float64, but Int64 in part-0\.parquet"):
        read_parquet(shards)


def _shards(tmp_path: Path, *tables: dict[str, object]) -> Path:
    shards = tmp_path / "shards"
    shards.mkdir()
    for i, columns in enumerate(tables):
        pq.write_table(pa.table(columns), shards / f"part-{i}.parquet")
    return shards


@pytest.mark.parametrize("null_first", [True, False], ids=["null first", "null last"])
def test_nested_nulls_fit_a_nested_type_in_either_order(tmp_path: Path, null_first: bool) -> None:
    """A shard of empty lists is list<null>: it was refused beside list<decimal>, and beside
    list<int64> only when it came first."""
    dec = pa.array([[decimal.Decimal("1.5")]], pa.list_(pa.decimal128(5, 1)))
    typed = {"k": [1], "c": dec, "s": pa.array([{"a": 3}], pa.struct([("a", pa.int64())]))}
    empty = {
        "k": [2],
        "c": pa.array([[]]),
        "s": pa.array([{"a": None}], pa.struct([("a", pa.null())])),
    }
    first, second = (empty, typed) if null_first else (typed, empty)
    table = read_parquet(_shards(tmp_path, first, second))
    assert sorted(table["k"].to_list()) == [1, 2]
    assert table.schema["c"] == pl.List(pl.Decimal(5, 1))
    assert table.schema["s"] == pl.Struct({"a": pl.Int64})


def test_a_type_conflict_names_the_file_that_gave_the_type(tmp_path: Path) -> None:
    """part-0's column is all null: the type it conflicts with is part-1's, not part-0's."""
    nulls = pa.array([None], pa.null())
    shards = _shards(tmp_path, {"k": [1], "c": nulls}, {"k": [2], "c": [1]}, {"k": [3], "c": [1.5]})
    with pytest.raises(SpecError, match=r"column 'c' is Float64, but Int64 in part-1\.parquet"):
        read_parquet(shards)


@pytest.mark.parametrize(
    ("typed", "nulls"),
    [
        (
            pa.array([[1, 2]], pa.list_(pa.int64(), 2)),
            pa.array([[None, None]], pa.list_(pa.null(), 2)),
        ),
        (
            pa.array([[("a", 1)]], pa.map_(pa.string(), pa.int64())),
            pa.array([[]], pa.map_(pa.string(), pa.null())),
        ),
    ],
    ids=["fixed-size list", "map"],
)
def test_null_parts_of_arrays_and_maps_fit_too(
    tmp_path: Path, typed: pa.Array, nulls: pa.Array
) -> None:
    """Only lists and structs were looked into: these were refused, though Polars takes them."""
    table = read_parquet(_shards(tmp_path, {"k": [0], "c": typed}, {"k": [1], "c": nulls}))
    assert table.schema["c"] == pl.from_arrow(pa.table({"c": typed})).schema["c"]


def test_a_nested_conflict_names_the_file_whose_own_type_conflicts(tmp_path: Path) -> None:
    """part-0 is List(Null): the List(Int64) that List(Float64) conflicts with is part-1's."""
    shards = _shards(
        tmp_path, {"k": [0], "c": pa.array([[]])}, {"k": [1], "c": [[1]]}, {"k": [2], "c": [[1.5]]}
    )
    with pytest.raises(
        SpecError, match=r"is List\(Float64\), but List\(Int64\) in part-1\.parquet"
    ):
        read_parquet(shards)


def test_null_parts_of_a_two_dimensional_array_fit(tmp_path: Path) -> None:
    """The merged type wrapped the inner array in the whole shape again, (2, 3, 3), and the
    cast to it ended in a Polars traceback."""

    def column(kind: pa.DataType, value: object) -> pa.Array:
        return pa.array([[[value] * 3] * 2], pa.list_(pa.list_(kind, 3), 2))

    shards = _shards(
        tmp_path,
        {"k": [0], "v": column(pa.null(), None)},
        {"k": [1], "v": column(pa.int64(), 7)},
    )
    table = read_parquet(shards)
    assert table.schema["v"] == pl.Array(pl.Int64, (2, 3))
    assert table.sort("k")["v"].to_list() == [[[None] * 3] * 2, [[7] * 3] * 2]


@pytest.mark.parametrize("dtype", [pl.Int128, pl.UInt128])
@pytest.mark.parametrize("descending", [False, True])
@pytest.mark.parametrize("engine", ["host", "nascent2"])
def test_a_128_bit_integer_key_is_sorted_by_rank(
    tmp_path: Path, dtype: pl.DataType, descending: bool, engine: str
) -> None:
    """numpy has no 128-bit integers: the key's `to_numpy` raised, and the sort ended in a
    traceback with exit status 1 (found by an audit of the sort)."""
    big = 2**100
    values = [big, 5, None, 3, big + 1, 5, 0] if dtype == pl.UInt128 else [big, -big, None, 5, -3]
    n = len(values)
    frame = pl.DataFrame({"k": pl.Series(values, dtype=dtype), "rid": list(range(n))})
    source, out = tmp_path / "wide.parquet", tmp_path / "out.parquet"
    frame.write_parquet(source)
    sort_parquet(source, out, "k", descending=descending, engine=engine, devices=2)
    want = frame.sort("k", descending=descending, nulls_last=True, maintain_order=True)
    assert pl.read_parquet(out)["rid"].to_list() == want["rid"].to_list()


def test_a_ctrl_c_while_polars_loads_numpys_api_waits_for_it(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """Polars' first `to_numpy` loads NumPy's C API by running Python code; a Ctrl-C raised
    there made its Rust side panic with a backtrace over ndpkit's one-line "interrupted"
    (found by an audit of the sort). The sort loads it first, with the signals held: the
    interrupt comes once the call is done."""
    import signal  # noqa: PLC0415

    from ndpkit.nascent import tablesort  # noqa: PLC0415

    finished = []
    real = pl.Series.to_numpy

    def interrupted_midway(self: pl.Series, *args: object, **kwargs: object) -> object:
        os.kill(os.getpid(), signal.SIGINT)
        result = real(self, *args, **kwargs)  # type: ignore[arg-type]
        finished.append(True)
        return result

    old = signal.signal(signal.SIGINT, signal.default_int_handler)
    try:
        monkeypatch.setattr(pl.Series, "to_numpy", interrupted_midway)
        with pytest.raises(KeyboardInterrupt):
            tablesort._load_numpy_api()
    finally:
        signal.signal(signal.SIGINT, old)
    assert finished == [True]


@pytest.mark.parametrize("dtype", [pl.Int128, pl.UInt128])
def test_128_bit_integers_that_fit_in_64_bits_are_keyed_as_integers(dtype: pl.DataType) -> None:
    """As decimals whose values fit: ranked, they met NASCENT2's 2^16-value dictionary limit
    where the same values as Int64 sort (a review found it)."""
    values = pl.Series("k", [*range(70_000), None], dtype=dtype)
    keys = sort_keys(values)
    assert keys.encoding == "integer" and keys.key_bits == 64
    assert sort_keys(pl.Series("k", [2**70, 1], dtype=dtype)).encoding == "dictionary"


def test_keep_schema_of_a_128_bit_column_says_why_it_cannot(tmp_path: Path) -> None:
    """pyarrow cannot read the column's type; "not a readable Parquet file" was wrong, as
    the same file sorts without --keep-schema (a review found it)."""
    source = tmp_path / "wide.parquet"
    pl.DataFrame({"k": pl.Series([3, 1, 2], dtype=pl.Int128)}).write_parquet(source)
    with pytest.raises(SpecError, match="128-bit integer column") as caught:
        sort_parquet(source, tmp_path / "out.parquet", "k", keep_schema=True)
    assert caught.value.field == "--keep-schema"
    sort_parquet(source, tmp_path / "out.parquet", "k")
    assert pl.read_parquet(tmp_path / "out.parquet")["k"].to_list() == [1, 2, 3]


@pytest.mark.parametrize("descending", [False, True], ids=["asc", "desc"])
def test_int96_timestamps_outside_nanoseconds_keep_their_values(
    tmp_path: Path, descending: bool
) -> None:
    """Spark's INT96 timestamps, with no Arrow schema: Polars clamped 1500-01-01 and
    3000-01-01 both to 2262-04-11 (exit 0, sorted as equal). Nested ones too."""
    src, out = tmp_path / "in.parquet", tmp_path / "out.parquet"
    stamps = [
        dt.datetime(3000, 1, 1),
        dt.datetime(2000, 1, 1),
        None,
        dt.datetime(1500, 1, 1, 0, 0, 0, 1),
        dt.datetime(1500, 1, 1),
    ]
    nested = [None if s is None else {"x": s} for s in reversed(stamps)]
    table = pa.table(
        {
            "rid": pa.array(range(len(stamps)), pa.int64()),
            "t": pa.array(stamps, pa.timestamp("us")),
            "s": pa.array(nested, pa.struct([("x", pa.timestamp("us"))])),
        }
    )
    pq.write_table(table, src, use_deprecated_int96_timestamps=True, store_schema=False)
    assert pq.ParquetFile(src).schema.column(1).physical_type == "INT96"
    sort_parquet(src, out, "t", descending=descending)
    got = pq.read_table(out)
    order = duckdb_order(src, "t", descending)
    assert got["rid"].to_pylist() == order
    assert got["t"].to_pylist() == [stamps[i] for i in order]
    assert got["s"].to_pylist() == [nested[i] for i in order]


def _duckdb_rows(path: Path, key: str, descending: bool, columns: str) -> list[tuple[object, ...]]:
    """`columns` of `path` (a file, or every file under a directory) in DuckDB's
    `ORDER BY key, <row position>`: shards in name order, rows in file order."""
    pattern = f"{path}/*.parquet" if path.is_dir() else str(path)
    direction = "DESC" if descending else "ASC"
    query = (
        f"SELECT {columns} FROM read_parquet('{pattern}', file_row_number=true, "
        f"filename=true) ORDER BY {key} {direction}, filename, file_row_number"
    )
    return duckdb.sql(query).fetchall()


@pytest.mark.parametrize("descending", [False, True], ids=["asc", "desc"])
@pytest.mark.parametrize("by", ["t", "k"])
def test_int96_shards_with_and_without_far_dates_are_one_table(
    tmp_path: Path, by: str, descending: bool
) -> None:
    """Spark and Hive write 9999-12-31 markers in some files only: each file's INT96 was
    read in a unit of its own (nanoseconds where every value fit, else microseconds), and
    the directory was refused as "Datetime(us) ... but Datetime(ns) in a.parquet"."""
    shards = tmp_path / "in"
    shards.mkdir()
    out = tmp_path / "out.parquet"
    stamps = {
        "a": [dt.datetime(2000, 1, 1), None, dt.datetime(1990, 1, 1, 0, 0, 0, 7)],
        "b": [dt.datetime(9999, 12, 31), dt.datetime(1500, 1, 1), dt.datetime(2010, 1, 1)],
    }
    for rid, (name, values) in enumerate(stamps.items()):
        table = pa.table(
            {
                "rid": pa.array([3 * rid + i for i in range(3)], pa.int64()),
                "k": pa.array([2, 1, 2], pa.int32()),
                "t": pa.array(values, pa.timestamp("us")),
                "s": pa.array([{"x": v} for v in values], pa.struct([("x", pa.timestamp("us"))])),
            }
        )
        path = shards / f"{name}.parquet"
        pq.write_table(table, path, use_deprecated_int96_timestamps=True, store_schema=False)
        assert pq.ParquetFile(path).schema.column(2).physical_type == "INT96"
    sort_parquet(shards, out, by, descending=descending)
    got = pq.read_table(out)
    want = _duckdb_rows(shards, by, descending, "rid, t, s")
    assert list(zip(*(got[c].to_pylist() for c in ("rid", "t", "s")), strict=True)) == want
    assert got.schema.field("t").type == pa.timestamp("us")


def test_int96_timestamps_tie_at_the_microsecond_as_in_duckdb(tmp_path: Path) -> None:
    """DuckDB reads INT96 in microseconds, so 500 ns and 100 ns past a second tie (row order
    decides); they were read in nanoseconds and sorted apart."""
    src, out = tmp_path / "in.parquet", tmp_path / "out.parquet"
    base = 946_684_800 * 10**9
    stamps = pa.array([base + 500, base + 100, base + 900, base + 1_100], pa.timestamp("ns"))
    table = pa.table({"rid": pa.array(range(4), pa.int64()), "t": stamps})
    pq.write_table(table, src, use_deprecated_int96_timestamps=True)
    sort_parquet(src, out, "t")
    got = pq.read_table(out)
    want = _duckdb_rows(src, "t", False, "rid, t")
    assert list(zip(got["rid"].to_pylist(), got["t"].to_pylist(), strict=True)) == want
    assert [r for r, _ in want] == [0, 1, 2, 3]


def test_an_int96_beside_decimal64_and_date64_in_a_struct_keeps_their_values(
    tmp_path: Path,
) -> None:
    """The INT96 column was read by pyarrow and given to `pl.from_arrow`, which misread the
    decimal64 beside it (1.50 as 9.66e9, then a Rust panic in the write, exit 1) and made
    the date64 a date; they keep the values and the types Polars reads them as."""
    src, out = tmp_path / "in.parquet", tmp_path / "out.parquet"
    days = [dt.datetime(2020, 1, 3), dt.datetime(1999, 5, 6), dt.datetime(2001, 1, 1)]
    cents = [decimal.Decimal("1.50"), decimal.Decimal("2.25"), decimal.Decimal("-3.00")]
    inner = pa.StructArray.from_arrays(
        [pa.array(days, pa.timestamp("ns")), pa.array(cents, pa.decimal64(18, 2)),
         pa.array(days, pa.date64())],
        ["ts", "d", "dd"],
    )  # fmt: skip
    pq.write_table(
        pa.table({"k": [2, 0, 1], "s": inner}), src, use_deprecated_int96_timestamps=True
    )
    sort_parquet(src, out, "k")
    got = pq.read_table(out)["s"].to_pylist()
    assert [r["d"] for r in got] == [cents[1], cents[2], cents[0]]
    assert [r["ts"] for r in got] == [days[1], days[2], days[0]]
    assert [r["dd"] for r in got] == [days[1], days[2], days[0]]


def test_an_int96_shard_beside_a_nanosecond_shard_is_one_table(tmp_path: Path) -> None:
    """INT96 is read in microseconds, another file's timestamp[ns] in nanoseconds: the
    directory was refused (Datetime ns against us); both are microseconds, as in DuckDB."""
    (tmp_path / "set").mkdir()
    first = [dt.datetime(2020, 1, 1), dt.datetime(2000, 1, 1)]
    second = [dt.datetime(2021, 1, 1), dt.datetime(1990, 1, 1)]
    table = pa.table({"t": pa.array(first, pa.timestamp("ns"))})
    pq.write_table(table, tmp_path / "set" / "a.parquet", use_deprecated_int96_timestamps=True)
    pq.write_table(
        pa.table({"t": pa.array(second, pa.timestamp("ns"))}), tmp_path / "set" / "b.parquet"
    )
    sort_parquet(tmp_path / "set", tmp_path / "o.parquet", "t")
    got = pq.read_table(tmp_path / "o.parquet")["t"]
    assert got.type == pa.timestamp("us")
    assert got.to_pylist() == sorted(first + second)


def test_an_int96_column_keeps_its_time_zone(tmp_path: Path) -> None:
    """pyarrow reads INT96 without a zone (its values are UTC); Polars' zone was dropped."""
    src, out = tmp_path / "in.parquet", tmp_path / "out.parquet"
    noon = [dt.datetime(2020, 1, 1, 12), dt.datetime(2000, 1, 1, 12)]  # UTC
    column = pa.array(noon, pa.timestamp("ns", tz="Europe/Paris"))
    pq.write_table(pa.table({"t": column}), src, use_deprecated_int96_timestamps=True)
    sort_parquet(src, out, "t")
    got = pq.read_table(out)["t"]
    assert got.type == pa.timestamp("us", tz="Europe/Paris")
    utc = dt.UTC
    assert [v.astimezone(utc).replace(tzinfo=None) for v in got.to_pylist()] == sorted(noon)


def test_int96_timestamps_beyond_microseconds_are_refused(tmp_path: Path) -> None:
    src = tmp_path / "in.parquet"
    years = 400_000 * 365 * 86_400  # seconds: beyond the ±292,000 years of microseconds
    column = pa.array([0, years], pa.timestamp("s"))
    pq.write_table(pa.table({"t": column}), src, use_deprecated_int96_timestamps=True)
    with pytest.raises(SpecError, match="holds an INT96 timestamp more than") as caught:
        read_parquet(src)
    assert (caught.value.source, caught.value.field) == (str(src), "t")


def test_each_shards_footer_is_read_once(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """The checks before Polars' read (INTERVAL, duration[s], INT96) each read the footer
    again: four footer reads a file, and a directory of 500 small shards 35-40 % slower to
    read. pyarrow now parses each footer once (Polars reads it once more itself)."""
    shards = tmp_path / "in"
    shards.mkdir()
    stamps = pa.array([dt.datetime(2000, 1, 1), None], pa.timestamp("us"))
    table = pa.table({"t": stamps, "d": pa.array([1, 2], pa.duration("s")), "k": [1, 2]})
    for name in ("a", "b"):
        pq.write_table(table, shards / f"{name}.parquet", use_deprecated_int96_timestamps=True)
    parsed: list[str] = []

    class Counted(pq.ParquetFile):  # type: ignore[misc]
        def __init__(self, source: object, *args: object, **kwargs: object) -> None:
            if kwargs.get("metadata") is None:  # a footer passed on is not parsed again
                parsed.append(Path(str(source)).name)
            super().__init__(source, *args, **kwargs)

    def read_schema(where: object, *args: object, **kwargs: object) -> pa.Schema:
        parsed.append(Path(str(where)).name)
        return real_read_schema(where, *args, **kwargs)

    def read_table(where: object, *args: object, **kwargs: object) -> pa.Table:
        parsed.append(Path(str(where)).name)
        return real_read_table(where, *args, **kwargs)

    real_read_schema, real_read_table = pq.read_schema, pq.read_table
    monkeypatch.setattr(pq, "ParquetFile", Counted)
    monkeypatch.setattr(pq, "read_schema", read_schema)
    monkeypatch.setattr(pq, "read_table", read_table)
    frame = read_parquet(shards)
    assert parsed == ["a.parquet", "b.parquet"]
    assert frame["k"].to_list() == [1, 2, 1, 2]


LIMIT_S = (2**63 - 1) // 1000


@pytest.mark.parametrize(
    ("by", "column"),
    [
        ("d", pa.array([5, 10**16], pa.duration("s"))),
        ("k", pa.array([5, -(10**16)], pa.duration("s"))),
        ("k", pa.array([[5], [LIMIT_S + 1]], pa.list_(pa.duration("s")))),
    ],
    ids=["key", "payload", "nested-payload"],
)
def test_seconds_polars_milliseconds_cannot_hold_are_refused(
    tmp_path: Path, by: str, column: pa.Array
) -> None:
    """Polars reads duration[s] as milliseconds: 10¹⁶ s wrapped to -8.4·10¹⁸ ms, exit 0."""
    src, out = tmp_path / "in.parquet", tmp_path / "out.parquet"
    pq.write_table(pa.table({"k": [2, 1], "d": column}), src)
    with pytest.raises(SpecError, match="beyond the ±9223372036854775 s") as caught:
        sort_parquet(src, out, by)
    assert (caught.value.source, caught.value.field) == (str(src), "d")
    assert not out.exists()


def test_seconds_at_the_limit_are_sorted_like_duckdb(tmp_path: Path) -> None:
    src, out = tmp_path / "in.parquet", tmp_path / "out.parquet"
    seconds = [LIMIT_S, -LIMIT_S, 5, None]
    table = pa.table({"rid": range(4), "d": pa.array(seconds, pa.duration("s"))})
    pq.write_table(table, src)
    sort_parquet(src, out, "d")
    got = pq.read_table(out)
    order = duckdb_order(src, "d", False)
    assert got["rid"].to_pylist() == order
    millis = [None if seconds[i] is None else seconds[i] * 1000 for i in order]
    assert got["d"].cast(pa.int64()).to_pylist() == millis


def test_keep_schema_checks_every_rows_cast_before_the_sort(tmp_path: Path) -> None:
    """int8 declared, and a value in row 1 that does not cast back to it: only row 0 was
    checked, so it was a traceback after the whole sort. (The example was once an INT96
    column holding 9999-12-31, declared in nanoseconds; it is declared in microseconds now.)"""
    src = tmp_path / "in.parquet"
    pq.write_table(pa.table({"v": pa.array([1, 2], pa.int8())}), src)
    frame = pl.DataFrame({"v": [1, 300]}, schema={"v": pl.Int64})
    with pytest.raises(SpecError, match=r"column 'v' is int8 in the input") as caught:
        input_schema(src, frame)
    assert (caught.value.source, caught.value.field) == (str(src), "--keep-schema")


@pytest.mark.parametrize("descending", [False, True], ids=["asc", "desc"])
def test_keep_schema_keeps_int96_timestamps_in_microseconds(
    tmp_path: Path, descending: bool
) -> None:
    """pyarrow declares INT96 as timestamp[ns] by default: 9999-12-31 was refused ("column
    't' is timestamp[ns] in the input, and Polars reads it as timestamp[us]"), and a nested
    one failed only after the whole sort."""
    src, out = tmp_path / "in.parquet", tmp_path / "out.parquet"
    stamps = [dt.datetime(2000, 1, 1), dt.datetime(9999, 12, 31), None, dt.datetime(1500, 1, 1)]
    table = pa.table(
        {
            "rid": pa.array(range(len(stamps)), pa.int64()),
            "t": pa.array(stamps, pa.timestamp("us")),
            "s": pa.array([{"x": v} for v in stamps], pa.struct([("x", pa.timestamp("us"))])),
        }
    )
    pq.write_table(table, src, use_deprecated_int96_timestamps=True)
    sort_parquet(src, out, "t", descending=descending, keep_schema=True)
    got = pq.read_table(out)
    assert got.schema.field("t").type == pa.timestamp("us")
    assert got.schema.field("s").type == pa.struct([("x", pa.timestamp("us"))])
    want = _duckdb_rows(src, "t", descending, "rid, t, s")
    assert list(zip(*(got[c].to_pylist() for c in ("rid", "t", "s")), strict=True)) == want


def test_a_cast_that_fails_in_the_write_names_the_column(tmp_path: Path) -> None:
    """What `input_schema` cannot foresee (here a nested value) fails as a SpecError, not a
    traceback, and leaves nothing behind."""
    out = tmp_path / "out.parquet"
    late = [{"x": dt.datetime(2000, 1, 1)}, {"x": dt.datetime(9999, 12, 31)}]
    frame = pl.DataFrame({"s": late})
    schema = pa.schema([("s", pa.struct([("x", pa.timestamp("ns"))]))])
    with pytest.raises(SpecError, match=r"column 's' is struct<x: timestamp\[ns\]> in the"):
        write_sorted([frame], out, schema=schema)
    assert list(tmp_path.iterdir()) == []


def _dictionaries_per_row_group(path: Path) -> pa.Table:
    """200 values in all under int8 indices: each row group's dictionary holds 100."""
    batches = [
        pa.record_batch(
            {
                "k": pa.DictionaryArray.from_arrays(
                    pa.array(np.arange(100, dtype=np.int8)),
                    pa.array([f"{prefix}{i:03d}" for i in range(100)]),
                ),
                "rid": pa.array(np.arange(start, start + 100)),
            }
        )
        for start, prefix in [(0, "a"), (100, "b")]
    ]
    table = pa.Table.from_batches(batches)
    pq.write_table(table, path, row_group_size=100)
    return table


@pytest.mark.parametrize("descending", [False, True], ids=["asc", "desc"])
def test_keep_schema_widens_dictionary_indices_the_merged_dictionary_needs(
    tmp_path: Path, descending: bool
) -> None:
    """Sorted, the two row groups' dictionaries mix: int8 cannot number 200 values. The
    output was a file pyarrow could not read (ascending, exit 0) or a traceback (desc)."""
    src, out = tmp_path / "in.parquet", tmp_path / "out.parquet"
    table = _dictionaries_per_row_group(src)
    sort_parquet(src, out, "rid", descending=descending, keep_schema=True)
    got = pq.read_table(out)
    assert got.schema.field("k").type == pa.dictionary(pa.int16(), pa.string())
    want = table["k"].to_pylist()[:: -1 if descending else 1]
    assert got["k"].to_pylist() == want
    assert pl.read_parquet(out)["k"].cast(pl.String).to_list() == want


def _nested_dictionaries_per_row_group(path: Path) -> pa.Table:
    """Dictionaries under int8 indices in a list, a large list, a struct and a map's
    items, 100 values in each row group's dictionary, 200 in all."""

    def batch(start: int, prefix: str) -> pa.RecordBatch:
        words = pa.DictionaryArray.from_arrays(
            pa.array(np.arange(100, dtype=np.int8)),
            pa.array([f"{prefix}{i:03d}" for i in range(100)]),
        )
        offsets = np.arange(101, dtype=np.int32)
        return pa.record_batch(
            {
                "rid": pa.array(np.arange(start, start + 100)),
                "k": pa.array(np.arange(start, start + 100) % 3),
                "l": pa.ListArray.from_arrays(pa.array(offsets), words),
                "ll": pa.LargeListArray.from_arrays(pa.array(offsets.astype(np.int64)), words),
                "s": pa.StructArray.from_arrays([words], ["x"]),
                "m": pa.MapArray.from_arrays(pa.array(offsets), pa.array(["a"] * 100), words),
            }
        )

    table = pa.Table.from_batches([batch(0, "a"), batch(100, "b")])
    pq.write_table(table, path, row_group_size=100)
    return table


@pytest.mark.parametrize("descending", [False, True], ids=["asc", "desc"])
def test_keep_schema_widens_nested_dictionary_indices(tmp_path: Path, descending: bool) -> None:
    """Only top-level dictionaries were widened: a list or struct of dictionary<int8> whose
    row groups' dictionaries hold 200 values in all gave an unreadable file (exit 0) or
    failed after the whole sort (--desc)."""
    src, out = tmp_path / "in.parquet", tmp_path / "out.parquet"
    table = _nested_dictionaries_per_row_group(src)
    sort_parquet(src, out, "k", descending=descending, keep_schema=True)
    got = pq.read_table(out)
    index = pa.dictionary(pa.int32(), pa.string())
    assert got.schema.field("l").type == pa.list_(pa.field("element", index))
    assert got.schema.field("s").type == pa.struct([("x", index)])
    order = duckdb_order(src, "k", descending)
    assert got["rid"].to_pylist() == order
    for name in ("l", "ll", "s", "m"):
        assert got[name].to_pylist() == [table[name][i].as_py() for i in order]
    frame = pl.read_parquet(out)
    assert frame["rid"].to_list() == order
    assert frame["l"].to_list() == [table["l"][i].as_py() for i in order]


@pytest.mark.parametrize(
    ("column", "name"),
    [("INTERVAL (range) DAY AS iv", "iv"), ("{'a': [INTERVAL 1 DAY]} AS s", "s")],
    ids=["interval", "nested"],
)
def test_an_interval_column_is_refused_by_name_before_polars_panics(
    tmp_path: Path, capfd: pytest.CaptureFixture[str], column: str, name: str
) -> None:
    """DuckDB writes INTERVAL; Polars printed a Rust panic, then an error naming no column."""
    src = tmp_path / "in.parquet"
    duckdb.sql(f"COPY (SELECT range AS k, {column} FROM range(3)) TO '{src}' (FORMAT parquet)")
    with pytest.raises(SpecError, match="unsupported type INTERVAL") as caught:
        sort_parquet(src, tmp_path / "out.parquet", "k")
    assert (caught.value.source, caught.value.field) == (str(src), name)
    assert "panicked" not in capfd.readouterr().err


@pytest.mark.parametrize("engine", ENGINES)
@pytest.mark.parametrize("descending", [False, True], ids=["asc", "desc"])
def test_an_all_null_key_of_type_null_keeps_the_row_order(
    tmp_path: Path, descending: bool, engine: str
) -> None:
    """pandas writes an all-None column as Arrow's null type: it was refused ("cannot sort
    by a column of type Null"), where DuckDB sorts it."""
    src, out = tmp_path / "in.parquet", tmp_path / "out.parquet"
    table = pa.table({"rid": pa.array(range(5), pa.int64()), "n": pa.nulls(5)})
    pq.write_table(table, src)
    sort_parquet(src, out, "n", descending=descending, engine=engine, devices=2)
    assert pq.read_table(out)["rid"].to_pylist() == duckdb_order(src, "n", descending)


def test_the_null_types_raw_keys_are_all_invalid() -> None:
    """Its comment said `valid` was all false where the code passed None, which says the
    column has no nulls; sort_keys' own null count hid it."""
    raw = _raw_keys(pl.Series("n", [None, None, None]), "t", "n")
    assert raw.valid is not None and not raw.valid.any() and len(raw.valid) == 3
    keys = sort_keys(pl.Series("n", [None, None, None]))
    assert keys.valid is not None and not keys.valid.any()


@pytest.mark.parametrize("descending", [False, True], ids=["asc", "desc"])
def test_an_extension_key_is_sorted_by_its_storage(tmp_path: Path, descending: bool) -> None:
    """arrow.json was refused as "type Extension('arrow.json', String, '')", in a message
    listing strings among the types it does sort; DuckDB sorts JSON as its text."""
    src, out = tmp_path / "in.parquet", tmp_path / "out.parquet"
    documents = ['{"b":1}', "[2]", None, '"x"', "[2]", "1"]
    table = pa.table({"rid": range(len(documents)), "j": pa.array(documents, pa.json_())})
    pq.write_table(table, src)
    sort_parquet(src, out, "j", descending=descending)
    assert pq.read_table(out)["rid"].to_pylist() == duckdb_order(src, "j", descending)


def test_an_extension_key_whose_storage_cannot_be_sorted_says_so(tmp_path: Path) -> None:
    src = tmp_path / "in.parquet"
    tensors = pa.FixedShapeTensorArray.from_numpy_ndarray(np.arange(4).reshape(2, 2))
    pq.write_table(pa.table({"x": tensors}), src)
    with pytest.raises(SpecError) as caught:
        sort_parquet(src, tmp_path / "out.parquet", "x")
    assert caught.value.detail.startswith(
        "cannot sort by a column of extension type 'arrow.fixed_shape_tensor' stored as Array("
    )
