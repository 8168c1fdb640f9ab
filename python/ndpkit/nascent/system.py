"""NASCENT2 whole-system models: table sort (spec §10.2), generic sort (§8.4), the CPU
baseline (§10.6), multi-device scaling (§10.6) and energy (§10.7).

Everything here composes `ndpkit.nascent.timing` and prices the same workload on three
deployments:

- **NASCENT2**: one SmartSSD per SSD; the phases of a table sort run one after another
  (O18 `serial`): T_N = T_host + T_dict + T_dec + T_sort + T_shuffle.
- **FPGA baseline**: the same kernel model with the U250's parameters, fed from a
  conventional SSD at BW_S2F; one board serves the SSDs one after another.
- **CPU baseline**: per SSD, read the table at 3 GB/s plus CPU decode, sort and shuffle
  times that the caller measured (or gave, or extrapolated); `CpuPhases.basis` says which.

With 𝓜 devices, T_NASCENT2 = max_m T_N,m and the baselines sum over m; energy is power ×
time with each baseline charged over its whole serialized runtime and SSD power excluded:
E_NASCENT2 = Σ_m P_FPGA·T_N,m, E_FPGA = P_U250·T_FPGA(𝓜), E_CPU = P_CPU·T_CPU(𝓜).

Example:
    >>> from ndpkit.nascent.devices import load_devices
    >>> d = load_devices()
    >>> job = TableJob(rows=1024, row_bytes=4096.0, encoded_key_bytes=2, dict_values=1024)
    >>> t = table_sort_time(d.fpga("smartssd"), job)
    >>> t.shuffle.staging
    'stage_in_dram'
"""

from __future__ import annotations

import math
import numbers
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Literal

from ndpkit.errors import ModelError, SpecError, finite_number, whole_number
from ndpkit.nascent.devices import CpuDevice, FpgaDevice
from ndpkit.nascent.timing import (
    INDEX_BYTES,
    DecodeTime,
    DramMerge,
    KeyBits,
    Overlap,
    ShuffleTime,
    SortTime,
    Staging,
    check_choice,
    decode_time,
    shuffle_time,
    sort_time,
)

KeyKind = Literal["integer", "generic"]
Basis = Literal["measured", "given", "extrapolated"]
HostSort = float | Callable[[int], float]
"""T_hostsort(U): seconds, or a function of U (e.g. a measurement)."""
_SOURCE = "nascent2 model"
MAPPED_KEY_BYTES = 2
"""NKeys are u16 (spec §3.4)."""


@dataclass(frozen=True)
class ModelOptions:
    """The model's options (spec §15) that a table sort sees."""

    dram_merge: DramMerge = "bitonic_dram"
    merge_ways: int = 2
    overlap: Overlap = "overlap"
    staging: Staging = "auto"


@dataclass(frozen=True)
class TableJob:
    """One table sort's shape. `row_bytes` is what the shuffle moves per row (the whole
    row); the key column is sorted as `key_bits` integers. An encoded key column
    (`encoded_key_bytes` 1 or 2) is decoded first (integer keys, Flow A) or mapped through a
    sorted dictionary (`key_kind="generic"`, Flow C, host work depends on `dict_values`)."""

    rows: int
    row_bytes: float
    key_bits: KeyBits = 32
    encoded_key_bytes: int | None = None
    dict_values: int = 0
    dict_value_bytes: float = 4.0
    key_kind: KeyKind = "integer"

    @property
    def table_bytes(self) -> float:
        return self.rows * self.row_bytes

    @property
    def dict_bytes(self) -> float:
        return self.dict_values * self.dict_value_bytes


@dataclass(frozen=True)
class HostTime:
    """The generic sort's host-side terms (§8.4); they depend on U, not on N."""

    dict_read_s: float = 0.0
    host_sort_s: float = 0.0
    h2d_s: float = 0.0

    @property
    def total_s(self) -> float:
        return self.dict_read_s + self.host_sort_s + self.h2d_s


@dataclass(frozen=True)
class TableSortTime:
    """T_N (§10.2) on one FPGA device, phase by phase."""

    device: str
    job: TableJob
    host: HostTime
    decode: DecodeTime | None
    sort: SortTime
    shuffle: ShuffleTime

    def phases_s(self) -> dict[str, float]:
        return {
            "host": self.host.total_s,
            "decode": self.decode.total_s if self.decode else 0.0,
            "sort": self.sort.total_s,
            "shuffle": self.shuffle.total_s,
        }

    @property
    def total_s(self) -> float:
        return sum(self.phases_s().values())


def _host_sort_s(host_sort: HostSort, values: int) -> float:
    seconds = float(host_sort(values) if callable(host_sort) else host_sort)
    _check_seconds("host_sort", seconds)
    return seconds


def _check_seconds(name: str, seconds: float) -> None:
    if not (math.isfinite(seconds) and seconds >= 0):
        raise SpecError(
            f"must be a finite number of seconds ≥ 0, got {seconds}", source=_SOURCE, field=name
        )


def host_time(
    device: FpgaDevice, dict_values: int, dict_bytes: float, host_sort: HostSort
) -> HostTime:
    """T_dictread + T_hostsort(U) + T_h2d (§8.4)."""
    return HostTime(
        dict_read_s=dict_bytes / device.host_ssd_bytes_per_s,
        host_sort_s=_host_sort_s(host_sort, dict_values),
        h2d_s=(dict_bytes + MAPPED_KEY_BYTES * dict_values) / device.host_bytes_per_s,
    )


def table_sort_time(
    device: FpgaDevice,
    job: TableJob,
    options: ModelOptions = ModelOptions(),
    *,
    host_sort: HostSort = 0.0,
) -> TableSortTime:
    """T_N = T_host + T_dict + T_dec + T_sort + T_shuffle on one device (§10.2, Flows A/C)."""
    check_choice("key_kind", job.key_kind, KeyKind)
    # rows=1.5 ended in a TypeError from range arithmetic, row_bytes=inf in an
    # OverflowError from the shuffle's ceil
    whole_number(job.rows, "rows", "a whole number of rows ≥ 0", least=0, source=_SOURCE)
    finite_number(
        job.row_bytes, "row_bytes", "a finite number of bytes > 0", above=0, source=_SOURCE
    )
    e = job.key_bits // 8
    host, decode = HostTime(), None
    if job.encoded_key_bytes is None:
        if job.key_kind == "generic":
            raise ModelError("a generic (non-integer) key must be dictionary encoded (§8.2)")
        source: Literal["dram", "ssd"] = "ssd"
        reserved = job.rows * (e + INDEX_BYTES)
    else:
        source = "dram"
        # Flow C maps keys to NKeys through the 2-byte mapping table; Flow A decodes them.
        width, table_bytes = e, job.dict_bytes
        if job.key_kind == "generic":
            host = host_time(device, job.dict_values, job.dict_bytes, host_sort)
            width, table_bytes = MAPPED_KEY_BYTES, MAPPED_KEY_BYTES * job.dict_values
        decode = decode_time(
            device,
            job.rows,
            job.encoded_key_bytes,
            width=width,
            dict_values=job.dict_values,
            dict_bytes=table_bytes,
        )
        reserved = job.rows * (job.encoded_key_bytes + e + INDEX_BYTES)
    sort = sort_time(
        device,
        job.rows,
        job.key_bits,
        source=source,
        dram_merge=options.dram_merge,
        merge_ways=options.merge_ways,
        overlap=options.overlap,
    )
    shuffle = shuffle_time(
        device,
        job.rows,
        job.row_bytes,
        staging=options.staging,
        overlap=options.overlap,
        reserved_bytes=reserved,
    )
    return TableSortTime(device.name, job, host, decode, sort, shuffle)


@dataclass(frozen=True)
class GenericSortTime:
    """T_gs (§8.4): host terms, the mapping, the sort of NKeys and the final decode."""

    device: str
    elements: int
    host: HostTime
    map: DecodeTime
    sort: SortTime
    decode: DecodeTime | None
    host_decode_s: float

    def phases_s(self) -> dict[str, float]:
        return {
            "host": self.host.total_s,
            "map": self.map.total_s,
            "sort": self.sort.total_s,
            "decode": self.decode.total_s if self.decode else self.host_decode_s,
        }

    @property
    def total_s(self) -> float:
        return sum(self.phases_s().values())


def generic_sort_time(
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
    options: ModelOptions = ModelOptions(),
) -> GenericSortTime:
    """T_gs = T_dictread + T_hostsort(U) + T_h2d + T_map(N) + T_sort(N) + T_dec(N) (§8.4).

    Values are fixed (`width`) or variable (`mean_length`, tables of `l_max` rows). If the
    sorted dictionary does not fit the decoder's table memory, the last step runs on the
    host (§8.3 fallback) and takes `host_decode_s`."""
    if host_decode_s is not None:
        _check_seconds("host_decode_s", float(host_decode_s))
    if mean_length is not None and not (math.isfinite(mean_length) and mean_length >= 0):
        raise SpecError(
            f"must be a finite number of bytes ≥ 0, got {mean_length}",
            source=_SOURCE,
            field="mean_length",
        )
    value_bytes = float(width) if width is not None else float(mean_length or 0.0)
    dict_bytes = dict_values * value_bytes
    host = host_time(device, dict_values, dict_bytes, host_sort)
    mapping = decode_time(
        device,
        n,
        key_bytes,
        width=MAPPED_KEY_BYTES,
        dict_values=dict_values,
        dict_bytes=MAPPED_KEY_BYTES * dict_values,
    )
    sort = sort_time(
        device,
        n,
        32,
        dram_merge=options.dram_merge,
        merge_ways=options.merge_ways,
        overlap=options.overlap,
    )
    decode: DecodeTime | None = None
    if dict_bytes <= device.dictionary_memory_bytes:
        decode = decode_time(
            device,
            n,
            4,
            width=width,
            mean_length=mean_length,
            l_max=l_max,
            dict_values=dict_values,
            dict_bytes=dict_bytes,
        )
    elif host_decode_s is None:
        raise ModelError(
            f"the sorted dictionary ({dict_bytes:.0f} B) exceeds the decoder's table memory; "
            "give host_decode_s for the host fallback (§8.3)"
        )
    return GenericSortTime(device.name, n, host, mapping, sort, decode, host_decode_s or 0.0)


@dataclass(frozen=True)
class CpuPhases:
    """CPU decode, sort and shuffle times of one job, and where they come from."""

    decode_s: float = 0.0
    sort_s: float = 0.0
    shuffle_s: float = 0.0
    basis: Basis = "given"
    note: str = ""


@dataclass(frozen=True)
class CpuTime:
    """T_CPU,m (§10.6): read the table at the SSD's rate, then the CPU phases."""

    device: str
    read_s: float
    phases: CpuPhases

    def phases_s(self) -> dict[str, float]:
        p = self.phases
        return {"read": self.read_s, "decode": p.decode_s, "sort": p.sort_s, "shuffle": p.shuffle_s}

    @property
    def total_s(self) -> float:
        return sum(self.phases_s().values())


def cpu_time(cpu: CpuDevice, input_bytes: float, phases: CpuPhases) -> CpuTime:
    """One SSD's job on the CPU baseline: input_bytes / 3 GB/s + the phases."""
    check_choice("basis", phases.basis, Basis)
    for name in ("decode_s", "sort_s", "shuffle_s"):
        seconds = getattr(phases, name)
        if isinstance(seconds, bool) or not isinstance(seconds, numbers.Real):
            raise SpecError(
                f"must be a number of seconds, got {seconds!r}", source=_SOURCE, field=name
            )
        _check_seconds(name, float(seconds))
    return CpuTime(cpu.name, input_bytes / cpu.ssd_read_bytes_per_s, phases)


@dataclass(frozen=True)
class Comparison:
    """𝓜 jobs on NASCENT2 (one SmartSSD each), the FPGA baseline and the CPU baseline."""

    devices: int
    nascent2_s: float
    fpga_s: float
    cpu_s: float
    nascent2_j: float
    fpga_j: float
    cpu_j: float
    power_w: dict[str, float] = field(default_factory=dict)

    @property
    def speedup_vs_fpga(self) -> float:
        return self.fpga_s / self.nascent2_s

    @property
    def speedup_vs_cpu(self) -> float:
        return self.cpu_s / self.nascent2_s

    @property
    def energy_vs_fpga(self) -> float:
        """E_FPGA / E_NASCENT2: NASCENT2's energy-efficiency gain."""
        return self.fpga_j / self.nascent2_j

    @property
    def energy_vs_cpu(self) -> float:
        return self.cpu_j / self.nascent2_j


def compare(
    nascent2_s: Sequence[float],
    fpga_s: Sequence[float],
    cpu_s: Sequence[float],
    *,
    smartssd: FpgaDevice,
    fpga: FpgaDevice,
    cpu: CpuDevice,
) -> Comparison:
    """§10.6–10.7 for per-device job times (one entry per SSD, the same 𝓜 for all three)."""
    if not len(nascent2_s) == len(fpga_s) == len(cpu_s) >= 1:
        raise ModelError("compare needs one job time per device for every deployment")
    t_n, t_f, t_c = max(nascent2_s), sum(fpga_s), sum(cpu_s)
    if not t_n > 0:
        raise ModelError("NASCENT2 time must be positive to form ratios")
    return Comparison(
        devices=len(nascent2_s),
        nascent2_s=t_n,
        fpga_s=t_f,
        cpu_s=t_c,
        nascent2_j=smartssd.power_w * sum(nascent2_s),
        fpga_j=fpga.power_w * t_f,
        cpu_j=cpu.power_w * t_c,
        power_w={"smartssd": smartssd.power_w, "fpga": fpga.power_w, "cpu": cpu.power_w},
    )
