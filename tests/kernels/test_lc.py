"""LC (linear classifier) against its float64 numpy reference, in every chunking."""

from __future__ import annotations

import random

import numpy as np
import pytest

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
