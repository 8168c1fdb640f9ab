"""Storage devices: SSDs of one model, replicated `count` times.

An SSD may be described at the level of its flash channels (RISP): n channels of
`channel_bandwidth` each, the NVM power per channel, the on-device DRAM that buffers
results, and the controller (embedded CPUs, FTL, chipset). The device's read
bandwidth is then n x channel_bandwidth unless `read_bandwidth` caps it.
"""

from __future__ import annotations

from pydantic import Field, model_validator

from ndpkit.hw.link import Link
from ndpkit.hw.quantity import Bandwidth, Count, Frequency, Power, Size
from ndpkit.hw.spec import Spec, check_busy_power


class DeviceDram(Spec):
    """On-device DRAM ("global memory"): the results buffer the host reads by DMA."""

    description: str = ""
    bandwidth_bytes_per_s: Bandwidth = Field(alias="bandwidth", description="e.g. '15 GB/s'")
    power_active_w: Power = Field(0.0, alias="power_active")
    power_idle_w: Power = Field(0.0, alias="power_idle")

    @model_validator(mode="after")
    def _powers(self) -> DeviceDram:
        check_busy_power(self.power_active_w, self.power_idle_w, "power_active")
        return self


class Controller(Spec):
    """The SSD controller: embedded CPU(s) running the FTL, and the SSD chipset."""

    description: str = ""
    cores: Count = Field(1, description="embedded CPU cores (informative)")
    frequency_hz: Frequency | None = Field(None, alias="frequency")
    power_active_w: Power = Field(0.0, alias="power_active")
    power_idle_w: Power = Field(0.0, alias="power_idle")

    @model_validator(mode="after")
    def _powers(self) -> Controller:
        check_busy_power(self.power_active_w, self.power_idle_w, "power_active")
        return self


class StorageDevice(Spec):
    """An SSD model and how many of them the platform holds (`count`)."""

    description: str = ""
    count: Count = Field(description="number of identical devices")
    read_bandwidth_bytes_per_s: Bandwidth | None = Field(
        None,
        alias="read_bandwidth",
        description="sequential read of one device (default: channels x channel_bandwidth)",
    )
    write_bandwidth_bytes_per_s: Bandwidth | None = Field(None, alias="write_bandwidth")
    capacity_bytes: Size | None = Field(None, alias="capacity")
    channels: Count | None = Field(None, description="flash channels per device")
    channel_bandwidth_bytes_per_s: Bandwidth | None = Field(
        None, alias="channel_bandwidth", description="read bandwidth of one flash channel (b_ch)"
    )
    channel_power_active_w: Power = Field(
        0.0, alias="channel_power_active", description="NVM power of one channel while reading"
    )
    channel_power_idle_w: Power = Field(0.0, alias="channel_power_idle")
    link: Link | None = Field(None, description="the device's own interface (e.g. PCIe x4)")
    dram: DeviceDram | None = Field(None, description="on-device DRAM")
    controller: Controller | None = Field(None, description="embedded CPUs and SSD chipset")
    power_active_w: Power = Field(
        0.0, alias="power_active", description="per device; the RANS/RFNS paper charges none"
    )
    power_idle_w: Power = Field(0.0, alias="power_idle")

    @model_validator(mode="after")
    def _bandwidth_given(self) -> StorageDevice:
        check_busy_power(self.power_active_w, self.power_idle_w, "power_active")
        check_busy_power(
            self.channel_power_active_w, self.channel_power_idle_w, "channel_power_active"
        )
        if self.read_bandwidth_bytes_per_s is None and self.channel_bandwidth_bytes_per_s is None:
            raise ValueError("give read_bandwidth, or channels and channel_bandwidth")
        if self.channel_bandwidth_bytes_per_s is not None and self.channels is None:
            raise ValueError("channel_bandwidth needs channels (the number of flash channels)")
        return self

    @property
    def is_channel_level(self) -> bool:
        """Described per flash channel (RISP), so models can enable channels one by one."""
        return self.channel_bandwidth_bytes_per_s is not None

    @property
    def media_bandwidth_bytes_per_s(self) -> float:
        """What the flash delivers: the declared read bandwidth, else n x channel bandwidth."""
        if self.read_bandwidth_bytes_per_s is not None:
            return self.read_bandwidth_bytes_per_s
        assert self.channel_bandwidth_bytes_per_s is not None and self.channels is not None
        return self.channels * self.channel_bandwidth_bytes_per_s

    @property
    def device_bandwidth_bytes_per_s(self) -> float:
        """What one device delivers: its media or its interface, whichever is slower."""
        if self.link is None:
            return self.media_bandwidth_bytes_per_s
        return min(self.media_bandwidth_bytes_per_s, self.link.bandwidth_bytes_per_s)
