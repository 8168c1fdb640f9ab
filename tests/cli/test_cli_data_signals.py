"""Ctrl-C and SIGTERM during `ndpkit data generate`, also twice in quick succession: the
staging directory is always removed, the command says which signal stopped it and exits
with 128 + that signal (130 or 143)."""

from __future__ import annotations

import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest
from cli_env import command_env

NDPKIT = Path(sys.executable).parent / "ndpkit"
MESSAGES = {
    signal.SIGINT: "ndpkit: interrupted (SIGINT)",
    signal.SIGTERM: "ndpkit: terminated (SIGTERM)",
}
GAP_SURELY_APART_S = 0.2
"""Signals this far apart arrive one at a time: the first is the one handled first. (At
20 ms a busy machine may leave both pending at once, as at 2 ms.)"""
SHARDS_FIRST = 300
"""Shards written before the signals come, so that removing them takes a while: the second
signal lands mid-cleanup, where it used to kill the command or stop the removal."""

pytestmark = [
    pytest.mark.skipif(sys.platform == "win32", reason="POSIX signals"),
    # Which signal is handled first depends on the command running between them: not on a
    # machine whose cores the other tests keep busy.
    pytest.mark.serial,
]


def _start(out: Path) -> subprocess.Popen[str]:
    # 4096 shards of 64 KiB: far longer than the test waits, one file every few milliseconds.
    args = ["data", "generate", "lc", "--size", "256MiB", "--devices", "1"]
    return subprocess.Popen(
        [str(NDPKIT), *args, "--shard-size", "64KiB", "--out", str(out), "-f", "json"],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        env=command_env(),
        # A child started from a shell script in the background would ignore SIGINT; the
        # test starts no threads, so preexec_fn is safe here.
        preexec_fn=lambda: signal.signal(signal.SIGINT, signal.SIG_DFL),  # noqa: PLW1509
    )


def _wait_for_shards(out: Path, process: subprocess.Popen[str]) -> None:
    pattern = f"{out.name}.tmp-*/device-00/shard-{SHARDS_FIRST:04d}.npy"
    deadline = time.monotonic() + 30
    while not list(out.parent.glob(pattern)):
        if process.poll() is not None or time.monotonic() > deadline:
            process.kill()
            pytest.fail(f"the generation never got going: {process.communicate()}")
        time.sleep(0.005)


def _stop(process: subprocess.Popen[str], signals: list[signal.Signals], gap_s: float) -> str:
    try:
        for i, signum in enumerate(signals):
            if i:
                time.sleep(gap_s)
            process.send_signal(signum)
        stdout, stderr = process.communicate(timeout=20)
    finally:
        if process.poll() is None:
            process.kill()
            process.wait()
    assert stdout == "", (process.returncode, stderr)  # output: the command ran on to the end
    return stderr


@pytest.mark.parametrize("signum", [signal.SIGINT, signal.SIGTERM])
def test_one_signal_stops_with_a_message_and_leaves_nothing(
    tmp_path: Path, signum: signal.Signals
) -> None:
    process = _start(tmp_path / "ds")
    _wait_for_shards(tmp_path / "ds", process)
    stderr = _stop(process, [signum], 0)
    assert process.returncode == 128 + signum
    assert stderr.strip().splitlines() == [MESSAGES[signum]]
    assert list(tmp_path.iterdir()) == []


@pytest.mark.parametrize(
    "signals",
    [
        [signal.SIGINT, signal.SIGINT],
        [signal.SIGTERM, signal.SIGTERM],
        [signal.SIGTERM, signal.SIGINT],
    ],
    ids=["int-int", "term-term", "term-int"],
)
def test_a_second_signal_does_not_cut_the_cleanup_short(
    tmp_path: Path, signals: list[signal.Signals]
) -> None:
    # Several gaps, since where the second signal lands decides what it would break.
    # (At 0.2 s the second may come after the command has ended: that run checks the order.)
    for run, gap_s in enumerate((0.0, 0.002, 0.02, GAP_SURELY_APART_S)):
        out = tmp_path / f"ds{run}"
        process = _start(out)
        _wait_for_shards(out, process)
        stderr = _stop(process, signals, gap_s)
        assert list(tmp_path.iterdir()) == [], gap_s  # no ds, no ds.tmp-*
        # Two different signals pending at once are delivered lowest number first (SIGINT):
        # the one the command reports stopping it is the one it got first. 2 or 20 ms apart,
        # both can still be pending at once (the command's process had no CPU between them).
        assert process.returncode in {128 + s for s in signals}, (gap_s, stderr)
        stopped_by = signal.Signals(process.returncode - 128)
        assert stopped_by == signals[0] or gap_s < GAP_SURELY_APART_S, (gap_s, stderr)
        assert stderr.strip().splitlines() == [MESSAGES[stopped_by]], gap_s
