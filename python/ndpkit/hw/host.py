"""The host: CPU sockets, cores, frequency, DRAM and its power when active and idle."""

from __future__ import annotations

from pydantic import Field, model_validator

from ndpkit.hw.quantity import Count, Energy, Frequency, Power, Size
from ndpkit.hw.spec import Spec, check_busy_power


class Host(Spec):
    """Host CPUs and DRAM.

    Power comes in one of two forms. RANS/RFNS measures the whole server with the host
    active or idle (`power_active`, `power_idle`, §5.1). RISP prices the host by
    component: `energy_per_cycle` per CPU cycle, and `dram_power` and `chipset_power`
    for the whole run (RISP Table III).
    """

    description: str = ""
    sockets: Count = Field(1, description="CPU sockets")
    cores_per_socket: Count = Field(description="physical cores per socket")
    threads_per_core: Count = Field(1, description="hardware threads per core")
    frequency_hz: Frequency = Field(alias="frequency", description="core clock, e.g. '3.0 GHz'")
    dram_bytes: Size | None = Field(None, alias="dram", description="host DRAM, e.g. '128 GiB'")
    power_active_w: Power = Field(
        0.0, alias="power_active", description="whole-server power with the host busy"
    )
    power_idle_w: Power = Field(
        0.0, alias="power_idle", description="whole-server power with the host idle"
    )
    energy_per_cycle_j: Energy | None = Field(
        None, alias="energy_per_cycle", description="CPU energy per cycle (RISP's EPC)"
    )
    dram_power_w: Power = Field(0.0, alias="dram_power", description="host DRAM (DDR) power")
    chipset_power_w: Power = Field(0.0, alias="chipset_power", description="host chipset power")

    @model_validator(mode="after")
    def _powers(self) -> Host:
        check_busy_power(self.power_active_w, self.power_idle_w, "power_active")
        return self

    @property
    def cores(self) -> int:
        return self.sockets * self.cores_per_socket
