"""NASCENT2 as a discrete-event simulation (spec §0.1 item 8, §9, §10), beside the analytic
model of `ndpkit.nascent.timing` and `ndpkit.nascent.system`.

The same devices (`devices.toml` → `FpgaDevice`, `CpuDevice`) and the same workload shapes
(`TableJob`, the generic sort's arguments) are compiled, through the analytic model's own
per-kernel results, into the Rust model `ndp_sim::smartssd` and run once:

- each SmartSSD is a machine with its own SSD → FPGA P2P link (BW_S2F), its FPGA DRAM ↔
  kernel bandwidth (BW_D2F) shared max-min fairly by every transfer in flight, and pools
  of kernels (1 decoder, 1 sort kernel, 6 shuffle instances); 𝓜 SmartSSDs run side by side;
- the U250 baseline is one machine with the U250's parameters and kernel replicas (O11)
  whose 𝓜 jobs read their SSDs through **one** PCIe path, and the CPU baseline one machine
  whose jobs read through one path at 3 GB/s and then run their decode, sort and shuffle
  on the CPU; both run their jobs one after another (§9.4) or, with
  `baseline_schedule="concurrent"`, all at once, contending on that path;
- a job's phases run in order (O18 `serial`): the generic sort's host steps (§8.4), the
  dictionary load and the decode stream (§7.4), the sort's chunks and DRAM merge passes
  (§5.6, §5.8), the shuffle (§6.5); each streams chunks: a P2P read of chunk i overlaps
  the work on chunk i − 1 (O10 `overlap`) or precedes all work (`serial`).

What a kernel computes per chunk (the §5.8 cycle terms without the loads and stores, the
decoder's key rate, a shuffle instance's pace t_rand + row/port) comes from the analytic
model's results; the bytes they move are transfers over the simulated links, so the
simulation sees what the closed forms cannot: pipeline fill and drain, chunk granularity,
kernels contending for DRAM bandwidth, and jobs contending for a shared PCIe path.

Energy is power × time as in §10.7: each SmartSSD is charged over its own job, each
baseline over its whole run.

Example (one SmartSSD, the E6 table of 1,024 × 4 KB rows):
    >>> from ndpkit.nascent.model import TableJob, load_devices
    >>> job = TableJob(rows=1024, row_bytes=4096.0, encoded_key_bytes=2, dict_values=1024)
    >>> s = simulate_table_sort(load_devices().fpga("smartssd"), job)
    >>> s.total_s > s.model.total_s
    True
"""

from __future__ import annotations

import json
import math
import numbers
from collections.abc import Mapping
from dataclasses import dataclass, replace
from importlib import import_module
from typing import Any, Generic, Literal, Protocol, TypeVar

from ndpkit.errors import ModelError, SpecError, check_kinds, finite_number
from ndpkit.nascent.devices import CpuDevice, DeviceSet, FpgaDevice, load_devices
from ndpkit.nascent.system import (
    MAPPED_KEY_BYTES,
    Comparison,
    CpuPhases,
    CpuTime,
    GenericSortTime,
    HostSort,
    HostTime,
    ModelOptions,
    TableJob,
    TableSortTime,
    compare,
    cpu_time,
    generic_sort_time,
    table_sort_time,
)
from ndpkit.nascent.timing import (
    INDEX_BYTES,
    DecodeTime,
    ShuffleTime,
    SortTime,
    check_choice,
    merge_tree_pass_bytes,
)
from ndpkit.native import interruptible
from ndpkit.summary import summary

_core: Any = import_module("ndpkit._core")  # the compiled extension has no type stub

Schedule = Literal["serial", "concurrent"]
ShuffleOrder = Literal["scatter", "gather"]
Spec = dict[str, Any]
_SOURCE = "nascent2 simulation"
_MODEL_OPTIONS = ModelOptions()
_NO_CPU_WORK = CpuPhases()
STREAMING_PASS_PORTS = 4
"""A DRAM streaming compare-and-swap pass reads two streams and writes two (§5.6)."""


@dataclass(frozen=True)
class DesOptions:
    """What the simulation adds to the model's options.

    `chunk_bytes`: the granularity of P2P reads (decoder input, staged rows) and of shuffle
    work; the sort moves one on-chip chunk at a time. `baseline_schedule`: the baselines'
    jobs one after another (§9.4, the model's Σ) or all at once on the shared path.
    `shuffle_order`: `scatter` writes each staged row to its output place as its chunk
    lands (the same accesses as Eq. 4, which the model's O10 overlap assumes); `gather`
    runs Eq. 4 in output order over a random permutation (seeded), so an output chunk
    waits for the last input chunk its rows come from."""

    chunk_bytes: float = 2**20
    baseline_schedule: Schedule = "serial"
    shuffle_order: ShuffleOrder = "scatter"
    seed: int = 0

    def check(self) -> None:
        # Not a bool or a string: True ran as 1-byte chunks, "1 MiB" was a TypeError, and an
        # int past float's range an OverflowError from isfinite.
        finite_number(
            self.chunk_bytes, "chunk_bytes", "a positive number of bytes", above=0, source=_SOURCE
        )
        check_choice("baseline_schedule", self.baseline_schedule, Schedule)
        check_choice("shuffle_order", self.shuffle_order, ShuffleOrder)
        if (
            isinstance(self.seed, bool)
            or not isinstance(self.seed, numbers.Integral)  # a numpy integer as well
            or not 0 <= self.seed < 2**64
        ):
            raise SpecError(
                f"must be a whole number in [0, 2^64), got {self.seed!r}",
                source=_SOURCE,
                field="seed",
            )


def _check_kinds(*wanted: tuple[str, object, type | tuple[type, ...], str]) -> None:
    """`errors.check_kinds` said as the model's: DesOptions given as the third positional
    argument of `simulate_table_sort` (the model options' place) ended in "'DesOptions'
    object has no attribute 'dram_merge'", a device's name for the device in "'str' object
    has no attribute 'clock_hz'"."""
    check_kinds(*wanted, source=_SOURCE)


_DEVICE = "an FpgaDevice (load_devices().fpga(name))"
_JOB = "a TableJob"
_OPTIONS = "the model's ModelOptions"
_DES = "DesOptions (by name: des=DesOptions(…))"


# Results ------------------------------------------------------------------------------


@dataclass(frozen=True)
class LinkUse:
    """One link over a run: bytes moved, seconds with a transfer in flight, and the mean
    share of its bandwidth used (bytes / (capacity × the machine's run time))."""

    capacity_bytes_per_s: float
    bytes: float
    busy_s: float
    utilisation: float


@dataclass(frozen=True)
class PoolUse:
    """A pool of kernels (or the CPU): unit-seconds held by work, and that over
    units × the machine's run time."""

    units: int
    busy_s: float
    sub_items: int
    utilisation: float


@dataclass(frozen=True)
class PhaseRun:
    """One phase of a job; `name` is `<model phase>:<step>` (e.g. `sort:chunks`)."""

    name: str
    start_s: float
    end_s: float
    bytes: Mapping[str, float]
    units_read: float
    units_done: float

    @property
    def duration_s(self) -> float:
        return self.end_s - self.start_s


@dataclass(frozen=True)
class JobRun:
    """One job (one SSD's table or column) on its machine."""

    start_s: float
    end_s: float
    phases: tuple[PhaseRun, ...]

    @property
    def total_s(self) -> float:
        return self.end_s - self.start_s

    def phases_s(self) -> dict[str, float]:
        """Seconds per model phase (host, decode, sort, shuffle, …), as the model names them."""
        return _sum_by(self.phases, lambda p: p.name.split(":")[0])

    def steps_s(self) -> dict[str, float]:
        """Seconds per simulated step (`sort:chunks`, `sort:stream`, `shuffle:gather`, …)."""
        return _sum_by(self.phases, lambda p: p.name)

    def phase_bytes(self, model_phase: str) -> dict[str, float]:
        """Bytes moved per link by the steps of one model phase."""
        out: dict[str, float] = {}
        for p in self.phases:
            if p.name.split(":")[0] == model_phase:
                for link, b in p.bytes.items():
                    out[link] = out.get(link, 0.0) + b
        return out


def _sum_by(phases: tuple[PhaseRun, ...], key: Any) -> dict[str, float]:
    out: dict[str, float] = {}
    for p in phases:
        out[key(p)] = out.get(key(p), 0.0) + p.duration_s
    return out


@dataclass(frozen=True)
class MachineRun:
    """A SmartSSD, the U250 board or the CPU over one run."""

    name: str
    end_s: float
    jobs: tuple[JobRun, ...]
    links: Mapping[str, LinkUse]
    pools: Mapping[str, PoolUse]

    @property
    def busy_s(self) -> float:
        """From its first job's start to its last job's end: the time it is charged for."""
        return self.end_s - min((j.start_s for j in self.jobs), default=0.0)


class _Phased(Protocol):
    def phases_s(self) -> dict[str, float]: ...


_Model = TypeVar("_Model", bound=_Phased)


@dataclass(frozen=True)
class _OneJob(Generic[_Model]):
    """One job on one device, with the model's answer for it as `model`."""

    device: str
    machine: MachineRun
    power_w: float
    events: int
    model: _Model

    def __repr__(self) -> str:  # the dataclass's: every phase's run and the model's answer
        return summary(
            type(self).__name__,
            device=self.device,
            total_s=self.total_s,
            energy_j=self.energy_j,
            model_total_s=sum(self.model.phases_s().values()),
        )

    def phases_s(self) -> dict[str, float]:
        """Seconds per phase, under the model's phase names."""
        simulated = self.machine.jobs[0].phases_s()
        return {k: simulated.get(k, 0.0) for k in self.model.phases_s()}

    @property
    def total_s(self) -> float:
        return self.machine.jobs[0].total_s

    @property
    def energy_j(self) -> float:
        return self.power_w * self.total_s


@dataclass(frozen=True, repr=False)  # _OneJob's
class TableSortSimulation(_OneJob[TableSortTime]):
    """One table sort on one device (Flow A, or Flow C for a generic key); `phases_s()` and
    `total_s` as `TableSortTime`, which is kept as `model`."""

    job: TableJob


@dataclass(frozen=True, repr=False)  # _OneJob's
class GenericSortSimulation(_OneJob[GenericSortTime]):
    """One generic sort of a column (Flow B); `phases_s()` and `total_s` as
    `GenericSortTime`, which is kept as `model`."""

    elements: int


@dataclass(frozen=True)
class DevicesSimulation:
    """𝓜 jobs on NASCENT2 (a SmartSSD each), the U250 baseline and the CPU baseline.

    `result` is a `Comparison` with simulated times and energies (the same fields and
    ratios as the model's, which is kept as `model`); `job_models` keeps the model's answer
    for one job on each of them, phase by phase. Its repr shows `result`'s times and
    speedups."""

    devices: int
    result: Comparison
    model: Comparison
    nascent2: tuple[MachineRun, ...]
    fpga: MachineRun
    cpu: MachineRun
    events: int
    schedule: str
    job_models: tuple[TableSortTime, TableSortTime, CpuTime]

    def __repr__(self) -> str:  # the dataclass's: every machine's every job, 40,000 characters
        return summary(
            "DevicesSimulation",
            devices=self.devices,
            schedule=self.schedule,
            nascent2_s=self.result.nascent2_s,
            fpga_s=self.result.fpga_s,
            cpu_s=self.result.cpu_s,
            speedup_vs_fpga=self.result.speedup_vs_fpga,
            speedup_vs_cpu=self.result.speedup_vs_cpu,
        )

    @property
    def device_busy_s(self) -> tuple[float, ...]:
        """T_N,m: each SmartSSD's time on its own job."""
        return tuple(m.busy_s for m in self.nascent2)


SAME_REL = 1e-12
"""Figures this close (relative) are the same number summed in a different order."""


@dataclass(frozen=True)
class Difference:
    """One figure, simulated against modelled."""

    quantity: str
    simulated: float
    model: float

    @property
    def difference_pct(self) -> float:
        if self.model == 0:
            return 0.0 if self.simulated == 0 else math.inf
        if math.isclose(self.simulated, self.model, rel_tol=SAME_REL):
            return 0.0  # the two sums differ only in rounding; a "-4.7e-09 %" is noise
        return 100.0 * (self.simulated - self.model) / self.model


def compare_with_model(
    sim: TableSortSimulation | GenericSortSimulation | DevicesSimulation,
) -> list[Difference]:
    """Every figure the simulation and the model share, side by side."""
    kinds = (TableSortSimulation, GenericSortSimulation, DevicesSimulation)
    _check_kinds(("sim", sim, kinds, "a simulate_table_sort, _generic_sort or _devices result"))
    if isinstance(sim, DevicesSimulation):
        names = ("nascent2_s", "fpga_s", "cpu_s", "nascent2_j", "fpga_j", "cpu_j")
        return [Difference(n, getattr(sim.result, n), getattr(sim.model, n)) for n in names]
    modelled = sim.model.phases_s()
    rows = [Difference(f"{k}_s", v, modelled[k]) for k, v in sim.phases_s().items()]
    return [*rows, Difference("total_s", sim.total_s, sim.model.total_s)]


# Compiling the model's results into phases --------------------------------------------


def _part(
    link: str | None = None,
    *,
    per_item: float = 0.0,
    per_unit: float = 0.0,
    cap: float | None = None,
) -> Spec:
    return {"link": link, "per_item": per_item, "per_unit": per_unit, "cap_bps": cap}


def _phase(
    name: str,
    steps: list[list[Spec]],
    *,
    pool: str | None = None,
    items: int = 1,
    units: float = 0.0,
    item_units: float = 0.0,
    split: int = 1,
    read: Spec | None = None,
    wait: str = "item",
) -> Spec:
    return {
        "name": name,
        "pool": pool,
        "items": max(1, items),
        "units": float(units),
        "item_units": float(item_units),
        "split": split,
        "read": read,
        "steps": steps,
        "wait": wait,
    }


def _streamed(units: float, unit_bytes: float, chunk_bytes: float) -> tuple[int, float]:
    """(items, units per item) for reads of about `chunk_bytes`, whole units per item."""
    if unit_bytes <= 0 or units <= 0:
        return 1, float(units)
    per_item = max(1.0, math.floor(chunk_bytes / unit_bytes))
    return math.ceil(units / per_item), per_item


def _host_phase(host: HostTime, dict_bytes: float, dict_values: int) -> Spec:
    """§8.4: read the dictionary page, sort it on the host, send it and the mapping table."""
    h2d = dict_bytes + MAPPED_KEY_BYTES * dict_values
    return _phase(
        "host:dictionary",
        [
            [_part("host_ssd", per_item=dict_bytes)],
            [_part(per_item=host.host_sort_s)],
            [_part("host", per_item=h2d)],
        ],
        pool="host",
    )


def _decoder_phases(
    name: str, device: FpgaDevice, d: DecodeTime, table_bytes: float, values: int, des: DesOptions
) -> list[Spec]:
    """T_dict, then the decode stream (§7.4): keys arrive over P2P chunk by chunk; the
    decoder reads them and writes its output through DRAM at its own key rate."""
    load = _phase(
        f"{name}:dictionary",
        [[_part("s2f", per_item=table_bytes)], [_part(per_item=values / device.clock_hz)]],
        pool="decoder",
    )
    compute_s = max(v for k, v in d.terms_s.items() if k in ("key_rate", "output_buffers"))
    # O8: the DRAM traffic the model charges per key (data page read + decoded write, plus
    # the P2P write of the data page under `full`).
    extra = d.key_bytes if d.accounting == "full" else 0
    dram_per_key = d.key_bytes + d.output_bytes_per_key + extra
    pace = dram_per_key * d.keys / compute_s if compute_s > 0 else None
    items, per_item = _streamed(d.keys, d.key_bytes, des.chunk_bytes)
    stream = _phase(
        f"{name}:stream",
        [[_part("d2f", per_unit=dram_per_key, cap=pace)]],
        pool="decoder",
        items=items,
        units=d.keys,
        item_units=per_item,
        read={"link": "s2f", "bytes_per_unit": float(d.key_bytes)},
    )
    return [load, stream]


def _sort_phases(device: FpgaDevice, s: SortTime, options: ModelOptions) -> list[Spec]:
    """The chunks (§5.8) and the DRAM merge (O4, §5.6) of one sort, kernel by kernel."""
    e = s.key_bits // 8
    nc = s.chunk.elements
    port = device.axi_bytes * device.clock_hz
    f = device.clock_hz
    chunk_compute_s = (s.chunk.pcs + s.chunk.merge + s.chunk.pipe) / f
    read = {"link": "s2f", "bytes_per_unit": float(e)} if s.source == "ssd" else None
    chunks = _phase(
        "sort:chunks",
        [
            [_part("d2f", per_item=nc * e, cap=port)],
            [_part(per_item=chunk_compute_s)],
            [_part("d2f", per_item=nc * (e + INDEX_BYTES), cap=port)],
        ],
        pool="sort",
        items=s.chunks,
        units=s.elements,
        item_units=nc,
        read=read,
        wait="item" if options.overlap == "overlap" else "all",
    )
    if s.streaming_passes:
        return [chunks, *_bitonic_dram(device, s, 2 * s.chunks * nc * (e + INDEX_BYTES))]
    tree = _phase(
        "sort:merge_tree",
        [
            [
                _part("d2f", per_item=merge_tree_pass_bytes(s.elements, s.key_bits)),
                _part(per_item=s.elements / (f * device.merge_tree_elements_per_cycle)),
            ]
        ],
        pool="sort",
    )
    return [chunks, *[tree] * s.merge_tree_passes]


def _bitonic_dram(device: FpgaDevice, s: SortTime, pass_bytes: float) -> list[Spec]:
    """Step c + j of the network over chunks: j streaming passes (d ≥ N_c), then one
    on-chip pass per chunk for the sub-steps below N_c (§5.6)."""
    levels = s.onchip_passes
    if levels * (levels + 1) // 2 != s.streaming_passes:
        raise ModelError(
            f"{s.streaming_passes} streaming passes do not fit {levels} on-chip passes"
        )
    port = device.axi_bytes * device.clock_hz
    move = s.chunk.elements * (s.key_bits // 8 + INDEX_BYTES)
    # The model's on-chip pass per chunk, less the reload and store the simulation moves.
    compute_s = s.onchip_pass_s - 2 * move / port
    stream = _phase(
        "sort:stream",
        [[_part("d2f", per_item=pass_bytes, cap=STREAMING_PASS_PORTS * port)]],
        pool="sort",
        split=device.sort_kernels,
    )
    onchip = _phase(
        "sort:onchip",
        [
            [_part("d2f", per_item=move, cap=port)],
            [_part(per_item=compute_s)],
            [_part("d2f", per_item=move, cap=port)],
        ],
        pool="sort",
        items=s.chunks,
    )
    phases: list[Spec] = []
    for level in range(1, levels + 1):
        phases += [stream] * level + [onchip]
    return phases


def shuffle_sub_items(kernels: int, rows: int, row_bytes: float, chunk_bytes: float) -> int:
    """How many pieces one shuffle of `rows` is simulated in: its streamed chunks, each
    shared by `shuffle_split` instances (for a size check before a run)."""
    items, per_item = _streamed(rows, row_bytes, chunk_bytes)
    return items * shuffle_split(kernels, min(per_item, rows))


def shuffle_split(kernels: int, rows_per_item: float) -> int:
    """How many instances share one streamed chunk of rows: no more than it has rows (a row
    is one instance's), so a huge kernel count cannot cut each chunk into millions of
    fractions of a row, each a piece of work on the shared DRAM link. (A table's last chunk
    may hold fewer rows, and is still split this many ways.)"""
    return max(1, min(kernels, math.floor(rows_per_item)))


MAX_EVENTS = 300_000_000
"""The most events a simulation is estimated at before it starts (`check_size`), through
Python as through `ndpkit simulate nascent2`: about 30 s on this kind of machine. Estimated
events ran at about 10 M/s (18 SSDs of lineitem at SF 100, 48 M of them, in 4.8 s on
2026-11-29); 50 M refused runs of 5 s (20 such SSDs) once shuffle pieces were counted."""
EVENTS_PER_SECOND = 10_000_000
"""The slower end of the rate estimated events ran at (10-25 M/s), for the time an error
says a refused run would take."""
_EVENTS_PER_CHUNK = 32
"""An upper estimate of events per streamed chunk over the three machines (measured:
12–27 at lineitem SF 1 and SF 100, l_orderkey and l_shipdate)."""
_EVENTS_PER_SSD = 3_000
"""What one SSD's job costs besides its chunks, counted as events: its spec is written and
read as JSON and its result built in Python, 0.26 ms per SSD here (13.5 s and 0.7 GB for
50,000 SSDs of one row, 26 s and 1.3 GB for 100,000; 47 s on a busier run), what 2,600
events take. It puts the most SSDs of a one-row table near 100,000; a million ran for
minutes."""
_GENERIC_EVENTS_PER_CHUNK = 64
"""An upper estimate of the generic sort's events per chunk of its (key, index) pairs
(measured: 47 for 60 M elements of 2-byte keys, 1 MiB chunks)."""


def check_size(
    m: int,
    job: TableJob,
    chunk_bytes: float,
    devices: Mapping[str, FpgaDevice],
    *,
    source: str = _SOURCE,
    field: str = "m/job/des.chunk_bytes",
    remedy: str = "lower m or the job's rows, or raise des.chunk_bytes",
) -> None:
    """Refuse, before it starts, a simulation of `m` SSDs holding `job` each that would run
    for minutes or hours: more than MAX_EVENTS estimated events. `devices` are the machines
    it runs by role (a SmartSSD simulated once for all 𝓜, the U250 running every SSD's
    job); `source`, `field` and `remedy` say it as the caller's flags or arguments."""
    chunks = math.ceil(job.rows * job.row_bytes / chunk_bytes)
    # Each shuffle instance's share of a chunk is a piece of work of its own on the shared
    # DRAM link: one SmartSSD is simulated for all 𝓜, the U250 runs every SSD's job.
    pieces = {
        role: shuffle_sub_items(device.shuffle_kernels, job.rows, job.row_bytes, chunk_bytes)
        for role, device in devices.items()
    }
    events = m * (_EVENTS_PER_CHUNK * chunks + _EVENTS_PER_SSD)
    events += sum(n if role == "smartssd" else m * n for role, n in pieces.items())
    detail = f"{m:,} SSDs × {chunks:,} chunks, {max(pieces.values()):,} shuffle pieces per SSD"
    _refuse_over(events, detail, source, field, remedy)


def _refuse_over(events: float, detail: str, source: str, field: str, remedy: str) -> None:
    if events > MAX_EVENTS:
        raise SpecError(
            f"would simulate about {events:.3g} events ({detail}), more than "
            f"{MAX_EVENTS:.3g} (about {_duration(MAX_EVENTS)}): it would run for about "
            f"{_duration(events)} at {EVENTS_PER_SECOND / 1e6:g} million events a second; "
            f"{remedy}",
            source=source,
            field=field,
        )


def _duration(events: float) -> str:
    """The time `events` take at EVENTS_PER_SECOND, in a unit a person reads."""
    seconds = events / EVENTS_PER_SECOND
    for unit, size in (("hours", 3600), ("minutes", 60)):
        if seconds >= 2 * size:
            return f"{seconds / size:.0f} {unit}"
    return f"{seconds:.0f} s"


def _shuffle_phase(
    sh: ShuffleTime, device: FpgaDevice, options: ModelOptions, des: DesOptions
) -> Spec:
    """The six (or k_rep) shuffle instances over the staged rows (O5 `stage_in_dram`) or
    fetching rows from the SSD (`ssd_direct`), each no faster than its own pace (§6.5)."""
    items, per_item = _streamed(sh.rows, sh.row_bytes, des.chunk_bytes)
    common: dict[str, Any] = {
        "pool": "shuffle",
        "items": items,
        "units": sh.rows,
        "item_units": per_item,
        "split": shuffle_split(sh.kernels, min(per_item, sh.rows)),
    }
    if sh.staging == "ssd_direct":
        fetched = math.ceil(sh.row_bytes / device.ssd_page_bytes) * device.ssd_page_bytes
        fetch_cap = sh.kernel_bytes_per_s * fetched / sh.row_bytes
        steps = [
            [_part("s2f", per_unit=fetched, cap=fetch_cap), _part("d2f", per_unit=sh.row_bytes)]
        ]
        return _phase("shuffle:direct", steps, **common)
    if options.overlap == "serial":
        wait = "all"
    else:
        wait = "item" if des.shuffle_order == "scatter" else "gather"
    # Each row is read and written: twice its bytes in DRAM, at twice a kernel's pace.
    steps = [[_part("d2f", per_unit=2 * sh.row_bytes, cap=2 * sh.kernel_bytes_per_s)]]
    read = {"link": "s2f", "bytes_per_unit": sh.row_bytes}
    return _phase("shuffle:staged", steps, read=read, wait=wait, **common)


def _table_job(
    t: TableSortTime, device: FpgaDevice, options: ModelOptions, des: DesOptions
) -> Spec:
    job = t.job
    phases: list[Spec] = []
    if job.key_kind == "generic" and job.encoded_key_bytes is not None:
        phases.append(_host_phase(t.host, job.dict_bytes, job.dict_values))
    if t.decode is not None:
        generic = job.key_kind == "generic"
        table = MAPPED_KEY_BYTES * job.dict_values if generic else job.dict_bytes
        phases += _decoder_phases("decode", device, t.decode, table, job.dict_values, des)
    phases += _sort_phases(device, t.sort, options)
    phases.append(_shuffle_phase(t.shuffle, device, options, des))
    return {"phases": phases}


def _fpga_machine(name: str, device: FpgaDevice, jobs: list[Spec], schedule: Schedule) -> Spec:
    return {
        "name": name,
        "links": {
            "s2f_bps": device.s2f_bytes_per_s,
            "d2f_bps": device.d2f_bytes_per_s,
            "host_bps": device.host_bytes_per_s,
            "host_ssd_bps": device.host_ssd_bytes_per_s,
        },
        "pools": {
            "decoder": device.decoder_kernels,
            "sort": device.sort_kernels,
            "shuffle": device.shuffle_kernels,
            "host": max(1, len(jobs)),
        },
        "schedule": schedule,
        "jobs": jobs,
    }


def _cpu_machine(
    cpu: CpuDevice, input_bytes: float, p: CpuPhases, m: int, schedule: Schedule
) -> Spec:
    """Each job reads its table through the one path, then decodes, sorts and shuffles on
    the CPU (one unit: the measured phases already use every thread)."""
    job = {
        "phases": [
            _phase("read:ssd", [[_part("s2f", per_item=input_bytes)]]),
            _phase("decode:cpu", [[_part(per_item=p.decode_s)]], pool="cpu"),
            _phase("sort:cpu", [[_part(per_item=p.sort_s)]], pool="cpu"),
            _phase("shuffle:cpu", [[_part(per_item=p.shuffle_s)]], pool="cpu"),
        ]
    }
    return {
        "name": cpu.name,
        "links": {"s2f_bps": cpu.ssd_read_bytes_per_s},
        "pools": {"cpu": 1},
        "schedule": schedule,
        "jobs": [job] * m,
    }


# Running ------------------------------------------------------------------------------


def _run(machines: list[Spec], des: DesOptions) -> tuple[list[MachineRun], int]:
    spec = {"machines": machines, "seed": int(des.seed)}  # np.int64 is not JSON
    try:
        text = json.dumps(spec, default=_plain_number)
        raw = json.loads(interruptible(lambda: _core.simulate_nascent2(text), "ndpkit-nascent2"))
    except ValueError as e:
        raise ModelError(f"the simulation refused its spec: {e}") from e
    return [_machine_run(m) for m in raw["machines"]], int(raw["events"])


def _plain_number(value: object) -> int | float:
    """numpy's numbers in a spec as Python's: a TableJob's row_bytes as np.float32 or its
    encoded_key_bytes as np.int64 was "Object of type … is not JSON serializable"."""
    if isinstance(value, numbers.Integral) and not isinstance(value, bool):
        return int(value)
    if isinstance(value, numbers.Real):
        return float(value)
    raise TypeError(f"Object of type {type(value).__name__} is not JSON serializable")


def _machine_run(raw: Mapping[str, Any]) -> MachineRun:
    end = float(raw["end_s"])
    links = {
        name: LinkUse(
            capacity_bytes_per_s=link["capacity_bps"],
            bytes=link["bytes"],
            busy_s=link["busy_s"],
            utilisation=link["bytes"] / (link["capacity_bps"] * end) if end > 0 else 0.0,
        )
        for name, link in raw["links"].items()
    }
    pools = {
        name: PoolUse(
            units=pool["units"],
            busy_s=pool["busy_s"],
            sub_items=pool["sub_items"],
            utilisation=pool["busy_s"] / (pool["units"] * end) if end > 0 else 0.0,
        )
        for name, pool in raw["pools"].items()
    }
    jobs = tuple(
        JobRun(
            start_s=job["start_s"],
            end_s=job["end_s"],
            phases=tuple(
                PhaseRun(
                    name=p["name"],
                    start_s=p["start_s"],
                    end_s=p["end_s"],
                    bytes=dict(p["bytes"]),
                    units_read=p["units_read"],
                    units_done=p["units_done"],
                )
                for p in job["phases"]
            ),
        )
        for job in raw["jobs"]
    )
    return MachineRun(raw["name"], end, jobs, links, pools)


def simulate_table_sort(
    device: FpgaDevice,
    job: TableJob,
    options: ModelOptions = _MODEL_OPTIONS,
    *,
    host_sort: HostSort = 0.0,
    des: DesOptions = DesOptions(),
) -> TableSortSimulation:
    """One table sort on one device (§9.2): the phases of `table_sort_time`, simulated."""
    _check_kinds(
        ("device", device, FpgaDevice, _DEVICE),
        ("job", job, TableJob, _JOB),
        ("options", options, ModelOptions, _OPTIONS),
        ("des", des, DesOptions, _DES),
    )
    des.check()
    model = table_sort_time(device, job, options, host_sort=host_sort)
    check_size(
        1,
        job,
        des.chunk_bytes,
        {"smartssd": device},
        field="job/des.chunk_bytes",
        remedy="lower the job's rows or raise des.chunk_bytes",
    )
    spec = _fpga_machine(device.name, device, [_table_job(model, device, options, des)], "serial")
    (machine,), events = _run([spec], des)
    return TableSortSimulation(device.name, machine, device.power_w, events, job=job, model=model)


def simulate_generic_sort(
    device: FpgaDevice,
    n: int,
    *,
    dict_values: int,
    key_bytes: int = 2,
    width: int | None = None,
    mean_length: float | None = None,
    l_max: int | None = None,
    host_sort: HostSort = 0.0,
    host_decode_s: float | None = None,
    options: ModelOptions = _MODEL_OPTIONS,
    des: DesOptions = DesOptions(),
) -> GenericSortSimulation:
    """The generic sort of a column (§8.3, §9.3): the phases of `generic_sort_time`."""
    _check_kinds(
        ("device", device, FpgaDevice, _DEVICE),
        ("options", options, ModelOptions, _OPTIONS),
        ("des", des, DesOptions, _DES),
    )
    des.check()
    model = generic_sort_time(
        device,
        n,
        dict_values=dict_values,
        key_bytes=key_bytes,
        width=width,
        mean_length=mean_length,
        l_max=l_max,
        host_sort=host_sort,
        host_decode_s=host_decode_s,
        options=options,
    )
    chunks = math.ceil(n * (key_bytes + INDEX_BYTES) / des.chunk_bytes)  # (key, index) pairs
    events = _GENERIC_EVENTS_PER_CHUNK * chunks + _EVENTS_PER_SSD
    remedy = "lower n or raise des.chunk_bytes"
    _refuse_over(events, f"{chunks:,} chunks of pairs", _SOURCE, "n/des.chunk_bytes", remedy)
    value_bytes = float(width) if width is not None else float(mean_length or 0.0)
    dict_bytes = dict_values * value_bytes
    table = MAPPED_KEY_BYTES * dict_values
    phases = [
        _host_phase(model.host, dict_bytes, dict_values),
        *_decoder_phases("map", device, model.map, table, dict_values, des),
        *_sort_phases(device, model.sort, options),
    ]
    if model.decode is not None:
        phases += _decoder_phases("decode", device, model.decode, dict_bytes, dict_values, des)
    else:
        phases.append(_phase("decode:host", [[_part(per_item=model.host_decode_s)]], pool="host"))
    spec = _fpga_machine(device.name, device, [{"phases": phases}], "serial")
    (machine,), events = _run([spec], des)
    return GenericSortSimulation(
        device.name, machine, device.power_w, events, elements=n, model=model
    )


def simulate_devices(
    m: int,
    job: TableJob,
    *,
    devices: DeviceSet | None = None,
    smartssd: str = "smartssd",
    fpga: str = "u250",
    cpu: str = "cpu",
    cpu_phases: CpuPhases = _NO_CPU_WORK,
    options: ModelOptions = _MODEL_OPTIONS,
    host_sort: HostSort = 0.0,
    des: DesOptions = DesOptions(),
) -> DevicesSimulation:
    """`m` SSDs holding one `job` each (§10.6): m SmartSSDs side by side, the U250 and the
    CPU baselines reading every SSD through one PCIe path; energy as §10.7."""
    # A numpy integer too (np.int64(2) was "must be a whole number ≥ 1, got np.int64(2)").
    if isinstance(m, bool) or not isinstance(m, numbers.Integral) or m < 1:
        raise SpecError(f"must be a whole number ≥ 1, got {m!r}", source=_SOURCE, field="devices")
    m = int(m)
    _check_kinds(
        ("job", job, TableJob, _JOB),
        ("devices", devices, (DeviceSet, type(None)), "a DeviceSet (load_devices(…)), or None"),
        ("cpu_phases", cpu_phases, CpuPhases, "CpuPhases"),
        ("options", options, ModelOptions, _OPTIONS),
        ("des", des, DesOptions, _DES),
    )
    des.check()
    found = devices or load_devices()
    n2_dev, fpga_dev, cpu_dev = found.fpga(smartssd), found.fpga(fpga), found.cpu(cpu)
    n2 = table_sort_time(n2_dev, job, options, host_sort=host_sort)
    board = table_sort_time(fpga_dev, job, options, host_sort=host_sort)
    host = cpu_time(cpu_dev, job.table_bytes, cpu_phases)
    model = compare(
        [n2.total_s] * m,
        [board.total_s] * m,
        [host.total_s] * m,
        smartssd=n2_dev,
        fpga=fpga_dev,
        cpu=cpu_dev,
    )
    check_size(m, job, des.chunk_bytes, {"smartssd": n2_dev, "u250": fpga_dev})
    schedule = des.baseline_schedule
    # The SmartSSDs share nothing and run the same job, so one is simulated, on a stream of
    # its own, and stands for all 𝓜: each draws the same gather permutation from the seed
    # (`shuffle_order="gather"`), and T_NASCENT2 does not grow with 𝓜 (§10.6).
    n2_job = _table_job(n2, n2_dev, options, des)
    (one_ssd,), ssd_events = _run(
        [_fpga_machine(f"{n2_dev.name}[0]", n2_dev, [n2_job], "serial")], des
    )
    smartssds = [replace(one_ssd, name=f"{n2_dev.name}[{i}]") for i in range(m)]
    machines = [
        _fpga_machine(
            fpga_dev.name, fpga_dev, [_table_job(board, fpga_dev, options, des)] * m, schedule
        ),
        _cpu_machine(cpu_dev, job.table_bytes, cpu_phases, m, schedule),
    ]
    (board_run, cpu_run), baseline_events = _run(machines, des)
    events = m * ssd_events + baseline_events
    result = Comparison(
        devices=m,
        nascent2_s=max(r.end_s for r in smartssds),
        fpga_s=board_run.busy_s,
        cpu_s=cpu_run.busy_s,
        nascent2_j=n2_dev.power_w * sum(r.busy_s for r in smartssds),
        fpga_j=fpga_dev.power_w * board_run.busy_s,
        cpu_j=cpu_dev.power_w * cpu_run.busy_s,
        power_w=dict(model.power_w),
    )
    return DevicesSimulation(
        devices=m,
        result=result,
        model=model,
        nascent2=tuple(smartssds),
        fpga=board_run,
        cpu=cpu_run,
        events=events,
        schedule=schedule,
        job_models=(n2, board, host),
    )
