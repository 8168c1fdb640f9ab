"""Run the installed `ndpkit` command as a user would (the `ndpkit` fixture, for every test
directory)."""

import subprocess
import sys
from collections.abc import Callable
from pathlib import Path

import pytest

NDPKIT = Path(sys.executable).parent / "ndpkit"


@pytest.fixture
def ndpkit() -> Callable[..., subprocess.CompletedProcess[str]]:
    def run(*args: str) -> subprocess.CompletedProcess[str]:
        return subprocess.run(
            [str(NDPKIT), *args],
            capture_output=True,
            text=True,
            timeout=120,
            env={"NO_COLOR": "1", "COLUMNS": "200", "PATH": "/usr/bin:/bin"},
            check=False,
        )

    return run
