"""CSV and TSV files as an import source: each row's feature columns become one record.

`import_csv` is `import_dataset`'s path for a file named `.csv` or `.tsv` (either may be
gzip-compressed: `.csv.gz`), for the apps whose records are rows of features (lc, knn*,
kmeans). The first line must name the columns; `columns` picks and orders the features
(default: every column but the index pandas' `to_csv` writes first, `_pandas_index`), as
for a Parquet table, with the same messages. The shards are
.npy files holding exactly what a .npy of the same values would give.

**Parsed once, into a temporary .npy.** A contiguous split needs the record count before
the first shard is written, and a CSV tells it only once parsed to its end. Parsing is
the import's cost (pyarrow reads some 170 MB/s of text on one core, where copying records
runs at GB/s), so a second pass to count would halve the rate. Instead the records are
parsed once, a block of text (`BLOCK_BYTES`) at a time, into a .npy in a staging directory
beside the data set (marked and held as `import_dataset`'s own: a run killed meanwhile
leaves one the next run sweeps), and that file is sharded as any .npy is, then removed.
Memory stays bounded whatever the file's size (by its longest row, where one is longer than
a block: `_larger_blocks`); the disk needs room for the records twice
(float32 records take some 40% of the text's size) until the data set is written.

**Values.** pyarrow parses each value straight to float32, rounded once to the nearest
float32 (through float64, a value near a float32 midpoint would be rounded twice). Quoted
fields, CRLF line ends, spaces around a number and blank lines are accepted. A field that is
empty or not a number, a row with too few or too many fields, and a value that is not
finite as float32 (`inf`, `nan`, or `1e300`: beyond float32's range) are errors naming the
file, the line and the column. pyarrow's errors give the row (the first line is row 1, blank
lines are not rows); the line, which differs where a quoted value spans lines, is found
by reading the file again up to that row with Python's csv module (only on an error).
"""

from __future__ import annotations

import csv
import gzip
import json
import math
import os
import re
import zlib
from collections.abc import Callable, Iterator, Sequence
from contextlib import ExitStack, contextmanager
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any, TextIO

import numpy as np

from ndpkit.errors import SpecError, brief
from ndpkit.files import cleanup_held, literal_path, signals_held
from ndpkit.kernels import Kernel
from ndpkit.runtime.dataset import (
    Dataset,
    ShardStamp,
    _check_source_unchanged,
    _check_target,
    _check_utf8_path,
    _disk,
    _hold,
    _mark,
    _new_sibling_dir,
    _npy_sources,
    _OutputFile,
    _reason,
    _remove_empty,
    _remove_staging,
    _some_names,
    _source_columns,
    _stamp_of,
    _target,
    _too_few,
    _write_dataset,
    _WriteError,
    batch_to_records,
    npy_header,
)

DELIMITERS = {".csv": ",", ".tsv": "\t"}
"""The delimiter of each suffix read as delimited text (each also as `.csv.gz`, `.tsv.gz`)."""
BLOCK_BYTES = 2**20
"""The text pyarrow parses at once: one batch of records each, so memory stays bounded.
pyarrow's default; 4 and 16 MiB measured no faster. A file with a longer row is read in
larger blocks (`_larger_blocks`)."""
MAX_BLOCK_BYTES = 2**24
"""The largest block a file is read in: a row longer than this (a quote never closed makes
the rest of the file one value) is refused. pyarrow reads some 20 blocks ahead of the parse:
a 432 MB file read in 16 MiB blocks peaked at 410 MB resident (120 MB in 1 MiB blocks)."""
_STRADDLING = "straddling object straddles two block boundaries"
"""pyarrow's error on a row longer than its block of text, with no row in it."""
PROGRESS_BYTES = 2**20
"""How far the parse's `progress` moves between calls, at least (bar its last call)."""
_SNIFF_BYTES = 64 * 2**10
"""How much of a file's start is looked at for what makes it no CSV (binary data)."""
_SCRATCH_NAME = "records.npy"
_MAGICS = {
    b"PAR1": "a Parquet file (name it .parquet)",
    b"\x93NUMPY": "a .npy file (name it .npy)",
    b"PK\x03\x04": "a zip archive (an .xlsx workbook or an .npz?)",
    b"\x1f\x8b": "gzip-compressed (a compressed CSV is read as one when named .csv.gz or .tsv.gz)",
}


def delimiter_of(src: Path) -> str | None:
    """The delimiter of a file named as delimited text (`x.csv`, `x.tsv.gz`), else None."""
    name = src.name.lower().removesuffix(".gz")
    return DELIMITERS.get(os.path.splitext(name)[1])


@dataclass(frozen=True)
class _Csv:
    """A CSV source as checked before it is parsed."""

    path: Path
    delimiter: str
    names: tuple[str, ...]
    """The header's column names."""
    chosen: tuple[str, ...]
    """The feature columns, in record order."""
    by_default: bool
    """No columns were given: `chosen` is every column but `index`."""
    index: tuple[str, ...]
    """The leading columns a pandas DataFrame's `to_csv` writes its index in (see
    `_pandas_index`), left out by default."""
    stamp: ShardStamp
    skip: int = 0
    """Lines before the header: 1 where the first line names the delimiter (`sep=;`)."""
    trailing: int = 0
    """The unnamed columns ending the header that are taken for a delimiter ending every
    line (`_trailing_unnamed`): left out, and read only to check that they are empty."""
    block_bytes: int = 0
    """The text pyarrow parses at once, where a row did not fit in `BLOCK_BYTES` (0: those;
    see `block_size`)."""

    @property
    def block_size(self) -> int:
        return self.block_bytes or BLOCK_BYTES

    @property
    def trailing_names(self) -> tuple[str, ...]:
        """The trailing columns' names as read (`_opened`): unique, unlike their header's."""
        first = len(self.names) - self.trailing
        return tuple(f"\0trailing column {i + 1}" for i in range(first, len(self.names)))

    @property
    def gzipped(self) -> bool:
        return self.path.name.lower().endswith(".gz")


def _csv_arrow() -> tuple[Any, Any]:
    """pyarrow and pyarrow.csv, imported on first use (see `dataset._arrow`)."""
    import pyarrow as pa  # type: ignore[import-untyped, unused-ignore]  # noqa: PLC0415
    import pyarrow.csv as pc  # type: ignore[import-untyped, unused-ignore]  # noqa: PLC0415

    return pa, pc


def import_csv(
    src: Path,
    kernel: Kernel,
    devices: int,
    shard_bytes: int,
    columns: Sequence[str] | None,
    path: Path,
    overwrite: bool,
    meta: dict[str, Any],
    on_stale_removed: Callable[[Path], object] | None,
    progress: Callable[[int, int], None] | None = None,
) -> Dataset:
    """`import_dataset` of a CSV file (see the module's docstring): its header and columns
    are checked, and the target, before the text is parsed.

    `progress`, if given, is called in two phases, each from (0, total) to (total, total):
    while the text is parsed, with (bytes of the file read, its size: compressed bytes for
    a `.gz`; `PROGRESS_BYTES` apart at most, ahead of the parse by at most the blocks
    pyarrow reads ahead), then as `_write_dataset` writes the shards, with (record bytes
    written, record bytes in all)."""
    source = _checked_source(src, kernel, columns)
    _check_target(_target(path), overwrite)  # refused now, not after parsing gigabytes
    with _scratch(_target(path)) as scratch:
        npy = scratch / _SCRATCH_NAME
        total = _parse_into(source, kernel, npy, progress)
        if total == 0:
            header = _some_names(source.names)
            raise SpecError(f"has a header ({header}) but no rows", source=str(src))
        if total < devices:
            raise SpecError(_too_few(total, "row", devices), source=str(src))
        try:
            found, records = _npy_sources(npy, kernel, devices, shard_bytes)
        except SpecError as exc:  # it names the copy, which the user never saw, as its source
            if exc.source != str(npy):
                raise
            raise SpecError(
                f"the temporary copy of its records: {exc.detail}", source=str(src)
            ) from None
        return _write_dataset(
            path,
            overwrite,
            meta,
            found,
            records,
            on_stale_removed,
            progress,
            held_bytes=npy.stat().st_size,
        )


def _checked_source(src: Path, kernel: Kernel, columns: Sequence[str] | None) -> _Csv:
    pa, _ = _csv_arrow()
    delimiter = delimiter_of(src)
    assert delimiter is not None, src
    if len(kernel.record_shape) != 1:
        raise SpecError(
            f"app {kernel.name!r} has records of shape {kernel.record_shape}; a CSV file "
            "holds rows of features (apps whose records have shape (d,): lc, knn*, kmeans)",
            source=str(src),
        )
    # pyarrow opens it by its path, which must be UTF-8: b"caf\xe9.csv" ended in a traceback.
    _check_utf8_path(src)
    stamp = _stamp_of(src)
    gzipped = src.name.lower().endswith(".gz")
    start = _start_of(src, gzipped)
    _check_text(src, start, gzipped)
    named = _named_delimiter(src, start)
    if named is None:
        _check_separated(src, start, delimiter)
    else:
        delimiter = named
    skip = int(named is not None)
    unknown = _Csv(src, delimiter, (), (), True, (), stamp, skip)
    while True:  # pyarrow parses the first block with the header: a row there may not fit
        try:
            names, empty = _header(unknown)
            break
        except _RowTooLongError:
            unknown = _larger_blocks(unknown)
    # Every column as float32 for `_source_columns`: a CSV's types are known only once
    # parsed, and a column that is not numbers is named, by its line, as it is.
    # The pandas index is said as a Parquet table's is: as pandas' metadata, which
    # `_source_columns` leaves out by default (and names where the count is wrong).
    index = _pandas_index(names)
    metadata = {"pandas": json.dumps({"index_columns": list(index)})} if index else None
    trailing = _trailing_unnamed(names, index, empty)
    kept = names[: len(names) - trailing]
    schema = pa.schema([pa.field(name, pa.float32()) for name in kept], metadata=metadata)
    given = None if columns is None or isinstance(columns, str) else _as_in(names, columns)
    chosen = _source_columns(src, schema, given, kernel)
    return _Csv(
        src,
        delimiter,
        names,
        chosen,
        columns is None,
        index,
        stamp,
        skip,
        trailing,
        unknown.block_bytes,
    )


class _RowTooLongError(Exception):
    """pyarrow met a row longer than the block of text it parses at once (`_STRADDLING`)."""


def _larger_blocks(source: _Csv) -> _Csv:
    """`source` read in blocks 8 times larger, after a row that did not fit in one: a long
    quoted value (a column of notes or JSON beside the features) refused the whole file
    with pyarrow's "straddling object straddles two block boundaries (try to increase block
    size?)", naming no row and asking for a setting the user does not have. Memory then
    grows with the longest row, up to `MAX_BLOCK_BYTES`, past which the file is refused."""
    if source.block_size >= MAX_BLOCK_BYTES:
        raise SpecError(
            f"holds a row longer than {MAX_BLOCK_BYTES // 2**20} MiB (a quoted value that is "
            "never closed makes the rest of the file one value?), which is not read",
            source=str(source.path),
        )
    return replace(source, block_bytes=min(source.block_size * 8, MAX_BLOCK_BYTES))


_UNNAMED = re.compile(r"Unnamed: \d+(\.\d+)?")
"""The name pandas' `read_csv` gives a column whose header is empty (`.1` for a second of
the same name)."""


def _pandas_index(names: Sequence[str]) -> tuple[str, ...]:
    """The leading columns with no name: a pandas DataFrame's `to_csv` writes its index as
    the first column (the levels of a MultiIndex as the first columns) under an empty
    header name (`,x,y`), and a file read back with `read_csv` names such a column
    `Unnamed: 0`, which `to_csv` then writes as a column of its own. Taken by default, the
    row numbers became a feature (or "3 columns (, x, y)" was refused for knn2)."""
    count = 0
    while count < len(names) and (not names[count] or _UNNAMED.fullmatch(names[count])):
        count += 1
    return tuple(names[:count])


def _trailing_unnamed(names: Sequence[str], index: Sequence[str], empty: Sequence[bool]) -> int:
    """How many columns with no name end the header, after its last named one, each empty
    in the first block of rows (`empty`, `_header`): a delimiter ending every line (`x,y,`
    then `1,2,`, as some exports and hand-made files have it) makes one, which was taken as
    a feature by default and refused as "3 columns (x, y, )" for knn2 (`Unnamed: 2` once
    pandas read and wrote such a file). An unnamed last column that holds values is a
    feature, as before; one that holds values only further on is an error
    (`_check_trailing_empty`), not values lost."""
    count = 0
    while (
        count < len(names) - len(index)
        and (not names[-1 - count] or _UNNAMED.fullmatch(names[-1 - count]))
        and empty[-1 - count]
    ):
        count += 1
    return count


def _as_in(names: Sequence[str], columns: Sequence[str]) -> list[str]:
    """Each column as the header names it where it does so only with spaces around the
    name (`x, y, z`, a header typed by hand, names " y"): `--columns x,y` means those."""
    spaced: dict[str, list[str]] = {}
    for name in names:
        spaced.setdefault(name.strip(), []).append(name)
    return [
        spaced[c.strip()][0] if c not in names and len(spaced.get(c.strip(), ())) == 1 else c
        for c in columns
    ]


_SEP_LINE = re.compile(rb"(?:\xef\xbb\xbf)?sep=([^\r\n\"])\r?(?:\n|$)")
"""A first line naming the delimiter, as Excel reads (and some exports write) it: `sep=;`
(after a byte-order mark, if any)."""


def _named_delimiter(src: Path, start: bytes) -> str | None:
    """The delimiter a first line `sep=C` names (that line is then no header: it is
    skipped, and lines are still counted from it), else None. It was "line 2, column 'sep=',
    holds 'x', which is not a number" (`sep=,`), or the `;` refusal of `_check_separated`."""
    named = _SEP_LINE.match(start)
    if named is None:
        return None
    delimiter = named[1].decode("latin-1")
    if not start[named.end() :].strip():
        raise SpecError(
            f"holds only a first line naming its delimiter (sep={delimiter}): a CSV file needs "
            "a line naming its columns after it, then a row per record",
            source=str(src),
        )
    if not named[1].isascii():
        raise SpecError(
            f"its first line names the delimiter {delimiter!r} (sep=): a delimiter must be "
            "one ASCII character",
            source=str(src),
        )
    return delimiter


def _check_separated(src: Path, start: bytes, delimiter: str) -> None:
    """A first line without the delimiter but with another separator (`a;b;c`, as
    spreadsheets write CSV where the decimal mark is a comma) is refused saying so: read
    as one column, it was "1 column (a;b;c)", or a row of "1,5;2" two fields, and the
    reason was left to be guessed."""
    line = start.split(b"\n", 1)[0].decode("utf-8", "replace").strip()
    seen = [sep for sep in ";\t|," if sep != delimiter and sep in line]
    if delimiter not in line and seen:
        kind = ".tsv" if delimiter == "\t" else ".csv"
        raise SpecError(
            f"its first line ({_clipped(line)}) has no {delimiter!r} but {seen[0]!r}: a {kind} "
            f"file is read as separated by {delimiter!r} (commas in .csv, tabs in .tsv; a first "
            f"line sep={seen[0]} names another)",
            source=str(src),
        )


def _start_of(src: Path, gzipped: bool) -> bytes:
    """The first `_SNIFF_BYTES` of the text (decompressed)."""
    try:
        with gzip.open(src, "rb") if gzipped else src.open("rb") as f:
            return f.read(_SNIFF_BYTES)
    except (gzip.BadGzipFile, EOFError, zlib.error) as exc:
        raise SpecError(f"not a readable gzip file ({brief(exc)})", source=str(src)) from None
    except OSError as exc:
        raise SpecError(f"cannot read it ({_reason(exc)})", source=str(src)) from None


def _check_text(src: Path, start: bytes, gzipped: bool) -> None:
    """What makes a file no CSV, said before pyarrow reads it as one column of odd text: no
    text at all, and binary data (a NUL byte, which text never holds)."""
    if not start.strip():
        raise SpecError(
            "is empty: a CSV file needs a first line naming its columns, then a row per record",
            source=str(src),
        )
    for magic, what in _MAGICS.items():
        if start.startswith(magic) and not (gzipped and magic == b"\x1f\x8b"):
            raise SpecError(f"not a CSV file: it is {what}", source=str(src))
    if _is_utf16(start):
        raise SpecError(
            'not a CSV file it reads: it is UTF-16 text (as Excel\'s "Unicode Text" saves), '
            'and only UTF-8 is read: save it as "CSV UTF-8", or convert it (iconv -f UTF-16 '
            "-t UTF-8)",
            source=str(src),
        )
    nul = start.find(b"\0")
    if nul >= 0:
        raise SpecError(
            f"not a CSV file: it holds binary data (a NUL byte at byte {nul:,})", source=str(src)
        )


def _is_utf16(start: bytes) -> bool:
    """Text in UTF-16: after its byte-order mark, or ASCII with a NUL byte after (or before)
    each character. It was "binary data (a NUL byte at byte 3)", which it is not."""
    if start.startswith((b"\xff\xfe", b"\xfe\xff")):
        return True
    head = start[: min(len(start), 256) // 2 * 2]
    return len(head) >= 4 and any(
        not head[nul::2].strip(b"\0") and b"\0" not in head[1 - nul :: 2] for nul in (0, 1)
    )


@contextmanager
def _opened(source: _Csv, convert: Any) -> Iterator[tuple[Any, Any]]:
    """pyarrow's streaming reader of the file and the file it reads (a `pa.OSFile`), on one
    thread: only then do its errors give
    the row (and one thread parsed faster than two here). No `invalid_row_handler`: with
    one (a Python function), one exit in five aborted the interpreter ("terminate called
    without an active exception")."""
    pa, pc = _csv_arrow()
    # A line skipped (`sep=;`) is still a row in pyarrow's errors: the file's lines count.
    read = pc.ReadOptions(use_threads=False, block_size=source.block_size, skip_rows=source.skip)
    if source.trailing:
        # Named anew so that each can be read: the header's names are all "" (",,").
        named = source.names[: len(source.names) - source.trailing] + source.trailing_names
        read = pc.ReadOptions(
            use_threads=False,
            block_size=source.block_size,
            skip_rows=source.skip + 1,  # the header: pyarrow still counts its rows alike
            column_names=list(named),
        )
    # A quoted value may span lines (a note column beside the features): without
    # newlines_in_values, one across a block's end was "parser got out of sync"; with it,
    # a 243 MB file parsed as fast.
    parse = pc.ParseOptions(delimiter=source.delimiter, newlines_in_values=True)
    # The file itself as well as the stream pyarrow reads (decompressed, for a .gz): its
    # position is how much of the file was read, for `progress`.
    with ExitStack() as opened:
        raw = opened.enter_context(pa.OSFile(literal_path(source.path)))
        stream = (
            opened.enter_context(pa.CompressedInputStream(raw, "gzip")) if source.gzipped else raw
        )
        reader = pc.open_csv(
            stream, read_options=read, parse_options=parse, convert_options=convert
        )
        try:
            yield reader, raw
        finally:
            # Before the stream: a reader left reading ahead from a closed stream aborted
            # the interpreter as it exited ("terminate called without an active exception").
            reader.close()


def _header(unknown: _Csv) -> tuple[tuple[str, ...], tuple[bool, ...]]:
    """The column names of the first line (after `unknown.skip` lines), and whether each
    column is empty in the first block of rows; a first line that holds only numbers is
    refused: it is a record, which taken as a header would be lost, and its values as
    names."""
    pa, pc = _csv_arrow()
    src = unknown.path
    first = "its first line" if not unknown.skip else "its header (the line after sep=)"
    # pyarrow parses the first block as it reads the header: a row there with too few or
    # too many fields is said here, with its line.
    try:
        with _opened(unknown, pc.ConvertOptions()) as (reader, _):
            names = tuple(reader.schema.names)
            empty = tuple(pa.types.is_null(kind) for kind in reader.schema.types)
    except UnicodeDecodeError as exc:
        raise SpecError(
            f"{first} is not UTF-8 text ({exc.reason}): save it as UTF-8 (Excel: "
            '"CSV UTF-8"), or convert it (iconv -f WINDOWS-1252 -t UTF-8, say)',
            source=str(src),
        ) from None
    except (pa.ArrowException, OSError) as exc:
        if _STRADDLING in str(exc):
            raise _RowTooLongError from None
        # pyarrow's word for a first line longer than its block, too ("Empty CSV file or
        # block"): a header of 150,000 names (2 MB) was "holds one line … and no rows".
        if "Empty CSV file" in str(exc) and _text_longer_than(unknown, unknown.block_size):
            raise _RowTooLongError from None
        if "Empty CSV file" in str(exc):  # one line, without a line break after it
            lines = "one line, its header," if not unknown.skip else "its sep= line and header"
            raise SpecError(f"holds {lines} and no rows", source=str(src)) from None
        raise _parse_error(unknown, exc) from None
    if all(_is_number(name) for name in names):
        shown = ", ".join(names[:8]) + (", …" if len(names) > 8 else "")
        raise SpecError(
            f"{first} ({shown}) holds numbers, not column names: the first line must "
            "name the columns (add a header line)",
            source=str(src),
        )
    return names, empty


def _text_longer_than(source: _Csv, size_bytes: int) -> bool:
    """Whether the file's text (decompressed) is longer than `size_bytes`."""
    try:
        with gzip.open(source.path, "rb") if source.gzipped else source.path.open("rb") as f:
            return len(f.read(size_bytes + 1)) > size_bytes
    except (OSError, EOFError, zlib.error):
        return False  # the parse says what is wrong


def _is_number(text: str) -> bool:
    try:
        float(text)
    except ValueError:
        return False
    return True


@contextmanager
def _scratch(target: Path) -> Iterator[Path]:
    """A staging directory beside `target` for the parsed records, made, marked and held as
    `dataset._staging` makes its own (so `remove_stale_staging` leaves it alone while this
    run holds it, and sweeps it if the run is killed) and removed when the import ends,
    however it ends. A failed write in it is a SpecError naming `target`."""
    scratch: Path | None = None
    made: list[Path] = []
    lock: int | None = None
    try:
        with signals_held():  # so that `scratch` is known before any signal can stop us
            scratch, made = _new_sibling_dir(target)
            lock = _hold(scratch)
            _mark(scratch)
        yield scratch
    except _WriteError as exc:
        # Until the staging directory is made, `exc.path` is the target itself, which no
        # temporary copy was at (a read-only directory was said to refuse "the temporary
        # copy of its records (DIR)"): said as `data generate` says it.
        what = (
            f"write the temporary copy of its records ({exc.path})"
            if scratch is not None
            else "create the data set directory"
        )
        raise SpecError(
            f"cannot {what}: {_reason(exc.error)}; nothing was written", source=str(target)
        ) from None
    finally:

        def clean() -> None:
            if scratch is not None:
                _remove_staging(scratch)
            _remove_empty(made)

        cleanup_held(clean)
        if lock is not None:
            os.close(lock)


def _parse_into(
    source: _Csv, kernel: Kernel, npy: Path, progress: Callable[[int, int], None] | None
) -> int:
    """Write every record of `source` to the new .npy `npy`; the number of records. A row
    longer than a block of text starts the parse again in larger blocks (`_larger_blocks`),
    its `progress` said again only past where it had come."""
    said = 0

    def onwards(done: int, total: int) -> None:
        nonlocal said
        if progress is not None and (done > said or said == 0):
            said = done
            progress(done, total)

    while True:
        try:
            return _parse_once(source, kernel, npy, onwards if progress is not None else None)
        except _RowTooLongError:
            with _disk(npy):
                npy.unlink()
            source = _larger_blocks(source)


def _parse_once(
    source: _Csv, kernel: Kernel, npy: Path, progress: Callable[[int, int], None] | None
) -> int:
    """`_parse_into` in `source.block_size` blocks. The .npy header, whose shape is not
    known until the end, is written last over one of the same length (`npy_header` pads
    every header to NPY_DATA_ALIGN bytes)."""
    shape = tuple(kernel.record_shape)
    placeholder = npy_header(kernel.dtype, (0, *shape))
    total = 0
    with _OutputFile(npy) as out:
        out.write(placeholder)
        for records in _records(source, kernel, progress):
            out.write(np.ascontiguousarray(records).data)
            total += len(records)
        header = npy_header(kernel.dtype, (total, *shape))
        assert len(header) == len(placeholder)
        with out.errors():
            out.file.seek(0)
            out.file.write(header)
    return total


def _records(
    source: _Csv, kernel: Kernel, progress: Callable[[int, int], None] | None
) -> Iterator[np.ndarray]:
    """The records, a block of text at a time, each checked finite."""
    pa, pc = _csv_arrow()
    # No null values: an empty field is a conversion error naming its row, not a null
    # found later without one.
    trailing = source.trailing_names
    convert = pc.ConvertOptions(
        column_types={name: pa.float32() for name in source.chosen}
        | {name: pa.string() for name in trailing},
        include_columns=[*source.chosen, *trailing],
        null_values=[],
        strings_can_be_null=False,
        quoted_strings_can_be_null=False,
    )
    first = 0
    for batch in _batches(source, convert, progress):
        if trailing:
            _check_trailing_empty(source, batch.select(list(trailing)), first)
        features = batch.select(list(source.chosen)) if trailing else batch
        records = batch_to_records(features, kernel.dtype)
        _check_finite(source, records, first)
        yield records
        first += len(records)


def _batches(
    source: _Csv, convert: Any, progress: Callable[[int, int], None] | None
) -> Iterator[Any]:
    """pyarrow's record batches of `source`; its errors (from the first block's, raised as
    the file is opened, on) as `_parse_error`s, and a file changed meanwhile as such. With
    `progress`, the bytes of the file read (see `import_csv`)."""
    pa, _ = _csv_arrow()
    size = source.stamp.size_bytes
    said = 0
    if progress is not None:
        progress(0, size)
    try:
        with _opened(source, convert) as (reader, raw):
            for blocks, batch in enumerate(reader, 1):
                _check_source_unchanged(source.path, source.stamp)
                yield batch
                if progress is not None:
                    # pyarrow reads up to 32 blocks ahead of the parse (on its I/O thread):
                    # a batch is a block of text, so a plain file's parse is where the
                    # blocks end (a .gz's text is not its bytes: it is said as read).
                    read = raw.tell()
                    at = read if source.gzipped else min(read, blocks * source.block_size)
                    if at - said >= PROGRESS_BYTES and at < size:
                        said = at
                        progress(at, size)
    except (pa.ArrowException, OSError, UnicodeDecodeError) as exc:
        _check_source_unchanged(source.path, source.stamp)  # truncated meanwhile: say so
        if _STRADDLING in str(exc):
            raise _RowTooLongError from None
        raise _parse_error(source, exc) from None
    _check_source_unchanged(source.path, source.stamp)
    if progress is not None:
        progress(size, size)


_CONVERSION = re.compile(
    r"In CSV column #(\d+): Row #(\d+): CSV conversion error to \w+: invalid value '(.*)'$",
    re.DOTALL,
)
_FIELD_COUNT = re.compile(r"Row #(\d+): Expected (\d+) columns, got (\d+)")


_MISSING = frozenset(("na", "n/a", "#n/a", "null", "none", "?", "."))
"""How exports write a missing value (lower case): R's write.csv `NA`, Excel's `#N/A`, SQL
tools' `NULL`, Python's `None`, the `?` of UCI's data sets, Stata's and SAS's `.`."""


def _parse_error(source: _Csv, exc: Exception) -> SpecError:
    """pyarrow's error as one naming the line and column (its text is parsed: a form this
    does not know is passed on as it is)."""
    text = str(exc)
    converted = _CONVERSION.search(text)
    if converted is not None:
        index, row, value = int(converted[1]), int(converted[2]), converted[3]
        name = source.names[index] if index < len(source.names) else f"#{index + 1}"
        where = f"{_line_of(source, row)}, column {name!r}"
        if not value.strip():
            return SpecError(
                f"{where}, is empty (a missing value); the apps' kernels need numbers: drop "
                "or fill the missing values first",
                source=str(source.path),
            )
        if value.strip().lower() in _MISSING:
            return SpecError(
                f"{where}, holds {value.strip()!r}, a missing value; the apps' kernels need "
                "numbers: drop or fill the missing values first",
                source=str(source.path),
            )
        if "," in value and any(_is_number(value.replace(",", mark)) for mark in (".", "")):
            return SpecError(
                f"{where}, holds {_clipped(value)!r}, which is not a number: the decimal mark "
                "must be a point, not a comma (and a number has no thousands separators)",
                source=str(source.path),
            )
        first = "first" if len(source.index) == 1 else f"first {len(source.index)}"
        every = (
            f"every column but the unnamed {first} (a pandas index)"
            if source.index
            else ("every column")
        )
        hint = (
            f" (without --columns, {every} is taken: name the {len(source.chosen)} feature columns)"
            if source.by_default
            else ""
        )
        return SpecError(
            f"{where}, holds {_clipped(value)!r}, which is not a number{hint}",
            source=str(source.path),
        )
    counted = _FIELD_COUNT.search(text)
    if counted is not None:
        row, expected, got = (int(group) for group in counted.groups())
        located = _locate(source, row)
        # A delimiter ending every line but the header's: the header lacks the empty name.
        ended = located is not None and got == expected + 1 and not located[1][-1].strip()
        hint = (
            f" (this one ends in a delimiter, {source.delimiter!r}: if every row does, end the "
            "header in one too, and the empty last column is left out)"
            if ended
            else ""
        )
        return SpecError(
            f"{_said(row, located)} has {got} field{'s' * (got != 1)} and the header "
            f"{expected}: every row needs a value in each column{hint}",
            source=str(source.path),
        )
    kind = "gzip-compressed CSV" if source.gzipped else "CSV"
    return SpecError(f"not a readable {kind} file ({brief(exc)})", source=str(source.path))


def _check_trailing_empty(source: _Csv, batch: Any, first: int) -> None:
    """A SpecError naming the first value in the trailing unnamed columns (`_Csv.trailing`)
    of `batch`, whose first row is record `first`: empty in the first block, such a column
    was taken for a delimiter ending every line, and its values would have been lost."""
    import pyarrow.compute as pc  # type: ignore[import-untyped, unused-ignore]  # noqa: PLC0415

    for j, column in enumerate(batch.columns):
        lengths = pc.utf8_length(pc.utf8_trim_whitespace(column))
        if not pc.max(lengths).as_py():
            continue
        at = int(np.argmax(lengths.to_numpy(zero_copy_only=False) > 0))
        index = len(source.names) - source.trailing + j
        row = first + at + 2 + source.skip  # pyarrow's row: the header is row 1 + skip
        raise SpecError(
            f"{_line_of(source, row)} holds {_clipped(column[at].as_py().strip())!r} in "
            f"column #{index + 1}, which has no name and was empty until then: an unnamed "
            "column at the header's end, empty in the first rows, is taken for a delimiter "
            "ending every line and left out; name the column in the header to read it",
            source=str(source.path),
        )


def _clipped(value: str, most: int = 40) -> str:
    return value if len(value) <= most else value[:most] + "…"


def _check_finite(source: _Csv, records: np.ndarray, first: int) -> None:
    """A SpecError naming the first value of `records` (the first is record `first`) that is
    not finite: every kernel's reference refuses NaN and ±inf. pyarrow parses `1e300` to
    +inf as it does `inf`: the text, read again, tells them apart."""
    finite = np.isfinite(records)
    if finite.all():
        return
    at = int(np.argmin(finite.all(axis=1)))
    j = int(np.argmin(finite[at]))
    value = float(records[at, j])
    name = source.chosen[j]
    row = first + at + 2 + source.skip  # pyarrow's row: the header is row 1 + skip
    located = _locate(source, row)
    fields = located[1] if located is not None else []
    index = source.names.index(name)
    text = fields[index].strip() if index < len(fields) else None
    limit = f"±{np.finfo(records.dtype).max:.1e}, the range of {records.dtype}"
    if math.isnan(value):
        held = "NaN"
    elif text is not None and text.lower().lstrip("+-") in ("inf", "infinity"):
        held = "+inf" if value > 0 else "-inf"
    elif text is not None:
        held = f"{_clipped(text)}, a value beyond {limit}"
    else:
        held = f"{'+' if value > 0 else '-'}inf (or a value beyond {limit})"
    raise SpecError(
        f"{_said(row, located)}, column {name!r}, holds {held}; the apps' "
        "kernels need finite values",
        source=str(source.path),
    )


def _line_of(source: _Csv, row: int) -> str:
    return _said(row, _locate(source, row))


def _said(row: int, located: tuple[int, list[str]] | None) -> str:
    """ "line N" of pyarrow's row `row` where it was located, else the row itself."""
    if located is not None:
        return f"line {located[0]}"
    return f"row {row} (the first line is row 1; blank lines are not rows)"


def _locate(source: _Csv, row: int) -> tuple[int, list[str]] | None:
    """The line on which pyarrow's row `row` starts (the first line is row 1, a blank line is no
    row), and its fields, as Python's csv module reads them; None if it cannot. Its limit on
    a field's length (128 KiB) is lifted to the longest row pyarrow reads while it looks: a
    longer note before the error named the error by its row alone."""
    limit = csv.field_size_limit()
    try:
        csv.field_size_limit(max(limit, MAX_BLOCK_BYTES))
        with _text(source) as f:
            reader = csv.reader(f, delimiter=source.delimiter)
            start, seen = 1, 0
            for fields in reader:
                if fields:
                    seen += 1
                    if seen == row:
                        return start, fields
                start = reader.line_num + 1
    except (OSError, EOFError, csv.Error, zlib.error):
        return None
    finally:
        csv.field_size_limit(limit)
    return None


def _text(source: _Csv) -> TextIO:
    # Undecodable bytes replaced: only lines are counted, and the fields of one are read.
    if source.gzipped:
        return gzip.open(source.path, "rt", encoding="utf-8", errors="replace", newline="")
    return source.path.open(encoding="utf-8", errors="replace", newline="")
