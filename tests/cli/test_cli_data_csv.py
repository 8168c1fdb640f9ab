"""`ndpkit data import x.csv` end to end: the summary, a run of `evaluate` on what it made,
and a bad file as one error line naming the file and the line, exit 2, nothing written."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
from cli_errors import one_error_line

from ndpkit.runtime import open_dataset


def write_points(path: Path, n: int, seed: int) -> np.ndarray:
    """n float32 points of 8 features after an id and a label column, as a spreadsheet
    exports them (CRLF, quoted labels)."""
    values = np.random.default_rng(seed).standard_normal((n, 8)).astype(np.float32)
    lines = ["id,label," + ",".join(f"f{j}" for j in range(8))]
    lines += [
        f'{i},"p, {i}",' + ",".join(map(repr, map(float, row))) for i, row in enumerate(values)
    ]
    path.write_text("\r\n".join(lines) + "\r\n", encoding="utf-8")
    return values


def test_import_a_csv_then_evaluate_it(ndpkit, tmp_path: Path) -> None:
    values = write_points(tmp_path / "points.csv", 4000, seed=2)
    out = tmp_path / "knn8"
    columns = ",".join(f"f{j}" for j in range(8))
    args = ("data", "import", str(tmp_path / "points.csv"), "--app", "knn8", "-o", str(out))
    result = ndpkit(*args, "--columns", columns, "--devices", "3", "-f", "json")
    assert result.returncode == 0, result.stderr
    summary = json.loads(result.stdout)["dataset"]
    assert summary["records"] == 4000 and summary["devices"] == 3
    assert summary["shard_format"] == "npy"
    np.testing.assert_array_equal(open_dataset(out, verify=True).read_all(), values)
    run = ndpkit("evaluate", "knn8", "--data", str(out), "--workers", "1", "-f", "json")
    assert run.returncode == 0, run.stderr
    (app,) = json.loads(run.stdout)["apps"]
    assert app["app"] == "knn8" and app["verified"] is True


def test_a_bad_csv_is_one_error_line_and_nothing_is_written(ndpkit, tmp_path: Path) -> None:
    source = tmp_path / "points.csv"
    source.write_text("a,b\n1,2\n3,oops\n", encoding="utf-8")
    args = ("data", "import", str(source), "--app", "knn2", "-o", str(tmp_path / "ds"))
    line = one_error_line(ndpkit(*args, "--devices", "1"))
    assert line == (
        f"error: {source}: line 3, column 'b', holds 'oops', which is not a number (without "
        "--columns, every column is taken: name the 2 feature columns)"
    )
    assert [p.name for p in tmp_path.iterdir()] == ["points.csv"]
