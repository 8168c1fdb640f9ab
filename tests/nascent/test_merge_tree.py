"""The O4 `merge_tree` DRAM merge of the sort kernel (spec §5.6) against numpy's stable
argsort, its closed forms, and the timing model's pass count."""

import math
from typing import Any, get_args

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from ndpkit.errors import SpecError
from ndpkit.nascent import timing
from ndpkit.nascent.bitonic import (
    DramMerge,
    argsort,
    expected_counts,
    expected_merge_passes,
    geometry,
)
from ndpkit.nascent.devices import load_devices

# 𝒫 = 2, ℒ = 1: chunks of 4,096 32-bit or 2,048 64-bit keys, so small inputs span many.
SMALL = {"p": 2, "l": 1}


def _keys(n: int, dtype: Any, high: int | None, seed: int) -> np.ndarray:
    rng = np.random.default_rng(seed)
    info = np.iinfo(dtype)
    if high is None:
        return rng.integers(info.min, info.max, n, dtype=dtype, endpoint=True)
    return rng.integers(0, high, n).astype(dtype)


def _stable(keys: np.ndarray, descending: bool) -> np.ndarray:
    return np.argsort(~keys if descending else keys, kind="stable")


@pytest.mark.parametrize("dtype", [np.uint32, np.uint64, np.int32, np.int64])
@pytest.mark.parametrize("ways", [2, 3, 5])
def test_merge_tree_equals_numpy_stable_argsort(dtype: Any, ways: int) -> None:
    for n in (0, 1, 7, 2048, 2049, 4097, 12_289, 30_001):
        for high in (3, None):
            for descending in (False, True):
                keys = _keys(n, dtype, high, n + ways)
                r = argsort(
                    keys,
                    **SMALL,
                    tie_break="value_then_index",
                    descending=descending,
                    dram_merge="merge_tree",
                    merge_ways=ways,
                )
                expected = _stable(keys, descending)
                assert np.array_equal(r.indices, expected), (n, high, descending)
                assert np.array_equal(r.keys, keys[expected])


def test_value_only_merge_tree_sorts_and_permutes() -> None:
    keys = _keys(20_000, np.uint32, 5, 1)
    keys[::7] = np.iinfo(np.uint32).max  # ties with the pad value
    r = argsort(keys, **SMALL, dram_merge="merge_tree", merge_ways=4)
    assert np.array_equal(r.keys, np.sort(keys))
    assert np.array_equal(np.sort(r.indices), np.arange(keys.size))
    assert np.array_equal(keys[r.indices], r.keys)


def test_worked_example_five_chunks_binary() -> None:
    keys = _keys(20_000, np.uint32, None, 9)
    r = argsort(keys, **SMALL, tie_break="value_then_index", dram_merge="merge_tree")
    c = r.counts
    assert (c.chunks, c.chunk_elements, c.dram_passes, c.merge_ways) == (5, 4096, 3, 2)
    assert [(q.runs_in, q.runs_out) for q in r.merge_passes] == [(5, 3), (3, 2), (2, 1)]
    # (4096, 4096)×2 + the lone 3,616 copied; (8192, 8192) + copy; (16384, 3616).
    assert [q.comparisons for q in r.merge_passes] == [16_384, 16_384, 20_000]
    assert all(q.elements_read == q.elements_written == 20_000 for q in r.merge_passes)
    assert c.dram_read_bytes == 20_000 * 4 + 3 * 20_000 * 8
    assert c.dram_write_bytes == 4 * 20_000 * 8
    assert c.cs_dram == 0 and c.onchip_merge_passes == 0


def test_paper_geometry_counts_equal_the_closed_forms() -> None:
    keys = _keys(300_000, np.uint32, None, 2)
    for ways in (2, 3, 4):
        r = argsort(keys, tie_break="value_then_index", dram_merge="merge_tree", merge_ways=ways)
        assert np.array_equal(r.indices, np.argsort(keys, kind="stable"))
        assert r.counts == expected_counts(300_000, dram_merge="merge_tree", merge_ways=ways)
        assert r.merge_passes == expected_merge_passes(300_000, merge_ways=ways)
        assert r.counts.chunks == 3  # ⌈300,000 / 131,072⌉, not the bitonic plan's 4
        assert r.counts.dram_passes == math.ceil(math.log(3, ways))


def _passes(chunks: int, ways: int) -> int:
    """⌈log_k(chunks)⌉ by repeated multiplication, independent of the kernel's code."""
    reach, n = 1, 0
    while reach < chunks:
        reach, n = reach * ways, n + 1
    return n


@settings(max_examples=40, deadline=None)
@given(
    n=st.integers(0, 40_000),
    ways=st.integers(2, 9),
    key_bits=st.sampled_from([32, 64]),
    high=st.sampled_from([2, 50, 2**31]),
    seed=st.integers(0, 2**32 - 1),
)
def test_property_merge_tree_is_a_stable_sort_with_log_k_passes(
    n: int, ways: int, key_bits: int, high: int, seed: int
) -> None:
    dtype = np.uint32 if key_bits == 32 else np.uint64
    keys = _keys(n, dtype, high, seed)
    r = argsort(
        keys, **SMALL, tie_break="value_then_index", dram_merge="merge_tree", merge_ways=ways
    )
    assert np.array_equal(r.indices, np.argsort(keys, kind="stable"))
    capacity = geometry(**SMALL, key_bits=key_bits).capacity
    chunks = max(1, -(-n // capacity))
    assert r.counts.chunks == (chunks if n else 0)
    assert r.counts.dram_passes == len(r.merge_passes) == _passes(chunks, ways)
    assert sum(q.comparisons for q in r.merge_passes) == r.counts.merger_comparisons
    assert (
        r.counts.merge_elements_read == r.counts.merge_elements_written == n * _passes(chunks, ways)
    )
    # A binary tree compares every element it emits, except a lone last run's.
    if ways == 2:
        for q in r.merge_passes:
            assert q.comparisons <= q.elements_read
            assert q.runs_out == -(-q.runs_in // 2)


@pytest.mark.parametrize("key_bits", [32, 64])
@pytest.mark.parametrize("ways", [2, 3, 4, 8])
def test_timing_model_passes_equal_the_kernels_counted_passes(key_bits: int, ways: int) -> None:
    device = load_devices().fpga("smartssd").with_(p=2, l=1)
    dtype = np.uint32 if key_bits == 32 else np.uint64
    for n in (1, 2048, 4096, 4097, 9000, 20_000, 40_961, 70_000):
        keys = _keys(n, dtype, None, n)
        counted = argsort(
            keys, p=device.p, l=device.l, dram_merge="merge_tree", merge_ways=ways
        ).counts
        modelled = timing.sort_time(device, n, key_bits, dram_merge="merge_tree", merge_ways=ways)
        assert modelled.merge_tree_passes == counted.dram_passes, (n, ways)
        assert modelled.chunks == max(counted.chunks, 1)


def test_timing_model_passes_at_the_paper_geometry() -> None:
    device = load_devices().fpga("smartssd")
    keys = _keys(400_000, np.uint32, None, 5)
    counted = argsort(keys, dram_merge="merge_tree").counts
    modelled = timing.sort_time(device, 400_000, dram_merge="merge_tree")
    assert modelled.merge_tree_passes == counted.dram_passes == 2  # 4 chunks
    for n in (131_072, 131_073, 10**6, 10**7, 10**8):
        for ways in (2, 3, 16):
            closed = expected_counts(n, dram_merge="merge_tree", merge_ways=ways)
            model = timing.sort_time(device, n, dram_merge="merge_tree", merge_ways=ways)
            assert model.merge_tree_passes == closed.dram_passes, (n, ways)


def test_option_names_are_the_timing_models() -> None:
    assert get_args(DramMerge) == get_args(timing.DramMerge)


def test_bitonic_dram_is_still_the_default_and_unchanged() -> None:
    keys = _keys(10_000, np.uint32, None, 3)
    r = argsort(keys, **SMALL)
    assert r.merge_passes == () and r.counts.merge_ways == 0
    assert r.counts == expected_counts(10_000, **SMALL)
    assert r.counts.dram_passes == 3  # n − c = 2: (2·3)/2 streaming passes


def test_bad_merge_options() -> None:
    keys = np.arange(10, dtype=np.uint32)
    with pytest.raises(SpecError, match="dram_merge"):
        argsort(keys, dram_merge="merge_sort")  # type: ignore[arg-type]
    with pytest.raises(SpecError, match="merge_ways"):
        argsort(keys, dram_merge="merge_tree", merge_ways=1)
    with pytest.raises(SpecError, match="merge_ways"):
        expected_merge_passes(10, merge_ways=0)


def test_timing_model_prices_the_real_elements_the_kernel_moves() -> None:
    # A fast merger (16 elements per cycle) leaves each pass bound by DRAM: it moves what
    # the kernel counts per merge pass, N·(e + 4) each way, not the padded chunks.
    device = load_devices().fpga("smartssd").with_(p=2, l=1, merge_tree_elements_per_cycle=16)
    n, ways = 9000, 2  # three chunks of 4,096: 12,288 padded elements
    keys = _keys(n, np.uint32, None, 11)
    counts = argsort(keys, p=2, l=1, dram_merge="merge_tree", merge_ways=ways).counts
    chunk_bytes = n * 4 + n * 8  # keys in, keys and indices out
    per_pass = (counts.dram_read_bytes + counts.dram_write_bytes - chunk_bytes) / (
        counts.dram_passes
    )
    assert per_pass == 2 * n * 8 == timing.merge_tree_pass_bytes(n)
    model = timing.sort_time(device, n, dram_merge="merge_tree", merge_ways=ways)
    assert model.merge_tree_passes == counts.dram_passes == 2
    assert model.merge_tree_s == pytest.approx(2 * per_pass / device.d2f_bytes_per_s, rel=1e-12)
