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


def described(description: str, given: dict[str, Any], base: dict[str, Any], by: str) -> str:
    """`description` of a link table `base`, amended for the keys `given` sets over it: the
    named description quotes values a platform may change (a 0.6 GB/s link read "SATA 3.2
    (… 1.97 GB/s …)"), so say which keys were set, and which kept `by`'s values."""
    set_keys = sorted(k for k in given if k != "description")
    if not set_keys:
        return description
    kept = sorted(k for k in base if k not in given and k not in ("description", "interface"))
    return f"{description}; then {', '.join(set_keys)} set" + (
        f", {', '.join(kept)} kept from {by}" if kept else ""
    )


def expand_interface(value: Any) -> Any:
    """`"sata-3.2"` or `{interface = "sata-3.2", …}` → the full link table; else unchanged."""
    if isinstance(value, str):
        return interface_spec(value)
    if isinstance(value, dict) and isinstance(value.get("interface"), str):
        name = value["interface"]
        rest = {k: v for k, v in value.items() if k != "interface"}
        named = interface_spec(name)
        if "description" not in rest:
            rest["description"] = described(str(named.get("description", name)), rest, named, name)
        return {**named, **rest}
    return value
