"""The Rust image loops of `ndpkit._core` (histograms, compare-and-pack, LUT remap) against
numpy: np.bincount, `>` + np.packbits, and fancy indexing."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from ndpkit import _core
from ndpkit.kernels.images import histograms, pack_above, remap

WIDTHS = [0, 1, 7, 8, 9, 15, 16, 17, 63, 64, 65, 127, 128, 129, 1000, 1023, 1024, 1025, 4099]


def _pixels(rows: int, width: int, seed: int = 0) -> np.ndarray:
    return np.random.default_rng(seed).integers(0, 256, (rows, width), dtype=np.uint8)


def _bincounts(pixels: np.ndarray) -> np.ndarray:
    return np.array([np.bincount(row, minlength=256) for row in pixels], dtype=np.uint64).reshape(
        len(pixels), 256
    )


def _packbits(pixels: np.ndarray, thresholds: np.ndarray) -> np.ndarray:
    return np.packbits(pixels > thresholds[:, None], axis=1)


# --- histograms -----------------------------------------------------------------------------


@pytest.mark.parametrize("width", WIDTHS)
def test_histograms_match_bincount_per_row(width: int) -> None:
    pixels = _pixels(3, width, width)
    counts = _core.histograms_u8(pixels)
    assert counts.dtype == np.uint64 and counts.shape == (3, 256)
    assert np.array_equal(counts, _bincounts(pixels))


@pytest.mark.parametrize("value", [0, 77, 255])
@pytest.mark.parametrize("width", [5, 1024, 65_536])
def test_histograms_of_constant_rows(value: int, width: int) -> None:
    counts = _core.histograms_u8(np.full((2, width), value, np.uint8))
    expected = np.zeros((2, 256), np.uint64)
    expected[:, value] = width
    assert np.array_equal(counts, expected)


def test_histograms_of_no_rows_and_of_empty_rows() -> None:
    assert _core.histograms_u8(np.zeros((0, 65_536), np.uint8)).shape == (0, 256)
    counts = _core.histograms_u8(np.zeros((4, 0), np.uint8))
    assert counts.shape == (4, 256) and not counts.any()


def test_histograms_of_real_image_batches_match_the_single_image_call() -> None:
    images = np.random.default_rng(3).integers(0, 256, (5, 256, 256), dtype=np.uint8)
    batch = histograms(images)
    for image, counts in zip(images, batch, strict=True):
        assert np.array_equal(counts, _core.histogram_u8(image.ravel()))
    # both calls are ndpkit's Rust: np.bincount says what the counts are
    assert np.array_equal(batch, _bincounts(images.reshape(5, -1)))


def test_histograms_accept_non_contiguous_images_through_the_wrapper() -> None:
    images = _pixels(6, 40 * 30).reshape(6, 40, 30)
    view = images[::2, :, ::3]
    assert np.array_equal(histograms(view), _bincounts(view.reshape(3, -1)))


def test_histograms_reject_non_contiguous_arrays() -> None:
    with pytest.raises(ValueError, match=r"pixels must be a C-contiguous \(row-major\) array"):
        _core.histograms_u8(_pixels(4, 10)[:, ::2])


# --- compare and pack -----------------------------------------------------------------------


@pytest.mark.parametrize("width", WIDTHS)
@pytest.mark.parametrize("threshold", [0, 1, 127, 128, 254, 255])
def test_pack_matches_numpy_packbits(width: int, threshold: int) -> None:
    pixels = _pixels(4, width, width + threshold)
    thresholds = np.full(4, threshold, np.uint8)
    bits = _core.pack_above_u8(pixels, thresholds)
    assert bits.dtype == np.uint8 and bits.shape == (4, -(-width // 8))
    assert np.array_equal(bits, _packbits(pixels, thresholds))


@pytest.mark.parametrize("width", [1, 8, 13, 64, 100])
def test_pack_uses_each_rows_threshold(width: int) -> None:
    pixels = _pixels(6, width, 5)
    thresholds = np.array([0, 255, 127, 30, 200, 128], np.uint8)
    assert np.array_equal(_core.pack_above_u8(pixels, thresholds), _packbits(pixels, thresholds))


@pytest.mark.parametrize("width", [1, 7, 64, 65, 1000])
def test_pack_of_all_255_and_all_0(width: int) -> None:
    white, black = np.full((2, width), 255, np.uint8), np.zeros((2, width), np.uint8)
    for threshold in (0, 254):
        t = np.full(2, threshold, np.uint8)
        assert np.array_equal(_core.pack_above_u8(white, t), _packbits(white, t))
        assert not _core.pack_above_u8(black, t).any()
    assert not _core.pack_above_u8(white, np.full(2, 255, np.uint8)).any()


def test_pack_of_no_rows_and_of_empty_rows() -> None:
    assert _core.pack_above_u8(np.zeros((0, 64), np.uint8), np.zeros(0, np.uint8)).shape == (0, 8)
    assert _core.pack_above_u8(np.zeros((3, 0), np.uint8), np.zeros(3, np.uint8)).shape == (3, 0)


def test_pack_rejects_a_threshold_count_that_is_not_the_row_count() -> None:
    with pytest.raises(ValueError, match="2 thresholds for 3 rows"):
        _core.pack_above_u8(_pixels(3, 8), np.zeros(2, np.uint8))


def test_pack_wrapper_accepts_any_integer_thresholds_and_image_views() -> None:
    images = _pixels(4, 12 * 10, 8).reshape(4, 12, 10)[:, 1:, ::2]
    thresholds = np.array([10, 100, 200, 250])
    expected = _packbits(images.reshape(4, -1), thresholds)
    assert np.array_equal(pack_above(images, thresholds), expected)


# --- remap ----------------------------------------------------------------------------------


@pytest.mark.parametrize("width", WIDTHS)
def test_remap_matches_numpy_indexing(width: int) -> None:
    pixels = _pixels(3, width, width)
    luts = _pixels(3, 256, width + 1)
    out = _core.remap_u8(pixels, luts)
    assert out.dtype == np.uint8 and out.shape == pixels.shape
    assert np.array_equal(out, np.take_along_axis(luts, pixels.astype(np.intp), axis=1))


def test_remap_of_all_255_no_rows_and_empty_rows() -> None:
    luts = np.zeros((2, 256), np.uint8)
    luts[:, 255] = [3, 4]
    assert np.array_equal(_core.remap_u8(np.full((2, 9), 255, np.uint8), luts)[:, 0], [3, 4])
    empty = _core.remap_u8(np.zeros((0, 64), np.uint8), np.zeros((0, 256), np.uint8))
    assert empty.shape == (0, 64)
    assert _core.remap_u8(np.zeros((2, 0), np.uint8), luts).shape == (2, 0)


def test_remap_rejects_luts_of_the_wrong_shape() -> None:
    with pytest.raises(ValueError, match="expected"):
        _core.remap_u8(_pixels(3, 8), np.zeros((3, 255), np.uint8))
    with pytest.raises(ValueError, match="expected"):
        _core.remap_u8(_pixels(3, 8), np.zeros((2, 256), np.uint8))


def test_remap_wrapper_keeps_the_image_shape() -> None:
    images = _pixels(2, 6 * 5).reshape(2, 6, 5)
    luts = np.stack([np.arange(256, dtype=np.uint8)[::-1], np.full(256, 9, np.uint8)])
    out = remap(images, luts)
    assert out.shape == images.shape
    assert np.array_equal(out[0], 255 - images[0]) and (out[1] == 9).all()


# --- properties -----------------------------------------------------------------------------


@settings(max_examples=60, deadline=None)
@given(
    rows=st.integers(0, 4),
    width=st.integers(0, 300),
    seed=st.integers(0, 2**32 - 1),
    low=st.integers(0, 255),
)
def test_all_three_loops_on_random_shapes(rows: int, width: int, seed: int, low: int) -> None:
    rng = np.random.default_rng(seed)
    pixels = rng.integers(low, 256, (rows, width), dtype=np.uint8)
    thresholds = rng.integers(0, 256, rows, dtype=np.uint8)
    luts = rng.integers(0, 256, (rows, 256), dtype=np.uint8)
    assert np.array_equal(_core.histograms_u8(pixels), _bincounts(pixels))
    assert np.array_equal(_core.pack_above_u8(pixels, thresholds), _packbits(pixels, thresholds))
    remapped = np.take_along_axis(luts, pixels.astype(np.intp), axis=1)
    assert np.array_equal(_core.remap_u8(pixels, luts), remapped)


@settings(max_examples=60, deadline=None)
@given(
    rows=st.integers(1, 3),
    width=st.integers(1024, 20_000),
    seed=st.integers(0, 2**32 - 1),
    low=st.integers(0, 255),
    spread=st.integers(1, 256),
)
def test_histograms_of_long_rows_with_uneven_values(
    rows: int, width: int, seed: int, low: int, spread: int
) -> None:
    """Rows long enough for the vector paths (≥ 1 KiB), with values in a window of `spread`
    levels: most of the top-bit bins empty or most bytes in one, as in flat image areas."""
    rng = np.random.default_rng(seed)
    pixels = ((low + rng.integers(0, spread, (rows, width))) % 256).astype(np.uint8)
    assert np.array_equal(_core.histograms_u8(pixels), _bincounts(pixels))
