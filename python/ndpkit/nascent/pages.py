"""NASCENT2's dictionary page and data page (spec §3.3) as bytes, little-endian.

    DictionaryPage := n_values u32 | value_kind u8 (0 FIXED, 1 VAR) | fixed_width u8
                      | L_Max u16 | FIXED: n_values × fixed_width bytes
                      | VAR  : n_values × (len u16 | bytes[len])     -- len ≤ L_Max
    DataPage       := n_keys u64 | key_bytes u8 | n_keys × key_bytes  -- a key is a value's index

L_Max is the decoder's table row length (§7.1), the smallest power of two ≥ the longest
value, so a VAR value is at most 32 KiB (L_Max fits u16). A page holds at most 2^16 values
(§3.2: a column with more is stored PLAIN); keys are 1, 2 or 4 bytes (8-, 16- or 32-bit).

Decoding checks every field and raises `SpecError` naming the source and the field
(`dictionary_page.L_Max`, `data_page.keys`, …).

Example:
    >>> page = dictionary_page([b"USA", b"IRAN"], None)
    >>> page.l_max, decode_dictionary_page(encode_dictionary_page(page))[0] == page
    (4, True)
"""

from __future__ import annotations

import struct
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np
from numpy.typing import NDArray

from ndpkit.errors import ModelError, SpecError

MAX_DICTIONARY_VALUES = 1 << 16
"""Spec §3.2: a column with more distinct values is stored PLAIN."""
_DICT_HEAD = struct.Struct("<IBBH")
_DATA_HEAD = struct.Struct("<QB")
_FIXED_KIND, _VAR_KIND = 0, 1


@dataclass(frozen=True)
class DictionaryPage:
    """Dictionary values by key (spec §3.3); `fixed_width` is None for VAR values."""

    values: tuple[bytes, ...]
    fixed_width: int | None
    l_max: int


@dataclass(frozen=True)
class DataPage:
    """The dictionary keys of every row: uint8, uint16 or uint32 (spec §3.3)."""

    keys: NDArray[np.unsignedinteger[Any]]


class Fault:
    """Raises SpecError naming one file and a field."""

    def __init__(self, source: str) -> None:
        self.source = source

    def __call__(self, field: str, message: str) -> SpecError:
        return SpecError(message, source=self.source, field=field)

    def check(self, ok: bool, field: str, message: str) -> None:
        if not ok:
            raise self(field, message)


def l_max_for(longest: int) -> int:
    """The decoder's row length for values of up to `longest` bytes (a power of two ≥ 1)."""
    return 1 << max(longest - 1, 0).bit_length()


def dictionary_page(values: Sequence[bytes], fixed_width: int | None) -> DictionaryPage:
    """A page for `values` (each `fixed_width` bytes, or of any length up to 32 KiB)."""
    longest = max((len(v) for v in values), default=fixed_width or 1)
    return DictionaryPage(tuple(values), fixed_width, l_max_for(max(longest, 1)))


def encode_dictionary_page(page: DictionaryPage) -> bytes:
    """n_values u32 | value_kind u8 | fixed_width u8 | L_Max u16 | values."""
    if len(page.values) > MAX_DICTIONARY_VALUES:
        raise ModelError(f"{len(page.values)} dictionary values exceed 2^16 (spec §3.2)")
    if page.l_max > 0x8000 or any(len(v) > page.l_max for v in page.values):
        raise ModelError(f"dictionary values longer than L_Max = {page.l_max} (at most 32 KiB)")
    if page.fixed_width is not None:
        if not 1 <= page.fixed_width <= 0xFF or any(
            len(v) != page.fixed_width for v in page.values
        ):
            raise ModelError(f"FIXED dictionary values must all be {page.fixed_width} bytes")
        head = _DICT_HEAD.pack(len(page.values), _FIXED_KIND, page.fixed_width, page.l_max)
        return head + b"".join(page.values)
    parts = [_DICT_HEAD.pack(len(page.values), _VAR_KIND, 0, page.l_max)]
    for v in page.values:
        parts += [len(v).to_bytes(2, "little"), v]
    return b"".join(parts)


def decode_dictionary_page(
    buf: memoryview | bytes, *, source: str = "dictionary page"
) -> tuple[DictionaryPage, int]:
    """The page at the start of `buf` and its length in bytes; SpecError if it is invalid."""
    fault = Fault(source)
    view = memoryview(buf)
    fault.check(len(view) >= _DICT_HEAD.size, "dictionary_page", "truncated page header")
    n_values, kind, fixed_width, l_max = _DICT_HEAD.unpack_from(view)
    fault.check(
        n_values <= MAX_DICTIONARY_VALUES,
        "dictionary_page.n_values",
        f"{n_values} values exceed 2^16 (such a column is stored PLAIN, spec §3.2)",
    )
    fault.check(
        kind in (_FIXED_KIND, _VAR_KIND), "dictionary_page.value_kind", f"{kind} is not 0 or 1"
    )
    fault.check(
        l_max >= 1 and l_max & (l_max - 1) == 0,
        "dictionary_page.L_Max",
        f"must be a power of two ≥ 1, got {l_max}",
    )
    at = _DICT_HEAD.size
    if kind == _FIXED_KIND:
        fault.check(
            1 <= fixed_width <= l_max,
            "dictionary_page.fixed_width",
            f"must be in [1, L_Max = {l_max}], got {fixed_width}",
        )
        end = at + n_values * fixed_width
        fault.check(end <= len(view), "dictionary_page", "truncated values")
        raw = bytes(view[at:end])
        values = tuple(raw[i : i + fixed_width] for i in range(0, len(raw), fixed_width))
        return DictionaryPage(values, fixed_width, l_max), end
    fault.check(
        fixed_width == 0, "dictionary_page.fixed_width", f"must be 0 for VAR, got {fixed_width}"
    )
    out = []
    for i in range(n_values):
        fault.check(at + 2 <= len(view), "dictionary_page", f"truncated at value {i}")
        length = int.from_bytes(view[at : at + 2], "little")
        fault.check(
            length <= l_max, "dictionary_page.len", f"value {i} is {length} bytes > L_Max = {l_max}"
        )
        fault.check(at + 2 + length <= len(view), "dictionary_page", f"truncated at value {i}")
        out.append(bytes(view[at + 2 : at + 2 + length]))
        at += 2 + length
    return DictionaryPage(tuple(out), None, l_max), at


def encode_data_page(page: DataPage) -> bytes:
    """n_keys u64 | key_bytes u8 | keys."""
    keys = np.ascontiguousarray(page.keys)
    if keys.dtype.itemsize not in (1, 2, 4) or keys.dtype.kind != "u":
        raise ModelError(f"data page keys must be uint8, uint16 or uint32, got {keys.dtype}")
    head = _DATA_HEAD.pack(keys.size, keys.dtype.itemsize)
    return head + keys.astype(keys.dtype.newbyteorder("<")).tobytes()


def decode_data_page(
    buf: memoryview | bytes, *, n_values: int, source: str = "data page"
) -> tuple[DataPage, int]:
    """The page at the start of `buf` and its length; every key must be < `n_values`."""
    fault = Fault(source)
    view = memoryview(buf)
    fault.check(len(view) >= _DATA_HEAD.size, "data_page", "truncated page header")
    n_keys, key_bytes = _DATA_HEAD.unpack_from(view)
    fault.check(
        key_bytes in (1, 2, 4), "data_page.key_bytes", f"must be 1, 2 or 4, got {key_bytes}"
    )
    end = _DATA_HEAD.size + n_keys * key_bytes
    fault.check(end <= len(view), "data_page", f"truncated: {n_keys} keys need {end} bytes")
    keys = np.frombuffer(view, dtype=f"<u{key_bytes}", count=n_keys, offset=_DATA_HEAD.size)
    if keys.size:
        top = int(keys.max())
        fault.check(
            top < n_values, "data_page.keys", f"key {top} has no entry among {n_values} values"
        )
    return DataPage(keys.astype(f"=u{key_bytes}")), end
