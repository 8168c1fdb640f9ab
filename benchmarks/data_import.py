"""`ndpkit data import` against what a user would do instead, per source format.

    .venv/bin/python benchmarks/data_import.py [--size-mib 256] [--repeat 3] [--dir DIR]

One table of k-NN_8 points (8 float32 features a row, seeded) is written once as a CSV
(`%.9g`, enough digits to give back every float32), a Parquet table and a `.npy`. Then each
way of turning it into float32 records on disk runs in a fresh process, the source already in
the page cache, best wall time of `--repeat`, with that process's peak resident size:
- ndpkit: `import_dataset(src, 8 devices, app="knn8")`, i.e. parse, split over 8 device
  directories, CRC-32 every shard, write the manifest, publish atomically;
- what a user would pick instead for one `.npy` of the same records: pyarrow's `read_csv`
  (multi-threaded) or polars' `read_csv`, `numpy.loadtxt` (for CSV; up to 256 MiB of
  records), `pyarrow.parquet.read_table` (Parquet), each then `numpy.save`; for a `.npy`,
  a plain file copy (the floor: bytes in, bytes out).
Every output is checked to hold exactly the source's records. Rates are MB/s of the source
file. The machine is noted on the first lines."""

from __future__ import annotations

import argparse
import json
import os
import platform
import resource
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

import numpy as np

FEATURES = 8
LOADTXT_LIMIT_BYTES = 256 * 2**20


def make_sources(root: Path, size_bytes: int, seed: int) -> dict[str, Path]:
    """The same records as a CSV, a Parquet table and a .npy under `root` (kept if there)."""
    import pyarrow as pa  # type: ignore[import-untyped, unused-ignore]  # noqa: PLC0415
    import pyarrow.parquet as pq  # type: ignore[import-untyped, unused-ignore]  # noqa: PLC0415

    rows = size_bytes // (4 * FEATURES)
    paths = {kind: root / f"points-{rows}.{kind}" for kind in ("csv", "parquet", "npy")}
    if all(p.exists() for p in paths.values()):
        return paths
    data = np.random.default_rng(seed).random((rows, FEATURES), dtype=np.float32)
    data = (data * 200 - 100).astype(np.float32)
    np.save(paths["npy"], data)
    names = [f"x{j}" for j in range(FEATURES)]
    pq.write_table(pa.table({n: data[:, j] for j, n in enumerate(names)}), paths["parquet"])
    with open(paths["csv"], "w", encoding="ascii") as f:
        f.write(",".join(names) + "\n")
        for start in range(0, rows, 1 << 16):
            np.savetxt(f, data[start : start + (1 << 16)], fmt="%.9g", delimiter=",")
    return paths


def run_one(way: str, src: Path, out: Path) -> dict[str, Any]:
    """One conversion in this (fresh) process, its libraries imported before the clock
    starts: wall seconds and peak resident bytes. Each way imports only its own libraries, so
    that its process's peak memory is its own."""
    if way == "ndpkit":
        from ndpkit.runtime import import_dataset  # noqa: PLC0415

        def convert() -> None:
            import_dataset(src, 8, out, app="knn8")
    elif way == "pyarrow":
        import pyarrow.csv as pcsv  # type: ignore[import-untyped, unused-ignore]  # noqa: PLC0415
        import pyarrow.parquet as pq  # noqa: PLC0415

        def convert() -> None:
            table = pcsv.read_csv(src) if src.suffix == ".csv" else pq.read_table(src)
            records = np.column_stack([c.to_numpy() for c in table.columns])
            np.save(out, records.astype(np.float32))
    elif way == "polars":
        import polars as pl  # noqa: PLC0415

        def convert() -> None:
            np.save(out, pl.read_csv(src).to_numpy().astype(np.float32))
    elif way == "loadtxt":

        def convert() -> None:
            np.save(out, np.loadtxt(src, delimiter=",", skiprows=1, dtype=np.float32))
    elif way == "copy":

        def convert() -> None:
            shutil.copyfile(src, out)
    else:
        raise SystemExit(f"unknown way {way!r}")
    start = time.perf_counter()
    convert()
    seconds = time.perf_counter() - start
    return {"seconds": seconds, "peak_rss_bytes": peak_rss_bytes()}


def peak_rss_bytes() -> int:
    """This process's peak resident size: VmHWM, not getrusage's ru_maxrss, which keeps the
    parent's high-water mark across the fork and exec that started this process."""
    try:
        status = Path("/proc/self/status").read_text()
    except OSError:
        return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss * 1024
    line = next(x for x in status.splitlines() if x.startswith("VmHWM:"))
    return int(line.split()[1]) * 1024


def measure(
    way: str, src: Path, scratch: Path, repeat: int, expected: np.ndarray
) -> dict[str, Any]:
    """The best of `repeat` runs of `way` on `src`, each output checked against `expected`
    (the records as the .npy source holds them: `%.9g` gives every float32 back)."""
    best: dict[str, Any] | None = None
    for trial in range(repeat):
        out = scratch / f"{way}-{trial}" if way == "ndpkit" else scratch / f"{way}-{trial}.npy"
        child = subprocess.run(
            [sys.executable, __file__, "--one", way, str(src), str(out)],
            capture_output=True,
            text=True,
            check=True,
        )
        found = json.loads(child.stdout)
        _check(way, out, expected)
        if best is None or found["seconds"] < best["seconds"]:
            best = found
        if out.is_dir():
            shutil.rmtree(out)
        else:
            out.unlink(missing_ok=True)
    assert best is not None
    return best


def _check(way: str, out: Path, expected: np.ndarray) -> None:
    """The output holds exactly the source's records, else the script fails."""
    if way == "ndpkit":
        from ndpkit.runtime import open_dataset  # noqa: PLC0415 (not in the timed processes)

        got = open_dataset(out, verify=True).read_all()
    else:
        got = np.load(out, mmap_mode="r")
    if got.shape != expected.shape or not np.array_equal(got, expected):
        raise SystemExit(f"{way}: its output is not the source's records ({out})")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--size-mib", type=int, default=256, help="MiB of float32 records")
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--dir", type=Path, help="where the sources are kept (default: a temp dir)")
    parser.add_argument("--one", nargs=3, metavar=("WAY", "SRC", "OUT"), help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.one:
        way, src, out = args.one
        print(json.dumps(run_one(way, Path(src), Path(out))))
        return
    print(
        f"# {platform.processor() or platform.machine()}, {os.cpu_count()} CPUs, "
        f"Python {platform.python_version()}, load {os.getloadavg()[0]:.2f}"
    )
    with tempfile.TemporaryDirectory(dir=args.dir) as tmp:
        root = args.dir or Path(tmp)
        scratch = Path(tmp) / "out"
        scratch.mkdir()
        sources = make_sources(root, args.size_mib * 2**20, args.seed)
        expected = np.load(sources["npy"])
        ways = {
            "csv": ["ndpkit", "pyarrow", "polars"]
            + (["loadtxt"] if args.size_mib * 2**20 <= LOADTXT_LIMIT_BYTES else []),
            "parquet": ["ndpkit", "pyarrow"],
            "npy": ["ndpkit", "copy"],
        }
        print(
            "| source | MB | way | seconds | MB/s of source | its time / ndpkit's | peak RSS MiB |"
        )
        print("|---|---|---|---|---|---|---|")
        for kind, chosen in ways.items():
            src = sources[kind]
            src.read_bytes()  # into the page cache
            mb = src.stat().st_size / 1e6
            found = {way: measure(way, src, scratch, args.repeat, expected) for way in chosen}
            ours = found["ndpkit"]["seconds"]
            for way, f in found.items():
                print(
                    f"| {kind} | {mb:,.0f} | {way} | {f['seconds']:.2f} | "
                    f"{mb / f['seconds']:,.0f} | {f['seconds'] / ours:.2f} | "
                    f"{f['peak_rss_bytes'] / 2**20:,.0f} |"
                )


if __name__ == "__main__":
    main()
