"""One reproduction run's state: its settings, the devices, the one seeded RNG every
experiment draws from (in the paper's order, so a seed fixes every input), and the CPU
measurements made once per run."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Literal

import numpy as np

from ndpkit.nascent.devices import CpuDevice, DeviceSet, FpgaDevice, load_devices
from ndpkit.reproduce.nascent2.settings import Settings

Progress = Callable[[str], None]
Basis = Literal["measured", "extrapolated"]


@dataclass(frozen=True)
class Context:
    settings: Settings
    smartssd: FpgaDevice
    fpga: FpgaDevice
    cpu: CpuDevice
    rng: np.random.Generator
    report: Progress
    devices: DeviceSet
    """Every device loaded (the simulation takes them by name)."""
    cache: dict[tuple[str, int], float] = field(default_factory=dict)
    """Measurements made once per run: ("sort64", n), ("hostsort", U), ("shuffle", …)."""


def new_context(settings: Settings, progress: Progress | None = None) -> Context:
    """A fresh run: the devices loaded (file and overrides applied) and the RNG seeded."""
    devices = load_devices(settings.devices_file, settings.overrides)
    return Context(
        settings,
        devices.fpga("smartssd"),
        devices.fpga("u250"),
        devices.cpu("cpu"),
        np.random.default_rng(settings.seed),
        progress or (lambda _: None),
        devices,
    )
