"""Running kernels on real data: sharded data sets on disk and executors.

`generate_dataset` / `import_dataset` write a data set as one directory per emulated device
(see `ndpkit.runtime.dataset` for the layout and manifest), `open_dataset` validates one,
`LocalExecutor` runs a kernel over it with one local process per engine, and
`verify.verify_streaming` checks a result against the kernel's reference in bounded memory.

    ds = generate_dataset("lc", 4 * 2**30, devices=8, path="data/lc")
    kernel = get_kernel("lc")
    out = LocalExecutor(workers=2).run(kernel, ds, kernel.params(ds.seed or 0))
    out.result, out.alpha, out.wall_s
"""

from ndpkit.runtime.dataset import (
    DEFAULT_CHUNK_BYTES,
    DEFAULT_SHARD_BYTES,
    Dataset,
    Manifest,
    ShardEntry,
    ShardError,
    generate_dataset,
    import_dataset,
    open_dataset,
)
from ndpkit.runtime.executor import (
    EngineStats,
    LocalExecutor,
    PassStats,
    RunResult,
    WorkerDiedError,
    engine_devices,
)

__all__ = [
    "DEFAULT_CHUNK_BYTES",
    "DEFAULT_SHARD_BYTES",
    "Dataset",
    "EngineStats",
    "LocalExecutor",
    "Manifest",
    "PassStats",
    "RunResult",
    "ShardEntry",
    "ShardError",
    "WorkerDiedError",
    "engine_devices",
    "generate_dataset",
    "import_dataset",
    "open_dataset",
]
