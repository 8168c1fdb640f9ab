"""How a worker's results reach the parent process: rows written in place, partials pickled.

- **Rows.** A per-record kernel (LC: a score per point) sends the host 1/α of its input.
  When it declares its row (`RowKernel.row_spec`), every engine writes each chunk's rows
  straight into their record's place in one shared array, the pool's **rows arena**
  (`RowsArena`): an unlinked shared-memory file (memfd on Linux) that the parent and every
  worker map once and keep. Nothing is merged, concatenated, copied or pickled, and the parent
  reads the rows in place for the host part.

  The arena outlives a pass, so later passes and runs write into pages that already exist.
  That is where the time goes otherwise: on a machine whose shared memory comes in 4 KiB
  pages (shmem transparent huge pages are off by default), allocating, zeroing and mapping a
  fresh 256 MiB output per pass cost as much again as LC's device part writing it (see
  benchmarks/README.md, runtime overhead). A pass's rows are only lent to the host part: if
  anything still holds them afterwards (a result that is a view of them, a kernel state that
  kept them), the arena is theirs and the pool starts a new one. The arena is sized and
  allocated up front, so a worker can never die of SIGBUS writing into it. It is allocated
  through the parent's mapping after asking for huge pages (`_allocate`): where shared memory
  has them on request (`shmem_enabled=advise`), a new pool's run of LC took 1.15× instead of
  1.6× the one-process time.
- **Rows larger than memory.** Shared memory cannot be paged out without swap, so rows that
  do not fit comfortably in memory (more than `MEMORY_SHARE` of what is available less
  `ROOM_LEFT_BYTES`: the host part's own output may be as large again), or a memfd that
  cannot be had, go to a **disk arena** instead: a file in a directory on a disk, never on
  tmpfs (the system's temporary directory, else the one holding the data set), created
  unnamed (`O_TMPFILE`, else unlinked at once) so that nothing is left behind even if every
  process is killed, and `posix_fallocate`d in full so that a full disk is an error now, not
  a worker's SIGBUS later. Its descriptor reaches the workers the same way. The pages they
  write are ordinary dirty file pages, written back and reclaimed under pressure, and a
  worker unmaps each chunk's rows once written (`_unmap`), so that neither the machine's
  memory nor a worker's resident size grows with the rows. If no disk directory can take
  them (none has room, or the temporary directory and the data set's are both tmpfs), rows
  that still fit in memory with `ROOM_LEFT_BYTES` to spare go to a memfd after all; rows
  that do not are an `NdpkitError` naming each directory and the bytes needed. Setting
  `NDPKIT_ROWS_DIR` (`ROWS_DIR_ENV`) to a directory puts every arena there, even rows that
  would fit in memory (to choose the disk, or to test this path). When memory has room but
  neither arena can be had, the kernel's partials are merged as for any other kernel.
- **Other partials.** Through a pipe every byte is copied four times (pickle, into the
  kernel, out of it, unpickle); instead a worker pickles with protocol 5 and writes buffers
  of `SPILL_MIN_BYTES` or more to a spill file (`pack`) in the run's spill directory
  (`spill_root`: /dev/shm when there is one, so the bytes stay in memory), which the parent
  maps copy-on-write and unlinks (`unpack`): one copy. If the file cannot be written, the
  pipe is used.
"""

from __future__ import annotations

import contextlib
import errno
import mmap
import os
import pickle
import re
import sys
import tempfile
import weakref
from collections.abc import Iterable
from dataclasses import dataclass
from multiprocessing import reduction
from multiprocessing.connection import Connection
from pathlib import Path
from typing import Any

import numpy as np

from ndpkit.errors import NdpkitError
from ndpkit.kernels.base import RowKernel, RowSpec
from ndpkit.runtime.watched_pipe import blocking_kept

SPILL_MIN_BYTES = 256 * 2**10
"""Buffers of a pickled partial at least this large travel in a spill file."""
ROOM_LEFT_BYTES = 256 * 2**20
"""What a rows arena in memory must leave of the memory available."""
MEMORY_SHARE = 0.5
"""The most of the memory available (less `ROOM_LEFT_BYTES`) a rows arena may take in
memory; larger rows go to a disk arena."""
ROWS_DIR_ENV = "NDPKIT_ROWS_DIR"
"""Environment variable: a directory in which every rows arena is a file (see the module doc)."""
_MEMORY_FILESYSTEMS = frozenset({"tmpfs", "ramfs", "hugetlbfs", "devtmpfs"})
"""Filesystems whose files are memory: no place for rows that do not fit in it."""
_MADV_POPULATE_WRITE = getattr(mmap, "MADV_POPULATE_WRITE", 23 if sys.platform == "linux" else None)
ARENAS = (
    sys.platform == "linux"
    and hasattr(os, "memfd_create")
    and getattr(reduction, "HAVE_SEND_HANDLE", False)
)
"""Whether this platform has rows arenas (Linux: memfd, fd passing);
elsewhere row kernels' partials are merged like any other kernel's."""


def spill_root() -> str | None:
    """/dev/shm keeps spilled results in memory; elsewhere the default temporary directory."""
    shm = "/dev/shm"
    return shm if os.path.isdir(shm) and os.access(shm, os.W_OK) else None


def available_memory_bytes() -> int | None:
    """Memory available without swapping: the kernel's estimate (Linux), lowered to what
    this process's cgroup may still use when it has a limit; None if unknown."""
    try:
        with open("/proc/meminfo") as f:
            fields = dict(line.split(":", 1) for line in f if ":" in line)
        available = int(fields["MemAvailable"].split()[0]) * 1024
    except (OSError, KeyError, ValueError):
        return None
    room = _cgroup_room_bytes()
    return available if room is None else min(available, room)


def _cgroup_room_bytes(
    proc_cgroup: Path = Path("/proc/self/cgroup"), root: Path = Path("/sys/fs/cgroup")
) -> int | None:
    """What this process's memory cgroup and its ancestors may still take: the least over
    those with a limit of the limit less what the group holds that cannot simply be dropped
    (from the first hierarchy that has the memory controller), or None if none has a limit.

    A cgroup's usage counts its page cache, and a data set read or written once fills the
    cgroup with it up to the limit: limit − usage alone then says nothing is left (4 KiB
    after writing an 8 GiB data set under a 2 GiB limit), where the kernel would drop those
    pages for any process that asks. So clean file pages count as room, as MemAvailable
    counts them for the machine; dirty pages and pages under writeback do not (they must be
    written first). A limit set on a parent group (a container's, with this process in a
    group below it) binds as well."""
    try:
        lines = [line.strip().split(":", 2) for line in proc_cgroup.read_text().splitlines()]
    except OSError:
        return None
    for _, controllers, path in (line for line in lines if len(line) == 3):
        if controllers == "":  # v2
            base = root
            files = ("memory.max", "memory.current")
            keys = ("active_file", "inactive_file", "file_dirty", "file_writeback")
        elif "memory" in controllers.split(","):  # v1; its total_ figures include children
            base = root / "memory"
            files = ("memory.limit_in_bytes", "memory.usage_in_bytes")
            keys = ("total_active_file", "total_inactive_file", "total_dirty", "total_writeback")
        else:
            continue
        parts = [part for part in path.split("/") if part]
        groups = [base.joinpath(*parts[:n]) for n in range(len(parts), -1, -1)]
        if not (groups[0] / files[0]).exists():
            # On a hybrid machine the v2 line names a hierarchy mounted elsewhere, without
            # the memory controller: the v1 line may still hold the limit.
            continue
        rooms = [r for r in (_group_room_bytes(g, files, keys) for g in groups) if r is not None]
        return min(rooms, default=None)
    return None


def _group_room_bytes(
    group: Path, files: tuple[str, str], keys: tuple[str, str, str, str]
) -> int | None:
    """One group's room (see `_cgroup_room_bytes`), or None if it has no limit or cannot be
    read."""
    try:
        limit, usage = (_int_or_max((group / name).read_text()) for name in files)
    except (OSError, ValueError):
        return None
    if limit is None or limit >= 2**62 or usage is None:  # v1 writes "no limit" as a huge number
        return None
    stat = _memory_stat(group / "memory.stat")
    active, inactive, dirty, writeback = (stat.get(k, 0) for k in keys)
    clean = max(0, active + inactive - dirty - writeback)
    return min(limit, max(0, limit - usage + clean))


def _int_or_max(text: str) -> int | None:
    """A cgroup figure: an integer, or None for "max" (no limit)."""
    text = text.strip()
    return None if text == "max" else int(text)


def _memory_stat(path: Path) -> dict[str, int]:
    """A cgroup's memory.stat as {name: value}; lines that are not "name integer" are skipped
    (an unreadable file reads as no figures: room is then limit − usage, as before)."""
    try:
        text = path.read_text()
    except OSError:
        return {}
    stat: dict[str, int] = {}
    for line in text.splitlines():
        name, _, value = line.partition(" ")
        if value.strip().isdigit():
            stat[name] = int(value)
    return stat


# -- rows ---------------------------------------------------------------------------------


@dataclass(frozen=True)
class Rows:
    """What a task tells its worker about the pass's rows: arena `generation` (of
    `size_bytes`, a file on disk if `on_disk`) holds the row of record i at byte i × row_bytes."""

    generation: int
    size_bytes: int
    spec: RowSpec
    on_disk: bool = False


class RowsArena:
    """The parent's side of a pool's rows arena (see the module doc)."""

    def __init__(self) -> None:
        self.fd: int | None = None
        self.generation = 0
        self.on_disk = False
        self._mapping: mmap.mmap | None = None
        self._size_bytes = 0
        self._lent: weakref.ref[np.ndarray] | None = None

    def reserve(self, records: int, spec: RowSpec, beside: Path | None = None) -> Rows | None:
        """Room for `records` rows of `spec` (the arena grown if need be), or None if memory
        has room for them but no arena can be had: the caller merges partials instead.
        `beside`: the data set, in whose directory a disk arena may go (see the module doc).
        Raises NdpkitError if the rows fit neither in memory nor on a disk."""
        size_bytes = records * spec.row_bytes
        if self._lent is not None and self._lent() is not None:
            self._give_up()  # the last pass's rows are still in use
        self._lent = None
        if self._mapping is None or size_bytes > self._size_bytes:
            self._replace(max(size_bytes, 1), beside)
        if self._mapping is None:
            return None
        return Rows(self.generation, self._size_bytes, spec, self.on_disk)

    def lend(self, rows: Rows, records: int) -> np.ndarray:
        """The pass's rows in record order, for the host part, until the next `reserve`."""
        assert self._mapping is not None and rows.generation == self.generation
        items = records * int(np.prod(rows.spec.shape, dtype=np.int64))
        root = np.frombuffer(self._mapping, rows.spec.dtype, items)
        self._lent = weakref.ref(root)
        return root.reshape((records, *rows.spec.shape))

    def close(self) -> None:
        self._give_up()

    def _replace(self, size_bytes: int, beside: Path | None) -> None:
        """A new arena of `size_bytes` (the old one's pages are dropped): in memory if the
        rows fit there comfortably, else on disk (see the module doc)."""
        self._give_up()
        chosen = os.environ.get(ROWS_DIR_ENV) or None
        if chosen is not None:
            made, on_disk = _disk_arena(size_bytes, [chosen], f"{ROWS_DIR_ENV} is set"), True
        elif _fits_in_memory(size_bytes):
            made, on_disk = _memory_arena(size_bytes), False
            if made is None:
                made, on_disk = _disk_arena(size_bytes, _disk_directories(beside), None), True
        else:
            # No disk to put them on (say /tmp and the data set on tmpfs) is an error only if
            # memory cannot hold them either; else they go to memory, as before disk arenas.
            fits = _fits_at_all(size_bytes)
            why = None if fits else "they do not fit in memory"
            made, on_disk = _disk_arena(size_bytes, _disk_directories(beside), why), True
            if made is None:
                made, on_disk = _memory_arena(size_bytes), False
        if made is None:
            return  # partials are merged instead
        self.fd, self._mapping = made
        self._size_bytes, self.on_disk = size_bytes, on_disk
        self.generation += 1

    def _give_up(self) -> None:
        """Forget the arena; its memory goes when the last mapping of it does (arrays still
        lent out keep the parent's alive)."""
        if self.fd is not None:
            os.close(self.fd)
        if self._mapping is not None:
            with contextlib.suppress(BufferError):  # views of it still exist: they own it
                self._mapping.close()
        self.fd, self._mapping, self._size_bytes, self._lent = None, None, 0, None
        self.on_disk = False


def _fits_in_memory(size_bytes: int) -> bool:
    """Whether the rows fit in memory comfortably (the host part's output may be as large)."""
    room = available_memory_bytes()
    return room is None or size_bytes <= (room - ROOM_LEFT_BYTES) * MEMORY_SHARE


def _fits_at_all(size_bytes: int) -> bool:
    """Whether the rows fit in memory with `ROOM_LEFT_BYTES` to spare."""
    room = available_memory_bytes()
    return room is None or size_bytes + ROOM_LEFT_BYTES <= room


def _memory_arena(size_bytes: int) -> tuple[int, mmap.mmap] | None:
    """An unlinked memfd of `size_bytes`, mapped and allocated in full, or None."""
    try:
        fd = os.memfd_create("ndpkit-rows", os.MFD_CLOEXEC)
    except OSError:
        return None
    try:
        os.ftruncate(fd, size_bytes)
        mapping = mmap.mmap(fd, size_bytes, flags=mmap.MAP_SHARED)
    except (OSError, ValueError):
        os.close(fd)
        return None
    if not _allocate(fd, mapping, size_bytes):
        mapping.close()
        os.close(fd)
        return None
    return fd, mapping


def _disk_directories(beside: Path | None) -> list[str]:
    """Where a disk arena may go, best first: the temporary directory, then the one
    holding the data set; none on a filesystem that lives in memory."""
    candidates = [tempfile.gettempdir()]
    if beside is not None:
        candidates.append(os.path.dirname(os.path.abspath(beside)))
    return [d for d in dict.fromkeys(candidates) if not _memory_filesystem(d)]


def _memory_filesystem(path: str) -> bool:
    """Whether `path` is on tmpfs or the like (the filesystem of its longest mount point)."""
    try:
        with open("/proc/self/mounts") as f:
            mounts = [line.split()[1:3] for line in f]
    except OSError:
        return False
    real, best, kind = os.path.realpath(path), "", ""
    for escaped, fstype in (m for m in mounts if len(m) == 2):
        point = re.sub(r"\\([0-7]{3})", lambda m: chr(int(m[1], 8)), escaped)  # \040: a space
        inside = real == point or real.startswith(point.rstrip("/") + "/")
        if inside and len(point) >= len(best):  # a later mount on the same point hides earlier
            best, kind = point, fstype
    return kind in _MEMORY_FILESYSTEMS


def _disk_arena(
    size_bytes: int, directories: list[str], required_because: str | None
) -> tuple[int, mmap.mmap] | None:
    """A file of `size_bytes` in the first of `directories` with room for it, nameless,
    allocated in full and mapped. If there is none: None, or with `required_because` (why
    the rows must go to disk) an NdpkitError saying where there was no room."""
    problems = []
    for directory in directories:
        try:
            stats = os.statvfs(directory)
            free_bytes = stats.f_bavail * stats.f_frsize
            if free_bytes < size_bytes:
                problems.append(f"{directory} has {free_bytes:,} bytes free")
                continue
            return _file_arena(directory, size_bytes)
        except OSError as e:
            problems.append(f"{directory}: {e.strerror or e}")
    if required_because is None:
        return None
    where = "; ".join(problems) or "the temporary directory and the data set's are in memory"
    raise NdpkitError(
        f"no room for the rows arena: {size_bytes:,} bytes of rows must go to a disk "
        f"({required_because}), and none can hold them ({where}); set {ROWS_DIR_ENV} to a "
        "directory on a disk with room"
    )


def _file_arena(directory: str, size_bytes: int) -> tuple[int, mmap.mmap]:
    """An unnamed file in `directory` with all its blocks allocated, mapped shared."""
    fd = _unnamed_file(directory)
    try:
        os.posix_fallocate(fd, 0, size_bytes)  # the blocks now: no SIGBUS on a full disk later
        return fd, mmap.mmap(fd, size_bytes, flags=mmap.MAP_SHARED)
    except BaseException:
        os.close(fd)
        raise


def _unnamed_file(directory: str) -> int:
    """A new file in `directory` that no name points to, so nothing is left behind however
    the run ends: O_TMPFILE, else a temporary file unlinked at once."""
    flags = os.O_RDWR | os.O_CLOEXEC
    tmpfile = getattr(os, "O_TMPFILE", 0)
    if tmpfile:
        try:
            return os.open(directory, flags | tmpfile, 0o600)
        except OSError as e:  # a filesystem without O_TMPFILE
            if e.errno not in (errno.EOPNOTSUPP, errno.EISDIR, errno.EINVAL):
                raise
    fd, path = tempfile.mkstemp(prefix="ndpkit-rows-", dir=directory)
    os.unlink(path)
    return fd


def _allocate(fd: int, mapping: mmap.mmap, size_bytes: int) -> bool:
    """Give the arena all its pages now, so that no worker can die of SIGBUS writing into it
    later; False if there is no memory for them.

    Through the mapping, asked for huge pages first: where shared memory may come in 2 MiB
    pages only when asked (`shmem_enabled=advise`), pages allocated by `posix_fallocate`
    (no mapping, so no asking) would be 4 KiB ones."""
    with contextlib.suppress(OSError, ValueError, AttributeError):
        mapping.madvise(mmap.MADV_HUGEPAGE)
    if _MADV_POPULATE_WRITE is not None:
        try:
            mapping.madvise(_MADV_POPULATE_WRITE, 0, size_bytes)
            return True
        except OSError as e:
            if e.errno != errno.EINVAL:  # EINVAL: a kernel older than 5.14
                return False
    try:
        os.posix_fallocate(fd, 0, size_bytes)
    except OSError:
        return False
    return True


def send_arena(conn: Connection, fd: int, pid: int | None) -> None:
    """Pass the arena's file descriptor to the worker at the other end of `conn`."""
    with blocking_kept(conn):
        reduction.send_handle(conn, fd, pid or 0)


class RowWriter:
    """A worker's side: each chunk's rows written by the kernel straight into their place in
    the arena, which the worker was sent (`adopt_arena`) and keeps mapped."""

    def __init__(self, rows: Rows, kernel: RowKernel, spans: Iterable[tuple[int, int]]):
        """`spans`: the (first record, records) this worker's task will write."""
        mapping = _mapped[rows.generation]
        # Not a disk arena's: that would map all the worker's rows into it at once (see
        # `write`), and dirty every page to be written back as zeros and again with the rows.
        for first, records in [] if rows.on_disk else spans:
            if (first, records) not in _populated:
                _populate(mapping, first * rows.spec.row_bytes, records * rows.spec.row_bytes)
                _populated.add((first, records))
        items = rows.size_bytes // rows.spec.dtype.itemsize
        width = max(1, int(np.prod(rows.spec.shape, dtype=np.int64)))
        flat = np.frombuffer(mapping, rows.spec.dtype, items - items % width)
        self.rows = flat.reshape((-1, *rows.spec.shape))
        self.kernel = kernel
        self._mapping = mapping
        self._row_bytes = rows.spec.row_bytes
        self._on_disk = rows.on_disk

    def write(self, chunk: np.ndarray, state: Any, offset: int) -> None:
        """The device part over `chunk` (whose first record is `offset`), its rows written
        at their place in the arena."""
        self.kernel.device_into(chunk, state, offset, self.rows[offset : offset + len(chunk)])
        if self._on_disk:
            _unmap(self._mapping, offset * self._row_bytes, len(chunk) * self._row_bytes)


_mapped: dict[int, mmap.mmap] = {}
"""A worker's mapping of the arena it was sent last, by generation."""
_populated: set[tuple[int, int]] = set()
"""The spans of that arena whose pages this worker has mapped for writing."""


def adopt_arena(conn: Connection, generation: int, size_bytes: int) -> None:
    """In a worker: receive the arena the parent sends after a task, and map it in place of
    any older one."""
    with blocking_kept(conn):
        fd = reduction.recv_handle(conn)
    try:
        forget_arenas()
        _mapped[generation] = mmap.mmap(fd, size_bytes, flags=mmap.MAP_SHARED)
    finally:
        os.close(fd)


def forget_arenas() -> None:
    """In a worker: unmap its arena, so that one the parent gave up can be freed."""
    for old in _mapped.values():
        with contextlib.suppress(BufferError):  # views of it still exist: they own it
            old.close()
    _mapped.clear()
    _populated.clear()


def _unmap(mapping: mmap.mmap, start: int, length: int) -> None:
    """Take a disk arena span's pages out of this process (their contents stay in the file):
    written, they are dirty file pages that the kernel writes back and frees on its own,
    but while mapped they would count in the worker's resident size, up to all its rows."""
    if length <= 0:
        return
    aligned = start - start % mmap.PAGESIZE
    with contextlib.suppress(OSError, ValueError):  # then they stay until reclaimed
        mapping.madvise(mmap.MADV_DONTNEED, aligned, min(len(mapping), start + length) - aligned)


def _populate(mapping: mmap.mmap, start: int, length: int) -> None:
    """Map an arena span's pages for writing in one call instead of a fault per 4 KiB page
    (Linux ≥ 5.14; 2.3× faster for 256 MiB), once per span: pages mapped already would only
    be walked again."""
    if _MADV_POPULATE_WRITE is None or length <= 0:
        return
    aligned = start - start % mmap.PAGESIZE
    with contextlib.suppress(OSError, ValueError):  # an older kernel: faults it is
        mapping.madvise(_MADV_POPULATE_WRITE, aligned, min(len(mapping), start + length) - aligned)


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
        try:
            mapped = mmap.mmap(f.fileno(), 0, access=mmap.ACCESS_COPY)
        except OSError as exc:
            if exc.errno == errno.ENOMEM:  # no address space left (`ulimit -v`)
                raise MemoryError(f"cannot map a spilled partial ({packed.path})") from None
            raise
    os.unlink(packed.path)
    view = memoryview(mapped)
    buffers, start = [], 0
    for size in packed.sizes:
        buffers.append(view[start : start + size])
        start += size
    return pickle.loads(packed.head, buffers=buffers)
