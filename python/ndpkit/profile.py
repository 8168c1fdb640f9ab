"""Profiles: the measured facts of a kernel that the models need.

A `Profile` says how big the data set is, how much the device part shrinks it
(the reduction ratio α = device input / device output), and how fast the host
runs the kernel's host part and the whole kernel. Engine speeds are not here:
they belong to the engine (the platform's per-kernel throughput table), because
the same kernel runs at different speeds on an ARM core and on an FPGA. A
profile may still carry engine measurements, used when the platform has none.

A profile may also give the host's cycles per byte (CPB): the host rate is then
f_host x n_cpu / CPB on any host (RISP Eq. 4). CPB is given directly or derived
from profiler metrics, CPB = CPI x IPB x frequency ratio (RISP §6). An FPGA cell
design for the kernel (`[apps.X.fpga_cell]`) serves platforms whose cells have no
entry for it.

Shipped profiles: `rans-rfns` (the paper's Table 3 host columns, §8.1) and `risp`
(RISP Tables I and II). `save_profiles` writes profiles (such as `ndpkit evaluate
--save-profiles`'s measured ones) as a JSON profile set that `load_profiles` reads back
unchanged: quantities as unit strings, every figure unrounded.
"""

from __future__ import annotations

import json
import math
import os
import tomllib
from collections.abc import Sequence
from importlib import resources
from pathlib import Path
from typing import Any, Literal, get_args

from pydantic import (
    BaseModel,
    ConfigDict,
    Field,
    StrictBool,
    ValidationError,
    field_validator,
    model_validator,
)

from ndpkit.errors import SpecError, UnknownNameError, check_kinds, closest
from ndpkit.files import read_spec_file, write_atomic
from ndpkit.hw.engine import EngineKind
from ndpkit.hw.loader import file_hint, json_loads, names_a_file, parse_nested, toml_error
from ndpkit.hw.quantity import (
    Count,
    Cycles,
    Duration,
    FormatVersion,
    Frequency,
    PositiveNumber,
    Power,
    Rate,
    Size,
)
from ndpkit.hw.spec import FieldValueError, HandBuilt, LoadedFrom, spec_error

__all__ = [
    "CPB_DECIMALS",
    "NO_HOST_STAGE",
    "FpgaCell",
    "Profile",
    "ProfileSet",
    "PublishedFit",
    "file_document",
    "load_profile",
    "load_profiles",
    "profile_set_names",
    "save_profiles",
]

_PROFILES = "ndpkit.profiles"
_SUFFIXES = (".toml", ".json")
"""A profile set named with one of these is a file (`names_a_file`)."""
NO_HOST_STAGE = math.inf
"""A host-part rate for a kernel whose host part has nothing to do (no host stage)."""
CPB_DECIMALS = 4
"""RISP Table I prints CPB to 4 decimals; the derived value is rounded the same way."""
CPB_AGREEMENT = 1e-3
"""How far a profile's cycles_per_byte may be from its cpi x ipb x frequency_ratio when it
gives both: CPB rounded for print (72.38 for Table I's 72.375667) agrees; another kernel's
does not."""
_CONFIG = ConfigDict(extra="forbid", frozen=True, populate_by_name=True, allow_inf_nan=False)
"""Unknown keys are typos; TOML's `inf` and JSON's `Infinity` are no measurement."""


class FpgaCell(HandBuilt):
    """A kernel's FPGA cell design: bytes per cycle (α), fill latency, power per cell."""

    model_config = _CONFIG

    bytes_per_cycle: PositiveNumber = Field(description="bytes taken per clock (RISP's α)")
    pipeline_delay_cycles: Cycles = Field(0, alias="pipeline_delay")
    power_w: Power | None = Field(None, alias="power", description="one cell, while computing")
    power_fixed_w: Power | None = Field(
        None, alias="power_fixed", description="the RU's fixed part (public cell, static power)"
    )


class PublishedFit(HandBuilt):
    """A paper's linear fits of an app's power (with intercept) and processing bandwidth
    (through the origin) against the number of channels (RISP Eqs. 13-14): inputs to
    channel selection with `fit = paper`."""

    model_config = _CONFIG

    power_intercept_w: Power = Field(alias="power_intercept")
    power_slope_w: Power = Field(alias="power_slope", description="watts per channel")
    bandwidth_slope_bytes_per_s: Rate = Field(alias="bandwidth_slope", description="per channel")
    cell_clock_hz: Frequency = Field(alias="cell_clock", description="f_RU of the fit")
    channel_bandwidth_bytes_per_s: Rate | None = Field(
        None, alias="channel_bandwidth", description="b_ch of the SSD the fit is for"
    )


class Profile(HandBuilt):
    """Measured facts of one application (kernel) on the host it was profiled on."""

    model_config = _CONFIG

    app: str = Field(min_length=1)
    description: str = ""
    data_bytes: Size = Field(
        alias="data_size",
        description="the bytes the app's run reads: the raw input size D, times passes",
    )
    passes: Count = Field(
        1,
        description="how many times the run reads D (an iterative app's passes; ndpkit "
        "evaluate writes them): data_size is D x passes, a simulation's --size gives D, and "
        "MB/J counts D once",
    )
    alpha: PositiveNumber = Field(description="reduction ratio: device input / device output")
    host_part_bytes_per_s: Rate | None = Field(
        None,
        alias="host_part",
        description="host part's rate over the raw input; absent = no host stage",
    )
    host_only_bytes_per_s: Rate | None = Field(
        None, alias="host_only", description="the whole kernel on the host (a CNS run)"
    )
    # Strict: lax pydantic took 1, 1.0, "yes" and "on" for true in a file
    host_only_in_memory: StrictBool = Field(
        False,
        description="host_only was measured with the data in memory (ndpkit evaluate), not as "
        "a run reading it from the SSDs (the papers' CNS times): a host-only run then takes "
        "at least the time the SSDs and the link need to deliver the data",
    )
    host_only_supply_bytes_per_s: Rate | None = Field(
        None,
        alias="host_only_supply",
        description="what the SSDs and the link delivered where host_only was measured as a "
        "run reading its data (the papers' CNS: its 36 GiB/s link): on a platform that "
        "delivers less, a host-only run lasts at least as long as its data takes to arrive",
    )
    engine_bytes_per_s: dict[EngineKind, Rate] = Field(
        default_factory=dict, alias="engine", description="measured single-engine rate by kind"
    )
    engine_power_active_w: dict[EngineKind, Power] = Field(
        default_factory=dict,
        alias="engine_power",
        description="one engine's active power running this app, by kind, where the platform "
        "has no engines.power_active_by_app entry for it",
    )
    published_ndp_time_s: dict[str, Duration] = Field(
        default_factory=dict,
        alias="published_ndp_time",
        description="NDP-stage wall time published for a platform (used with wall_times=printed)",
    )
    cycles_per_byte: PositiveNumber | None = Field(
        None, description="host CPU cycles per input byte (CPB); or give cpi, ipb, ..."
    )
    cpi: PositiveNumber | None = Field(None, description="profiler: cycles per instruction")
    ipb: PositiveNumber | None = Field(None, description="profiler: instructions per byte")
    frequency_ratio: PositiveNumber | None = Field(
        None, description="profiler: actual / nominal CPU frequency (turbo > 1)"
    )
    fpga_cell: FpgaCell | None = Field(None, description="the kernel's FPGA cell design")
    published_fit: PublishedFit | None = Field(
        None, description="a paper's characteristic fits for this app (RISP Eqs. 13-14)"
    )

    @field_validator("engine_bytes_per_s", "engine_power_active_w", mode="before")
    @classmethod
    def _known_kinds(cls, value: Any) -> Any:
        """A misspelt kind would never match an engine: the entry would be silently unused."""
        kinds = get_args(EngineKind)
        for kind in value if isinstance(value, dict) else ():
            if kind not in kinds:
                guess = closest(str(kind), kinds)
                hint = f"; did you mean {guess!r}?" if guess else ""
                raise ValueError(
                    f"unknown engine kind {kind!r}{hint} (the kinds are {', '.join(kinds)})"
                )
        return value

    @model_validator(mode="after")
    def _cpb_consistent(self) -> Profile:
        metrics = (self.cpi, self.ipb, self.frequency_ratio)
        if any(m is not None for m in metrics) and any(m is None for m in metrics):
            raise ValueError("give all three of cpi, ipb and frequency_ratio, or none")
        if self.cycles_per_byte is not None and self.cpi is not None:
            # Both ways of giving CPB: the time used cycles_per_byte and R3's instruction
            # energy IPB, so a pair that disagrees was a silent mix of two kernels.
            product = math.prod(m for m in metrics if m is not None)
            if not math.isclose(
                self.cycles_per_byte,
                product,
                rel_tol=CPB_AGREEMENT,
                abs_tol=0.5 * 10**-CPB_DECIMALS,
            ):
                raise ValueError(
                    f"cycles_per_byte ({self.cycles_per_byte:g}) disagrees with cpi x ipb x "
                    f"frequency_ratio ({product:g} cycles per byte); give one or the other"
                )
        if self.cycles_per_byte is None and self.host_cycles_per_byte == 0:
            # Rounded like Table I, a product below 0.00005 became 0 cycles per byte, and
            # the host's rate f x cores / CPB a ZeroDivisionError deep in the model.
            product = math.prod(m for m in metrics if m is not None)
            raise ValueError(
                f"cpi x ipb x frequency_ratio = {product!r} cycles per byte rounds to 0 at "
                f"Table I's {CPB_DECIMALS} decimals; give cycles_per_byte instead"
            )
        return self

    @model_validator(mode="after")
    def _supply_of_a_run_reading_its_data(self) -> Profile:
        # A ValueError naming the field: pydantic gives the app's table as its place.
        if self.host_only_supply_bytes_per_s is None:
            return self
        if self.host_only_bytes_per_s is None:
            raise ValueError(
                "host_only_supply is the supply of a host_only run: give host_only too"
            )
        if self.host_only_in_memory:
            raise ValueError(
                "host_only_supply is for a host_only measured as a run reading its data; "
                "with host_only_in_memory = true a host-only run already waits for its data"
            )
        return self

    @property
    def host_cycles_per_byte(self) -> float | None:
        """CPB: as given, else CPI x IPB x frequency ratio rounded like Table I (4 dp)."""
        if self.cycles_per_byte is not None:
            return self.cycles_per_byte
        if self.cpi is None or self.ipb is None or self.frequency_ratio is None:
            return None
        return round(self.cpi * self.ipb * self.frequency_ratio, CPB_DECIMALS)

    @property
    def instructions_per_byte(self) -> float | None:
        """IPB if profiled, else None."""
        return self.ipb

    @property
    def host_stage_bytes_per_s(self) -> float:
        """CPU_BW of Eq. (1): +inf when the host has nothing to compute."""
        rate = self.host_part_bytes_per_s
        return NO_HOST_STAGE if rate is None else rate

    def where(self, field: str) -> tuple[str, str]:
        """(source, field) for an error about `field` (a dotted key) of this profile: the
        file or profile set and table it was loaded from, else "profile APP"."""
        loaded = _LOADED_FROM.get(self)
        if loaded is None:
            return f"profile {self.app}", field
        return loaded[0], f"{loaded[1]}.{field}"

    def with_changes(self, **changes: Any) -> Profile:
        """A copy with `changes` (by field name), unvalidated. A change that leaves no
        host-only run reading its data (`host_only_in_memory=True`, `host_only_bytes_per_s=
        None`) drops `host_only_supply`, which described one, unless it is given too: kept,
        the copy was a profile no file could hold, and `save_profiles` refused it."""
        supply = "host_only_supply_bytes_per_s"
        no_run_reading = changes.get("host_only_in_memory") is True or (
            "host_only_bytes_per_s" in changes and changes["host_only_bytes_per_s"] is None
        )
        if no_run_reading and supply not in changes and self.host_only_supply_bytes_per_s:
            changes = {**changes, supply: None}
        return self.model_copy(update=changes)


class ProfileSet(HandBuilt):
    """A file of profiles: one table per application."""

    model_config = ConfigDict(extra="forbid", frozen=True, allow_inf_nan=False)

    version: FormatVersion = 1
    source: str = ""
    platform: str = ""
    """The platform whose engines and host the rates were mapped onto (`ndpkit evaluate
    --save-profiles` writes it); empty where the set is not tied to one."""
    apps: dict[str, Profile]

    @model_validator(mode="after")
    def _apps_named_by_their_tables(self) -> ProfileSet:
        """`-a NAME` finds a profile by its table's name and the models key the platform's
        per-app entries by its `app`: the two must be one name."""
        for name, profile in self.apps.items():
            if profile.app != name:
                raise FieldValueError(
                    f"apps.{name}.app",
                    f"is {profile.app!r} in the table apps.{name}: leave it out (it is the "
                    "table's name) or make the two the same",
                )
        return self


_UNITS = {
    "data_bytes": "B",
    "host_part_bytes_per_s": "B/s",
    "host_only_bytes_per_s": "B/s",
    "host_only_supply_bytes_per_s": "B/s",
    "engine_bytes_per_s": "B/s",
    "engine_power_active_w": "W",
    "published_ndp_time_s": "s",
    "power_w": "W",
    "power_fixed_w": "W",
    "power_intercept_w": "W",
    "power_slope_w": "W",
    "bandwidth_slope_bytes_per_s": "B/s",
    "cell_clock_hz": "Hz",
    "channel_bandwidth_bytes_per_s": "B/s",
}
"""The unit each quantity field is written in (its value is in that SI unit)."""


def file_document(model: BaseModel) -> dict[str, Any]:
    """A profile (or its cell design or fit) as a profile file spells it: the keys by their
    file names, quantities as unit strings whose numbers are Python's shortest exact form
    (so they load back bit for bit), and fields at their defaults left out."""
    # an app's name ended in "type object 'str' has no attribute 'model_fields'"
    kinds = (Profile, FpgaCell, PublishedFit)
    check_kinds(("model", model, kinds, "a Profile, FpgaCell or PublishedFit (load_profile(…))"))
    document: dict[str, Any] = {}
    for name, info in type(model).model_fields.items():
        value = getattr(model, name)
        if value is None or value == info.get_default(call_default_factory=True):
            continue
        unit = _UNITS.get(name)
        if isinstance(value, BaseModel):
            written: Any = file_document(value)
        elif isinstance(value, dict):
            written = {key: _quantity(v, unit) for key, v in value.items()}
        else:
            written = _quantity(value, unit)
        document[info.alias or name] = written
    return document


def _quantity(value: Any, unit: str | None) -> Any:
    return value if unit is None else f"{float(value)!r} {unit}"


def save_profiles(
    profiles: Sequence[Profile], path: str | Path, *, source: str = "", platform: str = ""
) -> None:
    """Write `profiles` as a JSON profile set (one table per app) that `load_profiles`
    reads back unchanged; atomically: a temporary name, then a rename. `platform`: the one
    their rates were mapped onto, if any (`ProfileSet.platform`).

    `path` (a str or a Path) must end in .json: `load_profiles` reads a file by its suffix,
    and JSON under .toml was written, then refused as malformed TOML. A str path, one
    `Profile` in place of a list, or no profiles (a set no command could use) were an
    AttributeError or an empty set; each is a SpecError naming the argument."""
    path = _json_path(path)
    _check_profiles(profiles)
    apps = {profile.app: file_document(profile) for profile in profiles}
    if len(apps) != len(profiles):
        raise SpecError("two profiles for one app; a profile set has one per app", source=str(path))
    document: dict[str, Any] = {"version": 1, "source": source}
    if platform:
        document["platform"] = platform
    document["apps"] = apps
    text = json.dumps(document, indent=2, ensure_ascii=False) + "\n"
    # Profiles built in code skip the range a file's quantities must lie in (an engine
    # mapped at 3e28 B/s from an extreme scaling): a file that would not load back is an
    # error now, not at the next `--profiles`.
    try:
        _profile_set(_parse(text, str(path), json_format=True), str(path))
    except SpecError as exc:
        raise SpecError(
            f"not written: it would not load back ({exc.detail})", source=str(path), field=exc.field
        ) from None
    write_atomic(path, text)


def _json_path(path: object) -> Path:
    """`save_profiles`' `path` as a Path, or a SpecError: not a path, or not ending in .json
    (the suffix `load_profiles` reads JSON by)."""
    if not isinstance(path, (str, os.PathLike)):
        raise SpecError(f"must be a path (a str or a pathlib.Path), got {path!r}", field="path")
    as_path = Path(path)
    if as_path.suffix.lower() != ".json":
        raise SpecError(
            "profiles are saved as JSON, which load_profiles reads from a name ending in "
            f".json: give such a name, got {str(path)!r}",
            field="path",
        )
    return as_path


def _check_profiles(profiles: object) -> None:
    """A list (or tuple) of one or more `Profile`s, else a SpecError naming `profiles`."""
    if isinstance(profiles, Profile):
        raise SpecError(
            "must be a list of profiles: save_profiles([profile], path) for one",
            field="profiles",
        )
    if not isinstance(profiles, (list, tuple)) or not all(isinstance(p, Profile) for p in profiles):
        raise SpecError(f"must be a list of Profile, got {profiles!r}", field="profiles")
    if not profiles:
        raise SpecError(
            "is empty: a profile set of no apps, which no command could use",
            field="profiles",
        )


def profile_set_names() -> list[str]:
    """Names of the profile sets shipped with ndpkit (`load_profiles` takes them)."""
    files = resources.files(_PROFILES).iterdir()
    return sorted(f.name.removesuffix(".toml") for f in files if f.name.endswith(".toml"))


def load_profiles(name_or_path: str | Path = "rans-rfns") -> ProfileSet:
    """Load a shipped profile set by name, or a TOML/JSON file by path."""
    # 5 or None was a TypeError from pathlib
    kinds = (str, os.PathLike)
    check_kinds(("name_or_path", name_or_path, kinds, "a profile set's name or a path"))
    path = Path(name_or_path)
    if names_a_file(name_or_path, _SUFFIXES):
        source = str(name_or_path)  # as the user wrote it
        text = read_spec_file(path, source)
    elif str(name_or_path) in profile_set_names():
        source = f"profiles {name_or_path}"
        text = resources.files(_PROFILES).joinpath(f"{name_or_path}.toml").read_text("utf-8")
    else:
        hint = file_hint(name_or_path, _SUFFIXES)
        raise UnknownNameError("profile set", str(name_or_path), profile_set_names(), hint=hint)
    loaded = _profile_set(_parse(text, source, json_format=path.suffix.lower() == ".json"), source)
    for name, profile in loaded.apps.items():
        _LOADED_FROM.note(profile, (source, f"apps.{name}"))
    return loaded


_LOADED_FROM = LoadedFrom[tuple[str, str]]()
"""(file or profile set, table) of each loaded profile."""


def load_profile(app: str, source: str | Path = "rans-rfns") -> Profile:
    """One application's profile from a profile set."""
    profiles = load_profiles(source)
    try:
        return profiles.apps[app]
    except KeyError:
        where = str(source) if names_a_file(source, _SUFFIXES) else f"profiles {source}"
        raise UnknownNameError("app", app, sorted(profiles.apps), source=where) from None


DATASET_FORMAT = "ndpkit-dataset"
"""The `format` of a data set's manifest.json (`ndpkit.runtime.dataset.FORMAT`); here, as
the runtime imports this module, not the other way round."""

TableKind = Literal["manifest", "report", "profile set"]


def table_kind(data: dict[str, Any]) -> TableKind | None:
    """Which of ndpkit's JSON tables `data` is, where one may be given for another: a data
    set's manifest, the report of `ndpkit evaluate -f json`, or a profile set; None for
    any other table."""
    if data.get("format") == DATASET_FORMAT:
        return "manifest"
    if isinstance(data.get("apps"), list) and "warnings" in data:
        return "report"
    if isinstance(data.get("apps"), dict):
        return "profile set"
    return None


def _profile_set(data: dict[str, Any], source: str) -> ProfileSet:
    """A parsed profile set file validated (each app's table named by its key)."""
    apps = data.get("apps")
    if isinstance(apps, dict):
        for name, table in apps.items():
            if isinstance(table, dict):
                table.setdefault("app", name)
    try:
        return ProfileSet.model_validate(data)
    except ValidationError as exc:
        raise spec_error(exc, source, model=ProfileSet) from None


def _parse(text: str, source: str, *, json_format: bool) -> dict[str, Any]:
    try:
        data = parse_nested(json_loads if json_format else tomllib.loads, text, source)
    except json.JSONDecodeError as exc:
        raise SpecError(f"malformed JSON: {exc}", source=source) from None
    except tomllib.TOMLDecodeError as exc:
        raise toml_error(exc, text, source) from None
    if isinstance(data, list):
        # `profiling.save` writes a list of measurements, which are not profiles yet.
        raise SpecError(
            "expected a profile set (a table `apps` of profiles), got a list; measurements "
            "(runtime.profiling.save) are not profiles: `ndpkit evaluate --save-profiles` "
            "writes a profile set",
            source=source,
        )
    if not isinstance(data, dict):
        raise SpecError("expected a table of apps", source=source)
    if "apps" not in data and data.keys() & {"extends", "host", "storage"}:
        # `--profiles edge16.toml`: "name: unknown field; valid keys here: apps, …" named no
        # mix-up.
        raise SpecError(
            "is a platform file, not a profile set (a table `apps`): give it with -p, and "
            "the profiles with --profiles",
            source=source,
        )
    table = table_kind(data)
    if table == "manifest":
        # `--profiles DS/manifest.json`: "format: unknown field; … (and 12 more problems)"
        raise SpecError(
            "is the manifest of an ndpkit data set, not a profile set: write one with "
            "`ndpkit evaluate --data DIR --platforms PLATFORM --save-profiles FILE.json`",
            source=source,
        )
    if table == "report":
        # `evaluate -f json > ev.json` then `--profiles ev.json`: a report of runs, whose
        # first key past `apps` was refused as "warnings: unknown field".
        raise SpecError(
            "is the report of `ndpkit evaluate -f json`, not a profile set: write one with "
            "`ndpkit evaluate … --platforms PLATFORM --save-profiles FILE.json`",
            source=source,
        )
    return data
