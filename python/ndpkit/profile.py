"""Profiles: the measured facts of a kernel that the models need.

A `Profile` says how big the data set is, how much the device part shrinks it
(the reduction ratio α = device input / device output), and how fast the host
runs the kernel's host part and the whole kernel. Engine speeds are not here:
they belong to the engine (the platform's per-kernel throughput table), because
the same kernel runs at different speeds on an ARM core and on an FPGA. A
profile may still carry engine measurements, used when the platform has none.

Shipped profiles: `rans-rfns` (the paper's Table 3 host columns, §8.1).
"""

from __future__ import annotations

import json
import math
import tomllib
from importlib import resources
from pathlib import Path
from typing import Any

from pydantic import BaseModel, ConfigDict, Field, ValidationError

from ndpkit.errors import SpecError, UnknownNameError
from ndpkit.hw.quantity import Rate, Size, Time
from ndpkit.hw.spec import spec_error

_PROFILES = "ndpkit.profiles"
NO_HOST_STAGE = math.inf


class Profile(BaseModel):
    """Measured facts of one application (kernel) on the host it was profiled on."""

    model_config = ConfigDict(extra="forbid", frozen=True, populate_by_name=True)

    app: str = Field(min_length=1)
    description: str = ""
    data_bytes: Size = Field(alias="data_size", description="raw input size D")
    alpha: float = Field(gt=0, description="reduction ratio: device input / device output")
    host_part_bytes_per_s: Rate | None = Field(
        None,
        alias="host_part",
        description="host part's rate over the raw input; absent = no host stage",
    )
    host_only_bytes_per_s: Rate | None = Field(
        None, alias="host_only", description="the whole kernel on the host (a CNS run)"
    )
    engine_bytes_per_s: dict[str, Rate] = Field(
        default_factory=dict, alias="engine", description="measured single-engine rate by kind"
    )
    published_ndp_time_s: dict[str, Time] = Field(
        default_factory=dict,
        alias="published_ndp_time",
        description="NDP-stage wall time published for a platform (used with wall_times=printed)",
    )

    @property
    def host_stage_bytes_per_s(self) -> float:
        """CPU_BW of Eq. (1): +inf when the host has nothing to compute."""
        rate = self.host_part_bytes_per_s
        return NO_HOST_STAGE if rate is None else rate

    def with_changes(self, **changes: Any) -> Profile:
        return self.model_copy(update=changes)


class ProfileSet(BaseModel):
    """A file of profiles: one table per application."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    version: int = Field(1, ge=1, le=1)
    source: str = ""
    apps: dict[str, Profile]


def profile_set_names() -> list[str]:
    files = resources.files(_PROFILES).iterdir()
    return sorted(f.name.removesuffix(".toml") for f in files if f.name.endswith(".toml"))


def load_profiles(name_or_path: str | Path = "rans-rfns") -> ProfileSet:
    """Load a shipped profile set by name, or a TOML/JSON file by path."""
    path = Path(name_or_path)
    if path.suffix in (".toml", ".json") or path.exists():
        source = str(path)
        try:
            text = path.read_text(encoding="utf-8")
        except OSError as exc:
            raise SpecError(f"cannot read file ({exc.strerror or exc})", source=source) from None
    elif str(name_or_path) in profile_set_names():
        source = f"profiles {name_or_path}"
        text = resources.files(_PROFILES).joinpath(f"{name_or_path}.toml").read_text("utf-8")
    else:
        raise UnknownNameError("profile set", str(name_or_path), profile_set_names())
    data = _parse(text, source, json_format=path.suffix == ".json")
    apps = data.get("apps")
    if isinstance(apps, dict):
        for name, table in apps.items():
            if isinstance(table, dict):
                table.setdefault("app", name)
    try:
        return ProfileSet.model_validate(data)
    except ValidationError as exc:
        raise spec_error(exc, source) from None


def load_profile(app: str, source: str | Path = "rans-rfns") -> Profile:
    """One application's profile from a profile set."""
    profiles = load_profiles(source)
    try:
        return profiles.apps[app]
    except KeyError:
        raise UnknownNameError("app", app, sorted(profiles.apps)) from None


def _parse(text: str, source: str, *, json_format: bool) -> dict[str, Any]:
    try:
        data = json.loads(text) if json_format else tomllib.loads(text)
    except (tomllib.TOMLDecodeError, json.JSONDecodeError) as exc:
        kind = "JSON" if json_format else "TOML"
        raise SpecError(f"malformed {kind}: {exc}", source=source) from None
    if not isinstance(data, dict):
        raise SpecError("expected a table of apps", source=source)
    return data
