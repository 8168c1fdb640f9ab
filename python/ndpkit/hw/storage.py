"""Storage devices: SSDs of one model, replicated `count` times."""

from __future__ import annotations

from pydantic import Field

from ndpkit.hw.link import Link
from ndpkit.hw.quantity import Bandwidth, Power, Size
from ndpkit.hw.spec import Spec


class StorageDevice(Spec):
    """An SSD model and how many of them the platform holds (`count`)."""

    description: str = ""
    count: int = Field(ge=1, description="number of identical devices")
    read_bandwidth_bytes_per_s: Bandwidth = Field(
        alias="read_bandwidth", description="sequential read bandwidth of one device"
    )
    write_bandwidth_bytes_per_s: Bandwidth | None = Field(None, alias="write_bandwidth")
    capacity_bytes: Size | None = Field(None, alias="capacity")
    channels: int | None = Field(None, ge=1, description="flash channels per device")
    link: Link | None = Field(None, description="the device's own interface (e.g. PCIe x4)")
    power_active_w: Power = Field(
        0.0, alias="power_active", description="per device; the RANS/RFNS paper charges none"
    )
    power_idle_w: Power = Field(0.0, alias="power_idle")

    @property
    def device_bandwidth_bytes_per_s(self) -> float:
        """What one device delivers: its media or its interface, whichever is slower."""
        if self.link is None:
            return self.read_bandwidth_bytes_per_s
        return min(self.read_bandwidth_bytes_per_s, self.link.bandwidth_bytes_per_s)
