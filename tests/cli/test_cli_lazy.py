"""`ndpkit COMMAND` imports COMMAND's module alone, and says what the whole app says."""

from __future__ import annotations

import json
import subprocess
import sys
from typing import Any

import pytest
import typer.core
import typer.main
from typer.testing import CliRunner

from ndpkit.cli.commands import COMMANDS, app, app_for
from ndpkit.cli.common import reflow, reflow_help

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
    assert run.returncode in (0, 2), run.stderr  # help and version 0, a typo 2
    return set(json.loads(run.stdout.strip().splitlines()[-1]))


@pytest.mark.parametrize("name", ["estimate", "platforms"])
def test_one_command_imports_its_module_alone(name: str) -> None:
    assert _loaded_after(name, "--help") == {COMMANDS[name][0]}


def test_version_imports_no_command_and_a_typo_gets_every_command() -> None:
    assert _loaded_after("--version") == set()
    assert _loaded_after("estimat") == set(MODULES)


def _paths(command: Any, path: list[str]) -> list[list[str]]:
    """Every command path below `command` (its subcommands', for a group)."""
    found = [path]
    for name, sub in getattr(command, "commands", {}).items():
        found += _paths(sub, [*path, name])
    return found


PATHS = [p for p in _paths(typer.main.get_command(app), []) if p]


@pytest.mark.parametrize("rich", [True, False], ids=["rich", "plain"])
@pytest.mark.parametrize("path", PATHS, ids=[" ".join(p) for p in PATHS])
def test_a_command_alone_has_the_whole_apps_help_and_errors(
    path: list[str], rich: bool, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(typer.core, "HAS_RICH", rich)
    alone = app_for([path[0]])
    for args in ([*path, "--help"], [*path, "--no-such-flag"]):
        seen = [CliRunner().invoke(a, args, terminal_width=200) for a in (alone, app)]
        assert [r.exit_code for r in seen] == [seen[1].exit_code] * 2, args
        assert seen[0].output == seen[1].output, args


def test_version_alone_is_the_whole_apps() -> None:
    seen = [CliRunner().invoke(a, ["--version"]) for a in (app_for([]), app)]
    assert [r.exit_code for r in seen] == [0, 0]
    assert seen[0].output == seen[1].output == f"ndpkit {__import__('ndpkit').__version__}\n"


def test_building_apps_again_reflows_a_groups_help_once() -> None:
    """A group's Typer app is shared by every app built: `reflow` run a second time on its
    help would drop a list item's indent."""
    once = "Summary line\ncontinued.\n\n  - item a\n  - item b"
    assert reflow(reflow(once)) != reflow(once)  # why it must run once
    group = typer.Typer()
    group.command("x")(lambda: None)
    group.registered_commands[0].help = once
    for _ in range(3):
        built = typer.Typer()
        built.add_typer(group, name="g")
        reflow_help(built)
    assert group.registered_commands[0].help == reflow(once)


def test_the_lazy_app_is_among_the_modules_names() -> None:
    """`typer ndpkit.cli.commands utils docs` finds the app by `dir()`, in a process that
    has not built it yet (this one has: `app` is then a plain global)."""
    script = "import ndpkit.cli.commands as m; print('app' in dir(m))"
    run = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, check=True)
    assert run.stdout == "True\n"
