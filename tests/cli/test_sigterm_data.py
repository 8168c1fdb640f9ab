"""SIGTERM stops `ndpkit` the way Ctrl-C does: the writers' cleanup runs, nothing is left."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest
from cli_env import command_env

from ndpkit.cli import EXIT_TERMINATED

NDPKIT = Path(sys.executable).parent / "ndpkit"
pytestmark = pytest.mark.serial  # signals and an 8 s deadline: not beside other tests


def _wait_for_first_shard(parent: Path, process: subprocess.Popen[str]) -> None:
    deadline = time.monotonic() + 8
    while not list(parent.glob("ds.tmp-*/device-00/shard-0000.npy")):
        if process.poll() is not None or time.monotonic() > deadline:
            process.kill()
            pytest.fail(f"the generation never wrote a shard: {process.communicate()}")
        time.sleep(0.01)


def _start_generation(tmp_path: Path, ignoring_sighup: bool = False) -> subprocess.Popen[str]:
    """`ndpkit data generate` of 8 GiB into tmp_path/ds: about two minutes here, so a signal
    always lands mid-generation (the tests stop it after the first 64 MiB shard). With
    `ignoring_sighup`, started with SIGHUP ignored, as `nohup` starts a command."""
    args = ["data", "generate", "lc", "--size", "8GiB", "--devices", "2", "--format", "json"]
    command = [str(NDPKIT), *args, "--out", str(tmp_path / "ds")]
    if ignoring_sighup:
        nohup = "import os, signal, sys; signal.signal(signal.SIGHUP, signal.SIG_IGN); "
        nohup += "os.execv(sys.argv[1], sys.argv[1:])"
        command = [sys.executable, "-c", nohup, *command]
    return subprocess.Popen(
        command,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        env=command_env(),
    )


@pytest.mark.skipif(sys.platform == "win32", reason="POSIX signals")
@pytest.mark.parametrize(
    ("signum", "said"),
    [(signal.SIGTERM, "terminated (SIGTERM)"), (getattr(signal, "SIGHUP", 1), "hung up (SIGHUP)")],
    ids=["SIGTERM", "SIGHUP"],
)
def test_sigterm_mid_generation_removes_the_staging_directory(
    tmp_path: Path, signum: int, said: str
) -> None:
    # SIGHUP (the terminal closed) left a data-set-sized DIR.tmp-… behind.
    process = _start_generation(tmp_path)
    try:
        _wait_for_first_shard(tmp_path, process)
        process.send_signal(signum)
        stdout, stderr = process.communicate(timeout=10)
    finally:
        if process.poll() is None:
            process.kill()
            process.wait()
    assert process.returncode == 128 + signum
    assert EXIT_TERMINATED == 143
    assert said in stderr and "Traceback" not in stderr
    assert stdout == ""
    assert list(tmp_path.iterdir()) == []  # neither ds nor its ds.tmp-* staging directory


@pytest.mark.skipif(not hasattr(signal, "SIGHUP"), reason="POSIX SIGHUP")
def test_a_command_started_ignoring_sighup_keeps_ignoring_it(tmp_path: Path) -> None:
    # `nohup ndpkit …` must outlive the terminal: the SIGHUP handler is not installed then.
    process = _start_generation(tmp_path, ignoring_sighup=True)
    try:
        _wait_for_first_shard(tmp_path, process)
        process.send_signal(signal.SIGHUP)
        time.sleep(0.5)
        assert process.poll() is None, process.communicate()
        process.send_signal(signal.SIGTERM)
        _, stderr = process.communicate(timeout=10)
    finally:
        if process.poll() is None:
            process.kill()
            process.wait()
    assert process.returncode == EXIT_TERMINATED
    assert "terminated (SIGTERM)" in stderr and "hung up" not in stderr
    assert list(tmp_path.iterdir()) == []


@pytest.mark.skipif(not hasattr(os, "openpty"), reason="POSIX terminals")
@pytest.mark.parametrize("output", ["json", "table"])
def test_sighup_from_a_closed_terminal_exits_129(tmp_path: Path, output: str) -> None:
    # A real hang-up: the terminal the command writes to is gone (its master side closed,
    # writes fail with EIO) when SIGHUP comes. The stop message could not be written, stayed
    # in stderr's buffer, and the interpreter's last flush failed on it: status 120, not 129.
    master, slave = os.openpty()
    args = ["data", "generate", "lc", "--size", "8GiB", "--devices", "2", "--format", output]
    try:
        process = subprocess.Popen(
            [str(NDPKIT), *args, "--out", str(tmp_path / "ds")],
            stdin=subprocess.DEVNULL,
            stdout=slave,
            stderr=slave,
            env=command_env(),
        )
    finally:
        os.close(slave)
    try:
        _wait_for_first_shard(tmp_path, process)
        os.close(master)
        master = -1
        process.send_signal(signal.SIGHUP)
        process.wait(timeout=10)
    finally:
        if master != -1:
            os.close(master)
        if process.poll() is None:
            process.kill()
            process.wait()
    assert process.returncode == 128 + signal.SIGHUP
    assert list(tmp_path.iterdir()) == []


@pytest.mark.skipif(not hasattr(signal, "SIGHUP"), reason="POSIX SIGHUP")
def test_a_stop_with_stderr_closed_still_exits_with_the_signal(tmp_path: Path) -> None:
    # `ndpkit … 2>&-`: sys.stderr is None, and writing the stop message to it raised an
    # AttributeError out of `main`: status 1.
    args = ["data", "generate", "lc", "--size", "8GiB", "--devices", "2", "--format", "json"]
    process = subprocess.Popen(
        [str(NDPKIT), *args, "--out", str(tmp_path / "ds")],
        stdout=subprocess.DEVNULL,
        env=command_env(),
        preexec_fn=lambda: os.close(2),  # noqa: PLW1509 (the test starts no threads)
    )
    try:
        _wait_for_first_shard(tmp_path, process)
        process.send_signal(signal.SIGHUP)
        process.wait(timeout=10)
    finally:
        if process.poll() is None:
            process.kill()
            process.wait()
    assert process.returncode == 128 + signal.SIGHUP
    assert list(tmp_path.iterdir()) == []
