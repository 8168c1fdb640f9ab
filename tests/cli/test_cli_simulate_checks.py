"""`ndpkit simulate` and `ndpkit sweep` input checks, run in-process through typer's CliRunner
(so that they test this checkout's code, not the installed command's): what is refused
exits 2 with one `error:` line naming the flag and writes nothing."""

from __future__ import annotations

import json
from typing import Any

import pytest
from typer.testing import CliRunner

from ndpkit.cli.commands import app

runner = CliRunner()


def _run(*args: str) -> Any:
    return runner.invoke(app, list(args), terminal_width=200)


def _error(*args: str) -> str:
    """The one `error: …` line of a refused run."""
    result = _run(*args)
    assert result.exit_code == 2, (result.stdout, result.stderr)
    assert result.stdout == ""
    lines = result.stderr.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("error: "), result.stderr
    return str(lines[0])


NASCENT2 = ("simulate", "nascent2", "--devices", "1", "--read-only-cpu")


@pytest.mark.parametrize(
    ("table", "sf", "hint"),
    [
        # 0.6 of a row was rounded up to one row and run as "SF 1e-07, 1 rows".
        ("lineitem", "1e-7", "SF 1.7e-07 gives one"),
        ("lineitem", "8.4e-8", "SF 1.7e-07 gives one"),
        # 1/30,000 is 3.33e-05: a hint of 3.3e-05 would itself be refused.
        ("order_line", "3.3e-5", "SF 3.4e-05 gives one"),
    ],
)
def test_an_sf_below_one_row_is_refused_and_the_hint_runs(table: str, sf: str, hint: str) -> None:
    line = _error(*NASCENT2, "--table", table, "--sf", sf)
    assert line.startswith(f"error: command line: --sf: SF {float(sf):g} gives no")
    assert line.endswith(f"({hint})")
    least = hint.split()[1]
    result = _run(*NASCENT2, "--table", table, "--sf", least, "--format", "json")
    assert result.exit_code == 0, result.stderr
    assert json.loads(result.stdout)["nascent2_simulation"]["rows_per_ssd"] >= 1
