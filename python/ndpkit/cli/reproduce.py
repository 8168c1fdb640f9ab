"""`ndpkit reproduce PAPER`: regenerate a paper's tables."""

from __future__ import annotations

from typing import Annotated

import typer

from ndpkit.cli.common import (
    EnergyFormOpt,
    EqRoundingOpt,
    Format,
    FormatOption,
    ImprovementOpt,
    MuxCapOpt,
    PlacementOpt,
    RoundingOpt,
    SwitchPowerOpt,
    SwitchTimeOpt,
    TimeBasisOpt,
    UnitsOpt,
    WallTimesOpt,
    build_options,
    emit,
    stderr,
    user_errors,
)
from ndpkit.errors import UnknownNameError
from ndpkit.reproduce import REPRODUCTIONS, rans_rfns


def reproduce_cmd(
    paper: Annotated[str, typer.Argument(help="Which paper: rans-rfns.")],
    tables: Annotated[
        str | None,
        typer.Option("--tables", help="Comma-separated table numbers to print (default: all)."),
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
    mux_port_cap: MuxCapOpt = False,
    fmt: FormatOption = Format.table,
) -> None:
    """Regenerate a paper's tables from its inputs through ndpkit's models and planner.

    The defaults are the paper's conventions (printed extrapolated times, energy form A,
    1 GB = 1024 MB); docs/reproducing-rans-rfns.md says which option reproduces what.
    """
    with user_errors():
        if paper not in REPRODUCTIONS:
            raise UnknownNameError("paper", paper, sorted(REPRODUCTIONS))
        opts = build_options(rans_rfns.DEFAULT_OPTIONS, locals())
        console = stderr()
        result = rans_rfns.reproduce(
            opts, progress=lambda msg: console.print(f"[dim]{msg}…[/]", highlight=False)
        )
        if tables:
            wanted = [t.strip() for t in tables.split(",") if t.strip()]
            known = [t.name for t in result]
            missing = [w for w in wanted if w not in known]
            if missing:
                raise UnknownNameError("table", missing[0], known)
            result = [t for t in result if t.name in wanted]
    emit(result, fmt, rans_rfns.document(result, opts))
