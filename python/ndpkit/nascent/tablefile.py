"""NASCENT2's on-disk table format (spec §3.1 TableFile, §3.3 DictionaryPage and DataPage).

    TableFile := Header | Schema | KeySection | RowSection

All integers are little-endian; the KeySection, every page in it, the RowSection, each
column block and the row offsets start on a 4 KiB boundary so that P2P reads are
page-aligned (zero bytes fill the gaps).

- **Header** (53 bytes at offset 0): the spec's fields, then ndpkit's schema pointer:
  magic u32 ("NSC2") | version u16 (1) | layout u8 (0 row, 1 column, 2 hybrid) |
  key_encoding u8 (0 PLAIN, 1 DICT) | n_rows u64 | key_width_bytes u8 | row_bytes u32
  (0 = variable) | key_section_off u64 | row_section_off u64 | row_offsets_off u64 (0 unless
  variable) | n_columns u16 | key_column u16 | schema_bytes u32.
- **Schema** (right after the header): per column, name_len u16 | name (UTF-8) | type u8 |
  block_off u64. Types: 1 bool, 2–5 int8/16/32/64, 6–9 uint8/16/32/64, 10–11 float32/64
  (fixed width), 12 utf8, 13 binary (variable). block_off is the column block's file offset
  in the column-wise layout, else 0. The spec's header carries no schema [choice: added].
- **KeySection**: PLAIN, n_rows × key_width_bytes values; DICT, a DictionaryPage, then a
  DataPage of n_rows keys (§3.3). In the row-wise layout the keys live in the rows, so the
  KeySection is the DictionaryPage alone (DICT) or absent (PLAIN, key_section_off = 0).
- **RowSection**: hybrid, the rows of every column but the key; row-wise, the rows of all
  columns (the key field holds its value or its DICT key); a row is its fields in schema
  order, a fixed field its value's bytes, a variable one len u32 | bytes. Fixed rows are
  n_rows × row_bytes; variable rows are concatenated, followed at row_offsets_off by
  (n_rows + 1) u64 offsets from row_section_off. Column-wise, every column but the key is
  its own block: n_rows values, or (n_rows + 1) u64 offsets then the bytes.

The pages are `ndpkit.nascent.pages`; a DICT key column's dictionary holds its distinct
values in first-seen order, with 8-bit keys up to 256 values and 16-bit keys up to 2^16
(spec §3.2: a column with more must be PLAIN). The value bytes and rows are
`ndpkit.nascent.tablerows`; `ndpkit.nascent.filesort` runs the kernels on a file.

`read_table_file` checks every field and raises `SpecError` naming the file and the field
(bad magic, version, layout, offsets, lengths, truncation, keys past the dictionary, …).
Writes are atomic (`ndpkit.files.replacing`). Tables are Arrow tables or Polars frames
without nulls.

Example:
    >>> frame = pl.DataFrame({"k": [3, 1, 2], "name": ["c", "a", "b"]})
    >>> write_table_file(frame, "k", path)            # hybrid, PLAIN int64 keys
    >>> t = read_table_file(path)
    >>> t.header.row_bytes, t.plain_keys.tolist(), t.row_offsets.tolist()
    (0, [3, 1, 2], [0, 5, 10, 15])
"""

from __future__ import annotations

import struct
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Literal

import numpy as np
import polars as pl
import pyarrow as pa
from numpy.typing import NDArray

from ndpkit.errors import ModelError, SpecError, as_path
from ndpkit.files import replacing
from ndpkit.nascent.dictionary import encode
from ndpkit.nascent.pages import (
    DataPage,
    DictionaryPage,
    Fault,
    decode_data_page,
    decode_dictionary_page,
    dictionary_page,
    encode_data_page,
    encode_dictionary_page,
)
from ndpkit.nascent.shuffler import Layout
from ndpkit.nascent.tablerows import (
    TYPES,
    Column,
    Field,
    arrow_array,
    field_of,
    parse_rows,
    read_block,
    read_offsets,
    rows_of,
    type_code,
)

KeyEncoding = Literal["plain", "dict"]
MAGIC = int.from_bytes(b"NSC2", "little")
VERSION = 1
PAGE_BYTES = 4096
"""Section alignment: P2P reads are 4 KiB pages."""
_HEADER = struct.Struct("<IHBBQBIQQQHHI")
HEADER_BYTES = _HEADER.size
_LAYOUTS: tuple[Layout, ...] = ("row", "column", "hybrid")
_ENCODINGS: tuple[KeyEncoding, ...] = ("plain", "dict")
_ENTRY = struct.Struct("<BQ")


def align(offset: int) -> int:
    """The next 4 KiB boundary at or after `offset`."""
    return -(-offset // PAGE_BYTES) * PAGE_BYTES


@dataclass(frozen=True)
class Header:
    """The fixed header, fields as in the file (layout and key encoding by name)."""

    layout: Layout
    key_encoding: KeyEncoding
    n_rows: int
    key_width_bytes: int
    row_bytes: int
    key_section_off: int
    row_section_off: int
    row_offsets_off: int
    n_columns: int
    key_column: int
    schema_bytes: int
    magic: int = MAGIC
    version: int = VERSION

    def pack(self) -> bytes:
        return _HEADER.pack(
            self.magic,
            self.version,
            _LAYOUTS.index(self.layout),
            _ENCODINGS.index(self.key_encoding),
            self.n_rows,
            self.key_width_bytes,
            self.row_bytes,
            self.key_section_off,
            self.row_section_off,
            self.row_offsets_off,
            self.n_columns,
            self.key_column,
            self.schema_bytes,
        )


def _to_arrow(frame: pl.DataFrame | Any) -> Any:
    if isinstance(frame, pl.DataFrame):
        return frame.to_arrow()
    if isinstance(frame, pa.Table):
        return frame
    raise ModelError(
        f"write_table_file takes a Polars DataFrame or an Arrow table, got {type(frame)}"
    )


def _key_numpy(array: Any, column: Column) -> NDArray[Any]:
    if column.dtype is not None:
        return np.asarray(array.to_numpy(zero_copy_only=False), dtype=column.dtype)
    if column.kind == "utf8":
        return np.asarray(array.cast(pa.large_string()).to_pylist(), dtype=object)
    return np.asarray(array.cast(pa.large_binary()).to_pylist(), dtype=object)


def _dictionary_sections(array: Any, column: Column) -> tuple[DictionaryPage, DataPage]:
    """Dictionary-encode the key column (first-seen order, 8- or 16-bit keys)."""
    try:
        encoded = encode(_key_numpy(array, column))
    except ModelError as e:
        raise ModelError(f"key column {column.name!r}: {e}") from None
    values = encoded.dictionary
    if column.dtype is not None:
        rows = np.ascontiguousarray(values, dtype=column.dtype).view(np.uint8)
        raw = rows.reshape(len(values), column.width)
        return dictionary_page([r.tobytes() for r in raw], column.width), DataPage(encoded.keys)
    as_bytes = [v.encode() if isinstance(v, str) else bytes(v) for v in values.tolist()]
    if any(len(v) > 0x8000 for v in as_bytes):
        raise ModelError(f"key column {column.name!r} has a value longer than 32 KiB (L_Max, u16)")
    return dictionary_page(as_bytes, None), DataPage(encoded.keys)


def _schema_bytes(columns: Sequence[Column]) -> bytes:
    out = []
    for c in columns:
        name = c.name.encode()
        out += [len(name).to_bytes(2, "little"), name, _ENTRY.pack(c.type_code, c.block_off)]
    return b"".join(out)


@dataclass(frozen=True)
class _Sections:
    """What goes where in a file, before the header is written."""

    header: Header
    columns: tuple[Column, ...]
    pieces: tuple[tuple[int, bytes | NDArray[np.uint8]], ...]


def _key_section(
    layout: Layout,
    encoding: KeyEncoding,
    key: Field,
    pages: tuple[DictionaryPage, DataPage] | None,
) -> list[bytes]:
    """The KeySection's pages, each to start on a 4 KiB boundary."""
    if pages is not None:
        dictionary, data = pages
        if layout == "row":
            return [encode_dictionary_page(dictionary)]
        return [encode_dictionary_page(dictionary), encode_data_page(data)]
    if layout == "row":
        return []
    assert key.fixed is not None
    return [key.fixed.tobytes()]


def _plan(table: Any, key_index: int, layout: Layout, encoding: KeyEncoding) -> _Sections:
    names = list(table.column_names)
    columns = [Column(n, type_code(n, table.schema.field(i).type)) for i, n in enumerate(names)]
    arrays = [table.column(i).combine_chunks() for i in range(len(names))]
    n = table.num_rows
    pages = (
        _dictionary_sections(arrays[key_index], columns[key_index]) if encoding == "dict" else None
    )
    fields = [field_of(c, a) for c, a in zip(columns, arrays, strict=True)]
    if pages is not None and layout == "row":
        keys = np.ascontiguousarray(pages[1].keys)
        fields[key_index] = Field(fixed=keys.view(np.uint8).reshape(n, keys.dtype.itemsize))
    key_width = pages[1].keys.dtype.itemsize if pages is not None else columns[key_index].width
    schema_len = len(_schema_bytes(columns))
    key_pages = _key_section(layout, encoding, fields[key_index], pages)
    key_off, pieces, at = _place(key_pages, HEADER_BYTES + schema_len)
    if layout != "row" and not key_off:
        key_off = align(at)  # an empty PLAIN key section
    stored = [i for i in range(len(columns)) if layout == "row" or i != key_index]
    fixed = all(fields[i].fixed is not None for i in stored)
    row_bytes = _fixed_row_bytes(columns, stored, key_index, key_width) if fixed else 0
    row_off, offsets_off = align(at), 0
    if layout == "column":
        _, blocks, _ = _place([fields[i].block() for i in stored], row_off)
        pieces += blocks
        for i, (offset, _) in zip(stored, blocks, strict=True):
            columns[i] = Column(columns[i].name, columns[i].type_code, offset)
    else:
        rows, row_offsets = rows_of([fields[i] for i in stored], n)
        pieces.append((row_off, rows))
        if row_offsets is not None:
            offsets_off = align(row_off + rows.size)
            pieces.append((offsets_off, row_offsets.astype("<u8").view(np.uint8)))
    header = Header(
        layout=layout,
        key_encoding=encoding,
        n_rows=n,
        key_width_bytes=key_width,
        row_bytes=row_bytes,
        key_section_off=key_off,
        row_section_off=row_off,
        row_offsets_off=offsets_off,
        n_columns=len(columns),
        key_column=key_index,
        schema_bytes=schema_len,
    )
    return _Sections(header, tuple(columns), tuple(pieces))


def _place(
    pieces: Sequence[bytes], at: int
) -> tuple[int, list[tuple[int, bytes | NDArray[np.uint8]]], int]:
    """Each piece on the next 4 KiB boundary from `at`: (the first's offset or 0, the
    placed pieces, the end of the last)."""
    placed: list[tuple[int, bytes | NDArray[np.uint8]]] = []
    for piece in pieces:
        at = align(at)
        placed.append((at, piece))
        at += len(piece)
    return (placed[0][0] if placed else 0), placed, at


def _fixed_row_bytes(
    columns: Sequence[Column], fields: Sequence[int], key_index: int, key_width: int
) -> int:
    """Bytes per row of the row-section `fields` (the key field holds `key_width` bytes)."""
    return sum(key_width if i == key_index else columns[i].width for i in fields)


def write_table_file(
    frame: pl.DataFrame | Any,
    key_column: str,
    path: Path | str,
    *,
    layout: Layout = "hybrid",
    key_encoding: KeyEncoding | Literal["auto"] = "auto",
) -> Header:
    """Write a table as a TableFile, atomically; returns the header written.

    `key_encoding="auto"` stores a fixed-width key PLAIN and a utf8/binary key as DICT (a
    variable-length key has no PLAIN form). Raises SpecError for a bad option or an
    unwritable path, ModelError for a table the format cannot hold (nulls, other types, a
    DICT key column of more than 2^16 distinct values).
    """
    path = as_path(path, "path")  # a number was pathlib's TypeError
    option = Fault(f"{path}")
    option.check(layout in _LAYOUTS, "layout", f"must be one of {_LAYOUTS}, got {layout!r}")
    allowed = (*_ENCODINGS, "auto")
    option.check(
        key_encoding in allowed, "key_encoding", f"must be one of {allowed}, got {key_encoding!r}"
    )
    table = _to_arrow(frame)
    names = list(table.column_names)
    option.check(key_column in names, "key_column", f"{key_column!r} is not a column of {names}")
    _check_table(table)
    key_index = names.index(key_column)
    variable_key = type_code(key_column, table.schema.field(key_index).type) in (12, 13)
    encoding: KeyEncoding = (
        "dict" if key_encoding == "dict" or (key_encoding == "auto" and variable_key) else "plain"
    )
    option.check(
        not (variable_key and encoding == "plain"),
        "key_encoding",
        f"key column {key_column!r} is variable-length; PLAIN keys need a fixed width, use 'dict'",
    )
    sections = _plan(table, key_index, layout, encoding)
    with replacing(path) as tmp, tmp.open("wb") as out:
        out.write(sections.header.pack())
        out.write(_schema_bytes(sections.columns))
        end = out.tell()
        for offset, piece in sections.pieces:
            out.seek(offset)
            out.write(piece.tobytes() if isinstance(piece, np.ndarray) else piece)
            end = max(end, offset + len(piece))
        # An empty section still starts inside the file.
        h = sections.header
        out.truncate(max(end, h.key_section_off, h.row_section_off, h.row_offsets_off))
    return sections.header


def _check_table(table: Any) -> None:
    names = list(table.column_names)
    if not names:
        raise ModelError("a TableFile needs at least one column")
    if len(set(names)) != len(names) or len(names) > 0xFFFF:
        raise ModelError(f"column names must be unique, at most 65,535 of them: {names}")
    for i, name in enumerate(names):
        if len(name.encode()) > 0xFFFF:
            raise ModelError(f"column name {name[:40]!r}… is longer than 65,535 bytes")
        if table.column(i).null_count:
            raise ModelError(
                f"column {name!r} has {table.column(i).null_count} nulls; a TableFile has no "
                "null bitmap"
            )


@dataclass(frozen=True)
class TableFile:
    """A TableFile read and checked: its header and schema, the decoded table (Arrow), and
    the raw sections the kernels read: `plain_keys` or the DICT pages, the RowSection's rows
    and offsets, and column-wise the column blocks (`blocks`, by column number)."""

    path: Path
    header: Header
    columns: tuple[Column, ...]
    table: Any
    plain_keys: NDArray[Any] | None
    dictionary: DictionaryPage | None
    data_page: DataPage | None
    rows: NDArray[np.uint8]
    row_offsets: NDArray[np.uint64] | None
    blocks: Mapping[int, Field] = field(default_factory=dict)

    @property
    def key(self) -> Column:
        return self.columns[self.header.key_column]

    def row_fields(self) -> list[int]:
        """The columns stored in the RowSection's rows, in row order (none column-wise)."""
        if self.header.layout == "column":
            return []
        return [
            i
            for i in range(len(self.columns))
            if self.header.layout == "row" or i != self.header.key_column
        ]

    def records(self) -> NDArray[np.uint8]:
        """Fixed-width rows as uint8 (n_rows, row_bytes); ModelError for variable rows."""
        if self.row_offsets is not None or self.header.layout == "column":
            raise ModelError(
                f"{self.path}: rows are not fixed-width records ({self.header.layout} layout)"
            )
        return self.rows.reshape(self.header.n_rows, self.header.row_bytes)

    def to_polars(self) -> pl.DataFrame:
        frame = pl.from_arrow(self.table)
        assert isinstance(frame, pl.DataFrame)
        return frame


def read_table_file(path: Path | str) -> TableFile:
    """Read and check a TableFile; SpecError naming the file and the field if it is invalid."""
    path = as_path(path, "path")  # a number was pathlib's TypeError
    fault = Fault(str(path))
    try:
        data = np.fromfile(path, dtype=np.uint8)
    except OSError as exc:
        raise SpecError(f"cannot read: {exc.strerror or exc}", source=str(path)) from None
    header = _read_header(data, fault)
    columns = _read_schema(data, header, fault)
    _check_header(header, columns, data.size, fault)
    key_end, plain, dictionary, data_page = _read_key_section(data, header, columns, fault)
    fault.check(
        header.row_section_off >= key_end,
        "row_section_off",
        f"{header.row_section_off} overlaps the header, schema or KeySection (ending at {key_end})",
    )
    rows, row_offsets, fields = _read_rows(data, header, columns, fault)
    if header.layout == "row" and dictionary is not None:
        data_page = _row_keys(fields[header.key_column], header, len(dictionary.values), fault)
    arrays = []
    for i, column in enumerate(columns):
        if i == header.key_column and header.key_encoding == "dict":
            assert dictionary is not None and data_page is not None
            arrays.append(_dictionary_array(column, dictionary, data_page.keys, fault))
        elif i == header.key_column and plain is not None:
            arrays.append(arrow_array(column, Field(fixed=_as_rows(plain)), fault))
        else:
            arrays.append(arrow_array(column, fields[i], fault))
    table = pa.table(arrays, names=[c.name for c in columns])
    blocks = fields if header.layout == "column" else {}
    return TableFile(
        path, header, columns, table, plain, dictionary, data_page, rows, row_offsets, blocks
    )


def _as_rows(values: NDArray[Any]) -> NDArray[np.uint8]:
    return np.ascontiguousarray(values).view(np.uint8).reshape(len(values), values.dtype.itemsize)


def _read_header(data: NDArray[np.uint8], fault: Fault) -> Header:
    fault.check(
        data.size >= HEADER_BYTES,
        "header",
        f"truncated: {data.size} bytes, a header is {HEADER_BYTES}",
    )
    (magic, version, layout, encoding, *fields) = _HEADER.unpack_from(data.data)
    fault.check(
        magic == MAGIC, "magic", f"0x{magic:08x} is not a TableFile's 0x{MAGIC:08x} ('NSC2')"
    )
    fault.check(
        version == VERSION, "version", f"{version} is not supported (this reader reads {VERSION})"
    )
    fault.check(
        layout < len(_LAYOUTS), "layout", f"{layout} is not 0 (row), 1 (column) or 2 (hybrid)"
    )
    fault.check(
        encoding < len(_ENCODINGS), "key_encoding", f"{encoding} is not 0 (PLAIN) or 1 (DICT)"
    )
    header = Header(_LAYOUTS[layout], _ENCODINGS[encoding], *fields)
    fault.check(header.n_columns >= 1, "n_columns", "a table has at least one column, got 0")
    fault.check(
        header.key_column < header.n_columns,
        "key_column",
        f"{header.key_column} is not one of the {header.n_columns} columns",
    )
    fault.check(
        HEADER_BYTES + header.schema_bytes <= data.size,
        "schema_bytes",
        f"{header.schema_bytes} bytes of schema run past the end of the file ({data.size} bytes)",
    )
    for name in ("key_section_off", "row_section_off", "row_offsets_off"):
        offset = getattr(header, name)
        fault.check(offset % PAGE_BYTES == 0, name, f"{offset} is not 4 KiB-aligned")
        fault.check(
            offset <= data.size, name, f"{offset} is past the end of the file ({data.size} bytes)"
        )
    return header


def _read_schema(data: NDArray[np.uint8], header: Header, fault: Fault) -> tuple[Column, ...]:
    raw = data[HEADER_BYTES : HEADER_BYTES + header.schema_bytes].tobytes()
    at, columns = 0, []
    for i in range(header.n_columns):
        field = f"schema[{i}]"
        fault.check(at + 2 <= len(raw), field, "truncated: the schema ends inside the entry")
        size = int.from_bytes(raw[at : at + 2], "little")
        fault.check(
            at + 2 + size + _ENTRY.size <= len(raw),
            field,
            "truncated: the schema ends inside the entry",
        )
        try:
            name = raw[at + 2 : at + 2 + size].decode()
        except UnicodeDecodeError:
            raise fault(f"{field}.name", "is not UTF-8") from None
        type_code, block_off = _ENTRY.unpack_from(raw, at + 2 + size)
        fault.check(type_code in TYPES, f"{field}.type", f"{type_code} is not a type code (1–13)")
        columns.append(Column(name, type_code, block_off))
        at += 2 + size + _ENTRY.size
    fault.check(
        at == len(raw), "schema_bytes", f"{header.schema_bytes} bytes, the entries take {at}"
    )
    names = [c.name for c in columns]
    fault.check(len(set(names)) == len(names), "schema", f"column names repeat: {names}")
    return tuple(columns)


def _check_header(header: Header, columns: Sequence[Column], size: int, fault: Fault) -> None:
    key = columns[header.key_column]
    if header.key_encoding == "plain":
        fault.check(
            key.dtype is not None,
            "key_encoding",
            f"PLAIN, but key column {key.name!r} is {key.kind}",
        )
        fault.check(
            header.key_width_bytes == key.width,
            "key_width_bytes",
            f"{header.key_width_bytes}, but PLAIN {key.kind} keys are {key.width} bytes",
        )
    else:
        fault.check(
            header.key_width_bytes in (1, 2, 4),
            "key_width_bytes",
            f"DICT keys are 1, 2 or 4 bytes, got {header.key_width_bytes}",
        )
    stored = [i for i in range(len(columns)) if header.layout == "row" or i != header.key_column]
    # A row-wise DICT key is stored as its fixed-width key, whatever the value type.
    variable = any(
        columns[i].dtype is None
        for i in stored
        if i != header.key_column or header.key_encoding == "plain"
    )
    fixed = (
        0
        if variable
        else _fixed_row_bytes(columns, stored, header.key_column, header.key_width_bytes)
    )
    fault.check(
        header.row_bytes == fixed,
        "row_bytes",
        f"{header.row_bytes}, but the schema's rows are {fixed} bytes",
    )
    offsets_needed = variable and header.layout != "column"
    fault.check(
        (header.row_offsets_off != 0) == offsets_needed,
        "row_offsets_off",
        f"{header.row_offsets_off}: variable rows need offsets, fixed rows and columns have none",
    )
    no_keys = header.layout == "row" and header.key_encoding == "plain"
    start = HEADER_BYTES + header.schema_bytes
    fault.check(
        header.key_section_off == 0 if no_keys else header.key_section_off >= start,
        "key_section_off",
        f"{header.key_section_off}: 0 for row-wise PLAIN keys, else past the schema ({start})",
    )
    for i, c in enumerate(columns):
        in_block = header.layout == "column" and i != header.key_column
        ok = header.row_section_off <= c.block_off <= size if in_block else c.block_off == 0
        fault.check(
            ok and c.block_off % PAGE_BYTES == 0,
            f"schema[{i}].block_off",
            f"{c.block_off}: a column block is 4 KiB-aligned in the RowSection (column-wise only)",
        )


def _read_key_section(
    data: NDArray[np.uint8], header: Header, columns: Sequence[Column], fault: Fault
) -> tuple[int, NDArray[Any] | None, DictionaryPage | None, DataPage | None]:
    """(end of the KeySection, PLAIN keys, DictionaryPage, DataPage)."""
    key, at = columns[header.key_column], header.key_section_off
    if header.layout == "row" and header.key_encoding == "plain":
        return HEADER_BYTES + header.schema_bytes, None, None, None
    view = data.data
    if header.key_encoding == "plain":
        end = at + header.n_rows * key.width
        fault.check(
            end <= data.size, "key_section", f"truncated: {header.n_rows} keys end at {end}"
        )
        assert key.dtype is not None
        return end, np.frombuffer(view, key.dtype, header.n_rows, at), None, None
    dictionary, size = decode_dictionary_page(view[at:], source=fault.source)
    fault.check(
        (dictionary.fixed_width is None) == (key.dtype is None)
        and dictionary.fixed_width in (None, key.width),
        "dictionary_page.value_kind",
        f"{key.kind} key column {key.name!r} needs "
        + ("VAR values" if key.dtype is None else f"FIXED {key.width}-byte values"),
    )
    if header.layout == "row":
        return at + size, None, dictionary, None
    at = align(at + size)
    fault.check(at <= data.size, "data_page", f"truncated: the page would start at {at}")
    page, size = decode_data_page(view[at:], n_values=len(dictionary.values), source=fault.source)
    fault.check(
        page.keys.size == header.n_rows,
        "data_page.n_keys",
        f"{page.keys.size} keys for {header.n_rows} rows",
    )
    fault.check(
        page.keys.dtype.itemsize == header.key_width_bytes,
        "data_page.key_bytes",
        f"{page.keys.dtype.itemsize}, the header says {header.key_width_bytes}",
    )
    return at + size, None, dictionary, page


def _row_keys(field: Field, header: Header, n_values: int, fault: Fault) -> DataPage:
    """Row-wise DICT keys: the rows' key fields, as the DataPage they stand for."""
    assert field.fixed is not None
    width = header.key_width_bytes
    keys = np.ascontiguousarray(field.fixed).view(f"<u{width}").reshape(-1)
    if keys.size and int(keys.max()) >= n_values:
        raise fault("rows.key", f"key {int(keys.max())} has no entry among {n_values} values")
    return DataPage(keys.astype(f"=u{width}"))


def _read_rows(
    data: NDArray[np.uint8], header: Header, columns: Sequence[Column], fault: Fault
) -> tuple[NDArray[np.uint8], NDArray[np.uint64] | None, dict[int, Field]]:
    """The RowSection's rows and offsets, and every stored column's field bytes."""
    n, start = header.n_rows, header.row_section_off
    key_index = header.key_column
    if header.layout == "column":
        blocks = {
            i: read_block(data, c, n, fault, i) for i, c in enumerate(columns) if i != key_index
        }
        return np.zeros(0, np.uint8), None, blocks
    stored = [i for i in range(len(columns)) if header.layout == "row" or i != key_index]
    widths = [header.key_width_bytes if i == key_index else columns[i].width for i in stored]
    if header.row_offsets_off == 0:
        end = start + n * header.row_bytes
        fault.check(
            end <= data.size,
            "row_section",
            f"truncated: {n} rows of {header.row_bytes} B end at {end}",
        )
        records = data[start:end].reshape(n, header.row_bytes)
        bounds = np.concatenate([[0], np.cumsum(widths, dtype=np.int64)])
        fields = {
            i: Field(fixed=records[:, bounds[j] : bounds[j + 1]]) for j, i in enumerate(stored)
        }
        return data[start:end], None, fields
    offsets = read_offsets(data, header.row_offsets_off, n, "row_offsets", fault)
    fault.check(
        start + int(offsets[-1]) <= header.row_offsets_off,
        "row_offsets",
        f"rows of {int(offsets[-1])} bytes run into the offsets at {header.row_offsets_off}",
    )
    rows = data[start : start + int(offsets[-1])]
    return rows, offsets.astype(np.uint64), parse_rows(rows, offsets, stored, widths, fault)


def _dictionary_array(
    column: Column, page: DictionaryPage, keys: NDArray[Any], fault: Fault
) -> Any:
    """The key column decoded on the host (the reader's own check of the pages)."""
    if column.dtype is not None:
        raw = np.frombuffer(b"".join(page.values), dtype=np.uint8).reshape(
            len(page.values), column.width
        )
        values = arrow_array(column, Field(fixed=raw), fault)
    else:
        lengths = np.array([len(v) for v in page.values], dtype=np.int64)
        offsets = np.concatenate([[0], np.cumsum(lengths)]).astype(np.int64)
        data = np.frombuffer(b"".join(page.values), dtype=np.uint8)
        values = arrow_array(column, Field(offsets=offsets, data=data), fault)
    return values.take(pa.array(keys.astype(np.int64)))
