"""Pydantic field types for quantities written with units in spec files.

A field typed `Bandwidth` accepts `"3 GB/s"` (or a `{size, time}` table for a
measured rate) and holds bytes per second as a float.
"""

from __future__ import annotations

from typing import Annotated, Any

from pydantic import AfterValidator, BeforeValidator, Field, ValidationInfo

from ndpkit.units import MAX_SI, MIN_SI, Kind, UnitError, parse


def _parser(kind: Kind) -> BeforeValidator:
    def convert(value: Any, info: ValidationInfo) -> float:
        # Re-validating an already-loaded spec (e.g. Platform.with_scheme) passes SI
        # floats; files never do, so bare numbers stay an error there.
        if info.context and info.context.get("si") and isinstance(value, int | float):
            return float(value)  # inf or nan is refused by allow_inf_nan=False
        try:
            return parse(value, kind)
        except UnitError as exc:
            raise ValueError(str(exc)) from None

    return BeforeValidator(convert)


def _plausible(value: float, info: ValidationInfo) -> float:
    """A plain number from a file within [MIN_SI, MAX_SI] (or 0), as quantities are."""
    from_file = not (info.context and info.context.get("si"))
    if from_file and value != 0 and not MIN_SI <= abs(value) <= MAX_SI:
        raise ValueError(f"must be 0 or between {MIN_SI:g} and {MAX_SI:g}, got {value:g}")
    return value


def _positive(value: float) -> float:
    if not value > 0:
        raise ValueError(f"must be greater than zero, got {value:g}")
    return value


def _non_negative(value: float) -> float:
    if value < 0:
        raise ValueError(f"must not be negative, got {value:g}")
    return value


def _measured_rate(value: Any) -> Any:
    """Accept `{size = "37 GiB", time = "16.67 s"}`: a measured run, kept unrounded."""
    if isinstance(value, dict):
        unknown = set(value) - {"size", "time"}
        if unknown or set(value) != {"size", "time"}:
            raise ValueError(
                "a measured rate is a table with exactly the keys 'size' and 'time', "
                f"got {sorted(value)}"
            )
        try:
            size = parse(value["size"], Kind.SIZE)
            time = parse(value["time"], Kind.TIME)
        except UnitError as exc:
            raise ValueError(str(exc)) from None
        if not (size > 0 and time > 0):
            raise ValueError("a measured rate needs a positive size and a positive time")
        return f"{size * 8 / time!r} bit/s"
    return value


Bandwidth = Annotated[float, _parser(Kind.BANDWIDTH), AfterValidator(_positive)]
Rate = Annotated[
    float, _parser(Kind.BANDWIDTH), BeforeValidator(_measured_rate), AfterValidator(_positive)
]
Size = Annotated[float, _parser(Kind.SIZE), AfterValidator(_positive)]
Time = Annotated[float, _parser(Kind.TIME), AfterValidator(_non_negative)]
Duration = Annotated[float, _parser(Kind.TIME), AfterValidator(_positive)]
"""A time that divides (e.g. a published run time: rate = size / time), so not zero."""
Power = Annotated[float, _parser(Kind.POWER), AfterValidator(_non_negative)]
Energy = Annotated[float, _parser(Kind.ENERGY), AfterValidator(_non_negative)]
Frequency = Annotated[float, _parser(Kind.FREQUENCY), AfterValidator(_positive)]

MAX_COUNT = 65536
"""The most devices, engines, channels or cores of one kind. Beyond, the planner (which
tries engine counts one by one) takes minutes to hours; far beyond, counts overflow."""
Count = Annotated[int, Field(ge=1, le=MAX_COUNT)]
PositiveNumber = Annotated[float, Field(gt=0, allow_inf_nan=False), AfterValidator(_plausible)]
"""A plain positive number (a ratio, bytes per cycle): finite and within range."""
Cycles = Annotated[int, Field(ge=0, le=10**15)]
"""A number of clock cycles: a day at 10 GHz is under 10^15."""
