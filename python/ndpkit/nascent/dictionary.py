"""Dictionary encoding (spec §3.2) and the generic sort's renumbering (spec §8; paper §3.3,
Fig. 5).

- `encode`: a column becomes a dictionary of its distinct values, in order of first
  appearance (as a Parquet writer numbers them), and a data page of 8-bit keys (≤ 256
  values) or 16-bit keys (≤ 2^16). A column with more distinct values is not dictionary
  encoded: ModelError.
- `renumber` (host, steps 2–3): sort the dictionary by value; a value's position in the
  sorted dictionary is its NKey, and the key mapping table (u16[U], at most 128 KiB) sends
  each original key to its NKey.
- `map_keys` (FPGA, step 6): the data page through the mapping table, run on the decoder in
  fixed-length mode with the table's 2-byte NKeys as its dictionary (option O19's
  default); the Mapped Key array is zero-extended to the sort kernel's 32 bits.
- `placement`: whether the sorted dictionary's table copies fit the on-chip memory
  (`"fpga"`) or the last decode falls back to the host (`"host"`, spec §8.3).

Values are identified by their bits, so a float dictionary keeps -0.0 and 0.0 (and distinct
NaN payloads) apart, as a lossless encoding must; values are ordered as numpy orders them
(NaN last, ties between -0.0 and 0.0 in first-seen order).

Example (spec §13.6):
    >>> r = renumber(np.array(["USA", "Iran", "Croatia", "Brazil", "Ghana", "Chile"]))
    >>> r.mapping.tolist()
    [5, 4, 2, 0, 3, 1]
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Literal

import numpy as np
from numpy.typing import NDArray

from ndpkit.errors import ModelError
from ndpkit.nascent.bitonic import null_count
from ndpkit.nascent.decoder import DecodeCounts, decode

MAX_DISTINCT = 1 << 16
"""Most distinct values a dictionary-encoded column may have (16-bit keys)."""
URAM_BYTES = 128 * 4096 * 72 // 8
"""On-chip memory for the dictionary table: 128 URAM blocks of 288 Kb (spec §1.2 Table 1,
block size [external] §1.4): 4,718,592 bytes."""

Placement = Literal["fpga", "host"]


@dataclass(frozen=True)
class Encoded:
    """A dictionary-encoded column: distinct values (first-seen order) and the data page."""

    dictionary: NDArray[Any]
    keys: NDArray[np.unsignedinteger[Any]]

    @property
    def key_bits(self) -> int:
        return 8 * self.keys.dtype.itemsize


@dataclass(frozen=True)
class Renumbered:
    """The sorted dictionary and the key mapping table (original key → NKey)."""

    sorted: NDArray[Any]
    mapping: NDArray[np.uint16]

    @property
    def mapping_bytes(self) -> int:
        return int(self.mapping.nbytes)


def _column(values: Any, what: str) -> NDArray[Any]:
    nulls = null_count(values)
    if nulls:
        raise ModelError(
            f"{what} holds {nulls} null(s): the generic sort orders values, and a null "
            "would be sorted as NaN or as the value under its mask; drop the nulls first"
        )
    array = np.asarray(values)
    if array.ndim != 1:
        raise ModelError(f"{what} must be one-dimensional, got shape {array.shape}")
    return array


def _identity(array: NDArray[Any]) -> NDArray[Any]:
    """What makes two values the same dictionary entry: the bits, for floats."""
    if array.dtype.kind in "fc":
        size = array.dtype.itemsize
        bits = np.dtype(f"u{size}") if size in (1, 2, 4, 8) else np.dtype(f"V{size}")
        return np.ascontiguousarray(array).view(bits)
    return array


def _distinct(array: NDArray[Any], what: str) -> tuple[NDArray[Any], NDArray[Any]]:
    """First index of each distinct value, and each value's distinct number."""
    try:
        _, first, inverse = np.unique(_identity(array), return_index=True, return_inverse=True)
    except TypeError as e:
        raise ModelError(f"{what} holds values that cannot be ordered: {e}") from e
    return first, inverse.reshape(-1)


def encode(column: Any) -> Encoded:
    """Dictionary-encode a one-dimensional column; ModelError past 2^16 distinct values."""
    array = _column(column, "a column")
    first, inverse = _distinct(array, "the column")
    if first.size > MAX_DISTINCT:
        raise ModelError(
            f"{first.size} distinct values exceed the 2^16 that 16-bit dictionary keys can "
            "number; such a column is stored plain, not dictionary encoded"
        )
    order = np.argsort(first, kind="stable")
    rank = np.empty(order.size, dtype=np.int64)
    rank[order] = np.arange(order.size)
    key_dtype = np.uint8 if first.size <= 256 else np.uint16
    return Encoded(dictionary=array[first[order]], keys=rank[inverse].astype(key_dtype))


def renumber(dictionary: Any) -> Renumbered:
    """Steps 2–3: sort the dictionary ascending and number each value by its position."""
    array = _column(dictionary, "a dictionary")
    if array.size > MAX_DISTINCT:
        raise ModelError(f"a dictionary of {array.size} values exceeds 2^16 = {MAX_DISTINCT}")
    first, _ = _distinct(array, "the dictionary")
    if first.size != array.size:
        raise ModelError("the dictionary holds a value twice; it must map values one-to-one")
    try:
        order = np.argsort(array, kind="stable")
    except TypeError as e:
        raise ModelError(f"the dictionary holds values that cannot be ordered: {e}") from e
    mapping = np.empty(array.size, dtype=np.uint16)
    mapping[order] = np.arange(array.size, dtype=np.uint16)
    return Renumbered(sorted=array[order], mapping=mapping)


def map_keys(keys: NDArray[Any], renumbered: Renumbered) -> tuple[NDArray[np.uint32], DecodeCounts]:
    """Step 6 on the decoder (fixed length, 2-byte NKeys): the Mapped Key array as u32."""
    nkeys = [int(m).to_bytes(2, "little") for m in renumbered.mapping]
    decoded = decode(nkeys, keys, mode="fixed", width=2)
    mapped = decoded.data.view("<u2").astype(np.uint32)
    return mapped, decoded.counts


def equality_classes(sorted_values: NDArray[Any]) -> NDArray[np.uint32]:
    """Each sorted dictionary entry's class: entries that compare equal share one (for
    floats -0.0 equals 0.0 and every NaN equals every other; other types are distinct)."""
    n = len(sorted_values)
    if n == 0 or sorted_values.dtype.kind != "f":
        return np.arange(n, dtype=np.uint32)
    # In the values' own precision: as float64, long doubles 2^-60 apart were one class.
    v = sorted_values
    same = (v[1:] == v[:-1]) | (np.isnan(v[1:]) & np.isnan(v[:-1]))
    return np.concatenate([[0], np.cumsum(~same)]).astype(np.uint32)


def placement(table_bytes: int, copies: int = 1, budget_bytes: int = URAM_BYTES) -> Placement:
    """Where the last decode runs: on the FPGA if `copies` tables fit the budget."""
    return "fpga" if table_bytes * copies <= budget_bytes else "host"
