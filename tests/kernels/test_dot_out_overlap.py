"""`_core.dot_f32(points, weights, out)` refuses an `out` sharing memory with an input.

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
