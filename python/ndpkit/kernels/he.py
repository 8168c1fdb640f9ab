"""HE: histogram equalisation of 8-bit grayscale images (RANS/RFNS §8.1).

Split: the **device** counts each image's 256-bin histogram (the Rust hot loop
`ndpkit._core.histogram_u8`; numpy.bincount is ~8× slower) and sends (n, 256) uint64, i.e.
2 KiB per 64 KiB image (α = 32 for 256×256 images). The **host** turns each histogram into
its equalisation LUT; `apply_luts` remaps the images (a gather the device or the reader can
do). The paper runs the remap on the engine too (α = 1); sending LUTs is the smaller split.

LUT convention (Wikipedia's, integer-exact, round half up):

    LUT[v] = clip(floor(255 · (cdf[v] − cdf_min) / (N − cdf_min) + 1/2), 0, 255)

where cdf is the cumulative histogram, N the pixel count and cdf_min the count of the
darkest grey level present. A constant image (N = cdf_min) has nothing to equalise: its LUT
is the identity. scikit-image's `equalize_hist` maps v to cdf[v] / N instead (no cdf_min
shift); after undoing that shift it agrees with this LUT to ±1 grey level.

Loading PNG/JPEG files and the synthetic images are in `ndpkit.kernels.images`.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from ndpkit.kernels.base import Kernel, KernelMismatchError
from ndpkit.kernels.images import (
    GREY_LEVELS,
    IMAGE_SHAPE,
    blocky_images,
    histograms,
    images_of,
    pixel_rows,
)
from ndpkit.kernels.parts import Parts, concat_by_offset, merge_by_offset, records_in


def equalisation_luts(counts: np.ndarray) -> np.ndarray:
    """(n, 256) uint8 LUTs from (n, 256) histograms, in exact integer arithmetic."""
    cdf = np.cumsum(counts.astype(np.int64), axis=1)
    total = cdf[:, -1:]
    darkest = np.argmax(counts > 0, axis=1)
    cdf_min = np.take_along_axis(cdf, darkest[:, None], axis=1)
    span = total - cdf_min
    flat = span == 0
    span[flat] = 1
    luts = (2 * 255 * (cdf - cdf_min) + span) // (2 * span)
    np.clip(luts, 0, 255, out=luts)
    luts[flat[:, 0]] = np.arange(GREY_LEVELS)
    return np.asarray(luts, dtype=np.uint8)


def apply_luts(images: np.ndarray, luts: np.ndarray) -> np.ndarray:
    """Each image remapped through its own LUT: the equalised images, same shape as the input."""
    flat = pixel_rows(images).astype(np.intp)
    remapped: np.ndarray = np.take_along_axis(luts, flat, axis=1)
    return remapped.reshape(images.shape)


class HistogramEqualisation(Kernel):
    name = "he"
    description = "histogram equalisation of 8-bit grayscale images (device: histograms)"
    dtype = np.dtype(np.uint8)
    record_shape = IMAGE_SHAPE

    def generate(self, size_bytes: int, seed: int) -> np.ndarray:
        """Blocky scenes squeezed into a random dark, low-contrast band (32–127 grey levels
        wide), so equalisation has something to stretch."""
        n_images = records_in(size_bytes, self.record_bytes)
        scenes = blocky_images(n_images, seed).astype(np.uint16)
        rng = np.random.default_rng([seed, 1])
        low = rng.integers(0, 128, (n_images, 1, 1), dtype=np.uint16)
        span = rng.integers(32, 128, (n_images, 1, 1), dtype=np.uint16)
        return (low + scenes * span // 256).astype(np.uint8)

    def device(self, chunk: np.ndarray, state: Any, offset: int) -> Parts:
        return {offset: (histograms(images_of(chunk, self.name)),)}

    def merge(self, partials: list[Any]) -> Parts:
        return merge_by_offset(partials)

    def host(self, merged: Any, state: Any) -> tuple[np.ndarray, bool]:
        """Per image, the equalisation LUT: (n, 256) uint8 in record order."""
        (counts,) = concat_by_offset(merged)
        return equalisation_luts(counts), True

    def reference(self, data: np.ndarray, params: dict[str, Any]) -> np.ndarray:
        """np.histogram per image and the LUT formula in float64 (exact: see module doc)."""
        luts = np.empty((len(data), GREY_LEVELS), dtype=np.uint8)
        for i, image in enumerate(data):
            counts, _ = np.histogram(image, bins=GREY_LEVELS, range=(0, GREY_LEVELS))
            cdf = np.cumsum(counts)
            cdf_min = cdf[counts > 0][0]
            if cdf[-1] == cdf_min:
                luts[i] = np.arange(GREY_LEVELS)
                continue
            scaled = 255 * (cdf - cdf_min) / (cdf[-1] - cdf_min)
            luts[i] = np.clip(np.floor(scaled + 0.5), 0, 255)
        return luts

    def check(self, result: Any, expected: Any) -> None:
        luts, want = np.asarray(result), np.asarray(expected)
        if luts.shape != want.shape:
            raise KernelMismatchError(f"he: LUTs of shape {luts.shape}, expected {want.shape}")
        wrong = np.argwhere(luts != want)
        if len(wrong):
            image, level = (int(v) for v in wrong[0])
            raise KernelMismatchError(
                f"he: {len(wrong)} LUT entries differ; first: image {image}, grey level "
                f"{level} → {luts[image, level]} instead of {want[image, level]}"
            )


def kernels() -> dict[str, Kernel]:
    return {"he": HistogramEqualisation()}
