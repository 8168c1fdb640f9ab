"""The binding's own checks on what Python hands it (found by a review of the unsafe code):
numpy's `as_slice` also takes Fortran-ordered arrays, whose buffers the kernels read as
rows (wrong answers without a word); a bool array holding bytes other than 0 and 1 was
undefined behaviour as a Rust `&[bool]`; and three inputs reached a panic or a frozen result
instead of a ValueError."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np
import pytest

from ndpkit import _core

RNG = np.random.default_rng(0)
POINTS = RNG.random((5, 3), np.float32)
QUERY = np.float32([0.1, 0.2, 0.3])
PIXELS = np.arange(12, dtype=np.uint8).reshape(3, 4)
F = np.asfortranarray
NONE_I64, NONE_F32 = np.array([], np.int64), np.array([], np.float32)

FORTRAN_CASES: list[tuple[str, Callable[[], Any]]] = [
    ("squared distances", lambda: _core.squared_distances_f32(F(POINTS), QUERY)),
    ("dot", lambda: _core.dot_f32(F(POINTS), QUERY)),
    ("top-k", lambda: _core.fold_top_k_f32(F(POINTS), QUERY, 0, 2, NONE_I64, NONE_F32)),
    ("histograms", lambda: _core.histograms_u8(F(PIXELS))),
    ("histograms out", lambda: _core.histograms_u8(PIXELS, np.zeros((3, 256), np.uint64, "F"))),
    ("pack", lambda: _core.pack_above_u8(F(PIXELS), np.uint8([1, 2, 3]))),
    ("remap", lambda: _core.remap_u8(F(PIXELS), np.zeros((3, 256), np.uint8))),
    ("remap luts", lambda: _core.remap_u8(PIXELS, F(np.zeros((3, 256), np.uint8)))),
    ("cluster sums", lambda: _core.cluster_sums_f32(F(POINTS), np.zeros((2, 3)))),
    ("centres", lambda: _core.cluster_sums_f32(POINTS, F(np.zeros((2, 3))))),
    (
        "shuffle",
        lambda: _core.shuffle_table(
            [F(np.arange(6, dtype=np.uint8).reshape(3, 2))],
            0,
            "row",
            np.uint32([2, 0, 1]),
            None,
            1,
            4096,
        ),
    ),
]


@pytest.mark.parametrize(("what", "call"), FORTRAN_CASES, ids=[c[0] for c in FORTRAN_CASES])
def test_a_fortran_ordered_array_is_refused(what: str, call: Callable[[], Any]) -> None:
    with pytest.raises(ValueError, match=r"C-contiguous \(row-major\)"):
        call()


def test_the_c_ordered_arrays_still_give_numpys_answers() -> None:
    want = ((POINTS - QUERY) ** 2).sum(axis=1, dtype=np.float32)
    np.testing.assert_allclose(_core.squared_distances_f32(POINTS, QUERY), want, rtol=1e-6)
    counts = _core.histograms_u8(PIXELS)
    assert [list(np.flatnonzero(row)) for row in counts] == PIXELS.tolist()


def test_a_validity_mask_is_read_as_numpy_reads_a_bool() -> None:
    """Bytes 2 and 254 are true to numpy; the compiled code tested bit 0 and sent those rows
    to the null tail ([2 0 1 3 4] for numpy's [4 2 1 0 3])."""
    keys = np.array([5, 4, 3, 2, 1], np.uint64)
    mask = np.array([1, 2, 1, 0, 254], np.uint8).view(np.bool_)
    order = _core.host_argsort(keys, mask)
    assert order is not None and order.tolist() == [4, 2, 1, 0, 3]
    canonical = _core.host_argsort(keys, mask.astype(bool))
    assert canonical is not None and canonical.tolist() == [4, 2, 1, 0, 3]


def test_a_top_k_whose_indices_would_overflow_is_a_value_error() -> None:
    with pytest.raises(ValueError, match="passes 2"):
        _core.fold_top_k_f32(
            np.zeros((2, 2), np.float32), np.zeros(2, np.float32), 2**63 - 1, 1, NONE_I64, NONE_F32
        )


def test_a_top_k_holding_nan_is_a_value_error() -> None:
    """`x <= NaN` is never true: no point could ever have replaced it."""
    with pytest.raises(ValueError, match="must not be NaN"):
        _core.fold_top_k_f32(
            np.zeros((2, 2), np.float32),
            np.zeros(2, np.float32),
            0,
            1,
            np.int64([7]),
            np.float32([np.nan]),
        )


def test_a_count_of_histograms_past_usize_is_a_value_error() -> None:
    """2^62 images of no pixels: rows × 256 wrapped, and an `out` of 0 rows was accepted."""
    with pytest.raises(ValueError, match="too many to count"):
        _core.histograms_u8(np.empty((2**62, 0), np.uint8), np.zeros((0, 256), np.uint64))


@pytest.mark.parametrize("mask", [[True] * 5, np.ones(5, np.int64), np.ones(5, np.int8)])
def test_a_validity_mask_that_is_no_bool_array_is_a_type_error(mask: Any) -> None:
    """Read as bytes, an int8 mask was taken without a word and an int64 one misread (a
    review of the byte reading found it)."""
    with pytest.raises(TypeError):
        _core.host_argsort(np.arange(5, dtype=np.uint64), mask)
