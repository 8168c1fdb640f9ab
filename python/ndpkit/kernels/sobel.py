"""Sobel: 3×3 gradient magnitude of 8-bit grayscale images (RISP §9).

Records are whole images, so no chunk ever needs a neighbour's rows.

Conventions:

- Kernels: gx = [1 2 1]ᵀ ⊗ [−1 0 1] (derivative across columns), gy its transpose; raw
  integer responses in −1020..1020.
- Border: scipy.ndimage's (and scikit-image's) default mode "reflect" (d c b a | a b c d); for
  a 3×3 kernel that is the edge pixel repeated.
- Output: uint8, the same size as the input (RISP's β = 1):

      out = floor(sqrt((gx² + gy²) / 32) + 1/2)      # round half up

  i.e. the magnitude scaled by 1/(4·√2): 255 · skimage.filters.sobel(image) before rounding.
  The largest response an 8-bit window can give is gx = 1020, gy = 510 (a diagonal step), so
  outputs lie in 0..202 and nothing is ever clipped.
- Exactness: the float32 evaluation is exact. gx² + gy² < 2²⁴ and the scaling is a power of
  two; a sqrt that is not a tie lies ≥ 7·10⁻⁵ from every k + 1/2, while float32 rounds by
  ≤ 8·10⁻⁶ below 256 (twice: sqrt, then + 1/2). So the reference (scipy.ndimage.sobel in
  float64, same formula) must match bit for bit; scikit-image's float normalisation matches
  to ±1 grey level.
- Rows: each image's output is one row of the image's shape (`RowKernel`), so a runtime may
  have the device write it in place (`device_into`) and hand the host all of them as one
  array, with no merge, no concatenation and no copy.
"""

from __future__ import annotations

from importlib import import_module
from typing import Any

import numpy as np

from ndpkit.errors import NdpkitError
from ndpkit.kernels.base import Kernel, KernelMismatchError, RowKernel, RowSpec
from ndpkit.kernels.images import IMAGE_SHAPE, blocky_images, check_pixels, images_of, rows_out
from ndpkit.kernels.parts import Parts, in_order, merge_by_offset, records_in

_GROUP_PIXELS = 1 << 16
"""Images padded together: small images share one pass, a 256×256 image goes alone."""
_SPAN = 1 << 16
"""Most output pixels per span of the stencil passes: ~14 B/pixel of temporaries stay in L2.
Flat spans ran 256×256 images ~1.3× and 1024×1024 images ~1.6× faster than 2-D passes over
whole images; 32 Ki–128 Ki spans were within this shared machine's noise of each other."""
_SCALE = np.float32(1 / 32)
_HALF = np.float32(0.5)


class _Buffers:
    """Temporaries reused across batches and spans, so no call pays for fresh memory.

    A batch of images is padded into one flat int16 array whose rows are width + 2 long.
    Every stencil tap is then a shift of that flat array (±1 for columns, ±(width + 2) for
    rows), so each pass is one contiguous 1-D ufunc call; outputs that land on padding
    (the two extra columns, rows between images) are computed and thrown away."""

    def __init__(self, count: int, height: int, width: int) -> None:
        row = width + 2
        span_reach = _SPAN + 2 * row
        self.padded = np.empty(count * (height + 2) * row, dtype=np.int16)
        self.magnitude = np.empty(count * (height + 2) * row, dtype=np.float32)
        self.smooth = np.empty(span_reach, dtype=np.int16)
        self.diff = np.empty(span_reach, dtype=np.int16)
        self.gx = np.empty(_SPAN, dtype=np.int16)
        self.gy = np.empty(_SPAN, dtype=np.int16)
        self.gy_squared = np.empty(_SPAN, dtype=np.float32)


def sobel_magnitude(images: np.ndarray, out: np.ndarray | None = None) -> np.ndarray:
    """The uint8 magnitude of each (height, width) image (see the module doc), written into
    `out` (any uint8 array of the images' shape) if given, else into a new array."""
    check_pixels(images, "sobel")
    if images.ndim != 3:
        raise NdpkitError(f"sobel: need images of shape (n, height, width), got {images.shape}")
    count, height, width = images.shape
    out = np.empty_like(images) if out is None else rows_out(out, images.shape, np.uint8, "sobel")
    if images.size == 0:
        return out
    group = max(1, _GROUP_PIXELS // (height * width))
    work = _Buffers(min(group, count), height, width)
    for start in range(0, count, group):
        _sobel_batch(images[start : start + group], work, out[start : start + group])
    return out


def _sobel_batch(images: np.ndarray, work: _Buffers, out: np.ndarray) -> None:
    """Pad (edge repeated), run the stencil span by span, keep the interior."""
    count, height, width = images.shape
    row = width + 2
    size = count * (height + 2) * row
    padded = work.padded[:size].reshape(count, height + 2, row)
    padded[:, 1:-1, 1:-1] = images
    padded[:, 0, 1:-1] = images[:, 0]
    padded[:, -1, 1:-1] = images[:, -1]
    padded[:, :, 0] = padded[:, :, 1]
    padded[:, :, -1] = padded[:, :, -2]
    first, stop = row + 1, size - row - 1
    step = -(-(stop - first) // -(-(stop - first) // _SPAN))  # equal spans, none > _SPAN
    for start in range(first, stop, step):
        _sobel_span(work, row, start, min(start + step, stop))
    magnitude = work.magnitude[:size].reshape(count, height + 2, row)
    np.copyto(out, magnitude[:, 1:-1, 1:-1], casting="unsafe")


def _sobel_span(work: _Buffers, row: int, first: int, stop: int) -> None:
    """Magnitudes of the flat positions first..stop-1 (int16 stencil, float32 magnitude)."""
    n = stop - first
    taps = work.padded[first - row - 1 : stop + row + 1]
    left, middle, right = taps[:-2], taps[1:-1], taps[2:]
    smooth, diff = work.smooth[: n + 2 * row], work.diff[: n + 2 * row]
    np.add(left, right, out=smooth)
    smooth += middle
    smooth += middle
    np.subtract(right, left, out=diff)
    gx, gy = work.gx[:n], work.gy[:n]
    np.add(diff[:n], diff[2 * row : 2 * row + n], out=gx)
    gx += diff[row : row + n]
    gx += diff[row : row + n]
    np.subtract(smooth[2 * row : 2 * row + n], smooth[:n], out=gy)
    squared, gy_squared = work.magnitude[first:stop], work.gy_squared[:n]
    np.copyto(squared, gx)
    squared *= squared
    np.copyto(gy_squared, gy)
    gy_squared *= gy_squared
    squared += gy_squared
    squared *= _SCALE
    np.sqrt(squared, out=squared)
    squared += _HALF


def sobel_reference(image: np.ndarray) -> np.ndarray:
    """scipy.ndimage.sobel on one image in float64, then the module's rounding formula."""
    ndimage: Any = import_module("scipy.ndimage")  # lazily: the device never needs scipy

    pixels = image.astype(np.float64)
    gx = ndimage.sobel(pixels, axis=1, mode="reflect")
    gy = ndimage.sobel(pixels, axis=0, mode="reflect")
    magnitude = np.floor(np.sqrt((gx * gx + gy * gy) / 32) + 0.5)
    return np.asarray(magnitude, dtype=np.uint8)


class Sobel(RowKernel):
    name = "sobel"
    description = "3×3 Sobel gradient magnitude of 8-bit grayscale images, uint8 out"
    dtype = np.dtype(np.uint8)
    record_shape = IMAGE_SHAPE

    def generate(self, size_bytes: int, seed: int) -> np.ndarray:
        """Blocky scenes (16-pixel blocks of random grey) plus ±12 noise: edges and texture."""
        return blocky_images(records_in(size_bytes, self.record_bytes), seed)

    def device(self, chunk: np.ndarray, state: Any, offset: int) -> Parts:
        return {offset: (sobel_magnitude(images_of(chunk, self.name)),)}

    def row_spec(self, state: Any) -> RowSpec:
        return RowSpec(np.dtype(np.uint8), self.record_shape)

    def device_into(self, chunk: np.ndarray, state: Any, offset: int, out: np.ndarray) -> None:
        sobel_magnitude(images_of(chunk, self.name), out)

    def rows_merged(self, rows: np.ndarray, state: Any) -> Parts:
        return {0: (rows,)}

    def merge(self, partials: list[Any]) -> Parts:
        return merge_by_offset(partials)

    def host(self, merged: Any, state: Any) -> tuple[np.ndarray, bool]:
        (edges,) = in_order(merged)
        return edges, True

    def reference(self, data: np.ndarray, params: dict[str, Any]) -> np.ndarray:
        data = images_of(data, self.name)
        out = np.empty(data.shape, dtype=np.uint8)
        for i, image in enumerate(data):
            out[i] = sobel_reference(image)
        return out

    def check(self, result: Any, expected: Any) -> None:
        got, want = np.asarray(result), np.asarray(expected)
        if got.shape != want.shape:
            raise KernelMismatchError(f"sobel: output {got.shape}, expected {want.shape}")
        wrong = np.argwhere(got != want)
        if len(wrong):
            at = tuple(int(v) for v in wrong[0])
            worst = int(np.max(np.abs(got.astype(np.int16) - want.astype(np.int16))))
            raise KernelMismatchError(
                f"sobel: {len(wrong)} pixels differ (at most by {worst}); first at "
                f"(image, row, column) {at}: {got[at]} instead of {want[at]}"
            )


def kernels() -> dict[str, Kernel]:
    return {"sobel": Sobel()}
