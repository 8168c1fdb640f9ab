"""Reconfiguration: how many engines to keep on, and what switching the rest off saves.

RANS/RFNS §6, Eqs. (2) and (3):

    nane      = ceil( min(SSD_BW, NDP_BW, NDP2CPU_BW x α, CPU_BW) / SNDP_BW )        (2)
    nane_mux2 = max( nane, n/2 )                                                   (3)

with every bandwidth taken at full gear. Generalised here to mux-k: at least one
engine per module of k SSDs, so nane_muxk = max(nane, ceil(n/k)); mux1 keeps all n,
muxn keeps nane. nane is clamped to [1, n], and an NDP-bound application keeps all
n engines (O3).

The saving is measured against the same server without a switch layer, at full gear
(the paper's baseline, §6.5): E_saved,net = E_baseline - E_plan, which splits into the
engines' gross saving and the switch layer's own energy.

Example (anchor 11.2, HE on RFNS): nane = ceil(36 / 2.98) = 13, nane_mux2 = 18,
net saving 11.15 J of 23.21 J = 48.0 %.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import Any

from ndpkit.errors import ModelError, SpecError, check_kinds, whole_number
from ndpkit.hw import Platform
from ndpkit.model import FULL_GEAR, Configuration, Estimate, Options, estimate
from ndpkit.model.options import GIB
from ndpkit.model.pipeline import NDP, platform_where
from ndpkit.plan.mapping import Mapping, activate, minimum_engines
from ndpkit.profile import Profile
from ndpkit.summary import summary

# Relative slack so that a bandwidth ratio of 13.0000000001 still gives 13 engines.
_CEIL_SLACK = 1e-9


@dataclass(frozen=True)
class Plan:
    """A reconfiguration and what it saves against full gear without a switch layer."""

    platform: str
    app: str
    scheme: str
    engines_total: int
    engines_required: int
    """nane, Eq. (2): engines needed to keep up with the bottleneck."""
    engines_on: int
    """nane_muxk, Eq. (3) generalised: what the switch layer allows."""
    mapping: Mapping | None
    baseline: Estimate
    planned: Estimate
    method: str = "paper"
    candidates: list[Estimate] = field(default_factory=list)
    details: dict[str, Any] = field(default_factory=dict)
    """Planner-specific facts (channel selection: policy, fits, roundings)."""
    full_gear: Estimate | None = None
    """The full-gear estimate Eq. (2) took its bound from (`full_gear`: the baseline unless
    capped mux ports slow the SSDs); None where a planner has no Eq. (2)."""

    def __repr__(self) -> str:  # the dataclass's: every candidate estimate, 40,000 characters
        return summary(
            "Plan",
            platform=self.platform,
            app=self.app,
            method=self.method,
            scheme=self.scheme,
            engines_on=self.engines_on,
            engines_total=self.engines_total,
            net_saving_j=self.net_saving_j,
            improvement_pct=self.improvement_pct,
        )

    @property
    def engines_off(self) -> int:
        return self.engines_total - self.engines_on

    @property
    def switch_energy_j(self) -> float:
        return self.planned.energy.by_component_j.get("switch_layer", 0.0)

    @property
    def net_saving_j(self) -> float:
        opts = self.planned.options
        return opts.round_energy(self.baseline.energy_j) - opts.round_energy(self.planned.energy_j)

    @property
    def gross_saving_j(self) -> float:
        """The saving before the switch layer's own energy is charged."""
        opts = self.planned.options
        gross = self.net_saving_j + opts.round_energy(self.switch_energy_j)
        # Rounding noise where net saving and switch energy cancel is zero; relative to the
        # energies, not 1 nJ, which zeroed a 1-byte run's whole 0.27 nJ saving.
        scale = max(abs(self.baseline.energy_j), abs(self.planned.energy_j))
        return 0.0 if abs(gross) <= 1e-9 * scale else gross

    @property
    def improvement_pct(self) -> float:
        """Energy reduction vs the baseline (O7 'reduction'), or the MB/J gain ('ee_gain')."""
        opts = self.planned.options
        if opts.improvement == "ee_gain":
            gain = (self.planned.ee_mb_per_j / self.baseline.ee_mb_per_j - 1) * 100
            return gain if math.isfinite(gain) else 0.0  # a platform of 0 W: +∞ MB/J each
        base_j = opts.round_energy(self.baseline.energy_j)
        # a platform that draws no power has no energy to save
        return self.net_saving_j / base_j * 100 if base_j > 0 else 0.0

    @property
    def performance_loss_pct(self) -> float:
        base = self.baseline.performance_bytes_per_s
        return (1 - self.planned.performance_bytes_per_s / base) * 100

    def as_dict(self) -> dict[str, Any]:
        mapping = self.mapping
        return {
            "platform": self.platform,
            "app": self.app,
            "method": self.method,
            "scheme": self.scheme,
            "split": self.planned.config.split,
            "engines_total": self.engines_total,
            "nane": self.engines_required,
            "engines_on": self.engines_on,
            "engines_off": self.engines_off,
            "active_engines": list(mapping.active) if mapping else [],
            "route": list(mapping.route) if mapping else [],
            "bottleneck": (self.full_gear or self.baseline).bottleneck,
            "baseline_energy_j": self.baseline.energy_j,
            "planned_energy_j": self.planned.energy_j,
            "gross_saving_j": self.gross_saving_j,
            "switch_energy_j": self.switch_energy_j,
            "net_saving_j": self.net_saving_j,
            "improvement_pct": self.improvement_pct,
            "performance_loss_pct": self.performance_loss_pct,
            "max_shards_per_engine": self.planned.pipeline.max_shards_per_engine,
            "load_imbalance": self.planned.pipeline.load_imbalance,
            **self.details,
            "notes": self.planned.notes,
        }


def required_engines(full: Estimate) -> int:
    """nane, Eq. (2), from a full-gear estimate; clamped to [1, n]; NDP-bound keeps all n."""
    check_kinds(("full", full, Estimate, "an Estimate (model.estimate at full gear)"))
    pipe = full.pipeline
    n = pipe.engines_total
    if pipe.bottleneck == NDP:
        return n
    bound = pipe.performance_bytes_per_s
    single = pipe.engine_bytes_per_s
    if full.options.eq_rounding == "rounded_2dp":
        gb = float(GIB)  # the paper's printed GB/s are binary (O3), whatever --units reports
        bound, single = round(bound / gb, 2) * gb, round(single / gb, 2) * gb
        if single == 0:  # an engine slower than 0.005 GB/s: the ratio is +inf, clamp to n
            return n
    if math.isinf(bound):
        return n
    needed = math.ceil(bound / single * (1 - _CEIL_SLACK))
    return min(max(needed, 1), n)


def engines_allowed(required: int, devices: int, module_size: int) -> int:
    """Eq. (3) generalised to mux-k: max(nane, ceil(n/k))."""
    whole_number(required, "required", "an integer")  # 13.5 came back as 13.5 engines
    return max(required, minimum_engines(devices, module_size))


def plan(
    platform: Platform,
    profile: Profile,
    options: Options | None = None,
    *,
    scheme: str | None = None,
) -> Plan:
    """The paper's reconfiguration (Eqs. 2 and 3) on `platform`'s switch layer (or `scheme`).

    An in-storage platform is planned per channel instead (`channels.plan_channels`,
    RISP's host-bandwidth policy)."""
    check_plan_inputs(platform, profile, options)
    check_scheme_argument(scheme)
    if platform.is_in_storage:
        if scheme is not None:  # it was ignored, whatever it said
            raise ModelError(
                f"scheme={scheme!r}: platform {platform.name!r} is in-storage, and an SSD "
                "groups channels itself; a switch-layer scheme is for NDP servers"
            )
        from ndpkit.plan.channels import plan_channels  # noqa: PLC0415 (channels imports Plan)

        return plan_channels(platform, profile, options)
    if platform.engines is None:  # a ZeroDivisionError in the API (the CLI said this)
        raise ModelError(
            f"{platform_where(platform, 'engines')}platform {platform.name!r} has no engines "
            "to plan; try optimise"
        )
    options = options or Options()
    wired = platform if scheme is None else platform.with_scheme(scheme)
    baseline = estimate(wired.with_scheme("mux1"), profile, FULL_GEAR, options)
    n = wired.devices
    k = wired.switch_layer.module_size(n)
    full = full_gear(wired, profile, options, baseline)
    needed = required_engines(full)
    on = engines_allowed(needed, n, k)
    mapping = activate(n, k, on)
    planned = estimate(wired, profile, configuration_of(mapping, n), options)
    return Plan(
        platform=platform.name,
        app=profile.app,
        scheme=wired.switch_layer.scheme,
        engines_total=n,
        engines_required=needed,
        engines_on=on,
        mapping=mapping,
        baseline=baseline,
        planned=planned,
        full_gear=full,
    )


def check_plan_inputs(platform: object, profile: object, options: object) -> None:
    """The planners' objects, each of its type: `plan("rfns", he)` ended in "'str' object
    has no attribute 'is_in_storage'", and options given as a dict in "… no attribute
    'wall_times'"."""
    check_kinds(
        ("platform", platform, Platform, "a Platform (load_platform(…))"),
        ("profile", profile, Profile, "a Profile (load_profile(…))"),
        ("options", options, (Options, type(None)), "an Options, or None"),
    )


def check_scheme_argument(scheme: object) -> None:
    """A ModelError unless `scheme` is None or a string (the scheme's own check then says
    which strings): 2 was a TypeError from its pattern."""
    if scheme is not None and not isinstance(scheme, str):
        raise ModelError(f"scheme must be a string such as 'mux2' or 'muxn', got {scheme!r}")


def full_gear(wired: Platform, profile: Profile, options: Options, baseline: Estimate) -> Estimate:
    """The full-gear estimate Eq. (2) takes its bound from: what the planned server reaches
    with every engine on. Behind mux ports capped by `mux_port_cap` that is less than the
    baseline's (mux1: no ports): RFNS's SSDs give 83.8 GB/s, not 108, so 24 engines keep up
    with k-NN_2 where 31 were kept on. Otherwise it is the baseline."""
    k = wired.switch_layer.module_size(wired.devices)
    if options.mux_port_cap and k > 1 and wired.engines is not None:
        return estimate(wired, profile, FULL_GEAR, options)
    return baseline


def configuration_of(mapping: Mapping, devices: int) -> Configuration:
    """The model's configuration for a mapping (full gear when every engine is on)."""
    check_kinds(("mapping", mapping, Mapping, "a Mapping (plan.activate)"))
    whole_number(devices, "devices", "an integer ≥ 1 (the platform's SSDs)", 1)
    if mapping.devices != devices:  # its routes would name SSDs the platform has not
        raise SpecError(
            f"the mapping is for {mapping.devices} SSDs, and devices is {devices}",
            field="mapping",
        )
    if len(mapping.active) == devices:
        return FULL_GEAR
    return Configuration(active=mapping.active, route=mapping.route)
