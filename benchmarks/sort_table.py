"""`ndpkit sort` against DuckDB and Polars: TPC-H lineitem, Parquet → Parquet, on this machine.

    .venv/bin/python benchmarks/sort_table.py [--sf 1] [--repeat 3] [--data DIR]
        [--keys l_shipmode,l_orderkey,l_extendedprice]

For each key, each tool runs in its own fresh process (so its peak RSS is its own), with
two threads, writing snappy-compressed Parquet (DuckDB's default codec; Polars is told to use
it too):

- ndpkit:  `ndpkit sort lineitem.parquet --by KEY --out OUT` (stable ties, nulls last);
- DuckDB:  `SET threads = 2; COPY (SELECT * FROM 'lineitem.parquet' ORDER BY KEY) TO OUT`;
- Polars:  `pl.scan_parquet(...).sort(KEY, maintain_order=True).sink_parquet(OUT)` (lazy,
           streaming) and `pl.read_parquet(...).sort(KEY, maintain_order=True)
           .write_parquet(OUT)` (eager); the faster of the two is Polars's figure.

Wall time is best of `--repeat` runs (process start included for every tool); peak memory
is the maximum RSS of the best run's process. The ratio is ndpkit / min(DuckDB, Polars):
at most 1.0 meets issue 6's target. Each run's output is checked: same row count as the
input and keys in order (ndpkit's also row for row against DuckDB's ORDER BY with the row
number as tie-breaker).
"""

from __future__ import annotations

import argparse
import os
import platform
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import duckdb

BIN = Path(sys.executable).parent
THREADS = "2"
KEYS = ("l_shipmode", "l_orderkey", "l_extendedprice")

DUCKDB = """
import duckdb, sys
con = duckdb.connect()
con.execute("SET threads = {threads}")
con.execute("COPY (SELECT * FROM '{src}' ORDER BY {key}) TO '{out}' (FORMAT parquet)")
"""
POLARS_LAZY = """
import polars as pl
pl.scan_parquet('{src}').sort('{key}', maintain_order=True).sink_parquet(
    '{out}', compression='snappy')
"""
POLARS_EAGER = """
import polars as pl
pl.read_parquet('{src}').sort('{key}', maintain_order=True).write_parquet(
    '{out}', compression='snappy')
"""


def run(argv: list[str]) -> tuple[float, float]:
    """Wall seconds and peak RSS (MiB) of one child process."""
    env = {**os.environ, "POLARS_MAX_THREADS": THREADS, "RAYON_NUM_THREADS": THREADS}
    start = time.perf_counter()
    child = subprocess.Popen(argv, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    _, status, usage = os.wait4(child.pid, 0)
    elapsed = time.perf_counter() - start
    child.returncode = os.waitstatus_to_exitcode(status)
    if child.returncode:
        err = child.stderr.read().decode() if child.stderr else ""
        raise SystemExit(f"{argv[:3]} failed ({child.returncode}): {err}")
    return elapsed, usage.ru_maxrss / 1024


def best(argv: list[str], repeat: int) -> tuple[float, float]:
    runs = [run(argv) for _ in range(repeat)]
    return min(runs)


def check(out: Path, src: Path, key: str, exact: bool) -> None:
    con = duckdb.connect()
    rows = con.sql(f"SELECT count(*) FROM '{out}'").fetchall()[0]
    total = con.sql(f"SELECT count(*) FROM '{src}'").fetchall()[0]
    if rows != total:
        raise SystemExit(f"{out}: {rows} rows, expected {total}")
    disorder = con.sql(
        f"SELECT count(*) FROM (SELECT {key} < lag({key}) OVER (ORDER BY file_row_number) AS bad "
        f"FROM read_parquet('{out}', file_row_number=true)) WHERE bad"
    ).fetchall()[0]
    if disorder != (0,):
        raise SystemExit(f"{out}: not sorted by {key}")
    if exact:
        mismatched = con.sql(
            f"""SELECT count(*) FROM
              (SELECT l_orderkey, l_linenumber, file_row_number AS r
                 FROM read_parquet('{out}', file_row_number=true)) a
              JOIN (SELECT l_orderkey, l_linenumber,
                           row_number() OVER (ORDER BY {key}, file_row_number) - 1 AS r
                      FROM read_parquet('{src}', file_row_number=true)) b USING (r)
             WHERE a.l_orderkey <> b.l_orderkey OR a.l_linenumber <> b.l_linenumber"""
        ).fetchall()[0]
        if mismatched != (0,):
            raise SystemExit(f"{out}: {mismatched[0]} rows differ from DuckDB's stable order")


def generate(sf: float, data: Path) -> Path:
    src = data / "lineitem.parquet"
    if not src.exists():
        subprocess.run(
            [
                str(BIN / "tpchgen-cli"),
                "parquet",
                "-s",
                str(sf),
                "--tables",
                "lineitem",
                "-o",
                str(data),
            ],
            check=True,
        )
    return src


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sf", type=float, default=1.0)
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--data", type=Path, default=None, help="reuse lineitem.parquet here")
    parser.add_argument("--keys", default=",".join(KEYS))
    args = parser.parse_args()
    data = args.data or Path(tempfile.mkdtemp(prefix="ndpkit-sort-bench-"))
    data.mkdir(parents=True, exist_ok=True)
    src = generate(args.sf, data)
    print(
        f"machine: {platform.processor() or platform.machine()}, {os.cpu_count()} cores, "
        f"Python {platform.python_version()}, duckdb {duckdb.__version__}; "
        f"lineitem SF {args.sf:g}: {src.stat().st_size / 2**20:.0f} MiB Parquet; "
        f"best of {args.repeat}, {THREADS} threads"
    )
    print("| key | ndpkit s (MiB) | DuckDB s (MiB) | Polars s (MiB) | ndpkit / best |")
    print("|---|---|---|---|---|")
    py = str(BIN / "python")
    for key in args.keys.split(","):
        out = data / f"out-{key}.parquet"
        fill = {"src": src, "key": key, "out": out, "threads": THREADS}
        ours = best(
            [str(BIN / "ndpkit"), "sort", str(src), "--by", key, "--out", str(out), "--overwrite"],
            args.repeat,
        )
        check(out, src, key, exact=True)
        duck = best([py, "-c", DUCKDB.format(**fill)], args.repeat)
        check(out, src, key, exact=False)
        lazy = best([py, "-c", POLARS_LAZY.format(**fill)], args.repeat)
        check(out, src, key, exact=False)
        eager = best([py, "-c", POLARS_EAGER.format(**fill)], args.repeat)
        polars = min(lazy, eager)
        ratio = ours[0] / min(duck[0], polars[0])
        print(
            f"| {key} | {ours[0]:.2f} ({ours[1]:.0f}) | {duck[0]:.2f} ({duck[1]:.0f}) | "
            f"{polars[0]:.2f} ({polars[1]:.0f}) | {ratio:.2f} |",
            flush=True,
        )
        out.unlink(missing_ok=True)


if __name__ == "__main__":
    main()
