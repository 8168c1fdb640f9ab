"""Reconfiguration: Eq. (2) nane, Eq. (3) nane_muxk and the saving accounting (spec §6)."""

from __future__ import annotations

import functools
import math
from pathlib import Path

import pytest
from hypothesis import assume, given, settings
from hypothesis import strategies as st

from ndpkit.errors import ModelError
from ndpkit.hw import Platform, load_platform
from ndpkit.model import FULL_GEAR, Options, estimate
from ndpkit.plan import (
    activate,
    configuration_of,
    engines_allowed,
    optimise,
    plan,
    required_engines,
)
from ndpkit.profile import Profile, load_profile

GB = 2**30
APPS = ("lc", "he", "fft2d", "knn2", "knn6", "knn8")
PRINTED = Options(wall_times="printed")
SETTINGS = settings(max_examples=50, deadline=None, database=None)


@functools.cache
def platform(name: str, devices: int = 36) -> Platform:
    base = load_platform(name)
    return base if devices == base.devices else base.with_engine_count(devices)


@functools.cache
def base_profile(app: str) -> Profile:
    return load_profile(app)


platforms = st.builds(
    platform, st.sampled_from(["rans", "rfns"]), st.integers(1, 32).map(lambda h: 2 * h)
)


@st.composite
def profiles(draw: st.DrawFn) -> Profile:
    app = draw(st.sampled_from(APPS))
    alpha = draw(st.floats(0.05, 64.0))
    data = draw(st.floats(2.0**20, 2.0**40))
    return base_profile(app).with_changes(alpha=alpha, data_bytes=data)


wall_times = st.sampled_from(["unrounded", "printed"])


# --- Eq. (2) ---------------------------------------------------------------------------------


@SETTINGS
@given(platforms, profiles(), wall_times, st.sampled_from(["unrounded", "rounded_2dp"]))
def test_eq2_is_clamped_to_one_engine_and_the_server(p, profile, walls, rounding):
    opts = Options(wall_times=walls, eq_rounding=rounding)
    full = estimate(p.with_scheme("mux1"), profile, FULL_GEAR, opts)
    # A single-engine rate that rounds to 0.00 GB/s is the separate test below.
    assume(rounding == "unrounded" or round(full.pipeline.engine_bytes_per_s / GB, 2) > 0)
    nane = required_engines(full)
    assert 1 <= nane <= p.devices
    if full.bottleneck == "ndp":
        assert nane == p.devices, "O3: an NDP-bound application keeps every engine"


@SETTINGS
@given(platforms, profiles())
def test_eq2_unrounded_is_the_ceiling_of_bottleneck_over_single_engine(p, profile):
    full = estimate(p.with_scheme("mux1"), profile, FULL_GEAR, Options())
    nane = required_engines(full)
    single = full.pipeline.engine_bytes_per_s
    if full.bottleneck == "ndp":
        assert nane == p.devices
        return
    ratio = full.performance_bytes_per_s / single
    assert nane - 1 < ratio * (1 + 1e-9)
    assert ratio <= nane * (1 + 1e-9)
    # Eq. (2)'s engines are enough: with paper_no_loss they keep full-gear performance.
    on = engines_allowed(nane, p.devices, p.devices)  # muxn: exactly nane
    config_plan = plan(p, profile, Options(), scheme="muxn")
    assert config_plan.engines_on == on == nane
    assert config_plan.performance_loss_pct == pytest.approx(0.0, abs=1e-6)


@pytest.mark.parametrize("server", ["rans", "rfns"])
@pytest.mark.parametrize("app", APPS)
def test_ndp_bound_applications_keep_every_engine(server, app):
    p = plan(platform(server), base_profile(app), PRINTED)
    if p.baseline.bottleneck == "ndp":
        assert p.engines_required == p.engines_on == 36
    else:
        assert p.engines_required < 36


def test_eq2_upper_clamp_with_printed_times():
    """HE with α = 8 on RFNS: SSD-bound, 108 / 2.98 = 36.2 → ceil 37, clamped to 36 (O3)."""
    profile = base_profile("he").with_changes(alpha=8)
    full = estimate(platform("rfns").with_scheme("mux1"), profile, FULL_GEAR, PRINTED)
    assert full.bottleneck == "ssd"
    assert full.performance_bytes_per_s / full.pipeline.engine_bytes_per_s > 36
    assert required_engines(full) == 36


def test_eq2_lower_clamp():
    """A tiny bottleneck still needs one engine."""
    profile = base_profile("he").with_changes(alpha=1e-6)
    full = estimate(platform("rfns").with_scheme("mux1"), profile, FULL_GEAR, Options())
    assert full.bottleneck == "ndp2cpu"
    assert required_engines(full) == 1


def test_he_on_rans_needs_21_engines():
    expected = math.ceil(36 / (3.4 / 1.98))
    assert expected == 21
    for opts in (Options(), PRINTED):
        p = plan(platform("rans"), base_profile("he"), opts)
        assert p.baseline.bottleneck == "ndp2cpu"
        assert p.engines_required == 21, f"HE on RANS ({opts.wall_times}): nane"
        assert p.engines_on == 21, "nane > n/2, so mux2 keeps nane"


def test_eq2_rounding_is_in_the_papers_gb_whatever_the_reporting_units():
    """O3 rounds the paper's printed GB/s (binary): 36 / 1.72 = 20.93 -> 21. Rounding in
    decimal GB instead (38.65 / 1.84 = 21.005) would give 22 under `--units decimal`."""
    for units in ("binary", "decimal"):
        opts = Options(eq_rounding="rounded_2dp", units=units)
        p = plan(platform("rans"), base_profile("he"), opts)
        assert p.engines_required == 21, f"HE on RANS, rounded_2dp, {units} units"


@pytest.mark.parametrize(
    ("app", "nane"), [("he", 13), ("knn2", 31), ("knn6", 29), ("knn8", 28), ("lc", 36)]
)
def test_rfns_nane(app, nane):
    """Eq. (2) on RFNS: kNN is SSD-bound (108 GB/s) over SNDP = 130 / T_SFNS."""
    p = plan(platform("rfns"), base_profile(app), Options())
    assert p.engines_required == nane
    if app.startswith("knn"):
        sfns = {"knn2": 36.31, "knn6": 34.39, "knn8": 32.83}[app]
        assert nane == math.ceil(108 / (130 / sfns))


def test_eq2_rounded_single_engine_rate_of_zero_is_clamped():
    profile = base_profile("fft2d").with_changes(alpha=0.001)
    opts = Options(eq_rounding="rounded_2dp")
    full = estimate(platform("rans").with_scheme("mux1"), profile, FULL_GEAR, opts)
    assert full.bottleneck == "ndp2cpu"
    assert round(full.pipeline.engine_bytes_per_s / GB, 2) == 0.0
    assert required_engines(full) == 36, "ratio over a 0.00 GB/s engine is +inf → n (clamp)"


# --- Eq. (3) ---------------------------------------------------------------------------------


@SETTINGS
@given(st.integers(1, 80), st.data())
def test_eq3_generalised(n, data):
    k = data.draw(st.integers(1, n))
    nane = data.draw(st.integers(1, n))
    allowed = engines_allowed(nane, n, k)
    assert allowed == max(nane, math.ceil(n / k))
    assert nane <= allowed <= n
    if k == 1:
        assert allowed == n, "mux1: no engine can be switched off"
    if k == n:
        assert allowed == nane, "muxn: exactly nane"
    if k == 2 and n % 2 == 0:
        assert allowed == max(nane, n // 2), "Eq. (3): max(nane, n/2)"


@pytest.mark.parametrize("server", ["rans", "rfns"])
@pytest.mark.parametrize("app", APPS)
def test_plan_schemes(server, app):
    p_mux2 = plan(platform(server), base_profile(app), PRINTED)
    nane = p_mux2.engines_required
    expected = {"mux1": 36, "mux2": max(nane, 18), "mux3": max(nane, 12), "muxn": nane}
    for scheme, on in expected.items():
        p = plan(platform(server), base_profile(app), PRINTED, scheme=scheme)
        assert p.scheme == scheme
        assert p.engines_required == nane, f"{scheme}: nane does not depend on the scheme"
        assert p.engines_on == on, f"{app} on {server}/{scheme}"
        assert p.engines_off == 36 - on
        k = {"mux1": 1, "mux2": 2, "mux3": 3, "muxn": 36}[scheme]
        assert p.mapping.active == activate(36, k, on).active
    assert p_mux2.scheme == "mux2"


def test_mux1_never_saves_and_has_no_switch_energy():
    p = plan(platform("rfns"), base_profile("he"), PRINTED, scheme="mux1")
    assert p.engines_on == 36
    assert p.switch_energy_j == 0.0
    assert p.net_saving_j == pytest.approx(0.0, abs=1e-12)
    assert p.improvement_pct == pytest.approx(0.0, abs=1e-12)


# --- the saving (§6.5) -----------------------------------------------------------------------


@SETTINGS
@given(platforms, profiles(), wall_times, st.sampled_from(["mux2", "mux3", "muxn"]))
def test_net_saving_is_gross_minus_switch(p, profile, walls, scheme):
    assume(scheme != "mux3" or p.devices >= 3)
    opts = Options(wall_times=walls)
    pl = plan(p, profile, opts, scheme=scheme)
    assert pl.net_saving_j == pytest.approx(pl.gross_saving_j - pl.switch_energy_j, abs=1e-9)
    assert pl.net_saving_j == pytest.approx(pl.baseline.energy_j - pl.planned.energy_j, abs=1e-9)
    assert pl.switch_energy_j >= 0.0
    assert pl.baseline.energy.by_component_j.get("switch_layer", 0.0) == 0.0, (
        "the baseline is the same server without a switch layer"
    )
    assert pl.improvement_pct == pytest.approx(pl.net_saving_j / pl.baseline.energy_j * 100)


@pytest.mark.parametrize("server", ["rans", "rfns"])
@pytest.mark.parametrize("app", APPS)
def test_gross_saving_is_the_papers_general_form(server, app):
    """§6.5: E_saved,gross = P_NDPEs x (n - nane_mux2) / n x T_NDP (unrounded wall times)."""
    p = plan(platform(server), base_profile(app), Options())
    p_ndpes = 36 * platform(server).engines.power_on_w(app)
    expected = p_ndpes * p.engines_off / 36 * p.baseline.t_ndp_s
    assert p.gross_saving_j == pytest.approx(expected, rel=1e-6, abs=1e-9)
    assert p.switch_energy_j == pytest.approx(0.018 * p.baseline.t_ndp_s, rel=1e-9)
    assert p.performance_loss_pct == pytest.approx(0.0, abs=1e-6)


def test_he_on_rans_printed_times_lose_no_performance():
    p = plan(platform("rans"), base_profile("he"), PRINTED)
    assert p.engines_on == 21
    assert p.performance_loss_pct == pytest.approx(0.0, abs=1e-6), (
        "placement=paper_no_loss: wall time unchanged"
    )
    assert p.gross_saving_j == pytest.approx(207.36 * 15 / 36 * 0.06, rel=1e-9)


@pytest.mark.parametrize("server", ["rans", "rfns"])
@pytest.mark.parametrize("app", APPS)
def test_nothing_switched_off_is_a_negative_saving(server, app):
    p = plan(platform(server), base_profile(app), PRINTED)
    if p.engines_on < 36:
        assert p.net_saving_j > 0
        return
    assert p.gross_saving_j == 0.0
    assert p.switch_energy_j > 0
    assert p.net_saving_j == pytest.approx(-p.switch_energy_j, rel=1e-6)
    assert p.net_saving_j < 0
    assert p.improvement_pct < 0


def test_he_on_rfns_ee_gain_improvement():
    """O7 'ee_gain': EE_new / EE_base - 1 = E_base / E_new - 1."""
    reduction = plan(platform("rfns"), base_profile("he"), PRINTED)
    gain = plan(platform("rfns"), base_profile("he"), PRINTED.with_(improvement="ee_gain"))
    expected = (reduction.baseline.energy_j / reduction.planned.energy_j - 1) * 100
    assert gain.improvement_pct == pytest.approx(expected, rel=1e-9)
    assert gain.improvement_pct == pytest.approx(23.2119 / 12.06144 * 100 - 100, abs=0.01)
    assert gain.net_saving_j == pytest.approx(reduction.net_saving_j)


def test_static_shards_plan_exposes_the_double_load():
    """O8: Eq. (2) ignores placement; with static shards kNN2 on RFNS loses performance."""
    opts = Options(placement="static_shards")
    p = plan(platform("rfns"), base_profile("knn2"), opts)
    assert p.engines_on == 31
    assert p.planned.pipeline.max_shards_per_engine == 2
    assert p.as_dict()["max_shards_per_engine"] == 2
    # mux2, 31 engines on for 36 SSDs: 5 engines serve 2 SSDs and 26 serve 1 (5 x 2 + 26 = 36),
    # so max / mean SSDs per active engine = 2 / (36 / 31) = 62 / 36 = 1.722.
    assert p.as_dict()["load_imbalance"] == pytest.approx(2 / (36 / 31), rel=1e-12)
    assert p.planned.bottleneck == "ndp"
    assert p.planned.stages["ndp"] == pytest.approx(p.baseline.stages["ndp"] / 2)
    assert p.performance_loss_pct > 0
    no_loss = plan(platform("rfns"), base_profile("knn2"), Options())
    assert no_loss.planned.pipeline.max_shards_per_engine == 2
    assert no_loss.performance_loss_pct == pytest.approx(0.0, abs=1e-9)
    assert any("static_shards" in note for note in no_loss.planned.notes)


@pytest.mark.parametrize("devices", [8, 64])
def test_switch_power_scales_with_the_number_of_mux_elements(devices):
    p36 = plan(platform("rfns"), base_profile("he"), Options())
    scaled = plan(platform("rfns", devices), base_profile("he"), Options())
    per_element_36 = p36.switch_energy_j / p36.planned.t_ndp_s / 18
    per_element = scaled.switch_energy_j / scaled.planned.t_ndp_s / (devices // 2)
    assert per_element == pytest.approx(per_element_36, rel=1e-9)


def test_a_platform_that_draws_no_power_has_nothing_to_save(tmp_path: Path) -> None:
    spec = tmp_path / "zero.toml"
    spec.write_text(
        'version = 1\nextends = "rans"\nname = "zero"\n'
        '[host]\npower_active = "0 W"\npower_idle = "0 W"\n'
        '[engines]\npower_active = "0 W"\n'
        '[switch_layer]\npower_total = "0 W"\nelement_power = "0 W"\n'
    )
    zero = load_platform(spec)
    for improvement in ("reduction", "ee_gain"):
        result = plan(zero, load_profile("he"), Options(improvement=improvement))
        assert result.baseline.energy_j == 0
        assert result.improvement_pct == 0.0


@pytest.mark.parametrize("app", ["knn2", "knn8", "lc"])
def test_eq2_takes_its_bound_from_the_capped_server(app: str) -> None:
    """With mux_port_cap RFNS's SSDs give 83.8 GB/s, not the 108 of the baseline (mux1, no
    ports): k-NN_2 kept 31 engines on where 24 reach the same performance for 82.5 J less.
    Eq. (2)'s bound is the planned server's own at full gear."""
    rfns, profile = load_platform("rfns"), load_profile(app)
    capped = Options(mux_port_cap=True)
    planned = plan(rfns, profile, capped)
    full = estimate(rfns, profile, FULL_GEAR, capped).pipeline
    single = full.engine_bytes_per_s
    want = max(math.ceil(full.performance_bytes_per_s / single * (1 - 1e-9)), 18)
    if full.bottleneck != "ndp":
        assert planned.engines_on == min(want, 36)
    # No engine the plan keeps on is idle: one fewer (where the switch layer allows) is slower.
    if planned.engines_on > 18:
        fewer_on = configuration_of(activate(36, 2, planned.engines_on - 1), 36)
        fewer = estimate(rfns, profile, fewer_on, capped)
        assert (
            fewer.pipeline.performance_bytes_per_s
            < planned.planned.pipeline.performance_bytes_per_s
        )


def test_the_optimal_search_reports_the_same_eq2_bound() -> None:
    """`plan --optimal` still read Eq. (2)'s bound from the uncapped baseline (nane 31), and
    the bottleneck row showed the baseline's where nane came from the capped server."""
    rfns, profile = load_platform("rfns"), load_profile("knn2")
    capped = Options(mux_port_cap=True)
    paper, best = plan(rfns, profile, capped), optimise(rfns, profile, capped)
    assert paper.engines_required == best.engines_required == 24
    assert paper.as_dict()["bottleneck"] == best.as_dict()["bottleneck"] == "ssd"
    assert best.engines_on == 24


def test_planning_a_server_without_engines_says_so(tmp_path: Path) -> None:
    """The API raised a ZeroDivisionError; the command line already said this. A platform
    from a file is named by its file and field, as the no-engine-rate error names it."""
    with pytest.raises(ModelError, match=r"^platform 'cns' has no engines to plan"):
        plan(load_platform("cns"), load_profile("lc"))
    mine = tmp_path / "mycns.toml"
    mine.write_text('extends = "cns"\nname = "mycns"\n', encoding="utf-8")
    with pytest.raises(ModelError) as caught:
        plan(load_platform(mine), load_profile("lc"))
    assert str(caught.value).startswith(
        f"{mine}: engines: platform 'mycns' has no engines to plan"
    ), str(caught.value)


def test_a_tiny_runs_gross_saving_is_net_saving_plus_switch_energy(tmp_path: Path) -> None:
    """HE over 100 bytes on RANS with 10 mW engines saves about 0.2 nJ: the gross saving was
    snapped to 0 by an absolute 1 nJ threshold, below the net saving it must exceed by the
    switch energy."""
    small = tmp_path / "small.toml"
    small.write_text('extends = "rans"\nname = "small"\n[engines]\npower_active = "10 mW"\n')
    tiny = load_profile("he").model_copy(update={"data_bytes": 100.0})
    p = plan(load_platform(small), tiny)
    assert p.engines_off == 15 and 0 < p.net_saving_j < 1e-9
    assert p.gross_saving_j == pytest.approx(p.net_saving_j + p.switch_energy_j, rel=1e-9)
    assert plan(load_platform("rans"), load_profile("knn8")).gross_saving_j == 0.0  # noise
