"""8-bit images for the image kernels (HE, Binarization, Sobel): loading image files (PNG,
JPEG, TIFF, BMP, netpbm, WebP), the seeded synthetic generator they share, and the
per-image hot loops in Rust (`ndp-kernels`): histograms, compare-and-pack, LUT remapping.
Each takes a whole batch of images in one call, with the GIL released.

Those kernels emit one fixed-shape row per image (`RowKernel`), so this module also holds
the check of the output their in-place device parts are handed (`rows_out`); reading the
rows back without a copy is `parts.in_order`."""

from __future__ import annotations

import math
import os
import re
import warnings
from collections.abc import Iterable
from importlib import import_module
from typing import Any

import numpy as np
from PIL import Image

from ndpkit.errors import NdpkitError, SpecError
from ndpkit.kernels.base import check_out
from ndpkit.kernels.parts import checked_seed

GREY_LEVELS = 256
IMAGE_SHAPE = (256, 256)
"""Generated images: 64 KiB records, the same for HE, binarisation and Sobel."""

_core: Any = import_module("ndpkit._core")  # the compiled extension has no type stub
WIDE_MODES = frozenset({"I", "F", "I;16", "I;16B", "I;16L", "I;16N"})
"""Pillow modes of more than 8 bits per pixel, which its conversion to "L" clips at 255."""


SAMPLES_16_BIT = re.compile(r"(?:I|L|LA|RGB|RGBA|RGBX|CMYK);16[BLN]?$")
"""Raw modes of 16 bits per sample (not packed pixels of 16 bits, such as BMP's `BGR;16`,
whose samples are 5 or 6 bits and which pillow widens to 8 correctly)."""


def wide_mode_error(image: Image.Image) -> str | None:
    """Why an opened image is refused (its levels would be clipped), or None. Pillow opens a
    16-bit colour PNG or TIFF as mode RGB or RGBA, keeping only the high byte of each
    sample: its depth shows only in the decoder's raw mode (`RGB;16B`); a netpbm file's
    maxval and a TIFF's own tags say what the raw mode does not (see their checks)."""
    if image.mode in WIDE_MODES:
        return (
            f"an image of mode {image.mode} has more than 8 bits per pixel; convert it to 8-bit "
            "grayscale first"
        )
    for tile in getattr(image, "tile", None) or ():
        args = tile[3] if len(tile) > 3 else None
        raw = args[0] if isinstance(args, tuple) and args else args  # ("RGB;16B", …) or "RGB"
        if isinstance(raw, str) and SAMPLES_16_BIT.match(raw):
            return (
                f"an image of raw mode {raw} has more than 8 bits per sample; pillow would keep "
                "only the high byte of each: convert it to 8 bits first"
            )
        maxval = args[1] if tile[0] in ("ppm", "ppm_plain") and isinstance(args, tuple) else 0
        if maxval > 255:  # ("RGB", 65535): pillow scales each sample down to 8 bits
            return (
                f"a netpbm image of maxval {maxval} has more than 8 bits per sample; pillow "
                "would scale each down to 8 bits: convert it to 8 bits first"
            )
    return _tiff_samples_error(image)


TIFF_BITS_PER_SAMPLE, TIFF_SAMPLE_FORMAT, TIFF_SIGNED = 258, 339, 2


def _tiff_samples_error(image: Image.Image) -> str | None:
    """Why a TIFF whose samples pillow would misread is refused, or None: 16-bit samples
    stored plane by plane are decoded as 8-bit ones (raw mode `R`, garbage), and signed
    8-bit ones as unsigned (-1 as 255), with nothing in the mode or raw mode to say so."""
    tags = getattr(image, "tag_v2", None) if image.format == "TIFF" else None
    if tags is None:
        return None
    bits = tags.get(TIFF_BITS_PER_SAMPLE, (1,))
    bits = bits if isinstance(bits, tuple) else (bits,)
    if max(bits) > 8:
        return (
            f"a TIFF of {max(bits)}-bit samples has more than 8 bits per sample; pillow "
            "would misread it or keep only the high byte of each: convert it to 8 bits first"
        )
    formats = tags.get(TIFF_SAMPLE_FORMAT, (1,))
    if TIFF_SIGNED in (formats if isinstance(formats, tuple) else (formats,)):
        return (
            "a TIFF of signed 8-bit samples: pillow would read -1 as 255; convert it to "
            "unsigned 8-bit first"
        )
    return None


FIRST_FRAME_FORMATS = frozenset({"PNG", "JPEG", "MPO"})
"""Formats whose first frame is the image itself: an animated PNG's default image (what a
viewer without APNG shows) and a camera's MPO JPEG's main picture (the others are its
thumbnails or depth maps). The frames of a multi-page TIFF or an animated WebP are peers:
which are images and which are thumbnails or masks is not the file's to say."""


def frames_error(image: Image.Image) -> str | None:
    """Why a file of several frames is refused (a multi-page TIFF, an animated WebP), or
    None. Taking its first frame, as pillow does, would drop the others without a word."""
    if image.format in FIRST_FRAME_FORMATS:
        return None
    frames = _frame_count(image)
    if frames == 1:
        return None
    what = {"TIFF": "a multi-page TIFF of {} pages", "WEBP": "an animated WebP of {} frames"}
    return (
        what.get(str(image.format), "a file of {} frames").format(frames)
        + "; each file is imported as one image: save each page or frame as a file of its own "
        "first"
    )


def _frame_count(image: Image.Image) -> int:
    """How many frames a file holds; a damaged header of a later page is an OSError, as
    pillow's other read errors are. Counting reads every page's header, and pillow's TIFF
    reader raises whatever its parsing meets there (TypeError "Missing dimensions", a
    KeyError for an unknown compression code, …), none of which its `open` converts."""
    try:
        return int(getattr(image, "n_frames", 1))
    except Exception as exc:  # untrusted bytes: any of pillow's parsing errors
        raise OSError(f"a page after the first is damaged ({type(exc).__name__}: {exc})") from exc


def refusal(image: Image.Image) -> str | None:
    """Why an opened image is not read (`wide_mode_error`, `colour_space_error`,
    `frames_error`), or None."""
    return wide_mode_error(image) or colour_space_error(image) or frames_error(image)


OTHER_COLOUR_SPACES = {"LAB": "CIELab"}
"""Modes pillow opens whose samples it does not convert faithfully: its conversion of CIELab to
grey is unsupported ("conversion from LAB to RGB not supported", raised only once the
pixels were read) and to RGB took the L, a and b bytes as R, G and B (up to 75 levels off
the source's colours)."""


def colour_space_error(image: Image.Image) -> str | None:
    """Why an image in another colour space than RGB or grey is refused, or None (said from
    its header, with the other files' header errors)."""
    space = OTHER_COLOUR_SPACES.get(image.mode)
    if space is None:
        return None
    return (
        f"an image in the {space} colour space (mode {image.mode}); pillow does not convert it "
        "to RGB or grey levels faithfully: convert it to sRGB or grayscale first"
    )


def load_image(path: str | os.PathLike[str]) -> np.ndarray:
    """One PNG/JPEG/TIFF/BMP/netpbm/WebP/… file as a 2-D uint8 grayscale array (colour
    goes through pillow's "L"); images of more than 8 bits per sample, and files of several
    frames but PNG's and JPEG's, are refused (`refusal`).

    Pillow's remarks as it reads (a UserWarning: "Palette images with Transparency expressed
    in bytes…", "Corrupt EXIF data…") are kept quiet, as `ndpkit data import` keeps them:
    they named no file, and where warnings are errors (`-W error`, pytest's `error`) a
    palette PNG with a transparent colour was not read but a bare UserWarning. So is its
    decompression-bomb warning there, which is then this error naming the file."""
    if not isinstance(path, str | bytes | os.PathLike):  # None: "… has no attribute 'read'"
        raise SpecError(f"must be a path (a str or os.PathLike), got {path!r}", field="path")
    try:
        with warnings.catch_warnings():
            warnings.filterwarnings("ignore", category=UserWarning, module="PIL")
            with Image.open(path) as image:
                if (why := refusal(image)) is not None:
                    raise NdpkitError(f"{os.fspath(path)}: {why}")
                return np.array(image.convert("L"), dtype=np.uint8)
    except _UNREADABLE as error:
        raise NdpkitError(f"{os.fspath(path)}: cannot read as an image ({error})") from error


_UNREADABLE = (
    OSError,
    ValueError,
    SyntaxError,
    Image.DecompressionBombError,
    Image.DecompressionBombWarning,  # raised where warnings are errors
)
"""What pillow raises on a file it cannot read: OSError and ValueError (a truncated chunk),
SyntaxError (some headers), and its decompression-bomb error (and warning)."""


def load_images(paths: Iterable[str | os.PathLike[str]]) -> list[np.ndarray]:
    """Images of any sizes; run a kernel per image (`image[None]`) or crop them to one shape."""
    if isinstance(paths, str | os.PathLike):  # a str is iterable: it was read as "/", "t", …
        raise SpecError(
            f"load_images takes a list of paths, got one: {paths!r}; use load_image",
            field="paths",
        )
    return [load_image(path) for path in paths]


def images_of(chunk: np.ndarray, kernel: str) -> np.ndarray:
    """The chunk as a C-contiguous (n, height, width) uint8 array, or a clear error. The
    references take their data through it too: given 16-bit, float or RGB images, or one
    image without `[None]`, they answered (HE's histogram dropped the levels past 255,
    binarisation counted them as bright) or failed in numpy (Sobel's AxisError)."""
    chunk = np.asarray(chunk)
    if chunk.ndim != 3 or chunk.dtype != np.uint8:
        # The shape only where it is what is wrong: run_in_memory and measure pass chunks,
        # and float images were "got float64 (3, 256, 256)" for an array of 16 of them.
        got = f"{chunk.dtype} {chunk.shape}" if chunk.ndim != 3 else f"{chunk.dtype} images"
        raise NdpkitError(
            f"{kernel} expects 8-bit grayscale images of shape (n, height, width), got {got}"
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
    rng = np.random.default_rng(checked_seed(seed))
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


def histograms(images: np.ndarray, out: np.ndarray | None = None) -> np.ndarray:
    """(n, 256) uint64 counts of each image's grey levels (Rust: bit planes with AVX-512, else
    eight sub-tables), written into `out` (C-contiguous, that shape) if given."""
    rows = _rows(images)
    check_out(out, np.uint64, "histograms", (len(rows), 256))
    counts: np.ndarray = _core.histograms_u8(rows, out)
    return counts


def histogram_counts(counts: np.ndarray, what: str) -> np.ndarray:
    """`counts` if it is (n, 256) histograms, whole numbers ≥ 0 as `histograms` gives them,
    else an NdpkitError naming `what`: one histogram without its axis of images was numpy's
    AxisError or IndexError, and 255 bins or negative counts gave LUTs and thresholds of no
    image."""
    given = np.asarray(counts)
    if given.ndim != 2 or given.shape[1] != GREY_LEVELS:
        raise NdpkitError(
            f"{what}: need one histogram of {GREY_LEVELS} counts per image, shape "
            f"(n, {GREY_LEVELS}), got {given.shape} (one histogram: counts[None])"
        )
    if given.dtype.kind not in "iu" or (given.dtype.kind == "i" and given.size and given.min() < 0):
        raise NdpkitError(f"{what}: counts must be whole numbers ≥ 0, got {given.dtype}")
    return given


def pack_above(
    images: np.ndarray, thresholds: np.ndarray, out: np.ndarray | None = None
) -> np.ndarray:
    """(n, ceil(h·w / 8)) uint8: per image, `np.packbits(image.ravel() > threshold)` (first
    pixel in the top bit, the last byte zero-padded), in one Rust pass; into `out`
    (C-contiguous, that shape) if given."""
    given = np.asarray(thresholds)
    if given.dtype.kind not in "iu" or (given.size and (given.min() < 0 or given.max() > 255)):
        raise NdpkitError(f"binarize: thresholds must be whole numbers from 0 to 255, got {given}")
    limits = np.ascontiguousarray(given, dtype=np.uint8)
    rows = _rows(images)
    if limits.shape != (len(rows),):  # (n, 1) was the binding's "dimensionality mismatch"
        raise NdpkitError(
            f"binarize: need one threshold per image, shape ({len(rows)},), got {given.shape}"
        )
    check_out(out, np.uint8, "pack_above", (len(rows), -(-rows.shape[1] // 8)))
    bits: np.ndarray = _core.pack_above_u8(rows, limits, out)
    return bits


def remap(images: np.ndarray, luts: np.ndarray, out: np.ndarray | None = None) -> np.ndarray:
    """Each image through its own 256-entry uint8 LUT (Rust); the shape of `images`. With
    `out` (C-contiguous uint8 of the images' size) the pixels are written there."""
    check_out(out, np.uint8, "remap")
    rows = _rows(images)
    if out is not None and out.size != rows.size:  # numpy's "cannot reshape array of size …"
        raise NdpkitError(
            f"remap: out must hold the images' {rows.size} pixels, got {out.dtype} {out.shape}"
        )
    tables = _luts(luts, len(rows))
    target = None if out is None else out.reshape(rows.shape)
    remapped: np.ndarray = _core.remap_u8(rows, tables, target)
    return remapped.reshape(images.shape)


def _luts(luts: np.ndarray, images: int) -> np.ndarray:
    """`luts` as C-contiguous uint8 tables, one of 256 entries per image, or an NdpkitError:
    a cast wrapped 300 to 44 and cut 199.8 to 199."""
    given = np.asarray(luts)
    if given.shape != (images, 256):
        raise NdpkitError(
            f"remap: need one LUT of 256 entries per image, shape ({images}, 256), got "
            f"{given.shape}"
        )
    if given.dtype.kind not in "iu" or (given.size and (given.min() < 0 or given.max() > 255)):
        raise NdpkitError(
            f"remap: LUT entries must be whole numbers from 0 to 255, got {given.dtype} "
            f"from {given.min() if given.size else '-'} to {given.max() if given.size else '-'}"
        )
    return np.ascontiguousarray(given, dtype=np.uint8)


def _rows(images: np.ndarray) -> np.ndarray:
    """C-contiguous (n, h·w) uint8 pixels: a view of contiguous images, else a copy."""
    check_pixels(images)
    if np.ndim(images) != 3:  # one (h, w) image was counted as h images of one row each
        raise NdpkitError(
            f"image kernels: need images of shape (n, height, width), got {np.shape(images)} "
            "(one image: image[None])"
        )
    return np.ascontiguousarray(pixel_rows(images), dtype=np.uint8)


def check_pixels(images: np.ndarray, kernel: str = "image kernels") -> None:
    """8-bit images or an NdpkitError: a cast would wrap 300 to 44 and cut 0.5 to 0."""
    if np.asarray(images).dtype != np.uint8:
        raise NdpkitError(f"{kernel}: need 8-bit images (uint8), got {np.asarray(images).dtype}")


def writable_in_place(out: np.ndarray) -> np.ndarray | None:
    """`out` if the Rust loops can write into it directly (C-contiguous, aligned and
    writeable, as a chunk's slice of the rows arena is), else None: the caller then copies
    into it."""
    flags = out.flags
    return out if flags.c_contiguous and flags.aligned and flags.writeable else None


def rows_out(out: np.ndarray, shape: tuple[int, ...], dtype: type, kernel: str) -> np.ndarray:
    """`out` if it has the given shape and dtype (the rows `device_into` writes), else a
    clear error: a mismatch would otherwise broadcast silently or fail deep in numpy."""
    if out.shape != shape or out.dtype != dtype:
        raise NdpkitError(
            f"{kernel}: rows output of {out.dtype} {out.shape}, the chunk needs "
            f"{np.dtype(dtype)} {shape}"
        )
    return out
