"""`ndpkit estimate` and `ndpkit plan`: the analytic model and the planner on the command line."""

from __future__ import annotations

from collections.abc import Callable
from typing import Annotated, Any

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
    check_fraction,
    choice,
    emit,
    given_text,
    platform_flag,
    print_notes,
    real_arg,
    stderr,
    user_errors,
    whole_arg,
    write_out,
)
from ndpkit.errors import ModelError, NdpkitError, SpecError, UnknownNameError
from ndpkit.hw import Platform
from ndpkit.hw.loader import names_a_file, preset_names
from ndpkit.kernels import kernel_names
from ndpkit.model import FULL_GEAR, HOST_ONLY, Configuration, Estimate, Options, estimate
from ndpkit.model.options import RISP_ONLY, SERVER_ONLY
from ndpkit.model.pipeline import platform_where
from ndpkit.plan import Plan, activate, configuration_of, optimise, plan
from ndpkit.plan.channels import (
    ChannelRounding,
    FitSource,
    Grouping,
    PlanInputError,
    Policy,
    TimeModel,
    group_channels,
    plan_channels,
    reduced_cells_config,
)
from ndpkit.profile import Profile, load_profile, load_profiles
from ndpkit.report import Column, Table, cell, to_json
from ndpkit.units import MAX_SI, MIN_SI, Kind, UnitError, parse

PlatformOpt = Annotated[
    str,
    typer.Option(
        "--platform",
        "-p",
        help="A preset (cns, sans, sfns, rans, rfns, risp-baseline, risp-64ch) or a TOML file.",
    ),
]
AppOpt = Annotated[
    str,
    typer.Option(
        "--app",
        "-a",
        help="Application: lc, he, fft2d, knn2, knn6, knn8 (rans-rfns); kmeans, binarize, "
        "sobel (risp); or one in --profiles.",
    ),
]
ProfilesOpt = Annotated[
    str | None,
    typer.Option(
        "--profiles",
        parser=given_text,
        help="A profile set: shipped name (rans-rfns, risp) or a TOML/JSON file "
        "(default: risp on in-storage platforms, else rans-rfns).",
    ),
]
ChannelsOpt = Annotated[
    int | None,
    typer.Option(
        "--channels",
        help="In-storage: the SSD with this many flash channels (and cells).",
        parser=whole_arg,
    ),
]
InterfaceOpt = Annotated[
    str | None,
    typer.Option("--interface", help="In-storage: host interface (sata-3.2, pcie3-x4, pcie3-x16)."),
]
CellClockOpt = Annotated[
    float | None,
    typer.Option(
        "--cell-clock-mhz", help="In-storage: the cells' clock f_RU in MHz.", parser=real_arg
    ),
]


def family_defaults(spec: Platform) -> Options:
    """The conventions a platform's paper uses: RISP reports decimal GB (R2)."""
    return Options(units="decimal") if spec.is_in_storage else Options()


_PLANNER_ONLY = (
    frozenset({"eq_rounding", "improvement"}),
    "is a convention of the planner (Eq. 2's rounding, how a saving is reported): "
    "`ndpkit plan` and `reproduce` read it; `estimate` runs no Eq. (2) and reports no saving",
)
"""Conventions only the planner reads: `estimate -o improvement=ee_gain` changed nothing."""


def unread_options(spec: Platform) -> tuple[frozenset[str], str]:
    """The conventions the model of a platform's family does not read, and why."""
    if spec.is_in_storage:
        return SERVER_ONLY, (
            f"is an NDP-server (RANS/RFNS) convention; {spec.name!r} is an in-storage platform"
        )
    return RISP_ONLY, f"is an in-storage (RISP) convention; {spec.name!r} is an NDP server"


ENGINE_ONLY = frozenset(
    {"energy_form", "wall_times", "placement", "switch_power", "switch_time", "eq_rounding"}
)
"""NDP-server conventions of the engines' run: a run without one (the host split, CNS)
reads none of them (form B is the paper's for NDP runs; no engine time is printed or
stretched; no data is placed on engines; no switch layer carries data; no Eq. 2)."""
_CELL_ONLY = frozenset({"ru_time", "ru_power", "cell_load", "host_stage", "reconfiguration"})
"""In-storage conventions of the processing cells' run (Eqs. 6-8): RISP's Baseline, the
host computing (Eqs. 1-5), reads none of them."""


def unread_without_engines(spec: Platform, split: str | None) -> list[tuple[frozenset[str], str]]:
    """The conventions a run with no engine or cell on does not read, and why: `estimate
    -p cns --placement static_shards` or `--split host -o ru_time=configured` changed
    nothing without a word, where `--mux-port-cap` there is refused. (And the other way
    round, R3's host-CPU energy where the cells compute and no host CPU is priced.)"""
    if split != "host" and spec.engines is not None:
        if spec.is_in_storage:
            return [
                (
                    frozenset({"cpu_energy"}),
                    "changes nothing: the cells compute (Eqs. 6-8) and no host CPU is priced; "
                    "RISP's Baseline (--split host) reads it",
                )
            ]
        return []
    if split == "host":
        where = "under --split host the whole kernel runs on the host"
        off = "every cell off" if spec.is_in_storage else "every engine off"
        where += f" (RISP's Baseline), {off}" if spec.is_in_storage else f", {off}"
    else:
        where = f"platform {spec.name!r} has no engines: the whole kernel runs on the host"
        where += " (RISP's Baseline)" if spec.is_in_storage else ""
    return [(_CELL_ONLY if spec.is_in_storage else ENGINE_ONLY, f"changes nothing: {where}")]


def in_storage_variant(
    spec: Platform, channels: int | None, interface: str | None, cell_clock_mhz: float | None
) -> Platform:
    """Apply --channels, --interface and --cell-clock-mhz (in-storage platforms only)."""
    if (channels, interface, cell_clock_mhz) != (None, None, None) and not spec.is_in_storage:
        given = [
            flag
            for flag, value in (
                ("--channels", channels),
                ("--interface", interface),
                ("--cell-clock-mhz", cell_clock_mhz),
            )
            if value is not None
        ]
        raise SpecError(
            "applies to in-storage platforms (described per flash channel), as --channels, "
            f"--interface and --cell-clock-mhz do; {spec.name!r} is not one",
            source=COMMAND_LINE,
            field=given[0],
        )
    if channels is not None:
        if channels < 1:
            raise SpecError(
                f"must be at least 1, got {channels}", source=COMMAND_LINE, field="--channels"
            )
        spec = _flagged("--channels", lambda: spec.with_channels(channels))
    if interface is not None:
        spec = _flagged("--interface", lambda: spec.with_interface(interface))
    if cell_clock_mhz is not None:
        hz = cell_clock_mhz * 1e6
        if not MIN_SI <= hz <= MAX_SI:  # NaN fails too; the platform file's range for a clock
            # "must be from 1e-30 to 1e+18" read oddly for 0 MHz: a clock is above 0
            if not hz > 0:
                within = "above 0"
            else:
                within = (
                    f"at least {MIN_SI / 1e6:g}" if hz < MIN_SI else f"at most {MAX_SI / 1e6:g}"
                )
            raise SpecError(
                f"must be a clock {within} MHz, got {cell_clock_mhz:g}",
                source=COMMAND_LINE,
                field="--cell-clock-mhz",
            )
        spec = _flagged("--cell-clock-mhz", lambda: spec.with_cell_clock(hz))
    return spec


def _flagged(flag: str, make: Callable[[], Platform]) -> Platform:
    """The platform a flag makes; its error names the flag, not only the platform field."""
    try:
        return make()
    except NdpkitError as exc:
        raise SpecError(str(exc), source="command line", field=flag) from None


def profile_for(
    spec: Platform, app: str, profiles: str | None, given: str | None = None
) -> Profile:
    """`app`'s profile from `--profiles`, or the platform family's shipped set; `given` is
    the platform as the command line gave it, for the message that says how to measure one."""
    default = "risp" if spec.is_in_storage else "rans-rfns"
    try:
        return load_profile(app, profiles or default)
    except UnknownNameError as exc:
        if exc.kind != "app" or app not in kernel_names():
            raise
        # One of ndpkit's own kernels (kmeans on RANS, sobel on RFNS, a top-k split) that
        # the set has no profile of: the way to one is evaluate, which the list of the
        # set's apps alone did not say.
        target = given or (spec.name if spec.name in preset_names() else "PLATFORM")
        raise UnknownNameError(
            exc.kind,
            exc.name,
            exc.known,
            source=exc.source,
            hint=f"{app} is one of ndpkit's kernels: measure it with `ndpkit evaluate {app} "
            f"--platforms {target} --save-profiles {app}.json`, then give --profiles {app}.json",
        ) from None


def note_mapped_elsewhere(profiles: str | None, platforms: list[tuple[str, Platform]]) -> list[str]:
    """A note, on stderr at once and returned for a JSON document's `notes`, if `--profiles`
    names a set mapped onto another platform than some of `platforms` ((as given on the
    command line, as loaded, before flags derive a variant)): its engine and host rates are
    that platform's (`evaluate --save-profiles`), and those platforms' own design entries
    would give others. Said at once: a long sweep's reader should not wait for it."""
    if profiles is None:
        return []
    mapped_onto = load_profiles(profiles).platform
    others = [given for given, spec in platforms if mapped_onto and spec.name != mapped_onto]
    if not others:
        return []
    note = (
        f"{profiles}: its rates were mapped onto platform {mapped_onto!r}, not "
        f"{', '.join(repr(o) for o in others)}; for rates mapped onto "
        f"{'them' if len(others) > 1 else 'it'}, run `ndpkit evaluate … --platforms "
        f"{','.join(others)} --save-profiles …`"
    )
    stderr().print(f"note: {note}", markup=False, highlight=False)
    return [note]


def estimate_cmd(
    platform: PlatformOpt,
    app: AppOpt,
    profiles: ProfilesOpt = None,
    engines: Annotated[
        int | None,
        typer.Option(
            "--engines",
            "-n",
            help="Engines to power on (mapped by the switch layer), or on an in-storage "
            "platform the processing cells, each serving a group of channels; default all.",
            parser=whole_arg,
        ),
    ] = None,
    channels: ChannelsOpt = None,
    interface: InterfaceOpt = None,
    cell_clock_mhz: CellClockOpt = None,
    split: Annotated[
        str | None,
        typer.Option(
            "--split",
            help="device (NDP: device part on engines) or host (whole kernel on host); "
            "default device, or host on a platform without engines.",
        ),
    ] = None,
    energy_form: EnergyFormOpt = None,
    wall_times: WallTimesOpt = None,
    time_basis: TimeBasisOpt = None,
    placement: PlacementOpt = None,
    units: UnitsOpt = None,
    rounding: RoundingOpt = None,
    switch_power: SwitchPowerOpt = None,
    switch_time: SwitchTimeOpt = None,
    mux_port_cap: MuxCapOpt = None,
    option: ModelOptionOpt = None,
    fmt: FormatOption = Format.table,
) -> None:
    """Predict time, bottleneck stage and energy of one application on one platform.

    RANS/RFNS platforms use Eq. 1; in-storage platforms (RISP) use Eqs. 6-8 for the
    device split and the Baseline, Eqs. 1-5, for the host split.
    """
    with user_errors():
        spec = platform_flag(platform)
        mapped = note_mapped_elsewhere(profiles, [(platform, spec)])
        if split not in (None, "device", "host"):
            raise SpecError(
                f"must be device or host, got {split!r}", source=COMMAND_LINE, field="--split"
            )
        if cell_clock_mhz is not None and split == "host" and spec.is_in_storage:
            raise SpecError(
                "changes nothing: under --split host the whole kernel runs on the host "
                "(RISP's Baseline), every cell off",
                source=COMMAND_LINE,
                field="--cell-clock-mhz",
            )
        spec = in_storage_variant(spec, channels, interface, cell_clock_mhz)
        opts = build_options(
            family_defaults(spec),
            locals(),
            unread_options(spec),
            _PLANNER_ONLY,
            *unread_without_engines(spec, split),
        )
        profile = profile_for(spec, app, profiles, platform)
        if split == "device" and spec.engines is None:
            raise SpecError(
                f"platform {spec.name!r} has no NDP engines or cells; its only split is host",
                source=COMMAND_LINE,
                field="--split device",
            )
        if split == "host" and engines is not None:
            raise SpecError(
                "--split host runs the whole kernel on the host with every engine off; "
                "leave out --engines, or use --split device",
                source=COMMAND_LINE,
                field="--engines",
            )
        port_cap_applies(spec, opts, host_split="--split host" if split == "host" else None)
        if split != "host":
            bitstream_declared(spec, opts, platform)
        if split == "host":
            config = HOST_ONLY
        elif engines is None:
            config = FULL_GEAR
        elif spec.engines is None:
            raise SpecError(
                f"platform {spec.name!r} has no engines or cells",
                source=COMMAND_LINE,
                field="--engines",
            )
        else:
            config = _configuration_with(spec, engines)
        result = estimate(spec, profile, config, opts)
    notes = [*result.notes, *_untimed_stages_note(spec, result)]
    document = {
        "estimate": result.as_dict(),
        "units": result.options.units,  # which GB and MB the *_gb_per_s and MB/J use
        "notes": [*mapped, *notes],
    }
    table = estimate_table(result)
    if fmt is Format.csv:  # the table's note, which says which GB, is not in a CSV
        table.rows.append({"quantity": "units", "value": result.options.units})
    emit([table], fmt, document)
    print_notes(notes, fmt)


def _untimed_stages_note(spec: Platform, result: Estimate) -> list[str]:
    """A note where an NDP run's time is shorter than its data takes to pass the bottleneck
    stage: the paper's basis adds T_NDP and T_CPU and times no SSD or link, so an SSD- or
    link-bound run (HE on RFNS: 0.0317 s, where 36 GiB/s takes 0.0944 s for its 3.4 GiB)
    printed a time no hardware could give, and its energy over it, without a word. (A
    host-only run's T_CPU is a measured wall time that read its data: no note.)"""
    rate = result.performance_bytes_per_s
    if (
        spec.is_in_storage
        or result.config.split != "device"
        or result.options.time_basis != "paper"
        or rate <= 0
    ):
        return []
    stream_s = result.data_bytes / rate
    if result.time_s >= stream_s * (1 - 1e-9):
        return []
    return [
        f"time_s {result.time_s:.4g} s is the paper's time basis, T_NDP + T_CPU, which "
        f"does not time the SSDs or the link: at the Eq. (1) performance "
        f"({result.pipeline.bottleneck}-bound) the data takes {stream_s:.4g} s; "
        "--time-basis pipeline or staged times it (docs/planning.md)"
    ]


def bitstream_declared(spec: Platform, opts: Options, given: str) -> None:
    """-o reconfiguration=include (R15) charges loading the cells' bitstream, which the
    platform must describe: said of the file `--platform` gave and its field, before any
    work (the model's refusal named the platform only, 'norc-4ch' under --channels 4)."""
    if not spec.is_in_storage or spec.engines is None or opts.reconfiguration != "include":
        return
    if spec.engines.reconfiguration is None:
        raise SpecError(
            "is not declared (bitstream, port_width, clock, power), and "
            "-o reconfiguration=include charges loading the bitstream",
            source=given if names_a_file(given) else f"platform {spec.name!r}",
            field="engines.reconfiguration",
        )


def port_cap_applies(spec: Platform, opts: Options, *, host_split: str | None = None) -> None:
    """--mux-port-cap where no SSD crosses a capped mux port would change nothing;
    `host_split` is the option that chose the host split, if one did (`--split host`)."""
    if not opts.mux_port_cap:
        return
    layer = spec.switch_layer
    if layer.port_bandwidth_bytes_per_s is None:
        why = f"platform {spec.name!r} declares no switch_layer.port_bandwidth to cap at"
    elif layer.module_size(spec.devices) == 1:
        why = f"switch layer {layer.scheme} on {spec.name!r} routes no SSD through a mux port"
    elif host_split:
        why = f"under {host_split} no data passes the switch layer to the engines"
    else:
        return
    raise SpecError(f"changes nothing: {why}", source="command line", field="--mux-port-cap")


def estimate_table(e: Estimate) -> Table:
    rows = [{"quantity": k, "value": v} for k, v in e.as_dict().items()]
    return Table(
        "estimate",
        f"Estimate — {e.app} on {e.platform} ({e.config.split} split)",
        [Column("quantity", "quantity", None), Column("value", "value", 4)],
        rows,
        note=f"bandwidths in GB/s with GB = {e.options.gb:.0f} bytes",
    )


def _configuration_with(spec: Platform, engines: int) -> Configuration:
    """The configuration with `engines` engines (or cells, in an SSD) on; an impossible count
    is an error naming --engines."""
    try:
        if spec.is_in_storage:
            return reduced_cells_config(group_channels(spec.channels, engines))
        k = spec.switch_layer.module_size(spec.devices)
        return configuration_of(activate(spec.devices, k, engines), spec.devices)
    except ModelError as exc:
        raise SpecError(str(exc), source=COMMAND_LINE, field="--engines") from None


def plan_cmd(
    platform: PlatformOpt,
    app: AppOpt,
    profiles: ProfilesOpt = None,
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
        float | None,
        typer.Option(
            "--tolerance",
            help="With --optimal: accept configurations this fraction slower than "
            "the best (0.05 = 5%; default 0).",
            parser=real_arg,
            show_default=False,
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
    channels: ChannelsOpt = None,
    interface: InterfaceOpt = None,
    cell_clock_mhz: CellClockOpt = None,
    policy: Annotated[
        str | None,
        typer.Option(
            "--policy",
            help="In-storage: host (match the host interface), power (stay under "
            "--power-budget) or both; default host, or both with a budget.",
        ),
    ] = None,
    power_budget: Annotated[
        str | None,
        typer.Option("--power-budget", help="In-storage: the SSD's power budget, e.g. '3 W'."),
    ] = None,
    fit: Annotated[
        str | None,
        typer.Option(
            "--fit", help="In-storage: model (regress the model; default) or paper (Eqs. 13-14)."
        ),
    ] = None,
    channel_rounding: Annotated[
        str | None,
        typer.Option(
            "--channel-rounding",
            help="In-storage, R8: search (default: fewest cells with no loss / most channels "
            "within budget, by the model), floor (the paper), ceil or nearest.",
        ),
    ] = None,
    grouping: Annotated[
        str | None,
        typer.Option(
            "--grouping", help="In-storage, R9: balanced (default), ceil or floor groups."
        ),
    ] = None,
    time_model: Annotated[
        str | None,
        typer.Option(
            "--time-model",
            help="In-storage, R10: reduced_cells (all channels read) or channels_off; "
            "default per policy (host: reduced_cells, power: channels_off).",
        ),
    ] = None,
    option: ModelOptionOpt = None,
    fmt: FormatOption = Format.table,
) -> None:
    """Choose how many engines or channels to power on, and report the energy saved.

    In an SSD (RISP) the plan is channels and cells; in a server (RANS/RFNS), engines."""
    with user_errors():
        if tolerance is not None:
            check_fraction("--tolerance", tolerance, "0.05 = 5% slower than the best")
        spec = platform_flag(platform)
        mapped = note_mapped_elsewhere(profiles, [(platform, spec)])
        spec = in_storage_variant(spec, channels, interface, cell_clock_mhz)
        base = family_defaults(spec)
        if spec.is_in_storage:
            base = base.with_(host_stage="with_host_stage")
        # --optimal without engines plans the host split alone (without it, an error below)
        hosted = optimal and not spec.is_in_storage and spec.engines is not None
        runs = spec.is_in_storage or (optimal and not hosted)  # else: an error below
        unread = unread_without_engines(spec, None) if runs else []
        opts = build_options(base, locals(), unread_options(spec), *unread)
        profile = profile_for(spec, app, profiles, platform)
        if tolerance is not None and spec.is_in_storage:  # "add --optimal" sent it in a circle
            raise SpecError(
                "applies to the --optimal search of NDP servers; in-storage plans use --policy",
                source=COMMAND_LINE,
                field="--tolerance",
            )
        if tolerance is not None and not optimal:  # even 0: it says --optimal was meant
            raise SpecError(
                "applies to the --optimal search; add --optimal",
                source=COMMAND_LINE,
                field="--tolerance",
            )
        if spec.is_in_storage:
            if spec.engines is None:
                raise SpecError(
                    f"{spec.name!r} has no processing cells to plan "
                    "(engines.placement = 'channel'); plan on risp-64ch or add [engines]",
                    source=COMMAND_LINE,
                    field="--platform",
                )
            if optimal:
                raise SpecError(
                    "is for NDP servers; in-storage plans use --policy",
                    source=COMMAND_LINE,
                    field="--optimal",
                )
            if scheme is not None:
                raise SpecError(
                    "is for NDP servers; an SSD groups channels itself",
                    source=COMMAND_LINE,
                    field="--scheme",
                )
            bitstream_declared(spec, opts, platform)
            budget = None if power_budget is None else _power(power_budget)
            chosen_policy = choice("--policy", policy or ("both" if budget else "host"), Policy)
            chosen_grouping = choice("--grouping", grouping or "balanced", Grouping)
            chosen_model = (
                None if time_model is None else choice("--time-model", time_model, TimeModel)
            )
            _grouping_is_read(grouping, chosen_policy, chosen_model)
            try:
                result = plan_channels(
                    spec,
                    profile,
                    opts,
                    policy=chosen_policy,
                    budget_w=budget,
                    fit=choice("--fit", fit or "model", FitSource),
                    rounding=choice(
                        "--channel-rounding", channel_rounding or "search", ChannelRounding
                    ),
                    grouping=chosen_grouping,
                    time_model=chosen_model,
                )
            except PlanInputError as exc:
                raise _plan_input_error(
                    exc, spec, platform, channels_given=channels is not None
                ) from None
        else:
            _no_channel_flags(
                spec.name,
                policy=policy,
                power_budget=power_budget,
                fit=fit,
                channel_rounding=channel_rounding,
                grouping=grouping,
                time_model=time_model,
            )
            if spec.engines is None and not optimal:
                # --optimal plans the host split, which needs the profile's host-only rate
                hint = (
                    "try --optimal"
                    if profile.host_only_bytes_per_s is not None
                    else f"nor can profile {profile.app!r} run without them (it has no host_only)"
                )
                raise ModelError(
                    f"{platform_where(spec, 'engines')}platform {spec.name!r} has no engines "
                    f"to plan; {hint}"
                )
            port_cap_applies(spec if scheme is None else _rewired(spec, scheme), opts)
            if optimal and spec.engines is not None and profile.host_only_bytes_per_s is None:
                # The host split left out of the search without a word: its table simply
                # ended at the engine counts.
                note = (
                    f"the host split is not among the candidates: the profile of {app!r} has "
                    "no host-only rate (host_only)"
                )
                stderr().print(f"note: {note}", markup=False, highlight=False)
                mapped.append(note)
            result = (
                optimise(spec, profile, opts, tolerance=tolerance or 0.0, scheme=scheme)
                if optimal
                else plan(spec, profile, opts, scheme=scheme)
            )
    document = {
        "plan": result.as_dict(),
        "candidates": [c.as_dict() for c in result.candidates],
        "units": opts.units,  # which GB the candidates' and the fit's *_gb_per_s use
        "notes": mapped,  # the plan's own are in "plan"
    }
    if fmt is Format.json:
        write_out(to_json(document))
        return
    if fmt is Format.csv:
        # the JSON's tables and values: numbers in the units their keys name, not display text
        values = plan_values_table(result)
        values.rows.append({"quantity": "units", "value": opts.units})  # as the JSON's
        emit([values, *candidate_values_tables(result)], fmt)
    else:
        emit([plan_table(result), *([candidates_table(result)] if result.candidates else [])], fmt)
    print_notes(result.planned.notes, fmt)


def _rewired(spec: Platform, scheme: str) -> Platform:
    """`spec` under --scheme; a scheme the platform cannot take is an error naming the flag."""
    try:
        return spec.with_scheme(scheme)
    except SpecError as exc:
        raise SpecError(exc.detail, source="command line", field="--scheme") from None


_PLAN_FLAGS = {
    "policy": "--policy",
    "budget_w": "--power-budget",
    "fit": "--fit",
    "rounding": "--channel-rounding",
    "grouping": "--grouping",
    "time_model": "--time-model",
}


def _plan_input_error(
    exc: PlanInputError, spec: Platform, given: str, *, channels_given: bool
) -> SpecError:
    """The planner's refusal, naming the flag (or, for a platform file's own channel
    count, the file as `--platform` gave it and its field)."""
    if exc.parameter == "channels":
        if channels_given:
            return SpecError(str(exc), source=COMMAND_LINE, field="--channels")
        source = given if names_a_file(given) else f"platform {spec.name!r}"
        return SpecError(str(exc), source=source, field="storage.channels")
    return SpecError(str(exc), source=COMMAND_LINE, field=_PLAN_FLAGS[exc.parameter])


def _grouping_is_read(grouping: str | None, policy: str, time_model: str | None) -> None:
    """--grouping groups the channels that share a cell under reduced_cells; under
    channels_off (given, or the power policy's default) each powered channel keeps its own
    cell, so the flag was accepted and ignored (the JSON's grouping said null)."""
    if grouping is None:
        return
    off = time_model == "channels_off" or (time_model is None and policy == "power")
    if off:
        how = "--time-model channels_off" if time_model else "--policy power (channels_off)"
        raise SpecError(
            f"changes nothing: under {how} each powered channel has its own cell, so no "
            "channels are grouped; --grouping applies with --time-model reduced_cells",
            source=COMMAND_LINE,
            field="--grouping",
        )


def _no_channel_flags(platform: str, **given: str | None) -> None:
    """Channel-plan flags on an NDP server would be ignored: say so instead."""
    used = [f"--{name.replace('_', '-')}" for name, value in given.items() if value is not None]
    if used:
        raise SpecError(
            f"for in-storage platforms (channel plans, e.g. risp-64ch); "
            f"{platform!r} is an NDP server, planned by engines",
            source=COMMAND_LINE,
            field=", ".join(used),
        )


def _power(text: str) -> float:
    try:
        budget_w = parse(text, Kind.POWER)
    except UnitError as exc:
        raise SpecError(str(exc), source="command line", field="--power-budget") from None
    if budget_w <= 0:
        raise SpecError(
            f"the power budget must be positive, got {text!r}",
            source="command line",
            field="--power-budget",
        )
    return budget_w


def plan_table(p: Plan) -> Table:
    if p.scheme == "channels":
        return channel_plan_table(p)
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
            "value": f"{d['max_shards_per_engine']} ({cell(d['load_imbalance'], 2)}x)",
        },
        {
            "item": "performance (GB/s) baseline → plan",
            "value": _change(
                p.baseline.performance_bytes_per_s / gb, p.planned.performance_bytes_per_s / gb, 2
            ),
        },
        {
            "item": "energy (J) baseline → plan",
            "value": _change(d["baseline_energy_j"], d["planned_energy_j"], 2),
        },
        {"item": "gross saving (J)", "value": cell(d["gross_saving_j"], 4)},
        {"item": "switch layer energy (J)", "value": cell(d["switch_energy_j"], 5)},
        {"item": "net saving (J)", "value": cell(d["net_saving_j"], 4)},
        {"item": "improvement (%)", "value": cell(d["improvement_pct"], 2)},
    ]
    return Table(
        "plan",
        f"Plan — {p.app} on {p.platform}",
        [Column("item", "", None), Column("value", "", None)],
        rows,
        note="baseline: full gear on the same server without a switch layer",
    )


def channel_plan_table(p: Plan) -> Table:
    d = p.as_dict()
    gb = p.planned.options.gb
    budget = d["power_budget_w"]
    rows = [
        {"item": "policy (binding)", "value": f"{d['policy']} ({d['binding_policy']})"},
        {"item": "fit / rounding", "value": f"{d['fit']} / {d['rounding']}"},
        {
            "item": "power fit (W)",
            "value": f"{cell(d['power_fit_w'][0], 4)} + {cell(d['power_fit_w'][1], 4)} n",
        },
        {
            "item": "bandwidth fit (GB/s)",
            "value": f"{cell(d['bandwidth_fit_gb_per_s_per_channel'], 4)} n",
        },
        *[
            {"item": f"n_{pol} exact / floor / ceil / nearest / search", "value": _ns(d, pol)}
            for pol in ("power", "host")
            if f"n_{pol}_exact" in d
        ],
        {"item": "time model", "value": d["time_model"]},
        {"item": "channels on / total", "value": f"{d['channels_on']} / {d['engines_total']}"},
        {"item": "cells on", "value": str(d["cells_on"])},
        {"item": "cell groups", "value": cell_groups(d["route"], d["active_engines"])},
        {
            "item": "performance (GB/s) all on → plan",
            "value": _change(
                p.baseline.performance_bytes_per_s / gb, p.planned.performance_bytes_per_s / gb, 3
            )
            + f" (loss {cell(d['performance_loss_pct'], 2)}%)",
        },
        {
            "item": "power (W) all on → plan",
            "value": _change(d["baseline_power_w"], d["planned_power_w"], 3)
            + ("" if budget is None else f" (budget {budget:g})"),
        },
        {
            "item": "energy (J) all on → plan",
            "value": _change(d["baseline_energy_j"], d["planned_energy_j"], 4),
        },
        {"item": "saving (%)", "value": cell(d["improvement_pct"], 2)},
    ]
    return Table(
        "plan",
        f"Channel plan — {p.app} on {p.platform}",
        [Column("item", "", None), Column("value", "", None)],
        rows,
        note="baseline: every channel and cell on (reconfigurability disabled)",
    )


def _change(before: float, after: float, digits: int) -> str:
    return f"{cell(before, digits)} → {cell(after, digits)}"


def cell_groups(route: list[int], active: list[int]) -> str:
    """Which channels each active cell serves, e.g. '4 cells × 4 channels (0-15), 16 cells ×
    3 channels (16-63)': runs of cells serving equally many consecutive channels, each cell
    on its group's first channel (§7.4). Any other layout is listed cell by cell, as
    'cell:channel,channel,…'."""
    groups: dict[int, list[int]] = {}
    for channel, cell_id in enumerate(route):
        groups.setdefault(cell_id, []).append(channel)
    served = [(c, g) for c, g in groups.items() if c in set(active)]
    channels = [ch for _, g in served for ch in g]
    if channels != list(range(len(channels))) or any(c != g[0] for c, g in served):
        return " ".join(f"{c}:{','.join(map(str, g))}" for c, g in served)
    runs: list[list[int]] = []  # [cells, channels each, first channel]
    for c, g in served:
        if runs and runs[-1][1] == len(g):
            runs[-1][0] += 1
        else:
            runs.append([1, len(g), c])
    return ", ".join(
        f"{_count(n, 'cell')} × {_count(k, 'channel')} ({_span(first, first + n * k - 1)})"
        for n, k, first in runs
    )


def _count(n: int, noun: str) -> str:
    return f"{n} {noun}" if n == 1 else f"{n} {noun}s"


def _span(first: int, last: int) -> str:
    return str(first) if first == last else f"{first}-{last}"


def _ns(d: dict[str, Any], policy: str) -> str:
    exact = d[f"n_{policy}_exact"]
    rest = " / ".join(str(d[f"n_{policy}_{how}"]) for how in ("floor", "ceil", "nearest", "search"))
    return f"{cell(exact, 2)} / {rest}"


def plan_values_table(p: Plan) -> Table:
    """The JSON's `plan` object as rows of key and machine value (the notes go to stderr)."""
    rows = [{"quantity": k, "value": v} for k, v in p.as_dict().items() if k != "notes"]
    return Table(
        "plan",
        f"Plan — {p.app} on {p.platform}",
        [Column("quantity", "quantity", None), Column("value", "value", None)],
        rows,
    )


def candidate_values_tables(p: Plan) -> list[Table]:
    """The JSON's `candidates`, each a whole estimate (none unless --optimal)."""
    if not p.candidates:
        return []
    rows = [c.as_dict() for c in p.candidates]
    keys = list(dict.fromkeys(key for row in rows for key in row))
    columns = [Column(key, key, None) for key in keys]
    return [Table("candidates", "Configurations considered", columns, rows)]


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
