"""In-storage processing inside one SSD, per flash channel: RISP's models (CCGRID 2018).

With c powered flash channels of bandwidth b_ch, D bytes spread evenly over them,
and β = the profile's reduction ratio (ndpkit's `alpha`):

Baseline, the host computes (`split = "host"`), Eqs. (1)-(5):

    t_ch2DRAM   = D / (c x b_ch)                       (1)
    t_DRAM2host = D / b_hostIO                         (2)
    t_transfer  = max(t_ch2DRAM, t_DRAM2host)          (3)  the two transfers overlap
    t_hostComp  = CPB x D / (f_host x n_cpu)           (4)
    T           = t_transfer + t_hostComp              (5)  compute follows the transfer

RISP, k processing cells compute (`split = "device"`), Eqs. (6)-(8):

    t_ch2RU   = D / (c x b_ch)
    t_RUComp  = (D / (α x k) + n_delay) / f_RU         (6)  α: bytes per cycle of a cell
    t_RU2DRAM = D / (β x b_DRAM)                       (7)
    T         = max(t_ch2RU, t_RUComp, t_RU2DRAM)      (8)  [+ D / (β b_hostIO), R11]

Energy, Eqs. (9)-(10): every component is active, idle or off; E = Σ P x t over the
states (attribution of spec §5.2, option R4), plus EPC x cycles for the host CPUs.

Example (Sobel, 16 channels, 100 MHz, SATA 3.2): t_ch2RU = 0.5 GB / 6.4 GB/s = 78.1 ms,
t_RUComp = (0.5e9 / 16 + 4) / 100 MHz = 312.5 ms, t_RU2DRAM = 33.3 ms, so T = 312.5 ms,
compute-bound. The Baseline on 4 cores at 3.1 GHz takes max(78.1 ms, 0.5 / 1.97 = 253.8 ms)
+ 106.568 x 0.5e9 / 12.4e9 (= 4.297 s) = 4.551 s.
"""

from __future__ import annotations

import math
from collections import Counter
from dataclasses import dataclass

from ndpkit.errors import ModelError
from ndpkit.hw import Platform, Reconfiguration
from ndpkit.model.configuration import Configuration
from ndpkit.model.energy import Energy, StateTimes
from ndpkit.model.options import Options
from ndpkit.model.pipeline import Pipeline, no_engine_rate, platform_where
from ndpkit.profile import Profile

# Stage names, in data-flow order.
CHANNEL, CELL, DRAM, HOST_LINK, LINK, CPU = "channel", "cell", "dram", "host_link", "link", "cpu"
RECONFIGURATION = "reconfiguration"
"""R15's bitstream load: a stage before the others, not overlapped with them."""


@dataclass(frozen=True)
class Layout:
    """Which channels are read and which cells compute."""

    channels_total: int
    channels_on: tuple[int, ...]
    cells_on: tuple[int, ...]
    max_channels_per_cell: int
    cells_serving: int = 0
    """Cells that receive at least one powered channel's data (the others only draw power)."""

    @property
    def cells(self) -> int:
        return len(self.cells_on)


@dataclass(frozen=True)
class InStorageRun:
    """Stage times, pipeline and state times of one in-storage or baseline run."""

    pipeline: Pipeline
    stage_times_s: dict[str, float]
    time_s: float
    t_ndp_s: float
    t_cpu_s: float
    state_times: StateTimes
    energy: Energy
    layout: Layout
    notes: list[str]


def layout(platform: Platform, config: Configuration) -> Layout:
    """Validate `config` against the SSD's channels and cells."""
    n = platform.channels
    powered = config.powered_channels(n)
    bad = [c for c in powered if not 0 <= c < n]
    if not powered or bad or len(set(powered)) != len(powered):
        raise ModelError(
            f"powered channels must be distinct ids in 0..{n - 1}, got {list(powered)[:8]}"
        )
    if config.split == "host" or platform.engines is None:
        return Layout(n, powered, (), 0)
    routes = config.routes(n)
    if len(routes) != n:
        raise ModelError(f"route must name a cell for each of the {n} channels, got {len(routes)}")
    active = powered if config.active is None else config.active
    if not active:
        raise ModelError("a device split needs at least one processing cell")
    if any(not 0 <= cell < n for cell in active):
        raise ModelError(f"cell ids must be in 0..{n - 1}")
    computing = set(active)
    orphans = [ch for ch in powered if routes[ch] not in computing]
    if orphans:
        raise ModelError(f"channels {orphans[:8]} are routed to cells that are off")
    loads = Counter(routes[ch] for ch in powered)
    return Layout(n, powered, tuple(sorted(set(active))), max(loads.values()), len(loads))


def cell_design(platform: Platform, profile: Profile) -> tuple[float, float]:
    """One cell's rate (bytes/s) and pipeline fill (s), in this order: the platform's design
    table (`bytes_per_cycle`), its throughput table, the profile's FPGA cell design, then
    the profile's measured rate for the cells' kind (`engine`, e.g. `ndpkit evaluate`'s
    host measurement mapped onto the cell, no pipeline fill). The platform's own tables win,
    as in the server model (`pipeline.engine_bandwidth`); a design is the cell itself, so it
    wins over a rate mapped from another machine."""
    engines = platform.engines
    if engines is None:
        where = platform_where(platform, "engines")
        raise ModelError(f"{where}platform {platform.name!r} has no processing cells")
    app = profile.app
    clock = engines.frequency_hz
    if app in engines.bytes_per_cycle and clock is not None:
        delay = engines.pipeline_delay_cycles.get(app, 0)
        return engines.bytes_per_cycle[app] * clock, delay / clock
    if app in engines.throughput:
        # n_delay still fills the pipeline whatever gives the rate (it was dropped here: a
        # 1 s fill went unseen).
        delay = engines.pipeline_delay_cycles.get(app, 0)
        if delay and clock is None:
            raise ModelError(
                f"{platform_where(platform, 'engines.frequency')}platform {platform.name!r} "
                f"gives no engines.frequency, the cells' clock, needed to time "
                f"engines.pipeline_delay.{app}, in cycles"
            )
        return engines.bandwidth_bytes_per_s(app), delay / clock if delay and clock else 0.0
    cell = profile.fpga_cell
    if cell is not None:
        if clock is None:
            source, field = profile.where("fpga_cell")
            raise ModelError(
                f"{platform_where(platform, 'engines.frequency')}platform {platform.name!r} "
                f"gives no engines.frequency, the cells' clock, needed to clock the profile's "
                f"FPGA cell for {app!r} ({source}: {field})"
            )
        return cell.bytes_per_cycle * clock, cell.pipeline_delay_cycles / clock
    if engines.kind in profile.engine_bytes_per_s:
        return profile.engine_bytes_per_s[engines.kind], 0.0
    raise no_engine_rate(platform, profile, in_storage=True)


def run(
    platform: Platform, profile: Profile, config: Configuration, options: Options
) -> InStorageRun:
    """Baseline (split=host, or no cells) or RISP (split=device) on an in-storage platform."""
    if not platform.is_in_storage:
        where = platform_where(platform, "storage.channels")
        raise ModelError(f"{where}platform {platform.name!r} is not described per flash channel")
    lay = layout(platform, config)
    if lay.cells == 0:
        return _baseline(platform, profile, lay, options)
    return _risp(platform, profile, lay, options)


def _channel_rate(platform: Platform, lay: Layout, *, to_host: bool = False) -> float:
    """The channels' rate: n_ch x b_ch, capped by a `read_bandwidth` the file declares (the
    device's own limit) and, for data that leaves the device (the Baseline), by its
    `link`'s bandwidth. Both caps were ignored: a 0.5 GB/s link changed nothing."""
    storage = platform.storage
    b_ch = storage.channel_bandwidth_bytes_per_s
    assert b_ch is not None  # is_in_storage
    rate = len(lay.channels_on) * b_ch
    if storage.read_bandwidth_bytes_per_s is not None:
        rate = min(rate, storage.read_bandwidth_bytes_per_s)
    if to_host and storage.link is not None:
        rate = min(rate, storage.link.bandwidth_bytes_per_s)
    return rate


def _baseline(platform: Platform, profile: Profile, lay: Layout, options: Options) -> InStorageRun:
    d = profile.data_bytes
    host = platform.host
    cpb = profile.host_cycles_per_byte
    if cpb is not None:
        cpu_rate = host.frequency_hz * host.cores / cpb
    elif profile.host_only_bytes_per_s is not None:
        cpu_rate = profile.host_only_bytes_per_s
    else:
        raise ModelError(
            f"profile {profile.app!r} has neither cycles_per_byte (or cpi, ipb, "
            "frequency_ratio) nor a host_only rate, so the host cannot run it"
        )
    stages = {
        CHANNEL: _channel_rate(platform, lay, to_host=True),
        LINK: platform.host_link.bandwidth_bytes_per_s,
        CPU: cpu_rate,
    }
    t = {name: d / bw for name, bw in stages.items()}
    t_transfer = max(t[CHANNEL], t[LINK])
    total = t_transfer + t[CPU]
    pipe = Pipeline(stages, 0.0, 0.0, _cells_total(platform), 0, 0, after=(CPU,))
    full = options.attribution == "all_active"
    times = StateTimes(
        {
            "nvm": _nvm_times(platform, lay, t[CHANNEL], total, full),
            "device_dram": _active_idle(t_transfer, total, full),
            "controller": _active_idle(t_transfer, total, full),
            "host_interface": _active_idle(t[LINK], total, full),
            "host": _active_idle(t[CPU], total, full),
            "host_dram": {"active": total},
            "host_chipset": {"active": total},
        }
    )
    energy = _price(platform, profile, times, lay, options, host_cpu=True)
    return InStorageRun(pipe, t, total, 0.0, t[CPU], times, energy, lay, [])


def _risp(platform: Platform, profile: Profile, lay: Layout, options: Options) -> InStorageRun:
    d, beta = profile.data_bytes, profile.alpha
    storage = platform.storage
    if storage.dram is None:
        where = platform_where(platform, "storage.dram")
        raise ModelError(f"{where}platform {platform.name!r} needs storage.dram (on-device DRAM)")
    cell_rate, delay_s = cell_design(platform, profile)
    share = (
        lay.max_channels_per_cell / len(lay.channels_on)
        if options.cell_load == "max_group"
        else 1 / lay.cells_serving
    )
    t = {
        CHANNEL: d / _channel_rate(platform, lay),
        CELL: d * share / cell_rate + delay_s,
        DRAM: d / (beta * storage.dram.bandwidth_bytes_per_s),
    }
    if options.host_stage == "with_host_stage":
        t[HOST_LINK] = d / (beta * platform.host_link.bandwidth_bytes_per_s)
    t_risp = max(t.values())
    notes: list[str] = []
    total = t_risp
    load_s = 0.0
    if options.reconfiguration == "include":
        # R15: the bitstream loads before processing starts, so T includes it (and D / T,
        # spec §4.4, falls). Over the load the RU draws the reconfiguration power (its
        # energy, below) and every other component waits: spec §5.2 charges NVM and DRAM
        # idle over T minus their active time, and the SSD chipset over the whole of T.
        reconf = _reconfiguration(platform)
        load_s = reconf.time_s
        total += load_s
        notes.append(
            f"includes loading the bitstream: {reconf.time_s * 1e3:.3g} ms, "
            f"{reconf.energy_j * 1e3:.3g} mJ"
        )
    stages = {name: d / seconds for name, seconds in t.items()}
    if load_s:
        stages[RECONFIGURATION] = d / load_s
    engines_total = _cells_total(platform)
    pipe = Pipeline(
        stages,
        cell_rate,
        cell_rate * engines_total,
        engines_total,
        lay.cells,
        lay.max_channels_per_cell,
        after=(RECONFIGURATION,) if load_s else (),
        shards_total=len(lay.channels_on),
    )
    full = options.attribution == "all_active"
    ru = _active_idle(t[CELL], t_risp, full or options.ru_time == "configured")
    if load_s:
        ru["configuring"] = load_s  # priced as the reconfiguration energy
    times = StateTimes(
        {
            "nvm": _nvm_times(platform, lay, t[CHANNEL], total, full),
            "ru": ru,
            "device_dram": _active_idle(t[DRAM], total, full),
            "controller": {"active": total},  # R13: the SSD chipset, at controller power
        }
    )
    energy = _price(platform, profile, times, lay, options, host_cpu=False)
    return InStorageRun(pipe, t, total, total, 0.0, times, energy, lay, notes)


def _cells_total(platform: Platform) -> int:
    return 0 if platform.engines is None else platform.engines.count


def _active_idle(active_s: float, total_s: float, all_active: bool) -> dict[str, float]:
    if all_active:
        return {"active": total_s, "idle": 0.0}
    active = min(active_s, total_s)
    return {"active": active, "idle": total_s - active}


def _nvm_times(
    platform: Platform, lay: Layout, t_read: float, total: float, all_active: bool
) -> dict[str, float]:
    """Channel-seconds per state: powered channels read then idle; the others are off."""
    per = _active_idle(t_read, total, all_active)
    on = len(lay.channels_on)
    return {
        "active": on * per["active"],
        "idle": on * per["idle"],
        "off": (lay.channels_total - on) * total,
    }


def ru_power_w(platform: Platform, profile: Profile, cells: int, options: Options) -> float:
    """P_RU,active(app, k cells), option R6."""
    engines, public = platform.engines, platform.public_cell
    if engines is None:
        return 0.0
    app, cell = profile.app, profile.fpga_cell
    per_cell = engines.power_active_by_app.get(app)
    if per_cell is None:
        per_cell = cell.power_w if cell and cell.power_w is not None else engines.power_active_w
    fixed = public.power_active_by_app.get(app) if public else None
    if fixed is None:
        if cell is not None and cell.power_fixed_w is not None:
            fixed = cell.power_fixed_w
        else:
            fixed = public.power_active_w if public else 0.0
    if options.ru_power == "proportional":
        reference = public.reference_cells if public else engines.count
        return (fixed + reference * per_cell) * cells / reference
    return fixed + cells * per_cell


def _price(
    platform: Platform,
    profile: Profile,
    times: StateTimes,
    lay: Layout,
    options: Options,
    *,
    host_cpu: bool,
) -> Energy:
    """Eq. (9) over the components present, plus Eq. (10)'s EPC x cycles on the host."""
    storage = platform.storage
    nvm = times.of("nvm")
    # per_device: one power figure for the whole device, so channel-seconds are scaled
    # back to device-seconds.
    scale = 1 / max(len(lay.channels_on), 1) if options.nvm_power == "per_device" else 1.0
    parts = {
        "nvm": scale
        * (
            storage.channel_power_active_w * nvm.get("active", 0.0)
            + storage.channel_power_idle_w * nvm.get("idle", 0.0)
        ),
    }
    if storage.dram is not None:
        parts["device_dram"] = _state_energy(
            times.of("device_dram"), storage.dram.power_active_w, storage.dram.power_idle_w
        )
    if storage.controller is not None:
        parts["controller"] = _state_energy(
            times.of("controller"),
            storage.controller.power_active_w,
            storage.controller.power_idle_w,
        )
    if "ru" in times.by_component:
        idle_w = platform.public_cell.power_idle_w if platform.public_cell else 0.0
        parts["ru"] = _state_energy(
            times.of("ru"), ru_power_w(platform, profile, lay.cells, options), idle_w
        )
        if options.reconfiguration == "include":
            parts["reconfiguration"] = _reconfiguration(platform).energy_j
    if host_cpu:
        link, host = platform.host_link, platform.host
        parts["host_interface"] = _state_energy(
            times.of("host_interface"), link.power_active_w, link.power_idle_w
        )
        parts["host_dram"] = host.dram_power_w * times.of("host_dram").get("active", 0.0)
        parts["host_chipset"] = host.chipset_power_w * times.of("host_chipset").get("active", 0.0)
        parts["host_cpu"] = _host_cpu_energy_j(platform, profile, options)
    return Energy(parts)


def _state_energy(states: dict[str, float], active_w: float, idle_w: float) -> float:
    return active_w * states.get("active", 0.0) + idle_w * states.get("idle", 0.0)


def _host_cpu_energy_j(platform: Platform, profile: Profile, options: Options) -> float:
    """EPC x n: n = CPB x D cycles (R3 `cycles`) or IPB x D instructions."""
    epc = platform.host.energy_per_cycle_j
    if epc is None:
        return 0.0
    if options.cpu_energy == "instructions":
        if profile.ipb is None:
            # Named where the profile came from (a file's apps.NAME), not only by its app.
            source, field = profile.where("ipb")
            raise ModelError(
                f"{source}: {field}: no ipb (instructions per byte) to price the host CPU "
                "by under cpu_energy=instructions (EPC x IPB x D); give cpi, ipb and "
                "frequency_ratio, or use cpu_energy=cycles"
            )
        return epc * profile.ipb * profile.data_bytes
    cpb = profile.host_cycles_per_byte
    if cpb is None:
        # A measured host rate: the cycles it used on this host.
        rate = profile.host_only_bytes_per_s or math.inf
        cpb = platform.host.frequency_hz * platform.host.cores / rate
    return epc * cpb * profile.data_bytes


def _reconfiguration(platform: Platform) -> Reconfiguration:
    engines = platform.engines
    reconf = engines.reconfiguration if engines is not None else None
    if reconf is None:
        raise ModelError(
            f"{platform_where(platform, 'engines.reconfiguration')}"
            f"platform {platform.name!r} declares no engines.reconfiguration "
            "(bitstream, port_width, clock, power) for reconfiguration=include"
        )
    return reconf
