"""A stop that lands while Python runs a finaliser is swallowed there ("Exception ignored
in …"); the command must still stop, not run on to its end and then exit 143."""

from __future__ import annotations

import subprocess
import sys

import pytest

SCRIPT = """
import signal, sys, time
from ndpkit import cli
if sys.argv[1] == "installed":
    cli._install_handlers()
else:  # the handlers alone, as before the unraisable hook
    for signum in cli._STOPPED_BY:
        signal.signal(signum, cli._on_signal)

class Finalised:
    def __del__(self):
        signal.raise_signal(signal.SIGNUM)

try:
    Finalised()
    for _ in range(200):
        time.sleep(0.005)
    print("ran to the end")
except (SystemExit, KeyboardInterrupt) as exc:
    print("stopped by", type(exc).__name__)
"""

pytestmark = pytest.mark.skipif(sys.platform == "win32", reason="POSIX signals")


def _run(mode: str, signum: str) -> str:
    result = subprocess.run(
        [sys.executable, "-c", SCRIPT.replace("SIGNUM", signum), mode],
        capture_output=True,
        text=True,
        timeout=60,
        check=True,
    )
    return result.stdout.strip()


@pytest.mark.parametrize(
    ("signum", "stopped_by"), [("SIGTERM", "Terminated"), ("SIGINT", "KeyboardInterrupt")]
)
def test_a_stop_swallowed_by_a_finaliser_is_delivered_again(signum: str, stopped_by: str) -> None:
    assert _run("bare", signum) == "ran to the end"  # what the hook is there for
    assert _run("installed", signum) == f"stopped by {stopped_by}"


ENDING = """
import signal, sys, time
from ndpkit import cli

class Finalised:
    def __del__(self):
        signal.raise_signal(signal.SIGINT)

def run():
    Finalised()  # the stop is swallowed here, and raised again a millisecond later
    end = time.perf_counter() + float(sys.argv[1])
    while time.perf_counter() < end:  # busy: a sleep would overshoot these sub-ms ends
        time.perf_counter()
    raise SystemExit(0)  # the command ends, as Click's commands do

cli._run = run
cli.main()
"""


@pytest.mark.parametrize("ending_after_s", [0.0, 0.0005, 0.00095, 0.001, 0.002, 0.01])
def test_a_command_ending_around_the_redelivery_still_reports_the_stop(
    ending_after_s: float,
) -> None:
    # Whether the command ends before, while or after the stop is raised again, it reports
    # the stop once: no traceback, no death by the redelivery's alarm.
    result = subprocess.run(
        [sys.executable, "-c", ENDING, str(ending_after_s)],
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )
    assert result.returncode == 130, result.stderr
    assert result.stderr == "ndpkit: interrupted (SIGINT)\n"
