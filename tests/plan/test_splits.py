"""Choosing between a kernel's splits (`ndpkit.plan.compare_splits`): k-NN's paper split
against its device-side top-k."""

from __future__ import annotations

import math
from pathlib import Path
from types import SimpleNamespace

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from ndpkit.errors import ModelError
from ndpkit.hw import Platform, load_platform
from ndpkit.model import FULL_GEAR, Options, estimate
from ndpkit.plan import compare_splits
from ndpkit.plan.splits import SplitOption, _choose, carry_engine_entries
from ndpkit.profile import Profile

GIB = 2**30


def knn8_profiles() -> list[Profile]:
    """The paper's split (α = 8, its host part at 1000 GiB/s) and a top-k split whose device
    part measured half as fast (5 vs 10 GiB/s on an FPGA engine) but which sends almost
    nothing (α = 10000) and leaves the host next to nothing (10⁶ GiB/s)."""
    common = {"data_size": "130 GiB", "host_only": "20 GiB/s"}
    full = Profile.model_validate(
        {"app": "knn8", "alpha": 8, "host_part": "1000 GiB/s", "engine": {"fpga": "10 GiB/s"}}
        | common
    )
    topk = Profile.model_validate(
        {
            "app": "knn8-topk",
            "alpha": 10_000,
            "host_part": "1000000 GiB/s",
            "engine": {"fpga": "5 GiB/s"},
        }
        | common
    )
    return [full, topk]


def rfns_with_link(tmp_path: Path, link: str) -> Platform:
    spec = tmp_path / "mine.toml"
    spec.write_text(
        f'version = 1\nextends = "rfns"\nname = "rfns-link"\n\n[host_link]\nbandwidth = "{link}"\n'
    )
    return load_platform(str(spec))


def test_link_bound_platform_picks_top_k(tmp_path: Path) -> None:
    """RFNS with its host link cut to 1 GiB/s. By hand (GiB/s; D = 130 GiB; the staged time
    basis: D over the slowest of SSD, NDP and NDP2CPU x α, plus D over the host part):

    - SSD stage: 36 SSDs x 3 = 108.
    - knn8 engine: RFNS's table entry 130 GiB / 32.83 s = 3.9598, so NDP = 36 x 3.9598 = 142.55.
    - top-k engine: no table entry, so the entry carried over at the measured ratio 5/10:
      1.9799 per engine, NDP = 71.27.
    - paper split: device side min(108, 142.55, 1 x 8 = 8) = 8 (ndp2cpu):
      130/8 + 130/1000 = 16.25 + 0.13 = 16.38 s.
    - top-k split: min(108, 71.27, 1 x 10000) = 71.27 (ndp): 130/71.27 + 130/10⁶ = 1.824 s.

    Top-k is the only split at the shortest time, so it is picked."""
    result = compare_splits(rfns_with_link(tmp_path, "1 GiB/s"), knn8_profiles())
    full, topk = result.splits
    assert full.estimate is not None and topk.estimate is not None
    assert full.estimate.bottleneck == "ndp2cpu"
    assert full.estimate.time_s == pytest.approx(16.38)
    assert topk.estimate.bottleneck == "ndp"
    assert topk.estimate.time_s == pytest.approx(130 / (36 * 130 / 32.83 / 2) + 130e-6)
    assert topk.estimate.time_s == pytest.approx(1.824, abs=1e-3)
    assert result.chosen == "knn8-topk"
    assert result.carried == {"knn8-topk": pytest.approx(0.5)}
    assert result.reason == "the only split at the shortest time"


def test_ssd_bound_platform_keeps_the_papers_split(tmp_path: Path) -> None:
    """The same splits on RFNS's own 36 GiB/s link. By hand: the paper split's device side is
    min(108, 142.55, 36 x 8 = 288) = 108 (ssd): 130/108 + 0.13 = 1.334 s; top-k is still
    1.824 s (its slower device part now limits it), a longer time, so the paper's split is
    picked."""
    result = compare_splits(rfns_with_link(tmp_path, "36 GiB/s"), knn8_profiles())
    full, topk = result.splits
    assert full.estimate is not None and topk.estimate is not None
    assert full.estimate.bottleneck == "ssd"
    assert full.estimate.time_s == pytest.approx(130 / 108 + 0.13)
    assert topk.estimate.time_s == pytest.approx(1.824, abs=1e-3)
    assert result.chosen == "knn8"


def test_a_tolerance_lets_energy_decide(tmp_path: Path) -> None:
    """Allowed a longer time, the rule takes the least energy among the splits within the
    tolerance: here (1.334 s and 1.824 s, tolerance 40%) both qualify."""
    platform = rfns_with_link(tmp_path, "36 GiB/s")
    result = compare_splits(platform, knn8_profiles(), tolerance=0.4)
    energies = {s.app: s.estimate.energy_j for s in result.splits if s.estimate is not None}
    assert result.chosen == min(energies, key=energies.__getitem__)
    assert result.reason == "least energy"
    narrow = compare_splits(platform, knn8_profiles(), tolerance=0.3)  # 1.334 x 1.3 < 1.824
    assert narrow.chosen == "knn8"


def test_the_papers_time_basis_cannot_see_the_link(tmp_path: Path) -> None:
    """Why the comparison defaults to the staged basis: under the paper's T_NDP + T_CPU the
    1 GiB/s link never appears, and the paper split looks faster than top-k."""
    platform = rfns_with_link(tmp_path, "1 GiB/s")
    paper = compare_splits(platform, knn8_profiles(), Options())
    full, topk = paper.splits
    assert full.estimate is not None and topk.estimate is not None
    assert full.estimate.time_s < topk.estimate.time_s
    assert paper.chosen == "knn8"
    assert compare_splits(platform, knn8_profiles()).chosen == "knn8-topk"


def test_carried_entry_is_the_first_splits_entry_scaled() -> None:
    rfns = load_platform("rfns")
    carried, ratios = carry_engine_entries(rfns, knn8_profiles())
    assert carried.engines is not None and rfns.engines is not None
    assert carried.engines.throughput["knn8-topk"] == pytest.approx(
        rfns.engines.throughput["knn8"] / 2
    )
    assert carried.engines.power_on_w("knn8-topk") == rfns.engines.power_on_w("knn8") == 12.0
    assert ratios == {"knn8-topk": pytest.approx(0.5)}
    assert "knn8-topk" not in rfns.engines.throughput  # the platform itself is unchanged


def test_a_split_with_its_own_entry_keeps_it() -> None:
    rfns = load_platform("rfns")
    assert rfns.engines is not None
    engines = rfns.engines.model_copy(
        update={"throughput": {**rfns.engines.throughput, "knn8-topk": 1.0 * GIB}}
    )
    platform = rfns.model_copy(update={"engines": engines})
    carried, ratios = carry_engine_entries(platform, knn8_profiles())
    assert ratios == {} and carried is platform


def test_without_engines_there_is_no_choice() -> None:
    result = compare_splits(load_platform("cns"), knn8_profiles())
    assert result.chosen is None
    assert "no NDP engines" in result.reason
    assert all(s.estimate is not None and s.estimate.config.split == "host" for s in result.splits)


def test_the_models_are_unchanged_by_the_comparison() -> None:
    """The paper split's row is exactly `estimate` on the platform as given."""
    rfns = load_platform("rfns")
    full = knn8_profiles()[0]
    result = compare_splits(rfns, knn8_profiles(), Options())
    assert result.splits[0].estimate == estimate(rfns, full, FULL_GEAR, Options())


def test_a_split_the_models_cannot_estimate_is_listed_not_chosen() -> None:
    """On RANS (ARM engines) neither profile has an ARM rate; only knn8 has a table entry,
    and top-k's cannot be carried over without an ARM measurement."""
    result = compare_splits(load_platform("rans"), knn8_profiles())
    full, topk = result.splits
    assert full.estimate is not None
    assert topk.estimate is None and topk.error and "no engine rate" in topk.error
    assert result.chosen == "knn8"
    rows = result.rows()
    assert rows[1]["note"] == topk.error and rows[0]["chosen"] is True


def test_bad_arguments() -> None:
    with pytest.raises(ModelError, match="at least one"):
        compare_splits(load_platform("rfns"), [])
    with pytest.raises(ModelError, match="tolerance"):
        compare_splits(load_platform("rfns"), knn8_profiles(), tolerance=-0.1)


@pytest.mark.parametrize("tolerance", [math.nan, math.inf])
def test_a_tolerance_that_is_not_finite_is_refused(tolerance: float) -> None:
    """NaN passed `tolerance < 0`, and then no split was within it: a bare ValueError from
    `min()` of nothing."""
    with pytest.raises(ModelError, match="tolerance must be a finite number >= 0"):
        compare_splits(load_platform("rfns"), knn8_profiles(), tolerance=tolerance)


def _option(app: str, time_s: float, energy_j: float) -> SplitOption:
    """A split with an estimate holding only what the rule reads (a stand-in for `Estimate`)."""
    stand_in = SimpleNamespace(time_s=time_s, energy_j=energy_j)
    return SplitOption(app, 8.0, stand_in)  # type: ignore[arg-type]


def test_within_the_tolerance_the_slower_split_wins_on_energy() -> None:
    """A slower split that uses less energy: chosen once the tolerance admits its time, not
    before (a rule that ranked by time first would keep the faster one at any tolerance)."""
    rfns = load_platform("rfns")
    splits = [_option("fast", 1.0, 100.0), _option("frugal", 1.3, 80.0)]
    assert _choose(rfns, splits, 0.0) == ("fast", "the only split at the shortest time")
    assert _choose(rfns, splits, 0.29)[0] == "fast"
    assert _choose(rfns, splits, 0.3) == ("frugal", "least energy")
    assert _choose(rfns, splits, 2.0)[0] == "frugal"
    # Equal energy: the shorter time; equal both: the split listed first.
    assert _choose(rfns, [_option("a", 1.2, 50.0), _option("b", 1.0, 50.0)], 0.5)[0] == "b"
    assert _choose(rfns, [_option("a", 1.0, 50.0), _option("b", 1.0, 50.0)], 0.0)[0] == "a"


def test_a_small_runs_energies_are_compared_not_rounded_to_a_tie() -> None:
    """Energies of a few nJ rounded to 1e-9 J were all a tie (5e-9 J each), so the split
    listed first won over one with 3 % less energy."""
    rfns = load_platform("rfns")
    splits = [_option("first", 1e-9, 5.05e-9), _option("frugal", 1e-9, 4.9e-9)]
    assert _choose(rfns, splits, 0.0)[0] == "frugal"


@settings(max_examples=60, deadline=None)
@given(
    st.lists(
        st.tuples(
            st.floats(1.0, 20_000.0),  # α
            st.floats(0.5, 40.0),  # the engine's rate, GiB/s
            st.floats(0.5, 10_000.0),  # the host part's rate, GiB/s
        ),
        min_size=1,
        max_size=4,
    ),
    st.sampled_from(["0.5 GiB/s", "4 GiB/s", "36 GiB/s"]),
    st.floats(0.0, 1.0),
)
def test_the_choice_is_within_the_tolerance_and_least_energy(
    tmp_path_factory: pytest.TempPathFactory,
    drawn: list[tuple[float, float, float]],
    link: str,
    tolerance: float,
) -> None:
    """Whatever the splits: the one chosen is within `tolerance` of the fastest, and no split
    within it uses less energy."""
    profiles = [
        Profile.model_validate(
            {
                "app": "knn8" if i == 0 else f"knn8-variant{i}",
                "alpha": alpha,
                "host_part": f"{host} GiB/s",
                "engine": {"fpga": f"{engine} GiB/s"},
                "data_size": "130 GiB",
                "host_only": "20 GiB/s",
            }
        )
        for i, (alpha, engine, host) in enumerate(drawn)
    ]
    platform = rfns_with_link(tmp_path_factory.mktemp("link"), link)
    result = compare_splits(platform, profiles, tolerance=tolerance)
    estimated = {s.app: s.estimate for s in result.splits if s.estimate is not None}
    assert result.chosen in estimated
    fastest = min(e.time_s for e in estimated.values())
    chosen = estimated[result.chosen]
    assert chosen.time_s <= fastest * (1 + tolerance) * (1 + 1e-9)
    for app, e in estimated.items():
        if e.time_s <= fastest * (1 + tolerance):
            assert chosen.energy_j <= e.energy_j + 1e-6, f"{app} uses less energy"
