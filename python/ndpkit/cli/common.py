"""What every command shares: output formats, model options, and turning errors into exit 2."""

from __future__ import annotations

import errno
import inspect
import math
import os
import resource
import sys
from collections.abc import Callable, Iterator, Mapping
from contextlib import contextmanager
from enum import StrEnum
from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Any, get_args

import typer
from rich.console import Console

from ndpkit.errors import NdpkitError, SpecError
from ndpkit.files import check_writable, destination
from ndpkit.hw import Platform
from ndpkit.hw.loader import load_platform_noted
from ndpkit.numerals import plain_number, signed_whole
from ndpkit.report import Table, to_csv, to_json, to_rich

if TYPE_CHECKING:  # the model and units pull in pint (0.2 s); `ndpkit sort` needs neither
    from ndpkit.model import Options

EXIT_USAGE = 2
COMMAND_LINE = "command line"
"""The source an error names when the fault is in the flags, not in a file."""


class Format(StrEnum):
    table = "table"
    json = "json"
    csv = "csv"


FormatOption = Annotated[
    Format, typer.Option("--format", "-f", help="Output: a table for people, or JSON/CSV.")
]


PIPED_WIDTH = 400
"""Columns when stdout is not a terminal and COLUMNS is unset: a table printed to a pipe or a
log keeps its natural width (up to this) instead of being split to fit Rich's default of 80."""


_REFLOWED: set[int] = set()
"""The groups' Typer apps already reflowed (by id: they live as long as their modules)."""


def reflow_help(app: typer.Typer) -> typer.Typer:
    """Join the lines of every command's help paragraphs, in `app` and its groups.

    Typer's rich help keeps a docstring's line breaks and the terminal then wraps the lines
    again, which breaks sentences in the middle. A line that starts a list item keeps its
    break."""
    infos: list[Any] = [*app.registered_commands]
    if app.registered_callback is not None:  # a group that runs as a command too
        infos.append(app.registered_callback)
    for info in infos:
        text = info.help if isinstance(info.help, str) else inspect.getdoc(info.callback)
        if text:
            info.help = reflow(text)
            _summarise(info, info.help)
    for group in app.registered_groups:
        # A group's app is shared by every app `cli.commands.app_for` builds, and `reflow`
        # run again on its output is not always the same (an indented list item loses its
        # indent): each group is reflowed once per process.
        instance = group.typer_instance
        if instance is None:
            continue
        if id(instance) not in _REFLOWED:
            _REFLOWED.add(id(instance))
            reflow_help(instance)
        text = group.help if isinstance(group.help, str) else instance.info.help
        if isinstance(text, str):
            _summarise(group, reflow(text))
    return app


def _summarise(info: Any, text: str) -> None:
    """The command's line in its group's list: its help's first paragraph, whole. (Click's
    plain layout, used in narrow terminals, would cut a summary it made itself to fit.)"""
    if not isinstance(info.short_help, str):
        info.short_help = text.split("\n\n", 1)[0]


def reflow(text: str) -> str:
    """`text` with each paragraph's lines joined by spaces, list items kept on their own,
    and a paragraph that starts with Click's no-rewrap mark (a line of "\\b") kept as it is."""
    return "\n\n".join(_join_lines(p) for p in inspect.cleandoc(text).split("\n\n"))


def _join_lines(paragraph: str) -> str:
    if paragraph.startswith("\b"):
        return paragraph
    lines: list[str] = []
    for line in paragraph.splitlines():
        if lines and not line.lstrip().startswith(("- ", "* ")):
            lines[-1] = f"{lines[-1]} {line.strip()}"
        else:
            lines.append(line)
    return "\n".join(lines)


class _Stdout(Console):
    def on_broken_pipe(self) -> None:
        """Rich's own handling exits with status 1; `writing_stdout` says 141 for every
        format alike."""
        self.quiet = True
        raise BrokenPipeError


def stdout() -> Console:
    console = _Stdout(soft_wrap=False)
    if not console.is_terminal and "COLUMNS" not in os.environ:
        console = _Stdout(soft_wrap=False, width=PIPED_WIDTH)
    return console


_BAR_CONSOLES: list[Console] = []
"""The console of the progress bar being shown (`byte_bar`), if any."""


def stderr() -> Console:
    """The console for stderr; while a progress bar is shown, the bar's own, which prints
    each line above the bar: another console's line (a `--crop` summary, a large image's
    warning, a note) was written after the bar's text, on its line."""
    if _BAR_CONSOLES:
        return _BAR_CONSOLES[-1]
    return Console(stderr=True, soft_wrap=True)


@contextmanager
def user_errors() -> Iterator[None]:
    """Print an input error (or the system's refusal of a path) as one line on stderr and
    exit with status 2; never a traceback."""
    try:
        yield
    except NdpkitError as exc:
        # markup=False: messages quote TOML tables such as [engines], which Rich would eat.
        # one line even when a library's message has several (Arrow's Thrift errors)
        message = " ".join(str(exc).split())
        stderr().print(f"error: {message}", style="bold red", highlight=False, markup=False)
        raise typer.Exit(EXIT_USAGE) from None
    except OSError as exc:
        # The system refusing a path the user gave (a name too long for the file system, no
        # permission) where no check named it first, or this process's limit on open files
        # (a low `ulimit -n` against many workers or shards): still one line, not a
        # traceback. Any other system failure (a dead pipe) keeps its traceback.
        if exc.errno == errno.EMFILE:
            message = (
                f"{exc.strerror or exc}: this process may open {_open_files_limit()} files "
                "(ulimit -n); raise the limit, or run fewer worker processes"
            )
        elif exc.errno == errno.ENFILE:
            message = (
                f"{exc.strerror or exc}: the system's table of open files is full "
                "(fs.file-max); close other programs' files or raise the system's limit"
            )
        elif exc.errno in _FULL_ERRNOS and exc.filename is not None:
            # A full file system where no check named it first (a full /dev/shm, out of
            # inodes though it has space, under Python's multiprocessing): the file, and why.
            message = (
                f"{exc.filename}: {exc.strerror or exc}: its file system is full (of data or "
                "of files) or its quota used up; free some space there"
            )
            message = " ".join(message.split())
        elif exc.errno not in _PATH_ERRNOS or exc.filename is None:
            raise
        else:
            message = " ".join(f"{exc.filename}: {exc.strerror or exc}".split())
        stderr().print(f"error: {message}", style="bold red", highlight=False, markup=False)
        raise typer.Exit(EXIT_USAGE) from None


_PATH_ERRNOS = frozenset(
    {
        errno.ENAMETOOLONG,
        errno.EACCES,
        errno.EPERM,
        errno.ENOENT,
        errno.ENOTDIR,
        errno.EISDIR,
        errno.EROFS,
        errno.ELOOP,
    }
)
"""What a path the user gave can be refused with."""
_FULL_ERRNOS = frozenset({errno.ENOSPC, errno.EDQUOT})
"""What a write to a full file system, or over a user's quota, fails with."""


def _open_files_limit() -> str:
    try:
        return str(resource.getrlimit(resource.RLIMIT_NOFILE)[0])
    except (OSError, ValueError):
        return "only so many"


def platform_flag(name_or_path: str, flag: str = "--platform") -> Platform:
    """The platform a flag names (a preset or a file): an unknown name is refused naming
    the flag, as every other refusal of a command's arguments is."""
    return platform_flag_noted(name_or_path, flag)[0]


def platform_flag_noted(name_or_path: str, flag: str) -> tuple[Platform, list[str]]:
    """`platform_flag` with `load_platform_noted`'s notes, for `platforms check FILE`,
    whose unknown name named no flag where `platforms show NAME`'s did."""
    return load_platform_noted(name_or_path, source=f"{COMMAND_LINE}: {flag}")


def given_path(text: str) -> Path:
    """A path argument or option (`parser=`); an empty one is refused, not read as the
    current directory (Path("") is "."). Checked while Click parses: its usage error, exit
    status 2."""
    if not text.strip():
        raise typer.BadParameter("is empty; give a path")
    return Path(text)


def given_text(text: str) -> str:
    """As `given_path`, for a path kept as text (a trailing "/" means a directory)."""
    given_path(text)
    return text


def check_output_file(flag: str, path: Path, *, directory_ok: bool = False) -> None:
    """Refuse an output file that cannot be written before any work, not after it: a
    device or FIFO, a name too long, a directory (unless `directory_ok`: an output that is
    one), one in a missing or read-only directory."""
    if not path.name:  # "" (typer makes it "."), "/"
        raise SpecError("give a file name", source=COMMAND_LINE, field=flag)
    try:
        target = destination(path)
    except SpecError as exc:
        raise SpecError(exc.detail, source=COMMAND_LINE, field=f"{flag} {path}") from None
    if target.is_dir() and not directory_ok:
        raise SpecError(
            f"{str(path)!r} is a directory; give a file name", source=COMMAND_LINE, field=flag
        )
    if not target.parent.is_dir():
        raise SpecError(
            f"cannot write {str(path)!r}: no directory {str(target.parent)!r}",
            source=COMMAND_LINE,
            field=flag,
        )
    try:
        check_writable(target)
    except SpecError as exc:
        raise SpecError(exc.detail, source=COMMAND_LINE, field=f"{flag} {path}") from None


def print_notes(notes: list[str], fmt: Format) -> None:
    """Notes on stderr after a table or CSV (whose rows have no place for them); a JSON
    document carries them itself."""
    for note in notes if fmt is not Format.json else []:
        stderr().print(f"note: {note}", highlight=False, markup=False)


def emit(tables: list[Table], fmt: Format, document: dict[str, Any] | None = None) -> None:
    """Write results to stdout in the chosen format."""
    if fmt is Format.json:
        write_out(to_json(document if document is not None else _doc(tables)))
    elif fmt is Format.csv:
        write_out(to_csv(tables))
    else:
        with writing_stdout():
            console = stdout()
            for table in tables:
                for part in to_rich(table, console.width):
                    console.print(part)


EXIT_PIPE_CLOSED = 141
"""Status when the reader of stdout went away (`| head`): what a shell reports for a
process SIGPIPE killed, which is what a C tool would have been."""


def write_out(text: str) -> None:
    """`text` on stdout, flushed (so that a full disk is reported here, not at exit)."""
    with writing_stdout():
        sys.stdout.write(text)


@contextmanager
def writing_stdout() -> Iterator[None]:
    """Write to stdout inside; a reader that went away ends the command quietly (status
    141), a write that fails otherwise (a full disk behind `> out.json`) is one line on
    stderr and status 2, not a traceback."""
    try:
        yield
        sys.stdout.flush()
    except OSError as exc:
        raise typer.Exit(stdout_refused(exc)) from None


def stdout_refused(exc: OSError) -> int:
    """The exit status of a write to stdout that failed with `exc`: a reader that went away
    is 141, quietly; anything else (a full disk) one line on stderr and status 2."""
    _drop_unwritten()  # nothing will read the rest, or it cannot be written
    if isinstance(exc, BrokenPipeError):
        return EXIT_PIPE_CLOSED
    message = f"stdout: cannot write the output ({exc.strerror or exc})"
    stderr().print(f"error: {message}", style="bold red", highlight=False, markup=False)
    return EXIT_USAGE


def usage_error(message: str, hint: str) -> int:
    """Print a usage error Click found in the flags (an unknown option, a missing value) in
    the style of every other error: one `error: command line: …` line, then `hint`; its exit
    status (2)."""
    message = " ".join(message.split())
    stderr().print(
        f"error: {COMMAND_LINE}: {message}", style="bold red", highlight=False, markup=False
    )
    stderr().print(hint, highlight=False, markup=False)
    return EXIT_USAGE


def _drop_unwritten() -> None:
    """Point stdout at /dev/null: the interpreter's flush at exit would fail on the same
    text again and print a second, raw report of it."""
    devnull = os.open(os.devnull, os.O_WRONLY)
    os.dup2(devnull, sys.stdout.fileno())
    os.close(devnull)


def _doc(tables: list[Table]) -> dict[str, Any]:
    return {"tables": {t.name: t.rows for t in tables}}


# Model conventions, shared by estimate, plan and reproduce (see ndpkit.model.options).
EnergyFormOpt = Annotated[
    str | None,
    typer.Option("--energy-form", help="O1: host energy in the CPU phase: A (paper) or B."),
]
WallTimesOpt = Annotated[
    str | None,
    typer.Option("--wall-times", help="O2: full-server NDP time: unrounded (single/n) or printed."),
]
TimeBasisOpt = Annotated[
    str | None,
    typer.Option(
        "--time-basis",
        help="O11: paper (T_NDP + T_CPU), pipeline (D/performance), overlap or staged.",
    ),
]
PlacementOpt = Annotated[
    str | None,
    typer.Option("--placement", help="O8: paper_no_loss, static_shards or reshard_y_ssds."),
]
UnitsOpt = Annotated[
    str | None,
    typer.Option("--units", help="O4: binary (paper: 1 GB = 1024 MB) or decimal GB/MB in reports."),
]
EqRoundingOpt = Annotated[
    str | None,
    typer.Option("--eq-rounding", help="O3: bandwidths in Eq. 2/3 unrounded or rounded_2dp."),
]
RoundingOpt = Annotated[
    str | None,
    typer.Option(
        "--rounding", help="O6: exact, or paper (energies rounded to 0.01 J before ratios)."
    ),
]
SwitchPowerOpt = Annotated[
    str | None,
    typer.Option(
        "--switch-power",
        help="O5: the switch layer's power: declared (its power_total; the RANS/RFNS presets': "
        "18 mW) or per_element (element_power x mux elements; the presets': 18 x 0.99 mW).",
    ),
]
SwitchTimeOpt = Annotated[
    str | None,
    typer.Option("--switch-time", help="O5: charge the switch layer over ndp or ndp_cpu time."),
]
ImprovementOpt = Annotated[
    str | None,
    typer.Option("--improvement", help="O7: reduction (energy saved / baseline) or ee_gain."),
]
MuxCapOpt = Annotated[
    bool | None,  # None: not given, so the family's default stands and -o may set it
    typer.Option(
        "--mux-port-cap/--no-mux-port-cap",
        help="O9: cap each SSD behind a mux at the switch layer's port_bandwidth (the "
        "RANS/RFNS presets': 20 Gbps).",
    ),
]


ModelOptionOpt = Annotated[
    list[str] | None,
    typer.Option(
        "--option",
        "-o",
        help="Any model convention as KEY=VALUE, repeatable (e.g. -o ru_time=configured); "
        "see docs/reproducing-risp.md and docs/reproducing-rans-rfns.md.",
    ),
]


def build_options(
    base: Options, flags: Mapping[str, Any], *unread: tuple[frozenset[str], str]
) -> Options:
    """Options from a command's flags (pass its `locals()`): unset flags keep `base`,
    `--option KEY=VALUE` pairs come last, other parameters are ignored, and a bad value
    is a clear exit-2 error. Each `unread` is (conventions the run's model does not read,
    why): setting one is an error, since the output would record it as if it had been used.
    So is setting one twice (a flag and `--option`, or two `--option`s): one would be
    silently dropped."""
    names = base.as_dict()
    chosen = {k: v for k, v in flags.items() if k in names and v is not None}
    given = {k: "--" + k.replace("_", "-") for k in chosen}
    for pair in flags.get("option") or []:
        key, sep, value = pair.partition("=")
        if not sep or not key.strip():
            raise SpecError("expected KEY=VALUE", source="command line", field=f"--option {pair}")
        key, value = key.strip(), value.strip()
        if key in given and key in names:  # an unknown key is Options' to name
            raise SpecError(
                f"{key} is already set by {given[key]}; set it once",
                source="command line",
                field=f"--option {pair}",
            )
        chosen[key] = _flag_value(names.get(key), value)
        given[key] = f"--option {key}"
    for keys, why in unread:
        for key, flag in given.items():
            if key in keys:
                raise SpecError(why, source="command line", field=flag)
    from ndpkit.model import Options  # noqa: PLC0415 - see the TYPE_CHECKING import

    try:
        return Options.from_mapping({**names, **chosen}, source="command line")
    except SpecError as exc:
        # Said of the flag typed (`--placement`), not of the option's key (`placement`).
        if exc.field in given:
            raise SpecError(exc.detail, source="command line", field=given[exc.field]) from None
        raise


def _flag_value(current: Any, text: str) -> Any:
    if isinstance(current, bool):
        return {"true": True, "false": False}.get(text.lower(), text)
    return text


def choice(flag: str, value: str, allowed: Any) -> Any:
    """`value` if it is one of the Literal `allowed`, else a clear error naming the flag."""
    values = get_args(allowed)
    if value not in values:
        raise SpecError(
            f"must be one of {', '.join(values)}, got {value!r}", source="command line", field=flag
        )
    return value


def check_fraction(flag: str, value: float, example: str) -> None:
    """A tolerance flag: a finite fraction ≥ 0, else an exit-2 error naming the flag. (NaN
    compares false with everything: `value < 0` alone would let it through.)"""
    if not (math.isfinite(value) and value >= 0):
        raise SpecError(
            f"must be a finite fraction ≥ 0 ({example}), got {value:g}",
            source="command line",
            field=flag,
        )


def size_flag(flag: str, text: str, least: str = "1 byte") -> float:
    """A size flag ('4 GiB', '1 MiB') in bytes; a bad or sub-byte one is an exit-2 error
    naming the flag, and for a command that needs more (`least`, e.g. "1 MiB"), saying so."""
    from ndpkit.units import Kind, UnitError, parse  # noqa: PLC0415 - see TYPE_CHECKING

    try:
        value = parse(text, Kind.SIZE)
    except UnitError as exc:
        raise SpecError(str(exc), source="command line", field=flag) from None
    if value < 1:
        raise SpecError(
            f"must be at least {least}, got {text!r}", source="command line", field=flag
        )
    return value


def comma_list(flag: str, text: str) -> list[str]:
    """A comma-separated list of values, stripped: a trailing comma is allowed, an empty value
    inside is not (`lc,,he` is likelier a name left out than a stray comma). Only blanks and
    commas give []: the caller says what its flag needed."""
    items = [item.strip() for item in text.split(",")]
    if len(items) > 1 and not items[-1]:
        items.pop()
    if "" in items and any(items):
        raise SpecError(
            f"{text!r} has an empty value; give the values separated by single commas",
            source=COMMAND_LINE,
            field=flag,
        )
    return [item for item in items if item]


# -- numbers on the command line ------------------------------------------------------------


def whole_arg(text: str | int) -> int:
    """An integer option's value: digits 0-9, an optional sign, nothing else. (The option
    parser hands its default over as it is.)"""
    if isinstance(text, int):
        return text
    digits = text.strip()
    if not signed_whole(digits):
        raise typer.BadParameter(f"{text!r} is not a whole number (digits 0-9, no '_')")
    return int(digits)


def real_arg(text: str | float) -> float:
    """A number option's value: what float() reads ('0.5', '1e3', 'inf'), in ASCII, no '_'.
    (The option parser hands its default over as it is.)"""
    if isinstance(text, int | float):
        return float(text)
    try:
        if not plain_number(text):
            raise ValueError(text)
        return float(text)
    except ValueError:
        raise typer.BadParameter(f"{text!r} is not a number (digits 0-9, no '_')") from None


@contextmanager
def byte_bar(description: str) -> Iterator[Callable[[int, int], None] | None]:
    """A transient progress bar on stderr for a step that reads or writes bytes: yields
    `progress(done_bytes, total_bytes)`, or None where stderr is not a terminal (Rich ends a
    display on any other console with an empty line, which would come before an error, and
    a log gains nothing from a bar). So on a dumb terminal (TERM=dumb: Emacs's shell), where
    Rich draws no bar but still ends with that empty line."""
    console = stderr()
    if not bars_wanted(console):
        yield None
        return
    from rich.progress import (  # noqa: PLC0415 (only for a person at a terminal)
        BarColumn,
        DownloadColumn,
        Progress,
        TextColumn,
        TimeElapsedColumn,
        TimeRemainingColumn,
    )

    columns = (
        TextColumn("{task.description}"),
        BarColumn(),
        DownloadColumn(binary_units=True),
        TimeElapsedColumn(),
        TimeRemainingColumn(),
    )
    with Progress(*columns, console=console, transient=True) as bar:
        task = bar.add_task(description, total=None)

        def progress(done_bytes: int, total_bytes: int) -> None:
            # A step with another total starts over (a CSV import: the text parsed, then
            # the records written), its own time and rate with it.
            if total_bytes != bar.tasks[0].total and done_bytes == 0:
                bar.reset(task, total=total_bytes)
            bar.update(task, completed=done_bytes, total=total_bytes)

        with bar_shown(console):
            yield progress


def bars_wanted(console: Console) -> bool:
    """Whether a progress bar may be drawn on `console`: a terminal, and not a dumb one
    (TERM=dumb: Emacs's shell), where Rich draws no bar but still ends its display with an
    empty line, which would come before an error."""
    return console.is_terminal and not console.is_dumb_terminal


@contextmanager
def bar_shown(console: Console) -> Iterator[None]:
    """While a bar is drawn on `console`, `stderr()` is that console, which prints each line
    above the bar (another console's line was written after the bar's text, on its line)."""
    _BAR_CONSOLES.append(console)
    try:
        yield
    finally:
        _BAR_CONSOLES.remove(console)
