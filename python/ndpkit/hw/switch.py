"""Switches: the PCIe switch that fans out to the devices, and the NDP switch layer.

The NDP switch layer sits between the SSDs and the engines (RANS/RFNS §2.6).
`mux1` wires each SSD to its own engine; `mux2` adds a 2:1 mux per pair so an
engine can also serve its right neighbour's SSD; `muxk` generalises to modules
of k neighbouring SSDs and engines; `muxn` connects any SSD to any engine.
"""

from __future__ import annotations

import math
import re

from pydantic import Field, field_validator, model_validator

from ndpkit.hw.quantity import Bandwidth, Count, Power
from ndpkit.hw.spec import FieldValueError, Spec

_SCHEME = re.compile(r"mux([1-9][0-9]*|n)")


def check_scheme(value: str) -> str:
    """`value` if it is a switch-layer scheme (mux1, mux2, …, muxk, muxn), else ValueError."""
    if not _SCHEME.fullmatch(value):
        raise ValueError(f"scheme must be mux1, mux2, …, muxk or muxn, got {value!r}")
    return value


class PcieSwitch(Spec):
    """The PCIe switch between the devices/engines and the host's lanes."""

    description: str = ""
    lanes_device_side: Count | None = None
    lanes_host_side: Count | None = None
    power_w: Power = Field(0.0, alias="power")


class SwitchLayer(Spec):
    """The NDP switch layer: multiplexers that route SSDs to engines."""

    description: str = ""
    scheme: str = Field("mux1", description="mux1, mux2, …, muxk, or muxn")
    element_power_w: Power = Field(
        0.0, alias="element_power", description="power of one mux element (one per module)"
    )
    power_total_w: Power | None = Field(
        None,
        alias="power_total",
        description="declared total power of the layer; wins over element_power x elements",
    )
    power_total_elements: Count | None = Field(
        None,
        description="the mux elements power_total is declared for, where not this layer's "
        "own (a layer rewired to mux1 keeps its total): charged per element",
    )
    port_bandwidth_bytes_per_s: Bandwidth | None = Field(
        None, alias="port_bandwidth", description="bandwidth of one switched port, e.g. '20 Gbps'"
    )

    @field_validator("scheme")
    @classmethod
    def _known_scheme(cls, value: str) -> str:
        return check_scheme(value)

    def module_size(self, devices: int) -> int:
        """k: how many neighbouring SSDs one module (and one mux element) spans."""
        k = self.scheme[3:]
        return devices if k == "n" else int(k)

    def modules(self, devices: int) -> int:
        return math.ceil(devices / self.module_size(devices))

    def elements(self, devices: int) -> int:
        """Mux elements in the layer: one per module that has something to switch."""
        k = self.module_size(devices)
        if k == 1:
            return 0
        full, rest = divmod(devices, k)
        return full + (1 if rest > 1 else 0)

    def power_w(self, devices: int, *, declared_total: bool = True) -> float:
        """Power of the whole layer (the paper charges its declared upper bound, 18 mW); a
        total declared for `power_total_elements` other elements is charged per element."""
        elements = self.elements(devices)
        if elements == 0:
            return 0.0
        if declared_total and self.power_total_w is not None:
            if self.power_total_elements is None:
                return self.power_total_w
            return self.power_total_w * elements / self.power_total_elements
        return self.element_power_w * elements

    @model_validator(mode="after")
    def _total_for_elements(self) -> SwitchLayer:
        if self.power_total_elements is not None and self.power_total_w is None:
            raise FieldValueError(
                "power_total_elements",
                "power_total_elements says how many mux elements power_total is for, and "
                "there is no power_total",
                others=("power_total",),
            )
        return self
