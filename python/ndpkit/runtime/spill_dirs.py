"""A run's spill directory, and the removal of those a killed run left behind.

Each `LocalExecutor.run` spills large partials into a directory of its own,
`ndpkit-run-PID-…` under `transfer.spill_root()` (/dev/shm where there is one: memory, not
disk). A run stopped any way it can see removes it; a run killed with SIGKILL (or by the OOM
killer) cannot, and on /dev/shm what it left holds memory until someone deletes it.

So the parent holds an exclusive `flock` on its directory for as long as the run lasts, and
every run first removes the directories of its user that nobody holds and that have not been
touched for `STALE_AFTER_S`. The kernel drops a lock when its holder dies, however it dies,
so a held lock means a live run (in this PID namespace or another sharing /dev/shm), where a
PID could have been reused or be another namespace's. The age keeps a directory that was just
made, and is not yet locked, from another run's sweep. Directories of ndpkit versions that
did not lock are removed once that old, like any other: a run of such a version that spills
nothing for a minute loses its directory to a newer one's sweep.
"""

from __future__ import annotations

import contextlib
import os
import shutil
import tempfile
import time
from dataclasses import dataclass

try:
    import fcntl
except ImportError:  # Windows: no flock, so nothing is locked or swept
    fcntl = None  # type: ignore[assignment]

from ndpkit.runtime.transfer import spill_root

PREFIX = "ndpkit-run-"
STALE_AFTER_S = 60.0
"""How long a directory nobody holds must have been left untouched before a run removes it."""


@dataclass
class SpillDir:
    """A run's spill directory and the descriptor whose lock marks it in use."""

    path: str
    fd: int | None

    def remove(self) -> None:
        """Delete the directory, then let go of its lock (so no sweep sees it half gone)."""
        shutil.rmtree(self.path, ignore_errors=True)
        if self.fd is not None:
            with contextlib.suppress(OSError):
                os.close(self.fd)
            self.fd = None


def sweep_spill_root() -> list[str]:
    """`sweep_stale` where this process's spill directories go (`spill_root`)."""
    return sweep_stale(spill_root())


def open_spill_dir(*, sweep: bool = True) -> SpillDir:
    """A new spill directory for this process's run, locked; stale ones swept first (unless
    not `sweep`: the caller has, `sweep_spill_root`).

    Raises OSError (the directory removed again) if it cannot be locked, e.g. with no file
    descriptor left: unlocked, another run would take it for a killed run's after a minute."""
    root = spill_root()
    if sweep:
        sweep_stale(root)
    path = tempfile.mkdtemp(prefix=f"{PREFIX}{os.getpid()}-", dir=root)
    if fcntl is None:
        return SpillDir(path, None)
    try:
        return SpillDir(path, lock_dir(path))
    except OSError:
        shutil.rmtree(path, ignore_errors=True)
        raise


def lock_dir(path: str | os.PathLike[str]) -> int:
    """A descriptor of the directory `path` holding an exclusive lock on it; OSError if it is
    held (or cannot be opened)."""
    assert fcntl is not None
    flags = os.O_RDONLY | getattr(os, "O_DIRECTORY", 0) | getattr(os, "O_NOFOLLOW", 0)
    fd = os.open(path, flags)
    try:
        fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
    except OSError:
        os.close(fd)
        raise
    return fd


def sweep_stale(root: str | None, stale_after_s: float | None = None) -> list[str]:
    """Remove this user's spill directories under `root` (None: the temporary directory)
    that no process holds and that are older than `stale_after_s` (default
    `STALE_AFTER_S`); returns their paths. Anything it cannot read or lock is left alone."""
    if fcntl is None:
        return []
    age_s = STALE_AFTER_S if stale_after_s is None else stale_after_s
    removed = []
    try:
        entries = list(os.scandir(root or tempfile.gettempdir()))
    except OSError:
        return []
    now = time.time()
    for entry in entries:
        if not entry.name.startswith(PREFIX):
            continue
        try:
            info = entry.stat(follow_symlinks=False)
        except OSError:
            continue
        if not entry.is_dir(follow_symlinks=False) or info.st_uid != os.getuid():
            continue
        if now - info.st_mtime < age_s:
            continue
        try:
            fd = lock_dir(entry.path)
        except OSError:  # held by a live run (or unreadable)
            continue
        try:
            shutil.rmtree(entry.path, ignore_errors=True)
        finally:
            os.close(fd)
        if not os.path.exists(entry.path):
            removed.append(entry.path)
    return removed
