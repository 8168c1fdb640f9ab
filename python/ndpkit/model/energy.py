"""Energy: time in each power state, priced by the platform's power table (§5 of RANS/RFNS).

Counts are kept apart from costs (as in Accelergy): `StateTimes` holds, per
component, the seconds spent in each power state (engine-seconds for replicated
parts); `price` multiplies them by the platform's powers. The same counts can be
re-priced for other hardware.

The paper's two forms (O1) differ only in how the host's CPU phase is priced:

    E (form A) = (P_NDPEs + P_idle) x T_NDP + P_active x T_CPU               (paper text)
    E (form B) = (P_NDPEs + P_idle) x T_NDP + (P_active - P_idle) x T_CPU
    E (CNS)    = P_active x T_CPU                                 (both forms)

Example (anchor 11.5, k-NN_2 on RANS, form A):
(207.36 + 30.33) W x 22.93 s + 613.70 W x 0.62 s = 5830.72 J.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from ndpkit.errors import SpecError, check_kinds
from ndpkit.hw import Platform
from ndpkit.model.options import Options
from ndpkit.profile import Profile


@dataclass(frozen=True)
class StateTimes:
    """Seconds per power state, per component (replicated parts: summed over units).

    RANS/RFNS components: `engines` (busy/idle/off), `host` (active/idle),
    `switch_layer` (on), `storage` (active/idle). RISP components: `nvm`, `ru`,
    `device_dram`, `controller`, `host_interface`, `host_dram`, `host_chipset`.
    """

    by_component: dict[str, dict[str, float]] = field(default_factory=dict)

    def of(self, component: str) -> dict[str, float]:
        return self.by_component.get(component, {})

    @property
    def engines(self) -> dict[str, float]:
        return self.of("engines")

    @property
    def host(self) -> dict[str, float]:
        return self.of("host")

    @property
    def switch_layer(self) -> dict[str, float]:
        return self.of("switch_layer")

    @property
    def storage(self) -> dict[str, float]:
        return self.of("storage")


@dataclass(frozen=True)
class Energy:
    """Joules per component and in total."""

    by_component_j: dict[str, float]

    @property
    def total_j(self) -> float:
        return sum(self.by_component_j.values())


def with_profile_power(platform: Platform, profile: Profile) -> Platform:
    """`platform` (an NDP server) with the engine power `profile` carries for its engines'
    kind (`engine_power`) as the app's `power_active_by_app` entry, where the platform has
    none of its own: its entry wins, as its throughput entry wins over the profile's engine
    rate. `ndpkit evaluate --save-profiles` writes one for a split whose engine rate and
    power it took from another app's entry (a top-k split from knnD's, he-remap from he's),
    so that `estimate`, `plan` and `simulate` price it as evaluate did."""
    engines = platform.engines
    if engines is None or platform.is_in_storage or profile.app in engines.power_active_by_app:
        return platform
    watts = profile.engine_power_active_w.get(engines.kind)
    if watts is None:
        return platform
    idle_w = engines.power_idle_w
    source, field = profile.where(f"engine_power.{engines.kind}")
    if idle_w is not None and watts < idle_w:
        raise SpecError(
            f"{watts:g} W is below the power_idle of the engines of platform "
            f"{platform.name!r} ({idle_w:g} W): an engine draws at least its idle power "
            "while busy",
            source=source,
            field=field,
        )
    if watts < engines.power_off_w:  # as a platform file's power_active_by_app is checked
        raise SpecError(
            f"{watts:g} W is below the power_off of the engines of platform "
            f"{platform.name!r} ({engines.power_off_w:g} W): switched off, an engine draws "
            "less than while on",
            source=source,
            field=field,
        )
    power = {**engines.power_active_by_app, profile.app: watts}
    wired = engines.model_copy(update={"power_active_by_app": power})
    return platform.model_copy(update={"engines": wired})


def price(platform: Platform, app: str, times: StateTimes, options: Options) -> Energy:
    """Energy of `times` at the platform's powers, under the options' conventions."""
    check_kinds(  # as `estimate`: a preset's name ended in "'str' object has no attribute"
        ("platform", platform, Platform, "a Platform (load_platform(…))"),
        ("app", app, str, "an app name"),
        ("times", times, StateTimes, "StateTimes (an Estimate's state_times)"),
        ("options", options, Options, "an Options"),
    )
    host = platform.host
    active_w = host.power_active_w
    engines_ran = times.engines.get("busy", 0.0) + times.engines.get("idle", 0.0) > 0
    # The paper defines form B only for NDP runs; a host-only (CNS) run is P_active x T.
    if options.energy_form == "B" and engines_ran:
        active_w -= host.power_idle_w
    parts = {
        "host": active_w * times.host.get("active", 0.0)
        + host.power_idle_w * times.host.get("idle", 0.0),
        "switch_layer": _switch_power_w(platform, options) * times.switch_layer.get("on", 0.0),
        "storage": platform.storage.power_active_w * times.storage.get("active", 0.0)
        + platform.storage.power_idle_w * times.storage.get("idle", 0.0),
    }
    engine = platform.engines
    if engine is not None:
        parts["engines"] = (
            engine.power_on_w(app) * times.engines.get("busy", 0.0)
            + engine.power_waiting_w(app) * times.engines.get("idle", 0.0)
            + engine.power_off_w * times.engines.get("off", 0.0)
        )
    return Energy(parts)


def _switch_power_w(platform: Platform, options: Options) -> float:
    return platform.switch_layer.power_w(
        platform.devices, declared_total=options.switch_power == "declared"
    )


def efficiency_mb_per_j(data_bytes: float, energy_j: float, options: Options) -> float:
    """EE = D[MB] / E[J]; MB is 2^20 bytes with units=binary (the paper), 10^6 with decimal."""
    return data_bytes / options.mb / energy_j if energy_j > 0 else float("inf")
