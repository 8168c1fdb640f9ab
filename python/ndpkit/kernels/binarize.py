"""Binarisation: each 8-bit grayscale pixel becomes one bit (RISP §9).

Rule: bit = 1 iff pixel > t. The threshold is a parameter:

- a fixed t, by default 127 (pixel ≥ 128: the upper half of the range). The device part is then
  a pure stream, memory-bound like RISP's 2-cycle processing cell: one Rust pass
  (`ndp-kernels::pack_rows_above_u8`) compares 64 pixels at a time and stores their 8 bytes;
- "otsu": t per image, scikit-image's `threshold_otsu` (same float operations, so the same t)
  computed on the device from the image's histogram: records are whole images, so the device
  needs no second pass. The device also sends the n thresholds (1 byte per image).

Output: per image `np.packbits` of its row-major pixels (big bit order, the last byte padded
with zeros), i.e. (n, ceil(h·w / 8)) uint8 — α = 8 for 8-bit input; the Rust pass writes
exactly these bytes. (The paper's β = 3 fits 3-byte pixels and 1-byte output; this
package's images are 8-bit grayscale.)
`unpack` recovers boolean images.

Rows: every image gives one fixed-shape uint8 row (`RowKernel`), its packed bits and, with
"otsu", its threshold as one last byte, so a runtime may have the device write it in place
(`device_into`) and hand the host all the rows as one array: the host's bits and thresholds
are then views of it (the bits a strided one), with no merge, no concatenation and no copy.
The Rust pass returns a new array (it takes no output), so `device_into` copies each chunk's
bits into its rows: one chunk's worth of memory, whatever the size of the data set.
"""

from __future__ import annotations

import math
from importlib import import_module
from typing import Any, Literal, NamedTuple

import numpy as np

from ndpkit.errors import NdpkitError
from ndpkit.kernels.base import Kernel, KernelMismatchError, RowKernel, RowSpec, param
from ndpkit.kernels.images import (
    blocky_images,
    histogram_counts,
    histograms,
    images_of,
    pack_above,
    pixel_rows,
    rows_out,
    writable_in_place,
)
from ndpkit.kernels.parts import Parts, in_order, merge_by_offset, records_in

Threshold = int | Literal["otsu"]
DEFAULT_THRESHOLD = 127
_BIT_WEIGHTS = np.array([128, 64, 32, 16, 8, 4, 2, 1], dtype=np.uint16)


class BinaryImages(NamedTuple):
    bits: np.ndarray  # (n, ceil(h*w/8)) uint8, np.packbits per image
    thresholds: np.ndarray  # (n,) uint8: pixel > threshold is 1


def otsu_thresholds(counts: np.ndarray) -> np.ndarray:
    """(n,) uint8 Otsu thresholds from (n, 256) histograms, vectorised over images.

    Repeats scikit-image's `threshold_otsu` operation for operation (float32 counts, float64
    means): its histogram spans only [min, max] of the image, ours all 256 levels, and the
    extra empty bins add exact zeros, so the between-class variances inside [min, max) are
    bit-identical and argmax picks the same level. Constant images return their value."""
    counts = histogram_counts(counts, "otsu_thresholds")
    weights = counts.astype(np.float32)
    levels = np.arange(counts.shape[1])
    weighted = weights * levels
    weight1 = np.cumsum(weights, axis=1)
    weight2 = np.cumsum(weights[:, ::-1], axis=1)[:, ::-1]
    with np.errstate(divide="ignore", invalid="ignore"):
        mean1 = np.cumsum(weighted, axis=1) / weight1
        mean2 = (np.cumsum(weighted[:, ::-1], axis=1) / weight2[:, ::-1])[:, ::-1]
        variance = weight1[:, :-1] * weight2[:, 1:] * (mean1[:, :-1] - mean2[:, 1:]) ** 2
    present = counts > 0
    darkest = np.argmax(present, axis=1)
    brightest = counts.shape[1] - 1 - np.argmax(present[:, ::-1], axis=1)
    inside = (levels[:-1] >= darkest[:, None]) & (levels[:-1] < brightest[:, None])
    variance[~inside] = -np.inf
    best = np.argmax(variance, axis=1)
    return np.asarray(np.where(darkest == brightest, darkest, best), dtype=np.uint8)


def unpack(result: BinaryImages, shape: tuple[int, int]) -> np.ndarray:
    """(n, height, width) bool images from packed bits, or an NdpkitError if `shape` is not
    one the bits can hold: ceil(height · width / 8) bytes per image. (np.unpackbits pads with
    zeros or drops bits to the count it is given, so a wrong shape gave images with made-up
    dark pixels, or with pixels missing, without a word.)"""
    packed = np.asarray(result.bits)
    if len(shape) != 2:
        raise NdpkitError(f"binarize: unpack needs an image shape (height, width), got {shape}")
    height, width = shape
    pixels = height * width
    if packed.ndim != 2 or height < 0 or width < 0 or -(-pixels // 8) != packed.shape[1]:
        per_image = packed.shape[1] if packed.ndim == 2 else None
        raise NdpkitError(
            f"binarize: images of shape {tuple(shape)} take {-(-pixels // 8)} packed bytes "
            f"each, the bits have {per_image} (shape {packed.shape})"
        )
    bits = np.unpackbits(packed, axis=1, count=pixels)
    images: np.ndarray = bits.reshape(len(bits), *shape).astype(bool)
    return images


class Binarize(RowKernel):
    name = "binarize"
    description = "8-bit grayscale pixel → 1 bit (pixel > threshold), packed 8 per byte"
    dtype = np.dtype(np.uint8)
    record_shape = (256, 256)

    def __init__(self, threshold: Threshold = DEFAULT_THRESHOLD) -> None:
        self.threshold = _valid_threshold(threshold)

    def generate(self, size_bytes: int, seed: int) -> np.ndarray:
        """Two-level blocky scenes (dark 30–109, bright 146–225) plus ±24 noise: bimodal."""
        return blocky_images(
            records_in(size_bytes, self.record_bytes), seed, two_level=True, noise=24
        )

    def params(self, seed: int) -> dict[str, Any]:
        return {"threshold": self.threshold}

    def init(self, params: dict[str, Any]) -> dict[str, Any]:
        """The params checked once (a missing threshold was a bare KeyError in a worker)."""
        return {"threshold": _valid_threshold(param(params, "threshold", self.name))}

    def device(self, chunk: np.ndarray, state: Any, offset: int) -> Parts:
        """Packed bits; with "otsu" also the per-image thresholds found from the histograms."""
        bits, thresholds = _binarised(images_of(chunk, self.name), state)
        return {offset: (bits,) if thresholds is None else (bits, thresholds)}

    def row_spec(self, state: Any) -> RowSpec:
        """The packed bits of one record, then with "otsu" its threshold."""
        packed_bytes = -(-math.prod(self.record_shape) // 8)
        threshold_bytes = 1 if _valid_threshold(state["threshold"]) == "otsu" else 0
        return RowSpec(np.dtype(np.uint8), (packed_bytes + threshold_bytes,))

    def device_into(self, chunk: np.ndarray, state: Any, offset: int, out: np.ndarray) -> None:
        images = images_of(chunk, self.name)
        otsu = _valid_threshold(state["threshold"]) == "otsu"
        rows = rows_out(out, (len(images), *self.row_spec(state).shape), np.uint8, self.name)
        # With a fixed threshold a row is just the packed bits, so they go straight in;
        # Otsu's rows end with the threshold, which leaves the bits strided.
        target = None if otsu else writable_in_place(rows)
        bits, thresholds = _binarised(images, state, target)
        if target is None:
            rows[:, : bits.shape[1]] = bits
        if thresholds is not None:
            rows[:, -1] = thresholds

    def rows_merged(self, rows: np.ndarray, state: Any) -> Parts:
        if _valid_threshold(state["threshold"]) == "otsu":
            return {0: (rows[:, :-1], rows[:, -1])}
        return {0: (rows,)}

    def merge(self, partials: list[Any]) -> Parts:
        return merge_by_offset(partials)

    def host(self, merged: Any, state: Any) -> tuple[BinaryImages, bool]:
        columns = in_order(merged)
        if len(columns) == 2:
            return BinaryImages(*columns), True
        (bits,) = columns
        threshold = _valid_threshold(state["threshold"])
        return BinaryImages(bits, np.full(len(bits), threshold, dtype=np.uint8)), True

    def reference(self, data: np.ndarray, params: dict[str, Any]) -> BinaryImages:
        """scikit-image's threshold_otsu per image (or the fixed t); bits packed by a dot
        product with the bit weights instead of np.packbits."""
        threshold = _valid_threshold(param(params, "threshold", self.name))
        data = images_of(data, self.name)
        if threshold == "otsu":
            filters: Any = import_module("skimage.filters")  # lazily: the device never needs it
            # scikit-image has no threshold for an image without pixels: 0, as the kernel says
            thresholds = np.array(
                [filters.threshold_otsu(image) if image.size else 0 for image in data],
                dtype=np.uint8,
            )
        else:
            thresholds = np.full(len(data), threshold, dtype=np.uint8)
        above = pixel_rows(data) > thresholds[:, None]
        padded = np.zeros((len(data), -(-above.shape[1] // 8) * 8), dtype=np.uint16)
        padded[:, : above.shape[1]] = above
        octets = padded.reshape(len(data), padded.shape[1] // 8, 8)
        bits = (octets @ _BIT_WEIGHTS).astype(np.uint8)
        return BinaryImages(bits, thresholds)

    def check(self, result: Any, expected: Any) -> None:
        for field in BinaryImages._fields:
            got, want = np.asarray(getattr(result, field)), np.asarray(getattr(expected, field))
            if got.shape != want.shape:
                raise KernelMismatchError(f"binarize: {field} {got.shape}, expected {want.shape}")
            wrong = np.argwhere(got != want)
            if len(wrong):
                raise KernelMismatchError(
                    f"binarize: {len(wrong)} {field} entries differ; first at "
                    f"{tuple(int(v) for v in wrong[0])}: {got[tuple(wrong[0])]} instead of "
                    f"{want[tuple(wrong[0])]}"
                )


def _binarised(
    images: np.ndarray, state: Any, out: np.ndarray | None = None
) -> tuple[np.ndarray, np.ndarray | None]:
    """The device part: packed bits (into `out` if given), and with "otsu" the thresholds
    it found (else None)."""
    threshold = _valid_threshold(state["threshold"])
    if threshold == "otsu":
        thresholds = otsu_thresholds(histograms(images))
        return pack_above(images, thresholds, out), thresholds
    return pack_above(images, np.full(len(images), threshold, dtype=np.uint8), out), None


def _valid_threshold(threshold: object) -> Threshold:
    # Compared as a string only if it is one: an array of thresholds compared elementwise
    # with "otsu" was a ValueError from numpy ("truth value of an array … is ambiguous").
    if isinstance(threshold, str) and threshold == "otsu":
        return "otsu"
    if (
        isinstance(threshold, int | np.integer)
        and not isinstance(threshold, bool)
        and 0 <= int(threshold) <= 255
    ):
        return int(threshold)
    raise NdpkitError(f"binarize threshold must be 0..255 or 'otsu', got {threshold!r}")


def kernels() -> dict[str, Kernel]:
    return {"binarize": Binarize()}
