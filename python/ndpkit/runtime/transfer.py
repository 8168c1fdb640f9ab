"""How a worker's results reach the parent process: rows written in place, partials pickled.

Both go through the run's spill directory (`spill_root`: /dev/shm when there is one, so the
bytes stay in memory), which the executor removes when the run ends, however it ends.

- **Rows.** A per-record kernel (LC: a score per point) sends the host 1/α of its input.
  When it declares its row (`RowKernel.row_spec`), the parent makes one output file per pass
  (`Rows.create`, sized but not written), and every engine writes each chunk's rows at their
  record index (`Rows.writer`: `RowKernel.device_into` into a reused buffer that stays in the
  caches, then one pwrite). Nothing is merged, concatenated or pickled, and the rows never
  sit in a worker's memory. The parent maps the finished file once (`Rows.map`), with its
  pages mapped up front, and unlinks it. A pwrite costs one copy, but it was faster than
  having the kernel write into a mapping of the file (page faults on fresh tmpfs pages, and
  unmapping each window) and it reports a full file system as an error (a mapping would
  die of SIGBUS).
- **Other partials.** Through a pipe every byte is copied four times (pickle, into the
  kernel, out of it, unpickle); instead a worker pickles with protocol 5 and writes buffers
  of `SPILL_MIN_BYTES` or more to a spill file (`pack`), which the parent maps copy-on-write
  and unlinks (`unpack`): one copy. If the file cannot be written, the pipe is used.
"""

from __future__ import annotations

import contextlib
import mmap
import os
import pickle
from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any

import numpy as np

from ndpkit.errors import NdpkitError
from ndpkit.kernels.base import RowKernel, RowSpec

SPILL_MIN_BYTES = 256 * 2**10
"""Buffers of a pickled partial at least this large travel in a spill file."""
ROOM_LEFT_BYTES = 64 * 2**20
"""What an output file for rows must leave free in the spill directory's file system."""
_MAP_POPULATE = getattr(mmap, "MAP_POPULATE", 0)  # Linux only


def spill_root() -> str | None:
    """/dev/shm keeps spilled results in memory; elsewhere the default temporary directory."""
    shm = "/dev/shm"
    return shm if os.path.isdir(shm) and os.access(shm, os.W_OK) else None


def free_bytes(directory: str) -> int:
    """Room left for an unprivileged writer in the file system holding `directory`."""
    try:
        stats = os.statvfs(directory)
    except OSError:
        return 0
    return stats.f_bavail * stats.f_frsize


# -- rows ---------------------------------------------------------------------------------


@dataclass(frozen=True)
class Rows:
    """A pass's output file: the row of record i at byte i × row_bytes."""

    path: str
    spec: RowSpec

    @classmethod
    def create(cls, directory: str, name: str, records: int, spec: RowSpec) -> Rows | None:
        """An empty output file for `records` rows, or None if the file system has no room
        for them (or this platform has no shared mappings): the caller merges partials."""
        size_bytes = records * spec.row_bytes
        if not hasattr(mmap, "MAP_SHARED") or (
            free_bytes(directory) < size_bytes + ROOM_LEFT_BYTES
        ):
            return None
        path = os.path.join(directory, name)
        try:
            with open(path, "wb") as f:
                f.truncate(size_bytes)  # sparse: pages come as the engines write them
        except OSError:
            return None
        return cls(path, spec)

    @contextlib.contextmanager
    def writer(self, kernel: RowKernel, chunk_records: int) -> Iterator[RowWriter]:
        """`kernel`'s writer for chunks of up to `chunk_records` records, closed afterwards."""
        writer = RowWriter(self, kernel, chunk_records)
        try:
            yield writer
        finally:
            os.close(writer.fd)

    def map(self, records: int) -> np.ndarray:
        """The finished file as an array of `records` rows: a shared mapping of the unlinked
        file, whose memory goes when the array does."""
        shape = (records, *self.spec.shape)
        size_bytes = records * self.spec.row_bytes
        with open(self.path, "r+b") as f:
            flags = mmap.MAP_SHARED | _MAP_POPULATE
            mapped = mmap.mmap(f.fileno(), size_bytes, flags=flags) if size_bytes else None
        os.unlink(self.path)
        if mapped is None:
            return np.empty(shape, self.spec.dtype)
        return np.frombuffer(mapped, self.spec.dtype).reshape(shape)


class RowWriter:
    """Writes an engine's rows into the pass's output file, a chunk at a time."""

    def __init__(self, rows: Rows, kernel: RowKernel, chunk_records: int):
        self.kernel = kernel
        self.path = rows.path
        self.row_bytes = rows.spec.row_bytes
        self.buffer = np.empty((chunk_records, *rows.spec.shape), rows.spec.dtype)
        self.fd = os.open(rows.path, os.O_WRONLY)

    def write(self, chunk: np.ndarray, state: Any, offset: int) -> None:
        """The device part over `chunk` (whose first record is `offset`), its rows written
        at their place in the file."""
        out = self.buffer[: len(chunk)]
        self.kernel.device_into(chunk, state, offset, out)
        data = out.reshape(-1).view(np.uint8).data
        at = offset * self.row_bytes
        try:
            while data:
                written = os.pwrite(self.fd, data, at)
                data, at = data[written:], at + written
        except OSError as exc:
            raise NdpkitError(
                f"{self.path}: cannot write the kernel's output rows ({exc.strerror}); "
                "is the file system full?"
            ) from None


# -- other partials -----------------------------------------------------------------------


@dataclass(frozen=True)
class Packed:
    """A pickled partial; its large buffers, if any, are in the file `path`, back to back."""

    head: bytes
    path: str | None = None
    sizes: tuple[int, ...] = ()


def pack(value: Any, spill_dir: str | None, name: str) -> Packed:
    """Pickle `value` with buffers of at least SPILL_MIN_BYTES written to a spill file."""
    big: list[pickle.PickleBuffer] = []

    def in_band(buffer: pickle.PickleBuffer) -> bool:
        if spill_dir is None or buffer.raw().nbytes < SPILL_MIN_BYTES:
            return True
        big.append(buffer)
        return False

    head = pickle.dumps(value, protocol=5, buffer_callback=in_band)
    if not big or spill_dir is None:
        return Packed(head)
    path = os.path.join(spill_dir, name)
    try:
        with open(path, "wb") as f:
            for buffer in big:
                f.write(buffer.raw())
    except OSError:  # a small /dev/shm or a full disk: the pipe still works
        with contextlib.suppress(OSError):
            os.unlink(path)
        return Packed(pickle.dumps(value, protocol=5))
    return Packed(head, path, tuple(b.raw().nbytes for b in big))


def unpack(packed: Packed) -> Any:
    """The partial again; spilled arrays are views of a private mapping of the (unlinked)
    file, which lives until the last of them is gone."""
    if packed.path is None:
        return pickle.loads(packed.head)
    with open(packed.path, "rb") as f:
        mapped = mmap.mmap(f.fileno(), 0, access=mmap.ACCESS_COPY)
    os.unlink(packed.path)
    view = memoryview(mapped)
    buffers, start = [], 0
    for size in packed.sizes:
        buffers.append(view[start : start + size])
        start += size
    return pickle.loads(packed.head, buffers=buffers)
