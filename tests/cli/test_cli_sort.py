"""`ndpkit sort` end to end, through the installed command."""

from __future__ import annotations

import decimal
import json
import os
from collections.abc import Callable
from pathlib import Path

import duckdb
import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from ndpkit.cli import _exit_code


@pytest.fixture
def table(tmp_path: Path) -> Path:
    path = tmp_path / "in.parquet"
    modes = ["RAIL", "AIR", None, "SHIP", "AIR", "MAIL", None, "RAIL"] * 50
    pq.write_table(pa.table({"rid": list(range(len(modes))), "mode": modes}), path)
    return path


def test_sort_writes_what_duckdb_orders(ndpkit, table: Path, tmp_path: Path) -> None:
    out = tmp_path / "out.parquet"
    result = ndpkit("sort", str(table), "--by", "mode", "--desc", "--out", str(out))
    assert result.returncode == 0, result.stderr
    assert "dictionary, 4 distinct" in result.stdout and "write" in result.stdout
    expected = duckdb.sql(
        f"SELECT rid FROM read_parquet('{table}', file_row_number=true) "
        "ORDER BY mode DESC, file_row_number"
    ).fetchall()
    assert pq.read_table(out).column("rid").to_pylist() == [r[0] for r in expected]
    # The schema row says what Polars' writer does to any table: it said "(large_string,
    # nullable)", which read as this table's key type.
    assert "Polars' (strings as large_string, every column nullable)" in result.stdout


def test_keep_schema_writes_the_input_types(ndpkit, table: Path, tmp_path: Path) -> None:
    out = tmp_path / "out.parquet"
    result = ndpkit("sort", str(table), "--by", "rid", "--keep-schema", "--out", str(out))
    assert result.returncode == 0, result.stderr
    assert pq.read_schema(out).field("mode").type == pa.string()
    assert pq.read_table(out).equals(pq.read_table(table))  # already in rid order
    assert "the input's" in result.stdout


def test_keep_schema_refuses_files_that_differ(ndpkit, tmp_path: Path) -> None:
    for d, nullable in enumerate((False, True)):
        schema = pa.schema([pa.field("rid", pa.int64(), nullable=nullable)])
        shard = tmp_path / "set" / f"device-{d:02d}" / "part.parquet"
        shard.parent.mkdir(parents=True)
        pq.write_table(pa.table({"rid": [3 - d, d]}, schema=schema), shard)
    out = tmp_path / "out.parquet"
    args = ("sort", str(tmp_path / "set"), "--by", "rid", "--keep-schema", "--out", str(out))
    result = ndpkit(*args)
    assert result.returncode == 2
    assert "device-01" in result.stderr and "--keep-schema" in result.stderr
    assert "Traceback" not in result.stderr and not out.exists()


def test_sort_json_reports_stages_and_devices(ndpkit, table: Path, tmp_path: Path) -> None:
    out = tmp_path / "parts"
    result = ndpkit(
        "sort",
        str(table),
        "--by",
        "rid",
        "--out",
        str(out),
        "--devices",
        "3",
        "--no-merge",
        "--engine",
        "nascent2",
        "--format",
        "json",
    )
    assert result.returncode == 0, result.stderr
    doc = json.loads(result.stdout)
    assert (doc["devices"], doc["merged"], doc["engine"]) == (3, False, "nascent2")
    assert list(doc["seconds"]) == ["read", "keys", "argsort", "merge", "gather", "write"]
    assert len(doc["kernel_counts"]) == 3
    assert sorted(p.parent.name for p in out.glob("*/part-0000.parquet")) == [
        "device-00",
        "device-01",
        "device-02",
    ]


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["--by", "nope"], "--by: no column 'nope'"),
        # The value given, too: the message named only the choices.
        (["--by", "mode", "--engine", "gpu"], "--engine: unknown engine 'gpu'; choose one of"),
        (["--by", "mode", "--compression", "brotli"], "--compression: unknown codec 'brotli'"),
        (["--by", "mode", "--devices", "0"], "--devices"),
    ],
)
def test_bad_flags_exit_2(
    ndpkit, table: Path, tmp_path: Path, args: list[str], message: str
) -> None:
    out = tmp_path / "out.parquet"
    result = ndpkit("sort", str(table), *args, "--out", str(out))
    assert result.returncode == 2, result.stderr
    assert message in result.stderr
    assert not out.exists()


def test_out_must_differ_from_the_input(ndpkit, table: Path) -> None:
    before = table.read_bytes()
    result = ndpkit("sort", str(table), "--by", "mode", "--out", str(table))
    assert result.returncode == 2
    assert "--out: must be outside the input" in result.stderr
    assert table.read_bytes() == before


@pytest.mark.parametrize("name", ["part-0.parquet", "sorted.parquet"])
def test_out_must_not_be_in_the_input_directory(ndpkit, table: Path, name: str) -> None:
    # A file of the input's own replaced, or a new one the next sort would read as input.
    folder = table.parent / "parts"
    folder.mkdir()
    (folder / "part-0.parquet").write_bytes(table.read_bytes())
    result = ndpkit("sort", str(folder), "--by", "mode", "--out", str(folder / name), "--overwrite")
    assert result.returncode == 2 and "--out: must be outside the input" in result.stderr
    assert sorted(p.name for p in folder.iterdir()) == ["part-0.parquet"]
    assert (folder / "part-0.parquet").read_bytes() == table.read_bytes()


@pytest.mark.parametrize("name", ["part-0.parquet", "sorted.parquet"])
def test_out_must_not_be_in_a_shard_directory_the_input_links_to(
    ndpkit, table: Path, name: str
) -> None:
    """The shard read through device-00 -> ../disk0 is the input as much as one in place."""
    disk, folder = table.parent / "disk0", table.parent / "parts"
    disk.mkdir()
    folder.mkdir()
    (disk / "part-0.parquet").write_bytes(table.read_bytes())
    (folder / "device-00").symlink_to("../disk0", target_is_directory=True)
    out = disk / name
    result = ndpkit("sort", str(folder), "--by", "mode", "--out", str(out), "--overwrite")
    assert result.returncode == 2 and "--out: must be outside the input" in result.stderr
    assert sorted(p.name for p in disk.iterdir()) == ["part-0.parquet"]
    assert (disk / "part-0.parquet").read_bytes() == table.read_bytes()


def test_corrupt_input_exits_2_naming_the_file(ndpkit, tmp_path: Path) -> None:
    bad = tmp_path / "bad.parquet"
    bad.write_bytes(b"PAR1garbage")
    result = ndpkit("sort", str(bad), "--by", "x", "--out", str(tmp_path / "o.parquet"))
    assert result.returncode == 2
    assert str(bad) in result.stderr and "not a readable Parquet file" in result.stderr
    assert "Traceback" not in result.stderr


def test_exit_code_of_the_fast_sort_path(capsys: pytest.CaptureFixture[str]) -> None:
    """`ndpkit sort` leaves through os._exit with the status Click chose."""

    def leave(code: object) -> None:
        raise SystemExit(code)

    assert _exit_code(lambda: leave(None)) == 0
    assert _exit_code(lambda: leave(2)) == 2
    assert _exit_code(lambda: None) == 0
    assert _exit_code(lambda: leave("bad")) == 1
    assert capsys.readouterr().err == "bad\n"


def test_out_named_for_another_format_is_refused(ndpkit, table: Path, tmp_path: Path) -> None:
    result = ndpkit("sort", str(table), "--by", "mode", "--out", str(tmp_path / "sorted.csv"))
    assert result.returncode == 2 and "name it .parquet (or .pq), not '.csv'" in result.stderr
    assert not (tmp_path / "sorted.csv").exists()


def test_out_in_a_missing_directory_is_refused_before_the_sort(
    ndpkit, table: Path, tmp_path: Path
) -> None:
    result = ndpkit("sort", str(table), "--by", "mode", "--out", str(tmp_path / "no" / "o.parquet"))
    missing = tmp_path / "no"
    assert result.returncode == 2
    assert (
        f"--out: cannot write '{missing / 'o.parquet'}': no directory '{missing}'" in result.stderr
    )
    assert "read…" not in result.stderr  # before the input is read


def duckdb_rids(path: Path, key: str) -> list[int]:
    query = (
        f"SELECT rid FROM read_parquet('{path}', file_row_number=true) "
        f"ORDER BY {key}, file_row_number"
    )
    return [r[0] for r in duckdb.sql(query).fetchall()]


@pytest.mark.parametrize("slash", ["/", ""])
def test_no_merge_writes_a_partition_for_one_device_too(
    ndpkit, table: Path, tmp_path: Path, slash: str
) -> None:
    out = tmp_path / "p1"
    args = ("--by", "mode", "--devices", "1", "--no-merge", "--format", "json")
    result = ndpkit("sort", str(table), *args, "--out", f"{out}{slash}")
    assert result.returncode == 0, result.stderr
    doc = json.loads(result.stdout)
    assert (doc["devices"], doc["merged"], doc["seconds"]["merge"]) == (1, False, 0.0)
    part = out / "device-00" / "part-0000.parquet"
    assert out.is_dir() and sorted(out.rglob("*")) == [part.parent, part]
    assert pq.read_table(part).column("rid").to_pylist() == duckdb_rids(table, "mode")


@pytest.mark.parametrize("ending", ["/", "/."])
def test_a_merged_out_named_as_a_directory_is_refused(
    ndpkit, table: Path, tmp_path: Path, ending: str
) -> None:
    out = f"{tmp_path / 'newdir'}{ending}"
    result = ndpkit("sort", str(table), "--by", "mode", "--out", out)
    assert result.returncode == 2
    assert result.stderr.splitlines()[-1] == (
        f"error: {out}: --out: ends in {ending!r}, a directory's name; the merged sorted table "
        "is one file: name it, or pass --no-merge for a directory of partitions"
    )
    assert not (tmp_path / "newdir").exists()


@pytest.mark.parametrize("through_a_link", [False, True], ids=["direct", "symlink"])
def test_out_holding_the_input_is_refused(
    ndpkit, table: Path, tmp_path: Path, through_a_link: bool
) -> None:
    """--no-merge --overwrite would replace the directory that holds the input."""
    earlier = tmp_path / "anc"
    source = earlier / "device-01" / "part-0000.parquet"
    source.parent.mkdir(parents=True)
    source.write_bytes(table.read_bytes())
    out = earlier
    if through_a_link:
        out = tmp_path / "link"
        out.symlink_to(earlier, target_is_directory=True)
    args = ("--by", "mode", "--devices", "2", "--no-merge", "--overwrite")
    result = ndpkit("sort", str(source), *args, "--out", str(out))
    assert result.returncode == 2
    assert f"error: {out}: --out: holds the input '{source}'" in result.stderr
    assert "read…" not in result.stderr  # refused before the input is read
    assert sorted(earlier.rglob("*")) == [source.parent, source]
    assert source.read_bytes() == table.read_bytes()


def test_merged_out_with_another_suffix_is_refused(ndpkit, table: Path, tmp_path: Path) -> None:
    """docs/sort.md: a merged output is named .parquet or .pq, or has no suffix."""
    result = ndpkit("sort", str(table), "--by", "mode", "--out", str(tmp_path / "sorted.foo"))
    assert result.returncode == 2 and "name it .parquet (or .pq), not '.foo'" in result.stderr
    assert not (tmp_path / "sorted.foo").exists()
    for name in ("sorted", "sorted.pq", "sorted.PARQUET"):
        result = ndpkit("sort", str(table), "--by", "mode", "--out", str(tmp_path / name))
        assert result.returncode == 0, result.stderr
        assert pq.read_table(tmp_path / name).column("rid").to_pylist() == duckdb_rids(
            table, "mode"
        )


def _fifo(path: Path) -> None:
    os.mkfifo(path)


def _wide_decimal(path: Path) -> None:
    values = pa.array([decimal.Decimal(10**39), None], pa.decimal256(40, 0))
    pq.write_table(pa.table({"d": values, "mode": ["a", "b"]}), path)


def _two_columns_named_mode(path: Path) -> None:
    arrays = [pa.array(["a", "b"]), pa.array([1, 2])]
    pq.write_table(pa.Table.from_arrays(arrays, names=["mode", "mode"]), path)


def _no_columns(path: Path) -> None:
    pq.write_table(pa.table({}), path)


@pytest.mark.parametrize(
    ("make", "message"),
    [
        (_fifo, "not a regular file (a FIFO, device or socket); give a Parquet file"),
        (_wide_decimal, "d: unsupported type decimal256(40, 0): decimals of up to 38 digits"),
        (_two_columns_named_mode, "mode: two columns are named 'mode'"),
        (_no_columns, "--by: no column 'mode'; the table has no columns"),
    ],
    ids=["fifo", "decimal256", "duplicate-names", "no-columns"],
)
def test_inputs_polars_cannot_take_are_one_error_line(
    ndpkit, tmp_path: Path, make: Callable[[Path], None], message: str
) -> None:
    source = tmp_path / "in.parquet"
    make(source)
    out = tmp_path / "out.parquet"
    result = ndpkit("sort", str(source), "--by", "mode", "--out", str(out))
    assert result.returncode == 2
    errors = [line for line in result.stderr.splitlines() if line.startswith("error:")]
    assert len(errors) == 1 and errors[0].startswith(f"error: {source}: {message}")
    assert "Traceback" not in result.stderr and not out.exists()


def test_the_documented_json_report_has_every_key(ndpkit, table: Path, tmp_path: Path) -> None:
    """docs/sort.md's example report has the keys, and stage keys, that a report has."""
    doc = (Path(__file__).parents[2] / "docs" / "sort.md").read_text()
    example = json.loads(doc.split("## The report", 1)[1].split("```json", 1)[1].split("```")[0])
    result = ndpkit(
        "sort", str(table), "--by", "mode", "--out", str(tmp_path / "o.parquet"), "-f", "json"
    )
    assert result.returncode == 0, result.stderr
    report = json.loads(result.stdout)
    assert list(example) == list(report)
    assert list(example["seconds"]) == list(report["seconds"])
    assert example["merged"] and example["devices"] == 1 and example["seconds"]["merge"] == 0.0


def test_a_damaged_file_is_one_error_with_status_2(ndpkit, tmp_path: Path) -> None:
    """A column name that is not UTF-8 ended in pyarrow's UnicodeDecodeError traceback."""
    src, out = tmp_path / "in.parquet", tmp_path / "out.parquet"
    pq.write_table(pa.table({"k": [3, 1, 2], "qqqqqq": ["c", "a", "b"]}), src)
    src.write_bytes(src.read_bytes().replace(b"qqqqqq", b"q\xffqqqq"))
    result = ndpkit("sort", str(src), "--by", "k", "--out", str(out))
    assert result.returncode == 2, result.stderr
    assert "not a readable Parquet file" in result.stderr and str(src) in result.stderr
    assert "Traceback" not in result.stderr and not out.exists()


def test_a_path_that_is_not_utf8_is_one_error_with_status_2(ndpkit, table: Path) -> None:
    """Polars takes only UTF-8 paths: the sort ended in a TypeError traceback, exit 1."""
    odd = table.parent / os.fsdecode(b"\xff.parquet")
    odd.write_bytes(table.read_bytes())
    for source, out in ((odd, table.parent / "out.parquet"), (table, odd.with_name("o\udcfe"))):
        result = ndpkit("sort", str(source), "--by", "mode", "--out", str(out))
        assert result.returncode == 2, result.stderr
        assert "not valid UTF-8" in result.stderr and "Traceback" not in result.stderr
        assert not out.exists()


def test_a_key_named_like_a_polars_pattern_sorts(ndpkit, tmp_path: Path) -> None:
    """'^mode$' is a Parquet column name like any other; Polars' pl.col reads it as a
    regular expression, and the sort ended in a traceback (exit status 1)."""
    source, out = tmp_path / "in.parquet", tmp_path / "out.parquet"
    modes = ["RAIL", "AIR", None, "SHIP", "AIR", "MAIL", "TRUCK", "FOB", "REG", "x"] * 3
    pq.write_table(pa.table({"rid": list(range(len(modes))), "^mode$": modes}), source)
    result = ndpkit("sort", str(source), "--by", "^mode$", "--out", str(out))
    assert result.returncode == 0, result.stderr
    assert pq.read_table(out).column("rid").to_pylist() == duckdb_rids(source, '"^mode$"')
