"""The delivered-bandwidth timeline never shows more than the uplink can carry (issue 5
audit, finding 7): bytes are counted while they cross, not all at the instant a partial
lands, so a bin narrower than the gap between arrivals cannot alias into a spike."""

from __future__ import annotations

import pytest
from hypothesis import given

from ndpkit.hw import Platform, load_platform
from ndpkit.model import FULL_GEAR, HOST_ONLY, Configuration
from ndpkit.profile import load_profile
from ndpkit.sim import SimOptions, Simulation, simulate

from .synthetic import write_platform
from .test_properties import SETTINGS, Case, cases

MIB = 2**20
REL = 1e-9


def bound_bytes_per_s(s: Simulation, alpha: float) -> float:
    """Raw bytes/s the uplink can deliver: its bandwidth x α (x 1 in a host split)."""
    reduction = 1.0 if s.config.split == "host" or not s.engines else alpha
    return s.uplink["capacity_bps"] * reduction


@pytest.mark.parametrize(
    ("platform", "app", "config", "chunk_bytes"),
    [
        ("rans", "he", FULL_GEAR, MIB),  # 1.77x the uplink before the fix
        ("cns", "he", FULL_GEAR, MIB),
        ("rfns", "he", HOST_ONLY, MIB),
        ("rfns", "fft2d", FULL_GEAR, 16 * MIB),  # one chunk per SSD
        ("rfns", "knn8", FULL_GEAR, MIB),
    ],
)
def test_no_bin_exceeds_the_uplink_on_the_presets(
    platform: str, app: str, config: Configuration, chunk_bytes: float
) -> None:
    profile = load_profile(app)
    s = simulate(load_platform(platform), profile, config, sim=SimOptions(chunk_bytes=chunk_bytes))
    peak = max(s.delivered_bytes_per_s)
    assert peak <= bound_bytes_per_s(s, profile.alpha) * (1 + REL)
    assert sum(s.delivered_bytes) == pytest.approx(s.data_bytes, rel=REL)


def test_a_saturated_uplink_is_flat_at_its_bandwidth() -> None:
    """HE on RANS is uplink-bound (36 GiB/s, α = 1): between fill and drain every bin
    shows the uplink's bandwidth, not alternating spikes and gaps."""
    s = simulate(load_platform("rans"), load_profile("he"))
    bound = s.uplink["capacity_bps"]
    middle = s.delivered_bytes_per_s[5:-5]
    assert min(middle) == pytest.approx(bound, rel=1e-6)
    assert max(middle) == pytest.approx(bound, rel=1e-6)


@pytest.fixture(scope="module")
def base(tmp_path_factory: pytest.TempPathFactory) -> Platform:
    return write_platform(tmp_path_factory.mktemp("platform"), devices=4, scheme="mux2")


@SETTINGS
@given(case=cases())
def test_no_bin_exceeds_the_uplink(base: Platform, case: Case) -> None:
    s = case.run(base)
    assert max(s.delivered_bytes_per_s) <= bound_bytes_per_s(s, case.alpha) * (1 + REL)


@pytest.mark.parametrize(
    ("platform", "app", "config"),
    [("cns", "knn8", HOST_ONLY), ("rfns", "knn8", HOST_ONLY), ("rfns", "knn8", FULL_GEAR)],
)
def test_the_timeline_covers_the_whole_run(platform: str, app: str, config: Configuration) -> None:
    """A host-only k-NN run delivers its data in its first 15% and computes after: its
    timeline stopped at the last delivery (0.056 s of a 0.37 s run on CNS), where a
    device-split run's covered the run. Every run's bins now end within one bin after it."""
    s = simulate(
        load_platform(platform),
        load_profile(app),
        config,
        sim=SimOptions(data_bytes=2**30, chunk_bytes=2**22),
    )
    covered_s = len(s.delivered_bytes) * s.timeline_bin_s
    assert s.time_s <= covered_s < s.time_s + s.timeline_bin_s
    assert sum(s.delivered_bytes) == pytest.approx(s.data_bytes, rel=REL)
