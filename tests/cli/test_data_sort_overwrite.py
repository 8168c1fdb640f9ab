"""`ndpkit sort --out` replaces an existing output only with --overwrite, as `ndpkit data
generate` and `ndpkit data tpch` do."""

from __future__ import annotations

from pathlib import Path

import pyarrow as pa
import pyarrow.parquet as pq
import pytest


@pytest.fixture
def table(tmp_path: Path) -> Path:
    path = tmp_path / "in.parquet"
    pq.write_table(pa.table({"k": [3, 1, 2]}), path)
    return path


def test_an_existing_file_is_kept_without_overwrite(ndpkit, table: Path, tmp_path: Path) -> None:
    out = tmp_path / "out.parquet"
    out.write_bytes(b"an earlier result")
    result = ndpkit("sort", str(table), "--by", "k", "--out", str(out))
    assert result.returncode == 2, result.stderr
    assert f"{out}: --out: already exists; pass --overwrite to replace it" in result.stderr
    assert out.read_bytes() == b"an earlier result"
    result = ndpkit("sort", str(table), "--by", "k", "--out", str(out), "--overwrite")
    assert result.returncode == 0, result.stderr
    assert pq.read_table(out).column("k").to_pylist() == [1, 2, 3]


def test_earlier_partitions_are_kept_without_overwrite(ndpkit, table: Path, tmp_path: Path) -> None:
    out = tmp_path / "parts"
    args = ["sort", str(table), "--by", "k", "--out", str(out), "--devices", "2", "--no-merge"]
    assert ndpkit(*args).returncode == 0
    before = sorted(p.relative_to(out) for p in out.rglob("*"))
    result = ndpkit(*args)
    assert result.returncode == 2 and "already exists" in result.stderr
    assert sorted(p.relative_to(out) for p in out.rglob("*")) == before
    assert ndpkit(*args, "--overwrite").returncode == 0
