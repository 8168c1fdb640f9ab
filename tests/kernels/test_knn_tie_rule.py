"""k-NN's documented tie rule, tested against an oracle of its own: `Knn.check` accepts any of
the points tied at the k-th place (scikit-learn, its reference, breaks ties its own way), so
a kernel that broke ties to the larger index would pass it.

The rule (docs/kernels.md, `ndpkit.kernels.knn`): the k points of smallest float32 squared
distance Σ_j (x_j − q_j)², summed over j in order, ties to the smaller index. The data here
lies on a grid where every such float32 sum is exact (each term is 0 or 1/4), so the rule is
also the exact one, and the oracle is a numpy lexsort by (distance, index)."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from ndpkit.kernels import get_kernel, knn, run_in_memory
from ndpkit.kernels.knn import Neighbours
from ndpkit.runtime import LocalExecutor, import_dataset

K = 10
QUERY = np.full(8, 0.5, np.float32)


def tied_points() -> np.ndarray:
    """600 points with coordinates in {0, 0.5, 1} (squared distance to QUERY: a quarter of
    the coordinates off 0.5, so hundreds of exact ties), then 40 exact copies of points
    among the nearest ones, so duplicates tie at the k-th place too."""
    rng = np.random.default_rng(11)
    grid = rng.integers(0, 3, (600, 8)).astype(np.float32) / 2
    near = np.argsort(((grid - QUERY) ** 2).sum(axis=1), kind="stable")[:20]
    return np.concatenate([grid, grid[np.repeat(near, 2)]])


def rule_oracle(points: np.ndarray, query: np.ndarray, k: int) -> Neighbours:
    """The k nearest by the documented rule: float32 Σ_j (x_j − q_j)² in feature order,
    ties to the smaller index (checked here to equal the float64 distance on this data)."""
    diff32 = points.astype(np.float32) - query.astype(np.float32)
    dist32 = np.zeros(len(points), np.float32)
    for j in range(points.shape[1]):
        dist32 += diff32[:, j] * diff32[:, j]
    exact = ((points.astype(np.float64) - query.astype(np.float64)) ** 2).sum(axis=1)
    np.testing.assert_array_equal(dist32.astype(np.float64), exact)  # no rounding to argue
    order = np.lexsort((np.arange(len(points)), dist32))[:k]
    return Neighbours(order.astype(np.int64), dist32[order])


def assert_follows_rule(answer: Neighbours, points: np.ndarray) -> None:
    want = rule_oracle(points, QUERY, K)
    np.testing.assert_array_equal(answer.indices, want.indices)
    np.testing.assert_array_equal(answer.distances_sq, want.distances_sq)


def test_the_data_ties_past_the_kth_place() -> None:
    """What makes the test worth having: the k-th distance is shared by points past k, with
    duplicates among them, and `check` accepts ties broken the other way."""
    points = tied_points()
    want = rule_oracle(points, QUERY, K)
    exact = ((points.astype(np.float64) - 0.5) ** 2).sum(axis=1)
    tied_at_kth = np.flatnonzero(exact == want.distances_sq[-1])
    assert len(tied_at_kth) > K
    assert len(np.unique(points[tied_at_kth], axis=0)) < len(tied_at_kth)  # duplicates
    # The tied points of larger index kept (listed in index order, which `check` does ask
    # for): scikit-learn's reference and `check` cannot tell.
    kept = np.sort(np.lexsort((-np.arange(len(points)), exact))[:K])
    kept = kept[np.lexsort((kept, exact[kept]))].astype(np.int64)
    assert not np.array_equal(kept, want.indices)
    other_way = Neighbours(kept, want.distances_sq)
    kernel = get_kernel("knn8")
    kernel.check(other_way, kernel.reference(points, {"query": QUERY, "k": K}))
    with pytest.raises(AssertionError):
        assert_follows_rule(other_way, points)


@pytest.mark.parametrize("name", ["knn8", "knn8-topk"])
def test_a_kernel_breaking_ties_the_other_way_fails_the_rule(
    name: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The oracle tells a kernel that keeps the tied points of larger index (listed in index
    order, as `check` asks) from one that follows the rule, through both splits: their
    selection (`select`) and the top-k split's device fold (in Rust, replaced here by the
    same fold over `select`) reversed."""

    def larger_index_first(indices: np.ndarray, dists_sq: np.ndarray, k: int) -> Neighbours:
        order = np.lexsort((-indices, dists_sq))[:k]
        order = order[np.lexsort((indices[order], dists_sq[order]))]
        return Neighbours(indices[order], dists_sq[order])

    def fold(
        name: str, points: np.ndarray, query: np.ndarray, offset: int, k: int, best: Neighbours
    ) -> Neighbours:
        dists = knn.distances_sq(points, query)
        at = np.arange(offset, offset + len(dists), dtype=np.int64)
        both = np.concatenate([best.indices, at]), np.concatenate([best.distances_sq, dists])
        return larger_index_first(*both, k)

    monkeypatch.setattr(knn, "select", larger_index_first)
    monkeypatch.setattr(knn, "fold_top_k", fold)
    points = tied_points()
    answer = run_in_memory(get_kernel(name), points, {"query": QUERY, "k": K}, 64)
    with pytest.raises(AssertionError):
        assert_follows_rule(answer, points)


@pytest.mark.parametrize("name", ["knn8", "knn8-topk"])
@pytest.mark.parametrize("chunk_records", [7, 64, 640])
def test_in_memory_ties_go_to_the_smaller_index(name: str, chunk_records: int) -> None:
    points = tied_points()
    answer = run_in_memory(get_kernel(name), points, {"query": QUERY, "k": K}, chunk_records)
    assert_follows_rule(answer, points)


@pytest.mark.parametrize("name", ["knn8", "knn8-topk"])
def test_local_executor_ties_go_to_the_smaller_index(name: str, tmp_path: Path) -> None:
    """Over 3 devices in shards of 50 points, read 13 points at a time by 2 workers: the
    engines' answers merge to the same first k."""
    points = tied_points()
    source = tmp_path / "points.npy"
    np.save(source, points)
    dataset = import_dataset(source, 3, tmp_path / "ds", name, shard_bytes=50 * 32)
    with LocalExecutor(2) as executor:
        run = executor.run(get_kernel(name), dataset, {"query": QUERY, "k": K}, chunk_bytes=13 * 32)
    assert_follows_rule(run.result, points)
