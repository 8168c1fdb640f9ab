"""A device part's pass over the same records placed at different byte offsets in memory.

    .venv/bin/python benchmarks/alignment.py --kernel kmeans [--size 64MiB] [--rounds 7]

The records are copied into one anonymous mapping (huge pages where the OS gives them) at
each offset of `--offsets` bytes past a page boundary, and the device part runs over each
copy in 8 MiB chunks, as a worker does (folding, for a kernel that folds). Every round runs
every offset once; the best of `--rounds` is printed. numpy's .npy header put a shard's
records 128 bytes into the file, so a mapped shard sat at offset 128 (ndpkit's shards now
start them at 4096, on a page); numpy's own large arrays begin 16 bytes past a page. A
kernel whose speed depends on the offset runs at a different speed through the runtime
than over an array numpy allocated. Every copy is held at once: memory of `--size` times
the number of offsets.
"""

from __future__ import annotations

import argparse
import mmap
from collections.abc import Callable

import numpy as np

import timing
from ndpkit.kernels import get_kernel
from ndpkit.units import Kind, parse

CHUNK_BYTES = 8 * 2**20


def placed(records: np.ndarray, offset: int) -> np.ndarray:
    """A copy of `records` starting `offset` bytes into a fresh page-aligned mapping."""
    mapping = mmap.mmap(-1, records.nbytes + offset, flags=mmap.MAP_PRIVATE | mmap.MAP_ANONYMOUS)
    if hasattr(mmap, "MADV_HUGEPAGE"):
        mapping.madvise(mmap.MADV_HUGEPAGE)
    copy = np.frombuffer(mapping, records.dtype, records.size, offset).reshape(records.shape)
    copy[...] = records
    return copy


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--kernel", default="kmeans", help="app (default kmeans)")
    parser.add_argument("--size", default="64MiB")
    parser.add_argument("--rounds", type=int, default=7)
    parser.add_argument(
        "--offsets",
        default="0,64,128,512,1024,2048,3072",
        help="comma-separated byte offsets past a page boundary",
    )
    args = parser.parse_args()
    kernel = get_kernel(args.kernel)
    size_bytes = int(parse(args.size, Kind.SIZE))
    offsets = [int(o) for o in args.offsets.split(",")]
    if any(o < 0 or o % kernel.dtype.itemsize for o in offsets):
        parser.error(f"offsets must be non-negative multiples of {kernel.dtype.itemsize}")
    records = kernel.generate(size_bytes, seed=0)
    size_bytes = records.nbytes  # whole records
    state = kernel.init(kernel.params(0))
    chunk = max(1, CHUNK_BYTES // kernel.record_bytes)

    def pass_over(data: np.ndarray) -> Callable[[], object]:
        def run() -> object:
            partial = None
            for start in range(0, len(data), chunk):
                piece = data[start : start + chunk]
                if kernel.folds:
                    partial = kernel.fold(partial, piece, state, start)
                else:
                    partial = kernel.device(piece, state, start)
            return partial

        return run

    runs = {offset: pass_over(placed(records, offset)) for offset in offsets}
    for run in runs.values():
        run()  # first touch
    best = timing.best_interleaved({str(o): r for o, r in runs.items()}, args.rounds)
    print(f"{kernel.name}, {args.size}, chunks of 8 MiB, best of {args.rounds} interleaved rounds")
    for offset, seconds in best.items():
        print(
            f"offset {offset:>5} B   {seconds * 1e3:8.2f} ms"
            f"   {size_bytes / seconds / 1e9:6.2f} GB/s"
        )


if __name__ == "__main__":
    main()
