"""The least-energy configuration within a performance tolerance (`ndpkit.plan.optimise`)."""

from __future__ import annotations

import functools
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from ndpkit.errors import ModelError
from ndpkit.hw import Platform, load_platform
from ndpkit.model import Options
from ndpkit.plan import minimum_engines, optimise, plan
from ndpkit.plan.optimize import OPTIMAL_MAX_DEVICES
from ndpkit.profile import Profile, load_profile

APPS = ("lc", "he", "fft2d", "knn2", "knn6", "knn8")
SETTINGS = settings(max_examples=50, deadline=None, database=None)
# `optimise` keeps candidates within best / (1 + tolerance) x (1 - 1e-12), and breaks
# energy ties at 1e-9 J.
REL = 1e-12
ENERGY_TIE_J = 1e-9


@functools.cache
def platform(name: str) -> Platform:
    return load_platform(name)


@functools.cache
def base_profile(app: str) -> Profile:
    return load_profile(app)


@st.composite
def problems(draw: st.DrawFn):
    p = platform(draw(st.sampled_from(["rans", "rfns"])))
    profile = base_profile(draw(st.sampled_from(APPS)))
    if draw(st.booleans()):
        profile = profile.with_changes(alpha=draw(st.floats(0.05, 64.0)))
    opts = Options(
        placement=draw(st.sampled_from(["paper_no_loss", "static_shards", "reshard_y_ssds"])),
        wall_times=draw(st.sampled_from(["unrounded", "printed"])),
        time_basis=draw(st.sampled_from(["paper", "pipeline", "overlap"])),
        energy_form=draw(st.sampled_from(["A", "B"])),
    )
    scheme = draw(st.sampled_from(["mux2", "mux3", "muxn"]))
    tolerance = draw(st.floats(0.0, 1.0))
    return p, profile, opts, scheme, tolerance


@SETTINGS
@given(problems())
def test_optimise_stays_within_tolerance_and_minimises_energy(problem):
    p, profile, opts, scheme, tolerance = problem
    result = optimise(p, profile, opts, tolerance=tolerance, scheme=scheme)
    chosen = result.planned
    assert result.candidates, "at least one candidate"
    assert any(c is chosen for c in result.candidates), "the choice is one of the candidates"
    best = max(c.performance_bytes_per_s for c in result.candidates)
    floor = best / (1 + tolerance) * (1 - REL)
    assert chosen.performance_bytes_per_s >= floor
    feasible = [c for c in result.candidates if c.performance_bytes_per_s >= floor]
    for candidate in feasible:
        assert chosen.energy_j <= candidate.energy_j + ENERGY_TIE_J, (
            f"{candidate.pipeline.engines_active} engines ({candidate.config.split}) use "
            f"{candidate.energy_j} J < chosen {chosen.energy_j} J"
        )
    k = p.with_scheme(scheme).switch_layer.module_size(36)
    assert len(result.candidates) == 36 - minimum_engines(36, k) + 1 + 1  # + host-only
    if chosen.config.split == "device":
        assert result.engines_on == chosen.pipeline.engines_active
        assert result.mapping is not None
        assert len(result.mapping.active) == result.engines_on
    else:
        assert result.engines_on == 0
        assert result.mapping is None


@SETTINGS
@given(problems())
def test_a_larger_tolerance_never_costs_more_energy(problem):
    p, profile, opts, scheme, tolerance = problem
    strict = optimise(p, profile, opts, tolerance=0.0, scheme=scheme)
    loose = optimise(p, profile, opts, tolerance=tolerance, scheme=scheme)
    assert loose.planned.energy_j <= strict.planned.energy_j + ENERGY_TIE_J
    assert strict.planned.performance_bytes_per_s == pytest.approx(
        max(c.performance_bytes_per_s for c in strict.candidates), rel=REL
    )


def test_he_on_rfns_picks_18_engines_without_loss():
    result = optimise(platform("rfns"), base_profile("he"), Options(), tolerance=0.0)
    assert result.scheme == "mux2"
    assert result.planned.config.split == "device"
    assert result.engines_on == 18
    assert result.performance_loss_pct == pytest.approx(0.0, abs=1e-9)
    assert result.engines_required == 13
    paper = plan(platform("rfns"), base_profile("he"), Options())
    assert result.planned.energy_j == pytest.approx(paper.planned.energy_j, rel=1e-12)
    assert result.net_saving_j == pytest.approx(paper.net_saving_j, rel=1e-12)


@pytest.mark.parametrize("server", ["rans", "rfns"])
@pytest.mark.parametrize("app", APPS)
def test_muxn_optimum_at_zero_tolerance_is_eq2(server, app):
    """Unrounded, paper_no_loss: the fewest engines without loss is Eq. (2)'s nane.

    Unless the host alone is faster than full-gear NDP (Finding 2: FFT and kNN on RANS),
    in which case the host-only split is the only candidate at the best performance.
    """
    result = optimise(platform(server), base_profile(app), Options(), scheme="muxn")
    eq2 = plan(platform(server), base_profile(app), Options(), scheme="muxn")
    host = next(c for c in result.candidates if c.config.split == "host")
    if host.performance_bytes_per_s > eq2.baseline.performance_bytes_per_s:
        assert (server, app) in {
            ("rans", "fft2d"),
            ("rans", "knn2"),
            ("rans", "knn6"),
            ("rans", "knn8"),
        }
        assert result.planned.config.split == "host"
        assert result.engines_on == 0
        return
    assert result.planned.config.split == "device"
    assert result.engines_on == eq2.engines_on == eq2.engines_required
    assert result.performance_loss_pct == pytest.approx(0.0, abs=1e-6)


def test_static_shards_optimiser_accounts_for_the_double_load():
    """kNN2 on RFNS: nane = 31 lies between n/2 and n, so an engine serves two SSDs."""
    opts = Options(placement="static_shards")
    paper = plan(platform("rfns"), base_profile("knn2"), opts)
    assert 18 < paper.engines_required < 36
    assert paper.planned.pipeline.max_shards_per_engine == 2
    assert paper.performance_loss_pct > 0
    best = optimise(platform("rfns"), base_profile("knn2"), opts, tolerance=0.0)
    assert best.engines_on == 36, "any engine off halves the NDP bandwidth: keep all on"
    assert best.planned.pipeline.max_shards_per_engine == 1
    assert best.performance_loss_pct == pytest.approx(0.0, abs=1e-9)
    assert best.net_saving_j > paper.net_saving_j
    assert best.net_saving_j == pytest.approx(-best.switch_energy_j, rel=1e-6)
    # Allowing a 2x slowdown, half the engines do the same double-load work for less.
    loose = optimise(platform("rfns"), base_profile("knn2"), opts, tolerance=1.0)
    assert loose.engines_on == 18
    assert loose.planned.pipeline.max_shards_per_engine == 2
    assert 0 < loose.performance_loss_pct <= 50
    assert loose.net_saving_j > 0


def test_static_shards_vs_no_loss_for_knn2():
    no_loss = optimise(platform("rfns"), base_profile("knn2"), Options(), tolerance=0.0)
    assert no_loss.engines_on == 31
    assert no_loss.performance_loss_pct == pytest.approx(0.0, abs=1e-9)
    assert no_loss.net_saving_j > 0


def test_host_only_is_a_candidate_but_not_chosen_when_slower():
    result = optimise(platform("rans"), base_profile("he"), Options(), tolerance=0.5)
    host = [c for c in result.candidates if c.config.split == "host"]
    assert len(host) == 1
    assert host[0].performance_bytes_per_s < result.baseline.performance_bytes_per_s
    assert result.planned.config.split == "device"


def test_conventional_server_has_only_the_host():
    result = optimise(platform("cns"), base_profile("lc"), Options())
    assert result.engines_total == 0
    assert result.engines_on == 0
    assert result.mapping is None
    assert result.planned.config.split == "host"
    assert result.net_saving_j == pytest.approx(0.0, abs=1e-12)


@pytest.mark.parametrize("tolerance", [-0.1, -1.0])
def test_negative_tolerance_is_rejected(tolerance):
    with pytest.raises(ModelError):
        optimise(platform("rfns"), base_profile("he"), Options(), tolerance=tolerance)


def test_the_optimal_search_refuses_a_server_too_large_to_search(tmp_path: Path) -> None:
    n = OPTIMAL_MAX_DEVICES + 2
    spec = tmp_path / "huge.toml"
    spec.write_text(
        f'version = 1\nextends = "rans"\nname = "huge"\n[storage]\ncount = {n}\n'
        f"[engines]\ncount = {n}\n"
    )
    with pytest.raises(ModelError, match=r"more than its 10,000"):
        optimise(load_platform(spec), base_profile("knn8"))
