"""What a NASCENT2 reproduction runs with: devices, model options, sizes, the simulation's
options, and the command line's `--full`, `--devices`, `--simulate` and `-o KEY=VALUE` read
into them."""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any, get_args

from ndpkit.cpus import usable_cpus
from ndpkit.errors import SpecError
from ndpkit.nascent.des import DesOptions, Schedule, ShuffleOrder
from ndpkit.nascent.system import ModelOptions
from ndpkit.nascent.timing import DramMerge, Overlap, Staging
from ndpkit.numerals import ascii_digits, plain_number, signed_whole
from ndpkit.units import Kind, UnitError, parse


@dataclass(frozen=True)
class Settings:
    """What a run uses: devices (a file and per-entry overrides), model options, sizes."""

    full: bool = False
    devices_file: Path | None = None
    overrides: dict[str, dict[str, Any]] = field(default_factory=dict)
    options: ModelOptions = field(default_factory=ModelOptions)
    seed: int = 2022
    threads: int = field(default_factory=usable_cpus)
    e8_scale_factor: float | None = None
    """E8's TPC-H scale factor; None: SF 0.1, or SF 1 with `full`."""
    e8_data_dir: Path | None = None
    """E8 on `<dir>/<table>.parquet`, generated at E8's scale factor, instead of generating
    the tables into a temporary directory."""
    simulate: bool = False
    """E6 and E7 rows also run the discrete-event simulation (`ndpkit.nascent.des`)."""
    des: DesOptions = field(default_factory=DesOptions)
    """The simulation's options (`-o des.KEY=VALUE`); used only with `simulate`."""

    @property
    def e1_sizes(self) -> list[int]:
        if self.full:
            return [1000, *(2**k for k in range(10, 23)), 8_000_000]
        return [1000, 2**10, 2**12, 2**14, 2**16, 2**17, 2**18, 2**20, 2**22, 8_000_000]

    @property
    def cpu_sort_cap(self) -> int:
        """The largest sort the CPU baseline runs here; larger ones are extrapolated."""
        return 8_000_000 if self.full else 2**22

    @property
    def e2_keys(self) -> int:
        return 2**26

    @property
    def cpu_decode_keys(self) -> int:
        return 2**24 if self.full else 2**20

    @property
    def e5_sizes(self) -> list[int]:
        return (
            [1000, 10_000, 100_000, 1_000_000, 2_000_000] if self.full else [1000, 10_000, 100_000]
        )

    @property
    def cpu_shuffle_cap_bytes(self) -> int:
        return 2**30 if self.full else 2**26

    @property
    def e8_sf(self) -> float:
        if self.e8_scale_factor is not None:
            return self.e8_scale_factor
        return 1.0 if self.full else 0.1


_INT_SETTINGS = ("merge_ways", "seed", "threads")
MAX_THREADS = 256
"""The most CPU-baseline threads `-o threads=` takes: each is a worker of a thread pool (the
multi-threaded sort and decoder), and a number far past the cores only exhausts memory."""
SEED_LIMIT = 2**64
"""Seeds (`-o seed=`, `-o des.seed=`) are whole numbers in [0, 2^64)."""
_INT_RANGES: dict[str, tuple[int, int | None]] = {
    "merge_ways": (2, None),  # a merge takes at least two runs
    "seed": (0, SEED_LIMIT - 1),
    "threads": (1, MAX_THREADS),
}
_CHOICES: dict[str, Any] = {"dram_merge": DramMerge, "overlap": Overlap, "staging": Staging}
DES_PREFIX = "des"
"""`-o des.KEY=VALUE` sets the simulation's options, so no device may be called `des`."""
_DES_CHOICES: dict[str, Any] = {"baseline_schedule": Schedule, "shuffle_order": ShuffleOrder}
_DES_KEYS = ("chunk_bytes", *_DES_CHOICES, "seed")
_UNREAD_ENTRIES: dict[tuple[str | None, str], str] = {
    (None, "onchip_memory"): "no model reads it: the on-chip sort capacity is "
    "2,048 × sorter_width × bram_rows (Eq. 3); set DEVICE.bram_rows",
    ("cpu", "threads"): "the CPU baseline is measured on this machine; its threads are "
    "-o threads=N",
    ("cpu", "clock"): "the CPU baseline is measured on this machine, at its own clock",
}
"""Device entries that no model or experiment reads, by (device or None for any, entry): a
device file may state them, but an override of one on the command line would change
nothing, and the run would look as if it had been used."""
_SIMULATION_ENTRIES = ("decoder_kernels",)
"""Device entries that only the discrete-event simulation reads (its decoder pool)."""


def settings_from_flags(
    *,
    full: bool = False,
    devices: str | None = None,
    options: Sequence[str] | None = None,
    simulate: bool = False,
    devices_flag: str = "--devices",
) -> Settings:
    """Settings from the command line: `--full`, `--devices FILE`, `--simulate` and
    `-o KEY=VALUE` pairs, where KEY is a model option (dram_merge, merge_ways, overlap,
    staging), seed, threads, des.ENTRY for the simulation (des.chunk_bytes="64 KiB",
    des.baseline_schedule, des.shuffle_order, des.seed; only with `simulate`), or
    DEVICE.ENTRY for a device entry (e.g. smartssd.dram_random_latency="200 ns").
    `devices_flag` is how the command line spells `--devices` (an empty one is refused)."""
    if devices is not None and not devices.strip():
        raise SpecError(
            "must name a device file, got an empty name", source="command line", field=devices_flag
        )
    model: dict[str, Any] = {}
    run: dict[str, Any] = {}
    des: dict[str, Any] = {}
    overrides: dict[str, dict[str, Any]] = {}
    given: dict[str, str] = {}
    for pair in options or []:
        key, sep, value = (part.strip() for part in pair.partition("="))
        flag = f"--option {pair}"
        if not sep or not key or not value:
            raise SpecError("expected KEY=VALUE", source="command line", field=flag)
        if key in given:  # which one would win is a guess the command line should not make
            raise SpecError(
                f"{key} is given twice (also as {given[key]!r})", source="command line", field=flag
            )
        given[key] = pair
        device, dot, entry = key.partition(".")
        if dot and device == DES_PREFIX:
            if not simulate:
                raise SpecError("applies with --simulate only", source="command line", field=flag)
            des[entry] = _des_value(entry, value, flag)
        elif dot:
            _check_read(device, entry, simulate, flag)
            overrides.setdefault(device, {})[entry] = int(value) if ascii_digits(value) else value
        elif key in _CHOICES:
            model[key] = _choice(value, _CHOICES[key], flag)
        elif key in _INT_SETTINGS:
            least, most = _INT_RANGES[key]
            if not ascii_digits(value) or int(value) < least or (most and int(value) > most):
                wanted = f"from {least} to {most}" if most else f"≥ {least}"
                raise SpecError(
                    f"must be a whole number {wanted}", source="command line", field=flag
                )
            (model if key == "merge_ways" else run)[key] = int(value)
        else:
            known = ", ".join([*_CHOICES, *_INT_SETTINGS, "des.ENTRY", "DEVICE.ENTRY"])
            raise SpecError(f"unknown option; known: {known}", source="command line", field=flag)
    if "merge_ways" in model and model.get("dram_merge") != "merge_tree":
        raise SpecError(
            "changes nothing: merge_ways is read only with -o dram_merge=merge_tree (O4)",
            source="command line",
            field=f"--option {given['merge_ways']}",
        )
    path = Path(devices) if devices else None
    return Settings(
        full=full,
        devices_file=path,
        overrides=overrides,
        options=ModelOptions(**model),
        simulate=simulate,
        des=replace(DesOptions(), **des),
        **run,
    )


def _check_read(device: str, entry: str, simulate: bool, flag: str) -> None:
    """Refuse an override of a device entry that this run would not read."""
    why = _UNREAD_ENTRIES.get((device, entry)) or _UNREAD_ENTRIES.get((None, entry))
    if why is None and entry in _SIMULATION_ENTRIES and not simulate:
        why = "only the simulation reads it (--simulate)"
    if why is not None:
        raise SpecError(f"changes nothing: {why}", source="command line", field=flag)


def _choice(value: str, allowed: Any, flag: str) -> str:
    if value not in get_args(allowed):
        raise SpecError(
            f"must be one of {', '.join(get_args(allowed))}", source="command line", field=flag
        )
    return value


def _bare_number(text: str) -> bool:
    """Whether `text` is a number with no unit ('1.5', '1e3')."""
    try:
        float(text)
    except ValueError:
        return False
    return plain_number(text)


def _des_value(entry: str, value: str, flag: str) -> Any:
    """One `des.ENTRY=VALUE`: a size in bytes ('65536', '64 KiB'), a choice, or a seed."""
    if entry in _DES_CHOICES:
        return _choice(value, _DES_CHOICES[entry], flag)
    if entry == "seed":
        if not ascii_digits(value) or int(value) >= SEED_LIMIT:
            raise SpecError(
                f"must be a whole number from 0 to {SEED_LIMIT - 1}",
                source="command line",
                field=flag,
            )
        return int(value)
    if entry != "chunk_bytes":
        known = ", ".join(f"{DES_PREFIX}.{k}" for k in _DES_KEYS)
        raise SpecError(f"unknown option; known: {known}", source="command line", field=flag)
    if _bare_number(value.strip()) and not signed_whole(value.strip()):
        # "1.5" was "'1.5' has no unit", though "65536" needs none
        raise SpecError(
            f"{value!r} has no unit and is not written as a whole number of bytes; give digits "
            "('65536') or a size with its unit ('64 KiB')",
            source="command line",
            field=flag,
        )
    try:
        # A bare number is bytes, signed or not: "-1" is a size below 1 byte, not a unit typo.
        size = float(value) if signed_whole(value.strip()) else parse(value, Kind.SIZE)
    except UnitError as exc:
        raise SpecError(str(exc), source="command line", field=flag) from None
    if not (size >= 1 and math.isfinite(size)):
        raise SpecError(
            f"must be at least 1 byte, got {value!r}", source="command line", field=flag
        )
    return size
