"""`ndpkit platforms`: list, show and check platform specs."""

from __future__ import annotations

from enum import StrEnum
from typing import Annotated, Any

import typer

from ndpkit.cli.common import (
    COMMAND_LINE,
    Format,
    FormatOption,
    emit,
    platform_flag,
    platform_flag_noted,
    stderr,
    user_errors,
    write_out,
)
from ndpkit.errors import SpecError, closest
from ndpkit.hw import Engine, Platform, load_platform, preset_names
from ndpkit.hw.writer import field_kind, platform_toml
from ndpkit.kernels import kernel_names
from ndpkit.profile import load_profiles
from ndpkit.report import Column, Table, to_json
from ndpkit.units import Kind, format_si

app = typer.Typer(
    help="List, show and validate platform specs (hardware as TOML data).", no_args_is_help=True
)


def summary(platform: Platform) -> dict[str, Any]:
    engines = platform.engines
    return {
        "name": platform.name,
        "devices": platform.devices,
        "engines": engines.count if engines else 0,
        "engine_kind": engines.kind if engines else None,
        "switch_layer": platform.switch_layer.scheme,
        "host_link_gib_per_s": platform.host_link.bandwidth_bytes_per_s / 2**30,
        "description": platform.description,
    }


@app.command("list")
def list_(fmt: FormatOption = Format.table) -> None:
    """List the shipped presets."""
    with user_errors():
        rows = [summary(load_platform(name)) for name in preset_names()]
    emit(
        [
            Table(
                "platforms",
                "Platform presets",
                [
                    Column("name", "name", None),
                    Column("devices", "SSDs", 0),
                    Column("engines", "engines", 0),
                    Column("engine_kind", "kind", None),
                    Column("switch_layer", "switch layer", None),
                    Column("host_link_gib_per_s", "host link (GiB/s)", 2),
                    Column("description", "description", None),
                ],
                rows,
            )
        ],
        fmt,
    )


class ShowFormat(StrEnum):
    table = "table"
    json = "json"
    csv = "csv"
    toml = "toml"


@app.command()
def show(
    name: Annotated[
        str, typer.Argument(metavar="NAME", help="A preset name (see `list`) or a TOML file.")
    ],
    fmt: Annotated[
        ShowFormat,
        typer.Option(
            "--format",
            "-f",
            help="Output: a table for people, JSON/CSV, or a platform file (toml).",
        ),
    ] = ShowFormat.table,
    copy_name: Annotated[
        str | None,
        typer.Option(
            "--name",
            help="With -f toml: the name the written platform takes "
            "(default: the platform's, or NAME-copy for a preset).",
        ),
    ] = None,
) -> None:
    """Show every field of a platform, in SI units with readable prefixes.

    CSV gives the JSON's numbers, with their SI unit in a column of its own. `-f toml`
    writes the platform as a file of its own (no `extends`) to copy and edit."""
    with user_errors():
        if copy_name is not None and fmt is not ShowFormat.toml:
            raise SpecError(
                "names the copy that -f toml writes; add -f toml",
                source=COMMAND_LINE,
                field="--name",
            )
        platform = platform_flag(name, "NAME")
        if fmt is ShowFormat.toml:
            write_out(_copy(platform, copy_name))
            return
    data = platform.model_dump()
    if fmt is ShowFormat.json:
        write_out(to_json(data))
        return
    fields = _flatten(data)
    columns = [Column("field", "field", None), Column("value", "value", None)]
    if fmt is ShowFormat.csv:
        rows = [{"field": k, "value": v, "unit": _unit(k, v)} for k, v in fields]
        columns.append(Column("unit", "unit", None))
    else:
        rows = [{"field": key, "value": _readable(key, value)} for key, value in fields]
    title = f"Platform {platform.name} — {platform.description}"
    emit([Table("platform", title, columns, rows, note=platform.source)], Format(fmt.value))


def _copy(platform: Platform, given: str | None) -> str:
    """The platform as a file (`platform_toml`), named `given`; a copy of a preset, whose
    name a file may not take, is NAME-copy unless `--name` says, and a note says so."""
    if given is None and platform.name in preset_names():
        stderr().print(
            f"note: a platform file needs a name of its own; this copy of preset "
            f"{platform.name!r} is named {platform.name + '-copy'!r} (--name sets another)",
            highlight=False,
            markup=False,
        )
    try:
        return platform_toml(platform, given)
    except SpecError as exc:  # the name refused, said of the flag that gave it
        if exc.field != "name" or exc.source is not None:
            raise
        raise SpecError(exc.detail, source=COMMAND_LINE, field="--name") from None


@app.command()
def check(
    file: Annotated[
        str,
        typer.Argument(
            metavar="FILE", help="A platform TOML file (or a preset's name) to validate."
        ),
    ],
) -> None:
    """Validate a platform file; exit status 2 with the file and field on any error."""
    # A str, not a Path: pathlib turns "./rans" into "rans", a preset's name.
    with user_errors():
        platform, loaded = platform_flag_noted(file, "FILE")
    s = summary(platform)
    for note in [*loaded, *unshipped_apps(platform), *unpriced_host(platform)]:
        stderr().print(f"note: {file}: {note}", highlight=False, markup=False)
    ssds = f"{s['devices']} SSD{'' if s['devices'] == 1 else 's'}"
    engines = (
        f"{s['engines']} {s['engine_kind']} engine{'' if s['engines'] == 1 else 's'}"
        if s["engines"]
        else "no engines"
    )
    write_out(
        f"ok: {file}: platform {s['name']!r}, {ssds}, {engines}, switch layer {s['switch_layer']}\n"
    )


_PER_APP_TABLES = ("throughput", "bytes_per_cycle", "pipeline_delay_cycles", "power_active_by_app")


def unshipped_apps(
    platform: Platform, used: str = "used only with a profile of that name (--profiles)"
) -> list[str]:
    """A note for each per-app engine entry whose app ndpkit does not ship (a kernel or a
    profile preset's app): legal, for a user's own app with its own profile, but a typo
    (`lcc`) is otherwise never used and never reported. `used` says when it is used."""
    engines = platform.engines
    if engines is None:
        return []
    shipped = set(kernel_names()) | {
        app for name in ("rans-rfns", "risp") for app in load_profiles(name).apps
    }
    tables = [
        (f"engines.{Engine.model_fields[t].alias or t}", getattr(engines, t))  # as written
        for t in _PER_APP_TABLES
    ]
    if platform.public_cell is not None:  # the RU's fixed power per app: a typo is as unused
        tables.append(("public_cell.power_active_by_app", platform.public_cell.power_active_by_app))
    notes = []
    for key, entries in tables:
        for app in entries:
            if app in shipped:
                continue
            close = closest(app, sorted(shipped))
            guess = f" (did you mean {close!r}?)" if close else ""
            notes.append(f"{key}.{app}: no app ndpkit ships{guess}; {used}")
    return notes


def unpriced_host(platform: Platform) -> list[str]:
    """A note if the host draws no power in the platform's energy model: its powers default
    to 0, so a first file that leaves them out has a host that costs nothing, and a host-only
    run is reported at 0 J and +∞ MB/J without a word."""
    host = platform.host
    if platform.is_in_storage:  # RISP prices the host by component
        if host.energy_per_cycle_j or host.dram_power_w or host.chipset_power_w:
            return []
        keys, what = "energy_per_cycle, dram_power or chipset_power", "RISP's host prices"
    else:
        if host.power_active_w or host.power_idle_w:
            return []
        keys, what = "power_active or power_idle", "the whole server's powers"
    return [
        f"host: no {keys}: the energy model charges the host 0 J, busy or idle (a host-only "
        f"run, --split host, costs nothing: +∞ MB/J); give {what}"
    ]


def _flatten(data: dict[str, Any], prefix: str = "") -> list[tuple[str, Any]]:
    out: list[tuple[str, Any]] = []
    for key, value in data.items():
        path = f"{prefix}{key}"
        if isinstance(value, dict) and value:
            out.extend(_flatten(value, f"{path}."))
        elif not (isinstance(value, dict) or value is None or value == ""):
            out.append((path, value))
    return out


def _readable(key: str, value: Any) -> str:
    if not isinstance(value, float):
        return str(value)
    kind = _kind(key)
    return f"{value:g}" if kind is None else _quantity(value, kind)


def _unit(key: str, value: Any) -> str:
    """The SI unit of a field's number ('' for counts, ratios and text)."""
    kind = _kind(key) if isinstance(value, float) else None
    return "" if kind is None else kind.si_name


def _kind(key: str) -> Kind | None:
    """What a flattened field (`engines.throughput.lc`) measures."""
    return field_kind(tuple(key.split(".")))


def _quantity(value: float, kind: Kind) -> str:
    if kind not in (Kind.SIZE, Kind.BANDWIDTH):
        return format_si(value, kind, digits=6)
    if _is_binary(value) or value < 1024:  # under a KiB the two spellings are the same
        return format_si(value, kind, binary=True, digits=6)
    decimal = format_si(value, kind, digits=6)
    return f"{decimal} = {format_si(value, kind, binary=True, digits=6)}"


def _is_binary(value: float) -> bool:
    for unit in (2**40, 2**30, 2**20, 2**10):
        if value >= unit:
            scaled = value / unit
            return abs(scaled * 100 - round(scaled * 100)) < 1e-6
    return False
