"""The Rust distance loop (`ndp-kernels`) against its numpy oracle: bit for bit."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from ndpkit.kernels.knn import distances_sq, distances_sq_numpy


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
