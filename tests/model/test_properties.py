"""Invariants of Eq. (1), the time bases (O11) and the energy model, checked with Hypothesis.

Platforms are the RANS/RFNS presets scaled to an even number of devices (2..64);
profiles are the paper's six with a random reduction ratio α and data-set size D.
"""

from __future__ import annotations

import functools
import math
import typing

import pytest
from hypothesis import assume, given, settings
from hypothesis import strategies as st

from ndpkit.errors import SpecError
from ndpkit.hw import Platform, load_platform
from ndpkit.model import FULL_GEAR, HOST_ONLY, Configuration, Options, estimate
from ndpkit.plan import activate, configuration_of, minimum_engines
from ndpkit.profile import Profile, load_profile

GB = 2**30
APPS = ("lc", "he", "fft2d", "knn2", "knn6", "knn8")
SETTINGS = settings(max_examples=50, deadline=None, database=None)


@functools.cache
def platform(name: str, devices: int, scheme: str | None = None) -> Platform:
    base = load_platform(name).with_engine_count(devices)
    return base if scheme is None else base.with_scheme(scheme)


@functools.cache
def base_profile(app: str) -> Profile:
    return load_profile(app)


platforms = st.builds(
    platform,
    st.sampled_from(["rans", "rfns"]),
    st.integers(1, 32).map(lambda half: 2 * half),
)


@st.composite
def profiles(draw: st.DrawFn) -> Profile:
    app = draw(st.sampled_from(APPS))
    alpha = draw(st.floats(0.05, 64.0))
    data = draw(st.floats(2.0**20, 2.0**40))
    return base_profile(app).with_changes(alpha=alpha, data_bytes=data)


# Every value of every O-option (spec §14) that `Options` exposes.
OPTION_VALUES = {
    "energy_form": ("A", "B"),
    "wall_times": ("unrounded", "printed"),
    "time_basis": ("paper", "pipeline", "overlap", "staged"),
    "placement": ("paper_no_loss", "static_shards", "reshard_y_ssds"),
    "units": ("binary", "decimal"),
    "eq_rounding": ("unrounded", "rounded_2dp"),
    "mux_port_cap": (False, True),
    "switch_power": ("declared", "per_element"),
    "switch_time": ("ndp", "ndp_cpu"),
    "improvement": ("reduction", "ee_gain"),
    "rounding": ("exact", "paper"),
    # RISP's R-options: read only by the in-storage model, so any value must leave RANS alone.
    "cpu_energy": ("cycles", "instructions"),
    "attribution": ("paper", "all_active"),
    "nvm_power": ("per_channel", "per_device"),
    "ru_power": ("linear_per_cell", "proportional"),
    "host_stage": ("eq8_only", "with_host_stage"),
    "reconfiguration": ("ignore", "include"),
    "cell_load": ("ideal", "max_group"),
    "ru_time": ("computing", "configured"),
}


def options() -> st.SearchStrategy[Options]:
    """Any valid combination of the O-options."""
    return st.fixed_dictionaries(
        {name: st.sampled_from(values) for name, values in OPTION_VALUES.items()}
    ).map(lambda values: Options(**values))


def test_option_values_cover_every_option():
    """Scope: every field of `Options`, the O-options and RISP's R-options alike, each with
    exactly the values its annotation allows (a bool allows False and True)."""
    assert set(OPTION_VALUES) == set(Options().as_dict())
    hints = typing.get_type_hints(Options)
    for name, values in OPTION_VALUES.items():
        allowed = (False, True) if hints[name] is bool else typing.get_args(hints[name])
        assert set(values) == set(allowed), f"{name}: {values} != {allowed}"
        for value in values:
            Options.from_mapping({name: value})


@st.composite
def configurations(draw: st.DrawFn, devices: int) -> Configuration:
    """Full gear, host-only, or a mux2 mapping with a random number of engines on."""
    kind = draw(st.sampled_from(["full", "host", "mux2"]))
    if kind == "full":
        return FULL_GEAR
    if kind == "host":
        return HOST_ONLY
    on = draw(st.integers(minimum_engines(devices, 2), devices))
    return configuration_of(activate(devices, 2, on), devices)


@st.composite
def cases(draw: st.DrawFn):
    p = draw(platforms)
    return p, draw(profiles()), draw(configurations(p.devices)), draw(options())


# --- Eq. (1) ---------------------------------------------------------------------------------


@SETTINGS
@given(cases())
def test_performance_is_the_slowest_stage(case):
    p, profile, config, opts = case
    e = estimate(p, profile, config, opts)
    perf = e.performance_bytes_per_s
    assert perf == min(e.stages.values())
    assert all(perf <= bw for bw in e.stages.values())
    assert e.stages[e.bottleneck] == perf
    assert perf > 0
    assert math.isfinite(perf)


@SETTINGS
@given(platforms, profiles(), options())
def test_ndp2cpu_stage_is_host_link_times_alpha(p, profile, opts):
    e = estimate(p, profile, FULL_GEAR, opts)
    expected = p.host_link.bandwidth_bytes_per_s * profile.alpha
    assert e.stages["ndp2cpu"] == pytest.approx(expected, rel=1e-12)
    assert e.stages["cpu"] == profile.host_stage_bytes_per_s


@SETTINGS
@given(platforms, profiles(), options())
def test_host_split_never_has_engines_active(p, profile, opts):
    e = estimate(p, profile, HOST_ONLY, opts)
    assert e.pipeline.engines_active == 0
    assert set(e.stages) == {"ssd", "link", "cpu"}
    assert e.stages["link"] == p.host_link.bandwidth_bytes_per_s  # α not applied (§4.2)
    assert e.t_ndp_s == 0.0
    assert e.energy.by_component_j.get("engines", 0.0) == 0.0


@SETTINGS
@given(platforms, profiles(), st.data())
def test_static_shards_divide_the_full_gear_ndp_bandwidth(p, profile, data):
    n = p.devices
    on = data.draw(st.integers(minimum_engines(n, 2), n))
    opts = Options(placement="static_shards")
    full = estimate(p, profile, FULL_GEAR, opts)
    e = estimate(p, profile, configuration_of(activate(n, 2, on), n), opts)
    shards = e.pipeline.max_shards_per_engine
    assert shards == (1 if on == n else 2)
    assert e.stages["ndp"] == pytest.approx(full.stages["ndp"] / shards, rel=1e-12)


# --- time bases (O11) ------------------------------------------------------------------------


@SETTINGS
@given(cases())
def test_time_of_each_basis(case):
    p, profile, config, opts = case
    e = estimate(p, profile, config, opts)
    if opts.time_basis == "pipeline":
        assert e.time_s == pytest.approx(profile.data_bytes / e.performance_bytes_per_s, rel=1e-12)
    elif opts.time_basis == "paper":
        assert e.time_s == pytest.approx(e.t_ndp_s + e.t_cpu_s, rel=1e-12)
    elif opts.time_basis == "staged":
        # O11 staged: D / min(SSD, NDP, NDP2CPU x α) (every stage but the host's), then T_CPU;
        # without engines a T_CPU that holds its reading (the papers' CNS) overlaps it.
        device_bps = min(bw for name, bw in e.stages.items() if name != "cpu")
        transfer_s = profile.data_bytes / device_bps
        if e.pipeline.engines_active == 0 and not profile.host_only_in_memory:
            expected_s = max(transfer_s, e.t_cpu_s)
        else:
            expected_s = transfer_s + e.t_cpu_s
        assert e.time_s == pytest.approx(expected_s, rel=1e-12)
    else:
        assert e.time_s == pytest.approx(max(e.t_ndp_s, e.t_cpu_s), rel=1e-12)
    assert e.time_s > 0


def test_paper_time_basis_can_beat_the_pipeline_bound():
    """O11: under `paper`, time_s >= D / performance fails (HE on RFNS: 0.03 s < 0.094 s)."""
    profile = load_profile("he")
    rfns = load_platform("rfns").with_scheme("mux1")
    paper = estimate(rfns, profile, options=Options(wall_times="printed"))
    piped = estimate(rfns, profile, options=Options(wall_times="printed", time_basis="pipeline"))
    bound = profile.data_bytes / paper.performance_bytes_per_s
    assert paper.time_s == pytest.approx(0.03)
    assert bound == pytest.approx(3.4 / 36)
    assert paper.time_s < bound
    assert piped.time_s == pytest.approx(bound)


# --- NDP stage vs engines --------------------------------------------------------------------


@pytest.mark.parametrize("placement", ["paper_no_loss", "static_shards", "reshard_y_ssds"])
@pytest.mark.parametrize("k", [2, 3, 36])
@pytest.mark.parametrize("server", ["rans", "rfns"])
@pytest.mark.parametrize("app", APPS)
def test_more_engines_never_lower_the_ndp_stage(app, server, k, placement):
    p = platform(server, 36, f"mux{k}")
    profile = base_profile(app)
    opts = Options(placement=placement)
    previous = 0.0
    for on in range(minimum_engines(36, k), 37):
        e = estimate(p, profile, configuration_of(activate(36, k, on), 36), opts)
        ndp = e.stages["ndp"]
        assert ndp >= previous * (1 - 1e-12), (
            f"{app} on {server}/mux{k} ({placement}): NDP_BW fell from {previous} to {ndp} "
            f"at {on} engines"
        )
        previous = ndp
    assert previous == pytest.approx(estimate(p, profile, FULL_GEAR, opts).stages["ndp"])


# --- energy ----------------------------------------------------------------------------------


@SETTINGS
@given(cases())
def test_energy_components_are_never_negative(case):
    p, profile, config, opts = case
    e = estimate(p, profile, config, opts)
    for name, joules in e.energy.by_component_j.items():
        assert joules >= 0.0, f"{name}: {joules} J"
    for part in (e.state_times.engines, e.state_times.host, e.state_times.switch_layer):
        for state, seconds in part.items():
            assert seconds >= 0.0, f"{state}: {seconds} s"
    assert e.energy_j > 0


def mux2_on(p: Platform, data: st.DataObject) -> Configuration:
    on = data.draw(st.integers(minimum_engines(p.devices, 2), p.devices))
    return configuration_of(activate(p.devices, 2, on), p.devices)


@SETTINGS
@given(platforms, profiles(), options(), st.data())
def test_storage_reads_each_byte_once_whatever_the_placement(p, profile, opts, data):
    """Where the data sits changes which SSDs read, not how long reading it keeps SSDs
    busy in all: D / one SSD's bandwidth, in device-seconds (re-sharded onto y SSDs, each
    reads D/y in y times as long). With the mux port cap an SSD behind a capped port reads
    its share more slowly, so the total lies between D / device and D / capped port."""
    config = mux2_on(p, data)
    o = opts.with_(time_basis="pipeline")
    storage = estimate(p, profile, config, o).state_times.storage
    device = p.storage.device_bandwidth_bytes_per_s
    port = p.switch_layer.port_bandwidth_bytes_per_s
    least = profile.data_bytes / device
    if not o.mux_port_cap or port is None:
        assert storage["active"] == pytest.approx(least, rel=1e-9)
    else:
        most = profile.data_bytes / min(device, port)
        assert least * (1 - 1e-9) <= storage["active"] <= most * (1 + 1e-9)
    total = estimate(p, profile, config, o).time_s * p.devices
    assert storage["active"] + storage["idle"] == pytest.approx(total, rel=1e-9)


@SETTINGS
@given(platforms, profiles(), options(), st.data())
def test_static_shards_make_engines_wait_not_work_more(p, profile, opts, data):
    """With one shard per SSD the busiest engine sets the NDP stage, and the others idle
    once their fewer shards are done: engines are busy for D / SNDP_BW engine-seconds, as
    with the data re-sharded evenly; only their idle time grows."""
    config = mux2_on(p, data)
    times = {}
    for placement in ("paper_no_loss", "static_shards"):
        o = opts.with_(placement=placement, wall_times="unrounded")
        assume(o.time_basis in ("pipeline", "staged"))  # paper/overlap: busy for T_NDP
        times[placement] = estimate(p, profile, config, o).state_times.engines
    single = estimate(p, profile, config, opts).pipeline.engine_bytes_per_s
    for engines in times.values():
        assert engines["busy"] == pytest.approx(profile.data_bytes / single, rel=1e-9)
    assert times["static_shards"]["idle"] >= times["paper_no_loss"]["idle"] * (1 - 1e-9)


@SETTINGS
@given(cases())
def test_efficiency_times_energy_is_the_data_in_mb(case):
    p, profile, config, opts = case
    e = estimate(p, profile, config, opts)
    priced = opts.round_energy(e.energy_j)
    assume(priced > 0)  # rounding="paper" turns a few mJ into 0.00 J (EE = inf)
    assert e.ee_mb_per_j * priced == pytest.approx(profile.data_bytes / opts.mb, rel=1e-9)


def test_a_run_that_costs_nothing_has_an_infinite_efficiency(tmp_path) -> None:
    """The case the property above assumes away: 0 J (every power 0 W) is EE = +inf, not a
    ZeroDivisionError nor 0 MB/J (which passed every test of the model)."""
    free = tmp_path / "free.toml"
    free.write_text(
        'version = 1\nextends = "cns"\nname = "free"\n'
        '[host]\npower_active = "0 W"\npower_idle = "0 W"\n'
    )
    e = estimate(load_platform(str(free)), load_profile("lc"))
    assert e.energy_j == 0 and e.time_s > 0
    assert e.ee_mb_per_j == math.inf


@SETTINGS
@given(platforms, profiles())
def test_energy_forms_differ_by_idle_power_over_the_host_phase(p, profile):
    """O1: form A - form B = P_idle x T_CPU on a device-split run."""
    a = estimate(p, profile, FULL_GEAR, Options(energy_form="A"))
    b = estimate(p, profile, FULL_GEAR, Options(energy_form="B"))
    assert a.energy_j - b.energy_j == pytest.approx(
        p.host.power_idle_w * a.t_cpu_s, rel=1e-9, abs=1e-9
    )


@SETTINGS
@given(platforms, profiles())
def test_full_gear_paper_energy_is_the_papers_formula(p, profile):
    """§5.2 form A at full gear: (n x P_engine + P_idle) x T_NDP + P_active x T_CPU."""
    mux1 = p.with_scheme("mux1")
    e = estimate(mux1, profile)
    n = p.devices
    t_ndp = profile.data_bytes / (n * p.engines.throughput[profile.app])
    t_cpu = (
        0.0
        if profile.host_part_bytes_per_s is None
        else (profile.data_bytes / profile.host_part_bytes_per_s)
    )
    expected = (n * p.engines.power_on_w(profile.app) + p.host.power_idle_w) * t_ndp + (
        p.host.power_active_w * t_cpu
    )
    assert (e.t_ndp_s, e.t_cpu_s) == pytest.approx((t_ndp, t_cpu), rel=1e-12)
    assert e.energy_j == pytest.approx(expected, rel=1e-9)
    assert e.energy.by_component_j.get("switch_layer", 0.0) == 0.0
    assert e.pipeline.engines_active == n


@pytest.mark.parametrize("devices", [8, 64])
def test_printed_wall_times_only_apply_to_the_published_server(devices):
    scaled = load_platform("rfns").with_scheme("mux1").with_engine_count(devices)
    profile = load_profile("he")
    printed = estimate(scaled, profile, options=Options(wall_times="printed"))
    unrounded = estimate(scaled, profile)
    assert printed.t_ndp_s == pytest.approx(unrounded.t_ndp_s, rel=1e-12), (
        f"HE on RFNS scaled to {devices} engines: printed T_NDP {printed.t_ndp_s} s is the "
        f"36-engine value, expected T_single / {devices} = {unrounded.t_ndp_s} s"
    )


@pytest.mark.parametrize("value", ["maybe", "1", 1])
def test_boolean_options_reject_non_booleans(value):
    with pytest.raises(SpecError, match="must be true or false"):
        Options.from_mapping({"mux_port_cap": value})


@SETTINGS
@given(cases(), st.integers(1, 1000))
def test_passes_change_only_the_mb_per_j_and_by_their_count(case, passes):
    """data_size is the bytes the run reads (D x passes): the time and energy are the
    same whatever the passes, and MB/J counts D once, so it is 1 / passes of one pass's."""
    p, profile, config, opts = case
    once = estimate(p, profile, config, opts)
    iterated = estimate(p, profile.with_changes(passes=passes), config, opts)
    assert iterated.time_s == once.time_s
    assert iterated.energy_j == once.energy_j
    assert iterated.ee_mb_per_j * passes == pytest.approx(once.ee_mb_per_j, rel=1e-12)
