"""`ndpkit reproduce PAPER`: regenerate a paper's tables."""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import Annotated

import typer

from ndpkit.cli.common import (
    COMMAND_LINE,
    EnergyFormOpt,
    EqRoundingOpt,
    Format,
    FormatOption,
    ImprovementOpt,
    ModelOptionOpt,
    MuxCapOpt,
    PlacementOpt,
    RoundingOpt,
    SwitchPowerOpt,
    SwitchTimeOpt,
    TimeBasisOpt,
    UnitsOpt,
    WallTimesOpt,
    build_options,
    choice,
    comma_list,
    emit,
    stderr,
    user_errors,
    whole_arg,
)
from ndpkit.errors import SpecError, UnknownNameError
from ndpkit.hw.quantity import MAX_COUNT
from ndpkit.model.options import RISP_ONLY, SERVER_ONLY
from ndpkit.numerals import plain_number
from ndpkit.plan.channels import ChannelRounding, Grouping
from ndpkit.reproduce import REPRODUCTIONS, nascent2, rans_rfns, risp
from ndpkit.units import Kind, UnitError, parse


def reproduce_cmd(
    paper: Annotated[
        str, typer.Argument(metavar="PAPER", help="Which paper: rans-rfns, risp or nascent2.")
    ],
    tables: Annotated[
        str | None,
        typer.Option(
            "--tables",
            help="Comma-separated table names to print, e.g. 9,11 (rans-rfns) or E4,E8 (risp, "
            "nascent2); default all.",
        ),
    ] = None,
    energy_form: EnergyFormOpt = None,
    wall_times: WallTimesOpt = None,
    time_basis: TimeBasisOpt = None,
    placement: PlacementOpt = None,
    units: UnitsOpt = None,
    eq_rounding: EqRoundingOpt = None,
    rounding: RoundingOpt = None,
    switch_power: SwitchPowerOpt = None,
    switch_time: SwitchTimeOpt = None,
    improvement: ImprovementOpt = None,
    mux_port_cap: MuxCapOpt = None,
    inputs: Annotated[
        str | None,
        typer.Option(
            "--inputs",
            help="risp, R2: read the paper's MB/GB as decimal (default) or binary; E3 and E4b "
            "print both.",
        ),
    ] = None,
    channel_rounding: Annotated[
        str | None,
        typer.Option(
            "--channel-rounding", help="risp, R8: floor (paper, default), ceil, nearest, search."
        ),
    ] = None,
    grouping: Annotated[
        str | None,
        typer.Option("--grouping", help="risp, R9: balanced (default), ceil or floor groups."),
    ] = None,
    n_cpu: Annotated[
        int | None,
        typer.Option(
            "--n-cpu",
            help="risp, R1: host CPUs, 1-65536 (blank in Table II; preset 4).",
            parser=whole_arg,
        ),
    ] = None,
    measured: Annotated[
        str | None,
        typer.Option(
            "--measured",
            help="risp: your measured Baseline times to validate Eq. 5, e.g. "
            "'kmeans=2.1,sobel=4.9' (seconds); V0 also fits n_cpu to them (R1).",
        ),
    ] = None,
    full: Annotated[
        bool,
        typer.Option("--full", help="nascent2: the paper's sizes (default: scaled down)."),
    ] = False,
    devices: Annotated[
        str | None,
        typer.Option("--devices", help="nascent2: a device file (see docs/nascent2.md)."),
    ] = None,
    simulate: Annotated[
        bool,
        typer.Option(
            "--simulate",
            help="nascent2: E6 and E7 also run the discrete-event simulation (sim_* columns; "
            "-o des.chunk_bytes=…, des.baseline_schedule=…; docs/nascent2-simulation.md).",
        ),
    ] = False,
    option: ModelOptionOpt = None,
    fmt: FormatOption = Format.table,
) -> None:
    """Regenerate a paper's tables from its inputs through ndpkit's models and planner.

    The defaults are each paper's conventions; docs/reproducing-rans-rfns.md,
    docs/reproducing-risp.md and docs/nascent2.md say which option reproduces what.
    """
    with user_errors():
        if paper not in REPRODUCTIONS:
            raise UnknownNameError("paper", paper, sorted(REPRODUCTIONS))
        console = stderr()

        def progress(msg: str) -> None:
            console.print(f"[dim]{msg}…[/]", highlight=False)

        flags = locals()
        if paper == "nascent2":
            _only_for("rans-rfns", flags, _RANS_FLAGS)
            _only_for("risp", flags, _RISP_FLAGS)
            n2_settings = nascent2.settings_from_flags(
                full=full, devices=devices, options=option, simulate=simulate
            )
            wanted = _wanted(tables, nascent2.TABLE_NAMES)
            if simulate and wanted and not set(_SIMULATED) & set(wanted):
                # It ran E6 and E7's simulations for the headline and printed none of them,
                # or ran none at all, where the flag promises simulated columns.
                raise SpecError(
                    f"simulates {' and '.join(_SIMULATED)} only, and --tables names neither; "
                    "add one or leave --simulate out",
                    source="command line",
                    field="--simulate",
                )
            n2 = nascent2.reproduce(
                n2_settings, tables=wanted or nascent2.TABLE_NAMES, progress=progress
            )
    if paper == "nascent2":
        emit(n2, fmt, nascent2.document(n2))
        return
    with user_errors():
        _only_for("nascent2", flags, _NASCENT2_FLAGS)
        module = risp if paper == "risp" else rans_rfns
        wanted = _wanted(tables, module.TABLE_NAMES)
        if paper == "risp":
            _only_for("rans-rfns", flags, _RANS_FLAGS)
            opts = build_options(risp.DEFAULT_OPTIONS, flags, _only_read_by("rans-rfns"))
            if opts.units != "decimal":
                raise SpecError(
                    "risp reports decimal GB (R2); read the inputs as binary with --inputs binary",
                    source="command line",
                    field="--option units",  # as every other -o error names it
                )
            settings = {
                "inputs": choice("--inputs", inputs or "decimal", risp.InputUnits),
                "rounding": choice(
                    "--channel-rounding", channel_rounding or "floor", ChannelRounding
                ),
                "grouping": choice("--grouping", grouping or "balanced", Grouping),
                "n_cpu": _n_cpu(n_cpu),
            }
            _refuse_unread(wanted, flags)
            result = risp.reproduce(
                opts, measured_s=_measured(measured), progress=progress, **settings
            )
            # The JSON records the CPU count used, the preset's when --n-cpu is not given.
            settings["n_cpu"] = risp.n_cpu_used(n_cpu)
        else:
            _only_for("risp", flags, _RISP_FLAGS)
            opts = build_options(rans_rfns.DEFAULT_OPTIONS, flags, _only_read_by("risp"))
            result = rans_rfns.reproduce(opts, progress=progress)
        if wanted:
            result = [t for t in result if t.name in wanted]
    if paper == "risp":
        emit(result, fmt, risp.document(result, opts, settings))
    else:
        written = result if fmt is Format.table else rans_rfns.as_written(result, opts)
        emit(written, fmt, rans_rfns.document(result, opts))


_RANS_FLAGS = {
    "energy_form": "--energy-form",
    "wall_times": "--wall-times",
    "time_basis": "--time-basis",
    "placement": "--placement",
    "units": "--units",
    "eq_rounding": "--eq-rounding",
    "rounding": "--rounding",
    "switch_power": "--switch-power",
    "switch_time": "--switch-time",
    "improvement": "--improvement",
    "mux_port_cap": "--mux-port-cap",
}
_TRI_STATE = {"mux_port_cap": "--no-mux-port-cap"}
"""Flags whose `--no-…` form gives False, not None: given all the same."""
_NASCENT2_FLAGS = {"full": "--full", "devices": "--devices", "simulate": "--simulate"}
_SIMULATED = ("E6", "E7")
"""The nascent2 tables that --simulate adds simulated columns to."""
_RISP_FLAGS = {
    "inputs": "--inputs",
    "channel_rounding": "--channel-rounding",
    "grouping": "--grouping",
    "n_cpu": "--n-cpu",
    "measured": "--measured",
}


_RISP_SETTINGS = {
    "inputs": "inputs",
    "channel_rounding": "rounding",
    "grouping": "grouping",
    "n_cpu": "n_cpu",
    "measured": "measured",
}
"""reproduce risp's flags, by the key `risp.TABLES_CHANGED` gives their tables under."""


def _refuse_unread(wanted: Sequence[str], flags: dict[str, object]) -> None:
    """A flag or `-o` option that changes none of the tables --tables selects is an error:
    `--tables E1 --channel-rounding ceil` printed E1 as if the rounding had been applied."""
    if not wanted:
        return
    given = {_RISP_FLAGS[k]: key for k, key in _RISP_SETTINGS.items() if flags.get(k) is not None}
    options = flags.get("option")
    for pair in options if isinstance(options, list) else []:
        key = str(pair).partition("=")[0].strip()
        given[f"--option {key}"] = key
    for flag, key in given.items():
        tables = risp.TABLES_CHANGED.get(key)
        if tables is not None and not set(tables) & set(wanted):
            raise SpecError(
                f"changes only table{'s' if len(tables) > 1 else ''} {', '.join(tables)}, and "
                f"--tables selects none of them; add one or leave {flag} out",
                source="command line",
                field=flag,
            )


def _only_for(paper: str, flags: dict[str, object], names: dict[str, str]) -> None:
    """A flag of the other paper is an error, not silently ignored."""
    for key, flag in names.items():
        value = flags.get(key)
        if value is None or (value is False and key not in _TRI_STATE):
            continue
        given = _TRI_STATE[key] if value is False else flag
        raise SpecError(
            f"applies to `ndpkit reproduce {paper}` only", source="command line", field=given
        )


def _only_read_by(paper: str) -> tuple[frozenset[str], str]:
    """The conventions only the other paper's model reads."""
    keys = RISP_ONLY if paper == "risp" else SERVER_ONLY
    return (
        keys,
        f"is a convention of `ndpkit reproduce {paper}` only; this paper's model does not read it",
    )


def _n_cpu(value: int | None) -> int | None:
    """--n-cpu within what a platform file accepts, checked before anything runs."""
    if value is not None and not 1 <= value <= MAX_COUNT:
        raise SpecError(
            f"must be a whole number of CPUs in 1..{MAX_COUNT}, got {value}",
            source="command line",
            field="--n-cpu",
        )
    return value


def _seconds(text: str) -> float:
    """'2.1' (seconds) or '2100 ms'; NaN if neither."""
    if not plain_number(text):
        return math.nan
    try:
        return float(text)
    except ValueError:
        pass
    try:
        return parse(text, Kind.TIME)
    except UnitError:
        return math.nan


def _wanted(tables: str | None, known: Sequence[str]) -> list[str]:
    """The tables --tables names (none: all of them). Given but naming none ("", ",") is an
    error, not every table."""
    if tables is None:
        return []
    wanted = comma_list("--tables", tables)
    if not wanted:
        raise SpecError(
            f"names no table; known: {', '.join(known)}", source="command line", field="--tables"
        )
    for name in wanted:
        if name not in known:
            raise UnknownNameError("table", name, list(known), source="command line: --tables")
    twice = sorted({name for name in wanted if wanted.count(name) > 1})
    if twice:  # as --apps and --engines: a table given twice would only print it twice
        raise SpecError(
            f"names {', '.join(twice)} more than once; give each table once",
            source="command line",
            field="--tables",
        )
    return wanted


MEASURED_MIN_S = 1e-6
MEASURED_MAX_S = 1e6
"""The times --measured takes: the calibration's least-squares fit overflows or divides by
zero on times hundreds of orders of magnitude from the model's (a few seconds)."""


def _measured(text: str | None) -> dict[str, float]:
    """'kmeans=2.1,sobel=4.9' → {"kmeans": 2.1, "sobel": 4.9}, with clear errors."""
    if text is None:
        return {}
    if not text.strip():  # `--measured "$TIMES"` with TIMES unset: not the same as leaving it out
        raise SpecError(
            "is empty; give APP=SECONDS pairs such as 'kmeans=2.1,sobel=4.9', or leave it out",
            source="command line",
            field="--measured",
        )
    values: dict[str, float] = {}
    for pair in text.split(","):
        app, sep, seconds = pair.partition("=")
        app = app.strip()
        if app not in risp.APPS:
            raise UnknownNameError(
                "app", app, list(risp.APPS), source=f"{COMMAND_LINE}: --measured"
            )
        value = _seconds(seconds.strip()) if sep else math.nan
        if not (MEASURED_MIN_S <= value <= MEASURED_MAX_S):  # NaN fails too
            raise SpecError(
                f"expected APP=SECONDS with a finite time from {MEASURED_MIN_S:g} s to "
                f"{MEASURED_MAX_S:g} s, got {pair.strip()!r}",
                source="command line",
                field="--measured",
            )
        if app in values:
            raise SpecError(
                f"{app} is given twice; give each app's time once",
                source="command line",
                field="--measured",
            )
        values[app] = value
    return values
