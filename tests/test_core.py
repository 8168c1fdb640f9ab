"""The Rust extension `ndpkit._core` against numpy."""

import numpy as np
import pytest

from ndpkit import _core


@pytest.mark.parametrize("size", [0, 1, 3, 4, 5, 1000, 65_537])
def test_histogram_matches_numpy_bincount(size: int) -> None:
    data = np.random.default_rng(size).integers(0, 256, size, dtype=np.uint8)
    expected = np.bincount(data, minlength=256)
    assert np.array_equal(_core.histogram_u8(data), expected)


def test_histogram_of_a_real_image_shape() -> None:
    image = (np.arange(256 * 256, dtype=np.uint32) % 251).astype(np.uint8).reshape(256, 256)
    counts = _core.histogram_u8(image.ravel())
    assert counts.dtype == np.uint64 and counts.sum() == image.size


def test_histogram_rejects_non_contiguous_input() -> None:
    data = np.zeros(10, dtype=np.uint8)[::2]
    with pytest.raises(TypeError):
        _core.histogram_u8(data)
