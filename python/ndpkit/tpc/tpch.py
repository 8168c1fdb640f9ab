"""TPC-H tables as Parquet, made by the `tpchgen-cli` executable (the Rust port of dbgen).

`generate_tpch(1, out, ["lineitem"])` writes `out/lineitem.parquet` at scale factor 1.
Generation happens in a hidden temporary directory inside `out`; each file is renamed into
place only after every table generated, so a failure or Ctrl-C never leaves a half-written
table under its real name (a completed rename is itself atomic: same file system).
"""

from __future__ import annotations

import os
import shutil
import signal
import subprocess
import sys
import tempfile
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path

import pyarrow.parquet as pq

from ndpkit.errors import SpecError, as_path, closest, finite_number
from ndpkit.files import (
    cleanup_held,
    destination,
    literal_path,
    put_new,
    signals_held,
    temporary_sibling,
)
from ndpkit.units import Kind, format_si

TPCH_TABLES = ("region", "nation", "supplier", "customer", "part", "partsupp", "orders", "lineitem")
"""The eight TPC-H tables, smallest first (the order tpchgen-cli documents)."""

TOOL = "tpchgen-cli"

Progress = Callable[[str], None]


@dataclass(frozen=True)
class GeneratedTable:
    """One table file written: its name, path, row count and size on disk."""

    name: str
    path: Path
    rows: int
    file_bytes: int


def find_tpchgen() -> Path:
    """The tpchgen-cli executable: beside this Python first (the venv that installed the
    dependency), then on PATH."""
    beside = Path(sys.executable).parent / TOOL
    if beside.is_file() and os.access(beside, os.X_OK):
        return beside
    found = shutil.which(TOOL)
    if found is None:
        raise SpecError(
            f"not found beside {sys.executable} or on PATH; install it with `pip install {TOOL}`",
            source=TOOL,
        )
    return Path(found)


SF_RANGE = (0.001, 1000.0)
"""The scale factors `ndpkit data tpch/tpcc` generates: below, TPC-H's smaller tables have
no rows (SF 1e-9 gives empty tables); above, a terabyte or more, and the generator's memory
grows with SF until the machine kills it."""


def check_scale_factor(
    sf: float,
    *,
    field: str = "sf",
    bounds: tuple[float, float] | None = None,
    source: str | None = None,
) -> float:
    """`sf` if it is a finite number above 0 (and within `bounds`), else an error naming
    `field` (of `source`, the command line for a flag); a numpy number as Python's float,
    which tpchgen-cli is given by its repr ("np.float64(0.01)" failed the generation). A
    string was a TypeError from isfinite, an int past float's range an OverflowError."""
    sf = finite_number(sf, field, "a finite number > 0", above=0, source=source)
    if bounds is not None and not bounds[0] <= sf <= bounds[1]:
        # exact: 1000.0000001 was "got 1000", which the range holds
        raise SpecError(
            f"must be from {bounds[0]:g} to {bounds[1]:g}, got {sf_text(sf)}",
            source=source,
            field=field,
        )
    return sf


TPCH_BYTES_PER_SF = {
    "region": 0, "nation": 0, "supplier": 900_000, "customer": 14_000_000, "part": 7_300_000,
    "partsupp": 44_000_000, "orders": 59_000_000, "lineitem": 190_000_000,
}  # fmt: skip
"""The Parquet bytes tpchgen-cli (4.0.0, Snappy) writes per unit of SF, the least of those
measured at SF 0.001, 0.01, 0.1 and 1, rounded down (lineitem: 221, 193, 201 and 232 MB per
SF): a lower bound of what a run needs (`check_room`). Region and nation do not grow with
SF (2 kB and 3 kB)."""


def check_room(
    out: Path,
    need_bytes: float,
    what: str,
    sf: float,
    *,
    field: str = "sf",
    source: str | None = None,
) -> None:
    """Refuse, before anything is generated, a run whose tables (`need_bytes`, a lower
    bound) cannot fit in the free space where `out` is or will be: SF 500 started
    tpchgen-cli on a disk with a quarter of the 160 GB it needed, to fail (or fill the
    disk) minutes later. A file system whose free space cannot be read is not checked."""
    place = next((path for path in (out, *out.parents) if path.exists()), None)
    if place is None:
        return
    try:
        free = shutil.disk_usage(place).free
    except OSError:
        return
    if need_bytes > free:
        raise SpecError(
            f"SF {sf_text(sf)} needs at least {format_si(need_bytes, Kind.SIZE)} for {what}, "
            f"but {str(place)!r} has {format_si(free, Kind.SIZE)} free; give a smaller SF "
            "or a directory on a larger disk",
            source=source,
            field=field,
        )


def tpch_bytes(sf: float, names: Sequence[str]) -> float:
    """A lower bound of the Parquet bytes of `names` at `sf` (`TPCH_BYTES_PER_SF`)."""
    return sf * sum(TPCH_BYTES_PER_SF[name] for name in names)


def sf_text(sf: float) -> str:
    """`sf` as `:g` writes it where that is exact (1e+09, 0.01), else in full: `:g` keeps six
    digits, and tables made at SF 0.0012345678 were said to be at SF 0.00123457. A numpy
    number as Python's float: its repr is "np.float64(0.0012345678)"."""
    short = f"{sf:g}"
    return short if float(short) == sf else repr(float(sf))


def tpch_tables(
    names: Sequence[str] | None, *, field: str = "tables", source: str | None = None
) -> tuple[str, ...]:
    """The requested tables, validated (None means all eight); a table named twice is
    refused, as `reproduce --tables` refuses one. Errors name `field` of `source`."""
    if names is None:
        return TPCH_TABLES
    if isinstance(names, str):  # iterated, "lineitem" was "unknown TPC-H table 'l'"
        raise SpecError(
            f"must be a list of table names, got the string {names!r}: give [{names!r}]",
            source=source,
            field=field,
        )
    chosen: list[str] = []
    for name in names:
        if not name:
            raise SpecError("an empty table name in the list", source=source, field=field)
        if name not in TPCH_TABLES:
            # "LINEITEM" or "lineitems" was refused with the list only
            guess = closest(name, TPCH_TABLES)
            raise SpecError(
                f"unknown TPC-H table {name!r}; known: {', '.join(TPCH_TABLES)}"
                + (f"; did you mean {guess!r}?" if guess else ""),
                source=source,
                field=field,
            )
        if name in chosen:
            raise SpecError(
                f"names {name} more than once; give each table once", source=source, field=field
            )
        chosen.append(name)
    if not chosen:
        raise SpecError("no table given", source=source, field=field)
    return tuple(chosen)


def generate_tpch(
    sf: float,
    out: str | os.PathLike[str],
    tables: Sequence[str] | None = None,
    *,
    overwrite: bool = False,
    progress: Progress | None = None,
) -> list[GeneratedTable]:
    """Write `out/<table>.parquet` for each table at scale factor `sf` (Snappy Parquet,
    tpchgen-cli's defaults). Existing files are an error unless `overwrite`."""
    sf = check_scale_factor(sf)
    out = directory_path(out)  # a str as well (as `analyse` takes one)
    names = tpch_tables(tables)
    check_out_dir(out)
    check_room(out, tpch_bytes(sf, names), "TPC-H " + ", ".join(names), sf)
    tool = find_tpchgen()
    targets = [out / f"{name}.parquet" for name in names]
    # Checked before any table is generated or moved: a directory in a table's place, found
    # at the rename, left the tables before it replaced and the rest old.
    for path in targets:
        if path.is_dir() or (path.exists() and not path.is_file()):
            raise SpecError(
                "exists and is not a file; --overwrite replaces table files only",
                source=str(path),
            )
    clashes = [str(path) for path in targets if path.exists()]
    if clashes and not overwrite:
        raise SpecError(
            "already exists; pass overwrite (--overwrite) to replace it", source=clashes[0]
        )
    # A table that is a symbolic link is written through it, as every output file is
    # (`files.destination`): a rename onto the link replaced it with a plain file.
    places = [destination(path) for path in targets]
    first: dict[str, Path] = {}
    for path, place in zip(targets, places, strict=True):
        # Two tables written to one file (a link to the other's, or two links to one file):
        # the second would silently be what the first's name holds.
        at = os.path.realpath(place)
        if at in first:
            raise SpecError(
                f"is the same file as {str(first[at])!r} (a symbolic link); two tables "
                "cannot be written to one file",
                source=str(path),
            )
        first[at] = path
        if place != path and not place.parent.is_dir():
            raise SpecError(
                f"cannot write: no directory {str(place.parent)!r} (where the link points)",
                source=str(path),
            )
    made = missing_ancestors(out)
    staging: Path | None = None
    moved: list[Path] = []
    try:
        with signals_held():  # so that `staging` is known before any signal can stop us
            staging = _make_staging(out)
        if progress is not None:
            progress(f"generating TPC-H {', '.join(names)} at SF {sf_text(sf)} with {tool}")
        # One run for every table: each tpchgen-cli start costs ~0.8 s whatever the size.
        _run_tool(tool, sf, names, staging)
        staged = [
            _beside(staging / f"{name}.parquet", path, place, moved)
            for name, path, place in zip(names, targets, places, strict=True)
        ]
        with signals_held():  # every table appears, or none: a Ctrl-C waits for the renames
            _put_tables(staged, places, overwrite)
    except BaseException:  # a failure or Ctrl-C: no empty output directory either

        def clean() -> None:
            if staging is not None:
                shutil.rmtree(staging, ignore_errors=True)
            for path in moved:
                path.unlink(missing_ok=True)
            remove_if_empty(made)

        cleanup_held(clean)
        raise
    cleanup_held(lambda: shutil.rmtree(staging, ignore_errors=True))
    return [_describe(name, path) for name, path in zip(names, targets, strict=True)]


def _beside(staged: Path, path: Path, place: Path, moved: list[Path]) -> Path:
    """`staged` where a rename can put it at `place`: a table written through a symbolic
    link is moved beside the file the link names first (a copy, on another file system),
    outside the renames that hold signals. What is moved is listed in `moved` before it
    is made, so that a failure or Ctrl-C mid-copy removes it."""
    if place == path:
        return staged
    tmp = temporary_sibling(place)
    moved.append(tmp)
    try:
        shutil.move(staged, tmp)
    except OSError as exc:
        raise SpecError(f"cannot write: {exc.strerror or exc}", source=str(path)) from None
    return tmp


def _put_tables(staged: list[Path], places: list[Path], overwrite: bool) -> None:
    """The tables renamed into place; without `overwrite` only where none is (another run
    may have written one since the check), and if one is taken, the ones this run put in
    place are taken back: none of its tables appear."""
    if overwrite:
        _replace_tables(staged, places)
        return
    placed: list[Path] = []
    try:
        for table, place in zip(staged, places, strict=True):
            put_new(table, place)
            placed.append(place)
    except BaseException:
        for target in placed:
            target.unlink(missing_ok=True)
        raise


def _replace_tables(staged: list[Path], places: list[Path]) -> None:
    """--overwrite: every table replaced, or none. Each old table is kept under a hidden
    name (a hard link, or a rename where links fail) until all are in place; if one cannot
    be replaced (a file this user may not replace), the ones replaced before it are put
    back. Replacing one by one left the first tables new and the rest old, a mix of two
    SFs, after an error that named the staging directory instead of the table."""
    kept: list[tuple[Path, Path]] = []  # (place, its old table)
    replaced: list[Path] = []
    try:
        for table, place in zip(staged, places, strict=True):
            if place.exists():
                old = temporary_sibling(place, "old")
                try:
                    os.link(place, old)
                except OSError:
                    os.rename(place, old)
                kept.append((place, old))
            os.replace(table, place)
            replaced.append(place)
    except OSError as exc:
        left = _put_back(kept, replaced)
        # "no table was replaced" only where every table was put back
        raise SpecError(
            f"cannot replace it ({exc.strerror or exc}); "
            + (f"and could not put back: {'; '.join(left)}" if left else "no table was replaced"),
            source=str(place),
        ) from None
    except BaseException:
        _put_back(kept, replaced)
        raise
    for _, old in kept:
        old.unlink(missing_ok=True)


def _put_back(kept: list[tuple[Path, Path]], replaced: list[Path]) -> list[str]:
    """The old tables back in their places; a place that had none loses the new table. A
    place that still holds its old table only loses the hidden link to it (a rename of one
    hard link onto another of the same file does nothing). An old table that cannot be
    put back stays under its hidden name. Returns what could not be put back, said."""
    old_of = dict(kept)
    left: list[str] = []
    for place in sorted({*old_of, *replaced}):
        try:
            if place not in old_of:
                place.unlink(missing_ok=True)
                continue
            old = old_of[place]
            if not (place.exists() and os.path.samefile(place, old)):
                os.replace(old, place)
            old.unlink(missing_ok=True)
        except OSError as exc:
            reason = exc.strerror or str(exc)
            left.append(
                f"{place} holds this run's new table ({reason})"
                if place not in old_of
                else f"{place}, whose old table is kept as {old_of[place]} ({reason})"
            )
    return left


def _make_staging(out: Path) -> Path:
    make_out_dir(out)
    try:
        return Path(tempfile.mkdtemp(prefix=".tpch-", dir=out))
    except OSError as exc:  # `out` exists: it is writing into it that failed
        raise SpecError(
            f"cannot write into the directory ({exc.strerror or exc})", source=str(out)
        ) from None


def directory_path(given: str | os.PathLike[str], field: str = "out") -> Path:
    """`given` as a Path, refusing an empty one: `Path("")` is the current directory, so
    `generate_tpch(1, "")` (a variable left unset) wrote the tables there, where the
    command line's `--out ""` is an error."""
    path = as_path(given, field)  # a number was a TypeError from os.fspath
    if os.fspath(given) == "":
        raise SpecError("is empty; give a directory", field=field)
    return path


def check_out_dir(out: Path) -> None:
    """Refuse an output directory that cannot be made, before anything is generated: a
    file, or a symbolic link (at `out` or above it) to nothing, which `mkdir` reported as
    "File exists" (and, for `tpcc`, as a traceback)."""
    if out.exists() and not out.is_dir():
        raise SpecError("exists and is not a directory; give a directory", source=str(out))
    for path in (out, *out.parents):
        if path.is_symlink() and not path.exists():
            raise SpecError(
                f"is a symbolic link to {os.readlink(path)!r}, which does not exist; "
                "create that directory or give another one",
                source=str(path),
            )


def make_out_dir(out: Path) -> None:
    """`out` and its missing parents, an OSError said as an error naming `out`."""
    try:
        out.mkdir(parents=True, exist_ok=True)
    except OSError as exc:
        raise SpecError(
            f"cannot create the directory ({exc.strerror or exc})", source=str(out)
        ) from None


def missing_ancestors(directory: Path) -> list[Path]:
    """`directory` and the parents above it that do not exist yet, deepest first: what a
    `mkdir(parents=True)` will make."""
    missing = []
    for path in (directory, *directory.parents):
        if path.exists():
            break
        missing.append(path)
    return missing


def remove_if_empty(made: list[Path]) -> None:
    """Remove the directories a generation `made` (deepest first) while they are empty: a
    failed one leaves no output directory behind, nor the parents made for it."""
    for directory in made:
        if not directory.is_dir() or any(directory.iterdir()):
            return
        directory.rmdir()


def _run_tool(tool: Path, sf: float, tables: Sequence[str], directory: Path) -> None:
    command = [
        str(tool), "parquet", "--scale-factor", repr(sf), "--tables", ",".join(tables),
        "--output-dir", str(directory), "--quiet", "--no-progress",
    ]  # fmt: skip
    try:
        # A Ctrl-C reaches the child too (same process group); `run` then kills and reaps it.
        done = subprocess.run(command, capture_output=True, text=True, check=False)
    except OSError as exc:
        raise SpecError(f"cannot run ({exc.strerror or exc})", source=str(tool)) from None
    missing = [t for t in tables if not (directory / f"{t}.parquet").is_file()]
    if done.returncode != 0 or missing:
        detail = done.stderr.strip().splitlines()[-1:] or [_how_it_ended(done.returncode)]
        # Named after where it writes (beside the output): a full disk is the usual cause.
        raise SpecError(
            f"{tool.name} failed to generate {', '.join(tables)} ({tool}): {detail[0]}",
            source=str(directory.parent),
        )


def _how_it_ended(returncode: int) -> str:
    """A child's exit status in words: a negative one is the signal that killed it (SIGXFSZ
    under `ulimit -f` says the file grew too large)."""
    if returncode >= 0:
        return f"exit status {returncode}"
    try:
        name = signal.Signals(-returncode).name
    except ValueError:
        return f"killed by signal {-returncode}"
    if name == "SIGXFSZ":
        return "killed by SIGXFSZ: a file grew past the size limit (`ulimit -f`)"
    return f"killed by {name}"


def _describe(name: str, path: Path) -> GeneratedTable:
    rows = pq.read_metadata(literal_path(path)).num_rows
    return GeneratedTable(name, path, rows, path.stat().st_size)
