"""One reproduction run's state: its settings, the devices, a seeded RNG per experiment and
the CPU measurements made once per run.

Each experiment draws from its own stream, `default_rng([seed, stream])`, so its inputs (and
every number computed from them) are the same whether it runs alone or after others."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field, replace
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
    """Measurements made once per run: ("sort64", n), ("hostsort", U), ("shuffle", …).
    Shared by every experiment: they are times, whatever random data they were taken on."""

    def for_experiment(self, stream: int) -> Context:
        """This run for one experiment: the same devices and measurements, and an RNG of
        its own seeded with (seed, `stream`); `stream` must be fixed per experiment."""
        return replace(self, rng=np.random.default_rng([self.settings.seed, stream]))


USED_DEVICES = ("smartssd", "u250", "cpu")
"""The devices the experiments take: NASCENT2's SmartSSD and its two baselines."""


def new_context(settings: Settings, progress: Progress | None = None) -> Context:
    """A fresh run: the devices loaded (file and overrides applied) and the RNG seeded."""
    devices = load_devices(settings.devices_file, settings.overrides, used=USED_DEVICES)
    return Context(
        settings,
        devices.fpga(USED_DEVICES[0]),
        devices.fpga(USED_DEVICES[1]),
        devices.cpu(USED_DEVICES[2]),
        np.random.default_rng(settings.seed),
        progress or (lambda _: None),
        devices,
    )
