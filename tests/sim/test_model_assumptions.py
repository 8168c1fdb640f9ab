"""The model a simulation is compared with shares the simulator's assumptions, whatever
options it is given: engine times from their rates, and no mux port in a host split's path."""

from __future__ import annotations

import pytest

from ndpkit.hw import load_platform
from ndpkit.model import HOST_ONLY, Options
from ndpkit.profile import load_profile
from ndpkit.sim import SimOptions, simulate

GIB = 2**30


@pytest.mark.parametrize("app", ["knn8", "fft2d"])
def test_printed_wall_times_do_not_enter_the_comparison(app: str) -> None:
    """With wall_times=printed the model took the paper's T_NDP for its own 130 GiB, so a
    13 GiB k-NN run read as 81% faster than the model, FFT2D's as 3,790% slower."""
    rfns, profile = load_platform("rfns"), load_profile(app)
    sim = SimOptions(data_bytes=13 * GIB)
    printed = simulate(rfns, profile, options=Options(wall_times="printed"), sim=sim)
    unrounded = simulate(rfns, profile, options=Options(), sim=sim)
    assert printed.model.time_s == unrounded.model.time_s
    assert abs(printed.time_difference) < 0.01


def test_the_models_mb_per_j_is_unrounded_as_the_simulated_one() -> None:
    """With rounding=paper the model's MB/J was D / (energy rounded to 0.01 J) beside the
    simulated D / energy: 155.0824 against 155.0810 for RANS HE, a difference of rounding."""
    rans, profile = load_platform("rans"), load_profile("he")
    paper = simulate(rans, profile, options=Options(rounding="paper"))
    exact = simulate(rans, profile, options=Options())
    assert paper.model.ee_mb_per_j == exact.model.ee_mb_per_j


def test_a_host_split_reads_its_ssds_past_no_mux_port() -> None:
    """A port cap slowed the SSDs of a host split (no data crosses the switch layer's ports
    without engines), which the model's storage stage does not."""
    rans, profile = load_platform("rans"), load_profile("lc")
    capped = simulate(rans, profile, HOST_ONLY, Options(mux_port_cap=True))
    free = simulate(rans, profile, HOST_ONLY, Options(mux_port_cap=False))
    assert [s["active_s"] for s in capped.ssds] == [s["active_s"] for s in free.ssds]
    assert capped.time_s == free.time_s


def test_a_host_whose_rate_holds_its_reading_does_not_wait_for_its_data() -> None:
    """host_mode=after on a host-only run of the papers' LC (its CNS rate is a run reading
    its data) waited for the whole transfer and then took T_CPU again: 2.0 s against the
    1.03 s the link needs. The host now works as its data arrives, and a note says why."""
    cns, lc = load_platform("cns"), load_profile("lc")
    sim = SimOptions(data_bytes=4 * GIB)
    after = simulate(cns, lc, sim=SimOptions(data_bytes=4 * GIB, host_mode="after"))
    stream = simulate(cns, lc, sim=sim)
    assert after.host_mode == "stream"
    assert after.time_s == stream.time_s
    transfer_s = 4 * GIB / cns.host_link.bandwidth_bytes_per_s
    compute_s = 4 * GIB / lc.host_only_bytes_per_s  # type: ignore[operator]
    assert after.time_s == pytest.approx(max(transfer_s, compute_s), rel=0.02)
    assert after.time_s < 0.6 * (transfer_s + compute_s)
    assert any("host_mode after not applied" in note for note in after.notes)
    assert not any("host_mode after" in note for note in stream.notes)
    assert after.model.time_s == pytest.approx(max(transfer_s, compute_s))


def test_a_host_rate_measured_in_memory_still_waits_when_asked() -> None:
    """A rate measured with the data in memory leaves the transfer out: after keeps it
    first, then the host computes (the staged model's sum)."""
    cns = load_platform("cns")
    lc = load_profile("lc").with_changes(host_only_in_memory=True)
    sim = SimOptions(data_bytes=4 * GIB, host_mode="after")
    run = simulate(cns, lc, sim=sim)
    assert run.host_mode == "after"
    transfer_s = 4 * GIB / cns.host_link.bandwidth_bytes_per_s
    compute_s = 4 * GIB / lc.host_only_bytes_per_s  # type: ignore[operator]
    assert run.time_s == pytest.approx(transfer_s + compute_s, rel=0.02)
    assert run.model.time_s == pytest.approx(transfer_s + compute_s)
    assert not any("host_mode after" in note for note in run.notes)


def test_a_size_given_for_an_iterative_profile_is_read_once_per_pass() -> None:
    """A profile of 3 passes (K-Means from `ndpkit evaluate`) simulated at --size D streams
    3 D, as its own data_size (D x passes) does, and counts D once in MB/J; it simulated
    one pass."""
    rans, he = load_platform("rans"), load_profile("he")
    thrice = he.with_changes(passes=3)
    given = simulate(rans, thrice, sim=SimOptions(data_bytes=4 * GIB))
    streamed = simulate(rans, he, sim=SimOptions(data_bytes=12 * GIB))
    assert given.data_bytes == streamed.data_bytes == 12 * GIB
    assert given.time_s == streamed.time_s
    assert given.ee_mb_per_j == pytest.approx(streamed.ee_mb_per_j / 3, rel=1e-12)
    assert given.model.ee_mb_per_j == pytest.approx(streamed.model.ee_mb_per_j / 3, rel=1e-12)
    assert any("reads D 3 times" in note for note in given.notes)
    assert not any("reads D" in note for note in streamed.notes)
