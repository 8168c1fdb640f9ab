"""NASCENT2's table sort over a TableFile (spec §2.4, §9.2): the kernels read the file's
sections, as on the SmartSSD.

1. **Decode** (Flow A, DICT keys of 32- or 64-bit integers): the decoder loads its dictionary
   table from the DictionaryPage and decodes the DataPage (`decode_key_column`).
2. **Sort**: the sort kernel sorts the key column read from the KeySection (PLAIN values,
   or the decoded keys), or, for DICT keys of any other type (Flow C), the Mapped Key array
   of NKeys built on the decoder from the sorted dictionary; the sorted NKeys are decoded
   back with the sorted dictionary (on the host when its table copies do not fit on chip).
   PLAIN keys that are not 32/64-bit integers are sorted as order-preserving 64-bit keys
   (`ndpkit.nascent.keys`).
3. **Shuffle** (Eq. 4): the six shuffle kernels reorder the RowSection's fixed-width rows by
   the sorted indices (hybrid: key column plus row records; row-wise: the records;
   column-wise: every fixed-width column block). Variable-length rows and utf8/binary
   column blocks are gathered by their offsets on the host, outside the kernel, which
   moves fixed-width records only; `shuffle_counts` then covers the fixed part (or is None).

The default tie rule is `value_then_index`, so the output equals a stable sort by the key.

Example:
    >>> write_table_file(frame, "k", path)
    >>> r = sort_table_file(path)
    >>> r.to_polars().equals(frame.sort("k", maintain_order=True))
    True
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Any, Literal

import numpy as np
import polars as pl
import pyarrow as pa
from numpy.typing import NDArray

from ndpkit.errors import ModelError, as_path
from ndpkit.nascent.bitonic import (
    PAPER_L,
    PAPER_P,
    DramMerge,
    SortCounts,
    SortResult,
    TieBreak,
    argsort,
)
from ndpkit.nascent.decoder import DecodeCounts, Decoded, decode, default_lanes, dictionary_table
from ndpkit.nascent.dictionary import (
    URAM_BYTES,
    equality_classes,
    map_keys,
    placement,
    renumber,
)
from ndpkit.nascent.keys import sort_keys
from ndpkit.nascent.pages import DictionaryPage, Fault
from ndpkit.nascent.shuffler import ShuffleCounts, shuffle
from ndpkit.nascent.tablefile import TableFile, read_table_file, write_table_file
from ndpkit.nascent.tablerows import Column, Field, arrow_array, parse_rows, spread

Flow = Literal["A", "C"]
_INTEGER_KINDS = ("int32", "int64", "uint32", "uint64")


@dataclass(frozen=True)
class SortOptions:
    """The sort kernel's parameters (options O2, O3, O4) and the order."""

    p: int = PAPER_P
    l: int = PAPER_L  # noqa: E741 - the spec's symbol ℒ
    tie_break: TieBreak = "value_then_index"
    descending: bool = False
    dram_merge: DramMerge = "bitonic_dram"
    merge_ways: int = 2


@dataclass(frozen=True)
class KeySort:
    """The key column sorted: original row of each output row, sorted values, counts."""

    indices: NDArray[np.uint32]
    keys: Any
    flow: Flow
    sort_counts: SortCounts
    decode_counts: DecodeCounts | None
    map_counts: DecodeCounts | None


@dataclass(frozen=True)
class FileSortResult:
    """A TableFile's table sorted by its key column, with every kernel's counts."""

    table: Any
    key: KeySort
    shuffle_counts: ShuffleCounts | None

    def to_polars(self) -> pl.DataFrame:
        frame = pl.from_arrow(self.table)
        assert isinstance(frame, pl.DataFrame)
        return frame


def decode_key_column(tf: TableFile) -> Decoded:
    """Flow A step 1: the decoder's table from the DictionaryPage, the DataPage decoded."""
    if tf.dictionary is None or tf.data_page is None:
        raise ModelError(f"{tf.path}: the key column is PLAIN; there is nothing to decode")
    page = tf.dictionary
    fixed = page.fixed_width is not None
    return decode(
        page.values,
        tf.data_page.keys,
        l_max=page.l_max,
        mode="fixed" if fixed else "variable",
        width=page.fixed_width,
    )


def sort_key_section(tf: TableFile, options: SortOptions | None = None) -> KeySort:
    """Sort the key column as the kernels read it from the KeySection (or the rows)."""
    o = options or SortOptions()
    key = tf.key
    if tf.header.key_encoding == "plain":
        values = tf.plain_keys if tf.plain_keys is not None else _column(tf, key)
        return _sort_values(values, key, o, "A", None, None)
    if key.kind in _INTEGER_KINDS:
        decoded = decode_key_column(tf)
        assert key.dtype is not None
        values = decoded.data.view(key.dtype)
        return _sort_values(values, key, o, "A", decoded.counts, None)
    return _sort_through_dictionary(tf, o)


def _column(tf: TableFile, key: Column) -> NDArray[Any]:
    values: NDArray[Any] = tf.table.column(key.name).to_numpy()
    return values


def _sort_values(
    values: NDArray[Any],
    key: Column,
    o: SortOptions,
    flow: Flow,
    decode_counts: DecodeCounts | None,
    map_counts: DecodeCounts | None,
) -> KeySort:
    """Integer keys of 32/64 bits go to the kernel as they are; others as order-preserving
    64-bit keys with the order folded in."""
    if key.kind in _INTEGER_KINDS:
        r = _argsort(values, o, o.descending)
        sorted_values = r.keys
    else:
        ranked = sort_keys(pl.Series(key.name, values), descending=o.descending)
        r = _argsort(ranked.keys, o, False)
        sorted_values = values[r.indices]
    array = pa.array(sorted_values, type=key.arrow_type)
    return KeySort(r.indices, array, flow, r.counts, decode_counts, map_counts)


def _argsort(keys: NDArray[Any], o: SortOptions, descending: bool) -> SortResult:
    return argsort(
        keys,
        p=o.p,
        l=o.l,
        tie_break=o.tie_break,
        descending=descending,
        dram_merge=o.dram_merge,
        merge_ways=o.merge_ways,
    )


def _sort_through_dictionary(tf: TableFile, o: SortOptions) -> KeySort:
    """Flow C: NKeys from the sorted dictionary, mapped on the decoder, sorted by the kernel,
    decoded back with the sorted dictionary (§8.3 steps 2–8)."""
    assert tf.dictionary is not None and tf.data_page is not None
    key, page = tf.key, tf.dictionary
    renumbered = renumber(_dictionary_values(page, key))
    mapped, map_counts = map_keys(tf.data_page.keys, renumbered)
    # Sort by equality class: distinct dictionary entries that compare equal (-0.0 and 0.0,
    # NaN payloads) share a class, so their rows keep their original order.
    r = _argsort(equality_classes(renumbered.sorted)[mapped], o, o.descending)
    nkeys = mapped[r.indices]
    order = renumbered.mapping.argsort(kind="stable")  # NKey → original key
    sorted_page = DictionaryPage(tuple(page.values[i] for i in order), page.fixed_width, page.l_max)
    table = dictionary_table(sorted_page.values, sorted_page.l_max)
    copies = default_lanes(4) if page.fixed_width is not None else 1
    if placement(int(table.rows.nbytes), copies, URAM_BYTES) == "host":
        keys = _page_array(sorted_page, key).take(pa.array(nkeys.astype(np.int64)))
        return KeySort(r.indices, keys, "C", r.counts, None, map_counts)
    decoded = decode(
        sorted_page.values,
        nkeys,
        l_max=sorted_page.l_max,
        mode="fixed" if page.fixed_width is not None else "variable",
        width=page.fixed_width,
        lanes=copies,
    )
    keys = arrow_array(key, _decoded_field(decoded, key), Fault(str(tf.path)))
    return KeySort(r.indices, keys, "C", r.counts, decoded.counts, map_counts)


def _dictionary_values(page: DictionaryPage, key: Column) -> NDArray[Any]:
    """The page's values as numpy values that order as the column's type orders."""
    if key.dtype is not None:
        return np.frombuffer(b"".join(page.values), dtype=key.dtype)
    if key.kind == "utf8":
        return np.array([v.decode() for v in page.values], dtype=object)
    return np.array(list(page.values), dtype=object)


def _page_array(page: DictionaryPage, key: Column) -> Any:
    lengths = np.array([len(v) for v in page.values], dtype=np.int64)
    offsets = np.concatenate([[0], np.cumsum(lengths)]).astype(np.int64)
    data = np.frombuffer(b"".join(page.values), dtype=np.uint8)
    if key.dtype is not None:
        return arrow_array(key, Field(fixed=data.reshape(len(lengths), key.width)), Fault("page"))
    return arrow_array(key, Field(offsets=offsets, data=data), Fault("page"))


def _decoded_field(decoded: Decoded, key: Column) -> Field:
    if decoded.offsets is None:
        return Field(fixed=decoded.data.reshape(-1, key.width))
    return Field(offsets=decoded.offsets.astype(np.int64), data=decoded.data)


def shuffle_row_section(
    tf: TableFile, key_sort: KeySort
) -> tuple[dict[int, Field], ShuffleCounts | None]:
    """Eq. 4 over the RowSection: every stored column's field bytes in sorted row order."""
    indices = key_sort.indices
    if tf.header.layout == "column":
        return _shuffle_blocks(tf, key_sort)
    stored = tf.row_fields()
    widths = [
        tf.header.key_width_bytes if i == tf.header.key_column else tf.columns[i].width
        for i in stored
    ]
    fault = Fault(str(tf.path))
    if tf.row_offsets is not None:
        rows = _gather(Field(offsets=tf.row_offsets.astype(np.int64), data=tf.rows), indices)
        assert rows.offsets is not None and rows.data is not None
        return parse_rows(rows.data, rows.offsets, stored, widths, fault), None
    if tf.header.layout == "row":
        r = shuffle([tf.records()], indices, layout="row")
    else:
        r = shuffle(
            [_key_bytes(tf), tf.records()],
            indices,
            layout="hybrid",
            sorted_keys=_sorted_key_bytes(tf, key_sort),
        )
    records = r.columns[-1]
    bounds = np.concatenate([[0], np.cumsum(widths, dtype=np.int64)])
    fields = {i: Field(fixed=records[:, bounds[j] : bounds[j + 1]]) for j, i in enumerate(stored)}
    return fields, r.counts


def _sorted_key_bytes(tf: TableFile, key_sort: KeySort) -> NDArray[np.uint8] | None:
    """The sort's sorted PLAIN keys, which the shuffle copies instead of gathering (§6.4);
    None for DICT keys, whose sorted data page the kernels do not produce."""
    if tf.plain_keys is None:
        return None
    sorted_keys = key_sort.keys.to_numpy(zero_copy_only=False)
    return _as_bytes(np.asarray(sorted_keys, dtype=tf.plain_keys.dtype))


def _as_bytes(values: NDArray[Any]) -> NDArray[np.uint8]:
    contiguous = np.ascontiguousarray(values)
    return contiguous.view(np.uint8).reshape(len(contiguous), contiguous.dtype.itemsize)


def _key_bytes(tf: TableFile) -> NDArray[np.uint8]:
    """The KeySection's key column as (n_rows, width) bytes: PLAIN values or DICT keys."""
    if tf.plain_keys is not None:
        keys = tf.plain_keys
    else:
        assert tf.data_page is not None  # a DICT key section
        keys = tf.data_page.keys
    return _as_bytes(keys)


def _shuffle_blocks(
    tf: TableFile, key_sort: KeySort
) -> tuple[dict[int, Field], ShuffleCounts | None]:
    """Column-wise: the fixed-width blocks through the kernel, the others by offsets."""
    indices = key_sort.indices
    fixed = {i: f.fixed for i, f in tf.blocks.items() if f.fixed is not None}
    fields = {i: _gather(f, indices) for i, f in tf.blocks.items() if f.fixed is None}
    if not fixed:
        return fields, None
    r = shuffle(
        [_key_bytes(tf), *fixed.values()],
        indices,
        layout="column",
        sorted_keys=_sorted_key_bytes(tf, key_sort),
    )
    fields |= {i: Field(fixed=col) for i, col in zip(fixed, r.columns[1:], strict=True)}
    return fields, r.counts


def _gather(f: Field, indices: NDArray[np.uint32]) -> Field:
    """Eq. 4 for variable-length values, by their offsets."""
    assert f.offsets is not None and f.data is not None
    lengths = np.diff(f.offsets)[indices]
    offsets = np.concatenate([[0], np.cumsum(lengths)]).astype(np.int64)
    return Field(offsets=offsets, data=f.data[spread(f.offsets[:-1][indices], offsets)])


def sort_table_file(
    path: Path | str, *, out: Path | str | None = None, options: SortOptions | None = None
) -> FileSortResult:
    """Read a TableFile, decode, sort and shuffle it with the kernels; optionally write the
    sorted table to `out` in the same layout and key encoding."""
    if out is not None:  # checked before the sort, not once it is done
        as_path(out, "out")
    tf = read_table_file(path)
    key_sort = sort_key_section(tf, options)
    fields, counts = shuffle_row_section(tf, key_sort)
    fault = Fault(str(tf.path))
    arrays = [
        key_sort.keys if i == tf.header.key_column else arrow_array(c, fields[i], fault)
        for i, c in enumerate(tf.columns)
    ]
    table = pa.table(arrays, names=[c.name for c in tf.columns])
    if out is not None:
        write_table_file(
            table,
            tf.key.name,
            out,
            layout=tf.header.layout,
            key_encoding=tf.header.key_encoding,
        )
    return FileSortResult(table, key_sort, counts)
