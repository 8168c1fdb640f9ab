"""Profiling: measurements on this machine become Profiles the models can use."""

from __future__ import annotations

import json

import numpy as np
import pytest

from ndpkit.errors import SpecError
from ndpkit.hw import load_platform
from ndpkit.kernels import get_kernel
from ndpkit.model import estimate
from ndpkit.runtime.profiling import EngineScaling, Measurement, measure, save, to_profile


def _measurement(**changes: object) -> Measurement:
    values: dict[str, object] = {
        "app": "x",
        "input_bytes": 1_000_000,
        "output_bytes": 125_000,
        "device_s": 0.01,
        "host_s": 0.002,
        "host_frequency_hz": 2.0e9,
        "passes": 1,
    }
    values.update(changes)
    return Measurement(**values)  # type: ignore[arg-type]


def test_derived_rates_and_cycles_per_byte() -> None:
    m = _measurement()
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


def test_profile_scales_host_rates_to_the_target_host() -> None:
    m = _measurement()
    cns = load_platform("cns")
    here = to_profile(m, data_bytes=1e9)
    there = to_profile(m, data_bytes=1e9, target_host=cns.host)
    factor = cns.host.cores * cns.host.frequency_hz / m.host_frequency_hz
    assert there.host_only_bytes_per_s == pytest.approx(here.host_only_bytes_per_s * factor)
    assert there.data_bytes == 1e9 and there.alpha == 8
    assert there.cycles_per_byte == pytest.approx(24.0)


def test_platform_tables_win_over_the_scaled_measurement() -> None:
    """RANS has a paper rate for LC; the measured-and-scaled ARM rate must not replace it."""
    m = _measurement(app="lc")
    rans = load_platform("rans")
    profile = to_profile(m, data_bytes=37 * 2**30, target_host=rans.host)
    e = estimate(rans, profile)
    assert e.pipeline.engine_bytes_per_s == pytest.approx(rans.engines.throughput["lc"])


def test_measure_a_real_kernel() -> None:
    kernel = get_kernel("lc")
    data = kernel.generate(1 << 20, seed=1)
    m = measure(kernel, data, kernel.params(1), repeat=1, frequency_hz=3e9)
    assert m.passes == 1 and m.input_bytes == data.nbytes
    assert m.alpha >= 8
    assert m.device_s > 0 and m.host_frequency_hz == 3e9


def test_measure_rejects_empty_data() -> None:
    kernel = get_kernel("lc")
    with pytest.raises(SpecError, match="empty"):
        measure(kernel, np.empty((0, 8), np.float32), kernel.params(0))


def test_save_is_json_and_atomic(tmp_path) -> None:
    path = tmp_path / "profile.json"
    save([_measurement()], path)
    assert json.loads(path.read_text())[0]["alpha"] == 8
    assert [p.name for p in tmp_path.iterdir()] == ["profile.json"]
