"""Channel selection inside one SSD: how many flash channels and processing cells to enable.

RISP §7. For an app, the characteristic functions f_power(n) = E/T (Eq. 11) and
f_pb(n) = D/T (Eq. 12) are evaluated over n = 4, 8, …, 64 channels and fitted by
linear regression (power with an intercept, bandwidth through the origin, R18); or
the paper's own fits are used (`fit = "paper"`, Sobel's Eqs. 13-14, R7).

- Policy A, power budget: n_power = max{n : f_power(n) <= P_budget}; the other
  channels are powered off and their data is not read (R10 `channels_off`, R12).
- Policy B, host bandwidth: n_host = β x b_hostIO / s for f_pb = s x n: only n_host
  cells are configured, and all N channels still supply data (R10 `reduced_cells`);
  the public cell switches contiguous groups of channels onto each cell (§7.4, R9).
- `both` (§7.5, not the paper's): the smaller of the two. When that is the host policy's
  count and it would cost more energy than all channels on (`never_worse`), the power
  policy's count is used instead: it is within the budget by construction.

A power budget is read by `power` and `both` only: `host` with a budget is refused, as
is a budget that no channel count meets.

Rounding a fractional n (R8) is `floor` (the paper), `ceil`, `nearest`, or
`search`: the integer n that the *model* (not its fit) says meets the goal: the most
channels whose power is within budget, or the fewest cells with no loss of performance
against all channels on.

A power budget is a hard constraint whatever the rounding: the fit only approximates
the model, so a rounded count whose modelled power exceeds the budget steps down to the
most channels within it, and the plan says so in a note.

Example (Sobel, N = 64, SATA 3.2 at 1.97 GB/s, model fit slope 0.1 GB/s per channel):
n_host = 1 x 1.97 / 0.1 = 19.7 → floor 19 cells, each serving 3 or 4 channels.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass, field, replace
from numbers import Real
from typing import Any, Literal, get_args

from ndpkit.errors import ModelError, true_or_false, whole_number
from ndpkit.hw import Platform
from ndpkit.model import FULL_GEAR, Configuration, Estimate, Options, estimate
from ndpkit.plan.mapping import Mapping
from ndpkit.plan.reconfigure import Plan, check_plan_inputs
from ndpkit.profile import Profile, PublishedFit

Policy = Literal["host", "power", "both"]
FitSource = Literal["model", "paper"]
ChannelRounding = Literal["floor", "ceil", "nearest", "search"]
Grouping = Literal["balanced", "ceil", "floor"]
TimeModel = Literal["reduced_cells", "channels_off"]

SAMPLE_CHANNELS = tuple(range(4, 65, 4))
"""R18 `step_4`: Fig. 8's sample points, 4, 8, …, 64 channels."""

MAX_PLAN_CHANNELS = 4096
"""The most channels a channel plan takes: the searches evaluate the model at every count
from 1 to N, each evaluation O(N), so the plan's time grows as N² (4096 channels: about
2 s; the 65536 channels `estimate` accepts would take about ten minutes)."""

# Relative slack so that 19.700000001 channels still floors to 19 and a time equal to
# all-on's up to rounding counts as no loss.
_SLACK = 1e-9


class PlanInputError(ModelError):
    """An input the channel planner refuses; `parameter` names it (`policy`, `budget_w`,
    `fit` or `channels`) so that a command line can name its flag."""

    def __init__(self, message: str, *, parameter: str) -> None:
        super().__init__(message)
        self.parameter = parameter


@dataclass(frozen=True)
class LinearFit:
    """y = intercept + slope x n."""

    intercept: float
    slope: float

    def __call__(self, n: float) -> float:
        return self.intercept + self.slope * n

    def solve(self, y: float) -> float:
        """The n at which the fit reaches y."""
        if self.slope == 0:
            return math.inf if y >= self.intercept else -math.inf
        return (y - self.intercept) / self.slope


def fit_line(xs: Sequence[float], ys: Sequence[float], *, intercept: bool) -> LinearFit:
    """Least-squares line through the points (or through the origin)."""
    if len(xs) != len(ys) or len(xs) < (2 if intercept else 1):
        raise ModelError("a linear fit needs at least two points")
    if not intercept:
        if not any(xs):
            raise ModelError("a fit through the origin needs a channel count above zero")
        return LinearFit(
            0.0, sum(x * y for x, y in zip(xs, ys, strict=True)) / sum(x * x for x in xs)
        )
    n = len(xs)
    mx, my = sum(xs) / n, sum(ys) / n
    sxx = sum((x - mx) ** 2 for x in xs)
    if sxx == 0:
        raise ModelError("a linear fit needs at least two distinct channel counts")
    slope = sum((x - mx) * (y - my) for x, y in zip(xs, ys, strict=True)) / sxx
    return LinearFit(my - slope * mx, slope)


@dataclass(frozen=True)
class CharacteristicPoint:
    channels: int
    power_w: float
    bandwidth_bytes_per_s: float


@dataclass(frozen=True)
class Characteristic:
    """f_power and f_pb of one app (Eqs. 11-14), from the model's points or the paper."""

    app: str
    source: FitSource
    power: LinearFit
    bandwidth: LinearFit
    points: tuple[CharacteristicPoint, ...] = ()


def characteristic_points(
    platform: Platform,
    profile: Profile,
    options: Options,
    channels: Sequence[int] = SAMPLE_CHANNELS,
) -> tuple[CharacteristicPoint, ...]:
    """Power E/T and processing bandwidth D/T with n channels and n cells (all on), by
    Eqs. (8)-(9): without the host stage or reconfiguration, as the paper builds f_power
    and f_pb."""
    options = options.with_(host_stage="eq8_only", reconfiguration="ignore")
    points = []
    for n in channels:
        e = estimate(platform.with_channels(n), profile, FULL_GEAR, options)
        points.append(CharacteristicPoint(n, e.energy_j / e.time_s, profile.data_bytes / e.time_s))
    return tuple(points)


def characteristic(
    platform: Platform,
    profile: Profile,
    options: Options,
    *,
    source: FitSource = "model",
    channels: Sequence[int] = SAMPLE_CHANNELS,
) -> Characteristic:
    """The fits the policies use: regress the model's own points, or the paper's Eqs."""
    points = characteristic_points(platform, profile, options, channels)
    if source == "paper":
        published = published_fit(profile)
        return Characteristic(
            profile.app,
            "paper",
            LinearFit(published.power_intercept_w, published.power_slope_w),
            LinearFit(0.0, published.bandwidth_slope_bytes_per_s),
            points,
        )
    xs = [float(p.channels) for p in points]
    return Characteristic(
        profile.app,
        "model",
        fit_line(xs, [p.power_w for p in points], intercept=True),
        fit_line(xs, [p.bandwidth_bytes_per_s for p in points], intercept=False),
        points,
    )


def group_channels(channels: int, cells: int, mode: Grouping = "balanced") -> Mapping:
    """Contiguous groups of channels, one per enabled cell; the cell sits on the group's
    first channel (§7.4). `balanced`: sizes differ by at most one; `ceil`: groups of
    ceil(N/k), the last smaller (maybe fewer than k cells); `floor`: groups of N//k,
    leftovers appended to the last group."""
    # As `mapping.activate`: 2.5 cells were a TypeError from range(), and True one cell.
    whole_number(channels, "channels", "an integer ≥ 1", 1)
    whole_number(cells, "cells", "an integer")
    if not 1 <= cells <= channels:
        raise ModelError(f"cells must be in 1..{channels}, got {cells}")
    if mode not in get_args(Grouping):  # 'x' grouped as floor, without its last merge
        raise ModelError(f"grouping must be one of {', '.join(get_args(Grouping))}, got {mode!r}")
    if mode == "balanced":
        base, extra = divmod(channels, cells)
        sizes = [base + (1 if i < extra else 0) for i in range(cells)]
    else:
        g = math.ceil(channels / cells) if mode == "ceil" else channels // cells
        sizes = [min(g, channels - s) for s in range(0, channels, g)]
        if mode == "floor":
            while len(sizes) > cells:
                last = sizes.pop()
                sizes[-1] += last
    active, route, first = [], [], 0
    for size in sizes:
        active.append(first)
        route.extend([first] * size)
        first += size
    return Mapping(channels, max(sizes), tuple(active), tuple(route))


def reduced_cells_config(mapping: Mapping) -> Configuration:
    """All channels read, only the mapping's cells compute."""
    if len(mapping.active) == mapping.devices:
        return FULL_GEAR
    return Configuration(active=mapping.active, route=mapping.route)


def channels_off_config(channels: int, on: int) -> Configuration:
    """Channels 0..on-1 and their cells on, the rest powered off."""
    if on == channels:
        return FULL_GEAR
    return Configuration(active=tuple(range(on)), channels=tuple(range(on)))


def _round(value: float, how: ChannelRounding, low: int, high: int) -> int:
    if math.isinf(value):
        return high if value > 0 else low
    if how == "ceil":
        n = math.ceil(value * (1 - _SLACK))
    elif how == "nearest":
        n = math.floor(value + 0.5)
    else:  # floor; `search` refines this start point
        n = math.floor(value * (1 + _SLACK))
    return min(max(n, low), high)


@dataclass(frozen=True)
class ChannelChoice:
    """How many channels or cells a policy enables, before and after rounding.

    `by_rounding` holds each R8 rounding of `exact` (and `search`); `chosen` is the count
    used, which differs from `by_rounding[rounding]` only when that count broke the power
    budget, and `note` then says so."""

    policy: str
    exact: float
    chosen: int
    by_rounding: dict[str, int] = field(default_factory=dict)
    note: str = ""


def power_budget_channels(
    platform: Platform,
    profile: Profile,
    fit: Characteristic,
    budget_w: float,
    options: Options,
    rounding: ChannelRounding = "floor",
    time_model: TimeModel = "channels_off",
    grouping: Grouping = "balanced",
) -> ChannelChoice:
    """Policy A: the most channels (or, under reduced_cells, cells) whose power stays within
    the budget. `search` checks the model's power under `time_model`; any other rounding
    of the fit's solution that the model puts over the budget steps down to the most
    channels within it."""
    n_total = platform.channels
    exact = fit.power.solve(budget_w)
    rounded = {how: _round(exact, how, 1, n_total) for how in ("floor", "ceil", "nearest")}
    powers_w = {
        n: _power_w(platform, profile, options, _config(n_total, n, time_model, grouping)[1])
        for n in range(1, n_total + 1)
    }
    # Spec §7.2: n_power = max{n : power(n) <= budget}. Power need not grow with n (under
    # reduced_cells fewer cells compute longer at the RU's fixed power), so every count
    # is checked, not only the first.
    feasible = [n for n, w in powers_w.items() if w <= budget_w * (1 + _SLACK)]
    unit = _unit(time_model)
    if not feasible:
        least = min(powers_w, key=powers_w.__getitem__)
        raise PlanInputError(
            f"no count of {unit} keeps within the {budget_w:g} W budget: the lowest-power "
            f"plan, {_describe(least, n_total, time_model)}, draws {powers_w[least]:.3g} W",
            parameter="budget_w",
        )
    rounded["search"] = max(feasible)
    wanted = rounded[rounding]
    below = [n for n in feasible if n <= wanted]
    chosen = max(below) if below else min(feasible)
    note = ""
    if chosen != wanted:
        which = "most" if below else "fewest"
        note = (
            f"R8 rounding {rounding} of n = {exact:.2f} gives {wanted} {unit}, which draw "
            f"{powers_w[wanted]:.3f} W, over the {budget_w:g} W power budget; the {which} "
            f"{unit} within it, {chosen}, are used instead"
        )
    return ChannelChoice("power", exact, chosen, rounded, note)


def _describe(n: int, channels: int, time_model: TimeModel) -> str:
    """What n enables, in words: '1 channel with its cell', '1 cell serving all 64 channels'."""
    if time_model == "channels_off":
        return f"{n} channel with its cell" if n == 1 else f"{n} channels with their cells"
    return f"{_cells(n)} serving all {channels} channels"


def _power_w(
    platform: Platform, profile: Profile, options: Options, config: Configuration
) -> float:
    return _watts(estimate(platform, profile, config, options))


def _watts(e: Estimate) -> float:
    """Eq. (11): power over the run, E/T."""
    return e.energy_j / e.time_s


def _unit(time_model: TimeModel) -> str:
    """What a count enables: channels with their cells, or cells on all channels."""
    return "channels" if time_model == "channels_off" else "cells"


def host_bandwidth_cells(
    platform: Platform,
    profile: Profile,
    fit: Characteristic,
    options: Options,
    rounding: ChannelRounding = "floor",
    grouping: Grouping = "balanced",
    time_model: TimeModel = "reduced_cells",
) -> ChannelChoice:
    """Policy B: cells whose output f_pb(n)/β matches the host interface. `search` is the
    fewest cells (under `time_model`) that lose no performance against all on."""
    n_total = platform.channels
    target = profile.alpha * platform.host_link.bandwidth_bytes_per_s
    exact = fit.bandwidth.solve(target)
    rounded = {how: _round(exact, how, 1, n_total) for how in ("floor", "ceil", "nearest")}
    all_on = estimate(platform, profile, FULL_GEAR, options).time_s
    for k in range(1, n_total + 1):
        config = _config(n_total, k, time_model, grouping)[1]
        if estimate(platform, profile, config, options).time_s <= all_on * (1 + _SLACK):
            rounded["search"] = k
            break
    return ChannelChoice("host", exact, rounded[rounding], rounded)


def _config(
    channels: int, on: int, time_model: TimeModel, grouping: Grouping
) -> tuple[Mapping, Configuration]:
    if time_model == "channels_off":
        # Only the powered channels are mapped, each to its own cell.
        mapping = Mapping(on, 1, tuple(range(on)), tuple(range(on)))
        return mapping, channels_off_config(channels, on)
    mapping = group_channels(channels, on, grouping)
    return mapping, reduced_cells_config(mapping)


def plan_channels(
    platform: Platform,
    profile: Profile,
    options: Options | None = None,
    *,
    policy: Policy = "host",
    budget_w: float | None = None,
    fit: FitSource = "model",
    rounding: ChannelRounding = "floor",
    grouping: Grouping = "balanced",
    time_model: TimeModel | None = None,
    never_worse: bool = True,
) -> Plan:
    """RISP's channel selection on an in-storage platform, against all channels on.

    With `never_worse` (the default; the paper has no such rule) a host-bandwidth choice
    that would use more energy than all channels on is not taken: every cell stays on
    (under `both`, the power policy's count is used instead) and a note says why. A power
    budget is a hard constraint: whatever the rounding, the planned power never exceeds it
    (a count over it steps down, and under `both` a host plan over it gives way to the
    budget's count), and a note says so. `policy="host"` with a budget is refused.
    """
    check_plan_inputs(platform, profile, options)
    options = options or Options(units="decimal", host_stage="with_host_stage")
    if not platform.is_in_storage or platform.engines is None:
        raise ModelError(
            f"platform {platform.name!r} has no per-channel processing cells "
            "(engines.placement = 'channel'); channel selection needs them"
        )
    budget_w = _check_arguments(policy, budget_w, fit, rounding, grouping, time_model, never_worse)
    if policy in ("power", "both") and budget_w is None:
        raise PlanInputError(
            f"policy {policy!r} needs a power budget (e.g. --power-budget 3W)", parameter="policy"
        )
    if policy == "host" and budget_w is not None:
        # The host policy never reads the budget; planning over it silently would break
        # the promise that a budget is a hard constraint.
        raise PlanInputError(
            "policy 'host' does not read a power budget; use policy 'both' (the host match "
            "within the budget) or 'power'",
            parameter="budget_w",
        )
    n_total = platform.channels
    if n_total > MAX_PLAN_CHANNELS:
        raise PlanInputError(
            f"a channel plan takes at most {MAX_PLAN_CHANNELS} channels (it evaluates the "
            f"model at every count, in time growing as N²), got {n_total}",
            parameter="channels",
        )
    if fit == "paper":
        check_published_fit(platform, profile)
    # All on first: an app the cells cannot run is then reported against this platform,
    # not against the first of the fit's sample SSDs ('risp-64ch-4ch').
    baseline = estimate(platform, profile, FULL_GEAR, options)
    curves = characteristic(platform, profile, options, source=fit)
    choices: list[ChannelChoice] = []
    if policy in ("power", "both"):
        assert budget_w is not None
        power_model = time_model or "channels_off"
        choices.append(
            power_budget_channels(
                platform, profile, curves, budget_w, options, rounding, power_model, grouping
            )
        )
    if policy in ("host", "both"):
        host_model = time_model or "reduced_cells"
        choices.append(
            host_bandwidth_cells(platform, profile, curves, options, rounding, grouping, host_model)
        )
    binding = min(choices, key=lambda c: c.chosen)
    model = time_model or ("channels_off" if binding.policy == "power" else "reduced_cells")
    mapping, config = _config(n_total, binding.chosen, model, grouping)
    planned = estimate(platform, profile, config, options)
    why = ""
    if never_worse and binding.policy == "host" and planned.energy_j > baseline.energy_j:
        extra = (planned.energy_j / baseline.energy_j - 1) * 100 if baseline.energy_j else math.inf
        why = _dearer(_enabled(len(mapping.active), model), model, extra, options.ru_time)
        mapping, config = _config(n_total, n_total, model, grouping)
        planned = baseline
    power_choice = next((c for c in choices if c.policy == "power"), None)
    if (
        power_choice is not None
        and budget_w is not None
        and binding is not power_choice
        and (why or _watts(planned) > budget_w * (1 + _SLACK))
    ):
        # `both`: the host policy's count gives way to the power policy's, which is within
        # the budget by construction, when it would cost more energy than all on (the other
        # of the two counts is then the smaller one left) or when it breaks the budget.
        why = why or (
            f"the host policy's {_enabled(len(mapping.active), model)} ({model}) draw "
            f"{_watts(planned):.3f} W, over the {budget_w:g} W power budget"
        )
        binding = power_choice
        model = time_model or "channels_off"
        mapping, config = _config(n_total, binding.chosen, model, grouping)
        planned = estimate(platform, profile, config, options)
        planned.notes.append(
            f"{why}; the power budget's {binding.chosen} {_unit(model)} are used instead. "
            "See docs/reproducing-risp.md."
        )
    elif why:
        planned = replace(
            baseline,
            notes=[*baseline.notes, f"{why}; every cell stays on. See docs/reproducing-risp.md."],
        )
    if binding.note:
        planned.notes.append(f"{binding.note}. See docs/reproducing-risp.md.")
    details: dict[str, Any] = {
        "policy": policy,
        "binding_policy": binding.policy,
        "fit": fit,
        "power_fit_w": [curves.power.intercept, curves.power.slope],
        "bandwidth_fit_gb_per_s_per_channel": curves.bandwidth.slope / options.gb,
        "time_model": model,
        "grouping": grouping if model == "reduced_cells" else None,
        "rounding": rounding,
        "channels_on": planned.channels_on,
        "cells_on": planned.pipeline.engines_active,
        "power_budget_w": budget_w,
        "planned_power_w": _watts(planned),
        "baseline_power_w": _watts(baseline),
        **{f"n_{c.policy}_exact": c.exact for c in choices},
        **{f"n_{c.policy}_{how}": n for c in choices for how, n in c.by_rounding.items()},
    }
    if options.host_stage == "eq8_only" and binding.policy == "host":
        planned.notes.append(
            "host_stage=eq8_only: the comparison ignores the host interface, so fewer cells "
            "look slower; use host_stage=with_host_stage (R11) to see the match"
        )
    return Plan(
        platform=platform.name,
        app=profile.app,
        scheme="channels",
        engines_total=n_total,
        engines_required=binding.chosen,
        engines_on=planned.pipeline.engines_active,
        mapping=mapping,
        baseline=baseline,
        planned=planned,
        method=f"{binding.policy} ({fit} fit, {rounding})",
        details=details,
    )


_CHOICES: dict[str, Any] = {
    "policy": Policy,
    "fit": FitSource,
    "rounding": ChannelRounding,
    "grouping": Grouping,
    "time_model": TimeModel,
}


def _check_choices(**given: object) -> None:
    """A PlanInputError naming the first argument that is none of its Literal's values: an
    unknown policy was "min() arg is an empty sequence", an unknown rounding a KeyError, and
    an unknown fit, grouping or time model was planned as another and reported as given."""
    for name, value in given.items():
        allowed = get_args(_CHOICES[name])
        if not isinstance(value, str) or value not in allowed:
            raise PlanInputError(
                f"{name} must be one of {', '.join(allowed)}, got {value!r}", parameter=name
            )


def _check_arguments(
    policy: object,
    budget_w: object,
    fit: object,
    rounding: object,
    grouping: object,
    time_model: object,
    never_worse: object,
) -> float | None:
    """`plan_channels`' arguments of the right kinds, each refused by name (a budget of '3'
    was a TypeError from its comparison with 0, and True a 1 W budget); the budget in W."""
    _check_choices(policy=policy, fit=fit, rounding=rounding, grouping=grouping)
    if time_model is not None:
        _check_choices(time_model=time_model)
    true_or_false(never_worse, "never_worse")
    if budget_w is not None and (isinstance(budget_w, bool) or not isinstance(budget_w, Real)):
        raise PlanInputError(
            f"the power budget must be a number of watts, got {budget_w!r}", parameter="budget_w"
        )
    if budget_w is None:
        return None
    try:
        watts = float(budget_w)
    except OverflowError:  # an int past float's range
        watts = math.inf
    if not watts > 0:
        raise PlanInputError(
            f"the power budget must be positive, got {watts:g} W", parameter="budget_w"
        )
    return watts


def published_fit(profile: Profile) -> PublishedFit:
    """The paper's Eqs. (13)-(14) for `profile`'s app, or a PlanInputError naming --fit."""
    if profile.published_fit is None:
        raise PlanInputError(
            f"the paper publishes fits for sobel only; app {profile.app!r} has no "
            "published_fit (use the model fit)",
            parameter="fit",
        )
    return profile.published_fit


def check_published_fit(platform: Platform, profile: Profile) -> None:
    """Refuse the paper's fit on cells or channels other than those it was published for:
    Eqs. (13)-(14) hold at f_RU = 100 MHz and the paper's 400 MB/s channels only."""
    published = published_fit(profile)
    engines = platform.engines
    clock = engines.frequency_hz if engines is not None else None
    differ = []
    if clock is None or not math.isclose(clock, published.cell_clock_hz, rel_tol=1e-9):
        shown = "none" if clock is None else f"{clock / 1e6:g} MHz"
        differ.append(f"cells at {published.cell_clock_hz / 1e6:g} MHz (this platform: {shown})")
    published_bw = published.channel_bandwidth_bytes_per_s
    bw = platform.storage.channel_bandwidth_bytes_per_s
    if published_bw is not None and (
        bw is None or not math.isclose(bw, published_bw, rel_tol=1e-9)
    ):
        shown = "none" if bw is None else f"{bw / 1e6:g} MB/s"
        differ.append(f"{published_bw / 1e6:g} MB/s channels (this platform: {shown})")
    if differ:
        raise PlanInputError(
            f"the paper's fit for {profile.app} was published for {' and '.join(differ)}; "
            "use the model fit",
            parameter="fit",
        )


def calibrate_ru_power(
    platform: Platform,
    profile: Profile,
    target: LinearFit,
    options: Options,
    channels: Sequence[int] = SAMPLE_CHANNELS,
) -> tuple[float, float]:
    """The RU's fixed and per-cell active power that make the model's power curve fit
    `target` best (least squares over `channels`): how Sobel's powers are set from
    Eq. (13) when Table IV is missing (R6, linear_per_cell).

    power(n) = rest(n) + (fixed + n x cell) x a(n) + P_idle x (1 - a(n)), with a(n) the
    RU's active fraction of the run, is linear in (fixed, cell).
    """
    engines, public = platform.engines, platform.public_cell
    if engines is None or public is None:
        raise ModelError("calibration needs channel cells and a public cell")
    # The RU drawing nothing at all (idle too: an RU whose idle power is above its power
    # computing is refused), so that the rest of the SSD's power is what remains.
    zero = _with_ru_power(platform, profile.app, 0.0, 0.0, idle_w=0.0)
    rows: list[tuple[float, float, float]] = []
    for n in channels:
        e = estimate(zero.with_channels(n), profile, FULL_GEAR, options)
        ru = e.state_times.of("ru")
        active = ru.get("active", 0.0) / e.time_s
        rest = e.energy_j / e.time_s
        idle_part = public.power_idle_w * (1 - active)
        rows.append((active, n * active, target(n) - rest - idle_part))
    # Normal equations for y ≈ fixed x a + cell x (n a).
    s11 = sum(a * a for a, _, _ in rows)
    s12 = sum(a * b for a, b, _ in rows)
    s22 = sum(b * b for _, b, _ in rows)
    t1 = sum(a * y for a, _, y in rows)
    t2 = sum(b * y for _, b, y in rows)
    det = s11 * s22 - s12 * s12
    if det == 0:
        raise ModelError("calibration is singular: the RU is never active at these channel counts")
    return (t1 * s22 - t2 * s12) / det, (s11 * t2 - s12 * t1) / det


def _with_ru_power(
    platform: Platform, app: str, fixed_w: float, cell_w: float, *, idle_w: float | None = None
) -> Platform:
    data = platform.model_dump(by_alias=False)
    if idle_w is not None:
        data["public_cell"]["power_idle_w"] = idle_w
    data["engines"]["power_active_by_app"][app] = cell_w
    data["public_cell"]["power_active_by_app"][app] = fixed_w
    # A trial cell power (0 W among them) below the cells' power while off or idle: the
    # cell is taken to draw no more off or idle than on, as a platform file must say. The
    # in-storage model prices no cell's idle power of its own (the RU's idle is the public
    # cell's `power_idle`), so lowering it changes no estimate.
    for key in ("power_off_w", "power_idle_w"):
        if data["engines"][key] is not None:  # an idle power may be left unset
            data["engines"][key] = min(data["engines"][key], cell_w)
    return Platform.model_validate(data, context={"si": True})


def _cells(n: int) -> str:
    return f"{n} cell" if n == 1 else f"{n} cells"


def _enabled(n: int, model: str) -> str:
    """What the host policy's count enables: cells on every channel (reduced_cells), or
    channels with their cells, the rest off (channels_off: '20 cells' said 20 channels)."""
    if model == "channels_off":
        return "1 channel with its cell" if n == 1 else f"{n} channels with their cells"
    return _cells(n)


def _dearer(enabled: str, model: str, extra_pct: float, ru_time: str) -> str:
    more = f"{extra_pct:.2g}" if extra_pct < 0.05 else f"{extra_pct:.1f}"  # not "0.0% more"
    return (
        f"the host policy's {enabled} ({model}) would use {more}% more energy than all "
        f"on under these conventions (ru_time={ru_time})"
    )
