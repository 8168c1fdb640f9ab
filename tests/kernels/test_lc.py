"""LC (linear classifier) against its float64 numpy reference, in every chunking."""

from __future__ import annotations

import random
import re

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from ndpkit.errors import NdpkitError
from ndpkit.kernels import KernelMismatchError, get_kernel, run_in_memory
from ndpkit.kernels.lc import Labels
from ndpkit.kernels.parts import concat_by_offset, merge_by_offset

LC = get_kernel("lc")
N_POINTS = 2_003  # odd on purpose: no chunk size divides it


def _data(seed: int) -> np.ndarray:
    return LC.generate(N_POINTS * LC.record_bytes, seed)


@pytest.mark.parametrize("seed", [0, 1, 2])
@pytest.mark.parametrize("chunk", [1, 7, 500, N_POINTS, N_POINTS + 9])
def test_matches_reference_in_any_chunking(seed: int, chunk: int) -> None:
    data, params = _data(seed), LC.params(seed)
    labels = run_in_memory(LC, data, params, chunk)
    expected = LC.reference(data, params)
    LC.check(labels, expected)
    # Dyadic data and weights make float32 exact: equal everywhere, not only outside the band.
    assert labels.dtype == np.uint8 and np.array_equal(labels, expected.labels)
    assert 0.1 < labels.mean() < 0.9


def test_labels_are_the_step_function_of_the_score() -> None:
    data = np.array([[1, 0, 0, 0, 0, 0, 0, 0], [-1, 0, 0, 0, 0, 0, 0, 0], [0] * 8], np.float32)
    params = {"weights": np.eye(8, dtype=np.float32)[0], "bias": np.float32(0)}
    assert run_in_memory(LC, data, params, 2).tolist() == [1, 0, 0]  # a score of 0 is class 0


@pytest.mark.parametrize(
    ("bad", "feature"),
    [(np.nan, 3), (np.inf, 0)],  # inf · 0 (the weight of feature 0 is 0 below) is NaN
)
def test_a_nan_score_is_an_error_naming_the_point_not_class_0(bad: float, feature: int) -> None:
    data = _data(300)
    data[217, feature] = bad
    params = {"weights": np.array([0, 1, 1, 1, 1, 1, 1, 1], np.float32), "bias": np.float32(0)}
    with pytest.raises(NdpkitError, match="score of point 217 is NaN"):
        run_in_memory(LC, data, params, 64)


@pytest.mark.parametrize(
    ("point", "message"),
    [
        ([0, np.inf, 0, 0, 0, 0, 0, 0], "score of point 1 is inf (an infinite feature"),
        ([0, -np.inf, 0, 0, 0, 0, 0, 0], "score of point 1 is -inf (an infinite feature"),
        # finite features whose float32 sum overflows: the exact score is -3e38, label 0,
        # but summed in order it reaches +inf and would have been labelled 1
        ([3e38, 3e38, -3e38, -3e38, -3e38, 0, 0, 0], "past float32's ±3.4e38"),
    ],
)
def test_an_infinite_score_is_an_error_not_a_label(point: list[float], message: str) -> None:
    data = np.zeros((3, 8), np.float32)
    data[1] = point
    params = {"weights": np.ones(8, np.float32), "bias": np.float32(0)}
    with pytest.raises(NdpkitError, match=re.escape(message)):
        run_in_memory(LC, data, params, 1)


def test_a_nan_score_from_products_past_float32_says_so() -> None:
    """Finite features and weights whose products pass float32's range with both signs sum
    to inf − inf = NaN: the message named only a NaN or infinite feature, which this point
    does not have."""
    data = np.zeros((3, 8), np.float32)
    data[2, :2] = [3e38, -3e38]
    params = {"weights": np.full(8, 2, np.float32), "bias": np.float32(0)}
    with pytest.raises(NdpkitError, match=r"score of point 2 is NaN .*products of finite numbers"):
        run_in_memory(LC, data, params, 1)


def test_empty_data_gives_no_labels() -> None:
    data = _data(0)[:0]
    labels = run_in_memory(LC, data, LC.params(0), 4)
    assert labels.shape == (0,)
    LC.check(labels, LC.reference(data, LC.params(0)))


def test_any_float32_data_passes_outside_the_rounding_band() -> None:
    rng = np.random.default_rng(5)
    data = rng.standard_normal((20_000, 8), dtype=np.float32)
    params = {"weights": rng.standard_normal(8, dtype=np.float32), "bias": np.float32(0.1)}
    labels = run_in_memory(LC, data, params, 999)
    expected = LC.reference(data, params)
    LC.check(labels, expected)
    assert expected.uncertain.sum() < 10


def test_a_score_of_exactly_0_is_checked_as_class_0_on_exact_data() -> None:
    """Dyadic data is exact in float32 in any order: no point is uncertain, so labelling a
    score of 0 as class 1 (>= instead of >) is caught."""
    data, params = LC.generate(1 << 20, 0), LC.params(0)
    scores = data.astype(np.float64) @ params["weights"].astype(np.float64) + float(params["bias"])
    assert (scores == 0).sum() >= 1
    expected = LC.reference(data, params)
    assert not expected.uncertain.any()
    LC.check(run_in_memory(LC, data, params, 1 << 16), expected)
    with pytest.raises(KernelMismatchError, match="1 instead of 0"):
        LC.check((scores >= 0).astype(np.uint8), expected)


def test_products_that_underflow_float32_are_inside_the_band() -> None:
    """Each 1e-30 · 1e-20 is 0 in float32: the score 8e-50 > 0 cannot be told from 0."""
    data = np.full((1, 8), 1e-30, np.float32)
    params = {"weights": np.full(8, 1e-20, np.float32), "bias": np.float32(0)}
    expected = LC.reference(data, params)
    assert expected.labels[0] == 1 and expected.uncertain[0]
    LC.check(run_in_memory(LC, data, params, 1), expected)


def test_points_inside_the_rounding_band_are_not_held_against_the_kernel() -> None:
    expected = Labels(np.array([1, 0], np.uint8), np.array([True, False]))
    LC.check(np.array([0, 0], np.uint8), expected)
    with pytest.raises(KernelMismatchError, match="point 1"):
        LC.check(np.array([1, 1], np.uint8), expected)


def test_merge_is_associative_and_commutative() -> None:
    data, state = _data(3), LC.init(LC.params(3))
    parts = [LC.device(data[i : i + 300], state, i) for i in range(0, len(data), 300)]
    whole = LC.merge(parts)
    grouped = LC.merge([LC.merge(parts[:2]), LC.merge(parts[2:5]), LC.merge(parts[5:])])
    shuffled = parts[:]
    random.Random(0).shuffle(shuffled)
    for other in (grouped, LC.merge(shuffled)):
        assert sorted(other) == sorted(whole)
        assert all(np.array_equal(other[k][0], whole[k][0]) for k in whole)
    assert np.array_equal(LC.host(grouped, state)[0], LC.host(whole, state)[0])


def test_empty_partials_never_conflict_but_duplicates_do() -> None:
    empty, full = {0: (np.zeros(0, np.float32),)}, {0: (np.ones(3, np.float32),)}
    assert len(merge_by_offset([empty, full])[0][0]) == 3
    assert len(merge_by_offset([full, empty])[0][0]) == 3
    with pytest.raises(ValueError, match="two partials"):
        merge_by_offset([full, full])
    with pytest.raises(ValueError, match="missing"):
        concat_by_offset({0: (np.ones(3),), 5: (np.ones(2),)})


def test_generator_and_params_are_deterministic_by_seed() -> None:
    assert np.array_equal(_data(4), _data(4))
    assert not np.array_equal(_data(4), _data(5))
    a, b = LC.params(4), LC.params(4)
    assert np.array_equal(a["weights"], b["weights"]) and a["bias"] == b["bias"]
    assert _data(4).shape == (N_POINTS, 8) and _data(4).dtype == np.float32


def test_check_rejects_a_flipped_label_and_a_wrong_length() -> None:
    data, params = _data(6), LC.params(6)
    labels = run_in_memory(LC, data, params, 256)
    expected = LC.reference(data, params)
    corrupted = labels.copy()
    corrupted[17] ^= 1
    with pytest.raises(KernelMismatchError, match="first at point 17"):
        LC.check(corrupted, expected)
    with pytest.raises(KernelMismatchError, match="labels, expected"):
        LC.check(labels[:-1], expected)


def test_device_sends_one_float32_score_per_point() -> None:
    data = _data(7)
    partial = LC.device(data, LC.init(LC.params(7)), 0)
    assert data.nbytes / LC.output_bytes(partial) == 8  # the paper's α


def test_device_rejects_data_of_the_wrong_shape_or_type() -> None:
    with pytest.raises(NdpkitError, match=r"float32 points of shape \(n, 8\)"):
        LC.device(np.zeros((4, 8)), LC.init(LC.params(0)), 0)
    with pytest.raises(NdpkitError, match="float32"):
        LC.device(np.zeros((4, 7), np.float32), LC.init(LC.params(0)), 0)


def test_big_endian_float32_points_are_scored_as_native_ones() -> None:
    """float32 in the other byte order (a FITS column) holds the same values: it was refused
    as 'lc expects float32 points …, got >f4 (7, 8)' (the chunk's shape, not the data's),
    while k-NN and K-Means took it."""
    data, params = _data(9), LC.params(9)
    swapped = data.astype(data.dtype.newbyteorder(">"))
    labels = run_in_memory(LC, swapped, params, 7)
    assert np.array_equal(labels, run_in_memory(LC, data, params, 7))
    LC.check(labels, LC.reference(swapped, params))
    state = LC.init(params)
    for points in (swapped, swapped[::2]):  # the Rust loop, on a copy of a strided chunk
        (dots,) = LC.device(points, state, 0)[0]
        (want,) = LC.device(np.ascontiguousarray(points, np.float32), state, 0)[0]
        assert dots.dtype == np.float32
        assert np.array_equal(dots.view(np.uint32), want.view(np.uint32))
        out = np.empty(len(points), np.float32)
        LC.device_into(points, state, 0, out)
        assert np.array_equal(out.view(np.uint32), want.view(np.uint32))


# -- the Rust device part (ndp-kernels dot_f32) ---------------------------------------------

GAMMA_8 = 8 * 2.0**-24 / (1 - 8 * 2.0**-24)  # Higham's γ₈ for float32, written out again


def _scores(points: np.ndarray, weights: np.ndarray) -> np.ndarray:
    (dots,) = LC.device(points, {"weights": weights}, 0)[0]
    assert dots.dtype == np.float32 and dots.shape == (len(points),)
    return dots


def _in_order(points: np.ndarray, weights: np.ndarray) -> np.ndarray:
    """The order the Rust loop promises, in numpy float32: x₀w₀, then + xⱼwⱼ one by one."""
    acc = points[:, 0] * weights[0]
    for j in range(1, 8):
        acc = acc + points[:, j] * weights[j]
    return acc


def _assert_within_rounding(dots: np.ndarray, points: np.ndarray, weights: np.ndarray) -> None:
    """|s − x·w| ≤ 2γ₈·(|x|·|w|) against float64, and the same distance from BLAS's sgemv."""
    x64, w64 = points.astype(np.float64), weights.astype(np.float64)
    bound = 2 * GAMMA_8 * (np.abs(x64) @ np.abs(w64))
    assert np.all(np.abs(dots - x64 @ w64) <= bound)
    assert np.all(np.abs(dots.astype(np.float64) - (points @ weights)) <= bound)


@settings(max_examples=60, deadline=None)
@given(
    rows=st.integers(0, 3000),
    seed=st.integers(0, 2**32 - 1),
    scale=st.sampled_from([1e-3, 1.0, 1e4]),
)
def test_rust_scores_are_within_the_rounding_bound_and_summed_in_order(
    rows: int, seed: int, scale: float
) -> None:
    rng = np.random.default_rng(seed)
    points = (rng.standard_normal((rows, 8)) * scale).astype(np.float32)
    weights = (rng.standard_normal(8) * scale).astype(np.float32)
    dots = _scores(points, weights)
    _assert_within_rounding(dots, points, weights)
    np.testing.assert_array_equal(dots.view(np.uint32), _in_order(points, weights).view(np.uint32))


@pytest.mark.parametrize("start", [0, 1, 3, 15])
def test_many_steps_from_any_alignment_are_summed_in_order(start: int) -> None:
    """Tens of thousands of points (whole 16-point steps, prefetches past the end) starting
    at any row, so the vector loads meet every alignment."""
    rng = np.random.default_rng(start)
    points = rng.standard_normal((40_013, 8), dtype=np.float32)[start:]
    weights = rng.standard_normal(8, dtype=np.float32)
    dots = _scores(points, weights)
    np.testing.assert_array_equal(dots.view(np.uint32), _in_order(points, weights).view(np.uint32))
    _assert_within_rounding(dots, points, weights)


@pytest.mark.parametrize("layout", ["fortran", "column slice", "every other row"])
def test_points_of_any_layout_get_the_in_order_scores_in_any_chunking(layout: str) -> None:
    """A pandas frame's values are Fortran-ordered and a table's first 8 columns a strided
    view: such chunks went to BLAS, whose order is its own, and points near the boundary
    were labelled by the chunk size (hundreds of 2,003 here)."""
    rng = np.random.default_rng(5)
    weights = rng.standard_normal(8).astype(np.float32)
    w64 = weights.astype(np.float64)
    near = rng.standard_normal((N_POINTS, 8))
    near -= np.outer(near @ w64 / (w64 @ w64), w64)  # scores of about 0: rounding decides
    points = near.astype(np.float32)
    if layout == "fortran":
        given = np.asfortranarray(points)
    elif layout == "column slice":
        given = np.zeros((N_POINTS, 12), np.float32)
        given[:, :8] = points
        given = given[:, :8]
    else:
        given = np.repeat(points, 2, axis=0)[::2]
    assert not given.flags.c_contiguous
    params = {"weights": weights, "bias": np.float32(0)}
    want = _in_order(points, weights) > 0
    for chunk in (1, 7, N_POINTS):
        labels = run_in_memory(LC, given, params, chunk)
        np.testing.assert_array_equal(labels, want.view(np.uint8))
    state = LC.init(params)
    np.testing.assert_array_equal(_scores(given, weights), _in_order(points, weights))
    out = np.empty(N_POINTS, np.float32)
    LC.device_into(given, state, 0, out)
    np.testing.assert_array_equal(out, _in_order(points, weights))


def test_special_values_give_the_in_order_scores() -> None:
    specials = np.array(
        [0.0, -0.0, np.inf, -np.inf, np.nan, 3.4e38, 1e-40, -1e20, 1.0], dtype=np.float32
    )
    rng = np.random.default_rng(11)
    points = rng.standard_normal((333, 8), dtype=np.float32)
    sprinkled = rng.random((333, 8)) < 0.1
    points[sprinkled] = rng.choice(specials, sprinkled.sum())
    weights = np.array([1e20, -0.0, 0.5, 1e-38, -3.0, 1e-20, 2.0, 0.0], np.float32)
    with np.errstate(all="ignore"):
        expected = _in_order(points, weights)
        dots = _scores(points, weights)
    np.testing.assert_array_equal(dots, expected)  # NaN where the in-order sum is NaN
    numbers = ~np.isnan(expected)  # a NaN's sign is the hardware's choice
    assert np.array_equal(np.signbit(dots[numbers]), np.signbit(expected[numbers]))
    assert 0 < numbers.sum() < len(points)
    finite = np.isfinite(points).all(axis=1) & (np.abs(points) < 1e20).all(axis=1)
    assert finite.sum() > 100
    _assert_within_rounding(dots[finite], points[finite], weights)


def test_non_contiguous_chunks_and_outputs_fall_back_to_blas() -> None:
    rng = np.random.default_rng(12)
    weights = rng.standard_normal(8, dtype=np.float32)
    points = rng.standard_normal((2 * 1001, 16), dtype=np.float32)[::2, ::2]  # odd length
    assert not points.flags.c_contiguous
    dots = _scores(points, weights)
    assert np.array_equal(dots, points @ weights)
    _assert_within_rounding(dots, points, weights)
    strided = np.full(2 * len(points), np.float32(7.0))
    LC.device_into(points, {"weights": weights}, 0, strided[::2])
    assert np.array_equal(strided[::2], points @ weights) and np.all(strided[1::2] == 7)


def test_device_into_writes_the_device_scores_in_place() -> None:
    data, state = _data(8), LC.init(LC.params(8))
    out = np.full(len(data) + 5, np.float32(np.nan))
    LC.device_into(data, state, 0, out[: len(data)])
    (dots,) = LC.device(data, state, 0)[0]
    assert np.array_equal(out[: len(data)], dots) and np.isnan(out[len(data) :]).all()
    assert np.array_equal(dots, data.astype(np.float64) @ state["weights"].astype(np.float64))


def test_device_into_a_contiguous_output_sums_in_order() -> None:
    rng = np.random.default_rng(13)
    points = rng.standard_normal((1003, 8), dtype=np.float32)
    weights = rng.standard_normal(8, dtype=np.float32)
    out = np.empty(len(points), np.float32)
    LC.device_into(points, {"weights": weights}, 0, out)
    np.testing.assert_array_equal(out.view(np.uint32), _in_order(points, weights).view(np.uint32))


def test_weights_or_output_of_the_wrong_length_are_rejected() -> None:
    points = np.zeros((4, 8), np.float32)
    with pytest.raises(ValueError, match="weight vector has 7 features, points have 8"):
        LC.device(points, {"weights": np.zeros(7, np.float32)}, 0)
    needle = r"lc: rows output of float32 \(3,\), the chunk needs float32 \(4,\)"
    with pytest.raises(NdpkitError, match=needle):
        LC.device_into(points, {"weights": np.zeros(8, np.float32)}, 0, np.zeros(3, np.float32))


@pytest.mark.parametrize(
    ("params", "message"),
    [
        ({}, "lc: params have no 'weights' \\(they have nothing\\)"),
        ({"weights": np.zeros(8, np.float32)}, "lc: params have no 'bias'"),
        ({"weights": np.zeros(7, np.float32), "bias": 0.0}, "weights must be 8 finite numbers"),
        ({"weights": np.full(8, np.nan, np.float32), "bias": 0.0}, "weights must be 8 finite"),
        ({"weights": np.zeros(8, np.float32), "bias": np.inf}, "bias must be finite"),
    ],
)
def test_bad_params_are_an_ndpkit_error_before_any_pass(params, message):
    with pytest.raises(NdpkitError, match=message):
        LC.init(params)
