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
    """Names of the interfaces (link tables) a platform file may give as `interface`."""
    return sorted(_table())


def interface_spec(name: str) -> dict[str, Any]:
    """The link table of a named interface (a copy the caller may change)."""
    try:
        return dict(_table()[name])
    except KeyError:
        raise UnknownNameError("interface", name, interface_names()) from None


def note_overrides(link: dict[str, Any]) -> dict[str, Any]:
    """A platform's merged link table, its description amended where it is a named
    interface's but some of its values are not: the named description quotes values a
    platform may set (a 0.6 GB/s link read "SATA 3.2 (… 1.97 GB/s …)"), so say which keys
    were set and which kept the named values (its power, say). Once, on the whole
    `extends` chain's result; a description of the platform's own is left as it is."""
    for name, named in _table().items():
        if link.get("description") != named.get("description"):
            continue
        changed = sorted(k for k in link if k != "description" and link[k] != named.get(k))
        if not changed:
            return link
        kept = sorted(k for k in named if k != "description" and k not in changed)
        note = f"; then {', '.join(changed)} set" + (
            f", {', '.join(kept)} kept from {name}" if kept else ""
        )
        return {**link, "description": f"{named['description']}{note}"}
    return link


def expand_interface(value: Any) -> Any:
    """`"sata-3.2"` or `{interface = "sata-3.2", …}` → the full link table; else unchanged."""
    if isinstance(value, str):
        return interface_spec(value)
    if isinstance(value, dict) and isinstance(value.get("interface"), str):
        rest = {k: v for k, v in value.items() if k != "interface"}
        return {**interface_spec(value["interface"]), **rest}
    return value
