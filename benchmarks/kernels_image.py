"""Single-core throughput of the LC, HE (both splits), binarisation and Sobel device parts.

    .venv/bin/python benchmarks/kernels_image.py [--size-mib 256] [--repeat 5]

Each device part runs over the same data, in runtime-sized chunks, against the library call a
user would write instead: LC, numpy `x @ w`; HE, `numpy.bincount` per image; HE with the
remap on the device (`he-remap`), `numpy.bincount` + the LUT + `lut[image]` per image
(scikit-image's `equalize_hist` is 6× slower still); binarisation, numpy `>` + `packbits`
(for the Otsu variant, scikit-image's `threshold_otsu` per image first); Sobel,
`scipy.ndimage.sobel` on both axes + `hypot`. Scan kernels (LC, HE, binarisation) are also
compared with this machine's single-core read bandwidth, measured here as the fastest numpy
reduction over a large buffer. BLAS is limited to one thread.
Figures are GB/s of input (1e9 bytes), best of `--repeat` after a warm-up, in thread CPU
time (see `best_pair`). The read bandwidth is that of memory only when the data is well
beyond the last-level cache (260 MiB of L3 on this VM: use `--size-mib 1024`); over smaller
data it is the cache's, as the second line of the output says.
"""

from __future__ import annotations

import argparse
import platform
import time
from collections.abc import Callable
from typing import Any

import numpy as np
from scipy import ndimage
from skimage import filters
from threadpoolctl import threadpool_limits

from ndpkit.kernels import Kernel, get_kernel
from ndpkit.kernels.binarize import Binarize
from timing import where_the_data_is

CHUNK_BYTES = 16 << 20
"""What a runtime hands a device per call (whole records)."""


def best_pair(
    first: Callable[[], object], second: Callable[[], object], repeat: int
) -> tuple[float, float]:
    """Best times of two functions, run alternately after a warm-up each. Time is this
    thread's CPU time (user + system, so page faults count): on a shared 2-core machine wall
    time mostly measures the neighbours. Everything measured runs on the calling thread
    (BLAS is limited to one thread; the Rust histogram runs on the caller)."""
    first()
    second()
    times: tuple[list[float], list[float]] = ([], [])
    for _ in range(repeat):
        for fn, out in ((first, times[0]), (second, times[1])):
            start = time.thread_time()
            fn()
            out.append(time.thread_time() - start)
    return min(times[0]), min(times[1])


def read_bandwidth_gbs(size_bytes: int, repeat: int) -> dict[str, float]:
    """numpy reductions over the same bytes: the u8 sum the issue names (it widens every
    byte to uint64, so it is compute-bound) and reductions of the same buffer viewed as wider
    types, which read at memory speed (float32 max the fastest: its sum is partly
    compute-bound). The fastest is taken as the read bandwidth."""
    as_f32 = np.random.default_rng(0).standard_normal(size_bytes // 4, dtype=np.float32)
    as_u8, as_u64 = as_f32.view(np.uint8), as_f32.view(np.uint64)
    cases: dict[str, Callable[[], object]] = {
        "u8 sum (uint64 accumulator)": lambda: as_u8.sum(dtype=np.uint64),
        "same bytes as uint64, sum": as_u64.sum,
        "same bytes as float32, sum": as_f32.sum,
        "same bytes as float32, max": as_f32.max,  # the fastest read here, as in kernels_points
    }
    out = {}
    for name, fn in cases.items():
        out[name] = size_bytes / min(best_pair(fn, fn, repeat)) / 1e9
    return out


def run_device(kernel: Kernel, data: np.ndarray, state: Any) -> None:
    step = max(1, CHUNK_BYTES // kernel.record_bytes)
    for start in range(0, len(data), step):
        kernel.device(data[start : start + step], state, start)


def library_lc(data: np.ndarray, state: Any) -> None:
    step = max(1, CHUNK_BYTES // data[0].nbytes)
    for start in range(0, len(data), step):
        data[start : start + step] @ state["weights"]


def library_he(data: np.ndarray, state: Any) -> None:
    for image in data:
        np.bincount(image.ravel(), minlength=256)


def library_he_remap(data: np.ndarray, state: Any) -> None:
    for image in data:
        counts = np.bincount(image.ravel(), minlength=256)
        cdf = np.cumsum(counts)
        cdf_min = cdf[np.argmax(counts > 0)]
        span = max(int(cdf[-1] - cdf_min), 1)
        lut = ((2 * 255 * (cdf - cdf_min) + span) // (2 * span)).astype(np.uint8)
        lut[image]


def library_binarize(data: np.ndarray, state: Any) -> None:
    step = max(1, CHUNK_BYTES // data[0].nbytes)
    for start in range(0, len(data), step):
        chunk = data[start : start + step]
        np.packbits(chunk.reshape(len(chunk), -1) > state["threshold"], axis=1)


def library_otsu(data: np.ndarray, state: Any) -> None:
    for image in data:
        np.packbits(image.ravel() > filters.threshold_otsu(image))


def library_sobel(data: np.ndarray, state: Any) -> None:
    for image in data:
        pixels = image.astype(np.float32)
        np.hypot(ndimage.sobel(pixels, axis=0), ndimage.sobel(pixels, axis=1))


LIBRARY: dict[str, tuple[str, Callable[[np.ndarray, Any], None]]] = {
    "lc": ("numpy x @ w (BLAS sgemv)", library_lc),
    "he": ("numpy.bincount per image", library_he),
    "he-remap": ("numpy bincount + LUT + lut[image]", library_he_remap),
    "binarize": ("numpy > + packbits", library_binarize),
    "binarize-otsu": ("skimage threshold_otsu, > + packbits", library_otsu),
    "sobel": ("scipy.ndimage.sobel x2 + hypot", library_sobel),
}
SCAN = {"lc", "he", "he-remap", "binarize", "binarize-otsu"}


def kernel_named(name: str) -> Kernel:
    return Binarize("otsu") if name == "binarize-otsu" else get_kernel(name)


def measure(name: str, size_bytes: int, repeat: int, bandwidth: float) -> list[str]:
    kernel = kernel_named(name)
    data = kernel.generate(size_bytes, seed=0)
    state = kernel.init(kernel.params(0))
    label, library = LIBRARY[name]
    reps = repeat if name != "sobel" else max(1, repeat // 2)
    t_device, t_library = best_pair(
        lambda: run_device(kernel, data, state), lambda: library(data, state), reps
    )
    gb = data.nbytes / 1e9

    def rate(seconds: float) -> str:
        mpix = f"  ({data.size / seconds / 1e6:,.0f} Mpix/s)" if data.ndim == 3 else ""
        return f"{gb / seconds:7.2f} GB/s{mpix}"

    lines = [
        f"{name:13s} {'device part':34s} {rate(t_device)}",
        f"{name:13s} {label:34s} {rate(t_library)}",
        f"{name:13s} {'device / library':34s} {t_library / t_device:7.2f}x",
    ]
    if name in SCAN:
        share = gb / t_device / bandwidth
        lines.append(f"{name:13s} {'device / read bandwidth':34s} {share:7.0%}")
    return lines


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--size-mib", type=int, default=256, help="input per kernel")
    parser.add_argument("--repeat", type=int, default=5)
    parser.add_argument("--kernels", nargs="*", default=list(LIBRARY))
    args = parser.parse_args()
    size_bytes = args.size_mib << 20
    print(f"{platform.processor() or platform.machine()}, numpy {np.__version__}, 1 thread")
    print(where_the_data_is(size_bytes))
    with threadpool_limits(1):
        reads = read_bandwidth_gbs(size_bytes, args.repeat)
        for what, gbs in reads.items():
            print(f"read bandwidth: {what:30s} {gbs:7.2f} GB/s")
        bandwidth = max(reads.values())
        print(f"read bandwidth used below: {bandwidth:.2f} GB/s")
        for name in args.kernels:
            print("\n".join(measure(name, size_bytes, args.repeat, bandwidth)))


if __name__ == "__main__":
    main()
