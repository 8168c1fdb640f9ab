"""Rows arenas on disk (`ndpkit.runtime.transfer`): rows that do not fit in memory, or a
memfd that cannot be had, go to a nameless, fully allocated file on a disk, with the same
answers as the memfd arena, no file left behind, and a clear error when the disk has no room.

The kernels are defined here; worker processes import this module to unpickle them.
"""

from __future__ import annotations

import errno
import os
import re
import signal
import tempfile
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import numpy as np
import pytest

from ndpkit.errors import NdpkitError
from ndpkit.kernels import Kernel, get_kernel
from ndpkit.kernels.base import RowKernel, RowSpec
from ndpkit.runtime import Dataset, LocalExecutor, WorkerDiedError, generate_dataset, transfer

pytestmark = pytest.mark.skipif(not transfer.ARENAS, reason="rows arenas are Linux-only")


class Echo(RowKernel):
    """Each record's row is the record itself: a row at the wrong place, or one not written,
    shows in the result. `device` gives the same rows as partials."""

    name = "echo"
    dtype = np.dtype(np.float32)
    record_shape = (4,)

    def generate(self, size_bytes: int, seed: int) -> np.ndarray:
        n = max(1, size_bytes // self.record_bytes)
        return np.random.default_rng(seed).integers(0, 1000, (n, 4)).astype(np.float32)

    def device(self, chunk: np.ndarray, state: Any, offset: int) -> dict[int, np.ndarray]:
        return {offset: np.array(chunk)}

    def merge(self, partials: list[Any]) -> dict[int, np.ndarray]:
        return {k: v for p in partials for k, v in p.items()}

    def row_spec(self, state: Any) -> RowSpec:
        return RowSpec(np.dtype(np.float32), (4,))

    def device_into(self, chunk: np.ndarray, state: Any, offset: int, out: np.ndarray) -> None:
        out[:] = chunk

    def rows_merged(self, rows: np.ndarray, state: Any) -> dict[int, np.ndarray]:
        return {0: rows}

    def host(self, merged: Any, state: Any) -> tuple[Any, bool]:
        if len(merged) == 1:  # the rows as lent: the result is a view of the arena
            return merged[0], True
        return np.concatenate([merged[k] for k in sorted(merged)]), True

    def reference(self, data: np.ndarray, params: dict[str, Any]) -> Any:
        return data

    def check(self, result: Any, expected: Any) -> None:
        assert np.array_equal(result, expected)


class EchoKilled(Echo):
    """Dies by SIGKILL in the chunk holding record `kill_at`."""

    def __init__(self, kill_at: int) -> None:
        self.kill_at = kill_at

    def device_into(self, chunk: np.ndarray, state: Any, offset: int, out: np.ndarray) -> None:
        if offset <= self.kill_at < offset + len(chunk):
            os.kill(os.getpid(), signal.SIGKILL)
        super().device_into(chunk, state, offset, out)


@pytest.fixture(scope="module")
def echo_data(tmp_path_factory: pytest.TempPathFactory) -> Dataset:
    """~1 MiB of Echo records over 3 devices, in shards of ~64 kB."""
    root = tmp_path_factory.mktemp("echo")
    return generate_dataset(Echo(), 2**20, 3, root / "d3", shard_bytes=64_000)


@pytest.fixture
def rows_dir(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """A directory that every rows arena of the test goes to (`NDPKIT_ROWS_DIR`)."""
    directory = tmp_path / "rows"
    directory.mkdir()
    monkeypatch.setenv(transfer.ROWS_DIR_ENV, str(directory))
    return directory


@pytest.fixture
def disk_arenas(monkeypatch: pytest.MonkeyPatch) -> Iterator[list[str]]:
    """The directory of every disk arena made during the test."""
    made: list[str] = []
    real = transfer._file_arena

    def spy(directory: str, size_bytes: int) -> Any:
        made.append(directory)
        return real(directory, size_bytes)

    monkeypatch.setattr(transfer, "_file_arena", spy)
    yield made


def _run(kernel: Kernel, ds: Dataset, params: dict[str, Any] | None = None, **kw: Any) -> Any:
    return LocalExecutor(2).run(kernel, ds, params or {}, chunk_bytes=10_000, **kw)


ROW_APPS = ("lc", "he", "he-remap", "binarize", "sobel", "fft2d", "knn2", "knn8")
"""Apps whose kernels may write rows (those that are `RowKernel`s run through the arena)."""


@pytest.mark.parametrize("app", ROW_APPS)
def test_every_row_kernel_gives_the_same_answer_from_a_disk_arena(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, disk_arenas: list[str], app: str
) -> None:
    kernel = get_kernel(app)
    ds = generate_dataset(kernel, 2**20, 3, tmp_path / app, seed=4, shard_bytes=256 * 2**10)
    params = kernel.params(4)
    in_memory = LocalExecutor(2).run(kernel, ds, params, chunk_bytes=200_000).result
    rows_dir = tmp_path / "rows"
    rows_dir.mkdir()
    monkeypatch.setenv(transfer.ROWS_DIR_ENV, str(rows_dir))
    on_disk = LocalExecutor(2).run(kernel, ds, params, chunk_bytes=200_000).result
    np.testing.assert_equal(on_disk, in_memory)
    assert disk_arenas == ([str(rows_dir)] if isinstance(kernel, RowKernel) else [])
    assert list(rows_dir.iterdir()) == []


def test_a_disk_arena_has_no_name_while_it_is_used(
    echo_data: Dataset, rows_dir: Path, disk_arenas: list[str]
) -> None:
    """Nothing in the directory even while the pool holds the arena: a crash of every
    process leaves nothing behind. The result, a view of it, outlives the pool."""
    with LocalExecutor(2) as ex:
        out = ex.run(Echo(), echo_data, {}, chunk_bytes=10_000)
        assert ex._pool is not None and ex._pool.arena.on_disk
        assert list(rows_dir.iterdir()) == []
        assert ex._pool.arena.fd is not None
        assert os.fstat(ex._pool.arena.fd).st_nlink == 0
    assert disk_arenas == [str(rows_dir)]
    assert np.array_equal(out.result, echo_data.read_all())


def test_without_o_tmpfile_the_arena_is_unlinked_at_once(
    echo_data: Dataset, rows_dir: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    def no_tmpfile(path: str, flags: int, mode: int = 0o777) -> int:
        tmpfile = getattr(os, "O_TMPFILE", -1)
        if (flags & tmpfile) == tmpfile:
            raise OSError(errno.EOPNOTSUPP, "Operation not supported")
        return real_open(path, flags, mode)

    real_open = os.open
    monkeypatch.setattr(transfer.os, "open", no_tmpfile)
    arena = transfer.RowsArena()
    try:
        rows = arena.reserve(1000, RowSpec(np.dtype(np.float32)))
        assert rows is not None and rows.on_disk
        assert list(rows_dir.iterdir()) == []
        assert arena.fd is not None and os.fstat(arena.fd).st_nlink == 0
    finally:
        arena.close()


def test_a_disk_arena_is_allocated_up_front(rows_dir: Path) -> None:
    """Every block is the file's before a worker writes: a full disk cannot SIGBUS it."""
    arena = transfer.RowsArena()
    try:
        assert arena.reserve(3 * 2**20, RowSpec(np.dtype(np.float32))) is not None
        assert arena.fd is not None
        stat = os.fstat(arena.fd)
        assert stat.st_size == 12 * 2**20 and stat.st_blocks * 512 >= 12 * 2**20
    finally:
        arena.close()


@pytest.mark.parametrize("no_room", ["memory", "memfd"])
def test_rows_go_to_disk_when_memory_cannot_hold_them(
    echo_data: Dataset, monkeypatch: pytest.MonkeyPatch, disk_arenas: list[str], no_room: str
) -> None:
    monkeypatch.delenv(transfer.ROWS_DIR_ENV, raising=False)
    if no_room == "memory":
        monkeypatch.setattr(transfer, "available_memory_bytes", lambda: 0)
    else:

        def no_memfd(name: str, flags: int = 0) -> int:
            raise OSError(errno.EMFILE, "Too many open files")

        monkeypatch.setattr(transfer.os, "memfd_create", no_memfd)
    out = _run(Echo(), echo_data)
    assert np.array_equal(out.result, echo_data.read_all())
    assert disk_arenas == [tempfile.gettempdir()]


def test_rows_larger_than_the_memory_share_go_to_disk(
    echo_data: Dataset, monkeypatch: pytest.MonkeyPatch, disk_arenas: list[str]
) -> None:
    """Rows that would leave memory less than MEMORY_SHARE for the host part's own output."""
    monkeypatch.delenv(transfer.ROWS_DIR_ENV, raising=False)
    rows_bytes = echo_data.records * 16
    room = transfer.ROOM_LEFT_BYTES + int(rows_bytes / transfer.MEMORY_SHARE)
    monkeypatch.setattr(transfer, "available_memory_bytes", lambda: room)
    _run(Echo(), echo_data)
    assert disk_arenas == []
    monkeypatch.setattr(transfer, "available_memory_bytes", lambda: room - 2)
    _run(Echo(), echo_data)
    assert len(disk_arenas) == 1


def _memory_filesystem_dir() -> str | None:
    shm = "/dev/shm"
    return shm if os.path.isdir(shm) and transfer._memory_filesystem(shm) else None


@pytest.mark.skipif(_memory_filesystem_dir() is None, reason="no tmpfs at /dev/shm")
def test_a_temporary_directory_in_memory_is_passed_over_for_the_data_sets(
    echo_data: Dataset, monkeypatch: pytest.MonkeyPatch, disk_arenas: list[str]
) -> None:
    monkeypatch.setattr(transfer, "available_memory_bytes", lambda: 0)
    monkeypatch.setattr(transfer.tempfile, "gettempdir", lambda: "/dev/shm")
    out = _run(Echo(), echo_data)
    assert np.array_equal(out.result, echo_data.read_all())
    assert disk_arenas == [str(echo_data.path.parent)]


def test_rows_that_fit_in_memory_stay_there_when_no_disk_can_take_them(
    echo_data: Dataset, monkeypatch: pytest.MonkeyPatch, disk_arenas: list[str]
) -> None:
    """Above the memory share but within memory, with no disk directory usable (say /tmp and
    the data set both on tmpfs): a memfd, as before there were disk arenas, not an error."""
    monkeypatch.delenv(transfer.ROWS_DIR_ENV, raising=False)
    rows_bytes = echo_data.records * 16
    room = transfer.ROOM_LEFT_BYTES + rows_bytes + 1  # fits, but above MEMORY_SHARE
    monkeypatch.setattr(transfer, "available_memory_bytes", lambda: room)
    monkeypatch.setattr(transfer, "_disk_directories", lambda beside: [])
    out = _run(Echo(), echo_data)
    assert np.array_equal(out.result, echo_data.read_all())
    assert disk_arenas == []
    monkeypatch.setattr(transfer, "available_memory_bytes", lambda: room - 2)  # no longer fits
    with pytest.raises(NdpkitError, match="do not fit in memory"):
        _run(Echo(), echo_data)


class _Full:
    """statvfs of a disk with 100 blocks of 4 KiB free."""

    f_bavail = 100
    f_frsize = 4096


def test_no_room_in_memory_or_on_disk_is_a_clear_error(
    echo_data: Dataset, monkeypatch: pytest.MonkeyPatch, disk_arenas: list[str]
) -> None:
    monkeypatch.delenv(transfer.ROWS_DIR_ENV, raising=False)
    monkeypatch.setattr(transfer, "available_memory_bytes", lambda: 0)
    monkeypatch.setattr(transfer.os, "statvfs", lambda path: _Full())
    needed = f"{echo_data.records * 16:,} bytes"
    with pytest.raises(NdpkitError, match="no room for the rows arena") as caught:
        _run(Echo(), echo_data)
    message = str(caught.value)
    assert needed in message and tempfile.gettempdir() in message
    assert "409,600 bytes free" in message and transfer.ROWS_DIR_ENV in message
    assert disk_arenas == []


def test_a_disk_that_fills_up_while_allocating_is_a_clear_error(
    echo_data: Dataset, rows_dir: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    def full(fd: int, offset: int, length: int) -> None:
        raise OSError(errno.ENOSPC, "No space left on device")

    monkeypatch.setattr(transfer.os, "posix_fallocate", full)
    with pytest.raises(NdpkitError, match=re.escape(f"{rows_dir}: No space left on device")):
        _run(Echo(), echo_data)
    assert list(rows_dir.iterdir()) == []


def test_a_worker_killed_writing_to_a_disk_arena_leaves_no_file(
    echo_data: Dataset, rows_dir: Path
) -> None:
    target = echo_data.shards_of(1)[0]
    with pytest.raises(WorkerDiedError, match=r"engine 1 .*SIGKILL.*no result"):
        _run(EchoKilled(target.offset + 2), echo_data)
    assert list(rows_dir.iterdir()) == []


def test_a_worker_does_not_keep_the_rows_it_wrote_to_disk_mapped(
    tmp_path: Path, rows_dir: Path, disk_arenas: list[str]
) -> None:
    """16 bytes of rows per 16-byte record, into a file the worker maps: it unmaps each
    chunk's rows once written, so its resident size (file pages included) stays a few chunks
    however many rows it writes; the file has them all."""
    chunk_bytes = 256 * 2**10
    ds = generate_dataset(Echo(), 32 * 2**20, 1, tmp_path / "echo32", shard_bytes=16 * 2**20)
    out = LocalExecutor(1).run(Echo(), ds, {}, chunk_bytes=chunk_bytes)
    (engine,) = out.engines
    assert disk_arenas == [str(rows_dir)]
    assert engine.shared_growth_bytes == 0
    assert engine.rss_growth_bytes < 20 * chunk_bytes
    assert np.array_equal(out.result, ds.read_all())


def test_a_memory_filesystem_is_told_from_a_disk(tmp_path: Path) -> None:
    assert not transfer._memory_filesystem("/")
    shm = _memory_filesystem_dir()
    if shm is not None:
        assert transfer._memory_filesystem(os.path.join(shm, "not-there"))
        assert shm not in transfer._disk_directories(Path(shm) / "data")
