"""Fixtures shared by the executor tests."""

from __future__ import annotations

import os
import tempfile
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest

from ndpkit.kernels import Kernel
from ndpkit.runtime import Dataset, EngineStats, LocalExecutor, generate_dataset


@pytest.fixture(scope="module")
def executor() -> Iterator[LocalExecutor]:
    """Two workers kept for the whole module: the tests pay for process start-up once."""
    with LocalExecutor(2) as ex:
        yield ex


@pytest.fixture(scope="module")
def small_datasets(
    tmp_path_factory: pytest.TempPathFactory,
) -> Callable[[Kernel], dict[int, Dataset]]:
    """kernel → its ~40 kB data set over 1, 3 and 8 devices, in shards of ~3 kB."""

    def make(kernel: Kernel) -> dict[int, Dataset]:
        root = tmp_path_factory.mktemp(kernel.name)
        return {
            devices: generate_dataset(
                kernel, 40_000, devices, root / f"d{devices}", shard_bytes=3000
            )
            for devices in (1, 3, 8)
        }

    return make


@pytest.fixture
def one_engine(tmp_path: Path) -> Callable[[Kernel, int, int], EngineStats]:
    """(kernel, MiB, chunk bytes) → what its one engine did over a one-device data set of
    that size in 16 MiB shards, read in chunks of that size by a fresh worker."""

    def run(kernel: Kernel, size_mib: int, chunk_bytes: int) -> EngineStats:
        path = tmp_path / f"{kernel.name}-{size_mib}"
        ds = generate_dataset(kernel, size_mib * 2**20, 1, path, shard_bytes=16 * 2**20)
        pool = LocalExecutor(1, mapped_budget_bytes=0)  # streamed: windows, never kept
        (engine,) = pool.run(kernel, ds, {}, chunk_bytes=chunk_bytes).engines
        return engine

    return run


def _spill_dirs() -> set[Path]:
    """This process's spill directories (named with its pid, so that tests running in
    parallel in other processes do not count)."""
    pattern = f"ndpkit-run-{os.getpid()}-*"
    return set(Path("/dev/shm").glob(pattern)) | set(Path(tempfile.gettempdir()).glob(pattern))


@pytest.fixture
def no_spill_left() -> Iterator[None]:
    """Every spill directory a test's runs made is gone when it ends."""
    before = _spill_dirs()
    yield
    assert _spill_dirs() <= before
