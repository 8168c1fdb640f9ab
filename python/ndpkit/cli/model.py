"""`ndpkit estimate` and `ndpkit plan`: the analytic model and the planner on the command line."""

from __future__ import annotations

import sys
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
from ndpkit.errors import ModelError
from ndpkit.hw import load_platform
from ndpkit.model import FULL_GEAR, HOST_ONLY, Estimate, Options, estimate
from ndpkit.plan import Plan, activate, configuration_of, optimise, plan
from ndpkit.profile import load_profile
from ndpkit.report import Column, Table, to_json

PlatformOpt = Annotated[
    str,
    typer.Option(
        "--platform", "-p", help="A preset (cns, sans, sfns, rans, rfns) or a platform TOML file."
    ),
]
AppOpt = Annotated[
    str,
    typer.Option(
        "--app", "-a", help="Application: lc, he, fft2d, knn2, knn6, knn8 (or one in --profiles)."
    ),
]
ProfilesOpt = Annotated[
    str,
    typer.Option("--profiles", help="A profile set: shipped name (rans-rfns) or a TOML/JSON file."),
]


def estimate_cmd(
    platform: PlatformOpt,
    app: AppOpt,
    profiles: ProfilesOpt = "rans-rfns",
    engines: Annotated[
        int | None,
        typer.Option(
            "--engines", "-n", help="Engines to power on (mapped by the switch layer); default all."
        ),
    ] = None,
    split: Annotated[
        str,
        typer.Option(
            "--split", help="device (NDP: device part on engines) or host (whole kernel on host)."
        ),
    ] = "device",
    energy_form: EnergyFormOpt = None,
    wall_times: WallTimesOpt = None,
    time_basis: TimeBasisOpt = None,
    placement: PlacementOpt = None,
    units: UnitsOpt = None,
    rounding: RoundingOpt = None,
    switch_power: SwitchPowerOpt = None,
    switch_time: SwitchTimeOpt = None,
    mux_port_cap: MuxCapOpt = False,
    fmt: FormatOption = Format.table,
) -> None:
    """Predict time, bottleneck stage and energy of one application on one platform (Eq. 1)."""
    with user_errors():
        opts = build_options(Options(), locals())
        spec = load_platform(platform)
        profile = load_profile(app, profiles)
        if split not in ("device", "host"):
            raise ModelError(f"--split must be device or host, got {split!r}")
        if split == "host":
            config = HOST_ONLY
        elif engines is None:
            config = FULL_GEAR
        else:
            k = spec.switch_layer.module_size(spec.devices)
            config = configuration_of(activate(spec.devices, k, engines), spec.devices)
        result = estimate(spec, profile, config, opts)
    emit([estimate_table(result)], fmt, {"estimate": result.as_dict(), "notes": result.notes})
    for note in result.notes if fmt is Format.table else []:
        stderr().print(f"note: {note}", highlight=False)


def estimate_table(e: Estimate) -> Table:
    rows = [{"quantity": k, "value": v} for k, v in e.as_dict().items()]
    return Table(
        "estimate",
        f"Estimate — {e.app} on {e.platform} ({e.config.split} split)",
        [Column("quantity", "quantity", None), Column("value", "value", 4)],
        rows,
        note=f"bandwidths in GB/s with GB = {e.options.gb:.0f} bytes",
    )


def plan_cmd(
    platform: PlatformOpt,
    app: AppOpt,
    profiles: ProfilesOpt = "rans-rfns",
    scheme: Annotated[
        str | None,
        typer.Option(
            "--scheme",
            help="Switch layer to plan for: mux1, mux2, …, muxk, muxn (default: the platform's).",
        ),
    ] = None,
    optimal: Annotated[
        bool,
        typer.Option(
            "--optimal/--paper",
            help="Least-energy search over engines and splits, or the paper's Eq. 2/3 rule.",
        ),
    ] = False,
    tolerance: Annotated[
        float,
        typer.Option(
            "--tolerance",
            help="With --optimal: accept configurations this fraction slower than "
            "the best (0.05 = 5%).",
        ),
    ] = 0.0,
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
    """Choose how many engines to power on, map SSDs to them, and report the energy saved."""
    with user_errors():
        opts = build_options(Options(), locals())
        spec = load_platform(platform)
        profile = load_profile(app, profiles)
        if spec.engines is None and not optimal:
            raise ModelError(f"platform {spec.name!r} has no engines to plan; try --optimal")
        result = (
            optimise(spec, profile, opts, tolerance=tolerance, scheme=scheme)
            if optimal
            else plan(spec, profile, opts, scheme=scheme)
        )
    document = {"plan": result.as_dict(), "candidates": [c.as_dict() for c in result.candidates]}
    if fmt is Format.json:
        sys.stdout.write(to_json(document))
        return
    emit([plan_table(result)], fmt)
    if result.candidates and fmt is Format.table:
        emit([candidates_table(result)], fmt)
    for note in result.planned.notes if fmt is Format.table else []:
        stderr().print(f"note: {note}", highlight=False)


def plan_table(p: Plan) -> Table:
    d = p.as_dict()
    gb = p.planned.options.gb
    rows = [
        {"item": "method", "value": d["method"]},
        {"item": "switch layer", "value": d["scheme"]},
        {"item": "split", "value": d["split"]},
        {"item": "full-gear bottleneck", "value": d["bottleneck"]},
        {"item": "nane (Eq. 2)", "value": str(d["nane"])},
        {"item": "engines on / off", "value": f"{d['engines_on']} / {d['engines_off']}"},
        {"item": "active engines", "value": " ".join(map(str, d["active_engines"]))},
        {"item": "SSD → engine", "value": " ".join(map(str, d["route"]))},
        {
            "item": "max SSDs per engine (imbalance)",
            "value": f"{d['max_shards_per_engine']} ({d['load_imbalance']:.2f}x)",
        },
        {
            "item": "performance (GB/s) baseline → plan",
            "value": f"{p.baseline.performance_bytes_per_s / gb:.2f} → "
            f"{p.planned.performance_bytes_per_s / gb:.2f}",
        },
        {
            "item": "energy (J) baseline → plan",
            "value": f"{d['baseline_energy_j']:.2f} → {d['planned_energy_j']:.2f}",
        },
        {"item": "gross saving (J)", "value": f"{d['gross_saving_j']:.4f}"},
        {"item": "switch layer energy (J)", "value": f"{d['switch_energy_j']:.5f}"},
        {"item": "net saving (J)", "value": f"{d['net_saving_j']:.4f}"},
        {"item": "improvement (%)", "value": f"{d['improvement_pct']:.2f}"},
    ]
    return Table(
        "plan",
        f"Plan — {p.app} on {p.platform}",
        [Column("item", "", None), Column("value", "", None)],
        rows,
        note="baseline: full gear on the same server without a switch layer",
    )


def candidates_table(p: Plan) -> Table:
    gb = p.planned.options.gb
    rows = [
        {
            "split": c.config.split,
            "engines_on": c.pipeline.engines_active,
            "performance_gb_per_s": c.performance_bytes_per_s / gb,
            "bottleneck": c.bottleneck,
            "time_s": c.time_s,
            "energy_j": c.energy_j,
        }
        for c in p.candidates
    ]
    return Table(
        "candidates",
        "Configurations considered",
        [
            Column("split", "split", None),
            Column("engines_on", "engines on", 0),
            Column("performance_gb_per_s", "performance (GB/s)"),
            Column("bottleneck", "bottleneck", None),
            Column("time_s", "time (s)", 3),
            Column("energy_j", "energy (J)"),
        ],
        rows,
    )
