"""Which power an engine is charged in each phase, per time basis (docs/platforms.md).

The paper's equation charges engines nothing during T_CPU:
E = (P_NDPEs + P_idle) x T_NDP + P_active x T_CPU. ndpkit charges an engine `power_off`
whenever it is not on, so with the presets' power_off = 0 that is the paper's equation;
`power_idle` is charged only while an engine is on without work (pipeline and staged)."""

from __future__ import annotations

from pathlib import Path

import pytest

from ndpkit.hw import Platform, load_platform
from ndpkit.model import HOST_ONLY, Options, estimate
from ndpkit.profile import load_profile

ACTIVE_W, IDLE_W, OFF_W = 5.76, 2.0, 0.5


@pytest.fixture
def rans_with_states(tmp_path: Path) -> Platform:
    path = tmp_path / "rans-states.toml"
    path.write_text(
        'extends = "rans"\nname = "rans-states"\n[engines]\n'
        f'power_idle = "{IDLE_W} W"\npower_off = "{OFF_W} W"\n'
    )
    return load_platform(path)


def test_paper_charges_engines_power_off_during_t_cpu(rans_with_states: Platform) -> None:
    e = estimate(rans_with_states, load_profile("knn2"))  # k-NN_2 has a host stage
    assert e.t_cpu_s > 0
    n = 36  # RANS's engines (it was the estimate's own engines_total)
    assert e.pipeline.engines_total == n
    assert e.energy.by_component_j["engines"] == pytest.approx(
        n * (ACTIVE_W * e.t_ndp_s + OFF_W * e.t_cpu_s), rel=1e-12
    )


def test_with_power_off_zero_paper_is_the_papers_equation() -> None:
    e = estimate(load_platform("rans"), load_profile("knn2"))
    host = load_platform("rans").host
    n = 36
    expected = (n * ACTIVE_W + host.power_idle_w) * e.t_ndp_s + host.power_active_w * e.t_cpu_s
    parts = e.energy.by_component_j  # the paper's equation has no mux layer (§6.5 adds it)
    assert parts["engines"] + parts["host"] == pytest.approx(expected, rel=1e-12)


def test_staged_charges_power_idle_while_the_device_phase_outlasts_the_engines(
    rans_with_states: Platform,
) -> None:
    # HE on RANS is bound by the host link: the engines wait for part of the device phase.
    e = estimate(rans_with_states, load_profile("he"), options=Options(time_basis="staged"))
    times = e.state_times.engines
    assert times["idle"] > 0
    assert e.energy.by_component_j["engines"] == pytest.approx(
        ACTIVE_W * times["busy"] + IDLE_W * times["idle"] + OFF_W * times["off"], rel=1e-12
    )
    # By hand (engine-seconds, summed over the 36 engines), docs/platforms.md "staged":
    # D = 3.4 GiB (spec §8.1); NDP_BW = 36 x 3.4 GiB / 1.98 s (SANS, Table 3), SSD_BW =
    # 36 x 3 GiB/s, NDP2CPU_BW x α = 36 GiB/s x 1 (§3, HE α = 1): the device phase is
    # D / 36 GiB/s = 3.4 / 36 s, so on = 36 x 3.4 / 36 = 3.4 s; busy = 36 x D / NDP_BW = 1.98 s;
    # idle = 3.4 - 1.98 = 1.42 s; T_CPU = 0 so nothing is off.
    ndp_gib_per_s = 36 * 3.4 / 1.98
    busy_s = 36 * 3.4 / ndp_gib_per_s
    on_s = 36 * 3.4 / min(36 * 3.0, ndp_gib_per_s, 36.0 * 1)
    assert (busy_s, on_s - busy_s) == pytest.approx((1.98, 1.42), rel=1e-12)
    assert times["busy"] == pytest.approx(busy_s, rel=1e-9)
    assert times["idle"] == pytest.approx(on_s - busy_s, rel=1e-9)
    assert times["off"] == pytest.approx(0.0, abs=1e-12)
    assert e.energy.by_component_j["engines"] == pytest.approx(
        ACTIVE_W * 1.98 + IDLE_W * 1.42, rel=1e-9
    )


@pytest.mark.parametrize("basis", ["paper", "overlap"])
def test_paper_and_overlap_never_charge_power_idle(rans_with_states: Platform, basis: str) -> None:
    e = estimate(rans_with_states, load_profile("he"), options=Options(time_basis=basis))
    assert e.state_times.engines["idle"] == 0


def test_overlap_form_a_is_the_papers_form_b_formula() -> None:
    """docs/planning.md said form B equals form A under overlap when T_NDP >= T_CPU; they
    differ (5812.47 J against 5793.66 J for k-NN_2 on RANS). What holds, and what the
    docs now say: form A under overlap is form B's formula, the host idle only for
    T_NDP - T_CPU; form B charges P_idle x T_CPU less than that."""
    rans, knn2 = load_platform("rans"), load_profile("knn2")
    a = estimate(rans, knn2, options=Options(time_basis="overlap"))
    b = estimate(rans, knn2, options=Options(time_basis="overlap", energy_form="B"))
    assert a.t_ndp_s >= a.t_cpu_s > 0
    host = rans.host
    formula_b = host.power_idle_w * a.t_ndp_s + (host.power_active_w - host.power_idle_w) * (
        a.t_cpu_s
    )
    assert a.energy.by_component_j["host"] == pytest.approx(formula_b, rel=1e-12)
    assert b.energy_j == pytest.approx(a.energy_j - host.power_idle_w * a.t_cpu_s, rel=1e-12)
    assert (round(a.energy_j, 2), round(b.energy_j, 2)) == (5812.47, 5793.66)


def test_a_host_split_charges_every_engine_power_off_for_the_run(
    rans_with_states: Platform,
) -> None:
    """With the data sent to the host (HOST_ONLY), RANS's 36 engines are off the whole run:
    36 x T engine-seconds at `power_off`. (A host split's engine count was untested: 0
    engines, and 0 J, passed every model and plan test.)"""
    e = estimate(rans_with_states, load_profile("lc"), HOST_ONLY)
    assert e.pipeline.engines_active == 0 and e.time_s > 0
    assert e.state_times.engines == pytest.approx({"busy": 0, "idle": 0, "off": 36 * e.time_s})
    assert e.energy.by_component_j["engines"] == pytest.approx(OFF_W * 36 * e.time_s, rel=1e-12)
