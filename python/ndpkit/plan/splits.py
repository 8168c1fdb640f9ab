"""Beyond the paper: which split of a kernel to run, when the kernel has more than one.

k-NN has two. In the paper's split the device sends every squared distance (α = d) and the
host finds the k nearest; in the device-side top-k split (`knnD-topk`) each device keeps only
its k best, so α grows by orders of magnitude and the host has almost nothing left to do,
but the device part does more work per byte. Which is better depends on the platform: where
the link to the host (NDP2CPU x α) or the host part limits the paper's split, top-k removes
the limit; where the engines limit it, top-k's slower device part only costs performance.

**The rule** (like `optimise`'s, over splits instead of engine counts, but on the predicted
time, which is what the splits change): estimate every split at full gear; keep those whose
predicted time is within `tolerance` of the fastest (default 0: no loss of performance);
choose the least energy among them; ties go to the shorter time, then to the split listed
first (the paper's). On a platform without NDP engines there is nothing to split: every split
runs the whole kernel on the host, and no split is chosen.

**Time basis.** Without `options`, the splits are compared under `time_basis="staged"`: the
device side at its slowest stage (SSD, NDP or NDP2CPU x α), then the host part. The paper's
basis (T_NDP + T_CPU) never sees the link to the host, NDP2CPU x α, which is exactly what
the splits differ in, so under it a split that lifts a link bound would look no faster. Any
`options` given are used as they are.

**Engine rates.** The models take a platform's own `engines.throughput` entry for an app
before any measurement. The presets have entries for the paper's apps (the paper's measured
engine rates) but none for a variant such as `knn8-topk`, whose rate would then come from the
host measurement scaled onto the engine: two different sources, not a comparison. So when
the platform has an entry for the first split and none for another, that split gets the first
split's entry scaled by the ratio of the two splits' measured engine rates for the engine's
kind (`Profile.engine_bytes_per_s`, i.e. their device parts measured on the same host), and
the first split's per-app engine power. `carried` lists the ratios used.

Example:
    profiles = [to_profile(m_full, ...), to_profile(m_topk, ...)]
    result = compare_splits(load_platform("rfns"), profiles)
    result.chosen, result.reason, [(row["split"], row["time_s"]) for row in result.rows()]
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

from ndpkit.errors import ModelError, check_kinds
from ndpkit.hw import Platform
from ndpkit.model import FULL_GEAR, Estimate, Options, estimate
from ndpkit.plan.optimize import checked_tolerance, same_energy
from ndpkit.profile import Profile
from ndpkit.summary import summary

RULE = (
    "least energy among the splits whose time is within the tolerance of the fastest; "
    "ties: the shorter time, then the paper's split"
)
SPLIT_OPTIONS = Options(time_basis="staged")
"""What `compare_splits` uses without `options` (see the module's docstring)."""


@dataclass(frozen=True)
class SplitOption:
    """One split's full-gear estimate, or why it has none."""

    app: str
    alpha: float
    estimate: Estimate | None
    error: str | None = None


@dataclass(frozen=True)
class SplitComparison:
    """Every split of one kernel on one platform, and the one the rule chooses."""

    platform: str
    splits: tuple[SplitOption, ...]
    chosen: str | None
    reason: str
    tolerance: float
    carried: dict[str, float] = field(default_factory=dict)
    """split → the ratio its engine rate took of the first split's throughput entry."""

    def __repr__(self) -> str:  # the dataclass's: each split's whole estimate
        return summary(
            "SplitComparison",
            platform=self.platform,
            chosen=self.chosen,
            splits=tuple(s.app for s in self.splits),
        )

    def note(self, split: str) -> str | None:
        """How a split's engine rate was derived, if it was."""
        if split not in self.carried:
            return None
        first = self.splits[0].app
        return f"engine rate: {self.platform}'s {first} entry x {self.carried[split]:.3g}"

    def rows(self) -> list[dict[str, Any]]:
        """One plain row per split (GB per `options.units`), for tables."""
        rows = []
        for split in self.splits:
            row: dict[str, Any] = {
                "platform": self.platform,
                "split": split.app,
                "alpha": split.alpha,
                "chosen": split.app == self.chosen,
            }
            e = split.estimate
            if e is None:
                row["note"] = split.error
            else:
                row.update(
                    performance_gb_per_s=e.performance_bytes_per_s / e.options.gb,
                    bottleneck=e.bottleneck,
                    time_s=e.time_s,
                    energy_j=e.energy_j,
                    ee_mb_per_j=e.ee_mb_per_j,
                )
            rows.append(row)
        return rows

    def as_dict(self) -> dict[str, Any]:
        return {
            "platform": self.platform,
            "chosen": self.chosen,
            "reason": self.reason,
            "rule": RULE,
            "tolerance": self.tolerance,
            "carried_engine_rate_ratio": self.carried,
            "splits": [
                {"split": s.app, "alpha": s.alpha}
                | (
                    {"error": s.error}
                    if s.estimate is None
                    else {"estimate": s.estimate.as_dict() | {"units": s.estimate.options.units}}
                )
                for s in self.splits
            ],
        }


def compare_splits(
    platform: Platform,
    profiles: Sequence[Profile],
    options: Options | None = None,
    *,
    tolerance: float = 0.0,
) -> SplitComparison:
    """Estimate each split (`profiles`, the paper's first) at full gear on `platform` and
    choose one by the module's rule (default options: `SPLIT_OPTIONS`). A split the models
    cannot estimate is listed with its error and never chosen."""
    # a preset's name or one profile (not a list) ended in "… has no attribute 'app'"
    check_kinds(
        ("platform", platform, Platform, "a Platform (load_platform(…))"),
        ("profiles", profiles, (list, tuple), "a list of Profile (load_profile(…))"),
        ("options", options, (Options, type(None)), "an Options, or None"),
    )
    for profile in profiles:
        check_kinds(("profiles", profile, Profile, "a list of Profile (load_profile(…))"))
    if not profiles:
        raise ModelError("compare_splits needs at least one split's profile")
    # NaN compares false with everything: `tolerance < 0` let it through, and no split was
    # within a NaN of the fastest (`min()` of nothing: a ValueError); a string was a
    # TypeError, True a tolerance of 1
    tolerance = checked_tolerance(tolerance)
    options = options or SPLIT_OPTIONS
    wired, carried = carry_engine_entries(platform, profiles)
    splits = []
    for profile in profiles:
        try:
            found = estimate(wired, profile, FULL_GEAR, options)
        except ModelError as exc:
            splits.append(SplitOption(profile.app, profile.alpha, None, str(exc)))
        else:
            splits.append(SplitOption(profile.app, profile.alpha, found))
    chosen, reason = _choose(platform, splits, tolerance)
    return SplitComparison(platform.name, tuple(splits), chosen, reason, tolerance, carried)


def carry_engine_entries(
    platform: Platform, profiles: Sequence[Profile]
) -> tuple[Platform, dict[str, float]]:
    """`platform` with the first split's rate entry (throughput, or a cell design's bytes
    per cycle x clock) and per-app engine power carried over to the splits that have none,
    as throughput entries scaled by their measured engine-rate ratio; and the ratio used
    for each."""
    engines = platform.engines
    first = profiles[0]
    if engines is None or not engines.has_rate_for(first.app):
        return platform, {}
    base_rate = first.engine_bytes_per_s.get(engines.kind)
    entry = engines.bandwidth_bytes_per_s(first.app)
    throughput = dict(engines.throughput)
    power = dict(engines.power_active_by_app)
    carried: dict[str, float] = {}
    for profile in profiles[1:]:
        if engines.has_rate_for(profile.app):
            continue
        rate = profile.engine_bytes_per_s.get(engines.kind)
        if base_rate is None or rate is None:
            continue  # nothing measured to scale by: the models use what the profile has
        ratio = rate / base_rate
        throughput[profile.app] = entry * ratio
        if first.app in power:
            power.setdefault(profile.app, power[first.app])
        carried[profile.app] = ratio
    if not carried:
        return platform, {}
    engines = engines.model_copy(update={"throughput": throughput, "power_active_by_app": power})
    return platform.model_copy(update={"engines": engines}), carried


def _choose(
    platform: Platform, splits: Sequence[SplitOption], tolerance: float
) -> tuple[str | None, str]:
    if platform.engines is None:
        return None, "no NDP engines: the host runs every split whole"
    estimated = [(s, s.estimate) for s in splits if s.estimate is not None]
    if not estimated:
        return None, "no split could be estimated"
    fastest = min(e.time_s for _, e in estimated)
    limit = fastest * (1 + tolerance) * (1 + 1e-12)
    feasible = [(i, s, e) for i, (s, e) in enumerate(estimated) if e.time_s <= limit]
    _, split, _ = min(
        feasible, key=lambda item: (same_energy(item[2].energy_j), item[2].time_s, item[0])
    )
    others = [s.app for s, _ in estimated if s is not split]
    if len(feasible) == 1 and others:
        why = "the only split at the shortest time"
    elif others:
        why = "least energy at the shortest time" if tolerance == 0 else "least energy"
    else:
        why = "the only split the models could estimate"
    return split.app, why
