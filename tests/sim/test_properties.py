"""Invariants of the simulator (issue 5, Correctness), checked with Hypothesis.

Specs are small random NDP servers (1..5 SSDs and engines, mux1 / mux2 / muxn with any
routable engine count, or the host split) with random bandwidths, α, powers, wake-up
costs, engine ports, data sizes and chunk sizes (up to a few thousand chunks), and random
simulator settings (buffers, host mode, engine power-off policy, jitter and seed) and
model conventions (placement, port cap, energy form, switch time).

- conservation: the uplink carries bytes in / α for each engine (integrated rate x time,
  not the sizes the pipeline hands it), and D / α (D in a host split) in all; every byte
  of D is read, computed and delivered once; the chunk count is Σ ceil(bytes_i / chunk);
- time: no component is busy longer than the makespan (the SSDs, the engines, the uplink,
  whose carried bytes also fit in its capacity x busy time, and the host cores, whose
  active time the simulator does not clamp); no stage's utilisation exceeds 1 (it is not
  clamped either); each engine's four state times add up to the makespan;
- energy: each component's energy is Σ power x state time, recomputed here from the
  platform's powers (not the simulator's spec);
- monotonicity: more bandwidth on an SSD, an engine, a mux port, an engine's port or
  the uplink never lengthens the run (without jitter: with jitter the random draws go
  to other services when the event order changes, so two runs are not comparable). It
  holds where every engine reads only its own SSD with double buffering and no host part
  streams; outside that, Hypothesis found runs that a wider link makes longer
  (COUNTEREXAMPLES, xfail);
- the model as a bound: without jitter no run is shorter than Eq. 1 says (nor, with a
  host part after the device side, its host phase shorter than T_CPU), except where the
  model's equal-share SSD stage is not the placement's (paper_no_loss with a port cap);
- determinism: the same spec and seed give the same result and trace, whose 'read'
  spans are one per chunk.

Hypothesis runs derandomized (the same examples every time), so the suite is
deterministic; raise max_examples locally to search further.
"""

from __future__ import annotations

import json
import math
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any

import pytest
from hypothesis import example, given, settings
from hypothesis import strategies as st

from ndpkit.hw import Platform
from ndpkit.model import HOST_ONLY, Configuration, Options
from ndpkit.model.pipeline import ssd_shares_bytes
from ndpkit.plan import minimum_engines
from ndpkit.profile import Profile
from ndpkit.sim import SimOptions, Simulation, simulate
from ndpkit.sim.options import MAX_SERVICE_CV, HostMode
from ndpkit.sim.sweep import configuration

from .synthetic import APP, variant, write_platform

SETTINGS = settings(max_examples=150, deadline=None, database=None, derandomize=True)
GB = 1e9
MB = 1e6
REL = 1e-9


def close(a: float, b: float, rel: float = REL) -> bool:
    return math.isclose(a, b, rel_tol=rel, abs_tol=1e-12)


@pytest.fixture(scope="module")
def base(tmp_path_factory: pytest.TempPathFactory) -> Platform:
    return write_platform(tmp_path_factory.mktemp("platform"), devices=4, scheme="mux2")


@dataclass(frozen=True)
class Case:
    """One random run: the hardware's changes to `base`, the profile and the settings."""

    devices: int
    scheme: str
    engines_on: int | None
    """None = the host split (no engines; the whole kernel on the host)."""
    hardware: dict[str, dict[str, Any]]
    data_bytes: float
    alpha: float
    host_part_bps: float | None
    host_only_bps: float
    options: Options
    sim: SimOptions

    def platform(self, base: Platform, **faster: float) -> Platform:
        """The case's platform, with the bandwidths named in `faster` multiplied."""
        hardware = {table: dict(fields) for table, fields in self.hardware.items()}
        for key, factor in faster.items():
            table, field = key.split(".")
            if field == "throughput":
                rates = hardware[table][field]
                hardware[table][field] = {app: bps * factor for app, bps in rates.items()}
            else:
                hardware[table][field] *= factor
        return variant(base, hardware)

    def profile(self) -> Profile:
        data: dict[str, Any] = {
            "app": APP,
            "data_size": self.data_bytes,
            "alpha": self.alpha,
            "host_only": self.host_only_bps,
        }
        if self.host_part_bps is not None:
            data["host_part"] = self.host_part_bps
        return Profile.model_validate(data, context={"si": True})

    def config(self, platform: Platform) -> Configuration:
        return HOST_ONLY if self.engines_on is None else configuration(platform, self.engines_on)

    def run(self, base: Platform, **faster: float) -> Simulation:
        platform = self.platform(base, **faster)
        return simulate(platform, self.profile(), self.config(platform), self.options, self.sim)


bandwidth = st.floats(0.2 * GB, 8 * GB)
power = st.floats(0.0, 50.0)


@st.composite
def cases(draw: st.DrawFn, jitter: bool = True, monotone: bool = False) -> Case:
    """A random case; `jitter` False: no service-time jitter; `monotone`: only cases of
    `monotone_regime` (every engine on, no host part streaming)."""
    devices = draw(st.integers(1, 5))
    scheme = "mux1" if devices == 1 else draw(st.sampled_from(["mux1", "mux2", "muxn"]))
    k = {"mux1": 1, "mux2": 2, "muxn": devices}[scheme]
    engines_on = (
        devices
        if monotone
        else draw(st.one_of(st.none(), st.integers(minimum_engines(devices, k), devices)))
    )
    wake = draw(st.booleans())
    # A busy power is at least the idle one (platform validation refuses less).
    ssd_idle_w, engine_idle_w = draw(power), draw(power)
    hardware: dict[str, dict[str, Any]] = {
        "storage": {
            "count": devices,
            "read_bandwidth_bytes_per_s": draw(bandwidth),
            "power_active_w": ssd_idle_w + draw(power),
            "power_idle_w": ssd_idle_w,
        },
        "engines": {
            "count": devices,
            "throughput": {APP: draw(bandwidth)},
            "power_active_w": engine_idle_w + draw(power),
            "power_idle_w": engine_idle_w,
            # Off draws at most what idle does (platform validation refuses more).
            "power_off_w": engine_idle_w * draw(st.floats(0.0, 1.0)),
            "wake_time_s": draw(st.floats(1e-4, 5e-3)) if wake else 0.0,
            "wake_energy_j": draw(st.floats(0.0, 2.0)) if wake else 0.0,
            "link_bandwidth_bytes_per_s": draw(st.one_of(st.none(), bandwidth)),
        },
        "host_link": {
            "bandwidth_bytes_per_s": draw(st.floats(0.5 * GB, 40 * GB)),
            "latency_s": draw(st.sampled_from([0.0, 1e-5])),
        },
        "host": {
            "cores_per_socket": draw(st.integers(1, 8)),
            "power_active_w": draw(st.floats(20.0, 500.0)),
            "power_idle_w": draw(st.floats(0.0, 20.0)),
        },
        "switch_layer": {
            "scheme": scheme,
            "element_power_w": draw(power),
            "port_bandwidth_bytes_per_s": draw(bandwidth),
        },
    }
    data = draw(st.floats(1 * MB, 200 * MB))
    chunk = draw(st.floats(data / devices / 400, data))
    options = Options(
        placement=draw(st.sampled_from(["paper_no_loss", "static_shards", "reshard_y_ssds"])),
        mux_port_cap=draw(st.booleans()),
        energy_form=draw(st.sampled_from(["A", "B"])),
        switch_time=draw(st.sampled_from(["ndp", "ndp_cpu"])),
        switch_power=draw(st.sampled_from(["declared", "per_element"])),
    )
    cv = (
        draw(st.sampled_from([0.0, MAX_SERVICE_CV]) | st.floats(0.0, MAX_SERVICE_CV))
        if jitter
        else 0.0
    )
    sim = SimOptions(
        chunk_bytes=chunk,
        buffer_chunks=draw(st.integers(2 if monotone else 1, 3)),
        host_buffer_chunks=draw(st.integers(1, 4)),
        host_mode=draw(
            st.sampled_from(["auto", "after"] if monotone else ["auto", "stream", "after"])
        ),
        engine_power_off=draw(st.sampled_from(["auto", "end", "phase", "done"])),
        service_cv=cv,
        seed=draw(st.integers(0, 2**64 - 1)),
    )
    return Case(
        devices=devices,
        scheme=scheme,
        engines_on=engines_on,
        hardware=hardware,
        data_bytes=data,
        alpha=draw(st.floats(0.5, 16.0)),
        host_part_bps=draw(st.one_of(st.none(), st.floats(0.5 * GB, 40 * GB))),
        host_only_bps=draw(st.floats(0.5 * GB, 20 * GB)),
        options=options,
        sim=sim,
    )


@SETTINGS
@given(case=cases())
def test_bytes_are_conserved_and_each_engine_reduces_by_alpha(base: Platform, case: Case) -> None:
    platform = case.platform(base)
    s = simulate(platform, case.profile(), case.config(platform), case.options, case.sim)
    chunk = case.sim.chunk_bytes
    shards = ssd_shares_bytes(platform, case.config(platform), case.options, case.data_bytes)
    ssd_bytes = [ssd["bytes"] for ssd in s.ssds]
    assert all(close(read, shard) for read, shard in zip(ssd_bytes, shards, strict=True))
    assert close(sum(ssd_bytes), case.data_bytes)
    # One chunk per started chunk of each shard, give or take one where bytes / chunk is
    # within an ulp of a whole number (see test_the_simulator_sees_the_specs_numbers_exactly).
    expected = [math.ceil(b / chunk) for b in shards]
    assert abs(s.chunks - sum(expected)) <= sum(
        1
        for b, n in zip(shards, expected, strict=True)
        if abs(b / chunk - round(b / chunk)) < 1e-9 * n
    )
    assert close(sum(s.delivered_bytes), case.data_bytes, rel=1e-9)
    if case.engines_on is None:
        assert all(not e["active"] and e["bytes_in"] == 0 for e in s.engines)
        assert close(s.uplink["bytes"], case.data_bytes)  # raw data, no reduction
        return
    assert close(sum(e["bytes_in"] for e in s.engines), case.data_bytes)
    assert close(s.uplink["bytes"], case.data_bytes / case.alpha)
    for e, engine in enumerate(s.engines):
        # What the uplink carried for the engine, not what the engine says it emitted.
        assert close(engine["bytes_sent"], engine["bytes_in"] / case.alpha), e
        routed = [i for i, ssd in enumerate(s.ssds) if ssd["engine"] == e]
        assert engine["ssds"] == len(routed)
        assert close(engine["bytes_in"], sum(ssd_bytes[i] for i in routed)), e
        if not engine["active"]:
            assert engine["bytes_in"] == 0 and engine["busy_s"] == 0


@SETTINGS
@given(case=cases())
def test_no_component_is_busy_longer_than_the_run(base: Platform, case: Case) -> None:
    s = case.run(base)
    end = s.time_s
    assert end > 0
    assert 0 <= s.t_ndp_s <= end
    assert 0 <= s.t_cpu_s <= end * (1 + REL)
    for e, engine in enumerate(s.engines):
        states = [engine[f"{state}_s"] for state in ("busy", "idle", "off", "waking")]
        assert all(t >= 0 for t in states), (e, states)
        assert close(sum(states), end), (e, states, end)
    for i, ssd in enumerate(s.ssds):
        assert 0 <= ssd["active_s"] <= end * (1 + REL), i
        assert close(ssd["active_s"] + ssd["idle_s"], end), i
    host = s.state_times.host
    assert close(host["active"] + host["idle"], end)
    uplink = s.uplink
    assert 0 <= uplink["busy_s"] <= end * (1 + REL), (uplink, end)
    assert uplink["bytes"] <= uplink["capacity_bps"] * uplink["busy_s"] * (1 + REL), uplink
    assert all(0 <= u <= 1 + REL for u in s.utilisation.values()), s.utilisation
    if case.sim.service_cv == 0:
        # Without jitter every service takes exactly its bytes over its rate.
        for ssd, spec_bps in zip(s.ssds, read_rates(case, base), strict=True):
            assert close(ssd["active_s"], ssd["bytes"] / spec_bps)
        if case.engines_on is not None:
            rate = case.hardware["engines"]["throughput"][APP]
            for engine in s.engines:
                assert close(engine["busy_s"], engine["bytes_in"] / rate)


def read_rates(case: Case, base: Platform) -> list[float]:
    """Each SSD's read bandwidth: position 0 of a mux module has its own wire; the others
    cross a mux port, which caps them with mux_port_cap (§2.6, O9). Without engines (the
    host split, engines_on None) the data goes to the host past no mux port."""
    device = case.hardware["storage"]["read_bandwidth_bytes_per_s"]
    port = case.hardware["switch_layer"]["port_bandwidth_bytes_per_s"]
    k = {"mux1": 1, "mux2": 2, "muxn": case.devices}[case.scheme]
    capped = case.options.mux_port_cap and k > 1 and case.engines_on is not None
    return [min(device, port) if capped and i % k else device for i in range(case.devices)]


@SETTINGS
@given(case=cases())
def test_energy_is_power_times_state_time(base: Platform, case: Case) -> None:
    platform = case.platform(base)
    s = simulate(platform, case.profile(), case.config(platform), case.options, case.sim)
    host_split = case.engines_on is None
    times = s.state_times
    host = platform.host
    active_w = host.power_active_w
    if case.options.energy_form == "B" and not host_split:
        active_w -= host.power_idle_w
    expected = {
        "host": active_w * times.host["active"] + host.power_idle_w * times.host["idle"],
        "storage": platform.storage.power_active_w * times.storage["active"]
        + platform.storage.power_idle_w * times.storage["idle"],
    }
    assert close(times.storage["active"] + times.storage["idle"], case.devices * s.time_s)
    switch_w = platform.switch_layer.power_w(
        case.devices, declared_total=case.options.switch_power == "declared"
    )
    if host_split:
        assert times.switch_layer["on"] == 0
    elif case.options.switch_time == "ndp_cpu" or s.host_mode == "stream":
        assert close(times.switch_layer["on"], s.time_s)
    else:
        assert close(times.switch_layer["on"], s.t_ndp_s)
    expected["switch_layer"] = switch_w * times.switch_layer["on"]
    if not host_split:
        engine = platform.engines
        assert engine is not None
        on, waiting = engine.power_on_w(APP), engine.power_waiting_w(APP)
        joules = 0.0
        for e in s.engines:
            joules += (e["busy_s"] + e["waking_s"]) * on
            joules += e["idle_s"] * waiting + e["off_s"] * engine.power_off_w
            if e["active"]:  # once per powered engine, even with no wake time
                joules += engine.wake_energy_j
        expected["engines"] = joules
        for state in ("busy", "idle", "off", "waking"):
            assert close(times.engines[state], sum(e[f"{state}_s"] for e in s.engines))
    reported = s.energy.by_component_j
    for component, joules in expected.items():
        assert math.isclose(reported[component], joules, rel_tol=1e-9, abs_tol=1e-9), component
    assert set(reported) - set(expected) <= ({"engines"} if host_split else set())
    assert math.isclose(s.energy_j, sum(reported.values()), rel_tol=1e-12, abs_tol=1e-12)


PORT_CAPPED_NO_LOSS = Case(
    devices=3,
    scheme="mux2",
    engines_on=2,
    hardware={
        "storage": {"count": 3, "read_bandwidth_bytes_per_s": 4821493666.0},
        "engines": {"count": 3, "throughput": {APP: 1654463330.0}},
        "host_link": {"bandwidth_bytes_per_s": 558075543.0, "latency_s": 0.0},
        "host": {"cores_per_socket": 1},
        "switch_layer": {"scheme": "mux2", "port_bandwidth_bytes_per_s": 200000021.0},
    },
    data_bytes=1000480.0,
    alpha=2.0,
    host_part_bps=None,
    host_only_bps=5e8,
    options=Options(mux_port_cap=True),
    sim=SimOptions(chunk_bytes=1852.0, buffer_chunks=1),
)
"""Found by Hypothesis: engine 0 reads SSDs 0 and 1, SSD 1 through a port capped at
200 MB/s. The model's paper_no_loss reads D/n from every SSD (1.667 ms: D/3 at the cap);
the simulator puts D/y on each engine, split over its SSDs (D/4 on the capped one):
1.601 ms."""


@SETTINGS
@given(case=cases(jitter=False))
@example(case=PORT_CAPPED_NO_LOSS)
def test_the_simulation_is_never_faster_than_the_model(base: Platform, case: Case) -> None:
    """Eq. 1 (and its staged form) assumes perfect overlap of stages run at their full
    rates and balanced loads under the same placement: chunks, fair sharing, finite
    buffers and wake-up can only add time. (Without jitter: a draw below the mean could
    make a run of a few chunks shorter.) One exception, by the model's design: under
    paper_no_loss with mux_port_cap its SSD stage charges every SSD D/n at the slowest
    SSD's rate, and where the capped SSDs hold less the run is shorter (a note says so:
    test_capped_ssds_holding_less_than_an_equal_share_run_under_the_model)."""
    s = case.run(base)
    if not (case.options.mux_port_cap and case.options.placement == "paper_no_loss"):
        assert s.time_s >= s.model.time_s * (1 - REL), (s.time_s, s.model.time_s)
    if s.host_mode == "after" and s.model.t_cpu_s > 0:
        # The host part waits for every partial: the run is at least its own T_CPU longer
        # than the last arrival.
        assert s.time_s - s.t_ndp_s >= s.model.t_cpu_s * (1 - REL), (s.time_s, s.t_ndp_s)


def test_a_host_split_charges_the_engines_it_keeps_off(tmp_path: Path) -> None:
    """Four SSDs at 4 GB/s, a 10 GB/s uplink, the whole kernel on the host at 5 GB/s:
    D = 40 GB takes 8 s (+ 6.5 ms of fill). The four engines are off all along and draw
    power_off = 0.5 W each: 4 x 0.5 W x 8.0065 s = 16.013 J."""
    platform = write_platform(tmp_path, devices=4, ssd="4 GB/s", engine="1 GB/s", uplink="10 GB/s")
    prof = Profile(app=APP, data_size="40 GB", alpha=1, host_only="5 GB/s")
    s = simulate(platform, prof, HOST_ONLY, sim=SimOptions(chunk_bytes=1e7))
    assert s.time_s == pytest.approx(8.0065, rel=1e-9)
    assert s.model.energy.by_component_j["engines"] == pytest.approx(16.0)
    assert s.energy.by_component_j.get("engines", 0.0) == pytest.approx(4 * 0.5 * s.time_s)
    assert abs(s.energy_difference) < 0.01


FASTER = {
    "ssd": "storage.read_bandwidth_bytes_per_s",
    "engine": "engines.throughput",
    "engine port": "engines.link_bandwidth_bytes_per_s",
    "mux port": "switch_layer.port_bandwidth_bytes_per_s",
    "uplink": "host_link.bandwidth_bytes_per_s",
}


def streams_to_host(case: Case) -> bool:
    """The host part works on partials as they land (always so in the host split)."""
    host = case.sim.host_mode
    if case.engines_on is None:
        return host != "after"
    return case.host_part_bps is not None and host == "stream"


def monotone_regime(case: Case) -> bool:
    """Every engine reads only its own SSD with double buffering (or more), and no host
    part works on partials as they land. Outside it a wider link can lengthen the run (see
    the counterexamples below)."""
    return (
        case.engines_on == case.devices
        and case.sim.buffer_chunks >= 2
        and not streams_to_host(case)
    )


def lengthens(case: Case, base: Platform, which: str, factor: float) -> tuple[float, float]:
    key = FASTER[which]
    slower = case.run(base)
    faster = case.run(base, **{key: factor})
    # The uplink ends transfers due within a picosecond of each other together
    # (crates/ndp-sim/src/link.rs), so each chunk's arrival may move by that much.
    slack = slower.time_s * REL + slower.chunks * 1e-12
    return faster.time_s - slower.time_s - slack, slower.time_s


@SETTINGS
@given(
    case=cases(jitter=False, monotone=True),
    which=st.sampled_from(sorted(FASTER)),
    factor=st.floats(1.0, 4.0),
)
def test_more_bandwidth_never_lengthens_the_run(
    base: Platform, case: Case, which: str, factor: float
) -> None:
    assert monotone_regime(case)
    table, field = FASTER[which].split(".")
    if case.hardware[table][field] is None:
        return  # no engine port to widen
    excess, before = lengthens(case, base, which, factor)
    assert excess <= 0, (which, factor, before, excess)


def test_a_fair_uplink_that_synchronises_arrivals_delays_a_streaming_host(
    tmp_path: Path,
) -> None:
    """Why the regime above excludes a streaming host part: two SSDs in a mux-2 module
    with one 1 MB chunk each, engines at 100 GB/s (10 µs a chunk), a 500 MB/s uplink
    shared fairly, one host core running the host part at 500 MB/s (2 ms a chunk) on
    each partial as it lands; mux_port_cap on.

    Port 1.6 Gbps = 200 MB/s: SSD 0 (own wire, 250 MB/s) is read at 4 ms and SSD 1 (capped)
    at 5 ms. Partial 0 crosses alone from 4.01 ms, half of it by 5.01 ms; then the two
    share the uplink at 250 MB/s each: partial 0 lands at 7.01 ms, partial 1 at 8.01 ms.
    The core runs 7.01-9.01 and 9.01-11.01 ms. Makespan 11.01 ms.
    Port 3.2 Gbps: both SSDs read at 250 MB/s, both partials cross together and land at
    8.01 ms; the core runs 8.01-10.01-12.01 ms. Makespan 12.01 ms: the wider port made the
    run 9 % longer. Max-min fair sharing delays the first arrival when two transfers
    start together, and a FIFO stage behind it cannot make that up.
    """
    runs = []
    for port in ("1.6 Gbps", "3.2 Gbps"):
        platform = write_platform(
            tmp_path,
            name=f"ps-{port[0]}",
            devices=2,
            ssd="250 MB/s",
            engine="100 GB/s",
            uplink="500 MB/s",
            scheme="mux2",
            port=port,
            cores=1,
        )
        runs.append(
            simulate(
                platform,
                Profile(app=APP, data_size="2 MB", alpha=1, host_part="500 MB/s"),
                options=Options(mux_port_cap=True),
                sim=SimOptions(chunk_bytes=MB, host_mode="stream"),
            )
        )
    narrow, wide = runs
    assert narrow.time_s == pytest.approx(0.01101, rel=1e-9)
    assert wide.time_s == pytest.approx(0.01201, rel=1e-9)
    assert narrow.t_ndp_s == pytest.approx(wide.t_ndp_s, rel=1e-9)  # the uplink's last byte


def counterexample(
    devices: int,
    scheme: str,
    engines_on: int | None,
    *,
    ssd: float,
    port: float,
    data: float,
    chunk: float,
    buffer: int,
    host_buffer: int,
    wake: float = 0.0,
    host_part: float | None = None,
    host_mode: HostMode = "auto",
) -> Case:
    """A case shrunk by Hypothesis: 200 MB/s engines, a 500 MB/s uplink, one host core,
    α = 1, mux_port_cap on, paper_no_loss, no powers."""
    return Case(
        devices=devices,
        scheme=scheme,
        engines_on=engines_on,
        hardware={
            "storage": {"count": devices, "read_bandwidth_bytes_per_s": ssd},
            "engines": {
                "count": devices,
                "throughput": {APP: 200e6},
                "wake_time_s": wake,
                "link_bandwidth_bytes_per_s": None,
            },
            "host_link": {"bandwidth_bytes_per_s": 500e6},
            "host": {"cores_per_socket": 1},
            "switch_layer": {"scheme": scheme, "port_bandwidth_bytes_per_s": port},
        },
        data_bytes=data,
        alpha=1.0,
        host_part_bps=host_part,
        host_only_bps=500e6,
        options=Options(mux_port_cap=True),
        sim=SimOptions(
            chunk_bytes=chunk,
            buffer_chunks=buffer,
            host_buffer_chunks=host_buffer,
            host_mode=host_mode,
        ),
    )


COUNTEREXAMPLES = {
    # One engine serves SSDs 1 and 2 (muxn, 2 of 3 engines on), single buffering, a
    # 3.9 ms wake: SSDs 1 and 2 read at the SSD's 281 MB/s instead of the 200 MB/s port,
    # the two engines fall into step, their transfers collide on the uplink and every
    # chunk's cycle grows: 196.86 -> 206.70 ms, +5.0 %.
    "shared engine, single buffer": (
        counterexample(
            3,
            "muxn",
            2,
            ssd=281475498.0,
            port=200e6,
            data=45122134.0,
            chunk=858006.0,
            buffer=1,
            host_buffer=1,
            wake=0.00390625,
        ),
        "mux port",
        2.0,
    ),
    # Every engine on its own SSD (muxn over 3, all on), single buffering, the 500 MB/s
    # uplink shared by three 200 MB/s engines: the wider port lifts SSDs 1 and 2 from the
    # 200 MB/s port to the SSD's 200.000016 MB/s, the engines fall into step, and their
    # transfers collide on the uplink: 3.354 -> 3.671 ms, +9.5 %.
    "own SSDs, single buffer": (
        counterexample(
            3,
            "muxn",
            3,
            ssd=200000016.0,
            port=200e6,
            data=1e6,
            chunk=834.0,
            buffer=1,
            host_buffer=1,
        ),
        "mux port",
        2.0,
    ),
}


@pytest.mark.parametrize("name", sorted(COUNTEREXAMPLES))
def test_the_counterexamples_lie_outside_the_monotone_regime(name: str) -> None:
    """Checked apart from the xfail below, whose expected failure this assertion's would
    otherwise have counted as."""
    case, _, _ = COUNTEREXAMPLES[name]
    assert not monotone_regime(case)


@pytest.mark.xfail(
    strict=True,
    raises=AssertionError,  # the property's: an error setting up the case is no xfail
    reason="monotonicity (issue 5) fails outside monotone_regime: a wider link can "
    "lengthen the run when engines that buffer a single chunk fall into step and their "
    "transfers collide on the uplink (minimal cases in COUNTEREXAMPLES: +5.0 %, +9.5 %)",
)
@pytest.mark.parametrize("name", sorted(COUNTEREXAMPLES))
def test_more_bandwidth_never_lengthens_any_run(base: Platform, name: str) -> None:
    case, which, factor = COUNTEREXAMPLES[name]
    excess, before = lengthens(case, base, which, factor)
    assert excess <= 0, (name, before, excess)


def test_the_simulator_sees_the_specs_numbers_exactly(tmp_path: Path) -> None:
    platform = write_platform(tmp_path, devices=1, ssd="1 GB/s", engine="2 GB/s")
    exact = 94736743.3608709
    assert exact / (exact / 400) == 400  # in IEEE doubles, as Python and Rust compute it
    s = simulate(
        platform,
        Profile.model_validate({"app": APP, "data_size": exact, "alpha": 1}, context={"si": True}),
        sim=SimOptions(chunk_bytes=exact / 400),
    )
    one = 90340726.09149575
    single = simulate(
        platform,
        Profile.model_validate({"app": APP, "data_size": one, "alpha": 1}, context={"si": True}),
        sim=SimOptions(chunk_bytes=2 * one),
    )
    assert (s.chunks, single.ssds[0]["bytes"]) == (400, one)


@settings(max_examples=60, deadline=None, database=None, derandomize=True)
@given(case=cases())
def test_the_same_seed_gives_the_same_run_and_a_faithful_trace(base: Platform, case: Case) -> None:
    traced = replace(case, sim=case.sim.with_(trace=True))
    a, b = traced.run(base), traced.run(base)
    assert a.as_dict() == b.as_dict()
    assert a.trace_json is not None and a.trace_json == b.trace_json
    events = json.loads(a.trace_json)["traceEvents"]
    spans = [e for e in events if e["ph"] == "X"]
    assert sum(1 for e in spans if e["name"] == "read") == a.chunks
    assert sum(1 for e in spans if e["name"] == "dma") == a.chunks
    assert all(e["dur"] >= 0 and e["ts"] >= 0 for e in spans)
    assert max(e["ts"] + e["dur"] for e in spans) <= a.time_s * 1e6 * (1 + REL)
    # The trace does not change the run.
    plain = case.run(base)
    assert plain.time_s == a.time_s and plain.energy_j == a.energy_j


def test_the_synthetic_base_is_what_the_cases_vary(base: Platform, tmp_path: Path) -> None:
    """`variant` changes exactly what it is told (guards the property tests' setup)."""
    changed = variant(base, {"storage": {"count": 3}, "engines": {"count": 3}})
    assert changed.devices == 3 and changed.engines is not None
    assert changed.engines.count == 3
    assert changed.storage.read_bandwidth_bytes_per_s == base.storage.read_bandwidth_bytes_per_s
    again = write_platform(tmp_path, devices=4, scheme="mux2")
    assert again == base
