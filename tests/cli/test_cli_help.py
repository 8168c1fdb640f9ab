"""Help text: each command's summary is one sentence on one line, and paragraphs reflow."""

from __future__ import annotations

import re
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
import typer.main
from typer.testing import CliRunner

from ndpkit.cli.commands import app
from ndpkit.cli.common import reflow
from ndpkit.cli.sort import sort_app
from ndpkit.hw import load_platform, preset_names


def _commands(command: Any, path: str) -> list[tuple[str, Any]]:
    found = [(path, command)]
    for name, sub in getattr(command, "commands", {}).items():
        found += _commands(sub, f"{path} {name}")
    return found


COMMANDS = _commands(typer.main.get_command(app), "ndpkit")


@pytest.mark.parametrize(("path", "command"), COMMANDS, ids=[p for p, _ in COMMANDS])
def test_every_command_has_a_one_line_summary(path: str, command: Any) -> None:
    summary = (command.help or "").split("\n\n")[0]
    assert summary, f"{path} has no help"
    assert "\n" not in summary
    assert len(summary) <= 100, f"{path}'s summary is {len(summary)} characters"


@pytest.mark.parametrize(("path", "command"), COMMANDS, ids=[p for p, _ in COMMANDS])
def test_no_paragraph_keeps_a_source_line_break(path: str, command: Any) -> None:
    for paragraph in (command.help or "").split("\n\n"):
        for line in paragraph.splitlines()[1:]:
            assert line.lstrip().startswith(("- ", "* ")), (path, paragraph)


def test_reflow_joins_lines_and_keeps_list_items_and_paragraphs() -> None:
    text = """First line
    goes on.

    Second paragraph:
    - one item
      continued
    - two"""
    assert reflow(text) == "First line goes on.\n\nSecond paragraph:\n- one item continued\n- two"


def test_sort_alone_shows_the_same_reflowed_help() -> None:
    alone = CliRunner().invoke(sort_app, ["--help"], terminal_width=200)
    assert alone.exit_code == 0
    assert "Row for row what DuckDB's `ORDER BY COL` gives, with ties in their original" in (
        alone.output
    )


def test_reflow_keeps_a_no_rewrap_paragraph_as_it_is() -> None:
    text = "Summary.\n\n\b\nline one\n  indented two"
    assert reflow(text) == text


def _help(ndpkit_path: str, columns: int, *args: str, **env: str) -> str:
    result = subprocess.run(
        [ndpkit_path, *args, "--help"],
        capture_output=True,
        text=True,
        env={"PATH": "/usr/bin:/bin", "COLUMNS": str(columns), "NO_COLOR": "1", **env},
        timeout=120,
        check=False,
    )
    assert result.returncode == 0, result.stderr
    return result.stdout


def _ndpkit() -> str:
    return str(Path(sys.executable).parent / "ndpkit")


def test_help_in_a_narrow_terminal_is_plain_and_readable() -> None:
    """At 80 columns rich's option table left its help column ~18 characters wide; Click's
    plain layout gives options their help on the same line, and the command list keeps
    whole summaries (Click would cut the ones it makes)."""
    options = _help(_ndpkit(), 80, "sweep")
    assert "╭" not in options
    assert "  --apps <str>                    Comma-separated apps.  [default: he,knn8]" in options
    assert all(len(line) <= 80 for line in options.splitlines())
    commands = _help(_ndpkit(), 80)
    assert "..." not in commands.split("Commands:")[1]
    assert "  estimate   Predict time, bottleneck stage and energy of one application on\n" in (
        commands
    )


def test_help_in_a_wide_terminal_or_when_asked_is_rich() -> None:
    assert "╭─ Options" in _help(_ndpkit(), 120, "sweep")
    assert "╭─ Options" in _help(_ndpkit(), 80, "sweep", TYPER_USE_RICH="1")
    summary = (
        "estimate   Predict time, bottleneck stage and energy of one application on one platform."
    )
    assert summary in _help(_ndpkit(), 120)


_USAGE_NAME = re.compile(r"[{\[]([^}\]]+)[}\]]")
"""A name on a usage line: `{NAME}` (required) or `[NAME]` (optional), as typer writes them."""


def _usage_line(runner: CliRunner, command: Any, args: list[str]) -> str:
    result = runner.invoke(command, [*args, "--help"], terminal_width=200)
    assert result.exit_code == 0, result.output
    lines = [line.strip() for line in result.output.splitlines() if "Usage:" in line]
    assert len(lines) == 1, result.output
    return lines[0]


@pytest.mark.parametrize(("path", "command"), COMMANDS, ids=[p for p, _ in COMMANDS])
def test_usage_lines_name_arguments_in_upper_case(path: str, command: Any) -> None:
    """typer writes a required argument as `{name}`, the parameter's own name where no
    metavar is set: `ndpkit sort [OPTIONS] {source}` beside `data show [OPTIONS] {DIR}`. Every
    argument is named as the docs and the error messages name it (SOURCE, APPS, NAME)."""
    usage = _usage_line(CliRunner(), app, path.split()[1:])
    names = _USAGE_NAME.findall(usage)
    arguments = [p for p in command.params if p.param_type_name == "argument"]
    assert len(names) == 1 + len(arguments) + ("COMMAND" in usage), usage  # [OPTIONS] [ARGS]
    for name in names:
        assert name == name.upper(), f"{path}: {usage}"


def test_sort_alone_names_its_argument_in_upper_case() -> None:
    """`ndpkit sort` runs its own app (cli/__init__.py): the same usage line."""
    assert _usage_line(CliRunner(), sort_app, []).endswith("[OPTIONS] {SOURCE}")


@pytest.mark.parametrize("command", ["simulate", "sweep"])
def test_the_simulators_help_offers_only_what_it_simulates(command: str) -> None:
    """`simulate --help` offered estimate's choices: the RISP presets (which it refuses as
    in-storage), RISP's apps, and a profile default for in-storage platforms."""
    params = {p.name: p.help or "" for p in typer.main.get_command(app).commands[command].params}
    offered = params.get("platform", "").split(";")[0]
    for name in preset_names() if "platform" in params else []:
        simulated = not load_platform(name).is_in_storage
        assert (re.search(rf"\b{re.escape(name)}\b", offered) is not None) == simulated, name
    assert all(app_name not in params.get("app", "") for app_name in ("kmeans", "sobel"))
    assert "in-storage" not in params["profiles"]
