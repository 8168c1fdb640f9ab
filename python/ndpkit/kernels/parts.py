"""Per-record partials keyed by offset: the shared plumbing of kernels whose device part
returns one row per input record (LC, HE, Binarization, Sobel).

A partial maps the offset of a chunk's first record to arrays whose axis 0 is those
records. Merging is a dict union, so the runtime may merge in any order and grouping; the
host part concatenates the segments in record order and checks they tile 0..n.
"""

from __future__ import annotations

import numbers

import numpy as np

from ndpkit.errors import NdpkitError, whole_number

Parts = dict[int, tuple[np.ndarray, ...]]
"""A per-record partial: offset of the first record → arrays whose axis 0 is those records."""


def merge_by_offset(partials: list[Parts]) -> Parts:
    """Union of partials; an empty segment never conflicts (an empty shard may share an offset)."""
    merged: Parts = {}
    for part in partials:
        for offset, arrays in part.items():
            held = merged.get(offset)
            if held is not None and len(held[0]) and len(arrays[0]):
                raise ValueError(f"two partials for the records starting at {offset}")
            if held is None or not len(held[0]):
                merged[offset] = arrays
    return merged


def concat_by_offset(merged: Parts) -> tuple[np.ndarray, ...]:
    """The segments in record order; they must tile 0..n without gaps or overlaps."""
    if not merged:
        raise ValueError("no partials to combine (even empty data yields one empty partial)")
    offsets = sorted(merged)
    segments = [merged[o] for o in offsets if len(merged[o][0])] or [merged[offsets[0]]]
    expected = 0
    for offset in offsets:
        if len(merged[offset][0]) == 0:
            continue
        if offset != expected:
            raise ValueError(f"records {expected}..{offset} missing from the partials")
        expected = offset + len(merged[offset][0])
    return tuple(np.concatenate(column) for column in zip(*segments, strict=True))


def in_order(merged: Parts) -> tuple[np.ndarray, ...]:
    """A per-record partial's columns in record order. One segment from record 0 is that
    already, and as the rows the runtime wrote in place it may be as large as the data set
    (or larger than memory, on disk), so it is taken as it is rather than copied."""
    if len(merged) == 1 and 0 in merged:
        return merged[0]
    return concat_by_offset(merged)


def records_in(size_bytes: int, record_bytes: int) -> int:
    """Whole records in about `size_bytes`: at least one unless `size_bytes` is 0."""
    if isinstance(size_bytes, bool) or not isinstance(size_bytes, numbers.Integral):
        # 1000.5 gave numpy a float shape: a TypeError far from the argument
        raise NdpkitError(f"size_bytes must be a whole number of bytes, got {size_bytes!r}")
    if size_bytes < 0:
        raise NdpkitError(f"size_bytes must be ≥ 0, got {size_bytes}")
    return max(size_bytes // record_bytes, 1 if size_bytes else 0)


def checked_seed(seed: object) -> int:
    """A generator's `seed` as an int ≥ 0, or a SpecError naming it: numpy's own errors for
    -1 ("expected non-negative integer") and 1.5 ("SeedSequence expects int…") named no
    argument, and True was taken as 1."""
    return whole_number(seed, "seed", "a whole number ≥ 0", least=0)
