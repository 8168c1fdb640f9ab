"""`ndpkit sort`: sort a real Parquet table by one column, like DuckDB's ORDER BY."""

from __future__ import annotations

import os
from pathlib import Path
from typing import Annotated

import typer

from ndpkit.cli.common import (
    Format,
    FormatOption,
    check_output_file,
    emit,
    given_path,
    given_text,
    reflow_help,
    stderr,
    user_errors,
    whole_arg,
)
from ndpkit.errors import SpecError
from ndpkit.nascent.tablesort import ENGINES, SortReport, input_real_paths, sort_parquet
from ndpkit.report import Column, Table

PARQUET_SUFFIXES = frozenset({".parquet", ".pq", ""})
"""What a merged output may be named (it is Parquet): .parquet, .pq or no suffix."""
MAX_DEVICES = 4096
"""More partitions than this only cost memory (one partition's bookkeeping each)."""
_COMPRESSIONS = ("snappy", "zstd", "lz4", "gzip", "uncompressed")
sort_app = typer.Typer(
    add_completion=False,
    pretty_exceptions_enable=False,
    context_settings={"help_option_names": ["-h", "--help"]},
)
"""`ndpkit sort` alone, so that it starts without the other commands' imports."""


def sort_cmd(
    source: Annotated[
        Path,
        typer.Argument(
            metavar="SOURCE",
            parser=given_path,
            help="A Parquet file, or a directory of Parquet files (one table).",
        ),
    ],
    by: Annotated[str, typer.Option("--by", help="The key column.")],
    # A str, not a Path: pathlib drops a trailing "/", which says a directory is meant.
    out: Annotated[
        str,
        typer.Option(
            "--out",
            parser=given_text,
            help="The sorted Parquet file to write (a directory of partitions with --no-merge).",
        ),
    ],
    desc: Annotated[
        bool, typer.Option("--desc", help="Descending order (nulls still last).")
    ] = False,
    devices: Annotated[
        int,
        typer.Option(
            "--devices",
            help="Partition the table over M devices (1-4096) and sort the partitions "
            "concurrently.",
            parser=_devices,
        ),
    ] = 1,
    merge: Annotated[
        bool,
        typer.Option(
            "--merge/--no-merge",
            help="Merge the devices' sorted partitions into one file (default), or write "
            "OUT/device-NN/part-0000.parquet per device.",
        ),
    ] = True,
    engine: Annotated[
        str,
        typer.Option(
            "--engine",
            help="host: radix sort (fast); nascent2: the bitonic sort kernel, with its counts.",
        ),
    ] = "host",
    compression: Annotated[
        str, typer.Option("--compression", help="Parquet codec: " + ", ".join(_COMPRESSIONS))
    ] = "snappy",
    overwrite: Annotated[
        bool, typer.Option("--overwrite", help="Replace an existing file or partitions at --out.")
    ] = False,
    keep_schema: Annotated[
        bool,
        typer.Option(
            "--keep-schema",
            help="Write the input's Arrow schema (string, non-null columns) instead of "
            "Polars' (large_string, all nullable); the write is single-threaded, slower.",
        ),
    ] = False,
    fmt: FormatOption = Format.table,
) -> None:
    """Sort a table by one column: Parquet in, Parquet out.

    Row for row what DuckDB's `ORDER BY COL` gives, with ties in their original row order
    and nulls last.

    The key becomes order-preserving integers (a string column of at most 2^16 distinct
    values through its sorted dictionary, as NASCENT2's generic sort does), sorted by a
    radix sort in O(n) passes; the rows then follow by Arrow's gather (the shuffle)."""
    with user_errors():
        if engine not in ENGINES:
            raise SpecError(
                f"unknown engine {engine!r}; choose one of {', '.join(ENGINES)}", field="--engine"
            )
        if compression not in _COMPRESSIONS:
            raise SpecError(
                f"unknown codec {compression!r}; choose one of {', '.join(_COMPRESSIONS)}",
                field="--compression",
            )
        out_path = _check_out(out, source, partitions=not merge)
        if not overwrite and (out_path.exists() or out_path.is_symlink()):
            raise SpecError(
                "already exists; pass --overwrite to replace it", source=out, field="--out"
            )
        console = stderr()
        quiet = fmt is not Format.table
        report = sort_parquet(
            source,
            out_path,
            by,
            descending=desc,
            devices=devices,
            merge=merge,
            engine=engine,
            compression=compression,
            keep_schema=keep_schema,
            overwrite=overwrite,
            progress=None if quiet else lambda stage: console.print(f"[dim]{stage}…[/]"),
        )
    emit(_tables(report, out), fmt, {**report.as_dict(), "out": out})


def _tables(report: SortReport, out: str) -> list[Table]:
    key = report.encoding + (f", {report.distinct:,} distinct" if report.distinct else "")
    facts = [
        ("rows", f"{report.rows:,} × {report.columns} columns"),
        (
            "key",
            f"{report.by}{' desc' if report.descending else ''} ({key}, {report.key_bits} bit)",
        ),
        ("engine", report.engine),
        ("devices", f"{report.devices}, " + ("merged" if report.merged else "one file each")),
        ("gather", "skipped: already in order" if report.already_sorted else "done"),
        (
            "schema",
            "the input's"
            if report.schema == "input"
            else "Polars' (strings as large_string, every column nullable)",
        ),
        ("out", out),
    ]
    summary = Table(
        "sort",
        "ndpkit sort",
        [Column("what", "", None), Column("value", "", None)],
        [{"what": k, "value": v} for k, v in facts],
    )
    total = sum(report.seconds.values())
    rows: list[dict[str, object]] = [
        {"stage": k, "seconds": v, "share": v / total if total else 0.0}
        for k, v in report.seconds.items()
    ]
    rows.append({"stage": "total", "seconds": total, "share": 1.0})
    stages = Table(
        "stages",
        "Seconds per stage",
        [Column("stage", "stage", None), Column("seconds", "s", 3), Column("share", "share", 2)],
        rows,
    )
    return [summary, stages]


def _check_out(out: str, source: Path, *, partitions: bool) -> Path:
    """--out before the sort rather than after it: as every output file (a directory for
    `--no-merge` partitions, which `check_output` checks further); a merged output named as
    a Parquet file, not a directory (a trailing "/") nor for another format; not the input,
    in the input's directory (the next sort of that directory would read it as input), or
    around the input (`--overwrite` would replace the input with the partitions)."""
    path = Path(out)
    if not partitions and len(out) > 1 and os.path.basename(out) in ("", "."):
        ending = "/." if out.endswith("/.") else out[-1]
        raise SpecError(
            f"ends in {ending!r}, a directory's name; the merged sorted table is one file: "
            "name it, or pass --no-merge for a directory of partitions",
            source=out,
            field="--out",
        )
    if not partitions and path.suffix.lower() not in PARQUET_SUFFIXES:
        raise SpecError(
            f"the sorted table is Parquet; name it .parquet (or .pq), not {path.suffix!r}",
            source=out,
            field="--out",
        )
    # Through symbolic links, also those inside a directory input to its shards elsewhere.
    real_out, inputs = Path(os.path.realpath(out)), input_real_paths(source)
    if any(real_out.is_relative_to(real) for real in inputs):
        raise SpecError(
            "must be outside the input (a file of its own, not in the input's directory)",
            source=out,
            field="--out",
        )
    if any(real.is_relative_to(real_out) for real in inputs):
        raise SpecError(
            f"holds the input {str(source)!r}, which --overwrite would replace; choose a "
            "directory outside it",
            source=out,
            field="--out",
        )
    check_output_file("--out", path, directory_ok=partitions)
    return path


sort_app.command()(sort_cmd)
reflow_help(sort_app)


def _devices(text: str | int) -> int:
    """--devices: a whole number in 1..MAX_DEVICES."""
    devices = whole_arg(text)
    if not 1 <= devices <= MAX_DEVICES:
        raise typer.BadParameter(f"{devices} is not in the range 1<=x<={MAX_DEVICES}")
    return devices
