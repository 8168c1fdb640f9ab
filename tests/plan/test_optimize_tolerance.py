"""`optimise` refuses a tolerance that is not a finite number >= 0: NaN compared false with
every bound and crashed the search (`min()` of no candidates)."""

from __future__ import annotations

import math
from pathlib import Path

import pytest

from ndpkit.errors import ModelError
from ndpkit.hw import load_platform
from ndpkit.model import Options
from ndpkit.plan import optimise
from ndpkit.profile import Profile, load_profile


@pytest.mark.parametrize("tolerance", [math.nan, math.inf, -math.inf, -0.01])
def test_a_tolerance_that_is_not_finite_and_non_negative_is_refused(tolerance: float) -> None:
    with pytest.raises(ModelError, match="tolerance must be a finite number >= 0"):
        optimise(load_platform("rans"), load_profile("lc"), tolerance=tolerance)


def test_a_large_finite_tolerance_still_plans() -> None:
    result = optimise(load_platform("rans"), load_profile("lc"), tolerance=1e6)
    assert result.method == "optimal (tolerance 1e+06)"


def test_a_negative_zero_tolerance_is_said_as_zero() -> None:
    plan = optimise(load_platform("rfns"), load_profile("he"), tolerance=-0.0)
    assert plan.method == "optimal (tolerance 0)"


def test_an_in_storage_platform_is_refused_not_searched_as_one_device() -> None:
    """risp-64ch has 64 cells on one SSD: searched as devices, the plan said 1 engine on of
    1 with nane 64 (more engines needed than there were)."""
    with pytest.raises(ModelError, match=r"in-storage .* plan its channels"):
        optimise(load_platform("risp-64ch"), load_profile("sobel", "risp"))


def test_a_small_runs_least_energy_configuration_is_chosen(tmp_path: Path) -> None:
    """docs/planning.md's scan on edge16 with static shards and a 20 % tolerance keeps 8
    engines; over 1 byte every energy (about 5 nJ) rounded to 1e-9 J was a tie, and the
    tie rule (higher performance) chose all 16, the most energy."""
    edge = tmp_path / "edge.toml"
    edge.write_text(
        'extends = "rans"\nname = "edge"\n[storage]\ncount = 16\nread_bandwidth = "7 GB/s"\n'
        '[storage.link]\nbandwidth = "8 GB/s"\n[engines]\ncount = 16\npower_active = "9 W"\n'
        '[switch_layer]\nscheme = "mux4"\npower_total = "8 mW"\n'
    )
    opts = Options(placement="static_shards")
    for size in ("2 TB", "1 B"):
        scan = Profile.model_validate(
            {"app": "scan", "data_size": size, "alpha": 20, "engine": {"arm": "12 GB/s"}}
        )
        chosen = optimise(load_platform(edge), scan, opts, tolerance=0.2)
        least = min(chosen.candidates, key=lambda c: c.energy_j)
        assert chosen.planned.energy_j == least.energy_j, size
        assert chosen.engines_on == 8, size
