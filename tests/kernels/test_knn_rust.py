"""The Rust distance loop (`ndp-kernels`) against its numpy oracle: bit for bit."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from ndpkit.kernels.knn import distances_sq, distances_sq_numpy, empty_neighbours, merge_block


@settings(max_examples=60, deadline=None)
@given(
    rows=st.integers(0, 3000),
    dims=st.sampled_from([1, 2, 3, 6, 8, 11]),
    seed=st.integers(0, 2**32 - 1),
    scale=st.sampled_from([1e-3, 1.0, 1e4]),
)
def test_rust_distances_equal_numpy_bit_for_bit(rows: int, dims: int, seed: int, scale: float):
    rng = np.random.default_rng(seed)
    points = (rng.standard_normal((rows, dims)) * scale).astype(np.float32)
    query = (rng.standard_normal(dims) * scale).astype(np.float32)
    fast, oracle = distances_sq(points, query), distances_sq_numpy(points, query)
    assert fast.dtype == np.float32 and fast.shape == (rows,)
    assert np.array_equal(fast, oracle)


def test_non_contiguous_and_float64_inputs_are_converted():
    rng = np.random.default_rng(3)
    wide = rng.random((500, 16), dtype=np.float32)
    points = wide[:, ::2]  # a strided view: 8 features per row
    query = rng.random(8)  # float64: converted to float32 like the points
    expected = distances_sq_numpy(np.ascontiguousarray(points), query.astype(np.float32))
    assert np.array_equal(distances_sq(points, query), expected)


def test_query_of_the_wrong_width_is_rejected():
    with pytest.raises(ValueError, match="query has 3 features, points have 2"):
        distances_sq(np.zeros((4, 2), np.float32), np.zeros(3, np.float32))


@pytest.mark.parametrize("dims", [2, 6, 8])
@pytest.mark.parametrize("start", [0, 1, 3, 15])
def test_many_steps_from_any_alignment_equal_numpy_bit_for_bit(dims: int, start: int):
    """Tens of thousands of points (whole 16-point steps, prefetches past the end) starting
    at any row, so the vector loads meet every alignment."""
    rng = np.random.default_rng(dims * 100 + start)
    points = rng.standard_normal((40_013, dims)).astype(np.float32)[start:]
    query = rng.standard_normal(dims).astype(np.float32)
    fast, oracle = distances_sq(points, query), distances_sq_numpy(points, query)
    np.testing.assert_array_equal(fast.view(np.uint32), oracle.view(np.uint32))


@pytest.mark.parametrize("dims", [2, 6, 8])
def test_special_values_equal_numpy_bit_for_bit(dims: int):
    specials = np.array(
        [0.0, -0.0, np.inf, -np.inf, np.nan, 3.4e38, 1e-40, -1e20, 1.0], dtype=np.float32
    )
    rng = np.random.default_rng(dims)
    points = rng.choice(specials, size=(101, dims)).astype(np.float32)
    query = rng.choice(specials, size=dims).astype(np.float32)
    with np.errstate(all="ignore"):
        oracle = distances_sq_numpy(points, query)
    fast = distances_sq(points, query)
    np.testing.assert_array_equal(fast.view(np.uint32), oracle.view(np.uint32))


@settings(max_examples=80, deadline=None)
@given(
    sizes=st.lists(st.integers(0, 2000), min_size=1, max_size=6),
    k=st.integers(1, 40),
    levels=st.sampled_from([3, 50, 10**6]),
    seed=st.integers(0, 2**32 - 1),
)
def test_block_by_block_top_k_is_the_k_smallest_by_distance_then_index(
    sizes: list[int], k: int, levels: int, seed: int
):
    """Blocks of any sizes folded into the top-k (the first through `_kth_bound`), with few
    distinct distances (many ties) or many: the k smallest (distance, index) pairs."""
    rng = np.random.default_rng(seed)
    blocks = [(rng.integers(0, levels, n) / levels).astype(np.float32) for n in sizes]
    best, first = empty_neighbours(), 0
    for block in blocks:
        best = merge_block(best, block, first, k)
        first += len(block)
    every = np.concatenate(blocks)
    order = np.lexsort((np.arange(len(every)), every))[:k]
    assert np.array_equal(best.indices, order)
    assert np.array_equal(best.distances_sq, every[order])
