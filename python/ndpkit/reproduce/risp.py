"""RISP reproduced: Song, Xie, Pan, "RISP: A Reconfigurable In-Storage Processing Framework
with Energy-Awareness", CCGRID 2018.

Inputs: the presets `risp-baseline` and `risp-64ch` (Tables II-IV, §3.2), the profile set
`risp` (Tables I-II) and the named host interfaces. Every figure is computed by the
functions a user's workload goes through (`ndpkit.model.estimate`,
`ndpkit.plan.channels`); nothing here knows a published result.

Tables: I (CPB derivation), V0 (Baseline model validation, and R1's fit of n_cpu to
measured times), E1 (Baseline bandwidth vs channels and interface, Fig. 3), E2 (Baseline
breakdown on SATA, Fig. 4), E3 (RISP time breakdown at 200/500 MHz, Fig. 5), E4 (speedup,
Fig. 6a, per interface), E4b (Binarization speedup vs f_RU, Fig. 6b), E5 (energy breakdowns
at 16 channels, Fig. 7), E6 (characteristic fits, Fig. 8), E7 (power budget, §7.2), E8
(host-bandwidth reconfiguration, Table V), R1 (speedup vs the blank n_cpu). E3 and E4b print
both R2 readings of the paper's MB/GB; E7 and E8 every R8 rounding.
"""

from __future__ import annotations

import functools
import math
from collections.abc import Callable, Sequence
from typing import Any, Literal

from ndpkit.errors import ModelError
from ndpkit.hw import Platform, interface_names, load_platform
from ndpkit.hw.quantity import MAX_COUNT
from ndpkit.model import FULL_GEAR, HOST_ONLY, Estimate, Options, estimate
from ndpkit.plan.channels import (
    SAMPLE_CHANNELS,
    ChannelRounding,
    Grouping,
    TimeModel,
    characteristic,
    plan_channels,
)
from ndpkit.profile import Profile, load_profiles
from ndpkit.report import Column, Table

APPS = ("kmeans", "binarize", "sobel")
PAPER = (
    "Song, Xie, Pan. RISP: A Reconfigurable In-Storage Processing Framework with "
    "Energy-Awareness. CCGRID 2018, pp. 193-202."
)
DEFAULT_OPTIONS = Options(units="decimal")
"""R2: decimal MB/GB in reports; every other R-option at the spec's default."""
INTERFACES = ("sata-3.2", "pcie3-x4", "pcie3-x16")
SPEEDUP_CHANNELS = (8, 16, 32, 64)
FIG3_CHANNELS = tuple(range(2, 65, 2))
"""R19 `even`: Fig. 3's 2-64 channels."""
COMMON_CHANNELS = 16
""""a common case for modern SSDs" (Table II): Figs. 4b, 6a values, 7 and Table IV."""
BUDGET_W = 3.0
"""§7.2: a typical SSD power budget."""
PUBLISHED_ERROR_PCT = {"kmeans": 9.39, "binarize": 0.66}
PUBLISHED_MEAN_ERROR_PCT = 5.68
"""§10.1: the Baseline model's published errors (Sobel's is not stated)."""

TABLE_NAMES = ("I", "V0", "E1", "E2", "E3", "E4", "E4b", "E5", "E6", "E7", "E8", "R1")
InputUnits = Literal["decimal", "binary"]
READINGS: tuple[InputUnits, ...] = ("decimal", "binary")
"""R2: E3 and E4b (the f_RU experiments) print both readings, whatever --inputs says."""
ROUNDINGS: tuple[ChannelRounding, ...] = ("floor", "ceil", "nearest", "search")
"""R8: "always report all three" roundings, and the model-checked search."""
TABLES_CHANGED: dict[str, tuple[str, ...]] = {
    # The reproduction's own settings (flags of `reproduce risp`).
    "inputs": ("V0", "E1", "E2", "E4", "E5", "E6", "E7", "E8", "R1"),  # E3, E4b print both
    "rounding": ("E7", "E8"),
    "grouping": ("E8",),
    "n_cpu": ("V0", "E1", "E2", "E4", "E4b", "E5"),  # the Baseline; R1 sweeps its own
    "measured": ("V0",),
    # Model options (-o KEY=VALUE).
    "cpu_energy": ("E5",),
    "attribution": ("E5", "E6", "E7", "E8"),
    "nvm_power": ("E5", "E6", "E7", "E8"),
    "ru_power": ("E6", "E7", "E8"),  # E5's 16 cells are the reference count: no change
    "host_stage": ("E3", "E4", "E4b", "E7"),  # E8 sets it; at 16 channels the link never binds
    "reconfiguration": ("E3", "E4", "E4b", "E5", "E7", "E8", "R1"),
    "ru_time": ("E5", "E6", "E7"),  # E8 prints both values
    "cell_load": ("E8",),
}
"""The tables each setting and model option can change: given with `--tables` naming none
of them, it would be silently ignored, so the command refuses it."""
Inputs = dict[InputUnits, tuple[Platform, dict[str, Profile]]]
Progress = Callable[[str], None]


def reproduce(
    options: Options = DEFAULT_OPTIONS,
    *,
    inputs: InputUnits = "decimal",
    rounding: ChannelRounding = "floor",
    grouping: Grouping = "balanced",
    n_cpu: int | None = None,
    measured_s: dict[str, float] | None = None,
    progress: Progress | None = None,
) -> list[Table]:
    """All tables, in the paper's order."""
    report = progress or (lambda _: None)
    readings: Inputs = {reading: load_inputs(reading, n_cpu) for reading in READINGS}
    risp, profiles = readings[inputs]
    report("Baseline and RISP sweeps")
    tables = [
        table_cpb(profiles),
        table_validation(risp, profiles, options, measured_s or {}),
        table_e1(risp, profiles, options),
        table_e2(risp, profiles, options),
        table_e3(readings, options),
        table_e4(risp, profiles, options),
        table_e4b(readings, options),
        table_e5(risp, profiles, options),
    ]
    report("characteristic fits and channel selection")
    tables += [
        table_e6(risp, profiles, options),
        table_e7(risp, profiles["sobel"], options, rounding),
        table_e8(risp, profiles, options, rounding, grouping),
        table_r1(risp, profiles, options),
    ]
    return tables


def load_inputs(
    inputs: InputUnits = "decimal", n_cpu: int | None = None
) -> tuple[Platform, dict[str, Profile]]:
    """The RISP platform and profiles; `binary` reads the paper's MB/GB as MiB/GiB (R2)."""
    platform = load_platform("risp-64ch")
    profiles = dict(load_profiles("risp").apps)
    if n_cpu is not None:
        platform = _with_host_cores(platform, n_cpu)
    if inputs == "binary":
        platform, profiles = _binary(platform, profiles)
    return platform, profiles


def n_cpu_used(n_cpu: int | None = None) -> int:
    """The host CPU count the Baseline runs with: `n_cpu`, or the preset's (R1)."""
    return n_cpu if n_cpu is not None else load_platform("risp-64ch").host.cores


def _with_host_cores(platform: Platform, cores: int) -> Platform:
    if not 1 <= cores <= MAX_COUNT:
        raise ModelError(f"n_cpu must be in 1..{MAX_COUNT}, got {cores}")
    data = platform.model_dump(by_alias=False)
    data["host"]["cores_per_socket"] = cores
    data["host"]["sockets"] = 1
    return Platform.model_validate(data, context={"si": True})


def _binary(
    platform: Platform, profiles: dict[str, Profile]
) -> tuple[Platform, dict[str, Profile]]:
    mb, gb = 2**20 / 10**6, 2**30 / 10**9
    data = platform.model_dump(by_alias=False)
    data["storage"]["channel_bandwidth_bytes_per_s"] *= mb
    data["storage"]["dram"]["bandwidth_bytes_per_s"] *= gb
    data["host_link"]["bandwidth_bytes_per_s"] *= gb
    scaled = Platform.model_validate(data, context={"si": True})
    return scaled, {app: _binary_profile(p, mb, gb) for app, p in profiles.items()}


def _binary_profile(profile: Profile, mb: float, gb: float) -> Profile:
    """D read as GiB; a published fit's SSD is the preset's, so its b_ch is read as MiB/s
    like the platform's (the fit's own numbers are kept, as E6 and E7 print them)."""
    fit = profile.published_fit
    if fit is not None and fit.channel_bandwidth_bytes_per_s is not None:
        fit = fit.model_copy(
            update={"channel_bandwidth_bytes_per_s": fit.channel_bandwidth_bytes_per_s * mb}
        )
    return profile.with_changes(data_bytes=profile.data_bytes * gb, published_fit=fit)


def _at(platform: Platform, channels: int, interface: str = "sata-3.2") -> Platform:
    """`platform` with `channels` channels behind `interface`, whose bandwidth is read as
    the platform's own link is (R2: `--inputs binary` reads its GB/s as GiB/s; PCIe's
    bandwidth was reloaded in decimal GB/s while SATA's was binary)."""
    chosen = platform.with_channels(channels)
    if interface == "sata-3.2":
        return chosen
    reading = platform.host_link.bandwidth_bytes_per_s / _sata_bytes_per_s()
    data = chosen.with_interface(interface).model_dump(by_alias=False)
    data["host_link"]["bandwidth_bytes_per_s"] *= reading
    return Platform.model_validate(data, context={"si": True})


@functools.cache
def _sata_bytes_per_s() -> float:
    """The preset's SATA 3.2 bandwidth as the platform file gives it (decimal)."""
    return float(load_platform("risp-64ch").host_link.bandwidth_bytes_per_s)


def _pair(platform: Platform, profile: Profile, options: Options) -> tuple[Estimate, Estimate]:
    return (
        estimate(platform, profile, HOST_ONLY, options),
        estimate(platform, profile, FULL_GEAR, options),
    )


def table_cpb(profiles: dict[str, Profile]) -> Table:
    rows = []
    for app in APPS:
        p = profiles[app]
        assert p.cpi is not None and p.ipb is not None and p.frequency_ratio is not None
        rows.append(
            {
                "app": app,
                "cpi": p.cpi,
                "ipb": p.ipb,
                "frequency_ratio": p.frequency_ratio,
                "cpb_unrounded": p.cpi * p.ipb * p.frequency_ratio,
                "cpb": p.host_cycles_per_byte,
            }
        )
    return Table(
        "I",
        "Table I — host cycles per byte, CPB = CPI x IPB x frequency ratio (§6)",
        [
            Column("app", "app", None),
            Column("cpi", "CPI", 3),
            Column("ipb", "IPB", 4),
            Column("frequency_ratio", "freq. ratio", 3),
            Column("cpb_unrounded", "CPB (unrounded)", 6),
            Column("cpb", "CPB (4 dp)", 4, "cycles per byte, rounded as Table I prints it"),
        ],
        rows,
    )


def table_validation(
    platform: Platform,
    profiles: dict[str, Profile],
    options: Options,
    measured_s: dict[str, float],
) -> Table:
    """Eq. (5) on the preset host at 16 channels, SATA; errors against measured times, and
    the R1 calibration of n_cpu to them."""
    sobel_derived = 3 * PUBLISHED_MEAN_ERROR_PCT - sum(PUBLISHED_ERROR_PCT.values())
    fit = fit_n_cpu(platform, profiles, options, measured_s) if measured_s else None
    fitted = None if fit is None else _at(_with_host_cores(platform, fit[1]), COMMON_CHANNELS)
    rows = []
    for app in APPS:
        e = estimate(_at(platform, COMMON_CHANNELS), profiles[app], HOST_ONLY, options)
        measured = measured_s.get(app)
        at_fit = None
        if fitted is not None and measured is not None:
            at_fit = estimate(fitted, profiles[app], HOST_ONLY, options).time_s
        rows.append(
            {
                "app": app,
                "model_time_s": e.time_s,
                "measured_time_s": measured,
                "error_pct": _error_pct(e.time_s, measured),
                "published_error_pct": PUBLISHED_ERROR_PCT.get(app),
                "derived_error_pct": sobel_derived if app not in PUBLISHED_ERROR_PCT else None,
                "fit_n_cpu": None if at_fit is None or fit is None else fit[1],
                "fit_error_pct": _error_pct(at_fit, measured),
            }
        )
    return Table(
        "V0",
        "Baseline model validation (§10.1): Eq. (5) vs measured times",
        [
            Column("app", "app", None),
            Column("model_time_s", "model T (s)", 4, "Eq. (5), 16 channels, SATA 3.2, preset host"),
            Column("measured_time_s", "measured T (s)", 4, "given with --measured APP=SECONDS"),
            Column("error_pct", "error (%)", 2, "(model - measured) / measured x 100"),
            Column("published_error_pct", "paper error (%)", 2, "§10.1, published"),
            Column(
                "derived_error_pct",
                "derived (%)",
                2,
                "Sobel's error if the published 5.68% average is the arithmetic mean",
            ),
            Column(
                "fit_n_cpu",
                "fit n_cpu",
                0,
                "R1 calibration: the host CPU count whose Eq. (5) times fit the measured ones "
                "best (least squares of the errors)",
            ),
            Column("fit_error_pct", "error at fit (%)", 2, "the error with fit n_cpu CPUs"),
        ],
        rows,
        note=_validation_note(measured_s, fit),
    )


def _error_pct(model_s: float | None, measured_s: float | None) -> float | None:
    if model_s is None or measured_s is None:
        return None
    return (model_s - measured_s) / measured_s * 100


def _validation_note(measured_s: dict[str, float], fit: tuple[float, int] | None) -> str:
    note = "The paper publishes errors only, not its measured or modelled times; "
    if not measured_s:
        return note + "pass --measured kmeans=SECONDS,... to validate against your own runs."
    note += "the error column compares the model with the times given by --measured. "
    if fit is None:
        return note + (
            "R1 calibration: no CPU count fits, the measured times are at or below the "
            "model's transfer time alone."
        )
    return note + (
        f"R1 calibration: n_cpu = {fit[1]} fits them best (least squares of the errors; "
        f"{fit[0]:.3g} unrounded)."
    )


def fit_n_cpu(
    platform: Platform,
    profiles: dict[str, Profile],
    options: Options,
    measured_s: dict[str, float],
) -> tuple[float, int] | None:
    """R1's calibration mode: the host CPU count n whose Eq. (5) times T(n) best match the
    measured times M, minimising Σ ((T(n) - M) / M)² over the measured apps.

    T(n) = X + C / n (Eq. 5: transfer plus CPB·D / (f·n)), so in x = 1/n each relative
    residual a·x - b is linear, with a = C/M and b = (M - X)/M, and the least-squares
    x* = Σab / Σa². The squared error is convex in x, so the best integer n is one of the
    two around 1/x*. Returns (1/x*, best n), or None when x* <= 0: the measured times are
    at or below the transfer time alone, which no CPU count reaches."""
    terms = []
    for app, measured in measured_s.items():
        one, two = (
            estimate(
                _at(_with_host_cores(platform, n), COMMON_CHANNELS),
                profiles[app],
                HOST_ONLY,
                options,
            ).time_s
            for n in (1, 2)
        )
        compute_s = 2 * (one - two)  # C: T(1) - T(2) = C / 2
        terms.append((compute_s / measured, (measured - (one - compute_s)) / measured))
    x = sum(a * b for a, b in terms) / sum(a * a for a, _ in terms)
    if x <= 0:
        return None
    unrounded = 1 / x

    def squared_error(n: int) -> float:
        return sum((a / n - b) ** 2 for a, b in terms)

    candidates = {min(max(c, 1), MAX_COUNT) for c in (math.floor(unrounded), math.ceil(unrounded))}
    return unrounded, min(sorted(candidates), key=squared_error)


def table_e1(platform: Platform, profiles: dict[str, Profile], options: Options) -> Table:
    rows = []
    for app in APPS:
        for n in FIG3_CHANNELS:
            row: dict[str, Any] = {"app": app, "channels": n}
            for interface in INTERFACES:
                e = estimate(_at(platform, n, interface), profiles[app], HOST_ONLY, options)
                row[_key(interface)] = e.performance_bytes_per_s / options.gb
            rows.append(row)
    return Table(
        "E1",
        "Fig. 3 — Baseline processing bandwidth D / T (GB/s) vs channels and host interface",
        [
            Column("app", "app", None),
            Column("channels", "channels", 0),
            *[Column(_key(i), i, 3, f"GB/s over {i}") for i in INTERFACES],
        ],
        rows,
    )


def table_e2(platform: Platform, profiles: dict[str, Profile], options: Options) -> Table:
    rows = []
    for app in APPS:
        for n in FIG3_CHANNELS:
            e = estimate(_at(platform, n), profiles[app], HOST_ONLY, options)
            t = e.stage_times_s
            transfer = max(t["channel"], t["link"])
            internal = e.stages["channel"]
            rows.append(
                {
                    "app": app,
                    "channels": n,
                    "time_s": e.time_s,
                    "transfer_s": transfer,
                    "transfer_share_pct": transfer / e.time_s * 100,
                    "internal_gb_per_s": internal / options.gb,
                    "external_gb_per_s": min(internal, e.stages["link"]) / options.gb,
                    "saturated": internal >= e.stages["link"],
                }
            )
    return Table(
        "E2",
        "Fig. 4 — Baseline on SATA 3.2: execution and transfer time, internal and external "
        "bandwidth",
        [
            Column("app", "app", None),
            Column("channels", "channels", 0),
            Column("time_s", "T (s)", 4, "Eq. (5)"),
            Column("transfer_s", "transfer (s)", 4, "Eq. (3)"),
            Column("transfer_share_pct", "transfer share (%)", 1),
            Column("internal_gb_per_s", "internal (GB/s)", 2, "n_ch x b_ch"),
            Column("external_gb_per_s", "external (GB/s)", 2, "min(n_ch x b_ch, b_hostIO)"),
            Column("saturated", "host-bound", None, "more channels no longer help"),
        ],
        rows,
        note=_saturation_note(platform, rows),
    )


def _saturation_note(platform: Platform, rows: list[dict[str, Any]]) -> str:
    b_ch = platform.storage.channel_bandwidth_bytes_per_s
    assert b_ch is not None
    knee = platform.host_link.bandwidth_bytes_per_s / b_ch
    share = next(
        (
            r["transfer_share_pct"]
            for r in rows
            if r["app"] == "binarize" and r["channels"] == COMMON_CHANNELS
        ),
        None,
    )
    parts = [
        f"internal bandwidth reaches the host interface at n = b_hostIO / b_ch = {knee:.3g} "
        f"channels: no further improvement beyond {math.ceil(knee)}"
    ]
    if share is not None:
        parts.append(f"Binarization's transfer share at 16 channels: {share:.1f}%")
    return "; ".join(parts)


def table_e3(readings: Inputs, options: Options) -> Table:
    rows = []
    for reading, (platform, profiles) in readings.items():
        for clock_mhz in (200, 500):
            clocked = platform.with_cell_clock(clock_mhz * 1e6)
            for app in APPS:
                for n in SAMPLE_CHANNELS:
                    e = estimate(clocked.with_channels(n), profiles[app], FULL_GEAR, options)
                    t = e.stage_times_s
                    rows.append(
                        {
                            "inputs": reading,
                            "f_ru_mhz": clock_mhz,
                            "app": app,
                            "channels": n,
                            "transfer_s": t["channel"],
                            "compute_s": t["cell"],
                            "dram_s": t["dram"],
                            "time_s": e.time_s,
                            "bottleneck": e.bottleneck,
                        }
                    )
    return Table(
        "E3",
        "Fig. 5 — RISP time breakdown vs channels at f_RU = 200 and 500 MHz",
        [
            _inputs_column(),
            Column("f_ru_mhz", "f_RU (MHz)", 0),
            Column("app", "app", None),
            Column("channels", "channels", 0),
            Column("transfer_s", "t_ch2RU (s)", 4),
            Column("compute_s", "t_RUComp (s)", 4, "Eq. (6)"),
            Column("dram_s", "t_RU2DRAM (s)", 4, "Eq. (7)"),
            Column("time_s", "T_RISP (s)", 4, "Eq. (8)"),
            Column("bottleneck", "bottleneck", None),
        ],
        rows,
        note=_e3_note(rows),
    )


def _inputs_column() -> Column:
    return Column("inputs", "inputs (R2)", None, "the paper's MB/GB read as decimal or binary")


def _e3_note(rows: list[dict[str, Any]]) -> str:
    def time(reading: str, f: int) -> float:
        return float(
            next(
                r["time_s"]
                for r in rows
                if (r["inputs"], r["app"], r["channels"], r["f_ru_mhz"])
                == (reading, "binarize", 4, f)
            )
        )

    readings = dict.fromkeys(r["inputs"] for r in rows)
    reductions = [f"{(1 - time(i, 500) / time(i, 200)) * 100:.1f}% ({i})" for i in readings]
    return (
        "Binarization at 4 channels: "
        + " and ".join(reductions)
        + " less time at 500 MHz than at 200 MHz"
    )


def table_e4(platform: Platform, profiles: dict[str, Profile], options: Options) -> Table:
    rows = []
    for app in APPS:
        for interface in INTERFACES:
            for n in SPEEDUP_CHANNELS:
                base, risp = _pair(_at(platform, n, interface), profiles[app], options)
                rows.append(
                    {
                        "app": app,
                        "channels": n,
                        "interface": interface,
                        "baseline_s": base.time_s,
                        "risp_s": risp.time_s,
                        "value": base.time_s / risp.time_s,
                    }
                )
    return Table(
        "E4",
        "Fig. 6a — speedup of RISP over Baseline, T_Baseline / T_RISP, f_RU = 100 MHz",
        [
            Column("app", "app", None),
            Column("channels", "channels", 0),
            Column("interface", "interface", None, "the Baseline's host interface"),
            Column("baseline_s", "T_Baseline (s)", 4, "Eq. (5)"),
            Column("risp_s", "T_RISP (s)", 4, "Eq. (8)"),
            Column("value", "speedup", 2, "T_Baseline / T_RISP"),
        ],
        rows,
    )


def table_e4b(readings: Inputs, options: Options) -> Table:
    rows, saturation = [], []
    for reading, (platform, profiles) in readings.items():
        profile = profiles["binarize"]
        engines = platform.engines
        b_ch = platform.storage.channel_bandwidth_bytes_per_s
        assert engines is not None and b_ch is not None
        saturation_mhz = b_ch / engines.bytes_per_cycle[profile.app] / 1e6
        saturation.append(f"{saturation_mhz:.1f} MHz ({reading})")
        for clock_mhz in (100, 200, 300, 400, 500):
            clocked = _at(platform.with_cell_clock(clock_mhz * 1e6), COMMON_CHANNELS)
            base, risp = _pair(clocked, profile, options)
            rows.append(
                {
                    "inputs": reading,
                    "app": profile.app,
                    "f_ru_mhz": clock_mhz,
                    "risp_s": risp.time_s,
                    "value": base.time_s / risp.time_s,
                    "bottleneck": risp.bottleneck,
                }
            )
    return Table(
        "E4b",
        "Fig. 6b — Binarization speedup vs f_RU, 16 channels, SATA 3.2",
        [
            _inputs_column(),
            Column("app", "app", None),
            Column("f_ru_mhz", "f_RU (MHz)", 0),
            Column("risp_s", "T_RISP (s)", 4),
            Column("value", "speedup", 2),
            Column("bottleneck", "bottleneck", None),
        ],
        rows,
        note=(
            "R16: the speedup stops rising at f_RU = b_ch / α = "
            + " and ".join(saturation)
            + ", where the NVM channel becomes the bottleneck"
        ),
    )


def table_e5(platform: Platform, profiles: dict[str, Profile], options: Options) -> Table:
    rows = []
    at16 = _at(platform, COMMON_CHANNELS)
    for app in APPS:
        base, risp = _pair(at16, profiles[app], options)
        for system, e in (("baseline", base), ("risp", risp)):
            total = e.energy_j
            for component, joules in e.energy.by_component_j.items():
                rows.append(
                    {
                        "app": app,
                        "system": system,
                        "channels": COMMON_CHANNELS,
                        "interface": "sata-3.2",
                        "component": component,
                        "energy_j": joules,
                        "share_pct": joules / total * 100,
                        "reduction_factor": None,
                    }
                )
            rows.append(
                {
                    "app": app,
                    "system": system,
                    "channels": COMMON_CHANNELS,
                    "interface": "sata-3.2",
                    "component": "total",
                    "energy_j": total,
                    "share_pct": 100.0,
                    "reduction_factor": base.energy_j / risp.energy_j if system == "risp" else None,
                }
            )
    return Table(
        "E5",
        "Fig. 7 — energy breakdown at 16 channels (SATA 3.2, f_RU = 100 MHz)",
        [
            Column("app", "app", None),
            Column("system", "system", None),
            Column("channels", "channels", 0),
            Column("interface", "interface", None),
            Column("component", "component", None),
            Column("energy_j", "energy (J)", 4, "Eq. (9)/(10)"),
            Column("share_pct", "share (%)", 1),
            Column("reduction_factor", "E_Baseline / E_RISP", 2, "on the total rows"),
        ],
        rows,
    )


def table_e6(platform: Platform, profiles: dict[str, Profile], options: Options) -> Table:
    rows = []
    for app in APPS:
        sources: Sequence[Literal["model", "paper"]] = (
            ("model", "paper") if profiles[app].published_fit else ("model",)
        )
        for source in sources:
            c = characteristic(platform, profiles[app], options, source=source)
            powers = [p.power_w for p in c.points]
            rows.append(
                {
                    "app": app,
                    "fit": source,
                    "power_intercept_w": c.power.intercept,
                    "power_slope_w": c.power.slope,
                    "bandwidth_slope_gb_per_s": c.bandwidth.slope / options.gb,
                    "power_min_w": min(powers),
                    "power_max_w": max(powers),
                    "points": [
                        [p.channels, p.power_w, p.bandwidth_bytes_per_s / options.gb]
                        for p in c.points
                    ],
                }
            )
    return Table(
        "E6",
        "Fig. 8 — characteristic functions at f_RU = 100 MHz: f_power(n) = a + b n (W), "
        "f_pb(n) = s n (GB/s), n = 4 … 64",
        [
            Column("app", "app", None),
            Column("fit", "fit", None, "model: regression of Eqs. (8)-(9); paper: Eqs. (13)-(14)"),
            Column("power_intercept_w", "a (W)", 4),
            Column("power_slope_w", "b (W/ch)", 4),
            Column("bandwidth_slope_gb_per_s", "s (GB/s/ch)", 4),
            Column("power_min_w", "P min (W)", 3, "model points"),
            Column("power_max_w", "P max (W)", 3, "model points"),
        ],
        rows,
        note=_e6_note(rows),
    )


def _e6_note(rows: list[dict[str, Any]]) -> str:
    """What E6's Sobel rows show, read off them: the preset's RU powers are calibrated to
    Eq. (13) at the spec's defaults, so other settings (`--inputs binary`, `-o
    attribution=all_active`, …) move the model's fit off it, and the note must not say the
    rows agree then."""
    fits = {r["fit"]: r for r in rows if r["app"] == "sobel"}
    model, paper = fits.get("model"), fits.get("paper")
    if model is None or paper is None:
        return ""
    keys = ("power_intercept_w", "power_slope_w")
    if all(math.isclose(model[k], paper[k], rel_tol=1e-4) for k in keys):
        r6 = (
            "R6: with the preset's RU powers, calibrated so that Sobel's model power fit is "
            "Eq. (13), Sobel's model and paper power rows agree by construction, not as a "
            "result."
        )
    else:
        r6 = (
            "R6: the preset's RU powers are calibrated so that Sobel's model power fit is "
            f"Eq. (13), {paper['power_intercept_w']:.4g} + {paper['power_slope_w']:.4g} n W, "
            "at the spec's defaults; with these inputs and options it is "
            f"{model['power_intercept_w']:.4f} + {model['power_slope_w']:.4f} n W."
        )
    return (
        f"{r6} R7: the model's Sobel slope is α x f_RU = "
        f"{model['bandwidth_slope_gb_per_s']:.3g} GB/s per channel; Eq. (14) says "
        f"{paper['bandwidth_slope_gb_per_s']:.3g}"
    )


def table_e7(
    platform: Platform, profile: Profile, options: Options, rounding: ChannelRounding = "floor"
) -> Table:
    rows, notes = [], []
    for source in ("model", "paper"):
        p = plan_channels(
            platform,
            profile,
            options,
            policy="power",
            budget_w=BUDGET_W,
            fit=source,
            rounding=rounding,
        )
        curves = characteristic(platform, profile, options, source=source)
        rows.append(
            {
                "app": profile.app,
                "fit": source,
                "budget_w": BUDGET_W,
                "n_exact": p.details["n_power_exact"],
                "channels_by_rounding": [p.details[f"n_power_{how}"] for how in ROUNDINGS],
                "channels_active": p.engines_required,
                "channels_off": p.engines_total - p.engines_required,
                "max_bandwidth_gb_per_s": curves.bandwidth(p.engines_required) / options.gb,
                "model_bandwidth_gb_per_s": p.planned.performance_bytes_per_s / options.gb,
                "model_power_w": p.details["planned_power_w"],
                "all_on_power_w": p.details["baseline_power_w"],
            }
        )
        notes += [n for n in p.planned.notes if n not in notes]
    return Table(
        "E7",
        "§7.2 — power-budget reconfiguration: Sobel, N = 64, P_budget = 3 W, f_RU = 100 MHz",
        [
            Column("app", "app", None),
            Column("fit", "fit", None),
            Column("budget_w", "budget (W)", 1),
            Column("n_exact", "n (exact)", 2, "f_power(n) = budget"),
            Column(
                "channels_by_rounding",
                "floor ceil nearest search",
                None,
                "R8: n (exact) rounded each way, and the most channels the model keeps within "
                "the budget",
            ),
            Column(
                "channels_active",
                "active",
                0,
                f"R8 {rounding}, stepped down to the budget if it breaks it",
            ),
            Column("channels_off", "powered off", 0),
            Column("max_bandwidth_gb_per_s", "f_pb(n) (GB/s)", 3, "from the fit"),
            Column("model_bandwidth_gb_per_s", "model PB (GB/s)", 3, "Eq. (8) at n channels"),
            Column("model_power_w", "model power (W)", 3),
            Column("all_on_power_w", "all 64 on (W)", 3),
        ],
        rows,
        note=" ".join(notes),
    )


_E8_VARIANTS: tuple[tuple[str, TimeModel, str], ...] = (
    ("computing", "reduced_cells", "spec defaults (§5.2, R10 reduced_cells)"),
    ("configured", "reduced_cells", "RU draws its active power while configured"),
    ("computing", "channels_off", "unused channels powered off"),
    ("configured", "channels_off", "both"),
)


def table_e8(
    platform: Platform,
    profiles: dict[str, Profile],
    options: Options,
    rounding: ChannelRounding,
    grouping: Grouping,
) -> Table:
    rows = []
    for ru_time, time_model, label in _E8_VARIANTS:
        opts = options.with_(host_stage="with_host_stage", ru_time=ru_time)
        for app in APPS:
            p = plan_channels(
                platform,
                profiles[app],
                opts,
                policy="host",
                rounding=rounding,
                grouping=grouping,
                time_model=time_model,
                never_worse=False,  # the paper's policy, taken even where it costs energy
            )
            rows.append(
                {
                    "app": app,
                    "ru_time": ru_time,
                    "time_model": time_model,
                    "variant": label,
                    "n_exact": p.details["n_host_exact"],
                    "channels_enabled": p.engines_on,
                    "n_chosen": p.engines_required,
                    "host_stage": opts.host_stage,
                    "cells_by_rounding": [p.details[f"n_host_{how}"] for how in ROUNDINGS],
                    "energy_all_j": p.baseline.energy_j,
                    "energy_chosen_j": p.planned.energy_j,
                    "saving_pct": p.improvement_pct,
                    "performance_loss_pct": p.performance_loss_pct,
                }
            )
    return Table(
        "E8",
        "Table V — host-bandwidth reconfiguration: N = 64, SATA 3.2 "
        # As the platform reads it: 1.97 GiB/s (2.115 GB/s) under --inputs binary.
        f"({platform.host_link.bandwidth_bytes_per_s / options.gb:.4g} GB/s), f_RU = 100 MHz",
        [
            Column("app", "app", None),
            Column("ru_time", "RU time (R4)", None),
            Column("time_model", "time model (R10)", None),
            Column("n_exact", "n_host", 2, "β x b_hostIO / s"),
            Column("n_chosen", "n (R8)", 0, f"n_host rounded ({rounding})"),
            Column(
                "channels_enabled",
                "cells on",
                0,
                "processing cells configured (fewer than n if --grouping ceil makes fewer groups)",
            ),
            Column(
                "cells_by_rounding",
                "floor ceil nearest search",
                None,
                "R8: n_host rounded each way, and the fewest cells with no loss",
            ),
            Column("energy_all_j", "E all 64 (J)", 4, "reconfigurability disabled"),
            Column("energy_chosen_j", "E chosen (J)", 4, "reconfigurability enabled"),
            Column("saving_pct", "saving (%)", 2, "(E_all - E_chosen) / E_all x 100"),
            Column("performance_loss_pct", "perf. loss (%)", 2, "vs all 64 on"),
        ],
        rows,
        note="R11: T_RISP includes the results' transfer to the host, D / (β b_hostIO)",
    )


def table_r1(platform: Platform, profiles: dict[str, Profile], options: Options) -> Table:
    rows = []
    for cores in (1, 2, 4, 8, 16):
        at16 = _at(_with_host_cores(platform, cores), COMMON_CHANNELS)
        row: dict[str, Any] = {"n_cpu": cores}
        for app in APPS:
            base, risp = _pair(at16, profiles[app], options)
            row[app] = base.time_s / risp.time_s
        rows.append(row)
    return Table(
        "R1",
        "R1 — speedup at 16 channels (SATA 3.2) vs the host's CPU count, blank in Table II",
        [Column("n_cpu", "n_cpu", 0), *[Column(app, app, 2) for app in APPS]],
        rows,
    )


def _key(interface: str) -> str:
    return interface.replace("-", "_").replace(".", "_") + "_gb_per_s"


def document(
    tables: list[Table], options: Options, settings: dict[str, Any] | None = None
) -> dict[str, Any]:
    """The machine-readable form, with the issue's documented top-level keys:
    `speedup` (E4 rows: app, channels, interface, value), `energy` (E5 rows),
    `reconfiguration` (E8 rows: app, channels_enabled, saving_pct, …) and `tables`
    (every table by name). `options` are the model conventions every table starts from
    (E8 sets host_stage and ru_time per row); `settings` the reproduction's own choices
    (inputs, rounding, grouping, n_cpu)."""
    by_name = {t.name: t.rows for t in tables}
    doc: dict[str, Any] = {
        "paper": PAPER,
        "options": options.as_dict(),
        "settings": settings or {},
        "units": {"gb_bytes": options.gb, "mb_bytes": options.mb},
        "interfaces": interface_names(),
        # One map for every table (a key shared by tables takes the last one's words), and
        # each table's own: E2's `time_s` is the Baseline's Eq. (5), E3's is Eq. (8).
        "columns": {k: v for t in tables for k, v in t.descriptions().items()},
        "table_columns": {t.name: t.descriptions() for t in tables},
    }
    if "E4" in by_name:
        doc["speedup"] = [
            {k: r[k] for k in ("app", "channels", "interface", "value")} for r in by_name["E4"]
        ]
    if "E5" in by_name:
        doc["energy"] = by_name["E5"]
    if "E8" in by_name:
        doc["reconfiguration"] = by_name["E8"]
    doc["tables"] = by_name
    return doc
