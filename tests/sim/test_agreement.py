"""The simulator agrees with the analytic model wherever the model's assumptions hold.

Issue 5, Correctness: "for large datasets the simulated makespan and energy are within 1 %
of the Estimate for every RANS/RFNS application and engine count (a test over the whole
table)". The table: platform (rans, rfns) x switch layer (mux2: 18..36 engines on; muxn:
1..36) x application (the paper's six) x placement (paper_no_loss, reshard_y_ssds), 1320
runs. Each runs the paper's full data set D in chunks of D/36/400 bytes (400 chunks per
SSD at full gear), so fill and drain stay well below 1 % while every run takes
milliseconds. The reference is `Simulation.model`, the Estimate under the simulator's
assumptions (time basis `pipeline` for a streaming host part, `staged` for one that waits
for every partial, as k-NN's top-k does).

Where the model's assumption fails. Eq. 1 treats the SSDs as one stage of n x SSD_BW: it
assumes every SSD delivers an equal share. Under `paper_no_loss` with some engines off,
each active engine gets D/y split over the SSDs routed to it, so an engine that serves
only its own SSD has that SSD hold D/y > D/n. That one SSD alone needs
bytes_i / read_bps_i, and when this is longer than the model's whole device side
(D / the slowest stage that overlaps the reads) nothing can hide it. Those cases are
excluded by that criterion, computed from the simulator's spec, and must instead be
slower than the model, no faster than the slowest SSD, and carry the note naming the SSD.

The simpler criterion "the slowest SSD is slower than the aggregate SSD stage" (bytes_i /
read_bps_i > D / SSD_BW) would also exclude about 420 runs in which the engines, not the
SSDs, set the pace (e.g. LC on RANS): the slow SSD is hidden behind the engines there, the
model holds, and those runs stay in the agreement test.
"""

from __future__ import annotations

import functools
from dataclasses import dataclass

import pytest

from ndpkit.hw import load_platform
from ndpkit.model import Options
from ndpkit.model.pipeline import CPU
from ndpkit.profile import load_profile
from ndpkit.sim import SimOptions, Simulation, matching_basis, simulate
from ndpkit.sim.spec import build_spec
from ndpkit.sim.sweep import configuration, engine_counts

PLATFORMS = ("rans", "rfns")
SCHEMES = ("mux2", "muxn")
APPS = ("lc", "he", "fft2d", "knn2", "knn6", "knn8")
PLACEMENTS = ("paper_no_loss", "reshard_y_ssds")
AGREEMENT = 0.01
CHUNKS_PER_SSD = 400
SLACK = 1e-9


@dataclass(frozen=True)
class Run:
    platform: str
    scheme: str
    app: str
    placement: str
    engines: int
    devices: int
    time_s: float
    model_time_s: float
    time_difference: float
    energy_difference: float
    slowest_ssd_s: float
    """max_i bytes_i / read_bps_i over the simulator's spec."""
    aggregate_ssd_s: float
    """D / SSD_BW: the model's SSD stage alone."""
    device_side_s: float
    """D / the slowest stage that overlaps the reads: the model's device side."""
    host_mode: str
    time_basis: str
    notes: tuple[str, ...]

    @property
    def label(self) -> str:
        return f"{self.platform}/{self.scheme}/{self.app}/{self.placement}/{self.engines}"

    @property
    def single_ssd_bound(self) -> bool:
        """One SSD alone needs longer than the model's whole device side."""
        return self.slowest_ssd_s > self.device_side_s * (1 + SLACK)


def device_side_s(s: Simulation) -> float:
    overlapped = [
        bw for name, bw in s.stages.items() if not (name == CPU and s.host_mode == "after")
    ]
    return s.data_bytes / min(overlapped)


@functools.cache
def table() -> tuple[Run, ...]:
    runs = []
    for name in PLATFORMS:
        base = load_platform(name)
        for scheme in SCHEMES:
            platform = base.with_scheme(scheme)
            for app in APPS:
                profile = load_profile(app)
                sim = SimOptions(chunk_bytes=profile.data_bytes / 36 / CHUNKS_PER_SSD)
                for placement in PLACEMENTS:
                    options = Options(placement=placement)
                    for count in engine_counts(platform):
                        config = configuration(platform, count)
                        s = simulate(platform, profile, config, options, sim)
                        spec = build_spec(platform, profile, config, options, sim)
                        slowest = max(ssd["bytes"] / ssd["read_bps"] for ssd in spec["ssds"])
                        runs.append(
                            Run(
                                platform=name,
                                scheme=scheme,
                                app=app,
                                placement=placement,
                                engines=count,
                                devices=platform.devices,
                                time_s=s.time_s,
                                model_time_s=s.model.time_s,
                                time_difference=s.time_difference,
                                energy_difference=s.energy_difference,
                                slowest_ssd_s=slowest,
                                aggregate_ssd_s=s.data_bytes / s.stages["ssd"],
                                device_side_s=device_side_s(s),
                                host_mode=s.host_mode,
                                time_basis=s.model.options.time_basis,
                                notes=tuple(s.notes),
                            )
                        )
    return tuple(runs)


def test_the_table_is_the_whole_table() -> None:
    runs = table()
    counts = {scheme: {r.engines for r in runs if r.scheme == scheme} for scheme in SCHEMES}
    assert counts == {"mux2": set(range(18, 37)), "muxn": set(range(1, 37))}
    assert {(r.platform, r.app, r.placement) for r in runs} == {
        (p, a, pl) for p in PLATFORMS for a in APPS for pl in PLACEMENTS
    }
    assert len(runs) == len(PLATFORMS) * len(APPS) * len(PLACEMENTS) * (19 + 36)


@pytest.mark.parametrize("app", APPS)
@pytest.mark.parametrize("scheme", SCHEMES)
@pytest.mark.parametrize("platform", PLATFORMS)
def test_time_and_energy_within_one_percent_where_the_model_holds(
    platform: str, scheme: str, app: str
) -> None:
    runs = [
        r
        for r in table()
        if (r.platform, r.scheme, r.app) == (platform, scheme, app) and not r.single_ssd_bound
    ]
    assert runs, "every engine count of this application would be excluded"
    bad = [
        f"{r.label}: time {r.time_difference:+.3%}, energy {r.energy_difference:+.3%}"
        for r in runs
        if abs(r.time_difference) > AGREEMENT or abs(r.energy_difference) > AGREEMENT
    ]
    assert not bad, "\n".join(bad)
    # Within 1 %, the simulation has nothing to explain.
    assert not [r.label for r in runs if r.notes]


def test_the_model_is_the_one_with_the_simulators_assumptions() -> None:
    for r in table():
        assert r.time_basis == matching_basis(r.host_mode), r.label
        # k-NN's host part is a global top-k: it waits for every partial (staged); the
        # other five have no host part and stream (pipeline).
        assert r.host_mode == ("after" if r.app.startswith("knn") else "stream"), r.label


def test_excluded_runs_are_exactly_uneven_placement_with_engines_off() -> None:
    excluded = [r for r in table() if r.single_ssd_bound]
    assert excluded, "the table has runs where one SSD is the limit; the criterion lost them"
    for r in excluded:
        assert r.placement == "paper_no_loss", r.label
        assert r.engines < r.devices, r.label
    # Every run that places D/n on each SSD, or D/y on each active engine's own SSD, keeps
    # Eq. 1's equal-share assumption and is never excluded.
    kept = [r for r in table() if r.placement == "reshard_y_ssds" or r.engines == r.devices]
    assert not [r.label for r in kept if r.single_ssd_bound]


def test_excluded_runs_are_slower_than_the_model_and_explain_why() -> None:
    excluded = [r for r in table() if r.single_ssd_bound]
    for r in excluded:
        assert r.time_s > r.model_time_s * (1 + AGREEMENT), r.label
        # The run cannot end before its slowest SSD has read its shard.
        assert r.time_s >= r.slowest_ssd_s, r.label
        ssd_notes = [n for n in r.notes if n.startswith("SSD ") and "holds" in n]
        assert ssd_notes, f"{r.label}: {r.notes}"
        assert "equal share" in ssd_notes[0]


def test_the_simpler_criterion_would_exclude_runs_that_agree() -> None:
    """Why the exclusion compares with the device side, not the SSD stage alone: where the
    engines bind, a slower SSD hides behind them and the model still holds."""
    hidden = [
        r
        for r in table()
        if r.slowest_ssd_s > r.aggregate_ssd_s * (1 + SLACK) and not r.single_ssd_bound
    ]
    assert hidden
    assert all(abs(r.time_difference) <= AGREEMENT for r in hidden)


@pytest.mark.parametrize("count", [18, 19, 27, 36])
def test_reshard_y_ssds_under_the_port_cap_agrees_with_the_simulator(count: int) -> None:
    """The model's SSD stage is the active engines' own SSDs at their own bandwidths: it
    took the slowest SSD of all 36 (a capped mux port) even where every active engine's SSD
    has a wire of its own, 41.9 GB/s for 54 at 18 engines, and `plan --optimal` kept all 36
    engines on (found by an audit of the simulator and planner)."""
    platform = load_platform("rfns").with_scheme("mux2")
    profile = load_profile("knn8")
    options = Options(placement="reshard_y_ssds", mux_port_cap=True)
    sim = SimOptions(chunk_bytes=profile.data_bytes / 36 / CHUNKS_PER_SSD)
    s = simulate(platform, profile, configuration(platform, count), options, sim)
    assert abs(s.time_difference) <= AGREEMENT, (s.time_s, s.model.time_s)
    assert abs(s.energy_difference) <= AGREEMENT
