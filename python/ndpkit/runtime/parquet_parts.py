"""The part files of a Parquet table written as a directory, in the order its rows are read.

Spark writes a table as `x.parquet/part-00000-….parquet`, DuckDB's `COPY … TO 'dir'` as
`dir/data_0.parquet`, `dir/data_1.parquet`, …, pyarrow's `write_dataset` as `part-0.parquet`,
`part-1.parquet`, …, and tpchgen-cli's `--parts` as `lineitem/lineitem.1.parquet`, …; with
partitioning, each into hive-style `key=value/` subdirectories (Spark, DuckDB) or plain
`value/` ones (pyarrow's default). The rules, those of `pyarrow.dataset` and Spark:

- The parts are the `.parquet` and `.pq` files (any case) in the directory and in every
  subdirectory under it, at any depth (a symbolic link to a directory is followed, each real
  directory listed once).
- A file or subdirectory whose name starts with `.` or `_` is left out, with what is in it:
  Spark's `_SUCCESS`, `_common_metadata` and `_metadata` summaries, `.part-….crc` checksums
  and `_temporary/` (an unfinished job's files), macOS's `._x.parquet`. So is a file
  ending in `.crc` (Hadoop's checksums).
- Any other file is not a part: the caller refuses it rather than leave its rows out
  silently (a `.parq`, a stray CSV, an Iceberg table's metadata).
- The parts are in the order of their paths relative to the directory, compared directory
  by directory, with the numbers in a name compared as numbers: `part-2` before `part-10`,
  as DuckDB, pyarrow and tpchgen-cli number their parts without padding (DuckDB writes
  `data_10.parquet` after `data_9.parquet`; a plain sort read it second). Spark pads its
  part numbers, so both orders agree there. Names equal as numbers (`p-01`, `p-1`) are
  then in code-point order.
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from stat import S_ISREG

from ndpkit.errors import SpecError
from ndpkit.files import is_left_out, path_order, walk_real_dirs

PART_SUFFIXES = (".parquet", ".pq")


@dataclass(frozen=True)
class PartListing:
    """What a directory holds: its parts in order, and the files that are neither parts nor
    left out (in the same order)."""

    parts: list[Path]
    others: list[Path]


def is_part(name: str) -> bool:
    return not is_left_out(name) and name.lower().endswith(PART_SUFFIXES)


def holds_parts(root: Path) -> bool:
    """Whether the directory `root` holds at least one part, wherever the listing would find
    it (what cannot be listed is passed over here: `list_parts` says so)."""
    return any(is_part(name) for _, files in _walk(root, strict=False) for name in files)


def holds_file_named(root: Path, name: str) -> bool:
    """Whether a file of this name (left out or not: `.hoodie_partition_metadata`) is in
    `root` or in a directory the listing would list under it."""
    return any(name in files for _, files in _walk(root, strict=False))


def files_under(root: Path) -> Iterator[Path]:
    """The files the listing would consider under `root` (none of those left out), directory
    by directory in name order; what cannot be listed is passed over."""
    for top, files in _walk(root, strict=False):
        for name in sorted(files):
            if not is_left_out(name):
                yield Path(top, name)


def list_parts(root: Path) -> PartListing:
    """The parts of the table in the directory `root`, in order, and its other files. A part
    that is no regular file (a FIFO, which would block the read) or a directory that cannot
    be listed is an error naming it."""
    parts: list[Path] = []
    others: list[Path] = []
    for top, files in _walk(root, strict=True):
        for name in files:
            if is_left_out(name):
                continue
            path = Path(top, name)
            if not is_part(name):
                others.append(path)
                continue
            _check_regular(path)
            parts.append(path)
    parts.sort(key=lambda p: path_order(p.relative_to(root)))
    others.sort(key=lambda p: path_order(p.relative_to(root)))
    return PartListing(parts, others)


def _walk(root: Path, *, strict: bool) -> Iterator[tuple[str, list[str]]]:
    """Each directory under `root` (itself first) and its files' names, following links to
    directories, each real directory once (a link to an ancestor does not loop, and no part
    is read twice), without the directories that are left out. With `strict`, a directory
    that cannot be listed is an error naming it."""

    def refuse(exc: OSError) -> None:
        if strict:
            where = exc.filename if exc.filename is not None else root
            raise SpecError(f"cannot list it ({exc.strerror or exc})", source=str(where))

    for top, _, dirs, files in walk_real_dirs(root, refuse):
        dirs[:] = sorted(name for name in dirs if not is_left_out(name))
        yield top, files


def _check_regular(path: Path) -> None:
    try:
        regular = S_ISREG(path.stat().st_mode)  # through a link to what it names
    except OSError:
        return  # a broken link: opening it says so
    if not regular:
        raise SpecError(
            "not a regular file (a FIFO, device or socket?): the parts of a table are its "
            ".parquet and .pq files",
            source=str(path),
        )
