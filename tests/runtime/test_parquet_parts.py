"""A Parquet table written as a directory of part files (Spark, DuckDB, pyarrow, tpchgen-cli):
imported as the concatenation of its parts in their order, and every bad directory or part
as one error naming it, with nothing written."""

from __future__ import annotations

import os
import shutil
import time
from pathlib import Path
from typing import Any

import duckdb
import numpy as np
import pyarrow as pa
import pyarrow.dataset as pads
import pyarrow.parquet as pq
import pytest

import ndpkit.runtime.dataset as dataset_module
from ndpkit.errors import SpecError
from ndpkit.runtime import Dataset, import_dataset
from ndpkit.runtime.parquet_parts import list_parts

COLUMNS = [f"c{j}" for j in range(8)]


def points(first: int, rows: int, dtype: Any = np.float64) -> pa.Table:
    """`rows` points whose feature j of row i is (first + i) * 8 + j: every row tells where
    it came from."""
    values = (np.arange(first, first + rows)[:, None] * 8 + np.arange(8)).astype(dtype)
    return pa.table({name: values[:, j] for j, name in enumerate(COLUMNS)})


def write_parts(root: Path, sizes: list[int], names: list[str] | None = None) -> pa.Table:
    """Parts of the given row counts under `root` (named `part-{i}.parquet` unless `names`
    says otherwise, in table order), and the table they make together."""
    root.mkdir(parents=True, exist_ok=True)
    names = names or [f"part-{i}.parquet" for i in range(len(sizes))]
    tables, first = [], 0
    for name, rows in zip(names, sizes, strict=True):
        table = points(first, rows)
        (root / name).parent.mkdir(parents=True, exist_ok=True)
        pq.write_table(table, root / name, row_group_size=300)
        tables.append(table)
        first += rows
    return pa.concat_tables(tables)


def left_as_it_was(tmp_path: Path, *sources: str) -> None:
    """Nothing written beside the sources: no data set, no staging directory."""
    assert sorted(p.name for p in tmp_path.iterdir()) == sorted(sources)


# -- which files are parts, in which order -----------------------------------------------


def test_parts_are_in_path_order_with_numbers_compared_as_numbers(tmp_path: Path) -> None:
    """DuckDB (`data_0` … `data_14`), pyarrow (`part-0` … `part-12`) and tpchgen-cli
    (`orders.1` … `orders.12`) number their parts without padding: a plain sort read
    `data_10` second."""
    names = ["data_10.parquet", "data_9.parquet", "data_0.parquet", "data_1.pq", "data_2.PARQUET"]
    for name in names:
        (tmp_path / name).touch()
    assert [p.name for p in list_parts(tmp_path).parts] == [
        "data_0.parquet",
        "data_1.pq",
        "data_2.PARQUET",
        "data_9.parquet",
        "data_10.parquet",
    ]


def test_hive_subdirectories_are_parts_and_left_out_names_are_not(tmp_path: Path) -> None:
    keep = ["k=2/data_0.parquet", "k=10/data_0.parquet", "k=10/data_1.parquet", "z.parquet"]
    left_out = [
        "_SUCCESS",
        "_common_metadata",
        "_metadata",
        ".part-0.parquet.crc",
        "part-0.parquet.crc",
        "._z.parquet",
        "_temporary/0/part-9.parquet",
        ".spark-staging/part-9.parquet",
        "k=2/_SUCCESS",
    ]
    for name in [*keep, *left_out]:
        (tmp_path / name).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / name).touch()
    (tmp_path / "notes.txt").touch()
    listing = list_parts(tmp_path)
    assert [str(p.relative_to(tmp_path)) for p in listing.parts] == keep  # k=2 before k=10
    assert listing.others == [tmp_path / "notes.txt"]


def test_a_link_to_an_ancestor_does_not_loop(tmp_path: Path) -> None:
    (tmp_path / "a").mkdir()
    (tmp_path / "a" / "p.parquet").touch()
    (tmp_path / "a" / "up").symlink_to(tmp_path)
    assert list_parts(tmp_path).parts == [tmp_path / "a" / "p.parquet"]


# -- importing -------------------------------------------------------------------------------


def import_both(
    tmp_path: Path, table: pa.Table, app: str = "lc", **kw: Any
) -> tuple[Dataset, Dataset]:
    """The directory `tmp_path/t` imported, and the same table as one file imported the same way."""
    pq.write_table(table, tmp_path / "one.parquet")
    parts = import_dataset(tmp_path / "t", 3, tmp_path / "from-parts", "lc", **kw)
    single = import_dataset(tmp_path / "one.parquet", 3, tmp_path / "from-one", "lc", **kw)
    return parts, single


def test_parts_import_as_their_concatenation_split_like_one_file(tmp_path: Path) -> None:
    """12 parts, one of them empty (Spark writes empty parts), numbered past 9 and cut across
    device and shard boundaries: the records are the concatenation's, each device holds the
    block it holds for the single file, and the shards are Parquet."""
    sizes = [700, 450, 0, 1200, 5, 1, 999, 333, 2000, 10, 64, 1500]
    table = write_parts(tmp_path / "t", sizes)
    parts, single = import_both(tmp_path, table, shard_bytes=40_000)
    expected = np.column_stack([table[name].to_numpy() for name in COLUMNS]).astype(np.float32)
    np.testing.assert_array_equal(parts.read_all(), expected)
    np.testing.assert_array_equal(parts.read_all(), single.read_all())
    assert parts.shard_format == "parquet" and parts.manifest.columns == tuple(COLUMNS)
    layout = [(s.device, s.index, s.records, s.offset) for s in parts.shards]
    assert layout == [(s.device, s.index, s.records, s.offset) for s in single.shards]
    assert all(s.path.endswith(".parquet") for s in parts.shards)
    assert parts.manifest.source == f"import {os.path.realpath(tmp_path / 't')}"


def test_a_directory_duckdb_wrote_imports_in_its_row_order(tmp_path: Path) -> None:
    """DuckDB's `COPY … TO 'dir'` with a file per row group writes data_0 … data_14: their
    rows, in part order, are the query's, as DuckDB's single-file COPY holds them."""
    query = (
        "SELECT range::DOUBLE AS a, (range * 2)::DOUBLE AS b, (range % 7)::FLOAT AS c, "
        "range AS d, (range / 3)::DOUBLE AS e, -range::DOUBLE AS f, 1.5::DOUBLE AS g, "
        "(range * range)::DOUBLE AS h FROM range(30000) ORDER BY range"
    )
    with duckdb.connect() as con:
        con.execute(
            f"COPY ({query}) TO '{tmp_path / 'dd'}' "
            "(FORMAT parquet, ROW_GROUP_SIZE 2048, ROW_GROUPS_PER_FILE 1)"
        )
        con.execute(f"COPY ({query}) TO '{tmp_path / 'one.parquet'}' (FORMAT parquet)")
    assert len(list_parts(tmp_path / "dd").parts) == 15
    ds = import_dataset(tmp_path / "dd", 4, tmp_path / "ds", "knn8", shard_bytes=50_000)
    whole = pq.read_table(tmp_path / "one.parquet")
    expected = np.column_stack([whole[n].to_numpy() for n in "abcdefgh"]).astype(np.float32)
    np.testing.assert_array_equal(ds.read_all(), expected)
    assert ds.read_all()[:, 0].tolist() == list(range(30000))


def test_hive_partitions_are_read_partition_by_partition(tmp_path: Path) -> None:
    """pyarrow's `write_dataset` with hive partitioning: the partition column is in the
    directory names, not the files; the parts are read k=1, k=2, k=10 (numbers as numbers)."""
    table = points(0, 3000)
    keyed = table.append_column("k", pa.array(np.repeat([10, 1, 2], 1000)))
    pads.write_dataset(
        keyed, tmp_path / "t", format="parquet", partitioning=["k"], partitioning_flavor="hive"
    )
    ds = import_dataset(tmp_path / "t", 2, tmp_path / "ds", "lc")
    got = ds.read_all()[:, 0] / 8
    assert got.tolist() == [*range(1000, 3000), *range(1000)]


def test_a_partition_key_asked_for_as_a_column_is_said_to_be_one(tmp_path: Path) -> None:
    """DuckDB's `PARTITION_BY (k)` keeps k in the directory names only; its readers give k
    as a column, and `--columns …,k` was told "no column 'k'" of the first part alone. With
    WRITE_PARTITION_COLUMNS the key is in the files too, and is read from them."""
    query = "SELECT range::DOUBLE AS x, (range % 3)::DOUBLE AS k FROM range(90) ORDER BY range"
    with duckdb.connect() as con:
        con.execute(f"COPY ({query}) TO '{tmp_path / 't'}' (FORMAT parquet, PARTITION_BY (k))")
        con.execute(
            f"COPY ({query}) TO '{tmp_path / 'w'}' "
            "(FORMAT parquet, PARTITION_BY (k), WRITE_PARTITION_COLUMNS true)"
        )
    with pytest.raises(SpecError) as caught:
        import_dataset(tmp_path / "t", 1, tmp_path / "ds", "knn2", columns=["x", " k"])
    assert caught.value.field == "columns"
    assert "no column 'k': it is a partition key, a directory name (k=0.0/)" in str(caught.value)
    left_as_it_was(tmp_path, "t", "w")
    ds = import_dataset(tmp_path / "w", 1, tmp_path / "ds", "knn2", columns=["x", "k"])
    got = ds.read_all()
    np.testing.assert_array_equal(got[:, 1], got[:, 0] % 3)


def test_columns_are_chosen_in_every_part(tmp_path: Path) -> None:
    """--columns picks the features by name in each part, whatever else a part holds."""
    (tmp_path / "t").mkdir()
    first = points(0, 10).append_column("label", pa.array(["a"] * 10))
    second = points(10, 5).append_column("other", pa.array([1] * 5))
    pq.write_table(first, tmp_path / "t" / "part-0.parquet")
    pq.write_table(second.select([*reversed(COLUMNS), "other"]), tmp_path / "t" / "part-1.parquet")
    ds = import_dataset(tmp_path / "t", 1, tmp_path / "ds", "lc", columns=COLUMNS)
    assert ds.read_all()[:, 0].tolist() == [8.0 * i for i in range(15)]


def test_a_parts_directory_is_one_table_even_with_an_image_app_named(tmp_path: Path) -> None:
    write_parts(tmp_path / "t", [10])
    with pytest.raises(
        SpecError, match=r"app 'sobel' has records of shape \(256, 256\); a Parquet"
    ):
        import_dataset(tmp_path / "t", 1, tmp_path / "ds", "sobel")
    with pytest.raises(SpecError, match=r"only a directory of images .* can be cropped"):
        import_dataset(tmp_path / "t", 1, tmp_path / "ds", "lc", crop=True)
    left_as_it_was(tmp_path, "t")


# -- bad directories and parts ---------------------------------------------------------------


def test_a_directory_named_as_a_table_without_parts_says_so(tmp_path: Path) -> None:
    """Spark's `_SUCCESS` alone (its parts lost, or never written)."""
    src = tmp_path / "t.parquet"
    src.mkdir()
    (src / "_SUCCESS").touch()
    (src / "_temporary").mkdir()
    (src / "_temporary" / "part-0.parquet").touch()
    with pytest.raises(SpecError, match="holds no parts of a Parquet table") as caught:
        import_dataset(src, 1, tmp_path / "ds", "lc")
    assert caught.value.source == str(src)
    left_as_it_was(tmp_path, "t.parquet")


@pytest.mark.parametrize("app", ["lc", "sobel"])
def test_a_directory_without_parts_or_images_says_it_has_neither(tmp_path: Path, app: str) -> None:
    src = tmp_path / "empty"
    src.mkdir()
    (src / "_SUCCESS").touch()
    with pytest.raises(SpecError, match="holds no parts of a Parquet table either") as caught:
        import_dataset(src, 1, tmp_path / "ds", app)
    assert caught.value.source == str(src)
    left_as_it_was(tmp_path, "empty")


@pytest.mark.parametrize("app", ["lc", "sobel"])
def test_parquet_files_named_otherwise_are_named_not_said_absent(tmp_path: Path, app: str) -> None:
    """Hive writes a table's parts as `000000_0`, Impala as `…_data.0.parq`: the error said
    the directory "holds no parts of a Parquet table", of a directory of nothing else."""
    write_parts(tmp_path / "t", [10, 10, 10], ["000000_0", "000001_0", "k=1/x_data.0.parq"])
    os.mkfifo(tmp_path / "t" / "000002_0")  # not opened: the read would block
    (tmp_path / "t" / "notes.txt").write_text("PAR0 not a table")
    with pytest.raises(SpecError) as caught:
        import_dataset(tmp_path / "t", 1, tmp_path / "ds", app)
    assert caught.value.source == str(tmp_path / "t")
    assert (
        "it holds Parquet files named otherwise (000000_0, 000001_0, k=1/x_data.0.parq), "
        "which are not read as the parts of a table"
    ) in str(caught.value)
    left_as_it_was(tmp_path, "t")


def test_parts_of_no_rows_only_are_an_error(tmp_path: Path) -> None:
    write_parts(tmp_path / "t", [0, 0])
    with pytest.raises(SpecError, match="holds no rows: its 2 parts are all empty") as caught:
        import_dataset(tmp_path / "t", 1, tmp_path / "ds", "lc")
    assert caught.value.source == str(tmp_path / "t")
    write_parts(tmp_path / "u", [2, 0, 1])
    with pytest.raises(SpecError, match="holds 3 rows, fewer than the 4 devices"):
        import_dataset(tmp_path / "u", 4, tmp_path / "ds", "lc")
    left_as_it_was(tmp_path, "t", "u")


def test_parts_beside_images_are_ambiguous(tmp_path: Path) -> None:
    write_parts(tmp_path / "t", [10, 10])
    (tmp_path / "t" / "cover.PNG").write_bytes(b"")
    with pytest.raises(SpecError, match=r"holds both the parts .* and images \(cover.PNG\)"):
        import_dataset(tmp_path / "t", 1, tmp_path / "ds", "lc")
    left_as_it_was(tmp_path, "t")


def test_a_file_that_is_no_part_is_an_error_not_rows_left_out(tmp_path: Path) -> None:
    """A part named `.parq` (fastparquet's users' name) would lose its rows silently."""
    write_parts(tmp_path / "t", [10, 10, 10], ["a.parquet", "b.parq", "c.parquet"])
    with pytest.raises(SpecError, match=r"holds files that are not parts .* \(b.parq\)") as caught:
        import_dataset(tmp_path / "t", 1, tmp_path / "ds", "lc")
    assert caught.value.source == str(tmp_path / "t")
    left_as_it_was(tmp_path, "t")


def test_a_delta_lake_table_is_refused(tmp_path: Path) -> None:
    write_parts(tmp_path / "t", [10])
    (tmp_path / "t" / "_delta_log").mkdir()
    with pytest.raises(SpecError, match="is a Delta Lake table"):
        import_dataset(tmp_path / "t", 1, tmp_path / "ds", "lc")


def test_a_hudi_table_is_refused_not_read_with_every_file_version(tmp_path: Path) -> None:
    """A Hudi table keeps older versions of a file group beside the current one until its
    cleaner runs, and only its `.hoodie/` timeline says which is current: left out as a
    hidden directory, it made every version's rows records, without a word."""
    write_parts(
        tmp_path / "t",
        [10, 10],
        ["k=1/f1-0_0-1-1_20261130101010.parquet", "k=1/f1-0_0-2-2_20261130111111.parquet"],
    )
    (tmp_path / "t" / "k=1" / ".hoodie_partition_metadata").write_text("commitTime=1\n")
    (tmp_path / "t" / ".hoodie").mkdir()
    (tmp_path / "t" / ".hoodie" / "hoodie.properties").write_text("hoodie.table.name=t\n")
    hudi = r"is an Apache Hudi table \(it has a \.hoodie/\)"
    with pytest.raises(SpecError, match=hudi) as caught:
        import_dataset(tmp_path / "t", 1, tmp_path / "ds", "lc")
    assert caught.value.source == str(tmp_path / "t")
    # A partition of it given alone, or a directory above the partitions.
    for part in (tmp_path / "t" / "k=1", tmp_path / "t"):
        shutil.rmtree(tmp_path / "t" / ".hoodie", ignore_errors=True)
        with pytest.raises(SpecError, match=r"is an Apache Hudi table \(or a part of one") as got:
            import_dataset(part, 1, tmp_path / "ds", "lc")
        assert got.value.source == str(part)
    left_as_it_was(tmp_path, "t")


def test_a_fifo_named_as_a_part_is_refused_without_blocking(tmp_path: Path) -> None:
    write_parts(tmp_path / "t", [10])
    os.mkfifo(tmp_path / "t" / "part-1.parquet")
    with pytest.raises(SpecError, match="not a regular file") as caught:
        import_dataset(tmp_path / "t", 1, tmp_path / "ds", "lc")
    assert caught.value.source == str(tmp_path / "t" / "part-1.parquet")


def test_a_corrupt_part_is_named(tmp_path: Path) -> None:
    write_parts(tmp_path / "t", [10, 10, 10])
    bad = tmp_path / "t" / "part-1.parquet"
    bad.write_bytes(b"not a parquet file at all")
    with pytest.raises(SpecError, match="not a readable Parquet file") as caught:
        import_dataset(tmp_path / "t", 1, tmp_path / "ds", "lc")
    assert caught.value.source == str(bad)
    left_as_it_was(tmp_path, "t")


def test_a_page_damaged_in_a_later_part_is_named_and_nothing_is_left(tmp_path: Path) -> None:
    """The footers read, so the import starts; the damage shows when the page is read,
    after the first part's shards were written."""
    write_parts(tmp_path / "t", [4000, 4000])
    bad = tmp_path / "t" / "part-1.parquet"
    pq.write_table(points(4000, 4000), bad, compression="none", write_page_checksum=True)
    column = pq.ParquetFile(bad).metadata.row_group(0).column(3)
    raw = bytearray(bad.read_bytes())
    raw[column.data_page_offset + column.total_compressed_size - 400] ^= 0x01
    bad.write_bytes(bytes(raw))
    with pytest.raises(SpecError, match="not a readable Parquet file") as caught:
        import_dataset(tmp_path / "t", 2, tmp_path / "ds", "lc", shard_bytes=40_000)
    assert caught.value.source == str(bad)
    left_as_it_was(tmp_path, "t")


@pytest.mark.parametrize(
    ("change", "message"),
    [
        (lambda t: t.drop_columns(["c5"]), r"columns: no column 'c5', which the first part, "),
        (
            lambda t: t.set_column(5, "c5", t["c5"].cast(pa.string())),
            r"c5: column 'c5' is string, not numeric",
        ),
        (
            lambda t: t.append_column("extra", t["c0"]),
            r"columns: has a column 'extra' that the first part, .* has not",
        ),
    ],
)
def test_a_part_unlike_the_first_is_named_with_its_column(
    tmp_path: Path, change: Any, message: str
) -> None:
    write_parts(tmp_path / "t", [10, 10, 10])
    odd = tmp_path / "t" / "part-2.parquet"
    pq.write_table(change(pq.read_table(odd)), odd)
    with pytest.raises(SpecError, match=message) as caught:
        import_dataset(tmp_path / "t", 1, tmp_path / "ds", "lc")
    assert str(caught.value).startswith(f"{odd}: ")
    assert str(tmp_path / "t" / "part-0.parquet") in str(caught.value) or "numeric" in message
    left_as_it_was(tmp_path, "t")


@pytest.mark.parametrize("kind", [pa.int64(), pa.int32(), pa.uint16(), pa.float32()])
def test_a_part_of_another_numeric_type_is_cast_as_a_single_table_is(
    tmp_path: Path, kind: Any
) -> None:
    """pandas or DuckDB writing each part from its own values gives int64 in one part and
    double in the next; the import refused it ("the parts of a table have the same column
    types"), where each value is cast to the app's float32 either way."""
    whole = write_parts(tmp_path / "t", [10, 10, 10])
    odd = tmp_path / "t" / "part-1.parquet"
    table = pq.read_table(odd)
    pq.write_table(table.set_column(5, "c5", table["c5"].cast(kind)), odd)
    assert pq.read_schema(odd).field("c5").type == kind
    ds = import_dataset(tmp_path / "t", 2, tmp_path / "ds", "lc")
    expected = np.column_stack([whole[name].to_numpy() for name in COLUMNS]).astype(np.float32)
    np.testing.assert_array_equal(ds.read_all(), expected)


def test_a_null_in_a_part_names_the_part_and_its_row(tmp_path: Path) -> None:
    write_parts(tmp_path / "t", [10, 10])
    odd = tmp_path / "t" / "part-1.parquet"
    table = pq.read_table(odd)
    holed = pa.array([*table["c3"].to_pylist()[:4], None, *table["c3"].to_pylist()[5:]])
    pq.write_table(table.set_column(3, "c3", holed), odd)
    with pytest.raises(SpecError, match=r"record 4, column 'c3', is null") as caught:
        import_dataset(tmp_path / "t", 1, tmp_path / "ds", "lc")
    assert caught.value.source == str(odd)
    left_as_it_was(tmp_path, "t")


@pytest.mark.parametrize("first_type", [pa.float64(), pa.float32()])
def test_a_value_beyond_float32_in_a_part_names_the_part(tmp_path: Path, first_type: Any) -> None:
    """Named as the double it was also where the first part's column is float32 (each
    part's own type says whether a +inf may have been a wider value)."""
    write_parts(tmp_path / "t", [10, 10])
    first = tmp_path / "t" / "part-0.parquet"
    table = pq.read_table(first)
    pq.write_table(table.set_column(6, "c6", table["c6"].cast(first_type)), first)
    odd = tmp_path / "t" / "part-1.parquet"
    table = pq.read_table(odd)
    big = pa.array([*table["c6"].to_pylist()[:7], 1e300, *table["c6"].to_pylist()[8:]])
    pq.write_table(table.set_column(6, "c6", big), odd)
    with pytest.raises(SpecError, match=r"record 7, column 'c6', holds 1e\+300, a double") as e:
        import_dataset(tmp_path / "t", 1, tmp_path / "ds", "lc")
    assert e.value.source == str(odd)
    left_as_it_was(tmp_path, "t")


def _rewrite_during_import(
    monkeypatch: pytest.MonkeyPatch, after_batches: int, change: Any
) -> None:
    """`change()` once the import has converted `after_batches` batches of 1000 rows."""
    real, calls = dataset_module.batch_to_records, []

    def changing(batch: Any, dtype: np.dtype[Any]) -> np.ndarray:
        calls.append(1)
        if len(calls) == after_batches:
            change()
        return real(batch, dtype)

    monkeypatch.setattr(dataset_module, "batch_to_records", changing)
    monkeypatch.setattr(dataset_module, "_PIECE_BYTES", 1000 * 32)


@pytest.mark.parametrize("which", ["part-0", "part-1"])
def test_a_part_rewritten_during_the_import_is_an_error_not_a_mixture(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, which: str
) -> None:
    """part-1 rewritten while part-0 is read (caught when part-1 is read), or part-0 once
    it has been read (caught before the last batch is handed out): either would have made
    a data set of two versions of the table."""
    write_parts(tmp_path / "t", [3000, 3000])
    an_hour_ago = time.time_ns() - 3600 * 10**9
    for part in (tmp_path / "t").iterdir():
        os.utime(part, ns=(an_hour_ago, an_hour_ago))
    victim = tmp_path / "t" / f"{which}.parquet"
    start = 0 if which == "part-0" else 3000
    rewrite = lambda: pq.write_table(points(start + 7, 3000), victim, row_group_size=300)  # noqa: E731
    _rewrite_during_import(monkeypatch, 1 if which == "part-1" else 4, rewrite)
    with pytest.raises(SpecError, match=r"changed while it was read \(it ") as caught:
        import_dataset(tmp_path / "t", 2, tmp_path / "ds", "lc", shard_bytes=2**16)
    assert caught.value.source == str(victim)
    left_as_it_was(tmp_path, "t")


def test_a_part_added_during_the_import_is_an_error(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    write_parts(tmp_path / "t", [3000, 3000])
    added = lambda: pq.write_table(points(6000, 10), tmp_path / "t" / "part-2.parquet")  # noqa: E731
    _rewrite_during_import(monkeypatch, 1, added)
    with pytest.raises(SpecError, match=r"changed while it was read \(it gained the part part-2"):
        import_dataset(tmp_path / "t", 2, tmp_path / "ds", "lc", shard_bytes=2**16)
    left_as_it_was(tmp_path, "t")


def test_a_part_removed_during_the_import_is_an_error(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    write_parts(tmp_path / "t", [3000, 3000])
    victim = tmp_path / "t" / "part-1.parquet"
    _rewrite_during_import(monkeypatch, 1, victim.unlink)
    with pytest.raises(SpecError, match=r"changed while it was read \(it can no longer be read"):
        import_dataset(tmp_path / "t", 2, tmp_path / "ds", "lc", shard_bytes=2**16)
    left_as_it_was(tmp_path, "t")


def test_a_part_whose_name_is_not_utf8_is_named_not_a_traceback(tmp_path: Path) -> None:
    """pyarrow cannot open such a path: a UnicodeEncodeError traceback ended the import."""
    write_parts(tmp_path / "t", [10, 10])
    odd = os.fsencode(tmp_path / "t" / "part-1.parquet")
    os.rename(odd, odd.replace(b"part-1", b"part-1-caf\xe9"))
    with pytest.raises(SpecError, match="its path is not valid UTF-8") as caught:
        import_dataset(tmp_path / "t", 1, tmp_path / "ds", "lc")
    assert caught.value.source == os.fsdecode(odd.replace(b"part-1", b"part-1-caf\xe9"))
    left_as_it_was(tmp_path, "t")


def test_a_single_table_whose_name_is_not_utf8_is_named_not_a_traceback(tmp_path: Path) -> None:
    """The same for one file, `caf\\xe9.parquet`: a UnicodeEncodeError traceback (exit 1)."""
    pq.write_table(points(0, 10), tmp_path / "x.parquet")
    odd = os.fsencode(tmp_path) + b"/caf\xe9.parquet"
    os.rename(tmp_path / "x.parquet", odd)
    with pytest.raises(SpecError, match="its path is not valid UTF-8") as caught:
        import_dataset(os.fsdecode(odd), 1, tmp_path / "ds", "lc")
    assert caught.value.source == os.fsdecode(odd)
    assert not (tmp_path / "ds").exists()


@pytest.mark.parametrize("out", ["t/ds", "t", "t/k=1/ds"])
def test_the_data_set_is_not_written_among_the_parts(tmp_path: Path, out: str) -> None:
    """Its shards are .parquet files: the import found its own staging directory's shards
    as a part added while it read ("gained the part ds.tmp-…/device-00/shard-0000.parquet"),
    and the next import would have read the data set as parts."""
    write_parts(tmp_path / "t", [10, 10], ["k=1/a.parquet", "k=2/a.parquet"])
    with pytest.raises(SpecError, match="is in the directory of the Parquet table being") as e:
        import_dataset(tmp_path / "t", 1, tmp_path / out, "lc", overwrite=True)
    assert e.value.source == str(tmp_path / out)
    assert [str(p.relative_to(tmp_path)) for p in sorted(tmp_path.rglob("*"))] == [
        "t",
        "t/k=1",
        "t/k=1/a.parquet",
        "t/k=2",
        "t/k=2/a.parquet",
    ]
