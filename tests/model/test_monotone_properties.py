"""Monotonicity and limits of the RANS/RFNS model (spec §4, §5, §6), checked with Hypothesis.

A faster part never makes the modelled run slower, more engines never make it slower, α
enters only through NDP2CPU_BW x α (§4.1), and energy is never negative. The one exception
is documented in docs/reproducing-rans-rfns.md (O11): under the `paper` and `overlap` time
bases a configuration with engines off is timed relative to full gear, so a faster host link
can lengthen it (`test_paper_basis_partial_time_can_grow_with_the_host_link`).
"""

from __future__ import annotations

import math

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

# The sibling module's strategies (pytest puts this directory on the path)
from test_properties import configurations, profiles
from test_properties import platform as server

from ndpkit.hw import Platform, load_platform
from ndpkit.model import FULL_GEAR, HOST_ONLY, Options, estimate
from ndpkit.plan import activate, configuration_of, minimum_engines
from ndpkit.profile import load_profile

SETTINGS = settings(max_examples=40, deadline=None, database=None)
# Bases that time every configuration from its own stage bandwidths (O11).
OWN_TIME_BASES = ("pipeline", "staged")
ALL_BASES = ("paper", "pipeline", "overlap", "staged")


def faster(platform: Platform, part: str, factor: float) -> Platform:
    """`platform` with one part's bandwidth multiplied by `factor`."""
    if part == "host_link":
        link = platform.host_link
        return platform.model_copy(
            update={
                "host_link": link.model_copy(
                    update={"bandwidth_bytes_per_s": link.bandwidth_bytes_per_s * factor}
                )
            }
        )
    if part == "ssd":
        storage = platform.storage
        update: dict[str, object] = {
            "read_bandwidth_bytes_per_s": storage.media_bandwidth_bytes_per_s * factor
        }
        if storage.link is not None:
            update["link"] = storage.link.model_copy(
                update={"bandwidth_bytes_per_s": storage.link.bandwidth_bytes_per_s * factor}
            )
        return platform.model_copy(update={"storage": storage.model_copy(update=update)})
    engines = platform.engines
    assert engines is not None
    rates = {app: rate * factor for app, rate in engines.throughput.items()}
    return platform.model_copy(update={"engines": engines.model_copy(update={"throughput": rates})})


platforms = st.builds(
    server, st.sampled_from(["rans", "rfns"]), st.integers(1, 24).map(lambda h: 2 * h)
)
placements = st.sampled_from(["paper_no_loss", "static_shards", "reshard_y_ssds"])
parts = st.sampled_from(["host_link", "ssd", "engine"])
factors = st.floats(1.0, 64.0)


def _close_or_below(later: float, earlier: float) -> bool:
    return later <= earlier * (1 + 1e-9)


@SETTINGS
@given(platforms, profiles(), placements, st.sampled_from(ALL_BASES), parts, factors)
def test_full_gear_time_never_grows_with_a_faster_part(p, profile, placement, basis, part, f):
    opts = Options(placement=placement, time_basis=basis)
    slow = estimate(p, profile, FULL_GEAR, opts)
    fast = estimate(faster(p, part, f), profile, FULL_GEAR, opts)
    assert _close_or_below(fast.time_s, slow.time_s), (
        f"{profile.app} on {p.name} ({basis}, {placement}): {part} x{f:g} made full gear "
        f"slower, {slow.time_s} s -> {fast.time_s} s"
    )
    assert fast.performance_bytes_per_s >= slow.performance_bytes_per_s * (1 - 1e-12)


@SETTINGS
@given(
    platforms, profiles(), placements, st.sampled_from(OWN_TIME_BASES), parts, factors, st.data()
)
def test_time_never_grows_with_a_faster_part(p, profile, placement, basis, part, f, data):
    config = data.draw(configurations(p.devices))
    opts = Options(placement=placement, time_basis=basis)
    slow = estimate(p, profile, config, opts)
    fast = estimate(faster(p, part, f), profile, config, opts)
    assert _close_or_below(fast.time_s, slow.time_s), (
        f"{profile.app} on {p.name} ({basis}, {placement}, {config}): {part} x{f:g} made the "
        f"run slower, {slow.time_s} s -> {fast.time_s} s"
    )


@SETTINGS
@given(platforms, profiles(), placements, st.sampled_from(ALL_BASES), st.data())
def test_more_engines_never_make_the_run_slower(p, profile, placement, basis, data):
    n = p.devices
    low = minimum_engines(n, 2)
    a = data.draw(st.integers(low, n))
    b = data.draw(st.integers(a, n))
    opts = Options(placement=placement, time_basis=basis)
    fewer = estimate(p, profile, configuration_of(activate(n, 2, a), n), opts)
    more = estimate(p, profile, configuration_of(activate(n, 2, b), n), opts)
    assert _close_or_below(more.time_s, fewer.time_s), (
        f"{profile.app} on {p.name} ({basis}, {placement}): {b} engines take {more.time_s} s, "
        f"{a} take {fewer.time_s} s"
    )
    assert more.performance_bytes_per_s >= fewer.performance_bytes_per_s * (1 - 1e-12)


@SETTINGS
@given(platforms, profiles(), st.sampled_from(ALL_BASES), st.floats(1.0, 64.0), st.data())
def test_a_larger_alpha_never_makes_the_run_slower(p, profile, basis, f, data):
    config = data.draw(configurations(p.devices))
    opts = Options(time_basis=basis)
    low = estimate(p, profile, config, opts)
    high = estimate(p, profile.with_changes(alpha=profile.alpha * f), config, opts)
    assert high.performance_bytes_per_s >= low.performance_bytes_per_s * (1 - 1e-12)
    if basis in OWN_TIME_BASES or config.is_full_gear or config.split == "host":
        assert _close_or_below(high.time_s, low.time_s), (
            f"{profile.app} on {p.name} ({basis}, {config}): α x{f:g} made the run slower"
        )


@SETTINGS
@given(platforms, profiles(), st.sampled_from(OWN_TIME_BASES))
def test_alpha_limits(p, profile, basis):
    """α = 1: the NDPEs send the host as much as they read, so NDP2CPU_BW is the link's
    (§4.1); α -> 0: the output is unbounded and the link becomes the bottleneck, the run
    taking ever longer; α -> ∞: the link drops out of Eq. (1)."""
    opts = Options(time_basis=basis)
    link = p.host_link.bandwidth_bytes_per_s
    one = estimate(p, profile.with_changes(alpha=1.0), FULL_GEAR, opts)
    assert one.stages["ndp2cpu"] == pytest.approx(link, rel=1e-12)
    tiny = estimate(p, profile.with_changes(alpha=1e-9), FULL_GEAR, opts)
    assert tiny.bottleneck == "ndp2cpu"
    assert tiny.time_s >= profile.data_bytes / (link * 1e-9) * (1 - 1e-9)
    huge = estimate(p, profile.with_changes(alpha=1e12), FULL_GEAR, opts)
    others = min(bw for name, bw in huge.stages.items() if name != "ndp2cpu")
    assert huge.performance_bytes_per_s == pytest.approx(others, rel=1e-12)
    # α is not applied without engines: raw data crosses the link (§4.2)
    host = estimate(p, profile.with_changes(alpha=1e-9), HOST_ONLY, opts)
    assert host.stages["link"] == pytest.approx(link, rel=1e-12)


@SETTINGS
@given(platforms, profiles(), placements, st.sampled_from(ALL_BASES), st.data())
def test_energy_and_time_are_finite_and_not_negative(p, profile, placement, basis, data):
    config = data.draw(configurations(p.devices))
    form = data.draw(st.sampled_from(["A", "B"]))
    opts = Options(placement=placement, time_basis=basis, energy_form=form)
    e = estimate(p, profile, config, opts)
    assert math.isfinite(e.time_s) and e.time_s > 0
    assert math.isfinite(e.energy_j) and e.energy_j >= 0
    for part, joules in e.energy.by_component_j.items():
        assert joules >= 0, f"{part}: {joules} J"


def test_paper_basis_partial_time_can_grow_with_the_host_link():
    """O11: the `paper` basis times full gear by the NDP stage alone (T_NDP), and a
    configuration with engines off by T_NDP x (full-gear performance / its own). HE on RFNS
    with 18 engines keeps the full-gear 36 GiB/s, so it takes T_NDP; behind a link fast
    enough that full gear is NDP-bound, the 18 engines are the bottleneck and take twice
    T_NDP. A faster link thus lengthens the run: documented, not monotone."""
    rfns, he = load_platform("rfns"), load_profile("he")
    config = configuration_of(activate(36, 2, 18), 36)
    opts = Options()
    slow_link = estimate(rfns, he, config, opts)
    fast_link = estimate(faster(rfns, "host_link", 8.0), he, config, opts)
    t_ndp = he.data_bytes / (36 * rfns.engines.throughput["he"])
    assert slow_link.time_s == pytest.approx(t_ndp, rel=1e-12)
    assert fast_link.time_s == pytest.approx(2 * t_ndp, rel=1e-12)
