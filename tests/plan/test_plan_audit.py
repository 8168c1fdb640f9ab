"""Planner defects and invariants found by an audit: the load imbalance of a channel plan
whose other channels are powered off; properties of the engine planner on the preset
servers (the optimiser is never dearer than Eqs. 2/3 within its tolerance, more engines are
never slower where no capped mux port is crossed, Eqs. 2/3 lose no performance where the
data is re-sharded and no port is capped); arguments the planners' functions refuse by
name; the mux-k mapping against its documented rules, and its speed under muxn."""

from __future__ import annotations

import functools
import itertools
import math
import time

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from ndpkit.errors import ModelError, SpecError
from ndpkit.hw import Platform, load_platform
from ndpkit.model import FULL_GEAR, Configuration, Options, estimate
from ndpkit.plan import activate, compare_splits, optimise, plan
from ndpkit.plan.channels import (
    PlanInputError,
    channels_off_config,
    group_channels,
    plan_channels,
)
from ndpkit.profile import Profile, load_profile

SETTINGS = settings(max_examples=30, deadline=None, database=None)
APPS = ("lc", "he", "fft2d", "knn2", "knn6", "knn8")
REL = 1e-9


@functools.cache
def server(name: str, scheme: str | None = None) -> Platform:
    p = load_platform(name)
    return p if scheme is None else p.with_scheme(scheme)


@functools.cache
def profile(app: str, profiles: str = "rans-rfns") -> Profile:
    return load_profile(app, profiles)


# --- load imbalance of a channel plan ---------------------------------------------------------


def test_a_power_budget_plans_channels_off_without_a_load_imbalance_below_one():
    """Sobel under 3 W with the paper's floor powers 35 channels, each read by its own cell:
    no cell has more than the mean, so the imbalance is 1.0. It was 1 / (64 / 35) = 0.55,
    the mean taken over all 64 channels, 29 of which are off and hold no data."""
    p = plan_channels(
        load_platform("risp-64ch"),
        profile("sobel", "risp"),
        policy="power",
        budget_w=3.0,
        rounding="floor",
    )
    assert p.engines_on == 35
    assert p.as_dict()["max_shards_per_engine"] == 1
    assert p.as_dict()["load_imbalance"] == 1.0


@pytest.mark.parametrize("on", [1, 7, 35, 63])
def test_channels_off_estimates_are_balanced(on: int):
    e = estimate(
        load_platform("risp-64ch"),
        profile("sobel", "risp"),
        channels_off_config(64, on),
        Options(units="decimal"),
    )
    assert e.pipeline.engines_active == on
    assert e.as_dict()["load_imbalance"] == 1.0


# --- engine planner invariants ----------------------------------------------------------------


@st.composite
def problems(draw: st.DrawFn) -> tuple[Platform, Profile, Options]:
    scheme = draw(st.sampled_from([None, "mux3", "mux4", "muxn"]))
    p = server(draw(st.sampled_from(["rans", "rfns"])), scheme)
    opts = Options(
        placement=draw(st.sampled_from(["paper_no_loss", "static_shards", "reshard_y_ssds"])),
        wall_times=draw(st.sampled_from(["unrounded", "printed"])),
        time_basis=draw(st.sampled_from(["paper", "pipeline", "overlap", "staged"])),
        mux_port_cap=draw(st.booleans()),
    )
    return p, profile(draw(st.sampled_from(APPS))), opts


@SETTINGS
@given(problems(), st.sampled_from([0.0, 0.05, 0.2, 1.0]))
def test_the_optimiser_is_never_dearer_than_eqs_2_and_3_within_its_tolerance(problem, tolerance):
    """The paper's plan is one of the optimiser's candidates: where it is fast enough, the
    optimiser's choice uses no more energy."""
    p, prof, opts = problem
    paper = plan(p, prof, opts)
    best = optimise(p, prof, opts, tolerance=tolerance)
    fastest = max(c.performance_bytes_per_s for c in best.candidates)
    if paper.planned.performance_bytes_per_s >= fastest / (1 + tolerance):
        assert best.planned.energy_j <= paper.planned.energy_j * (1 + REL)
    assert best.net_saving_j == pytest.approx(
        best.baseline.energy_j - best.planned.energy_j, rel=REL, abs=1e-12
    )


@SETTINGS
@given(problems())
def test_more_engines_are_never_slower_unless_a_capped_port_is_crossed(problem):
    """Under paper_no_loss and static_shards, or without --mux-port-cap, turning one more
    engine on never lowers Eq. (1)'s performance nor lengthens the run, under any time basis
    (reshard_y_ssds with capped ports may: docs/planning.md, LC on rfns at 18 and 19)."""
    p, prof, opts = problem
    if opts.placement == "reshard_y_ssds" and opts.mux_port_cap:
        opts = opts.with_(mux_port_cap=False)
    n = p.devices
    k = p.switch_layer.module_size(n)
    perf: list[float] = []
    times: list[float] = []
    for on in range(math.ceil(n / k), n + 1):
        m = activate(n, k, on)
        config = FULL_GEAR if on == n else Configuration(active=m.active, route=m.route)
        e = estimate(p, prof, config, opts)
        perf.append(e.performance_bytes_per_s)
        times.append(e.time_s)
    assert all(after >= before * (1 - REL) for before, after in itertools.pairwise(perf))
    assert all(after <= before * (1 + REL) for before, after in itertools.pairwise(times))


@SETTINGS
@given(problems())
def test_eqs_2_and_3_lose_no_performance_on_re_sharded_data(problem):
    """The paper's claim (§6.5, wall times unchanged) under its own placement, unrounded
    Eq. (2) and no capped ports: nane engines keep up with the full-gear bottleneck."""
    p, prof, opts = problem
    opts = opts.with_(placement="paper_no_loss", mux_port_cap=False)
    result = plan(p, prof, opts)
    assert result.planned.performance_bytes_per_s >= result.baseline.performance_bytes_per_s * (
        1 - REL
    )
    assert result.performance_loss_pct <= 1e-7


# --- arguments the planner's functions refuse ----------------------------------------------


def test_a_scheme_for_an_in_storage_platform_is_refused_not_ignored():
    """`plan(risp-64ch, sobel, scheme="mux2")` planned the channels as if no scheme were
    given (even scheme="banana"); the command line refuses --scheme there."""
    with pytest.raises(ModelError, match=r"scheme='mux2'.* in-storage.*groups channels"):
        plan(load_platform("risp-64ch"), profile("sobel", "risp"), scheme="mux2")


@pytest.mark.parametrize("call", [plan, optimise])
@pytest.mark.parametrize("scheme", [2, b"mux2", ["mux2"]])
def test_a_scheme_that_is_no_string_is_a_model_error(call, scheme):
    """It was a TypeError from the scheme's pattern ('expected string or bytes-like object')."""
    with pytest.raises(ModelError, match=r"scheme must be a string such as 'mux2'"):
        call(server("rfns"), profile("he"), scheme=scheme)


@pytest.mark.parametrize(
    "tolerance", ["0.1", None, True, False, pytest.param(10**400, id="int-past-float")]
)
def test_a_tolerance_that_is_no_number_is_a_model_error(tolerance):
    """A string or None was a TypeError from math.isfinite, an int past float's range an
    OverflowError, and True planned as tolerance 1."""
    with pytest.raises(ModelError, match="tolerance must be a finite number >= 0"):
        optimise(server("rfns"), profile("he"), tolerance=tolerance)


@pytest.mark.parametrize(
    ("given", "parameter"),
    [
        ({"policy": "x"}, "policy"),
        ({"policy": None}, "policy"),
        ({"fit": "x"}, "fit"),
        ({"rounding": "x"}, "rounding"),
        ({"grouping": "x"}, "grouping"),
        ({"time_model": "x"}, "time_model"),
        ({"time_model": ["reduced_cells"]}, "time_model"),
        ({"policy": "power", "budget_w": "3"}, "budget_w"),
        ({"policy": "power", "budget_w": True}, "budget_w"),
    ],
)
def test_a_channel_plan_names_an_argument_it_cannot_take(given, parameter):
    """An unknown policy was "min() arg is an empty sequence", an unknown rounding a
    KeyError, a budget of '3' a TypeError; an unknown fit, grouping or time model was
    planned as another and reported as given ("host (x fit, floor)"), and True a 1 W budget."""
    with pytest.raises(PlanInputError, match=f"^{parameter}|power budget must be a number") as e:
        plan_channels(load_platform("risp-64ch"), profile("sobel", "risp"), **given)
    assert e.value.parameter == parameter


def test_a_channel_plan_takes_never_worse_as_true_or_false():
    with pytest.raises(SpecError, match="never_worse: must be True or False"):
        plan_channels(load_platform("risp-64ch"), profile("sobel", "risp"), never_worse="no")


def test_grouping_channels_refuses_a_mode_it_does_not_know():
    """Mode 'x' grouped as floor without merging the leftovers: 22 cells for 19 asked."""
    with pytest.raises(ModelError, match="grouping must be one of balanced, ceil, floor"):
        group_channels(64, 19, "x")  # type: ignore[arg-type]


@pytest.mark.parametrize(
    ("channels", "cells", "name"), [(64, 2.5, "cells"), (64, True, "cells"), (64.0, 4, "channels")]
)
def test_grouping_channels_takes_whole_counts(channels, cells, name):
    """2.5 cells were a TypeError from range(), and True grouped all 64 channels on one cell."""
    with pytest.raises(SpecError, match=f"{name}: must be an integer"):
        group_channels(channels, cells)


def test_a_budget_past_floats_range_keeps_every_channel():
    """An integer budget too large for a float was an OverflowError mid-plan."""
    p = plan_channels(
        load_platform("risp-64ch"), profile("sobel", "risp"), policy="power", budget_w=10**400
    )
    assert p.engines_on == 64
    assert p.details["power_budget_w"] == math.inf


# --- mapping every engine count ------------------------------------------------------------


def reference_activation(n: int, k: int, on: int) -> tuple[tuple[int, ...], tuple[int, ...]]:
    """docs/planning.md's five rules, one SSD and one round at a time."""
    modules = [list(range(first, min(first + k, n))) for first in range(0, n, k)]
    counts = [1] * len(modules)
    left = on - len(modules)
    while left:
        for i, module in enumerate(modules):
            if left and counts[i] < len(module):
                counts[i] += 1
                left -= 1
    active: list[int] = []
    route: list[int] = []
    for module, count in zip(modules, counts, strict=True):
        size = len(module)
        positions = sorted({i * size // count for i in range(count)})
        active += [module[0] + p for p in positions]
        route += [module[0] + max(p for p in positions if p <= j) for j in range(size)]
    return tuple(active), tuple(route)


@settings(max_examples=300, deadline=None, database=None)
@given(st.integers(1, 60), st.data())
def test_activate_follows_the_documented_rules(n, data):
    k = data.draw(st.integers(1, n))
    on = data.draw(st.integers(math.ceil(n / k), n))
    m = activate(n, k, on)
    assert (m.active, m.route) == reference_activation(n, k, on)


def test_mapping_every_engine_count_of_a_muxn_layer_is_quick():
    """muxn is one module of n SSDs, which took one engine a round: n rounds for each count,
    so mapping every count of 2,000 SSDs (what `plan --optimal --scheme muxn` does) took
    9 s here, and 4,000 SSDs' search 53 s where mux2's took 8; it is 0.2 s now."""
    start = time.perf_counter()
    for on in range(1, 2001):
        activate(2000, 2000, on)
    assert time.perf_counter() - start < 3.0


@pytest.mark.parametrize(
    "tolerance", ["0.1", None, True, pytest.param(10**400, id="int-past-float"), math.nan]
)
def test_compare_splits_refuses_a_tolerance_that_is_no_finite_number(tolerance):
    """A string or None was a TypeError, an int past float's range an OverflowError, and True
    was kept as the comparison's tolerance."""
    with pytest.raises(ModelError, match="tolerance must be a finite number >= 0"):
        compare_splits(server("rfns"), [profile("knn2")], tolerance=tolerance)


def test_compare_splits_says_a_negative_zero_tolerance_as_zero():
    assert str(compare_splits(server("rfns"), [profile("knn2")], tolerance=-0.0).tolerance) == "0.0"


@pytest.mark.parametrize("call", [plan, optimise, plan_channels])
@pytest.mark.parametrize(
    ("args", "field"),
    [
        (("rfns", "he"), "platform"),
        (("platform", "he"), "profile"),
        (("platform", "profile", {"placement": "static_shards"}), "options"),
    ],
)
def test_the_planners_name_an_object_of_the_wrong_kind(call, args, field):
    """`plan("rfns", he)` was "'str' object has no attribute 'is_in_storage'", and options
    as a dict "'dict' object has no attribute 'wall_times'"."""
    given = {"platform": server("rfns"), "profile": profile("he")}
    values = [given.get(a, a) if isinstance(a, str) else a for a in args]
    with pytest.raises(SpecError, match=rf"^{field}: must be "):
        call(*values)
