"""The Rust distance loop and top-k fold (`ndp-kernels`) against their numpy oracles."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from scipy.spatial.distance import cdist

from ndpkit import _core  # type: ignore[attr-defined]
from ndpkit.errors import NdpkitError
from ndpkit.kernels.knn import (
    distances_sq,
    distances_sq_numpy,
    empty_neighbours,
    fold_top_k,
    merge_block,
)


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
    # The oracle is ndpkit's own numpy code: both against scipy's float64 distances too,
    # within float32's rounding of d differences, squares and sums ((d + 3) half-ulps).
    exact = cdist(points.astype(np.float64), query[None].astype(np.float64), "sqeuclidean")
    np.testing.assert_allclose(fast, exact[:, 0], rtol=(dims + 3) * 2.0**-24, atol=0)


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


# -- the top-k fold in Rust (`fold_top_k`) against the numpy block-by-block path -------------


@settings(max_examples=60, deadline=None)
@given(
    sizes=st.lists(st.integers(0, 40_000), min_size=1, max_size=4),
    dims=st.sampled_from([2, 3, 6, 8]),
    k=st.integers(1, 30),
    levels=st.sampled_from([2, 40, 10**6]),
    seed=st.integers(0, 2**32 - 1),
)
def test_rust_top_k_fold_equals_the_numpy_blocks(
    sizes: list[int], dims: int, k: int, levels: int, seed: int
) -> None:
    """Chunks of any sizes (past the 16,384-point block), few distinct coordinates (ties
    everywhere) or many: the same k (index, distance) pairs as `merge_block` over the numpy
    distances, which are the k smallest by (distance, index)."""
    rng = np.random.default_rng(seed)
    chunks = [(rng.integers(0, levels, (n, dims)) / levels).astype(np.float32) for n in sizes]
    query = (rng.integers(0, levels, dims) / levels).astype(np.float32)
    rust, numpy_path, first = empty_neighbours(), empty_neighbours(), 0
    for chunk in chunks:
        if len(chunk):
            rust = fold_top_k("knn", chunk, query, first, k, rust)
        dists = distances_sq_numpy(chunk, query)
        for start in range(0, len(dists), 16384):
            numpy_path = merge_block(numpy_path, dists[start : start + 16384], first + start, k)
        first += len(chunk)
    assert rust.indices.dtype == np.int64 and rust.distances_sq.dtype == np.float32
    assert np.array_equal(rust.indices, numpy_path.indices)
    assert np.array_equal(rust.distances_sq, numpy_path.distances_sq)


@pytest.mark.parametrize(
    ("row", "value", "message"),
    [
        (20_000, np.nan, "point 20005 has a non-finite coordinate"),
        (3, np.inf, "point 8 has a non-finite coordinate"),
        (17_000, 1e20, "the squared distance of point 17005 to the query overflows"),
    ],
)
def test_rust_top_k_fold_names_a_point_it_cannot_rank(row: int, value: float, message: str) -> None:
    points = np.random.default_rng(0).random((30_000, 8), dtype=np.float32)
    points[row, 2] = value
    clean = np.random.default_rng(1).random((10, 8), dtype=np.float32)
    before = fold_top_k("knn8-topk", clean, np.zeros(8, np.float32), 0, 3, empty_neighbours())
    with pytest.raises(NdpkitError, match=message):
        fold_top_k("knn8-topk", points, np.zeros(8, np.float32), 5, 3, before)
    query = np.array([0, 0, np.nan, 0, 0, 0, 0, 0], np.float32)
    with pytest.raises(NdpkitError, match=r"the query .* has a non-finite coordinate"):
        fold_top_k("knn8-topk", points[:5], query, 0, 3, empty_neighbours())


@pytest.mark.parametrize(
    ("indices", "distances", "k", "message"),
    [
        ([2, 1], [0.5, 0.25], 3, "sorted"),
        ([1, 2, 3], [0.1, 0.2, 0.3], 2, "top-2 of 3"),
        ([1], [0.1, 0.2], 3, "1 indices and 2 distances"),
        ([], [], 0, "k and the number of features"),
    ],
)
def test_rust_top_k_fold_refuses_a_top_k_it_cannot_extend(
    indices: list[int], distances: list[float], k: int, message: str
) -> None:
    with pytest.raises(ValueError, match=message):
        _core.fold_top_k_f32(
            np.zeros((4, 2), np.float32),
            np.zeros(2, np.float32),
            0,
            k,
            np.array(indices, np.int64),
            np.array(distances, np.float32),
        )


def test_rust_top_k_fold_with_points_nearer_and_nearer_and_a_large_k() -> None:
    """Data sorted towards the query: every point enters the top-k."""
    points = np.linspace(0, 1, 200_000, dtype=np.float32)[:, None]
    query = np.ones(1, np.float32)
    rust = fold_top_k("knn", points, query, 0, 2000, empty_neighbours())
    numpy_path = empty_neighbours()
    dists = distances_sq_numpy(points, query)
    for start in range(0, len(dists), 16384):
        numpy_path = merge_block(numpy_path, dists[start : start + 16384], start, 2000)
    assert np.array_equal(rust.indices, numpy_path.indices)
    assert np.array_equal(rust.distances_sq, numpy_path.distances_sq)
