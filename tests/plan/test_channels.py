"""RISP channel selection (spec §7): linear fits (Eqs. 11-14), grouping (§7.4), the R6
calibration of the RU's power to Eq. (13), Policies A and B with their roundings (R8).

Expected channel counts are derived by hand in each docstring from the paper's numbers;
units are decimal (R2): b_hostIO (SATA 3.2) = 1.97e9 B/s.
"""

from __future__ import annotations

import functools
import math

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from ndpkit.errors import ModelError
from ndpkit.hw import Platform, load_platform
from ndpkit.model import FULL_GEAR, Options, estimate
from ndpkit.plan import plan
from ndpkit.plan.channels import (
    LinearFit,
    calibrate_ru_power,
    channels_off_config,
    characteristic,
    characteristic_points,
    fit_line,
    group_channels,
    host_bandwidth_cells,
    plan_channels,
    power_budget_channels,
    reduced_cells_config,
)
from ndpkit.profile import Profile, load_profile

SETTINGS = settings(max_examples=25, deadline=None, database=None)
APPS = ("kmeans", "binarize", "sobel")
INTERFACES = ("sata-3.2", "pcie3-x4", "pcie3-x16")
DECIMAL = Options(units="decimal")
PLAN_OPTIONS = Options(units="decimal", host_stage="with_host_stage")  # plan_channels' default
EQ13 = LinearFit(1.858, 0.032)  # Sobel, f_RU = 100 MHz: W = 1.858 + 0.032 n


@functools.cache
def platform(interface: str = "sata-3.2", clock_hz: float = 1e8) -> Platform:
    return load_platform("risp-64ch").with_interface(interface).with_cell_clock(clock_hz)


@functools.cache
def profile(app: str) -> Profile:
    return load_profile(app, "risp")


# --- fit_line --------------------------------------------------------------------------------


def test_fit_line_is_exact_on_a_line_with_intercept():
    xs = [4.0, 8.0, 12.0, 16.0, 64.0]
    fit = fit_line(xs, [1.858 + 0.032 * x for x in xs], intercept=True)
    assert fit.intercept == pytest.approx(1.858, rel=1e-12)
    assert fit.slope == pytest.approx(0.032, rel=1e-12)
    assert fit(35) == pytest.approx(2.978, rel=1e-12)
    assert fit.solve(3.0) == pytest.approx((3.0 - 1.858) / 0.032, rel=1e-12)


def test_fit_line_through_the_origin():
    xs = [4.0, 8.0, 16.0]
    fit = fit_line(xs, [0.19e9 * x for x in xs], intercept=False)
    assert fit.intercept == 0.0
    assert fit.slope == pytest.approx(0.19e9, rel=1e-12)
    # On points with an offset, the slope is Σxy / Σx² (least squares through 0).
    ys = [1.0 + 2.0 * x for x in xs]
    through_zero = fit_line(xs, ys, intercept=False)
    assert through_zero.slope == pytest.approx(
        sum(x * y for x, y in zip(xs, ys, strict=True)) / sum(x * x for x in xs), rel=1e-12
    )
    assert through_zero.slope != pytest.approx(2.0)
    # One point suffices through the origin.
    assert fit_line([5.0], [10.0], intercept=False).slope == 2.0


def test_fit_line_least_squares_on_noisy_points():
    """Points (0, 1), (1, 3), (2, 2): slope = Σ(x-1)(y-2)/Σ(x-1)² = 1/2, intercept 1.5."""
    fit = fit_line([0.0, 1.0, 2.0], [1.0, 3.0, 2.0], intercept=True)
    assert fit.slope == pytest.approx(0.5, rel=1e-12)
    assert fit.intercept == pytest.approx(1.5, rel=1e-12)


@pytest.mark.parametrize(
    ("xs", "ys", "intercept"),
    [
        ([1.0], [1.0], True),
        ([], [], False),
        ([1.0, 2.0], [1.0], True),
        ([3.0, 3.0, 3.0], [1.0, 2.0, 3.0], True),
    ],
)
def test_fit_line_rejects_degenerate_points(xs, ys, intercept):
    with pytest.raises(ModelError):
        fit_line(xs, ys, intercept=intercept)


def test_fit_line_through_origin_at_x_zero_is_a_model_error():
    with pytest.raises(ModelError):
        fit_line([0.0, 0.0], [1.0, 2.0], intercept=False)


def test_linear_fit_solve_with_zero_slope():
    flat = LinearFit(2.0, 0.0)
    assert flat.solve(3.0) == math.inf
    assert flat.solve(1.0) == -math.inf


# --- grouping, §7.4 --------------------------------------------------------------------------


def spec_groups(n: int, k: int, mode: str) -> dict[int, list[int]]:
    """The spec's pseudo-code (§7.4) for `ceil` and `floor`, as it means it.

    Written literally, `groups[-2] += groups.pop()` evaluates the target index after the
    pop in Python, so it duplicates a group (10 channels on 3 cells give [[0, 1, 2],
    [6, 7, 8, 9], [6, 7, 8, 9]]); the stated intent is "append the leftovers to the last
    group", done here in two steps."""
    g = math.ceil(n / k) if mode == "ceil" else n // k
    groups = [list(range(s, min(s + g, n))) for s in range(0, n, g)]
    if mode == "floor":
        while len(groups) > k:
            leftover = groups.pop()
            groups[-1] += leftover
    return {grp[0]: grp for grp in groups}


def _groups(mapping) -> list[list[int]]:
    """The channels of each cell, in cell order."""
    return [[ch for ch, cell in enumerate(mapping.route) if cell == c] for c in mapping.active]


@pytest.mark.parametrize("mode", ["balanced", "ceil", "floor"])
@pytest.mark.parametrize("cells", [1, 2, 7, 16, 17, 19, 20, 33, 63, 64])
def test_group_channels_routes_every_channel_to_a_contiguous_group(mode, cells):
    m = group_channels(64, cells, mode)
    assert m.devices == 64 and len(m.route) == 64  # every channel routed
    assert set(m.route) == set(m.active)  # only to enabled cells, each serving some
    assert list(m.active) == sorted(m.active)
    groups = _groups(m)
    for cell, group in zip(m.active, groups, strict=True):
        assert group[0] == cell  # the cell sits on its group's first channel
        assert group == list(range(group[0], group[-1] + 1))  # contiguous
    assert sum(len(g) for g in groups) == 64
    assert m.module_size == max(len(g) for g in groups)
    sizes = [len(g) for g in groups]
    if mode == "balanced":
        assert len(m.active) == cells
        assert max(sizes) - min(sizes) <= 1
    elif mode == "ceil":
        g = math.ceil(64 / cells)
        assert len(m.active) <= cells
        assert all(size == g for size in sizes[:-1]) and sizes[-1] <= g
    else:
        g = 64 // cells
        assert len(m.active) == cells
        assert all(size == g for size in sizes[:-1]) and sizes[-1] >= g
    if mode != "balanced":
        spec = spec_groups(64, cells, mode)
        assert list(m.active) == sorted(spec)
        assert groups == [spec[c] for c in sorted(spec)]


@pytest.mark.parametrize(
    ("cells", "mode", "sizes"),
    [
        # 64 = 13 x 4 + 4 x 3 (balanced), ceil(64/17) = 4 -> 16 cells, 64 // 17 = 3 -> last 16.
        (17, "balanced", [4] * 13 + [3] * 4),
        (17, "ceil", [4] * 16),
        (17, "floor", [3] * 16 + [16]),
        (19, "balanced", [4] * 7 + [3] * 12),
        (19, "ceil", [4] * 16),
        (19, "floor", [3] * 18 + [10]),
        (20, "balanced", [4] * 4 + [3] * 16),
        (20, "ceil", [4] * 16),
        (20, "floor", [3] * 19 + [7]),
        (33, "floor", [1] * 32 + [32]),
    ],
)
def test_group_sizes_by_hand(cells, mode, sizes):
    assert [len(g) for g in _groups(group_channels(64, cells, mode))] == sizes


def test_balanced_groups_of_19_cells():
    """64 = 19 x 3 + 7: the first 7 cells serve 4 channels, the other 12 serve 3."""
    m = group_channels(64, 19, "balanced")
    assert m.active[:8] == (0, 4, 8, 12, 16, 20, 24, 28)
    assert m.active[-1] == 61 and m.route[-3:] == (61, 61, 61)


@pytest.mark.parametrize("cells", [0, -1, 65])
def test_group_channels_rejects_impossible_cell_counts(cells):
    with pytest.raises(ModelError, match=r"cells must be in 1\.\.64"):
        group_channels(64, cells)


def test_configs_for_the_two_time_models():
    assert reduced_cells_config(group_channels(64, 64)) == FULL_GEAR
    assert channels_off_config(64, 64) == FULL_GEAR
    off = channels_off_config(64, 35)
    assert off.channels == tuple(range(35)) and off.active == tuple(range(35))
    reduced = reduced_cells_config(group_channels(64, 4))
    assert reduced.channels is None and reduced.active == (0, 16, 32, 48)


# --- characteristic and calibration, Eqs. (11)-(14), R6, R7 ----------------------------------


def test_calibrate_ru_power_reproduces_the_presets_sobel_powers():
    """R6: the fixed and per-cell RU power that make Sobel's model power regress to
    Eq. (13), 1.858 + 0.032 n W, are the preset's 1.358 W and 2.125 mW."""
    fixed, cell = calibrate_ru_power(platform(), profile("sobel"), EQ13, DECIMAL)
    assert fixed == pytest.approx(1.358, rel=1e-4)
    assert cell == pytest.approx(2.125e-3, rel=1e-4)
    assert platform().public_cell.power_active_w == pytest.approx(fixed, rel=1e-4)  # type: ignore[union-attr]


def test_calibrate_ru_power_needs_cells_and_a_public_cell():
    with pytest.raises(ModelError, match="public cell"):
        calibrate_ru_power(load_platform("risp-baseline"), profile("sobel"), EQ13, DECIMAL)


def test_sobel_model_fit_matches_eq_13_but_not_eq_14():
    """R7: regressing the model at n = 4, 8, …, 64 gives Eq. (13)'s power (by the R6
    calibration) but a bandwidth slope of α x f_RU = 1 B x 100 MHz = 0.1 GB/s per
    channel, not Eq. (14)'s 0.19 GB/s."""
    c = characteristic(platform(), profile("sobel"), DECIMAL)
    assert c.source == "model"
    assert [p.channels for p in c.points] == list(range(4, 65, 4))
    assert c.power.intercept == pytest.approx(1.858, rel=1e-3)
    assert c.power.slope == pytest.approx(0.032, rel=1e-3)
    assert c.bandwidth.intercept == 0.0
    assert c.bandwidth.slope == pytest.approx(0.1e9, rel=1e-4)
    assert c.bandwidth.slope != pytest.approx(0.19e9, rel=0.1)
    for point in c.points:
        assert point.power_w == pytest.approx(EQ13(point.channels), rel=1e-6)


def test_paper_fit_is_eqs_13_and_14_and_only_for_sobel():
    c = characteristic(platform(), profile("sobel"), DECIMAL, source="paper")
    assert (c.power.intercept, c.power.slope) == pytest.approx((1.858, 0.032), rel=1e-12)
    assert c.bandwidth.slope == pytest.approx(0.19e9, rel=1e-12)
    with pytest.raises(ModelError, match="sobel only"):
        characteristic(platform(), profile("kmeans"), DECIMAL, source="paper")


def test_characteristic_points_ignore_the_host_stage_and_reconfiguration():
    """f_power and f_pb are built from Eqs. (8)-(9) alone (no host stage, R11; no bitstream
    load, R15), whatever the options."""
    with_host = characteristic_points(platform(), profile("sobel"), PLAN_OPTIONS, (16,))
    reconf = characteristic_points(
        platform(), profile("sobel"), DECIMAL.with_(reconfiguration="include"), (16,)
    )
    without = characteristic_points(platform(), profile("sobel"), DECIMAL, (16,))
    assert with_host == without
    assert reconf == without
    assert without[0].bandwidth_bytes_per_s == pytest.approx(0.5e9 / 0.31250004, rel=1e-12)


def test_kmeans_bandwidth_fit_is_the_channel_rate():
    """K-Means is transfer-bound at every n (α f_RU = 0.9 GB/s > b_ch = 0.4 GB/s), so its
    processing bandwidth is exactly 0.4 GB/s per channel."""
    c = characteristic(platform(), profile("kmeans"), DECIMAL)
    assert c.bandwidth.slope == pytest.approx(0.4e9, rel=1e-12)


# --- Policy A: power budget ------------------------------------------------------------------


def test_policy_a_sobel_3_w_by_hand():
    """Eq. (13): 1.858 + 0.032 n ≤ 3 W  ⇔  n ≤ (3 - 1.858) / 0.032 = 35.6875 → floor 35
    channels (29 powered off); 35 channels draw 1.858 + 1.12 = 2.978 W by the model."""
    p = plan_channels(platform(), profile("sobel"), policy="power", budget_w=3.0)
    d = p.details
    assert d["n_power_exact"] == pytest.approx(35.6875, abs=1e-3)
    assert d["n_power_floor"] == 35 and d["n_power_ceil"] == 36 and d["n_power_nearest"] == 36
    assert p.engines_required == p.engines_on == 35 and p.engines_off == 29
    assert d["channels_on"] == 35 and d["cells_on"] == 35
    assert d["time_model"] == "channels_off" and d["binding_policy"] == "power"
    assert d["planned_power_w"] <= 3.0
    assert p.planned.channels_on == 35
    # Without the host stage (the fit's own model), power at 35 is Eq. (13)'s 2.978 W.
    eq8 = plan_channels(platform(), profile("sobel"), DECIMAL, policy="power", budget_w=3.0)
    assert eq8.details["planned_power_w"] == pytest.approx(2.978, rel=1e-6)
    assert eq8.details["n_power_search"] == 35  # and 36 channels (3.010 W) would not fit


def test_policy_a_with_the_papers_fit():
    p = plan_channels(platform(), profile("sobel"), policy="power", budget_w=3.0, fit="paper")
    assert p.details["n_power_exact"] == pytest.approx((3.0 - 1.858) / 0.032, rel=1e-12)
    assert p.engines_on == 35


def test_policy_a_rounding_variants():
    """ceil(35.69) = 36 channels draw 1.858 + 0.032 x 36 = 3.010 W by the model: over the
    3 W budget, so the choice steps down to 35 and says why; the roundings stay reported."""
    fit = characteristic(platform(), profile("sobel"), DECIMAL)
    choice = power_budget_channels(platform(), profile("sobel"), fit, 3.0, DECIMAL, "ceil")
    assert choice.policy == "power" and choice.chosen == 35
    assert choice.by_rounding == {"floor": 35, "ceil": 36, "nearest": 36, "search": 35}
    assert "rounding ceil" in choice.note and "36 channels" in choice.note
    assert "3.010 W" in choice.note and "3 W power budget" in choice.note
    floor = power_budget_channels(platform(), profile("sobel"), fit, 3.0, DECIMAL, "floor")
    assert floor.chosen == 35 and floor.note == ""
    # A budget above every channel count's power keeps all 64.
    assert power_budget_channels(platform(), profile("sobel"), fit, 100.0, DECIMAL).chosen == 64


@SETTINGS
@given(
    st.sampled_from(APPS),
    st.sampled_from(INTERFACES),
    st.floats(2.0, 8.0),
    st.sampled_from(["model", "paper"]),
)
def test_policy_a_search_obeys_the_budget(app, interface, budget, fit):
    if fit == "paper" and app != "sobel":
        fit = "model"
    p = plan_channels(
        platform(interface),
        profile(app),
        policy="power",
        budget_w=budget,
        fit=fit,
        rounding="search",
    )
    assert p.details["planned_power_w"] <= budget * (1 + 1e-9)
    n = p.engines_on
    if n < 64:  # the most channels: one more would break the budget
        e = estimate(
            platform(interface), profile(app), channels_off_config(64, n + 1), p.planned.options
        )
        assert e.energy_j / e.time_s > budget
    assert p.improvement_pct <= 100.0


@pytest.mark.parametrize("rounding", ["ceil", "nearest"])
def test_policy_a_rounding_up_steps_down_to_the_budget_with_a_note(rounding):
    """The audit's case: Sobel, Eq. (8) alone (as E7 runs it), 3 W: ceil and nearest of
    35.69 give 36 channels at 3.010 W; the plan takes 35 (2.978 W) and names the rounding
    and the budget."""
    p = plan_channels(
        platform(), profile("sobel"), DECIMAL, policy="power", budget_w=3.0, rounding=rounding
    )
    assert p.engines_required == p.engines_on == 35
    assert p.details[f"n_power_{rounding}"] == 36
    assert p.details["planned_power_w"] == pytest.approx(2.978, rel=1e-6)
    (note,) = [n for n in p.planned.notes if "power budget" in n]
    assert f"rounding {rounding}" in note and "3 W power budget" in note and "35" in note


# Hand model of RISP power, Eq. (11) = E_RISP / T_RISP, independent of ndpkit.model: Eqs. (6)-(9)
# with the spec's §5.2 attribution (R4), per-channel NVM power (R5), linear_per_cell RU power (R6)
# and the controller's active power for the SSD chipset (R13). Inputs: risp.md Tables II-III and
# the risp-64ch preset's RU calibration.
HAND_D = {"kmeans": 0.3e9, "binarize": 1.4e9, "sobel": 0.5e9}  # Table II: D (bytes)
HAND_ALPHA = {"kmeans": 9, "binarize": 1, "sobel": 1}  # Table II: α (bytes/cycle)
HAND_DELAY = {"kmeans": 15, "binarize": 2, "sobel": 4}  # Table II: n_delay (cycles)
HAND_BETA = {"kmeans": 3.6466, "binarize": 3, "sobel": 1}  # Table II: β
HAND_HOST_IO = {"sata-3.2": 1.97e9, "pcie3-x4": 3.938e9, "pcie3-x16": 15.754e9}  # Table II
HAND_CELL_W = {"kmeans": 19.125e-3, "binarize": 2.125e-3, "sobel": 2.125e-3}  # preset, per cell
HAND_RU_FIXED_W = 1.358  # preset public_cell.power_active (R6 calibration to Eq. 13)
HAND_RU_IDLE_W = 0.024  # Table III: P_RU,idle
NVM_ACTIVE_W, NVM_IDLE_W = 0.066, 0.0165  # Table III, per channel
DRAM_ACTIVE_W, DRAM_IDLE_W = 0.5, 0.35  # Table III, on-device DRAM
CHIPSET_W = 0.15  # Table III: P_controller,active (R13)


def hand_risp_power_w(
    app: str, interface: str, cells: int, channels_read: int, host_stage: str
) -> float:
    """Power of k = `cells` cells sharing D evenly, fed by `channels_read` channels at 100 MHz."""
    d, beta = HAND_D[app], HAND_BETA[app]
    t_ch = d / (channels_read * 400e6)  # Eq. (1), b_ch = 400 MB/s
    t_cell = (d / (HAND_ALPHA[app] * cells) + HAND_DELAY[app]) / 100e6  # Eq. (6)
    t_dram = d / (beta * 15e9)  # Eq. (7), b_DRAM = 15 GB/s
    stages = [t_ch, t_cell, t_dram]
    if host_stage == "with_host_stage":
        stages.append(d / (beta * HAND_HOST_IO[interface]))  # R11
    t = max(stages)  # Eq. (8)
    energy_j = (
        channels_read * (NVM_ACTIVE_W * t_ch + NVM_IDLE_W * (t - t_ch))
        + (HAND_RU_FIXED_W + cells * HAND_CELL_W[app]) * t_cell
        + HAND_RU_IDLE_W * (t - t_cell)
        + DRAM_ACTIVE_W * t_dram
        + DRAM_IDLE_W * (t - t_dram)
        + CHIPSET_W * t
    )  # Eq. (9); powered-off channels draw nothing
    return energy_j / t


def hand_one_unit_power_w(app: str, interface: str, time_model: str, host_stage: str) -> float:
    """One channel with its cell (channels_off), or one cell fed by all 64 channels
    (reduced_cells, §7.4)."""
    channels_read = 1 if time_model == "channels_off" else 64
    return hand_risp_power_w(app, interface, 1, channels_read, host_stage)


def test_hand_power_model_matches_eq13_anchor():
    """Sanity of the hand model itself: Sobel, channels_off, 16 channels, is on the preset's
    R6 calibration to Eq. (13), 1.858 + 0.032 x 16 = 2.370 W, within the fit's residual."""
    assert hand_risp_power_w("sobel", "sata-3.2", 16, 16, "eq8_only") == pytest.approx(
        1.858 + 0.032 * 16, abs=1e-3
    )


@pytest.mark.parametrize("app", ["kmeans", "sobel"])
def test_power_budget_refusal_is_exactly_at_one_cells_power(app):
    """Reduced cells, Eq. (8) alone, SATA: one cell fed by all 64 channels draws (by hand)
    P1; two cells P2 > P1. A budget 0.1% under P1 is refused; a budget between P1 and P2
    plans exactly one cell (by hand, K-Means P1 = 3.05 W, Sobel P1 = 2.93 W)."""
    p1 = hand_risp_power_w(app, "sata-3.2", 1, 64, "eq8_only")
    p2 = hand_risp_power_w(app, "sata-3.2", 2, 64, "eq8_only")
    assert p1 < p2
    args = dict(policy="power", rounding="search", time_model="reduced_cells")
    with pytest.raises(
        ModelError, match=r"no count of cells .* lowest-power plan, 1 cell serving all 64 channels"
    ):
        plan_channels(platform(), profile(app), DECIMAL, budget_w=p1 * 0.999, **args)
    p = plan_channels(platform(), profile(app), DECIMAL, budget_w=(p1 + p2) / 2, **args)
    assert p.engines_on == 1
    assert p.details["planned_power_w"] == pytest.approx(p1, rel=1e-6)


def test_power_budget_channels_off_never_refuses_above_two_watts():
    """channels_off: one channel with its cell draws under 2 W for every app (by hand, at most
    Sobel's 1.89 W, compute-bound at 5 s), so a 2 W budget always plans at least one."""
    for app in APPS:
        one = hand_one_unit_power_w(app, "sata-3.2", "channels_off", "eq8_only")
        assert one < 2.0, (app, one)
        p = plan_channels(
            platform(), profile(app), DECIMAL, policy="power", budget_w=2.0, rounding="floor"
        )
        assert p.engines_on >= 1


@SETTINGS
@given(
    st.sampled_from(APPS),
    st.sampled_from(INTERFACES),
    st.floats(1.9, 8.0),
    st.sampled_from(["floor", "ceil", "nearest", "search"]),
    st.sampled_from(["power", "both"]),
    st.sampled_from([None, "reduced_cells", "channels_off"]),
    st.sampled_from(["eq8_only", "with_host_stage"]),
)
def test_a_power_budget_is_never_exceeded_whatever_the_rounding(
    app, interface, budget, rounding, policy, time_model, host_stage
):
    """The budget is a constraint (§7.2): the planned power stays within it for every R8
    rounding, time model and host stage, or the plan is refused because even one channel
    breaks it. (Before the fix, ceil drew 3.010 W under 3 W for Sobel, and floor under
    reduced_cells drew 6.6 W under 3.3 W for K-Means.)"""
    options = Options(units="decimal", host_stage=host_stage)
    try:
        p = plan_channels(
            platform(interface),
            profile(app),
            options,
            policy=policy,
            budget_w=budget,
            rounding=rounding,
            time_model=time_model,
        )
    except ModelError as e:
        assert "keeps within" in str(e)
        # The refusal must be true: one channel (or one cell) really draws more than the
        # budget, by the spec's equations rather than the code that refused.
        one = hand_one_unit_power_w(app, interface, time_model or "channels_off", host_stage)
        assert one > budget, (one, budget)
        return
    assert p.details["planned_power_w"] <= budget * (1 + 1e-9)


def test_both_policies_refuse_a_host_plan_over_the_budget():
    """K-Means, Eq. (8) alone, reduced cells, 3.3 W: the host policy's 17 cells on 64 read
    channels draw more than 3.3 W, so the budget's count is used, with a note."""
    p = plan_channels(
        platform(),
        profile("kmeans"),
        DECIMAL,
        policy="both",
        budget_w=3.3,
        rounding="floor",
        time_model="reduced_cells",
        never_worse=False,
    )
    assert p.details["binding_policy"] == "power"
    assert p.details["planned_power_w"] <= 3.3
    assert any("power budget" in n and "used instead" in n for n in p.planned.notes)


# --- Policy B: host-interface bandwidth ------------------------------------------------------


@pytest.mark.parametrize(
    ("app", "exact", "floor"),
    [
        # n_host = β x b_hostIO / s, s = the model's bandwidth slope per channel:
        ("sobel", 1 * 1.97 / 0.1, 19),  # 19.7 → 19
        ("binarize", 3 * 1.97 / 0.1, 59),  # 59.1 → 59
        ("kmeans", 3.6466 * 1.97 / 0.4, 17),  # 17.9595 → 17
    ],
)
def test_policy_b_floor_by_hand(app, exact, floor):
    p = plan_channels(platform(), profile(app), policy="host")
    assert p.details["n_host_exact"] == pytest.approx(exact, rel=1e-5)
    assert p.details["n_host_floor"] == floor
    assert p.details["n_host_ceil"] == floor + 1
    assert p.engines_required == floor
    assert p.details["binding_policy"] == "host"
    fit = characteristic(platform(), profile(app), DECIMAL)
    choice = host_bandwidth_cells(platform(), profile(app), fit, PLAN_OPTIONS)
    assert choice.chosen == floor and choice.exact == pytest.approx(exact, rel=1e-5)


def test_policy_b_configures_only_the_chosen_cells():
    """Sobel on SATA: 19 cells in balanced groups (7 of 4 channels, 12 of 3), all 64
    channels read (R10 reduced_cells)."""
    p = plan_channels(platform(), profile("sobel"), policy="host", never_worse=False)
    assert p.engines_on == 19 and p.planned.channels_on == 64
    assert p.planned.pipeline.engines_active == 19
    assert p.mapping == group_channels(64, 19, "balanced")
    assert p.details["time_model"] == "reduced_cells" and p.details["grouping"] == "balanced"
    assert p.planned.stage_times_s["cell"] == pytest.approx((0.5e9 / 19 + 4) / 1e8, rel=1e-9)


def test_policy_b_with_the_papers_fit():
    """Eq. (14): n_host = 1 x 1.97 / 0.19 = 10.37 → floor 10 (R7: half the model's 19)."""
    p = plan_channels(platform(), profile("sobel"), policy="host", fit="paper")
    assert p.details["n_host_exact"] == pytest.approx(1.97 / 0.19, rel=1e-12)
    assert p.engines_required == 10


def test_policy_b_keeps_all_cells_behind_a_fast_interface():
    """PCIe x16: β b_hostIO / s ≥ 64 for every app, so no cell is switched off."""
    for app in APPS:
        p = plan_channels(platform("pcie3-x16"), profile(app), policy="host")
        assert p.engines_required == 64 and p.engines_on == 64, app
        assert p.improvement_pct == pytest.approx(0.0, abs=1e-9)
        assert p.performance_loss_pct == pytest.approx(0.0, abs=1e-9)


def test_both_policies_take_the_smaller():
    """Sobel, SATA, 3.5 W: Policy B's 19 cells (3.208 W) < Policy A's count. (At 3 W the
    19 cells break the budget, and at 3.5 W with never_worse they cost more energy than
    all on; either way the power policy's count is then taken.)"""
    p = plan_channels(platform(), profile("sobel"), policy="both", budget_w=3.5, never_worse=False)
    assert p.details["binding_policy"] == "host"
    assert p.engines_required == 19
    assert p.details["n_power_floor"] > 19 and p.details["n_host_floor"] == 19


@SETTINGS
@given(
    st.sampled_from(APPS),
    st.sampled_from(INTERFACES),
    st.sampled_from([1e8, 2e8, 5e8]),
    st.sampled_from(["balanced", "ceil", "floor"]),
    st.sampled_from(["reduced_cells", "channels_off"]),
)
def test_search_rounding_never_loses_performance(app, interface, clock, grouping, model):
    """R8 `search`: the fewest cells whose model time equals all-on's, with the host stage."""
    p_ = platform(interface, clock)
    p = plan_channels(
        p_,
        profile(app),
        policy="host",
        rounding="search",
        grouping=grouping,
        time_model=model,
        never_worse=False,
    )
    assert p.performance_loss_pct <= 1e-7
    assert p.planned.time_s <= p.baseline.time_s * (1 + 1e-9)
    k = p.engines_required
    assert 1 <= k <= 64 and k == p.details["n_host_search"]
    if k > 1:  # minimal: one cell fewer is slower
        fewer = (
            channels_off_config(64, k - 1)
            if model == "channels_off"
            else reduced_cells_config(group_channels(64, k - 1, grouping))
        )
        slower = estimate(p_, profile(app), fewer, p.planned.options)
        assert slower.time_s > p.baseline.time_s * (1 + 1e-9)
    assert p.improvement_pct <= 100.0


@SETTINGS
@given(
    st.sampled_from(APPS),
    st.sampled_from(INTERFACES),
    st.sampled_from(["host", "power", "both"]),
    st.sampled_from(["floor", "ceil", "nearest", "search"]),
    st.booleans(),
)
def test_savings_never_exceed_100_percent(app, interface, policy, rounding, never_worse):
    p = plan_channels(
        platform(interface),
        profile(app),
        policy=policy,
        budget_w=None if policy == "host" else 3.0,
        rounding=rounding,
        never_worse=never_worse,
    )
    assert p.improvement_pct <= 100.0
    assert p.planned.energy_j > 0
    assert 1 <= p.engines_on <= 64
    if never_worse and p.details["binding_policy"] == "host":
        assert p.planned.energy_j <= p.baseline.energy_j * (1 + 1e-12)


def test_never_worse_keeps_all_cells_when_fewer_would_cost_more():
    """Sobel on SATA: 19 cells would compute longer at the RU's 1.358 W fixed power than 64
    cells (which then idle at 24 mW), so with never_worse all cells stay on, with a note."""
    kept = plan_channels(platform(), profile("sobel"), policy="host")
    taken = plan_channels(platform(), profile("sobel"), policy="host", never_worse=False)
    assert taken.planned.energy_j > taken.baseline.energy_j
    assert kept.engines_on == 64 and kept.engines_required == 19
    assert kept.planned.energy_j == pytest.approx(kept.baseline.energy_j, rel=1e-12)
    assert any("more energy" in note for note in kept.planned.notes)


def test_never_worse_note_counts_the_cells_actually_configured():
    """--grouping ceil with 19 cells makes groups of ceil(64/19) = 4 channels: 16 cells, and
    the note names those 16, not the 19 the rounding asked for."""
    p = plan_channels(
        platform(), profile("sobel"), policy="host", rounding="floor", grouping="ceil"
    )
    assert p.engines_required == 19
    (note,) = [n for n in p.planned.notes if "more energy" in n]
    assert "16 cells" in note and "19 cells" not in note


def test_never_worse_note_for_one_cell_a_hair_dearer_reads_right():
    """At a 10^18 MHz (10^24 Hz) cell clock a few cells cost ~1e-13 % more than all on: the
    note read "0.0% more energy", and "1 cells" where one cell was planned (found by an audit
    of RISP)."""
    fast = load_platform("risp-64ch").with_cell_clock(1e24)  # its own interface
    p = plan_channels(fast, profile("sobel"), policy="host")
    (note,) = [n for n in p.planned.notes if "more energy" in n]
    assert "0.0%" not in note and " 1 cells" not in note
    from ndpkit.plan.channels import _cells  # noqa: PLC0415 - the note's count

    assert (_cells(1), _cells(6)) == ("1 cell", "6 cells")


# --- dispatch and errors ---------------------------------------------------------------------


def test_plan_dispatches_in_storage_platforms_to_channel_selection():
    p = plan(platform(), profile("sobel"))
    direct = plan_channels(platform(), profile("sobel"))
    assert p.scheme == "channels" and p.method == "host (model fit, floor)"
    assert p.engines_required == direct.engines_required == 19
    assert p.details == direct.details
    assert p.engines_total == 64
    assert p.planned.options == PLAN_OPTIONS


@pytest.mark.parametrize(
    ("kwargs", "message"),
    [
        ({"policy": "power"}, "needs a power budget"),
        ({"policy": "both"}, "needs a power budget"),
        ({"policy": "power", "budget_w": 0.0}, "must be positive"),
        ({"policy": "both", "budget_w": -1.0}, "must be positive"),
        ({"policy": "host", "budget_w": 3.0}, "'host' does not read a power budget"),
        (
            {"policy": "power", "budget_w": 1.5},
            "no count of channels keeps within the 1.5 W budget: the lowest-power plan, "
            "1 channel with its cell, draws 1.89 W",
        ),
    ],
)
def test_plan_channels_errors(kwargs, message):
    with pytest.raises(ModelError, match=message):
        plan_channels(platform(), profile("sobel"), **kwargs)


@pytest.mark.parametrize("name", ["rans", "risp-baseline"])
def test_plan_channels_needs_per_channel_cells(name):
    prof = profile("sobel") if name.startswith("risp") else load_profile("lc")
    with pytest.raises(ModelError, match="per-channel processing cells"):
        plan_channels(load_platform(name), prof)


@SETTINGS
@given(
    st.sampled_from(APPS),
    st.sampled_from(INTERFACES),
    st.floats(2.0, 8.0),
    st.sampled_from(["floor", "search"]),
)
def test_both_policies_obey_the_budget_even_when_the_host_choice_is_not_taken(
    app, interface, budget, rounding
):
    """The never-worse rule may refuse the host policy's cell count; falling back to all
    cells on would then break the budget (K-Means on risp-64ch under 2.5 W drew 2.81 W)."""
    p = plan_channels(
        platform(interface), profile(app), policy="both", budget_w=budget, rounding=rounding
    )
    assert p.details["planned_power_w"] <= budget * (1 + 1e-9)


def test_policy_a_mapping_routes_only_to_enabled_cells():
    p = plan_channels(platform(), profile("sobel"), policy="power", budget_w=3.0)
    assert p.mapping is not None
    assert set(p.mapping.route) <= set(p.mapping.active)
    assert sum(p.mapping.shards_per_engine().values()) == p.planned.channels_on


def test_power_budget_is_obeyed_whatever_the_time_model():
    """35 cells on 64 read channels (reduced_cells) draw more than 35 channels with their
    own cells: the NVM of all 64 channels is on. The budget must still hold."""
    p = plan_channels(
        platform(),
        profile("sobel"),
        DECIMAL,
        policy="power",
        budget_w=3.0,
        rounding="search",
        time_model="reduced_cells",
    )
    assert p.details["planned_power_w"] <= 3.0


def test_an_app_the_cells_cannot_run_is_reported_against_the_planned_platform():
    # The fit's sample SSDs were built first, so the error named 'risp-64ch-4ch', a
    # platform the user never gave.
    app = Profile(app="scan", data_size="1 GB", alpha=2, cycles_per_byte=3.0)
    with pytest.raises(ModelError) as info:
        plan_channels(load_platform("risp-64ch"), app)
    assert "platform 'risp-64ch':" in str(info.value)
    assert "risp-64ch-4ch" not in str(info.value)
