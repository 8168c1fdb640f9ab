"""A whole machine: host, links, switches, storage devices and NDP engines."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, Self

from pydantic import Field, ValidationError, field_validator, model_validator

from ndpkit.errors import SpecError
from ndpkit.hw.cell import PublicCell
from ndpkit.hw.engine import Engine
from ndpkit.hw.host import Host
from ndpkit.hw.interfaces import interface_spec
from ndpkit.hw.link import Link
from ndpkit.hw.quantity import FormatVersion
from ndpkit.hw.spec import FieldValueError, LoadedFrom, Spec
from ndpkit.hw.storage import StorageDevice
from ndpkit.hw.switch import PcieSwitch, SwitchLayer, check_scheme


class Platform(Spec):
    """A machine description, loaded from a TOML file (see `ndpkit.hw.load_platform`).

    Data flows SSD → switch layer → engine → PCIe switch → `host_link` → host.
    A platform without `engines` is a conventional server (CNS): raw data
    crosses `host_link` and the host does all the work.

    An *in-storage* platform (RISP) describes its SSD per flash channel and may put a
    processing cell beside each channel (`engines.placement = "channel"`) with a
    `public_cell` that coordinates them. Data flows channel → cell → public cell →
    on-device DRAM → `host_link` (the SSD's host interface) → host.
    """

    version: FormatVersion = Field(1, description="spec format version")
    name: str
    description: str = ""
    source: str = Field("", description="where the values come from (paper, table)")
    host: Host
    host_link: Link = Field(description="PCIe switch to host DRAM (e.g. 48 lanes, 36 GB/s)")
    pcie_switch: PcieSwitch = Field(default_factory=PcieSwitch)
    storage: StorageDevice
    engines: Engine | None = None
    switch_layer: SwitchLayer = Field(default_factory=SwitchLayer)
    public_cell: PublicCell | None = Field(
        None, description="in-storage: the RU's shared cell and fixed power (RISP)"
    )

    @field_validator("name")
    @classmethod
    def _not_blank(cls, value: str) -> str:
        """An empty name, or one of spaces (which was "  " in every report and table)."""
        if not value.strip():
            raise ValueError(f"is empty or blank, got {value!r}: give the platform a name")
        if value != value.strip():
            # "rans " is no "rans" to a lookup by name (--wall-times, a profile's engines),
            # and looks the same in every table
            raise ValueError(f"has spaces at its start or end, got {value!r}: remove them")
        return value

    @model_validator(mode="after")
    def _consistent(self) -> Platform:
        if self.storage.is_channel_level and self.storage.count != 1:
            raise FieldValueError(
                "storage.count",
                f"a platform described per flash channel models one SSD (storage.count = 1), "
                f"got {self.storage.count}",
            )
        if self.engines is not None and self.engines.placement == "channel":
            return self._consistent_in_storage()
        if self.public_cell is not None:
            raise FieldValueError(
                "public_cell",
                "public_cell needs channel cells: engines.placement = 'channel'",
                others=("engines.placement",),
            )
        k = self.switch_layer.module_size(self.storage.count)
        if k > self.storage.count:
            raise FieldValueError(
                "switch_layer.scheme",
                f"switch_layer.scheme {self.switch_layer.scheme!r} spans {k} devices "
                f"but storage.count is {self.storage.count}",
                others=("storage.count",),
            )
        if k > 1 and self.engines is None:
            raise FieldValueError(
                "switch_layer.scheme",
                f"switch_layer.scheme {self.switch_layer.scheme!r} routes SSDs to engines, "
                "but the platform has no [engines]",
            )
        if self.engines is not None and self.engines.count != self.storage.count:
            raise FieldValueError(
                "engines.count",
                f"engines.count ({self.engines.count}) must equal storage.count "
                f"({self.storage.count}): there is one engine beside each device",
                others=("storage.count",),
            )
        return self

    def _consistent_in_storage(self) -> Platform:
        storage, engines = self.storage, self.engines
        assert engines is not None
        if storage.count != 1:
            raise FieldValueError(
                "storage.count",
                f"an in-storage platform models one SSD (storage.count = 1), got "
                f"{storage.count}; describe its channels with storage.channels",
            )
        if not storage.is_channel_level or storage.channels is None:
            raise FieldValueError(
                "engines.placement",
                "engines.placement = 'channel' needs storage.channels and "
                "storage.channel_bandwidth",
                others=("storage.channel_bandwidth", "storage.channels"),
            )
        if storage.dram is None:
            # Said when the file is read, naming it: the model's own error came only at the
            # first estimate, and named the platform, not the file.
            raise FieldValueError(
                "storage.dram",
                "engines.placement = 'channel' needs [storage.dram] (the on-device DRAM the "
                "cells' data passes through, Eq. 7): at least its bandwidth",
            )
        if engines.count != storage.count * storage.channels:
            raise FieldValueError(
                "engines.count",
                f"engines.count ({engines.count}) must equal storage.count x storage.channels "
                f"({storage.count * storage.channels}): there is one cell beside each channel",
                others=("storage.channels", "storage.count"),
            )
        if self.switch_layer.scheme != "mux1":
            raise FieldValueError(
                "switch_layer.scheme",
                "an in-storage platform groups channels onto cells itself; "
                "leave switch_layer.scheme at mux1",
            )
        if self.public_cell is not None:
            _check_ru_idle(self.public_cell, engines)
        return self

    @property
    def devices(self) -> int:
        return self.storage.count

    @property
    def is_in_storage(self) -> bool:
        """Described per flash channel (RISP): the in-storage models apply."""
        return self.storage.is_channel_level

    @property
    def channels(self) -> int:
        """Flash channels over all devices (0 if the SSD is not described per channel)."""
        return self.storage.count * (self.storage.channels or 0) if self.is_in_storage else 0

    def with_channels(self, channels: int) -> Platform:
        """The same SSD with `channels` flash channels per device (and as many cells)."""
        data = self.model_dump(by_alias=False)
        data["storage"]["channels"] = channels
        engines = data.get("engines")
        if engines is not None and engines.get("placement") == "channel":
            engines["count"] = channels * self.storage.count
        if channels != self.storage.channels:
            data["name"] = f"{self.name}-{channels}ch"
        return self._revalidate(data, "storage.channels")

    def with_interface(self, interface: str) -> Platform:
        """The same machine behind another named host interface (sata-3.2, pcie3-x4, …)."""
        data = self.model_dump(by_alias=False)
        data["host_link"] = interface_spec(interface)
        return self._revalidate(data, "host_link")

    def with_cell_clock(self, frequency_hz: float) -> Platform:
        """The same machine with its engines (cells) clocked at `frequency_hz` (f_RU)."""
        if self.engines is None:
            raise SpecError("the platform has no engines to clock", source=f"platform {self.name}")
        data = self.model_dump(by_alias=False)
        data["engines"]["frequency_hz"] = frequency_hz
        return self._revalidate(data, "engines.frequency")

    @property
    def has_engines(self) -> bool:
        return self.engines is not None

    def with_scheme(self, scheme: str) -> Platform:
        """The same machine with another switch-layer scheme (mux1 = no switch layer)."""
        try:
            check_scheme(scheme)  # before rescaling power, which divides by the module size
        except ValueError as exc:
            raise SpecError(
                str(exc), source=f"platform {self.name}", field="switch_layer.scheme"
            ) from None
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
        """A declared switch-layer total is for this layer's mux elements; scale it by count.
        To a layer with none (mux1, which draws nothing) the total is kept, with the count
        it is for (`power_total_elements`), so that rewiring it back scales it again."""
        layer = self.switch_layer
        total = layer.power_total_w
        before = layer.power_total_elements or layer.elements(self.devices)
        if total is None or not before:
            return
        after = layer.model_copy(update={"scheme": scheme}).elements(devices)
        if not after:
            data["switch_layer"]["power_total_elements"] = before
            return
        data["switch_layer"]["power_total_w"] = total * after / before
        data["switch_layer"]["power_total_elements"] = None

    def model_copy(self, *, update: Mapping[str, Any] | None = None, deep: bool = False) -> Self:
        """A copy (pydantic's), loaded from the file this one was (`platform_file`)."""
        copy = super().model_copy(update=update, deep=deep)
        _copy_file(self, copy)
        return copy

    def _revalidate(self, data: dict[str, Any], field: str) -> Platform:
        """`data` validated as a platform, loaded from the file this one was."""
        try:
            platform = Platform.model_validate(data, context={"si": True})
            _copy_file(self, platform)
            return platform
        except ValidationError as exc:
            message = exc.errors()[0]["msg"].removeprefix("Value error, ")
            raise SpecError(message, source=f"platform {self.name}", field=field) from None


_LOADED_FROM = LoadedFrom[str]()
"""The file each platform was loaded from."""


def note_file(platform: Platform, source: str) -> None:
    """Record that `platform` was loaded from the file `source` (as its errors name it)."""
    _LOADED_FROM.note(platform, source)


def platform_file(platform: Platform) -> str | None:
    """The file `platform` was loaded from, or the platform it is a copy of (`with_scheme`,
    a sweep's `with_engine_count`): where a value missing from it is added. None for a
    preset or a platform built in code."""
    return _LOADED_FROM.get(platform)


def _copy_file(original: Platform, copy: Platform) -> None:
    source = platform_file(original)
    if source is not None:
        note_file(copy, source)


def _check_ru_idle(public: PublicCell, engines: Engine) -> None:
    """public_cell.power_idle is the whole RU's power while it does not compute, so the RU
    computing with its fewest cells, the public cell's power plus one cell's, draws at
    least that much (as every other part's busy power is at least its idle power); the
    public cell's own active power is only the RU's fixed part and may be below it."""
    apps = sorted(set(public.power_active_by_app) | set(engines.power_active_by_app))
    for app in [None, *apps]:
        fixed = public.power_active_w if app is None else public.power_on_w(app)
        cell = engines.power_active_w if app is None else engines.power_on_w(app)
        if fixed + cell < public.power_idle_w:
            what = "" if app is None else f" for {app}"
            raise FieldValueError(
                "public_cell.power_idle",
                f"public_cell.power_idle ({public.power_idle_w:g} W, the whole RU while not "
                f"computing) is above the RU computing{what} with one cell, public_cell "
                f"power_active + one cell's = {fixed + cell:g} W (are they swapped?)",
                others=("public_cell.power_active", "engines.power_active"),
            )
