"""Load platforms from TOML: the shipped presets or a user's file.

A file may `extends = "rans"` (a preset name or a path relative to the file)
and override any field; tables are merged key by key.
"""

from __future__ import annotations

import os
import tomllib
from importlib import resources
from pathlib import Path
from typing import Any

from pydantic import ValidationError

from ndpkit.errors import SpecError, UnknownNameError
from ndpkit.hw.interfaces import expand_interface
from ndpkit.hw.platform import Platform
from ndpkit.hw.spec import reported_error, spec_error

_PRESETS = "ndpkit.hw.presets"


def preset_names() -> list[str]:
    """Names of the platforms shipped with ndpkit."""
    files = resources.files(_PRESETS).iterdir()
    return sorted(f.name.removesuffix(".toml") for f in files if f.name.endswith(".toml"))


def load_platform(name_or_path: str | Path) -> Platform:
    """Load a preset by name (`"rfns"`) or a TOML file by path."""
    layers = _layers(name_or_path, seen=(), named_by=None)
    data: dict[str, Any] = {}
    for _, layer in reversed(layers):
        data = _merge(data, layer)
    platform = _validate(data, layers)
    if names_a_file(name_or_path):
        _own_name(layers)
    return platform


def validate_platform(data: dict[str, Any], *, source: str) -> Platform:
    """Validate a parsed platform table, turning pydantic's report into one SpecError."""
    return _validate(data, [(source, data)])


Layer = tuple[str, dict[str, Any]]
"""One file of an `extends` chain: its name for messages and its table."""


def _validate(data: dict[str, Any], layers: list[Layer]) -> Platform:
    """Validate the merged table; an error names the file of the chain (child first)
    that wrote the bad value, not the file that was loaded."""
    data = {k: v for k, v in data.items() if k != "extends"}
    if "host_link" in data:
        data["host_link"] = expand_interface(data["host_link"])
    try:
        return Platform.model_validate(data)
    except ValidationError as exc:
        loc = reported_error(exc)["loc"]
        source = next((name for name, layer in layers if _has(layer, loc)), layers[0][0])
        raise spec_error(exc, source, model=Platform) from None


def _own_name(layers: list[Layer]) -> None:
    """A user's file that extends another must name itself: under the parent's name it
    would pass for the parent, e.g. `--wall-times printed` would apply the parent's
    published full-server times to a different machine."""
    source, top = layers[0]
    parent = top.get("extends")
    if parent is None or "name" in top:
        return
    raise SpecError(
        f"required: a file that extends {parent!r} needs a name of its own, or it would pass "
        f"for {parent!r} (e.g. --wall-times printed would apply that platform's published "
        "times to this machine)",
        source=source,
        field="name",
    )


def _has(table: dict[str, Any], loc: tuple[str | int, ...]) -> bool:
    node: Any = table
    for part in loc:
        if not isinstance(node, dict) or part not in node:
            return False
        node = node[part]
    return True


def _layers(
    name_or_path: str | Path, seen: tuple[tuple[str, str], ...], named_by: str | None
) -> list[Layer]:
    """The chain of tables from `name_or_path` up its `extends`, child first.

    `seen` holds (identity, name) of the files below; `named_by` is the file whose
    `extends` names this one: errors in resolving the name are that file's."""
    if not str(name_or_path).strip():
        what = "is empty: give a preset's name or a platform file"
        raise SpecError(what, source=named_by, field="extends" if named_by else "platform")
    path = Path(name_or_path)
    is_file = names_a_file(name_or_path)
    # A file is the same file however it is reached ("a.toml", "../d/a.toml").
    # realpath: pathlib's resolve() raises RuntimeError on a loop of links before Python 3.13,
    # where reading the file gives the clear "too many levels of symbolic links".
    key = os.path.realpath(path) if is_file else str(name_or_path)
    if key in (identity for identity, _ in seen):
        chain = " -> ".join((*(name for _, name in seen), str(name_or_path)))
        raise SpecError(f"forms a cycle: {chain}", source=named_by, field="extends")
    if is_file:
        # As the user wrote it: str(path) would turn "./rans" into "rans", a preset's name.
        source = str(name_or_path)
        data = _read_file(path, named_by, source)
    elif str(name_or_path) in preset_names():
        source = f"preset {name_or_path}"
        text = resources.files(_PRESETS).joinpath(f"{name_or_path}.toml").read_text("utf-8")
        data = _parse(text, source)
    elif named_by is None:
        raise UnknownNameError(
            "platform", str(name_or_path), preset_names(), hint=file_hint(name_or_path)
        )
    else:
        raise SpecError(
            str(UnknownNameError("platform", str(name_or_path), preset_names())),
            source=named_by,
            field="extends",
        )
    if "host_link" in data:
        # Expanded per file, so that a child's `[host_link]` overrides merge into a
        # parent's named interface.
        try:
            data["host_link"] = expand_interface(data["host_link"])
        except UnknownNameError as exc:
            where = f"{source}: host_link"
            raise UnknownNameError(exc.kind, exc.name, exc.known, source=where) from None
    layers = [(source, data)]
    parent = data.get("extends")
    if parent is None:
        return layers
    if not isinstance(parent, str):
        raise SpecError("must be a preset name or a path", source=source, field="extends")
    parent_ref: str | Path = parent
    if is_file and names_a_file(parent):  # relative to this file, not to the current directory
        # A str, keeping a trailing "/" that a Path would drop (`_read_file` checks it).
        parent_ref = str(path.parent / parent) + ("/" if parent.endswith(("/", os.sep)) else "")
    return layers + _layers(parent_ref, (*seen, (key, str(name_or_path))), named_by=source)


def names_a_file(name_or_path: str | Path, suffixes: tuple[str, ...] = (".toml",)) -> bool:
    """A path to a user's file, not a shipped name (a preset's, a profile set's): a `Path`, a
    name ending in one of `suffixes`, or a name with a directory in it (presets have none, so
    "p/ok.json" missing is "file not found"). Any other name is a shipped one, even where a
    file or directory of that name happens to be: else a directory `rans/` in the current
    directory would break every preset that extends `rans`. (Text, not a Path, keeps "./rans"
    a path: pathlib makes it "rans".)"""
    if isinstance(name_or_path, Path):
        return True
    text = str(name_or_path)
    return Path(text).suffix in suffixes or "/" in text or os.sep in text


def file_hint(name: str | Path) -> str | None:
    """For an unknown shipped name that is a file here: how to name the file."""
    if not Path(name).is_file():
        return None
    return f"a file {str(name)!r} is here: give it as ./{name}"


def _read_file(path: Path, named_by: str | None, shown: str) -> dict[str, Any]:
    """The TOML table in `path`, named `shown` in errors."""
    if shown.endswith(("/", os.sep)) and path.exists() and not path.is_dir():
        # pathlib drops the slash, which would quietly take the file
        raise SpecError("not a directory, as its trailing '/' says it is", source=shown)
    if not path.name or path.is_dir():  # "" is "."; a directory is no platform
        what = f"{shown!r} is a directory, not a platform file"
        if named_by is not None:
            raise SpecError(what, source=named_by, field="extends")
        raise SpecError(what, source=shown)
    try:
        # utf-8-sig: a byte-order mark (Windows editors write one) is not TOML.
        text = path.read_text(encoding="utf-8-sig")
    except FileNotFoundError:
        if named_by is not None:
            raise SpecError(f"file not found: {shown}", source=named_by, field="extends") from None
        raise SpecError("file not found", source=shown) from None
    except (OSError, UnicodeDecodeError) as exc:
        raise SpecError(f"cannot read file ({exc})", source=shown) from None
    return _parse(text, shown)


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
