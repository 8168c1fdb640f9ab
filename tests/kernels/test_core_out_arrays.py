"""The `_core` kernels that take an `out` array write into it, and refuse one sharing memory
with an input, of the wrong size, or not contiguous.

Views of one buffer made by separate `np.frombuffer` calls have different numpy bases, so
rust-numpy's borrow check let Rust hold `&[f32]` and `&mut [f32]` over the same bytes
(undefined behaviour); the binding now compares the address ranges itself."""

from __future__ import annotations

from importlib import import_module
from typing import Any

import numpy as np
import pytest

_core: Any = import_module("ndpkit._core")


def test_out_over_the_points_through_another_view_of_the_buffer_is_refused() -> None:
    buffer = bytearray(4 * 64)
    points = np.frombuffer(buffer, np.float32).reshape(64, 1)
    out = np.frombuffer(buffer, np.float32)
    assert points.base is not out.base  # numpy itself cannot tell they overlap
    with pytest.raises(ValueError, match="out shares memory with points"):
        _core.dot_f32(points, np.array([2.0], np.float32), out)


def test_out_over_the_weights_or_partly_over_the_points_is_refused() -> None:
    base = np.zeros(64 * 9, np.float32)
    weights = base[:8]
    with pytest.raises(ValueError, match="out shares memory with weights"):
        _core.dot_f32(np.ones((8, 8), np.float32), weights, base[4:12])
    points = base[:512].reshape(64, 8)
    with pytest.raises(ValueError, match="out shares memory with points"):
        _core.dot_f32(points, np.ones(8, np.float32), base[500:564])


def test_disjoint_views_of_one_array_are_accepted() -> None:
    base = np.arange(64 * 9, dtype=np.float32)
    points = base[64:].reshape(64, 8)
    out = base[:64]
    expected = points.sum(axis=1)
    assert _core.dot_f32(points, np.ones(8, np.float32), out) is out
    np.testing.assert_array_equal(out, expected)
    after = base[: 64 * 8].reshape(64, 8)
    tail = base[64 * 8 :]
    np.testing.assert_array_equal(
        _core.dot_f32(after, np.ones(8, np.float32), tail), after.sum(axis=1)
    )


def test_a_non_contiguous_out_is_refused() -> None:
    with pytest.raises(ValueError, match="contiguous"):
        _core.dot_f32(
            np.ones((4, 2), np.float32), np.ones(2, np.float32), np.zeros(8, np.float32)[::2]
        )


def _images(n: int, pixels: int, seed: int = 0) -> np.ndarray:
    return np.random.default_rng(seed).integers(0, 256, (n, pixels), dtype=np.uint8)


def _calls() -> list[tuple[str, Any, Any, tuple[int, ...], Any]]:
    """(name, call(out), independent expected, out shape, dtype) for each binding with `out`."""
    points = np.random.default_rng(1).standard_normal((40, 6)).astype(np.float32)
    query = np.random.default_rng(2).standard_normal(6).astype(np.float32)
    images = _images(5, 100)
    thresholds = np.array([0, 50, 127, 200, 255], dtype=np.uint8)
    luts = np.random.default_rng(3).integers(0, 256, (5, 256), dtype=np.uint8)
    return [
        (
            "squared_distances_f32",
            lambda out: _core.squared_distances_f32(points, query, out),
            ((points - query) ** 2).sum(axis=1),
            (40,),
            np.float32,
        ),
        (
            "histograms_u8",
            lambda out: _core.histograms_u8(images, out),
            np.stack([np.bincount(row, minlength=256) for row in images]),
            (5, 256),
            np.uint64,
        ),
        (
            "pack_above_u8",
            lambda out: _core.pack_above_u8(images, thresholds, out),
            np.packbits(images > thresholds[:, None], axis=1),
            (5, 13),
            np.uint8,
        ),
        (
            "remap_u8",
            lambda out: _core.remap_u8(images, luts, out),
            np.take_along_axis(luts, images.astype(np.intp), axis=1),
            (5, 100),
            np.uint8,
        ),
    ]


@pytest.mark.parametrize("case", _calls(), ids=lambda c: c[0])
def test_out_is_written_in_place(case: tuple[str, Any, Any, tuple[int, ...], Any]) -> None:
    _, call, expected, shape, dtype = case
    out = np.full(shape, 7, dtype=dtype)
    assert call(out) is out
    np.testing.assert_allclose(out, expected, rtol=1e-6)
    np.testing.assert_allclose(call(None), expected, rtol=1e-6)


@pytest.mark.parametrize("case", _calls(), ids=lambda c: c[0])
def test_out_of_the_wrong_size_or_layout_is_refused(
    case: tuple[str, Any, Any, tuple[int, ...], Any],
) -> None:
    _, call, _, shape, dtype = case
    with pytest.raises(ValueError, match="out has"):
        call(np.zeros((shape[0] - 1, *shape[1:]), dtype=dtype))
    strided = np.zeros((shape[0] * 2, *shape[1:]), dtype=dtype)[::2]
    with pytest.raises(ValueError, match="contiguous"):
        call(strided)


def test_out_over_the_pixels_is_refused() -> None:
    buffer = np.zeros(5 * 100, dtype=np.uint8)
    images = buffer.reshape(5, 100)
    luts = np.zeros((5, 256), dtype=np.uint8)
    with pytest.raises(ValueError, match="out shares memory with pixels"):
        _core.remap_u8(images, luts, np.frombuffer(memoryview(buffer), np.uint8).reshape(5, 100))
    base = np.zeros(70, dtype=np.uint8)
    thresholds, out = base[:5], base[:65].reshape(5, 13)
    with pytest.raises(ValueError, match="out shares memory with thresholds"):
        _core.pack_above_u8(_images(5, 100), thresholds, out)
