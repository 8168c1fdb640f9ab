"""The base of every hardware spec: strict, immutable, unknown keys rejected."""

from __future__ import annotations

from pydantic import BaseModel, ConfigDict


class Spec(BaseModel):
    """A declared piece of hardware. Field aliases are the keys a TOML file uses."""

    model_config = ConfigDict(
        extra="forbid",
        frozen=True,
        populate_by_name=True,
        validate_default=False,
    )
