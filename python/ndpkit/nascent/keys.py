"""Sort keys of any column type as order-preserving unsigned 64-bit integers.

Both sort engines, the host's radix sort and NASCENT2's bitonic kernel, sort integers. This
module is where every other type becomes one, following the generic sort of spec §8: a key
whose type has a natural integer image keeps it (integers with the sign bit flipped, floats
by their IEEE total order, dates and times by their physical integer, decimals by their
unscaled integer); anything else — strings, binary, wide decimals — is renumbered by its
rank in the sorted dictionary of its distinct values (the sorted-dictionary renumbering,
NKey), which for a column of at most 2¹⁶ distinct values (spec §3.2) needs only a sort of
the dictionary.

The order is DuckDB's default, which `ndpkit sort` matches row for row:
- integers, dates, decimals numerically; strings by their UTF-8 bytes (DuckDB's binary
  collation; UTF-8 byte order is code-point order);
- floats: -0.0 equals 0.0, NaN is greater than every number (all NaNs equal);
- nulls last, for ascending and descending order alike (DuckDB's `NULLS_LAST`);
- `descending` inverts the keys, so equal keys keep their original order either way.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np
import polars as pl
from numpy.typing import NDArray

from ndpkit.errors import SpecError

DICTIONARY_LIMIT = 1 << 16
"""Distinct values a dictionary-encoded column may have (spec §3.2: 16-bit keys)."""
_SIGN = np.uint64(1 << 63)
_ALL = np.uint64(0xFFFF_FFFF_FFFF_FFFF)
_PLAIN_NAME = "key"
"""The name a key column is keyed under: one Polars cannot take for a pattern (see sort_keys)."""


@dataclass(frozen=True)
class SortKeys:
    """One column's sort keys.

    `keys[i]`'s unsigned order is row i's place in the sort (meaningless where `valid[i]` is
    false); `valid` is None when the column has no nulls. `encoding` says how the keys were
    made: "integer", "float", "decimal", "dictionary" (ranks in a sorted dictionary of at
    most 2¹⁶ values) or "rank" (ranks of a high-cardinality column). `distinct` is the
    dictionary's size for the two rank encodings.
    """

    keys: NDArray[np.uint64]
    valid: NDArray[np.bool_] | None
    encoding: str
    key_bits: int
    distinct: int | None = None

    def __len__(self) -> int:
        return len(self.keys)


def sort_keys(column: pl.Series, *, descending: bool = False, source: str = "table") -> SortKeys:
    """The order-preserving keys of `column`. `source` names the table in errors."""
    field = column.name
    # Polars runs many Series methods as an expression on `pl.col(name)`, which reads a
    # name such as '^x$' as a regular expression: it matched no column, and the sort ended
    # in a traceback. Under a plain name the column is keyed like any other.
    column = column.rename(_PLAIN_NAME)
    valid = None
    if column.null_count():
        valid = column.is_not_null().to_numpy()
    raw = _raw_keys(column, source, field)
    keys = raw.keys
    if descending:
        keys = _ALL - keys
    return SortKeys(keys, valid, raw.encoding, raw.key_bits, raw.distinct)


def _raw_keys(column: pl.Series, source: str, field: str) -> SortKeys:
    dtype = column.dtype
    if dtype == pl.Null:
        # Every row is null (pandas writes an all-None column so): no key to compare, so the
        # rows keep their order, as DuckDB's ORDER BY leaves them. `valid` is all false
        # (None would say there are no nulls): the zero keys are never compared.
        rows = len(column)
        return SortKeys(np.zeros(rows, np.uint64), np.zeros(rows, np.bool_), "integer", 1)
    if isinstance(dtype, pl.Extension):
        # An extension (arrow.json) orders as its storage, as DuckDB orders JSON as text;
        # Polars casts no extension to its storage type, so the storage is taken as it is.
        storage = column.ext.storage()
        try:
            return _raw_keys(storage, source, field)
        except SpecError:
            raise SpecError(
                f"cannot sort by a column of extension type {dtype.ext_name()!r} stored as "
                f"{storage.dtype}; {_SUPPORTED}",
                source=source,
                field=field,
            ) from None
    if dtype == pl.Boolean:
        return SortKeys(_filled(column, False).astype(np.uint64), None, "integer", 8)
    if dtype in (pl.Int128, pl.UInt128):
        # numpy has no 128-bit integers (to_numpy raised and the sort ended in a traceback):
        # values that fit in 64 bits are keyed as 64-bit integers, as decimals are; others
        # are ranked, like the decimals too wide for int64.
        fits = column.cast(pl.Int64 if dtype == pl.Int128 else pl.UInt64, strict=False)
        if fits.null_count() != column.null_count():  # a value that does not fit: null
            return _ranks(column)
        column, dtype = fits, fits.dtype
    if dtype.is_signed_integer() or dtype.is_temporal():
        physical = _filled(column.to_physical(), 0)
        values = physical.astype(np.int64, copy=False)
        return SortKeys(values.view(np.uint64) ^ _SIGN, None, "integer", physical.itemsize * 8)
    if dtype.is_unsigned_integer():
        values = _filled(column, 0)
        return SortKeys(values.astype(np.uint64), None, "integer", values.dtype.itemsize * 8)
    if dtype.is_float():
        return SortKeys(_float_keys(column), None, "float", 64)
    if isinstance(dtype, pl.Decimal):
        narrow = _decimal_as_int64(column)
        if narrow is not None:
            return SortKeys(narrow.view(np.uint64) ^ _SIGN, None, "decimal", 64)
        return _ranks(column)
    if dtype in (pl.String, pl.Binary) or isinstance(dtype, pl.Categorical | pl.Enum):
        return _ranks(column.cast(pl.String) if dtype != pl.Binary else column)
    raise SpecError(
        f"cannot sort by a column of type {dtype}; {_SUPPORTED}", source=source, field=field
    )


_SUPPORTED = (
    "supported: integers, floats, decimals, booleans, dates and times, strings and binary "
    "(also as an extension type's storage), and all-null columns"
)


def _filled(column: pl.Series, fill: Any) -> NDArray[Any]:
    """The column as a numpy array with nulls replaced: their keys are never compared."""
    if column.null_count():
        column = column.fill_null(fill)
    return column.to_numpy()


def _float_keys(column: pl.Series) -> NDArray[np.uint64]:
    values = _filled(column, 0.0).astype(np.float64)
    # -0.0 + 0.0 is +0.0 and every NaN becomes the one positive quiet NaN, so equal values
    # (as DuckDB compares them) get equal keys and ties stay in row order.
    values = values + 0.0
    values[np.isnan(values)] = np.nan
    bits = values.view(np.uint64)
    negative = (bits >> np.uint64(63)).astype(bool)
    return np.where(negative, ~bits, bits | _SIGN)


def _decimal_as_int64(column: pl.Series) -> NDArray[np.int64] | None:
    """The unscaled decimal values when all fit in 64 bits (precision ≤ 18 always does)."""
    unscaled = column.to_physical()  # Int128
    narrow = unscaled.cast(pl.Int64, strict=False)  # a value that does not fit turns null
    if narrow.null_count() != unscaled.null_count():
        return None
    return _filled(narrow, 0)


def _ranks(column: pl.Series) -> SortKeys:
    """Dense ranks in the sorted dictionary of distinct values (the generic sort's NKey)."""
    distinct_values = column.drop_nulls().unique()
    distinct = distinct_values.len()
    if distinct <= DICTIONARY_LIMIT and column.dtype == pl.String:
        # A small dictionary: sort it (code-point order is UTF-8 byte order) and read each
        # row's rank as its physical code in an Enum of the sorted values.
        codes = column.cast(pl.Enum(distinct_values.sort())).to_physical()
        encoding = "dictionary"
    else:
        codes = column.rank(method="dense")
        encoding = "dictionary" if distinct <= DICTIONARY_LIMIT else "rank"
    keys = _filled(codes, 0).astype(np.uint64)
    bits = max(1, int(distinct).bit_length())
    return SortKeys(keys, None, encoding, bits, int(distinct))
