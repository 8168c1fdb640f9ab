"""k-NN_d (RANS/RFNS §8.1): the k points nearest to a query, split the way the paper splits it.

- **Device** (step 1): the squared Euclidean distance of every point of the chunk to the query,
  Σ_j (x_j − q_j)², in float32 and in input order. A distance's original index is the chunk's
  `offset` plus its position, so only the offset (8 bytes per chunk) crosses the link, not an
  index per point: α = 4d bytes in / 4 bytes out = **d** (2, 6, 8). The paper prints α = 8 for
  all three; it matches k-NN_8. Sending an explicit int32 (int64) index per point would give
  α = d/2 (d/3).
- **Host** (step 2): the k smallest distances with their original indices, ties broken by the
  smaller index, as `Neighbours(indices, distances_sq)`.

The `knnD-topk` kernels (beyond the paper) keep only each chunk's k best on the device
(k × (int64 index + float32 distance) = 12k bytes), so α = 4d·n / 12k, orders of magnitude
larger. Both variants order points by the same total order (distance, index) over the same
float32 distances, so they return identical answers for any chunking.

Precision [choice]: float32 on the device (the data is float32; the distance of generated
points is exact to ≈ 1e-7 relative, far below the gaps between neighbours). The reference is
scikit-learn's brute-force euclidean search in float64. `check` compares distances with
rtol = 1e-5 (atol = 1e-12) and indices exactly, except inside groups of reference distances
that are equal within that tolerance, where any order of the tied points is accepted (and at
the k-th place any tied point).

Example:
    kernel = kernels()["knn8"]; x = kernel.generate(1 << 20, seed=0)
    answer = run_in_memory(kernel, x, kernel.params(0), chunk_records=4096)
    kernel.check(answer, kernel.reference(x, kernel.params(0)))
"""

from __future__ import annotations

from dataclasses import dataclass
from importlib import import_module
from typing import Any, NamedTuple

import numpy as np
from numpy.typing import NDArray
from sklearn.neighbors import NearestNeighbors  # type: ignore[import-untyped, unused-ignore]

from ndpkit.kernels.base import Kernel, KernelMismatchError

_core: Any = import_module("ndpkit._core")  # the compiled extension has no type stub

FEATURE_COUNTS = (2, 6, 8)
K_NEAREST = 10
BLOCK_ROWS = 16384
"""Rows per inner block: 16384 × 8 features × 4 B = 512 KiB, so a block stays in L2 while the
column loop reads it d times (measured 4.5 GB/s vs 1 GB/s for `((x - q)**2).sum(1)`)."""
DISTANCE_RTOL = 1e-5
DISTANCE_ATOL = 1e-12
_PARAMS_STREAM = 1

F32 = NDArray[np.float32]
I64 = NDArray[np.int64]


class Neighbours(NamedTuple):
    """The nearest points, nearest first: original indices and squared distances."""

    indices: I64
    distances_sq: NDArray[np.floating[Any]]


class Segment(NamedTuple):
    """The distances of consecutive points starting at original index `offset`."""

    offset: int
    distances_sq: F32


@dataclass(frozen=True)
class ReferenceNeighbours:
    """scikit-learn's k nearest plus the (k+1)-th distance (inf if there is none), so that
    `check` can tell whether the k-th place is a near tie."""

    neighbours: Neighbours
    next_distance_sq: float


def distances_sq(points: np.ndarray, query: F32) -> F32:
    """Squared distances of every point to `query` in float32: one fused pass in Rust
    (`ndp-kernels`), bit-identical to the numpy column-by-column version below."""
    points = np.ascontiguousarray(points, dtype=np.float32)
    query = np.ascontiguousarray(query, dtype=np.float32)
    if points.ndim != 2 or len(points) == 0:
        return distances_sq_numpy(points, query)
    out: F32 = _core.squared_distances_f32(points, query)
    return out


def distances_sq_numpy(points: np.ndarray, query: F32) -> F32:
    """The numpy formulation (block by block, column by column): the Rust loop's oracle."""
    points = np.ascontiguousarray(points, dtype=np.float32)
    out = np.empty(len(points), dtype=np.float32)
    scratch = np.empty(min(len(points), BLOCK_ROWS), dtype=np.float32)
    for start in range(0, len(points), BLOCK_ROWS):
        block = points[start : start + BLOCK_ROWS]
        _block_distances_sq(block, query, out[start : start + len(block)], scratch[: len(block)])
    return out


def _block_distances_sq(block: F32, query: F32, out: F32, scratch: F32) -> None:
    """Σ_j (x_j − q_j)² column by column, j in order: elementwise float32 operations only, so
    every point gets bit-identical distances whatever block or chunk it falls in."""
    np.subtract(block[:, 0], query[0], out=out)
    np.square(out, out=out)
    for j in range(1, block.shape[1]):
        np.subtract(block[:, j], query[j], out=scratch)
        np.square(scratch, out=scratch)
        np.add(out, scratch, out=out)


def select(indices: I64, dists_sq: F32, k: int) -> Neighbours:
    """The k smallest by (distance, index): a total order, so any grouping selects the same."""
    if len(dists_sq) > k:
        kth = np.partition(dists_sq, k - 1)[k - 1]
        keep = np.flatnonzero(dists_sq <= kth)
        indices, dists_sq = indices[keep], dists_sq[keep]
    order = np.lexsort((indices, dists_sq))[:k]
    return Neighbours(indices[order], dists_sq[order])


def empty_neighbours() -> Neighbours:
    return Neighbours(np.empty(0, dtype=np.int64), np.empty(0, dtype=np.float32))


def merge_block(best: Neighbours, block: F32, first_index: int, k: int) -> Neighbours:
    """`best` updated with one block of distances. Once k points are known, only points at or
    below the current k-th distance are candidates: one comparison per point instead of a
    partition (numpy's argpartition alone runs at ≈ 1.2 GB/s of k-NN_8 input)."""
    if len(best.indices) == k:
        positions = np.flatnonzero(block <= best.distances_sq[-1])
        if len(positions) == 0:
            return best
    else:
        positions = np.arange(len(block))
    return select(
        np.concatenate([best.indices, positions + first_index]),
        np.concatenate([best.distances_sq, block[positions]]),
        k,
    )


def top_k_of_segment(best: Neighbours, segment: Segment, k: int) -> Neighbours:
    for start in range(0, len(segment.distances_sq), BLOCK_ROWS):
        block = segment.distances_sq[start : start + BLOCK_ROWS]
        best = merge_block(best, block, segment.offset + start, k)
    return best


class Knn(Kernel):
    """k-NN over points with `features` float32 features; `device_topk` moves the top-k
    selection onto the device (the `-topk` kernels)."""

    dtype = np.dtype(np.float32)

    def __init__(self, features: int, k: int = K_NEAREST, device_topk: bool = False):
        if features < 1 or k < 1:
            raise ValueError(f"k-NN needs features ≥ 1 and k ≥ 1, got {features} and {k}")
        self.features = features
        self.k = k
        self.device_topk = device_topk
        self.record_shape = (features,)
        self.name = f"knn{features}" + ("-topk" if device_topk else "")
        where = "device keeps each chunk's k best" if device_topk else "device sends distances"
        self.description = f"k-NN, {features} float32 features, k = {k} ({where})"

    def generate(self, size_bytes: int, seed: int) -> np.ndarray:
        """Points uniform in the unit cube."""
        n_points = size_bytes // self.record_bytes
        rng = np.random.default_rng(seed)
        return rng.random((n_points, self.features), dtype=np.float32)

    def params(self, seed: int) -> dict[str, Any]:
        """A query uniform in the unit cube, from a stream independent of the data's."""
        rng = np.random.default_rng([seed, _PARAMS_STREAM])
        return {"query": rng.random(self.features, dtype=np.float32), "k": self.k}

    def init(self, params: dict[str, Any]) -> dict[str, Any]:
        if params["k"] != self.k:
            raise ValueError(f"{self.name} merges its partials for k = {self.k}, not {params['k']}")
        query = np.asarray(params["query"], dtype=np.float32)
        if query.shape != (self.features,):
            raise ValueError(f"{self.name} needs a query of shape ({self.features},)")
        return {"query": query, "k": self.k}

    def device(self, chunk: np.ndarray, state: Any, offset: int) -> Any:
        if self.device_topk:
            return self._device_topk(chunk, state["query"], offset)
        return [Segment(offset, distances_sq(chunk, state["query"]))]

    def _device_topk(self, chunk: np.ndarray, query: F32, offset: int) -> Neighbours:
        points = np.ascontiguousarray(chunk, dtype=np.float32)
        best = empty_neighbours()
        for start in range(0, len(points), BLOCK_ROWS):
            block = points[start : start + BLOCK_ROWS]
            best = merge_block(best, distances_sq(block, query), offset + start, self.k)
        return best

    def merge(self, partials: list[Any]) -> Any:
        """Segments are kept (the host sorts them, as in the paper); top-k partials shrink."""
        if self.device_topk:
            indices = np.concatenate([p.indices for p in partials] or [np.empty(0, np.int64)])
            dists = np.concatenate([p.distances_sq for p in partials] or [np.empty(0, np.float32)])
            return select(indices, dists, self.k)
        return sorted((s for p in partials for s in p), key=lambda s: s.offset)

    def host(self, merged: Any, state: Any) -> tuple[Any, bool]:
        if self.device_topk:
            return merged, True
        best = empty_neighbours()
        for segment in merged:
            best = top_k_of_segment(best, segment, self.k)
        return best, True

    def output_bytes(self, partial: Any) -> int:
        """Distances plus one 8-byte offset per segment; or 12 bytes per top-k candidate."""
        if self.device_topk:
            return int(partial.indices.nbytes + partial.distances_sq.nbytes)
        return sum(int(s.distances_sq.nbytes) + 8 for s in partial)

    def reference(self, data: np.ndarray, params: dict[str, Any]) -> ReferenceNeighbours:
        """scikit-learn brute-force euclidean search in float64 (k + 1 neighbours)."""
        points = np.asarray(data, dtype=np.float64).reshape(-1, self.features)
        k = min(self.k, len(points))
        asked = min(self.k + 1, len(points))
        if asked == 0:
            return ReferenceNeighbours(Neighbours(np.empty(0, np.int64), np.empty(0)), np.inf)
        search = NearestNeighbors(n_neighbors=asked, algorithm="brute", metric="euclidean")
        dist, idx = search.fit(points).kneighbors(np.asarray(params["query"], np.float64)[None])
        dists_sq = dist[0] ** 2
        following = float(dists_sq[k]) if asked > k else np.inf
        return ReferenceNeighbours(Neighbours(idx[0, :k].astype(np.int64), dists_sq[:k]), following)

    def check(self, result: Any, expected: Any) -> None:
        check_neighbours(result, expected)


def _close(a: np.ndarray, b: np.ndarray) -> NDArray[np.bool_]:
    scale = np.maximum(np.abs(a), np.abs(b))
    return np.asarray(np.abs(a - b) <= DISTANCE_ATOL + DISTANCE_RTOL * scale)


def check_neighbours(result: Neighbours, expected: ReferenceNeighbours) -> None:
    """Raise KernelMismatchError unless `result` is the reference's answer up to near ties."""
    want = expected.neighbours
    got_idx = np.asarray(result.indices)
    got_d = np.asarray(result.distances_sq, dtype=np.float64)
    if got_idx.shape != want.indices.shape or got_d.shape != want.indices.shape:
        raise KernelMismatchError(
            f"k-NN: {got_idx.shape[0]} neighbours, reference has {len(want.indices)}"
        )
    far = ~_close(got_d, want.distances_sq)
    if far.any():
        rank = int(np.argmax(far))
        raise KernelMismatchError(
            f"k-NN: distance² at rank {rank} is {got_d[rank]:.9g}, "
            f"reference {want.distances_sq[rank]:.9g} (rtol {DISTANCE_RTOL})"
        )
    _check_order(got_idx, got_d)
    _check_indices(got_idx, want, expected.next_distance_sq)


def _check_order(indices: np.ndarray, dists_sq: np.ndarray) -> None:
    """Nearest first, equal distances by smaller index, no point twice."""
    if len(np.unique(indices)) != len(indices):
        raise KernelMismatchError("k-NN: a point appears twice among the neighbours")
    later = (np.diff(dists_sq) < 0) | ((np.diff(dists_sq) == 0) & (np.diff(indices) < 0))
    if later.any():
        raise KernelMismatchError(f"k-NN: neighbours out of order at rank {int(np.argmax(later))}")


def _check_indices(got: np.ndarray, want: Neighbours, next_distance_sq: float) -> None:
    """Exact indices where the reference distances are distinct; equal sets inside a group of
    near ties; any tied point where the group reaches past the k-th place."""
    extended = np.append(want.distances_sq, next_distance_sq)
    tied_next = _close(extended[:-1], extended[1:])
    start = 0
    for rank in range(len(got)):
        if tied_next[rank] and rank + 1 < len(got):
            continue
        group = slice(start, rank + 1)
        open_ended = bool(tied_next[rank])
        if not open_ended and set(got[group].tolist()) != set(want.indices[group].tolist()):
            raise KernelMismatchError(
                f"k-NN: indices at ranks {start}..{rank} are {got[group].tolist()}, "
                f"reference {want.indices[group].tolist()}"
            )
        start = rank + 1


def kernels() -> dict[str, Kernel]:
    """knn2, knn6, knn8 (the paper's split) and knn2-topk, knn6-topk, knn8-topk."""
    found: dict[str, Kernel] = {}
    for features in FEATURE_COUNTS:
        for topk in (False, True):
            kernel = Knn(features, device_topk=topk)
            found[kernel.name] = kernel
    return found
