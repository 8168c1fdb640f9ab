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

Also here: `load_images` (PNG/JPEG via pillow) and the synthetic image generator that the
other image kernels (binarisation, Sobel) share.
"""

from __future__ import annotations

import math
import os
from collections.abc import Iterable
from importlib import import_module
from typing import Any

import numpy as np
from PIL import Image

from ndpkit.errors import NdpkitError
from ndpkit.kernels.base import Kernel, KernelMismatchError
from ndpkit.kernels.lc import Parts, concat_by_offset, merge_by_offset, records_in

GREY_LEVELS = 256
IMAGE_SHAPE = (256, 256)
"""Generated images: 64 KiB records, the same for HE, binarisation and Sobel."""

_core: Any = import_module("ndpkit._core")  # the compiled extension has no type stub
_WIDE_MODES = {"I", "F", "I;16", "I;16B", "I;16L", "I;16N"}


def histogram_u8(pixels: np.ndarray) -> np.ndarray:
    """256 uint64 counts of a contiguous 1-D uint8 array (Rust, 4 sub-tables)."""
    counts: np.ndarray = _core.histogram_u8(pixels)
    return counts


def load_image(path: str | os.PathLike[str]) -> np.ndarray:
    """One PNG/JPEG/… file as a 2-D uint8 grayscale array (colour goes through pillow's "L")."""
    try:
        with Image.open(path) as image:
            if image.mode in _WIDE_MODES:
                raise NdpkitError(
                    f"{os.fspath(path)}: a {image.mode} image has more than 8 bits per pixel; "
                    "convert it to 8-bit grayscale first"
                )
            return np.array(image.convert("L"), dtype=np.uint8)
    except (OSError, ValueError, SyntaxError, Image.DecompressionBombError) as error:
        raise NdpkitError(f"{os.fspath(path)}: cannot read as an image ({error})") from error


def load_images(paths: Iterable[str | os.PathLike[str]]) -> list[np.ndarray]:
    """Images of any sizes; run a kernel per image (`image[None]`) or crop them to one shape."""
    return [load_image(path) for path in paths]


def images_of(chunk: np.ndarray, kernel: str) -> np.ndarray:
    """The chunk as a C-contiguous (n, height, width) uint8 array, or a clear error."""
    if chunk.ndim != 3 or chunk.dtype != np.uint8:
        raise NdpkitError(
            f"{kernel} expects 8-bit grayscale images of shape (n, height, width), got "
            f"{chunk.dtype} {chunk.shape}"
        )
    return np.ascontiguousarray(chunk)


def blocky_images(
    n_images: int,
    seed: int,
    *,
    shape: tuple[int, int] = IMAGE_SHAPE,
    block_px: int = 16,
    noise: int = 12,
    two_level: bool = False,
) -> np.ndarray:
    """Piecewise-constant scenes plus uniform noise: edges for Sobel, a bimodal histogram for
    binarisation (`two_level`), a band to stretch for HE. Built in batches of 32 images so
    the int16 temporaries stay small whatever `n_images` is."""
    rng = np.random.default_rng(seed)
    height, width = shape
    grid = (-(-height // block_px), -(-width // block_px))
    out = np.empty((n_images, height, width), dtype=np.uint8)
    for start in range(0, n_images, 32):
        count = min(32, n_images - start)
        if two_level:
            dark = rng.integers(30, 110, (count, 1, 1), dtype=np.int16)
            bright = rng.integers(146, 226, (count, 1, 1), dtype=np.int16)
            coarse = np.where(rng.random((count, *grid)) < 0.5, dark, bright)
        else:
            coarse = rng.integers(0, 256, (count, *grid), dtype=np.int16)
        scene = coarse.repeat(block_px, axis=1).repeat(block_px, axis=2)[:, :height, :width]
        scene = scene + rng.integers(-noise, noise + 1, (count, height, width), dtype=np.int16)
        np.clip(scene, 0, 255, out=scene)
        out[start : start + count] = scene
    return out


def pixel_rows(images: np.ndarray) -> np.ndarray:
    """(n, h·w) view of (n, h, w) images; unlike reshape(n, -1) also right for n = 0."""
    return images.reshape(len(images), math.prod(images.shape[1:]))


def histograms(images: np.ndarray) -> np.ndarray:
    """(n, 256) uint64: one Rust call per image (≈ 1 µs of overhead per 64 KiB image)."""
    flat = pixel_rows(images)
    counts = np.empty((len(images), GREY_LEVELS), dtype=np.uint64)
    for i, pixels in enumerate(flat):
        counts[i] = histogram_u8(pixels)
    return counts


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
