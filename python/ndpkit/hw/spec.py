"""The base of every hardware spec: strict, immutable, unknown keys rejected."""

from __future__ import annotations

from pydantic import BaseModel, ConfigDict, ValidationError

from ndpkit.errors import SpecError


class Spec(BaseModel):
    """A declared piece of hardware. Field aliases are the keys a TOML file uses."""

    model_config = ConfigDict(
        extra="forbid",
        frozen=True,
        populate_by_name=True,
        validate_default=False,
    )


def spec_error(exc: ValidationError, source: str) -> SpecError:
    """Pydantic's report as one SpecError naming the first bad field (and how many more)."""
    first = exc.errors()[0]
    field = ".".join(str(part) for part in first["loc"]) or "(top level)"
    message = first["msg"].removeprefix("Value error, ")
    if first["type"] == "missing":
        message = "required field is missing"
    elif first["type"] == "extra_forbidden":
        message = "unknown field (check the spelling; `ndpkit platforms show rans` lists fields)"
    more = len(exc.errors()) - 1
    if more:
        message += f" (and {more} more problem{'s' if more > 1 else ''})"
    return SpecError(message, source=source, field=field)
