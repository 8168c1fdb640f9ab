"""The `ndpkit` command. Only this package writes to stdout/stderr or exits."""

from __future__ import annotations

import sys
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    import typer


def main() -> None:
    if sys.argv[1:2] == ["sort"]:
        # `ndpkit sort` is timed against DuckDB and Polars, which start in 0.1 s; the other
        # commands' imports (pint, scipy, scikit-learn…) cost half a second it never uses.
        from ndpkit.cli.sort import sort_app  # noqa: PLC0415

        sort_app(args=sys.argv[2:], prog_name="ndpkit sort")
        return
    from ndpkit.cli.commands import app  # noqa: PLC0415

    app()


def __getattr__(name: str) -> typer.Typer:
    """`ndpkit.cli.app`: the whole Typer app (built in `cli.commands`), loaded on first use."""
    if name == "app":
        from ndpkit.cli.commands import app  # noqa: PLC0415

        return app
    raise AttributeError(name)
