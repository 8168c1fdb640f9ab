"""Load platforms from TOML: the shipped presets or a user's file.

A file may `extends = "rans"` (a preset name or a path relative to the file)
and override any field; tables are merged key by key.
"""

from __future__ import annotations

import tomllib
from importlib import resources
from pathlib import Path
from typing import Any

from pydantic import ValidationError

from ndpkit.errors import SpecError, UnknownNameError
from ndpkit.hw.interfaces import expand_interface
from ndpkit.hw.platform import Platform
from ndpkit.hw.spec import spec_error

_PRESETS = "ndpkit.hw.presets"


def preset_names() -> list[str]:
    """Names of the platforms shipped with ndpkit."""
    files = resources.files(_PRESETS).iterdir()
    return sorted(f.name.removesuffix(".toml") for f in files if f.name.endswith(".toml"))


def load_platform(name_or_path: str | Path) -> Platform:
    """Load a preset by name (`"rfns"`) or a TOML file by path."""
    data = _resolve(name_or_path, seen=())
    source = _describe(name_or_path)
    return validate_platform(data, source=source)


def validate_platform(data: dict[str, Any], *, source: str) -> Platform:
    """Validate a parsed platform table, turning pydantic's report into one SpecError."""
    data = {k: v for k, v in data.items() if k != "extends"}
    if "host_link" in data:
        data["host_link"] = expand_interface(data["host_link"])
    try:
        return Platform.model_validate(data)
    except ValidationError as exc:
        raise spec_error(exc, source) from None


def _describe(name_or_path: str | Path) -> str:
    path = Path(name_or_path)
    if path.suffix == ".toml" or path.exists():
        return str(path)
    return f"preset {name_or_path}"


def _resolve(name_or_path: str | Path, seen: tuple[str, ...]) -> dict[str, Any]:
    key = str(name_or_path)
    if key in seen:
        raise SpecError(f"'extends' forms a cycle: {' -> '.join((*seen, key))}", field="extends")
    path = Path(name_or_path)
    if path.suffix == ".toml" or path.exists():
        data = _read_file(path)
        base_dir = path.parent
    elif key in preset_names():
        text = resources.files(_PRESETS).joinpath(f"{key}.toml").read_text(encoding="utf-8")
        data = _parse(text, f"preset {key}")
        base_dir = None
    else:
        raise UnknownNameError("platform", key, preset_names())
    if "host_link" in data:
        # Expanded per file, so that a child's `[host_link]` overrides merge into a
        # parent's named interface.
        data["host_link"] = expand_interface(data["host_link"])
    parent = data.get("extends")
    if parent is None:
        return data
    if not isinstance(parent, str):
        raise SpecError("must be a preset name or a path", source=_describe(key), field="extends")
    parent_ref: str | Path = parent
    if base_dir is not None and parent.endswith(".toml"):
        parent_ref = base_dir / parent
    return _merge(_resolve(parent_ref, (*seen, key)), data)


def _read_file(path: Path) -> dict[str, Any]:
    try:
        text = path.read_text(encoding="utf-8")
    except FileNotFoundError:
        raise SpecError("file not found", source=str(path)) from None
    except (OSError, UnicodeDecodeError) as exc:
        raise SpecError(f"cannot read file ({exc})", source=str(path)) from None
    return _parse(text, str(path))


def _parse(text: str, source: str) -> dict[str, Any]:
    try:
        return tomllib.loads(text)
    except tomllib.TOMLDecodeError as exc:
        raise SpecError(f"malformed TOML: {exc}", source=source) from None


def _merge(base: dict[str, Any], override: dict[str, Any]) -> dict[str, Any]:
    merged = dict(base)
    for key, value in override.items():
        if isinstance(value, dict) and isinstance(merged.get(key), dict):
            merged[key] = _merge(merged[key], value)
        else:
            merged[key] = value
    return merged
