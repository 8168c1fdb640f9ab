"""K-Means (RISP §9): Lloyd iterations split between processing cells and the public cell.

- **Device** (a processing cell, once per pass): assign every point of the chunk to its nearest
  current centre and return per-cluster sums (float64) and counts: K × (d + 1) × 8 bytes
  (576 B for K = d = 8) whatever the chunk size; partials merge within a device, so α per
  pass = a device's bytes / 576.
- **Merge**: sums and counts add.
- **Host** (the public cell): new centres = sums / counts; an empty cluster keeps its old
  centre [choice; scikit-learn would move it to a far point instead]. Done when the total
  squared centre shift Σ_k ‖c_k' − c_k‖² ≤ `tol_sq` (default 0: until the centres stop moving,
  i.e. the assignment no longer changes) or after `max_iter` passes.
- **Result**: `KMeansResult(centres, iterations, converged, counts)`: `counts` are the points
  per cluster in the last pass (the assignment whose means are the final centres), so a caller
  can warn about an empty cluster (`empty_clusters`); labels are not part of it (that would be
  one more pass); `assign_labels` gives them for any points, by the device's rule, ties too.

Conventions [choice; the paper leaves them open]: d = 8 float32 features, K = 8 clusters,
max_iter = 100. Data: Gaussian blobs (σ = 1) around K fixed centres in [−4, 4]^d. Initial
centres are a k-means++ (seeded) over the first 4,096 points generated with the seed (K if
K is larger), computed in `params`; the generator is prefix-stable, so they are points of any
data set generated in one call with that seed and at least that many points (no cluster
starts empty), and points of the same
mixture for a runtime data set (whose shards have derived seeds). Data that was not generated
(an imported data set) gets its initial centres from `params_for_data`: the same k-means++
over a sample of that data, so every centre starts at one of its points.

Exactness: generated coordinates lie on a 2⁻¹⁶ grid with |x| < 128, so float64 sums of up to
2³⁰ points are exact, and sums merge bit-identically in any grouping: the answer does not depend
on chunking or sharding (tested). Other data gets the same answer up to float64 rounding of
the sums. Scores are measured from the centre of least norm o (n_k − 2 e_k·x with e = c − o,
in float64), not as ‖c‖² − 2 c·x: far from 0 that lost the distances to rounding.

The device pass is one Rust loop (`ndp_kernels::kmeans`, eight points per AVX-512 step) for
float32 points: each score is a chain of fused multiply-adds in feature order, so a point gets
the same score in any chunk and on every CPU path. The numpy formulation
(`cluster_sums_numpy`: BLAS scores, one-hot sums) stays as its test oracle and for points
float32 cannot hold (`cluster_sums` takes them; the kernel's device refuses them, and scores
points float32 holds exactly as float32); the two can differ only on a point whose two
nearest scores are within rounding.

Reference: `sklearn.cluster.KMeans(init=<the same centres>, n_init=1, algorithm="lloyd",
tol=tol_sq / mean feature variance, max_iter=max_iter)` on float64 data (scikit-learn stops
when Σ_k ‖Δc_k‖² ≤ mean variance × tol, the same quantity). It centres the data internally, so
`check` compares centres with rtol = 1e-6 (and an atol of 1e-9 × the feature's largest
centre), iterations, points per cluster and `converged` exactly (scikit-learn's flag means
only "stopped before max_iter", so against it a result may also have converged on the last
pass). scikit-learn
moves an empty cluster's centre to a far point where this kernel keeps it; when a pass leaves
a cluster empty, the reference is therefore Lloyd replayed with scipy's distances under the
kernel's rule (`lloyd_keeping_empty`, also what streamed verification runs). A point whose
nearest centres are within rounding of each other (an exact tie off the 2⁻¹⁶ grid) goes
where the device's rounded score sends it, which may be the second: the replay computes that
score exactly for such points (`nearest_by_rule`; exact where the replay's centres are the
device's, as in the first pass, and for float32 points). Non-finite points
or initial centres, points that are no real numbers, and max_iter below 1, are
refused (`NdpkitError`).
"""

from __future__ import annotations

import functools
import math
import numbers
import warnings
from collections import deque
from collections.abc import Callable, Iterable, Iterator
from concurrent.futures import Future, ThreadPoolExecutor
from dataclasses import dataclass, field, replace
from fractions import Fraction
from importlib import import_module
from typing import Any

import numpy as np
from numpy.typing import NDArray

from ndpkit.cpus import usable_cpus
from ndpkit.errors import NdpkitError, whole_number
from ndpkit.kernels.base import Kernel, KernelMismatchError, joblib_quiet, param
from ndpkit.kernels.parts import checked_seed, records_in
from ndpkit.native import native_input

_core: Any = import_module("ndpkit._core")  # the compiled extension has no type stub

D_FEATURES = 8
K_CLUSTERS = 8
MAX_ITER = 100
GRID = 2.0**-16
"""Coordinates are multiples of GRID below 128 in magnitude: 23 significant bits, so float32
holds them exactly and float64 sums of up to 2³⁰ of them are exact."""
BLOCK_ROWS = 4096
"""Points per inner block: the (K, block) score matrix and one-hot stay in L2 (1.25 GB/s
measured, vs 1.03 GB/s at 32768)."""
GENERATOR_BLOCK_RECORDS = 65536
INIT_SAMPLE_RECORDS = 4096
BLOB_SPREAD = 1.0
CENTRE_RTOL = 1e-6
CENTRE_ATOL_SCALE = 1e-9
"""The absolute part of the centres' tolerance, as a fraction of the feature's largest |centre|:
both sides sum in float64, and scikit-learn's centring of a feature on its mean costs about
2⁻⁵² of it (measured: centres within 6e-10 of scikit-learn's beside a cluster at 1e6, within
3e-12 of the feature's scale on generated data)."""
_LABEL_STREAM, _NOISE_STREAM, _BLOB_STREAM, _INIT_STREAM = 1, 2, 3, 4

F64 = NDArray[np.float64]


@dataclass(frozen=True)
class ClusterSums:
    """A device's partial: per-cluster coordinate sums (K, d) and point counts (K,)."""

    sums: F64
    counts: NDArray[np.int64]


@dataclass(frozen=True)
class KMeansState:
    """What every pass starts from; the public cell returns a new one. `counts` are the points
    per cluster of the pass that made `centres` (zeros before the first pass)."""

    centres: F64
    iterations: int
    shift_sq: float
    tol_sq: float
    max_iter: int
    counts: NDArray[np.int64]


@dataclass(frozen=True)
class KMeansResult:
    """The final centres, the passes, whether they stopped moving, and the points per cluster
    in the last pass (None when whoever built the result did not count them)."""

    centres: F64
    iterations: int
    converged: bool
    counts: NDArray[np.int64] | None = None

    @property
    def empty_clusters(self) -> tuple[int, ...]:
        """Clusters no point went to in the last pass (their centres are where they started
        or where an earlier pass left them): worth a warning, the data may have fewer
        clusters than K or the initial centres may be far from it."""
        if self.counts is None:
            return ()
        return tuple(int(c) for c in np.flatnonzero(np.asarray(self.counts) == 0))


def cluster_sums(points: np.ndarray, centres: F64) -> ClusterSums:
    """Per-cluster sums and counts of `points` assigned to their nearest centre: one Rust pass
    (`ndp-kernels`, AVX-512 where the CPU has it) for float32 points and points float32
    holds exactly (integers, big-endian or float64 copies of float32 values), the numpy
    formulation below for anything else."""
    k, d = centres.shape
    points = np.asarray(points)
    _check_width(points, d)
    points = float32_if_exact(points)
    if points.dtype != np.float32 or len(points) == 0 or k == 0 or d == 0:
        return cluster_sums_numpy(points, centres)
    sums, counts = _core.cluster_sums_f32(
        native_input(points.reshape(-1, d), np.float32),
        native_input(centres, np.float64),
    )
    return ClusterSums(sums, counts)


def float32_if_exact(points: np.ndarray) -> np.ndarray:
    """`points` as native float32 where that holds every value exactly (NaN as NaN), else as
    they are. The device's rule for a point at a near tie (its Rust scores) is the one the
    check's replay computes; the numpy formulation's BLAS scores may send it to the other
    centre."""
    if points.dtype == np.float32 or points.dtype.kind not in "biuf":
        return points
    with np.errstate(over="ignore", invalid="ignore"):
        single = points.astype(np.float32)
    return single if np.array_equal(single, points, equal_nan=True) else points


def cluster_sums_numpy(points: np.ndarray, centres: F64) -> ClusterSums:
    """The numpy formulation (BLAS scores, one-hot sums): the Rust pass's test oracle. BLAS
    may sum a score's products in another order, so a point at a near tie (scores within a
    few ulps) may go the other way."""
    k, d = centres.shape
    points = np.asarray(points)
    _check_width(points, d)
    points = points.reshape(-1, d)
    sums = np.zeros((k, d))
    counts = np.zeros(k)
    minus_2c, norms = _scoring(centres)
    for start in range(0, len(points), BLOCK_ROWS):
        block = points[start : start + BLOCK_ROWS].astype(np.float64)
        one_hot = _nearest_one_hot(minus_2c @ block.T + norms)
        sums += one_hot @ block
        counts += one_hot.sum(axis=1)
    return ClusterSums(sums, counts.astype(np.int64))


def _check_width(points: np.ndarray, d: int) -> None:
    """Rows of points must be real numbers of the centres' width (a flat array is read as
    rows of d)."""
    _check_real(points, "points")
    if points.ndim > 1 and points.shape[-1] != d:
        raise NdpkitError(f"kmeans: points have {points.shape[-1]} features, the centres {d}")
    if points.ndim <= 1 and points.size % d:
        raise NdpkitError(
            f"kmeans: {points.size} values are not whole points of the centres' {d} features"
        )


def _check_real(points: np.ndarray, what: str) -> None:
    """Points of a real dtype (floats, integers, bools), or an NdpkitError: strings of digits
    were parsed as numbers, complex points lost their imaginary parts (a ComplexWarning,
    an exception where warnings are errors), and objects were cast as they came."""
    if points.dtype.kind not in "biuf":
        raise NdpkitError(
            f"kmeans: the {what} must be real numbers (float32 as generated), got {points.dtype}"
        )


def _refuse_inexact(name: str, points: np.ndarray, offset: int) -> None:
    """An NdpkitError naming the first of `points` (the first being point `offset`) whose
    coordinates float32 does not hold exactly, if there is one."""
    rows = points.reshape(len(points), -1) if points.ndim > 1 else points.reshape(-1, 1)
    with np.errstate(over="ignore", invalid="ignore"):
        single = rows.astype(np.float32)
    inexact = ~((single == rows) | (np.isnan(single) & np.isnan(rows))).all(axis=1)
    if inexact.any():
        bad = int(np.flatnonzero(inexact)[0])
        raise NdpkitError(
            f"{name}: point {offset + bad} ({rows[bad].tolist()}, {points.dtype}) is not exact "
            "in float32, and K-Means scores float32 points; give them as float32 "
            "(points.astype(np.float32)) if rounding them is what you want"
        )


def _nearest_one_hot(scores: F64) -> F64:
    """(K, n) one-hot of each column's smallest score, the first on ties (as numpy and
    scikit-learn). Comparing with the column minimum is elementwise, hence fast; argmin along
    the short axis is only needed for a block that has exact ties."""
    nearest: NDArray[np.bool_] = scores == scores.min(axis=0)
    if np.count_nonzero(nearest) != scores.shape[1]:
        nearest = scores.argmin(axis=0) == np.arange(len(scores))[:, None]
    return nearest.astype(np.float64)


def assign_labels(points: np.ndarray, centres: F64) -> NDArray[np.intp]:
    """The nearest centre of every point by the device's rule (`nearest_by_rule`): the
    nearest by distance, and where two centres are within rounding of each other, the one
    the device's rounded score picks. BLAS scores (as before) sent a point at an exact tie
    off the 2⁻¹⁶ grid to the other centre one time in ten, so the labels' counts were not
    the result's `counts` (a point at (7, 9), 0.89 from both (6.2, 8.5) and (7.8, 9.5))."""
    from scipy.spatial.distance import cdist  # type: ignore[import-untyped, unused-ignore]  # noqa: PLC0415 (as `_chunk_sums`: workers never need scipy)

    centres = np.asarray(centres, dtype=np.float64)
    points = np.asarray(points)
    _check_width(points, centres.shape[1])  # (100, 8) points were read as 160 of 5
    rows = points.reshape(-1, centres.shape[1])
    labels = np.empty(len(rows), dtype=np.intp)
    # A block at a time: the n × K distances and their bounds of a whole million points
    # took 6 times as long as blocks that stay in cache.
    for start in range(0, len(rows), LABEL_BLOCK_ROWS):
        block = rows[start : start + LABEL_BLOCK_ROWS].astype(np.float64)
        distances_sq = cdist(block, centres, "sqeuclidean")
        labels[start : start + len(block)] = nearest_by_rule(block, centres, distances_sq)
    return labels


LABEL_BLOCK_ROWS = 16384
"""Points `assign_labels` scores at a time."""


def _scoring(centres: F64) -> tuple[F64, F64]:
    """(−2e, n) of the device's score n_k − 2e_k·x = ‖x − c_k‖² − ‖x − o‖², with o the
    centre of least norm (the first on ties) and e = c − o (`ndp-kernels` kmeans.rs): where
    the data lies far from 0 the terms are the spread times the coordinates, not the
    coordinates squared, which at 1e7 lost distances below 0.125, and an outlying centre is
    o only where it is the nearest to 0. Norms and n_k are summed over j in order."""
    centres = np.asarray(centres, dtype=np.float64)
    if len(centres) == 0:
        return -2.0 * centres, np.zeros((0, 1))
    origin = _least_norm_centre(centres)
    from_origin = centres - origin
    norms = np.zeros(len(centres))
    for j in range(centres.shape[1]):
        norms = norms + from_origin[:, j] * (from_origin[:, j] + 2.0 * origin[j])
    return -2.0 * from_origin, norms[:, None]


def _least_norm_centre(centres: F64) -> F64:
    """The device's o: the centre of least norm, norms summed over j in order as the Rust fold
    sums them; a NaN norm is never the least, and the first of equal ones wins."""
    norms_from_0 = centres[:, 0] * centres[:, 0]
    for j in range(1, centres.shape[1]):
        norms_from_0 = norms_from_0 + centres[:, j] * centres[:, j]
    least: F64 = centres[int(np.argmin(np.where(np.isnan(norms_from_0), np.inf, norms_from_0)))]
    return least


def nearest_by_rule(points: F64, centres: F64, distances_sq: F64) -> NDArray[np.intp]:
    """The nearest centre of each point (rows of float64 holding float32 values) as the
    device picks it for float32 points, given their squared distances to the centres (n × K,
    e.g. scipy's).

    The device ranks centres by its score (`_scoring`), which is the squared distance less a
    term of the point's, rounded: where two centres are nearly as near (an exact tie, at the
    midpoint between them) rounding decides, and the first of the nearest by distance may not
    be the device's. So the distances decide, except for a point whose two smallest are within
    what the score's and the distances' rounding can move them (`_tie_bound`); for those the
    device's chain of fused multiply-adds is computed exactly (`_device_labels`), first centre
    on ties. (Points of another dtype are scored by the BLAS formulation on the device, so at
    such a tie either centre may be its answer.)"""
    labels: NDArray[np.intp] = np.asarray(distances_sq.argmin(axis=1), dtype=np.intp)
    if centres.shape[0] < 2 or len(points) == 0:
        return labels
    nearest = distances_sq[np.arange(len(points)), labels]
    # First with the bound of the farthest centre from o (one value per point, one pass over
    # the n × K distances), then per centre for the few rows that bound does not settle.
    coarse = _tie_bound(points, centres, nearest, labels, per_centre=False)
    within = distances_sq <= (nearest + coarse[:, 0])[:, None]
    if np.count_nonzero(within) > len(points):  # some row has more than its nearest
        rows = np.flatnonzero(np.count_nonzero(within, axis=1) > 1)
        fine = _tie_bound(points[rows], centres, nearest[rows], labels[rows])
        near = distances_sq[rows] <= nearest[rows, None] + fine
        close = rows[np.count_nonzero(near, axis=1) > 1]
        labels[close] = _device_labels(points[close], centres)
    return labels


def _tie_bound(
    points: F64,
    centres: F64,
    nearest: F64,
    labels: NDArray[np.intp],
    per_centre: bool = True,
) -> F64:
    """For each point and centre (n × K; without `per_centre`, n × 1: the largest over the
    centres, the farthest from o's), how much nearer than the point's nearest squared
    distance `nearest` (to scipy's rounding, that of centre `labels`) the centre may be where
    the device's rounded scores could rank it first: a bound on both roundings.

    The device's score for centre k differs from the exact ‖x − c_k‖² − ‖x − o‖² (o: the
    centre of least norm, e = c − o) by at most about (2d + 3) units of rounding of
    S_k = ‖e_k‖(‖e_k‖ + 2‖o‖ + 2‖x‖) (d + 1 for n_k, d for the chain, 2 for e; Cauchy–Schwarz
    for the dot products), and scipy's squared distance by at most (d + 2) units of itself.
    Twice that, for the point's nearest centre and centre k; plus a few of the smallest
    subnormals, where the terms underflow. Per point and per centre: taken over every centre
    and the chunk's largest point, one far outlier (a centre on it) sent nearly every point
    to the exact scoring, at 2,000 points a second."""
    d = centres.shape[1]
    unit = float(np.finfo(np.float64).eps) / 2
    with np.errstate(over="ignore", invalid="ignore"):
        origin = _least_norm_centre(centres)
        margin = 1 + 1e-6  # over the norms' own rounding
        spread = np.sqrt(((centres - origin) ** 2).sum(axis=1)) * margin  # ‖e_k‖, (K,)
        origin_norm = float(np.sqrt((origin * origin).sum())) * margin
        point_norms = np.sqrt((points * points).sum(axis=1)) * margin  # ‖x‖, (n,)
        if not per_centre:  # S_k grows with ‖e_k‖: the farthest centre's bounds them all
            spread = spread.max(initial=0.0)[None]
        size = spread[None, :] * (spread[None, :] + 2 * origin_norm + 2 * point_norms[:, None])
        own = size[np.arange(len(points)), labels] if per_centre else size[:, 0]
        tiny = 64.0 * (d + 4) * 2.0**-1074
        bound: F64 = (
            4 * unit * ((2 * d + 3) * (size + own[:, None]) + (d + 2) * 2 * nearest[:, None])
        ) * (1 + 1e-9) + tiny
    return np.where(np.isnan(bound), np.inf, bound)


def _device_labels(points: F64, centres: F64) -> NDArray[np.intp]:
    """The device's choice for each point, bit for bit: scores s = n_k, then
    s = fma(m_kj, x_j, s) for j in order, the first centre of least score.

    Vectorised where every product m_kj·x_j of a point is exact in float64 (data on a grid,
    small integers: then a product and a sum round as the fused step does); the rest one by
    one in exact rationals (`_fma`)."""
    minus_2c, norms = _scoring(centres)
    scores = np.repeat(norms[:, 0][None, :], len(points), axis=0)
    exact = np.ones(len(points), dtype=bool)
    with np.errstate(over="ignore", invalid="ignore"):
        for j in range(minus_2c.shape[1]):
            m, x = minus_2c[:, j][None, :], points[:, j][:, None]
            product = m * x
            # Dekker's error term is exact only above the subnormal range.
            normal = (product == 0) | (np.abs(product) >= 2.0**-960)
            exact &= ((_product_error(m, x, product) == 0) & normal).all(axis=1)
            scores = scores + product
    labels: NDArray[np.intp] = np.asarray(scores.argmin(axis=1), dtype=np.intp)
    for i in np.flatnonzero(~exact):
        labels[i] = int(np.argmin(_device_scores(points[i], minus_2c, norms[:, 0])))
    return labels


_SPLIT = 2.0**27 + 1


def _product_error(a: F64, b: F64, product: F64) -> F64:
    """a·b − `product` (= fl(a·b)), exactly (Dekker's two-product; NaN where the split
    overflows, which then counts as inexact)."""
    a_big, b_big = _SPLIT * a, _SPLIT * b
    a_hi = a_big - (a_big - a)
    b_hi = b_big - (b_big - b)
    a_lo, b_lo = a - a_hi, b - b_hi
    error: F64 = ((a_hi * b_hi - product) + a_hi * b_lo + a_lo * b_hi) + a_lo * b_lo
    return error


def _device_scores(x: F64, minus_2c: F64, norms: F64) -> list[float]:
    """Each centre's device score for one point, bit for bit: s = n_k, then
    s = fma(m_kj, x_j, s) for j in order, each step rounded once (exact rationals, then the
    correctly rounded float)."""
    scores = []
    for m, norm in zip(minus_2c, norms, strict=True):
        score = float(norm)
        for m_j, x_j in zip(m.tolist(), x.tolist(), strict=True):
            score = _fma(m_j, x_j, score)
        scores.append(score)
    return scores


def _fma(a: float, b: float, c: float) -> float:
    """a × b + c rounded once, as the FMA instruction (math.fma arrived in Python 3.13)."""
    if not (math.isfinite(a) and math.isfinite(b) and math.isfinite(c)):
        return a * b + c
    exact = Fraction(a) * Fraction(b) + Fraction(c)
    try:
        return float(exact)  # correctly rounded, ties to even
    except OverflowError:
        return math.inf if exact > 0 else -math.inf


def update_centres(merged: ClusterSums, centres: F64) -> F64:
    """Means of the clusters; an empty cluster keeps its centre."""
    filled = merged.counts > 0
    new = centres.copy()
    new[filled] = merged.sums[filled] / merged.counts[filled][:, None]
    return new


def kmeans_plus_plus(sample: F64, k: int, rng: np.random.Generator) -> F64:
    """k-means++ seeding (Arthur & Vassilvitskii, 2007): spread-out starting centres, so Lloyd
    converges in few passes and no cluster starts empty."""
    chosen = [int(rng.integers(len(sample)))]
    nearest_sq = ((sample - sample[chosen[0]]) ** 2).sum(axis=1)
    for _ in range(1, k):
        total = nearest_sq.sum()
        if total > 0:
            pick = int(rng.choice(len(sample), p=nearest_sq / total))
        else:
            pick = int(rng.integers(len(sample)))
        chosen.append(pick)
        nearest_sq = np.minimum(nearest_sq, ((sample - sample[pick]) ** 2).sum(axis=1))
    return sample[chosen].copy()


class KMeansKernel(Kernel):
    """Lloyd's K-Means with the RISP split (see the module docstring)."""

    name = "kmeans"
    dtype = np.dtype(np.float32)

    def __init__(
        self, features: int = D_FEATURES, clusters: int = K_CLUSTERS, max_iter: int = MAX_ITER
    ):
        # As Python ints: a numpy integer failed in a data set's manifest, after its shards.
        expected = "a whole number ≥ 1 (K-Means)"
        self.features = whole_number(features, "features", expected, least=1)
        self.clusters = whole_number(clusters, "clusters", expected, least=1)
        self.max_iter = whole_number(max_iter, "max_iter", expected, least=1)
        self.record_shape = (self.features,)
        self.description = f"K-Means (Lloyd), {features} float32 features, K = {clusters}"

    memory_per_input_byte = 10  # measured 7.6-7.9 (base.Kernel), with a margin

    def generate(self, size_bytes: int, seed: int) -> np.ndarray:
        """Gaussian blobs around K fixed centres, on the GRID. The blobs do not depend on the
        seed, so shards generated with different seeds (the runtime derives one per shard)
        come from one mixture; block b of the points depends only on (seed, b), so a shorter
        data set is a prefix of a longer one."""
        n_points = records_in(size_bytes, self.record_bytes)
        seed = checked_seed(seed)
        blobs = np.random.default_rng(_BLOB_STREAM).uniform(
            -4.0, 4.0, (self.clusters, self.features)
        )
        out = np.empty((n_points, self.features), dtype=np.float32)
        for first in range(0, n_points, GENERATOR_BLOCK_RECORDS):
            rows = out[first : first + GENERATOR_BLOCK_RECORDS]
            rows[:] = self._blob_block(blobs, seed, first // GENERATOR_BLOCK_RECORDS, len(rows))
        return out

    def _blob_block(self, blobs: F64, seed: int, block: int, n_points: int) -> F64:
        labels = np.random.default_rng([seed, _LABEL_STREAM, block]).integers(
            0, len(blobs), n_points
        )
        noise = np.random.default_rng([seed, _NOISE_STREAM, block]).standard_normal(
            (n_points, self.features)
        )
        points = np.clip(blobs[labels] + BLOB_SPREAD * noise, -127.0, 127.0)
        return np.round(points / GRID) * GRID

    def params(self, seed: int) -> dict[str, Any]:
        """Initial centres: k-means++ over the first INIT_SAMPLE_RECORDS generated points, or
        the first K if K is more (over 4,096 points, K = 5,000 had 904 centres picked twice,
        which started empty and stayed so)."""
        sample = self.generate(max(INIT_SAMPLE_RECORDS, self.clusters) * self.record_bytes, seed)
        return self._params_from(sample.astype(np.float64), seed)

    def params_for_data(self, sample: np.ndarray, seed: int) -> dict[str, Any]:
        """`params` for data that was not generated (an imported data set): the initial
        centres by the same seeded k-means++, over `sample`, points of that data set (say
        INIT_SAMPLE_RECORDS of them, spread over it). Raises NdpkitError unless the sample
        has the kernel's width, at least K points, and finite coordinates."""
        points = self._points(sample, "sample", "seed")
        return self._params_from(points, seed)

    def _points(self, data: np.ndarray, what: str, verb: str) -> F64:
        """`data` as float64 points, or an NdpkitError unless it has the kernel's width, at
        least K points, and finite coordinates (`what` names it, `verb` says what the
        points are for)."""
        given = np.asarray(data)
        _check_real(given, what)
        points = given.astype(np.float64)
        if points.ndim != 2 or points.shape[1] != self.features:
            raise NdpkitError(
                f"{self.name}: the {what} has shape {points.shape}, not (n, {self.features})"
            )
        if len(points) < self.clusters:
            raise NdpkitError(
                f"{self.name}: {len(points)} point{'s' * (len(points) != 1)} cannot {verb} "
                f"K = {self.clusters} clusters "
                f"(the data set needs at least {self.clusters} points)"
            )
        if not np.isfinite(points).all():
            bad = int(np.flatnonzero(~np.isfinite(points).all(axis=1))[0])
            raise NdpkitError(
                f"{self.name}: {what} point {bad} has a non-finite coordinate "
                f"({points[bad].tolist()}); K-Means needs finite points"
            )
        return points

    def _params_from(self, sample: F64, seed: int) -> dict[str, Any]:
        rng = np.random.default_rng([checked_seed(seed), _INIT_STREAM])
        return {
            "init_centres": kmeans_plus_plus(sample, self.clusters, rng),
            "max_iter": self.max_iter,
            "tol_sq": 0.0,
        }

    def init(self, params: dict[str, Any]) -> KMeansState:
        centres, tol_sq, max_iter = self._checked(params)
        counts = np.zeros(self.clusters, dtype=np.int64)
        return KMeansState(centres, 0, np.inf, tol_sq, max_iter, counts)

    def _checked(self, params: dict[str, Any]) -> tuple[F64, float, int]:
        """(initial centres, tol_sq, max_iter), or an NdpkitError saying which is wrong:
        NaN centres would send every point to cluster 0 and still "converge"."""
        given = np.asarray(param(params, "init_centres", self.name))
        # Only real numbers: "abc" was a ValueError from numpy, and strings of digits were
        # parsed. (Python numbers numpy keeps as objects, Fractions say, are taken.)
        objects = given.ravel() if given.dtype.kind == "O" else ()
        if given.dtype.kind not in "biufO" or not all(isinstance(v, numbers.Real) for v in objects):
            raise NdpkitError(
                f"{self.name}: init_centres must be numbers, got {given.dtype} {given.shape}"
            )
        centres = given.astype(np.float64)
        if centres.shape != (self.clusters, self.features):
            raise NdpkitError(
                f"{self.name}: init_centres has shape {centres.shape}, "
                f"not ({self.clusters}, {self.features})"
            )
        if not np.isfinite(centres).all():
            bad = int(np.flatnonzero(~np.isfinite(centres).all(axis=1))[0])
            raise NdpkitError(f"{self.name}: initial centre {bad} is not finite ({centres[bad]})")
        max_iter = param(params, "max_iter", self.name)
        if isinstance(max_iter, bool) or not isinstance(max_iter, (int, np.integer)):
            raise NdpkitError(f"{self.name}: max_iter must be a whole number, got {max_iter!r}")
        if max_iter < 1:
            raise NdpkitError(f"{self.name}: max_iter must be at least 1, got {max_iter}")
        raw = param(params, "tol_sq", self.name)
        # One number: a list or None was a TypeError from float(), and "0.5" was parsed.
        # (A Python real, Fraction included, or a numpy number or 0-d array; not a bool.)
        real = isinstance(raw, numbers.Real) and not isinstance(raw, bool)
        if not real and (np.ndim(raw) != 0 or np.asarray(raw).dtype.kind not in "fiu"):
            raise NdpkitError(f"{self.name}: tol_sq must be one number ≥ 0, got {raw!r}")
        tol_sq = float(raw)
        if not (math.isfinite(tol_sq) and tol_sq >= 0):
            raise NdpkitError(f"{self.name}: tol_sq must be finite and ≥ 0, got {tol_sq}")
        return centres.copy(), tol_sq, int(max_iter)

    def device(self, chunk: np.ndarray, state: Any, offset: int) -> ClusterSums:
        """The cluster sums of float32 points, or of points float32 holds exactly (a list of
        them, integers of up to 24 bits); others are refused, naming the first point float32
        cannot hold: scored in float64 by BLAS, a point at a near tie went to another centre
        than the device's rule (which the check replays) sends it, and the run of a list of
        decimals such as 0.1 failed its check one time in twenty."""
        points = float32_if_exact(np.asarray(chunk))
        if points.dtype != np.float32 and points.dtype.kind in "biuf":
            _refuse_inexact(self.name, points, offset)
        sums = cluster_sums(points, state.centres)
        if not np.isfinite(sums.sums).all():
            # A NaN point sends every later point of its cluster's sums to NaN (and its
            # score ties nowhere, so the pass puts it in cluster 0): say which, as k-NN does.
            points = np.asarray(chunk).reshape(-1, self.features)
            bad = int(np.flatnonzero(~np.isfinite(points).all(axis=1))[0])
            raise NdpkitError(
                f"{self.name}: point {offset + bad} has a non-finite coordinate "
                f"({points[bad].tolist()}); K-Means needs finite points"
            )
        return sums

    def merge(self, partials: list[Any]) -> ClusterSums:
        sums = np.zeros((self.clusters, self.features))
        counts = np.zeros(self.clusters, dtype=np.int64)
        for partial in partials:
            sums += partial.sums
            counts += partial.counts
        return ClusterSums(sums, counts)

    def host(self, merged: Any, state: Any) -> tuple[KMeansState, bool]:
        centres = update_centres(merged, state.centres)
        shift_sq = float(((centres - state.centres) ** 2).sum())
        new = replace(
            state,
            centres=centres,
            iterations=state.iterations + 1,
            shift_sq=shift_sq,
            counts=np.array(merged.counts, dtype=np.int64),
        )
        return new, shift_sq <= state.tol_sq or new.iterations >= state.max_iter

    def finish(self, state: Any) -> KMeansResult:
        converged = state.shift_sq <= state.tol_sq
        return KMeansResult(state.centres, state.iterations, converged, state.counts)

    def output_bytes(self, partial: Any) -> int:
        return int(partial.sums.nbytes + partial.counts.nbytes)

    def output_limit_bytes(self) -> int | None:
        """One table of float64 sums and int64 counts per pass, however much a device read."""
        return self.clusters * (self.features + 1) * 8

    def reference(self, data: np.ndarray, params: dict[str, Any]) -> SklearnReference:
        """scikit-learn's Lloyd from the same centres, with the same stopping rule. It does not
        say whether it converged: `converged` is True when it stopped before max_iter. Its
        `counts` are of its final labels."""
        with joblib_quiet():
            from sklearn.cluster import (  # type: ignore[import-untyped, unused-ignore]  # noqa: PLC0415 (0.7 s to import: reference only)
                KMeans as SklearnKMeans,
            )
            from sklearn.exceptions import (  # type: ignore[import-untyped, unused-ignore]  # noqa: PLC0415
                ConvergenceWarning,
            )

        centres, tol_sq, max_iter = self._checked(params)
        points = self._points(data, "data", "form")
        mean_variance = float(np.var(points, axis=0).mean())
        model = SklearnKMeans(
            n_clusters=self.clusters,
            init=centres,
            n_init=1,
            algorithm="lloyd",
            tol=tol_sq / mean_variance if tol_sq > 0 and mean_variance > 0 else 0.0,
            max_iter=max_iter,
        )
        with warnings.catch_warnings():
            # "Number of distinct clusters found smaller than n_clusters" on duplicate
            # points: empty clusters are this kernel's to handle (`check` replays Lloyd
            # under its rule) and evaluate's to report; scikit-learn's warning was an
            # exception wherever warnings are errors.
            warnings.simplefilter("ignore", ConvergenceWarning)
            model.fit(points)
        converged = model.n_iter_ < max_iter
        counts = np.bincount(model.labels_, minlength=self.clusters).astype(np.int64)
        return SklearnReference(
            model.cluster_centers_,
            int(model.n_iter_),
            converged,
            counts,
            replay=lambda: lloyd_keeping_empty(lambda: [(0, points)], params),
        )

    def check(self, result: Any, expected: Any) -> None:
        try:
            _compare(result, expected)
        except KernelMismatchError:
            if not isinstance(expected, SklearnReference):
                raise
            # scikit-learn's rules differ from this kernel's in two places: it moves an
            # empty cluster's centre to a far point (this kernel keeps it where it was, as
            # the RISP host does), and it scores points after subtracting their mean, so a
            # point at an exact tie goes wherever rounding sends it (here: the first
            # centre). Lloyd replayed with scipy's distances under the kernel's rules (as
            # streamed verification is) is then the reference; it must match that.
            replay, _ = expected.replay()
            _compare(result, replay)


def _compare(result: Any, expected: KMeansResult) -> None:
    """Centres within CENTRE_RTOL and the same iteration count, or KernelMismatchError."""
    if result.centres.shape != expected.centres.shape:
        raise KernelMismatchError(
            f"kmeans: centres of shape {result.centres.shape}, reference {expected.centres.shape}"
        )
    got, want = np.asarray(result.centres, np.float64), np.asarray(expected.centres, np.float64)
    # scikit-learn centres each feature on its mean, so a centre near 0 is off by rounding
    # of that feature's scale: the absolute tolerance is relative to the feature's largest
    # centre (a fixed one would accept any centres in data of magnitude 1e-10), but far
    # below CENTRE_RTOL of it (which accepted centres near 1 moved by 0.9 beside one at 1e6).
    atol = CENTRE_ATOL_SCALE * np.abs(want).max(axis=0, initial=0.0)
    wrong = ~(np.abs(got - want) <= atol + CENTRE_RTOL * np.abs(want))  # NaN is wrong
    if wrong.any():
        worst = np.unravel_index(np.argmax(np.where(wrong, np.abs(got - want), -1)), got.shape)
        raise KernelMismatchError(
            f"kmeans: centre {worst[0]} feature {worst[1]} is {got[worst]:.9g}, "
            f"reference {want[worst]:.9g} (rtol {CENTRE_RTOL})"
        )
    if result.iterations != expected.iterations:
        raise KernelMismatchError(
            f"kmeans: {result.iterations} iterations, reference {expected.iterations}"
        )
    # scikit-learn does not say whether it converged: its `converged` is only "stopped
    # before max_iter", so a result that converged on the last pass may say True against it.
    said_only_early = isinstance(expected, SklearnReference) and not expected.converged
    if bool(result.converged) != bool(expected.converged) and not said_only_early:
        raise KernelMismatchError(
            f"kmeans: converged is {bool(result.converged)}, reference {bool(expected.converged)}"
        )
    if result.counts is None and expected.counts is not None:
        raise KernelMismatchError("kmeans: the result has no points per cluster (counts)")
    # Centres within a relative tolerance can still hide points in the wrong cluster where
    # the coordinates are large: the points per cluster must be the same.
    if result.counts is not None and expected.counts is not None:
        wrong = np.flatnonzero(np.asarray(result.counts) != np.asarray(expected.counts))
        if len(wrong):
            at = int(wrong[0])
            raise KernelMismatchError(
                f"kmeans: cluster {at} has {int(result.counts[at])} points in the last pass, "
                f"reference {int(expected.counts[at])}"
            )


@dataclass(frozen=True)
class SklearnReference(KMeansResult):
    """scikit-learn's result, with the replay under the kernel's empty-cluster rule that
    `check` falls back to (run only then: it costs as much again)."""

    replay: Callable[[], tuple[KMeansResult, bool]] = field(kw_only=True)


def lloyd_keeping_empty(
    chunks: Callable[[], Iterable[tuple[int, np.ndarray]]],
    params: dict[str, Any],
    threads: int | None = None,
) -> tuple[KMeansResult, bool]:
    """Lloyd replayed with scipy's distances, one pass over `chunks()` per iteration, under
    this kernel's rules (an empty cluster keeps its centre; the same stopping rule; a point
    whose nearest centres are within rounding of each other goes where the device's score
    sends it, `nearest_by_rule`): the result, and whether any iteration left a cluster empty
    (where scikit-learn's rule differs).

    The chunks are read in order in this thread and scored on `threads` threads (default:
    the CPUs this process may use, at most REPLAY_THREADS; scipy and numpy let go of the
    GIL), at most two chunks per thread at a time, and their sums are added in chunk order:
    the same bits as one thread, at about 1.7 times its speed on two cores."""
    centres = np.array(params["init_centres"], dtype=np.float64)
    clusters, features = centres.shape
    tol_sq, max_iter = float(params["tol_sq"]), int(params["max_iter"])
    iterations, shift_sq, emptied = 0, math.inf, False
    threads = threads or min(usable_cpus(), REPLAY_THREADS)
    with ThreadPoolExecutor(threads) as pool:
        while True:
            sums = np.zeros((clusters, features))
            sizes = np.zeros(clusters, dtype=np.int64)
            score = functools.partial(_chunk_sums, centres=centres)
            for chunk_sums, chunk_sizes in _in_order(pool, score, chunks(), threads):
                sums += chunk_sums
                sizes += chunk_sizes
            filled = sizes > 0
            emptied = emptied or not filled.all()
            moved = centres.copy()
            moved[filled] = sums[filled] / sizes[filled][:, None]
            shift_sq = float(((moved - centres) ** 2).sum())
            centres, iterations = moved, iterations + 1
            if shift_sq <= tol_sq or iterations >= max_iter:
                break
    return KMeansResult(centres, iterations, shift_sq <= tol_sq, sizes), emptied


def _chunk_sums(item: tuple[int, np.ndarray], centres: F64) -> tuple[F64, NDArray[np.int64]]:
    """One chunk's per-cluster sums and sizes, its points assigned by `nearest_by_rule`."""
    from scipy.spatial.distance import cdist  # type: ignore[import-untyped, unused-ignore]  # noqa: PLC0415

    clusters, features = centres.shape
    points = np.asarray(item[1], dtype=np.float64).reshape(-1, features)
    labels = nearest_by_rule(points, centres, cdist(points, centres, "sqeuclidean"))
    sizes = np.bincount(labels, minlength=clusters).astype(np.int64)
    cells = (labels[:, None] * features + np.arange(features)).ravel()
    weights = np.bincount(cells, points.ravel(), clusters * features)
    sums: F64 = np.asarray(weights, dtype=np.float64).reshape(clusters, features)
    return sums, sizes


def _in_order(
    pool: ThreadPoolExecutor,
    work: Callable[[tuple[int, np.ndarray]], tuple[F64, NDArray[np.int64]]],
    items: Iterable[tuple[int, np.ndarray]],
    threads: int,
) -> Iterator[tuple[F64, NDArray[np.int64]]]:
    """`work` of each item, in the items' order, with at most 2 × `threads` items read
    ahead (memory stays bounded however long the stream)."""
    pending: deque[Future[tuple[F64, NDArray[np.int64]]]] = deque()
    for item in items:
        pending.append(pool.submit(work, item))
        if len(pending) >= 2 * threads:
            yield pending.popleft().result()
    while pending:
        yield pending.popleft().result()


REPLAY_THREADS = 4
"""Threads a replay uses at most: each holds some six chunks' worth of temporaries (about
50 MiB for 8 MiB chunks), and a container's CPU quota may be far below the CPUs it sees."""


def kernels() -> dict[str, Kernel]:
    return {"kmeans": KMeansKernel()}
