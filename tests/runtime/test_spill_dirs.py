"""Spill directories: locked while their run lasts, swept once a killed run left them."""

from __future__ import annotations

import errno
import fcntl
import os
import pickle
import signal
import subprocess
import sys
import textwrap
import time
from pathlib import Path

import pytest

from ndpkit.kernels import get_kernel
from ndpkit.runtime import LocalExecutor, executor, generate_dataset, spill_dirs
from ndpkit.runtime.spill_dirs import PREFIX, open_spill_dir, sweep_stale


def _left(root: Path, name: str, age_s: float = 3600.0) -> Path:
    """A spill directory with a file in it, last touched `age_s` ago."""
    path = root / f"{PREFIX}{name}"
    path.mkdir()
    (path / "engine-0.bin").write_bytes(b"x" * 100)
    then = time.time() - age_s
    os.utime(path, (then, then))
    return path


def test_an_old_directory_nobody_holds_is_removed(tmp_path: Path) -> None:
    stale = _left(tmp_path, "999999-abc")
    assert sweep_stale(str(tmp_path)) == [str(stale)]
    assert not stale.exists()


def test_a_held_directory_stays_however_old(tmp_path: Path) -> None:
    held = _left(tmp_path, "1-held")
    fd = os.open(held, os.O_RDONLY)
    try:
        fcntl.flock(fd, fcntl.LOCK_EX)
        assert sweep_stale(str(tmp_path)) == []
        assert (held / "engine-0.bin").exists()
    finally:
        os.close(fd)
    assert sweep_stale(str(tmp_path)) == [str(held)]  # its holder has gone


def test_a_young_directory_and_other_names_stay(tmp_path: Path) -> None:
    young = _left(tmp_path, "2-young", age_s=1.0)
    other = tmp_path / "pymp-abc"
    other.mkdir()
    os.utime(other, (0, 0))
    not_a_dir = tmp_path / f"{PREFIX}3-file"
    not_a_dir.write_bytes(b"")
    os.utime(not_a_dir, (0, 0))
    assert sweep_stale(str(tmp_path)) == []
    assert young.exists() and other.exists() and not_a_dir.exists()
    assert sweep_stale(str(tmp_path), stale_after_s=0) == [str(young)]


def test_a_run_holds_its_directory_until_it_is_removed(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(spill_dirs, "spill_root", lambda: str(tmp_path))
    spill = open_spill_dir()
    assert Path(spill.path).parent == tmp_path
    assert Path(spill.path).name.startswith(f"{PREFIX}{os.getpid()}-")
    assert sweep_stale(str(tmp_path), stale_after_s=0) == []
    probe = os.open(spill.path, os.O_RDONLY)
    try:
        with pytest.raises(BlockingIOError):
            fcntl.flock(probe, fcntl.LOCK_EX | fcntl.LOCK_NB)
    finally:
        os.close(probe)
    spill.remove()
    assert not Path(spill.path).exists()
    assert spill.fd is None


def test_what_a_sigkilled_run_left_is_removed_by_the_next_run(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    root = tmp_path / "shm"
    root.mkdir()
    script = textwrap.dedent(
        f"""
        import sys, time
        from ndpkit.runtime import spill_dirs
        spill_dirs.spill_root = lambda: {str(root)!r}
        spill = spill_dirs.open_spill_dir()
        open(spill.path + "/engine-0.bin", "wb").write(b"x" * 1000)
        print(spill.path, flush=True)
        time.sleep(60)
        """
    )
    with subprocess.Popen(
        [sys.executable, "-c", script], stdout=subprocess.PIPE, text=True
    ) as child:
        try:
            assert child.stdout is not None
            left = Path(child.stdout.readline().strip())
            assert (left / "engine-0.bin").exists()
            assert sweep_stale(str(root), stale_after_s=0) == []  # its run is alive
        finally:
            child.send_signal(signal.SIGKILL)
            child.wait()
    assert left.exists()  # SIGKILL: nothing cleaned up
    monkeypatch.setattr(spill_dirs, "spill_root", lambda: str(root))
    monkeypatch.setattr(spill_dirs, "STALE_AFTER_S", 0.0)
    kernel = get_kernel("lc")
    ds = generate_dataset(kernel, 2**20, 2, tmp_path / "lc")
    LocalExecutor(1).run(kernel, ds, kernel.params(0))
    assert not left.exists()
    assert list(root.iterdir()) == []  # the run's own directory is gone too


def test_a_directory_that_cannot_be_locked_is_not_used(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Unlocked, a live run's directory would be swept by another run after a minute."""

    def no_descriptor_left(path: str) -> int:
        raise OSError(errno.EMFILE, "Too many open files")

    monkeypatch.setattr(spill_dirs, "spill_root", lambda: str(tmp_path))
    monkeypatch.setattr(spill_dirs, "lock_dir", no_descriptor_left)
    with pytest.raises(OSError, match="Too many open files"):
        open_spill_dir()
    assert list(tmp_path.iterdir()) == []


def test_a_linked_directory_is_left_alone(tmp_path: Path) -> None:
    target = _left(tmp_path, "5-target", age_s=1.0)
    link = tmp_path / f"{PREFIX}6-link"
    link.symlink_to(target)
    os.utime(link, (0, 0), follow_symlinks=False)
    assert sweep_stale(str(tmp_path)) == []
    assert link.is_symlink() and (target / "engine-0.bin").exists()


@pytest.mark.skipif(os.getuid() != 0, reason="needs root to give a directory to another user")
def test_another_users_directory_is_left_alone(tmp_path: Path) -> None:
    theirs = _left(tmp_path, "7-theirs")
    os.chown(theirs, 12345, -1)
    assert sweep_stale(str(tmp_path)) == []
    assert (theirs / "engine-0.bin").exists()


@pytest.mark.parametrize("code", [errno.ENOSPC, errno.EROFS])
def test_a_run_without_a_spill_directory_sends_its_partials_through_the_pipe(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, code: int
) -> None:
    """A /dev/shm out of inodes (though it has space) or read-only: the run goes on, its
    partials pickled through the pipe, with the same answer (it stopped with a traceback)."""
    kernel = get_kernel("kmeans")
    ds = generate_dataset(kernel, 2**20, 2, tmp_path / "kmeans")
    params = kernel.params(0)
    spilled = LocalExecutor(2).run(kernel, ds, params).result

    def no_directory(*, sweep: bool = True) -> spill_dirs.SpillDir:
        raise OSError(code, os.strerror(code), "/dev/shm/ndpkit-run-1-x")

    monkeypatch.setattr(executor, "open_spill_dir", no_directory)
    piped = LocalExecutor(2).run(kernel, ds, params).result
    assert type(piped) is type(spilled)
    assert pickle.dumps(piped) == pickle.dumps(spilled)
