"""The Rust Lloyd pass (`ndp-kernels`) against its numpy oracle."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import assume, given, settings
from hypothesis import strategies as st
from scipy.spatial.distance import cdist

from ndpkit import _core
from ndpkit.errors import NdpkitError
from ndpkit.kernels.kmeans import cluster_sums, cluster_sums_numpy, kernels

KERNEL = kernels()["kmeans"]


@pytest.mark.parametrize("seed", [0, 1, 2, 4])
def test_generated_data_gives_the_oracle_bit_for_bit(seed: int):
    """Generated points lie on a grid, so sums are exact and only a near tie could differ."""
    data = KERNEL.generate(50_000 * KERNEL.record_bytes, seed)
    centres = KERNEL.params(seed)["init_centres"]
    fast, oracle = cluster_sums(data, centres), cluster_sums_numpy(data, centres)
    assert fast.sums.dtype == np.float64 and fast.counts.dtype == np.int64
    np.testing.assert_array_equal(fast.counts, oracle.counts)
    np.testing.assert_array_equal(fast.sums, oracle.sums)
    assert fast.counts.sum() == len(data)


@settings(max_examples=60, deadline=None)
@given(
    rows=st.integers(1, 2000),
    dims=st.sampled_from([1, 2, 5, 8, 11]),
    clusters=st.sampled_from([1, 3, 8, 10]),
    seed=st.integers(0, 2**32 - 1),
    scale=st.sampled_from([1e-3, 1.0, 1e4]),
)
def test_random_data_agrees_with_the_oracle_away_from_ties(
    rows: int, dims: int, clusters: int, seed: int, scale: float
):
    rng = np.random.default_rng(seed)
    points = (rng.standard_normal((rows, dims)) * scale).astype(np.float32)
    centres = rng.standard_normal((clusters, dims)) * scale
    # The oracle's BLAS may round a score differently: skip data with a near tie.
    distances = ((points[:, None, :].astype(np.float64) - centres[None]) ** 2).sum(axis=2)
    if clusters > 1:
        two = np.sort(distances, axis=1)[:, :2]
        assume(np.all(two[:, 1] - two[:, 0] > 1e-9 * (1 + two[:, 1])))
    fast, oracle = cluster_sums(points, centres), cluster_sums_numpy(points, centres)
    np.testing.assert_array_equal(fast.counts, oracle.counts)
    labels = distances.argmin(axis=1)
    np.testing.assert_array_equal(fast.counts, np.bincount(labels, minlength=clusters))
    np.testing.assert_allclose(fast.sums, oracle.sums, rtol=1e-12, atol=1e-12 * scale)
    # and the sums against ones computed here (the oracle is ndpkit's own numpy code)
    independent = _sums_by_label(points, labels, clusters)
    np.testing.assert_allclose(fast.sums, independent, rtol=1e-12, atol=1e-12 * scale)


def _sums_by_label(points: np.ndarray, labels: np.ndarray, clusters: int) -> np.ndarray:
    """Each cluster's float64 sum of its points, by np.add.at: independent of ndpkit."""
    sums = np.zeros((clusters, points.shape[1]))
    np.add.at(sums, labels, points.astype(np.float64))
    return sums


def test_other_dtypes_take_the_numpy_formulation():
    """float64 points float32 cannot hold are summed in float64. The test compared
    `cluster_sums` with `cluster_sums_numpy`, which is what `cluster_sums` calls for them:
    it could not fail. The labels and sums are computed here (scipy's distances, np.add.at)."""
    rng = np.random.default_rng(5)
    points = rng.standard_normal((300, 8))
    centres = rng.standard_normal((8, 8))
    result = cluster_sums(points, centres)
    labels = cdist(points, centres, "sqeuclidean").argmin(axis=1)
    np.testing.assert_array_equal(result.counts, np.bincount(labels, minlength=len(centres)))
    np.testing.assert_allclose(result.sums, _sums_by_label(points, labels, 8), rtol=1e-13)
    # not the sums of the points rounded to float32 (which differ by about 1e-8)
    rounded = _sums_by_label(points.astype(np.float32), labels, 8)
    assert not np.allclose(result.sums, rounded, rtol=1e-10, atol=0)


def test_a_strided_chunk_is_made_contiguous():
    rng = np.random.default_rng(6)
    wide = rng.standard_normal((400, 16)).astype(np.float32)
    centres = rng.standard_normal((4, 8))
    strided = wide[:, ::2]
    fast = cluster_sums(strided, centres)
    oracle = cluster_sums_numpy(np.ascontiguousarray(strided), centres)
    np.testing.assert_array_equal(fast.counts, oracle.counts)
    np.testing.assert_allclose(fast.sums, oracle.sums, rtol=1e-12)


def test_mismatched_centres_are_refused():
    with pytest.raises(ValueError, match=r"centres of shape \(2, 3\) for points of 4 features"):
        _core.cluster_sums_f32(np.zeros((5, 4), np.float32), np.zeros((2, 3)))


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_points_of_another_width_are_refused(dtype: type):
    """(n, 6) points are not silently read as rows of 8 features."""
    points = np.zeros((40, 6), dtype)
    with pytest.raises(NdpkitError, match="points have 6 features, the centres 8"):
        cluster_sums(points, np.zeros((3, 8)))
    with pytest.raises(NdpkitError, match="points have 6 features, the centres 8"):
        cluster_sums_numpy(points, np.zeros((3, 8)))
