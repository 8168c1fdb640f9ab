"""`ndpkit COMMAND` imports COMMAND's module alone, and says what the whole app says."""

from __future__ import annotations

import json
import subprocess
import sys

import pytest
from typer.testing import CliRunner

from ndpkit.cli.commands import COMMANDS, app, app_for

MODULES = sorted({module for module, _, _ in COMMANDS.values()})


def _loaded_after(*argv: str) -> set[str]:
    """The command modules `ndpkit ARGV` has imported by the time it exits."""
    script = (
        "import sys, atexit, json\n"
        f"sys.argv = ['ndpkit', *{list(argv)!r}]\n"
        f"names = {MODULES!r}\n"
        "atexit.register(lambda: print(json.dumps([m for m in names if m in sys.modules])))\n"
        "from ndpkit.cli import main\n"
        "main()\n"
    )
    run = subprocess.run(
        [sys.executable, "-c", script], capture_output=True, text=True, check=False
    )
    return set(json.loads(run.stdout.strip().splitlines()[-1]))


@pytest.mark.parametrize("name", ["estimate", "platforms"])
def test_one_command_imports_its_module_alone(name: str) -> None:
    assert _loaded_after(name, "--help") == {COMMANDS[name][0]}


def test_version_imports_no_command_and_a_typo_gets_every_command() -> None:
    assert _loaded_after("--version") == set()
    assert _loaded_after("estimat") == set(MODULES)


@pytest.mark.parametrize("name", list(COMMANDS))
def test_a_command_alone_has_the_whole_apps_help_and_errors(name: str) -> None:
    alone = app_for([name])
    for args in ([name, "--help"], [name, "--no-such-flag"]):
        seen = [CliRunner().invoke(a, args, terminal_width=200) for a in (alone, app)]
        assert [r.exit_code for r in seen] == [seen[1].exit_code] * 2, args
        assert seen[0].output == seen[1].output, args
