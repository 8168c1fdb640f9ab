"""The third signal stops the command at once even while a cleanup holds signals
(`files.signals_held`): that is where a hung cleanup would be, and holding used to swallow
every signal there, so the documented escape did not work."""

from __future__ import annotations

import signal
import subprocess
import sys

import pytest

SCRIPT = """
import signal, sys
import ndpkit.cli as cli
from ndpkit.files import count_held_signals, signals_held
for s in (signal.SIGINT, signal.SIGTERM):
    signal.signal(s, cli._on_signal)
count_held_signals(cli._on_held_signal)
cli._received.extend([signal.SIGINT] * int(sys.argv[1]))  # a stop already under way
try:
    with signals_held():
        for _ in range(int(sys.argv[2])):
            signal.raise_signal(signal.SIGINT)
        print("cleanup done", flush=True)
except KeyboardInterrupt:
    print("interrupted after the cleanup", flush=True)
"""


def _run(already: int, during: int) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-c", SCRIPT, str(already), str(during)],
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )


def test_the_third_signal_kills_inside_a_held_cleanup() -> None:
    result = _run(already=1, during=2)
    assert result.returncode == -signal.SIGINT, result.stdout + result.stderr
    assert "cleanup done" not in result.stdout


def test_a_second_signal_still_waits_for_the_cleanup() -> None:
    result = _run(already=1, during=1)
    assert result.returncode == 0, result.stderr
    assert result.stdout.splitlines() == ["cleanup done"]


@pytest.mark.parametrize("during", [1, 3])
def test_a_first_signal_during_a_cleanup_is_delivered_after_it(during: int) -> None:
    """No stop under way: however many arrive, the cleanup finishes, then one interrupt."""
    result = _run(already=0, during=during)
    assert result.returncode == 0, result.stderr
    assert result.stdout.splitlines() == ["cleanup done", "interrupted after the cleanup"]
