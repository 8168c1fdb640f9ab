"""A configuration's routes stay inside the switch layer's mux modules."""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from ndpkit.errors import ModelError
from ndpkit.hw import Platform, load_platform
from ndpkit.model import Configuration, Options, estimate
from ndpkit.plan import activate, configuration_of, minimum_engines
from ndpkit.profile import load_profile


def test_a_route_across_mux2_modules_is_refused() -> None:
    rfns = load_platform("rfns")  # 36 SSDs, mux2: modules (0, 1), (2, 3), ...
    route = list(range(rfns.devices))
    route[3] = 0  # SSD 3 sits in module (2, 3); engine 0 in module (0, 1)
    config = Configuration(active=tuple(range(rfns.devices)), route=tuple(route))
    with pytest.raises(ModelError, match=r"SSD 3 is routed to engine 0, outside its mux2 module"):
        estimate(rfns, load_profile("lc"), config)


def test_the_message_counts_every_crossing_route() -> None:
    rfns = load_platform("rfns")
    route = [0] * rfns.devices  # every SSD from the third on crosses to module 0
    config = Configuration(active=(0,), route=tuple(route))
    with pytest.raises(ModelError, match=r"SSD 2 .*SSDs 2\.\.3\) \(and 33 more\)"):
        estimate(rfns, load_profile("lc"), config)


def _runs_on(platform: Platform, app: str, config: Configuration, engines: int) -> None:
    """The route is accepted and timed as given: `engines` engines on, the NDP stage their
    sum of the platform's single-engine rate for the app (paper_no_loss). A time > 0 was
    the only check: a route accepted but then ignored (full gear) passed."""
    e = estimate(platform, load_profile(app), config)
    assert platform.engines is not None
    assert e.pipeline.engines_active == engines
    assert e.stages["ndp"] == pytest.approx(engines * platform.engines.throughput[app], rel=1e-12)


def test_any_route_is_wired_under_muxn() -> None:
    muxn = load_platform("rfns").with_scheme("muxn")
    config = Configuration(active=(0,), route=(0,) * muxn.devices)
    _runs_on(muxn, "lc", config, 1)


def test_the_same_route_within_modules_is_accepted() -> None:
    rfns = load_platform("rfns")
    route = tuple(ssd - ssd % 2 for ssd in range(rfns.devices))  # each module's first
    config = Configuration(active=tuple(range(0, rfns.devices, 2)), route=route)
    _runs_on(rfns, "lc", config, rfns.devices // 2)


@settings(max_examples=60, deadline=None, database=None)
@given(
    devices=st.integers(2, 40),
    k=st.integers(2, 8),
    data=st.data(),
)
def test_every_planner_mapping_stays_within_its_modules(
    devices: int, k: int, data: st.DataObject
) -> None:
    k = min(k, devices)
    platform = load_platform("rans").with_engine_count(devices).with_scheme(f"mux{k}")
    on = data.draw(st.integers(minimum_engines(devices, k), devices))
    config = configuration_of(activate(devices, k, on), devices)
    _runs_on(platform, "knn2", config, on)


def test_the_simulator_refuses_it_too() -> None:
    from ndpkit.sim import simulate  # noqa: PLC0415 (the model's tests need no simulator)

    rfns = load_platform("rfns")
    route = list(range(rfns.devices))
    route[3] = 0
    config = Configuration(active=tuple(range(rfns.devices)), route=tuple(route))
    with pytest.raises(ModelError, match="outside its mux2 module"):
        simulate(rfns, load_profile("lc"), config)


def test_a_module_s_first_ssd_goes_to_its_own_engine_alone() -> None:
    """Its dedicated wire leads to engine 0 of the module; the mux serves the others."""
    rfns = load_platform("rfns")
    route = list(range(rfns.devices))
    route[2] = 3  # SSD 2 is the first of module (2, 3)
    config = Configuration(active=tuple(range(rfns.devices)), route=tuple(route))
    with pytest.raises(
        ModelError, match=r"SSD 2 .* first of its mux2 module and wired to engine 2"
    ):
        estimate(rfns, load_profile("lc"), config)


def test_under_mux4_the_other_ssds_may_go_to_any_engine_of_the_module() -> None:
    rans = load_platform("rans").with_engine_count(8).with_scheme("mux4")
    route = (0, 3, 1, 2, 4, 4, 7, 5)  # positions 1..3 anywhere in their module
    config = Configuration(active=(0, 1, 2, 3, 4, 5, 7), route=route)
    _runs_on(rans, "lc", config, 7)


def test_a_single_module_s_first_ssd_is_held_to_its_wire_too() -> None:
    """mux2 over 2 SSDs (or mux-k over k) is one module, not muxn: it was let through
    whole, SSD 0 -> engine 1 timed over a wire there is none of, while the same route in
    each module of 4 SSDs was refused."""
    pair = load_platform("rans").with_engine_count(2)  # mux2
    config = Configuration(active=(1,), route=(1, 1))
    with pytest.raises(
        ModelError, match=r"SSD 0 .* first of its mux2 module and wired to engine 0"
    ):
        estimate(pair, load_profile("lc"), config)
    assert estimate(pair.with_scheme("muxn"), load_profile("lc"), config).time_s > 0
    assert estimate(pair, load_profile("lc"), Configuration(active=(0,), route=(0, 0))).time_s > 0


@pytest.mark.parametrize(("on", "each"), [(18, 3 * 2**30), (19, 2.5e9)])
def test_resharded_onto_the_engines_own_ssds_only_the_mux_ports_are_capped(
    on: int, each: float
) -> None:
    """reshard_y_ssds with --mux-port-cap on RFNS (mux2, 3 GiB/s SSDs, 2.5 GB/s ports): the
    planner's 18 engines are each module's first (a wire of its own, 3 GiB/s), so the SSD
    stage is 18 x 3 GiB/s; a 19th engine is a module's second (engine 1), whose SSD reads
    through a port: 19 x 2.5 GB/s. (Capping position 1 of each module instead of every
    position but 0 passed every model and plan test.)"""
    rfns = load_platform("rfns")
    mapping = activate(rfns.devices, 2, on)
    assert [e % 2 for e in mapping.active].count(1) == on - 18
    options = Options(placement="reshard_y_ssds", mux_port_cap=True)
    e = estimate(rfns, load_profile("lc"), configuration_of(mapping, rfns.devices), options)
    assert e.stages["ssd"] == pytest.approx(on * each, rel=1e-12)
