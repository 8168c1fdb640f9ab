"""Profiling: measurements on this machine become Profiles the models can use."""

from __future__ import annotations

import dataclasses
import json

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from measurements import measurement
from ndpkit import profile as profile_module
from ndpkit.errors import SpecError
from ndpkit.hw import load_platform
from ndpkit.kernels import get_kernel
from ndpkit.model import estimate
from ndpkit.profile import save_profiles
from ndpkit.runtime import generate_dataset, profiling
from ndpkit.runtime.perf_event import CounterError, CounterReading, open_counters
from ndpkit.runtime.profiling import (
    EngineScaling,
    Measurement,
    host_clock,
    measure,
    save,
    to_profile,
)


def test_derived_rates_and_cycles_per_byte() -> None:
    m = measurement()
    assert m.alpha == 8
    assert m.device_bytes_per_s == pytest.approx(1e8)
    assert m.host_part_bytes_per_s == pytest.approx(5e8)
    assert m.host_only_bytes_per_s == pytest.approx(1e6 / 0.012)
    # CPB = f / rate = 2e9 / (1e6 / 0.012) = 24 cycles per byte.
    assert m.cycles_per_byte == pytest.approx(24.0)


def test_engine_scaling_is_the_documented_formula() -> None:
    s = EngineScaling(arm_frequency_hz=1e9, arm_per_clock_ratio=0.5, arm_cores=2, fpga_speedup=3)
    rates = s.rates(host_core_bytes_per_s=4e8, host_frequency_hz=2e9)
    assert rates["arm"] == pytest.approx(4e8 / 2e9 * 1e9 * 0.5 * 2)
    assert rates["fpga"] == pytest.approx(1.2e9)
    assert rates["cpu"] == pytest.approx(4e8)
    # an engine's own clock and cores where it has them (none were given above, so a cpu
    # engine timed at the host's clock passed)
    assert s.rate("cpu", 4e8, 2e9, frequency_hz=3e9, cores=2) == pytest.approx(4e8 / 2e9 * 3e9 * 2)
    assert s.rate("arm", 4e8, 2e9, frequency_hz=3e9, cores=8) == pytest.approx(
        4e8 / 2e9 * 3e9 * 0.5 * 8
    )


def test_profile_scales_host_rates_to_the_target_host() -> None:
    m = measurement()
    cns = load_platform("cns")
    here = to_profile(m, data_bytes=1e9)
    there = to_profile(m, data_bytes=1e9, target_host=cns.host)
    factor = cns.host.cores * cns.host.frequency_hz / m.host_frequency_hz
    assert there.host_only_bytes_per_s == pytest.approx(here.host_only_bytes_per_s * factor)
    assert there.data_bytes == 1e9 and there.alpha == 8
    assert there.cycles_per_byte == pytest.approx(24.0)


def test_platform_tables_win_over_the_scaled_measurement() -> None:
    """RANS has a paper rate for LC; the measured-and-scaled ARM rate must not replace it."""
    m = measurement(app="lc")
    rans = load_platform("rans")
    profile = to_profile(m, data_bytes=37 * 2**30, target_host=rans.host)
    e = estimate(rans, profile)
    assert e.pipeline.engine_bytes_per_s == pytest.approx(rans.engines.throughput["lc"])


def test_measure_a_real_kernel() -> None:
    kernel = get_kernel("lc")
    data = kernel.generate(1 << 20, seed=1)
    m = measure(kernel, data, kernel.params(1), repeat=1, frequency_hz=3e9)
    assert m.passes == 1 and m.input_bytes == data.nbytes
    # one float32 score per 32-byte point: the paper's α = 8 (it was `>= 8`, which a device
    # part that sent less than it does, or nothing per point, passed)
    assert m.output_bytes == 4 * len(data) and m.alpha == 8
    assert m.device_s > 0 and m.host_frequency_hz == 3e9


def test_a_folding_kernel_is_measured_as_the_runtime_runs_it() -> None:
    """k-NN's top-k folds its chunks (`Kernel.fold`): the device sends one top-k per pass,
    12 bytes per neighbour, for the whole sample and for its first half alike."""
    kernel = get_kernel("knn8-topk")
    data = kernel.generate(1 << 20, seed=2)
    m = measure(kernel, data, kernel.params(2), chunk_records=4096, repeat=1, counters=None)
    assert kernel.folds
    assert m.output_bytes == m.device_output_bytes == m.part_output_bytes == 12 * kernel.k
    assert m.part_input_bytes == (len(data) // 4096 // 2) * 4096 * kernel.record_bytes
    assert m.alpha == data.nbytes / (12 * kernel.k)


def test_measure_rejects_empty_data() -> None:
    kernel = get_kernel("lc")
    with pytest.raises(SpecError, match=r"^data: has no records: cannot profile lc on an empty"):
        measure(kernel, np.empty((0, 8), np.float32), kernel.params(0))


def test_save_is_json_and_atomic(tmp_path) -> None:
    path = tmp_path / "profile.json"
    save([measurement()], path)
    assert json.loads(path.read_text())[0]["alpha"] == 8
    assert [p.name for p in tmp_path.iterdir()] == ["profile.json"]


def test_a_limit_on_what_a_device_sends_saves_and_loads_back(tmp_path) -> None:
    capped = measurement(device_output_bytes=72, device_output_limit_bytes=120)
    save([capped, measurement()], tmp_path / "m.json")
    assert profiling.load(tmp_path / "m.json") == [capped, measurement()]


def test_save_takes_a_str_path_as_load_does(tmp_path) -> None:
    """save(ms, "m.json") ended in "'str' object has no attribute 'name'"; load took one."""
    path = str(tmp_path / "m.json")
    save([measurement()], path)
    assert profiling.load(path) == [measurement()]


@pytest.mark.parametrize("given", ["one", "a dict", "a str"])
def test_save_names_measurements_that_are_no_list_of_them(tmp_path, given: str) -> None:
    """One Measurement was "'Measurement' object is not iterable"."""
    value = {"one": measurement(), "a dict": {"lc": measurement()}, "a str": "lc"}[given]
    with pytest.raises(SpecError, match=r"^measurements: must be a list of"):
        save(value, tmp_path / "m.json")
    assert list(tmp_path.iterdir()) == []


class FakeCounters:
    """Counts from a script: stop() k returns `cycles[k]` (and twice as many instructions);
    a None entry raises CounterError, as a failing read would."""

    def __init__(self, cycles: list[float | None]):
        self.script = list(cycles)
        self.started = self.stopped = 0
        self.closed = False

    def start(self) -> None:
        self.started += 1

    def stop(self) -> CounterReading:
        self.stopped += 1
        cycles = self.script.pop(0)
        if cycles is None:
            raise CounterError("perf counters never ran (test)")
        return CounterReading(cycles, 2 * cycles)

    def close(self) -> None:
        self.closed = True


def _measure_lc(counters: object, repeat: int = 2) -> Measurement:
    kernel = get_kernel("lc")
    data = kernel.generate(1 << 20, seed=1)
    return measure(
        kernel, data, kernel.params(1), repeat=repeat, frequency_hz=3e9, counters=counters
    )


def test_perf_counts_give_cycles_per_byte_and_the_effective_clock() -> None:
    # lc has one pass: stops alternate device, host, device, host over the two repeats.
    fake = FakeCounters([5e6, 7e6, 3e6, 9e6])
    m = _measure_lc(lambda: fake)
    assert fake.started == fake.stopped == 4 and fake.closed
    assert m.cpb_source == "perf"
    # The fewest counts of the repeats, per part: device 3e6, host 7e6.
    assert (m.device_cycles, m.host_cycles) == (3e6, 7e6)
    assert (m.device_instructions, m.host_instructions) == (6e6, 14e6)
    assert m.cycles_per_byte == pytest.approx(10e6 / m.input_bytes)
    assert m.device_cycles_per_byte == pytest.approx(3e6 / m.input_bytes)
    assert m.device_instructions_per_byte == pytest.approx(6e6 / m.input_bytes)
    assert m.cpb_frequency_hz == pytest.approx(10e6 / (m.device_s + m.host_s))
    document = m.as_dict()
    assert document["cpb_source"] == "perf"
    assert document["cpb_frequency_hz"] == pytest.approx(m.cpb_frequency_hz)
    profile = to_profile(m)
    assert profile.cycles_per_byte == pytest.approx(m.cycles_per_byte)
    assert "perf counters" in profile.description


def test_clock_when_the_counters_cannot_open() -> None:
    def refuse() -> FakeCounters:
        raise CounterError("perf_event_open(cycles): No such file or directory (ENOENT)")

    m = _measure_lc(refuse)
    assert m.cpb_source == "clock" and m.device_cycles is None
    assert m.cpb_frequency_hz == 3e9
    # CPB = f × seconds / bytes.
    assert m.cycles_per_byte == pytest.approx(3e9 * (m.device_s + m.host_s) / m.input_bytes)
    assert m.device_cycles_per_byte == pytest.approx(3e9 * m.device_s / m.input_bytes)
    assert m.device_instructions_per_byte is None
    assert any("ENOENT" in note for note in m.notes)
    assert m.as_dict()["cpb_source"] == "clock"
    assert "the clock at 3.00 GHz" in to_profile(m).description


def test_a_counter_failing_part_way_falls_back_to_the_clock() -> None:
    fake = FakeCounters([5e6, None])
    m = _measure_lc(lambda: fake)
    assert m.cpb_source == "clock" and m.host_cycles is None and fake.closed
    assert fake.stopped == 2  # nothing asked of the counters after the failure
    assert any("never ran" in note for note in m.notes)


def test_no_counters_asked_for_means_the_clock() -> None:
    m = _measure_lc(None, repeat=1)
    assert m.cpb_source == "clock" and m.cpb_frequency_hz == 3e9


def test_the_default_counters_never_stop_a_measurement() -> None:
    """Whatever this machine supports: perf counts, or the clock with the reason noted."""
    m = _measure_lc(open_counters, repeat=1)
    assert m.cpb_source in ("perf", "clock") and m.cycles_per_byte > 0
    if m.cpb_source == "clock":
        assert any("perf_event_open" in note or "perf counters" in note for note in m.notes)


@pytest.mark.parametrize(
    ("change", "field"),
    [
        ({"fpga_frequency_hz": 0}, "fpga_frequency_hz"),  # was a ZeroDivisionError later
        ({"arm_frequency_hz": -1.2e9}, "arm_frequency_hz"),
        ({"arm_per_clock_ratio": float("nan")}, "arm_per_clock_ratio"),
        ({"fpga_speedup": float("inf")}, "fpga_speedup"),
        ({"arm_cores": 0}, "arm_cores"),
        ({"arm_cores": 2.5}, "arm_cores"),
    ],
)
def test_a_scaling_that_cannot_be_right_names_its_field(
    change: dict[str, float], field: str
) -> None:
    with pytest.raises(SpecError) as caught:
        EngineScaling(**change)  # type: ignore[arg-type]
    assert caught.value.field == field


@pytest.mark.parametrize("frequency_hz", [0.0, -2e9, float("nan")])
def test_a_clock_that_cannot_be_right_is_refused_not_replaced(frequency_hz: float) -> None:
    """0 used to mean "this host's clock" silently; a negative or NaN clock gave a negative
    or NaN CPB, refused only later by the profile's own validation."""
    kernel = get_kernel("lc")
    data = kernel.generate(1 << 16, 0)
    with pytest.raises(SpecError) as caught:
        measure(kernel, data, kernel.params(0), frequency_hz=frequency_hz, repeat=1)
    assert caught.value.field == "frequency_hz"


@pytest.mark.parametrize("data_bytes", [0, -1.0, float("nan")])
def test_a_data_size_that_cannot_be_right_is_refused(data_bytes: float) -> None:
    kernel = get_kernel("lc")
    m = measure(kernel, kernel.generate(1 << 16, 0), kernel.params(0), repeat=1, counters=None)
    with pytest.raises(SpecError) as caught:
        to_profile(m, data_bytes=data_bytes)
    assert caught.value.field == "data_bytes"


def test_with_counted_cycles_the_scaling_uses_the_clock_they_ran_at() -> None:
    """perf counted 3.0e7 cycles in 12 ms (2.5 GHz) where /proc/cpuinfo said 2 GHz: the
    host rates scaled to a target host then agree with the RISP Baseline's f x cores / CPB
    (the profiling audit found the two 1.5x apart)."""
    m = measurement(device_cycles=2.5e7, host_cycles=0.5e7)
    assert m.cpb_frequency_hz == pytest.approx(2.5e9)
    cns = load_platform("cns")
    profile = to_profile(m, data_bytes=1e9, target_host=cns.host)
    baseline = cns.host.cores * cns.host.frequency_hz / m.cycles_per_byte
    assert profile.host_only_bytes_per_s == pytest.approx(baseline)
    arm = EngineScaling().rates(m.device_bytes_per_s, 2.5e9)["arm"]
    assert profile.engine_bytes_per_s["arm"] == pytest.approx(arm)


def test_the_hosts_clock_comes_from_its_nominal_frequency(tmp_path) -> None:
    cpufreq, cpuinfo = tmp_path / "base_frequency", tmp_path / "cpuinfo"
    named = "model name\t: Intel(R) Xeon(R) Gold 6140 CPU @ 2.30GHz\ncpu MHz\t\t: 999.9\n"
    cpuinfo.write_text(named)
    cpufreq.write_text("2100000\n")  # kHz
    assert host_clock(cpufreq, cpuinfo) == (2.1e9, str(cpufreq))
    cpufreq.unlink()
    assert host_clock(cpufreq, cpuinfo) == (pytest.approx(2.3e9), "the processor's name")
    cpuinfo.write_text("model name\t: Intel(R) Xeon(R) Processor\ncpu MHz\t\t: 2299.998\n")
    assert host_clock(cpufreq, cpuinfo) == (pytest.approx(2.299998e9), "/proc/cpuinfo cpu MHz")
    cpuinfo.write_text("processor\t: 0\n")  # e.g. arm64, which states no clock
    assert host_clock(cpufreq, cpuinfo) == (2.0e9, "assumed")


def test_an_assumed_clock_is_noted(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(profiling, "host_clock", lambda: (2.0e9, "assumed"))
    kernel = get_kernel("lc")
    data = kernel.generate(1 << 16, seed=1)
    m = measure(kernel, data, kernel.params(1), repeat=1, counters=None)
    assert m.host_frequency_hz == 2.0e9
    assert any("2.00 GHz assumed" in note for note in m.notes)


def test_saved_measurements_are_strict_json(tmp_path) -> None:
    path = tmp_path / "m.json"
    save([measurement(host_s=0.0)], path)  # a host part that took no time: rate +inf
    text = path.read_text()
    document = json.loads(text, parse_constant=lambda c: pytest.fail(f"bare {c} in JSON"))
    assert document[0]["host_part_bytes_per_s"] == "inf"


def test_a_device_part_timed_at_zero_has_a_finite_rate() -> None:
    m = measurement(device_s=0.0)
    assert 0 < m.device_bytes_per_s < float("inf")


def test_an_engine_kind_without_a_scaling_rule_is_refused() -> None:
    with pytest.raises(SpecError, match="no scaling rule for engine kind 'gpu'"):
        EngineScaling().rate("gpu", 1e9, 2e9)


def test_a_clock_of_zero_or_a_malformed_name_is_passed_over(tmp_path) -> None:
    missing, cpuinfo = tmp_path / "none", tmp_path / "cpuinfo"
    cpuinfo.write_text("model name\t: Odd CPU @ 2.3.1GHz\ncpu MHz\t\t: 0.000\n")
    assert host_clock(missing, cpuinfo) == (2.0e9, "assumed")
    cpuinfo.write_text("model name\t: Odd CPU @ .GHz\ncpu MHz\t\t: 1800.0\n")
    assert host_clock(missing, cpuinfo) == (pytest.approx(1.8e9), "/proc/cpuinfo cpu MHz")


def test_the_clock_files_may_be_given_as_str_paths(tmp_path) -> None:
    cpufreq, cpuinfo = tmp_path / "base_frequency", tmp_path / "cpuinfo"
    cpufreq.write_text("2100000\n")
    cpuinfo.write_text("cpu MHz\t\t: 1800.0\n")
    assert host_clock(str(cpufreq), str(cpuinfo)) == (2.1e9, str(cpufreq))
    assert host_clock(str(tmp_path / "none"), str(cpuinfo)) == (
        pytest.approx(1.8e9),
        "/proc/cpuinfo cpu MHz",
    )
    with pytest.raises(SpecError, match="cpuinfo: must be a path"):
        host_clock(cpufreq, 5)  # type: ignore[arg-type]


def test_counted_cycles_need_no_assumed_clock(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(profiling, "host_clock", lambda: (2.0e9, "assumed"))
    fake = FakeCounters([5e6, 7e6, 3e6, 9e6])
    kernel = get_kernel("lc")
    data = kernel.generate(1 << 20, seed=1)
    m = measure(kernel, data, kernel.params(1), repeat=2, counters=lambda: fake)
    assert m.cpb_source == "perf"
    assert not any("assumed" in note for note in m.notes)


def test_parts_timed_at_zero_give_finite_rates_and_a_profile() -> None:
    m = measurement(device_s=0.0, host_s=0.0)
    assert 0 < m.host_only_bytes_per_s < float("inf")
    counted = measurement(device_s=0.0, host_s=0.0, device_cycles=10.0, host_cycles=5.0)
    assert 0 < counted.cpb_frequency_hz < float("inf")
    assert to_profile(m).host_only_bytes_per_s == pytest.approx(m.host_only_bytes_per_s)


@pytest.mark.parametrize(
    ("change", "field"),
    [
        ({"device_s": -1.0}, "device_s"),
        ({"device_s": float("inf")}, "device_s"),
        ({"device_s": float("nan")}, "device_s"),
        ({"host_s": float("inf")}, "host_s"),
        ({"device_s": None}, "device_s"),  # a TypeError comparing None, after loading
        ({"host_s": None}, "host_s"),
        ({"host_frequency_hz": 0.0}, "host_frequency_hz"),
        ({"input_bytes": 0}, "input_bytes"),
        ({"input_bytes": 1.5}, "input_bytes"),
        ({"passes": 0}, "passes"),
        ({"output_bytes": -1}, "output_bytes"),
        ({"output_bytes": None}, "output_bytes"),
        ({"input_bytes": 3, "passes": 4}, "input_bytes"),
        ({"device_cycles": -5.0, "host_cycles": 10.0}, "device_cycles"),
        ({"device_cycles": 0.0, "host_cycles": 0.0}, "device_cycles + host_cycles"),
    ],
)
def test_a_measurement_that_cannot_be_right_names_its_field(
    change: dict[str, float], field: str
) -> None:
    """`measure` never makes one; one built by hand was taken: a negative time as a clock
    tick (an ARM rate of 5.6e15 B/s), an infinite time or a zero clock a ZeroDivisionError."""
    with pytest.raises(SpecError) as caught:
        measurement(**change)
    assert caught.value.field == field


def test_counters_that_count_no_cycles_give_way_to_the_clock() -> None:
    """perf opened and ran but counted 0 cycles: `measure` raised "device_cycles +
    host_cycles: must be a finite number > 0", a message for hand-built measurements."""
    m = _measure_lc(lambda: FakeCounters([0, 0, 0, 0]))
    assert m.cpb_source == "clock" and m.device_cycles is None
    assert "the cycle counter counted nothing" in " ".join(m.notes)


def test_a_part_that_counted_no_cycles_gives_way_to_the_clock() -> None:
    """The second repeat's device part counted 0 cycles (time it ran, counters that did not
    count): the fewest counts made the device part 0 cycles per byte and the kernel's CPB
    that of the host part alone, from "perf"."""
    m = _measure_lc(lambda: FakeCounters([5e6, 7e6, 0, 9e6]))
    assert m.cpb_source == "clock" and m.device_cycles is None and m.host_cycles is None
    assert m.device_cycles_per_byte == pytest.approx(3e9 * m.device_s / m.input_bytes)
    assert "the cycle counter counted nothing in the device part" in m.notes[-1]
    assert "perf counters" in m.notes[-1]  # as `test_the_default_counters_...` expects
    assert "the clock at 3.00 GHz" in to_profile(m).description


def test_a_profile_a_file_could_not_hold_is_not_saved(tmp_path) -> None:
    """Modelled at 3e28 B/s from an extreme scaling, then saved, and the saved file was
    refused on loading (a bandwidth is at most 1e24 B/s). Refused when saving now, naming
    the file's key; the model itself still takes the profile (a platform's own throughput
    entry may replace that rate, as `evaluate` does)."""
    profile = to_profile(measurement(), scaling=EngineScaling(arm_per_clock_ratio=1e20))
    path = tmp_path / "p.json"
    with pytest.raises(SpecError, match="not written: it would not load back") as caught:
        save_profiles([profile], path)
    assert caught.value.field == "apps.x.engine.arm"
    assert list(tmp_path.iterdir()) == []
    save_profiles([to_profile(measurement())], path)
    assert path.exists()


@pytest.mark.parametrize("repeat", [0, -3, 2.5, True])
def test_a_repeat_count_that_cannot_be_right_is_refused(repeat: object) -> None:
    """0 and -3 ran once without a word, 2.5 ended in a TypeError."""
    kernel = get_kernel("lc")
    data = kernel.generate(1 << 16, 0)
    with pytest.raises(SpecError) as caught:
        measure(kernel, data, kernel.params(0), repeat=repeat, counters=None)  # type: ignore[arg-type]
    assert caught.value.field == "repeat"


@pytest.mark.parametrize("passes", [1.5, True, 2.0])
def test_a_pass_count_is_a_whole_number(passes: object) -> None:
    """A fractional count modelled D x 1.5 bytes, True one pass."""
    kernel = get_kernel("lc")
    m = measure(kernel, kernel.generate(1 << 16, 0), kernel.params(0), repeat=1, counters=None)
    with pytest.raises(SpecError) as caught:
        to_profile(m, data_bytes=1e9, passes=passes)  # type: ignore[arg-type]
    assert caught.value.field == "passes"
    assert to_profile(m, data_bytes=1e9, passes=np.int64(2)).data_bytes == 2e9


@pytest.mark.parametrize("follow", ["no", 0, None])
def test_follow_platform_is_true_or_false(follow: object) -> None:
    """ "no" (or any other truthy value) followed the platform."""
    with pytest.raises(SpecError) as caught:
        EngineScaling(follow_platform=follow)  # type: ignore[arg-type]
    assert caught.value.field == "follow_platform"


def test_a_numpy_bool_is_true_or_false() -> None:
    """np.False_ (a value read from an array) followed the platform as False before the
    check, and the check refused it; it is taken, as Python's bool."""
    off = EngineScaling(follow_platform=np.array([False])[0])
    assert off.follow_platform is False
    assert EngineScaling(follow_platform=np.bool_(True)).follow_platform is True


# -- saved measurements load back ---------------------------------------------------------


def test_saved_measurements_load_back_and_map_onto_a_platform_alike(tmp_path) -> None:
    """`save` wrote measurements nothing could read: mapping one onto another platform
    meant measuring again. `load` gives them back as they were, so `to_profile` on a loaded
    one gives the same profile as on the measurement itself."""
    kernel = get_kernel("kmeans")
    measured = [
        measure(kernel, kernel.generate(2**16, 0), kernel.params(0), repeat=1, counters=None),
        measurement(host_s=0.0, device_output_bytes=7, part_input_bytes=10, part_output_bytes=5),
        measurement(device_cycles=1e7, host_cycles=2e6, device_instructions=3e7,
                    host_instructions=4e6),
    ]  # fmt: skip
    path = tmp_path / "m.json"
    save(measured, path)
    back = profiling.load(path)
    assert back == measured
    rans = load_platform("rans")
    for mine, theirs in zip(back, measured, strict=True):
        assert to_profile(mine, target_host=rans.host, target_engine=rans.engines) == to_profile(
            theirs, target_host=rans.host, target_engine=rans.engines
        )


def test_load_says_what_a_table_given_instead_of_measurements_is(tmp_path) -> None:
    """Every JSON table was "a profile set", read with --profiles: a data set's manifest, or
    the `evaluate -f json` report whose apps hold measurements, was then refused by
    --profiles in turn."""
    generate_dataset("lc", 2**16, 1, tmp_path / "ds")
    report = {"apps": [{"app": "lc", "measurement": measurement().as_dict()}], "warnings": []}
    profiles = tmp_path / "p.json"
    save_profiles([to_profile(measurement(app="lc"), data_bytes=1e9)], profiles)
    tables = {
        tmp_path / "ds" / "manifest.json": "a data set's manifest (ndpkit data), which holds no",
        tmp_path / "ev.json": "the report of `ndpkit evaluate -f json` (its measurements are",
        profiles: "a profile set (`ndpkit evaluate --save-profiles`), which is read with",
        tmp_path / "other.json": "a table",
    }
    (tmp_path / "ev.json").write_text(json.dumps(report))
    (tmp_path / "other.json").write_text(json.dumps({"apps": 3}))
    for path, what in tables.items():
        with pytest.raises(SpecError) as caught:
            profiling.load(path)
        assert str(caught.value).startswith(
            f"{path}: expected a list of measurements (runtime.profiling.save), got {what}"
        ), str(caught.value)
    written = json.loads(next(iter(tables)).read_text())["format"]
    assert written == profile_module.DATASET_FORMAT  # what a data set's manifest says


@pytest.mark.parametrize("path", [5, b"m.json", None])
def test_a_path_of_another_kind_is_refused_by_name(tmp_path, monkeypatch, path) -> None:
    """`load(5)` and `save([m], b"m.json")` were pathlib's TypeError, where
    `generate_dataset` refuses such a path by name."""
    monkeypatch.chdir(tmp_path)
    for call in (lambda: profiling.load(path), lambda: save([measurement()], path)):
        with pytest.raises(SpecError, match=r"^path: must be a path \(a str or a pathlib"):
            call()
    assert list(tmp_path.iterdir()) == []


def test_load_names_the_keys_measurement_as_dict_adds() -> None:
    derived = set(measurement().as_dict()) - {f.name for f in dataclasses.fields(Measurement)}
    assert derived == set(profiling._DERIVED_KEYS)


@pytest.mark.parametrize(
    ("edit", "message"),
    [
        (
            lambda d: d[0].__setitem__("alpha", 4.0),
            r"\[0\]\.alpha: is 4\.0, but .* edit those \(device_output_bytes, ",
        ),
        (lambda d: d[0].__setitem__("device_s", -1), r"\[0\]\.device_s: must be a finite"),
        (lambda d: d[0].__setitem__("device_s", "1 s"), r"\[0\]\.device_s: must be a finite"),
        (lambda d: d[0].pop("passes"), r"\[0\]\.passes: required field is missing"),
        (lambda d: d[0].__setitem__("devce_s", 1.0), r"\[0\]\.devce_s: unknown field; did you"),
        (lambda d: d[0].__setitem__("input_bytes", 1.5), r"\[0\]\.input_bytes: must be an int"),
        (lambda d: d[0].__setitem__("notes", "x"), r"\[0\]\.notes: expected a list of strings"),
        (lambda d: d.__setitem__(0, 3), r"\[0\]: expected a measurement"),
    ],
)
def test_a_bad_measurements_file_is_an_error_naming_the_file_and_field(
    tmp_path, edit, message
) -> None:
    path = tmp_path / "m.json"
    save([measurement()], path)
    document = json.loads(path.read_text())
    edit(document)
    path.write_text(json.dumps(document))
    with pytest.raises(SpecError, match=f"^{path}: {message}"):
        profiling.load(path)


def test_an_unreadable_measurements_file_is_an_error_naming_it(tmp_path) -> None:
    path = tmp_path / "m.json"
    with pytest.raises(SpecError, match=f"^{path}: file not found"):
        profiling.load(path)
    path.write_text("[")
    with pytest.raises(SpecError, match=f"^{path}: malformed JSON"):
        profiling.load(path)
    path.write_text('[{"app": "x", "app": "y"}]')
    with pytest.raises(SpecError, match="named twice"):
        profiling.load(path)
    save_profiles([to_profile(measurement())], path)  # a profile set, not measurements
    with pytest.raises(SpecError, match=f"^{path}: expected a list of measurements .* --profiles"):
        profiling.load(path)


@pytest.mark.parametrize("part", [1_000_000, 2_000_000])
def test_a_part_at_or_past_the_whole_sample_is_refused(tmp_path, part: int) -> None:
    """The part is the sample's first half of chunks (`measure` makes it so); one built by
    hand, or edited in a saved file, at or past the whole gave LC an α of 1.6e-05."""
    with pytest.raises(SpecError, match=r"^part_input_bytes: must be less than the data"):
        measurement(device_output_bytes=125_000, part_input_bytes=part, part_output_bytes=62_500)
    path = tmp_path / "m.json"
    save([measurement(device_output_bytes=125_000, part_input_bytes=500_000,
                      part_output_bytes=62_500)], path)  # fmt: skip
    document = json.loads(path.read_text())
    document[0]["part_input_bytes"] = part
    path.write_text(json.dumps(document))
    with pytest.raises(SpecError, match=f"^{path}: \\[0\\].part_input_bytes: must be less"):
        profiling.load(path)


@pytest.mark.parametrize(
    ("args", "kwargs", "field"),
    [
        (("arm", 1e9, 2e9), {"frequency_hz": -1e9}, "frequency_hz"),  # was a negative rate
        (("arm", 1e9, 2e9), {"frequency_hz": 0.0}, "frequency_hz"),  # was the default clock
        (("arm", 1e9, 2e9), {"cores": 0}, "cores"),  # was the default 4 cores
        (("cpu", 1e9, 2e9), {"cores": 2.5}, "cores"),  # was 2.5 cores
        (("arm", 1e9, 0.0), {}, "host_frequency_hz"),  # was a ZeroDivisionError
        (("fpga", -1e9, 2e9), {}, "host_core_bytes_per_s"),  # was a negative rate
    ],
)
def test_engine_scaling_rate_checks_its_arguments(args, kwargs, field: str) -> None:
    with pytest.raises(SpecError, match=f"^{field}: must be"):
        EngineScaling().rate(*args, **kwargs)


@settings(max_examples=200, database=None)
@given(
    whole=st.integers(0, 10**6),
    part=st.integers(0, 10**6),
    half=st.floats(0.01, 0.99),
    limit=st.one_of(st.none(), st.integers(0, 10**6)),
    device_bytes=st.floats(0.0, 1e15),
)
def test_a_device_sends_the_fitted_line_up_to_its_limit(
    whole: int, part: int, half: float, limit: int | None, device_bytes: float
) -> None:
    """`device_output_limit_bytes` only caps the line through the sample's two points: below
    it nothing changes, and no device sends more (an α from a tiny top-k sample)."""
    fields = {
        "device_output_bytes": whole,
        "part_input_bytes": int(1_000_000 * half),
        "part_output_bytes": part,
    }
    free = measurement(**fields)
    capped = measurement(**fields, device_output_limit_bytes=limit)
    line = free.device_sends_bytes(device_bytes)
    if limit is None:
        assert capped.device_sends_bytes(device_bytes) == line
    else:
        assert capped.device_sends_bytes(device_bytes) == min(line, limit)
    # The line itself (only compared with itself above): never negative, never less for
    # more data, and through both measured points where a fixed part ≥ 0 fits them.
    part_in = fields["part_input_bytes"]
    assert line >= 0
    assert free.device_sends_bytes(2 * device_bytes) >= line
    if part * 1_000_000 >= whole * part_in and part <= whole:
        assert free.device_sends_bytes(1_000_000) == pytest.approx(whole, rel=1e-9, abs=1e-6)
        assert free.device_sends_bytes(part_in) == pytest.approx(part, rel=1e-9, abs=1e-6)
    elif part > whole:  # more data sent no more: the whole sample's output, for any data
        assert line == pytest.approx(whole, rel=1e-12)


@pytest.mark.parametrize(
    ("field", "given"),
    [
        ("target_host", "platform"),
        ("target_engine", "host"),
        ("scaling", 3),
    ],
)
def test_to_profile_names_an_object_of_the_wrong_kind(field: str, given: object) -> None:
    """The platform given for `platform.host` ended in "'Platform' object has no attribute
    'cores'", a Host for an Engine in "… no attribute 'kind'"."""
    platform = load_platform("rans")
    named: dict[object, object] = {"platform": platform, "host": platform.host}
    value = named.get(given, given)
    with pytest.raises(SpecError, match=rf"^{field}: must be "):
        to_profile(measurement(), **{field: value})


def test_to_profile_of_no_measurement_is_named() -> None:
    """A measurement's JSON (a dict) was "… has no attribute 'cpb_frequency_hz'"."""
    with pytest.raises(SpecError, match=r"^m: must be a Measurement"):
        to_profile(measurement().as_dict())  # type: ignore[arg-type]


@pytest.mark.parametrize("device_bytes", [0, -5, "1e6", float("nan")], ids=repr)
def test_alpha_for_a_device_that_reads_nothing_is_refused(device_bytes: object) -> None:
    """alpha_for(0) was 0 and alpha_for(-5) -5 (a string a TypeError from the arithmetic)."""
    with pytest.raises(SpecError, match=r"^device_bytes: must be a finite number"):
        measurement().alpha_for(device_bytes)  # type: ignore[arg-type]
    assert measurement().alpha_for(measurement().data_bytes) == measurement().alpha


def test_a_device_that_reads_nothing_sends_the_fixed_part_only() -> None:
    m = measurement()
    with pytest.raises(SpecError, match=r"^device_bytes: must be a finite number ≥ 0"):
        m.device_sends_bytes(-1)
    assert m.device_sends_bytes(0) <= m.device_sends_bytes(m.data_bytes)
