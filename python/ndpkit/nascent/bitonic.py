"""NASCENT2's bitonic sort kernel (spec §4–5; paper §2.3, §3.4, Figs. 1, 6, 7, Eqs. 1–3).

The kernel sorts (value, index) pairs: a 𝒫-sorter (a bitonic network of log₂𝒫 steps,
Eq. 2's n_CS = (𝒫/4)·log₂𝒫·(log₂𝒫 + 1) compare-and-swap modules) fills two sub-memories,
M₁ with ascending 𝒫-arrays and M₂ with descending ones; PCS units and 2𝒫 mergers finish
each on-chip chunk of up to C_BRAMs = 2,048·𝒫·ℒ 32-bit elements (Eq. 3; half as many
64-bit ones). Larger inputs are sorted chunk by chunk and merged in DRAM (option O4,
`dram_merge`):

- `"bitonic_dram"` (default): the network continues at chunk granularity, with streaming
  compare-and-swap passes over DRAM; chunks alternate direction and the input is padded to
  a power of two;
- `"merge_tree"`: every chunk is sorted ascending, its pads dropped as it is stored, and a
  k-way merger (`merge_ways`, default 2; a balanced tree of k − 1 two-input mergers)
  merges k runs at a time through DRAM in ⌈log_k(chunks)⌉ passes, N pairs read and N
  written per pass. Chunks are ⌈N / C_BRAMs⌉ full-size ones, the last one padded. The
  merge is stable, so with `tie_break="value_then_index"` the output is a stable sort.

Pads carry the type's maximum in the sort order and the pad index 0xFFFFFFFF; pads never
reach the output.

The Rust core (`ndp-sort`) counts what it does in the same pass that sorts: comparators,
𝒫-sorter passes, PCS operations, 2𝒫 merges, DRAM passes, BRAM array accesses per
sub-memory, DRAM bytes and, for `merge_tree`, each pass's runs, elements and merger
comparisons. `expected_counts` and `expected_merge_passes` give the closed forms.

Conventions:
- `tie_break="value_only"` (the paper, option O3's default) compares values only, so equal
  keys come out in a deterministic but unstable index order; `"value_then_index"` compares
  (value, index) and equals a stable sort.
- Signed keys are sorted through the order-preserving map x ↦ x XOR sign bit.
- Counts are counts, not times: pricing them is the SmartSSD model's job.
- Limits: 𝒫 ≤ 2^15 (`MAX_P`) and a capacity 2,048·𝒫·ℒ ≤ 2^32 (`MAX_CAPACITY`, as indices
  are 32-bit); the closed forms take any n whose counts fit 64 bits (ModelError beyond).

Example:
    >>> r = argsort(np.array([30, 10, 50, 20, 40], dtype=np.uint32))
    >>> r.indices.tolist(), r.counts.compare_swaps
    ([1, 3, 0, 4, 2], 24)
"""

from __future__ import annotations

from dataclasses import asdict, dataclass
from importlib import import_module
from typing import Any, Literal, get_args

import numpy as np
from numpy.typing import NDArray

from ndpkit.errors import ModelError, SpecError, whole_number

_core: Any = import_module("ndpkit._core")  # the compiled extension has no type stub

TieBreak = Literal["value_only", "value_then_index"]
DramMerge = Literal["bitonic_dram", "merge_tree"]
"""Option O4, spelled as `ndpkit.nascent.timing.DramMerge` (which prices the same choice)."""
PAPER_P = 8
"""𝒫 of the spec's default (option O2: 𝒫 = 8, ℒ = 8, so 𝒫·ℒ = 64 and C_BRAMs = 128 Ki)."""
PAPER_L = 8
PAD_INDEX = 0xFFFF_FFFF
"""The index pads carry; at most PAD_INDEX real elements can be sorted."""
MAX_NETWORK = 2**16
"""The largest network `network` lists (4.5 million comparators); the Rust core refuses more."""
MAX_P = MAX_NETWORK // 2
"""The widest 𝒫-sorter: the kernel also builds the 2𝒫 merger network."""
MAX_CAPACITY = 2**32
"""The largest on-chip capacity 2,048·𝒫·ℒ (32-bit elements): indices are 32-bit, so
𝒫·ℒ ≤ 2^21."""

_SIGNED: dict[np.dtype[Any], type[np.unsignedinteger[Any]]] = {
    np.dtype(np.int32): np.uint32,
    np.dtype(np.int64): np.uint64,
}
_SOURCE = "nascent2 sort kernel"


@dataclass(frozen=True)
class SortCounts:
    """What one sort did. Array accesses are per 𝒫-array (𝒫 BRAM columns at once); the
    index memory sees the same accesses as the sequence memory."""

    elements: int
    padded_elements: int
    key_bytes: int
    capacity: int
    chunk_elements: int
    chunks: int
    sorter_comparators: int
    merger_comparators: int
    sorter_passes: int
    pcs_ops: int
    merge_ops: int
    dram_passes: int
    onchip_merge_passes: int
    chunk_loads: int
    cs_sorter: int
    cs_pcs: int
    cs_merge: int
    cs_dram: int
    compare_swaps: int
    dram_read_bytes: int
    dram_write_bytes: int
    bram_array_reads: int
    bram_array_writes: int
    bram_reads_m1: int
    bram_reads_m2: int
    bram_writes_m1: int
    bram_writes_m2: int
    merge_ways: int
    """k of the `merge_tree` merger; 0 for `bitonic_dram`."""
    merge_elements_read: int
    merge_elements_written: int
    merger_comparisons: int
    """Two-input merger comparisons of `merge_tree`: one per element per merger crossed."""

    def as_dict(self) -> dict[str, int]:
        return asdict(self)


@dataclass(frozen=True)
class MergePass:
    """One `merge_tree` pass through DRAM: runs before and after, (value, index) pairs read
    and written, merger comparisons."""

    runs_in: int
    runs_out: int
    elements_read: int
    elements_written: int
    comparisons: int


@dataclass(frozen=True)
class SortResult:
    """Sorted keys (the input's dtype), each one's original index, the counts, and the
    `merge_tree` passes (empty for `bitonic_dram` or a single chunk)."""

    keys: NDArray[Any]
    indices: NDArray[np.uint32]
    counts: SortCounts
    merge_passes: tuple[MergePass, ...] = ()


@dataclass(frozen=True)
class Geometry:
    """Eq. 2 and Eq. 3 for one (𝒫, ℒ, key width)."""

    p: int
    l: int  # noqa: E741 - the spec's symbol ℒ
    key_bits: int
    sequence_brams: int
    index_brams: int
    capacity: int
    depth_elements: int
    arrays_per_memory: int
    sorter_comparators: int
    sorter_comparators_approx: float
    merger_comparators: int


@dataclass(frozen=True)
class Comparator:
    """One compare-and-swap of the network; positions are 0-based."""

    step: int
    sub_step: int
    lo: int
    hi: int
    ascending: bool


def _check_power_of_two(name: str, value: int, minimum: int) -> None:
    whole_number(value, name, f"a power of two ≥ {minimum}", source=_SOURCE)  # 8.0: TypeError
    if value < minimum or value & (value - 1):
        raise SpecError(
            f"must be a power of two ≥ {minimum}, got {value}", source=_SOURCE, field=name
        )


def _check_geometry(p: int, l: int) -> None:  # noqa: E741
    """𝒫 and ℒ as the Rust core accepts them, refused here with the parameter's name."""
    _check_power_of_two("p", p, 2)
    _check_power_of_two("l", l, 1)
    if p > MAX_P:
        raise SpecError(
            f"must be at most {MAX_P} (the 2𝒫 merger network is built), got {p}",
            source=_SOURCE,
            field="p",
        )
    if 2048 * p * l > MAX_CAPACITY:
        raise SpecError(
            f"must be at most {MAX_CAPACITY // (2048 * p)} with p = {p}: the on-chip "
            f"capacity 2,048·𝒫·ℒ must not exceed 2^32 elements (32-bit indices), got {l}",
            source=_SOURCE,
            field="l",
        )


def _check_merge(dram_merge: str, merge_ways: int) -> None:
    if dram_merge not in get_args(DramMerge):
        raise SpecError(
            f"must be one of {get_args(DramMerge)}, got {dram_merge!r}",
            source=_SOURCE,
            field="dram_merge",
        )
    whole_number(merge_ways, "merge_ways", "an integer ≥ 2", source=_SOURCE)
    if merge_ways < 2:
        raise SpecError(f"must be ≥ 2, got {merge_ways}", source=_SOURCE, field="merge_ways")


def _check_key_bits(key_bits: int) -> int:
    if key_bits not in (32, 64):
        raise SpecError(f"must be 32 or 64, got {key_bits}", source=_SOURCE, field="key_bits")
    return key_bits // 8


def geometry(p: int = PAPER_P, l: int = PAPER_L, key_bits: int = 32) -> Geometry:  # noqa: E741
    """BRAM counts, on-chip capacity and comparator counts of a kernel."""
    _check_geometry(p, l)
    raw = _core.bitonic_geometry(p, l, _check_key_bits(key_bits))
    return Geometry(p=p, l=l, key_bits=key_bits, **raw)


def expected_counts(
    n: int,
    *,
    key_bits: int = 32,
    p: int = PAPER_P,
    l: int = PAPER_L,  # noqa: E741
    dram_merge: DramMerge = "bitonic_dram",
    merge_ways: int = 2,
) -> SortCounts:
    """The closed-form counts of sorting n keys (independent of their values)."""
    return _expected(n, key_bits, p, l, dram_merge, merge_ways)[0]


def expected_merge_passes(
    n: int,
    *,
    key_bits: int = 32,
    p: int = PAPER_P,
    l: int = PAPER_L,  # noqa: E741
    merge_ways: int = 2,
) -> tuple[MergePass, ...]:
    """The closed form of each `merge_tree` pass for n keys: ⌈log_k(chunks)⌉ entries."""
    return _expected(n, key_bits, p, l, "merge_tree", merge_ways)[1]


def _expected(
    n: int,
    key_bits: int,
    p: int,
    l: int,  # noqa: E741
    dram_merge: str,
    merge_ways: int,
) -> tuple[SortCounts, tuple[MergePass, ...]]:
    _check_geometry(p, l)
    _check_merge(dram_merge, merge_ways)
    # 1.5 was a TypeError from the binding, True one key
    whole_number(n, "n", "a whole number of keys ≥ 0", 0, source=_SOURCE)
    key_bytes = _check_key_bits(key_bits)
    try:
        counts, passes = _core.bitonic_expected_counts(n, key_bytes, p, l, dram_merge, merge_ways)
    except ValueError as e:  # counts past 64 bits, from n ≈ 2^52 on
        raise ModelError(str(e)) from e
    except OverflowError as e:
        raise ModelError(f"n = {n} or merge_ways = {merge_ways} exceeds 64 bits") from e
    return SortCounts(**counts), tuple(MergePass(**q) for q in passes)


def network(n: int) -> list[Comparator]:
    """The comparators of the n-element network (n a power of two, at most `MAX_NETWORK`),
    in execution order."""
    _check_power_of_two("n", n, 1)
    if n > MAX_NETWORK:
        raise SpecError(f"must be at most {MAX_NETWORK}, got {n}", source=_SOURCE, field="n")
    return [Comparator(*c) for c in _core.bitonic_network(n)]


def null_count(values: Any) -> int:
    """How many nulls a column holds that `np.asarray` would quietly turn into values: an
    Arrow array's or a Polars Series' (NaN, the whole integer column then floats, which past
    2^53 are no longer the values given) and a masked array's masked entries (their
    underlying values)."""
    if isinstance(values, np.ma.MaskedArray):
        return int(np.count_nonzero(values.mask))
    count = getattr(values, "null_count", None)
    if callable(count):  # Polars' Series.null_count(); Arrow's is an attribute
        count = count()
    return count if isinstance(count, int) else 0


def argsort(
    keys: NDArray[Any],
    *,
    p: int = PAPER_P,
    l: int = PAPER_L,  # noqa: E741
    tie_break: TieBreak = "value_only",
    descending: bool = False,
    dram_merge: DramMerge = "bitonic_dram",
    merge_ways: int = 2,
) -> SortResult:
    """Sort a one-dimensional array of 32- or 64-bit integers with the kernel.

    uint32/uint64 are sorted as they are; int32/int64 through the order-preserving sign-bit
    flip. Raises SpecError for bad parameters and ModelError for keys the kernel cannot
    sort (other dtypes, not one-dimensional, more than 2^32 − 1 elements, nulls: an Arrow
    array's, a Polars Series', a masked array's).
    """
    _check_geometry(p, l)
    if tie_break not in get_args(TieBreak):
        raise SpecError(
            f"must be one of {get_args(TieBreak)}, got {tie_break!r}",
            source=_SOURCE,
            field="tie_break",
        )
    _check_merge(dram_merge, merge_ways)
    nulls = null_count(keys)
    if nulls:
        raise ModelError(
            f"the keys hold {nulls} null(s): the sort kernel sorts values, and a null would "
            "be sorted as NaN or as the value under its mask; drop the nulls first"
        )
    array = np.asarray(keys)
    if array.ndim != 1:
        raise ModelError(f"the sort kernel sorts one-dimensional keys, got shape {array.shape}")
    if array.size >= PAD_INDEX:
        raise ModelError(f"{array.size} keys exceed the kernel's 32-bit indices")
    dtype = array.dtype
    if dtype in _SIGNED:
        unsigned = _SIGNED[dtype]
        sign = unsigned(1 << (8 * dtype.itemsize - 1))
        work = np.ascontiguousarray(array).view(unsigned) ^ sign
    elif dtype in (np.dtype(np.uint32), np.dtype(np.uint64)):
        work = np.ascontiguousarray(array)
    else:
        raise ModelError(
            f"the sort kernel takes 32- or 64-bit integer keys, got {dtype}; "
            "sort other types through ndpkit.nascent.generic.generic_sort"
        )
    fn = _core.bitonic_argsort_u32 if work.dtype == np.uint32 else _core.bitonic_argsort_u64
    try:
        sorted_keys, indices, counts, passes = fn(
            work, p, l, tie_break, descending, dram_merge, merge_ways
        )
    except (ValueError, OverflowError) as e:
        raise ModelError(str(e)) from e
    if dtype in _SIGNED:
        sorted_keys = (sorted_keys ^ sign).view(dtype)
    return SortResult(
        keys=sorted_keys,
        indices=indices,
        counts=SortCounts(**counts),
        merge_passes=tuple(MergePass(**q) for q in passes),
    )
