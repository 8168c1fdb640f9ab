"""The `ndpkit` command. Only this package writes to stdout/stderr or exits.

SIGTERM (`kill`, a job scheduler, `timeout`) stops a command the way Ctrl-C (SIGINT) does:
every writer's cleanup runs, so no temporary directory or half-written file is left behind.
The command then prints `ndpkit: terminated (SIGTERM)` or `ndpkit: interrupted (SIGINT)` and
exits with status 143 or 130 (128 + the signal, what a shell reports for a process the signal
killed), unlike an input error's 2. SIGHUP (the terminal closed) stops it the same way, with
status 129, unless it was started ignoring SIGHUP (`nohup`), which it then keeps doing. A
second signal does not cut the cleanups short: it is ignored while they run. A third kills
the command at once, for a cleanup that hangs; it may then leave a temporary file or
directory behind. A signal once the command has its outcome (while the interpreter shuts
down) changes nothing it wrote and, short of the third (which still kills it) or one in
Python's last teardown (where its default action is back), not its status either. Worker
processes ignore Ctrl-C (the terminal sends it to them too): the command stops them.
"""

from __future__ import annotations

import codecs
import contextlib
import importlib
import io
import os
import shutil
import signal
import sys
from collections.abc import Callable
from types import FrameType
from typing import TYPE_CHECKING, Any, NoReturn

from ndpkit.files import count_held_signals, leave_ctrl_c_to_the_parent

if TYPE_CHECKING:
    import typer

EXIT_TERMINATED = 128 + signal.SIGTERM
EXIT_INTERRUPTED = 128 + signal.SIGINT
_STOPPED_BY = {signal.SIGTERM: "terminated (SIGTERM)", signal.SIGINT: "interrupted (SIGINT)"}
_SIGHUP = getattr(signal, "SIGHUP", None)
if _SIGHUP is not None:  # POSIX: a closed terminal left a data set's staging behind
    _STOPPED_BY[_SIGHUP] = "hung up (SIGHUP)"
FORCE_AFTER = 3
"""The signal that kills at once, without cleanup: the third (Ctrl-C, SIGTERM or SIGHUP)."""
_received: list[int] = []
"""The signals received, first one first: the first stops the command."""
_ended: list[bool] = []
"""Non-empty once `main` has its outcome: a signal then only counts toward FORCE_AFTER (a
hung shutdown can still be killed); the command's output and status stand."""


class Terminated(SystemExit):
    """Raised in the main thread by SIGTERM. A SystemExit, so that it passes every `except
    Exception` (nothing swallows it) while the `finally:` and `except BaseException:` cleanups
    that Ctrl-C's KeyboardInterrupt runs all run, and the interpreter exits with its code."""

    def __init__(self) -> None:
        super().__init__(EXIT_TERMINATED)


def _on_signal(signum: int, frame: FrameType | None) -> None:
    # Decided before the append: a second signal's handler can run inside this one (Python
    # checks for signals between any two bytecodes), and after this append it would see two
    # signals, take itself for the second, return, and leave this one taking itself for the
    # second too: neither would stop the command (`kill -TERM; kill -INT` at once did that).
    first = not _received and not _ended
    _received.append(signum)
    if len(_received) >= FORCE_AFTER:
        # The cleanup seems stuck (a hung file system?): the user insists, so stop at once.
        signal.signal(signum, signal.SIG_DFL)
        signal.raise_signal(signum)
    if not first:
        return  # the first signal's cleanups are running: an exception now would cut one short
    if signum == signal.SIGINT:
        raise KeyboardInterrupt
    raise Terminated


def _on_held_signal(signum: int) -> bool:
    """A signal that arrives while a cleanup holds signals (`files.signals_held`). Once a
    stop is under way it counts toward `FORCE_AFTER` as if it had arrived outside the cleanup
    (where a hung one would be); the first signal is left to be delivered after the block."""
    if not _received:
        return False
    _on_signal(signum, None)
    return True


def _on_unraisable(unraisable: sys.UnraisableHookArgs) -> None:
    """A stop raised while Python ran a finaliser (a `__del__`, a generator closed by the
    garbage collector) is swallowed there, printed as "Exception ignored in …", and the
    command would run on to its end. Raise it again a moment later, outside the finaliser.
    Not once the command has ended (interpreter shutdown, atexit): there is nothing left
    to stop, and the alarm would outlive the handler and kill the process ("Alarm clock")."""
    stop = isinstance(unraisable.exc_value, (Terminated, KeyboardInterrupt))
    if stop and _ended:
        return
    if stop and _received and hasattr(signal, "setitimer"):
        _swallowed[:] = [_received[0]]
        signal.signal(signal.SIGALRM, _deliver_again)
        signal.setitimer(signal.ITIMER_REAL, _REDELIVER_AFTER_S)
        return
    sys.__unraisablehook__(unraisable)


def _disarm_redelivery() -> None:
    """No redelivery of a swallowed stop from now on (`_on_unraisable`): its alarm must not
    go off on the way out, after its handler is gone."""
    _swallowed.clear()
    if hasattr(signal, "setitimer"):
        signal.signal(signal.SIGALRM, signal.SIG_IGN)
        signal.setitimer(signal.ITIMER_REAL, 0)


_REDELIVER_AFTER_S = 0.001
_swallowed: list[int] = []
"""The signal whose stop a finaliser swallowed, until it is raised again."""


def _deliver_again(alarm: int, frame: FrameType | None) -> None:
    if not _swallowed:
        return
    handler = signal.getsignal(_swallowed[0])
    if handler is signal.SIG_IGN or isinstance(sys.exc_info()[1], (SystemExit, KeyboardInterrupt)):
        _swallowed.clear()  # the command is ending already, and `main` reports the stop
        return
    if handler is not _on_signal:  # a cleanup holds signals (`signals_held`): after it
        signal.setitimer(signal.ITIMER_REAL, _REDELIVER_AFTER_S)
        return
    signum = _swallowed.pop()
    if signum == signal.SIGINT:
        raise KeyboardInterrupt
    raise Terminated


def _install_handlers() -> None:
    for signum in _STOPPED_BY:
        if signum == _SIGHUP and signal.getsignal(signum) == signal.SIG_IGN:
            continue  # `nohup`, or a parent that wants it to outlive a hang-up: keep ignoring
        signal.signal(signum, _on_signal)
    count_held_signals(_on_held_signal)
    sys.unraisablehook = _on_unraisable


def main() -> None:
    if sys.stdout is None:  # started with stdout closed (`ndpkit … >&-`)
        if sys.stderr is not None:
            sys.stderr.write("error: stdout is closed: there is nowhere to write the output\n")
        raise SystemExit(2)
    _install_handlers()
    leave_ctrl_c_to_the_parent()  # its workers and fork server ignore it (see the module)
    _write_every_byte()
    _escape_what_cannot_be_encoded()
    try:
        _run()
    except BaseException:
        # Typer turns Ctrl-C's KeyboardInterrupt into a silent exit 130: say why instead. A
        # stop can also come out as another exception: raised inside an import, it was
        # replaced by the failing import's own error (a TypeError from ssl, rich's
        # RuntimeError from __set_name__).
        if not _received:
            raise
        raise SystemExit(_stopped()) from None
    finally:
        _ended[:] = [True]
        _disarm_redelivery()


def _write_every_byte() -> None:
    """Under PYTHONUNBUFFERED=1 (or `python -u`) stdout's text layer writes straight to the
    file and drops what a short write leaves: a reader that went away in the middle of a
    write (`| head`) took the rest without an error, and the command ended with status 0,
    not 141. A buffered layer between them writes every byte or raises; line-buffered, the
    output still appears as it is printed."""
    stream = sys.stdout
    if not isinstance(getattr(stream, "buffer", None), io.RawIOBase):
        return  # buffered already (the default), or not a file's text stream
    with contextlib.suppress(ValueError, OSError):
        raw = io.FileIO(stream.fileno(), "w", closefd=False)  # the old stream keeps the fd
        sys.stdout = io.TextIOWrapper(
            io.BufferedWriter(raw),
            encoding=stream.encoding,
            errors=stream.errors,
            line_buffering=True,
        )


def _escape_what_cannot_be_encoded() -> None:
    """Output to a stream whose encoding lacks a character (`PYTHONIOENCODING=ascii`, a C
    locale) writes it as a `\\u2013` escape, as the error messages already are, instead of
    ending the command in a UnicodeEncodeError traceback. (Rich draws its boxes in ASCII
    there by itself; the text in them is ours.)"""
    for stream in (sys.stdout, sys.stderr):
        reconfigure = getattr(stream, "reconfigure", None)
        encoding = codecs.lookup(getattr(stream, "encoding", None) or "utf-8").name
        if reconfigure is None or encoding == "utf-8" or stream.errors in _NEVER_FAIL:
            continue  # not a text stream, every character fits, or already told what to do
        with contextlib.suppress(ValueError, OSError):
            reconfigure(errors="backslashreplace")


_NEVER_FAIL = ("backslashreplace", "replace", "xmlcharrefreplace", "namereplace", "ignore")
"""Error handlers under which a stream writes any character (surrogateescape is not one)."""


def _stopped() -> int:
    """Report the signal that stopped the command; its exit status. Later signals are
    ignored: the cleanups have run, and the message is the last thing left to do."""
    for signum in _STOPPED_BY:
        signal.signal(signum, signal.SIG_IGN)
    _disarm_redelivery()
    first = signal.Signals(_received[0])
    if sys.stderr is not None:  # None: started with stderr closed (`2>&-`)
        with contextlib.suppress(OSError, ValueError):  # a hung-up terminal takes no more
            sys.stderr.write(f"ndpkit: {_STOPPED_BY[first]}\n")
    _drop_what_cannot_be_written()
    return 128 + first


def _drop_what_cannot_be_written() -> None:
    """Output that a hung-up terminal (EIO) or a gone reader can no longer take is dropped:
    left in its stream's buffer, the interpreter's last flush failed on it and made the
    status 120 instead of the signal's. The stream's descriptor is pointed at /dev/null."""
    for stream in (sys.stdout, sys.stderr):
        if stream is None:
            continue
        try:
            stream.flush()
        except ValueError:  # closed: the interpreter does not flush it either
            continue
        except OSError:
            with contextlib.suppress(OSError, ValueError):
                null = os.open(os.devnull, os.O_WRONLY)
                try:
                    os.dup2(null, stream.fileno())
                finally:
                    os.close(null)
                stream.flush()


RICH_HELP_MIN_COLUMNS = 100
"""Below this width help is Click's plain layout: rich's option table
leaves its help column about 18 characters at 80 columns, one or two words a line."""


def _plain_when_narrow() -> None:
    """Plain help in a narrow terminal (or a pipe: 80 columns), unless TYPER_USE_RICH says."""
    if "TYPER_USE_RICH" in os.environ:
        return
    if shutil.get_terminal_size().columns < RICH_HELP_MIN_COLUMNS:
        import typer.core  # noqa: PLC0415

        typer.core.HAS_RICH = False


def _run() -> None:
    _plain_when_narrow()
    if sys.argv[1:2] == ["sort"]:
        # `ndpkit sort` is timed against DuckDB and Polars, which start in 0.1 s; the other
        # commands' imports (pint, scipy, scikit-learn…) cost half a second it never uses.
        from ndpkit.cli.sort import sort_app  # noqa: PLC0415

        # Named as it was run (`python -m ndpkit sort`), as the other commands are.
        prog_name = f"{_click_module('utils')._detect_program_name()} sort"
        code = _exit_code(lambda: _run_app(sort_app, sys.argv[2:], prog_name))
        if _received:
            code = _stopped()
        # The output is written, renamed into place and closed. What is left is freeing
        # the in-memory table (gigabytes), which takes 0.1 s of a 3 s sort and serves no
        # one: leave without the interpreter's teardown.
        sys.stdout.flush()
        sys.stderr.flush()
        os._exit(code)
    from ndpkit.cli.commands import COMMANDS, app_for  # noqa: PLC0415

    # One command asked for: import it alone (see `cli.commands`); `--version` alone, no
    # command at all. `--help`, no arguments and a mistyped name get the whole app, which
    # lists (or suggests) every command.
    asked = sys.argv[1:2]
    if sys.argv[1:] == ["--version"]:
        asked = []
    elif not (asked and asked[0] in COMMANDS):
        asked = list(COMMANDS)
    _run_app(app_for(asked), sys.argv[1:], None)


def _run_app(app: typer.Typer, args: list[str], prog_name: str | None) -> NoReturn:
    """Run `app` as Click's standalone mode does, ending in SystemExit, except where that
    broke the rules every other error keeps:

    - A usage error (an unknown option or command, a missing argument or value, a value of
      the wrong type or not among the choices) was Click's block of usage, hint and
      `Error: …`, four lines (a boxed panel in a wide terminal). It is one `error: command
      line: …` line naming the option, and the one-line hint where help is; status 2.
    - Help or the version written to a reader that went away (`ndpkit -h | head -1`) ended
      with status 1, not 141 as any other output does; to a full disk, in a traceback."""
    import typer.core  # noqa: PLC0415
    import typer.main  # noqa: PLC0415

    click_errors = _click_module("exceptions")

    command = typer.main.get_command(app)
    # Named here, not by Click: the hint for an option's missing value (`_help_hint`) names
    # the command as the usage lines do (`python -m ndpkit evaluate -h`, not `ndpkit …`).
    prog_name = prog_name or _click_module("utils")._detect_program_name()
    try:
        code = command.main(args=args, prog_name=prog_name, standalone_mode=False)
    except click_errors.NoArgsIsHelpError as exc:
        # `ndpkit` or a group alone: its help on stderr, status 2, as Click does it (rich
        # help printed itself while the error was made).
        if not (typer.core.HAS_RICH and getattr(command, "rich_markup_mode", None)):
            exc.show()
        raise SystemExit(exc.exit_code) from None
    except click_errors.UsageError as exc:
        from ndpkit.cli.common import usage_error  # noqa: PLC0415

        raise SystemExit(
            usage_error(_usage_message(exc), _help_hint(exc, command, args, prog_name))
        ) from None
    except click_errors.ClickException as exc:  # none of ndpkit's: as Click prints it
        exc.show()
        raise SystemExit(exc.exit_code) from None
    except typer.Abort:
        sys.stderr.write("Aborted!\n")
        raise SystemExit(1) from None
    except SystemExit as exc:
        # Typer ends a write that met a reader gone away (EPIPE) with status 1, even outside
        # standalone mode; the exception it met is the exit's context.
        gone = exc.__context__
        if isinstance(exc, Terminated) or not isinstance(gone, BrokenPipeError):
            raise
        from ndpkit.cli.common import stdout_refused  # noqa: PLC0415

        raise SystemExit(stdout_refused(gone)) from None
    except OSError as exc:
        if not _written_by_click(exc):
            raise  # the command's own: it reports what it can name, the rest has a traceback
        from ndpkit.cli.common import stdout_refused  # noqa: PLC0415

        raise SystemExit(stdout_refused(exc)) from None
    # Without standalone mode Click returns the status of a `typer.Exit`, or the command's
    # return value (None) when it ran to its end.
    raise SystemExit(code if isinstance(code, int) else 0)


def _click_module(name: str) -> Any:
    """Click's module `name` as typer runs it: typer 0.29 carries its own copy
    (`typer._click`, private), earlier ones used the `click` package."""
    try:
        return importlib.import_module(f"typer._click.{name}")
    except ModuleNotFoundError:
        return importlib.import_module(f"click.{name}")


def _usage_message(exc: Exception) -> str:
    """Click's message, as a clause of ours: "no such option: --bogus", "invalid value for
    '--format' / '-f': 'xml' is not one of …" (without pydantic's "Value error, "), "missing
    argument 'SOURCE'"."""
    format_message = getattr(exc, "format_message", None)
    text = str(format_message() if callable(format_message) else exc).strip()
    text = text.replace(": Value error, ", ": ").removesuffix(".")
    return text[:1].lower() + text[1:]


def _help_hint(exc: Exception, command: Any, args: list[str], prog_name: str) -> str:
    """Where the help is: the failing (sub)command's own -h. An option's missing value is
    raised without the command (Click's parser has none): the command words leading `args`
    name it."""
    ctx = getattr(exc, "ctx", None)
    if ctx is not None:
        return f"Try '{ctx.command_path} -h' for help."
    path = [prog_name]
    for word in args:
        command = getattr(command, "commands", {}).get(word)
        if command is None:
            break
        path.append(word)
    return f"Try '{' '.join(path)} -h' for help."


def _written_by_click(exc: OSError) -> bool:
    """Whether `exc` was raised inside Click's `echo` (the plain help, or `--version`) or
    while typer's rich help printed itself (a wide terminal, TYPER_USE_RICH=1): ndpkit's
    commands write their output through `common.writing_stdout`, which reports it."""
    echo = _click_module("utils").echo
    rich_utils = sys.modules.get("typer.rich_utils")  # loaded only to print rich help
    rich_help = getattr(rich_utils, "rich_format_help", None)
    tb, innermost = exc.__traceback__, None
    while tb is not None:
        if rich_help is not None and tb.tb_frame.f_code is rich_help.__code__:
            return True  # rich's console raised it, a few calls further in
        innermost, tb = tb, tb.tb_next
    return innermost is not None and innermost.tb_frame.f_code is echo.__code__


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
