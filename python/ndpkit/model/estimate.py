"""`estimate`: a platform, a profile and a configuration in; time, bottleneck and energy out.

On an in-storage platform (described per flash channel) it applies RISP's models
instead (`in_storage`): the Baseline for the host split, Eqs. (6)-(8) for the device split.

Otherwise this composes Eq. (1) (`pipeline`) with the stage wall times and the energy model
(`energy`). Time bases (O11):

- `paper`: the NDP stage runs for T_NDP, then the host stage for T_CPU; the two are
  added. T_NDP is the full-server NDP time, stretched by perf_full / perf when a
  configuration loses performance (the paper assumes it never does).
- `pipeline`: the stages overlap; the run takes D / performance, the engines stay on
  for all of it and the host is active for D / CPU_BW of it.
- `overlap`: the run takes max(T_NDP, T_CPU).
- `staged`: the device side runs at its own slowest stage, D / min(SSD, NDP, NDP2CPU x α),
  then the host part runs for T_CPU; the engines are on for the first phase only. It is
  `paper` without the assumption that the NDP stage bounds the first phase, and what the
  simulator's barrier mode (`ndpkit.sim`) converges to on large data.

Example: `estimate(load_platform("rans"), load_profile("lc"))` gives LC on RANS:
T_NDP = 16.67 / 36 = 0.463 s, energy (207.36 + 30.33) W x 0.463 s = 110.1 J.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from ndpkit.errors import check_kinds
from ndpkit.hw import Platform
from ndpkit.model import in_storage
from ndpkit.model.configuration import FULL_GEAR, HOST_ONLY, Configuration
from ndpkit.model.energy import (
    Energy,
    StateTimes,
    efficiency_mb_per_j,
    price,
    with_profile_power,
)
from ndpkit.model.options import Options
from ndpkit.model.pipeline import (
    CPU,
    Pipeline,
    full_ndp_time_unchecked_s,
    pipeline_unchecked,
    stage_time_s,
    storage_busy_s,
)
from ndpkit.profile import Profile
from ndpkit.summary import summary


@dataclass(frozen=True)
class Estimate:
    """An analytic model's answer for one application on one platform and configuration."""

    platform: str
    app: str
    config: Configuration
    options: Options
    data_bytes: float
    pipeline: Pipeline
    t_ndp_s: float
    t_cpu_s: float
    time_s: float
    state_times: StateTimes
    energy: Energy
    ee_mb_per_j: float
    notes: list[str] = field(default_factory=list)
    stage_times_s: dict[str, float] = field(default_factory=dict)
    """In-storage models: each stage's own time (they include fixed latencies)."""
    channels_on: int | None = None
    """In-storage models: flash channels powered (None on other platforms)."""

    def __repr__(self) -> str:
        return summary(
            "Estimate",
            platform=self.platform,
            app=self.app,
            split=self.config.split,
            engines_active=self.pipeline.engines_active,
            bottleneck=self.bottleneck,
            time_s=self.time_s,
            energy_j=self.energy_j,
            ee_mb_per_j=self.ee_mb_per_j,
        )

    @property
    def stages(self) -> dict[str, float]:
        return self.pipeline.stages

    @property
    def performance_bytes_per_s(self) -> float:
        return self.pipeline.performance_bytes_per_s

    @property
    def bottleneck(self) -> str:
        return self.pipeline.bottleneck

    @property
    def energy_j(self) -> float:
        return self.energy.total_j

    def as_dict(self) -> dict[str, Any]:
        """Plain data with unit-suffixed keys; GB and MB follow `options.units`. A stage that
        sets no limit (the host's `cpu` where the engines leave it nothing to do) has
        bandwidth `float("inf")`, which `json.dumps` would write as `Infinity`, not JSON:
        `ndpkit.report.to_json` writes it as the string "inf"."""
        gb = self.options.gb
        return {
            "platform": self.platform,
            "app": self.app,
            "split": self.config.split,
            "engines_total": self.pipeline.engines_total,
            "engines_active": self.pipeline.engines_active,
            **{f"{name}_bw_gb_per_s": bw / gb for name, bw in self.stages.items()},
            "engine_bw_gb_per_s": self.pipeline.engine_bytes_per_s / gb,
            "performance_gb_per_s": self.performance_bytes_per_s / gb,
            "bottleneck": self.bottleneck,
            "max_shards_per_engine": self.pipeline.max_shards_per_engine,
            "load_imbalance": self.pipeline.load_imbalance,
            **({"channels_on": self.channels_on} if self.channels_on is not None else {}),
            **{f"t_{name}_s": seconds for name, seconds in self.stage_times_s.items()},
            "t_ndp_s": self.t_ndp_s,
            "t_cpu_s": self.t_cpu_s,
            "time_s": self.time_s,
            **{f"energy_{name}_j": j for name, j in self.energy.by_component_j.items()},
            "energy_j": self.energy_j,
            "ee_mb_per_j": self.ee_mb_per_j,
        }


def estimate(
    platform: Platform,
    profile: Profile,
    config: Configuration = FULL_GEAR,
    options: Options | None = None,
) -> Estimate:
    """Estimate time and energy of `profile`'s application on `platform` under `config`."""
    check_kinds(  # a preset's name for the platform ended in "'str' object has no attribute"
        ("platform", platform, Platform, "a Platform (load_platform(…))"),
        ("profile", profile, Profile, "a Profile (load_profile(…))"),
        ("config", config, Configuration, "a Configuration"),
        ("options", options, (Options, type(None)), "an Options, or None"),
    )
    options = options or Options()
    if platform.engines is None and config.split == "device":
        config = HOST_ONLY  # nothing beside the storage: the whole kernel runs on the host
    if platform.is_in_storage:
        return _in_storage(platform, profile, config, options)
    if config.split == "device":  # a host split runs no engine: its power is never charged
        platform = with_profile_power(platform, profile)
    pipe = pipeline_unchecked(platform, profile, config, options)
    data = profile.data_bytes
    notes: list[str] = []
    if pipe.engines_active == 0:
        t_ndp, t_cpu = 0.0, _host_only_time_s(profile, pipe, data, options)
        measured = stage_time_s(data, pipe.stages[CPU])
        # `_host_only_time_s` returns this very figure where the supply holds nothing back
        if not profile.host_only_in_memory and t_cpu > measured:
            notes.append(_slower_supply_note(profile, pipe, data, measured, t_cpu, options))
    else:
        t_ndp = full_ndp_time_unchecked_s(platform, profile, options)
        if options.wall_times == "printed" and platform.name not in profile.published_ndp_time_s:
            notes.append(_no_printed_time_note(platform.name, profile))
        full = (
            pipe
            if config.is_full_gear
            else pipeline_unchecked(platform, profile, FULL_GEAR, options)
        )
        slowdown = full.performance_bytes_per_s / pipe.performance_bytes_per_s
        if slowdown > 1 + 1e-12:
            notes.append(
                f"this configuration is {slowdown:.3g}x slower than full gear "
                f"(bottleneck {pipe.bottleneck})"
            )
            t_ndp *= slowdown
        t_cpu = stage_time_s(data, pipe.stages[CPU])
    if pipe.max_shards_per_engine > 1 and options.placement == "paper_no_loss":
        notes.append(
            f"an engine serves {pipe.max_shards_per_engine} SSDs; with static one-shard-per-SSD "
            "placement it would take that many times longer (placement=static_shards)"
        )
    storage_busy = storage_busy_s(platform, config, options, data)
    # The papers' CNS rates are runs reading their data: their T_CPU holds its transfer.
    host_reads = pipe.engines_active == 0 and not profile.host_only_in_memory
    time_s, times = _state_times(
        platform, pipe, data, t_ndp, t_cpu, storage_busy, options, host_reads
    )
    energy = price(platform, profile.app, times, options)
    return Estimate(
        platform=platform.name,
        app=profile.app,
        config=config,
        options=options,
        data_bytes=data,
        pipeline=pipe,
        t_ndp_s=t_ndp,
        t_cpu_s=t_cpu,
        time_s=time_s,
        state_times=times,
        energy=energy,
        # D once, though the run reads it `passes` times (as `ndpkit evaluate` counts it)
        ee_mb_per_j=efficiency_mb_per_j(
            data / profile.passes, options.round_energy(energy.total_j), options
        ),
        notes=notes,
    )


def _no_printed_time_note(platform: str, profile: Profile) -> str:
    """`--wall-times printed` asked for a published full-server time this profile lacks:
    said, as T_NDP then falls back to the unrounded extrapolation without a word."""
    known = ", ".join(sorted(profile.published_ndp_time_s))
    has = f"it has them for {known}" if known else "it has none"
    return (
        f"wall_times=printed: profile {profile.app!r} has no published full-server time for "
        f"platform {platform!r} ({has}), so T_NDP is extrapolated from one engine, as "
        "under wall_times=unrounded"
    )


def _host_only_time_s(profile: Profile, pipe: Pipeline, data: float, options: Options) -> float:
    """T_CPU of a run without engines. The papers' T_CPU,CNS is the wall time of a CNS run
    reading its data, so the paper and overlap bases time no transfer beside it where the
    SSDs and the link deliver what CNS's did; where they deliver less than the profile's
    `host_only_supply`, the run waits for its data (`delivery_time_s`). A rate
    measured with the data in memory leaves that transfer out (ndpkit evaluate's LC on CNS:
    0.1 s, where the link alone takes 1.03 s), so there the run lasts at least until its data
    has arrived: D over the Eq. (1) performance, whose stages include the CPU's. The staged
    and pipeline bases time the transfer themselves (and the staged basis does not add it
    to a T_CPU that holds it already, `_state_times`)."""
    if profile.host_only_in_memory and options.time_basis in ("paper", "overlap"):
        return stage_time_s(data, pipe.performance_bytes_per_s)
    t_cpu = stage_time_s(data, pipe.stages[CPU])
    if options.time_basis in ("paper", "overlap"):
        delivery = delivery_time_s(profile, pipe, data)
        # The platform it was measured on keeps its time exactly (Table 5's 601.43 J).
        return delivery if delivery > t_cpu * (1 + 1e-12) else t_cpu
    return t_cpu


def _slower_supply_note(
    profile: Profile,
    pipe: Pipeline,
    data: float,
    measured_s: float,
    t_cpu_s: float,
    options: Options,
) -> str:
    """Why T_CPU is longer than the profile's host-only time, with the figures that give it
    (`delivery_time_s`): "3 GiB/s, so 11.8 s" left out LC's margin, and 37 / 3 is 12.3."""
    reference = profile.host_only_supply_bytes_per_s
    assert reference is not None and profile.host_only_bytes_per_s is not None
    margin = _margin(profile.host_only_bytes_per_s, reference)
    size, unit = ("GiB", "GiB/s") if options.units == "binary" else ("GB", "GB/s")
    measured_at, here = reference / options.gb, _supply(pipe) / options.gb
    # HE's CNS run read 26 GiB/s where 36 were there: the supply, not what the run read
    faster = f" and got its data {margin:.4g}x as fast as that" if margin > 1 else ""
    over = f"({here:.3g} {unit} x {margin:.4g})" if margin > 1 else f"{here:.3g} {unit}"
    return (
        f"the host-only time {measured_s:.3g} s was measured where the SSDs and the link "
        f"delivered {measured_at:.3g} {unit} (host_only_supply){faster}; this platform's SSDs "
        f"and link deliver {here:.3g} {unit}, so T_CPU is {data / options.gb:.3g} {size} / "
        f"{over} = {t_cpu_s:.3g} s"
    )


def _supply(pipe: Pipeline) -> float:
    """What the SSDs and the link of a run without engines deliver: the slower of the two."""
    return min(bw for name, bw in pipe.stages.items() if name != CPU)


def _margin(host_only_bytes_per_s: float, supply_bytes_per_s: float) -> float:
    """How much faster than its supply's nominal rate the measured run got its data (LC's
    37 GiB in 0.98 s over 36 GiB/s: 1.049); 1 where the run was slower than its supply."""
    return max(1.0, host_only_bytes_per_s / supply_bytes_per_s)


def delivery_time_s(profile: Profile, pipe: Pipeline, data: float) -> float:
    """The least time a host-only run at the papers' rate (a wall time reading its data,
    measured where the SSDs and the link delivered `host_only_supply`) takes on a platform
    that delivers less: D over this platform's supply, as much faster than nominal as the
    measured run was (LC's 37 GiB in 0.98 s over CNS's 36 GiB/s link: 4.9%), so that the
    platform it was measured on keeps its time. 0 without a supply (nothing to hold it to)."""
    reference = profile.host_only_supply_bytes_per_s
    if reference is None or profile.host_only_bytes_per_s is None:
        return 0.0
    margin = _margin(profile.host_only_bytes_per_s, reference)
    return stage_time_s(data, _supply(pipe) * margin)


def _in_storage(
    platform: Platform, profile: Profile, config: Configuration, options: Options
) -> Estimate:
    """RISP's Baseline (split=host) or in-storage (split=device) model."""
    result = in_storage.run(platform, profile, config, options)
    return Estimate(
        platform=platform.name,
        app=profile.app,
        config=config,
        options=options,
        data_bytes=profile.data_bytes,
        pipeline=result.pipeline,
        t_ndp_s=result.t_ndp_s,
        t_cpu_s=result.t_cpu_s,
        time_s=result.time_s,
        state_times=result.state_times,
        energy=result.energy,
        ee_mb_per_j=efficiency_mb_per_j(
            profile.data_bytes / profile.passes, result.energy.total_j, options
        ),
        notes=result.notes,
        stage_times_s=result.stage_times_s,
        channels_on=len(result.layout.channels_on),
    )


def _state_times(
    platform: Platform,
    pipe: Pipeline,
    data: float,
    t_ndp: float,
    t_cpu: float,
    storage_busy: np.ndarray,
    options: Options,
    host_reads: bool = False,
) -> tuple[float, StateTimes]:
    """The run's duration and the seconds each component spends in each power state.
    `host_reads`: a run without engines whose T_CPU is the wall time of a run reading its
    data (the papers' CNS), which the staged basis must not add to the transfer again."""
    basis = options.time_basis
    performance = pipe.performance_bytes_per_s
    if basis == "paper":
        total, engines_on, host_active = t_ndp + t_cpu, t_ndp, t_cpu
        busy_fraction = 1.0
    elif basis == "overlap":
        total, engines_on, host_active = max(t_ndp, t_cpu), t_ndp, t_cpu
        busy_fraction = 1.0
    elif basis == "staged":
        device_side = _supply(pipe)
        first = data / device_side
        total = max(first, t_cpu) if host_reads else first + t_cpu
        # No engine runs without engines: the switch layer (on while they are) stays off,
        # as under the other bases (it charged a host split for the transfer).
        engines_on, host_active = (first if pipe.engines_active else 0.0), t_cpu
        ndp_bw = pipe.stages.get("ndp", math.inf)
        busy_fraction = min(1.0, device_side / ndp_bw)
    else:
        total = data / performance
        engines_on, host_active = (total if pipe.engines_active else 0.0), t_cpu
        ndp_bw = pipe.stages.get("ndp", math.inf)
        busy_fraction = min(1.0, performance / ndp_bw)
    if options.placement == "static_shards" and pipe.engines_active:
        # The busiest engine sets the NDP stage; the others finish their fewer shards
        # sooner and idle: on average engines are busy 1/imbalance of the busiest's time.
        busy_fraction /= pipe.load_imbalance
    host_idle = max(total - host_active, 0.0)
    active, n = pipe.engines_active, pipe.engines_total
    engines = {
        "busy": active * engines_on * busy_fraction,
        "idle": active * engines_on * (1 - busy_fraction),
        "off": (n - active) * total + active * (total - engines_on),
    }
    # ndp_cpu: on for the whole run, but only a run that has engines on: with none (a host
    # split) no data crosses the layer, as the simulator has it (it charged 18 mW x T_CPU)
    switch_on = engines_on if options.switch_time == "ndp" or not active else total
    # each SSD is active for its own read, never longer than the run (docs/platforms.md)
    storage_active = float(np.minimum(storage_busy, total).sum())
    storage = {
        "active": storage_active,
        "idle": max(total * platform.devices - storage_active, 0.0),
    }
    times = StateTimes(
        {
            "engines": engines,
            "host": {"active": host_active, "idle": host_idle},
            "switch_layer": {"on": switch_on},
            "storage": storage,
        }
    )
    return total, times
