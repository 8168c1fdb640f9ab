"""LocalExecutor with kernels that write rows in place (`RowKernel`): the same answers as
the partial path, over any routing and chunking, in bounded memory, and no file left behind.

The kernels are defined here; worker processes import this module to unpickle them.
"""

from __future__ import annotations

import errno
import mmap
import os
import signal
import sys
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import numpy as np
import pytest

from ndpkit.kernels import Kernel, get_kernel, run_in_memory
from ndpkit.kernels.base import RowKernel, RowSpec
from ndpkit.runtime import Dataset, EngineStats, LocalExecutor, WorkerDiedError, transfer


class RowSums(RowKernel):
    """Per record: (its sum, its global index) as a float64 row of 2; the index column
    catches a row written at the wrong place. `device` gives the same rows as partials."""

    name = "rowsums"
    dtype = np.dtype(np.float32)
    record_shape = (4,)
    merged_from_rows: list[int] = []  # noqa: RUF012  (filled in the parent by rows_merged)

    def generate(self, size_bytes: int, seed: int) -> np.ndarray:
        n = max(1, size_bytes // self.record_bytes)
        return np.random.default_rng(seed).integers(0, 100, (n, 4)).astype(np.float32)

    def _rows(self, chunk: np.ndarray, offset: int, bump: float) -> np.ndarray:
        index = np.arange(offset, offset + len(chunk), dtype=np.float64)
        return np.stack([chunk.sum(axis=1, dtype=np.float64) + bump, index], axis=1)

    def init(self, params: dict[str, Any]) -> Any:
        return {"passes": params.get("passes", 1), "done": 0, "first": None}

    def device(self, chunk: np.ndarray, state: Any, offset: int) -> dict[int, np.ndarray]:
        return {offset: self._rows(chunk, offset, state["done"])}

    def merge(self, partials: list[Any]) -> dict[int, np.ndarray]:
        return {k: v for p in partials for k, v in p.items()}

    def row_spec(self, state: Any) -> RowSpec:
        return RowSpec(np.dtype(np.float64), (2,))

    def device_into(self, chunk: np.ndarray, state: Any, offset: int, out: np.ndarray) -> None:
        out[:] = self._rows(chunk, offset, state["done"])

    def rows_merged(self, rows: np.ndarray, state: Any) -> dict[int, np.ndarray]:
        RowSums.merged_from_rows.append(len(rows))
        return {0: rows}

    def host(self, merged: Any, state: Any) -> tuple[Any, bool]:
        rows = np.concatenate([merged[k] for k in sorted(merged)])
        rows += 0  # the host part may write to what it receives
        first = rows if state["first"] is None else state["first"]
        new = {"passes": state["passes"], "done": state["done"] + 1, "first": first}
        return new | {"last": rows}, new["done"] == new["passes"]

    def finish(self, state: Any) -> Any:
        return np.concatenate([state["first"], state["last"]], axis=1)

    def reference(self, data: np.ndarray, params: dict[str, Any]) -> Any:
        return run_in_memory(self, data, params, len(data))

    def check(self, result: Any, expected: Any) -> None:
        assert np.array_equal(result, expected)


class KillsWhileWriting(RowSums):
    """Dies by SIGKILL in the chunk holding record `kill_at`, after its first engines wrote."""

    def __init__(self, kill_at: int) -> None:
        self.kill_at = kill_at

    def device_into(self, chunk: np.ndarray, state: Any, offset: int, out: np.ndarray) -> None:
        if offset <= self.kill_at < offset + len(chunk):
            os.kill(os.getpid(), signal.SIGKILL)
        super().device_into(chunk, state, offset, out)


@pytest.fixture(scope="module")
def datasets(small_datasets: Callable[[Kernel], dict[int, Dataset]]) -> dict[int, Dataset]:
    return small_datasets(RowSums())


@pytest.mark.parametrize("devices", [1, 3, 8])
@pytest.mark.parametrize("chunk_bytes", [16, 1000, 2**20])
def test_rows_equal_the_partial_path(
    executor: LocalExecutor,
    datasets: dict[int, Dataset],
    devices: int,
    chunk_bytes: int,
    no_spill_left: None,
) -> None:
    ds = datasets[devices]
    RowSums.merged_from_rows.clear()
    out = executor.run(RowSums(), ds, {}, chunk_bytes=chunk_bytes)
    expected = run_in_memory(RowSums(), ds.read_all(), {}, 97)
    assert np.array_equal(out.result, expected)
    assert RowSums.merged_from_rows == [ds.records]  # the rows path was taken
    assert out.bytes_out == ds.records * 16 == sum(e.bytes_out for e in out.engines)


def test_rows_under_a_mux2_route_and_several_passes(
    executor: LocalExecutor, datasets: dict[int, Dataset]
) -> None:
    ds = datasets[8]
    RowSums.merged_from_rows.clear()
    params = {"passes": 3}
    out = executor.run(RowSums(), ds, params, active_devices=[1, 5], route=[1, 1, 1, 1, 5, 5, 5, 5])
    assert np.array_equal(out.result, run_in_memory(RowSums(), ds.read_all(), params, 500))
    assert out.passes == 3 and RowSums.merged_from_rows == [ds.records] * 3
    assert [e.devices for e in out.engines] == [(0, 1, 2, 3), (4, 5, 6, 7)]


class _FullOnPopulate(mmap.mmap):
    """A mapping whose pages cannot all be had: populating it fails as the kernel does when
    memory runs out."""

    def madvise(self, option: int, start: int = 0, length: int = 0) -> None:
        if option == transfer._MADV_POPULATE_WRITE:
            raise OSError(errno.ENOMEM, "Cannot allocate memory")
        super().madvise(option, start, length)


def _no_fallocate_room(fd: int, offset: int, length: int) -> None:
    raise OSError(errno.ENOSPC, "No space left on device")


_OLD_KERNEL_ADVICE = 10**6
"""An advice no kernel knows: madvise fails with EINVAL, as MADV_POPULATE_WRITE does
before Linux 5.14."""


def _rows_merged_in_a_run(ds: Dataset) -> list[int]:
    """Run RowSums over `ds` with new workers, check its answer, and say how many rows each
    pass's host part read from an arena (none: the partials were merged)."""
    RowSums.merged_from_rows.clear()
    out = LocalExecutor(2).run(RowSums(), ds, {}, chunk_bytes=1000)
    assert np.array_equal(out.result, run_in_memory(RowSums(), ds.read_all(), {}, ds.records))
    return list(RowSums.merged_from_rows)


class _NoDiskRoom:
    """statvfs of a full disk."""

    f_bavail = 0
    f_frsize = 4096


@pytest.mark.parametrize("no_room", ["populate", "fallocate"])
def test_without_room_for_the_rows_partials_are_merged(
    datasets: dict[int, Dataset], monkeypatch: pytest.MonkeyPatch, no_room: str
) -> None:
    """Memory has room for the rows, but no arena can be had there nor on a disk. (Rows
    that do not fit in memory go to a disk arena: test_disk_arena.py.)"""
    monkeypatch.delenv(transfer.ROWS_DIR_ENV, raising=False)
    if no_room == "populate":
        monkeypatch.setattr(transfer.mmap, "mmap", _FullOnPopulate)
        monkeypatch.setattr(transfer.os, "statvfs", lambda path: _NoDiskRoom())
    else:  # a kernel without MADV_POPULATE_WRITE, and fallocate finds no room, nor on disk
        monkeypatch.setattr(transfer, "_MADV_POPULATE_WRITE", _OLD_KERNEL_ADVICE)
        monkeypatch.setattr(transfer.os, "posix_fallocate", _no_fallocate_room)
    assert _rows_merged_in_a_run(datasets[3]) == []


def test_without_populate_the_arena_is_allocated_by_fallocate(
    datasets: dict[int, Dataset], monkeypatch: pytest.MonkeyPatch
) -> None:
    allocated: list[int] = []
    real_fallocate = os.posix_fallocate

    def fallocate(fd: int, offset: int, length: int) -> None:
        allocated.append(length)
        real_fallocate(fd, offset, length)

    monkeypatch.setattr(transfer, "_MADV_POPULATE_WRITE", _OLD_KERNEL_ADVICE)
    monkeypatch.setattr(transfer.os, "posix_fallocate", fallocate)
    ds = datasets[3]
    assert _rows_merged_in_a_run(ds) == [ds.records]  # the rows went through the arena
    assert allocated == [ds.records * 16]


class _Recording(mmap.mmap):
    advice: list[int] = []  # noqa: RUF012

    def madvise(self, option: int, start: int = 0, length: int = 0) -> None:
        _Recording.advice.append(option)
        super().madvise(option, start, length)


def test_the_arena_asks_for_huge_pages_before_it_is_allocated(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """Pages allocated before the mapping asks for huge ones would be 4 KiB ones wherever
    shared memory has huge pages only on request (shmem_enabled=advise)."""
    _Recording.advice.clear()
    monkeypatch.setattr(transfer.mmap, "mmap", _Recording)
    arena = transfer.RowsArena()
    try:
        assert arena.reserve(2**20, RowSpec(np.dtype(np.float32))) is not None
    finally:
        arena.close()
    assert _Recording.advice[:2] == [mmap.MADV_HUGEPAGE, transfer._MADV_POPULATE_WRITE]


def _shmem_huge_pages_setting() -> str:
    try:
        text = Path("/sys/kernel/mm/transparent_hugepage/shmem_enabled").read_text()
    except OSError:
        return "none"
    return text.split("[")[1].split("]")[0] if "[" in text else "none"


@pytest.mark.skipif(
    _shmem_huge_pages_setting() not in ("advise", "always", "within_size", "force"),
    reason="this machine gives shared memory no transparent huge pages",
)
def test_where_shared_memory_has_huge_pages_the_arena_gets_them() -> None:
    def pmd_mapped_bytes() -> int:
        text = Path("/proc/self/smaps_rollup").read_text()
        return next(int(x.split()[1]) for x in text.splitlines() if x.startswith("ShmemPmd")) * 1024

    before = pmd_mapped_bytes()
    arena = transfer.RowsArena()
    try:
        assert arena.reserve(16 * 2**20, RowSpec(np.dtype(np.float32))) is not None
        # memory too fragmented for a few huge pages would fail this: rare on a test machine
        assert pmd_mapped_bytes() - before >= 32 * 2**20
    finally:
        arena.close()


def test_the_arena_is_allocated_up_front() -> None:
    arena = transfer.RowsArena()
    try:
        assert arena.reserve(3 * 2**20, RowSpec(np.dtype(np.float32))) is not None
        assert arena.fd is not None
        # every page is there before any worker writes: none can fault in and find no memory
        assert os.fstat(arena.fd).st_blocks * 512 >= 12 * 2**20
    finally:
        arena.close()


def test_progress_with_rows(executor: LocalExecutor, datasets: dict[int, Dataset]) -> None:
    seen: list[tuple[int, int]] = []
    ds = datasets[3]
    executor.run(RowSums(), ds, {}, chunk_bytes=4000, progress=lambda *a: seen.append(a))
    assert seen[-1] == (ds.total_bytes,) * 2


def test_a_worker_killed_mid_write_leaves_no_file_and_no_result(
    datasets: dict[int, Dataset], no_spill_left: None
) -> None:
    ds = datasets[8]
    target = ds.shards_of(5)[1]
    with pytest.raises(WorkerDiedError, match=r"engine 5 .*SIGKILL.*no result"):
        LocalExecutor(2).run(KillsWhileWriting(target.offset + 2), ds, {}, chunk_bytes=160)


def test_kept_workers_write_into_the_same_arena(datasets: dict[int, Dataset]) -> None:
    """A second run of a kept pool maps no new shared memory: its rows go into the pages the
    first run's did. (A worker per engine: with fewer, which worker writes which engine's
    rows, and so maps which pages, depends on who finishes first.)"""
    ds = datasets[3]
    expected = run_in_memory(RowSums(), ds.read_all(), {}, 97)
    with LocalExecutor(3) as ex:
        first = ex.run(RowSums(), ds, {}, chunk_bytes=1000)
        second = ex.run(RowSums(), ds, {}, chunk_bytes=1000)
        generations = ex._pool.arena.generation if ex._pool else None
    assert np.array_equal(first.result, expected) and np.array_equal(second.result, expected)
    assert sum(e.shared_growth_bytes for e in first.engines) >= ds.records * 16
    assert sum(e.shared_growth_bytes for e in second.engines) == 0
    assert generations == 1  # both runs wrote into the pool's first arena


class RowsAsResult(RowSums):
    """Keeps views of the rows it is lent, in its state and in its result: every pass's rows
    and the result must survive later passes and runs."""

    def host(self, merged: Any, state: Any) -> tuple[Any, bool]:
        (rows,) = merged.values()  # a view of the arena, not a copy
        first = rows if state["first"] is None else state["first"]
        new = {"passes": state["passes"], "done": state["done"] + 1, "first": first}
        return new | {"last": rows}, new["done"] == new["passes"]

    def finish(self, state: Any) -> Any:
        return state["first"], state["last"]


def test_rows_still_held_are_never_overwritten(datasets: dict[int, Dataset]) -> None:
    ds = datasets[3]
    data = ds.read_all()
    with LocalExecutor(2) as ex:
        results = [ex.run(RowsAsResult(), ds, {"passes": p}) for p in (2, 3, 1)]
    for out, passes in zip(results, (2, 3, 1), strict=True):
        first, last = out.result
        assert np.array_equal(first, run_in_memory(RowSums(), data, {"passes": 1}, 97)[:, :2])
        expected_last = run_in_memory(RowSums(), data, {"passes": passes}, 97)[:, 2:]
        assert np.array_equal(last, expected_last)


def _arena_maps(pid: int) -> int:
    """How many mappings of a rows arena (a memfd) process `pid` has."""
    return Path(f"/proc/{pid}/maps").read_text().count("memfd:ndpkit-rows")


@pytest.mark.skipif(not transfer.ARENAS, reason="rows arenas are Linux-only")
def test_idle_workers_let_a_given_up_arena_go(datasets: dict[int, Dataset]) -> None:
    """The first run's result holds its arena; the second run (one engine) needs a new one,
    and the workers it leaves idle unmap the old one, so it is freed with the result."""
    with LocalExecutor(3) as ex:
        held = ex.run(RowsAsResult(), datasets[3], {}).result
        assert ex._pool is not None
        workers = [w.process.pid for w in ex._pool.workers]
        assert all(pid is not None and _arena_maps(pid) == 1 for pid in workers)
        ex.run(RowSums(), datasets[1], {})
        deadline = time.monotonic() + 5
        while time.monotonic() < deadline:  # the workers read their message when they can
            maps = sorted(_arena_maps(pid) for pid in workers if pid is not None)
            if maps == [0, 0, 1]:
                break
            time.sleep(0.01)
        assert maps == [0, 0, 1]  # only the second run's worker maps an arena: the new one
        assert ex._pool.arena.generation == 2
    assert np.array_equal(held[0], run_in_memory(RowSums(), datasets[3].read_all(), {}, 97)[:, :2])


def test_a_rows_worker_holds_a_chunk_not_its_rows(
    one_engine: Callable[[Kernel, int, int], EngineStats],
) -> None:
    """16 bytes of rows per 16-byte record: a worker that kept its rows would grow by the
    data set's size; one that writes them into the shared arena holds a chunk of its own
    whatever the size."""
    chunk_bytes = 256 * 2**10
    small, large = (one_engine(RowSums(), size_mib, chunk_bytes) for size_mib in (4, 64))
    assert large.bytes_out == 64 * 2**20
    assert large.rss_growth_bytes < 20 * chunk_bytes  # a window of 4 chunks, and partials
    assert large.rss_growth_bytes < small.rss_growth_bytes + 4 * chunk_bytes
    if sys.platform == "linux":  # the rows it wrote are in shared memory, the host's output
        assert abs(large.shared_growth_bytes - 64 * 2**20) <= 2**20


def test_lc_device_into_writes_what_device_returns() -> None:
    kernel = get_kernel("lc")
    data = kernel.generate(50_000, seed=1)
    state = kernel.init(kernel.params(1))
    out = np.full(len(data), np.nan, np.float32)
    kernel.device_into(data, state, 0, out)
    ((dots,),) = kernel.device(data, state, 0).values()
    assert np.array_equal(out, dots)
    one = kernel.host(kernel.rows_merged(out, state), state)[0]
    halves = kernel.merge(
        [kernel.device(data[:700], state, 0), kernel.device(data[700:], state, 700)]
    )
    assert np.array_equal(one, kernel.host(halves, state)[0])
    kernel.check(one, kernel.reference(data, kernel.params(1)))
