"""Profiling: measure a kernel on this machine and turn the measurement into a `Profile`.

The papers measured each application on one real engine and extrapolated. ndpkit measures
the device part and the host part on one core of this host, the reduction ratio
α = device input / device output, and the whole kernel run on the host, then maps the
host measurement onto target engines with an explicit scaling model (`EngineScaling`).
A platform's own per-engine throughput table always wins over the scaling rule, because
`ndpkit.model` looks there first.

Cycles per byte come from this host's documented clock (`/proc/cpuinfo`, or the
`frequency_hz` argument): CPB = f_host / (bytes per second on one core). Hardware counters
(`perf`) would be more exact; they are not read here.
"""

from __future__ import annotations

import json
import os
import time
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

import numpy as np

from ndpkit.errors import SpecError
from ndpkit.files import write_atomic
from ndpkit.hw import Host
from ndpkit.kernels.base import Kernel
from ndpkit.profile import Profile


@dataclass(frozen=True)
class EngineScaling:
    """How a single host core's rate maps onto one engine of each kind.

    rate(engine) = rate(host core) x (f_engine / f_host) x per_clock_ratio x cores.
    The defaults are documented assumptions, not measurements: an in-order Cortex-A53
    does about a third of a Xeon core's work per clock on streaming kernels; an FPGA
    kernel partition is modelled as `fpga_speedup` host cores. Override any of them, or
    give the platform an `engines.throughput` entry, which wins.
    """

    arm_frequency_hz: float = 1.2e9
    arm_per_clock_ratio: float = 0.35
    arm_cores: int = 4
    fpga_speedup: float = 8.0
    cpu_per_clock_ratio: float = 1.0

    def rates(self, host_core_bytes_per_s: float, host_frequency_hz: float) -> dict[str, float]:
        per_hz = host_core_bytes_per_s / host_frequency_hz
        return {
            "arm": per_hz * self.arm_frequency_hz * self.arm_per_clock_ratio * self.arm_cores,
            "fpga": host_core_bytes_per_s * self.fpga_speedup,
            "cpu": host_core_bytes_per_s * self.cpu_per_clock_ratio,
        }


@dataclass(frozen=True)
class Measurement:
    """What one profiling run measured (all rates over the raw input, one core)."""

    app: str
    input_bytes: int
    output_bytes: int
    device_s: float
    host_s: float
    host_frequency_hz: float
    passes: int
    notes: list[str] = field(default_factory=list)

    @property
    def alpha(self) -> float:
        return self.input_bytes / max(self.output_bytes, 1)

    @property
    def device_bytes_per_s(self) -> float:
        return self.input_bytes / self.device_s

    @property
    def host_part_bytes_per_s(self) -> float:
        return self.input_bytes / self.host_s if self.host_s > 0 else float("inf")

    @property
    def host_only_bytes_per_s(self) -> float:
        """The whole kernel on one host core: device part then host part."""
        return self.input_bytes / (self.device_s + self.host_s)

    @property
    def cycles_per_byte(self) -> float:
        return self.host_frequency_hz / self.host_only_bytes_per_s

    def as_dict(self) -> dict[str, Any]:
        return {
            **asdict(self),
            "alpha": self.alpha,
            "device_bytes_per_s": self.device_bytes_per_s,
            "host_part_bytes_per_s": self.host_part_bytes_per_s,
            "host_only_bytes_per_s": self.host_only_bytes_per_s,
            "cycles_per_byte": self.cycles_per_byte,
        }


def host_frequency_hz(default: float = 2.0e9) -> float:
    """This host's nominal clock from /proc/cpuinfo ('cpu MHz'), else `default`."""
    try:
        text = Path("/proc/cpuinfo").read_text(encoding="utf-8")
    except OSError:
        return default
    for line in text.splitlines():
        if line.startswith("cpu MHz"):
            try:
                return float(line.split(":", 1)[1]) * 1e6
            except ValueError:
                break
    return default


def measure(
    kernel: Kernel,
    data: np.ndarray,
    params: dict[str, Any],
    *,
    chunk_records: int | None = None,
    frequency_hz: float | None = None,
    repeat: int = 3,
) -> Measurement:
    """Time the device and host parts on one core over `data` (best of `repeat`)."""
    if len(data) == 0:
        raise SpecError("cannot profile an empty data set", field=kernel.name)
    chunk = chunk_records or max(1, (4 << 20) // max(kernel.record_bytes, 1))
    best_device, best_host = float("inf"), float("inf")
    output_bytes, passes = 0, 0
    for _ in range(max(repeat, 1)):
        device_s, host_s, output_bytes, passes = _one_run(kernel, data, params, chunk)
        best_device, best_host = min(best_device, device_s), min(best_host, host_s)
    return Measurement(
        app=kernel.name,
        input_bytes=int(data.nbytes) * passes,
        output_bytes=output_bytes,
        device_s=best_device,
        host_s=best_host,
        host_frequency_hz=frequency_hz or host_frequency_hz(),
        passes=passes,
    )


def _one_run(
    kernel: Kernel, data: np.ndarray, params: dict[str, Any], chunk: int
) -> tuple[float, float, int, int]:
    state = kernel.init(params)
    device_s = host_s = 0.0
    output_bytes = passes = 0
    done = False
    while not done:
        passes += 1
        start = time.perf_counter()
        partials = [
            kernel.device(data[i : i + chunk], state, i) for i in range(0, len(data), chunk)
        ]
        merged = kernel.merge(partials)
        device_s += time.perf_counter() - start
        output_bytes += sum(kernel.output_bytes(p) for p in partials)
        start = time.perf_counter()
        state, done = kernel.host(merged, state)
        host_s += time.perf_counter() - start
    return device_s, host_s, output_bytes, passes


def to_profile(
    m: Measurement,
    *,
    data_bytes: float | None = None,
    scaling: EngineScaling | None = None,
    target_host: Host | None = None,
) -> Profile:
    """A `Profile` for the models: D (default: the profiled size), α, host rates, CPB, and
    engine rates by kind from the scaling model.

    With `target_host`, the one-core host rates are scaled to that host: x cores x
    (f_target / f_here), i.e. the host part is assumed to parallelise perfectly (an upper
    bound; the measured per-core CPB is kept as is)."""
    scaling = scaling or EngineScaling()
    rates = scaling.rates(m.device_bytes_per_s, m.host_frequency_hz)
    scale = 1.0
    if target_host is not None:
        scale = target_host.cores * target_host.frequency_hz / m.host_frequency_hz
    return Profile.model_validate(
        {
            "app": m.app,
            "description": f"measured on this host ({os.cpu_count()} cores), one core",
            "data_bytes": float(data_bytes or m.input_bytes / m.passes),
            "alpha": m.alpha,
            "host_part_bytes_per_s": m.host_part_bytes_per_s * scale
            if np.isfinite(m.host_part_bytes_per_s)
            else None,
            "host_only_bytes_per_s": m.host_only_bytes_per_s * scale,
            "engine_bytes_per_s": rates,
            "cycles_per_byte": m.cycles_per_byte,
        },
        context={"si": True},
    )


def save(measurements: list[Measurement], path: Path) -> None:
    """Write measurements as JSON, atomically (temporary name, then rename)."""
    write_atomic(path, json.dumps([m.as_dict() for m in measurements], indent=2))
