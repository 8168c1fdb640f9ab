"""`ndpkit simulate` and `ndpkit sweep`: the discrete-event simulator on the command line.

`ndpkit simulate -p PLATFORM -a APP` simulates an NDP server (RANS/RFNS and kin);
`ndpkit simulate nascent2 …` (`cli.simulate_nascent2`) the NASCENT2 SmartSSDs. `simulate` is
a group that runs its own options when no subcommand follows them."""

from __future__ import annotations

import contextlib
import csv
import io
import os
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Annotated, Any, Literal

import typer
from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn

from ndpkit.cli.common import (
    COMMAND_LINE,
    EnergyFormOpt,
    Format,
    FormatOption,
    MuxCapOpt,
    PlacementOpt,
    SwitchPowerOpt,
    SwitchTimeOpt,
    UnitsOpt,
    build_options,
    check_output_file,
    choice,
    comma_list,
    emit,
    platform_flag,
    print_notes,
    real_arg,
    size_flag,
    stderr,
    user_errors,
    whole_arg,
    write_out,
)
from ndpkit.cli.model import (
    ENGINE_ONLY,
    ProfilesOpt,
    family_defaults,
    note_mapped_elsewhere,
    port_cap_applies,
    profile_for,
    unread_options,
)
from ndpkit.cli.simulate_nascent2 import nascent2_cmd
from ndpkit.errors import ModelError, SpecError
from ndpkit.evaluate import load_platforms
from ndpkit.files import write_atomic
from ndpkit.hw import Platform
from ndpkit.hw.loader import names_a_file, platform_files
from ndpkit.model import FULL_GEAR, HOST_ONLY, Configuration, Options
from ndpkit.model.options import RISP_ONLY
from ndpkit.numerals import signed_whole
from ndpkit.plan import configuration_of, plan
from ndpkit.profile import Profile
from ndpkit.report import Column, Table
from ndpkit.sim import SimOptions, Simulation, simulate
from ndpkit.sim.options import MIB, EnginePowerOff, HostMode
from ndpkit.sim.simulation import TooManyChunksError, check_chunks, host_mode_after_note
from ndpkit.sim.spec import host_reads_its_data, is_host_split
from ndpkit.sim.sweep import configuration, grid, sweep
from ndpkit.units import Kind, format_si

PlanName = Literal["full", "planned", "host"]

SizeOpt = Annotated[
    str | None,
    typer.Option("--size", help="Data set size D, e.g. '130 GiB' (default: the profile's)."),
]
ChunkOpt = Annotated[str, typer.Option("--chunk", help="Chunk size, e.g. '1 MiB'.")]
BufferOpt = Annotated[
    int,
    typer.Option(
        "--buffer",
        help="Staging slots on each side of an engine, and each SSD's (chunks).",
        parser=whole_arg,
    ),
]
HostModeOpt = Annotated[
    str,
    typer.Option(
        "--host-mode",
        help="stream (host part per partial), after (waits for all, as k-NN's top-k) or auto. "
        "A host split whose host-only rate is the papers' (a run reading its data) streams.",
    ),
]
PowerOffOpt = Annotated[
    str,
    typer.Option(
        "--engine-power-off",
        help="end (on to the end), phase (off when the last partial lands), done (each off "
        "when its own work is delivered) or auto.",
    ),
]
CvOpt = Annotated[
    float,
    typer.Option(
        "--cv",
        help="Jitter of read and compute times: their coefficient of variation, 0 to "
        "1/sqrt(3) (about 0.577). The jitter is uniform with mean 1, so a larger one would "
        "make some times negative.",
        parser=real_arg,
    ),
]
SeedOpt = Annotated[int, typer.Option("--seed", help="Seed of the jitter.", parser=whole_arg)]


# Optional here so that `ndpkit simulate nascent2` needs neither; required without it.
# Their help names only what the simulator runs: `estimate`'s listed the RISP presets and
# apps, which `simulate` and `sweep` refuse (in-storage platforms are not simulated).
_PlatformOpt = Annotated[
    str | None,
    typer.Option(
        "--platform",
        "-p",
        help="An NDP-server preset (cns, sans, sfns, rans, rfns) or a TOML file; in-storage "
        "platforms (risp-baseline, risp-64ch) are not simulated.",
    ),
]
_AppOpt = Annotated[
    str | None,
    typer.Option(
        "--app",
        "-a",
        help="Application: lc, he, fft2d, knn2, knn6, knn8 (rans-rfns), or one in --profiles.",
    ),
]
_ProfilesOpt = Annotated[
    str | None,
    typer.Option(
        "--profiles",
        parser=ProfilesOpt.__metadata__[0].parser,
        help="A profile set: shipped name (rans-rfns, risp) or a TOML/JSON file (default: "
        "rans-rfns).",
    ),
]


_BASIS_SET = (
    frozenset({"time_basis"}),
    "the simulator compares with the model at the time basis its host mode shares (staged "
    "with the host part after the device part, else pipeline), whatever is given",
)
_WALL_TIMES_SET = (
    frozenset({"wall_times"}),
    "the simulator times each engine from its rate, and compares with the model on the "
    "same rates; the paper's printed NDP times (wall_times=printed) are `estimate`'s only",
)
"""The model options a simulation sets itself."""
_SAVINGS_SET = (
    frozenset({"rounding", "improvement"}),
    "is a convention of reported energy savings (estimate, plan); the simulator reports "
    "neither a saving nor rounded energies, so it does not apply here",
)
_PLANNER_NOTE = "rounds the bandwidths of the planner's Eq. (2)"
_PLANNER_SET = (
    frozenset({"eq_rounding"}),
    f"{_PLANNER_NOTE}; it applies with --plan planned only",
)
_SWEEP_PLANNER_SET = (
    frozenset({"eq_rounding"}),
    f"{_PLANNER_NOTE}, which a sweep does not run (it takes its engine counts from --engines)",
)
"""Model options the simulator does not read: given, the output would record them as used."""


_SIMULATOR_REFUSES = frozenset().union(
    RISP_ONLY, *(names for names, _ in (_BASIS_SET, _WALL_TIMES_SET, _SAVINGS_SET))
)
"""The model options neither `simulate` nor `sweep` takes: RISP's (the simulator models NDP
servers) and the three sets above; eq_rounding only `simulate --plan planned` takes."""


def _option_help(*also: str) -> str:
    """`-o`'s help: the options the simulator takes, from the sets it refuses (it pointed to
    docs/reproducing-risp.md, whose options it refuses)."""
    refused = _SIMULATOR_REFUSES | _PLANNER_SET[0]
    taken = ", ".join(n for n in Options().as_dict() if n not in refused)
    return (
        f"A model convention as KEY=VALUE, repeatable (e.g. -o placement=static_shards): "
        f"{taken}{''.join(also)}; see docs/simulator.md (which model the simulator is "
        "compared with) and docs/reproducing-rans-rfns.md (which option reproduces what)."
    )


_SimOptionOpt = Annotated[
    list[str] | None,
    typer.Option("--option", "-o", help=_option_help(", and eq_rounding with --plan planned")),
]
_SweepOptionOpt = Annotated[list[str] | None, typer.Option("--option", "-o", help=_option_help())]


def simulate_cmd(
    ctx: typer.Context,
    platform: _PlatformOpt = None,
    app: _AppOpt = None,
    profiles: _ProfilesOpt = None,
    plan_name: Annotated[
        str,
        typer.Option(
            "--plan",
            help="full (every engine on), planned (the reconfiguration planner's choice, "
            "Eqs. 2-3) or host (no engines: the whole kernel on the host).",
        ),
    ] = "full",
    engines: Annotated[
        int | None,
        typer.Option(
            "--engines",
            "-n",
            help="Engines on, mapped by the switch layer (§6.3).",
            parser=whole_arg,
        ),
    ] = None,
    size: SizeOpt = None,
    chunk: ChunkOpt = "1 MiB",
    buffer: BufferOpt = 2,
    host_mode: HostModeOpt = "auto",
    engine_power_off: PowerOffOpt = "auto",
    cv: CvOpt = 0.0,
    seed: SeedOpt = 0,
    trace: Annotated[
        Path | None,
        typer.Option("--trace", help="Write a Chrome trace (open it in https://ui.perfetto.dev)."),
    ] = None,
    energy_form: EnergyFormOpt = None,
    placement: PlacementOpt = None,
    units: UnitsOpt = None,
    switch_power: SwitchPowerOpt = None,
    switch_time: SwitchTimeOpt = None,
    mux_port_cap: MuxCapOpt = None,
    option: _SimOptionOpt = None,
    fmt: FormatOption = Format.table,
) -> None:
    """Simulate one application on one platform, chunk by chunk, and compare with the model.

    Shows what Eq. 1 cannot: pipeline fill and drain, a shared uplink, finite buffers,
    an engine serving two SSDs under mux-2, port caps, and engine power states. Without
    --profiles it uses the paper's published single-engine figures for the platform.
    `ndpkit simulate nascent2 --help`: the NASCENT2 SmartSSDs instead.
    """
    with user_errors():
        if ctx.invoked_subcommand is not None:
            _nothing_before(ctx)
            return
        platform, app = _required("--platform", platform), _required("--app", app)
        spec = platform_flag(platform)
        mapped = note_mapped_elsewhere(profiles, [(platform, spec)])
        unused = [_SAVINGS_SET] + [_PLANNER_SET] * (plan_name != "planned")
        if not spec.is_in_storage and (spec.engines is None or plan_name == "host"):
            unused.append((ENGINE_ONLY, f"changes nothing: {_no_engine_runs(spec)}"))
        opts = build_options(
            family_defaults(spec),
            locals(),
            unread_options(spec),
            _BASIS_SET,
            _WALL_TIMES_SET,
            *unused,
        )
        port_cap_applies(spec, opts, host_split="--plan host" if plan_name == "host" else None)
        profile = profile_for(spec, app, profiles, platform)
        sim = sim_options(size, chunk, buffer, host_mode, engine_power_off, cv, seed)
        sim = sim.with_(trace=trace is not None)
        if trace is not None:
            check_output_file("--trace", trace)
            _not_an_input("--trace", trace, [("--platform", platform), ("--profiles", profiles)])
        config = chosen_configuration(
            spec, profile, opts, choice("--plan", plan_name, PlanName), engines
        )
        if is_host_split(spec, config):
            _engine_flags_apply(ctx, _no_engine_runs(spec))
        try:
            result = simulate(spec, profile, config, opts, sim)
        except TooManyChunksError as exc:
            field = "--chunk" if size is None else "--chunk, --size"
            raise SpecError(str(exc), source=COMMAND_LINE, field=field) from None
        # The library's note names SimOptions' field; this user gave the flag, as a sweep's
        # note says.
        field_note = host_mode_after_note("host_mode")
        result.notes[:] = [
            host_mode_after_note("--host-mode") if note == field_note else note
            for note in result.notes
        ]
        if trace is not None:
            assert result.trace_json is not None
            write_atomic(trace, result.trace_json)
    # Which GB and MB the *_gb_per_s and MB/J figures use, as `estimate -f json` says it:
    # the table's last line says it, the JSON had no word of it (--units decimal).
    document = {"simulation": result.as_dict(), "units": result.options.units, "notes": mapped}
    table = simulation_table(result)
    if fmt is Format.csv:  # the table's note, which says which GB, is not in a CSV
        units = result.options.units
        table.rows.append({"quantity": "units", "simulated": units, "model": units})
    emit([table], fmt, document)
    print_notes(result.notes, fmt)
    if fmt is not Format.json and trace is not None:
        stderr().print(f"trace: {trace} (open in https://ui.perfetto.dev)", highlight=False)


def _no_engine_runs(spec: Platform) -> str:
    """Why a simulation has no engine on (the platform has none, or --plan host), for the
    flags of engines it refuses: `simulate -p cns --energy-form B` or `--plan host
    --switch-power per_element` ran as without them, recorded as used."""
    if spec.engines is None:
        return f"platform {spec.name!r} has no engines"
    return "under --plan host no engine runs"


def _not_an_input(flag: str, path: Path, inputs: list[tuple[str, str | None]]) -> None:
    """Refuse an output file that is one the command reads (`inputs`: each flag and what it
    was given, a shipped name or a file): `simulate -p my.toml --trace my.toml` replaced the
    platform file with the trace, which then failed to load as "malformed TOML"; so would
    a profile set measured by a long `ndpkit evaluate` have been. A platform file is read
    with the files up its `extends` chain (`--trace parent.toml` replaced one as well)."""
    for input_flag, given in inputs:
        if given is None or not names_a_file(given, (".toml", ".json")):
            continue  # a preset or a shipped profile set: no file of the user's
        files = platform_files(given) if input_flag.startswith("--platform") else [given]
        for read in files:
            with contextlib.suppress(OSError):  # a missing output replaces nothing
                if os.path.samefile(path, read):
                    what = f"the file {input_flag} reads"
                    if read != files[0]:
                        what = f"a file {input_flag} {given} extends"
                    raise SpecError(
                        f"{str(path)!r} is {what}, and the output would replace it; give "
                        "another file name",
                        source=COMMAND_LINE,
                        field=flag,
                    )


ENGINE_FLAGS = {"engine_power_off": "--engine-power-off"}
"""The simulator's flags that act on engines alone (their power-off), by parameter name.
Not --buffer: a run without engines still stages each SSD's reads in that many slots, and
with --cv a single slot makes it slower (`simulate -p cns --cv 0.5 --buffer 1`)."""


def _engine_flags_apply(ctx: typer.Context, why: str) -> None:
    """Refuse --engine-power-off given for a run without engines (`why`): it would change
    nothing, and was taken without a word (a sweep's rows recorded the policy as used)."""
    for name, flag in ENGINE_FLAGS.items():
        source = ctx.get_parameter_source(name)
        if source is not None and source.name == "COMMANDLINE":
            raise SpecError(f"changes nothing: {why}", source=COMMAND_LINE, field=flag)


def _required(flag: str, value: str | None) -> str:
    if value is None:
        raise SpecError(
            "required (or `ndpkit simulate nascent2 …`)", source="command line", field=flag
        )
    return value


def _nothing_before(ctx: typer.Context) -> None:
    """This command's options do not apply to a subcommand: an error, not silently ignored."""
    for param in ctx.command.params:
        source = ctx.get_parameter_source(param.name or "")
        if source is not None and source.name == "COMMANDLINE":
            raise SpecError(
                f"applies to `ndpkit simulate` without {ctx.invoked_subcommand!r}; give the "
                f"subcommand's own flags after it",
                source="command line",
                field=param.opts[0],
            )


FLAG_OF_OPTION = {
    "chunk_bytes": "--chunk",
    "buffer_chunks": "--buffer",
    "service_cv": "--cv",
    "seed": "--seed",
    "data_bytes": "--size",
}
"""The command-line flag that sets each `SimOptions` field, to blame the flag in errors."""


def sim_options(
    size: str | None,
    chunk: str | None,
    buffer: int,
    host_mode: str,
    engine_power_off: str,
    cv: float,
    seed: int,
) -> SimOptions:
    """The simulator's options from the flags (`chunk` None: the default; a sweep gives each
    point its own)."""
    try:
        return SimOptions(
            chunk_bytes=MIB if chunk is None else size_flag("--chunk", chunk),
            buffer_chunks=buffer,
            host_mode=choice("--host-mode", host_mode, HostMode),
            engine_power_off=choice("--engine-power-off", engine_power_off, EnginePowerOff),
            service_cv=cv,
            seed=seed,
            data_bytes=None if size is None else size_flag("--size", size),
        )
    except SpecError as exc:
        flag = FLAG_OF_OPTION.get(exc.field or "")
        if flag is None:
            raise
        raise SpecError(exc.detail, source="command line", field=flag) from None


def chosen_configuration(
    platform: Platform, profile: Profile, options: Options, plan_name: str, engines: int | None
) -> Configuration:
    if engines is not None:
        if plan_name != "full":
            raise SpecError(
                "give --plan or --engines, not both", source=COMMAND_LINE, field="--engines"
            )
        if platform.engines is None:
            raise SpecError(
                f"platform {platform.name!r} has no engines", source=COMMAND_LINE, field="--engines"
            )
        return _configuration(platform, engines)
    if plan_name == "host":
        return HOST_ONLY
    if plan_name == "planned":
        if platform.engines is None:  # blamed on the flag, as --engines is above
            raise SpecError(
                f"platform {platform.name!r} has no engines to plan; without --plan (or with "
                "--plan host) its host runs the whole kernel",
                source=COMMAND_LINE,
                field="--plan",
            )
        mapping = plan(platform, profile, options).mapping
        assert mapping is not None
        return configuration_of(mapping, platform.devices)
    # Without engines (CNS) the host runs the whole kernel, as the model says: not a device
    # split, which the table's title would then name.
    return FULL_GEAR if platform.engines is not None else HOST_ONLY


def _configuration(platform: Platform, engines: int | None) -> Configuration:
    """The switch layer's mapping for `engines`, an impossible count blamed on --engines."""
    try:
        return configuration(platform, engines)
    except ModelError as exc:
        raise SpecError(str(exc), source="command line", field="--engines") from None


def simulation_table(s: Simulation) -> Table:
    gb = s.options.gb
    rows: list[dict[str, Any]] = [
        {"quantity": "time (s)", "simulated": s.time_s, "model": s.model.time_s},
        {"quantity": "energy (J)", "simulated": s.energy_j, "model": s.model.energy_j},
        {"quantity": "MB/J", "simulated": s.ee_mb_per_j, "model": s.model.ee_mb_per_j},
        {
            "quantity": "performance (GB/s)",
            "simulated": s.performance_bytes_per_s / gb,
            "model": s.data_bytes / s.model.time_s / gb if s.model.time_s else None,
        },
        {"quantity": "bottleneck", "simulated": s.bottleneck, "model": s.model.bottleneck},
        {"quantity": "device side done (s)", "simulated": s.t_ndp_s, "model": None},
        {"quantity": "host active (s)", "simulated": s.t_cpu_s, "model": s.model.t_cpu_s},
    ]
    rows += [
        {"quantity": f"{name} utilisation", "simulated": u, "model": None}
        for name, u in s.utilisation.items()
    ]
    rows += [
        {
            "quantity": f"energy {name} (J)",
            "simulated": j,
            "model": s.model.energy.by_component_j.get(name),
        }
        for name, j in s.energy.by_component_j.items()
    ]
    active = sum(1 for e in s.engines if e["active"])
    rows.append(
        {"quantity": "engines on", "simulated": active, "model": s.model.pipeline.engines_active}
    )
    rows.append(
        {"quantity": "chunks / events", "simulated": f"{s.chunks} / {s.events}", "model": None}
    )
    return Table(
        "simulation",
        f"Simulation — {s.app} on {s.platform} ({s.config.split} split, host part "
        f"{s.host_mode}); model time basis {s.model.options.time_basis}",
        [
            Column("quantity", "quantity", None),
            Column("simulated", "simulated", 4),
            Column("model", "model", 4),
        ],
        rows,
        note=f"time {s.time_difference * 100:+.2f} %, energy {s.energy_difference * 100:+.2f} % "
        f"vs the model; GB = {gb:.0f} bytes",
    )


simulate_app = typer.Typer(
    invoke_without_command=True,
    no_args_is_help=False,
    context_settings={"help_option_names": ["-h", "--help"]},
)
simulate_app.callback()(simulate_cmd)
simulate_app.command("nascent2")(nascent2_cmd)


def sweep_cmd(
    ctx: typer.Context,
    platforms: Annotated[
        str, typer.Option("--platforms", help="Comma-separated presets or TOML files.")
    ] = "rans,rfns",
    apps: Annotated[str, typer.Option("--apps", help="Comma-separated apps.")] = "he,knn8",
    engines: Annotated[
        str | None,
        typer.Option(
            "--engines",
            help="Engine counts: '18,27,36' or a range '18:36:2' (default: every count the "
            "switch layer can route).",
        ),
    ] = None,
    chunks: Annotated[
        str, typer.Option("--chunks", help="Comma-separated chunk sizes.")
    ] = "256 KiB,1 MiB,4 MiB",
    out: Annotated[
        Path | None,
        typer.Option("--out", help="Write the table to a .csv or .parquet file."),
    ] = None,
    workers: Annotated[
        int | None,
        typer.Option(
            "--workers",
            help="Threads (default: one per CPU this process may run on, as taskset or a "
            "cpuset allows).",
            parser=whole_arg,
        ),
    ] = None,
    profiles: _ProfilesOpt = None,
    size: SizeOpt = None,
    placement: PlacementOpt = None,
    mux_port_cap: MuxCapOpt = None,
    buffer: BufferOpt = 2,
    host_mode: HostModeOpt = "auto",
    engine_power_off: PowerOffOpt = "auto",
    cv: CvOpt = 0.0,
    seed: SeedOpt = 0,
    option: _SweepOptionOpt = None,
    fmt: FormatOption = Format.table,
) -> None:
    """Simulate a grid (platforms x apps x engine counts x chunk sizes) on every core.

    --buffer, --host-mode, --engine-power-off, --cv and --seed apply to every point, as in
    `ndpkit simulate`."""
    with user_errors():
        platform_names = comma_list("--platforms", platforms)
        _each_once("--platforms", platform_names)  # before loading any: a list may be long
        found = load_platforms(platform_names, source=COMMAND_LINE, flag="--platforms")
        specs = list(found.values())
        mapped = note_mapped_elsewhere(profiles, list(zip(platform_names, specs, strict=True)))
        if not specs:
            raise SpecError(
                "give at least one platform", source="command line", field="--platforms"
            )
        # Named: in a long list (files among presets) "in-storage platforms are not
        # swept" did not say which.
        in_storage = [a for a, p in zip(platform_names, specs, strict=True) if p.is_in_storage]
        if in_storage:
            raise SpecError(
                f"{', '.join(in_storage)} {'is' if len(in_storage) == 1 else 'are'} in-storage "
                "(cells per flash channel): the simulator models NDP servers; in-storage "
                "platforms are not swept",
                source=COMMAND_LINE,
                field="--platforms",
            )
        without = [repr(p.name) for p in specs if p.engines is None]
        have = "has" if len(without) == 1 else "have"
        no_engines = f"platform {', '.join(without)} {have} no engines"
        # a platform without engines beside others is a baseline
        engine_only = [(ENGINE_ONLY, f"changes nothing: {no_engines}")] * (
            len(without) == len(specs)
        )
        opts = build_options(
            Options(),
            locals(),
            unread_options(specs[0]),
            _BASIS_SET,
            _WALL_TIMES_SET,
            _SAVINGS_SET,
            _SWEEP_PLANNER_SET,
            *engine_only,
        )
        _port_cap_applies_somewhere(specs, opts)
        if len(without) == len(specs):
            _engine_flags_apply(ctx, no_engines)
        names = comma_list("--apps", apps)
        _each_once("--apps", names)
        chosen = [profile_for(specs[0], a, profiles, platform_names[0]) for a in names]
        counts = None if engines is None else _counts(engines)
        sizes = [size_flag("--chunks", c) for c in comma_list("--chunks", chunks)]
        if workers is not None and workers < 1:
            raise SpecError("must be at least 1", source="command line", field="--workers")
        if out is not None:
            # A directory first: "/tmp/dir/" would otherwise be told its name lacks .csv.
            check_output_file("--out", out)
            _not_an_input(
                "--out",
                out,
                [*(("--platforms", p) for p in platform_names), ("--profiles", profiles)],
            )
            if out.suffix.lower() not in (".csv", ".parquet"):
                raise SpecError(
                    f"must end in .csv or .parquet (any case), got {out.name!r}",
                    source="command line",
                    field="--out",
                )
        for flag, given in (("--apps", names), ("--chunks", sizes), ("--engines", counts)):
            if given is not None and not given:
                raise SpecError("selects nothing to simulate", source="command line", field=flag)
        _each_once("--chunks", sizes, lambda b: format_si(b, Kind.SIZE, binary=True))
        _each_once("--engines", counts or [])
        sim = sim_options(size, None, buffer, host_mode, engine_power_off, cv, seed)
        try:
            points = grid(specs, chosen, counts, sizes)
        except ModelError as exc:
            raise SpecError(str(exc), source=COMMAND_LINE, field="--engines") from None
        streamed: dict[str, None] = {}  # "platform app" where --host-mode after is not applied
        for point in points:  # fail before any work on an impossible point
            config = _configuration(point.platform, point.engines_on)
            if sim.host_mode == "after" and host_reads_its_data(
                point.platform, point.profile, config
            ):
                streamed[f"{point.platform.name} {point.profile.app}"] = None
            try:
                check_chunks(
                    point.platform,
                    point.profile,
                    config,
                    opts,
                    sim.with_(chunk_bytes=point.chunk_bytes),
                )
            except TooManyChunksError as exc:
                raise SpecError(
                    f"{point.platform.name}, {point.profile.app}: {exc}",
                    source=COMMAND_LINE,
                    field="--chunks" if size is None else "--chunks, --size",
                ) from None
        with Progress(
            TextColumn("simulating"),
            BarColumn(),
            MofNCompleteColumn(),
            TimeElapsedColumn(),
            console=stderr(),
            transient=True,
            # not in a log: rich would leave an empty line there where the bar was
            disable=len(points) < 8 or not stderr().is_terminal,
        ) as bar:
            task = bar.add_task("sweep", total=len(points))
            rows = sweep(
                points,
                opts,
                sim,
                workers=workers,
                progress=lambda done, _: bar.update(task, completed=done),
            )
        if out is not None:
            write_atomic(out, _encode(rows, out.suffix.lower()))
    # As `simulate` says it (its row's host_mode says stream).
    notes = [host_mode_after_note("--host-mode", f" to {', '.join(streamed)}")] if streamed else []
    if fmt is Format.csv:  # the columns of --out's CSV, not the table's nine
        write_out(_csv(rows))
    else:
        # units of ee_mb_per_j; the mapped-elsewhere note went to stderr at once
        document = {"sweep": rows, "units": opts.units, "notes": [*mapped, *notes]}
        emit([sweep_table(rows)], fmt, document)
    print_notes(notes, fmt)
    if out is not None and fmt is Format.table:
        noun = "row" if len(rows) == 1 else "rows"
        stderr().print(f"wrote {len(rows)} {noun} to {out}", highlight=False, markup=False)


def _each_once(flag: str, values: list[Any], show: Callable[[Any], str] = str) -> None:
    """A value given twice would only repeat its rows (`4MiB,4096 KiB` is one chunk size)."""
    seen: set[Any] = set()
    for value in values:
        if value in seen:
            raise SpecError(
                f"{show(value)} is given more than once; give each once",
                source=COMMAND_LINE,
                field=flag,
            )
        seen.add(value)


MAX_ENGINE_COUNTS = 4096
"""Engine counts one sweep takes: a range of a billion was built in full before any check."""


def _counts(text: str) -> list[int]:
    try:
        counts: Sequence[int] = (
            _range(text)
            if ":" in text
            else [_whole(p) for p in comma_list("--engines", text) or [""]]
        )
    except ValueError:
        raise SpecError(
            f"expected '18,27,36' or 'start:stop[:step]', got {text!r}",
            source=COMMAND_LINE,
            field="--engines",
        ) from None
    n = _length(counts)
    if n > MAX_ENGINE_COUNTS:
        raise SpecError(
            f"{text!r} gives {n:,} engine counts; a sweep takes at most {MAX_ENGINE_COUNTS:,}",
            source=COMMAND_LINE,
            field="--engines",
        )
    return list(counts)


def _range(text: str) -> range:
    """'start:stop[:step]', stop included; not built, so its length is known at once."""
    parts = [_whole(p) for p in text.split(":")]
    step = parts[2] if len(parts) == 3 else 1
    if len(parts) > 3 or step < 1:
        raise ValueError(text)
    return range(parts[0], parts[1] + 1, step)


def _length(counts: Sequence[int]) -> int:
    """len(), also of a range longer than len() can count (sys.maxsize)."""
    if isinstance(counts, range):
        return max(0, -((counts.start - counts.stop) // counts.step))
    return len(counts)


def _whole(text: str) -> int:
    """A whole number in ASCII digits, no '+' (int() would also take '١٨', '1_8' and '+18')."""
    digits = text.strip()
    if not signed_whole(digits) or digits.startswith("+"):
        raise ValueError(text)
    return int(digits)


def _encode(rows: list[dict[str, Any]], suffix: str) -> str | bytes:
    if suffix == ".parquet":
        import pyarrow as pa  # noqa: PLC0415 (only for Parquet output)
        import pyarrow.parquet as pq  # noqa: PLC0415

        # Rows of different platforms have different stages (CNS has no ndp): every row
        # gets every column, null where it has none, as the CSV's empty cells.
        names = _fieldnames(rows)
        columns = {}
        for name in names:
            values = [row.get(name) for row in rows]
            kind = _arrow_type(pa, name, values)
            if kind == pa.float64():  # pyarrow takes no int past int64 even for float64
                values = [None if v is None else float(v) for v in values]
            columns[name] = pa.array(values, type=kind)
        sink = pa.BufferOutputStream()
        pq.write_table(pa.table(columns), sink)
        return bytes(sink.getvalue().to_pybytes())
    return _csv(rows)


def _arrow_type(pa: Any, name: str, values: list[Any]) -> Any:
    """A column's Parquet type where pyarrow's inference (int64 for whole numbers) cannot
    hold it: the seed is uint64, as --seed takes it; whole bytes past int64 (--size '1e20 B')
    are float64, which holds the float they came from. Each was an OverflowError traceback
    once the whole sweep had run. engine_power_off is text, null on points without engines:
    a sweep of cns alone would make it a column of type null. None: inferred."""
    if name == "seed":
        return pa.uint64()
    if name == "engine_power_off":
        return pa.string()
    whole = [v for v in values if isinstance(v, int) and not isinstance(v, bool)]
    if any(not -(2**63) <= v < 2**63 for v in whole):
        return pa.float64()
    return None


def _csv(rows: list[dict[str, Any]]) -> str:
    """The rows as CSV, for --out and for `-f csv` alike: every column of every row."""
    text = io.StringIO()
    writer = csv.DictWriter(text, fieldnames=_fieldnames(rows), lineterminator="\n")
    writer.writeheader()
    writer.writerows(rows)
    return text.getvalue()


def _fieldnames(rows: list[dict[str, Any]]) -> list[str]:
    names: dict[str, None] = {}
    for row in rows:
        names.update(dict.fromkeys(row))
    return list(names)


def sweep_table(rows: list[dict[str, Any]]) -> Table:
    return Table(
        "sweep",
        "Sweep — simulated vs modelled",
        [
            Column("platform", "platform", None),
            Column("app", "app", None),
            Column("engines_on", "engines", None),
            Column("chunk_bytes", "chunk (B)", 0),
            Column("time_s", "time (s)", 4),
            Column("model_time_s", "model (s)", 4),
            Column("time_difference_pct", "diff %", 2),
            Column("energy_j", "energy (J)", 2),
            Column("bottleneck", "bottleneck", None),
        ],
        rows,
    )


def _port_cap_applies_somewhere(specs: list[Platform], opts: Options) -> None:
    """--mux-port-cap in a sweep is an error only if it changes nothing on every platform."""
    errors: list[SpecError] = []
    for spec in specs:
        try:
            port_cap_applies(spec, opts)
        except SpecError as exc:
            errors.append(exc)
    if len(errors) == len(specs):
        raise errors[0]
