"""The reported bottleneck is the stage that limits the run: the one whose speed-up shortens
it most (issue 5 audit, finding 1).

A streaming host part lets host DRAM buffer partials, so the device side can finish well
before the run does; a stage measured only up to the last arrival then looks busier than it
is. Each case below is checked by doubling every stage in turn.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from ndpkit.hw import Platform, load_platform
from ndpkit.model import FULL_GEAR, HOST_ONLY, Configuration
from ndpkit.model.pipeline import CPU, LINK, NDP, NDP2CPU, SSD
from ndpkit.profile import Profile, load_profile
from ndpkit.sim import SimOptions, Simulation, simulate

from .synthetic import APP, variant, write_platform

MB = 1e6
DOUBLE = 2.0


def faster(platform: Platform, profile: Profile, stage: str) -> tuple[Platform, Profile]:
    """`platform` and `profile` with `stage`'s bandwidth doubled."""
    if stage == SSD:
        bps = platform.storage.read_bandwidth_bytes_per_s
        return variant(platform, {"storage": {"read_bandwidth_bytes_per_s": DOUBLE * bps}}), profile
    if stage in (LINK, NDP2CPU):
        bps = platform.host_link.bandwidth_bytes_per_s
        return variant(platform, {"host_link": {"bandwidth_bytes_per_s": DOUBLE * bps}}), profile
    if stage == NDP:
        assert platform.engines is not None
        rates = {app: DOUBLE * bps for app, bps in platform.engines.throughput.items()}
        return variant(platform, {"engines": {"throughput": rates}}), profile
    assert stage == CPU
    changes: dict[str, Any] = {}
    if profile.host_part_bytes_per_s is not None:
        changes["host_part_bytes_per_s"] = DOUBLE * profile.host_part_bytes_per_s
    if profile.host_only_bytes_per_s is not None:
        changes["host_only_bytes_per_s"] = DOUBLE * profile.host_only_bytes_per_s
    return platform, profile.with_changes(**changes)


def speedups(
    platform: Platform, profile: Profile, config: Configuration, sim: SimOptions
) -> tuple[Simulation, dict[str, float]]:
    """The run, and the seconds it saves with each bottleneck candidate doubled."""
    s = simulate(platform, profile, config, sim=sim)
    saved = {}
    for stage in s.utilisation:
        if stage == CPU and s.host_mode == "after":
            continue  # a phase of its own, not a candidate (Simulation.bottleneck)
        quicker = simulate(*faster(platform, profile, stage), config, sim=sim)
        saved[stage] = s.time_s - quicker.time_s
    return s, saved


def assert_reported_stage_limits_the_run(s: Simulation, saved: dict[str, float]) -> None:
    best = max(saved.values())
    assert saved[s.bottleneck] >= best - 1e-9 * s.time_s, (s.bottleneck, saved, s.utilisation)
    assert saved[s.bottleneck] > 0.05 * s.time_s, (s.bottleneck, saved)


def test_cns_he_is_cpu_bound_not_link_bound() -> None:
    """CNS (no engines) runs HE on 36 host cores at 26 GiB/s behind a 36 GiB/s link. The
    link delivers the 3.4 GiB in 0.094 s, the host needs 0.130 s, and host DRAM holds what
    the host has not reached yet: the CPU sets the pace, and a link twice as wide saves
    under 1 %."""
    cns = load_platform("cns")
    he = load_profile("he")
    s, saved = speedups(cns, he, FULL_GEAR, SimOptions())
    assert s.bottleneck == CPU == s.model.bottleneck
    assert saved[LINK] < 0.01 * s.time_s
    assert saved[CPU] > 0.25 * s.time_s
    assert s.utilisation[LINK] == pytest.approx(0.0944 / s.time_s, rel=0.01)
    assert_reported_stage_limits_the_run(s, saved)


def platform(tmp_path: Path, *, uplink: str, engine: str = "4 GB/s") -> Platform:
    return write_platform(
        tmp_path, name=f"b-{uplink[:2]}-{engine[:1]}", devices=4, ssd="4 GB/s",
        engine=engine, uplink=uplink, cores=4,
    )  # fmt: skip


def test_a_host_that_streams_behind_a_faster_link_is_the_bottleneck(tmp_path: Path) -> None:
    """Four SSDs and engines at 4 GB/s each (16 GB/s), α = 1, a 10 GB/s uplink and a host
    part at 8 GB/s streaming from 1024 host DRAM slots (1 GB). D = 4 GB: the uplink is done
    at 0.4 s with 0.8 GB buffered (it never fills), the host at 0.5 s. Measured to the last
    arrival the link and the host would both be 100 % busy (and the tie went to the link);
    over the run the link is 80 % busy. Doubling the host saves 0.1 s (the link then binds),
    doubling the link saves nothing."""
    server = platform(tmp_path, uplink="10 GB/s")
    prof = Profile(app=APP, data_size="4 GB", alpha=1, host_part="8 GB/s")
    s, saved = speedups(server, prof, FULL_GEAR, SimOptions(chunk_bytes=MB, host_mode="stream"))
    assert s.bottleneck == CPU
    assert s.utilisation[NDP2CPU] == pytest.approx(0.4 / 0.5, rel=0.01)
    assert saved[NDP2CPU] == pytest.approx(0.0, abs=1e-3)
    assert saved[CPU] == pytest.approx(0.1, rel=0.02)
    assert_reported_stage_limits_the_run(s, saved)


@pytest.mark.parametrize(
    ("uplink", "engine", "expected"),
    [("6 GB/s", "4 GB/s", NDP2CPU), ("100 GB/s", "1 GB/s", NDP)],
)
def test_the_stage_that_binds_a_streaming_run_is_reported(
    tmp_path: Path, uplink: str, engine: str, expected: str
) -> None:
    """The same server with the uplink (6 GB/s: 0.67 s against the host's 0.5 s) or the
    engines (4 x 1 GB/s: 1 s) as the slowest stage: each is reported, and doubling it
    shortens the run more than doubling anything else."""
    server = platform(tmp_path, uplink=uplink, engine=engine)
    prof = Profile(app=APP, data_size="4 GB", alpha=1, host_part="8 GB/s")
    s, saved = speedups(server, prof, FULL_GEAR, SimOptions(chunk_bytes=MB, host_mode="stream"))
    assert s.bottleneck == expected
    assert_reported_stage_limits_the_run(s, saved)


def test_a_host_split_and_a_waiting_host_part(tmp_path: Path) -> None:
    """The host split streams raw data over the 10 GB/s uplink to a 6 GB/s host: the CPU
    binds. With the host part waiting for every partial (after), the device side is its own
    phase: the 4 GB/s-per-SSD reads and engines (16 GB/s) are behind the 10 GB/s uplink,
    which is reported and is the device stage whose doubling saves most."""
    server = platform(tmp_path, uplink="10 GB/s")
    prof = Profile(app=APP, data_size="4 GB", alpha=1, host_part="8 GB/s", host_only="6 GB/s")
    s, saved = speedups(server, prof, HOST_ONLY, SimOptions(chunk_bytes=MB))
    assert s.bottleneck == CPU
    assert_reported_stage_limits_the_run(s, saved)
    s, saved = speedups(server, prof, FULL_GEAR, SimOptions(chunk_bytes=MB, host_mode="after"))
    assert s.bottleneck == NDP2CPU
    assert_reported_stage_limits_the_run(s, saved)
