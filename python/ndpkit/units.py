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

import math
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
    """Parse `text` (e.g. "3 GB/s") as a quantity of `kind`; return it in SI units.

    The value must be written with a number and be finite, and unless it is zero its
    size in SI units must lie within [MIN_SI, MAX_SI]: a value outside cannot be right,
    and once inside the models it would overflow or divide by zero."""
    if isinstance(text, bool) or not isinstance(text, str):
        raise UnitError(f"expected a quantity with a unit, such as {kind.example!r}, got {text!r}")
    if not text.strip():
        raise UnitError(f"is empty; write a quantity with a unit, such as {kind.example!r}")
    _check_characters(text, kind)
    ureg = registry()
    try:
        quantity: Any = ureg.Quantity(text.strip())
    except (pint.errors.UndefinedUnitError, pint.errors.DefinitionSyntaxError) as exc:
        raise UnitError(f"{text!r}: unknown unit ({exc}){_did_you_mean(text, kind)}") from None
    except pint.errors.OffsetUnitCalculusError:  # °C, °F: no quantity ndpkit reads has them
        raise UnitError(
            f"{text!r}: a temperature is not a {kind.name.lower()}; write it like {kind.example!r}"
        ) from None
    except Exception as exc:  # pint's tokenizer raises plain errors on garbage
        raise UnitError(f"{text!r} is not a quantity ({exc})") from None
    if isinstance(quantity, pint.Quantity):
        # As a float, so that a huge integer overflows to inf here rather than raise later.
        quantity = _finite(text, quantity.magnitude, kind) * quantity.units
    if not isinstance(quantity, pint.Quantity) or quantity.unitless:
        raise UnitError(f"{text!r} has no unit; write it like {kind.example!r}")
    if _LEADING_NUMBER.match(text) is None:
        # pint reads a bare unit as 1 of it ("GB/s" = 1 GB/s): never what the author meant.
        raise UnitError(f"{text!r} has no number; write it like {kind.example!r}")
    base = quantity.to_base_units()
    if str(base.units) != kind.base:
        raise UnitError(
            f"{text!r} is not a {kind.name.lower()} (expected a unit like {kind.example!r})"
            + _did_you_mean(text, kind)
        )
    value = _finite(text, base.magnitude, kind)  # "1e300 TB" overflows only in bits
    # pint's base unit for information is the bit; ndpkit counts bytes.
    value = value / 8.0 if kind in (Kind.SIZE, Kind.BANDWIDTH) else value
    if value != 0 and not MIN_SI <= abs(value) <= MAX_SI:
        raise UnitError(
            f"{text!r} is {abs(value):.3g} {kind.si_name}, out of range: a "
            f"{kind.name.lower()} is 0 or between {MIN_SI:g} and {MAX_SI:g} {kind.si_name}"
        )
    return value


MAX_SI = 1e24
"""The largest magnitude a quantity may have in SI units (a yottabyte, 10^24 J, ...)."""
MIN_SI = 1e-24
"""The smallest non-zero magnitude (a yoctosecond); smaller ones underflow to zero later."""
_LEADING_NUMBER = re.compile(r"\s*\(?\s*[-+]?\.?\d")
_STRAY = re.compile(r"[^\w\s./*^()+\-µμ·°⁻]")
"""Characters no quantity has, which pint's parser would skip or act on: "3,5 GB/s" is
35 GB/s to it and "3 GB/s; x" is 3 GB/s."""
_EXPONENT_SIGN = re.compile(r"(\d\.?[eE]|[(^*])$")


def _is_sum(body: str) -> bool:
    """Whether a + or - after the number's own sign adds or subtracts ("3 GB/s + 1 GB/s"),
    rather than sign an exponent ("1e-3", "s^-1") or join a word ("Watt-ish", which pint
    then names as an unknown unit)."""
    for i, char in enumerate(body):
        if char not in "+-" or i == 0:
            continue
        before = body[:i].rstrip()
        if not before or _EXPONENT_SIGN.search(before):
            continue
        if body[i - 1].isalpha() and body[i + 1 : i + 2].isalpha():
            continue
        return True
    return False


def _check_characters(text: str, kind: Kind) -> None:
    stray = _STRAY.search(text)
    if stray is not None:
        hint = " (the decimal mark is '.')" if stray.group() == "," else ""
        raise UnitError(
            f"{text!r}: {stray.group()!r} has no place in a quantity{hint}; write one number "
            f"and a unit, like {kind.example!r}"
        )
    if _is_sum(text.strip().lstrip("(").lstrip()):
        raise UnitError(f"{text!r}: write one number and a unit, like {kind.example!r}, not a sum")


def _finite(text: str, magnitude: Any, kind: Kind) -> float:
    """`magnitude` as a float, or a UnitError if it is infinite, NaN or overflows one."""
    try:
        value = float(magnitude)
    except OverflowError:  # an integer beyond a float's range
        value = math.inf
    if not math.isfinite(value):
        raise UnitError(
            f"{text!r} is not a finite number (infinite, NaN, or too large); "
            f"write it like {kind.example!r}"
        )
    return value


_SIZE_UNITS = ("B", "kB", "MB", "GB", "TB", "PB", "KiB", "MiB", "GiB", "TiB", "PiB")
_BIT_UNITS = ("bit", "kbit", "Mbit", "Gbit", "Tbit")
_SPELLINGS: dict[Kind, tuple[str, ...]] = {
    Kind.SIZE: (*_SIZE_UNITS, *_BIT_UNITS),
    Kind.BANDWIDTH: (
        *(f"{u}/s" for u in _SIZE_UNITS),
        *("bps", "kbps", "Mbps", "Gbps", "Tbps"),
        *(f"{u}/s" for u in _BIT_UNITS),
    ),
    Kind.TIME: ("s", "ms", "us", "µs", "ns", "min", "h"),
    Kind.POWER: ("W", "mW", "µW", "kW"),
    Kind.ENERGY: ("J", "mJ", "µJ", "nJ", "pJ", "kJ"),
    Kind.FREQUENCY: ("Hz", "kHz", "MHz", "GHz"),
}
"""The usual spellings of each kind's units, for suggestions."""
_ALIASES: dict[Kind, dict[str, str]] = {
    # pint reads "Gb" as gilbert and "Mb" as megabarn, never as bits.
    Kind.SIZE: {u.replace("bit", "b"): u for u in _BIT_UNITS},
    Kind.BANDWIDTH: {
        **{f"{u}ps": f"{u}/s" for u in _SIZE_UNITS},  # "GBps": no such unit in pint
        **{f"{u.replace('bit', 'b')}/s": f"{u}/s" for u in _BIT_UNITS},
    },
}
"""Common ways of writing a unit that pint does not read so, and the spelling it reads."""
_NUMBER_AND_UNIT = re.compile(r"\s*([-+]?(?:\d+\.?\d*|\.\d+)(?:[eE][-+]?\d+)?)\s*(\S.*?)\s*")


def _case_key(unit: str) -> str:
    """`unit` without spaces and case, except for b (bit) and B (byte): their case is
    their meaning, so a suggestion must never change it (an 8x error)."""
    return "".join(c if c in "bB" else c.casefold() for c in unit.replace(" ", ""))


@cache
def _suggestions(kind: Kind) -> dict[str, str]:
    """Case key of each usual spelling or alias of `kind`'s units -> the spelling."""
    spellings = {spelling: spelling for spelling in _SPELLINGS[kind]}
    return {
        _case_key(typed): unit for typed, unit in {**_ALIASES.get(kind, {}), **spellings}.items()
    }


def _did_you_mean(text: str, kind: Kind) -> str:
    """ "; did you mean '1 GiB'?" when `text`'s unit is a usual spelling of `kind` in the
    wrong case or spacing, or a common alias ("1 GIB", "3 GBps", "3 Gb/s"), else "".
    The case of b and B is kept: "3 gb/s" gets "3 Gbit/s", never "3 GB/s"."""
    match = _NUMBER_AND_UNIT.fullmatch(text)
    if match is None:
        return ""
    number, unit = match.groups()
    suggestion = _suggestions(kind).get(_case_key(unit))
    if suggestion is None or suggestion == unit:
        return ""
    note = " (b is a bit, B a byte)" if "b" in suggestion else ""
    return f"; did you mean '{number} {suggestion}'?{note}"


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
