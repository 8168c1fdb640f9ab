"""FFT (2-D) (RANS/RFNS §8.1): the spectrum of every 256 × 256 RGB image, channel by channel.

- **Device** (the whole app): per image and channel, 1-D FFTs along the rows, then 1-D FFTs
  along the columns, as the paper's FPGA design does. The rows are real, so the row pass is a
  real FFT (`scipy.fft.rfft`, 129 of 256 bins), the column pass a complex FFT over those bins,
  and the other 127 bins come from Hermitian symmetry F[u, v] = conj F[−u, −v]: the full
  spectrum at about the speed of `scipy.fft.rfft2`. Output: complex64, shape
  (images, 3, 256, 256) (channel first, [choice]), with the chunk's first image index.
- **Host**: none beyond putting the spectra in image order.
- **Rows**: every image's spectrum is one fixed-shape row, complex64 (3, 256, 256)
  (`RowKernel`), so a runtime may have the device write it in place (`device_into`) and hand
  the host all of them as one array, which the host returns as it is: no merge, no
  concatenation, no copy. The row is the full spectrum, the answer `host` returns; the half
  spectrum (129 of 256 columns) would be 1.98× smaller but a different answer.

α: the device turns 1 byte (u8) into 8 bytes (complex64) per pixel and channel, so the measured
α = input / output = **1/8**. The paper prints α = 8 (RANS/RFNS option O16, "printed"); that is
the same factor the other way round. Precision [choice]: float32 arithmetic.

Reference: `numpy.fft.fft2` in complex128. `check` requires, per image and channel,
‖F − F_ref‖₂ ≤ 1e-6 × ‖F_ref‖₂, where ‖F_ref‖₂ = 256 × ‖image channel‖₂ (Parseval), i.e. a
tolerance relative to the channel's energy. Measured errors are at most 1.4e-7 of it (7e-8 on
generated images, 1.3e-7 on scikit-image's samples, 1.4e-7 on a few bright pixels); one pixel
one level off is at least 1.5e-5.
"""

from __future__ import annotations

from typing import Any, NamedTuple

import numpy as np
import scipy.fft  # type: ignore[import-untyped, unused-ignore]
from numpy.typing import NDArray

from ndpkit.errors import NdpkitError
from ndpkit.kernels.base import Kernel, KernelMismatchError, RowKernel, RowSpec, checked_records
from ndpkit.kernels.images import check_pixels
from ndpkit.kernels.parts import checked_seed, records_in

SIDE = 256
CHANNELS = 3
ENERGY_RTOL = 1e-6
"""The spectra's error, ‖F − F_ref‖₂, as a fraction of ‖F_ref‖₂ per image and channel (see the
module docs for what the float32 FFT's is, and what one pixel one level off gives)."""
_HALF = SIDE // 2 + 1

C64 = NDArray[np.complex64]


class Spectra(NamedTuple):
    """Spectra of consecutive images, the first being image `offset`."""

    offset: int
    spectra: C64


def spectrum(images: np.ndarray, out: C64) -> None:
    """The 2-D FFTs of (n, 256, 256, 3) images into `out` (n, 3, 256, 256): rows, then
    columns.

    Bins v > 128 of row u are conj F[−u mod 256, 256 − v]: reversed slices of the half
    spectrum (row 0 maps to itself, rows 1..255 to 255..1), so no gather and no temporary."""
    planes = np.moveaxis(images, -1, 1).astype(np.float32)
    rows = scipy.fft.rfft(planes, axis=3)
    half = scipy.fft.fft(rows, axis=2, overwrite_x=True)
    out[..., :_HALF] = half
    np.conjugate(half[..., :1, _HALF - 2 : 0 : -1], out=out[..., :1, _HALF:])
    np.conjugate(half[..., :0:-1, _HALF - 2 : 0 : -1], out=out[..., 1:, _HALF:])


BATCH_IMAGES = 4
"""Images transformed per call: 6 MiB of spectra stay in cache, and the per-call overhead
is shared (measured best of 1, 2, 4, 8 and 16: 4 was 13 % faster than one at a time)."""


def spectra(images: np.ndarray, out: C64 | None = None) -> C64:
    """Spectra of a chunk of images, a few images at a time, written into `out` (any
    complex64 array of shape (n, 3, 256, 256)) if given, else into a new array."""
    images = checked_records(images, (SIDE, SIDE, CHANNELS), "fft2d")  # numpy's broadcast error
    check_pixels(images, "fft2d")
    shape = (len(images), CHANNELS, SIDE, SIDE)
    if out is None:
        out = np.empty(shape, dtype=np.complex64)
    elif out.shape != shape or out.dtype != np.complex64:
        raise NdpkitError(
            f"fft2d: spectra output of {out.dtype} {out.shape}, the chunk needs complex64 {shape}"
        )
    for start in range(0, len(images), BATCH_IMAGES):
        stop = start + BATCH_IMAGES
        spectrum(images[start:stop], out[start:stop])
    return out


class Fft2d(RowKernel):
    """2-D FFT of 256 × 256 RGB u8 images (see the module docstring)."""

    name = "fft2d"
    description = "2-D FFT of 256x256 RGB images (rows then columns), complex64 spectra"
    dtype = np.dtype(np.uint8)
    record_shape = (SIDE, SIDE, CHANNELS)

    memory_per_input_byte = 56  # measured 48 (base.Kernel), with a margin

    def generate(self, size_bytes: int, seed: int) -> np.ndarray:
        """Smooth gradients plus noise: a spectrum with both a strong DC part and a tail."""
        n_images = records_in(size_bytes, self.record_bytes)
        rng = np.random.default_rng(checked_seed(seed))
        ramp = np.add.outer(np.arange(SIDE), np.arange(SIDE)) / (2 * SIDE)
        tint = rng.uniform(0.0, 160.0, (n_images, 1, 1, CHANNELS))
        out = np.empty((n_images, SIDE, SIDE, CHANNELS), dtype=np.uint8)
        # 32 images at a time: the int64 noise and float64 sums of a whole 64 MiB shard took
        # 1.3 GB. The noise is drawn in the same order, so the images are the same.
        for start in range(0, n_images, 32):
            count = min(32, n_images - start)
            noise = rng.integers(0, 96, (count, SIDE, SIDE, CHANNELS))
            out[start : start + count] = (
                tint[start : start + count] * ramp[None, :, :, None] + noise
            )
        return out

    def _images(self, data: np.ndarray) -> np.ndarray:
        """`data` as whole 8-bit RGB images: float images were transformed as given, NaN
        pixels and all, and came back as spectra of NaN."""
        images = checked_records(data, self.record_shape, self.name)
        check_pixels(images, self.name)
        return images

    def device(self, chunk: np.ndarray, state: Any, offset: int) -> list[Spectra]:
        return [Spectra(offset, spectra(self._images(chunk)))]

    def row_spec(self, state: Any) -> RowSpec:
        return RowSpec(np.dtype(np.complex64), (CHANNELS, SIDE, SIDE))

    def device_into(self, chunk: np.ndarray, state: Any, offset: int, out: np.ndarray) -> None:
        spectra(self._images(chunk), out)

    def rows_merged(self, rows: np.ndarray, state: Any) -> list[Spectra]:
        return [Spectra(0, rows)]

    def merge(self, partials: list[Any]) -> list[Spectra]:
        return sorted((s for p in partials for s in p), key=lambda s: s.offset)

    def host(self, merged: Any, state: Any) -> tuple[C64, bool]:
        """Spectra in image order; the pieces must cover images 0..n-1 without gaps. An
        empty piece (an empty shard's) covers nothing: sorted after the piece that shares
        its offset, it was taken for a gap ("images 5..2 are missing"), so the answer
        depended on the order the partials were merged in."""
        pieces = [piece for piece in merged if len(piece.spectra)]
        expected_offset = 0
        for piece in pieces:
            if piece.offset != expected_offset:
                raise ValueError(f"fft2d: images {expected_offset}..{piece.offset} are missing")
            expected_offset += len(piece.spectra)
        if len(pieces) == 1:  # the rows written in place: as large as 8× the data, not copied
            return pieces[0].spectra, True
        empty = np.empty((0, CHANNELS, SIDE, SIDE), dtype=np.complex64)
        return np.concatenate([p.spectra for p in pieces] or [empty]), True

    def output_bytes(self, partial: Any) -> int:
        """The spectra only: a device sends its records' rows in record order, so a piece's
        offset travels with none of them (as for LC and the other per-record kernels, and as
        the executor counts rows written in place), and α is 1/8 whatever the size."""
        return sum(int(p.spectra.nbytes) for p in partial)

    def reference(self, data: np.ndarray, params: dict[str, Any]) -> NDArray[np.complex128]:
        """numpy's 2-D FFT in float64, channel first."""
        images = self._images(data).astype(np.float64)
        return np.fft.fft2(np.moveaxis(images, -1, 1), axes=(2, 3))

    def check(self, result: Any, expected: Any) -> None:
        """‖F − F_ref‖₂ ≤ ENERGY_RTOL × ‖F_ref‖₂ per image and channel. (The largest single
        error against that bound accepted the spectrum of an image with a pixel 3 levels off:
        the 2-norm of the error is what the bound is about.)"""
        result = np.asarray(result)
        if result.shape != expected.shape:
            raise KernelMismatchError(f"fft2d: spectra {result.shape}, reference {expected.shape}")
        error = np.sqrt((np.abs(result - expected) ** 2).sum(axis=(2, 3)))
        allowed = ENERGY_RTOL * np.sqrt((np.abs(expected) ** 2).sum(axis=(2, 3)))
        bad = ~(error <= allowed)  # a NaN error is no match
        if bad.any():
            image, channel = (int(i) for i in np.argwhere(bad)[0])
            raise KernelMismatchError(
                f"fft2d: image {image} channel {channel} differs by {error[image, channel]:.3g} "
                f"(2-norm), allowed {allowed[image, channel]:.3g} ({ENERGY_RTOL} of its "
                "spectrum's norm)"
            )


def kernels() -> dict[str, Kernel]:
    return {"fft2d": Fft2d()}
