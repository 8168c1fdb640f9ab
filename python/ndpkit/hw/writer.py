"""A loaded platform written back as a platform file: every field resolved, no `extends`.

`platform_toml(load_platform("rans"))` is a file that loads to the same platform (named
`rans-copy`: a file may not take a preset's name), so a preset (or a chain of files that
extend each other) can be copied out and edited whole.
Quantities are written with their units, in the readable form ("3 GiB/s") where that
parses back to the very same number, else as the exact SI number ("2953787917.32342 bytes/s").
"""

from __future__ import annotations

import json
import re
from typing import Any

from pydantic import ValidationError

from ndpkit.errors import SpecError, check_kinds
from ndpkit.hw.loader import preset_names
from ndpkit.hw.platform import Platform
from ndpkit.hw.spec import reported_error
from ndpkit.units import Kind, UnitError, format_si, parse

_KINDS_BY_SUFFIX = {
    "_bytes_per_s": Kind.BANDWIDTH,
    "_bytes": Kind.SIZE,
    "_w": Kind.POWER,
    "_hz": Kind.FREQUENCY,
    "_s": Kind.TIME,
    "_j": Kind.ENERGY,
}
_PER_APP_KINDS: dict[str, Kind | None] = {
    "throughput": Kind.BANDWIDTH,
    "power_active_by_app": Kind.POWER,
    "bytes_per_cycle": None,
    "pipeline_delay_cycles": None,
}
"""Tables of one value per application (keyed by app name, which carries no unit)."""

_BARE_KEY = re.compile(r"[A-Za-z0-9_-]+")


def field_kind(path: tuple[str, ...]) -> Kind | None:
    """What the field at `path` (internal names, e.g. `("host", "frequency_hz")`) measures:
    by its per-app table or by its name's SI suffix; None for counts, ratios and text."""
    if len(path) >= 2 and path[-2] in _PER_APP_KINDS:
        return _PER_APP_KINDS[path[-2]]
    return next((k for suffix, k in _KINDS_BY_SUFFIX.items() if path[-1].endswith(suffix)), None)


def platform_toml(platform: Platform, name: str | None = None) -> str:
    """The platform as TOML that `load_platform` reads back to an equal platform (named
    `name` if given: a file may not take a preset's name, so a preset's copy is named
    NAME-copy by default, as `platforms show -f toml` names it).

    Fields left at their defaults are left out, as a hand-written file would: a link that
    writes a named interface's defaults (`latency = "0 s"`) would read as one that
    overrides the interface, and its description would be amended to say so."""
    # a preset's name ended in "'str' object has no attribute 'name'"
    check_kinds(("platform", platform, Platform, "a Platform (load_platform(…))"))
    if name is None and platform.name in preset_names():
        name = f"{platform.name}-copy"  # `rans` wrote a file that did not load
    if name is not None:
        platform = _renamed(platform, name)
    by_name = platform.model_dump(by_alias=False, exclude_none=True, exclude_defaults=True)
    by_alias = platform.model_dump(by_alias=True, exclude_none=True, exclude_defaults=True)
    head = (
        f"# Platform {platform.name}, written by `ndpkit platforms show -f toml`: resolved\n"
        "# (no `extends`), defaults left out, quantities exact to the last digit.\n"
        f"version = {platform.version}\n"
    )
    by_name.pop("version", None)
    by_alias.pop("version", None)
    return head + "\n".join(_tables(by_name, by_alias, (), ()))


def _renamed(platform: Platform, name: str) -> Platform:
    """`platform` named `name`, refused here where the file would be refused when loaded
    (a blank name, a preset's): it was written, and failed only at the next load."""
    check_kinds(("name", name, str, "a platform name"))
    if name in preset_names():
        raise SpecError(
            f"{name!r} is the name of a preset; a platform file needs a name of its own",
            field="name",
        )
    try:
        Platform.model_validate({**platform.model_dump(), "name": name}, context={"si": True})
    except ValidationError as exc:
        message = reported_error(exc)["msg"].removeprefix("Value error, ")
        raise SpecError(message, field="name") from None
    return platform.model_copy(update={"name": name})


def _tables(
    by_name: dict[str, Any],
    by_alias: dict[str, Any],
    path: tuple[str, ...],
    keys: tuple[str, ...],
) -> list[str]:
    """The table at `path` (internal names; `keys`, the same as the file's keys): its own
    keys first, then its sub-tables, as TOML wants them."""
    own: list[str] = []
    subtables: list[str] = []
    for (name, value), alias in zip(by_name.items(), by_alias, strict=True):
        if isinstance(value, dict):
            if value:  # an empty table is the default
                subtables.extend(_tables(value, by_alias[alias], (*path, name), (*keys, alias)))
            continue
        if value == "":  # a blank description or source is the default
            continue
        own.append(f"{_key(alias)} = {_value(value, field_kind((*path, name)))}")
    header = [f"[{'.'.join(_key(k) for k in keys)}]"] if keys else []
    block = [*header, *own, ""] if own or not subtables else []
    return block + subtables


def _key(key: str) -> str:
    return key if _BARE_KEY.fullmatch(key) else _string(key)


def _string(text: str) -> str:
    """`text` as a TOML basic string. JSON's escapes are TOML's, but JSON leaves DEL (U+007F)
    bare, which TOML refuses in a string: a description read from `"\\u007f"` was written
    back as a file that did not load."""
    return json.dumps(text, ensure_ascii=False).replace("\x7f", "\\u007f")


def _value(value: Any, kind: Kind | None) -> str:
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, str):
        return _string(value)
    if kind is None:
        return repr(value)
    return _string(quantity_text(float(value), kind))


def quantity_text(value: float, kind: Kind) -> str:
    """`value` (SI) as a quantity string that parses back to exactly `value`: readable where
    a prefix makes it so ("36 GiB/s", "613.7 W"), else the exact number in SI units."""
    # "3 GiB/s" before "3.22 GB/s"; binary prefixes are for bytes only
    spellings = (True, False) if kind in (Kind.SIZE, Kind.BANDWIDTH) else (False,)
    for digits in range(1, 18):
        for binary in spellings:
            text = format_si(value, kind, binary=binary, digits=digits)
            if "e" not in text.split()[0] and _parses_to(text, kind, value):  # not "5e+02 mW"
                return text
    return f"{value!r} {kind.si_name}"


def _parses_to(text: str, kind: Kind, value: float) -> bool:
    try:
        return parse(text, kind) == value
    except UnitError:  # a prefix a file may not write ("0.5 mHz" as a clock)
        return False
