"""`wall_times=printed` on a platform the profile has no published time for says so."""

from __future__ import annotations

from ndpkit.hw import load_platform
from ndpkit.model import Options, estimate
from ndpkit.profile import load_profile

PRINTED = Options(wall_times="printed")


def test_a_platform_without_a_published_time_gets_a_note() -> None:
    # SFNS's NDP time is not among HE's published ones (RANS and RFNS are): T_NDP falls back
    # to the extrapolation, the same figure as under unrounded, which was not said.
    sfns = load_platform("sfns")
    printed = estimate(sfns, load_profile("he"), options=PRINTED)
    unrounded = estimate(sfns, load_profile("he"))
    assert printed.t_ndp_s == unrounded.t_ndp_s
    assert any("no published full-server time for platform 'sfns'" in n for n in printed.notes)
    assert any("it has them for rans, rfns" in n for n in printed.notes)
    assert not any("published" in n for n in unrounded.notes)


def test_a_platform_with_a_published_time_gets_none() -> None:
    e = estimate(load_platform("rfns"), load_profile("he"), options=PRINTED)
    assert not any("published" in n for n in e.notes)


def test_a_host_split_runs_no_engine_and_gets_none() -> None:
    e = estimate(load_platform("cns"), load_profile("he"), options=PRINTED)
    assert not any("published" in n for n in e.notes)
