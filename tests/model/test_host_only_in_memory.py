"""A host-only rate measured with the data in memory (`host_only_in_memory`, what `ndpkit
evaluate` writes) leaves out the transfer a CNS run waits for; the papers' CNS rates are wall
times of runs that read their data, and keep their published times."""

from __future__ import annotations

import re

import pytest
from hypothesis import given
from hypothesis import strategies as st

from ndpkit.errors import ModelError
from ndpkit.hw import load_platform
from ndpkit.model import HOST_ONLY, Configuration, Estimate, Options, estimate
from ndpkit.model.pipeline import CPU
from ndpkit.profile import load_profile, load_profiles
from ndpkit.sim import SimOptions, simulate

CNS = load_platform("cns")
LINK = CNS.host_link.bandwidth_bytes_per_s


def test_the_papers_cns_time_stands() -> None:
    """LC's published 0.98 s on CNS is shorter than D over the link (1.03 s): kept, so that
    Table 5's 601.43 J is reproduced."""
    lc = load_profile("lc")
    assert not lc.host_only_in_memory
    assert estimate(CNS, lc).time_s == pytest.approx(0.98)


@pytest.mark.parametrize("basis", ["paper", "overlap", "staged", "pipeline"])
def test_a_rate_measured_in_memory_waits_for_its_data(basis: str) -> None:
    lc = load_profile("lc")
    fast = lc.with_changes(host_only_bytes_per_s=10 * LINK, host_only_in_memory=True)
    run = estimate(CNS, fast, options=Options(time_basis=basis))  # type: ignore[arg-type]
    transfer_s, compute_s = lc.data_bytes / LINK, lc.data_bytes / (10 * LINK)
    # staged times the transfer, then the host; the others run for D over the link
    want = transfer_s + compute_s if basis == "staged" else transfer_s
    assert run.time_s == pytest.approx(want)
    assert run.bottleneck == "link"


@given(ratio=st.floats(min_value=0.01, max_value=100.0))
def test_the_bound_never_shortens_a_run_and_never_moves_a_slow_host(ratio: float) -> None:
    lc = load_profile("lc")
    base = lc.with_changes(host_only_bytes_per_s=ratio * LINK)
    measured = base.with_changes(host_only_in_memory=True)
    walled, bounded = estimate(CNS, base), estimate(CNS, measured)
    assert bounded.time_s >= walled.time_s * (1 - 1e-12)
    assert bounded.time_s == pytest.approx(max(walled.time_s, lc.data_bytes / LINK))
    if ratio <= 1:
        assert bounded.time_s == pytest.approx(walled.time_s)


PAPERS_APPS = ("lc", "he", "fft2d", "knn2", "knn6", "knn8")


def _transfer_s(run: Estimate, data_bytes: float) -> float:
    """D over the slowest stage before the host (the SSDs or the link)."""
    return data_bytes / min(bw for name, bw in run.stages.items() if name != CPU)


@pytest.mark.parametrize("app", PAPERS_APPS)
@pytest.mark.parametrize("platform", ["cns", "rans"])
def test_staged_does_not_add_the_transfer_to_a_cns_time_that_holds_it(
    app: str, platform: str
) -> None:
    """The papers' T_CPU,CNS is a run reading its data over the link, so `staged` (transfer,
    then the host) added the transfer to a time that held it already: LC on CNS took 2.0 s
    against the 1.03 s the link needs. The same holds for a platform's host split."""
    prof = load_profile(app)
    assert prof.host_only_bytes_per_s is not None and not prof.host_only_in_memory
    run = estimate(
        load_platform(platform),
        prof,
        HOST_ONLY,
        options=Options(time_basis="staged"),
    )
    transfer_s = _transfer_s(run, prof.data_bytes)
    compute_s = prof.data_bytes / prof.host_only_bytes_per_s
    assert run.time_s == pytest.approx(max(transfer_s, compute_s))
    assert run.time_s < transfer_s + compute_s
    host = run.state_times.of("host")
    assert host["active"] == pytest.approx(compute_s)
    assert host["active"] + host["idle"] == pytest.approx(run.time_s)
    pipeline = estimate(load_platform(platform), prof, HOST_ONLY, Options(time_basis="pipeline"))
    assert run.time_s == pytest.approx(pipeline.time_s)


@given(ratio=st.floats(min_value=0.01, max_value=100.0), in_memory=st.booleans())
def test_staged_host_only_runs_take_the_transfer_once_or_in_turn(
    ratio: float, in_memory: bool
) -> None:
    """A rate that holds its reading overlaps the transfer (the longer of the two); one
    measured in memory follows it (their sum). Never shorter than either."""
    lc = load_profile("lc").with_changes(
        host_only_bytes_per_s=ratio * LINK, host_only_in_memory=in_memory
    )
    run = estimate(CNS, lc, options=Options(time_basis="staged"))
    transfer_s = _transfer_s(run, lc.data_bytes)
    compute_s = lc.data_bytes / (ratio * LINK)
    want = transfer_s + compute_s if in_memory else max(transfer_s, compute_s)
    assert run.time_s == pytest.approx(want)
    assert run.time_s >= max(transfer_s, compute_s) * (1 - 1e-12)


@pytest.mark.parametrize("switch_time", ["ndp", "ndp_cpu"])
@pytest.mark.parametrize("in_memory", [False, True])
@pytest.mark.parametrize("basis", ["paper", "pipeline", "overlap", "staged"])
def test_a_host_split_never_turns_the_switch_layer_on(
    basis: str, in_memory: bool, switch_time: str
) -> None:
    """The switch layer is on while the engines are (switch_time=ndp), or for the whole run
    of engines that are on (ndp_cpu): a host split runs none, so no basis charges it
    (staged charged it for the transfer, and ndp_cpu for all of T_CPU; the simulator not)."""
    lc = load_profile("lc").with_changes(host_only_in_memory=in_memory)
    options = Options(time_basis=basis, switch_time=switch_time)  # type: ignore[arg-type]
    run = estimate(load_platform("rans"), lc, HOST_ONLY, options)
    assert run.state_times.of("switch_layer")["on"] == 0.0
    assert run.energy.by_component_j.get("switch_layer", 0.0) == 0.0


@pytest.mark.parametrize(
    ("platform", "split", "said"),
    [("cns", "device", "'cns' (no engines)"), ("rfns", "host", "'rfns' (the host split)")],
)
def test_a_profile_without_a_host_only_rate_names_the_platform_that_needs_it(
    platform: str, split: str, said: str
) -> None:
    """The error named neither the platform nor why it runs without engines: in a sweep or
    an evaluate over several platforms, which one needed the rate was left to guess."""
    profile = (
        load_profiles("rans-rfns").apps["he"].model_copy(update={"host_only_bytes_per_s": None})
    )
    machine = load_platform(platform)
    for run in (
        lambda: estimate(machine, profile, Configuration(split=split)),
        lambda: simulate(machine, profile, Configuration(split=split)),
    ):
        with pytest.raises(ModelError, match=re.escape(f"as it would on {said}")):
            run()


def test_switch_time_ndp_cpu_agrees_with_the_simulator_on_a_host_split() -> None:
    """`estimate --split host --switch-time ndp_cpu` charged RFNS's 18 mW over k-NN_2's
    17.22 s (0.31 J) where `simulate` charges nothing; a device split is still charged for
    the whole run."""
    rfns, knn2 = load_platform("rfns"), load_profile("knn2")
    options = Options(switch_time="ndp_cpu", time_basis="pipeline")
    small = SimOptions(data_bytes=2**30, chunk_bytes=4 * 2**20)
    simulated = simulate(rfns, knn2, HOST_ONLY, options, small, explain_difference=False)
    assert simulated.energy.by_component_j.get("switch_layer", 0.0) == 0.0
    assert simulated.model.energy.by_component_j.get("switch_layer", 0.0) == 0.0
    device = estimate(rfns, knn2, options=options)
    assert device.state_times.of("switch_layer")["on"] == pytest.approx(device.time_s)
