"""SIGTERM stops `ndpkit` the way Ctrl-C does: the writers' cleanup runs, nothing is left."""

from __future__ import annotations

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


@pytest.mark.skipif(sys.platform == "win32", reason="POSIX signals")
def test_sigterm_mid_generation_removes_the_staging_directory(tmp_path: Path) -> None:
    # 8 GiB takes about two minutes here: the signal always lands mid-generation, and the
    # test stops it after the first 64 MiB shard.
    args = ["data", "generate", "lc", "--size", "8GiB", "--devices", "2", "--format", "json"]
    process = subprocess.Popen(
        [str(NDPKIT), *args, "--out", str(tmp_path / "ds")],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        env=command_env(),
    )
    try:
        _wait_for_first_shard(tmp_path, process)
        process.send_signal(signal.SIGTERM)
        stdout, stderr = process.communicate(timeout=10)
    finally:
        if process.poll() is None:
            process.kill()
            process.wait()
    assert process.returncode == EXIT_TERMINATED == 143
    assert "terminated (SIGTERM)" in stderr and "Traceback" not in stderr
    assert stdout == ""
    assert list(tmp_path.iterdir()) == []  # neither ds nor its ds.tmp-* staging directory
