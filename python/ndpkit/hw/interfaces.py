"""Named host interfaces (SATA 3.2, PCIe Gen3 x4, x16), shipped as `interfaces.toml`."""

from __future__ import annotations

import tomllib
from functools import cache
from importlib import resources
from typing import Any

from ndpkit.errors import UnknownNameError


@cache
def _table() -> dict[str, dict[str, Any]]:
    text = resources.files("ndpkit.hw").joinpath("interfaces.toml").read_text("utf-8")
    return tomllib.loads(text)


def interface_names() -> list[str]:
    return sorted(_table())


def interface_spec(name: str) -> dict[str, Any]:
    """The link table of a named interface (a copy the caller may change)."""
    try:
        return dict(_table()[name])
    except KeyError:
        raise UnknownNameError("interface", name, interface_names()) from None


def expand_interface(value: Any) -> Any:
    """`"sata-3.2"` or `{interface = "sata-3.2", …}` → the full link table; else unchanged."""
    if isinstance(value, str):
        return interface_spec(value)
    if isinstance(value, dict) and isinstance(value.get("interface"), str):
        rest = {k: v for k, v in value.items() if k != "interface"}
        return {**interface_spec(value["interface"]), **rest}
    return value
