"""HE: histogram equalisation of 8-bit grayscale images (RANS/RFNS §8.1), in two splits.

- **`he`** (the default, α = 32 for 256×256 images): the device counts each image's 256-bin
  histogram (one Rust call per chunk, `ndp-kernels::histograms_u8`; numpy.bincount is
  ~3× slower) and sends (n, 256) uint64, i.e. 2 KiB per 64 KiB image. The host turns each
  histogram into its equalisation LUT; `apply_luts` remaps the images (a gather the reader
  can do). Sending LUTs is the smaller split.
- **`he-remap`** (the papers' split, α = 1): the device also builds each image's LUT and
  remaps its pixels (Rust, `ndp-kernels::remap_rows_u8`), so it sends the equalised images
  and the host only puts them in record order. The RANS/RFNS profile of HE (α = 1) models
  this split.

LUT convention (Wikipedia's, integer-exact, round half up):

    LUT[v] = clip(floor(255 · (cdf[v] − cdf_min) / (N − cdf_min) + 1/2), 0, 255)

where cdf is the cumulative histogram, N the pixel count and cdf_min the count of the
darkest grey level present. A constant image (N = cdf_min) has nothing to equalise: its LUT
is the identity. scikit-image's `equalize_hist` maps v to cdf[v] / N instead (no cdf_min
shift); after undoing that shift it agrees with this LUT to ±1 grey level. An image of one
grey level is the exception: scikit-image maps it to 1.0 (white) everywhere, this LUT leaves it
as it is.

Both splits emit one fixed-shape row per image (`RowKernel`: a 256-count histogram, or the
equalised image), so a runtime may have the device write it in place (`device_into`) and
hand the host all the rows as one array, with no merge, no concatenation and no copy. The
Rust loops return new arrays (they take no output), so `device_into` copies each chunk's
result into its rows: one chunk's worth of memory, whatever the size of the data set.

Loading image files (PNG, JPEG, TIFF, BMP, netpbm, WebP) and the synthetic images are in
`ndpkit.kernels.images`.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from ndpkit.kernels.base import Kernel, KernelMismatchError, RowKernel, RowSpec
from ndpkit.kernels.images import (
    GREY_LEVELS,
    IMAGE_SHAPE,
    blocky_images,
    histogram_counts,
    histograms,
    images_of,
    remap,
    rows_out,
    writable_in_place,
)
from ndpkit.kernels.parts import Parts, in_order, merge_by_offset, records_in


def equalisation_luts(counts: np.ndarray) -> np.ndarray:
    """(n, 256) uint8 LUTs from (n, 256) histograms, in exact integer arithmetic."""
    counts = histogram_counts(counts, "equalisation_luts")
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
    return remap(images, luts)


class HistogramEqualisation(RowKernel):
    name = "he"
    description = "histogram equalisation of 8-bit grayscale images (device: histograms)"
    dtype = np.dtype(np.uint8)
    record_shape = IMAGE_SHAPE

    def generate(self, size_bytes: int, seed: int) -> np.ndarray:
        """Blocky scenes squeezed into a random dark, low-contrast band (32–127 grey levels
        wide), so equalisation has something to stretch."""
        n_images = records_in(size_bytes, self.record_bytes)
        images = blocky_images(n_images, seed)
        rng = np.random.default_rng([seed, 1])
        low = rng.integers(0, 128, (n_images, 1, 1), dtype=np.uint16)
        span = rng.integers(32, 128, (n_images, 1, 1), dtype=np.uint16)
        # In place, a batch at a time: uint16 temporaries of the whole were 5x the images
        # (a 64 MiB shard took 335 MiB). At most 127 + 255 · 127 // 256 = 253: no wrap.
        for start in range(0, n_images, 256):
            batch = slice(start, start + 256)
            scaled = images[batch].astype(np.uint16)
            scaled *= span[batch]
            scaled //= 256
            scaled += low[batch]
            images[batch] = scaled
        return images

    def device(self, chunk: np.ndarray, state: Any, offset: int) -> Parts:
        return {offset: (histograms(images_of(chunk, self.name)),)}

    def row_spec(self, state: Any) -> RowSpec:
        return RowSpec(np.dtype(np.uint64), (GREY_LEVELS,))

    def device_into(self, chunk: np.ndarray, state: Any, offset: int, out: np.ndarray) -> None:
        images = images_of(chunk, self.name)
        rows = rows_out(out, (len(images), GREY_LEVELS), np.uint64, self.name)
        target = writable_in_place(rows)
        counts = histograms(images, target)
        if target is None:
            rows[...] = counts

    def rows_merged(self, rows: np.ndarray, state: Any) -> Parts:
        return {0: (rows,)}

    def merge(self, partials: list[Any]) -> Parts:
        return merge_by_offset(partials)

    def host(self, merged: Any, state: Any) -> tuple[np.ndarray, bool]:
        """Per image, the equalisation LUT: (n, 256) uint8 in record order."""
        (counts,) = in_order(merged)
        return equalisation_luts(counts), True

    def reference(self, data: np.ndarray, params: dict[str, Any]) -> np.ndarray:
        """np.histogram per image and the LUT formula in float64 (exact: see module doc)."""
        return reference_luts(images_of(data, self.name))

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


class HistogramEqualisationRemap(HistogramEqualisation):
    """The papers' split: the device sends equalised images (α = 1), the host concatenates."""

    name = "he-remap"
    paper_app = "he"
    papers_split = True
    description = "histogram equalisation of 8-bit grayscale images (device: equalised images)"

    def device(self, chunk: np.ndarray, state: Any, offset: int) -> Parts:
        return {offset: (_equalised(images_of(chunk, self.name)),)}

    def row_spec(self, state: Any) -> RowSpec:
        return RowSpec(np.dtype(np.uint8), self.record_shape)

    def device_into(self, chunk: np.ndarray, state: Any, offset: int, out: np.ndarray) -> None:
        images = images_of(chunk, self.name)
        rows = rows_out(out, images.shape, np.uint8, self.name)
        target = writable_in_place(rows)
        equalised = _equalised(images, target)
        if target is None:
            rows[...] = equalised

    def host(self, merged: Any, state: Any) -> tuple[np.ndarray, bool]:
        """The equalised images, (n, height, width) uint8 in record order."""
        (images,) = in_order(merged)
        return images, True

    def reference(self, data: np.ndarray, params: dict[str, Any]) -> np.ndarray:
        """The reference LUTs applied by numpy indexing, image by image."""
        data = images_of(data, self.name)
        luts = reference_luts(data)
        equalised = np.empty_like(data)
        for i, image in enumerate(data):
            equalised[i] = luts[i][image]
        return equalised

    def check(self, result: Any, expected: Any) -> None:
        images, want = np.asarray(result), np.asarray(expected)
        if images.shape != want.shape:
            raise KernelMismatchError(
                f"he-remap: images of shape {images.shape}, expected {want.shape}"
            )
        wrong = np.argwhere(images != want)
        if len(wrong):
            at = tuple(int(v) for v in wrong[0])
            raise KernelMismatchError(
                f"he-remap: {len(wrong)} pixels differ; first at {at}: {images[at]} instead "
                f"of {want[at]}"
            )


def _equalised(images: np.ndarray, out: np.ndarray | None = None) -> np.ndarray:
    """The he-remap device part: each image through the LUT of its own histogram (into
    `out`, C-contiguous uint8 of the images' size, if given)."""
    return remap(images, equalisation_luts(histograms(images)), out)


def reference_luts(data: np.ndarray) -> np.ndarray:
    """(n, 256) uint8 LUTs: np.histogram per image and the LUT formula in float64."""
    luts = np.empty((len(data), GREY_LEVELS), dtype=np.uint8)
    for i, image in enumerate(data):
        counts, _ = np.histogram(image, bins=GREY_LEVELS, range=(0, GREY_LEVELS))
        cdf = np.cumsum(counts)
        if cdf[-1] == 0 or cdf[-1] == cdf[counts > 0][0]:  # no pixels, or one grey level
            luts[i] = np.arange(GREY_LEVELS)
            continue
        cdf_min = cdf[counts > 0][0]
        scaled = 255 * (cdf - cdf_min) / (cdf[-1] - cdf_min)
        luts[i] = np.clip(np.floor(scaled + 0.5), 0, 255)
    return luts


def kernels() -> dict[str, Kernel]:
    return {"he": HistogramEqualisation(), "he-remap": HistogramEqualisationRemap()}
