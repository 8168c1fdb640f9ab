"""K-Means fixes: initial centres from an imported data set's own points
(`params_for_data`), and cluster sizes in the result so that an empty cluster can be seen."""

from __future__ import annotations

import numpy as np
import pytest

from ndpkit.errors import NdpkitError
from ndpkit.kernels import run_in_memory
from ndpkit.kernels.kmeans import INIT_SAMPLE_RECORDS, KMeansKernel, cluster_sums, kernels

KERNEL = kernels()["kmeans"]
assert isinstance(KERNEL, KMeansKernel)


@pytest.fixture(scope="module")
def uniform() -> np.ndarray:
    """Not the generator's blobs: points uniform in [0, 1)^8, far from its centres."""
    return np.random.default_rng(0).random((50_000, 8), dtype=np.float32)


def test_data_params_start_from_the_data(uniform: np.ndarray) -> None:
    sample = uniform[:INIT_SAMPLE_RECORDS]
    params = KERNEL.params_for_data(sample, 0)
    assert params.keys() == KERNEL.params(0).keys()
    assert params["max_iter"] == KERNEL.max_iter and params["tol_sq"] == 0.0
    centres = params["init_centres"]
    assert centres.shape == (8, 8) and centres.dtype == np.float64
    for centre in centres:
        assert (sample.astype(np.float64) == centre).all(axis=1).any()
    assert len(np.unique(centres, axis=0)) == 8
    np.testing.assert_array_equal(centres, KERNEL.params_for_data(sample, 0)["init_centres"])
    assert not np.array_equal(centres, KERNEL.params_for_data(sample, 1)["init_centres"])


def test_data_params_leave_no_cluster_empty(uniform: np.ndarray) -> None:
    """The generator's centres (params) leave most clusters of this data empty; the data's
    own k-means++ start does not, and the result says how many points each cluster has."""
    generated_start = run_in_memory(KERNEL, uniform, {**KERNEL.params(0), "max_iter": 30}, 8192)
    assert generated_start.empty_clusters  # what an imported data set used to get
    params = {**KERNEL.params_for_data(uniform[:INIT_SAMPLE_RECORDS], 0), "max_iter": 30}
    result = run_in_memory(KERNEL, uniform, params, 8192)
    assert result.empty_clusters == ()
    assert int(result.counts.sum()) == len(uniform)
    assert (result.counts > 0).all()
    KERNEL.check(result, KERNEL.reference(uniform, params))


def test_data_params_refuse_a_sample_they_cannot_use(uniform: np.ndarray) -> None:
    with pytest.raises(NdpkitError, match=r"shape \(4096, 6\), not \(n, 8\)"):
        KERNEL.params_for_data(uniform[:4096, :6], 0)
    with pytest.raises(NdpkitError, match="5 points cannot seed K = 8 clusters"):
        KERNEL.params_for_data(uniform[:5], 0)
    with pytest.raises(NdpkitError, match="1 point cannot seed K = 8 clusters"):
        KERNEL.params_for_data(uniform[:1], 0)
    bad = uniform[:100].copy()
    bad[42, 1] = np.nan
    with pytest.raises(NdpkitError, match="sample point 42 has a non-finite coordinate"):
        KERNEL.params_for_data(bad, 0)


def test_result_counts_are_the_last_pass_sizes() -> None:
    data = KERNEL.generate(20_000 * KERNEL.record_bytes, 3)
    params = {**KERNEL.params(3), "max_iter": 40}
    result = run_in_memory(KERNEL, data, params, 3001)
    assert result.converged
    np.testing.assert_array_equal(result.counts, cluster_sums(data, result.centres).counts)
    np.testing.assert_array_equal(result.counts, KERNEL.reference(data, params).counts)
    stopped = run_in_memory(KERNEL, data, {**params, "max_iter": 1}, 3001)
    first_pass = cluster_sums(data, params["init_centres"]).counts
    np.testing.assert_array_equal(stopped.counts, first_pass)


def test_an_empty_cluster_shows_in_the_result() -> None:
    kernel = KMeansKernel(features=2, clusters=3)
    data = np.array([[0, 0], [0, 1], [1, 0], [10, 10], [10, 11], [11, 10]], dtype=np.float32)
    start = np.array([[0.0, 0.0], [10.0, 10.0], [1000.0, -1000.0]])
    result = run_in_memory(kernel, data, {"init_centres": start, "max_iter": 10, "tol_sq": 0.0}, 4)
    np.testing.assert_array_equal(result.counts, [3, 3, 0])
    assert result.empty_clusters == (2,)
