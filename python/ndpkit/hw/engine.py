"""NDP engines: an ARM core, an FPGA partition or a CPU beside each storage device, or a
processing cell beside each flash channel inside one SSD (RISP).

An FPGA cell may be described by its design instead of a measured rate: it takes
`bytes_per_cycle[app]` bytes (RISP's α) per clock at `frequency` (f_RU), after a
pipeline fill of `pipeline_delay[app]` cycles (n_delay). Its throughput is then
bytes_per_cycle x frequency.
"""

from __future__ import annotations

from typing import Literal

from pydantic import Field, model_validator

from ndpkit.errors import ModelError
from ndpkit.hw.cell import Reconfiguration
from ndpkit.hw.quantity import (
    Bandwidth,
    Count,
    Cycles,
    Energy,
    Frequency,
    PositiveNumber,
    Power,
    Rate,
    Time,
)
from ndpkit.hw.spec import FieldValueError, Spec, check_busy_power

EngineKind = Literal["arm", "fpga", "cpu"]
Placement = Literal["device", "channel"]


class Engine(Spec):
    """One NDP engine model, replicated `count` times (one per storage device by default).

    `throughput` is the per-kernel throughput model: a single engine's processing
    bandwidth for each application, measured against the raw input size. Power may
    depend on the kernel too (an FPGA draws more with a bigger design), so
    `power_active_by_app` overrides `power_active` per application.
    """

    description: str = ""
    kind: EngineKind
    count: Count = Field(description="number of engines")
    placement: Placement = Field(
        "device", description="one engine per storage device, or one per flash channel (RISP)"
    )
    cores: Count | None = Field(
        None,
        description="cores per engine (ARM/CPU); unset, the mapping of a measured rate assumes "
        "its own default (EngineScaling)",
    )
    frequency_hz: Frequency | None = Field(None, alias="frequency")
    power_active_w: Power = Field(alias="power_active", description="power while on")
    power_idle_w: Power | None = Field(
        None,
        alias="power_idle",
        description="power while on but waiting; defaults to power_active (the paper's view)",
    )
    power_off_w: Power = Field(0.0, alias="power_off", description="power while switched off")
    power_active_by_app: dict[str, Power] = Field(default_factory=dict)
    throughput: dict[str, Rate] = Field(
        default_factory=dict, description="single-engine bandwidth per application"
    )
    bytes_per_cycle: dict[str, PositiveNumber] = Field(
        default_factory=dict, description="FPGA cell design: bytes taken per clock, per app (α)"
    )
    reconfiguration: Reconfiguration | None = Field(
        None, description="loading a new kernel's bitstream (RISP §3.2)"
    )
    wake_time_s: Time = Field(
        0.0, alias="wake_time", description="off to on: time before it can compute (simulator)"
    )
    wake_energy_j: Energy = Field(
        0.0, alias="wake_energy", description="off to on: energy of one transition (simulator)"
    )
    link_bandwidth_bytes_per_s: Bandwidth | None = Field(
        None,
        alias="link_bandwidth",
        description="each engine's own port to the PCIe switch, e.g. '4 GB/s' (simulator); "
        "unset = not a limit",
    )
    pipeline_delay_cycles: dict[str, Cycles] = Field(
        default_factory=dict,
        alias="pipeline_delay",
        description="FPGA cell design: cycles from first input to first output, per app",
    )

    @model_validator(mode="after")
    def _clocked(self) -> Engine:
        if self.bytes_per_cycle and self.frequency_hz is None:
            raise ValueError("bytes_per_cycle needs the cell's clock: set frequency")
        both = sorted(set(self.bytes_per_cycle) & set(self.throughput))
        if both:
            # The in-storage model reads the cell design first, the server model the
            # throughput: with both, the two models would disagree about one engine.
            raise ValueError(f"{', '.join(both)}: in both throughput and bytes_per_cycle; give one")
        check_busy_power(self.power_active_w, self.power_idle_w, "power_active")
        for app, watts in self.power_active_by_app.items():
            check_busy_power(watts, self.power_idle_w, f"power_active_by_app.{app}")
        # Off draws no more than on: 100 W off beside 5.76 W on priced every engine a plan
        # switched off at 100 W. (Checked against the lowest power the engine draws on.)
        on_w = min([self.power_active_w, *self.power_active_by_app.values()])
        if self.power_idle_w is not None:
            on_w = min(on_w, self.power_idle_w)
        if self.power_off_w > on_w:
            raise FieldValueError(
                "power_off",
                f"power_off ({self.power_off_w:g} W) is above the engine's power while on "
                f"({on_w:g} W, its lowest of power_active, power_idle and "
                "power_active_by_app): switched off, it draws less",
                others=("power_active", "power_idle", "power_active_by_app"),
            )
        return self

    def power_on_w(self, app: str) -> float:
        """Power of one engine that is on and running `app`."""
        return self.power_active_by_app.get(app, self.power_active_w)

    def power_waiting_w(self, app: str) -> float:
        """Power of one engine that is on but has no work (defaults to its active power)."""
        return self.power_on_w(app) if self.power_idle_w is None else self.power_idle_w

    def has_rate_for(self, app: str) -> bool:
        """Whether the platform gives `app` a rate of its own (a throughput entry or a cell
        design), which wins over a profile's measured or scaled engine rate."""
        return app in self.throughput or app in self.bytes_per_cycle

    def bandwidth_bytes_per_s(self, app: str) -> float:
        """One engine's processing bandwidth for `app`: the throughput table, else the
        cell design (bytes per cycle x clock)."""
        if app not in self.throughput and app in self.bytes_per_cycle:
            assert self.frequency_hz is not None  # checked by _clocked
            return self.bytes_per_cycle[app] * self.frequency_hz
        try:
            return self.throughput[app]
        except KeyError:
            known = ", ".join(sorted(self.throughput)) or "none"
            raise ModelError(
                f"engine ({self.kind}) has no throughput for app {app!r} "
                f"(it has: {known}); add engines.throughput.{app} to the platform "
                "or give a profile with an engine measurement"
            ) from None
