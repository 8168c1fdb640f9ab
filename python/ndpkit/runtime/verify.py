"""Verify a run over a data set against the kernel's independent reference, in bounded memory.

The references (numpy, scipy, scikit-learn, scikit-image) take arrays in memory, and a data
set may be larger than memory. So verification streams the data set in chunks of whole
records (`Dataset.chunks`, any shard format), and how it uses the reference depends on the
kernel:

- **per record** (LC, HE, FFT2D, Binarization, Sobel): each record's answer depends on that
  record alone, so the reference applied to a chunk is exactly the reference's answer for
  those records. Each chunk is checked with `Kernel.check` against the matching slice of the
  result. Exact: nothing is approximated.
- **k-NN** (global top-k): no chunk knows the answer, but the global k+1 nearest are among
  the union of every chunk's k+1 nearest. The kernel's reference (scikit-learn's brute-force
  search) runs on each chunk; its k nearest (with indices shifted to the data set's) and its
  (k+1)-th distance are merged into a running top-k, which ends as the reference over the
  whole data set (the same k nearest and the same (k+1)-th distance, up to the order of exact
  ties, which `check` accepts anyway). A chunk's (k+1)-th distance enters the merge under an
  index that sorts after every point's, so with exact duplicates it never takes a point's
  place. Each chunk's points tied with its k-th distance are kept only where the result names
  them, so that `check` can tell whether every index the result returns in a tie at the k-th
  place is really there (and at its own distance), in memory bounded by k.
- **K-Means** (iterative, global): scikit-learn's `KMeans` needs every point in memory, so it
  cannot stream. Instead Lloyd's iterations are replayed from the same initial centres with
  the same stopping rule, one streamed pass per iteration, assigning each chunk's points to
  the nearest centre by scipy's `cdist` (squared differences, not the kernel's
  ‖c‖² − 2c·x) and summing clusters with `numpy.bincount` (not the kernel's one-hot
  product). Generated points lie on a grid whose sums are exact, so the centres agree exactly
  unless a point is equidistant to two centres within rounding. This checks the same centres
  and iteration count as the whole-data reference, but it is a second Lloyd implementation,
  not scikit-learn's `KMeans` itself; it reads the data once per iteration, and on data in
  memory it takes about twice as long as scikit-learn's `KMeans` (measured on 8 MiB).

A kernel with none of these shapes is verified against its reference on the whole data set,
which is then read into memory (`method = "whole"`); `Verification.method` always says
which was used.
"""

from __future__ import annotations

import math
import sys
from collections.abc import Callable, Iterator
from dataclasses import asdict, dataclass
from typing import TYPE_CHECKING, Any, cast

import numpy as np

from ndpkit.kernels.base import Kernel, KernelMismatchError

if TYPE_CHECKING:
    from ndpkit.kernels.kmeans import KMeansKernel
    from ndpkit.kernels.knn import Knn

Chunks = Callable[[], Iterator[tuple[int, np.ndarray]]]
"""A fresh pass over (offset of the first record, chunk of whole records), in record order."""

PER_RECORD_APPS = frozenset({"lc", "he", "he-remap", "fft2d", "binarize", "sobel"})
"""Kernels whose answer for a record depends on that record alone, with a result whose
axis 0 (of every field) is records."""


@dataclass(frozen=True)
class Verification:
    """How a result was checked: the method, and how much was read to check it."""

    method: str
    chunks: int
    passes: int
    records: int

    def as_dict(self) -> dict[str, Any]:
        return asdict(self)


def array_chunks(data: np.ndarray, chunk_records: int) -> Chunks:
    """`Chunks` over an array in memory (for tests, and for data that is in memory anyway)."""

    def walk() -> Iterator[tuple[int, np.ndarray]]:
        for start in range(0, len(data), chunk_records):
            yield start, data[start : start + chunk_records]

    return walk


def verify_streaming(
    kernel: Kernel, chunks: Chunks, params: dict[str, Any], result: Any
) -> Verification:
    """Check `result` against `kernel`'s reference over the data `chunks` walks; raises
    `KernelMismatchError` (saying where) on a difference."""
    if _instance(kernel, "ndpkit.kernels.knn", "Knn"):
        return _verify_knn(cast("Knn", kernel), chunks, params, result)
    if _instance(kernel, "ndpkit.kernels.kmeans", "KMeansKernel"):
        return _verify_kmeans(cast("KMeansKernel", kernel), chunks, params, result)
    if kernel.name in PER_RECORD_APPS:
        return _verify_per_record(kernel, chunks, params, result)
    return _verify_whole(kernel, chunks, params, result)


def _instance(kernel: Kernel, module: str, name: str) -> bool:
    """isinstance without importing the kernel's module (and its libraries) when it is not
    loaded: an instance of the class means its module is."""
    loaded = sys.modules.get(module)
    return loaded is not None and isinstance(kernel, getattr(loaded, name))


def _verify_per_record(
    kernel: Kernel, chunks: Chunks, params: dict[str, Any], result: Any
) -> Verification:
    total = _records(result)
    count = records = 0
    for offset, chunk in chunks():
        end = offset + len(chunk)
        if end > total:
            raise KernelMismatchError(
                f"{kernel.name}: the result has {total} records, the data at least {end}"
            )
        try:
            kernel.check(_rows(result, offset, end), kernel.reference(chunk, params))
        except KernelMismatchError as exc:
            raise KernelMismatchError(f"records {offset}..{end}: {exc}") from None
        count, records = count + 1, max(records, end)
    if records != total:
        raise KernelMismatchError(
            f"{kernel.name}: the result has {total} records, the data {records}"
        )
    return Verification("per chunk", count, 1, records)


def _records(result: Any) -> int:
    """Records in a per-record result: an array, or a tuple of arrays (a NamedTuple)."""
    if isinstance(result, tuple):
        lengths = {len(np.asarray(field)) for field in result}
        if len(lengths) != 1:
            raise KernelMismatchError(f"result fields of different lengths {sorted(lengths)}")
        return lengths.pop()
    return len(np.asarray(result))


def _rows(result: Any, start: int, end: int) -> Any:
    if isinstance(result, tuple):
        fields = [np.asarray(field)[start:end] for field in result]
        return type(result)(*fields) if hasattr(result, "_fields") else tuple(fields)
    return np.asarray(result)[start:end]


def _verify_knn(kernel: Knn, chunks: Chunks, params: dict[str, Any], result: Any) -> Verification:
    """The kernel's reference per chunk, merged into the reference over all the data. Of each
    chunk's points tied with its k-th distance (`ReferenceNeighbours.near`, as many as the
    chunk in the worst case) only the result's own indices are kept, so memory stays bounded;
    the global k-th distance is at most any chunk's, so none that `check` needs is lost."""
    from ndpkit.kernels.knn import (  # noqa: PLC0415 (loaded)
        Neighbours,
        ReferenceNeighbours,
        within_kth,
    )

    k = kernel.k
    asked = _asked_indices(result)
    indices = np.empty(0, dtype=np.int64)
    dists = np.empty(0, dtype=np.float64)
    near_indices: list[np.ndarray] = []
    near_dists: list[np.ndarray] = []
    count = records = 0
    for offset, chunk in chunks():
        local = kernel.reference(chunk, params)
        # The chunk's k nearest, and its (k+1)-th distance under an index that sorts after
        # every point's: the (k+1)-th distance overall is the (k+1)-th smallest of these, and
        # the marker never displaces a point of equal distance from the top k.
        indices = np.concatenate([indices, local.neighbours.indices + offset, [_NO_POINT]])
        dists = np.concatenate([dists, local.neighbours.distances_sq, [local.next_distance_sq]])
        order = np.lexsort((indices, dists))[: k + 1]
        indices, dists = indices[order], dists[order]
        kept = np.isin(local.near.indices + offset, asked)
        near_indices.append(local.near.indices[kept] + offset)
        near_dists.append(local.near.distances_sq[kept])
        count, records = count + 1, offset + len(chunk)
    nearest = min(k, records)
    following = float(dists[nearest]) if len(dists) > nearest else math.inf
    if np.any(indices[:nearest] == _NO_POINT):  # cannot happen when every chunk returns its k best
        raise KernelMismatchError("k-NN: the streamed reference lost a neighbour's index")
    near_i = np.concatenate([np.empty(0, np.int64), *near_indices])
    near_d = np.concatenate([np.empty(0), *near_dists])
    tied = within_kth(near_d, float(dists[nearest - 1])) if nearest else near_d < 0
    order = np.argsort(near_i[tied], kind="stable")
    near = Neighbours(near_i[tied][order], near_d[tied][order])
    expected = ReferenceNeighbours(Neighbours(indices[:nearest], dists[:nearest]), following, near)
    kernel.check(result, expected)
    return Verification("merged top-k", count, 1, records)


_NO_POINT = np.iinfo(np.int64).max
"""The index of a chunk's (k+1)-th distance in the merge: after every real index."""


def _asked_indices(result: Any) -> np.ndarray:
    """The indices a k-NN result names (as int64; `check` judges anything odd about them)."""
    with np.errstate(invalid="ignore"):
        return np.unique(np.asarray(result.indices).astype(np.int64, copy=False))


def _verify_kmeans(
    kernel: KMeansKernel, chunks: Chunks, params: dict[str, Any], result: Any
) -> Verification:
    """Lloyd replayed with scipy's distances, one streamed pass per iteration (its chunks
    scored on up to REPLAY_THREADS threads, `lloyd_keeping_empty`)."""
    from ndpkit.kernels.kmeans import lloyd_keeping_empty  # noqa: PLC0415 (loaded)

    kernel.init(params)  # the params' own errors first, as the run would give them
    count = records = 0

    def counted() -> Iterator[tuple[int, np.ndarray]]:
        nonlocal count, records
        for offset, chunk in chunks():
            count, records = count + 1, records + len(chunk)
            yield offset, chunk

    expected, _ = lloyd_keeping_empty(counted, params)
    kernel.check(result, expected)
    return Verification(
        "streamed Lloyd", count, expected.iterations, records // expected.iterations
    )


def _verify_whole(
    kernel: Kernel, chunks: Chunks, params: dict[str, Any], result: Any
) -> Verification:
    parts = [np.array(chunk) for _, chunk in chunks()]
    data = np.concatenate(parts)
    kernel.check(result, kernel.reference(data, params))
    return Verification("whole", len(parts), 1, len(data))
