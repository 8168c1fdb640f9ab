"""The parts of a reconfigurable unit (RU) beyond its per-channel cells (RISP §2).

The public processing cell coordinates the channel cells, aggregates their partial
results and writes the final results to the on-device DRAM. Its power, with the
fabric's static power, is the RU's fixed part: with k channel cells configured the
RU draws P_RU(app, k) = public_cell.power(app) + k x engines.power(app)
(`ru_power = linear_per_cell`, RISP option R6).
"""

from __future__ import annotations

from pydantic import Field

from ndpkit.hw.quantity import Count, Frequency, Power, Size
from ndpkit.hw.spec import Spec


class PublicCell(Spec):
    """The RU's shared cell and fixed (static) power; its idle power is the whole RU's."""

    description: str = ""
    power_active_w: Power = Field(0.0, alias="power_active")
    power_active_by_app: dict[str, Power] = Field(default_factory=dict)
    power_idle_w: Power = Field(
        0.0, alias="power_idle", description="the whole RU's power while it is not computing"
    )
    reference_cells: Count = Field(
        16,
        description="cells at which the per-app power was estimated (RISP Table IV: 16)",
    )

    def power_on_w(self, app: str) -> float:
        return self.power_active_by_app.get(app, self.power_active_w)


class Reconfiguration(Spec):
    """Loading a bitstream: time = bitstream / (port width x clock), energy = power x time."""

    description: str = ""
    bitstream_bytes: Size = Field(alias="bitstream", description="largest bitstream, e.g. '4 MB'")
    port_width_bytes: Size = Field(alias="port_width", description="configuration port, '4 B'")
    clock_hz: Frequency = Field(alias="clock", description="configuration clock (CCLK)")
    power_w: Power = Field(alias="power", description="partial-reconfiguration power")

    @property
    def time_s(self) -> float:
        return self.bitstream_bytes / (self.port_width_bytes * self.clock_hz)

    @property
    def energy_j(self) -> float:
        return self.power_w * self.time_s
