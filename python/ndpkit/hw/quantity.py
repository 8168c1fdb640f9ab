"""Pydantic field types for quantities written with units in spec files.

A field typed `Bandwidth` accepts `"3 GB/s"` (or a `{size, time}` table for a
measured rate) and holds bytes per second as a float.
"""

from __future__ import annotations

import math
import numbers
from typing import Annotated, Any

from pydantic import AfterValidator, BeforeValidator, Field, ValidationInfo

from ndpkit.errors import closest
from ndpkit.hw.spec import as_written as _as_written
from ndpkit.units import MAX_SI, MIN_SI, Kind, UnitError, format_si, parse


def _parser(kind: Kind, *, zero_ok: bool) -> BeforeValidator:
    """Parse a quantity of `kind` and check its sign; `zero_ok`: >= 0, else > 0."""

    def convert(value: Any, info: ValidationInfo) -> float:
        # Re-validating an already-loaded spec (e.g. Platform.with_scheme) passes SI
        # floats; files never do, so bare numbers stay an error there.
        if info.context and info.context.get("si") and isinstance(value, int | float):
            number = float(value)
            if not math.isfinite(number):
                return number  # refused by allow_inf_nan=False
            shown = format_si(number, kind)
        else:
            try:
                number = parse(value, kind)
            except UnitError as exc:
                raise ValueError(str(exc)) from None
            # as written: "-3 GB/s", not the -3e+09 it is in bytes/s
            shown = repr(value) if isinstance(value, str) else format_si(number, kind)
        if zero_ok and number < 0:
            raise ValueError(f"must not be negative, got {shown}")
        if not zero_ok and not number > 0:
            raise ValueError(f"must be greater than zero, got {shown}")
        return number

    return BeforeValidator(convert)


def _plain_number(value: Any) -> Any:
    """A TOML number: `true` is not 1 and `"8"` is not 8 (pydantic would take both)."""
    if isinstance(value, bool) or not isinstance(value, numbers.Real):
        raise ValueError(f"expected a number, got {_as_written(value)}")
    return value


def _whole_number(value: Any) -> Any:
    """A TOML integer: `true` is not 1, and `"36"` or `36.0` is not 36."""
    if isinstance(value, bool) or not isinstance(value, numbers.Integral):
        raise ValueError(f"expected a whole number, got {_as_written(value)}")
    return value


def _plausible(value: float, info: ValidationInfo) -> float:
    """A positive plain number from a file within [MIN_SI, MAX_SI], as quantities are (its
    type refuses 0 and negatives before this runs)."""
    from_file = not (info.context and info.context.get("si"))
    if from_file and not MIN_SI <= value <= MAX_SI:
        raise ValueError(f"must be between {MIN_SI:g} and {MAX_SI:g}, got {value:g}")
    return value


def _measured_rate(value: Any) -> Any:
    """Accept `{size = "37 GiB", time = "16.67 s"}`: a measured run, kept unrounded."""
    if isinstance(value, dict):
        unknown = set(value) - {"size", "time"}
        if unknown or set(value) != {"size", "time"}:
            # errors.closest, as every other key's hint: 'SIZE' is 'size' but for case
            close = [
                f"{match!r} for {key!r}"
                for key in sorted(unknown, key=str)
                if (match := closest(str(key), ["size", "time"])) is not None
            ]
            raise ValueError(
                "a measured rate is a table with exactly the keys 'size' and 'time', "
                f"got {sorted(value)}" + (f"; did you mean {', '.join(close)}?" if close else "")
            )
        try:
            size = parse(value["size"], Kind.SIZE)
            time = parse(value["time"], Kind.TIME)
        except UnitError as exc:
            raise ValueError(str(exc)) from None
        if not (size > 0 and time > 0):
            raise ValueError("a measured rate needs a positive size and a positive time")
        rate = size / time
        if not MIN_SI <= rate <= MAX_SI:  # said here: the bit/s text below is not the user's
            raise ValueError(
                f"{value['size']!r} in {value['time']!r} is {rate:.3g} bytes/s, out of range: "
                f"a bandwidth is between {MIN_SI:g} and {MAX_SI:g} bytes/s"
            )
        return f"{size * 8 / time!r} bit/s"
    return value


Bandwidth = Annotated[float, _parser(Kind.BANDWIDTH, zero_ok=False)]
# Before-validators run last first: a {size, time} table becomes a rate string, then parses.
Rate = Annotated[float, _parser(Kind.BANDWIDTH, zero_ok=False), BeforeValidator(_measured_rate)]
Size = Annotated[float, _parser(Kind.SIZE, zero_ok=False)]
Time = Annotated[float, _parser(Kind.TIME, zero_ok=True)]
Duration = Annotated[float, _parser(Kind.TIME, zero_ok=False)]
"""A time that divides (e.g. a published run time: rate = size / time), so not zero."""
Power = Annotated[float, _parser(Kind.POWER, zero_ok=True)]
Energy = Annotated[float, _parser(Kind.ENERGY, zero_ok=True)]
Frequency = Annotated[float, _parser(Kind.FREQUENCY, zero_ok=False)]

MAX_COUNT = 65536
"""The most devices, engines, channels or cores of one kind. Beyond, the planner (which
tries engine counts one by one) takes minutes to hours; far beyond, counts overflow."""
Count = Annotated[int, BeforeValidator(_whole_number), Field(ge=1, le=MAX_COUNT)]
PositiveNumber = Annotated[
    float,
    BeforeValidator(_plain_number),
    Field(gt=0, allow_inf_nan=False),
    AfterValidator(_plausible),
]
"""A plain positive number (a ratio, bytes per cycle): finite and within range."""
Cycles = Annotated[int, BeforeValidator(_whole_number), Field(ge=0, le=10**15)]
"""A number of clock cycles: a day at 10 GHz is under 10^15."""
FORMAT_VERSION = 1
"""The version of ndpkit's file formats (platforms, profile sets, data set manifests)."""


def _format_version(value: Any) -> int:
    """A file's `version`: one this ndpkit does not read is said to be so (pydantic's "Input
    should be less than or equal to 1" did not say that version 2 is a newer format)."""
    number = int(_whole_number(value))
    if number > FORMAT_VERSION:
        raise ValueError(
            f"format version {number} is newer than this ndpkit reads (version "
            f"{FORMAT_VERSION}): upgrade ndpkit, or write the file with this one"
        )
    if number < FORMAT_VERSION:
        raise ValueError(
            f"format version {number} does not exist; this ndpkit reads version {FORMAT_VERSION}"
        )
    return number


FormatVersion = Annotated[int, BeforeValidator(_format_version)]
"""A file format's version: only 1 exists."""
