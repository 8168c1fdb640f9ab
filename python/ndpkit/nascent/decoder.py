"""NASCENT2's dictionary decoder kernel (spec §7; paper §3.6, Eq. 5, Fig. 9).

- The **dictionary table** holds the values concatenated, R rows × L_Max bytes (L_Max a
  power of two ≥ the longest value; a longer value is rejected).
- The **index memory** holds each key's (byte address, length); the address is the prefix
  sum of the previous lengths.
- **Eq. 5**: row = address >> log₂L_Max, offset = address mod L_Max. The kernel reads rows
  `row` and `row + 1` and keeps bytes [offset, offset + length).
- The output goes through B = min(L_Max, 64) byte buffers, written to DRAM B bytes at a
  time, with one partial write at the end.
- **Modes**: `"variable"` decodes one key per cycle; `"fixed"` (every value `width` bytes)
  decodes `lanes` keys per cycle with one table copy per lane. The default lane count is
  option O7, ⌈BW_S2F / (f · key bytes)⌉ (10 for 1-byte keys at 3 GB/s and 300 MHz).

Keys are the data page: uint8, uint16 or uint32 arrays (8-, 16- or 32-bit keys, spec
§3.2); any other width is rejected.

Example (spec §13.5):
    >>> countries = ["USA", "IRAN", "CROATIA", "BRAZIL", "GHANA"]
    >>> d = decode(countries, np.array([3], dtype=np.uint8), l_max=8)
    >>> d.values()
    [b'BRAZIL']
"""

from __future__ import annotations

import itertools
import math
from collections.abc import Sequence
from dataclasses import asdict, dataclass
from importlib import import_module
from typing import Any, Literal, NamedTuple, get_args

import numpy as np
from numpy.typing import NDArray

from ndpkit.errors import ModelError, SpecError, whole_number
from ndpkit.native import native_input

_core: Any = import_module("ndpkit._core")  # the compiled extension has no type stub

Mode = Literal["variable", "fixed"]
S2F_BYTES_PER_S = 3e9
"""SSD → FPGA bandwidth of the SmartSSD (spec §1.1, paper)."""
CLOCK_HZ = 300e6
"""Kernel clock (option O1's default: the paper does not state it)."""
MAX_BUFFERS = 64
"""An AXI write carries at most 512 bits."""

_KEY_DTYPES = (np.dtype(np.uint8), np.dtype(np.uint16), np.dtype(np.uint32))
_SOURCE = "nascent2 dictionary decoder"


class Location(NamedTuple):
    """Eq. 5: the table row a value starts in, its offset in the row, its length."""

    row: int
    offset: int
    length: int


@dataclass(frozen=True)
class DictionaryTable:
    """The decoder's dictionary table (R × L_Max bytes) and index memory."""

    rows: NDArray[np.uint8]
    addresses: NDArray[np.uint64]
    lengths: NDArray[np.uint32]

    @property
    def l_max(self) -> int:
        return int(self.rows.shape[1])

    def locate(self, key: int) -> Location:
        """Eq. 5 for `key`."""
        if not 0 <= key < self.addresses.size:
            raise ModelError(f"key {key} has no entry in a dictionary of {self.addresses.size}")
        address = int(self.addresses[key])
        shift = self.l_max.bit_length() - 1
        return Location(address >> shift, address & (self.l_max - 1), int(self.lengths[key]))


@dataclass(frozen=True)
class DecodeCounts:
    keys: int
    cycles: int
    index_lookups: int
    row_reads: int
    input_bytes: int
    output_bytes: int
    full_flushes: int
    partial_flushes: int
    buffers: int
    table_copies: int
    l_max: int
    table_rows: int
    table_bytes: int

    def as_dict(self) -> dict[str, int]:
        return asdict(self)


@dataclass(frozen=True)
class Decoded:
    """The decoded byte stream; in variable mode also offsets u64[N + 1] (option O9)."""

    data: NDArray[np.uint8]
    offsets: NDArray[np.uint64] | None
    width: int | None
    counts: DecodeCounts

    def values(self) -> list[bytes]:
        """The decoded values one by one."""
        raw = self.data.tobytes()
        if self.offsets is not None:
            bounds = self.offsets.tolist()
            return [raw[a:b] for a, b in itertools.pairwise(bounds)]
        width = self.width or 1
        return [raw[i : i + width] for i in range(0, len(raw), width)]


def default_lanes(
    key_bytes: int, s2f_bytes_per_s: float = S2F_BYTES_PER_S, clock_hz: float = CLOCK_HZ
) -> int:
    """Option O7: fixed-length lanes so that the key input can reach BW_S2F."""
    return max(1, math.ceil(round(s2f_bytes_per_s / (clock_hz * key_bytes), 9)))


def _value_bytes(values: Sequence[bytes | str]) -> list[bytes]:
    if isinstance(values, str | bytes | bytearray | memoryview):
        # Iterated, a string was a dictionary of its letters ("USA": U, S, A), and keys
        # decoded to letters without a word.
        raise SpecError(
            f"must be a list of dictionary values, got the {type(values).__name__} "
            f"{values!r}: give [{values!r}]",
            source=_SOURCE,
            field="values",
        )
    out = []
    for i, v in enumerate(values):
        if isinstance(v, str):
            out.append(v.encode())
        elif isinstance(v, bytes | bytearray | memoryview):
            out.append(bytes(v))
        else:
            raise ModelError(f"dictionary value {i} is {type(v).__name__}, not bytes or str")
    return out


def _check_l_max(l_max: int | None) -> None:
    if l_max is not None:  # 8.0 was a TypeError from `&`
        whole_number(l_max, "l_max", "a power of two", source=_SOURCE)
    if l_max is not None and (l_max < 1 or l_max & (l_max - 1)):
        raise SpecError(
            f"must be a power of two (Eq. 5 shifts by log₂ L_Max), got {l_max}",
            source=_SOURCE,
            field="l_max",
        )


def dictionary_table(values: Sequence[bytes | str], l_max: int | None = None) -> DictionaryTable:
    """Load a dictionary page (key i = values[i]; str as UTF-8) into the table.

    L_Max defaults to the smallest power of two that holds the longest value. Raises
    ModelError for a value longer than L_Max.
    """
    _check_l_max(l_max)
    try:
        rows, addresses, lengths = _core.decoder_table(_value_bytes(values), l_max)
    except ValueError as e:
        raise ModelError(str(e)) from e
    return DictionaryTable(rows=rows, addresses=addresses, lengths=lengths)


def decode(
    values: Sequence[bytes | str],
    keys: NDArray[Any],
    *,
    l_max: int | None = None,
    mode: Mode = "variable",
    width: int | None = None,
    lanes: int | None = None,
) -> Decoded:
    """Decode a data page of keys with the dictionary `values`.

    Fixed mode needs every value to be `width` bytes (default: the first value's length)
    and uses `lanes` table copies (default: option O7). Raises SpecError for bad
    parameters and ModelError for keys the kernel cannot decode (wrong width, no entry)
    or values it cannot hold (longer than L_Max, not `width` bytes in fixed mode).
    """
    if mode not in get_args(Mode):
        raise SpecError(
            f"must be one of {get_args(Mode)}, got {mode!r}", source=_SOURCE, field="mode"
        )
    _check_l_max(l_max)
    page = np.asarray(keys)
    if page.ndim != 1 or page.dtype not in _KEY_DTYPES:
        bits = 8 * page.dtype.itemsize
        raise ModelError(
            f"keys must be one-dimensional uint8, uint16 or uint32 (8-, 16- or 32-bit keys); "
            f"got {page.dtype} ({bits}-bit) with shape {page.shape}"
        )
    raw = _value_bytes(values)
    fixed_width = None
    fixed_lanes = 1
    if mode == "fixed":
        fixed_width = width if width is not None else (len(raw[0]) if raw else 1)
        fixed_lanes = lanes if lanes is not None else default_lanes(page.dtype.itemsize)
        if fixed_width < 1 or fixed_lanes < 1:
            raise SpecError(
                f"width and lanes must be ≥ 1, got {fixed_width} and {fixed_lanes}",
                source=_SOURCE,
                field="width" if fixed_width < 1 else "lanes",
            )
    try:
        data, offsets, counts = _core.decode(
            raw, native_input(page, page.dtype.type), l_max, fixed_width, fixed_lanes
        )
    except ValueError as e:
        raise ModelError(str(e)) from e
    return Decoded(data=data, offsets=offsets, width=fixed_width, counts=DecodeCounts(**counts))
