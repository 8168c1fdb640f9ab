"""Channel planning defects found by review: a budget under reduced_cells, a budget the host
policy would ignore, `both` when the host choice is rejected, the paper's fit off its
platform, and the plan's channel limit."""

from __future__ import annotations

import functools

import pytest

from ndpkit.hw import Platform, load_platform
from ndpkit.model import FULL_GEAR, Options, estimate
from ndpkit.plan.channels import (
    MAX_PLAN_CHANNELS,
    PlanInputError,
    channels_off_config,
    group_channels,
    plan_channels,
    reduced_cells_config,
)
from ndpkit.profile import Profile, load_profile

PLAN_OPTIONS = Options(units="decimal", host_stage="with_host_stage")  # plan_channels' default


def platform() -> Platform:
    return load_platform("risp-64ch")


@functools.cache
def profile(app: str) -> Profile:
    return load_profile(app, "risp")


def reduced_cells_power_w(cells: int) -> float:
    """Sobel, all 64 channels read, `cells` cells computing (§7.4): E/T (Eq. 11)."""
    config = reduced_cells_config(group_channels(64, cells))
    e = estimate(platform(), profile("sobel"), config, PLAN_OPTIONS)
    return e.energy_j / e.time_s


def test_power_budget_under_reduced_cells_is_the_most_cells_within_it():
    """Spec §7.2, n_power = max{n : power(n) <= budget}. Under reduced_cells power is not
    monotone in n: one cell fed by all 64 channels draws 2.93 W, all 64 cells 2.296 W.
    A 2.5 W budget therefore plans all 64 cells (it used to be refused because one cell
    alone is over it)."""
    assert reduced_cells_power_w(1) > 2.5 > reduced_cells_power_w(64)
    p = plan_channels(
        platform(),
        profile("sobel"),
        policy="power",
        budget_w=2.5,
        rounding="search",
        time_model="reduced_cells",
    )
    assert p.engines_on == 64
    assert p.details["planned_power_w"] == pytest.approx(reduced_cells_power_w(64), rel=1e-12)
    assert p.details["planned_power_w"] <= 2.5


def test_power_budget_rounding_below_every_feasible_count_takes_the_fewest_within_it():
    """floor of the fit's n is a count whose reduced-cells power is over 2.5 W and so is
    every count below it: the fewest cells within the budget are used, with a note."""
    p = plan_channels(
        platform(),
        profile("sobel"),
        policy="power",
        budget_w=2.5,
        rounding="floor",
        time_model="reduced_cells",
    )
    wanted = p.details["n_power_floor"]
    assert all(reduced_cells_power_w(n) > 2.5 for n in range(1, wanted + 1))
    chosen = p.engines_required
    assert chosen > wanted
    assert reduced_cells_power_w(chosen) <= 2.5 < reduced_cells_power_w(chosen - 1)
    assert any("the fewest cells within it" in note for note in p.planned.notes)


def test_an_unreachable_budget_names_the_lowest_power_plan():
    """Reduced cells: the least power over every count is all 64 cells' 2.296 W."""
    with pytest.raises(PlanInputError, match=r"64 cells serving all 64 channels, draws 2\.3 W"):
        plan_channels(
            platform(), profile("sobel"), policy="power", budget_w=2.2, time_model="reduced_cells"
        )


def test_host_policy_refuses_a_power_budget():
    """The budget is a hard constraint and the host policy never reads it: a host plan
    with a budget was planned at 2.296 W over a 1.5 W budget, silently."""
    with pytest.raises(PlanInputError, match="'host' does not read a power budget") as info:
        plan_channels(platform(), profile("sobel"), policy="host", budget_w=1.5)
    assert info.value.parameter == "budget_w"


def test_both_falls_back_to_the_power_choice_when_the_host_choice_is_rejected():
    """Sobel, 3 W, floor: the host policy's 19 cells cost more than all on, so `both` takes
    the other count, the power policy's 35 channels (0.5476 J), not all 64 on (0.5827 J)."""
    alone = plan_channels(
        platform(), profile("sobel"), policy="power", budget_w=3.0, rounding="floor"
    )
    both = plan_channels(
        platform(), profile("sobel"), policy="both", budget_w=3.0, rounding="floor"
    )
    assert alone.engines_required == 35
    assert both.details["binding_policy"] == "power"
    assert both.details["channels_on"] == 35
    expected = estimate(platform(), profile("sobel"), channels_off_config(64, 35), PLAN_OPTIONS)
    assert both.planned.energy_j == pytest.approx(expected.energy_j, rel=1e-12)
    assert both.planned.energy_j == pytest.approx(alone.planned.energy_j, rel=1e-12)
    all_on = estimate(platform(), profile("sobel"), FULL_GEAR, PLAN_OPTIONS)
    assert both.planned.energy_j < all_on.energy_j
    assert both.details["planned_power_w"] <= 3.0
    assert any("the power budget's 35 channels are used instead" in n for n in both.planned.notes)


@pytest.mark.parametrize(
    ("change", "message"),
    [
        (lambda p: p.with_cell_clock(2e8), r"cells at 100 MHz \(this platform: 200 MHz\)"),
        (
            lambda p: _with_channel_bandwidth(p, 800e6),
            r"400 MB/s channels \(this platform: 800 MB/s\)",
        ),
    ],
)
def test_the_papers_fit_is_refused_off_its_platform(change, message):
    """Eqs. (13)-(14) are Sobel's at 100 MHz on 400 MB/s channels; elsewhere they were applied
    silently."""
    with pytest.raises(PlanInputError, match=message) as info:
        plan_channels(change(platform()), profile("sobel"), fit="paper")
    assert info.value.parameter == "fit"
    # On the paper's platform the fit is taken.
    assert plan_channels(platform(), profile("sobel"), fit="paper").details["fit"] == "paper"


def _with_channel_bandwidth(p: Platform, bytes_per_s: float) -> Platform:
    data = p.model_dump(by_alias=False)
    data["storage"]["channel_bandwidth_bytes_per_s"] = bytes_per_s
    return Platform.model_validate(data, context={"si": True})


def test_a_channel_plan_refuses_more_channels_than_its_limit():
    with pytest.raises(PlanInputError, match=f"at most {MAX_PLAN_CHANNELS} channels") as info:
        plan_channels(platform().with_channels(MAX_PLAN_CHANNELS + 1), profile("sobel"))
    assert info.value.parameter == "channels"
