"""A `Measurement` for tests: 1 MB in, 125 kB out (α = 8), 10 ms on the device, 2 ms on the
host at 2 GHz, one pass; `changes` override any field."""

from __future__ import annotations

from typing import Any

from ndpkit.runtime.profiling import Measurement


def measurement(**changes: Any) -> Measurement:
    values: dict[str, Any] = {
        "app": "x",
        "input_bytes": 1_000_000,
        "output_bytes": 125_000,
        "device_s": 0.01,
        "host_s": 0.002,
        "host_frequency_hz": 2.0e9,
        "passes": 1,
    }
    return Measurement(**(values | changes))
