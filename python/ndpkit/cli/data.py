"""`ndpkit data`: make and inspect sharded data sets (one directory per emulated device)."""

from __future__ import annotations

import glob
import warnings
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Annotated

import typer

from ndpkit.cli.common import (
    COMMAND_LINE,
    Format,
    FormatOption,
    byte_bar,
    choice,
    comma_list,
    emit,
    given_path,
    real_arg,
    size_flag,
    stderr,
    user_errors,
    whole_arg,
)
from ndpkit.errors import SpecError
from ndpkit.files import name_kept
from ndpkit.kernels import get_kernel
from ndpkit.report import Column, Table
from ndpkit.runtime.dataset import (
    DEFAULT_SHARD_BYTES,
    MAX_DEVICES,
    CropLoss,
    Dataset,
    LargeImageWarning,
    ShardFormat,
    UnreadImagesWarning,
    generate_dataset,
    import_dataset,
    is_staging_dir,
    open_dataset,
    resolve_kernel,
)
from ndpkit.tpc import GeneratedTable, generate_tpcc, generate_tpch
from ndpkit.tpc.tpcc import DEFAULT_SEED, PARQUET_BYTES_PER_SF
from ndpkit.tpc.tpch import (
    SF_RANGE,
    TPCH_TABLES,
    check_room,
    check_scale_factor,
    sf_text,
    tpch_bytes,
    tpch_tables,
)
from ndpkit.units import Kind, format_si

app = typer.Typer(
    help="Make and inspect data sets sharded over emulated devices (device-NN/ directories).",
    no_args_is_help=True,
)

# Bounds are checked by the library, so a bad value is one `error:` line like every other input.
DevicesOpt = Annotated[
    int,
    typer.Option("--devices", "-d", help="Devices to shard over (one dir each).", parser=whole_arg),
]


def _out_path(text: str) -> Path:
    """--out as a path; an empty one is refused (Path("") would be the current directory).
    Checked while Click parses, so it is Click's usage error (exit status 2)."""
    if not text.strip():
        raise typer.BadParameter("is empty; give the directory to create")
    return Path(text)


OutOpt = Annotated[
    Path,
    typer.Option("--out", "-o", parser=_out_path, help="The data set directory to create."),
]
MIN_SHARD_BYTES = 64 * 2**10
"""The smallest --shard-size: every shard is a file, and below this the files only multiply
(1 B shards made 32,768 files of one record each for 1 MiB of lc)."""
ShardSizeOpt = Annotated[
    str,
    typer.Option(
        "--shard-size",
        help="Records per shard file up to this size, e.g. 64MiB (a device has many; a file "
        "adds its header, 4KiB for .npy); at least 64KiB and one record.",
    ),
]
OverwriteOpt = Annotated[
    bool, typer.Option("--overwrite", help="Replace an existing data set at --out.")
]


def _size(flag: str, text: str) -> int:
    return int(size_flag(flag, text))


def _devices(devices: int) -> int:
    if not 1 <= devices <= MAX_DEVICES:
        raise SpecError(
            f"must be from 1 to {MAX_DEVICES:,} (a platform's largest SSD count), got {devices:,}",
            source="command line",
            field="--devices",
        )
    return devices


def _shard_bytes(text: str, app_name: str) -> int:
    """--shard-size in bytes, refused below MIN_SHARD_BYTES or one of the app's records."""
    kernel = resolve_kernel(app_name)
    least = max(MIN_SHARD_BYTES, kernel.record_bytes)
    small = least == MIN_SHARD_BYTES
    why = "smaller shards only add files" if small else f"one {kernel.name} record"
    needed = f"{format_si(least, Kind.SIZE, binary=True)} ({why})"
    # The least size said alike for a negative size as for a small one ("at least 1 byte"
    # was true but not what the flag needs).
    shard_bytes = int(size_flag("--shard-size", text, least=needed))
    if shard_bytes < least:
        raise SpecError(
            f"must be at least {needed}, got {text!r}",
            source="command line",
            field="--shard-size",
        )
    return shard_bytes


@app.command()
def generate(
    app_name: Annotated[str, typer.Argument(metavar="APP", help="The app whose data to make.")],
    size: Annotated[
        str,
        typer.Option(
            "--size",
            "-s",
            help="Total size, e.g. 4GiB or 500MB, cut to whole records (a note says so).",
        ),
    ],
    out: OutOpt,
    devices: DevicesOpt = 8,
    seed: Annotated[
        int, typer.Option("--seed", help="Generator seed (≥ 0).", parser=whole_arg)
    ] = 0,
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
    with (
        user_errors(),
        _as_flags({"size": "--size", "seed": "--seed", "shard_format": "--shard-format"}, out),
    ):
        get_kernel(app_name, source=f"{COMMAND_LINE}: APP")
        size_bytes, shard_bytes = _size("--size", size), _shard_bytes(shard_size, app_name)
        with byte_bar(f"generating {out}") as progress:
            dataset = generate_dataset(
                app_name,
                size_bytes,
                _devices(devices),
                out,
                seed=seed,
                shard_bytes=shard_bytes,
                overwrite=overwrite,
                shard_format=choice("--shard-format", shard_format, ShardFormat),
                on_stale_removed=_say_removed,
                progress=progress,
            )
    _note_leftovers(out)
    _note_whole_records(size, size_bytes, dataset)
    _show(dataset, fmt)


def _note_whole_records(size: str, size_bytes: int, dataset: Dataset) -> None:
    """On stderr, where `--size` was not a whole number of the app's records: the data set
    holds the whole records that fit, and `--size 100KiB` of Sobel's 64 KiB images made one,
    a third less than asked, without a word."""
    m = dataset.manifest
    if m.data_bytes == size_bytes:
        return
    made = format_si(m.data_bytes, Kind.SIZE, binary=True)
    stderr().print(
        f"note: --size {size} is not a whole number of {m.app} records of {m.record_bytes:,} "
        f"bytes: the data set holds the whole records that fit, {m.records:,} "
        f"record{'' if m.records == 1 else 's'} ({made})",
        style="yellow",
        highlight=False,
        markup=False,
    )


@contextmanager
def _as_flags(flags: dict[str, str], out: Path | None = None) -> Iterator[None]:
    """The API's errors about its arguments (`field="size"`) named as the flags the user
    typed (`command line: --size`); one about the output directory `out` itself (`afile:
    exists and is not a directory`) names its flag too, `afile: --out: …`, as `sort` does."""
    try:
        yield
    except SpecError as exc:
        if exc.source is None and exc.field in flags:
            raise SpecError(exc.detail, source=COMMAND_LINE, field=flags[exc.field]) from None
        if out is not None and exc.source == str(out) and exc.field is None:
            raise SpecError(exc.detail, source=exc.source, field="--out") from None
        raise


@app.command("import")
def import_(
    path: Annotated[
        Path,
        typer.Argument(
            metavar="PATH",
            parser=given_path,
            help="A .npy file, a Parquet table (a .parquet or .pq file, or a directory of "
            "them: its part files, here and in subdirectories, in path order, numbers in names "
            "compared as numbers), a CSV file with a header line (.csv, .tsv, .csv.gz, "
            ".tsv.gz), or a directory of images (PNG, JPEG, TIFF, BMP, PGM/PPM/PNM/PBM, WebP).",
        ),
    ],
    out: OutOpt,
    app_name: Annotated[str, typer.Option("--app", "-a", help="The app the data is for.")],
    devices: DevicesOpt = 8,
    columns: Annotated[
        str | None,
        typer.Option(
            "--columns",
            help="Parquet or CSV: the feature columns, comma-separated, in order (default: all "
            "but a Parquet table's pandas index).",
        ),
    ] = None,
    crop: Annotated[
        bool,
        typer.Option(
            "--crop",
            help="Images: keep the whole records that fit in each image, dropping its right "
            "and bottom edges (default: sizes must be whole records).",
        ),
    ] = False,
    shard_size: ShardSizeOpt = f"{DEFAULT_SHARD_BYTES // 2**20}MiB",
    overwrite: OverwriteOpt = False,
    fmt: FormatOption = Format.table,
) -> None:
    """Shard an existing .npy, Parquet table, CSV file or image files over devices.

    A .npy, a Parquet table or a CSV file is split contiguously (device d holds the d-th
    block; a table keeps its format, one row per record; a CSV's rows become .npy records). A
    directory holding .parquet or .pq files (Spark, DuckDB, pyarrow and tpchgen-cli write
    tables so) is one table: its parts' rows in order, names starting with . or _ left out.
    Images are cut into tiles of the app's record
    shape, row by row (height and width must be multiples of the record's, or give --crop),
    and the tiles split like a .npy's records."""
    with user_errors(), _as_flags({"columns": "--columns"}, out), _large_images_said() as said:
        get_kernel(app_name, source=f"{COMMAND_LINE}: --app")
        shard_bytes = _shard_bytes(shard_size, app_name)
        chosen = None if columns is None else _names("--columns", columns)
        with byte_bar(f"importing {path}") as progress:
            dataset = import_dataset(
                path,
                _devices(devices),
                out,
                app_name,
                shard_bytes=shard_bytes,
                overwrite=overwrite,
                columns=chosen,
                crop=crop,
                on_stale_removed=_say_removed,
                on_cropped=_say_cropped,
                progress=progress,
            )
    _note_leftovers(out)
    _show(dataset, fmt, said=said)


@contextmanager
def _large_images_said() -> Iterator[list[str]]:
    """An image above pillow's decompression-bomb warning limit as one `warning:` line on
    stderr naming it (the library's LargeImageWarning), not Python's two lines of source
    location; other warnings as Python shows them. Where warnings are errors (`-W error`)
    the library refuses the image instead, naming it. The lines said are yielded, for the
    JSON document's `warnings` (a script reading it was not told that files were left out)."""
    shown = warnings.showwarning
    said: list[str] = []

    def show(message: Warning | str, category: type[Warning], *args: object, **kw: object) -> None:
        if issubclass(category, (LargeImageWarning, UnreadImagesWarning)):
            said.append(str(message))
            line = f"warning: {message}"
            stderr().print(line, style="bold yellow", highlight=False, markup=False)
        else:
            shown(message, category, *args, **kw)  # type: ignore[arg-type]

    with warnings.catch_warnings():
        warnings.showwarning = show
        yield said


def _say_removed(left: Path) -> None:
    """Said on stderr, as each is as big as a data set: a staging directory beside OUT that
    a killed run left (ndpkit's marker in it, held by no run, unchanged for a minute), which
    the library removes once the arguments have been checked."""
    stderr().print(
        f"note: removed {left}, left by an `ndpkit data` run that was killed",
        style="yellow",
        highlight=False,
        markup=False,
    )


def _note_leftovers(out: Path) -> None:
    """On stderr, staging directories beside OUT that this run did not make (a run still
    going, or one killed too hard to clean up: SIGKILL, a power cut), each as big as a
    data set, and replaced data sets `--overwrite` could not delete. Named, not removed: a
    run still going needs its own. Only what ndpkit made is named: a user's own
    `OUT.tmp-2024` is none of these."""
    stem = glob.escape(name_kept(out.name))
    kinds: dict[str, tuple[str, Callable[[Path], bool]]] = {
        "tmp": (
            "is a data set being written by another run (or one killed less than a minute "
            "ago, or that this user may not remove); it is removed once nothing holds it "
            "and it has not changed for a minute",
            is_staging_dir,
        ),
        "old": (
            "holds a replaced data set that could not be deleted (a file or directory in "
            "it this user may not remove), or one a run is replacing now",
            # what `--overwrite` moves aside goes in as `dataset`
            lambda left: (left / "dataset").is_dir() and not left.is_symlink(),
        ),
    }
    for suffix, (why, ours) in kinds.items():
        for left in sorted(out.parent.glob(f"{stem}.{suffix}-*")):
            if ours(left):
                stderr().print(f"note: {left} {why}", style="yellow", highlight=False, markup=False)


def _say_cropped(loss: CropLoss) -> None:
    """On stderr, what --crop left out (stdout stays the summary in every --format), from the
    headers the import counted its records from: read again after the data set was written,
    an image changed meanwhile failed the command that had written it."""
    if not loss.cropped:
        message = f"crop: all {loss.images} images were whole records; nothing was dropped"
    else:
        share = loss.pixels_dropped / loss.pixels
        message = (
            f"crop: {len(loss.cropped)} of {loss.images} images lost their right or bottom "
            f"edges, {loss.pixels_dropped:,} of {loss.pixels:,} pixels ({share:.1%})"
        )
        if loss.empty:
            names = ", ".join(loss.empty[:5]) + (", …" if len(loss.empty) > 5 else "")
            message += f"; of those, {len(loss.empty)} smaller than one record gave none ({names})"
    stderr().print(message, highlight=False, markup=False)


@app.command()
def show(
    directory: Annotated[
        Path, typer.Argument(metavar="DIR", parser=given_path, help="A data set directory.")
    ],
    verify: Annotated[
        bool,
        typer.Option("--verify", help="Also check every shard's CRC-32 and header (reads it all)."),
    ] = False,
    fmt: FormatOption = Format.table,
) -> None:
    """Summarise a data set's manifest: app, records, and what each device holds."""
    with user_errors():
        if verify:  # every missing, truncated or corrupt shard named in one error
            with byte_bar(f"verifying {directory}") as progress:
                dataset = open_dataset(directory, verify=True, progress=progress, every=True)
        else:
            dataset = open_dataset(directory)
    if verify:  # on stderr, so that stdout stays the summary in every --format
        shards = len(dataset.shards)
        which = "the 1 shard" if shards == 1 else f"all {shards} shards"
        stderr().print(
            f"verified: the CRC-32 of {which} ({dataset.file_bytes:,} bytes) matches the manifest",
            highlight=False,
            markup=False,
        )
    _show(dataset, fmt)


# `data info` is what users type first (docker, conda, pip have one): the same command,
# hidden from the list so that each command is listed once.
app.command("info", hidden=True, help="The same as `ndpkit data show`.")(show)


TpcOutOpt = Annotated[
    Path,
    typer.Option("--out", "-o", parser=_out_path, help="The directory to write into."),
]
SfOpt = Annotated[
    float,
    typer.Option(
        "--sf",
        help=f"Scale factor, from {SF_RANGE[0]:g} to {SF_RANGE[1]:g} (fractions allowed).",
        parser=real_arg,
    ),
]
TpcOverwriteOpt = Annotated[
    bool,
    typer.Option(
        "--overwrite",
        help="Replace this run's table files in --out if they exist (other files stay).",
    ),
]


@app.command()
def tpch(
    sf: SfOpt,
    out: TpcOutOpt,
    tables: Annotated[
        str | None,
        typer.Option(
            "--tables", help=f"Comma-separated, from {', '.join(TPCH_TABLES)} (default: all)."
        ),
    ] = None,
    overwrite: TpcOverwriteOpt = False,
    fmt: FormatOption = Format.table,
) -> None:
    """Generate TPC-H tables as Parquet (OUT/<table>.parquet) with tpchgen-cli.

    The files appear only when every table is complete."""
    with user_errors(), _as_flags({}, out):
        check_scale_factor(sf, field="--sf", bounds=SF_RANGE, source=COMMAND_LINE)
        names = tpch_tables(
            None if tables is None else _table_list(tables),
            field="--tables",
            source=COMMAND_LINE,
        )
        # here too, so that the error names --sf (the library's names `sf`)
        what = "TPC-H " + ", ".join(names)
        check_room(out, tpch_bytes(sf, names), what, sf, field="--sf", source=COMMAND_LINE)
        try:
            made = generate_tpch(sf, out, names, overwrite=overwrite, progress=_progress)
        finally:  # also when this run fails: leftovers as big as tables may be why (no space)
            _note_tpc_leftovers(out, ".tpch-" + "?" * 8, Path.is_dir)  # mkdtemp's names
            for name in TPCH_TABLES:  # an old table a killed --overwrite kept hidden
                _note_tpc_leftovers(out, f".{name}.parquet.old-[0-9]*", Path.is_file)
    _show_tables(made, sf, fmt)


@app.command()
def tpcc(
    sf: SfOpt,
    out: TpcOutOpt,
    seed: Annotated[
        int, typer.Option("--seed", help="Generator seed (≥ 0).", parser=whole_arg)
    ] = DEFAULT_SEED,
    overwrite: TpcOverwriteOpt = False,
    fmt: FormatOption = Format.table,
) -> None:
    """Generate the TPC-C ORDER-LINE table as Parquet (OUT/order_line.parquet).

    SF s is s × one warehouse's orders (30,000 orders, ~300,000 rows); see docs/tpc.md."""
    with user_errors(), _as_flags({}, out):
        check_scale_factor(sf, field="--sf", bounds=SF_RANGE, source=COMMAND_LINE)
        if seed < 0:
            raise SpecError(f"must be ≥ 0, got {seed}", source=COMMAND_LINE, field="--seed")
        need = sf * PARQUET_BYTES_PER_SF
        check_room(out, need, "TPC-C order_line", sf, field="--sf", source=COMMAND_LINE)
        try:
            made = generate_tpcc(sf, out, seed=seed, overwrite=overwrite, progress=_progress)
        finally:  # also when this run fails, as for tpch
            _note_tpc_leftovers(out, ".order_line.parquet.tmp-*", Path.is_file)
    _show_tables([made], sf, fmt)


def _note_tpc_leftovers(out: Path, pattern: str, kind: Callable[[Path], bool]) -> None:
    """On stderr, what another run left in OUT: the hidden staging directory (tpch) or
    temporary file (tpcc) of a run still going, or of one killed with SIGKILL, as big as
    the tables it was writing. Named, not removed: a run still going needs its own."""
    try:
        found = sorted(out.glob(pattern))
    except OSError:  # an --out that is not a readable directory: nothing to name
        return
    for left in found:
        if kind(left) and not left.is_symlink():
            stderr().print(
                f"note: {left} was left by another `ndpkit data` run (one still going, or one "
                "killed with SIGKILL); remove it if none is going",
                style="yellow",
                highlight=False,
                markup=False,
            )


def _progress(message: str) -> None:
    stderr().print(message, highlight=False, markup=False)


def _show_tables(made: list[GeneratedTable], sf: float, fmt: Format) -> None:
    rows = [
        {
            "table": t.name,
            "rows": t.rows,
            "file_bytes": t.file_bytes,
            "size": format_si(t.file_bytes, Kind.SIZE, binary=True),
            "path": str(t.path),
        }
        for t in made
    ]
    columns = [
        Column("table", "table", None),
        Column("rows", "rows", 0),
        Column("file_bytes", "file bytes", 0),
        Column("size", "size", None),
        Column("path", "path", None),
    ]
    emit(
        [Table("tables", f"Tables written at SF {sf_text(sf)}", columns, rows)],
        fmt,
        {"sf": sf, "tables": rows},
    )


def _show(dataset: Dataset, fmt: Format, *, said: list[str] | None = None) -> None:
    """The summary and the per-device table: sizes for people in a table, bytes in CSV
    (whose first column names the table each row belongs to) and JSON, which also holds
    the warnings an import `said` on stderr (where given), as `warnings`."""
    summary = dataset.summary()
    devices = dataset.device_rows()
    if fmt is Format.json:
        extra = {} if said is None else {"warnings": said}
        emit([], fmt, {"dataset": summary, "devices": devices} | extra)
        return
    people = fmt is Format.table
    if people:
        summary |= {key: _bytes(summary[key]) for key in ("data_bytes", "file_bytes")}
    fields = [{"field": key, "value": value} for key, value in summary.items()]
    for row in devices:
        row["size"] = format_si(row["data_bytes"], Kind.SIZE, binary=True)
    size = Column("size", "size", None) if people else Column("data_bytes", "data bytes", 0)
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
                    size,
                ],
                devices,
            ),
        ],
        fmt,
    )


def _table_list(text: str) -> list[str]:
    """--tables as every list flag reads it (`comma_list`: a trailing comma is allowed, as
    `reproduce --tables` allows it); naming none is an error, not every table."""
    names = comma_list("--tables", text)
    if not names:
        raise SpecError(
            f"names no table; known: {', '.join(TPCH_TABLES)}",
            source=COMMAND_LINE,
            field="--tables",
        )
    return names


def _names(flag: str, text: str) -> list[str]:
    """The comma-separated names as written: spaces around one are dropped by the import
    only where no column has them in its name (`a ,b` means the column `a ` if there is one)."""
    names = text.split(",")
    if not all(name.strip() for name in names):
        raise SpecError(f"an empty column name in {text!r}", source="command line", field=flag)
    return names


def _bytes(value: int) -> str:
    return f"{value:,} ({format_si(value, Kind.SIZE, binary=True)})"
