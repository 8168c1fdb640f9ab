"""`optimise` refuses a tolerance that is not a finite number >= 0: NaN compared false with
every bound and crashed the search (`min()` of no candidates)."""

from __future__ import annotations

import math

import pytest

from ndpkit.errors import ModelError
from ndpkit.hw import load_platform
from ndpkit.plan import optimise
from ndpkit.profile import load_profile


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
