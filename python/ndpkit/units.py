"""Quantities with units, parsed by pint and converted to SI floats.

Spec files write `"3 GB/s"`, `"20 Gbps"`, `"5.76 W"`, `"1.1 GHz"`, `"37 GiB"`;
inside ndpkit everything is a float in bytes, seconds, watts, joules or hertz.
GB is 10**9 bytes and GiB is 2**30 bytes, exactly as written: the choice
between decimal and binary is the author's, visible in the file.

pint treats bits as dimensionless, so `"3 GB/s"` and `"3 GHz"` share a
dimensionality; the check below compares base units instead, which tells them
apart.
"""

from __future__ import annotations

import re
from enum import Enum
from functools import cache
from typing import Any

import pint


class Kind(Enum):
    """What a quantity measures, with its SI base units in pint's spelling and an example."""

    SIZE = ("bit", "bytes", "500 GB")
    BANDWIDTH = ("bit / second", "bytes/s", "3 GB/s")
    TIME = ("second", "s", "16.67 s")
    POWER = ("kilogram * meter ** 2 / second ** 3", "W", "5.76 W")
    ENERGY = ("kilogram * meter ** 2 / second ** 2", "J", "4 mJ")
    FREQUENCY = ("1 / second", "Hz", "1.1 GHz")

    @property
    def base(self) -> str:
        return self.value[0]

    @property
    def si_name(self) -> str:
        return self.value[1]

    @property
    def example(self) -> str:
        return self.value[2]


class UnitError(ValueError):
    """A string that is not a quantity of the expected kind."""


@cache
def registry() -> Any:
    # pint's registry is generic over its magnitude type; ndpkit uses plain floats.
    return pint.UnitRegistry()


def parse(text: Any, kind: Kind) -> float:
    """Parse `text` (e.g. "3 GB/s") as a quantity of `kind`; return it in SI units."""
    if isinstance(text, bool) or not isinstance(text, str):
        raise UnitError(f"expected a quantity with a unit, such as {kind.example!r}, got {text!r}")
    ureg = registry()
    try:
        quantity: Any = ureg.Quantity(text.strip())
    except (pint.errors.UndefinedUnitError, pint.errors.DefinitionSyntaxError) as exc:
        raise UnitError(f"{text!r}: unknown unit ({exc}){_did_you_mean(text, kind)}") from None
    except Exception as exc:  # pint's tokenizer raises plain errors on garbage
        raise UnitError(f"{text!r} is not a quantity ({exc})") from None
    if not isinstance(quantity, pint.Quantity) or quantity.unitless:
        raise UnitError(f"{text!r} has no unit; write it like {kind.example!r}")
    base = quantity.to_base_units()
    if str(base.units) != kind.base:
        raise UnitError(
            f"{text!r} is not a {kind.name.lower()} (expected a unit like {kind.example!r})"
            + _did_you_mean(text, kind)
        )
    value = float(base.magnitude)
    # pint's base unit for information is the bit; ndpkit counts bytes.
    return value / 8.0 if kind in (Kind.SIZE, Kind.BANDWIDTH) else value


_SIZE_UNITS = ("B", "kB", "MB", "GB", "TB", "PB", "KiB", "MiB", "GiB", "TiB", "PiB")
_SPELLINGS: dict[Kind, tuple[str, ...]] = {
    Kind.SIZE: _SIZE_UNITS,
    Kind.BANDWIDTH: (
        *(f"{u}/s" for u in _SIZE_UNITS),
        *("bps", "kbps", "Mbps", "Gbps", "Tbps"),
    ),
    Kind.TIME: ("s", "ms", "us", "µs", "ns", "min", "h"),
    Kind.POWER: ("W", "mW", "µW", "kW"),
    Kind.ENERGY: ("J", "mJ", "µJ", "nJ", "pJ", "kJ"),
    Kind.FREQUENCY: ("Hz", "kHz", "MHz", "GHz"),
}
"""The usual spellings of each kind's units, for suggestions."""
_NUMBER_AND_UNIT = re.compile(r"\s*([-+]?(?:\d+\.?\d*|\.\d+)(?:[eE][-+]?\d+)?)\s*(\S.*?)\s*")


def _did_you_mean(text: str, kind: Kind) -> str:
    """ "; did you mean '4 MB'?" when `text`'s unit is a usual spelling of `kind` in the
    wrong case or spacing ("4mb", "1 GIB", "3 gb / s"), else ""."""
    match = _NUMBER_AND_UNIT.fullmatch(text)
    if match is None:
        return ""
    number, unit = match.groups()
    typed = unit.replace(" ", "").casefold()
    for spelling in _SPELLINGS[kind]:
        if spelling.casefold() == typed and spelling != unit:
            return f"; did you mean '{number} {spelling}'?"
    return ""


def format_si(value: float, kind: Kind, *, binary: bool = False, digits: int = 3) -> str:
    """Render an SI float for people: 3e9 bytes/s -> "3 GB/s" (or "2.79 GiB/s" when binary)."""
    if kind in (Kind.SIZE, Kind.BANDWIDTH):
        suffix = "/s" if kind is Kind.BANDWIDTH else ""
        step, prefixes = (
            (1024.0, ["B", "KiB", "MiB", "GiB", "TiB", "PiB"])
            if binary
            else (
                1000.0,
                ["B", "kB", "MB", "GB", "TB", "PB"],
            )
        )
        scaled = value
        for prefix in prefixes:
            if abs(scaled) < step or prefix == prefixes[-1]:
                return f"{scaled:.{digits}g} {prefix}{suffix}"
            scaled /= step
    unit = {Kind.TIME: "s", Kind.POWER: "W", Kind.ENERGY: "J", Kind.FREQUENCY: "Hz"}[kind]
    if value == 0:
        return f"0 {unit}"
    si_prefixes = (
        (1e9, "G"),
        (1e6, "M"),
        (1e3, "k"),
        (1.0, ""),
        (1e-3, "m"),
        (1e-6, "µ"),
        (1e-9, "n"),
    )
    for factor, prefix in si_prefixes:
        if abs(value) >= factor or factor == 1e-9:
            return f"{value / factor:.{digits}g} {prefix}{unit}"
    return f"{value:.{digits}g} {unit}"
