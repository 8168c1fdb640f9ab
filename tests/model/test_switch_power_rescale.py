"""The switch layer's declared power (spec §2.6, §5.1, O5) survives a detour through mux1.

The RANS/RFNS presets declare 18 mW for their 18 mux elements. `with_scheme` and
`with_engine_count` scale that total with the number of elements, and mux1 has none: a
full-gear view (`with_scheme("mux1")`, as `reproduce` builds its Tables 4-8) rewired to mux2
must pay the same 18 mW again, not 0 mW (which priced anchor 11.6's −1.18 J at 0 J).
"""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from ndpkit.hw import Platform, load_platform
from ndpkit.model import Options
from ndpkit.plan import plan
from ndpkit.profile import load_profile

DECLARED_W = 0.018  # rans.toml, rfns.toml: power_total = "18 mW" for 36 SSDs under mux2
DECLARED_ELEMENTS = 18


def test_plan_of_a_full_gear_view_still_pays_for_the_switch_layer():
    """Anchor 11.6 (k-NN_8 on RANS): E_switch = 18 mW x 65.4 s ≈ 1.18 J, saving −1.18 J,
    whether the platform planned is the preset or its mux1 view."""
    profile, options = load_profile("knn8"), Options(wall_times="printed")
    rans = load_platform("rans")
    for platform in (rans, rans.with_scheme("mux1")):
        p = plan(platform, profile, options, scheme="mux2")
        expected = DECLARED_W * p.planned.t_ndp_s
        assert p.planned.t_ndp_s == pytest.approx(65.4, abs=1e-12)
        assert p.switch_energy_j == pytest.approx(expected, rel=1e-12), (
            f"{platform.switch_layer.scheme} -> mux2: switch energy {p.switch_energy_j} J, "
            f"expected 18 mW x {p.planned.t_ndp_s} s = {expected} J"
        )
        assert p.net_saving_j == pytest.approx(-expected, rel=1e-9)


def _element_watts(platform: Platform) -> float:
    return platform.switch_layer.power_w(platform.devices)


@settings(max_examples=60, deadline=None, database=None)
@given(
    st.sampled_from(["rans", "rfns"]),
    st.lists(
        st.one_of(
            st.tuples(st.just("scheme"), st.sampled_from(["mux1", "mux2", "mux3", "mux4"])),
            st.tuples(st.just("count"), st.integers(2, 48)),
        ),
        max_size=5,
    ),
)
def test_declared_total_scales_with_the_elements_whatever_the_detour(name, steps):
    """Each mux element draws 18 mW / 18 whatever scheme changes and rescales came before."""
    platform = load_platform(name)
    for kind, value in steps:
        if kind == "scheme":
            if int(str(value)[3:]) <= platform.devices:
                platform = platform.with_scheme(str(value))
        elif platform.switch_layer.module_size(int(value)) <= int(value):
            platform = platform.with_engine_count(int(value))
    elements = platform.switch_layer.elements(platform.devices)
    assert _element_watts(platform) == pytest.approx(
        DECLARED_W * elements / DECLARED_ELEMENTS, rel=1e-12
    ), f"{name} after {steps}: {elements} elements"
