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
        name = value["interface"]
        rest = {k: v for k, v in value.items() if k != "interface"}
        named = interface_spec(name)
        changed = sorted(k for k in rest if k != "description" and rest[k] != named.get(k))
        if changed and "description" not in rest:
            # The named description quotes the values that were overridden (a 0.6 GB/s link
            # read "SATA 3.2 (… 1.97 GB/s …)"): say what changed, and what was kept.
            kept = sorted(k for k in named if k not in rest and k != "description")
            rest["description"] = (
                f"{name} with {', '.join(changed)} overridden"
                + (f", {', '.join(kept)} as named" if kept else "")
                + f" (named: {named.get('description', name)})"
            )
        return {**named, **rest}
    return value
