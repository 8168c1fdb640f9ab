"""The benchmark scripts that take the runtime apart still run: each at a tiny size, checked
for its rows (their figures are recorded in benchmarks/README.md, not asserted here)."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

BENCHMARKS = Path(__file__).resolve().parent.parent / "benchmarks"


def _run(script: str, *args: str, tmp_path: Path) -> str:
    done = subprocess.run(
        [sys.executable, str(BENCHMARKS / script), *args],
        capture_output=True,
        text=True,
        timeout=300,
        cwd=tmp_path,
        check=False,
    )
    assert done.returncode == 0, done.stderr
    return done.stdout


def test_alignment_prints_every_offset(tmp_path: Path) -> None:
    out = _run("alignment.py", "--kernel", "lc", "--size", "1MiB", "--rounds", "1",
               "--offsets", "0,128", tmp_path=tmp_path)  # fmt: skip
    assert "offset     0 B" in out and "offset   128 B" in out and "GB/s" in out


def test_alignment_refuses_an_offset_inside_a_value(tmp_path: Path) -> None:
    done = subprocess.run(
        [sys.executable, str(BENCHMARKS / "alignment.py"), "--offsets", "0,3"],
        capture_output=True,
        text=True,
        timeout=60,
        cwd=tmp_path,
        check=False,
    )
    assert done.returncode == 2 and "multiples of 4" in done.stderr


@pytest.mark.parametrize("kernel", ["lc", "kmeans"])
def test_runtime_overhead_checks_and_reports(tmp_path: Path, kernel: str) -> None:
    out = _run("runtime_overhead.py", "--kernel", kernel, "--size", "1MiB", "--workers", "1",
               "--repeat", "1", "--dir", str(tmp_path), tmp_path=tmp_path)  # fmt: skip
    row = next(line for line in out.splitlines() if line.startswith(kernel))
    # new workers and kept, each against memory | mapped | the shard files in one process
    assert row.count("|") == 4 and "α =" in row
    assert "interleaved rounds" in out and " shards " in out


def test_runtime_overhead_says_one_shard_per_device(tmp_path: Path) -> None:
    """--shard-size device: 8 shards of 128 KiB, not 'shards of at most' the whole data set."""
    out = _run("runtime_overhead.py", "--kernel", "lc", "--size", "1MiB", "--workers", "1",
               "--repeat", "1", "--shard-size", "device", "--dir", str(tmp_path),
               tmp_path=tmp_path)  # fmt: skip
    assert "in one shard per device (0.125 MiB)," in out


def test_runtime_breakdown_prints_its_steps(tmp_path: Path) -> None:
    out = _run("runtime_breakdown.py", "--kernel", "knn8-topk", "--size", "1MiB", "--rounds",
               "1", "--dir", str(tmp_path), tmp_path=tmp_path)  # fmt: skip
    for step in ("one process", "chunks, shards", "executor, kept workers", "keep_freed_memory"):
        assert step in out


def test_out_of_core_runs_checks_and_reports_memory(tmp_path: Path) -> None:
    """Without --memory-limit (root only) it measures in this process's own cgroup."""
    out = _run("out_of_core.py", "--dir", str(tmp_path / "data"), "--sizes", "1MiB", "2MiB",
               "--kernels", "knn8-topk", "lc", "--workers", "1", "--devices", "2",
               "--mapped-budget", "0", tmp_path=tmp_path)  # fmt: skip
    rows = [line.split() for line in out.splitlines() if line.startswith(("knn8-topk", "lc"))]
    assert [r[0] for r in rows] == ["knn8-topk", "knn8-topk", "lc", "lc"]
    assert [r[-1] for r in rows] == ["top-k", "top-k", "chunk", "chunk"]  # the check's name
    assert "no cgroup of its own" in out and "kept mappings: 0" in out
    assert sorted(p.name for p in (tmp_path / "data").iterdir()) == [
        "knn8-topk-1MiB", "knn8-topk-2MiB", "lc-1MiB", "lc-2MiB"]  # fmt: skip


def test_out_of_core_makes_a_kept_data_set_again_when_it_is_another(tmp_path: Path) -> None:
    """The data sets under --dir are kept for later runs, and were reused whatever they held:
    a run with --devices 4 measured the 2-device data set an earlier run left (its header
    saying 4 devices), and --sizes 1.5MiB the 1 MiB one, both named lc-1MiB."""
    data = tmp_path / "data"
    common = ("--dir", str(data), "--kernels", "lc", "--workers", "1", "--mapped-budget", "0")
    _run("out_of_core.py", *common, "--sizes", "1MiB", "--devices", "2", tmp_path=tmp_path)
    _run("out_of_core.py", *common, "--sizes", "1MiB", "1.5MiB", "--devices", "4",
         tmp_path=tmp_path)  # fmt: skip
    names = sorted(p.name for p in data.iterdir())
    assert names == ["lc-1572864B", "lc-1MiB"]
    manifests = [json.loads((data / name / "manifest.json").read_text()) for name in names]
    assert [(m["devices"], m["records"]) for m in manifests] == [(4, 49152), (4, 32768)]


def test_shard_folios_folds_in_the_executors_chunks(tmp_path: Path) -> None:
    """k-NN's top-k split is handed 128 MiB chunks (`Kernel.chunk_bytes`); the script folded
    in RUN_CHUNK_BYTES's 32 MiB while saying it timed what the executor does."""
    out = _run("shard_folios.py", "--kernel", "knn8-topk", "--size", "1MiB", "--repeat", "1",
               "--dir", str(tmp_path), tmp_path=tmp_path)  # fmt: skip
    assert "folded in 128 MiB chunks" in out


def test_data_import_checks_and_reports_every_way(tmp_path: Path) -> None:
    out = _run("data_import.py", "--size-mib", "1", "--repeat", "1", "--dir", str(tmp_path),
               tmp_path=tmp_path)  # fmt: skip
    rows = [line.split("|")[1:4] for line in out.splitlines() if line.startswith("| ")]
    ways = [(source.strip(), way.strip()) for source, _, way in rows[1:]]  # after the header
    assert ways == [("csv", "ndpkit"), ("csv", "pyarrow"), ("csv", "polars"), ("csv", "loadtxt"),
                    ("parquet", "ndpkit"), ("parquet", "pyarrow"), ("npy", "ndpkit"),
                    ("npy", "copy")]  # fmt: skip
