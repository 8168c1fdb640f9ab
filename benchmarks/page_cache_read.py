"""LC's device part over shards in the page cache against the same records in anonymous memory.

    .venv/bin/python benchmarks/page_cache_read.py [--size 2GiB] [--repeat 5]

Generates an LC data set (8 devices) in a temporary directory, maps every `.npy` shard once
(`MAP_POPULATE`, as the workers do), copies the same records into anonymous memory (numpy
asks for transparent huge pages), and times `_core.dot_f32` over each, best of `--repeat`.
It prints how much of the mapped page cache and of the anonymous memory is in 2 MiB pages
(`/proc/self/smaps_rollup`), which is what moves the page cache's figure from run to run.
To compare prefetch distances, change `PREFETCH_BYTES` in `crates/ndp-kernels/src/distance.rs`
and rebuild (`.venv/bin/pip install -e '.[dev]'`) between runs.
"""

from __future__ import annotations

import argparse
import mmap
import platform
import tempfile
from importlib import import_module
from pathlib import Path
from typing import Any

import numpy as np

import timing
from ndpkit.kernels import get_kernel
from ndpkit.runtime import generate_dataset
from ndpkit.units import Kind, parse

_core: Any = import_module("ndpkit._core")


def map_shard(path: Path, data_offset: int, shape: tuple[int, ...]) -> np.ndarray:
    with path.open("rb") as f:
        flags = mmap.MAP_SHARED | getattr(mmap, "MAP_POPULATE", 0)
        mapping = mmap.mmap(f.fileno(), 0, flags=flags, prot=mmap.PROT_READ)
    return np.frombuffer(mapping, np.float32, offset=data_offset).reshape(shape)


def huge_page_shares() -> dict[str, str]:
    rollup = Path("/proc/self/smaps_rollup")
    if not rollup.exists():
        return {}
    wanted = ("AnonHugePages", "FilePmdMapped", "Rss")
    return {
        line.split(":")[0]: line.split(":")[1].strip()
        for line in rollup.read_text().splitlines()
        if line.split(":")[0] in wanted
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--size", default="2GiB")
    parser.add_argument("--repeat", type=int, default=5)
    args = parser.parse_args()
    kernel = get_kernel("lc")
    weights = np.asarray(kernel.params(0)["weights"], dtype=np.float32)
    with tempfile.TemporaryDirectory() as tmp:
        ds = generate_dataset(kernel, int(parse(args.size, Kind.SIZE)), 8, Path(tmp) / "lc")
        shards = []
        for shard in ds.shards:
            path = ds.shard_path(shard)
            header = np.load(path, mmap_mode="r")
            shards.append(map_shard(path, int(header.offset), header.shape))
        anonymous = [np.array(s) for s in shards]
        out = np.empty(max(len(s) for s in shards), dtype=np.float32)

        def over(arrays: list[np.ndarray]) -> None:
            for a in arrays:
                _core.dot_f32(a, weights, out[: len(a)])

        over(shards)  # the first pass reads the page cache in
        page_cache = timing.best_of(lambda: over(shards), args.repeat, warm_up=False)
        anon = timing.best_of(lambda: over(anonymous), args.repeat, warm_up=False)
        print(f"# {platform.machine()}, {args.size} of LC records in {len(shards)} shards")
        print(f"page cache (mapped shards)   {page_cache:.4f} s")
        print(f"anonymous memory             {anon:.4f} s")
        print(f"ratio                        {page_cache / anon:.3f}")
        for name, value in huge_page_shares().items():
            print(f"{name:<28} {value}")


if __name__ == "__main__":
    main()
