"""A data path with a bandwidth and a latency: PCIe lanes, SATA, a NIC, a channel bus."""

from __future__ import annotations

from pydantic import Field

from ndpkit.hw.quantity import Bandwidth, Count, Power, Time
from ndpkit.hw.spec import Spec


class Link(Spec):
    """A point-to-point data path."""

    description: str = ""
    bandwidth_bytes_per_s: Bandwidth = Field(alias="bandwidth", description="e.g. '36 GB/s'")
    latency_s: Time = Field(0.0, alias="latency", description="one-way latency, e.g. '1 us'")
    lanes: Count | None = Field(None, description="PCIe lanes, informative")
    power_active_w: Power = Field(
        0.0, alias="power_active", description="interface power while moving data (RISP P_IO)"
    )
    power_idle_w: Power = Field(0.0, alias="power_idle", description="interface power otherwise")
