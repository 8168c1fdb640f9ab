"""The conventions a model run follows, where the papers are ambiguous.

The first fields are the RANS/RFNS spec's options (O1…O18, `spec/seeds/rans-rfns.md` §14),
the rest RISP's (R1…R21, `spec/seeds/risp.md` §13); the defaults reproduce the papers.
`docs/reproducing-rans-rfns.md` and `docs/reproducing-risp.md` say which choice
reproduces which table. Each model reads only its own paper's fields.
"""

from __future__ import annotations

from dataclasses import dataclass, fields, replace
from typing import Any, Literal, get_args

from ndpkit.errors import SpecError

EnergyForm = Literal["A", "B"]
WallTimes = Literal["unrounded", "printed"]
TimeBasis = Literal["paper", "pipeline", "overlap", "staged"]
Placement = Literal["paper_no_loss", "static_shards", "reshard_y_ssds"]
Units = Literal["binary", "decimal"]
Rounding = Literal["unrounded", "rounded_2dp"]
SwitchPower = Literal["declared", "per_element"]
SwitchTime = Literal["ndp", "ndp_cpu"]
Improvement = Literal["reduction", "ee_gain"]
Rounding2 = Literal["exact", "paper"]
CpuEnergy = Literal["cycles", "instructions"]
Attribution = Literal["paper", "all_active"]
NvmPower = Literal["per_channel", "per_device"]
RuPower = Literal["linear_per_cell", "proportional"]
HostStage = Literal["eq8_only", "with_host_stage"]
ReconfigurationCost = Literal["ignore", "include"]
CellLoad = Literal["ideal", "max_group"]
RuTime = Literal["computing", "configured"]

GIB = 2**30
MIB = 2**20


@dataclass(frozen=True)
class Options:
    """Model conventions. All defaults are the paper's (or the spec's stated default)."""

    energy_form: EnergyForm = "A"
    """O1: host energy in the CPU phase: A = P_active x T_CPU (paper text, anchor 11.5);
    B = (P_active - P_idle) x T_CPU (the increment over idle)."""
    wall_times: WallTimes = "unrounded"
    """O2: full-server NDP time: single-engine time / n, or the paper's printed values."""
    time_basis: TimeBasis = "paper"
    """O11: paper = stage wall times added (T_NDP + T_CPU); pipeline = D / performance;
    overlap = max(T_NDP, T_CPU); staged = the device side at its slowest stage, then the
    host part (D / min(SSD, NDP, NDP2CPU x α) + T_CPU), what the simulator's barrier mode
    does."""
    placement: Placement = "paper_no_loss"
    """O8: how data sits when engines are off: re-sharded with no loss (paper); one shard
    per SSD so an engine serving m SSDs takes m times as long; or re-sharded onto the
    SSDs of the active engines only."""
    units: Units = "binary"
    """O4: 'binary' reads the paper's GB as 2^30 bytes and MB as 2^20 (its 1 GB = 1024 MB);
    'decimal' reports GB = 10^9 and MB = 10^6 bytes."""
    eq_rounding: Rounding = "unrounded"
    """O3: bandwidths inside Eq. (2)/(3) unrounded, or rounded to 2 decimals first."""
    mux_port_cap: bool = False
    """O9: cap switched SSD links at the switch layer's port bandwidth (20 Gbps)."""
    switch_power: SwitchPower = "declared"
    """O5: switch-layer power: the declared total (18 mW) or elements x 0.99 mW (17.82 mW)."""
    switch_time: SwitchTime = "ndp"
    """O5: charge the switch layer over T_NDP (paper) or over T_NDP + T_CPU."""
    improvement: Improvement = "reduction"
    """O7: 'improvement' = energy reduction vs the baseline, or the relative gain in MB/J."""
    rounding: Rounding2 = "exact"
    """O6: 'paper' rounds energies to 0.01 J before deriving MB/J and savings from them,
    as the paper's worked examples do; 'exact' keeps full precision."""

    # RISP (in-storage) conventions.
    cpu_energy: CpuEnergy = "cycles"
    """R3: host CPU energy = EPC x CPB x D (cycles) or EPC x IPB x D (instructions)."""
    attribution: Attribution = "paper"
    """R4: each component active for its own stage time and idle otherwise (spec §5.2), or
    every component active for the whole run."""
    nvm_power: NvmPower = "per_channel"
    """R5: the NVM powers are per powered channel, or for the whole device."""
    ru_power: RuPower = "linear_per_cell"
    """R6: P_RU(k cells) = fixed + k x per-cell, or P_RU(reference cells) x k / reference."""
    host_stage: HostStage = "eq8_only"
    """R11: T_RISP = Eq. (8), or also the results' transfer to the host, D / (β b_hostIO)."""
    reconfiguration: ReconfigurationCost = "ignore"
    """R15: ignore loading the bitstream (paper), or add its time and energy (10 ms, 4 mJ)."""
    ru_time: RuTime = "computing"
    """R4 for the RU: active while computing and idle after (spec §5.2), or drawing its
    active power for the whole run once configured (clocked fabric waits, not idles)."""
    cell_load: CellLoad = "ideal"
    """R9/R10: a cell serving a group computes D/(α k) (ideal, the paper), or the largest
    group's share of the data (max_group: uneven groups make one cell finish last)."""

    def round_energy(self, joules: float) -> float:
        return round(joules, 2) if self.rounding == "paper" else joules

    @property
    def gb(self) -> float:
        """Bytes in one GB as reported (per `units`)."""
        return float(GIB if self.units == "binary" else 10**9)

    @property
    def mb(self) -> float:
        """Bytes in one MB as reported (per `units`)."""
        return float(MIB if self.units == "binary" else 10**6)

    def with_(self, **changes: Any) -> Options:
        return replace(self, **changes)

    def __post_init__(self) -> None:
        # Built in Python, a misspelt choice (`Options(units="Decimal")`, energy_form="a")
        # was kept, and each model tests for one spelling: the run silently followed the
        # other convention.
        for f in fields(self):
            _check_choice(f.name, getattr(self, f.name), "Options")
            if _ANNOTATIONS[f.name] is bool:  # numpy's bool (a mask's element) kept as bool
                object.__setattr__(self, f.name, bool(getattr(self, f.name)))

    @classmethod
    def from_mapping(cls, values: dict[str, Any], *, source: str = "options") -> Options:
        """Build options from strings (CLI flags, a TOML table), with clear errors."""
        known = {f.name: f for f in fields(cls)}
        for key, value in values.items():
            if key not in known:
                raise SpecError(
                    f"unknown option; known: {', '.join(known)}", source=source, field=key
                )
            _check_choice(key, value, source)
        return cls(**values)

    def as_dict(self) -> dict[str, Any]:
        return {f.name: getattr(self, f.name) for f in fields(self)}


RISP_ONLY = frozenset(
    {
        "cpu_energy",
        "attribution",
        "nvm_power",
        "ru_power",
        "host_stage",
        "reconfiguration",
        "ru_time",
        "cell_load",
    }
)
"""Conventions only the in-storage (RISP) model reads."""
SERVER_ONLY = frozenset(f.name for f in fields(Options)) - RISP_ONLY - {"units"}
"""Conventions only the NDP-server (RANS/RFNS) model reads; `units` is read by both."""


_ANNOTATIONS: dict[str, Any] = {
    "energy_form": EnergyForm,
    "wall_times": WallTimes,
    "time_basis": TimeBasis,
    "placement": Placement,
    "units": Units,
    "eq_rounding": Rounding,
    "mux_port_cap": bool,
    "switch_power": SwitchPower,
    "switch_time": SwitchTime,
    "improvement": Improvement,
    "rounding": Rounding2,
    "cpu_energy": CpuEnergy,
    "attribution": Attribution,
    "nvm_power": NvmPower,
    "ru_power": RuPower,
    "host_stage": HostStage,
    "reconfiguration": ReconfigurationCost,
    "cell_load": CellLoad,
    "ru_time": RuTime,
}


def _check_choice(key: str, value: object, source: str) -> None:
    """A SpecError naming option `key` (of `source`) unless `value` is one of its choices
    (True or False for a flag)."""
    if _ANNOTATIONS[key] is bool:
        if isinstance(value, bool):
            return
        import numpy as np  # noqa: PLC0415 - not for a bool: numpy is slow to import

        if not isinstance(value, np.bool_):  # numpy's bool is one, as in errors.true_or_false
            raise SpecError(f"must be true or false, got {value!r}", source=source, field=key)
        return
    allowed = get_args(_ANNOTATIONS[key])
    if value not in allowed:
        raise SpecError(
            f"must be one of {', '.join(map(str, allowed))}, got {value!r}",
            source=source,
            field=key,
        )
