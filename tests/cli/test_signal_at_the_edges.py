"""Signals at the two ends of a command: one that an import turns into another exception
still reports the stop, and one during the interpreter's shutdown after a finished command
leaves its output and status alone (it used to arm a redelivery alarm that outlived its
handler and killed the process: "Alarm clock", status 142)."""

from __future__ import annotations

import signal
import subprocess
import sys
from pathlib import Path

import pytest

pytestmark = pytest.mark.skipif(sys.platform == "win32", reason="POSIX signals")

SHUTDOWN = """
import atexit, os, signal, sys
from ndpkit.cli import main
atexit.register(lambda: os.kill(os.getpid(), signal.SIGTERM))
sys.argv = ["ndpkit", "platforms", "list"]
main()
"""

REPLACED = """
import signal, sys
import ndpkit.cli as cli
def run():
    # What an import does with a stop raised inside it (ssl, rich): another exception.
    try:
        signal.raise_signal(signal.SIGTERM)
    except SystemExit:
        raise TypeError("expected a message argument") from None
cli._run = run
sys.argv = ["ndpkit", "platforms", "list"]
cli.main()
"""


def _python(code: str, cwd: Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-c", code],
        capture_output=True,
        text=True,
        cwd=cwd,
        timeout=60,
        check=False,
    )


def test_a_signal_in_the_shutdown_of_a_finished_command_changes_nothing(tmp_path: Path) -> None:
    for _ in range(3):
        done = _python(SHUTDOWN, tmp_path)
        assert done.returncode == 0, (done.returncode, done.stderr)
        assert "cns" in done.stdout
        assert done.stderr == ""


def test_a_stop_that_an_import_replaced_is_still_reported(tmp_path: Path) -> None:
    done = _python(REPLACED, tmp_path)
    assert done.returncode == 128 + signal.SIGTERM, done.stderr
    assert done.stderr.splitlines() == ["ndpkit: terminated (SIGTERM)"]
