"""Output that cannot be written: a full disk behind `> out.json` is one error line and
status 2; a reader that went away (`| head`) ends the command quietly with status 141."""

from __future__ import annotations

import fcntl
import os
import subprocess
from pathlib import Path

import pytest
from cli_env import NDPKIT, command_env

ENV = command_env(COLUMNS="200")  # this checkout's code, under a worktree's PYTHONPATH
COMMANDS = [
    ("platforms", "show", "rans"),
    ("platforms", "show", "rans", "-f", "json"),
    ("platforms", "show", "rans", "-f", "csv"),
    ("platforms", "check", "rans"),
    ("plan", "-p", "rans", "-a", "he", "-f", "json"),
    ("reproduce", "rans-rfns", "--tables", "9"),
]
needs_dev_full = pytest.mark.skipif(not Path("/dev/full").exists(), reason="no /dev/full")


def run_into(stdout: int, args: tuple[str, ...]) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [str(NDPKIT), *args],
        stdout=stdout,
        stderr=subprocess.PIPE,
        text=True,
        timeout=120,
        env=ENV,
        check=False,
    )


@needs_dev_full
@pytest.mark.parametrize("args", COMMANDS)
def test_a_full_disk_is_one_line_and_exit_2(args: tuple[str, ...]) -> None:
    with open("/dev/full", "wb") as full:
        result = run_into(full.fileno(), args)
    assert_ends_with_the_error(result)


@pytest.mark.parametrize("args", COMMANDS)
def test_a_reader_that_went_away_ends_quietly_with_141(args: tuple[str, ...]) -> None:
    read_end, write_end = os.pipe()
    os.close(read_end)  # closed before the command writes: every write fails with EPIPE
    try:
        result = run_into(write_end, args)
    finally:
        os.close(write_end)
    assert result.returncode == 141, result.stderr
    # progress lines (reproduce's) may be there; no error, traceback or "Exception ignored"
    assert "error" not in result.stderr and "Exception" not in result.stderr, result.stderr


@pytest.mark.skipif(not hasattr(fcntl, "F_SETPIPE_SZ"), reason="pipe size is Linux's")
@pytest.mark.parametrize("output", ["json", "csv"])
def test_unbuffered_a_reader_that_goes_away_mid_write_ends_with_141(output: str) -> None:
    """Under PYTHONUNBUFFERED=1 stdout's text layer wrote straight to the file and dropped
    what a short write left: a reader that went away after the first byte ended the
    command with status 0."""
    read_end, write_end = os.pipe()
    fcntl.fcntl(write_end, fcntl.F_SETPIPE_SZ, 4096)  # the output (7-18 KB) does not fit
    args = ("plan", "-p", "rfns", "-a", "knn2", "--optimal", "-f", output)
    with subprocess.Popen(
        [str(NDPKIT), *args],
        stdout=write_end,
        stderr=subprocess.PIPE,
        text=True,
        env={**ENV, "PYTHONUNBUFFERED": "1"},
    ) as command:
        os.close(write_end)
        os.read(read_end, 1)  # returns once the command is in its write, which the pipe cuts
        os.close(read_end)
        _, stderr = command.communicate(timeout=120)
    assert command.returncode == 141, stderr
    assert "error" not in stderr and "Exception" not in stderr, stderr


@needs_dev_full
def test_evaluate_runs_its_apps_then_says_the_output_could_not_be_written() -> None:
    with open("/dev/full", "wb") as full:
        result = run_into(full.fileno(), ("evaluate", "lc", "--size", "1MiB", "--platforms", "cns"))
    assert_ends_with_the_error(result)


def assert_ends_with_the_error(result: subprocess.CompletedProcess[str]) -> None:
    """Exit 2, no traceback, and the error as the last line on stderr (after any progress
    lines: a command's progress is on stderr and stays)."""
    assert result.returncode == 2, result.stderr
    assert "Traceback" not in result.stderr and "Exception ignored" not in result.stderr
    lines = result.stderr.strip().splitlines()
    assert lines[-1] == "error: stdout: cannot write the output (No space left on device)"
    assert sum(line.startswith("error:") for line in lines) == 1


def test_a_closed_stdout_is_one_error_line_not_a_traceback() -> None:
    """Started as `ndpkit … >&-`, Python has no sys.stdout at all."""
    result = subprocess.run(
        ["sh", "-c", f"'{NDPKIT}' platforms list >&-"],
        capture_output=False,
        stderr=subprocess.PIPE,
        text=True,
        check=False,
    )
    assert result.returncode == 2
    assert result.stderr == "error: stdout is closed: there is nowhere to write the output\n"


@pytest.mark.parametrize(
    "args",
    [
        ("sort", "", "--by", "k", "--out", "x.parquet"),
        ("sort", "t.parquet", "--by", "k", "--out", ""),
        ("data", "import", "", "--app", "lc", "--out", "out"),
        ("data", "show", ""),
        ("evaluate", "--data", ""),
        ("estimate", "-p", "rans", "-a", "lc", "--profiles", ""),
    ],
)
def test_an_empty_path_is_refused_not_read_as_the_current_directory(
    args: tuple[str, ...], tmp_path: Path
) -> None:
    result = subprocess.run(
        [str(NDPKIT), *args], capture_output=True, text=True, check=False, cwd=tmp_path
    )
    assert result.returncode == 2, result.stdout + result.stderr
    assert "is empty; give a path" in result.stderr
    assert list(tmp_path.iterdir()) == []
