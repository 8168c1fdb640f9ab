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
