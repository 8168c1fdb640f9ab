"""K-Means (RISP §9) against scikit-learn's Lloyd, plus the runtime's invariances."""

from __future__ import annotations

import threading

import numpy as np
import pytest
from scipy.spatial.distance import cdist

import ndpkit.kernels.kmeans as kmeans_module
from ndpkit.errors import NdpkitError
from ndpkit.kernels import KernelMismatchError, run_in_memory
from ndpkit.kernels.kmeans import (
    GRID,
    INIT_SAMPLE_RECORDS,
    ClusterSums,
    KMeansKernel,
    KMeansResult,
    assign_labels,
    cluster_sums,
    kernels,
    lloyd_keeping_empty,
    nearest_by_rule,
)

KERNEL = kernels()["kmeans"]
N_POINTS = 20_000


def assert_same(a: KMeansResult, b: KMeansResult):
    np.testing.assert_array_equal(a.centres, b.centres)
    assert a.iterations == b.iterations
    assert a.converged == b.converged


@pytest.fixture(scope="module")
def data_sets():
    """(data, params, reference) per seed, computed once; max_iter 40 keeps sklearn quick."""
    found = {}
    for seed in (0, 1, 2, 4):
        data = KERNEL.generate(N_POINTS * KERNEL.record_bytes, seed)
        params = {**KERNEL.params(seed), "max_iter": 40}
        found[seed] = (data, params, KERNEL.reference(data, params))
    return found


@pytest.mark.parametrize("seed", [0, 1, 2, 4])
@pytest.mark.parametrize("chunk_records", [3001, 1 << 30])
def test_matches_sklearn(data_sets, seed, chunk_records):
    data, params, expected = data_sets[seed]
    result = run_in_memory(KERNEL, data, params, chunk_records)
    KERNEL.check(result, expected)
    if result.iterations < params["max_iter"]:
        assert result.converged


def test_sklearn_agreement_is_tight(data_sets):
    """Same assignments every pass: centres agree to rounding, far inside the stated rtol."""
    data, params, expected = data_sets[0]
    result = run_in_memory(KERNEL, data, params, 4096)
    np.testing.assert_allclose(result.centres, expected.centres, rtol=0, atol=1e-11)
    assert 1 < result.iterations == expected.iterations


def test_one_record_chunks_and_hand_picked_start():
    """Tiny data, every chunk one point, starting from the data's first K points."""
    data = KERNEL.generate(400 * KERNEL.record_bytes, 9)
    params = {"init_centres": data[:8].astype(np.float64), "max_iter": 30, "tol_sq": 0.0}
    result = run_in_memory(KERNEL, data, params, 1)
    KERNEL.check(result, KERNEL.reference(data, params))
    assert_same(result, run_in_memory(KERNEL, data, params, 400))


@pytest.mark.parametrize("max_iter", [1, 3])
def test_stops_after_max_iter(data_sets, max_iter):
    data, params, _ = data_sets[1]
    params = {**params, "max_iter": max_iter}
    result = run_in_memory(KERNEL, data, params, 5000)
    assert result.iterations == max_iter
    assert not result.converged
    KERNEL.check(result, KERNEL.reference(data, params))


def test_tolerance_matches_sklearn_tol(data_sets):
    """tol_sq is sklearn's `tol` times the mean feature variance: same pass count."""
    data, params, exact = data_sets[2]
    params = {**params, "tol_sq": 1e-3}
    result = run_in_memory(KERNEL, data, params, 7000)
    assert result.converged
    assert result.iterations < exact.iterations
    KERNEL.check(result, KERNEL.reference(data, params))


def test_chunking_and_sharding_are_bitwise_invariant(data_sets):
    data, params, _ = data_sets[4]
    baseline = run_in_memory(KERNEL, data, params, len(data))
    for chunk_records, shards, seed in [(777, 3, 0), (4097, 5, 1), (30_000, 2, 2)]:
        cuts = np.sort(np.random.default_rng(seed).integers(0, len(data) + 1, shards - 1))
        bounds = [0, *cuts.tolist(), len(data)]
        assert_same(run_in_memory(KERNEL, data, params, chunk_records, bounds), baseline)


def test_merge_is_associative_and_exact(data_sets):
    data, params, _ = data_sets[0]
    state = KERNEL.init(params)
    a, b, c = (KERNEL.device(part, state, 0) for part in np.array_split(data, 3))
    groupings = [
        KERNEL.merge([a, b, c]),
        KERNEL.merge([KERNEL.merge([a, b]), c]),
        KERNEL.merge([a, KERNEL.merge([b, c])]),
        KERNEL.merge([c, KERNEL.merge([b, a])]),
    ]
    whole = KERNEL.device(data, state, 0)
    for merged in groupings:
        np.testing.assert_array_equal(merged.sums, whole.sums)
        np.testing.assert_array_equal(merged.counts, whole.counts)
    assert whole.counts.sum() == len(data)


def test_generator_is_deterministic_prefix_stable_and_on_the_grid():
    small = KERNEL.generate(INIT_SAMPLE_RECORDS * 32, 3)
    large = KERNEL.generate(100_000 * 32, 3)
    np.testing.assert_array_equal(large[: len(small)], small)
    np.testing.assert_array_equal(large, KERNEL.generate(100_000 * 32, 3))
    assert not np.array_equal(small, KERNEL.generate(INIT_SAMPLE_RECORDS * 32, 4))
    assert large.dtype == np.float32 and large.shape == (100_000, 8)
    scaled = large.astype(np.float64) / GRID
    np.testing.assert_array_equal(scaled, np.round(scaled))
    assert np.abs(large).max() < 128


def test_params_are_deterministic_and_taken_from_the_data():
    first, again = KERNEL.params(5), KERNEL.params(5)
    np.testing.assert_array_equal(first["init_centres"], again["init_centres"])
    assert not np.array_equal(first["init_centres"], KERNEL.params(6)["init_centres"])
    sample = KERNEL.generate(INIT_SAMPLE_RECORDS * KERNEL.record_bytes, 5).astype(np.float64)
    for centre in first["init_centres"]:
        assert (sample == centre).all(axis=1).any()
    assert len(np.unique(first["init_centres"], axis=0)) == 8


def test_more_clusters_than_the_init_sample_still_start_apart():
    """With K above INIT_SAMPLE_RECORDS, k-means++ ran out of points and picked some twice:
    K = 4,100 had 4 centres picked twice, 4 clusters that started empty and stayed so."""
    kernel = KMeansKernel(features=2, clusters=INIT_SAMPLE_RECORDS + 4)
    centres = kernel.params(0)["init_centres"]
    assert len(np.unique(centres, axis=0)) == INIT_SAMPLE_RECORDS + 4


def test_empty_cluster_keeps_its_centre():
    """Centre 2 is far from every point: it gets no point, and stays where it was."""
    kernel = KMeansKernel(features=2, clusters=3)
    data = np.array([[0, 0], [0, 1], [1, 0], [10, 10], [10, 11], [11, 10]], dtype=np.float32)
    start = np.array([[0.0, 0.0], [10.0, 10.0], [1000.0, -1000.0]])
    params = {"init_centres": start, "max_iter": 10, "tol_sq": 0.0}
    for chunk_records in (1, 4, 6):
        result = run_in_memory(kernel, data, params, chunk_records)
        np.testing.assert_array_equal(result.centres[2], start[2])
        np.testing.assert_allclose(result.centres[0], [1 / 3, 1 / 3])
        np.testing.assert_allclose(result.centres[1], [31 / 3, 31 / 3])
        assert result.iterations == 2 and result.converged
    sums = kernel.device(data, kernel.init(params), 0)
    np.testing.assert_array_equal(sums.counts, [3, 3, 0])


def test_a_result_with_an_empty_cluster_passes_its_check():
    """scikit-learn moves an empty cluster's centre to a far point, this kernel keeps it:
    the reference then replays Lloyd under the kernel's rule, and a correct result passes
    (it failed before, while streamed verification passed the same result)."""
    kernel = KMeansKernel(features=2, clusters=3)
    data = np.array([[0, 0], [0, 1], [1, 0], [10, 10], [10, 11], [11, 10]], dtype=np.float32)
    params = {
        "init_centres": np.array([[0.0, 0.0], [10.0, 10.0], [1000.0, -1000.0]]),
        "max_iter": 10,
        "tol_sq": 0.0,
    }
    result = run_in_memory(kernel, data, params, 4)
    expected = kernel.reference(data, params)
    assert not np.array_equal(expected.centres[2], [1000.0, -1000.0])  # scikit-learn moved it
    replay, emptied = expected.replay()
    assert emptied
    np.testing.assert_array_equal(replay.centres[2], [1000.0, -1000.0])
    kernel.check(result, expected)
    moved = result.centres + np.array([[0, 0], [0, 0], [1, 0]])
    wrong = KMeansResult(moved, result.iterations, True)
    with pytest.raises(KernelMismatchError, match="centre 2"):
        kernel.check(wrong, expected)


def test_duplicate_points_are_checked_without_scikit_learns_warning():
    """Fewer distinct points than clusters: scikit-learn warns (ConvergenceWarning), which
    ended the reference where warnings are errors (this suite's setting)."""
    kernel = KMeansKernel(features=2, clusters=3)
    data = np.repeat(np.array([[0, 0], [5, 5]], dtype=np.float32), 4, axis=0)
    params = {
        "init_centres": np.array([[0.0, 0.0], [5.0, 5.0], [1.0, 1.0]]),
        "max_iter": 10,
        "tol_sq": 0.0,
    }
    result = run_in_memory(kernel, data, params, 3)
    expected = kernel.reference(data, params)
    kernel.check(result, expected)
    np.testing.assert_array_equal(result.centres[:2], [[0, 0], [5, 5]])


@pytest.mark.parametrize(
    ("change", "message"),
    [
        ({"init_centres": np.full((8, 8), np.nan)}, "initial centre 0 is not finite"),
        ({"init_centres": np.zeros((3, 8))}, r"init_centres has shape \(3, 8\), not \(8, 8\)"),
        ({"max_iter": 0}, "max_iter must be at least 1, got 0"),
        ({"max_iter": -1}, "max_iter must be at least 1"),
        ({"max_iter": 2.5}, "max_iter must be a whole number"),
        ({"max_iter": True}, "max_iter must be a whole number"),
        ({"tol_sq": -1.0}, "tol_sq must be finite and ≥ 0"),
    ],
)
def test_bad_params_are_refused_before_any_pass(change, message):
    with pytest.raises(NdpkitError, match=message):
        KERNEL.init({**KERNEL.params(0), **change})
    with pytest.raises(NdpkitError, match=message):
        KERNEL.reference(KERNEL.generate(1 << 16, 0), {**KERNEL.params(0), **change})


def test_missing_params_name_the_key():
    params = KERNEL.params(0)
    del params["init_centres"]
    with pytest.raises(NdpkitError, match="kmeans: params have no 'init_centres'"):
        KERNEL.init(params)


def test_a_nan_point_is_refused_not_put_in_cluster_0():
    """It used to send every point to cluster 0 and run to max_iter (or "converge" with NaN
    centres)."""
    data = KERNEL.generate(1 << 20, 0)
    data[4321, 2] = np.nan
    with pytest.raises(NdpkitError, match="point 4321 has a non-finite coordinate"):
        run_in_memory(KERNEL, data, KERNEL.params(0), 4096)
    with pytest.raises(NdpkitError, match="point 4321 has a non-finite coordinate"):
        KERNEL.reference(data, KERNEL.params(0))


@pytest.mark.parametrize(
    ("data", "message"),
    [
        (np.zeros((100, 3), np.float32), r"the data has shape \(100, 3\), not \(n, 8\)"),
        (np.zeros((5, 8), np.float32), "5 points cannot form K = 8 clusters"),
    ],
)
def test_the_reference_refuses_data_it_would_misread(data, message):
    with pytest.raises(NdpkitError, match=message):
        KERNEL.reference(data, KERNEL.params(0))


def test_equidistant_point_goes_to_the_first_centre():
    centres = np.array([[-1.0, 0.0], [1.0, 0.0]])
    points = np.array([[0.0, 5.0], [0.0, -2.0], [0.5, 0.0]], dtype=np.float32)
    np.testing.assert_array_equal(assign_labels(points, centres), [0, 0, 1])
    sums = cluster_sums(points, centres)
    np.testing.assert_array_equal(sums.counts, [2, 1])
    np.testing.assert_array_equal(sums.sums, [[0.0, 3.0], [0.5, 0.0]])


@pytest.mark.parametrize(
    ("point", "centres"),
    [
        ([7.0, 9.0], [[6.2, 8.5], [7.8, 9.5]]),
        ([4.0, 5.0, 7.0], [[4.9, 4.1, 6.3], [3.1, 5.9, 7.7]]),
    ],
)
def test_assign_labels_breaks_an_exact_tie_as_the_device_does(point, centres):
    """The point is as far from both centres (0.89, 2.11, in exact arithmetic), which are off
    the 2⁻¹⁶ grid (as a run's means are): the device's rounded score picks one, and
    `assign_labels` must pick the same, or its labels' counts are not the result's. Its BLAS
    scores picked the other."""
    points = np.array([point], np.float32)
    centres = np.array(centres)
    distances = cdist(points.astype(np.float64), centres, "sqeuclidean")[0]
    assert distances[0] == pytest.approx(distances[1], rel=1e-12)  # a tie up to rounding
    kernel = KMeansKernel(features=len(point), clusters=2)
    state = kernel.init({"init_centres": centres, "max_iter": 1, "tol_sq": 0.0})
    device_counts = kernel.device(points, state, 0).counts
    np.testing.assert_array_equal(
        np.bincount(assign_labels(points, centres), minlength=2), device_counts
    )


def test_labels_follow_the_device_rule(data_sets):
    data, params, _ = data_sets[0]
    result = run_in_memory(KERNEL, data, params, 5000)
    labels = assign_labels(data, result.centres)
    counts = np.bincount(labels, minlength=8)
    state = KERNEL.init({**params, "init_centres": result.centres})
    np.testing.assert_array_equal(KERNEL.device(data, state, 0).counts, counts)


def test_check_rejects_corrupted_results(data_sets):
    data, params, expected = data_sets[0]
    good = run_in_memory(KERNEL, data, params, 5000)
    KERNEL.check(good, expected)
    nudged = good.centres.copy()
    nudged[3, 5] += 1e-4
    counts = good.counts
    corrupted = {
        "centre 3 feature 5": KMeansResult(nudged, good.iterations, good.converged, counts),
        "centre 0": KMeansResult(good.centres[::-1].copy(), good.iterations, True, counts),
        "centres of shape": KMeansResult(good.centres[:7], good.iterations, True, counts),
        "iterations": KMeansResult(good.centres, good.iterations + 1, good.converged, counts),
        "converged is False": KMeansResult(good.centres, good.iterations, False, counts),
        "no points per cluster": KMeansResult(good.centres, good.iterations, True),
    }
    assert good.converged and good.iterations < params["max_iter"]
    for message, bad in corrupted.items():
        with pytest.raises(KernelMismatchError, match=message):
            KERNEL.check(bad, expected)


def test_check_scales_its_tolerance_with_the_data():
    """A fixed atol of 1e-9 accepted all-zero centres for data of magnitude 1e-10."""
    data = KERNEL.generate(4000 * KERNEL.record_bytes, 0) * np.float32(1e-10)
    params = KERNEL.params(0)
    params["init_centres"] = params["init_centres"] * 1e-10
    good = run_in_memory(KERNEL, data, params, 1000)
    expected = KERNEL.reference(data, params)
    KERNEL.check(good, expected)
    zeros = KMeansResult(np.zeros_like(good.centres), good.iterations, good.converged, good.counts)
    with pytest.raises(KernelMismatchError, match="centre 0 feature"):
        KERNEL.check(zeros, expected)


def test_a_result_that_converged_on_its_last_pass_passes_against_sklearn(data_sets):
    """scikit-learn's flag is only "stopped before max_iter": on the last pass it cannot say."""
    data, params, _ = data_sets[0]
    converged = run_in_memory(KERNEL, data, params, 5000)
    params = {**params, "max_iter": converged.iterations}
    expected = KERNEL.reference(data, params)
    assert not expected.converged
    KERNEL.check(run_in_memory(KERNEL, data, params, 5000), expected)
    replay, _ = expected.replay()  # exact about convergence: the flag must match it
    assert replay.converged
    flipped = KMeansResult(replay.centres, replay.iterations, False, replay.counts)
    with pytest.raises(KernelMismatchError, match="converged is False, reference True"):
        KERNEL.check(flipped, replay)


def test_check_compares_the_points_per_cluster_not_only_the_centres():
    """At 1e7 a centre within rtol 1e-6 is within 10 of the reference: the points of one
    cluster moved wholly to its neighbour passed. The counts catch it."""
    x = np.full((8, 8), 1e7, np.float32)
    centres = np.full((8, 8), 1e7)
    centres[2:] += 1000
    centres[0, 0] += 0.26  # centre 1 is nearest: (0.25)² < (0.26)²
    centres[1, 0] -= 0.25
    params = {"init_centres": centres, "max_iter": 1, "tol_sq": 0.0}
    expected = KERNEL.reference(x, params)
    replay, _ = expected.replay()  # exact distances: all eight points go to centre 1
    assert replay.counts is not None and list(replay.counts) == [0, 8, 0, 0, 0, 0, 0, 0]
    KERNEL.check(replay, expected)
    wrong = KMeansResult(replay.centres, 1, False, np.array([8, 0, 0, 0, 0, 0, 0, 0]))
    with pytest.raises(KernelMismatchError, match="cluster 0 has 8 points in the last pass"):
        KERNEL.check(wrong, expected)


def test_exact_ties_follow_the_kernels_rule_not_sklearns_rounding():
    """Integer points halfway between two centres go to the first (the kernel's rule, and
    scipy's replay's); scikit-learn scores after subtracting the mean, so rounding picks
    for it. The check falls back to the replay and accepts the kernel's answer."""
    x = np.zeros((100, 8), np.float32)
    x[:, 0] = np.repeat(np.arange(15), [7, 3, 1, 4, 7, 8, 5, 7, 6, 13, 7, 9, 10, 10, 3])
    centres = np.zeros((8, 8))
    centres[:, 0] = np.arange(0, 16, 2)
    params = {"init_centres": centres, "max_iter": 100, "tol_sq": 0.0}
    result = run_in_memory(KERNEL, x, params, 100)
    KERNEL.check(result, KERNEL.reference(x, params))


def _exact_tie(rng: np.random.Generator, scale: float, offset: float):
    """A float32 point exactly halfway between centres 0 and 1 (x ± e, e float32: exact in
    float64), with six far centres: (point, centres)."""
    x = (rng.normal(size=(1, 8)) * scale + offset).astype(np.float32)
    e = (rng.normal(size=8) * scale).astype(np.float32).astype(np.float64)
    far = offset + scale * (50 + 10 * rng.normal(size=(6, 8)))
    return x, np.vstack([x[0] - e, x[0] + e, far])


def _device_label(x: np.ndarray, centres: np.ndarray) -> int:
    return int(np.argmax(cluster_sums(x, centres).counts))


def test_the_replay_puts_an_exact_tie_where_the_device_rounding_does():
    """Off the grid the device's rounded scores can send a point at an exact tie (equal
    distances, as scipy and exact rationals say) to the second centre. The replay that `check`
    falls back to used scipy's distances, first centre on ties: a correct run failed its
    check. It now takes the device's own rule at near ties, so it agrees with the device on
    every such point, and the check still catches a result that differs."""
    rng = np.random.default_rng(3)
    disagree_with_distances = 0
    for trial in range(400):
        x, centres = _exact_tie(rng, 10.0 ** (trial % 7 - 3), [0.0, 1e3, 1e6][trial % 3])
        if trial % 2:
            centres = centres[rng.permutation(8)]
        points = x.astype(np.float64)
        distances = cdist(points, centres, "sqeuclidean")
        assert np.sort(distances[0])[0] == np.sort(distances[0])[1]  # an exact tie
        device = _device_label(x, centres)
        assert nearest_by_rule(points, centres, distances)[0] == device, trial
        disagree_with_distances += device != int(distances[0].argmin())
    assert disagree_with_distances > 10  # rounding did pick the second centre, often

    # One such point in a data set: the device's answer passes its check.
    while True:
        x, centres = _exact_tie(rng, 1.0, 0.0)
        if _device_label(x, centres) == 1:
            break
    data = np.vstack([x, centres[2:], centres[2:3]]).astype(np.float32)
    params = {"init_centres": centres, "max_iter": 1, "tol_sq": 0.0}
    result = run_in_memory(KERNEL, data, params, 4)
    assert result.counts is not None and list(result.counts[:2]) == [0, 1]
    expected = KERNEL.reference(data, params)  # without scikit-learn's duplicate-points warning
    KERNEL.check(result, expected)
    moved = np.array([1, 0, *result.counts[2:]])  # the point in centre 0 after all
    with pytest.raises(KernelMismatchError, match="cluster 0 has 1 points"):
        KERNEL.check(KMeansResult(result.centres, 1, False, moved), expected)


def test_the_replays_rule_matches_the_device_where_ties_are_everywhere():
    """Binary features put a third of the points at near ties: each is decided in vectors
    (every product exact), not one by one in rationals (220 times slower); and centres of
    subnormal size, where the bound must not round to 0."""
    rng = np.random.default_rng(0)
    x = rng.integers(0, 2, size=(20_000, 8)).astype(np.float32)
    centres = np.asarray(KERNEL.params_for_data(x[:4096], 0)["init_centres"])
    points = x.astype(np.float64)
    distances = cdist(points, centres, "sqeuclidean")
    labels = nearest_by_rule(points, centres, distances)
    np.testing.assert_array_equal(np.bincount(labels, minlength=8), cluster_sums(x, centres).counts)
    tiny_wrong = 0
    for _ in range(500):
        centres = rng.integers(1, 6, size=(2, 8)) * 10.0 ** rng.uniform(-163, -158)
        zero = np.zeros((1, 8))
        rule = nearest_by_rule(zero, centres, cdist(zero, centres, "sqeuclidean"))[0]
        tiny_wrong += rule != _device_label(zero.astype(np.float32), centres)
    assert tiny_wrong == 0


def test_the_replays_rule_matches_the_device_on_ordinary_data():
    rng = np.random.default_rng(5)
    for _ in range(5):
        centres = rng.normal(size=(8, 8)) * 3
        x = rng.normal(size=(20_000, 8)).astype(np.float32)
        points = x.astype(np.float64)
        labels = nearest_by_rule(points, centres, cdist(points, centres, "sqeuclidean"))
        np.testing.assert_array_equal(
            np.bincount(labels, minlength=8), cluster_sums(x, centres).counts
        )


def test_moving_the_data_far_from_the_origin_changes_nothing():
    """Integer points moved by 1e7 (exact in float32) cluster as they did at 0: the scores
    are measured from the first centre. Scored as ‖c‖² − 2c·x (8e14) they lost distances
    below 0.125 and took 92 passes instead of 76, with other clusters."""
    rng = np.random.default_rng(1)
    x = rng.integers(-20, 20, (4000, 8)).astype(np.float32)
    start = x[rng.choice(4000, 8, replace=False)].astype(np.float64)
    params = {"init_centres": start, "max_iter": 100, "tol_sq": 0.0}
    near = run_in_memory(KERNEL, x, params, 1000)
    shift = 1e7
    far = run_in_memory(
        KERNEL, x + np.float32(shift), {**params, "init_centres": start + shift}, 1000
    )
    assert far.iterations == near.iterations
    np.testing.assert_array_equal(far.counts, near.counts)
    np.testing.assert_allclose(far.centres - shift, near.centres, atol=1e-8)
    labels = assign_labels(x + np.float32(shift), near.centres + shift)
    np.testing.assert_array_equal(labels, assign_labels(x, near.centres))


def test_an_outlying_first_centre_does_not_blur_the_others():
    """Measured from the first centre (at 1e8) the scores of points near 0 rounded by
    several units, and two clusters 0.2 apart ran into one: 3,978 and 22 points instead of
    2,000 each. The origin is the centre of least norm."""
    rng = np.random.default_rng(3)
    blobs = [rng.normal(c, 0.01, (2000, 8)) for c in (-0.1, 0.1)]
    x = np.concatenate([[np.full(8, 1e8)], *blobs]).astype(np.float32)
    start = np.zeros((8, 8))
    start[0], start[1], start[2] = 1e8, -0.05, 0.05
    start[3:] = np.arange(10.0, 60.0, 10.0)[:, None]  # centres no point is near: kept
    params = {"init_centres": start, "max_iter": 100, "tol_sq": 0.0}
    result = run_in_memory(KERNEL, x, params, 1000)
    assert result.counts is not None
    assert result.counts.tolist() == [1, 2000, 2000, 0, 0, 0, 0, 0]
    labels = assign_labels(x, result.centres)
    assert np.bincount(labels, minlength=8).tolist() == result.counts.tolist()


def test_flat_points_that_are_not_whole_rows_are_an_error():
    params = {**KERNEL.params(0), "max_iter": 1}
    with pytest.raises(NdpkitError, match="not whole points of the centres' 8 features"):
        cluster_sums(np.zeros(12, np.float32), params["init_centres"])


def test_reduction_ratio(data_sets):
    """K × (d + 1) × 8 bytes per pass whatever the chunk: α = chunk bytes / 576."""
    data, params, _ = data_sets[0]
    partial = KERNEL.device(data, KERNEL.init(params), 0)
    assert isinstance(partial, ClusterSums)
    assert KERNEL.output_bytes(partial) == 8 * (8 + 1) * 8 == 576
    assert data.nbytes / KERNEL.output_bytes(partial) == pytest.approx(N_POINTS * 32 / 576)


def test_the_replay_on_threads_gives_one_threads_bits():
    """The replay scores chunks on several threads and adds their sums in chunk order. On
    points of widely spread magnitudes the float64 sums depend on their order (shown by a
    reversed order), and the threads' result is the same to the bit."""
    rng = np.random.default_rng(7)
    x = (rng.normal(size=(30_000, 8)) * 10 ** rng.uniform(-6, 3, (30_000, 1))).astype(np.float32)
    params = {**KERNEL.params_for_data(x[:4096], 0), "max_iter": 6}
    starts = list(range(0, len(x), 1000))

    def chunks():
        return ((i, x[i : i + 1000]) for i in starts)

    one, _ = lloyd_keeping_empty(chunks, params, threads=1)
    starts.reverse()
    backwards, _ = lloyd_keeping_empty(chunks, params, threads=1)
    starts.reverse()
    assert not np.array_equal(backwards.centres, one.centres)  # the order shows in the bits
    for threads in (2, 3):
        many, _ = lloyd_keeping_empty(chunks, params, threads=threads)
        np.testing.assert_array_equal(many.centres, one.centres)
        np.testing.assert_array_equal(many.counts, one.counts)
        assert many.iterations == one.iterations == 6


def test_a_chunk_that_fails_on_a_thread_fails_the_replay():
    params = KERNEL.params(0)

    def chunks():
        yield 0, np.zeros((10, 8), np.float32)
        yield 10, np.zeros((10, 5), np.float32)  # not the centres' width

    before = threading.active_count()
    with pytest.raises(ValueError, match="reshape"):
        lloyd_keeping_empty(chunks, params, threads=2)
    assert threading.active_count() == before  # the pool's threads are gone


def test_a_far_outlying_centre_neither_hides_ties_nor_sends_every_point_to_exact_scoring(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """The rounding bound was taken over every centre and the chunk's largest point: with
    one centre on a far outlier (1e7 among data of 1) nearly every point was scored in exact
    rationals (`evaluate --data` on 8 MiB: over a minute; at 1e10, 13 minutes). Per point
    and per centre, exact ties still go where the device sends them, and few points are
    scored exactly."""
    rng = np.random.default_rng(11)
    for trial in range(200):
        x, centres = _exact_tie(rng, 10.0 ** (trial % 5 - 2), [0.0, 1e3][trial % 2])
        centres[7] = 1e7 * (1 + rng.random(8))  # a centre on a far outlier
        points = x.astype(np.float64)
        distances = cdist(points, centres, "sqeuclidean")
        assert nearest_by_rule(points, centres, distances)[0] == _device_label(x, centres), trial

    exactly: list[int] = []
    real = kmeans_module._device_labels

    def counted(points: np.ndarray, centres: np.ndarray) -> np.ndarray:
        exactly.append(len(points))
        return real(points, centres)

    monkeypatch.setattr(kmeans_module, "_device_labels", counted)
    x = rng.normal(size=(20_000, 8)).astype(np.float32)
    x[123, 2] = 1e7
    centres = np.vstack([rng.normal(size=(7, 8)) * 3, x[123].astype(np.float64)])
    points = x.astype(np.float64)
    labels = nearest_by_rule(points, centres, cdist(points, centres, "sqeuclidean"))
    np.testing.assert_array_equal(np.bincount(labels, minlength=8), cluster_sums(x, centres).counts)
    assert sum(exactly) < 200, sum(exactly)


@pytest.mark.parametrize("seed", [9, 17, 30])
def test_points_float32_cannot_hold_are_refused_not_scored_by_another_rule(seed: int) -> None:
    """float64 points were scored by BLAS, whose rounding sent a point at a near tie to
    another centre than the device's rule, which the check replays: the run of a list of
    decimals on a 0.1 grid failed its own check (these seeds: centres, or iterations)."""
    kernel = KMeansKernel(features=2, clusters=3)
    points = np.random.default_rng(seed).integers(-4, 5, (40, 2)) * 0.1
    params = {"init_centres": points[:3], "max_iter": 50, "tol_sq": 0.0}
    with pytest.raises(NdpkitError, match=r"kmeans: point \d+ \(\[.*\], float64\) is not exact"):
        run_in_memory(kernel, points, params, 7)
    single = points.astype(np.float32)  # as the error says: the rounding asked for
    kernel.check(run_in_memory(kernel, single, params, 7), kernel.reference(single, params))


def test_points_float32_holds_are_scored_as_float32() -> None:
    """Integers, big-endian float32 and float64 copies of float32 values give the float32
    points' answer bit for bit."""
    kernel = KMeansKernel(features=2, clusters=3)
    single = (np.random.default_rng(9).integers(-4, 5, (40, 2)) * 0.1).astype(np.float32)
    params = {"init_centres": single[:3].astype(np.float64), "max_iter": 50, "tol_sq": 0.0}
    want = run_in_memory(kernel, single, params, 7)
    for same in (single.astype(np.float64), single.astype(">f4"), single.tolist()):
        got = run_in_memory(kernel, same, params, 7)
        np.testing.assert_array_equal(got.centres, want.centres)
        assert got.iterations == want.iterations
    whole = np.random.default_rng(1).integers(-40, 40, (40, 2))
    result = run_in_memory(kernel, whole, params, 7)
    np.testing.assert_array_equal(
        result.centres, run_in_memory(kernel, whole.astype(np.float32), params, 7).centres
    )
