"""From a platform, a profile and a configuration to the simulator's plain-data spec.

The simulator sees the same hardware the analytic model reads: each SSD's read bandwidth
(capped by its switch-layer port with `mux_port_cap`), the single-engine rate and α, the
host link, the host part's rate, and every power. Where the data sits follows the model's
`placement` option (`model.pipeline.ssd_shares_bytes`).
"""

from __future__ import annotations

import math
from typing import Any

from ndpkit.errors import ModelError, SpecError
from ndpkit.hw import Platform
from ndpkit.model import Configuration, Options
from ndpkit.model.energy import with_profile_power
from ndpkit.model.pipeline import (
    check_mapping,
    engine_bandwidth,
    no_host_only_rate,
    ssd_read_bandwidths,
    ssd_shares_bytes,
)
from ndpkit.profile import Profile
from ndpkit.sim.options import SimOptions

MAX_HOST_CORES = 1 << 16
"""Host cores the simulator follows one by one (it keeps a slot and a trace track each)."""


def is_host_split(platform: Platform, config: Configuration) -> bool:
    return config.split == "host" or platform.engines is None


def host_rate(platform: Platform, profile: Profile, config: Configuration) -> float:
    """The host part's rate in raw bytes/s (inf: no host work)."""
    if not is_host_split(platform, config):
        return profile.host_stage_bytes_per_s
    if profile.host_only_bytes_per_s is None:
        raise no_host_only_rate(platform, profile)
    return profile.host_only_bytes_per_s


def host_reads_its_data(platform: Platform, profile: Profile, config: Configuration) -> bool:
    """Whether the run has no engines and its host-only rate is that of a run reading its
    data (the papers' CNS times), not one measured with the data in memory: then the host
    works as its data arrives, whatever `host_mode` says."""
    return is_host_split(platform, config) and not profile.host_only_in_memory


def build_spec(
    platform: Platform,
    profile: Profile,
    config: Configuration,
    options: Options,
    sim: SimOptions,
) -> dict[str, Any]:
    """The JSON-ready `PipelineSpec` of the Rust simulator (crates/ndp-sim/src/spec.rs)."""
    if platform.is_in_storage:
        raise ModelError(
            f"platform {platform.name!r} is in-storage (cells per flash channel); the "
            "simulator models NDP servers (an engine beside each SSD) so far"
        )
    if platform.host.cores > MAX_HOST_CORES:
        # The simulator keeps a slot per core: 65536 x 65536 cores aborted the process
        # (a 32 GiB allocation) where the model took them in its stride.
        raise SpecError(
            f"the simulator follows every host core, at most {MAX_HOST_CORES:,}; this host "
            f"has {platform.host.sockets:,} sockets x {platform.host.cores_per_socket:,}",
            source=f"platform {platform.name}",
            field="host.sockets"
            if platform.host.sockets > platform.host.cores_per_socket
            else "host.cores_per_socket",
        )
    # The model's check of the mapping, before any work: a Configuration or Plan made for
    # another platform (rfns's 36 routes on sans) was an IndexError below, and a route
    # outside its mux module was refused by the model only after the whole simulation.
    check_mapping(platform, config)
    n = platform.devices
    data = sim.streamed_bytes(profile)
    host_split = is_host_split(platform, config)
    host_bps = host_rate(platform, profile, config)
    # A rate that holds its reading streams (waiting for the data would count it twice),
    # decided before `resolved`, whose engine power-off follows the host mode.
    run_as = (
        sim.with_(host_mode="stream") if host_reads_its_data(platform, profile, config) else sim
    )
    host_mode, power_off = run_as.resolved(not host_split and not math.isinf(host_bps))
    routes = config.routes(n)
    # Without engines the data goes to the host, not through the switch layer's mux ports:
    # no port caps an SSD then, as the model's storage stage has it (`storage_busy_s`).
    port_options = options.with_(mux_port_cap=False) if host_split else options
    read_bps = ssd_read_bandwidths(platform, port_options).tolist()
    ssds = [
        {
            "bytes": size,
            "read_bps": read_bps[i],
            "engine": None if host_split else routes[i],
            "power_active_w": platform.storage.power_active_w,
            "power_idle_w": platform.storage.power_idle_w,
        }
        for i, size in enumerate(ssd_shares_bytes(platform, config, options, data).tolist())
    ]
    host = platform.host
    host_active_w = host.power_active_w
    if options.energy_form == "B" and not host_split:
        host_active_w -= host.power_idle_w  # the paper's form B, as `model.energy.price`
    switch_on = "run" if options.switch_time == "ndp_cpu" or host_mode == "stream" else "ndp"
    return {
        "chunk_bytes": sim.chunk_bytes,
        "ssds": ssds,
        "engines": [] if platform.engines is None else _engines(platform, profile, config),
        "uplink": {
            "bps": platform.host_link.bandwidth_bytes_per_s,
            "latency_s": platform.host_link.latency_s,
        },
        "host": {
            "cores": host.cores,
            "bps": None if math.isinf(host_bps) else host_bps,
            "after_all": host_mode == "after",
            "buffer_chunks": sim.host_buffer_chunks,
            "power_active_w": host_active_w,
            "power_idle_w": host.power_idle_w,
        },
        "engine_buffer_chunks": sim.buffer_chunks,
        "switch_power_w": 0.0
        if host_split
        else platform.switch_layer.power_w(n, declared_total=options.switch_power == "declared"),
        "switch_on": switch_on,
        "engine_power_off": power_off,
        "service_cv": sim.service_cv,
        "seed": sim.seed,
        "trace": sim.trace,
        "trace_limit": sim.trace_limit,
        "timeline_bins": sim.timeline_bins,
    }


def _engines(platform: Platform, profile: Profile, config: Configuration) -> list[dict[str, Any]]:
    n = platform.devices
    active = set(config.active_engines(n))
    if active:  # with every engine off their power for the app is never charged
        platform = with_profile_power(platform, profile)
    engine = platform.engines
    assert engine is not None
    # A host split keeps every engine off; its rate is never used (and may be unknown).
    bps = engine_bandwidth(platform, profile) if active else 1.0
    app = profile.app
    return [
        {
            "active": e in active,
            "bps": bps,
            "alpha": profile.alpha,
            "link_bps": engine.link_bandwidth_bytes_per_s,
            "wake_s": engine.wake_time_s,
            "wake_energy_j": engine.wake_energy_j,
            "power_busy_w": engine.power_on_w(app),
            "power_idle_w": engine.power_waiting_w(app),
            "power_off_w": engine.power_off_w,
        }
        for e in range(n)
    ]
