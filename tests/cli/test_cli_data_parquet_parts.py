"""`ndpkit data import DIR` of a Parquet table written as part files, end to end: tpchgen-cli's
`--parts` output imported as its single-file output is, evaluated, and bad parts as exit 2."""

from __future__ import annotations

import json
import subprocess
from pathlib import Path

import numpy as np
import pyarrow as pa
import pyarrow.parquet as pq
import pytest
from cli_errors import one_error_line

from ndpkit.runtime import open_dataset
from ndpkit.tpc.tpch import find_tpchgen

FEATURES = "l_orderkey,l_partkey,l_suppkey,l_linenumber,l_quantity,l_extendedprice,l_discount,l_tax"


@pytest.fixture(scope="module")
def lineitem(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, Path]:
    """TPC-H lineitem at SF 0.01 as tpchgen-cli writes it with `--parts 12`
    (lineitem/lineitem.1.parquet … lineitem.12.parquet) and as one file."""
    root = tmp_path_factory.mktemp("tpch")
    tool = str(find_tpchgen())
    for out, parts in ((root / "parts", ["--parts", "12"]), (root / "one", [])):
        args = [tool, "parquet", "-s", "0.01", "--tables", "lineitem", "-o", str(out), *parts]
        subprocess.run(args, check=True, capture_output=True, timeout=120)
    assert len(list((root / "parts" / "lineitem").glob("lineitem.*.parquet"))) == 12
    return root / "parts" / "lineitem", root / "one" / "lineitem.parquet"


def test_tpchgen_parts_import_as_its_single_file_and_evaluate(
    ndpkit, tmp_path: Path, lineitem: tuple[Path, Path]
) -> None:
    """The parts are numbered 1 … 12 without padding: in name order, lineitem.10 came
    second and the rows were out of order."""
    parts, one = lineitem
    imported = []
    for name, src in (("from-parts", parts), ("from-one", one)):
        args = ("data", "import", str(src), "--app", "knn8", "--columns", FEATURES)
        result = ndpkit(*args, "--devices", "3", "-o", str(tmp_path / name), "-f", "json")
        assert result.returncode == 0, result.stderr
        imported.append(json.loads(result.stdout)["dataset"])
    assert imported[0]["records"] == imported[1]["records"] == pq.read_metadata(one).num_rows
    assert imported[0]["shard_format"] == "parquet"
    assert imported[0]["columns"] == FEATURES.split(",")
    from_parts = open_dataset(tmp_path / "from-parts").read_all()
    np.testing.assert_array_equal(from_parts, open_dataset(tmp_path / "from-one").read_all())
    assert np.all(np.diff(from_parts[:, 0]) >= 0)  # l_orderkey ascends through the parts

    result = ndpkit(
        "evaluate", "knn8", "--data", str(tmp_path / "from-parts"), "--workers", "1", "-f", "json"
    )
    assert result.returncode == 0, result.stderr
    (app,) = json.loads(result.stdout)["apps"]
    assert app["app"] == "knn8" and app["verified"]


def test_a_part_of_another_column_type_is_imported(ndpkit, tmp_path: Path) -> None:
    src = tmp_path / "t.parquet"
    src.mkdir()
    for i, kind in enumerate([pa.float64(), pa.float64(), pa.int64()]):
        table = pa.table({"a": pa.array([1 + 2 * i, 2 + 2 * i], kind), "b": pa.array([3.0, 4.0])})
        pq.write_table(table, src / f"part-{i:05d}.parquet")
    args = ("data", "import", str(src), "--app", "knn2", "-o", str(tmp_path / "ds"))
    result = ndpkit(*args, "--devices", "2")
    assert result.returncode == 0, result.stderr
    imported = open_dataset(tmp_path / "ds").read_all()
    np.testing.assert_array_equal(imported[:, 0], np.arange(1, 7, dtype=np.float32))


def test_a_directory_of_no_parts_is_one_error_line(ndpkit, tmp_path: Path) -> None:
    src = tmp_path / "t.parquet"
    src.mkdir()
    (src / "_SUCCESS").touch()
    args = ("data", "import", str(src), "--app", "knn2", "-o", str(tmp_path / "ds"))
    line = one_error_line(ndpkit(*args, "--devices", "2", "-f", "json"))
    assert line.startswith(f"error: {src}: holds no parts of a Parquet table (.parquet or .pq")
    assert sorted(p.name for p in tmp_path.iterdir()) == ["t.parquet"]
