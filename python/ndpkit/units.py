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

import contextlib
import math
import re
from collections.abc import Callable
from enum import Enum
from functools import cache
from pathlib import Path
from typing import Any

import pint

from ndpkit.files import cache_root


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
    """pint's unit registry (generic over its magnitude type; ndpkit uses plain floats).

    Parsing pint's definitions took 0.16 s of every command (a quarter of `ndpkit
    estimate`'s 0.68 s); pint keeps what it parsed in `registry_cache_dir()`, from which it
    builds the registry in 0.02 s. The cache is only ever a shortcut: a directory that cannot
    be written, or a file another process is still writing or one left half-written (a
    process killed mid-write), gives the registry parsed afresh, and such a file is removed
    so that the next command writes it again."""
    folder = registry_cache_dir()
    if folder is not None:
        try:
            return pint.UnitRegistry(cache_folder=folder)
        except Exception:
            _clear(folder)
    return pint.UnitRegistry()


def registry_cache_dir() -> Path | None:
    """Where pint's parsed definitions are kept (`files.cache_root`): one directory per pint
    version, whose files are pint's own."""
    root = cache_root()
    return None if root is None else root / f"pint-{pint.__version__}"


def _clear(folder: Path) -> None:
    for entry in folder.glob("*"):
        with contextlib.suppress(OSError):
            entry.unlink()


MAX_QUANTITY_CHARS = 1000
"""Longer text is no quantity (the longest unit names and a float's digits fit in far less)."""


def parse(text: Any, kind: Kind) -> float:
    """Parse `text` (e.g. "3 GB/s") as a quantity of `kind`; return it in SI units.

    The value must be written with a number and be finite, and unless it is zero its
    size in SI units must lie within [MIN_SI, MAX_SI]: a value outside cannot be right,
    and once inside the models it would overflow or divide by zero."""
    if isinstance(text, bool) or not isinstance(text, str):
        raise UnitError(f"expected a quantity with a unit, such as {kind.example!r}, got {text!r}")
    if not text.strip():
        raise UnitError(f"is empty; write a quantity with a unit, such as {kind.example!r}")
    if len(text) > MAX_QUANTITY_CHARS:  # not echoed: it would fill the screen
        raise UnitError(
            f"is {len(text):,} characters long (starts {text[:20]!r}); a quantity is a number "
            f"and a unit, such as {kind.example!r}"
        )
    _check_characters(text, kind)
    ureg = registry()
    try:
        quantity: Any = ureg.Quantity(text.strip())
    except pint.errors.UndefinedUnitError as exc:
        raise UnitError(f"{text!r}: unknown unit ({exc}){_did_you_mean(text, kind)}") from None
    except pint.errors.OffsetUnitCalculusError as exc:  # °C, °F; dB, dBm, Np
        raise UnitError(_offset_unit(text, exc, kind)) from None
    except Exception:  # pint's parser: a stray operator or parenthesis, in its own words
        # (tokenizer states, "EOF in multi-line statement"), which would only puzzle
        raise UnitError(
            f"{text!r} is not a quantity: its operators or parentheses do not join a number "
            f"and units; write it like {kind.example!r}"
        ) from None
    if isinstance(quantity, pint.Quantity):
        # As a float, so that a huge integer overflows to inf here rather than raise later.
        quantity = _finite(text, quantity.magnitude, kind) * quantity.units
    if not isinstance(quantity, pint.Quantity) or quantity.unitless:
        raise UnitError(f"{text!r} has no unit; write it like {kind.example!r}")
    if _LEADING_NUMBER.match(text) is None:
        # pint reads a bare unit as 1 of it ("GB/s" = 1 GB/s): never what the author meant.
        raise UnitError(f"{text!r} has no number; write it like {kind.example!r}")
    if kind in (Kind.SIZE, Kind.BANDWIDTH):
        _check_information_prefixes(text, quantity, kind)
    if kind is Kind.FREQUENCY:
        _check_clock_prefixes(text, quantity)
    base = quantity.to_base_units()
    if str(base.units) != kind.base:
        noun = kind.name.lower()
        article = "an" if noun[0] in "aeiou" else "a"
        raise UnitError(
            f"{text!r} is not {article} {noun} (expected a unit like {kind.example!r})"
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
    if any(char.isdecimal() and not char.isascii() for char in text):
        # pint's tokenizer reads "２" as a name and reports a "missing unary operator".
        raise UnitError(
            f"{text!r} is not a {kind.name.lower()}: write its number in the digits 0-9, "
            f"like {kind.example!r}"
        )
    stray = _STRAY.search(text)
    if stray is not None:
        hint = " (the decimal mark is '.')" if stray.group() == "," else ""
        raise UnitError(
            f"{text!r}: {stray.group()!r} has no place in a quantity{hint}; write one number "
            f"and a unit, like {kind.example!r}"
        )
    if _is_sum(text.strip().lstrip("(").lstrip()):
        raise UnitError(f"{text!r}: write one number and a unit, like {kind.example!r}, not a sum")
    if _UNDERSCORE_IN_NUMBER.search(text):
        # Python's tokenizer, which pint uses, reads "1_0" as 10.
        raise UnitError(
            f"{text!r}: '_' has no place in a number; write one number and a unit, "
            f"like {kind.example!r}"
        )
    if _is_arithmetic(text):
        raise UnitError(
            f"{text!r}: write one number and a unit, like {kind.example!r}: an operator may "
            "join units (as in 'GB/s' or 's^-1'), never numbers"
        )


_UNDERSCORE_IN_NUMBER = re.compile(r"[0-9]_|_[0-9]")
_TOKEN = re.compile(
    r"\s*(?:(?P<number>(?:[0-9]+\.?[0-9]*|\.[0-9]+)(?:[eE][-+]?[0-9]+)?)"
    r"|(?P<operator>\*\*|[*/^·+\-])|(?P<paren>[()])|(?P<name>[^\s0-9*/^·+\-()]+))"
)
"""One token of a quantity as pint's parser sees it (the text has passed `_STRAY`)."""


def _tokens(text: str) -> list[tuple[str, str]]:
    """(kind, text) of each token: number, operator, paren or name."""
    tokens = []
    for match in _TOKEN.finditer(text):
        kind = match.lastgroup
        if kind is not None:
            tokens.append((kind, match.group(kind)))
    return tokens


def _is_arithmetic(text: str) -> bool:
    """Whether an operator acts on a number: "3*2 GB/s", "2**3 GB/s", "3 GB/s/2", "3/2 GB"
    or two numbers side by side ("3 2 GB", which pint multiplies). pint evaluates all of
    them. The only numbers a quantity has are its own, first, and the exponents of its
    units ("s^-1", "s**-1"); the only operators join units ("GB/s", "W*s", "GB s**-1").
    Text that does not start with a number is left to the "has no number" check."""
    tokens = _tokens(text)
    start = 0
    while start < len(tokens) and tokens[start] in (_OPEN, *_SIGNS):
        start += 1
    if start == len(tokens) or tokens[start][0] != "number":
        return False
    after = start + 1
    while after < len(tokens) and tokens[after] == _CLOSE:
        after += 1
    if after < len(tokens) and tokens[after][0] in ("operator", "number"):
        return True  # "3*2", "3/2", "2**3", "3 2": the quantity's number is acted on
    for i in range(after, len(tokens)):
        if tokens[i][0] != "number":
            continue
        power = i - 2 if tokens[i - 1] in _SIGNS else i - 1  # > start: see above
        if tokens[power] not in _POWERS:
            return True  # "GB/s/2", "GB*2", "GB2"
        if tokens[power - 1][0] != "name" and tokens[power - 1] != _CLOSE:
            return True  # "GB^2^2": a power of a number
    return False


_OPEN, _CLOSE = ("paren", "("), ("paren", ")")
_SIGNS = (("operator", "-"), ("operator", "+"))
_POWERS = (("operator", "^"), ("operator", "**"))


def _offset_unit(text: str, exc: pint.errors.OffsetUnitCalculusError, kind: Kind) -> str:
    """Why a unit pint cannot multiply (an offset or logarithmic one) is refused."""
    ureg = registry()
    units = [ureg.Unit(u) for u in (exc.units1, exc.units2) if not isinstance(u, str)]
    if any("[temperature]" in unit.dimensionality for unit in units):
        return (
            f"{text!r}: a temperature is not a {kind.name.lower()}; write it like {kind.example!r}"
        )
    return (
        f"{text!r}: logarithmic units (dB, dBm, Np) are not supported; give the "
        f"{kind.name.lower()} in {kind.si_name}, like {kind.example!r}"
    )


def _check_information_prefixes(text: str, quantity: Any, kind: Kind) -> None:
    """Refuse a prefix that divides a bit or a byte: pint reads "3 mB/s" as millibytes per
    second and "3 mbps" as millibits per second, 10^9 times less than the likely
    "3 MB/s" and "3 Mbps"; no size or bandwidth is written so."""
    ureg = registry()
    found = _dividing_prefix(
        quantity, lambda unit: str(ureg.Quantity(1, unit).to_base_units().units) in _INFORMATION
    )
    if found is not None:
        prefix, factor = found
        raise UnitError(
            f"{text!r}: the prefix {prefix} ({factor:g}) divides a bit or byte, and no "
            f"{kind.name.lower()} is counted in fractions of one; write it like "
            f"{kind.example!r}{_did_you_mean(text, kind)}"
        )


def _check_clock_prefixes(text: str, quantity: Any) -> None:
    """Refuse a prefix that divides a hertz: every frequency in a file is a clock (a core's,
    a cell's, a configuration port's), and "3 mHz" (millihertz, one cycle in 333 s) is
    always the "3 MHz" meant, 10^9 times off, as "3 mB/s" is for a bandwidth."""
    found = _dividing_prefix(quantity, lambda unit: unit == "hertz")
    if found is not None:
        prefix, factor = found
        raise UnitError(
            f"{text!r}: the prefix {prefix} ({factor:g}) divides a hertz, and no "
            f"clock ticks that slowly; write it like {Kind.FREQUENCY.example!r}"
            f"{_did_you_mean(text, Kind.FREQUENCY)}"
        )


def _dividing_prefix(quantity: Any, counts: Callable[[str], bool]) -> tuple[str, float] | None:
    """The first prefix of `quantity`'s units that divides a unit `counts` (milli on a
    byte, on a hertz), with its factor, or None."""
    ureg = registry()
    for name, _ in quantity.unit_items():
        for prefix, unit, _suffix in ureg.parse_unit_name(name):
            if prefix and counts(unit):
                factor = ureg.Quantity(1, prefix + unit).to(unit).magnitude
                if factor < 1:
                    return prefix, factor
    return None


_INFORMATION = ("bit", "bit / second")
"""pint's base units of the units that count bits or bytes (bit, byte, bps = baud)."""


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
    # Spelled out in a datasheet's case ("5.5 Watt", "2 Gigahertz"), which pint reads only
    # in lower case: no suggestion was given.
    Kind.POWER: {
        **{
            f"{p}watt{s}": u
            for p, u in (("", "W"), ("milli", "mW"), ("kilo", "kW"))
            for s in ("", "s")
        }
    },
    Kind.ENERGY: {
        **{
            f"{p}joule{s}": u
            for p, u in (("", "J"), ("milli", "mJ"), ("kilo", "kJ"))
            for s in ("", "s")
        }
    },
    Kind.FREQUENCY: {
        f"{p}hertz": u for p, u in (("", "Hz"), ("kilo", "kHz"), ("mega", "MHz"), ("giga", "GHz"))
    },
    Kind.TIME: {
        **{
            f"{p}second{s}": u
            for p, u in (("", "s"), ("milli", "ms"), ("micro", "us"))
            for s in ("", "s")
        }
    },
}
"""Common ways of writing a unit that pint does not read so, and the spelling it reads."""
_BINARY_BIT = re.compile(r"([kmgtpKMGTP])[iI]b(\s*/\s*s)?")
"""A binary prefix on a b, which pint reads as a barn: "Gib", "Mib/s"."""
_BINARY_BIT_KIND = {False: Kind.SIZE, True: Kind.BANDWIDTH}
"""The kind a `_BINARY_BIT` spelling is, without and with its "/s"."""
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
    suggestion = _suggestions(kind).get(_case_key(unit)) or _plural(unit, kind)
    binary = _BINARY_BIT.fullmatch(unit)
    per_second = binary is not None and binary.group(2) is not None
    if suggestion is None and binary is not None and kind is _BINARY_BIT_KIND[per_second]:
        # pint reads "Gib" as gibibarns: bits or bytes? Both, bits first (the b typed).
        prefix, per = binary.group(1).upper(), "/s" if binary.group(2) else ""
        return (
            f"; did you mean '{number} {prefix}ibit{per}' or '{number} {prefix}iB{per}'? "
            "(b is a bit, B a byte)"
        )
    if suggestion is None or suggestion == unit:
        return ""
    if "b" not in suggestion:
        return f"; did you mean '{number} {suggestion}'?"
    # Bits first (the b typed), then the bytes a size or a disk's bandwidth is usually in:
    # "--size 8mb" most likely meant 8 MB, but an 8x error must be the user's choice.
    typed_bits = any(word in unit.casefold() for word in ("bit", "bps"))
    in_bytes = None if typed_bits else _in_bytes(suggestion, kind)
    also = f" or '{number} {in_bytes}'" if in_bytes else ""
    return f"; did you mean '{number} {suggestion}'{also}? (b is a bit, B a byte)"


def _in_bytes(unit: str, kind: Kind) -> str | None:
    """The byte spelling of a unit in bits ("Mbit" -> "MB", "Gbps" -> "GB/s"), if `kind`
    has one."""
    spelled = unit.replace("bit", "B")
    if spelled.endswith("bps"):
        spelled = spelled[: -len("bps")] + "B/s"
    return spelled if spelled != unit and spelled in _SPELLINGS[kind] else None


def _plural(unit: str, kind: Kind) -> str | None:
    """The unit meant by a plural one ("GBs", "MiBs", "gbits/s"): a size as it is, a
    bandwidth per second ("3 GBs" is read as 3 GB/s there), else None."""
    if len(unit) < 2 or not unit.endswith("s") or kind not in (Kind.SIZE, Kind.BANDWIDTH):
        return None
    if kind is Kind.BANDWIDTH and unit.endswith("s/s"):
        # a plural per second ("3 gbits/s", "3 MBs/s") got no suggestion: its unit's singular's
        return _suggestions(kind).get(_case_key(unit[: -len("s/s")] + "/s"))
    if kind is Kind.BANDWIDTH and unit[:-1].casefold().endswith("bit"):
        # "3 Gbits" is gigabits, a size pint reads: its s makes a plural, not a "/s"
        return None
    single = unit[:-1] + ("/s" if kind is Kind.BANDWIDTH else "")
    return _suggestions(kind).get(_case_key(single))


def format_si(value: float, kind: Kind, *, binary: bool = False, digits: int = 3) -> str:
    """Render an SI float for people: 3e9 bytes/s -> "3 GB/s" (or "2.79 GiB/s" when binary)."""
    if kind in (Kind.SIZE, Kind.BANDWIDTH):
        suffix = "/s" if kind is Kind.BANDWIDTH else ""
        step, prefixes = (
            # Up to the prefixes `parse` reads: 1 EiB printed as "1024 PiB".
            (1024.0, ["B", "KiB", "MiB", "GiB", "TiB", "PiB", "EiB", "ZiB", "YiB"])
            if binary
            else (
                1000.0,
                ["B", "kB", "MB", "GB", "TB", "PB", "EB", "ZB", "YB"],
            )
        )
        scaled = value
        for prefix in prefixes:
            if abs(scaled) < step or prefix == prefixes[-1]:
                # Enough digits for the whole part: 1000-1023 KiB read "1e+03 KiB" at 3.
                whole = len(f"{abs(scaled):.0f}")
                return f"{scaled:.{max(digits, whole)}g} {prefix}{suffix}"
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
