"""Running kernels on real data: sharded data sets on disk and executors.

`generate_dataset` / `import_dataset` write a data set as one directory per emulated device
(see `ndpkit.runtime.dataset` for the layout and manifest), `open_dataset` validates one,
`LocalExecutor` runs a kernel over it with one local process per engine, and
`verify.verify_streaming` checks a result against the kernel's reference in bounded memory.

A script that runs an executor must protect its entry point with
`if __name__ == "__main__":`. The workers are started as multiprocessing's forkserver (or
spawn) starts them: each runs the script again, under the name `__mp_main__`, so that a
kernel the script defines can be unpickled there. Unprotected, the script's body runs again
in every worker (regenerating the data set the run is reading, say) and the run fails with
`WorkerDiedError: … the worker process failed to start`. For the same reason such code
cannot be piped to `python -` on stdin. (See docs/kernels.md, "A script that starts an
executor".)

    from ndpkit.kernels import get_kernel
    from ndpkit.runtime import LocalExecutor, generate_dataset


    def main() -> None:
        ds = generate_dataset("lc", 256 * 2**20, devices=8, path="data/lc", overwrite=True)
        kernel = get_kernel("lc")
        out = LocalExecutor(workers=2).run(kernel, ds, kernel.params(ds.seed or 0))
        print(out.result.shape, out.alpha, out.wall_s)


    if __name__ == "__main__":
        main()
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
    TaskLoadError,
    WorkerDiedError,
    WorkerStalledError,
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
    "TaskLoadError",
    "WorkerDiedError",
    "WorkerStalledError",
    "engine_devices",
    "generate_dataset",
    "import_dataset",
    "open_dataset",
]
