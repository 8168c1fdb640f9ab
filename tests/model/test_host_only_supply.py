"""The papers' host-only times are wall times of CNS runs reading their data over its 36 GiB/s
link (`host_only_supply`). On a platform whose SSDs and link deliver less, a host split under
the `paper` and `overlap` bases waits for its data: `estimate -p sfns -a lc --split host`
reported 3 GB/s (SSD-bound) beside 0.98 s for 37 GiB, 12x too short, and 601 J."""

from __future__ import annotations

import re
from pathlib import Path

import pytest
from hypothesis import given
from hypothesis import strategies as st

from ndpkit.errors import SpecError
from ndpkit.hw import load_platform
from ndpkit.model import HOST_ONLY, Options, estimate
from ndpkit.profile import Profile, load_profile, load_profiles, save_profiles

GIB = 2**30
CNS_LINK = 36 * GIB
ONE_SSD = 3 * GIB  # sans and sfns: one SSD at 3 GiB/s behind a 36 GiB/s link


def _margin(profile: Profile) -> float:
    """How much faster than its 36 GiB/s supply the papers' run got its data (LC: 37 GiB in
    0.98 s, 4.9%; 1 where the run was slower than its supply)."""
    assert profile.host_only_bytes_per_s is not None
    return max(1.0, profile.host_only_bytes_per_s / CNS_LINK)


@pytest.mark.parametrize("platform", ["sfns", "sans"])
def test_lc_on_one_ssd_waits_for_its_data(platform: str) -> None:
    lc = load_profile("lc")
    assert lc.host_only_supply_bytes_per_s == CNS_LINK
    run = estimate(load_platform(platform), lc, HOST_ONLY)
    want_s = lc.data_bytes / (ONE_SSD * _margin(lc))
    assert run.time_s == pytest.approx(want_s)
    assert run.time_s == pytest.approx(11.76, abs=0.01)  # by hand: 37 / (3 x 1.0488)
    assert run.t_cpu_s == run.time_s
    assert run.bottleneck == "ssd"
    # the host is charged for the whole run, as on CNS for its 0.98 s
    cns = estimate(load_platform("cns"), lc, HOST_ONLY)
    assert run.energy_j / run.time_s == pytest.approx(cns.energy_j / cns.time_s)
    assert any("host_only_supply" in note and "11.8 s" in note for note in run.notes)


def test_he_slower_than_its_supply_waits_for_the_data_alone() -> None:
    """HE's CNS run (3.4 GiB in 0.13 s, 26 GiB/s) was slower than its 36 GiB/s supply: no
    margin, so D over one SSD's 3 GiB/s."""
    he = load_profile("he")
    assert _margin(he) == 1.0
    run = estimate(load_platform("sans"), he, HOST_ONLY)
    assert run.time_s == pytest.approx(he.data_bytes / ONE_SSD)


def test_a_host_slower_than_the_ssd_keeps_its_time() -> None:
    """k-NN_8's 47.45 s is longer than 130 GiB over one SSD (43.3 s): unchanged, no note."""
    knn8 = load_profile("knn8")
    run = estimate(load_platform("sfns"), knn8, HOST_ONLY)
    assert run.time_s == pytest.approx(47.45)
    assert not any("host_only_supply" in note for note in run.notes)


@pytest.mark.parametrize("app", ["lc", "he", "fft2d", "knn2", "knn6", "knn8"])
@pytest.mark.parametrize("platform", ["cns", "rans", "rfns"])
def test_the_platforms_that_deliver_what_cns_did_keep_the_papers_times(
    app: str, platform: str
) -> None:
    """CNS and the 36-SSD servers' host split keep T_CPU,CNS exactly (Table 5's 601.43 J)."""
    prof = load_profile(app)
    assert prof.host_only_bytes_per_s is not None
    run = estimate(load_platform(platform), prof, HOST_ONLY)
    assert run.time_s == prof.data_bytes / prof.host_only_bytes_per_s
    assert not run.notes
    if app == "lc" and platform == "cns":
        assert round(run.energy_j, 2) == 601.43


@pytest.mark.parametrize("basis", ["staged", "pipeline"])
def test_the_bases_that_time_the_transfer_are_unchanged(basis: str) -> None:
    """`staged` and `pipeline` already time the transfer (max of it and T_CPU, without the
    margin): the supply changes nothing there."""
    lc = load_profile("lc")
    options = Options(time_basis=basis)  # type: ignore[arg-type]
    sfns = load_platform("sfns")
    with_supply = estimate(sfns, lc, HOST_ONLY, options)
    without = estimate(sfns, lc.with_changes(host_only_supply_bytes_per_s=None), HOST_ONLY, options)
    assert with_supply.time_s == without.time_s == pytest.approx(lc.data_bytes / ONE_SSD)


def test_a_profile_without_a_supply_is_not_held_to_one() -> None:
    """A user's profile that does not say where its host-only time was measured keeps it."""
    lc = load_profile("lc").with_changes(host_only_supply_bytes_per_s=None)
    assert estimate(load_platform("sfns"), lc, HOST_ONLY).time_s == pytest.approx(0.98)


@given(
    host_gib_s=st.floats(min_value=0.5, max_value=500.0),
    supply_gib_s=st.floats(min_value=0.5, max_value=500.0),
    platform=st.sampled_from(["cns", "sfns"]),
    basis=st.sampled_from(["paper", "overlap"]),
)
def test_the_floor_never_shortens_a_run(
    host_gib_s: float, supply_gib_s: float, platform: str, basis: str
) -> None:
    """The run lasts the longer of the measured T_CPU and D over this platform's supply
    (with the measured run's margin over its own), and on a platform that delivers at least
    what the measured run got, exactly T_CPU."""
    lc = load_profile("lc").with_changes(
        host_only_bytes_per_s=host_gib_s * GIB, host_only_supply_bytes_per_s=supply_gib_s * GIB
    )
    run = estimate(load_platform(platform), lc, HOST_ONLY, Options(time_basis=basis))  # type: ignore[arg-type]
    here = CNS_LINK if platform == "cns" else ONE_SSD
    t_cpu = lc.data_bytes / (host_gib_s * GIB)
    delivery = lc.data_bytes / (here * max(1.0, host_gib_s / supply_gib_s))
    assert run.time_s >= t_cpu * (1 - 1e-12)
    assert run.time_s == pytest.approx(max(t_cpu, delivery))
    if here >= supply_gib_s * GIB:
        assert run.time_s == t_cpu


@pytest.mark.parametrize(
    ("extra", "message"),
    [
        ('host_only = "10 GiB/s"\nhost_only_in_memory = true\n', "host_only_in_memory = true"),
        ("", "give host_only too"),
    ],
)
def test_a_supply_needs_a_host_only_run_reading_its_data(
    tmp_path: Path, extra: str, message: str
) -> None:
    path = tmp_path / "mine.toml"
    path.write_text(
        '[apps.scan]\ndata_size = "1 GiB"\nalpha = 8\nhost_only_supply = "36 GiB/s"\n' + extra
    )
    with pytest.raises(SpecError, match=message) as caught:
        load_profiles(path)
    assert str(caught.value).startswith(f"{path}: apps.scan: host_only_supply ")
    with pytest.raises(SpecError, match="host_only_supply"):
        path.write_text(
            '[apps.scan]\ndata_size = "1 GiB"\nalpha = 8\nhost_only = "1 GiB/s"\n'
            'host_only_supply = "-3 GiB/s"\n'
        )
        load_profiles(path)


_NOTE_FIGURES = re.compile(
    r"T_CPU is ([\d.]+) (GiB|GB) / \(?([\d.]+) (?:GiB|GB)/s(?: x ([\d.]+))?\)? = ([\d.]+) s$"
)


@pytest.mark.parametrize(
    ("platform", "app", "units", "figures"),
    [
        ("sfns", "lc", "binary", ("37", "GiB", "3", "1.049", "11.8")),
        ("sans", "lc", "decimal", ("39.7", "GB", "3.22", "1.049", "11.8")),
        ("sans", "he", "binary", ("3.4", "GiB", "3", None, "1.13")),
        ("sfns", "knn2", "binary", ("130", "GiB", "3", None, "43.3")),
    ],
)
def test_the_note_gives_the_figures_its_time_comes_from(
    platform: str, app: str, units: str, figures: tuple[str | None, ...]
) -> None:
    """The note said "3 GiB/s, so T_CPU is 11.8 s" for LC's 37 GiB, where 37 / 3 is 12.3:
    it left out the margin. It said HE's run was "measured reading at 36 GiB/s", where it read
    3.4 GiB in 0.13 s (26 GiB/s): 36 is what the SSDs and the link delivered."""
    run = estimate(load_platform(platform), load_profile(app), HOST_ONLY, Options(units=units))  # type: ignore[arg-type]
    (note,) = [n for n in run.notes if "host_only_supply" in n]
    found = _NOTE_FIGURES.search(note)
    assert found is not None, note
    assert found.groups() == figures
    size, _, supply, margin, t_cpu = found.groups()
    assert size is not None and supply is not None and t_cpu is not None
    # the note's own figures give its time, to the digits it shows
    assert float(size) / (float(supply) * float(margin or 1)) == pytest.approx(
        float(t_cpu), rel=0.005
    )
    assert f"{run.t_cpu_s:.3g}" == t_cpu
    assert "reading at" not in note
    assert "where the SSDs and the link delivered" in note
    assert ("x as fast" in note) == (margin is not None)


def test_with_changes_drops_a_supply_no_run_reading_its_data_has(tmp_path: Path) -> None:
    """`with_changes(host_only_in_memory=True)` on a papers' profile kept its supply (it skips
    validation): a profile no file can hold, which `save_profiles` refused ("not written: it
    would not load back")."""
    lc = load_profile("lc")
    in_memory = lc.with_changes(host_only_in_memory=True)
    assert in_memory.host_only_supply_bytes_per_s is None
    assert in_memory.host_only_bytes_per_s == lc.host_only_bytes_per_s
    path = tmp_path / "mine.json"
    save_profiles([in_memory], path)
    assert load_profiles(path).apps["lc"] == in_memory
    # the model is the in-memory one either way: at least D / min(SSD, link) on sfns
    sfns = load_platform("sfns")
    assert estimate(sfns, in_memory, HOST_ONLY).time_s == pytest.approx(lc.data_bytes / ONE_SSD)
    assert lc.with_changes(host_only_bytes_per_s=None).host_only_supply_bytes_per_s is None
    # a change that keeps a run reading its data keeps where it was measured
    faster = lc.with_changes(host_only_bytes_per_s=2 * CNS_LINK)
    assert faster.host_only_supply_bytes_per_s == CNS_LINK
    assert lc.with_changes(host_only_in_memory=False).host_only_supply_bytes_per_s == CNS_LINK
    assert lc.with_changes(data_bytes=GIB).host_only_supply_bytes_per_s == CNS_LINK
    # given with the change, the caller's supply stands (unvalidated, as every change)
    kept = lc.with_changes(host_only_in_memory=True, host_only_supply_bytes_per_s=CNS_LINK)
    assert kept.host_only_supply_bytes_per_s == CNS_LINK
