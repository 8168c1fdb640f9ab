"""The kernels' public functions refuse input they would misread, with an NdpkitError that
says what was expected, instead of a plausible wrong answer or numpy's own ValueError or
IndexError (found by a review of the Python API)."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np
import pytest

from ndpkit.errors import NdpkitError
from ndpkit.kernels import get_kernel, run_in_memory
from ndpkit.kernels.binarize import otsu_thresholds
from ndpkit.kernels.fft2d import spectra
from ndpkit.kernels.he import equalisation_luts
from ndpkit.kernels.images import pack_above, remap
from ndpkit.kernels.knn import distances_sq
from ndpkit.kernels.sobel import sobel_magnitude
from ndpkit.runtime.profiling import measure

LC = get_kernel("lc")
KNN8 = get_kernel("knn8")
KNN8_TOPK = get_kernel("knn8-topk")
FFT2D = get_kernel("fft2d")
IMAGES = np.zeros((2, 16, 16), np.uint8)
BINARIZE = {"threshold": 127}


def with_bad_point(value: float) -> np.ndarray:
    points = LC.generate(10 * 32, 0)
    points[3, 5] = value
    return points


def knn_state() -> Any:
    return KNN8.init(KNN8.params(0))


CASES: list[tuple[str, Callable[[], object], str]] = [
    (
        "k-NN reference on 3-feature points (read as 375 points of 8 before)",
        lambda: KNN8.reference(np.zeros((1000, 3), np.float32), KNN8.params(0)),
        r"knn8: data of shape \(1000, 3\) is not records of shape \(8,\)",
    ),
    (
        "k-NN device on 3-feature points",
        lambda: KNN8.device(np.zeros((10, 3), np.float32), knn_state(), 0),
        r"knn8: data of shape \(10, 3\)",
    ),
    (
        "k-NN top-k device on a flat array",
        lambda: KNN8_TOPK.device(np.zeros(80, np.float32), knn_state(), 0),
        r"knn8-topk: data of shape \(80,\)",
    ),
    (
        "k-NN reference with a NaN point",
        lambda: KNN8.reference(np.full((20, 8), np.nan, np.float32), KNN8.params(0)),
        "knn8: point 0 has a non-finite coordinate",
    ),
    (
        "LC reference with a NaN point (labelled 0, and certain, before)",
        lambda: LC.reference(with_bad_point(np.nan), LC.params(0)),
        r"lc: point 3 has a non-finite feature \(\[.*nan.*\]\)",
    ),
    (
        "LC reference with an infinite point (numpy's 'invalid value encountered in cast')",
        lambda: LC.reference(with_bad_point(-np.inf), LC.params(0)),
        r"lc: point 3 has a non-finite feature \(\[.*-inf.*\]\)",
    ),
    (
        "LC scores into an int32 out (truncated to whole numbers before)",
        lambda: LC.device_into(
            LC.generate(10 * 32, 0), LC.init(LC.params(0)), 0, np.zeros(10, np.int32)
        ),
        r"lc: rows output of int32 \(10,\), the chunk needs float32 \(10,\)",
    ),
    (
        "LC scores into a (1, n) out (taken by broadcasting before)",
        lambda: LC.device_into(
            LC.generate(10 * 32, 0), LC.init(LC.params(0)), 0, np.zeros((1, 10), np.float32)
        ),
        r"lc: rows output of float32 \(1, 10\), the chunk needs float32 \(10,\)",
    ),
    (
        "k-NN reference with a NaN query (scikit-learn's 'Input X contains NaN' before)",
        lambda: KNN8.reference(np.zeros((20, 8), np.float32), {"query": [np.nan] * 8, "k": 10}),
        r"knn8: the query \[nan, .*\] has a non-finite coordinate",
    ),
    (
        "k-NN over no points with an infinite query (no neighbours and no error before)",
        lambda: run_in_memory(
            KNN8_TOPK, np.zeros((0, 8), np.float32), {"query": [np.inf] * 8, "k": 10}, 4
        ),
        r"knn8-topk: the query \[inf, .*\] has a non-finite coordinate",
    ),
    (
        "FFT2D reference on grey images (read as 2 RGB spectra before)",
        lambda: FFT2D.reference(np.zeros((6, 256, 256), np.uint8), {}),
        r"fft2d: data of shape \(6, 256, 256\) is not records of shape \(256, 256, 3\)",
    ),
    (
        "FFT2D device on 4-channel images",
        lambda: FFT2D.device(np.zeros((1, 256, 256, 4), np.uint8), None, 0),
        r"fft2d: data of shape \(1, 256, 256, 4\)",
    ),
    (
        "Sobel on float images (0.5 everywhere before)",
        lambda: sobel_magnitude(IMAGES.astype(np.float64)),
        r"sobel: need 8-bit images \(uint8\), got float64",
    ),
    (
        "Sobel on one 2-D image",
        lambda: sobel_magnitude(IMAGES[0]),
        r"sobel: need images of shape \(n, height, width\), got \(16, 16\)",
    ),
    (
        "HE reference on 16-bit images (its histogram dropped the levels past 255 before)",
        lambda: get_kernel("he").reference(IMAGES.astype(np.uint16) * 300, {}),
        r"he expects 8-bit grayscale images .*, got uint16 images$",
    ),
    (
        "HE-remap reference on float images (numpy's IndexError before)",
        lambda: get_kernel("he-remap").reference(IMAGES.astype(np.float32), {}),
        r"he-remap expects 8-bit grayscale images .*, got float32",
    ),
    (
        "Sobel reference on one 2-D image (numpy's AxisError before)",
        lambda: get_kernel("sobel").reference(IMAGES[0], {}),
        r"sobel expects 8-bit grayscale images .*, got uint8 \(16, 16\)",
    ),
    (
        "binarize reference on RGB images (a threshold per channel row before)",
        lambda: get_kernel("binarize").reference(np.zeros((2, 16, 16, 3), np.uint8), BINARIZE),
        r"binarize expects 8-bit grayscale images .*, got uint8 \(2, 16, 16, 3\)",
    ),
    (
        "binarize reference on 16-bit images (levels past 255 counted as bright before)",
        lambda: get_kernel("binarize").reference(IMAGES.astype(np.uint16), BINARIZE),
        r"binarize expects 8-bit grayscale images .*, got uint16",
    ),
    (
        "HE LUTs of one histogram without its axis of images (numpy's AxisError before)",
        lambda: equalisation_luts(np.ones(256, np.int64)),
        r"equalisation_luts: need one histogram of 256 counts per image, shape \(n, 256\), "
        r"got \(256,\)",
    ),
    (
        "HE LUTs of negative counts (LUTs of no image before)",
        lambda: equalisation_luts(-np.ones((1, 256), np.int64)),
        "equalisation_luts: counts must be whole numbers ≥ 0, got int64",
    ),
    (
        "Otsu thresholds of 255-bin histograms (thresholds of no image before)",
        lambda: otsu_thresholds(np.ones((2, 255), np.uint64)),
        r"otsu_thresholds: need one histogram of 256 counts .*, got \(2, 255\)",
    ),
    (
        "remap into an out of too few pixels (numpy's 'cannot reshape' before)",
        lambda: remap(IMAGES, np.zeros((2, 256), np.uint8), np.zeros((2, 16, 15), np.uint8)),
        r"remap: out must hold the images' 512 pixels, got uint8 \(2, 16, 15\)",
    ),
    (
        "k-NN distances to a (1, d) query (the binding's 'dimensionality mismatch' before)",
        lambda: distances_sq(np.zeros((4, 8), np.float32), np.zeros((1, 8), np.float32)),
        r"distances_sq: the query must be 1-D \(d,\), got shape \(1, 8\)",
    ),
    (
        "FFT2D spectra of 8×8 images (numpy's broadcast error before)",
        lambda: spectra(np.zeros((1, 8, 8, 3), np.uint8)),
        r"fft2d: data of shape \(1, 8, 8, 3\) is not records of shape \(256, 256, 3\)",
    ),
    (
        "binarize with a threshold of 300 (wrapped to 44 before)",
        lambda: pack_above(IMAGES, np.array([300, 1])),
        "thresholds must be whole numbers from 0 to 255",
    ),
    (
        "binarize with a column of thresholds (the binding's 'dimensionality mismatch' before)",
        lambda: pack_above(IMAGES, np.array([[1], [2]])),
        r"binarize: need one threshold per image, shape \(2,\), got \(2, 1\)",
    ),
    (
        "binarize with one threshold for two images (a ValueError from the binding before)",
        lambda: pack_above(IMAGES, np.array(5)),
        r"binarize: need one threshold per image, shape \(2,\), got \(\)",
    ),
    (
        "binarize on int16 images",
        lambda: pack_above(IMAGES.astype(np.int16), np.array([1, 1])),
        r"need 8-bit images \(uint8\), got int16",
    ),
]


@pytest.mark.parametrize(("case", "call", "message"), CASES, ids=[c[0] for c in CASES])
def test_input_a_kernel_would_misread_is_refused(
    case: str, call: Callable[[], object], message: str
) -> None:
    with pytest.raises(NdpkitError, match=message):
        call()


@pytest.mark.parametrize("app", ["lc", "he", "he-remap", "binarize", "sobel"])
def test_data_of_the_wrong_type_is_not_named_by_a_chunks_shape(app: str) -> None:
    """run_in_memory and measure pass the kernel chunks: float64 points were refused as
    "got float64 (3, 8)" for an array of thousands of them, a shape the caller never had."""
    kernel = get_kernel(app)
    data = kernel.generate(1 << 20, 0).astype(np.float64)
    params = kernel.params(0)
    for run in (
        lambda: run_in_memory(kernel, data, params, 3),
        lambda: measure(kernel, data, params),
    ):
        with pytest.raises(NdpkitError, match=r"expects .*, got float64 (points|images)$"):
            run()


def test_the_checks_let_good_input_through() -> None:
    points = np.random.default_rng(0).random((100, 8), dtype=np.float32)
    assert len(KNN8.reference(points, KNN8.params(0)).neighbours.indices) == 10
    spectra = FFT2D.reference(np.zeros((1, 256, 256, 3), np.uint8), {})
    assert spectra.shape == (1, 3, 256, 256)
    assert sobel_magnitude(IMAGES).dtype == np.uint8
    assert pack_above(IMAGES + 2, np.array([1, 2])).tolist()[0][0] == 255
    counts = np.bincount(np.arange(300) % 256, minlength=256)[None]  # int64, as numpy counts
    assert equalisation_luts(counts).shape == (*otsu_thresholds(counts).shape, 256)
    flat_out = np.zeros(512, np.uint8)  # any shape of the images' size
    assert remap(IMAGES, np.zeros((2, 256), np.uint8), flat_out).shape == (2, 16, 16)
    for app in ("he", "he-remap", "sobel"):
        assert len(get_kernel(app).reference(IMAGES, {})) == 2
    assert get_kernel("binarize").reference(IMAGES, BINARIZE).bits.shape == (2, 32)
