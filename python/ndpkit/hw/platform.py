"""A whole machine: host, links, switches, storage devices and NDP engines."""

from __future__ import annotations

from typing import Any

from pydantic import Field, ValidationError, model_validator

from ndpkit.errors import SpecError
from ndpkit.hw.engine import Engine
from ndpkit.hw.host import Host
from ndpkit.hw.link import Link
from ndpkit.hw.spec import Spec
from ndpkit.hw.storage import StorageDevice
from ndpkit.hw.switch import PcieSwitch, SwitchLayer


class Platform(Spec):
    """A machine description, loaded from a TOML file (see `ndpkit.hw.load_platform`).

    Data flows SSD → switch layer → engine → PCIe switch → `host_link` → host.
    A platform without `engines` is a conventional server (CNS): raw data
    crosses `host_link` and the host does all the work.
    """

    version: int = Field(1, ge=1, le=1, description="spec format version")
    name: str = Field(min_length=1)
    description: str = ""
    source: str = Field("", description="where the values come from (paper, table)")
    host: Host
    host_link: Link = Field(description="PCIe switch to host DRAM (e.g. 48 lanes, 36 GB/s)")
    pcie_switch: PcieSwitch = Field(default_factory=PcieSwitch)
    storage: StorageDevice
    engines: Engine | None = None
    switch_layer: SwitchLayer = Field(default_factory=SwitchLayer)

    @model_validator(mode="after")
    def _consistent(self) -> Platform:
        k = self.switch_layer.module_size(self.storage.count)
        if k > self.storage.count:
            raise ValueError(
                f"switch_layer.scheme {self.switch_layer.scheme!r} spans {k} devices "
                f"but storage.count is {self.storage.count}"
            )
        if k > 1 and self.engines is None:
            raise ValueError(
                f"switch_layer.scheme {self.switch_layer.scheme!r} routes SSDs to engines, "
                "but the platform has no [engines]"
            )
        if self.engines is not None and self.engines.count != self.storage.count:
            raise ValueError(
                f"engines.count ({self.engines.count}) must equal storage.count "
                f"({self.storage.count}): there is one engine beside each device"
            )
        return self

    @property
    def devices(self) -> int:
        return self.storage.count

    @property
    def has_engines(self) -> bool:
        return self.engines is not None

    def with_scheme(self, scheme: str) -> Platform:
        """The same machine with another switch-layer scheme (mux1 = no switch layer)."""
        data = self.model_dump(by_alias=False)
        data["switch_layer"]["scheme"] = scheme
        self._rescale_switch_power(data, self.devices, scheme)
        return self._revalidate(data, "switch_layer.scheme")

    def with_engine_count(self, count: int) -> Platform:
        """The same machine scaled to `count` devices and engines (for sweeps)."""
        data = self.model_dump(by_alias=False)
        data["storage"]["count"] = count
        if data.get("engines") is not None:
            data["engines"]["count"] = count
        if count != self.devices:
            # Values published for this machine (e.g. its measured full-server times) no
            # longer apply under the same name.
            data["name"] = f"{self.name}-x{count}"
            self._rescale_switch_power(data, count, self.switch_layer.scheme)
        return self._revalidate(data, "storage.count")

    def _rescale_switch_power(self, data: dict[str, Any], devices: int, scheme: str) -> None:
        """A declared switch-layer total is for this layer's mux elements; scale it by count."""
        layer = self.switch_layer
        total, before = layer.power_total_w, layer.elements(self.devices)
        if total is None or not before:
            return
        after = layer.model_copy(update={"scheme": scheme}).elements(devices)
        data["switch_layer"]["power_total_w"] = total * after / before

    def _revalidate(self, data: dict[str, Any], field: str) -> Platform:
        try:
            return Platform.model_validate(data, context={"si": True})
        except ValidationError as exc:
            message = exc.errors()[0]["msg"].removeprefix("Value error, ")
            raise SpecError(message, source=f"platform {self.name}", field=field) from None
