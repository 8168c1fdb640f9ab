"""LC: a linear classifier over points of 8 float32 features (RANS/RFNS §8.1).

Conventions (the paper leaves f and the weights open):

- f is the **step** function: label = 1 if w·x + b > 0 else 0 (a score of exactly 0 is class 0).
- The **device** emits each point's float32 dot product s = w·x: 4 bytes per 32-byte point,
  the paper's α = 8. The **host** applies f(s + b) as the exact comparison s > −b (a pass over
  1/8 of the data) and returns uint8 labels. Leaving b to the host saves the device a pass
  and a rounding.
- The device computes s in Rust (`ndp-kernels` `dot_f32`, the k-NN distances' AVX-512
  transpose and prefetch), summed **feature by feature in order**, s = ((x₀w₀ + x₁w₁) + x₂w₂)
  + …, each product and sum rounded to float32 (no FMA). That is within Higham's bound
  γ₈·Σ|xⱼwⱼ| of the exact dot, as BLAS's sgemv (another order) is. A chunk that is not
  C-contiguous (a column slice of a wider table, a pandas frame's Fortran-ordered values) is
  copied first, so every point gets the same score whatever its chunk and layout (BLAS, which
  took such chunks, labelled points near the boundary by the chunk size).
- The scores are **rows** (`row_spec`): a runtime may have the device write them in place
  (`device_into`) into one output the host reads, with no merge or concatenation; the host
  takes a single segment as it is.
- Generated features and the seeded weights are **dyadic** (multiples of 1/16 and 1/64, bias a
  multiple of 1/1024): every product and partial sum is exact in float32, so the device's
  float32 labels equal the float64 reference bit for bit whatever the summation order.
  For other data, `reference` marks as uncertain the points whose float64 score lies within
  float32's rounding bound of 0 (Higham's, doubled, plus 2⁻¹²⁶ per product for underflow),
  and `check` compares labels only outside that band. A point whose products all lie on a
  grid 2^g with Σ|xⱼwⱼ| < 2^(g+24) is exact in any order, so it is never uncertain: its
  label is checked even at a score of exactly 0.

Its partials are the per-record `{offset: arrays}` of `ndpkit.kernels.parts`, shared with
every per-record kernel (HE, binarisation, Sobel, FFT2D): merged by union and put in record
order on the host, so merging is associative and commutative.
"""

from __future__ import annotations

from importlib import import_module
from typing import Any, NamedTuple

import numpy as np

from ndpkit.errors import NdpkitError, RecordError
from ndpkit.kernels.base import (
    Kernel,
    KernelMismatchError,
    RowKernel,
    RowSpec,
    exact_float32,
    param,
)
from ndpkit.kernels.images import rows_out
from ndpkit.kernels.parts import Parts, checked_seed, in_order, merge_by_offset, records_in
from ndpkit.native import native_input

_core: Any = import_module("ndpkit._core")  # the compiled extension has no type stub

FEATURES = 8
_U32 = 2.0**-24  # unit roundoff of float32
_TINY32 = float(np.finfo(np.float32).tiny)  # 2⁻¹²⁶, float32's smallest normal number
_EXACT_BLOCK = 1 << 16


class Labels(NamedTuple):
    """The reference answer: labels, and the points too close to the boundary to call."""

    labels: np.ndarray  # uint8 (n,)
    uncertain: np.ndarray  # bool (n,)


class LinearClassifier(RowKernel):
    name = "lc"
    description = "linear classifier, 8 float32 features, label = w·x + b > 0"
    dtype = np.dtype(np.float32)
    record_shape = (FEATURES,)

    def generate(self, size_bytes: int, seed: int) -> np.ndarray:
        """Uniform features on the 1/16 grid in [-8, 8): exact in float32 (see module doc)."""
        n_points = records_in(size_bytes, self.record_bytes)
        rng = np.random.default_rng(checked_seed(seed))
        ints = rng.integers(-128, 128, (n_points, FEATURES), dtype=np.int8)
        points = ints.astype(np.float32)
        points *= np.float32(1 / 16)
        return points

    def params(self, seed: int) -> dict[str, Any]:
        """Weights in [-1, 1] on the 1/64 grid and a bias in [-1, 1] on the 1/1024 grid."""
        rng = np.random.default_rng(checked_seed(seed))
        weights = (rng.integers(-64, 65, FEATURES) / 64).astype(np.float32)
        bias = np.float32(rng.integers(-1024, 1025) / 1024)
        return {"weights": weights, "bias": bias}

    def init(self, params: dict[str, Any]) -> dict[str, Any]:
        """The params, checked here rather than as a KeyError inside a worker."""
        why = "LC computes its scores in float32"
        weights = exact_float32(param(params, "weights", self.name), "lc: weights", why)
        if weights.shape != (FEATURES,) or not np.isfinite(weights).all():
            raise NdpkitError(f"lc: weights must be {FEATURES} finite numbers, got {weights}")
        given = exact_float32(param(params, "bias", self.name), "lc: bias", why)
        if given.shape != ():  # [0.5] was a TypeError from numpy, [0.5, 0.25] a ValueError
            raise NdpkitError(f"lc: bias must be one number, got an array of shape {given.shape}")
        bias = np.float32(given)
        if not np.isfinite(bias):
            raise NdpkitError(f"lc: bias must be finite, got {bias}")
        return {"weights": weights, "bias": bias}

    def device(self, chunk: np.ndarray, state: Any, offset: int) -> Parts:
        """w·x in float32, in one pass over the chunk (see the module doc for the order)."""
        points, weights = _points(chunk), _weights(state)
        # A copy where the chunk is not C-contiguous, aligned and native: BLAS, which took
        # such a chunk, sums in its own order, so a pandas frame's (Fortran-ordered) points
        # near the boundary were labelled by the chunk size and the layout.
        dots: np.ndarray = _core.dot_f32(native_input(points, np.float32), weights)
        return {offset: (dots,)}

    def row_spec(self, state: Any) -> RowSpec:
        return RowSpec(np.dtype(np.float32))

    def device_into(self, chunk: np.ndarray, state: Any, offset: int, out: np.ndarray) -> None:
        """The scores into `out`, float32 of one per point (the row spec): an int32 `out` was
        given the scores truncated, and a (1, n) one took them, as the image kernels refuse."""
        points, weights = _points(chunk), _weights(state)
        rows_out(out, (len(points),), np.float32, self.name)
        # a copy only where it is not C-contiguous, aligned and native (see `device`)
        points = native_input(points, np.float32)
        flags = out.flags
        in_place = flags.c_contiguous and flags.aligned and flags.writeable
        if out.dtype == np.float32 and out.ndim == 1 and in_place:
            _core.dot_f32(points, weights, out)
        else:
            out[...] = _core.dot_f32(points, weights)  # the same bits as in place

    def rows_merged(self, rows: np.ndarray, state: Any) -> Parts:
        return {0: (rows,)}

    def merge(self, partials: list[Any]) -> Parts:
        return merge_by_offset(partials)

    def host(self, merged: Any, state: Any) -> tuple[np.ndarray, bool]:
        """The step function of w·x + b, as w·x > −b: uint8 labels in record order.

        A score that is not finite is an error naming the point, not a label: NaN has no
        side, and ±inf comes from an infinite feature or from a float32 sum past ±3.4e38,
        whose sign need not be the exact score's ([3e38, 3e38, −3e38, −3e38, −3e38] · 1 is
        −3e38, summed in order +inf). (The max and min propagate NaN and reach ±inf, so
        two passes find out; only then is the point looked up.)"""
        (dots,) = in_order(merged)
        if dots.size and not (np.isfinite(dots.max()) and np.isfinite(dots.min())):
            where = int(np.flatnonzero(~np.isfinite(dots))[0])
            if np.isnan(dots[where]):
                why = (
                    "NaN (a NaN feature, an infinite one times a zero weight or against "
                    "another infinity, or products of finite numbers past float32's ±3.4e38 "
                    "of both signs: +inf plus -inf)"
                )
            else:
                why = (
                    f"{float(dots[where])} (an infinite feature, or a sum of products past "
                    "float32's ±3.4e38, whose sign need not be the exact score's)"
                )
            raise RecordError(
                f"lc: the score of point {where} is {why}; LC needs finite points and scores",
                where,
            )
        return (dots > -np.float32(state["bias"])).view(np.uint8), True

    def reference(self, data: np.ndarray, params: dict[str, Any]) -> Labels:
        """float64 numpy matmul; uncertain where float32 rounding could flip the sign. A
        point that is not finite is refused, naming it, as the host part refuses its score:
        a NaN point was labelled 0 (and not uncertain), and an infinite one stopped the
        rounding analysis with numpy's "invalid value encountered in cast"."""
        points = _points(np.asarray(data)).astype(np.float64)
        if not np.isfinite(points).all():
            bad = int(np.flatnonzero(~np.isfinite(points).all(axis=1))[0])
            raise NdpkitError(
                f"lc: point {bad} has a non-finite feature ({points[bad].tolist()}); LC needs "
                "finite points and scores"
            )
        state = self.init(params)  # the float32 weights and bias the device uses, checked
        weights, bias = state["weights"].astype(np.float64), float(state["bias"])
        scores = points @ weights + bias
        magnitude = np.abs(points) @ np.abs(weights)
        # Higham's bound, doubled, plus what underflow may lose: a product below float32's
        # normal range is off by up to 2⁻¹²⁶ (a whole normal unit if the process flushes
        # subnormals to zero).
        rounding_bound = 2 * _gamma(FEATURES) * magnitude + FEATURES * _TINY32
        labels = (scores > 0).astype(np.uint8)
        uncertain = np.abs(scores) <= rounding_bound
        # Usually few points are near 0; they are looked at more closely, a bounded block
        # at a time (weights of 0 put every point there).
        near = np.flatnonzero(uncertain)
        weights_normal = bool(np.all((weights == 0) | (np.abs(weights) >= _TINY32)))
        for start in range(0, len(near), _EXACT_BLOCK):
            block = near[start : start + _EXACT_BLOCK]
            inputs = points[block]
            products = inputs * weights  # exact: 24 × 24 significant bits fit in 53
            exact = _exact_in_float32(products, np.abs(products).sum(axis=1))
            # A subnormal input is read as 0 where the CPU flushes them: not exact then.
            exact &= weights_normal & np.all((inputs == 0) | (np.abs(inputs) >= _TINY32), axis=1)
            uncertain[block] = ~exact
        return Labels(labels, uncertain)

    def check(self, result: Any, expected: Any) -> None:
        labels = np.asarray(result)
        if labels.shape != expected.labels.shape:
            raise KernelMismatchError(
                f"lc: {labels.shape} labels, expected {expected.labels.shape}"
            )
        wrong = np.flatnonzero((labels != expected.labels) & ~expected.uncertain)
        if wrong.size:
            i = int(wrong[0])
            raise KernelMismatchError(
                f"lc: {wrong.size} labels differ from the float64 reference; first at point "
                f"{i}: {int(labels[i])} instead of {int(expected.labels[i])}"
            )


def _exact_in_float32(products: np.ndarray, magnitude: np.ndarray) -> np.ndarray:
    """Points whose float32 dot is exact in any summation order: every product is a multiple
    of 2^g, g ≥ −126, and Σ|products| < 2^(g + 24) (and < 2^128), so each partial sum is a
    multiple of 2^g that fits float32's 24 bits and is 0 or normal (exact even where the
    process flushes subnormals). Then the label is exact, a score of exactly 0 included."""
    mantissa, exponent = np.frexp(products)  # products = mantissa · 2^exponent
    bits = (mantissa * 2.0**53).astype(np.int64)  # exact: |mantissa| < 1
    low = np.where(bits != 0, exponent - 53 + _trailing_zeros(bits), 1 << 20)
    grid = low.min(axis=1)
    room = np.ldexp(1.0, np.clip(grid + 24, -126, 128))
    return np.asarray((magnitude == 0) | ((grid >= -126) & (magnitude < room)))


def _trailing_zeros(bits: np.ndarray) -> np.ndarray:
    lowest = np.abs(bits) & -np.abs(bits)  # the lowest set bit (bits ≠ 0)
    return np.asarray(np.log2(np.maximum(lowest, 1).astype(np.float64)).astype(np.int64))


def _gamma(n: int) -> float:
    """Higham's γ_n for float32: the relative error bound of an n-term sum of products."""
    return n * _U32 / (1 - n * _U32)


def _points(chunk: np.ndarray) -> np.ndarray:
    """The chunk's float32 points, in either byte order: big-endian float32 (an astropy FITS
    column, `np.dtype(">f4")`) holds the same values, so it is scored as they are (the Rust
    loop takes a native copy), as k-NN and K-Means take it; it was
    refused as if it were another type."""
    native = chunk.dtype.newbyteorder("=") == np.float32
    shaped = chunk.ndim == 2 and chunk.shape[1] == FEATURES
    if not shaped or not native:
        # The shape only where it is what is wrong: run_in_memory and measure pass chunks,
        # and float64 points were "got float64 (3, 8)" for an array of 32,768 of them.
        got = f"{chunk.dtype} {chunk.shape}" if not shaped else f"{chunk.dtype} points"
        raise NdpkitError(f"lc expects float32 points of shape (n, {FEATURES}), got {got}")
    return chunk


def _weights(state: Any) -> np.ndarray:
    return np.ascontiguousarray(state["weights"], dtype=np.float32)


def kernels() -> dict[str, Kernel]:
    return {"lc": LinearClassifier()}
