"""Ctrl-C and SIGTERM stop `ndpkit simulate` and `ndpkit sweep` while the Rust simulator
runs, not after it.

The simulator releases the GIL, but Python runs signal handlers in the main thread only,
between bytecodes: while the main thread sat in the call, every signal (the third too,
which the command documents as stopping at once) waited for the run to end, up to about
30 s (`MAX_CHUNKS`), twice that with `--cv`. A sweep's ThreadPoolExecutor threads were
joined at exit, so a stopped sweep waited for every point in flight (66 s for two k-NN
points in 2 KiB chunks)."""

from __future__ import annotations

import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest
from cli_env import command_env

from ndpkit.cli import EXIT_INTERRUPTED, EXIT_TERMINATED

NDPKIT = Path(sys.executable).parent / "ndpkit"
STARTED_S = 4.0
"""Time for the command to start and reach the simulator (about 1 s here)."""
STOPPED_WITHIN_S = 5.0
"""Time the command may take to stop once signalled (well under the run it cuts short)."""

pytestmark = [
    pytest.mark.skipif(sys.platform == "win32", reason="POSIX signals"),
    pytest.mark.serial,  # a deadline in seconds: not beside other tests
]


# 130 GiB in 1.5 KiB chunks: 9.1e7 chunks, just under MAX_CHUNKS, about 30 s of run each.
TINY_CHUNKS = ("-a", "knn8", "--chunk", "1.5 KiB")
SIMULATE = ("simulate", "-p", "rfns", *TINY_CHUNKS, "--trace", "OUT/run.json", "-f", "json")
SWEEP = (
    "sweep", "--platforms", "rfns", "--apps", "knn8", "--engines", "35,36",
    "--chunks", "1.5 KiB", "--workers", "2", "--out", "OUT/sweep.csv",
)  # fmt: skip


@pytest.mark.parametrize(
    ("args", "signum", "status", "said"),
    [
        (SIMULATE, signal.SIGINT, EXIT_INTERRUPTED, "ndpkit: interrupted (SIGINT)"),
        (SIMULATE, signal.SIGTERM, EXIT_TERMINATED, "ndpkit: terminated (SIGTERM)"),
        (SWEEP, signal.SIGINT, EXIT_INTERRUPTED, "ndpkit: interrupted (SIGINT)"),
    ],
    ids=["simulate-SIGINT", "simulate-SIGTERM", "sweep-SIGINT"],
)
def test_a_signal_stops_a_long_simulation_at_once(
    tmp_path: Path, args: tuple[str, ...], signum: signal.Signals, status: int, said: str
) -> None:
    process = subprocess.Popen(
        [str(NDPKIT), *(a.replace("OUT", str(tmp_path)) for a in args)],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        env=command_env(),
        # A child started from a shell script in the background would ignore SIGINT; the
        # test starts no threads, so preexec_fn is safe here.
        preexec_fn=lambda: signal.signal(signal.SIGINT, signal.SIG_DFL),  # noqa: PLW1509
    )
    time.sleep(STARTED_S)
    assert process.poll() is None, process.communicate()
    process.send_signal(signum)
    sent = time.monotonic()
    try:
        out, err = process.communicate(timeout=STOPPED_WITHIN_S)
    except subprocess.TimeoutExpired:
        process.kill()
        process.communicate()
        pytest.fail(f"still running {STOPPED_WITHIN_S} s after the signal")
    assert time.monotonic() - sent < STOPPED_WITHIN_S
    assert process.returncode == status, err
    assert err.strip().splitlines() == [said]
    assert out == ""
    assert list(tmp_path.iterdir()) == []  # no output file, whole or in part
