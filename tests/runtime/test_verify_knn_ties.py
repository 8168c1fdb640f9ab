"""Streamed k-NN verification with exact duplicates and ties past the k-th place, and the
streamed K-Means verification carrying cluster sizes."""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest

from ndpkit.kernels import KernelMismatchError, get_kernel, run_in_memory
from ndpkit.kernels.knn import Knn, Neighbours, ReferenceNeighbours
from ndpkit.runtime.verify import array_chunks, verify_streaming


def duplicates_nearest() -> tuple[Knn, np.ndarray, dict[str, Any]]:
    """20 exact duplicates are the nearest points: every chunk's (k+1)-th distance ties its
    k-th, and a marker index sorting first used to take a neighbour's place."""
    kernel = get_kernel("knn8")
    assert isinstance(kernel, Knn)
    params = kernel.params(0)
    rng = np.random.default_rng(0)
    data = (rng.random((100_000, 8), dtype=np.float32) + 5).astype(np.float32)
    data[:20] = params["query"] + np.float32(0.25)
    return kernel, data, params


@pytest.mark.parametrize(("points", "chunk_records"), [(140, 7), (100_000, 65536), (None, 1 << 30)])
def test_duplicates_verify(points: int | None, chunk_records: int) -> None:
    kernel, data, params = duplicates_nearest()
    data = data[:points]
    result = run_in_memory(kernel, data, params, 65536)
    found = verify_streaming(kernel, array_chunks(data, chunk_records), params, result)
    assert found.method == "merged top-k"
    assert found.records == len(data)


@pytest.mark.parametrize("chunk_records", [9, 100, 400])
def test_streamed_open_tie_group_must_hold_tied_points(chunk_records: int) -> None:
    """The streamed reference applies the same rule as the whole-data one."""
    kernel = Knn(2)
    rng = np.random.default_rng(3)
    data = (rng.integers(0, 5, (400, 2)) / 4).astype(np.float32)
    params = {"query": np.array([0.5, 0.5], np.float32), "k": 10}
    good = run_in_memory(kernel, data, params, 400)
    chunks = array_chunks(data, chunk_records)
    verify_streaming(kernel, chunks, params, good)
    exact = ((data.astype(np.float64) - 0.5) ** 2).sum(axis=1)
    other_tied = np.flatnonzero(exact == 0)[-10:]
    verify_streaming(kernel, chunks, params, Neighbours(other_tied, good.distances_sq))
    farthest = np.flatnonzero(exact == exact.max())[-10:]
    last_far = np.append(good.indices[:-1], farthest[-1])
    for bad in (farthest, last_far, np.append(good.indices[:-1], 10**9)):
        with pytest.raises(KernelMismatchError, match="not among the reference's points"):
            verify_streaming(kernel, chunks, params, Neighbours(bad, good.distances_sq))


def test_streamed_near_points_are_the_whole_data_ones_the_result_names() -> None:
    kernel, data, params = duplicates_nearest()
    data = data[:3000]
    result = run_in_memory(kernel, data, params, 1000)
    whole = kernel.reference(data, params)
    assert len(whole.near.indices) == 20  # every duplicate, not only the k returned
    seen: list[ReferenceNeighbours] = []

    class Capture(type(kernel)):  # type: ignore[misc]
        def check(self, result: Any, expected: Any) -> None:
            seen.append(expected)

    verify_streaming(Capture(8), array_chunks(data, 333), params, result)
    (got,) = seen
    named = np.isin(whole.near.indices, result.indices)
    np.testing.assert_array_equal(got.near.indices, whole.near.indices[named])
    np.testing.assert_allclose(got.near.distances_sq, whole.near.distances_sq[named])


def test_streamed_kmeans_reference_carries_cluster_sizes() -> None:
    kernel = get_kernel("kmeans")
    data = kernel.generate(1 << 19, 5)
    params = kernel.params(5)
    result = run_in_memory(kernel, data, params, 4000)
    seen: list[Any] = []

    class Capture(type(kernel)):  # type: ignore[misc]
        def check(self, result: Any, expected: Any) -> None:
            seen.append(expected)

    verify_streaming(Capture(), array_chunks(data, 4000), params, result)
    (expected,) = seen
    np.testing.assert_array_equal(expected.counts, result.counts)
    assert int(expected.counts.sum()) == len(data)
