"""NASCENT2's generic sort (spec §8, Flow B; paper §3.3, Fig. 5): any key type sorted with the
integer sort kernel through a sorted dictionary.

1. (storage) the column is dictionary encoded: `dictionary.encode`;
2–3. (host) sort the dictionary, build the key mapping table: `dictionary.renumber`;
6. (FPGA, decoder in fixed-length mode) map the data page to NKeys: `dictionary.map_keys`;
7. (FPGA, sort kernel) sort the Mapped Key array: `bitonic.argsort`;
8. (FPGA, decoder) decode the sorted NKeys with the sorted dictionary, or on the host when
   the dictionary table does not fit on chip (the paper's fallback).

Values travel through the decoder as bytes: numbers (and other fixed-size dtypes) as their
raw little-endian bytes in fixed-length mode, strings as UTF-8 and bytes as they are in
variable-length mode. The sorted indices are the sort kernel's, so they can drive the
shuffle (Flow C).

Example (spec §13.6):
    >>> r = generic_sort(np.array(["USA", "Croatia", "Ghana", "Iran", "Brazil"]))
    >>> r.values.tolist(), r.placement
    (['Brazil', 'Croatia', 'Ghana', 'Iran', 'USA'], 'fpga')
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np
from numpy.typing import NDArray

from ndpkit.errors import ModelError
from ndpkit.nascent.bitonic import PAPER_L, PAPER_P, SortCounts, TieBreak, argsort
from ndpkit.nascent.decoder import (
    DecodeCounts,
    Decoded,
    Mode,
    decode,
    default_lanes,
    dictionary_table,
)
from ndpkit.nascent.dictionary import (
    URAM_BYTES,
    Placement,
    encode,
    equality_classes,
    map_keys,
    placement,
    renumber,
)


@dataclass(frozen=True)
class GenericSortResult:
    """The sorted column, each value's original row, where step 8 ran, and kernel counts
    (`decode_counts` is None when the host decoded)."""

    values: NDArray[Any]
    indices: NDArray[np.uint32]
    placement: Placement
    map_counts: DecodeCounts
    sort_counts: SortCounts
    decode_counts: DecodeCounts | None


def _to_bytes(values: NDArray[Any]) -> tuple[list[bytes], int | None]:
    """Dictionary values as decoder bytes, and the fixed width (None: variable length)."""
    kind = values.dtype.kind
    if kind in "biufcmMV":
        width = values.dtype.itemsize
        rows = np.ascontiguousarray(values).view(np.uint8).reshape(values.size, width)
        return [r.tobytes() for r in rows], width
    if kind == "U":
        return [s.encode() for s in values.tolist()], None
    if kind == "S":
        return list(values.tolist()), None
    if kind == "O":
        out = []
        for v in values.tolist():
            if isinstance(v, str):
                out.append(v.encode())
            elif isinstance(v, bytes):
                out.append(v)
            else:
                raise ModelError(f"the generic sort takes str or bytes objects, got {type(v)}")
        return out, None
    raise ModelError(f"the generic sort cannot move values of dtype {values.dtype}")


def _from_decoded(decoded: Decoded, like: NDArray[Any]) -> NDArray[Any]:
    """Decoded bytes back into values of `like`'s dtype."""
    if decoded.offsets is None:
        return np.frombuffer(decoded.data.tobytes(), dtype=like.dtype).copy()
    pieces = decoded.values()
    if like.dtype.kind == "S":
        return np.array(pieces, dtype=like.dtype)
    as_bytes = like.dtype.kind == "O" and all(isinstance(v, bytes) for v in like.tolist())
    values: list[str | bytes] = list(pieces) if as_bytes else [p.decode() for p in pieces]
    if like.dtype.kind == "O":
        out = np.empty(len(values), dtype=object)
        out[:] = values
        return out
    return np.array(values, dtype=like.dtype)


def generic_sort(
    column: Any,
    *,
    p: int = PAPER_P,
    l: int = PAPER_L,  # noqa: E741 - the spec's symbol ℒ
    tie_break: TieBreak = "value_only",
    descending: bool = False,
    budget_bytes: int = URAM_BYTES,
) -> GenericSortResult:
    """Sort a one-dimensional column of any orderable type with NASCENT2's generic sort.

    Raises ModelError for a column the hardware path cannot take: more than 2^16 distinct
    values (it would not be dictionary encoded), values that cannot be ordered or moved as
    bytes, nulls (an Arrow array's, a Polars Series', a masked array's), which numpy would
    make NaN or the masked value.
    """
    encoded = encode(column)
    renumbered = renumber(encoded.dictionary)
    mapped, map_counts = map_keys(encoded.keys, renumbered)
    # The kernel sorts each NKey's equality class: -0.0 and 0.0 (distinct by bits, so two
    # dictionary entries) compare equal, as do all NaNs, so "value_then_index" keeps such
    # ties in row order. The decoder then decodes the NKeys themselves.
    classes = equality_classes(renumbered.sorted)[mapped]
    sorted_keys = argsort(classes, p=p, l=l, tie_break=tie_break, descending=descending)
    nkeys = mapped[sorted_keys.indices]
    values, width = _to_bytes(renumbered.sorted)
    table = dictionary_table(values)
    copies = default_lanes(4) if width is not None else 1
    where = placement(int(table.rows.nbytes), copies, budget_bytes)
    if where == "host":
        out = renumbered.sorted[nkeys.astype(np.intp)]
        return GenericSortResult(
            out, sorted_keys.indices, where, map_counts, sorted_keys.counts, None
        )
    mode: Mode = "fixed" if width is not None else "variable"
    decoded = decode(values, nkeys, mode=mode, width=width, lanes=copies)
    out = _from_decoded(decoded, renumbered.sorted)
    return GenericSortResult(
        out, sorted_keys.indices, where, map_counts, sorted_keys.counts, decoded.counts
    )
