"""NASCENT2's devices as declared parameters (spec §1, §10.1, §15; gem5/Accelergy style).

`devices.toml` beside this module declares the SmartSSD, the stand-alone Alveo U250 baseline
and the i7-8700 CPU baseline. Every entry is `{ value = ..., source = "..." }`: a unit string
for a quantity ("3 GB/s") or an integer for a count, and where it comes from ([paper],
[derived], [choice], [external]). Inside ndpkit the values are SI floats.

A user file has the same shape and may write `extends = "smartssd"` to inherit every entry
it does not set. `overrides` replace single entries, e.g.
`{"smartssd": {"dram_random_latency": "200 ns"}}`. Unknown keys, missing keys, a quantity of
the wrong kind, a negative or zero quantity, a non-positive count and a 𝒫 (`sorter_width`)
or ℒ (`bram_rows`) that is not a power of two (2 ≤ 𝒫 ≤ 2^15), and an ℒ that takes the sort
kernel's capacity 2,048·𝒫·ℒ past 2^32 elements (its indices are 32-bit) are errors naming
the file and the field.

Example:
    >>> devices = load_devices()
    >>> devices.fpga("smartssd").s2f_bytes_per_s
    3000000000.0
"""

from __future__ import annotations

import tomllib
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field, fields, replace
from importlib import resources
from pathlib import Path
from types import MappingProxyType
from typing import Any, Self, TypeVar

from ndpkit.errors import SpecError, UnknownNameError, as_path, closest
from ndpkit.files import NotASpecFileError, read_spec_text
from ndpkit.hw.loader import parse_nested
from ndpkit.nascent.bitonic import MAX_CAPACITY, MAX_P
from ndpkit.units import Kind, UnitError, parse

BUILTIN = "ndpkit.nascent:devices.toml"
"""How errors name the shipped file."""
OVERRIDE = "[override]"
"""The source note of a value given on the command line (`--option DEVICE.ENTRY=…`)."""

_COUNT = None
_T = TypeVar("_T")
_FPGA_KEYS: dict[str, tuple[str, Kind | None]] = {
    "s2f_bandwidth": ("s2f_bytes_per_s", Kind.BANDWIDTH),
    "d2f_bandwidth": ("d2f_bytes_per_s", Kind.BANDWIDTH),
    "host_bandwidth": ("host_bytes_per_s", Kind.BANDWIDTH),
    "host_ssd_bandwidth": ("host_ssd_bytes_per_s", Kind.BANDWIDTH),
    "dram": ("dram_bytes", Kind.SIZE),
    "clock": ("clock_hz", Kind.FREQUENCY),
    "axi_width": ("axi_bytes", Kind.SIZE),
    "sorter_width": ("p", _COUNT),
    "bram_rows": ("l", _COUNT),
    "sort_kernels": ("sort_kernels", _COUNT),
    "decoder_kernels": ("decoder_kernels", _COUNT),
    "shuffle_kernels": ("shuffle_kernels", _COUNT),
    "pcs_per_cycle": ("u_pcs", _COUNT),
    "merges_per_cycle": ("u_mrg", _COUNT),
    "merge_tree_elements_per_cycle": ("merge_tree_elements_per_cycle", _COUNT),
    "dram_random_latency": ("t_rand_s", Kind.TIME),
    "ssd_read_latency": ("ssd_read_latency_s", Kind.TIME),
    "ssd_page": ("ssd_page_bytes", Kind.SIZE),
    "dictionary_memory": ("dictionary_memory_bytes", Kind.SIZE),
    "onchip_memory": ("onchip_bytes", Kind.SIZE),
    "power": ("power_w", Kind.POWER),
}
_CPU_KEYS: dict[str, tuple[str, Kind | None]] = {
    "threads": ("threads", _COUNT),
    "clock": ("clock_hz", Kind.FREQUENCY),
    "ssd_read_bandwidth": ("ssd_read_bytes_per_s", Kind.BANDWIDTH),
    "power": ("power_w", Kind.POWER),
}
MAX_KERNELS = 1024
"""The most instances of one kernel (sort, decoder, shuffle) a device may declare. Six
shuffle kernels take 3 % of the SmartSSD's LUTs and the sort kernel 39 % (Table 1), so not
even the U250 (3.3 times the LUTs) holds 700 shuffle kernels; a count past this is a typo,
and each instance costs the simulation events (a count of 10^7 ran for minutes)."""
_AT_MOST: dict[str, int] = {
    "sort_kernels": MAX_KERNELS,
    "decoder_kernels": MAX_KERNELS,
    "shuffle_kernels": MAX_KERNELS,
}
_POWER_OF_TWO: dict[str, tuple[int, int | None]] = {
    "sorter_width": (2, MAX_P),
    "bram_rows": (1, None),
}
"""Entries that must be a power of two, with their least and greatest value: a 1-wide
sorter has no comparator, and the sort kernel rejects it (spec §4, 𝒫 = 2^m, m ≥ 1); the
kernel builds the 2𝒫 merger network. ℒ's bound depends on 𝒫: the capacity 2,048·𝒫·ℒ must
stay within 2^32 (`_check_capacity`)."""


@dataclass(frozen=True)
class FpgaDevice:
    """An FPGA that runs the NASCENT2 kernels (SmartSSD or a stand-alone board). SI units."""

    name: str
    description: str
    s2f_bytes_per_s: float
    d2f_bytes_per_s: float
    host_bytes_per_s: float
    host_ssd_bytes_per_s: float
    dram_bytes: float
    clock_hz: float
    axi_bytes: float
    p: int
    l: int  # noqa: E741 - the spec's symbol ℒ
    sort_kernels: int
    decoder_kernels: int
    shuffle_kernels: int
    u_pcs: int
    u_mrg: int
    merge_tree_elements_per_cycle: int
    t_rand_s: float
    ssd_read_latency_s: float
    ssd_page_bytes: float
    dictionary_memory_bytes: float
    onchip_bytes: float
    power_w: float
    sources: Mapping[str, str] = field(default_factory=dict, compare=False, repr=False)
    origins: Mapping[str, str] = field(default_factory=dict, compare=False, repr=False)
    """Where each entry was set, by attribute, as an error names it (`entry_origin`)."""

    @property
    def sort_capacity(self) -> int:
        """Eq. 3: 32-bit elements per on-chip iteration of one sort kernel."""
        return 2048 * self.p * self.l

    def with_(self, **changes: Any) -> Self:
        """A copy with SI-valued fields replaced (the source notes say `override`)."""
        return replace(self, **_overridden_fields(self, changes))


@dataclass(frozen=True)
class CpuDevice:
    """The host CPU of the CPU baseline. SI units."""

    name: str
    description: str
    threads: int
    clock_hz: float
    ssd_read_bytes_per_s: float
    power_w: float
    sources: Mapping[str, str] = field(default_factory=dict, compare=False, repr=False)
    origins: Mapping[str, str] = field(default_factory=dict, compare=False, repr=False)
    """Where each entry was set, by attribute, as an error names it (`entry_origin`)."""

    def with_(self, **changes: Any) -> Self:
        return replace(self, **_overridden_fields(self, changes))


Device = FpgaDevice | CpuDevice


def _overridden_fields(device: FpgaDevice | CpuDevice, changes: dict[str, Any]) -> dict[str, Any]:
    """`changes` to SI-valued fields, with each noted as an override (`with_`)."""
    keys = {attr: key for key, (attr, _) in _keys_of(device).items()}
    origins = {attr: f"{device.name}.{keys.get(attr, attr)} (overridden)" for attr in changes}
    return {
        **changes,
        "sources": {**device.sources, **dict.fromkeys(changes, OVERRIDE)},
        "origins": {**device.origins, **origins},
    }


@dataclass(frozen=True)
class DeviceSet:
    """The devices of one file, by name."""

    devices: Mapping[str, Device]
    source: str

    def names(self) -> list[str]:
        return sorted(self.devices)

    def fpga(self, name: str) -> FpgaDevice:
        return self._get(name, FpgaDevice, "FPGA device")

    def cpu(self, name: str) -> CpuDevice:
        return self._get(name, CpuDevice, "CPU device")

    def _get(self, name: str, kind: type[_T], what: str) -> _T:
        device = self.devices.get(name)
        if not isinstance(device, kind):
            known = sorted(n for n, d in self.devices.items() if isinstance(d, kind))
            hint = None
            if device is not None:
                hint = f"{name} has kind {'cpu' if isinstance(device, CpuDevice) else 'fpga'}"
            raise UnknownNameError(what, name, known, hint=hint, source=self.source)
        return device


_FIXED_KEYS = ("kind", "description", "extends")
"""Entries that are not `{ value, source }` quantities, so `-o DEVICE.ENTRY` cannot set them."""


def load_devices(
    path: str | Path | None = None,
    overrides: Mapping[str, Mapping[str, Any]] | None = None,
    *,
    used: Sequence[str] | None = None,
) -> DeviceSet:
    """The shipped devices, plus or replaced by those of `path` (which may `extends` a
    shipped one), with single entries replaced by `overrides` ({device: {key: value}}).

    `used`: the devices the caller will take (a command's); a device of `path` that is none
    of them and no parent of one (through `extends` within the file) is refused, as is a
    file with no device: its values would be silently ignored (a `[smartsd]` typo)."""
    builtin = _read_builtin()
    if path is None:
        raw, source = builtin, BUILTIN
    else:
        source = str(as_path(path, "path"))  # a number was pathlib's TypeError
        raw = _read_file(Path(path))
        if used is not None:
            _check_used(raw, used, source)
    raw, key_sources = _resolve_extends(raw, builtin, source)
    own_source = dict.fromkeys(raw, source)
    if path is not None:
        # A user file adds devices or replaces shipped ones; the rest stay available.
        raw = {**{k: v for k, v in builtin.items() if k not in raw}, **raw}
    for name, changes in (overrides or {}).items():
        flags = [f"--option {name}.{key}={value}" for key, value in changes.items()]
        if name not in raw:
            raise UnknownNameError("device", name, sorted(raw), source=f"command line: {flags[0]}")
        for key, flag in zip(changes, flags, strict=True):
            if key in _FIXED_KEYS:
                raise SpecError(
                    f"a device's {key} is set in its device file (--devices), not overridden",
                    source="command line",
                    field=flag,
                )
        raw[name] = {
            **raw[name],
            **{k: {"value": v, "source": OVERRIDE} for k, v in changes.items()},
        }
    devices: dict[str, Device] = {}
    for name, table in raw.items():
        devices[name] = _device(name, table, own_source.get(name, BUILTIN), key_sources.get(name))
    return DeviceSet(MappingProxyType(devices), source)


def _check_used(raw: dict[str, dict[str, Any]], used: Sequence[str], source: str) -> None:
    """Every device of a user file is one of `used` or extended by one of them."""
    if not raw:
        raise SpecError(f"defines no device; this command takes {_listed(used)}", source=source)
    needed: set[str] = set()
    for taken in used:
        name = taken
        while name in raw and name not in needed:
            needed.add(name)
            parent = raw[name].get("extends")
            name = parent if isinstance(parent, str) and parent != name else ""
    for name in raw:
        if name not in needed:
            guess = closest(name, used)
            raise UnknownNameError(
                "device",
                name,
                list(used),
                hint=(f"did you mean {guess!r}? " if guess else "")
                + "this command takes only those (and the devices they extend), "
                "so the file's values for it would be ignored",
                source=source,
            )


def _listed(names: Sequence[str]) -> str:
    quoted = [repr(n) for n in names]
    return quoted[0] if len(quoted) == 1 else f"{', '.join(quoted[:-1])} and {quoted[-1]}"


def _read_builtin() -> dict[str, dict[str, Any]]:
    text = resources.files("ndpkit.nascent").joinpath("devices.toml").read_text("utf-8")
    return _tables(_parse(text, BUILTIN), BUILTIN)


def _read_file(path: Path) -> dict[str, dict[str, Any]]:
    try:
        text = read_spec_text(path)
    except NotASpecFileError as exc:
        raise SpecError(str(exc), source=str(path)) from None
    except FileNotFoundError:
        raise SpecError("file not found", source=str(path)) from None
    except OSError as exc:
        raise SpecError(f"cannot read: {exc.strerror}", source=str(path)) from None
    except UnicodeDecodeError as exc:
        raise SpecError(f"cannot read: not UTF-8 ({exc})", source=str(path)) from None
    return _tables(_parse(text, str(path)), str(path))


def _parse(text: str, source: str) -> dict[str, Any]:
    try:
        document: dict[str, Any] = parse_nested(tomllib.loads, text, source)
    except tomllib.TOMLDecodeError as exc:
        raise SpecError(f"malformed TOML: {exc}", source=source) from None
    return document


def _tables(doc: dict[str, Any], source: str) -> dict[str, dict[str, Any]]:
    version = doc.pop("version", None)
    if version != 1:
        raise SpecError(f"must be 1, got {version!r}", source=source, field="version")
    for name, table in doc.items():
        if not isinstance(table, dict):
            raise SpecError("expected a [device] table", source=source, field=name)
    return doc


def _resolve_extends(
    raw: dict[str, dict[str, Any]], builtin: dict[str, dict[str, Any]], source: str
) -> tuple[dict[str, dict[str, Any]], dict[str, dict[str, tuple[str, str]]]]:
    """Each device with its `extends` chain applied, parents first: a device of the file
    may extend another of the file (which may itself extend one), or a shipped one; a
    device extending itself extends the shipped device of that name. A cycle is an error.
    Also where each device's entries were set: (file, device), the file `source` or
    BUILTIN for those inherited from a shipped device."""
    out: dict[str, dict[str, Any]] = {}
    origins: dict[str, dict[str, tuple[str, str]]] = {}

    def resolve(name: str, seen: tuple[str, ...]) -> dict[str, Any]:
        if name in out:
            return out[name]
        table = raw[name]
        parent_name = table.get("extends")
        own = dict.fromkeys((k for k in table if k != "extends"), (source, name))
        if parent_name is None:
            out[name], origins[name] = dict(table), own
            return out[name]
        if parent_name in seen:
            chain = " → ".join([*seen, name, parent_name])
            raise SpecError(f"extends in a cycle: {chain}", source=source, field=f"{name}.extends")
        if parent_name != name and parent_name in raw:
            parent = resolve(parent_name, (*seen, name))
            inherited = origins[parent_name]
        elif parent_name in builtin:
            parent = builtin[parent_name]
            inherited = dict.fromkeys(parent, (BUILTIN, parent_name))
        else:
            known = sorted(set(builtin) | set(raw))
            raise SpecError(
                f"extends unknown device {parent_name!r}; known: {', '.join(known)}",
                source=source,
                field=f"{name}.extends",
            )
        out[name] = {**parent, **{k: v for k, v in table.items() if k != "extends"}}
        origins[name] = {**inherited, **own}
        return out[name]

    for name in raw:
        resolve(name, ())
    return {name: out[name] for name in raw}, {name: origins[name] for name in raw}


def _device(
    name: str,
    table: dict[str, Any],
    source: str,
    key_sources: Mapping[str, tuple[str, str]] | None = None,
) -> Device:
    """The device of `table` (resolved: `extends` applied); `source` is its own file, and
    `key_sources` the (file, device) that set each entry, where an entry was inherited
    through `extends`."""
    key_sources = key_sources or {}

    def where(key: str) -> tuple[str, str]:
        return _where(name, key, table[key], key_sources.get(key, (source, name)))

    kind = table.get("kind")
    if kind not in ("fpga", "cpu"):
        raise SpecError(
            f"must be 'fpga' or 'cpu', got {kind!r}", source=source, field=f"{name}.kind"
        )
    keys = _FPGA_KEYS if kind == "fpga" else _CPU_KEYS
    allowed = {"kind", "description", *keys}
    unknown = sorted(set(table) - allowed)
    if unknown:
        file, setter = key_sources.get(unknown[0], (source, name))
        if (file, setter) != (source, name):  # inherited: the fault is this device's kind
            raise SpecError(
                f"kind {kind!r} does not take {unknown[0]}, which {name} inherits from "
                f"{setter} ({file}) through extends",
                source=source,
                field=f"{name}.kind",
            )
        at, field = where(unknown[0])
        raise SpecError(
            f"unknown key; expected one of {', '.join(sorted(allowed))}", source=at, field=field
        )
    values: dict[str, Any] = {"name": name, "description": str(table.get("description", ""))}
    sources: dict[str, str] = {}
    origins: dict[str, str] = {}
    for key, (attr, quantity) in keys.items():
        if key not in table:
            raise SpecError("missing", source=source, field=f"{name}.{key}")
        at, field = where(key)
        value, note = _entry(table[key], quantity, at, field)
        _check_bounds(key, value, at, field)
        values[attr] = value
        sources[attr] = note
        origins[attr] = f"{at}: {field}"
    if kind == "fpga":
        # Blamed on the entry a --option overrode, if either was, else on the file's rows.
        given = "sorter_width" if _overridden(table.get("sorter_width")) else "bram_rows"
        at, field = where(given)
        _check_capacity(values["p"], values["l"], at, field)
    cls: type[FpgaDevice] | type[CpuDevice] = FpgaDevice if kind == "fpga" else CpuDevice
    return cls(**values, sources=MappingProxyType(sources), origins=MappingProxyType(origins))


def entry_origin(device: FpgaDevice | CpuDevice, key: str) -> str:
    """Where a device's entry `key` (a device-file key, "dictionary_memory") was set, as an
    error names it: the file that set it (the device's own, or the one it extends) and the
    field, the command line's `--option`, or the field as overridden by `with_`."""
    attr = _keys_of(device)[key][0]
    return device.origins.get(attr, f"{device.name}.{key}")


def _keys_of(device: FpgaDevice | CpuDevice) -> dict[str, tuple[str, Kind | None]]:
    return _FPGA_KEYS if isinstance(device, FpgaDevice) else _CPU_KEYS


def _overridden(entry: Any) -> bool:
    return isinstance(entry, dict) and entry.get("source") == OVERRIDE


def _where(name: str, key: str, entry: Any, set_by: tuple[str, str]) -> tuple[str, str]:
    """(source, field) an error about device `name`'s entry `key` names: the command line
    if overridden, else the file and device that set it (`set_by`), saying so where `name`
    inherits it."""
    if _overridden(entry):
        return _origin(name, key, entry, set_by[0])
    file, setter = set_by
    at, field = _origin(setter, key, entry, file)
    return at, field if setter == name else f"{field} (inherited by {name})"


def _origin(name: str, key: str, entry: Any, source: str) -> tuple[str, str]:
    """Where an entry came from, as an error names it: the device file and field, or the
    command line's `--option` that overrode it."""
    if _overridden(entry):
        return "command line", f"--option {name}.{key}={entry['value']}"
    return source, f"{name}.{key}"


def _check_bounds(key: str, value: int, source: str, where: str) -> None:
    most = _AT_MOST.get(key)
    if most is not None and value > most:
        raise SpecError(f"must be at most {most:,}, got {value:,}", source=source, field=where)
    bounds = _POWER_OF_TWO.get(key)
    if bounds is None:
        return
    least, most = bounds
    if value & (value - 1) or value < least:
        raise SpecError(
            f"must be a power of two ≥ {least}, got {value}", source=source, field=where
        )
    if most is not None and value > most:
        raise SpecError(f"must be at most {most}, got {value}", source=source, field=where)


def _check_capacity(p: int, l: int, source: str, field: str) -> None:  # noqa: E741
    """The sort kernel's capacity 2,048·𝒫·ℒ tags each element with a 32-bit index: a larger
    one was once wrapped to 0 by the kernel, which then lost the data or divided by zero."""
    if 2048 * p * l > MAX_CAPACITY:
        raise SpecError(
            f"bram_rows must be at most {MAX_CAPACITY // (2048 * p)} with sorter_width = {p}: "
            f"the sort kernel's capacity 2,048·𝒫·ℒ must not exceed 2^32 elements (32-bit "
            f"indices), got bram_rows = {l}",
            source=source,
            field=field,
        )


def _entry(entry: Any, quantity: Kind | None, source: str, where: str) -> tuple[Any, str]:
    """(SI value, source note) of one `{ value, source }` entry."""
    if not isinstance(entry, dict) or "value" not in entry:
        raise SpecError('expected { value = ..., source = "..." }', source=source, field=where)
    extra = sorted(set(entry) - {"value", "source"})
    if extra:
        raise SpecError(
            f"unknown key {extra[0]!r}; expected value and source", source=source, field=where
        )
    note = entry.get("source")
    if not isinstance(note, str) or not note.strip():
        raise SpecError("every value needs a source note", source=source, field=f"{where}.source")
    raw = entry["value"]
    if quantity is None:
        if isinstance(raw, bool) or not isinstance(raw, int) or raw < 1:
            raise SpecError(f"must be a whole number ≥ 1, got {raw!r}", source=source, field=where)
        return raw, note
    try:
        value = parse(raw, quantity)
    except UnitError as exc:
        raise SpecError(str(exc), source=source, field=where) from None
    if not value > 0:
        raise SpecError(f"must be positive, got {raw!r}", source=source, field=where)
    return value, note


def device_fields(device: Device) -> list[str]:
    """The SI-valued fields of a device, in declaration order (for reports)."""
    return [
        f.name
        for f in fields(device)
        if f.name not in ("name", "description", "sources", "origins")
    ]
