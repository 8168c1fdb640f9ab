"""The 4-stage pipeline performance model, Eq. (1) of the RANS/RFNS paper.

    performance = min(SSD_BW, NDP_BW, NDP2CPU_BW x α, CPU_BW)            (1)

Every bandwidth is measured against the raw input size D (§4.1). On a server
without engines (CNS, or the `host` split) raw data crosses the host link and α
is not applied (§4.2): performance = min(SSD_BW, link_BW, CPU_BW,CNS).

Full-server NDP bandwidth is extrapolated from one engine (§4.4): NDP_BW =
n x SNDP_BW, i.e. T_NDP,full = T_NDP,single / n, unless a measured (or published)
full-server time is supplied.

Example (anchor 11.1, LC on SFNS): min(3, 37/13.45 = 2.75, 36 x 8, +inf) = 2.75 GB/s,
bottleneck NDP.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

from ndpkit.errors import ModelError, check_kinds
from ndpkit.hw import Platform, preset_names
from ndpkit.hw.platform import platform_file
from ndpkit.model.configuration import Configuration
from ndpkit.model.options import Options
from ndpkit.profile import Profile

# Stage names, in pipeline order.
SSD, NDP, NDP2CPU, LINK, CPU = "ssd", "ndp", "ndp2cpu", "link", "cpu"


@dataclass(frozen=True)
class Pipeline:
    """Per-stage bandwidths (bytes of raw input per second) of one configuration."""

    stages: dict[str, float]
    engine_bytes_per_s: float
    """SNDP_BW: one engine's processing bandwidth (0 when no engine runs)."""
    ndp_full_bytes_per_s: float
    """NDP_BW of the full server (all engines on), the basis of Eq. (2)."""
    engines_total: int
    engines_active: int
    max_shards_per_engine: int
    after: tuple[str, ...] = ()
    """Stages that run after the others instead of overlapping them (RISP's baseline
    computes on the host once the transfer is done, Eq. 5)."""
    shards_total: int | None = None
    """Devices (in an SSD, powered channels) whose data the active engines share, where
    that is not all `engines_total`: RISP's channels_off powers the others off, and their
    data is not read (R12)."""

    @property
    def performance_bytes_per_s(self) -> float:
        """D / time per byte: the slowest overlapped stage, plus each stage run `after`."""
        overlapped = [bw for name, bw in self.stages.items() if name not in self.after]
        if not self.after:
            return min(overlapped)
        seconds_per_byte = 1 / min(overlapped) if overlapped else 0.0
        seconds_per_byte += sum(1 / self.stages[name] for name in self.after)
        return math.inf if seconds_per_byte == 0 else 1 / seconds_per_byte

    @property
    def bottleneck(self) -> str:
        """The slowest stage (argmin bandwidth); ties go to the earliest in the pipeline."""
        best = min(self.stages.values())
        return next(name for name, bw in self.stages.items() if bw == best)

    @property
    def load_imbalance(self) -> float:
        """Max shards on one engine over the mean (1.0 = perfectly balanced)."""
        if self.engines_active == 0:
            return 1.0
        # over the devices holding data: 35 of 64 channels on, one cell each, was 0.55x
        shards = self.engines_total if self.shards_total is None else self.shards_total
        mean = shards / self.engines_active
        return self.max_shards_per_engine / mean


_NOT_GIVEN = object()
"""`check_model_inputs`' default: an argument the caller does not take."""


def check_model_inputs(
    platform: object,
    profile: object,
    config: object = _NOT_GIVEN,
    options: object = _NOT_GIVEN,
) -> None:
    """A SpecError naming the first argument of another kind, as `estimate` gives one: a
    preset's name for the platform (or None for the options) ended in "'str' object has no
    attribute 'devices'" from the exported models. Arguments not given are not checked."""
    wanted = [
        ("platform", platform, Platform, "a Platform (load_platform(…))"),
        ("profile", profile, Profile, "a Profile (load_profile(…))"),
        ("config", config, Configuration, "a Configuration"),
        ("options", options, Options, "an Options"),
    ]
    check_kinds(*(w for w in wanted if w[1] is not _NOT_GIVEN))


def engine_bandwidth(platform: Platform, profile: Profile) -> float:
    """SNDP_BW: the platform's per-kernel entry wins (its throughput table, else its cell
    design, bytes per cycle x clock); else the profile's measurement."""
    check_model_inputs(platform, profile)
    return _engine_bandwidth(platform, profile)


# The exported functions check their arguments; the model's own calls, made once `estimate`
# has checked them, go to these (checked at every layer, the optimiser's estimates spent 7%
# of their time re-checking the same four arguments).


def _engine_bandwidth(platform: Platform, profile: Profile) -> float:
    engine = platform.engines
    if engine is None:
        where = platform_where(platform, "engines")
        raise ModelError(f"{where}platform {platform.name!r} has no NDP engines")
    if engine.has_rate_for(profile.app):
        return engine.bandwidth_bytes_per_s(profile.app)
    if engine.kind in profile.engine_bytes_per_s:
        return profile.engine_bytes_per_s[engine.kind]
    raise no_engine_rate(platform, profile)


def platform_where(platform: Platform, field: str) -> str:
    """ "FILE: FIELD: " for an error about `field` of a platform loaded from a file (its
    `platform_file`), else "": an error naming only the platform left the user to find which
    of the files given to fix (a preset's or a platform built in code has none)."""
    source = platform_file(platform)
    return f"{source}: {field}: " if source is not None else ""


def no_engine_rate(platform: Platform, profile: Profile, *, in_storage: bool = False) -> ModelError:
    """The error for an app neither the platform nor the profile gives an engine rate: both
    named, and what to add to either (`in_storage`: the cell model, which also takes the
    profile's FPGA cell design). It names the profile's file and table, and the platform's
    file (a preset's fix is a file that extends it): "the platform" and "the profile" left
    the user to find which of the files given to fix."""
    engines = platform.engines
    assert engines is not None
    known = ", ".join(sorted({*engines.throughput, *engines.bytes_per_cycle}))
    entries = f"have entries for {known}" if known else "have no rate entries"
    app, kind = profile.app, engines.kind
    platform_fix, profile_fix = f"engines.throughput.{app}", f'engine = {{ {kind} = "…" }}'
    if engines.frequency_hz is not None:  # clocked engines: bytes per cycle x clock serves
        platform_fix += f" or engines.bytes_per_cycle.{app}"
    if in_storage and engines.frequency_hz is not None:  # a design needs the cells' clock
        profile_fix += f" or an [apps.{app}.fpga_cell] design"
    source, field = profile.where("engine")
    table = field.removesuffix(".engine")
    if table == "engine":  # a profile built in code
        where, profile_fix = "", f"{profile_fix} to the profile"
        profile_lacks = f"the profile of {app!r}"
    else:
        where, profile_fix = f"{source}: {field}: ", f"{profile_fix} to {table} in {source}"
        profile_lacks = table
    add_to = platform_file(platform) or "the platform"
    if add_to == "the platform" and platform.name in preset_names():
        add_to += f" (a file of your own that extends {platform.name!r})"
    return ModelError(
        f"{where}platform {platform.name!r}: no engine rate for app {app!r}: its {kind} "
        f"engines {entries}, and {profile_lacks} has no {kind} measurement; add "
        f"{platform_fix} to {add_to}, or {profile_fix}"
    )


def full_ndp_time_s(platform: Platform, profile: Profile, options: Options) -> float:
    """T_NDP with every engine on: published (wall_times=printed) or single / n."""
    check_model_inputs(platform, profile, options=options)
    return full_ndp_time_unchecked_s(platform, profile, options)


def full_ndp_time_unchecked_s(platform: Platform, profile: Profile, options: Options) -> float:
    """`full_ndp_time_s` for arguments already checked (`estimate`)."""
    if options.wall_times == "printed" and platform.name in profile.published_ndp_time_s:
        return profile.published_ndp_time_s[platform.name]
    return profile.data_bytes / (platform.devices * _engine_bandwidth(platform, profile))


def pipeline(
    platform: Platform, profile: Profile, config: Configuration, options: Options
) -> Pipeline:
    """Stage bandwidths of Eq. (1) for `config` on `platform`."""
    check_model_inputs(platform, profile, config, options)
    return pipeline_unchecked(platform, profile, config, options)


def pipeline_unchecked(
    platform: Platform, profile: Profile, config: Configuration, options: Options
) -> Pipeline:
    """`pipeline` for arguments already checked (`estimate`)."""
    n = platform.devices
    if _host_split(platform, config):
        return _host_only(platform, profile)
    active = config.active_engines(n)
    routes = config.routes(n)
    _check_mapping(platform, active, routes)
    single = _engine_bandwidth(platform, profile)
    ndp_full = profile.data_bytes / full_ndp_time_unchecked_s(platform, profile, options)
    loads = config.shards_per_engine(n)
    max_load = max(loads.values())
    ssd_each = _slowest_ssd_bandwidth(platform, options)
    # A partial configuration is extrapolated from one engine, as Eq. (2) sizes it; a
    # published full-server time (wall_times=printed) only caps it.
    partial = ndp_full if len(active) == n else min(ndp_full, len(active) * single)
    if options.placement == "static_shards":
        ndp, ssd = ndp_full / max_load, n * ssd_each
    elif options.placement == "reshard_y_ssds":
        # D/y on each active engine's own SSD: the slowest of those SSDs sets the stage. The
        # slowest of all n said 2.5 GB/s for 18 engines under mux-2 whose own SSDs (module
        # position 0) each have a wire of their own and read at 3 GB/s (found by an audit).
        own = ssd_read_bandwidths(platform, options)[list(active)]
        ndp, ssd = partial, len(active) * float(own.min())
    else:
        ndp, ssd = partial, n * ssd_each
    stages = {
        SSD: ssd,
        NDP: ndp,
        NDP2CPU: platform.host_link.bandwidth_bytes_per_s * profile.alpha,
        CPU: profile.host_stage_bytes_per_s,
    }
    return Pipeline(stages, single, ndp_full, n, len(active), max_load)


def no_host_only_rate(platform: Platform, profile: Profile) -> ModelError:
    """The error for a host-only run of a profile without a host-only rate, naming the
    profile's file and table where it was loaded from one."""
    source, field = profile.where("host_only")
    where = "" if field == "host_only" else f"{source}: {field}: "  # else built in code
    return ModelError(
        f"{where}profile {profile.app!r} has no host-only rate (host_only), so it cannot run "
        f"without engines, as it would on {platform.name!r}"
        f"{' (no engines)' if platform.engines is None else ' (the host split)'}"
    )


def _host_only(platform: Platform, profile: Profile) -> Pipeline:
    if profile.host_only_bytes_per_s is None:
        raise no_host_only_rate(platform, profile)
    n = platform.devices
    stages = {
        SSD: n * platform.storage.device_bandwidth_bytes_per_s,
        LINK: platform.host_link.bandwidth_bytes_per_s,
        CPU: profile.host_only_bytes_per_s,
    }
    engines = 0 if platform.engines is None else platform.engines.count
    return Pipeline(stages, 0.0, 0.0, engines, 0, 0)


def ssd_shares_bytes(
    platform: Platform, config: Configuration, options: Options, data: float
) -> np.ndarray:
    """Bytes on each SSD, per the placement option (O8):

    - `static_shards`: D/n on every SSD, as the runtime shards; an engine serving two
      SSDs under mux-2 has twice the work;
    - `paper_no_loss`: placed so that every active engine gets D/y, split evenly over the
      SSDs routed to it (the paper's "no performance loss" needs the data re-sharded so);
    - `reshard_y_ssds`: D/y on the own SSD of each of the y active engines, none elsewhere.

    numpy, not a loop: `plan --optimal` asks this of every engine count of servers of up
    to 10,000 SSDs.
    """
    n = platform.devices
    if _host_split(platform, config) or options.placement == "static_shards":
        return np.full(n, data / n)
    active = np.asarray(config.active_engines(n), dtype=np.intp)
    if options.placement == "reshard_y_ssds":
        shares = np.zeros(n)
        shares[active] = data / len(active)
        return shares
    routes = np.asarray(config.routes(n), dtype=np.intp)
    served = np.bincount(routes, minlength=n)
    return data / len(active) / served[routes]


def ssd_read_bandwidths(platform: Platform, options: Options) -> np.ndarray:
    """Each SSD's read bandwidth on its path: position 0 of a module has its own wire, the
    others cross a mux port (§2.6), capped with `mux_port_cap`."""
    device = platform.storage.device_bandwidth_bytes_per_s
    bandwidths = np.full(platform.devices, device)
    port = platform.switch_layer.port_bandwidth_bytes_per_s
    k = platform.switch_layer.module_size(platform.devices)
    if options.mux_port_cap and port is not None and k > 1:
        bandwidths[np.arange(platform.devices) % k != 0] = min(device, port)
    return bandwidths


def storage_busy_s(
    platform: Platform, config: Configuration, options: Options, data: float
) -> np.ndarray:
    """Seconds each SSD spends reading its share of D (per the placement) at its own
    bandwidth. The SSD stage of Eq. (1) is paced by the slowest SSD; the others finish
    their share sooner and idle. Without engines the data goes to the host, not through
    the switch layer's ports. Per SSD, not summed: each is charged active for at most the
    run (`estimate`), and a sum capped at n x the run let the y SSDs of `reshard_y_ssds`
    be charged active for longer than the run."""
    shares = ssd_shares_bytes(platform, config, options, data)
    if _host_split(platform, config) or not options.mux_port_cap:
        bandwidths = np.full(platform.devices, platform.storage.device_bandwidth_bytes_per_s)
    else:
        bandwidths = ssd_read_bandwidths(platform, options)
    busy: np.ndarray = shares / bandwidths
    return busy


def _host_split(platform: Platform, config: Configuration) -> bool:
    return config.split == "host" or platform.engines is None


def _slowest_ssd_bandwidth(platform: Platform, options: Options) -> float:
    """Each SSD holds D/n, so the SSD stage runs at n x the slowest SSD's bandwidth."""
    device = platform.storage.device_bandwidth_bytes_per_s
    port = platform.switch_layer.port_bandwidth_bytes_per_s
    k = platform.switch_layer.module_size(platform.devices)
    if not options.mux_port_cap or port is None or k == 1:
        return device
    # Position 0 of each module has a dedicated wire (§2.6); the others (there are some,
    # as k > 1) cross a mux, and the slowest SSD sets the stage.
    return min(device, port)


def check_mapping(platform: Platform, config: Configuration) -> None:
    """A ModelError unless `config`'s engines and routes fit `platform`, as `pipeline` checks
    them: for the simulator, which indexes its SSDs by the route before any model runs."""
    if not _host_split(platform, config):
        n = platform.devices
        _check_mapping(platform, config.active_engines(n), config.routes(n))


def _check_mapping(platform: Platform, active: tuple[int, ...], routes: tuple[int, ...]) -> None:
    n = platform.devices
    if not active:
        raise ModelError("a device split needs at least one active engine")
    if len(routes) != n:
        raise ModelError(f"route must name an engine for each of the {n} SSDs, got {len(routes)}")
    # set and min/max checks first: `plan --optimal` checks a mapping per engine count
    if min(active) < 0 or max(active) >= n:
        bad = [e for e in active if not 0 <= e < n]
        raise ModelError(f"active engine ids {bad} are outside 0..{n - 1}")
    on = set(active)
    if not on.issuperset(routes):
        orphans = [ssd for ssd, engine in enumerate(routes) if engine not in on]
        raise ModelError(f"SSDs {orphans} are routed to engines that are off")
    _check_within_modules(platform, routes)


def _check_within_modules(platform: Platform, routes: tuple[int, ...]) -> None:
    """An SSD reaches only the engines of its own mux module (SSDs k*m .. k*m + k - 1), and
    a module's first SSD only its own engine, over its dedicated wire (§2.6; its read is
    never capped by a mux port, `ssd_read_bandwidths`): a route with no wire under this
    switch layer would be timed as if it had one. numpy, as `plan --optimal` checks a
    mapping per engine count."""
    if platform.switch_layer.scheme == "muxn":  # full connection: any route is wired
        return
    n = platform.devices
    k = platform.switch_layer.module_size(n)
    engines = np.fromiter(routes, dtype=np.intp, count=n)
    ssds = np.arange(n)
    unwired = (engines // k != ssds // k) | ((ssds % k == 0) & (engines != ssds))
    bad = np.flatnonzero(unwired)
    if bad.size:
        ssd = int(bad[0])
        first = ssd - ssd % k
        scheme = platform.switch_layer.scheme
        more = f" (and {bad.size - 1} more)" if bad.size > 1 else ""
        if ssd == first and routes[ssd] // k == ssd // k:
            raise ModelError(
                f"SSD {ssd} is routed to engine {routes[ssd]}, but it is the first of its "
                f"{scheme} module and wired to engine {ssd} alone{more}"
            )
        raise ModelError(
            f"SSD {ssd} is routed to engine {routes[ssd]}, outside its {scheme} module "
            f"(SSDs {first}..{min(first + k, n) - 1}){more}: an SSD reaches only the engines "
            "of its own module"
        )


def stage_time_s(data_bytes: float, bandwidth: float) -> float:
    """D / BW, with an infinite bandwidth (no stage) taking no time."""
    return 0.0 if math.isinf(bandwidth) else data_bytes / bandwidth
