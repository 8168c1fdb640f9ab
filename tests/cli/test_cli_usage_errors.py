"""Usage errors Click finds in the flags (an unknown option or command, a missing argument or
value, a value of the wrong type or not among the choices) are printed as every other error
of the command line: one `error: command line: …` line naming what was wrong, then one line
saying where help is, status 2. They were Click's four-line block (usage, hint, blank line,
`Error: …`). And help or the version written where it cannot go ends as other output does."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path
from typing import IO

import pytest
from cli_env import NDPKIT, command_env

ENV = command_env(COLUMNS="80")
WIDE = command_env(COLUMNS="200")  # rich's boxed layout, in which Click's error was a panel

CASES = [
    # (arguments, the command whose help the hint names, what the error line must name)
    (("estimate", "--bogus"), "estimate", "--bogus"),
    (("estimate", "-f", "xml"), "estimate", "'--format' / '-f'"),
    (("evaluate", "--seed", "1.5"), "evaluate", "--seed"),
    (("platforms", "show"), "platforms show", "'NAME'"),
    (("platforms", "show", "rans", "extra"), "platforms show", "extra"),
    (("platforms", "bogus"), "platforms", "'bogus'"),
    (("bogus",), "", "'bogus'"),
    (("data", "generate", "lc", "--size"), "data generate", "'--size'"),
    (("data", "import", "x.npy", "--devices", "2", "--out", "o"), "data import", "'--app'"),
    (("sort",), "sort", "'SOURCE'"),  # `ndpkit sort` runs its own app (cli/__init__.py)
    (("sort", "x.parquet", "--by"), "sort", "'--by'"),
]


def _run(
    args: tuple[str, ...],
    env: dict[str, str],
    stdout: int | IO[bytes] = subprocess.PIPE,
    command: tuple[str, ...] = (str(NDPKIT),),
) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [*command, *args],
        stdout=stdout,
        stderr=subprocess.PIPE,
        text=True,
        timeout=120,
        env=env,
        check=False,
    )


@pytest.mark.parametrize(("args", "command", "named"), CASES, ids=[" ".join(c[0]) for c in CASES])
@pytest.mark.parametrize("env", [ENV, WIDE], ids=["plain", "rich"])
def test_a_usage_error_is_one_error_line_and_a_hint(
    args: tuple[str, ...], command: str, named: str, env: dict[str, str]
) -> None:
    result = _run(args, env)
    assert result.returncode == 2, result.stderr
    assert result.stdout == ""
    lines = result.stderr.splitlines()
    assert len(lines) == 2, result.stderr
    error, hint = lines
    assert error.startswith("error: command line: "), error
    assert named in error, error
    assert "Value error" not in error  # pydantic's prefix on a value not among the choices
    assert hint == f"Try '{' '.join(['ndpkit', *command.split()])} -h' for help."


def test_a_mistyped_option_gets_the_close_ones() -> None:
    error = _run(("estimate", "--platfrom", "rans"), ENV).stderr.splitlines()[0]
    assert "--platfrom" in error and "--platform" in error, error


@pytest.mark.parametrize("args", [("--help",), ("platforms", "-h"), ("--version",), ("sort", "-h")])
def test_help_to_a_reader_that_went_away_ends_quietly_with_141(args: tuple[str, ...]) -> None:
    """As any other output does (tests/cli/test_cli_stdout.py); Typer said 1."""
    read_end, write_end = os.pipe()
    os.close(read_end)  # closed before the command writes: every write fails with EPIPE
    try:
        result = _run(args, ENV, stdout=write_end)
    finally:
        os.close(write_end)
    assert result.returncode == 141, result.stderr
    assert result.stderr == ""


@pytest.mark.skipif(not Path("/dev/full").exists(), reason="no /dev/full")
@pytest.mark.parametrize(
    ("args", "env"),
    [
        *[(args, ENV) for args in [("--help",), ("--version",), ("sort", "-h")]],
        # rich's help (a wide terminal) is printed by rich's console, not Click's echo;
        # a group alone prints it to stdout (plain, the help of `data` alone is on stderr)
        *[(args, WIDE) for args in [("--help",), ("evaluate", "-h"), ("sort", "-h"), ("data",)]],
    ],
    ids=[
        "--help",
        "--version",
        "sort -h",
        "rich --help",
        "rich evaluate -h",
        "rich sort -h",
        "rich data",
    ],
)
def test_help_to_a_full_disk_is_one_error_line_and_exit_2(
    args: tuple[str, ...], env: dict[str, str]
) -> None:
    """It was a traceback and status 120."""
    with open("/dev/full", "wb") as full:
        result = _run(args, env, stdout=full)
    assert result.returncode == 2, result.stderr
    assert result.stderr.splitlines() == [
        "error: stdout: cannot write the output (No space left on device)"
    ]


@pytest.mark.parametrize(
    "args", [("evaluate", "-f"), ("evaluate", "--bogus"), ("sort", "--bogus"), ("sort", "-f")]
)
def test_the_hint_names_the_command_as_it_was_run(args: tuple[str, ...]) -> None:
    """`python -m ndpkit`: the hint for an option's missing value (raised without the
    command) named `ndpkit evaluate`, beside `python -m ndpkit evaluate` for the others;
    `sort`, a separate app, named itself `ndpkit sort` for every error."""
    result = _run(args, ENV, command=(sys.executable, "-m", "ndpkit"))
    assert result.returncode == 2, result.stderr
    assert result.stderr.splitlines()[1:] == [f"Try 'python -m ndpkit {args[0]} -h' for help."]
