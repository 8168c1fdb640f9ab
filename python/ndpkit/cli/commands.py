"""The whole `ndpkit` command: every subcommand registered on one Typer app."""

from __future__ import annotations

from typing import Annotated

import typer

from ndpkit import __version__
from ndpkit.cli import data, platforms
from ndpkit.cli.common import reflow_help
from ndpkit.cli.evaluate import evaluate_cmd
from ndpkit.cli.model import estimate_cmd, plan_cmd
from ndpkit.cli.reproduce import reproduce_cmd
from ndpkit.cli.simulate import simulate_app, sweep_cmd
from ndpkit.cli.sort import sort_cmd

app = typer.Typer(
    name="ndpkit",
    help="Run, model and plan near-data processing: engines beside storage instead of the host.",
    no_args_is_help=True,
    pretty_exceptions_enable=False,
    add_completion=False,
    context_settings={"help_option_names": ["-h", "--help"]},
)
app.add_typer(platforms.app, name="platforms")
app.add_typer(data.app, name="data")
app.command("estimate")(estimate_cmd)
app.command("plan")(plan_cmd)
app.command("reproduce")(reproduce_cmd)
app.command("evaluate")(evaluate_cmd)
app.add_typer(simulate_app, name="simulate")
app.command("sweep")(sweep_cmd)
app.command("sort")(sort_cmd)


def _version(value: bool) -> None:
    if value:
        typer.echo(f"ndpkit {__version__}")
        raise typer.Exit()


@app.callback()
def _root(
    version: Annotated[
        bool,
        typer.Option(
            "--version", callback=_version, is_eager=True, help="Print the version and exit."
        ),
    ] = False,
) -> None:
    """ndpkit: run, model and plan near-data processing (NDP)."""


reflow_help(app)
