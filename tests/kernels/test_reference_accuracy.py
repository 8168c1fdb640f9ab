"""References and checks that judge the kernels' answers: accurate where the data are far from
the origin, and tight enough to refuse a wrong answer (kernel audit, eighth session)."""

from __future__ import annotations

from dataclasses import replace
from importlib import import_module
from typing import Any

import numpy as np
import pytest

from ndpkit.errors import NdpkitError
from ndpkit.kernels import KernelMismatchError, get_kernel, run_in_memory
from ndpkit.kernels.images import histograms, pack_above
from ndpkit.kernels.kmeans import KMeansKernel
from ndpkit.kernels.knn import distances_sq
from ndpkit.runtime.verify import array_chunks, verify_streaming

_core: Any = import_module("ndpkit._core")


def _map_points(n: int = 100_000) -> tuple[np.ndarray, np.ndarray]:
    """UTM-like coordinates (eastings about 4.5e5 m, northings 5.3e6 m over 10 km) and a
    query 3 m off one of them."""
    rng = np.random.default_rng(1)
    x = np.column_stack([4.5e5 + rng.random(n) * 1e4, 5.3e6 + rng.random(n) * 1e4])
    points = x.astype(np.float32)
    query = points[12345] + np.float32(3.0)
    return points, query


def test_knn_reference_is_exact_far_from_the_origin() -> None:
    """scikit-learn's ‖x‖² − 2x·q + ‖q‖² put rank 0 off by 2.5e-4 here, and `check` refused
    the kernel's right answer; the reference now works on points moved to the query."""
    knn2 = get_kernel("knn2")
    points, query = _map_points()
    params = {"query": query, "k": 10}
    exact_sq = ((points.astype(np.float64) - query.astype(np.float64)) ** 2).sum(axis=1)
    exact = np.lexsort((np.arange(len(points)), exact_sq))[:10]
    expected = knn2.reference(points, params)
    np.testing.assert_array_equal(expected.neighbours.indices, exact)
    np.testing.assert_allclose(expected.neighbours.distances_sq, exact_sq[exact], rtol=1e-12)
    result = run_in_memory(knn2, points, params, 8192)
    np.testing.assert_array_equal(result.indices, exact)
    knn2.check(result, expected)
    verify_streaming(knn2, array_chunks(points, 16384), params, result)


def test_knn_reference_finds_neighbours_beside_a_large_feature() -> None:
    """One feature at 1e8 for every point: the expansion's rounding gave distances of 0 and
    the wrong points; the moved points give the exact ones."""
    knn2 = get_kernel("knn2")
    rng = np.random.default_rng(4)
    points = np.column_stack([np.full(5000, 1e8), rng.random(5000) * 100]).astype(np.float32)
    query = np.array([1e8, 50.0], dtype=np.float32)
    exact_sq = ((points.astype(np.float64) - query.astype(np.float64)) ** 2).sum(axis=1)
    exact = np.lexsort((np.arange(len(points)), exact_sq))[:10]
    expected = knn2.reference(points, {"query": query, "k": 10})
    np.testing.assert_array_equal(expected.neighbours.indices, exact)
    assert (expected.neighbours.distances_sq > 0).all()


def test_fft2d_check_refuses_an_image_one_level_off() -> None:
    """The largest single error was held to 1e-6 of the spectrum's 2-norm, which let the
    spectrum of an image with one pixel 3 levels off pass; the error's 2-norm is held now."""
    fft2d = get_kernel("fft2d")
    images = fft2d.generate(2 * fft2d.record_bytes, 0)
    expected = fft2d.reference(images, {})
    result = run_in_memory(fft2d, images, {}, 1)
    fft2d.check(result, expected)  # the kernel's own float32 answer passes
    for step in (1, 3):
        changed = images.astype(np.float64)
        changed[0, 100, 100, 0] += step
        wrong = np.fft.fft2(np.moveaxis(changed, -1, 1), axes=(2, 3))
        with pytest.raises(KernelMismatchError, match="image 0 channel 0"):
            fft2d.check(wrong, expected)


def test_kmeans_check_refuses_small_centres_moved_beside_a_large_one() -> None:
    """Centres near (1, 1) and (3, 3) beside one at (1e6, 1e6): an atol of 1e-6 of the
    feature's largest centre (1) accepted the two small ones moved by 0.9 each."""
    rng = np.random.default_rng(0)
    blobs = [c + np.round(rng.standard_normal((100, 2)) * 64) / 64 for c in (1.0, 3.0, 1e6)]
    points = np.concatenate(blobs).astype(np.float32)
    kernel = KMeansKernel(features=2, clusters=3)
    params = {"init_centres": points[[0, 100, 200]].astype(np.float64), "max_iter": 100}
    params["tol_sq"] = 0.0
    result = run_in_memory(kernel, points, params, 50)
    expected = kernel.reference(points, params)
    kernel.check(result, expected)
    for shift in (0.9, 0.01):
        moved = result.centres + np.array([[shift, -shift], [-shift, shift], [0.0, 0.0]])
        with pytest.raises(KernelMismatchError, match="centre 0"):
            kernel.check(replace(result, centres=moved), expected)


@pytest.mark.parametrize(
    "call",
    [
        lambda: _core.histograms_u8(np.empty((2**40, 0), np.uint8)),
        lambda: _core.dot_f32(np.empty((2**50, 0), np.float32), np.empty(0, np.float32)),
        lambda: _core.squared_distances_f32(
            np.empty((2**50, 0), np.float32), np.empty(0, np.float32)
        ),
    ],
    ids=["histograms", "dot", "squared_distances"],
)
def test_an_output_too_large_for_memory_is_a_memory_error(call: Any) -> None:
    """rust-numpy's `zeros` panicked on numpy's NULL (a PanicException, which `except
    Exception` misses); the outputs now come from numpy.zeros. (A zero-width input of 2⁴⁰
    rows costs nothing; its output would be petabytes.) A ValueError was accepted too, which
    any wrong error (a shape check, say) would have passed."""
    with pytest.raises(MemoryError, match=r"array with shape \("):  # numpy's, not a panic's
        call()


def test_out_arrays_of_another_shape_are_refused() -> None:
    images = np.arange(3 * 4 * 5, dtype=np.uint8).reshape(3, 4, 5)
    for out in (np.zeros((1, 768), np.uint64), np.zeros(768, np.uint64)):
        with pytest.raises(NdpkitError, match=r"histograms: out must have shape \(3, 256\)"):
            histograms(images, out)
    with pytest.raises(NdpkitError, match=r"pack_above: out must have shape \(3, 3\)"):
        pack_above(images, np.zeros(3, np.uint8), np.zeros((1, 9), np.uint8))
    points, query = np.zeros((4, 2), np.float32), np.zeros(2, np.float32)
    with pytest.raises(NdpkitError, match=r"distances_sq: out must have shape \(4,\)"):
        distances_sq(points, query, np.zeros((4, 1), np.float32))
    with pytest.raises(NdpkitError, match="points must be 2-D"):
        distances_sq(np.zeros(4, np.float32), query)
    # the right shapes still work, in place
    out = np.zeros((3, 256), np.uint64)
    assert histograms(images, out) is out
    assert out.sum() == 60


def test_knn_reference_refuses_a_query_of_another_shape() -> None:
    knn2 = get_kernel("knn2")
    points = np.zeros((5, 2), np.float32)
    for query in (np.float32(1.0), np.zeros(3, np.float32)):
        with pytest.raises(NdpkitError, match=r"knn2: the query has shape"):
            knn2.reference(points, {"query": query, "k": 3})
