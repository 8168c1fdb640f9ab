"""k-NN_d (RANS/RFNS §8.1): the k points nearest to a query, split the way the paper splits it.

- **Device** (step 1): the squared Euclidean distance of every point of the chunk to the query,
  Σ_j (x_j − q_j)², in float32 and in input order. A distance's original index is the chunk's
  `offset` plus its position, so only the offset (8 bytes per chunk) crosses the link, not an
  index per point: α = 4d bytes in / 4 bytes out = **d** (2, 6, 8). The paper prints α = 8 for
  all three; it matches k-NN_8. Sending an explicit int32 (int64) index per point would give
  α = d/2 (d/3).
- **Host** (step 2): the k smallest distances with their original indices, ties broken by the
  smaller index, as `Neighbours(indices, distances_sq)`.

The `knnD-topk` kernels (beyond the paper) keep only the k best on the device, folding chunk
after chunk into one top-k per engine (`fold`; k × (int64 index + float32 distance) = 12k
bytes), so α = 4d·n / 12k, orders of magnitude larger. Both variants order points by the
same total order (distance, index) over the same float32 distances, so they return identical
answers for any chunking.

Precision [choice]: float32 on the device (the data is float32; the distance of generated
points is exact to ≈ 1e-7 relative, far below the gaps between neighbours). A squared distance
must stay below float32's largest value (3.4e38), e.g. every |x_j − q_j| below 1.8e19 / √d
(6.5e18 for d = 8): a chunk whose distance overflows, or that holds a NaN or an infinite
coordinate, is refused with an `NdpkitError` naming the point, never ranked. The reference is
scikit-learn's brute-force euclidean search in float64. `check` compares distances with
rtol = 2e-6 (atol = 2⁻¹¹⁸; an infinite distance matches only an infinite one, NaN nothing)
and indices exactly,
except inside groups of reference distances that are equal within that tolerance, where any
order of the tied points is accepted: a float32 distance of d ≤ 8 terms is within (d + 2)
units of rounding (2⁻²⁴) of the exact one, so only points within twice that (1.2e-6 for d
= 8) can come out of the device in the other order (rtol 1e-5 let a swap of points that
float32 tells apart pass); a group that reaches past the k-th place may hold any
of the points tied with the k-th distance (`ReferenceNeighbours.near`). Every returned
distance must also match its own point's reference distance, so a point from elsewhere in
the data, or an index past its end, is never accepted.

Rows [choice]: the paper's split is a `RowKernel` (`KnnRows`): the runtime may have every
engine write its points' float32 distances in place into one rows arena, and the host walks
those rows block by block (`top_k_of_segment`), holding a block and the current k best, not a
copy of the distances. `device`/`merge` give the same answer (the runtime's fallback).

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

from ndpkit.errors import NdpkitError, whole_number
from ndpkit.kernels.base import (
    Kernel,
    KernelMismatchError,
    RowKernel,
    RowSpec,
    check_out,
    checked_records,
    exact_float32,
    joblib_quiet,
    param,
)
from ndpkit.kernels.parts import checked_seed, records_in
from ndpkit.native import native_input

_core: Any = import_module("ndpkit._core")  # the compiled extension has no type stub

FEATURE_COUNTS = (2, 6, 8)
K_NEAREST = 10
BLOCK_ROWS = 16384
"""Rows per inner block: 16384 × 8 features × 4 B = 512 KiB, so a block stays in L2 while the
column loop reads it d times (measured 4.5 GB/s vs 1 GB/s for `((x - q)**2).sum(1)`)."""
DISTANCE_RTOL = 2e-6
"""Distances within this of each other are a tie; a distance within it of the reference's
matches: about twice the 2 × (d + 2) × 2⁻²⁴ that float32 rounding can put between two
points' distances for d = 8 (module docs)."""
DISTANCE_ATOL = 2.0**-118
"""256 × float32's smallest normal number. A float32 squared distance is within a few units
of rounding of the exact one, relatively, except for products that fall below the normal
range: each is off by at most 2⁻¹⁵⁰, or by up to 2⁻¹²⁶ where a library has set the CPU to
flush subnormals to zero, so up to 256 features are covered. (An atol of 1e-12 made every
point "tied" with every other in data whose coordinates are about 1e-6.)"""
FLOAT32_MAX = float(np.finfo(np.float32).max)
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
    `check` can tell whether the k-th place is a near tie; and `near`: points whose distance is
    within tolerance of the k-th (`within_kth`), ascending by index, with their distances. The
    whole-data reference lists every such point; the streamed one (`ndpkit.runtime.verify`)
    only those among the checked result's indices, which are all `check` looks up."""

    neighbours: Neighbours
    next_distance_sq: float
    near: Neighbours


def distances_sq(points: np.ndarray, query: F32, out: F32 | None = None) -> F32:
    """Squared distances of every point to `query` in float32: one fused pass in Rust
    (`ndp-kernels`), bit-identical to the numpy column-by-column version below; written into
    `out` (C-contiguous float32, one per point) if given."""
    points = native_input(points, np.float32)
    query = native_input(query, np.float32)
    if points.ndim != 2:
        raise NdpkitError(f"distances_sq: points must be 2-D (n, d), got shape {points.shape}")
    if query.ndim != 1:  # (1, d) was the binding's "dimensionality mismatch: from=2, to=1"
        raise NdpkitError(f"distances_sq: the query must be 1-D (d,), got shape {query.shape}")
    check_out(out, np.float32, "distances_sq", (len(points),))
    if len(points) == 0:
        distances = distances_sq_numpy(points, query)
        if out is None:
            return distances
        out[...] = distances
        return out
    written: F32 = _core.squared_distances_f32(points, query, out)
    return written


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


def refuse_non_finite(
    name: str, dists_sq: F32, points: np.ndarray, query: F32, offset: int
) -> None:
    """Raise `NdpkitError` if a distance is not finite: an infinite distance would tie with
    every other overflowed one and a NaN would never be ranked, so either answer is wrong.
    One max over the distances (NaN propagates) finds out; only then is the cause looked up."""
    if len(dists_sq) == 0 or np.isfinite(dists_sq.max()):
        return
    where = int(np.flatnonzero(~np.isfinite(dists_sq))[0])
    if not np.isfinite(query).all():
        raise NdpkitError(f"{name}: the query {query.tolist()} has a non-finite coordinate")
    if not np.isfinite(points[where]).all():
        raise NdpkitError(
            f"{name}: point {offset + where} has a non-finite coordinate "
            f"({points[where].tolist()}); k-NN needs finite points"
        )
    limit = (FLOAT32_MAX / len(query)) ** 0.5
    raise NdpkitError(
        f"{name}: the squared distance of point {offset + where} to the query overflows "
        f"float32 (above {FLOAT32_MAX:.3g}); k-NN computes distances in float32, so its data "
        f"must keep Σ (x_j − q_j)² below that, e.g. every |x_j − q_j| below {limit:.2g}"
    )


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
    elif len(block) > k:
        positions = np.flatnonzero(block <= _kth_bound(block, k))
    else:
        positions = np.arange(len(block))
    return select(
        np.concatenate([best.indices, positions + first_index]),
        np.concatenate([best.distances_sq, block[positions]]),
        k,
    )


def fold_top_k(
    name: str, points: F32, query: F32, offset: int, k: int, best: Neighbours
) -> Neighbours:
    """`best` updated with every point of `points` (2-D, C-contiguous float32; the first is
    point `offset`): one Rust call (`ndp-kernels` `topk`), the same distances and the same
    (distance, index) order as `merge_block` block by block, without a numpy call per block
    (which cost a fifth of the top-k split's pass). A non-finite distance raises as
    `refuse_non_finite` does, naming the point."""
    indices, dists_sq, bad = _core.fold_top_k_f32(
        native_input(points, np.float32),
        native_input(query, np.float32),
        offset,
        k,
        np.ascontiguousarray(best.indices, dtype=np.int64),
        np.ascontiguousarray(best.distances_sq, dtype=np.float32),
    )
    if bad >= 0:
        row = points[bad : bad + 1]
        refuse_non_finite(name, distances_sq(row, query), row, query, offset + bad)
        raise AssertionError(f"{name}: point {offset + bad} has a finite distance after all")
    return Neighbours(indices, dists_sq)


BOUND_PREFIX = 512
"""Distances whose k-th smallest bounds a block's first selection (see `_kth_bound`)."""


def _kth_bound(block: F32, k: int) -> float:
    """A distance at or above the block's k-th smallest: the k-th smallest of its first
    BOUND_PREFIX (k of any of its points bound it from above). Only the points at or below
    it are then selected, not the whole block: a top-k with fewer than k points (a device's
    first block, or any block of `device` on a chunk alone) would otherwise partition it."""
    prefix = block[: max(k, BOUND_PREFIX)]
    return float(np.partition(prefix, k - 1)[k - 1])


def top_k_of_segment(best: Neighbours, segment: Segment, k: int) -> Neighbours:
    """`best` updated with a segment, BLOCK_ROWS distances at a time: beyond the segment (which
    may be the runtime's rows arena, in memory or on disk) it holds one block's candidates."""
    for start in range(0, len(segment.distances_sq), BLOCK_ROWS):
        block = segment.distances_sq[start : start + BLOCK_ROWS]
        best = merge_block(best, block, segment.offset + start, k)
    return best


def within_kth(dists_sq: np.ndarray, kth_sq: float) -> NDArray[np.bool_]:
    """Distances at or below the k-th, or equal to it within the check's tolerance."""
    dists_sq = np.asarray(dists_sq, dtype=np.float64)
    kth = np.full_like(dists_sq, kth_sq)
    return np.asarray((dists_sq <= kth_sq) | _close(dists_sq, kth))


TOPK_CHUNK_BYTES = 128 * 2**20
"""The top-k split's chunk through the runtime (`Kernel.chunk_bytes`)."""


def _declares_chunk_bytes(cls: type) -> bool:
    """Whether a subclass of `Knn` (`cls` or a class between it and `Knn`) sets its own
    `Kernel.chunk_bytes`."""
    below = cls.__mro__[: cls.__mro__.index(Knn)]
    return any("chunk_bytes" in vars(c) for c in below)


class Knn(Kernel):
    """k-NN over points with `features` float32 features; `device_topk` moves the top-k
    selection onto the device (the `-topk` kernels). `KnnRows` is the paper's split with
    rows written in place; `Knn(d)` is the same split through partials only."""

    dtype = np.dtype(np.float32)

    def __init__(self, features: int, k: int = K_NEAREST, device_topk: bool = False):
        # As Python ints: a numpy integer failed in a data set's manifest, after its shards.
        self.features = whole_number(features, "features", "a whole number ≥ 1 (k-NN)", least=1)
        self.k = whole_number(k, "k", "a whole number ≥ 1 (k-NN)", least=1)
        self.device_topk = device_topk
        self.folds = device_topk  # the top-k split streams its shard with one top-k (`fold`)
        # Its fold keeps 64 KiB of distances whatever the chunk: fewer, larger chunks
        # (benchmarks/README.md, "k-NN's top-k split in 128 MiB chunks"). A subclass's own
        # `chunk_bytes` stands, as a class attribute (an instance attribute here would hide
        # it) or set on the instance before this constructor ran.
        own = "chunk_bytes" in vars(self) or _declares_chunk_bytes(type(self))
        if device_topk and not own:
            self.chunk_bytes = TOPK_CHUNK_BYTES
        self.record_shape = (self.features,)
        self.name = f"knn{features}" + ("-topk" if device_topk else "")
        self.paper_app = f"knn{features}" if device_topk else ""
        where = "device keeps its k best" if device_topk else "device sends distances"
        self.description = f"k-NN, {features} float32 features, k = {k} ({where})"

    def generate(self, size_bytes: int, seed: int) -> np.ndarray:
        """Points uniform in the unit cube."""
        n_points = records_in(size_bytes, self.record_bytes)
        rng = np.random.default_rng(checked_seed(seed))
        return rng.random((n_points, self.features), dtype=np.float32)

    def params(self, seed: int) -> dict[str, Any]:
        """A query uniform in the unit cube, from a stream independent of the data's."""
        rng = np.random.default_rng([checked_seed(seed), _PARAMS_STREAM])
        return {"query": rng.random(self.features, dtype=np.float32), "k": self.k}

    def init(self, params: dict[str, Any]) -> dict[str, Any]:
        k = param(params, "k", self.name)
        # A number equal to the kernel's k: "10" was refused as "for k = 10, not 10", and an
        # array was a ValueError from numpy.
        if isinstance(k, bool | str) or np.ndim(k) != 0 or k != self.k:
            raise NdpkitError(f"{self.name} merges its partials for k = {self.k}, not {k!r}")
        query = self._query(params)
        if query.shape != (self.features,):
            raise NdpkitError(
                f"{self.name} needs a query of shape ({self.features},), got {query.shape}"
            )
        return {"query": query, "k": self.k}

    def _query(self, params: dict[str, Any]) -> np.ndarray:
        """The query in float32, the device's precision, or an NdpkitError where float32
        cannot hold it exactly: a float64 query was rounded without a word, and points on
        either side of it came out in the wrong order."""
        query = exact_float32(
            param(params, "query", self.name),
            f"{self.name}: the query",
            "k-NN computes distances in float32",
        )
        # Refused here, not only once a distance came out NaN: over no points there was none
        # (an answer of no neighbours), and the reference's was scikit-learn's "Input X
        # contains NaN".
        if not np.isfinite(query).all():
            raise NdpkitError(
                f"{self.name}: the query {query.tolist()} has a non-finite coordinate"
            )
        return query

    def _points(self, data: np.ndarray) -> np.ndarray:
        """`data` as whole records whose coordinates float32 holds exactly (float32, or
        integers of at most 16 bits): float64 points were rounded to float32 silently, and
        the neighbours of points closer than float32's spacing came out in the wrong order."""
        points = checked_records(data, self.record_shape, self.name)
        if not np.can_cast(points.dtype, np.float32, casting="safe"):
            raise NdpkitError(
                f"{self.name}: points of dtype {points.dtype} do not fit float32 exactly, and "
                "k-NN computes distances in float32; convert them first (points.astype("
                "np.float32)) if rounding them is what you want"
            )
        return points

    def device(self, chunk: np.ndarray, state: Any, offset: int) -> Any:
        if self.device_topk:
            return self._device_topk(chunk, state["query"], offset)
        dists = distances_sq(self._points(chunk), state["query"])
        refuse_non_finite(self.name, dists, chunk, state["query"], offset)
        return [Segment(offset, dists)]

    def fold(self, partial: Any, chunk: np.ndarray, state: Any, offset: int) -> Any:
        """The top-k split: the chunk's points merged into the engine's top-k so far, so a
        point above its k-th distance is no candidate (starting every chunk afresh made a
        selection of most blocks and cost a fifth of the pass)."""
        if not self.device_topk:
            return super().fold(partial, chunk, state, offset)
        best = empty_neighbours() if partial is None else partial
        return self._device_topk(chunk, state["query"], offset, best)

    def _device_topk(
        self, chunk: np.ndarray, query: F32, offset: int, best: Neighbours | None = None
    ) -> Neighbours:
        points = np.ascontiguousarray(self._points(chunk), dtype=np.float32)
        best = empty_neighbours() if best is None else best
        if points.ndim == 2 and len(points):
            return fold_top_k(self.name, points, query, offset, self.k, best)
        for start in range(0, len(points), BLOCK_ROWS):
            block = points[start : start + BLOCK_ROWS]
            dists = distances_sq(block, query)
            refuse_non_finite(self.name, dists, block, query, offset + start)
            best = merge_block(best, dists, offset + start, self.k)
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
        """The distances (in record order, so a segment's offset is not sent: α = d whatever
        the size, as the executor counts rows written in place); or 12 bytes per top-k
        candidate."""
        if self.device_topk:
            return int(partial.indices.nbytes + partial.distances_sq.nbytes)
        return sum(int(s.distances_sq.nbytes) for s in partial)

    def output_limit_bytes(self) -> int | None:
        """The top-k split's k candidates (an int64 index and a float32 distance each); the
        paper split's distances grow with the input."""
        return self.k * (8 + 4) if self.device_topk else None

    def reference(self, data: np.ndarray, params: dict[str, Any]) -> ReferenceNeighbours:
        """scikit-learn brute-force euclidean search in float64 (k + 1 neighbours), and, when
        the (k+1)-th ties with the k-th, its radius search for every point tied with it."""
        with joblib_quiet():
            from sklearn.neighbors import (  # type: ignore[import-untyped, unused-ignore]  # noqa: PLC0415 (0.7 s to import: reference only)
                NearestNeighbors,
            )

        points = self._points(data).astype(np.float64)
        if not np.isfinite(points).all():
            bad = int(np.flatnonzero(~np.isfinite(points).all(axis=1))[0])
            raise NdpkitError(f"{self.name}: point {bad} has a non-finite coordinate")
        k = min(self.k, len(points))
        asked = min(self.k + 1, len(points))
        if asked == 0:
            nobody = Neighbours(np.empty(0, np.int64), np.empty(0))
            return ReferenceNeighbours(nobody, np.inf, nobody)
        # Moved so that the query is the origin, in float64 (exact for float32 coordinates
        # within 2²⁹ of each other's scale): scikit-learn's brute force computes
        # ‖x‖² − 2x·q + ‖q‖², which loses every digit of a short distance between points far
        # from the origin (map coordinates: rank 0 off by 2.5e-4, relatively).
        query = self._query(params).astype(np.float64)
        if query.shape != (self.features,):  # `init` checks it; `reference` may come first
            raise NdpkitError(
                f"{self.name}: the query has shape {query.shape}, not ({self.features},)"
            )
        points -= query  # in place: `points` is this function's float64 copy
        query = np.zeros((1, len(query)))
        search = NearestNeighbors(n_neighbors=asked, algorithm="brute", metric="euclidean")
        dist, idx = search.fit(points).kneighbors(query)
        dists_sq = dist[0] ** 2
        following = float(dists_sq[k]) if asked > k else np.inf
        nearest = Neighbours(idx[0, :k].astype(np.int64), dists_sq[:k])
        kth_sq = float(dists_sq[k - 1])
        if within_kth(np.array([following]), kth_sq)[0]:
            near = _near(search, query, kth_sq)
        else:  # no tie past the k-th place: the k nearest are all the near points
            order = np.argsort(nearest.indices, kind="stable")
            near = Neighbours(nearest.indices[order], nearest.distances_sq[order])
        return ReferenceNeighbours(nearest, following, near)

    def check(self, result: Any, expected: Any) -> None:
        check_neighbours(result, expected)


class KnnRows(Knn, RowKernel):
    """The paper's split as a `RowKernel`: one float32 distance per point, written in place by
    the runtime; the same answer as `Knn(features)`'s partials, bit for bit."""

    def __init__(self, features: int, k: int = K_NEAREST):
        super().__init__(features, k, device_topk=False)

    def row_spec(self, state: Any) -> RowSpec:
        return RowSpec(np.dtype(np.float32))

    def device_into(self, chunk: np.ndarray, state: Any, offset: int, out: np.ndarray) -> None:
        """The distances straight into `out` (a chunk's slice of the rows arena is
        C-contiguous); into any other `out` BLOCK_ROWS points at a time, so only a block
        (64 KiB) is ever copied."""
        self._points(chunk)
        query = state["query"]
        if out.flags.c_contiguous and out.flags.aligned and out.flags.writeable:
            distances_sq(chunk, query, out)
        else:
            for start in range(0, len(chunk), BLOCK_ROWS):
                block = chunk[start : start + BLOCK_ROWS]
                out[start : start + len(block)] = distances_sq(block, query)
        refuse_non_finite(self.name, out, chunk, query, offset)

    def rows_merged(self, rows: np.ndarray, state: Any) -> list[Segment]:
        """All the rows as one segment, not copied: `host` walks it block by block."""
        return [Segment(0, rows)]


def _near(search: Any, query: np.ndarray, kth_sq: float) -> Neighbours:
    """Every point within tolerance of the k-th distance (`within_kth`), by index: a radius
    search a little wider than the tolerance, then the exact rule on its squared distances."""
    bound_sq = (kth_sq + DISTANCE_ATOL) / (1 - DISTANCE_RTOL)  # d ≤ kth + atol + rtol·d
    dist, idx = search.radius_neighbors(query, radius=np.sqrt(bound_sq) * (1 + 1e-9))
    dists_sq, indices = np.asarray(dist[0]) ** 2, np.asarray(idx[0], dtype=np.int64)
    keep = within_kth(dists_sq, kth_sq)
    order = np.argsort(indices[keep], kind="stable")
    return Neighbours(indices[keep][order], dists_sq[keep][order])


def _close(a: np.ndarray, b: np.ndarray) -> NDArray[np.bool_]:
    """Equal within rtol/atol; an infinite value is close only to the same infinity (a scale
    of inf would make anything close to it), NaN to nothing."""
    a, b = np.asarray(a, dtype=np.float64), np.asarray(b, dtype=np.float64)
    with np.errstate(invalid="ignore", over="ignore"):
        scale = np.maximum(np.abs(a), np.abs(b))
        near = np.abs(a - b) <= DISTANCE_ATOL + DISTANCE_RTOL * scale
    return np.asarray((np.isfinite(a) & np.isfinite(b) & near) | (np.isinf(a) & (a == b)))


def check_neighbours(result: Neighbours, expected: ReferenceNeighbours) -> None:
    """Raise KernelMismatchError unless `result` is the reference's answer up to near ties."""
    # the arguments swapped, or the run's answer for the reference, ended in
    # "'Neighbours' object has no attribute 'neighbours'"
    if not isinstance(expected, ReferenceNeighbours):
        raise NdpkitError(
            "k-NN check: expected must be the reference's answer, "
            f"kernel.reference(data, params), got {type(expected).__name__}"
        )
    if not (hasattr(result, "indices") and hasattr(result, "distances_sq")):
        raise NdpkitError(
            f"k-NN check: result must be the kernel's Neighbours (run.result), got "
            f"{type(result).__name__}"
        )
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
    _check_own_distances(got_idx, got_d, expected.near)


def _check_order(indices: np.ndarray, dists_sq: np.ndarray) -> None:
    """Nearest first, equal distances by smaller index, no point twice."""
    if len(np.unique(indices)) != len(indices):
        raise KernelMismatchError("k-NN: a point appears twice among the neighbours")
    later = (np.diff(dists_sq) < 0) | ((np.diff(dists_sq) == 0) & (np.diff(indices) < 0))
    if later.any():
        raise KernelMismatchError(f"k-NN: neighbours out of order at rank {int(np.argmax(later))}")


def _check_indices(got: np.ndarray, want: Neighbours, next_distance_sq: float) -> None:
    """Exact indices where the reference distances are distinct; equal sets inside a group of
    near ties. A group that reaches past the k-th place may hold any points tied with the k-th
    distance: `_check_own_distances` checks that they are."""
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


def _check_own_distances(got: np.ndarray, got_d: np.ndarray, near: Neighbours) -> None:
    """Every returned point is within tolerance of the reference's k-th distance and has its
    own reference distance: ranks' distances alone would accept any index in a tie group."""
    at = np.minimum(np.searchsorted(near.indices, got), max(len(near.indices) - 1, 0))
    known = (near.indices[at] == got) if len(near.indices) else np.zeros(len(got), bool)
    if not known.all():
        rank = int(np.argmax(~known))
        raise KernelMismatchError(
            f"k-NN: point {got[rank]} at rank {rank} is not among the reference's points "
            "within the k-th distance"
        )
    own = near.distances_sq[at]
    wrong = ~_close(got_d, own)
    if wrong.any():
        rank = int(np.argmax(wrong))
        raise KernelMismatchError(
            f"k-NN: point {got[rank]} at rank {rank} has distance² {got_d[rank]:.9g}, "
            f"its reference distance² is {own[rank]:.9g} (rtol {DISTANCE_RTOL})"
        )


def kernels() -> dict[str, Kernel]:
    """knn2, knn6, knn8 (the paper's split, rows in place) and knn2-topk, knn6-topk, knn8-topk."""
    found: dict[str, Kernel] = {}
    for features in FEATURE_COUNTS:
        for kernel in (KnnRows(features), Knn(features, device_topk=True)):
            found[kernel.name] = kernel
    return found
