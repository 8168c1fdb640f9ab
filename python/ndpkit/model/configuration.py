"""Which engines are on and which engine each SSD's data goes to."""

from __future__ import annotations

import numbers
from collections import Counter
from collections.abc import Iterable
from dataclasses import dataclass
from typing import Literal, get_args

from ndpkit.errors import SpecError

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

    def __post_init__(self) -> None:
        # Built in Python, `split="Host"` ran the device split, an engine listed twice was
        # counted twice (faster, and more energy), and a list left the frozen value
        # unhashable: the ids are kept as tuples of int, each active engine once (the
        # models check the powered channels against the platform's, duplicates included).
        if self.split not in get_args(Split):
            raise SpecError(
                f"must be 'device' or 'host', got {self.split!r}",
                source="Configuration",
                field="split",
            )
        for name, once in (("active", True), ("route", False), ("channels", False)):
            ids = getattr(self, name)
            if ids is not None:
                object.__setattr__(self, name, _ids(ids, name, once=once))

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


def _ids(value: object, name: str, *, once: bool) -> tuple[int, ...]:
    """`value` (engine or channel ids) as a tuple of int, else a SpecError naming the field:
    a sequence of integers (not bools), each at most once where `once`."""
    expected = "a sequence of integer ids, or None"
    if isinstance(value, (str, bytes)) or not isinstance(value, Iterable):
        raise SpecError(f"must be {expected}, got {value!r}", source="Configuration", field=name)
    ids = tuple(value)
    for item in ids:
        if isinstance(item, bool) or not isinstance(item, numbers.Integral):
            raise SpecError(
                f"must be {expected}, got {item!r} ({type(item).__name__}) among them",
                source="Configuration",
                field=name,
            )
    checked = tuple(int(item) for item in ids)
    if once and len(set(checked)) != len(checked):
        twice = sorted({i for i in checked if checked.count(i) > 1})
        raise SpecError(
            f"lists {twice} more than once: each id at most once",
            source="Configuration",
            field=name,
        )
    return checked


FULL_GEAR = Configuration()
HOST_ONLY = Configuration(split="host")
