"""Beyond the paper: the least-energy configuration within a performance tolerance.

For every split the kernel allows (`device`: NDP with its host part; `host`: the
whole kernel on the host, when the profile has a host-only rate) and every number
of engines the switch layer can run, estimate time and energy; keep those whose
Eq. (1) performance is within `tolerance` of the best, and return the one with the
least energy (ties: higher performance, then fewer engines).

Unlike Eq. (2), this sees the load imbalance of a placement (with
`placement=static_shards` an engine serving two SSDs halves the NDP bandwidth) and
the switch layer's power, because it compares whole estimates.
"""

from __future__ import annotations

import math
import numbers

from ndpkit.errors import ModelError
from ndpkit.hw import Platform
from ndpkit.model import FULL_GEAR, HOST_ONLY, Estimate, Options, estimate
from ndpkit.plan.mapping import activate, minimum_engines
from ndpkit.plan.reconfigure import (
    Plan,
    check_plan_inputs,
    check_scheme_argument,
    configuration_of,
    full_gear,
    required_engines,
)
from ndpkit.profile import Profile


def same_energy(joules: float) -> float:
    """`joules` to 9 significant digits: energies equal but for rounding compare equal, so
    that the tie rules decide. (Rounded to 1e-9 J, every energy of a small run was a tie, and
    the faster configuration won over the one with less energy.)"""
    return float(f"{joules:.9g}")


def checked_tolerance(value: object) -> float:
    """`value` as a finite float >= 0, else a ModelError. NaN compares false with everything,
    so `value < 0` alone would let it through; a string was a TypeError from isfinite, an
    int past float's range an OverflowError, and True a tolerance of 1."""
    if isinstance(value, bool) or not isinstance(value, numbers.Real):
        raise ModelError(f"tolerance must be a finite number >= 0, got {value!r}")
    try:
        tolerance = float(value) + 0.0  # -0.0 becomes 0.0: the method said "tolerance -0"
    except OverflowError:
        tolerance = math.inf
    if not (math.isfinite(tolerance) and tolerance >= 0):
        raise ModelError(f"tolerance must be a finite number >= 0, got {value!r}")
    return tolerance


OPTIMAL_MAX_DEVICES = 10_000
"""The largest server `optimise` searches: it maps and estimates every engine count, each in
time linear in the SSDs, and keeps every candidate's mapping (1,000 SSDs take 1 s and 90 MB
here, 4,000 4.2 s and 620 MB, 10,000 27 s and 3.6 GB)."""


def optimise(
    platform: Platform,
    profile: Profile,
    options: Options | None = None,
    *,
    tolerance: float = 0.0,
    scheme: str | None = None,
) -> Plan:
    """The configuration with the least energy whose performance >= best / (1 + tolerance)."""
    check_plan_inputs(platform, profile, options)
    tolerance = checked_tolerance(tolerance)
    check_scheme_argument(scheme)
    if platform.is_in_storage:
        # Its cells sit per flash channel, not per device: searched as devices, the SSD
        # was one "engine" of one, and the plan said 1 engine on where 64 cells compute.
        raise ModelError(
            f"platform {platform.name!r} is in-storage (cells per flash channel): the optimal "
            "search plans engines on an NDP server; plan its channels with plan() or "
            "ndpkit.plan.channels.plan_channels()"
        )
    options = options or Options()
    wired = platform if scheme is None else platform.with_scheme(scheme)
    n = wired.devices
    if n > OPTIMAL_MAX_DEVICES and wired.engines is not None:
        raise ModelError(
            f"the optimal search maps every engine count, in time that grows as the square of "
            f"the SSDs: {n} SSDs are more than its {OPTIMAL_MAX_DEVICES:,}; plan with the "
            f"paper's policy instead (without --optimal)"
        )
    k = wired.switch_layer.module_size(n)
    baseline = estimate(wired.with_scheme("mux1"), profile, FULL_GEAR, options)
    candidates: list[tuple[Estimate, int]] = []
    if wired.engines is not None:
        for on in range(minimum_engines(n, k), n + 1):
            config = configuration_of(activate(n, k, on), n)
            candidates.append((estimate(wired, profile, config, options), on))
    if profile.host_only_bytes_per_s is not None:
        candidates.append((estimate(wired, profile, HOST_ONLY, options), 0))
    best = max(c.performance_bytes_per_s for c, _ in candidates)
    floor = best / (1 + tolerance) * (1 - 1e-12)
    feasible = [(c, on) for c, on in candidates if c.performance_bytes_per_s >= floor]
    chosen, on = min(
        feasible,
        key=lambda item: (same_energy(item[0].energy_j), -item[0].performance_bytes_per_s, item[1]),
    )
    mapping = activate(n, k, on) if on else None
    full = full_gear(wired, profile, options, baseline)
    needed = required_engines(full) if wired.engines is not None else 0
    return Plan(
        platform=platform.name,
        app=profile.app,
        scheme=wired.switch_layer.scheme,
        engines_total=n if wired.engines is not None else 0,
        engines_required=needed,
        engines_on=on,
        mapping=mapping,
        baseline=baseline,
        planned=chosen,
        method=f"optimal (tolerance {tolerance:g})",
        candidates=[c for c, _ in candidates],
        full_gear=full,
    )
