"""The whole `ndpkit` command: every subcommand registered on one Typer app.

Each command's module imports its own layer (pint and the platforms, the simulator, the
runtime, Polars): 0.4 s apiece, 0.7 s for all of them. `ndpkit COMMAND …` therefore builds
an app holding only COMMAND (`app_for`); its help, usage and errors are the same as in the
whole app, which `ndpkit --help` and a mistyped command get."""

from __future__ import annotations

import importlib
from typing import Annotated, Any

import typer

from ndpkit import __version__
from ndpkit.cli.common import reflow_help

COMMANDS: dict[str, tuple[str, str, bool]] = {
    "platforms": ("ndpkit.cli.platforms", "app", True),
    "data": ("ndpkit.cli.data", "app", True),
    "estimate": ("ndpkit.cli.model", "estimate_cmd", False),
    "plan": ("ndpkit.cli.model", "plan_cmd", False),
    "reproduce": ("ndpkit.cli.reproduce", "reproduce_cmd", False),
    "evaluate": ("ndpkit.cli.evaluate", "evaluate_cmd", False),
    "simulate": ("ndpkit.cli.simulate", "simulate_app", True),
    "sweep": ("ndpkit.cli.simulate", "sweep_cmd", False),
    "sort": ("ndpkit.cli.sort", "sort_cmd", False),
}
"""Each command's name: (module, attribute, whether it is a group), in registration order
(`--help` lists the commands, then the groups, each in this order)."""


_HELP = "Run, model and plan near-data processing: engines beside storage instead of the host."


def app_for(names: list[str]) -> typer.Typer:
    """The `ndpkit` app with the commands `names` (in COMMANDS' order) and the root options."""
    new = typer.Typer(
        name="ndpkit",
        help=_HELP,
        no_args_is_help=True,
        pretty_exceptions_enable=False,
        add_completion=False,
        context_settings={"help_option_names": ["-h", "--help"]},
    )
    for name, (module, attribute, group) in COMMANDS.items():
        if name not in names:
            continue
        found: Any = getattr(importlib.import_module(module), attribute)
        if group:
            new.add_typer(found, name=name)
        else:
            new.command(name)(found)
    new.callback()(_root)
    return reflow_help(new)


def _version(value: bool) -> None:
    if value:
        typer.echo(f"ndpkit {__version__}")
        raise typer.Exit()


def _root(
    version: Annotated[
        bool,
        typer.Option(
            "--version", callback=_version, is_eager=True, help="Print the version and exit."
        ),
    ] = False,
) -> None:
    """ndpkit: run, model and plan near-data processing (NDP)."""


def __dir__() -> list[str]:
    """`app` among the names: `typer MODULE` finds an app by `dir()`."""
    return sorted({*globals(), "app"})


def __getattr__(name: str) -> typer.Typer:
    """`app`: the whole app, every command imported, built on first use."""
    if name == "app":
        whole = app_for(list(COMMANDS))
        globals()["app"] = whole
        return whole
    raise AttributeError(name)
