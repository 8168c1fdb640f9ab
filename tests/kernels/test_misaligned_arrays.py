"""Float arrays at an odd byte offset (`np.frombuffer` of a slice: C-contiguous, not aligned)
give the same answers as aligned ones. The Rust binding refuses misaligned arrays, and
`np.ascontiguousarray` passes them through unchanged, so LC, k-NN and K-Means failed with
"The given array is not contiguous or is misaligned" (found by a kernel audit)."""

from __future__ import annotations

import dataclasses
from typing import Any

import numpy as np
import pytest

from ndpkit.errors import NdpkitError
from ndpkit.kernels import get_kernel, run_in_memory
from ndpkit.kernels.images import histograms


def misaligned(array: np.ndarray) -> np.ndarray:
    """A C-contiguous copy of `array` one byte into a buffer: not aligned."""
    buffer = np.zeros(array.nbytes + 1, np.uint8)
    view = buffer[1:].view(array.dtype).reshape(array.shape)
    view[...] = array
    assert view.flags.c_contiguous and not view.flags.aligned
    return view


def assert_identical(got: Any, want: Any) -> None:
    """Equal to the bit, through dataclasses, dicts, tuples and lists."""
    if dataclasses.is_dataclass(want) and not isinstance(want, type):
        for f in dataclasses.fields(want):
            assert_identical(getattr(got, f.name), getattr(want, f.name))
    elif isinstance(want, dict):
        assert got.keys() == want.keys()
        for key in want:
            assert_identical(got[key], want[key])
    elif isinstance(want, tuple | list):
        assert len(got) == len(want)
        for g, w in zip(got, want, strict=True):
            assert_identical(g, w)
    else:
        np.testing.assert_array_equal(np.asarray(got), np.asarray(want), strict=True)


@pytest.mark.parametrize("app", ["lc", "knn2", "knn8", "knn8-topk", "kmeans"])
def test_a_misaligned_array_gives_the_aligned_answer(app: str) -> None:
    kernel = get_kernel(app)
    data, params = kernel.generate(40_000, seed=3), kernel.params(3)
    want = run_in_memory(kernel, data, params, 97)
    assert_identical(run_in_memory(kernel, misaligned(data), params, 97), want)


@pytest.mark.parametrize("app", ["lc", "knn8"])
def test_rows_into_a_misaligned_out_are_the_rows_in_place(app: str) -> None:
    kernel = get_kernel(app)
    assert hasattr(kernel, "device_into")
    data = kernel.generate(8_000, seed=4)
    state = kernel.init(kernel.params(4))
    want = np.zeros(len(data), np.float32)
    kernel.device_into(data, state, 0, want)
    out = misaligned(np.zeros(len(data), np.float32))
    kernel.device_into(misaligned(data), state, 0, out)
    np.testing.assert_array_equal(out, want, strict=True)


def test_a_misaligned_out_for_the_rust_loops_is_refused_by_name() -> None:
    images = np.zeros((2, 8, 8), np.uint8)
    with pytest.raises(NdpkitError, match="histograms: out must be C-contiguous, aligned"):
        histograms(images, out=misaligned(np.zeros((2, 256), np.uint64)))


def test_a_scalar_query_for_one_feature_points_is_still_a_query() -> None:
    """`np.ascontiguousarray` made a 0-d query 1-d, and `np.require` alone did not (a
    review found the first version of the fix failing with the binding's TypeError)."""
    from ndpkit.kernels.knn import distances_sq  # noqa: PLC0415

    points = np.float32([[1], [2], [4]])
    got = distances_sq(points, np.float32(0.5))
    np.testing.assert_array_equal(got, np.float32([0.25, 2.25, 12.25]), strict=True)
    np.testing.assert_array_equal(distances_sq(misaligned(points), np.float32(0.5)), got)


def test_nascent_decode_and_shuffle_take_misaligned_arrays() -> None:
    """The same refusal in NASCENT2's decoder (uint16 keys) and shuffler (uint32 order)."""
    from ndpkit.nascent import decoder, shuffle  # noqa: PLC0415

    values = [b"ab", b"cd", b"ef"]
    keys = np.array([0, 1, 2, 1], np.uint16)
    want = decoder.decode(values, keys)
    got = decoder.decode(values, misaligned(keys))
    np.testing.assert_array_equal(got.data, want.data, strict=True)
    np.testing.assert_array_equal(got.offsets, want.offsets, strict=True)
    column, order = np.arange(4, dtype=np.uint32), np.array([3, 2, 1, 0], np.uint32)
    np.testing.assert_array_equal(
        shuffle([column], misaligned(order)).columns[0], shuffle([column], order).columns[0]
    )
