"""Shards written in huge-page pieces against shards written the old way: how much of each maps
in huge pages, and how fast a kernel reads them mapped against the same records in memory.

    .venv/bin/python benchmarks/shard_folios.py [--size 1GiB] [--kernel knn8-topk] [--repeat 15]

`write_npy` writes a shard in whole 2 MiB pieces at 2 MiB offsets (`FOLIO_WRITE_BYTES`), so
that Linux caches it in 2 MiB folios, which a mapping maps with one page-table entry each.
Before, it wrote the .npy header (4 KiB) on its own and then the records as they came; the
part of the file each unaligned write began in stayed in small folios. This writes one data
set each way (the old way: the same header and pieces, written as `write_npy` did), maps
every shard as a kept worker does (`shard_maps.map_read_only`, MAP_POPULATE), reports the
part mapped in huge pages (`FilePmdMapped` in /proc/self/smaps), and times the kernel's device
part (`fold` over the chunks the executor gives it, `run_chunk_bytes`: 128 MiB for the top-k
split) over each data set's mappings and
over the records in memory, best of `--repeat` interleaved rounds. Linux only.
"""

from __future__ import annotations

import argparse
import functools
import os
import platform
import tempfile
from collections.abc import Callable
from pathlib import Path
from typing import Any

import numpy as np

import timing
from ndpkit.kernels import Kernel, get_kernel, kernel_names
from ndpkit.runtime import generate_dataset
from ndpkit.runtime.dataset import Dataset, npy_header
from ndpkit.runtime.executor import run_chunk_bytes
from ndpkit.runtime.shard_maps import map_read_only
from ndpkit.units import Kind, parse


def old_copy(ds: Dataset, to: Path) -> list[Path]:
    """Every shard of `ds` again under `to`, written as write_npy wrote it before: the header
    alone, then each piece of records (here 8 MiB, the data set readers' chunk), from memory
    as a generator's pieces are (written from a mapping whose pages are not yet mapped,
    Linux copies in smaller steps and caches the file in smaller folios still)."""
    paths = []
    for device in range(ds.devices):
        for shard in ds.shards_of(device):
            src = ds.shard_path(shard)
            data = np.load(src)
            dst = to / f"{device:02d}-{src.name}"
            with dst.open("xb") as f:
                f.write(npy_header(data.dtype, data.shape))
                flat = np.asarray(data).reshape(-1).view(np.uint8)
                for at in range(0, len(flat), 8 * 2**20):
                    f.write(flat[at : at + 8 * 2**20].data)
            paths.append(dst)
    return paths


def mapped(paths: list[Path]) -> list[np.ndarray]:
    """Each .npy's records, mapped whole as a kept worker maps them (the mappings live as
    long as the arrays)."""
    arrays = []
    for path in paths:
        with path.open("rb") as f:
            m = map_read_only(f.fileno(), os.fstat(f.fileno()).st_size, 0)
        with path.open("rb") as f:
            np.lib.format.read_magic(f)
            shape, _, dtype = np.lib.format.read_array_header_1_0(f)
            offset = f.tell()
        arrays.append(np.frombuffer(m, dtype, int(np.prod(shape)), offset).reshape(shape))
    return arrays


def huge_mapped_bytes(paths: list[Path]) -> int:
    """FilePmdMapped over this process's mappings of `paths`."""
    smaps = Path("/proc/self/smaps").read_text()
    total = 0
    for path in paths:
        at = smaps.find(str(path))
        field = smaps.find("FilePmdMapped:", at)
        total += int(smaps[field:].split()[1]) * 1024
    return total


def fold_over(kernel: Kernel, arrays: list[np.ndarray], state: Any, chunk_records: int) -> Any:
    partial, offset = None, 0
    for array in arrays:
        for start in range(0, len(array), chunk_records):
            partial = kernel.fold(partial, array[start : start + chunk_records], state, offset)
            offset += len(array[start : start + chunk_records])
    return partial


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--size", default="1GiB")
    parser.add_argument("--kernel", choices=kernel_names(), default="knn8-topk")
    parser.add_argument("--repeat", type=int, default=15)
    parser.add_argument("--dir", type=Path, help="where to write the data sets (default: /tmp)")
    args = parser.parse_args()
    kernel = get_kernel(args.kernel)
    if not kernel.folds:
        parser.error(f"{args.kernel} does not fold its chunks; pick one that does (knn8-topk)")
    size_bytes = int(parse(args.size, Kind.SIZE))
    state = kernel.init(kernel.params(0))
    chunk_bytes = run_chunk_bytes(kernel)  # the executor's, when a run names none
    chunk_records = max(1, chunk_bytes // kernel.record_bytes)
    with tempfile.TemporaryDirectory(dir=args.dir) as tmp:
        ds = generate_dataset(kernel, size_bytes, 8, Path(tmp) / "new")
        (Path(tmp) / "old").mkdir()
        new_paths = [ds.shard_path(s) for d in range(ds.devices) for s in ds.shards_of(d)]
        old_paths = old_copy(ds, Path(tmp) / "old")
        arrays = {"new": mapped(new_paths), "old": mapped(old_paths)}
        arrays["memory"] = [np.concatenate(arrays["new"])]
        total = arrays["memory"][0].nbytes
        runs: dict[str, Callable[[], Any]] = {
            name: functools.partial(fold_over, kernel, arrays[name], state, chunk_records)
            for name in ("memory", "new", "old")
        }
        for run in runs.values():
            run()  # warm: first touches
        best = timing.best_interleaved(runs, args.repeat)
        print(f"{platform.machine()}, {os.cpu_count()} CPUs; {args.kernel} over {args.size} in 8")
        print(
            f"devices ({len(new_paths)} shards), folded in {chunk_bytes / 2**20:g} MiB chunks; "
            f"best of {args.repeat} interleaved rounds\n"
        )
        print(f"{'data':34} {'in huge pages':>14} {'time':>9} {'vs memory':>10}")
        print(f"{'records in memory':34} {'':>14} {best['memory'] * 1e3:7.1f}ms {1:10.3f}")
        for name, paths, what in (
            ("new", new_paths, "shards by write_npy (2 MiB pieces)"),
            ("old", old_paths, "shards written the old way"),
        ):
            share = huge_mapped_bytes(paths) / total
            print(
                f"{what:34} {share:13.1%} {best[name] * 1e3:7.1f}ms "
                f"{best[name] / best['memory']:10.3f}"
            )


if __name__ == "__main__":
    main()
