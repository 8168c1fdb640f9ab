"""Parquet shards: generating, importing a table, streaming it through the executor, and every
bad table or damaged shard as a clear error naming the file."""

from __future__ import annotations

import json
import os
import time
import warnings
from dataclasses import asdict, is_dataclass
from decimal import Decimal
from fractions import Fraction
from pathlib import Path
from typing import Any

import numpy as np
import pyarrow as pa
import pyarrow.parquet as pq
import pytest

import ndpkit.runtime.dataset as dataset_module
from ndpkit.errors import SpecError
from ndpkit.kernels import get_kernel
from ndpkit.runtime import (
    Dataset,
    LocalExecutor,
    ShardError,
    generate_dataset,
    import_dataset,
    open_dataset,
)


@pytest.fixture(scope="module")
def executor():
    with LocalExecutor(2) as ex:
        yield ex


@pytest.fixture(scope="module")
def pair(tmp_path_factory: pytest.TempPathFactory) -> tuple[Dataset, Dataset]:
    """The same generated LC data as .npy shards and as Parquet shards."""
    root = tmp_path_factory.mktemp("pair")
    made = [
        generate_dataset(
            "lc", 1 << 20, 3, root / fmt, seed=7, shard_bytes=150_000, shard_format=fmt
        )
        for fmt in ("npy", "parquet")
    ]
    return made[0], made[1]


def feature_table(points: np.ndarray) -> pa.Table:
    """A table a user might have: an id, the features as float64 (f*) and int32 (g*, integer
    valued), and a string column."""
    n = len(points)
    columns: dict[str, object] = {"id": np.arange(n), "label": ["p"] * n}
    for j in range(points.shape[1]):
        if j % 2:
            columns[f"g{j}"] = points[:, j].astype(np.int32)
        else:
            columns[f"f{j}"] = points[:, j].astype(np.float64)
    return pa.table(columns)


def test_generated_parquet_holds_the_same_records(pair: tuple[Dataset, Dataset]) -> None:
    npy, parquet = pair
    assert parquet.shard_format == "parquet"
    assert parquet.manifest.columns == tuple(f"x{j}" for j in range(8))
    assert all(s.path.endswith(".parquet") for s in parquet.shards)
    assert [s.records for s in parquet.shards] == [s.records for s in npy.shards]
    np.testing.assert_array_equal(parquet.read_all(), npy.read_all())
    reopened = open_dataset(parquet.path, verify=True)
    assert reopened.manifest == parquet.manifest


def test_npy_manifests_keep_their_old_keys(pair: tuple[Dataset, Dataset]) -> None:
    npy, parquet = pair
    assert "shard_format" not in json.loads((npy.path / "manifest.json").read_text())
    written = json.loads((parquet.path / "manifest.json").read_text())
    assert written["shard_format"] == "parquet" and len(written["columns"]) == 8


@pytest.mark.parametrize("app", ["lc", "knn8", "kmeans"])
def test_executor_answers_the_same_on_both_formats(
    app: str, executor: LocalExecutor, tmp_path: Path
) -> None:
    kernel = get_kernel(app)
    made = [
        generate_dataset(
            app, 1 << 19, 2, tmp_path / fmt, seed=3, shard_bytes=100_000, shard_format=fmt
        )
        for fmt in ("npy", "parquet")
    ]
    params = kernel.params(3)
    a, b = (executor.run(kernel, ds, params, chunk_bytes=40_000) for ds in made)
    kernel.check(b.result, kernel.reference(made[0].read_all(), params))
    same = asdict if is_dataclass(a.result) else (lambda r: r)
    np.testing.assert_equal(same(b.result), same(a.result))  # bit for bit
    assert (a.passes, a.bytes_in, a.bytes_out) == (b.passes, b.bytes_in, b.bytes_out)
    assert [e.chunks for e in a.engines] == [e.chunks for e in b.engines]


def test_row_groups_are_bounded(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(dataset_module, "ROW_GROUP_BYTES", 32 * 1000)
    ds = generate_dataset("lc", 200_000, 1, tmp_path / "ds", shard_format="parquet")
    meta = pq.ParquetFile(ds.shard_path(ds.shards[0])).metadata
    assert meta.num_row_groups == -(-ds.records // 1000)
    assert max(meta.row_group(i).num_rows for i in range(meta.num_row_groups)) == 1000


def test_import_a_table_by_columns(tmp_path: Path) -> None:
    points = get_kernel("lc").generate(200_000, 1)
    source = tmp_path / "points.parquet"
    pq.write_table(feature_table(points), source, row_group_size=777)
    names = [f"f{j}" if j % 2 == 0 else f"g{j}" for j in range(8)]
    # The integer columns hold truncated values: the import casts each column as it is.
    expected = points.copy()
    expected[:, 1::2] = np.trunc(expected[:, 1::2])
    ds = import_dataset(source, 3, tmp_path / "ds", "lc", shard_bytes=60_000, columns=names)
    assert ds.manifest.columns == tuple(names) and ds.shard_format == "parquet"
    np.testing.assert_array_equal(ds.read_all(), expected)
    assert [row["first_record"] for row in ds.device_rows()] == [0, 2084, 4167]


@pytest.mark.parametrize(
    ("columns", "message", "field"),
    [
        (
            None,
            r"column 'label' is string, not numeric \(without columns, --columns, every column "
            r"is taken: name the 8 feature columns\)$",
            "label",
        ),
        (
            ["f0", "label", "f2", "g3", "f4", "g5", "f6", "g1"],
            "'label' is string, not numeric$",
            "label",
        ),
        (["id", "f0"], r"2 columns \(id, f0\) for app 'lc', which needs 8 features", "columns"),
        (["f0", "nope"], "no column 'nope'", "columns"),
        (["f0", "f0", "g1", "f2", "g3", "f4", "g5", "f6"], "named twice", "columns"),
    ],
)
def test_import_names_the_bad_column(
    tmp_path: Path, columns: list[str] | None, message: str, field: str
) -> None:
    source = tmp_path / "points.parquet"
    pq.write_table(feature_table(get_kernel("lc").generate(3200, 1)), source)
    with pytest.raises(SpecError, match=message) as caught:
        import_dataset(source, 2, tmp_path / "ds", "lc", columns=columns)
    assert caught.value.source == str(source) and caught.value.field == field
    assert not (tmp_path / "ds").exists()


@pytest.mark.parametrize(
    ("columns", "message"),
    [
        (None, r": 2000 columns \(c0000, c0001, .*, c0019, … and 1,980 more\) for app 'lc'"),
        (["c0000", "nope"], r": no column 'nope' \(it has: c0000, .*, c0019, … and 1,980 more\)$"),
    ],
)
def test_an_error_about_a_wide_tables_columns_lists_a_few(
    tmp_path: Path, columns: list[str] | None, message: str
) -> None:
    """A table of 2,000 features: the error names 20 columns and counts the rest (it listed
    every one, 28 KB of message)."""
    source = tmp_path / "wide.parquet"
    pq.write_table(pa.table({f"c{j:04d}": np.zeros(4) for j in range(2000)}), source)
    with pytest.raises(SpecError, match=message) as caught:
        import_dataset(source, 2, tmp_path / "ds", "lc", columns=columns)
    assert len(str(caught.value)) < 600
    assert not (tmp_path / "ds").exists()


def test_a_value_beyond_float32_is_one_error_without_numpy_warnings(tmp_path: Path) -> None:
    source = tmp_path / "huge.parquet"
    values = [float(i) for i in range(1000)]
    table = pa.table({f"c{j}": pa.array(values) for j in range(8)})
    table = table.set_column(5, "c5", pa.array([*values[:700], 1e300, *values[701:]]))
    pq.write_table(table, source)
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # numpy's "overflow encountered in cast" would raise
        with pytest.raises(
            SpecError,
            match=r"record 700, column 'c5', holds 1e\+300, a double value beyond ±3\.4e\+38, "
            r"the range of float32;",
        ):
            import_dataset(source, 2, tmp_path / "ds", "lc")
    assert not (tmp_path / "ds").exists()


@pytest.mark.parametrize(
    ("value", "held"),
    [
        (-np.inf, r"-inf;"),
        (np.inf, r"\+inf;"),
        (-3.5e38, r"-3\.5e\+38, a double value beyond ±3\.4e\+38, the range of float32;"),
    ],
)
def test_an_infinity_in_a_double_column_is_told_from_a_value_beyond_float32(
    tmp_path: Path, value: float, held: str
) -> None:
    """A true ±inf in a float64 column was reported as "+inf (or a double value beyond
    ±3.4e+38 …)", and a finite -3.5e38 as "-inf (or …)": the source's value now says which."""
    source = tmp_path / "t.parquet"
    values = np.arange(100, dtype=np.float64)
    values[42] = value
    pq.write_table(pa.table({f"c{j}": values for j in range(8)}), source)
    with pytest.raises(SpecError, match=rf"record 42, column 'c0', holds {held} the apps'"):
        import_dataset(source, 2, tmp_path / "ds", "lc")
    assert not (tmp_path / "ds").exists()


def test_import_rejects_nulls_and_leaves_nothing(tmp_path: Path) -> None:
    source = tmp_path / "holes.parquet"
    values = [float(i) for i in range(1000)]
    table = pa.table({f"c{j}": pa.array(values) for j in range(8)})
    table = table.set_column(3, "c3", pa.array([*values[:900], None, *values[901:]]))
    pq.write_table(table, source)
    with pytest.raises(
        SpecError,
        match=r"record 900, column 'c3', is null \(1 null in the column, by the file's stat",
    ):
        import_dataset(source, 2, tmp_path / "ds", "lc")
    assert sorted(p.name for p in tmp_path.iterdir()) == ["holes.parquet"]  # no staging left


@pytest.mark.parametrize("statistics", [True, False])
def test_import_names_the_first_null_and_counts_the_whole_column(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, statistics: bool
) -> None:
    """Nulls spread over several batches: the first one's record is named, and the column's
    count is the file's (it was the first batch's: "has 2 nulls" of a column with 5)."""
    monkeypatch.setattr(dataset_module, "_PIECE_BYTES", 100 * 32)  # batches of 100 rows
    source = tmp_path / "holes.parquet"
    values = np.arange(1000, dtype=np.float64)
    mask = np.zeros(1000, bool)
    mask[[250, 260, 700, 800, 999]] = True
    table = pa.table({f"c{j}": pa.array(values) for j in range(8)})
    table = table.set_column(5, "c5", pa.array(values, mask=mask))
    pq.write_table(table, source, row_group_size=300, write_statistics=statistics)
    counted = r" \(5 nulls in the column, by the file's statistics\)" if statistics else ""
    with pytest.raises(SpecError, match=rf"record 250, column 'c5', is null{counted};") as caught:
        import_dataset(source, 2, tmp_path / "ds", "lc")
    assert caught.value.source == str(source)
    assert sorted(p.name for p in tmp_path.iterdir()) == ["holes.parquet"]


def test_a_parquet_file_named_otherwise_is_said_to_be_one(tmp_path: Path) -> None:
    """A `.parq` (fastparquet's users' name) was refused as "not a .npy file", and with
    --columns as "not a Parquet table": both now say it is one and how to have it read."""
    source = tmp_path / "points.parq"
    pq.write_table(pa.table({f"c{j}": np.zeros(4) for j in range(8)}), source)
    note = r"it starts as a Parquet file does: a table is read as one when its name ends in"
    with pytest.raises(SpecError, match=rf"not a \.npy file: .*; {note}"):
        import_dataset(source, 2, tmp_path / "a", "lc")
    with pytest.raises(SpecError, match=rf"is neither; {note}"):
        import_dataset(source, 2, tmp_path / "b", "lc", columns=["c0"])
    other = tmp_path / "other.dat"
    other.write_bytes(b"PAX1" + bytes(100))
    with pytest.raises(SpecError, match=r"\(\\x93NUMPY\)$"):
        import_dataset(other, 2, tmp_path / "c", "lc")
    assert sorted(p.name for p in tmp_path.iterdir()) == ["other.dat", "points.parq"]


def test_columns_given_as_one_string_are_refused(tmp_path: Path) -> None:
    """`columns="f0,f1,…"` was taken character by character ("no column 'f'"), and a string
    of one-letter names ("abcdefgh") was imported as eight columns without a word."""
    source = tmp_path / "t.parquet"
    pq.write_table(pa.table({c: np.zeros(4) for c in "abcdefgh"}), source)
    for given in ("a,b,c,d,e,f,g,h", "abcdefgh"):
        with pytest.raises(SpecError, match=r"columns must be a list of names, not the string"):
            import_dataset(source, 2, tmp_path / "ds", "lc", columns=given)
    assert not (tmp_path / "ds").exists()
    ds = import_dataset(source, 2, tmp_path / "ds", "lc", columns=list("abcdefgh"))
    assert ds.manifest.columns == tuple("abcdefgh")


def test_import_rejects_what_is_not_a_feature_table(tmp_path: Path) -> None:
    fake = tmp_path / "fake.parquet"
    fake.write_bytes(b"not a parquet file at all")
    with pytest.raises(SpecError, match="not a readable Parquet file") as caught:
        import_dataset(fake, 2, tmp_path / "a", "lc")
    assert caught.value.source == str(fake)
    with pytest.raises(SpecError, match="records of shape"):
        import_dataset(fake, 2, tmp_path / "b", "sobel")
    npy = tmp_path / "x.npy"
    np.save(npy, np.zeros((10, 8), np.float32))
    with pytest.raises(SpecError, match="only a Parquet table"):
        import_dataset(npy, 2, tmp_path / "c", "lc", columns=["a"])


def test_a_page_damaged_past_the_footer_is_one_error(tmp_path: Path) -> None:
    """The footer reads, so the file opens; the damage shows when the second row group is
    read, mid-import. It was an OSError traceback with exit 1."""
    source = tmp_path / "damaged.parquet"
    values = np.arange(14_000, dtype=np.float64)
    table = pa.table({f"c{j}": pa.array(values + j) for j in range(8)})
    pq.write_table(table, source, row_group_size=7000, compression="none")
    at = pq.ParquetFile(source).metadata.row_group(1).column(2).data_page_offset
    raw = bytearray(source.read_bytes())
    for i in range(at, at + 12):
        raw[i] ^= 0xFF
    source.write_bytes(bytes(raw))
    with pytest.raises(SpecError, match="not a readable Parquet file") as caught:
        import_dataset(source, 2, tmp_path / "ds", "lc")
    assert caught.value.source == str(source)
    assert not (tmp_path / "ds").exists()


def test_a_page_whose_crc_does_not_match_is_refused(tmp_path: Path) -> None:
    """A flipped bit inside a data page (its header intact) of a file written with page
    CRCs, as ndpkit's own shards are: it was imported, and the new manifest's CRC then
    vouched for the damage (found by an audit of the imports)."""
    source = tmp_path / "flipped.parquet"
    values = np.arange(2000, dtype=np.float32)
    table = pa.table({f"c{j}": pa.array(values + j) for j in range(8)})
    pq.write_table(
        table, source, compression="none", use_dictionary=False, write_page_checksum=True
    )
    column = pq.ParquetFile(source).metadata.row_group(0).column(3)
    at = column.data_page_offset + column.total_compressed_size - 400  # among the values
    raw = bytearray(source.read_bytes())
    raw[at] ^= 0x01
    source.write_bytes(bytes(raw))
    with pytest.raises(SpecError, match=r"not a readable Parquet file \(.*CRC") as caught:
        import_dataset(source, 2, tmp_path / "ds", "lc")
    assert caught.value.source == str(source)
    assert sorted(p.name for p in tmp_path.iterdir()) == ["flipped.parquet"]


@pytest.mark.parametrize("how", ["written again", "renamed over", "truncated"])
def test_a_table_changed_while_it_is_imported_is_an_error_not_a_mixture(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, how: str
) -> None:
    """`pq.write_table` onto the source while it is imported (a pipeline run again) truncates
    it and writes it again, with the same layout: the data set held the old table's first
    rows and the new one's last, with exit 0 (most writers store no page CRCs that could
    tell). A .npy source was already refused so."""
    source = tmp_path / "points.parquet"

    def write(value: float, rows: int = 5000) -> None:
        columns = {f"c{j}": np.full(rows, value, np.float32) for j in range(8)}
        pq.write_table(pa.table(columns), source, row_group_size=1000)

    write(0.0)
    an_hour_ago = time.time_ns() - 3600 * 10**9  # a write now changes the time, however coarse
    os.utime(source, ns=(an_hour_ago, an_hour_ago))
    real, calls = dataset_module.batch_to_records, []

    def changed_after_the_first(batch: Any, dtype: np.dtype[Any]) -> np.ndarray:
        calls.append(1)
        if len(calls) == 1:
            if how == "written again":
                write(7.0)
            elif how == "renamed over":
                pq.write_table(
                    pa.table({f"c{j}": np.full(5000, 7, np.float32) for j in range(8)}),
                    tmp_path / "new.parquet",
                    row_group_size=1000,
                )
                os.replace(tmp_path / "new.parquet", source)
            else:
                os.truncate(source, source.stat().st_size // 2)
        return real(batch, dtype)

    monkeypatch.setattr(dataset_module, "batch_to_records", changed_after_the_first)
    monkeypatch.setattr(dataset_module, "_PIECE_BYTES", 1000 * 32)  # a batch of 1000 rows
    with pytest.raises(SpecError, match=r"changed while it was read \(it ") as caught:
        import_dataset(source, 2, tmp_path / "ds", "lc", shard_bytes=2**16)
    assert caught.value.source == str(source)
    assert sorted(p.name for p in tmp_path.iterdir()) == ["points.parquet"]


@pytest.mark.parametrize("nested", ["b", "b.c"])
def test_a_column_named_like_a_nested_field_is_one_error(tmp_path: Path, nested: str) -> None:
    """A top-level column `a.b` beside a struct `a` holding a field `b` (or `b.c`): pyarrow
    reads columns by their Parquet path, took the struct too, and the import ended in a
    TypeError traceback (exit 1) after its shards were begun."""
    source = tmp_path / "nested.parquet"
    inner: dict[str, Any] = {"b": 1.0} if nested == "b" else {"b": {"c": 1.0}}
    table = pa.table(
        {
            "a": pa.array([inner] * 100),
            "a.b": pa.array(np.arange(100, dtype=np.float32)),
            "c": pa.array(np.ones(100, np.float32)),
        }
    )
    pq.write_table(table, source)
    with pytest.raises(SpecError, match=r"column 'a\.b' has the Parquet path of a field") as caught:
        import_dataset(source, 1, tmp_path / "ds", "knn2", columns=["a.b", "c"])
    assert caught.value.source == str(source)
    assert sorted(p.name for p in tmp_path.iterdir()) == ["nested.parquet"]
    # dotted names with no struct of that name are read as they are (pandas' json_normalize),
    # beside a column named like their first part too
    flat = tmp_path / "flat.parquet"
    values = np.arange(100, dtype=np.float32)
    pq.write_table(pa.table({"a": values, "a.b": values + 1, "a..c": values + 2}), flat)
    for i, chosen in enumerate([["a.b", "a..c"], ["a", "a.b"], ["a..c", "a"]]):
        got = import_dataset(flat, 1, tmp_path / f"ok{i}", "knn2", columns=chosen).read_all()
        offsets = {"a": 0, "a.b": 1, "a..c": 2}
        np.testing.assert_array_equal(got, np.stack([values + offsets[c] for c in chosen], 1))


def test_the_index_pandas_stores_as_a_column_is_no_feature_by_default(tmp_path: Path) -> None:
    """`df[df.f0 > 0].to_parquet(path)` stores the filtered DataFrame's row labels as a column,
    `__index_level_0__`, named in the file's pandas metadata: taken with the other columns by
    default, for knn2 from one feature column it became the second feature, silently. It is
    left out unless --columns names it; a RangeIndex (metadata only) changes nothing."""
    values = np.arange(10, dtype=np.float32)
    labels = np.arange(0, 1000, 100)

    def written(name: str, index: list[Any], features: int = 2) -> Path:
        columns = {"f0": values, "f1": values + 0.5}
        table = pa.table({**dict(list(columns.items())[:features]), "__index_level_0__": labels})
        pandas = {"index_columns": index, "columns": [], "column_indexes": []}
        table = table.replace_schema_metadata({"pandas": json.dumps(pandas)})
        pq.write_table(table, tmp_path / name)
        return tmp_path / name

    ds = import_dataset(written("t.parquet", ["__index_level_0__"]), 1, tmp_path / "ds", "knn2")
    assert ds.manifest.columns == ("f0", "f1")
    np.testing.assert_array_equal(ds.read_all(), np.stack([values, values + 0.5], 1))
    asked = import_dataset(
        tmp_path / "t.parquet", 1, tmp_path / "asked", "knn2", columns=["f0", "__index_level_0__"]
    )
    np.testing.assert_array_equal(asked.read_all()[:, 1], labels.astype(np.float32))
    # one feature column and the index: the labels were imported as knn2's second feature
    with pytest.raises(SpecError, match=r"1 column \(f0\) for app 'knn2'"):
        import_dataset(written("one.parquet", ["__index_level_0__"], 1), 1, tmp_path / "1", "knn2")
    # a RangeIndex is stored as metadata: every column is a feature, as before
    ranged = [{"kind": "range", "name": None, "start": 0, "stop": 10, "step": 1}]
    with pytest.raises(SpecError, match=r"3 columns \(f0, f1, __index_level_0__\)"):
        import_dataset(written("r.parquet", ranged), 1, tmp_path / "r", "knn2")


def test_a_count_short_by_the_pandas_index_names_it(tmp_path: Path) -> None:
    """`df.set_index("x").to_parquet(path)` stores the feature x as the index: left out by
    default, the table's columns x and y were '1 column (y) for app 'knn2'', without a word
    of x. The error says x was left out as the pandas index; metadata that is not pandas'
    JSON leaves every column a feature."""
    values = np.arange(10, dtype=np.float32)

    def written(name: str, pandas: bytes) -> Path:
        table = pa.table({"x": values, "y": values + 0.5})
        pq.write_table(table.replace_schema_metadata({"pandas": pandas}), tmp_path / name)
        return tmp_path / name

    indexed = written("indexed.parquet", json.dumps({"index_columns": ["x"]}).encode())
    with pytest.raises(
        SpecError, match=r"1 column \(y\) .* 2 features \('x', the pandas index, left out by"
    ):
        import_dataset(indexed, 1, tmp_path / "indexed", "knn2")
    asked = import_dataset(indexed, 1, tmp_path / "asked", "knn2", columns=["x", "y"])
    np.testing.assert_array_equal(asked.read_all(), np.stack([values, values + 0.5], 1))
    for i, pandas in enumerate([b"\xff{not json", b'{"index_columns": "x"}', b"[1]"]):
        ds = import_dataset(written(f"m{i}.parquet", pandas), 1, tmp_path / f"m{i}", "knn2")
        assert ds.manifest.columns == ("x", "y")


def _nearest_float32(value: Fraction) -> np.float32:
    """The float32 nearest to an exact value, ties to the even one (an oracle by search)."""
    start = np.float32(float(value))
    candidates = [
        start,
        np.nextafter(start, np.float32(np.inf)),
        np.nextafter(start, np.float32(-np.inf)),
    ]
    return min(
        candidates,
        key=lambda c: (abs(Fraction(float(c)) - value), int(np.float32(c).view(np.uint32)) % 2),
    )


def test_decimal_columns_are_read_each_value_rounded_once(tmp_path: Path) -> None:
    """TPC-H's and TPC-C's money columns (`ndpkit data tpch`/`tpcc` write them) are
    decimal(15, 2) and decimal(6, 2): refused as 'not numeric'. Each value is the exact
    decimal rounded once to float32; 1.00000005960464478 lies just past the midpoint of 1
    and the next float32, and through float64 it became 1 (rounded onto the midpoint, then
    to even)."""
    rng = np.random.default_rng(0)
    money = [Decimal(int(u)).scaleb(-2) for u in rng.integers(-(10**15) + 1, 10**15, 1000)]
    fine = [Decimal(int(u)).scaleb(-17) for u in rng.integers(-(10**18) + 1, 10**18, 997)]
    fine += [Decimal("1.00000005960464478"), Decimal("-1.00000005960464478"), Decimal("0.5")]
    source = tmp_path / "money.parquet"
    table = pa.table(
        {
            "price": pa.array(money, pa.decimal128(15, 2)),
            "rate": pa.array(fine, pa.decimal128(18, 17)),
        }
    )
    pq.write_table(table, source, row_group_size=300)
    got = import_dataset(source, 2, tmp_path / "ds", "knn2").read_all()
    expected = [
        [_nearest_float32(Fraction(a)), _nearest_float32(Fraction(b))]
        for a, b in zip(money, fine, strict=True)
    ]
    np.testing.assert_array_equal(got, np.array(expected, np.float32))
    assert got[997, 1] == np.nextafter(np.float32(1), np.float32(2)) != np.float32(float(fine[997]))
    # decimal32 and decimal64 columns (Arrow's narrower types, kept in the file's schema)
    narrow = tmp_path / "narrow.parquet"
    small = [Decimal(int(u)).scaleb(-2) for u in rng.integers(-(10**6) + 1, 10**6, 100)]
    narrow_table = {
        "a": pa.array(small, pa.decimal32(6, 2)),
        "b": pa.array(money[:100], pa.decimal64(15, 2)),
    }
    pq.write_table(pa.table(narrow_table), narrow)
    got = import_dataset(narrow, 1, tmp_path / "narrow", "knn2").read_all()
    expected = [
        [_nearest_float32(Fraction(a)), _nearest_float32(Fraction(b))]
        for a, b in zip(small, money, strict=False)
    ]
    np.testing.assert_array_equal(got, np.array(expected, np.float32))
    # wider decimals are one error naming the column
    wide = tmp_path / "wide.parquet"
    pq.write_table(
        pa.table(
            {"a": pa.array(money, pa.decimal128(25, 2)), "b": pa.array(money, pa.decimal128(15, 2))}
        ),
        wide,
    )
    with pytest.raises(
        SpecError, match=r"column 'a' is decimal128\(25, 2\): decimals of at most 18 digits"
    ):
        import_dataset(wide, 1, tmp_path / "wide", "knn2")


def test_whole_decimals_are_rounded_once_without_a_fraction_each(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A decimal(p, 0) column of integers past 2^24 holds many float32 midpoints (a half of
    those below 2^25 are ties): each was decided as a Fraction, one by one, and such a
    column was imported some 12 times slower than the same integers as int64. They are
    decided in int64 now, ties to even, both signs, as the exact values would be."""
    rng = np.random.default_rng(3)
    whole = [int(v) for v in rng.integers(2**24, 2**27, 400)]
    whole += [2**24 + 1, 2**24 + 3, 2**25 + 2, 2**25 + 6, 2**53 + 1, 10**18 - 1, 7]
    whole += [-v for v in whole]
    whole = whole[: 2 * (len(whole) // 2)]
    source = tmp_path / "ids.parquet"
    column = pa.array([Decimal(v) for v in whole], pa.decimal128(18, 0))
    pq.write_table(pa.table({"a": column[::2], "b": column[1::2]}), source)

    def no_fraction(*args: object) -> Fraction:
        raise AssertionError("a whole decimal was decided as a Fraction")

    monkeypatch.setattr(dataset_module, "Fraction", no_fraction)
    got = import_dataset(source, 1, tmp_path / "ds", "knn2").read_all()
    expected = np.array([_nearest_float32(Fraction(v)) for v in whole], np.float32)
    np.testing.assert_array_equal(got.reshape(-1), expected)
    assert got.reshape(-1)[whole.index(2**24 + 1)] == np.float32(2**24)  # a tie, to even
    assert got.reshape(-1)[whole.index(-(2**24 + 3))] == np.float32(-(2**24 + 4))


def test_integers_beside_a_float_column_are_rounded_once(tmp_path: Path) -> None:
    """Each column is cast to float32 on its own: stacked with a float64 column first, an
    int64 went through float64 and was rounded twice (found by an audit of the imports)."""
    source = tmp_path / "mixed.parquet"
    big = 2**60 + 2**36 + 1  # halfway between float32 neighbours once rounded to float64
    ints = pa.array([big, -big, 3, 2**24 + 1], pa.int64())
    floats = pa.array([0.5, 1.5, 2.5, 3.5], pa.float64())
    pq.write_table(pa.table({"i": ints, "f": floats}), source)
    ds = import_dataset(source, 1, tmp_path / "ds", "knn2")
    got = ds.read_all()
    np.testing.assert_array_equal(got[:, 0], np.array(ints.to_pylist()).astype(np.float32))
    assert got[0, 0] == np.float32(2**60 + 2**37)  # not 2**60, the twice-rounded value
    np.testing.assert_array_equal(got[:, 1], np.float32([0.5, 1.5, 2.5, 3.5]))


def test_columns_are_taken_as_written_before_without_spaces(tmp_path: Path) -> None:
    """`a ` is a column of its own where the table has one (stripped, it silently chose
    `a`); spaces typed after commas still find `b` (found by an audit of the imports)."""
    source = tmp_path / "spaced.parquet"
    table = pa.table({"a": [1.0, 2.0], "b": [3.0, 4.0], "a ": [5.0, 6.0]})
    pq.write_table(table, source)
    ds = import_dataset(source, 1, tmp_path / "one", "knn2", columns=["a ", " b"])
    assert ds.manifest.columns == ("a ", "b")
    np.testing.assert_array_equal(ds.read_all(), np.float32([[5, 3], [6, 4]]))
    ds = import_dataset(source, 1, tmp_path / "two", "knn2", columns=[" a", "b "])
    np.testing.assert_array_equal(ds.read_all(), np.float32([[1, 3], [2, 4]]))
    from ndpkit.cli.data import _names  # noqa: PLC0415 - --columns' parser, not stripping

    assert _names("--columns", "a ,b") == ["a ", "b"]


def test_two_columns_of_one_name_are_one_error(tmp_path: Path) -> None:
    source = tmp_path / "twice.parquet"
    column = pa.array(np.linspace(0.0, 1.0, 100))
    pq.write_table(pa.Table.from_arrays([column] * 8, names=["f0", "f1", "f2", "f3"] * 2), source)
    for columns in (None, ["f0", "f1", "f2", "f3"]):
        with pytest.raises(SpecError, match="2 columns are named 'f0'") as caught:
            import_dataset(source, 2, tmp_path / "ds", "lc", columns=columns)
        assert caught.value.field == "f0"
    assert not (tmp_path / "ds").exists()


def test_generate_parquet_only_for_point_apps(tmp_path: Path) -> None:
    with pytest.raises(SpecError, match="Parquet shards hold rows") as caught:
        generate_dataset("sobel", 1 << 18, 2, tmp_path / "s", shard_format="parquet")
    assert caught.value.field == "shard_format"
    with pytest.raises(SpecError, match="must be one of npy, parquet"):
        generate_dataset("lc", 1 << 18, 2, tmp_path / "s", shard_format="csv")  # type: ignore[arg-type]


def _flip_middle(path: Path) -> None:
    raw = bytearray(path.read_bytes())
    raw[len(raw) // 2] ^= 0x20
    path.write_bytes(raw)


def _zero_footer(path: Path) -> None:
    raw = bytearray(path.read_bytes())
    raw[-40:-4] = bytes(36)
    path.write_bytes(raw)


def _swap_for_other_columns(path: Path) -> None:
    table = pq.read_table(path)
    renamed = table.rename_columns([f"y{j}" for j in range(table.num_columns)])
    pq.write_table(renamed, path)


@pytest.mark.parametrize(
    ("damage", "message"),
    [
        (_flip_middle, "CRC checksum verification failed"),
        (_zero_footer, "not a readable Parquet shard"),
        (_swap_for_other_columns, "the manifest says"),
        (Path.unlink, "shard is missing"),
    ],
)
def test_a_damaged_parquet_shard_is_named(
    tmp_path: Path, executor: LocalExecutor, damage: object, message: str
) -> None:
    ds = generate_dataset("lc", 1 << 19, 2, tmp_path / "ds", shard_format="parquet", seed=2)
    victim = ds.shard_path(ds.shards_of(1)[0])
    damage(victim)  # type: ignore[operator]
    kernel = get_kernel("lc")
    with pytest.raises(ShardError, match=message) as caught:
        executor.run(kernel, ds, kernel.params(2))
    assert caught.value.source == str(victim)


def test_verify_checks_a_parquet_shards_crc(tmp_path: Path, executor: LocalExecutor) -> None:
    ds = generate_dataset("lc", 1 << 18, 2, tmp_path / "ds", shard_format="parquet", seed=2)
    victim = ds.shard_path(ds.shards[1])
    raw = bytearray(victim.read_bytes())
    raw[-30] ^= 0x01  # inside the footer's metadata: may still parse, but the CRC differs
    victim.write_bytes(raw)
    with pytest.raises(ShardError) as caught:
        open_dataset(ds.path, verify=True)
    assert caught.value.source == str(victim) and "CRC-32" in str(caught.value)


@pytest.mark.parametrize(
    ("rows", "message"),
    [(0, "holds no rows: it is empty"), (1, "holds 1 row, fewer than the 2 devices")],
)
def test_a_table_with_fewer_rows_than_devices_says_how_many(
    tmp_path: Path, rows: int, message: str
) -> None:
    """An empty table was 'holds 0 rows, fewer than 2 devices'."""
    columns = {f"x{i}": pa.array(np.zeros(rows, np.float32)) for i in range(2)}
    pq.write_table(pa.table(columns), tmp_path / "t.parquet")
    with pytest.raises(SpecError, match=message):
        import_dataset(tmp_path / "t.parquet", 2, tmp_path / "ds", "knn2")
    assert not (tmp_path / "ds").exists()


@pytest.mark.parametrize("chunk_bytes", [2**68, 2**70])  # 2**63 and 2**65 LC records
def test_chunks_larger_than_any_int64_read_whole_shards(
    pair: tuple[Dataset, Dataset], executor: LocalExecutor, chunk_bytes: int
) -> None:
    # "OverflowError: Python int too large to convert to C long" from pyarrow's batch size.
    kernel = get_kernel("lc")
    params = kernel.params(7)
    out = executor.run(kernel, pair[1], params, chunk_bytes=chunk_bytes)
    np.testing.assert_array_equal(out.result, executor.run(kernel, pair[0], params).result)
    assert [e.chunks for e in out.engines] == [e.shards for e in out.engines]


def test_dataset_chunks_larger_than_any_int64_are_whole_shards(
    pair: tuple[Dataset, Dataset],
) -> None:
    for ds in pair:  # Parquet's was an OverflowError
        chunks = list(ds.chunks(2**70))
        assert [len(chunk) for _, chunk in chunks] == [s.records for s in ds.shards]


def test_a_float16_column_is_read_without_numpy_warnings(tmp_path: Path) -> None:
    """Whether its values can pass float32's range compared float16's max with 3.4e38 in
    float16, and numpy warned 'overflow encountered in cast' on each import."""
    source = tmp_path / "half.parquet"
    half = np.arange(10, dtype=np.float16)
    pq.write_table(pa.table({"x": pa.array(half), "y": pa.array(half)}), source)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        import_dataset(source, 2, tmp_path / "ds", "knn2")
        bad = tmp_path / "inf.parquet"
        half[3] = np.inf
        pq.write_table(pa.table({"x": pa.array(half), "y": pa.array(half)}), bad)
        with pytest.raises(SpecError, match=r"record 3, column 'x', holds \+inf;") as caught:
            import_dataset(bad, 2, tmp_path / "ds2", "knn2")
    assert "beyond" not in str(caught.value)  # no float16 value is beyond float32's range


def test_a_data_set_under_a_name_that_is_not_utf8_is_read_verified_and_run(
    tmp_path: Path, executor: LocalExecutor
) -> None:
    """pyarrow opens only UTF-8 paths; the shards are written through Python, so a Parquet
    data set under `caf\\xe9/` was made, and then `data show --verify`, `evaluate --data` and
    every read of it ended in a UnicodeEncodeError traceback."""
    odd = Path(os.fsdecode(os.fsencode(tmp_path) + b"/caf\xe9"))
    made = generate_dataset("knn2", 2**16, 2, odd, seed=4, shard_format="parquet")
    plain = generate_dataset("knn2", 2**16, 2, tmp_path / "npy", seed=4)
    opened = open_dataset(odd, verify=True)
    np.testing.assert_array_equal(opened.read_all(), plain.read_all())
    np.testing.assert_array_equal(opened.spread(2**10), plain.spread(2**10))
    kernel = get_kernel("knn2")
    params = kernel.params(3)
    ran = executor.run(kernel, opened, params, chunk_bytes=20_000)
    kernel.check(ran.result, kernel.reference(plain.read_all(), params))
    # A flipped byte in a page is still found, by its CRC and by the page's own.
    shard = made.shard_path(made.shards[1])
    data = bytearray(shard.read_bytes())
    data[len(data) // 2] ^= 1
    shard.write_bytes(bytes(data))
    with pytest.raises(SpecError, match=r"CRC-32 is .*: corrupt"):
        opened.verify()
    with pytest.raises(SpecError, match=r"shard-0000\.parquet: cannot read the rows"):
        opened.read_all()


def test_the_columns_of_a_very_wide_table_are_checked_in_linear_time(tmp_path: Path) -> None:
    """Each chosen column was looked up and counted in the list of names: a table of 150,000
    columns taken by default (genomic features) took minutes before its error. 100,000
    here, which took about 100 s, and takes milliseconds."""
    names = [f"c{j}" for j in range(100_000)]
    schema = pa.schema([pa.field(name, pa.float64()) for name in names])
    kernel = get_kernel("knn2")
    started = time.perf_counter()
    with pytest.raises(SpecError, match=r"100000 columns \(c0, c1, .* and 99,980 more\)"):
        dataset_module._source_columns(tmp_path / "t.parquet", schema, None, kernel)
    chosen = dataset_module._source_columns(tmp_path / "t.parquet", schema, names[-2:], kernel)
    assert chosen == tuple(names[-2:])
    assert time.perf_counter() - started < 10
