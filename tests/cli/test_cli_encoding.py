"""The command's output on a stream whose encoding lacks some of its characters."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

NDPKIT = Path(sys.executable).parent / "ndpkit"


def run(env: dict[str, str], *args: str) -> subprocess.CompletedProcess[bytes]:
    return subprocess.run(
        [str(NDPKIT), *args],
        capture_output=True,
        timeout=120,
        env={"NO_COLOR": "1", "COLUMNS": "200", "PATH": "/usr/bin:/bin", **env},
        check=False,
    )


@pytest.mark.parametrize(
    "env",
    [
        {"PYTHONIOENCODING": "ascii"},
        {"PYTHONIOENCODING": "latin-1"},
        {"LC_ALL": "C", "PYTHONUTF8": "0"},
    ],
)
def test_tables_escape_what_the_encoding_lacks(env: dict[str, str]) -> None:
    """`estimate` prints an em dash and `platforms list` an en dash in their tables: written
    as \\u escapes, exit 0, where they used to end in a UnicodeEncodeError traceback."""
    for args in (("estimate", "-p", "rans", "-a", "lc"), ("platforms", "list")):
        result = run(env, *args)
        assert result.returncode == 0, result.stderr.decode(errors="replace")[-600:]
        assert b"Traceback" not in result.stderr
        assert b"\\u20" in result.stdout  # an escaped dash
        result.stdout.decode("ascii")  # nothing but ASCII on the wire
    error = run(env, "estimate", "-p", "nope", "-a", "lc")
    expected = b"error: command line: --platform: unknown platform 'nope'"
    assert error.returncode == 2 and error.stderr.startswith(expected)


def test_utf8_output_is_left_as_it_is() -> None:
    result = run({"PYTHONIOENCODING": "utf-8"}, "estimate", "-p", "rans", "-a", "lc")
    assert result.returncode == 0
    assert "—".encode() in result.stdout and b"\\u2014" not in result.stdout


@pytest.mark.parametrize(
    ("encoding", "errors"),
    [
        ("utf-8", "strict"),
        ("utf-8:surrogateescape", "surrogateescape"),
        ("ascii", "backslashreplace"),
        ("latin-1:replace", "replace"),
    ],
)
def test_only_streams_that_can_fail_are_told_to_escape(encoding: str, errors: str) -> None:
    """A UTF-8 stream keeps its handler (surrogate-escaped file names still come out as the
    bytes they were), as does one already told what to do; the rest escape."""
    code = (
        "import sys; from ndpkit.cli import _escape_what_cannot_be_encoded as e; e(); "
        "print(sys.stdout.errors, sys.stderr.errors)"
    )
    done = subprocess.run(
        [sys.executable, "-c", code],
        capture_output=True,
        text=True,
        env={"PYTHONIOENCODING": encoding, "PATH": "/usr/bin:/bin"},
        check=True,
    )
    assert done.stdout.split()[0] == errors
