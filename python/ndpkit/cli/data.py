"""`ndpkit data`: make and inspect sharded data sets (one directory per emulated device)."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer

from ndpkit.cli.common import Format, FormatOption, choice, emit, size_flag, user_errors
from ndpkit.errors import SpecError
from ndpkit.report import Column, Table
from ndpkit.runtime.dataset import (
    DEFAULT_SHARD_BYTES,
    Dataset,
    ShardFormat,
    generate_dataset,
    import_dataset,
    open_dataset,
)
from ndpkit.units import Kind, format_si

app = typer.Typer(
    help="Make and inspect data sets sharded over emulated devices (device-NN/ directories).",
    no_args_is_help=True,
)

# Bounds are checked by the library, so a bad value is one `error:` line like every other input.
DevicesOpt = Annotated[
    int, typer.Option("--devices", "-d", help="Devices to shard over (one dir each).")
]
OutOpt = Annotated[Path, typer.Option("--out", "-o", help="The data set directory to create.")]
ShardSizeOpt = Annotated[
    str, typer.Option("--shard-size", help="Largest shard file, e.g. 64MiB (a device has many).")
]
OverwriteOpt = Annotated[
    bool, typer.Option("--overwrite", help="Replace an existing data set at --out.")
]


def _size(flag: str, text: str) -> int:
    return int(size_flag(flag, text))


@app.command()
def generate(
    app_name: Annotated[str, typer.Argument(metavar="APP", help="The app whose data to make.")],
    size: Annotated[str, typer.Option("--size", "-s", help="Total size, e.g. 4GiB or 500MB.")],
    out: OutOpt,
    devices: DevicesOpt = 8,
    seed: Annotated[int, typer.Option("--seed", help="Generator seed (≥ 0).")] = 0,
    shard_size: ShardSizeOpt = f"{DEFAULT_SHARD_BYTES // 2**20}MiB",
    shard_format: Annotated[
        str,
        typer.Option(
            "--shard-format",
            help="npy, or parquet: tables with a column per feature (lc, knn*, kmeans).",
        ),
    ] = "npy",
    overwrite: OverwriteOpt = False,
    fmt: FormatOption = Format.table,
) -> None:
    """Generate an app's synthetic data, shard by shard (never all in memory)."""
    with user_errors():
        dataset = generate_dataset(
            app_name,
            _size("--size", size),
            devices,
            out,
            seed=seed,
            shard_bytes=_size("--shard-size", shard_size),
            overwrite=overwrite,
            shard_format=choice("--shard-format", shard_format, ShardFormat),
        )
    _show(dataset, fmt)


@app.command("import")
def import_(
    path: Annotated[
        Path,
        typer.Argument(help="A .npy file, a Parquet table (.parquet), or a directory of images."),
    ],
    out: OutOpt,
    app_name: Annotated[str, typer.Option("--app", "-a", help="The app the data is for.")],
    devices: DevicesOpt = 8,
    columns: Annotated[
        str | None,
        typer.Option(
            "--columns",
            help="Parquet: the feature columns, comma-separated, in order (default: all).",
        ),
    ] = None,
    shard_size: ShardSizeOpt = f"{DEFAULT_SHARD_BYTES // 2**20}MiB",
    overwrite: OverwriteOpt = False,
    fmt: FormatOption = Format.table,
) -> None:
    """Shard existing data: a .npy or a Parquet table is split contiguously (device d holds
    the d-th block; a table keeps its format, one row per record); images are records if
    they all have the app's record shape, else one shard each."""
    with user_errors():
        dataset = import_dataset(
            path,
            devices,
            out,
            app_name,
            shard_bytes=_size("--shard-size", shard_size),
            overwrite=overwrite,
            columns=None if columns is None else _names("--columns", columns),
        )
    _show(dataset, fmt)


@app.command()
def show(
    directory: Annotated[Path, typer.Argument(metavar="DIR", help="A data set directory.")],
    verify: Annotated[
        bool, typer.Option("--verify", help="Also check every shard's CRC-32 (reads it all).")
    ] = False,
    fmt: FormatOption = Format.table,
) -> None:
    """Summarise a data set's manifest: app, records, and what each device holds."""
    with user_errors():
        dataset = open_dataset(directory, verify=verify)
    _show(dataset, fmt)


def _show(dataset: Dataset, fmt: Format) -> None:
    summary = dataset.summary()
    devices = dataset.device_rows()
    if fmt is not Format.table:
        emit([], fmt, {"dataset": summary, "devices": devices})
        return
    readable = {
        **summary,
        "data_bytes": _bytes(summary["data_bytes"]),
        "file_bytes": _bytes(summary["file_bytes"]),
    }
    fields = [{"field": key, "value": value} for key, value in readable.items()]
    for row in devices:
        row["size"] = format_si(row["data_bytes"], Kind.SIZE, binary=True)
    emit(
        [
            Table(
                "dataset",
                f"Data set {dataset.path}",
                [Column("field", "field", None), Column("value", "value", None)],
                fields,
            ),
            Table(
                "devices",
                "Per device",
                [
                    Column("device", "device", 0),
                    Column("shards", "shards", 0),
                    Column("records", "records", 0),
                    Column("first_record", "first record", 0),
                    Column("size", "size", None),
                ],
                devices,
            ),
        ],
        fmt,
    )


def _names(flag: str, text: str) -> list[str]:
    names = [name.strip() for name in text.split(",")]
    if not all(names):
        raise SpecError(f"an empty column name in {text!r}", source="command line", field=flag)
    return names


def _bytes(value: int) -> str:
    return f"{value:,} ({format_si(value, Kind.SIZE, binary=True)})"
