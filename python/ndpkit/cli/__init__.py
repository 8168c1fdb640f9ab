"""The `ndpkit` command. Only this package writes to stdout/stderr or exits."""

from __future__ import annotations

import os
import sys
from collections.abc import Callable
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    import typer


def main() -> None:
    if sys.argv[1:2] == ["sort"]:
        # `ndpkit sort` is timed against DuckDB and Polars, which start in 0.1 s; the other
        # commands' imports (pint, scipy, scikit-learn…) cost half a second it never uses.
        from ndpkit.cli.sort import sort_app  # noqa: PLC0415

        code = _exit_code(lambda: sort_app(args=sys.argv[2:], prog_name="ndpkit sort"))
        # The output is written, renamed into place and closed. What is left is freeing
        # the in-memory table (gigabytes), which takes 0.1 s of a 3 s sort and serves no
        # one: leave without the interpreter's teardown.
        sys.stdout.flush()
        sys.stderr.flush()
        os._exit(code)
    from ndpkit.cli.commands import app  # noqa: PLC0415

    app()


def _exit_code(run: Callable[[], object]) -> int:
    """The status `run` exits with (Click always exits through SystemExit)."""
    try:
        run()
    except SystemExit as exc:
        if exc.code is None or isinstance(exc.code, int):
            return exc.code or 0
        sys.stderr.write(f"{exc.code}\n")
        return 1
    return 0


def __getattr__(name: str) -> typer.Typer:
    """`ndpkit.cli.app`: the whole Typer app (built in `cli.commands`), loaded on first use."""
    if name == "app":
        from ndpkit.cli.commands import app  # noqa: PLC0415

        return app
    raise AttributeError(name)
