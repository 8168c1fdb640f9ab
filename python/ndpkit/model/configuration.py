"""Which engines are on and which engine each SSD's data goes to."""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass
from typing import Literal

Split = Literal["device", "host"]


@dataclass(frozen=True)
class Configuration:
    """A run's configuration.

    `split` says where the kernel runs: `device` = the device part on the engines and
    the host part on the host (NDP); `host` = the whole kernel on the host, raw data
    crossing the host link (as on CNS). `active` lists the powered engines (None = all),
    `route[ssd]` the engine that reads that SSD (None = its own engine).

    On an in-storage platform the engines are per-channel cells: `route[channel]` is the
    cell serving that channel, and `channels` lists the powered flash channels (None =
    all). A powered-off channel's data is not read: the data set is spread over the
    powered channels (RISP option R12, `data_on_active_only`).
    """

    split: Split = "device"
    active: tuple[int, ...] | None = None
    route: tuple[int, ...] | None = None
    channels: tuple[int, ...] | None = None

    def powered_channels(self, channels: int) -> tuple[int, ...]:
        return tuple(range(channels)) if self.channels is None else self.channels

    def active_engines(self, engines: int) -> tuple[int, ...]:
        if self.split == "host":
            return ()
        return tuple(range(engines)) if self.active is None else self.active

    def routes(self, devices: int) -> tuple[int, ...]:
        return tuple(range(devices)) if self.route is None else self.route

    def shards_per_engine(self, devices: int) -> dict[int, int]:
        """How many SSD shards each active engine reads."""
        return dict(Counter(self.routes(devices)))

    @property
    def is_full_gear(self) -> bool:
        return (
            self.split == "device"
            and self.active is None
            and self.route is None
            and self.channels is None
        )


FULL_GEAR = Configuration()
HOST_ONLY = Configuration(split="host")
