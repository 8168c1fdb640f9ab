"""Small synthetic NDP servers, written as platform TOML the way a user would write one.

Every bandwidth is decimal (GB = 10^9 bytes) so that hand-derived times come out as short
decimals, and every power is a round number. `variant` derives a changed copy of a loaded
platform (as `Platform.with_scheme` does) for the property tests, which need thousands.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from ndpkit.hw import Platform, load_platform
from ndpkit.profile import Profile

APP = "scan"


def platform_toml(
    *,
    devices: int = 4,
    ssd: str = "4 GB/s",
    engine: str = "1 GB/s",
    uplink: str = "100 GB/s",
    scheme: str = "mux1",
    port: str | None = None,
    engine_extra: str = "",
    cores: int = 4,
    name: str = "synthetic",
) -> str:
    """A platform file: `devices` SSDs, as many engines, a switch layer and a host link.
    `engine_extra` is added to the [engines] table as written (e.g. a link_bandwidth)."""
    layer = f'scheme = "{scheme}"\n'
    if scheme != "mux1":
        layer += 'element_power = "1 W"\n'
    if port is not None:
        layer += f'port_bandwidth = "{port}"\n'
    return f"""\
version = 1
name = "{name}"
description = "synthetic server for the simulator tests"

[host]
cores_per_socket = {cores}
frequency = "2 GHz"
power_active = "100 W"
power_idle = "10 W"

[host_link]
bandwidth = "{uplink}"

[storage]
count = {devices}
read_bandwidth = "{ssd}"
power_active = "3 W"
power_idle = "1 W"

[engines]
kind = "arm"
count = {devices}
power_active = "5 W"
power_idle = "2 W"
power_off = "0.5 W"
{engine_extra}
[engines.throughput]
{APP} = "{engine}"

[switch_layer]
{layer}"""


def write_platform(directory: Path, name: str = "synthetic", **kwargs: Any) -> Platform:
    """Write `platform_toml(**kwargs)` to DIRECTORY/NAME.toml and load it as a user would."""
    path = directory / f"{name}.toml"
    path.write_text(platform_toml(name=name, **kwargs), encoding="utf-8")
    return load_platform(path)


def profile(data: str, alpha: float = 1.0, host_part: str | None = None) -> Profile:
    """The synthetic app's profile: D, α and (optionally) the host part's rate."""
    rates = {} if host_part is None else {"host_part": host_part}
    return Profile(app=APP, data_size=data, alpha=alpha, **rates)


def variant(base: Platform, changes: dict[str, dict[str, Any]]) -> Platform:
    """`base` with fields replaced, in SI units by internal name: {"storage":
    {"count": 3, "read_bandwidth_bytes_per_s": 2e9}, "engines": {...}, ...}."""
    data = base.model_dump(by_alias=False)
    for table, fields in changes.items():
        data[table].update(fields)
    return Platform.model_validate(data, context={"si": True})
