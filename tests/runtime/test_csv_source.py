"""CSV and TSV files as an import source: the records equal those of a .npy of the same
values and those an independent reader (Python's csv module) reads, and every bad file is
one error naming the file, the line and the column, with nothing written."""

from __future__ import annotations

import csv
import errno
import gzip
import io
import itertools
import json
import os
import re
from pathlib import Path

import numpy as np
import pytest

from ndpkit.errors import SpecError
from ndpkit.runtime import csv_source, dataset, import_dataset, open_dataset
from ndpkit.runtime.dataset import STAGING_MARKER

NAMES = [f"x{j}" for j in range(8)]


def points(n: int, seed: int) -> np.ndarray:
    """float32 points over many magnitudes and both signs (some print in scientific
    notation), as an app's records."""
    rng = np.random.default_rng(seed)
    scale = 10.0 ** rng.integers(-8, 9, (n, 8))
    return (rng.standard_normal((n, 8)) * scale).astype(np.float32)


def write_csv(
    path: Path,
    rows: list[list[str]],
    header: list[str],
    *,
    delimiter: str = ",",
    newline: str = "\n",
    quote_all: bool = False,
    trailing_newline: bool = True,
) -> Path:
    text = io.StringIO()
    quoting = csv.QUOTE_ALL if quote_all else csv.QUOTE_MINIMAL
    writer = csv.writer(text, delimiter=delimiter, lineterminator=newline, quoting=quoting)
    writer.writerow(header)
    writer.writerows(rows)
    data = text.getvalue() if trailing_newline else text.getvalue().removesuffix(newline)
    raw = data.encode()
    path.write_bytes(gzip.compress(raw, mtime=0) if path.name.endswith(".gz") else raw)
    return path


def as_text(values: np.ndarray) -> list[list[str]]:
    """Each float32 as its shortest repr (numpy's), which reads back to the same float32."""
    return [[repr(float(v)) if i % 3 else str(v) for i, v in enumerate(row)] for row in values]


def independent(path: Path, columns: list[str], delimiter: str = ",") -> np.ndarray:
    """The records as Python's csv module and float() read them (each value's float64
    rounded to float32: the values written here are float32s, read back exactly)."""
    opener = gzip.open if path.name.endswith(".gz") else open
    with opener(path, "rt", newline="", encoding="utf-8") as f:
        reader = csv.reader(f, delimiter=delimiter)
        header = next(reader)
        picks = [header.index(name) for name in columns]
        rows = [[float(row[i]) for i in picks] for row in reader if row]
    return np.array(rows, dtype=np.float32)


def nothing_beside(parent: Path, keep: set[str]) -> None:
    """No data set, staging directory or temporary file was left in `parent`."""
    assert {p.name for p in parent.iterdir()} == keep


def test_a_csv_gives_the_shards_a_npy_of_the_same_values_gives(tmp_path: Path) -> None:
    values = points(3001, seed=11)
    np.save(tmp_path / "p.npy", values)
    write_csv(tmp_path / "p.csv", as_text(values), NAMES)
    made = [
        import_dataset(tmp_path / f"p.{kind}", 3, tmp_path / kind, "knn8", shard_bytes=20_000)
        for kind in ("npy", "csv")
    ]
    npy, from_csv = (json.loads((d.path / "manifest.json").read_text()) for d in made)
    assert from_csv["shards"] == npy["shards"]  # records, offsets, sizes and CRCs alike
    assert len(npy["shards"]) > 3  # several shards a device
    assert {k: v for k, v in from_csv.items() if k not in ("shards", "source")} == {
        k: v for k, v in npy.items() if k not in ("shards", "source")
    }
    assert from_csv["source"].endswith("p.csv")
    np.testing.assert_array_equal(made[1].read_all(), values)
    open_dataset(tmp_path / "csv", verify=True)
    nothing_beside(tmp_path, {"p.npy", "p.csv", "npy", "csv"})  # the temporary .npy is gone


@pytest.mark.parametrize(
    ("name", "newline", "quote_all", "trailing_newline"),
    [
        ("p.csv", "\n", False, True),
        ("p.csv", "\r\n", True, False),
        ("p.csv", "\r\n", False, True),
        ("p.tsv", "\n", True, True),
        ("p.csv.gz", "\r\n", True, False),
        ("p.tsv.gz", "\n", False, True),
    ],
)
def test_records_are_what_an_independent_reader_reads(
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    name: str,
    newline: str,
    quote_all: bool,
    trailing_newline: bool,
) -> None:
    """Across many of pyarrow's blocks (4 KiB each here), with a text column the features
    are chosen around that holds delimiters, quotes and line breaks."""
    monkeypatch.setattr(csv_source, "BLOCK_BYTES", 4096)
    rng = np.random.default_rng(5)
    values = points(2000, seed=3)
    notes = ["plain", 'say "hi"', "a,b\tc", "two\nlines", "x\r\ny"]
    rows = [
        [f"{i}", notes[int(rng.integers(len(notes)))], *texts]
        for i, texts in enumerate(as_text(values))
    ]
    delimiter = "\t" if ".tsv" in name else ","
    path = write_csv(
        tmp_path / name,
        rows,
        ["id", "note", *NAMES],
        delimiter=delimiter,
        newline=newline,
        quote_all=quote_all,
        trailing_newline=trailing_newline,
    )
    chosen = NAMES[::-1]
    made = import_dataset(path, 4, tmp_path / "ds", "knn8", columns=chosen)
    expected = independent(path, chosen, delimiter)
    assert len(expected) == 2000
    np.testing.assert_array_equal(made.read_all(), expected)
    np.testing.assert_array_equal(made.read_all(), values[:, ::-1])


def test_spaces_signs_exponents_and_blank_lines_are_read(tmp_path: Path) -> None:
    path = tmp_path / "p.csv"
    path.write_text('a,b\n\n 1.5 ,-2e3\n+.25,"-1E-2"\n\n3,4.\n', encoding="utf-8")
    made = import_dataset(path, 1, tmp_path / "ds", "knn2")
    np.testing.assert_array_equal(
        made.read_all(), np.array([[1.5, -2000], [0.25, -0.01], [3, 4]], np.float32)
    )


def test_each_value_is_rounded_once_to_float32(tmp_path: Path) -> None:
    """Just past the midpoint of 1 and the next float32 is that next float32 (through
    float64 it was rounded onto the midpoint, then to even: 1); the midpoint itself is 1."""
    path = tmp_path / "p.csv"
    path.write_text("a,b\n1.00000005960464478,1.000000059604644775390625\n", encoding="utf-8")
    (record,) = import_dataset(path, 1, tmp_path / "ds", "knn2").read_all()
    assert record[0] == np.nextafter(np.float32(1), np.float32(2))
    assert record[1] == np.float32(1)


def test_a_byte_order_mark_is_no_part_of_the_first_name(tmp_path: Path) -> None:
    path = tmp_path / "p.csv"
    path.write_bytes(b"\xef\xbb\xbfa,b\n1,2\n")
    made = import_dataset(path, 1, tmp_path / "ds", "knn2", columns=["b", "a"])
    np.testing.assert_array_equal(made.read_all(), [[2, 1]])


# A quoted value over two lines and a blank line before the bad row: the line (6) is not
# pyarrow's row (4).
BEFORE = 'a,b,note\n1,2,"two\nlines"\n\n3,4,x\n'


@pytest.mark.parametrize(
    ("text", "message"),
    [
        (BEFORE + "5,x,y\n", "line 6, column 'b', holds 'x', which is not a number"),
        (BEFORE + "5,,y\n", "line 6, column 'b', is empty (a missing value)"),
        (BEFORE + '5,"",y\n', "line 6, column 'b', is empty (a missing value)"),
        (BEFORE + "5,6\n", "line 6 has 2 fields and the header 3"),
        (BEFORE + "5,6,y,z\n", "line 6 has 4 fields and the header 3"),
        (
            BEFORE + "5,6,y,\n",
            "line 6 has 4 fields and the header 3: every row needs a value in each column "
            "(this one ends in a delimiter, ',': if every row does, end the header in one too, "
            "and the empty last column is left out)",
        ),
        (BEFORE + "5,1e300,y\n", "line 6, column 'b', holds 1e300, a value beyond ±3.4e+38"),
        (BEFORE + "5,-1e39,y\n", "line 6, column 'b', holds -1e39, a value beyond ±3.4e+38"),
        (BEFORE + "5,1e400,y\n", "line 6, column 'b', holds 1e400, a value beyond"),
        (BEFORE + "5,-inf,y\n", "line 6, column 'b', holds -inf; the apps' kernels need finite"),
        (BEFORE + "5,NaN,y\n", "line 6, column 'b', holds NaN;"),
    ],
)
def test_a_bad_value_is_named_by_line_and_column(tmp_path: Path, text: str, message: str) -> None:
    path = tmp_path / "p.csv"
    path.write_text(text, encoding="utf-8")
    with pytest.raises(SpecError) as caught:
        import_dataset(path, 1, tmp_path / "ds", "knn2", columns=["a", "b"])
    assert caught.value.source == str(path)
    assert message in caught.value.detail
    nothing_beside(tmp_path, {"p.csv"})


@pytest.mark.parametrize(
    ("content", "message"),
    [
        (b"", "is empty"),
        (b"\n\n", "is empty"),
        (b"a,b\n", "has a header (a, b) but no rows"),
        (b"a,b\n\n", "has a header (a, b) but no rows"),
        (b"a,b", "holds one line, its header, and no rows"),
        (b"1,2\n3,4\n", "its first line (1, 2) holds numbers, not column names"),
        (b"a,b\n1\x002\n", "not a CSV file: it holds binary data (a NUL byte at byte 5)"),
        (b"\x93NUMPY\x01\x00", "not a CSV file: it is a .npy file"),
        (b"PAR1\x15\x04", "not a CSV file: it is a Parquet file"),
        (gzip.compress(b"a,b\n1,2\n", mtime=0), "it is gzip-compressed (a compressed CSV is read"),
        (b"caf\xe9,b\n1,2\n", "its first line is not UTF-8 text"),
        (b"a,b\n1,2\n3,4\n", "holds 2 rows, fewer than the 3 devices"),
        (b"a,b,c\n1,2,3\n", "3 columns (a, b, c) for app 'knn2', which needs 2 features"),
        (b"a,a\n1,2\n", "2 columns are named 'a'"),
        (
            b"a;b\r\n1,5;2\r\n",
            "first line (a;b) has no ',' but ';': a .csv file is read as separated by ','",
        ),
        (b"a;b\n1;2\n", "(commas in .csv, tabs in .tsv; a first line sep=; names another)"),
    ],
)
def test_a_file_that_gives_no_records_is_one_error(
    tmp_path: Path, content: bytes, message: str
) -> None:
    path = tmp_path / "p.csv"
    path.write_bytes(content)
    with pytest.raises(SpecError) as caught:
        import_dataset(path, 3, tmp_path / "ds", "knn2")
    assert caught.value.source == str(path)
    assert message in caught.value.detail
    nothing_beside(tmp_path, {"p.csv"})


def test_a_text_column_taken_by_default_says_columns_would_leave_it_out(tmp_path: Path) -> None:
    path = tmp_path / "p.csv"
    path.write_text("label,b\np,2\n", encoding="utf-8")
    with pytest.raises(SpecError) as caught:
        import_dataset(path, 1, tmp_path / "ds", "knn2")
    assert caught.value.source == str(path)  # the error names the file
    assert caught.value.detail == (
        "line 2, column 'label', holds 'p', which is not a number (without --columns, every "
        "column is taken: name the 2 feature columns)"
    )
    path.write_text("label,a,b\np,1,2\n", encoding="utf-8")
    made = import_dataset(path, 1, tmp_path / "ds", "knn2", columns=["a", "b"])
    np.testing.assert_array_equal(made.read_all(), [[1, 2]])


def test_columns_are_checked_as_for_a_table(tmp_path: Path) -> None:
    path = tmp_path / "p.csv"
    path.write_text("a,b,c\n1,2,3\n", encoding="utf-8")
    with pytest.raises(SpecError, match=r"no column 'z' \(it has: a, b, c\)"):
        import_dataset(path, 1, tmp_path / "ds", "knn2", columns=["a", "z"])
    with pytest.raises(SpecError, match="a column is named twice"):
        import_dataset(path, 1, tmp_path / "ds", "knn2", columns=["a", "a"])
    with pytest.raises(SpecError, match="must be a list of names"):
        import_dataset(path, 1, tmp_path / "ds", "knn2", columns="a,b")  # type: ignore[arg-type]
    made = import_dataset(path, 1, tmp_path / "ds", "knn2", columns=["c", " a"])
    np.testing.assert_array_equal(made.read_all(), [[3, 1]])


def test_columns_for_a_source_without_any_are_refused_naming_both_kinds(tmp_path: Path) -> None:
    np.save(tmp_path / "p.npy", np.zeros((4, 2), np.float32))
    with pytest.raises(SpecError, match=r"Parquet table .* or a CSV file \(.csv, .tsv\)"):
        import_dataset(tmp_path / "p.npy", 1, tmp_path / "ds", "knn2", columns=["a", "b"])


def test_an_image_app_is_refused_before_the_file_is_read(tmp_path: Path) -> None:
    path = tmp_path / "p.csv"
    path.write_text("a\n1\n", encoding="utf-8")
    with pytest.raises(SpecError, match=r"app 'sobel' has records of shape \(256, 256\)"):
        import_dataset(path, 1, tmp_path / "ds", "sobel")


def test_an_error_deep_in_the_file_names_its_line(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Past the first block, through gzip, and after records already parsed (into the
    temporary .npy, which goes): the line counts the lines of quoted values."""
    monkeypatch.setattr(csv_source, "BLOCK_BYTES", 4096)
    rows = [[f"{i}.5", f"{-i}", '"multi\nline"' if i % 7 == 0 else "n"] for i in range(3000)]
    rows[2500][1] = "inf"
    path = write_csv(tmp_path / "p.csv.gz", rows, ["a", "b", "note"])
    lines = 1 + 2500 + sum(1 for i in range(2500) if i % 7 == 0)  # header, rows, extra lines
    with pytest.raises(SpecError) as caught:
        import_dataset(path, 2, tmp_path / "ds", "knn2", columns=["a", "b"])
    assert caught.value.source == str(path)  # the error names the file
    assert caught.value.detail.startswith(f"line {lines + 1}, column 'b', holds +inf;")
    nothing_beside(tmp_path, {"p.csv.gz"})


def test_an_existing_target_is_refused_before_the_file_is_parsed(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    path = write_csv(tmp_path / "p.csv", [["1", "2"]], ["a", "b"])
    (tmp_path / "ds").mkdir()
    (tmp_path / "ds" / "mine.txt").write_text("keep", encoding="utf-8")

    def parse(*args: object) -> int:
        raise AssertionError("parsed")

    monkeypatch.setattr(csv_source, "_parse_into", parse)
    with pytest.raises(SpecError, match=r"not replacing it|overwrite"):
        import_dataset(path, 1, tmp_path / "ds", "knn2", overwrite=True)
    assert (tmp_path / "ds" / "mine.txt").exists()


def test_the_temporary_records_are_in_a_marked_staging_directory(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Marked, so that a killed run's is swept by the next (`remove_stale_staging`), and
    removed when the run fails."""
    path = write_csv(tmp_path / "p.csv", [["1", "2"], ["3", "x"]], ["a", "b"])
    seen: list[Path] = []
    parse = csv_source._parse_into

    def watched(source: object, kernel: object, npy: Path, progress: object) -> int:
        seen.append(npy)
        assert (npy.parent / STAGING_MARKER).is_file()
        assert npy.parent.name.startswith("ds.tmp-")
        return parse(source, kernel, npy, progress)  # type: ignore[arg-type]

    monkeypatch.setattr(csv_source, "_parse_into", watched)
    with pytest.raises(SpecError, match="line 3"):
        import_dataset(path, 1, tmp_path / "ds", "knn2")
    assert seen and not seen[0].parent.exists()
    nothing_beside(tmp_path, {"p.csv"})


def test_a_failed_write_of_the_temporary_records_names_the_data_set(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A full disk while the text is parsed: one error naming the data set, and neither the
    staging directory nor the parents made for the data set are left."""

    class Full(dataset._OutputFile):
        def write(self, data: object) -> None:
            with self.errors():
                raise OSError(errno.ENOSPC, "No space left on device")

    monkeypatch.setattr(csv_source, "_OutputFile", Full)
    path = write_csv(tmp_path / "p.csv", [["1", "2"]], ["a", "b"])
    target = tmp_path / "new" / "deeper" / "ds"
    with pytest.raises(SpecError) as caught:
        import_dataset(path, 1, target, "knn2")
    assert caught.value.source == str(target)
    assert caught.value.detail.startswith("cannot write the temporary copy of its records (")
    assert caught.value.detail.endswith("No space left on device; nothing was written")
    nothing_beside(tmp_path, {"p.csv"})


def test_a_damaged_gzip_file_is_one_error(tmp_path: Path) -> None:
    raw = gzip.compress(("a,b\n" + "1.5,2.5\n" * 40_000).encode(), mtime=0)
    path = tmp_path / "p.csv.gz"
    path.write_bytes(raw[: len(raw) // 2])
    with pytest.raises(SpecError) as caught:
        import_dataset(path, 1, tmp_path / "ds", "knn2")
    assert caught.value.source == str(path)
    assert "gzip" in caught.value.detail
    nothing_beside(tmp_path, {"p.csv.gz"})


def test_a_file_written_to_while_it_is_imported_is_an_error_not_a_mixture(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(csv_source, "BLOCK_BYTES", 4096)
    path = write_csv(tmp_path / "p.csv", [[f"{i}", "1"] for i in range(5000)], ["a", "b"])
    convert = csv_source.batch_to_records

    def appending(batch: object, dtype: np.dtype) -> np.ndarray:
        with path.open("a", encoding="utf-8") as f:
            f.write("7,7\n")
        return convert(batch, dtype)

    monkeypatch.setattr(csv_source, "batch_to_records", appending)
    with pytest.raises(SpecError, match=r"changed while it was read \(it .*\); nothing was"):
        import_dataset(path, 1, tmp_path / "ds", "knn2")
    nothing_beside(tmp_path, {"p.csv"})


def test_columns_name_a_header_typed_with_spaces_after_its_commas(tmp_path: Path) -> None:
    path = tmp_path / "p.csv"
    path.write_text("x, y, z\n1, 2, 3\n", encoding="utf-8")
    made = import_dataset(path, 1, tmp_path / "ds", "knn2", columns=["z", "x"])
    np.testing.assert_array_equal(made.read_all(), [[3, 1]])
    with pytest.raises(SpecError, match=r"no column 'w' \(it has: x,  y,  z\)"):
        import_dataset(path, 1, tmp_path / "ds2", "knn2", columns=["w", "x"])


# pandas is not installed here: these are the files it writes, by hand. `df.to_csv(path)`
# writes the index as a first column with an empty name; `pd.read_csv` names that column
# `Unnamed: 0`, which `to_csv` writes again as a column (before a new index, or without one
# with `index=False`); a MultiIndex of unnamed levels is a column each.
@pytest.mark.parametrize(
    "text",
    [
        ",x,y\n0,1.5,2.0\n1,3.0,4.0\n",
        ",Unnamed: 0,x,y\n0,0,1.5,2.0\n1,1,3.0,4.0\n",
        "Unnamed: 0,x,y\n0,1.5,2.0\n1,3.0,4.0\n",
        ",,x,y\na,0,1.5,2.0\nb,1,3.0,4.0\n",
        # A delimiter ending every line made an unnamed empty last column, taken as a
        # feature: "3 columns (x, y, )".
        "x,y,\n1.5,2,\n3,4,\n",
        "x,y,,\n1.5,2,,\n3,4,,\n",
        "x,y,Unnamed: 2\n1.5,2,\n3,4,\n",
        ",x,y,\n0,1.5,2,\n1,3,4,\n",
        "sep=;\nx;y;\n1.5;2;\n3;4;\n",
    ],
)
def test_a_pandas_index_and_a_delimiter_ending_every_line_are_no_features(
    tmp_path: Path, text: str
) -> None:
    path = tmp_path / "p.csv"
    path.write_text(text, encoding="utf-8")
    made = import_dataset(path, 1, tmp_path / "ds", "knn2")
    np.testing.assert_array_equal(made.read_all(), [[1.5, 2], [3, 4]])
    made = import_dataset(path, 1, tmp_path / "ds2", "knn2", columns=["y", "x"])
    np.testing.assert_array_equal(made.read_all(), [[2, 1.5], [4, 3]])


def test_a_pandas_index_can_still_be_chosen_and_is_named_when_the_count_is_wrong(
    tmp_path: Path,
) -> None:
    path = tmp_path / "p.csv"
    path.write_text("Unnamed: 0,x,y,z\n7,1.5,2.0,3\n", encoding="utf-8")
    made = import_dataset(path, 1, tmp_path / "ds", "knn2", columns=["Unnamed: 0", "y"])
    np.testing.assert_array_equal(made.read_all(), [[7, 2]])
    with pytest.raises(SpecError) as caught:
        import_dataset(path, 1, tmp_path / "ds2", "knn2")
    assert caught.value.source == str(path)  # the error names the file
    assert caught.value.detail.startswith(
        "3 columns (x, y, z) for app 'knn2', which needs 2 features ('Unnamed: 0', the pandas "
        "index, left out by default)"
    )


def test_a_column_with_no_name_after_the_first_is_a_feature(tmp_path: Path) -> None:
    path = tmp_path / "p.csv"
    path.write_text("x,\n1.5,2\n", encoding="utf-8")
    made = import_dataset(path, 1, tmp_path / "ds", "knn2")
    np.testing.assert_array_equal(made.read_all(), [[1.5, 2]])


def test_an_unnamed_last_column_empty_at_first_must_stay_empty(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Taken for a trailing delimiter from the first block of rows, a value further on
    would have been dropped: it is an error naming its line, and nothing is written."""
    monkeypatch.setattr(csv_source, "BLOCK_BYTES", 4096)
    lines = ["sep=,", "x,y,"] + [f"{i},{i + 1}," for i in range(3000)] + ["1,2,7"]
    path = tmp_path / "p.csv"
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    with pytest.raises(SpecError) as caught:
        import_dataset(path, 1, tmp_path / "ds", "knn2")
    assert caught.value.source == str(path)  # the error names the file
    assert caught.value.detail == (
        "line 3003 holds '7' in column #3, which has no name and was empty until then: an "
        "unnamed column at the header's end, empty in the first rows, is taken for a "
        "delimiter ending every line and left out; name the column in the header to read it"
    )
    assert sorted(p.name for p in tmp_path.iterdir()) == ["p.csv"]


def test_a_bad_value_beside_a_pandas_index_says_the_index_is_left_out(tmp_path: Path) -> None:
    path = tmp_path / "p.csv"
    path.write_text(",x,y\n0,1.5,oops\n", encoding="utf-8")
    with pytest.raises(SpecError) as caught:
        import_dataset(path, 1, tmp_path / "ds", "knn2")
    assert caught.value.source == str(path)  # the error names the file
    assert caught.value.detail == (
        "line 2, column 'y', holds 'oops', which is not a number (without --columns, every "
        "column but the unnamed first (a pandas index) is taken: name the 2 feature columns)"
    )


@pytest.mark.parametrize(
    ("name", "content"),
    [
        ("p.csv", b"sep=,\nx,y\n1.5,2\n3,4\n"),
        ("p.csv", b"sep=;\r\nx;y\r\n1.5;2\r\n3;4\r\n"),
        ("p.csv", b"\xef\xbb\xbfsep=;\r\nx;y\r\n1.5;2\r\n\r\n3;4\r\n"),
        ("p.csv", b"sep=\t\nx\ty\n1.5\t2\n3\t4\n"),
        ("p.tsv", b"sep=,\nx,y\n1.5,2\n3,4\n"),
        ("p.csv.gz", gzip.compress(b"sep=;\nx;y\n1.5;2\n3;4\n", mtime=0)),
    ],
)
def test_a_first_line_sep_names_the_delimiter(tmp_path: Path, name: str, content: bytes) -> None:
    """As Excel reads and some exports write it: the line is no header."""
    path = tmp_path / name
    path.write_bytes(content)
    made = import_dataset(path, 1, tmp_path / "ds", "knn2", columns=["y", "x"])
    np.testing.assert_array_equal(made.read_all(), [[2, 1.5], [4, 3]])


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ("sep=;\nx;y\n1;2\n3;z\n", "line 4, column 'y', holds 'z', which is not a number"),
        ("sep=;\nx;y\n1;2\n3;4;5\n", "line 4 has 3 fields and the header 2"),
        ('sep=;\nx;y;n\n1;2;"a\nb"\n3;inf;c\n', "line 5, column 'y', holds +inf;"),
        (
            "sep=;\nx;y\n1,5;2,25\n",
            "line 3, column 'x', holds '1,5', which is not a number: the decimal mark must be "
            "a point, not a comma",
        ),
        ("sep=;\n", "holds only a first line naming its delimiter (sep=;)"),
        ("sep=;\r\n\r\n", "holds only a first line naming its delimiter (sep=;)"),
        ("sep=;\nx;y", "holds its sep= line and header and no rows"),
        ("sep=;\n1;2\n", "its header (the line after sep=) (1, 2) holds numbers"),
    ],
)
def test_errors_after_a_sep_line_count_it(tmp_path: Path, text: str, message: str) -> None:
    path = tmp_path / "p.csv"
    path.write_text(text, encoding="utf-8")
    with pytest.raises(SpecError) as caught:
        import_dataset(path, 1, tmp_path / "ds", "knn2", columns=["x", "y"])
    assert caught.value.source == str(path)  # the error names the file
    assert message in caught.value.detail
    nothing_beside(tmp_path, {"p.csv"})


def test_an_error_deep_in_a_file_with_a_sep_line_names_its_line(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Past pyarrow's first block (4 KiB here), where its row counts are its own."""
    monkeypatch.setattr(csv_source, "BLOCK_BYTES", 4096)
    rows = [[f"{i}.5", f"{-i}"] for i in range(3000)]
    rows[2500][1] = "x"
    text = io.StringIO()
    csv.writer(text, delimiter=";", lineterminator="\n").writerows([["a", "b"], *rows])
    path = tmp_path / "p.csv"
    path.write_text("sep=;\n" + text.getvalue(), encoding="utf-8")
    with pytest.raises(SpecError) as caught:
        import_dataset(path, 1, tmp_path / "ds", "knn2")
    assert caught.value.source == str(path)  # the error names the file
    assert caught.value.detail.startswith("line 2503, column 'b', holds 'x', which is not")


@pytest.mark.parametrize("value", ["1,5", "1,000.5", "-1,234,567"])
def test_a_quoted_decimal_comma_or_thousands_separator_is_said(tmp_path: Path, value: str) -> None:
    path = tmp_path / "p.csv"
    path.write_text(f'x,y\n"{value}",2\n', encoding="utf-8")
    with pytest.raises(SpecError) as caught:
        import_dataset(path, 1, tmp_path / "ds", "knn2")
    assert caught.value.source == str(path)  # the error names the file
    assert caught.value.detail == (
        f"line 2, column 'x', holds '{value}', which is not a number: the decimal mark must be "
        "a point, not a comma (and a number has no thousands separators)"
    )


@pytest.mark.parametrize("name", ["p.csv", "p.csv.gz"])
def test_progress_is_the_bytes_read_then_the_bytes_written(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, name: str
) -> None:
    """Two phases, each from (0, total) to (total, total) without going back: the file's
    bytes (compressed, for a .gz) as pyarrow reads its blocks (4 KiB here), said 8 KiB
    apart at most, then the record bytes as the shards are written."""
    monkeypatch.setattr(csv_source, "BLOCK_BYTES", 4096)
    monkeypatch.setattr(csv_source, "PROGRESS_BYTES", 8192)
    rng = np.random.default_rng(8)
    # Random digits, so that the .gz is not much smaller than the text: many blocks of it.
    values = rng.integers(0, 10**8, (60_000, 2)).astype(np.float32)
    path = write_csv(tmp_path / name, [[f"{int(v)}" for v in row] for row in values], ["a", "b"])
    size = path.stat().st_size
    calls: list[tuple[int, int]] = []
    made = dataset.import_dataset(
        path,
        3,
        tmp_path / "ds",
        "knn2",
        shard_bytes=20_000,
        progress=lambda done, total: calls.append((done, total)),
    )
    np.testing.assert_array_equal(made.read_all(), values)
    end = calls.index((size, size))
    parse, write = calls[: end + 1], calls[end + 1 :]
    record_bytes = values.nbytes
    assert {total for _, total in parse} == {size}
    assert {total for _, total in write} == {record_bytes}
    for phase, total in ((parse, size), (write, record_bytes)):
        done = [d for d, _ in phase]
        assert done[0] == 0 and done[-1] == total
        assert done == sorted(done)
    steps = [b - a for a, b in itertools.pairwise(d for d, _ in parse)]
    assert len(parse) > 5  # said as it is read, not only at its ends
    assert all(step >= 8192 for step in steps[:-1])
    assert len(write) > 3  # a call a shard


@pytest.mark.parametrize(
    ("text", "message"),
    [
        # R's write.csv: quoted names, row names under "" (left out as a pandas index is)
        ('"","x","y"\n"1",1.5,2\n"2",NA,3\n', "line 3, column 'x', holds 'NA', a missing value;"),
        ("x,y\n1.5,#N/A\n", "line 2, column 'y', holds '#N/A', a missing value;"),
        ("x,y\n1.5, NULL \n", "line 2, column 'y', holds 'NULL', a missing value;"),
        ("x,y\n?,2\n", "line 2, column 'x', holds '?', a missing value;"),
    ],
)
def test_a_missing_value_as_exports_write_it_is_said_to_be_one(
    tmp_path: Path, text: str, message: str
) -> None:
    path = tmp_path / "p.csv"
    path.write_text(text, encoding="utf-8")
    with pytest.raises(SpecError) as caught:
        import_dataset(path, 1, tmp_path / "ds", "knn2")
    assert caught.value.source == str(path)  # the error names the file
    assert caught.value.detail.startswith(message)
    assert caught.value.detail.endswith("drop or fill the missing values first")


def test_r_write_csv_is_read(tmp_path: Path) -> None:
    path = tmp_path / "p.csv"
    path.write_text('"","x","y"\n"1",1.5,2\n"2",-3,4e-2\n', encoding="utf-8")
    made = import_dataset(path, 1, tmp_path / "ds", "knn2")
    np.testing.assert_array_equal(made.read_all(), np.array([[1.5, 2], [-3, 0.04]], np.float32))


@pytest.mark.parametrize(
    "content",
    [
        "x\ty\r\n1.5\t2\r\n".encode("utf-16"),  # as Excel's "Unicode Text" saves: a BOM
        "x\ty\r\n1.5\t2\r\n".encode("utf-16-le"),
        "x\ty\r\n1.5\t2\r\n".encode("utf-16-be"),
    ],
)
def test_utf16_text_is_said_to_be_utf16(tmp_path: Path, content: bytes) -> None:
    path = tmp_path / "p.tsv"
    path.write_bytes(content)
    with pytest.raises(SpecError) as caught:
        import_dataset(path, 1, tmp_path / "ds", "knn2")
    assert caught.value.source == str(path)  # the error names the file
    assert caught.value.detail.startswith("not a CSV file it reads: it is UTF-16 text")
    nothing_beside(tmp_path, {"p.tsv"})


def test_a_header_that_is_not_utf8_says_how_to_save_it(tmp_path: Path) -> None:
    path = tmp_path / "p.csv"
    path.write_bytes("Größe,y\n1,2\n".encode("cp1252"))
    with pytest.raises(SpecError, match=r"not UTF-8 text .*: save it as UTF-8 \(Excel"):
        import_dataset(path, 1, tmp_path / "ds", "knn2")


def test_text_not_utf8_in_a_column_left_out_is_no_error(tmp_path: Path) -> None:
    """Excel's "CSV" (Windows-1252) with an accented label beside the features."""
    path = tmp_path / "p.csv"
    path.write_bytes("x,y,label\n1.5,2,café\n".encode("cp1252"))
    made = import_dataset(path, 1, tmp_path / "ds", "knn2", columns=["x", "y"])
    np.testing.assert_array_equal(made.read_all(), [[1.5, 2]])


def test_a_directory_that_refuses_the_data_set_is_said_so_not_its_temporary_copy(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A read-only directory refuses the staging directory before any copy is written: the
    error named the data set's own path as "the temporary copy of its records"."""
    path = write_csv(tmp_path / "p.csv", [["1", "2"]], ["a", "b"])
    target = tmp_path / "ds"
    real_mkdir = Path.mkdir

    def read_only(self: Path, *args: object, **kwargs: object) -> None:
        if self.parent == tmp_path:
            raise OSError(errno.EROFS, "Read-only file system", str(self))
        real_mkdir(self, *args, **kwargs)

    monkeypatch.setattr(Path, "mkdir", read_only)
    with pytest.raises(SpecError) as caught:
        import_dataset(path, 1, target, "knn2")
    assert caught.value.source == str(target)
    assert caught.value.detail == (
        "cannot create the data set directory: Read-only file system; nothing was written"
    )
    nothing_beside(tmp_path, {"p.csv"})


@pytest.mark.parametrize("kind", ["csv", "npy"])
def test_records_that_cannot_be_mapped_are_said_so_naming_the_input(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, kind: str
) -> None:
    """Under `ulimit -v` mapping the records fails with ENOMEM: that was "not a readable .npy
    file", and for a CSV file named the temporary copy, removed by then, as the file."""
    if kind == "csv":
        src = write_csv(tmp_path / "p.csv", [["1", "2"], ["3", "4"]], ["a", "b"])
    else:
        src = tmp_path / "p.npy"
        np.save(src, np.ones((2, 2), np.float32))
    real_load = np.load

    def no_address_space(file: object, *args: object, **kwargs: object) -> object:
        if kwargs.get("mmap_mode"):
            raise OSError(errno.ENOMEM, "Cannot allocate memory")
        return real_load(file, *args, **kwargs)  # type: ignore[call-overload]

    monkeypatch.setattr(dataset.np, "load", no_address_space)
    with pytest.raises(SpecError) as caught:
        import_dataset(src, 1, tmp_path / "ds", "knn2")
    assert caught.value.source == str(src)
    assert "cannot map it (Cannot allocate memory)" in caught.value.detail
    assert "ulimit -v" in caught.value.detail
    nothing_beside(tmp_path, {src.name})


class _Disk:
    """statvfs of a file system with `free` bytes free in 1-byte blocks."""

    def __init__(self, free: int):
        self.f_bavail, self.f_frsize, self.f_blocks = free, 1, 10**9


def test_no_room_for_the_data_set_counts_the_temporary_copy_of_the_records(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The free space is checked once the text is parsed, with the temporary .npy of its
    records on the disk: on a 1 MiB file system, an import of 938 KiB of records was refused
    with "has 76 KiB free" alone, where `df` showed 1 MiB free before and after the run."""
    values = points(500, seed=5)
    path = write_csv(tmp_path / "p.csv", as_text(values), NAMES)
    np.save(tmp_path / "p.npy", values)
    record_bytes = values.nbytes
    monkeypatch.setattr(dataset.os, "statvfs", lambda path: _Disk(record_bytes - 1))
    with pytest.raises(SpecError) as caught:
        import_dataset(path, 2, tmp_path / "ds", "knn8")
    detail = caught.value.detail
    assert "needs at least " in detail and f"({record_bytes:,} bytes) but" in detail
    copy = r"free after the temporary copy of its records, [^(]*\(([\d,]+) bytes\)"
    held = re.search(copy, detail)
    assert held is not None, detail
    # The copy is a .npy of the records: a 4 KiB header (`npy_header`) and the records.
    assert int(held[1].replace(",", "")) == 4096 + record_bytes
    assert "a CSV import needs room for its records twice" in detail
    nothing_beside(tmp_path, {"p.csv", "p.npy"})
    # A .npy is split where it is: there is no copy to speak of.
    with pytest.raises(SpecError) as npy:
        import_dataset(tmp_path / "p.npy", 2, tmp_path / "ds", "knn8")
    assert "temporary copy" not in npy.value.detail
    assert npy.value.detail.endswith(f"({record_bytes - 1:,} bytes) free; nothing was written")


@pytest.mark.parametrize(("name", "at_row"), [("p.csv", 0), ("p.csv", 700), ("p.csv.gz", 1500)])
def test_a_row_longer_than_a_block_is_read(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, name: str, at_row: int
) -> None:
    """A note column beside the features whose one value (a document, a JSON blob) is longer
    than pyarrow's block of text (4 KiB here, 1 MiB in use) refused the whole file with
    "not a readable CSV file (straddling object straddles two block boundaries (try to
    increase block size?))". The first row, where the header's block is parsed, too. The
    parse's progress still never goes back."""
    monkeypatch.setattr(csv_source, "BLOCK_BYTES", 4096)
    values = points(2000, seed=9)
    notes = ["short"] * len(values)
    notes[at_row] = "a long note,\n" * 3000  # 39 KB: more than 8 blocks, fewer than 64
    rows = [[note, *texts] for note, texts in zip(notes, as_text(values), strict=True)]
    path = write_csv(tmp_path / name, rows, ["note", *NAMES])
    calls: list[tuple[int, int]] = []
    made = import_dataset(
        path, 3, tmp_path / "ds", "knn8", columns=NAMES, progress=lambda *c: calls.append(c)
    )
    expected = independent(path, NAMES)
    assert len(expected) == len(values)
    np.testing.assert_array_equal(made.read_all(), expected)
    np.testing.assert_array_equal(made.read_all(), values)
    done = [d for d, total in calls if total == path.stat().st_size]
    assert done[0] == 0 and done[-1] == path.stat().st_size and done == sorted(done)
    nothing_beside(tmp_path, {name, "ds"})


def test_a_row_longer_than_the_largest_block_is_refused_saying_so(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A quote never closed makes the rest of the file one value: the blocks stop growing
    at `MAX_BLOCK_BYTES` (32 KiB here), and the error says what is wrong, not pyarrow's
    "try to increase block size?"."""
    monkeypatch.setattr(csv_source, "BLOCK_BYTES", 4096)
    monkeypatch.setattr(csv_source, "MAX_BLOCK_BYTES", 32768)
    rows = [[f"{i}", f"{i / 2}"] for i in range(10_000)]
    path = write_csv(tmp_path / "p.csv", rows, ["a", "b"])
    text = path.read_text()
    path.write_text(text.replace("\n5,2.5\n", '\n5,"2.5\n', 1))
    with pytest.raises(SpecError) as caught:
        import_dataset(path, 1, tmp_path / "ds", "knn2")
    assert caught.value.source == str(path)
    assert caught.value.detail.startswith("holds a row longer than ")
    assert "a quoted value that is never closed" in caught.value.detail
    assert "straddl" not in caught.value.detail
    nothing_beside(tmp_path, {"p.csv"})


def test_an_error_after_a_field_longer_than_pythons_csv_limit_names_its_line(
    tmp_path: Path,
) -> None:
    """The line of an error is found with Python's csv module, whose fields stop at 128 KiB
    unless told otherwise: after a 204 KB note the error named "row 5 (the first line is
    row 1; …)" where the file's line is 17,004. The module's limit is as it was afterwards."""
    limit = csv.field_size_limit()
    note = "a long note\n" * 17_000  # 204 KB, on 17,000 lines
    rows = [["1", "2", "short"], ["3", "4", note], ["5", "6", "x"], ["7", "q", "y"]]
    path = write_csv(tmp_path / "p.csv", rows, ["a", "b", "note"])
    line = 1 + path.read_text()[: path.read_text().index("7,q")].count("\n")
    assert line == 1 + 1 + 1 + 17_000 + 1 + 1  # header, rows 1 to 3 (the note's lines)
    with pytest.raises(SpecError) as caught:
        import_dataset(path, 1, tmp_path / "ds", "knn2", columns=["a", "b"])
    assert caught.value.detail.startswith(f"line {line}, column 'b', holds 'q'")
    assert csv.field_size_limit() == limit


@pytest.mark.parametrize("name", [b"caf\xe9.csv", b"caf\xe9.tsv.gz"])
def test_a_file_whose_name_is_not_utf8_is_named_not_a_traceback(
    tmp_path: Path, name: bytes
) -> None:
    """pyarrow opens a file by its path, which must be UTF-8: `caf\\xe9.csv` (Latin-1, as
    an old archive names it) ended the import in a UnicodeEncodeError traceback (exit 1),
    as a Parquet table's such path once did."""
    written = write_csv(tmp_path / name.decode("latin-1"), [["1", "2"]], ["a", "b"])
    odd = os.fsdecode(os.fsencode(tmp_path) + b"/" + name)
    os.rename(written, odd)
    with pytest.raises(SpecError, match="its path is not valid UTF-8") as caught:
        import_dataset(odd, 1, tmp_path / "ds", "knn2")
    assert caught.value.source == odd
    assert sorted(os.listdir(os.fsencode(tmp_path))) == [name]


@pytest.mark.parametrize("name", ["p.csv", "p.csv.gz"])
def test_a_header_longer_than_a_block_is_read(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, name: str
) -> None:
    """pyarrow says "Empty CSV file or block" of a first line longer than its block (4 KiB
    here, 1 MiB in use): a CSV of 150,000 columns (a 2 MB header) was "holds one line, its
    header, and no rows". A one-line file is still said to be one."""
    monkeypatch.setattr(csv_source, "BLOCK_BYTES", 4096)
    header = [f"column_{j:05d}" for j in range(1000)]  # 13 KB
    rng = np.random.default_rng(2)
    values = rng.integers(-99, 99, (50, len(header))).astype(np.float32)
    path = write_csv(tmp_path / name, [[str(int(v)) for v in row] for row in values], header)
    chosen = ["column_00007", "column_00999"]
    made = import_dataset(path, 2, tmp_path / "ds", "knn2", columns=chosen)
    np.testing.assert_array_equal(made.read_all(), independent(path, chosen))
    np.testing.assert_array_equal(made.read_all(), values[:, [7, 999]])
    one = tmp_path / "one.csv"
    one.write_text(",".join(header))
    with pytest.raises(SpecError, match="holds one line, its header, and no rows"):
        import_dataset(one, 1, tmp_path / "ds1", "knn2", columns=chosen)
