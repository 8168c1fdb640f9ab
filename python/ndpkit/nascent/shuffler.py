"""NASCENT2's shuffle kernel (spec §6; paper §3.5, Eq. 4, Fig. 8) over three table layouts.

    SortedTable[i] = OriginalTable[SortedIndices[i]]   (4)

Six kernels [paper] each write a contiguous range of output rows,
[⌊w·N/6⌋, ⌊(w+1)·N/6⌋) [choice]. The table is stored in one of the layouts of §3.1:

- `"row"`: whole rows back to back;
- `"column"`: one array per column;
- `"hybrid"` (the paper's proposal): the key column column-wise, the rest row-wise.

Access accounting (§6.4), counted by the Rust core where the bytes move: gathering a row
record is one random access plus one burst, gathering a single column field one random
access, and a sequential stream of b bytes ⌈b / burst_bytes⌉ bursts (4 KiB by default,
since AXI bursts do not cross a 4 KiB boundary). `counts.key_read` is the sort kernel's read
of the key column in the same layout. In the column-wise and hybrid layouts, pass the sort
kernel's sorted keys as `sorted_keys` and the output key column is copied from them instead
of gathered; the counts are then §6.4's table.

Example:
    >>> keys = np.array([30, 10, 50, 20, 40], dtype=np.uint32)
    >>> price = np.array([3.0, 1.0, 5.0, 2.0, 4.0])
    >>> r = shuffle([keys, price], np.array([1, 3, 0, 4, 2]), layout="hybrid")
    >>> r.columns[1].tolist()
    [1.0, 2.0, 3.0, 4.0, 5.0]
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from importlib import import_module
from typing import Any, Literal, get_args

import numpy as np
from numpy.typing import NDArray

from ndpkit.errors import ModelError, SpecError
from ndpkit.native import native_input

_core: Any = import_module("ndpkit._core")  # the compiled extension has no type stub

Layout = Literal["row", "column", "hybrid"]
WORKERS = 6
"""Shuffle kernel instances on the SmartSSD (spec §6.2)."""
MAX_WORKERS = 4096
"""The most shuffle kernels a model may ask for: far more than an FPGA holds, and few enough
that their counts (one entry each) stay small; the Rust core refuses more."""
BURST_BYTES = 4096
"""Longest sequential burst [choice]: an AXI burst does not cross a 4 KiB boundary."""

_SOURCE = "nascent2 shuffle kernel"


@dataclass(frozen=True)
class Accesses:
    random_accesses: int
    sequential_bursts: int
    bytes: int


@dataclass(frozen=True)
class WorkerCounts:
    """One shuffle kernel: its output rows [first_row, end_row) and its traffic."""

    first_row: int
    end_row: int
    reads: Accesses
    writes: Accesses


@dataclass(frozen=True)
class ShuffleCounts:
    """The key-column read (sort kernel) and the shuffle's reads and writes, in total and
    per kernel."""

    key_read: Accesses
    reads: Accesses
    writes: Accesses
    workers: tuple[WorkerCounts, ...]


@dataclass(frozen=True)
class ShuffleResult:
    """The shuffled columns (same dtypes and shapes as the input) and the counts."""

    columns: list[NDArray[Any]]
    counts: ShuffleCounts


def _as_bytes(column: NDArray[Any], rows: int, what: str) -> NDArray[np.uint8]:
    """A column as C-contiguous uint8 (rows, bytes per row)."""
    if column.dtype.hasobject:
        raise ModelError(f"{what} has dtype {column.dtype}; the shuffle moves fixed-width bytes")
    if column.ndim == 0 or column.shape[0] != rows:
        raise ModelError(f"{what} has shape {column.shape}; every column needs {rows} rows")
    width = column.dtype.itemsize * int(np.prod(column.shape[1:], dtype=np.int64))
    if width == 0:
        raise ModelError(f"{what} has zero bytes per row")
    return np.ascontiguousarray(column).view(np.uint8).reshape(rows, width)


def _accesses(raw: dict[str, int]) -> Accesses:
    return Accesses(**raw)


def _counts(raw: dict[str, Any]) -> ShuffleCounts:
    return ShuffleCounts(
        key_read=_accesses(raw["key_read"]),
        reads=_accesses(raw["reads"]),
        writes=_accesses(raw["writes"]),
        workers=tuple(
            WorkerCounts(
                first_row=w["first_row"],
                end_row=w["end_row"],
                reads=_accesses(w["reads"]),
                writes=_accesses(w["writes"]),
            )
            for w in raw["workers"]
        ),
    )


def shuffle(
    columns: Sequence[NDArray[Any]],
    indices: NDArray[Any],
    *,
    key_column: int = 0,
    layout: Layout = "hybrid",
    sorted_keys: NDArray[Any] | None = None,
    workers: int = WORKERS,
    burst_bytes: int = BURST_BYTES,
) -> ShuffleResult:
    """Reorder the rows of a table by `indices` (a permutation of 0 … N−1), Eq. 4.

    Columns are numpy arrays of fixed-width dtypes with N rows (one value, or one
    sub-array, per row). The kernels' row ranges are counted one by one, but run on at
    most as many threads as there are cores. Raises SpecError for a bad layout, worker count
    (1 to `MAX_WORKERS`) or burst size, or `columns` that are not a sequence of arrays (one
    array, a dict), and ModelError for columns, indices or sorted keys that do not fit the
    table.
    """
    if layout not in get_args(Layout):
        raise SpecError(
            f"must be one of {get_args(Layout)}, got {layout!r}", source=_SOURCE, field="layout"
        )
    for name, value in (("workers", workers), ("burst_bytes", burst_bytes)):
        if value < 1:
            raise SpecError(f"must be ≥ 1, got {value}", source=_SOURCE, field=name)
    if workers > MAX_WORKERS:
        raise SpecError(f"must be ≤ {MAX_WORKERS}, got {workers}", source=_SOURCE, field="workers")
    if isinstance(columns, (np.ndarray, Mapping, str, bytes)):
        # Iterated, an array's rows were taken for columns ("The truth value of an array …
        # is ambiguous", or "column 0 has shape (); every column needs 0 rows"), a dict's
        # keys for columns.
        hint = "list(table.values())" if isinstance(columns, Mapping) else "[column]"
        raise SpecError(
            f"must be a list of arrays, one per column, got {type(columns).__name__}: give {hint}",
            source=_SOURCE,
            field="columns",
        )
    if not columns:
        raise ModelError("a table needs at least one column")
    if not 0 <= key_column < len(columns):
        raise ModelError(f"key column {key_column} of a table of {len(columns)} columns")
    arrays = [np.asarray(c) for c in columns]
    if arrays[0].ndim == 0:  # "every column needs 0 rows", said of a column of one value
        raise ModelError(f"column 0 is one value ({arrays[0]!r}): a column holds a value a row")
    rows = arrays[0].shape[0]
    raw_columns = [_as_bytes(a, rows, f"column {i}") for i, a in enumerate(arrays)]
    order = np.asarray(indices)
    if order.ndim != 1 or order.dtype.kind not in "iu":
        raise ModelError(f"indices must be one-dimensional integers, got {order.dtype}")
    if order.size and (order.min() < 0 or order.max() >= max(rows, 1)):
        raise ModelError(f"indices must lie in [0, {rows}), got [{order.min()}, {order.max()}]")
    keys_raw = None
    if sorted_keys is not None:
        keys = np.asarray(sorted_keys)
        if keys.dtype != arrays[key_column].dtype:
            raise ModelError(
                f"sorted keys have dtype {keys.dtype}, the key column {arrays[key_column].dtype}"
            )
        keys_raw = _as_bytes(keys, rows, "sorted keys")
    try:
        out, counts = _core.shuffle_table(
            raw_columns,
            key_column,
            layout,
            native_input(order, np.uint32),
            keys_raw,
            workers,
            burst_bytes,
        )
    except (ValueError, OverflowError) as e:
        raise ModelError(str(e)) from e
    shuffled = [o.view(a.dtype).reshape(a.shape) for o, a in zip(out, arrays, strict=True)]
    return ShuffleResult(columns=shuffled, counts=_counts(counts))
