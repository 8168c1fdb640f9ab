"""Invariants of RISP's models (Eqs. 1-10), checked with Hypothesis.

The platform is risp-64ch behind any of the three named host interfaces with its cells
clocked at 100-500 MHz; profiles are the paper's three apps with a random data size D
and reduction ratio β; options are any combination of the R-options.
"""

from __future__ import annotations

import functools
import math

import pytest
from hypothesis import assume, given, settings
from hypothesis import strategies as st

from ndpkit.hw import Platform, load_platform
from ndpkit.model import FULL_GEAR, Configuration, Options, estimate
from ndpkit.plan.channels import channels_off_config, group_channels, reduced_cells_config
from ndpkit.profile import Profile, load_profile

SETTINGS = settings(max_examples=40, deadline=None, database=None)
APPS = ("kmeans", "binarize", "sobel")
N = 64
RECONFIGURATION_S, RECONFIGURATION_J = 0.010, 0.004


@functools.cache
def platform(interface: str = "sata-3.2", clock_hz: float = 1e8) -> Platform:
    return load_platform("risp-64ch").with_interface(interface).with_cell_clock(clock_hz)


@functools.cache
def base_profile(app: str) -> Profile:
    return load_profile(app, "risp")


platforms = st.builds(
    platform,
    st.sampled_from(["sata-3.2", "pcie3-x4", "pcie3-x16"]),
    st.sampled_from([1e8, 2e8, 3e8, 4e8, 5e8]),
)


@st.composite
def profiles(draw: st.DrawFn) -> Profile:
    app = draw(st.sampled_from(APPS))
    data = draw(st.floats(1e6, 1e11))
    beta = draw(st.floats(0.5, 16.0))
    return base_profile(app).with_changes(data_bytes=data, alpha=beta)


R_OPTIONS = {
    "cpu_energy": ("cycles", "instructions"),
    "attribution": ("paper", "all_active"),
    "nvm_power": ("per_channel", "per_device"),
    "ru_power": ("linear_per_cell", "proportional"),
    "host_stage": ("eq8_only", "with_host_stage"),
    "reconfiguration": ("ignore", "include"),
    "cell_load": ("ideal", "max_group"),
    "ru_time": ("computing", "configured"),
}
options = st.fixed_dictionaries(
    {name: st.sampled_from(values) for name, values in R_OPTIONS.items()}
).map(lambda values: Options(units="decimal", **values))


@st.composite
def configurations(draw: st.DrawFn) -> Configuration:
    """Full gear, the host split, channels powered off (Policy A) or reduced cells (B)."""
    kind = draw(st.sampled_from(["full", "host", "host_off", "channels_off", "reduced"]))
    if kind == "full":
        return FULL_GEAR
    if kind == "host":
        return Configuration(split="host")
    on = draw(st.integers(1, N))
    if kind == "host_off":
        return Configuration(split="host", channels=tuple(range(on)))
    if kind == "channels_off":
        return channels_off_config(N, on)
    grouping = draw(st.sampled_from(["balanced", "ceil", "floor"]))
    return reduced_cells_config(group_channels(N, on, grouping))


def channels_on(n: int, split: str) -> Configuration:
    return (
        Configuration(split=split)
        if n == N
        else Configuration(
            split=split,
            channels=tuple(range(n)),
            active=tuple(range(n)) if split == "device" else None,
        )
    )


# --- time ------------------------------------------------------------------------------------


@SETTINGS
@given(
    platforms,
    profiles(),
    options,
    st.sampled_from(["device", "host"]),
    st.integers(1, N),
    st.integers(1, N),
)
def test_more_channels_never_slow_the_transfer(p, profile, opts, split, a, b):
    few, many = sorted((a, b))
    slow = estimate(p, profile, channels_on(few, split), opts)
    fast = estimate(p, profile, channels_on(many, split), opts)
    assert fast.stage_times_s["channel"] <= slow.stage_times_s["channel"] * (1 + 1e-12)
    assert fast.stage_times_s["channel"] == pytest.approx(
        profile.data_bytes / (many * 4e8), rel=1e-12
    )
    # With each channel's own cell (Policy A, R10 channels_off) the whole run never slows.
    assert fast.time_s <= slow.time_s * (1 + 1e-12)


@SETTINGS
@given(platforms, profiles(), options, configurations())
def test_t_risp_is_the_slowest_stage(p, profile, opts, config):
    assume(config.split == "device")
    e = estimate(p, profile, config, opts)
    t = e.stage_times_s
    extra = RECONFIGURATION_S if opts.reconfiguration == "include" else 0.0
    assert e.time_s == pytest.approx(max(t.values()) + extra, rel=1e-12)
    assert ("host_link" in t) == (opts.host_stage == "with_host_stage")
    assert t["dram"] == pytest.approx(
        profile.data_bytes / (profile.alpha * 15e9), rel=1e-12
    )  # Eq. (7) does not depend on the channels
    # Eq. (6): never faster than α x f_RU per enabled cell.
    engines = p.engines
    assert engines is not None and engines.frequency_hz is not None
    alpha = engines.bytes_per_cycle[profile.app]
    cells = e.pipeline.engines_active
    assert t["cell"] >= profile.data_bytes / (alpha * cells * engines.frequency_hz) * (1 - 1e-12)


@SETTINGS
@given(platforms, profiles(), options, configurations())
def test_baseline_time_is_transfer_plus_compute(p, profile, opts, config):
    assume(config.split == "host")
    e = estimate(p, profile, config, opts)
    t = e.stage_times_s
    assert set(t) == {"channel", "link", "cpu"}
    for name, seconds in t.items():
        assert e.time_s >= seconds, name
    assert e.time_s == pytest.approx(max(t["channel"], t["link"]) + t["cpu"], rel=1e-12)
    assert e.performance_bytes_per_s == pytest.approx(profile.data_bytes / e.time_s, rel=1e-9)
    # Options other than the energy conventions leave the Baseline's time alone.
    assert e.time_s == pytest.approx(estimate(p, profile, config).time_s, rel=1e-12)


@SETTINGS
@given(
    platforms,
    profiles(),
    options,
    st.sampled_from(["balanced", "ceil", "floor"]),
    st.integers(1, N),
    st.integers(1, N),
)
def test_more_cells_never_slower(p, profile, opts, grouping, a, b):
    """Reduced-cell mode (§7.4): all 64 channels read, k cells compute. Under the ideal
    load D/(α k); under max_group only with balanced groups (ceil(64/k) never grows with
    k), since `floor` appends the leftovers to the last group: 33 cells give groups of
    1, …, 1, 32 channels, slower than 3 cells' 21, 21, 22."""
    few, many = sorted((a, b))
    loads = ("ideal", "max_group") if grouping == "balanced" else ("ideal",)
    for load in loads:
        o = opts.with_(cell_load=load)
        slow = estimate(p, profile, reduced_cells_config(group_channels(N, few, grouping)), o)
        fast = estimate(p, profile, reduced_cells_config(group_channels(N, many, grouping)), o)
        if grouping == "ceil" and load == "ideal":
            # `ceil` may enable fewer than k cells; compare what was enabled.
            assume(fast.pipeline.engines_active >= slow.pipeline.engines_active)
        assert fast.stage_times_s["cell"] <= slow.stage_times_s["cell"] * (1 + 1e-12), load
        assert fast.time_s <= slow.time_s * (1 + 1e-12), load
        assert fast.stage_times_s["channel"] == slow.stage_times_s["channel"]


# --- energy ----------------------------------------------------------------------------------


@SETTINGS
@given(platforms, profiles(), options, configurations())
def test_energy_components_are_non_negative_and_add_up(p, profile, opts, config):
    e = estimate(p, profile, config, opts)
    for name, joules in e.energy.by_component_j.items():
        assert joules >= 0, name
        assert math.isfinite(joules), name
    for component, states in e.state_times.by_component.items():
        for state, seconds in states.items():
            assert seconds >= -1e-15 * e.time_s, (component, state)
    assert e.energy_j == pytest.approx(math.fsum(e.energy.by_component_j.values()), rel=1e-12)
    assert e.energy_j > 0
    if config.split == "device":
        assert "ru" in e.energy.by_component_j and "host_cpu" not in e.energy.by_component_j
    else:
        assert "ru" not in e.energy.by_component_j and "host_cpu" in e.energy.by_component_j


def _state_sum(states: dict[str, float]) -> float:
    return math.fsum(states.values())


@SETTINGS
@given(platforms, profiles(), options, configurations())
def test_energy_is_power_times_state_time(p, profile, opts, config):
    """Eq. (9) recomputed from Table III's powers and the run's state times; off = 0 W."""
    e = estimate(p, profile, config, opts)
    times = e.state_times.of
    on = e.channels_on
    assert on is not None
    nvm = times("nvm")
    scale = 1 / on if opts.nvm_power == "per_device" else 1.0
    expected = {
        "nvm": scale * (0.066 * nvm["active"] + 0.0165 * nvm["idle"]),
        "device_dram": 0.5 * times("device_dram")["active"]
        + 0.35 * times("device_dram").get("idle", 0.0),
        "controller": 0.15 * times("controller")["active"]
        + 0.075 * times("controller").get("idle", 0.0),
    }
    # Every powered channel is in one state or the other for the whole run; the rest are off.
    # T includes the bitstream load (R15), which the other components wait through.
    assert nvm["active"] + nvm["idle"] == pytest.approx(on * e.time_s, rel=1e-9)
    assert nvm["off"] == pytest.approx((N - on) * e.time_s, rel=1e-9)
    if config.split == "device":
        k = e.pipeline.engines_active
        cell = 19.125e-3 if profile.app == "kmeans" else 2.125e-3
        p_ru = 1.358 + k * cell
        if opts.ru_power == "proportional":
            p_ru = (1.358 + 16 * cell) * k / 16
        ru = times("ru")
        expected["ru"] = p_ru * ru["active"] + 0.024 * ru["idle"]
        assert _state_sum(ru) == pytest.approx(e.time_s, rel=1e-9)
        assert times("controller")["active"] == pytest.approx(e.time_s, rel=1e-12)
        dram = times("device_dram")
        assert dram["active"] + dram["idle"] == pytest.approx(e.time_s, rel=1e-9)
        if opts.reconfiguration == "include":
            # The RU loads its bitstream at the reconfiguration power, not idle.
            assert ru["configuring"] == pytest.approx(RECONFIGURATION_S, rel=1e-12)
            expected["reconfiguration"] = RECONFIGURATION_J
    else:
        link = p.host_link
        cpb = profile.host_cycles_per_byte
        assert cpb is not None and profile.ipb is not None
        per_byte = profile.ipb if opts.cpu_energy == "instructions" else cpb
        expected["host_interface"] = link.power_active_w * times("host_interface")["active"]
        expected["host_dram"] = 0.3604 * times("host_dram")["active"]
        expected["host_chipset"] = 6.0 * times("host_chipset")["active"]
        expected["host_cpu"] = 0.9e-9 * per_byte * profile.data_bytes
        assert times("host_dram")["active"] == pytest.approx(e.time_s, rel=1e-12)
    assert e.energy.by_component_j == pytest.approx(expected, rel=1e-9)


# --- monotone in every rate ------------------------------------------------------------------


def _faster(p: Platform, part: str, factor: float) -> Platform:
    """`p` with one rate of RISP's models (Table II) multiplied by `factor`."""
    storage = p.storage
    if part == "b_ch":
        assert storage.channel_bandwidth_bytes_per_s is not None
        changed = storage.model_copy(
            update={"channel_bandwidth_bytes_per_s": storage.channel_bandwidth_bytes_per_s * factor}
        )
        return p.model_copy(update={"storage": changed})
    if part == "b_dram":
        assert storage.dram is not None
        dram = storage.dram.model_copy(
            update={"bandwidth_bytes_per_s": storage.dram.bandwidth_bytes_per_s * factor}
        )
        return p.model_copy(update={"storage": storage.model_copy(update={"dram": dram})})
    if part == "b_hostio":
        link = p.host_link.model_copy(
            update={"bandwidth_bytes_per_s": p.host_link.bandwidth_bytes_per_s * factor}
        )
        return p.model_copy(update={"host_link": link})
    if part == "f_ru":
        assert p.engines is not None and p.engines.frequency_hz is not None
        return p.with_cell_clock(p.engines.frequency_hz * factor)
    host = p.host.model_copy(update={"frequency_hz": p.host.frequency_hz * factor})
    return p.model_copy(update={"host": host})


@SETTINGS
@given(
    platforms,
    profiles(),
    options,
    configurations(),
    st.sampled_from(["b_ch", "b_dram", "b_hostio", "f_ru", "f_host"]),
    st.floats(1.0, 16.0),
)
def test_no_faster_rate_lengthens_a_run(p, profile, opts, config, part, factor):
    """Eqs. (1)-(8): every term is D over a rate (or n_delay over f_RU), so raising b_ch,
    b_DRAM, b_hostIO, f_RU or f_hostCPU never makes T_Baseline or T_RISP longer."""
    slow = estimate(p, profile, config, opts)
    fast = estimate(_faster(p, part, factor), profile, config, opts)
    assert fast.time_s <= slow.time_s * (1 + 1e-12), (
        f"{profile.app} ({config}): {part} x{factor:g} took {fast.time_s} s, was {slow.time_s} s"
    )
