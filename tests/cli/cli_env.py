"""The environment the tests run the `ndpkit` command in."""

from __future__ import annotations

import os
import sys
from pathlib import Path

NDPKIT = Path(sys.executable).parent / "ndpkit"
"""The installed command (as tests/conftest.py's `ndpkit` fixture runs it). Imported from
here, not from `conftest`: that name is whichever directory's conftest was imported first
(tests/runtime's, when a run collected it before tests/cli)."""


def command_env(**extra: str) -> dict[str, str]:
    """No colour, a plain PATH, and this run's PYTHONPATH if it has one: a check of another
    checkout (a git worktree) then runs that checkout's code, not the installed one's."""
    env = {"NO_COLOR": "1", "PATH": "/usr/bin:/bin", **extra}
    if "PYTHONPATH" in os.environ:
        env["PYTHONPATH"] = os.environ["PYTHONPATH"]
    return env
