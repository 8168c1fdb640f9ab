"""The `ndpkit` command. Only this package writes to stdout/stderr or exits.

SIGTERM (`kill`, a job scheduler, `timeout`) stops a command the way Ctrl-C does: every
writer's cleanup runs, so no temporary directory or half-written file is left behind. The
command then exits with status 143 (128 + SIGTERM, what a shell reports for a process the
signal killed), unlike an input error's 2. A second SIGTERM during the cleanup kills at once.
"""

from __future__ import annotations

import os
import signal
import sys
from collections.abc import Callable
from types import FrameType
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    import typer

EXIT_TERMINATED = 128 + signal.SIGTERM


class Terminated(SystemExit):
    """Raised in the main thread by SIGTERM. A SystemExit, so that it passes every `except
    Exception` (nothing swallows it) while the `finally:` and `except BaseException:` cleanups
    that Ctrl-C's KeyboardInterrupt runs all run, and the interpreter exits with its code."""

    def __init__(self) -> None:
        super().__init__(EXIT_TERMINATED)


def _on_sigterm(signum: int, frame: FrameType | None) -> None:
    signal.signal(signal.SIGTERM, signal.SIG_DFL)  # a second SIGTERM is not held up by cleanup
    raise Terminated


def main() -> None:
    signal.signal(signal.SIGTERM, _on_sigterm)
    try:
        _run()
    except Terminated:
        sys.stderr.write("ndpkit: terminated (SIGTERM)\n")
        sys.stderr.flush()
        raise


def _run() -> None:
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
    """The status `run` exits with (Click always exits through SystemExit); SIGTERM's
    `Terminated` goes on to `main`."""
    try:
        run()
    except Terminated:
        raise
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
