"""Whole-shard mappings that a worker keeps between passes and runs, within a budget.

A worker streams a .npy shard through windows of its page cache, each mapped, read and
unmapped (`dataset.read_records`), so that its resident size never depends on the data set.
Mapping and unmapping are not free: the page tables of every window are built and torn
down again, about 1 ms per 64 MiB on this VM when the page cache holds the shard in small
folios, 3-10% of a K-Means pass that reads the same shards a hundred times.

`ShardMaps` keeps a shard's whole mapping instead, as long as the mappings it keeps stay
within `budget_bytes`: later passes of an iterative kernel, and later runs of a kept
executor over the same data set, read the pages already mapped. What a kept mapping holds
is the page cache, which the data set's pages occupy anyway: the worker's own (anonymous)
memory does not grow, only its count of mapped file pages, which the kernel can still
reclaim. A data set larger than the budget streams the rest through windows as before, so
a worker's resident size is at most the budget plus a window, whatever the data set's size.

A kept mapping is used again only for the same file: same device, inode, size and change
times (`os.stat`), checked before every use; its header, checked against the manifest when
it was mapped (from the same open file), is then not read again. A shard replaced by a new
file (as ndpkit's writers replace files, by rename) is mapped afresh; one truncated in place
fails the size check before it is read (`dataset.check_shard_size`), as it would without
the cache. (A file rewritten in place within one tick of a coarse file-system clock keeps
its change times: its data is still read as it is now, through the shared mapping, but its
header is not checked again.)
"""

from __future__ import annotations

import math
import mmap
import os
import resource
from collections import OrderedDict
from dataclasses import dataclass
from pathlib import Path
from typing import Any, BinaryIO

import numpy as np

from ndpkit.runtime.transfer import available_memory_bytes

MAX_KEPT_FILES = 256
"""At most this many kept mappings (each holds a file descriptor: Python's mmap keeps one)."""
BUDGET_ENV = "NDPKIT_MAPPED_BYTES"
"""Environment variable with the executor's budget for kept shard mappings, a size such as
`2GiB` or `0` (off); default: a quarter of physical memory (`default_budget_bytes`)."""


@dataclass(frozen=True)
class _Identity:
    device: int
    inode: int
    size: int
    mtime_ns: int
    ctime_ns: int


@dataclass
class _Kept:
    identity: _Identity
    records: np.ndarray
    data_offset: int
    bytes: int
    run: int


class ShardMaps:
    """A worker's kept whole-shard mappings, keyed by path, within `budget_bytes`.

    `get` answers a shard's kept records (and where its data begins in the file) if the
    file is the one mapped; `keep` maps a shard whose header the caller has checked, if it
    fits. Room is made by dropping mappings no task of the current run (`run`) has used,
    oldest first; mappings the current run uses are never dropped for another of its
    shards, so an iterative kernel over a data set larger than the budget keeps a fixed part
    of it mapped instead of remapping everything every pass."""

    def __init__(self, budget_bytes: int):
        if budget_bytes < 0:
            raise ValueError(f"budget_bytes must be ≥ 0, got {budget_bytes}")
        self.budget_bytes = budget_bytes
        self.max_files = min(MAX_KEPT_FILES, _soft_file_limit() // 4)
        self._kept: OrderedDict[str, _Kept] = OrderedDict()
        self._run: int | None = None
        self.kept_bytes = 0
        self.mapped_bytes = 0
        """Bytes mapped and kept so far (a counter: the caller takes differences)."""

    def start_run(self, run: int) -> None:
        """At a run's first task (whatever its shards' format), drop the mappings of files
        that are gone or replaced: a kept mapping would hold a deleted data set's disk space
        until the worker ends. (Called only from `get` and `keep`, a run over Parquet shards
        kept a deleted .npy data set's mappings.)"""
        if run == self._run:
            return
        self._run = run
        for key, kept in list(self._kept.items()):
            try:
                same = _identity(Path(key)) == kept.identity
            except OSError:
                same = False
            if not same:
                self._drop(key)

    def get(
        self,
        path: Path,
        dtype: np.dtype[Any],
        record_shape: tuple[int, ...],
        count: int,
        run: int,
        stat: os.stat_result | None = None,
    ) -> tuple[np.ndarray, int] | None:
        """(records, data offset) of the shard at `path` if it is kept and is still the same
        file, holding `count` records of that dtype and shape (its header was checked when
        it was kept); else None, after dropping a mapping of a file that has changed.
        `stat`: the file's `os.stat`, if the caller has just taken it."""
        self.start_run(run)
        key = str(path)
        kept = self._kept.get(key)
        if kept is None:
            return None
        same = kept.records.dtype == dtype and kept.records.shape == (count, *record_shape)
        identity = _identity(path) if stat is None else _identity_of(stat)
        if not same or kept.identity != identity:
            self._drop(key)
            return None
        kept.run = run
        self._kept.move_to_end(key)
        return kept.records, kept.data_offset

    def keep(
        self,
        path: Path,
        file: BinaryIO,
        data_offset: int,
        dtype: np.dtype[Any],
        record_shape: tuple[int, ...],
        count: int,
        run: int,
    ) -> np.ndarray | None:
        """Records [0, count) of the .npy file at `path`, open as `file` (its header checked
        by the caller; data from `data_offset`), from a mapping made now and kept, if it
        fits the budget; else None."""
        self.start_run(run)
        nbytes = count * math.prod(record_shape) * dtype.itemsize
        if nbytes == 0 or not self._make_room(nbytes, run):
            return None
        array, identity = _map_whole(file, data_offset, dtype, record_shape, count)
        self._kept[str(path)] = _Kept(identity, array, data_offset, nbytes, run)
        self.kept_bytes += nbytes
        self.mapped_bytes += nbytes
        return array

    def __len__(self) -> int:
        return len(self._kept)

    def _make_room(self, nbytes: int, run: int) -> bool:
        if nbytes > self.budget_bytes:
            return False
        for key in [k for k, v in self._kept.items() if v.run != run]:  # oldest first
            if self.kept_bytes + nbytes <= self.budget_bytes and len(self) < self.max_files:
                break
            self._drop(key)
        return self.kept_bytes + nbytes <= self.budget_bytes and len(self) < self.max_files

    def _drop(self, key: str) -> None:
        kept = self._kept.pop(key)
        self.kept_bytes -= kept.bytes


def _identity(path: Path) -> _Identity:
    return _identity_of(os.stat(path))


def _identity_of(st: os.stat_result) -> _Identity:
    return _Identity(st.st_dev, st.st_ino, st.st_size, st.st_mtime_ns, st.st_ctime_ns)


def _map_whole(
    file: BinaryIO,
    data_offset: int,
    dtype: np.dtype[Any],
    record_shape: tuple[int, ...],
    count: int,
) -> tuple[np.ndarray, _Identity]:
    """The records as a read-only array over one mapping of the open `file`, its pages
    mapped now (MAP_POPULATE where Linux has it), and the identity of the file mapped. From
    file offset 0, so that the mapping lines up with the page cache's large folios (the
    kernel then maps 2 MiB at a time). A file shorter than the records is a ValueError (from
    mmap)."""
    nbytes = count * math.prod(record_shape) * dtype.itemsize
    identity = _identity_of(os.fstat(file.fileno()))
    whole = map_read_only(file.fileno(), data_offset + nbytes, 0)
    items = nbytes // dtype.itemsize
    array = np.frombuffer(whole, dtype, items, data_offset).reshape((count, *record_shape))
    return array, identity


def map_read_only(fileno: int, length: int, offset: int) -> mmap.mmap:
    """A read-only shared mapping of `length` bytes of the file from `offset`, its pages
    mapped now where Linux can (MAP_POPULATE: one system call instead of a fault every few
    pages while a kernel reads them)."""
    if not hasattr(mmap, "MAP_SHARED"):  # Windows
        return mmap.mmap(fileno, length, access=mmap.ACCESS_READ, offset=offset)
    flags = mmap.MAP_SHARED | getattr(mmap, "MAP_POPULATE", 0)  # populate: Linux only
    return mmap.mmap(fileno, length, flags=flags, prot=mmap.PROT_READ, offset=offset)


def _soft_file_limit() -> int:
    try:
        soft, _ = resource.getrlimit(resource.RLIMIT_NOFILE)
    except (OSError, ValueError):
        return 1024
    return 1024 if soft == resource.RLIM_INFINITY else int(soft)


def default_budget_bytes() -> int:
    """A quarter of physical memory (1 GiB where it cannot be read), and at most half of the
    memory available now, within this process's cgroup if it has a limit: kept pages are
    page cache charged to the cgroup."""
    try:
        budget = int(os.sysconf("SC_PAGE_SIZE") * os.sysconf("SC_PHYS_PAGES")) // 4
    except (ValueError, OSError, AttributeError):
        budget = 2**30
    available = available_memory_bytes()
    return max(0, budget if available is None else min(budget, available // 2))
