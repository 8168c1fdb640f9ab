"""The host: CPU sockets, cores, frequency, DRAM and its power when active and idle."""

from __future__ import annotations

from pydantic import Field

from ndpkit.hw.quantity import Frequency, Power, Size
from ndpkit.hw.spec import Spec


class Host(Spec):
    """Host CPUs and DRAM. Power is the whole server's, host active or idle (RANS/RFNS §5.1)."""

    description: str = ""
    sockets: int = Field(1, ge=1, description="CPU sockets")
    cores_per_socket: int = Field(ge=1, description="physical cores per socket")
    threads_per_core: int = Field(1, ge=1, description="hardware threads per core")
    frequency_hz: Frequency = Field(alias="frequency", description="core clock, e.g. '3.0 GHz'")
    dram_bytes: Size | None = Field(None, alias="dram", description="host DRAM, e.g. '128 GiB'")
    power_active_w: Power = Field(alias="power_active", description="power with the host busy")
    power_idle_w: Power = Field(alias="power_idle", description="power with the host idle")

    @property
    def cores(self) -> int:
        return self.sockets * self.cores_per_socket
