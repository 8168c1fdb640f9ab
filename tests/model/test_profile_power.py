"""A profile's carried engine power (`engine_power`): what `ndpkit evaluate --save-profiles`
writes for a split whose engine rate and power came from another app's platform entry, so
that `estimate`, `plan` and `simulate` price it as evaluate did."""

from __future__ import annotations

from pathlib import Path

import pytest
from hypothesis import given
from hypothesis import strategies as st

from ndpkit.errors import SpecError
from ndpkit.hw import Platform, load_platform
from ndpkit.model import FULL_GEAR, HOST_ONLY, Options, estimate
from ndpkit.model.energy import with_profile_power
from ndpkit.profile import Profile, load_profile, load_profiles, save_profiles
from ndpkit.sim.options import SimOptions
from ndpkit.sim.spec import build_spec


def _split(watts: float | None, kind: str = "fpga") -> Profile:
    """k-NN_2's paper profile as a split with a name of its own (no platform entry), an
    FPGA engine rate, and maybe a carried power."""
    profile = load_profile("knn2").with_changes(
        app="knn2-split", engine_bytes_per_s={"fpga": 3.0e9}
    )
    if watts is None:
        return profile
    return profile.with_changes(engine_power_active_w={kind: watts})


def _with_entry(platform: Platform, app: str, watts: float) -> Platform:
    engines = platform.engines
    assert engines is not None
    power = {**engines.power_active_by_app, app: watts}
    wired = engines.model_copy(update={"power_active_by_app": power})
    return platform.model_copy(update={"engines": wired})


@given(watts=st.floats(min_value=0.5, max_value=200.0, allow_nan=False))
def test_carried_power_prices_as_a_platform_entry_would(watts: float) -> None:
    rfns = load_platform("rfns")
    carried = estimate(rfns, _split(watts))
    entry = estimate(_with_entry(rfns, "knn2-split", watts), _split(None))
    assert carried.energy.by_component_j == entry.energy.by_component_j
    assert carried.time_s == entry.time_s


def test_without_carried_power_the_engines_default_power_is_used() -> None:
    rfns = load_platform("rfns")
    assert rfns.engines is not None
    plain = estimate(rfns, _split(None))
    default = estimate(_with_entry(rfns, "knn2-split", rfns.engines.power_active_w), _split(None))
    assert plain.energy.total_j == default.energy.total_j
    assert estimate(rfns, _split(30.0)).energy.total_j > plain.energy.total_j


def test_the_platforms_own_entry_wins() -> None:
    rfns = _with_entry(load_platform("rfns"), "knn2-split", 9.0)
    assert with_profile_power(rfns, _split(30.0)) is rfns
    assert (
        estimate(rfns, _split(30.0)).energy.total_j == estimate(rfns, _split(None)).energy.total_j
    )


def test_power_for_another_kind_or_an_in_storage_platform_is_not_used() -> None:
    rfns = load_platform("rfns")
    assert with_profile_power(rfns, _split(30.0, kind="arm")) is rfns
    arm = estimate(rfns, _split(30.0, kind="arm")).energy.by_component_j
    assert arm == estimate(rfns, _split(None)).energy.by_component_j
    risp = load_platform("risp-64ch")
    assert with_profile_power(risp, _split(30.0)) is risp


def test_carried_power_below_the_engines_idle_power_is_refused(tmp_path: Path) -> None:
    path = tmp_path / "rfns-idle.toml"
    path.write_text('extends = "rfns"\nname = "rfns-idle"\n[engines]\npower_idle = "8 W"\n')
    idle = load_platform(path)
    with pytest.raises(SpecError) as caught:
        estimate(idle, _split(5.0))
    assert caught.value.source == "profile knn2-split"
    assert caught.value.field == "engine_power.fpga"
    assert caught.value.detail.startswith(
        "5 W is below the power_idle of the engines of platform 'rfns-idle' (8 W)"
    )
    # A host split runs no engine: the power it would never charge is not checked.
    host = estimate(idle, _split(5.0), HOST_ONLY)
    assert host.energy.total_j == estimate(idle, _split(None), HOST_ONLY).energy.total_j
    spec = build_spec(idle, _split(5.0), HOST_ONLY, Options(), SimOptions())
    assert not any(e["active"] for e in spec["engines"])


def test_carried_power_from_a_file_is_refused_naming_the_file_and_table(tmp_path: Path) -> None:
    """The check runs against a platform, after loading: it named only "profile APP", so
    with several profile files the user had to guess which one was wrong."""
    platform = tmp_path / "rfns-idle.toml"
    platform.write_text('extends = "rfns"\nname = "rfns-idle"\n[engines]\npower_idle = "8 W"\n')
    profiles = tmp_path / "low.json"
    save_profiles([_split(5.0)], profiles)
    with pytest.raises(SpecError) as caught:
        estimate(load_platform(platform), load_profiles(profiles).apps["knn2-split"])
    assert caught.value.source == str(profiles)
    assert caught.value.field == "apps.knn2-split.engine_power.fpga"
    assert str(caught.value).startswith(
        f"{profiles}: apps.knn2-split.engine_power.fpga: 5 W is below the power_idle"
    )


def test_the_simulator_is_given_the_carried_power() -> None:
    rfns = load_platform("rfns")
    spec = build_spec(rfns, _split(30.0), FULL_GEAR, Options(), SimOptions())
    assert {e["power_busy_w"] for e in spec["engines"]} == {30.0}


def test_a_profile_set_keeps_carried_power_bit_for_bit(tmp_path: Path) -> None:
    path = tmp_path / "p.json"
    profile = _split(0.1 + 0.2)
    save_profiles([profile], path)
    assert '"engine_power": {\n        "fpga": "0.30000000000000004 W"' in path.read_text()
    assert load_profiles(path).apps["knn2-split"] == profile


def test_a_misspelt_kind_in_engine_power_is_refused(tmp_path: Path) -> None:
    path = tmp_path / "p.toml"
    path.write_text('[apps.x]\ndata_size = "1 GiB"\nalpha = 2\nengine_power = { fgpa = "10 W" }\n')
    with pytest.raises(SpecError, match="unknown engine kind 'fgpa'; did you mean 'fpga'"):
        load_profiles(path)
