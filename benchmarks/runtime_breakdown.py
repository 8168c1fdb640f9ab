"""Where a kernel's runtime overhead goes: the executor's pass taken apart, step by step.

    .venv/bin/python benchmarks/runtime_breakdown.py --kernel knn8 --size 1GiB [--rounds 5]

`runtime_overhead.py` compares the executor with one process; this script times the steps
in between, in one process unless said otherwise, each the best of `--rounds` interleaved
rounds (so that a machine that drifts affects every step alike):

- **one process**: `run_in_memory` on the whole array in memory (the issue's baseline);
- **device, whole array**: the device part alone on it (one pass);
- **chunks, memory → private**: the device part chunk by chunk (8 MiB) over the same array,
  a `RowKernel`'s rows written into private memory (huge pages where the OS gives them);
- **chunks, shards → private**: the chunks read from the shards as a worker reads them
  (`shard_chunks`: mapped windows of the page cache);
- **chunks, shards → shared**: the rows written into a memfd, as the rows arena is;
- **host on private / shared**: the host part over the rows in either;
- **chunks, shards (→ shared), new process**: the same loop in a new process (forkserver),
  without and with `keep_freed_memory` (what every worker sets);
- **executor, kept workers**: `LocalExecutor(1)` kept across rounds, and its engines'
  summed seconds.

A kernel without rows (K-Means, k-NN's top-k split) has no private/shared steps: its chunks
give partials, folded or merged as the runtime does.
"""

from __future__ import annotations

import argparse
import mmap
import multiprocessing
import os
import tempfile
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import numpy as np

import timing
from ndpkit.kernels import Kernel, RowKernel, get_kernel, run_in_memory
from ndpkit.runtime import Dataset, LocalExecutor, generate_dataset
from ndpkit.runtime.dataset import open_dataset, shard_chunks
from ndpkit.runtime.executor import keep_freed_memory
from ndpkit.units import Kind, parse

CHUNK_BYTES = 8 * 2**20


def shared_rows(records: int, kernel: RowKernel, state: Any) -> np.ndarray:
    """Rows in a memfd, every page written once (as the arena's are, up front)."""
    spec = kernel.row_spec(state)
    size = max(1, records * spec.row_bytes)
    fd = os.memfd_create("ndpkit-breakdown")
    os.ftruncate(fd, size)
    mapping = mmap.mmap(fd, size, flags=mmap.MAP_SHARED)
    os.close(fd)
    rows = np.frombuffer(mapping, spec.dtype, records * max(1, int(np.prod(spec.shape))))
    rows = rows.reshape((records, *spec.shape))
    rows[...] = 0
    return rows


def over_shards(kernel: Kernel, ds: Dataset, state: Any, rows: np.ndarray | None) -> Any:
    """The device part over every shard's chunks as a worker reads them."""
    chunk_records = max(1, CHUNK_BYTES // ds.record_bytes)
    partial: Any = None
    partials = []
    for device in range(ds.devices):
        for shard in ds.shards_of(device):
            chunks = shard_chunks(ds.shard_path(shard), shard, ds.layout, chunk_records)
            for offset, chunk in chunks:
                if rows is not None and isinstance(kernel, RowKernel):
                    kernel.device_into(chunk, state, offset, rows[offset : offset + len(chunk)])
                elif kernel.folds:
                    partial = kernel.fold(partial, chunk, state, offset)
                else:
                    partials.append(kernel.device(chunk, state, offset))
    return partial if kernel.folds else kernel.merge(partials)


def over_memory(kernel: RowKernel, data: np.ndarray, state: Any, rows: np.ndarray) -> None:
    chunk_records = max(1, CHUNK_BYTES // (data[:1].nbytes or 1))
    for start in range(0, len(data), chunk_records):
        stop = start + chunk_records
        kernel.device_into(data[start:stop], state, start, rows[start:stop])


def host(kernel: RowKernel, rows: np.ndarray, state: Any) -> object:
    return kernel.host(kernel.rows_merged(rows, state), state)


def kernel_params(kernel: Kernel) -> dict[str, Any]:
    return kernel.params(0)


def in_new_process(path: str, name: str, keep: bool, rounds: int) -> float:
    """Best seconds of the shards → shared loop in this (new) process."""
    if keep:
        keep_freed_memory()
    kernel = get_kernel(name)
    ds = open_dataset(path)
    state = kernel.init(kernel_params(kernel))
    rows = shared_rows(ds.records, kernel, state) if isinstance(kernel, RowKernel) else None
    return timing.best_of(lambda: over_shards(kernel, ds, state, rows), rounds, warm_up=True)


def new_process(path: str, name: str, keep: bool, rounds: int) -> float:
    context = multiprocessing.get_context("forkserver")
    with context.Pool(1) as pool:
        return float(pool.apply(in_new_process, (path, name, keep, rounds)))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--kernel", default="knn8", help="app (default knn8)")
    parser.add_argument("--size", default="1GiB")
    parser.add_argument("--rounds", type=int, default=5)
    parser.add_argument("--dir", type=Path, help="where to write the data set (default: /tmp)")
    args = parser.parse_args()
    if args.rounds < 1:
        parser.error(f"--rounds must be at least 1, got {args.rounds}")
    kernel = get_kernel(args.kernel)
    size_bytes = int(parse(args.size, Kind.SIZE))
    with tempfile.TemporaryDirectory(dir=args.dir) as tmp:
        ds = generate_dataset(kernel, size_bytes, 8, Path(tmp) / kernel.name)
        params = kernel_params(kernel)
        state = kernel.init(params)
        data = ds.read_all()
        steps: dict[str, Callable[[], object]] = {
            "one process": lambda: run_in_memory(kernel, data, params, len(data)),
        }
        steps["device, whole array"] = lambda: kernel.device(data, state, 0)
        if isinstance(kernel, RowKernel):
            spec = kernel.row_spec(state)
            private = np.zeros((ds.records, *spec.shape), spec.dtype)
            shared = shared_rows(ds.records, kernel, state)
            steps["chunks, memory → private"] = lambda: over_memory(kernel, data, state, private)
            steps["chunks, shards → private"] = lambda: over_shards(kernel, ds, state, private)
            steps["chunks, shards → shared"] = lambda: over_shards(kernel, ds, state, shared)
            steps["host on private"] = lambda: host(kernel, private, state)
            steps["host on shared"] = lambda: host(kernel, shared, state)
        else:
            steps["chunks, shards (one pass)"] = lambda: over_shards(kernel, ds, state, None)
        times: dict[str, list[float]] = {step: [] for step in steps}
        engines: list[float] = []
        with LocalExecutor(1) as ex:
            ex.run(kernel, ds, params, chunk_bytes=CHUNK_BYTES)
            times["executor, kept workers"] = []
            for _ in range(args.rounds):
                for step, fn in steps.items():
                    times[step].append(timing.best_of(fn, 1, warm_up=False))
                start = time.perf_counter()
                out = ex.run(kernel, ds, params, chunk_bytes=CHUNK_BYTES)
                times["executor, kept workers"].append(time.perf_counter() - start)
                engines.append(sum(e.seconds for e in out.engines))
                passes = out.passes
                del out  # else the next run finds the arena still lent and makes a new one
        new = {
            keep: new_process(str(ds.path), kernel.name, keep, args.rounds)
            for keep in (False, True)
        }
    print(f"{kernel.name}, {args.size} over 8 devices, chunks of 8 MiB, best of {args.rounds}")
    print(f"transparent huge pages (anonymous / shared memory): {timing.huge_page_settings()}\n")
    for step, seconds in times.items():
        print(f"{step:42} {min(seconds):8.4f} s")
    print(f"{'executor: engines summed':42} {min(engines):8.4f} s  ({passes} passes)")
    loop = "chunks, shards → shared" if isinstance(kernel, RowKernel) else "chunks, shards"
    print(f"{loop + ', new process':42} {new[False]:8.4f} s")
    print(f"{'  the same with keep_freed_memory':42} {new[True]:8.4f} s")


if __name__ == "__main__":
    main()
