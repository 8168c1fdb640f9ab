"""k-NN_d kernels (RANS/RFNS §8.1) against scikit-learn, plus the runtime's invariances."""

from __future__ import annotations

import itertools

import numpy as np
import pytest

from ndpkit.errors import NdpkitError
from ndpkit.kernels import KernelMismatchError, get_kernel, run_in_memory
from ndpkit.kernels.knn import (
    FEATURE_COUNTS,
    K_NEAREST,
    TOPK_CHUNK_BYTES,
    Knn,
    Neighbours,
    ReferenceNeighbours,
    distances_sq,
    kernels,
)
from ndpkit.runtime.executor import RUN_CHUNK_BYTES, run_chunk_bytes

KERNELS = kernels()
NAMES = sorted(KERNELS)
PAPER_NAMES = [f"knn{d}" for d in FEATURE_COUNTS]
SIZE_BYTES = 1 << 20


def random_bounds(n, shards, seed):
    cuts = np.sort(np.random.default_rng(seed).integers(0, n + 1, shards - 1))
    return [0, *cuts.tolist(), n]


def assert_same(a: Neighbours, b: Neighbours):
    np.testing.assert_array_equal(a.indices, b.indices)
    np.testing.assert_array_equal(a.distances_sq, b.distances_sq)


@pytest.fixture(scope="module")
def data_sets():
    """(data, params, reference) per (name, seed), computed once."""
    found = {}
    for d in FEATURE_COUNTS:
        kernel = KERNELS[f"knn{d}"]
        for seed in (0, 1, 2):
            data, params = kernel.generate(SIZE_BYTES, seed), kernel.params(seed)
            found[d, seed] = (data, params, kernel.reference(data, params))
    return found


@pytest.mark.parametrize("name", NAMES)
@pytest.mark.parametrize("seed", [0, 1, 2])
@pytest.mark.parametrize("chunk_records", [4097, 1 << 30])
def test_matches_sklearn(data_sets, name, seed, chunk_records):
    kernel = KERNELS[name]
    data, params, expected = data_sets[kernel.features, seed]
    result = run_in_memory(kernel, data, params, chunk_records)
    kernel.check(result, expected)


@pytest.mark.parametrize("name", PAPER_NAMES)
def test_float32_ranks_like_float64_reference(data_sets, name):
    """On generated data the float32 device ranks exactly as sklearn's float64 search."""
    kernel = KERNELS[name]
    for seed in (0, 1, 2):
        data, params, expected = data_sets[kernel.features, seed]
        result = run_in_memory(kernel, data, params, 10_000)
        np.testing.assert_array_equal(result.indices, expected.neighbours.indices)
        np.testing.assert_allclose(result.distances_sq, expected.neighbours.distances_sq, rtol=1e-6)


@pytest.mark.parametrize("name", NAMES)
@pytest.mark.parametrize("chunk_records", [1, 3, 17, 1000])
def test_small_data_any_chunk_size(name, chunk_records):
    kernel = KERNELS[name]
    data, params = kernel.generate(300 * kernel.record_bytes, 5), kernel.params(5)
    result = run_in_memory(kernel, data, params, chunk_records)
    kernel.check(result, kernel.reference(data, params))


@pytest.mark.parametrize("d", FEATURE_COUNTS)
def test_chunking_and_sharding_invariance(data_sets, d):
    data, params, _ = data_sets[d, 0]
    baseline = run_in_memory(KERNELS[f"knn{d}"], data, params, len(data))
    for name in (f"knn{d}", f"knn{d}-topk"):
        for chunk_records, shards, seed in [(1, 1, 0), (999, 3, 1), (16385, 7, 2), (50_000, 2, 3)]:
            if chunk_records == 1:
                data_used = data[:2000]
                expected = run_in_memory(KERNELS[name], data_used, params, 2000)
            else:
                data_used, expected = data, baseline
            bounds = random_bounds(len(data_used), shards, seed)
            assert_same(
                run_in_memory(KERNELS[name], data_used, params, chunk_records, bounds), expected
            )


@pytest.mark.parametrize("name", NAMES)
def test_merge_is_associative_and_commutative(data_sets, name):
    kernel = KERNELS[name]
    data, params, _ = data_sets[kernel.features, 1]
    state = kernel.init(params)
    thirds = np.array_split(np.arange(len(data)), 3)
    a, b, c = (kernel.device(data[t[0] : t[-1] + 1], state, int(t[0])) for t in thirds)
    groupings = [
        kernel.merge([a, b, c]),
        kernel.merge([kernel.merge([a, b]), c]),
        kernel.merge([a, kernel.merge([b, c])]),
        kernel.merge([c, kernel.merge([b, a])]),
    ]
    answers = [kernel.host(m, state)[0] for m in groupings]
    for answer in answers[1:]:
        assert_same(answer, answers[0])


@pytest.mark.parametrize("d", FEATURE_COUNTS)
def test_topk_variant_equals_paper_split(data_sets, d):
    for seed in (0, 1, 2):
        data, params, _ = data_sets[d, seed]
        for chunk_records in (1001, 65536):
            full = run_in_memory(KERNELS[f"knn{d}"], data, params, chunk_records)
            topk = run_in_memory(KERNELS[f"knn{d}-topk"], data, params, chunk_records)
            assert_same(topk, full)


@pytest.mark.parametrize("name", NAMES)
def test_deterministic_by_seed(name):
    kernel = KERNELS[name]
    first, again = kernel.generate(50_000, 7), kernel.generate(50_000, 7)
    np.testing.assert_array_equal(first, again)
    assert first.dtype == np.float32
    assert first.shape == (50_000 // kernel.record_bytes, kernel.features)
    assert not np.array_equal(first, kernel.generate(50_000, 8))
    np.testing.assert_array_equal(kernel.params(7)["query"], kernel.params(7)["query"])
    assert not np.array_equal(kernel.params(7)["query"], kernel.params(8)["query"])
    assert kernel.params(7)["k"] == K_NEAREST


def test_ties_go_to_the_smaller_index():
    """Points on a coarse grid: many exactly equal distances, ordered by index."""
    kernel = Knn(2, k=25)
    rng = np.random.default_rng(3)
    data = (rng.integers(0, 5, (400, 2)) / 4).astype(np.float32)
    params = {"query": np.array([0.5, 0.5], dtype=np.float32), "k": 25}
    exact = ((data.astype(np.float64) - 0.5) ** 2).sum(axis=1)
    order = np.lexsort((np.arange(len(data)), exact))[:25]
    for name_topk in (False, True):
        kernel = Knn(2, k=25, device_topk=name_topk)
        for chunk_records in (1, 7, 400):
            result = run_in_memory(kernel, data, params, chunk_records)
            np.testing.assert_array_equal(result.indices, order)
            kernel.check(result, kernel.reference(data, params))


def test_fewer_points_than_k():
    kernel = KERNELS["knn6"]
    data, params = kernel.generate(4 * kernel.record_bytes, 0), kernel.params(0)
    for name in ("knn6", "knn6-topk"):
        result = run_in_memory(KERNELS[name], data, params, 3)
        assert len(result.indices) == 4
        KERNELS[name].check(result, KERNELS[name].reference(data, params))
    empty = data[:0]
    result = run_in_memory(kernel, empty, params, 3)
    assert len(result.indices) == 0
    kernel.check(result, kernel.reference(empty, params))


def test_distances_are_squared_euclidean():
    rng = np.random.default_rng(0)
    points = rng.random((40_000, 8), dtype=np.float32)
    query = rng.random(8, dtype=np.float32)
    want = ((points.astype(np.float64) - query) ** 2).sum(axis=1)
    np.testing.assert_allclose(distances_sq(points, query), want, rtol=1e-6)


@pytest.mark.parametrize("name", PAPER_NAMES)
def test_check_rejects_corrupted_results(data_sets, name):
    kernel = KERNELS[name]
    data, params, expected = data_sets[kernel.features, 0]
    good = run_in_memory(kernel, data, params, 50_000)
    kernel.check(good, expected)
    wrong_point = good.indices.copy()
    wrong_point[0] = (wrong_point[0] + 1) % len(data)
    swapped = good.indices.copy()
    swapped[[2, 3]] = swapped[[3, 2]]
    far = good.distances_sq.copy()
    far[4] *= 1.001
    corrupted = [
        Neighbours(wrong_point, good.distances_sq),
        Neighbours(swapped, good.distances_sq),
        Neighbours(good.indices, far),
        Neighbours(good.indices[:-1], good.distances_sq[:-1]),
        Neighbours(good.indices[::-1].copy(), good.distances_sq[::-1].copy()),
    ]
    for bad in corrupted:
        with pytest.raises(KernelMismatchError):
            kernel.check(bad, expected)


def test_check_sees_distances_of_data_at_a_small_scale():
    """An atol of 1e-12 on squared distances made every point of data at 3e-7 a tie: the
    ten farthest points passed as the nearest."""
    kernel = KERNELS["knn8"]
    scale = np.float32(3e-7)
    data = kernel.generate(10_000 * kernel.record_bytes, 0) * scale
    params = {"query": kernel.params(0)["query"] * scale, "k": 10}
    expected = kernel.reference(data, params)
    kernel.check(run_in_memory(kernel, data, params, 4096), expected)
    dists_sq = ((data.astype(np.float64) - params["query"]) ** 2).sum(axis=1)
    farthest = np.argsort(dists_sq, kind="stable")[-10:]
    with pytest.raises(KernelMismatchError, match="rank 0"):
        kernel.check(Neighbours(farthest, dists_sq[farthest]), expected)


def test_check_accepts_either_order_of_near_ties():
    indices = np.array([5, 9, 2], dtype=np.int64)
    tied = np.array([1.0, 2.0, 2.0 + 1e-9])
    near = Neighbours(np.array([2, 5, 9]), np.array([2.0 + 1e-9, 1.0, 2.0]))
    expected = ReferenceNeighbours(Neighbours(indices, tied), 3.0, near)
    kernel = KERNELS["knn2"]
    kernel.check(Neighbours(np.array([5, 2, 9]), np.array([1.0, 2.0, 2.0], np.float32)), expected)
    with pytest.raises(KernelMismatchError):
        kernel.check(Neighbours(np.array([5, 2, 7]), np.array([1, 2, 2], np.float32)), expected)
    # Point 7 also lies at distance² 2: when the tie reaches past the k-th place it may stand in.
    near_7 = Neighbours(np.array([2, 5, 7, 9]), np.array([2.0, 1.0, 2.0, 2.0]))
    at_boundary = ReferenceNeighbours(expected.neighbours, 2.0, near_7)
    kernel.check(Neighbours(np.array([5, 2, 7]), np.array([1, 2, 2], np.float32)), at_boundary)
    # ...but a point that is not tied may not, whatever distance the result claims for it.
    with pytest.raises(KernelMismatchError, match="point 8 at rank 2 is not among"):
        kernel.check(Neighbours(np.array([5, 2, 8]), np.array([1, 2, 2], np.float32)), at_boundary)
    off = Neighbours(np.array([2, 5, 7, 9]), np.array([2.0, 1.0, 2.0001, 2.0]))
    with pytest.raises(KernelMismatchError, match="point 7 at rank 2 has distance² 2"):
        kernel.check(
            Neighbours(np.array([5, 2, 7]), np.array([1, 2, 2], np.float32)),
            ReferenceNeighbours(expected.neighbours, 2.0, off),
        )


@pytest.mark.parametrize("d", FEATURE_COUNTS)
def test_reduction_ratio(d):
    """α = 4d / 4 = d exactly for the paper's split (the rows' order says where they
    belong), and 4d·n / (12 k) when the device keeps only its top k."""
    full, topk = KERNELS[f"knn{d}"], KERNELS[f"knn{d}-topk"]
    params = full.params(0)
    chunk = full.generate(100_000 * full.record_bytes, 0)
    out_full = full.output_bytes(full.device(chunk, full.init(params), 0))
    assert out_full == 4 * len(chunk)
    assert chunk.nbytes / out_full == d
    out_topk = topk.output_bytes(topk.device(chunk, topk.init(params), 0))
    assert out_topk == 12 * K_NEAREST
    assert chunk.nbytes / out_topk == pytest.approx(4 * d * 100_000 / (12 * K_NEAREST))
    assert chunk.nbytes / out_topk > 1000 * d


def test_names_and_records():
    assert set(NAMES) == {f"knn{d}{v}" for d in FEATURE_COUNTS for v in ("", "-topk")}
    for d in FEATURE_COUNTS:
        assert KERNELS[f"knn{d}"].record_shape == (d,)
        assert KERNELS[f"knn{d}"].record_bytes == 4 * d


def test_rejects_a_params_k_it_cannot_merge():
    kernel = KERNELS["knn8-topk"]
    with pytest.raises(NdpkitError, match="k = 10"):
        kernel.init({**kernel.params(0), "k": 5})


@pytest.mark.parametrize(
    ("params", "message"),
    [
        ({"k": 10}, "knn8: params have no 'query' \\(they have 'k'\\)"),
        ({"query": np.zeros(8, np.float32)}, "knn8: params have no 'k'"),
        ({"k": 10, "query": np.zeros(3, np.float32)}, r"query of shape \(8,\), got \(3,\)"),
    ],
)
def test_bad_params_are_an_ndpkit_error_naming_the_key(params, message):
    """A KeyError or ValueError used to come out of a worker."""
    with pytest.raises(NdpkitError, match=message):
        KERNELS["knn8"].init(params)


@pytest.mark.parametrize("d", FEATURE_COUNTS)
def test_topk_fold_equals_merging_each_chunks_device_partial(data_sets, d):
    """A device streaming its shard keeps one top-k (`fold`), which must select what merging
    every chunk's own top-k selects, for chunks of any sizes."""
    kernel = KERNELS[f"knn{d}-topk"]
    data, params, _ = data_sets[d, 1]
    state = kernel.init(params)
    assert kernel.folds and not KERNELS[f"knn{d}"].folds
    bounds = random_bounds(len(data), 9, seed=d)
    folded, partials = None, []
    for lo, hi in itertools.pairwise(bounds):
        folded = kernel.fold(folded, data[lo:hi], state, lo)
        partials.append(kernel.device(data[lo:hi], state, lo))
    assert_same(folded, kernel.merge(partials))


def test_a_kernel_that_does_not_fold_merges_its_device_partials():
    kmeans = get_kernel("kmeans")
    data, params = kmeans.generate(1 << 16, 0), kmeans.params(0)
    state = kmeans.init(params)
    first = kmeans.fold(None, data[:100], state, 0)
    both = kmeans.fold(first, data[100:], state, 100)
    expected = kmeans.merge(
        [kmeans.device(data[:100], state, 0), kmeans.device(data[100:], state, 100)]
    )
    assert not kmeans.folds
    np.testing.assert_array_equal(first.sums, kmeans.device(data[:100], state, 0).sums)
    np.testing.assert_array_equal(both.sums, expected.sums)
    np.testing.assert_array_equal(both.counts, expected.counts)


class _KnnOwnChunk(Knn):
    """A user's k-NN that asks for its own chunk (`Kernel.chunk_bytes`)."""

    chunk_bytes = 4 * 2**20


@pytest.mark.parametrize("device_topk", [True, False])
def test_a_subclass_keeps_its_own_chunk(device_topk: bool) -> None:
    """Knn's constructor set an instance attribute (128 MiB for the top-k split, else
    None), which hid a subclass's class attribute."""
    assert run_chunk_bytes(_KnnOwnChunk(8, device_topk=device_topk)) == 4 * 2**20
    assert run_chunk_bytes(Knn(8, device_topk=device_topk)) == (
        TOPK_CHUNK_BYTES if device_topk else RUN_CHUNK_BYTES
    )


class _KnnChunkFirst(Knn):
    """A user's k-NN that sets its chunk on the instance before Knn's constructor runs."""

    def __init__(self, features: int, device_topk: bool) -> None:
        self.chunk_bytes = 2 * 2**20
        super().__init__(features, device_topk=device_topk)


@pytest.mark.parametrize("device_topk", [True, False])
def test_a_chunk_set_before_the_constructor_stands(device_topk: bool) -> None:
    # It was overwritten with TOPK_CHUNK_BYTES for the top-k split.
    assert run_chunk_bytes(_KnnChunkFirst(8, device_topk)) == 2 * 2**20
