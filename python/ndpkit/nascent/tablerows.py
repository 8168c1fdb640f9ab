"""How a TableFile's columns become bytes (spec §3.1): column types, rows and column blocks,
and back to Arrow arrays.

A value of a fixed-width type is its little-endian bytes; a utf8 or binary value is
len u32 | bytes inside a row, or one of a column block's values delimited by
(n + 1) u64 offsets. A row is its fields in schema order; variable rows are delimited by
(n_rows + 1) u64 offsets. Parsing checks that every field lies inside its row and that the
fields fill it, and raises `SpecError` naming the file and the field otherwise.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np
import pyarrow as pa
from numpy.typing import NDArray

from ndpkit.errors import ModelError
from ndpkit.nascent.pages import Fault

TYPES: dict[int, tuple[str, np.dtype[Any] | None, Any]] = {
    1: ("bool", np.dtype(np.bool_), pa.bool_()),
    2: ("int8", np.dtype("<i1"), pa.int8()),
    3: ("int16", np.dtype("<i2"), pa.int16()),
    4: ("int32", np.dtype("<i4"), pa.int32()),
    5: ("int64", np.dtype("<i8"), pa.int64()),
    6: ("uint8", np.dtype("<u1"), pa.uint8()),
    7: ("uint16", np.dtype("<u2"), pa.uint16()),
    8: ("uint32", np.dtype("<u4"), pa.uint32()),
    9: ("uint64", np.dtype("<u8"), pa.uint64()),
    10: ("float32", np.dtype("<f4"), pa.float32()),
    11: ("float64", np.dtype("<f8"), pa.float64()),
    12: ("utf8", None, pa.large_string()),
    13: ("binary", None, pa.large_binary()),
}
"""Schema type code → (name, numpy dtype or None for variable length, Arrow type)."""


@dataclass(frozen=True)
class Column:
    """One schema entry: a name, a type and, column-wise, the file offset of its block."""

    name: str
    type_code: int
    block_off: int = 0

    @property
    def kind(self) -> str:
        return TYPES[self.type_code][0]

    @property
    def dtype(self) -> np.dtype[Any] | None:
        """The numpy dtype of a fixed-width column; None for utf8 and binary."""
        return TYPES[self.type_code][1]

    @property
    def width(self) -> int:
        """Bytes per value, 0 for a variable-length column."""
        return 0 if self.dtype is None else self.dtype.itemsize

    @property
    def arrow_type(self) -> Any:
        return TYPES[self.type_code][2]


@dataclass(frozen=True)
class Field:
    """One column's values as bytes: (n, width) for fixed width, else offsets u64[n + 1]
    from 0 and the concatenated bytes."""

    fixed: NDArray[np.uint8] | None = None
    offsets: NDArray[np.int64] | None = None
    data: NDArray[np.uint8] | None = None

    def sizes(self) -> NDArray[np.int64]:
        """Bytes of this field in each row (a variable field carries its u32 length)."""
        if self.fixed is not None:
            return np.full(self.fixed.shape[0], self.fixed.shape[1], dtype=np.int64)
        assert self.offsets is not None
        return np.diff(self.offsets) + 4

    def block(self) -> bytes:
        """The column-wise block: the values, or the offsets then the bytes."""
        if self.fixed is not None:
            return self.fixed.tobytes()
        assert self.offsets is not None and self.data is not None
        return self.offsets.astype("<u8").tobytes() + self.data.tobytes()


def type_code(name: str, arrow_type: Any) -> int:
    """The schema type code of an Arrow type; ModelError naming column `name` otherwise."""
    t = pa.types
    if t.is_string(arrow_type) or t.is_large_string(arrow_type) or t.is_string_view(arrow_type):
        return 12
    if t.is_binary(arrow_type) or t.is_large_binary(arrow_type) or t.is_binary_view(arrow_type):
        return 13
    for code, (_, _, known) in TYPES.items():
        if arrow_type == known:
            return code
    kinds = ", ".join(t[0] for t in TYPES.values())
    raise ModelError(f"column {name!r} has type {arrow_type}; a TableFile holds {kinds}")


def _fixed_field(array: Any, dtype: np.dtype[Any]) -> Field:
    values = np.ascontiguousarray(array.to_numpy(zero_copy_only=False), dtype=dtype)
    return Field(fixed=values.view(np.uint8).reshape(len(values), dtype.itemsize))


def _var_field(array: Any) -> Field:
    if pa.types.is_string_view(array.type):
        array = array.cast(pa.large_string())
    array = array.cast(pa.large_binary())
    n = len(array)
    if n == 0:
        return Field(offsets=np.zeros(1, dtype=np.int64), data=np.zeros(0, dtype=np.uint8))
    buffers = array.buffers()
    offsets = np.frombuffer(buffers[1], dtype="<i8")[array.offset : array.offset + n + 1]
    raw = (
        np.frombuffer(buffers[2], dtype=np.uint8)
        if buffers[2] is not None
        else np.zeros(0, np.uint8)
    )
    data = raw[int(offsets[0]) : int(offsets[-1])]
    return Field(offsets=(offsets - offsets[0]).astype(np.int64), data=data)


def field_of(column: Column, array: Any) -> Field:
    """An Arrow array (no nulls) of `column`'s type as bytes."""
    return _var_field(array) if column.dtype is None else _fixed_field(array, column.dtype)


def rows_of(fields: Sequence[Field], n: int) -> tuple[NDArray[np.uint8], NDArray[np.uint64] | None]:
    """Rows of `fields`, each row its fields in order: fixed rows, or rows and offsets."""
    if all(f.fixed is not None for f in fields):
        blocks = [f.fixed for f in fields if f.fixed is not None]
        records = np.concatenate(blocks, axis=1) if blocks else np.zeros((n, 0), np.uint8)
        return np.ascontiguousarray(records).reshape(-1), None
    sizes = np.sum([f.sizes() for f in fields], axis=0, dtype=np.int64)
    offsets = np.concatenate([[0], np.cumsum(sizes)]).astype(np.int64)
    buf = np.empty(int(offsets[-1]), dtype=np.uint8)
    pos = offsets[:-1].copy()
    for f in fields:
        if f.fixed is not None:
            buf[pos[:, None] + np.arange(f.fixed.shape[1])] = f.fixed
            pos += f.fixed.shape[1]
            continue
        assert f.offsets is not None and f.data is not None
        lengths = np.diff(f.offsets)
        buf[pos[:, None] + np.arange(4)] = lengths.astype("<u4").view(np.uint8).reshape(n, 4)
        pos += 4
        buf[spread(pos, f.offsets)] = f.data
        pos += lengths
    return buf, offsets.astype(np.uint64)


def spread(starts: NDArray[np.int64], offsets: NDArray[np.int64]) -> NDArray[np.int64]:
    """Positions of the concatenated values `offsets` delimits when value i starts at
    `starts[i]`."""
    lengths = np.diff(offsets)
    return np.repeat(starts - offsets[:-1], lengths) + np.arange(int(offsets[-1]), dtype=np.int64)


def read_offsets(
    data: NDArray[np.uint8], at: int, n: int, field: str, fault: Fault
) -> NDArray[np.int64]:
    """(n + 1) u64 offsets at `at`: from 0, never decreasing."""
    end = at + 8 * (n + 1)
    fault.check(end <= data.size, field, f"truncated: {n + 1} offsets end at {end}")
    offsets = np.frombuffer(data, "<u8", n + 1, at)
    fault.check(int(offsets[0]) == 0, field, f"the first offset is {int(offsets[0])}, not 0")
    fault.check(
        bool(np.all(np.diff(offsets.astype(np.int64)) >= 0)) and int(offsets[-1]) < 1 << 62,
        field,
        "offsets decrease or exceed 2^62",
    )
    return offsets.astype(np.int64)


def parse_rows(
    rows: NDArray[np.uint8],
    offsets: NDArray[np.int64],
    stored: Sequence[int],
    widths: Sequence[int],
    fault: Fault,
) -> dict[int, Field]:
    """Split variable rows into fields, each checked to lie inside its row."""
    pos, ends = offsets[:-1].copy(), offsets[1:]
    fields = {}
    for i, width in zip(stored, widths, strict=True):
        take = width if width else 4
        fault.check(bool(np.all(pos + take <= ends)), "rows", f"field {i} runs past its row's end")
        got = rows[pos[:, None] + np.arange(take)]
        pos = pos + take
        if width:
            fields[i] = Field(fixed=got)
            continue
        lengths = got.view("<u4").reshape(-1).astype(np.int64)
        fault.check(
            bool(np.all(pos + lengths <= ends)),
            "rows",
            f"field {i}'s length runs past its row's end",
        )
        value_offsets = np.concatenate([[0], np.cumsum(lengths)]).astype(np.int64)
        fields[i] = Field(offsets=value_offsets, data=rows[spread(pos, value_offsets)])
        pos = pos + lengths
    bad = np.flatnonzero(pos != ends)
    fault.check(
        bad.size == 0, "row_offsets", f"row {bad[0] if bad.size else 0}'s fields do not fill it"
    )
    return fields


def read_block(data: NDArray[np.uint8], column: Column, n: int, fault: Fault, index: int) -> Field:
    """Column `index`'s column-wise block, checked to lie inside the file."""
    at, field = column.block_off, f"schema[{index}].block_off"
    if column.dtype is not None:
        end = at + n * column.width
        fault.check(end <= data.size, field, f"truncated: column {column.name!r} ends at {end}")
        return Field(fixed=data[at:end].reshape(n, column.width))
    offsets = read_offsets(data, at, n, field, fault)
    begin = at + 8 * (n + 1)
    fault.check(
        begin + int(offsets[-1]) <= data.size, field, f"truncated: column {column.name!r}'s values"
    )
    return Field(offsets=offsets, data=data[begin : begin + int(offsets[-1])])


def arrow_array(column: Column, field: Field, fault: Fault) -> Any:
    """The field's bytes as an Arrow array of the column's type; bools must be 0 or 1 and
    utf8 valid UTF-8."""
    if field.fixed is not None:
        assert column.dtype is not None
        values = np.ascontiguousarray(field.fixed).view(column.dtype).reshape(-1)
        if column.kind == "bool":
            fault.check(bool(np.all(field.fixed <= 1)), column.name, "a bool byte is not 0 or 1")
        return pa.array(values, type=column.arrow_type)
    assert field.offsets is not None and field.data is not None
    buffers = [
        None,
        pa.py_buffer(field.offsets.astype("<i8")),
        pa.py_buffer(np.ascontiguousarray(field.data)),
    ]
    array = pa.Array.from_buffers(column.arrow_type, len(field.offsets) - 1, buffers)
    try:
        array.validate(full=True)
    except pa.ArrowInvalid as e:
        raise fault(column.name, f"invalid {column.kind} values: {e}") from None
    return array
