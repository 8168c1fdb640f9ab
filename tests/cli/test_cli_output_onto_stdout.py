"""An output file that is the command's own stdout or stderr (`--trace /dev/stdout`, or
the file stdout was sent to) is refused before the run, naming the flag. Through the
symbolic link, the rename into place replaced the file stdout was sent to (the tables
printed there were lost), and with stdout a pipe it failed with "cannot write in
'/proc/PID/fd'"."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest
from cli_env import command_env

NDPKIT = Path(sys.executable).parent / "ndpkit"

SIMULATE = ("simulate", "-p", "rfns", "-a", "he")


def _run(args: tuple[str, ...], stdout: int | object) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [str(NDPKIT), *SIMULATE, *args],
        stdout=stdout,  # type: ignore[arg-type]
        stderr=subprocess.PIPE,
        text=True,
        env=command_env(),
        timeout=120,
        check=False,
    )


@pytest.mark.parametrize("to", ["pipe", "file"])
def test_trace_onto_dev_stdout_is_refused(to: str, tmp_path: Path) -> None:
    out = tmp_path / "out.txt"
    with out.open("w") as sink:
        result = _run(("--trace", "/dev/stdout"), subprocess.PIPE if to == "pipe" else sink)
    assert result.returncode == 2, result.stderr
    assert result.stderr.startswith(
        "error: command line: --trace /dev/stdout: cannot write: this is the command's "
        "standard output"
    ), result.stderr
    assert out.read_text() == ""  # the file stdout was sent to: nothing written or replaced


def test_trace_onto_the_file_stdout_was_sent_to_is_refused(tmp_path: Path) -> None:
    out = tmp_path / "out.txt"
    with out.open("w") as sink:
        result = _run(("--trace", str(out)), sink)
    assert result.returncode == 2, result.stderr
    assert "standard output" in result.stderr


def test_trace_beside_stdout_is_written(tmp_path: Path) -> None:
    out, trace = tmp_path / "out.txt", tmp_path / "trace.json"
    with out.open("w") as sink:
        result = _run(("--trace", str(trace)), sink)
    assert result.returncode == 0, result.stderr
    assert trace.stat().st_size > 0 and out.read_text().startswith("Simulation — he on rfns")
