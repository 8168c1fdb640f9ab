"""What a failed `ndpkit` run must look like, shared by the CLI tests."""

from __future__ import annotations

import subprocess


def one_error_line(result: subprocess.CompletedProcess[str]) -> str:
    """The one `error: …` line of a run that exited 2 without a traceback."""
    assert result.returncode == 2, (result.stdout, result.stderr)
    assert "Traceback" not in result.stderr
    lines = result.stderr.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("error: "), result.stderr
    return str(lines[0])
