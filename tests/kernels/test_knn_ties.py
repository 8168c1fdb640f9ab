"""k-NN fixes: ties that reach past the k-th place, non-finite distances, float32 overflow,
the paper split's rows written in place, and scikit-learn imported only for the reference."""

from __future__ import annotations

import subprocess
import sys
import tracemalloc

import numpy as np
import pytest

from ndpkit.errors import NdpkitError
from ndpkit.kernels import KernelMismatchError, RowKernel, run_in_memory
from ndpkit.kernels.knn import BLOCK_ROWS, Knn, KnnRows, Neighbours, kernels

KERNELS = kernels()


def grid_ties() -> tuple[Knn, np.ndarray, dict[str, object]]:
    """400 points on a 5 × 5 grid around the query: the 10 nearest are 10 of the 16 points
    at distance 0, so the tie group runs far past the k-th place."""
    rng = np.random.default_rng(3)
    data = (rng.integers(0, 5, (400, 2)) / 4).astype(np.float32)
    return Knn(2), data, {"query": np.array([0.5, 0.5], np.float32), "k": 10}


def test_an_open_tie_group_must_hold_tied_points() -> None:
    kernel, data, params = grid_ties()
    expected = kernel.reference(data, params)
    good = run_in_memory(kernel, data, params, 400)
    kernel.check(good, expected)
    exact = ((data.astype(np.float64) - 0.5) ** 2).sum(axis=1)
    tied = np.flatnonzero(exact == 0)
    assert len(tied) > 10
    kernel.check(Neighbours(tied[-10:], good.distances_sq), expected)  # other tied points
    farthest = np.flatnonzero(exact == exact.max())
    last_far = good.indices.copy()
    last_far[-1] = farthest[-1]
    past_the_end = good.indices.copy()
    past_the_end[-1] = 10**9
    for bad in (last_far, past_the_end, farthest[-10:]):
        with pytest.raises(KernelMismatchError, match="not among the reference's points"):
            kernel.check(Neighbours(bad, good.distances_sq), expected)


def test_near_neighbours_float32_tells_apart_must_come_in_order() -> None:
    """The check took distances within rtol 1e-5 of each other for ties, so a swap of two
    neighbours whose float32 distances are ~33 units of rounding apart, or the (k+1)-th
    point returned for the k-th, passed. Ties are now what float32 rounding of d ≤ 8 terms
    can swap (rtol 2e-6)."""
    kernel = KERNELS["knn2"]
    params = {"query": np.zeros(2, np.float32), "k": 10}
    near_pair = np.array([[1, 0], [1.000002, 0]] + [[2 + i, 0] for i in range(9)], np.float32)
    good = run_in_memory(kernel, near_pair, params, 4)
    expected = kernel.reference(near_pair, params)
    kernel.check(good, expected)
    swapped = Neighbours(good.indices[[1, 0, *range(2, 10)]], good.distances_sq)
    with pytest.raises(KernelMismatchError, match=r"indices at ranks 0\.\.0 are \[1\]"):
        kernel.check(swapped, expected)

    past_k = np.array([[i + 1, 0] for i in range(9)] + [[20, 0], [20.0001, 0]], np.float32)
    good = run_in_memory(kernel, past_k, params, 4)
    expected = kernel.reference(past_k, params)
    kernel.check(good, expected)
    eleventh = Neighbours(
        np.r_[good.indices[:9], 10], np.r_[good.distances_sq[:9], np.float32(20.0001) ** 2]
    )
    with pytest.raises(KernelMismatchError, match="rank 9"):
        kernel.check(eleventh, expected)


def test_fewer_points_than_k_checks_every_index() -> None:
    """With no (k+1)-th point the next distance is inf, which used to tie with everything
    (a scale of inf): the last group went unchecked."""
    kernel = KERNELS["knn8"]
    data, params = kernel.generate(5 * kernel.record_bytes, 0), kernel.params(0)
    expected = kernel.reference(data, params)
    good = run_in_memory(kernel, data, params, 2)
    kernel.check(good, expected)
    wrong = good.indices.copy()
    wrong[-1] = 7  # not a point of the data
    with pytest.raises(KernelMismatchError):
        kernel.check(Neighbours(wrong, good.distances_sq), expected)


@pytest.mark.parametrize("value", [np.inf, np.nan])
def test_non_finite_distances_never_match(value: float) -> None:
    kernel = KERNELS["knn8"]
    data, params = kernel.generate(1 << 18, 0), kernel.params(0)
    good = run_in_memory(kernel, data, params, 1 << 30)
    bad = Neighbours(good.indices, np.full(10, value, np.float32))
    with pytest.raises(KernelMismatchError, match="distance² at rank 0"):
        kernel.check(bad, kernel.reference(data, params))


@pytest.mark.parametrize("name", ["knn8", "knn8-topk", "knn2"])
def test_float32_overflow_is_refused_not_ranked(name: str) -> None:
    """Points ~1e20: every float32 squared distance is inf, so any ranking would be garbage."""
    kernel = KERNELS[name]
    rng = np.random.default_rng(0)
    data = rng.random((5000, kernel.features), dtype=np.float32) * np.float32(1e20)
    params = kernel.params(0)
    with pytest.raises(NdpkitError, match=rf"{name}: the squared distance of point 0 .* overflows"):
        run_in_memory(kernel, data, params, 1000)
    if isinstance(kernel, RowKernel):
        out = np.empty(len(data), np.float32)
        with pytest.raises(NdpkitError, match=r"point 0 .* overflows"):
            kernel.device_into(data, kernel.init(params), 0, out)


def test_large_finite_distances_within_float32_are_answered() -> None:
    """|x − q| up to ~1e18 (d = 8): squared distances up to ~8e36, inside float32's range."""
    kernel = KERNELS["knn8"]
    data = (np.random.default_rng(1).random((5000, 8)) * 1e18).astype(np.float32)
    params = kernel.params(1)
    kernel.check(run_in_memory(kernel, data, params, 999), kernel.reference(data, params))


@pytest.mark.parametrize("bad", [np.nan, np.inf])
def test_non_finite_coordinates_are_refused(bad: float) -> None:
    kernel = KERNELS["knn6"]
    data = kernel.generate(1 << 16, 0)
    data[1234, 3] = bad
    with pytest.raises(NdpkitError, match="point 1234 has a non-finite coordinate"):
        run_in_memory(kernel, data, kernel.params(0), 1000)
    params = {**kernel.params(0), "query": np.array([0, 0, np.nan, 0, 0, 0], np.float32)}
    with pytest.raises(NdpkitError, match=r"the query .* has a non-finite coordinate"):
        run_in_memory(kernel, kernel.generate(1 << 16, 0), params, 1000)


def test_paper_split_writes_rows_and_topk_does_not() -> None:
    for d in (2, 6, 8):
        assert isinstance(KERNELS[f"knn{d}"], KnnRows)
        assert not isinstance(KERNELS[f"knn{d}-topk"], RowKernel)


@pytest.mark.parametrize("chunk_records", [1, 777, 40_000])
def test_rows_give_the_partials_answer_bit_for_bit(chunk_records: int) -> None:
    kernel = KERNELS["knn8"]
    assert isinstance(kernel, KnnRows)
    data, params = kernel.generate(40_000 * 32, 4), kernel.params(4)
    data = data[: 2000 if chunk_records == 1 else None]
    state = kernel.init(params)
    spec = kernel.row_spec(state)
    rows = np.full((len(data), *spec.shape), np.nan, dtype=spec.dtype)
    for start in range(0, len(data), chunk_records):
        chunk = data[start : start + chunk_records]
        kernel.device_into(chunk, state, start, rows[start : start + len(chunk)])
    merged = kernel.rows_merged(rows, state)
    assert all(np.shares_memory(s.distances_sq, rows) for s in merged)  # no copy of the rows
    from_rows, _ = kernel.host(merged, state)
    from_partials = run_in_memory(kernel, data, params, chunk_records)
    np.testing.assert_array_equal(from_rows.indices, from_partials.indices)
    np.testing.assert_array_equal(from_rows.distances_sq, from_partials.distances_sq)
    assert from_rows.distances_sq.dtype == np.float32
    assert not np.shares_memory(from_rows.distances_sq, rows)  # the arena may be reused
    kernel.check(from_rows, kernel.reference(data, params))


def test_host_over_rows_holds_a_block_not_a_copy() -> None:
    """16 MiB of distances: the host's top-k over them allocates about one block."""
    kernel = KERNELS["knn2"]
    assert isinstance(kernel, KnnRows)
    state = kernel.init(kernel.params(0))
    rows = np.random.default_rng(0).random(1 << 22, dtype=np.float32)
    tracemalloc.start()
    try:
        answer, done = kernel.host(kernel.rows_merged(rows, state), state)
        _, peak_bytes = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    assert done
    assert peak_bytes < 4 * BLOCK_ROWS * 12  # a block's candidates (index + distance), not 16 MiB
    np.testing.assert_array_equal(answer.indices, np.lexsort((np.arange(len(rows)), rows))[:10])


def test_importing_the_kernels_does_not_import_sklearn() -> None:
    code = (
        "import sys, ndpkit.kernels.knn, ndpkit.kernels.kmeans, ndpkit.runtime.verify; "
        "print(sorted(m for m in sys.modules if m.split('.')[0] == 'sklearn'))"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "[]"
