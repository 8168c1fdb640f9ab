"""NASCENT2 reproduced: Salamat, Zhang, Ki, Rosing, "NASCENT2: Generic Near-Storage Sort
Accelerator for Data Analytics on SmartSSD", ACM TRETS 15(2), Article 16, 2022.

Experiments E1–E8 of spec §12. The SmartSSD and U250 figures come from the analytic model
(`ndpkit.nascent.model`) with the declared devices (`ndpkit.nascent.devices.toml`). The CPU
baseline's compute is **measured on this machine** with numpy stand-ins (the i7-8700's
std::qsort, Boost block_indirect_sort and pthreads decoder are not available here):

- single-thread sort: `numpy.sort(kind="quicksort")` (introsort) on one thread;
- multi-thread sort: one `ndarray.sort` per thread on contiguous chunks (numpy releases the
  GIL), then `numpy.sort(kind="stable")` over the sorted runs (timsort merges them);
- argsort for table sorts: `numpy.argsort(kind="quicksort")`;
- decoder: `numpy.take` of the dictionary per thread (fixed), a vectorised byte gather
  (variable); shuffle: `numpy.take` of whole rows;
- E5: decode, then Python's built-in `sorted`.

Where a job is too large to run in the time budget, its CPU time is extrapolated from the
rate measured at the largest size that ran (n·log₂n for sorts, bytes for decode and
shuffle); every row says `measured` or `extrapolated`. Reading from the SSD costs the
CPU bytes / 3 GB/s (§10.6). No parameter is tuned to a published result.

Default sizes are scaled down so that the run takes well under a minute; `full=True` uses
the paper's sizes (E1/E3 up to 8M keys, E2 2^26 keys, E5 up to 2M, E8 at SF 1).
"""

from __future__ import annotations

import math
import os
import time
from collections.abc import Callable, Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from functools import partial
from importlib import import_module
from importlib.util import find_spec
from pathlib import Path
from typing import Any, Literal, get_args

import numpy as np
from numpy.typing import NDArray

from ndpkit.errors import SpecError
from ndpkit.nascent.decoder import decode
from ndpkit.nascent.devices import CpuDevice, FpgaDevice, load_devices
from ndpkit.nascent.system import (
    CpuPhases,
    ModelOptions,
    TableJob,
    compare,
    cpu_time,
    generic_sort_time,
    table_sort_time,
)
from ndpkit.nascent.timing import DramMerge, Overlap, Staging, decode_time, sort_time
from ndpkit.report import Column, Table

PAPER = (
    "Salamat, Zhang, Ki, Rosing. NASCENT2: Generic Near-Storage Sort Accelerator for Data "
    "Analytics on SmartSSD. ACM TRETS 15(2), Article 16, 2022."
)
TABLE_NAMES = ("E1", "E2", "E3", "E4", "E5", "E6", "E7", "E8")
Progress = Callable[[str], None]
Basis = Literal["measured", "extrapolated"]


@dataclass(frozen=True)
class Settings:
    """What a run uses: devices (a file and per-entry overrides), model options, sizes."""

    full: bool = False
    devices_file: Path | None = None
    overrides: dict[str, dict[str, Any]] = field(default_factory=dict)
    options: ModelOptions = field(default_factory=ModelOptions)
    seed: int = 2022
    threads: int = field(default_factory=lambda: os.cpu_count() or 1)

    @property
    def e1_sizes(self) -> list[int]:
        if self.full:
            return [1000, *(2**k for k in range(10, 23)), 8_000_000]
        return [1000, 2**10, 2**12, 2**14, 2**16, 2**17, 2**18, 2**20, 2**22, 8_000_000]

    @property
    def cpu_sort_cap(self) -> int:
        """The largest sort the CPU baseline runs here; larger ones are extrapolated."""
        return 8_000_000 if self.full else 2**22

    @property
    def e2_keys(self) -> int:
        return 2**26

    @property
    def cpu_decode_keys(self) -> int:
        return 2**24 if self.full else 2**20

    @property
    def e5_sizes(self) -> list[int]:
        return (
            [1000, 10_000, 100_000, 1_000_000, 2_000_000] if self.full else [1000, 10_000, 100_000]
        )

    @property
    def cpu_shuffle_cap_bytes(self) -> int:
        return 2**30 if self.full else 2**26

    @property
    def e8_sf(self) -> float:
        return 1.0 if self.full else 0.1


_INT_SETTINGS = ("merge_ways", "seed", "threads")
_CHOICES: dict[str, Any] = {"dram_merge": DramMerge, "overlap": Overlap, "staging": Staging}


def settings_from_flags(
    *, full: bool = False, devices: str | None = None, options: Sequence[str] | None = None
) -> Settings:
    """Settings from the command line: `--full`, `--devices FILE` and `-o KEY=VALUE` pairs,
    where KEY is a model option (dram_merge, merge_ways, overlap, staging), seed, threads,
    or DEVICE.ENTRY for a device entry (e.g. smartssd.dram_random_latency="200 ns")."""
    model: dict[str, Any] = {}
    run: dict[str, Any] = {}
    overrides: dict[str, dict[str, Any]] = {}
    for pair in options or []:
        key, sep, value = (part.strip() for part in pair.partition("="))
        flag = f"--option {pair}"
        if not sep or not key or not value:
            raise SpecError("expected KEY=VALUE", source="command line", field=flag)
        device, dot, entry = key.partition(".")
        if dot:
            overrides.setdefault(device, {})[entry] = int(value) if value.isdigit() else value
        elif key in _CHOICES:
            allowed = get_args(_CHOICES[key])
            if value not in allowed:
                raise SpecError(
                    f"must be one of {', '.join(allowed)}", source="command line", field=flag
                )
            model[key] = value
        elif key in _INT_SETTINGS:
            if not value.isdigit() or int(value) < 1:
                raise SpecError("must be a whole number ≥ 1", source="command line", field=flag)
            (model if key == "merge_ways" else run)[key] = int(value)
        else:
            known = ", ".join([*_CHOICES, *_INT_SETTINGS, "DEVICE.ENTRY"])
            raise SpecError(f"unknown option; known: {known}", source="command line", field=flag)
    path = Path(devices) if devices else None
    return Settings(
        full=full, devices_file=path, overrides=overrides, options=ModelOptions(**model), **run
    )


@dataclass(frozen=True)
class Context:
    settings: Settings
    smartssd: FpgaDevice
    fpga: FpgaDevice
    cpu: CpuDevice
    rng: np.random.Generator
    report: Progress
    cache: dict[tuple[str, int], float] = field(default_factory=dict)
    """Measurements made once per run: ("sort64", n), ("hostsort", U), ("shuffle", …)."""


def reproduce(
    settings: Settings = Settings(),
    *,
    tables: Sequence[str] = TABLE_NAMES,
    progress: Progress | None = None,
) -> list[Table]:
    """The experiments named in `tables`, in the paper's order."""
    unknown = [t for t in tables if t not in TABLE_NAMES]
    if unknown:
        raise SpecError(f"unknown experiment; known: {', '.join(TABLE_NAMES)}", field=unknown[0])
    devices = load_devices(settings.devices_file, settings.overrides)
    ctx = Context(
        settings,
        devices.fpga("smartssd"),
        devices.fpga("u250"),
        devices.cpu("cpu"),
        np.random.default_rng(settings.seed),
        progress or (lambda _: None),
    )
    out = []
    for name in TABLE_NAMES:
        if name in tables and (name != "E8" or e8_available()):
            ctx.report(f"{name}: {_TITLES[name]}")
            out.append(_EXPERIMENTS[name](ctx))
    return out


def document(tables: list[Table]) -> dict[str, Any]:
    """{"E1": [rows], …}: each experiment's rows with exactly the keys its columns declare."""
    return {t.name: [{c.key: row.get(c.key) for c in t.columns} for row in t.rows] for t in tables}


# Measuring the CPU baseline on this machine ---------------------------------------------


def _best(fn: Callable[[], object], repeats: int) -> float:
    best = math.inf
    for _ in range(repeats):
        start = time.perf_counter()
        fn()
        best = min(best, time.perf_counter() - start)
    return best


def _repeats(n: int) -> int:
    return 5 if n <= 2**16 else (2 if n <= 2**20 else 1)


def _keys(ctx: Context, n: int) -> NDArray[np.uint32]:
    return ctx.rng.integers(0, 2**32, n, dtype=np.uint32)


def sort_single_s(keys: NDArray[Any]) -> float:
    """std::qsort's stand-in: numpy's introsort on one thread, including the copy in and out."""
    return _best(lambda: np.sort(keys, kind="quicksort"), _repeats(keys.size))


def sort_multi_s(keys: NDArray[Any], threads: int) -> float:
    """block_indirect_sort's stand-in: per-thread chunk sorts, then a merge of the runs. The
    thread pool is started outside the timed region, as a C++ program's would be."""
    with ThreadPoolExecutor(threads) as pool:

        def run() -> None:
            work = keys.copy()
            list(pool.map(np.ndarray.sort, np.array_split(work, threads)))
            np.sort(work, kind="stable")

        return _best(run, _repeats(keys.size))


def _nlogn(n: int) -> float:
    return n * math.log2(max(n, 2))


@dataclass(frozen=True)
class CpuSort:
    """CPU sort times for one n: measured, or scaled by n·log₂n from the largest run."""

    single_s: float
    multi_s: float
    argsort_s: float
    basis: Basis


class CpuSorts:
    """Memoised CPU sort measurements up to the settings' cap."""

    def __init__(self, ctx: Context) -> None:
        self.ctx = ctx
        self.cache: dict[int, CpuSort] = {}

    def __call__(self, n: int) -> CpuSort:
        cap = self.ctx.settings.cpu_sort_cap
        if n > cap:
            base = self(cap)
            k = _nlogn(n) / _nlogn(cap)
            return CpuSort(base.single_s * k, base.multi_s * k, base.argsort_s * k, "extrapolated")
        if n not in self.cache:
            keys = _keys(self.ctx, n)
            self.cache[n] = CpuSort(
                sort_single_s(keys),
                sort_multi_s(keys, self.ctx.settings.threads),
                _best(lambda: np.argsort(keys, kind="quicksort"), _repeats(n)),
                "measured",
            )
        return self.cache[n]


def decode_fixed_s(dictionary: NDArray[Any], keys: NDArray[Any], threads: int) -> float:
    """The pthreads decoder's stand-in: each thread takes its share of the page."""
    out = np.empty(keys.size, dtype=dictionary.dtype)
    bounds = np.linspace(0, keys.size, threads + 1).astype(int)

    def part(i: int) -> None:
        lo, hi = bounds[i], bounds[i + 1]
        np.take(dictionary, keys[lo:hi], out=out[lo:hi])

    with ThreadPoolExecutor(threads) as pool:
        return _best(lambda: list(pool.map(part, range(threads))), 3)


def decode_variable(strings: StringDictionary, keys: NDArray[Any]) -> NDArray[np.uint8]:
    """Concatenate the values of `keys` (a vectorised byte gather)."""
    lens = strings.lengths[keys]
    ends = np.cumsum(lens)
    shift = np.repeat(strings.starts[keys] - (ends - lens), lens)
    out: NDArray[np.uint8] = strings.data[np.arange(int(ends[-1]) if lens.size else 0) + shift]
    return out


@dataclass(frozen=True)
class StringDictionary:
    """Random strings (lowercase, length uniform in 1..L_Max) as a list and as one buffer."""

    values: list[bytes]
    data: NDArray[np.uint8]
    starts: NDArray[np.int64]
    lengths: NDArray[np.int64]

    @property
    def mean_length(self) -> float:
        return float(self.lengths.mean())


def string_dictionary(rng: np.random.Generator, count: int, l_max: int) -> StringDictionary:
    lengths = rng.integers(1, l_max + 1, count).astype(np.int64)
    data = rng.integers(ord("a"), ord("z") + 1, int(lengths.sum())).astype(np.uint8)
    starts = np.concatenate(([0], np.cumsum(lengths)[:-1])).astype(np.int64)
    raw = data.tobytes()
    values = [raw[s : s + n] for s, n in zip(starts.tolist(), lengths.tolist(), strict=True)]
    return StringDictionary(values, data, starts, lengths)


def _key_dtype(key_bytes: int) -> np.dtype[Any]:
    return np.dtype(f"u{key_bytes}")


def _dict_size(key_bytes: int) -> int:
    """E2's dictionaries: 256 entries for 1-byte keys, 64,000 for 2-byte keys [choice]."""
    return 256 if key_bytes == 1 else 64_000


def shuffle_s(ctx: Context, rows: int, row_bytes: float) -> tuple[float, Basis]:
    """numpy.take of whole rows by a random permutation; above the byte cap, scaled by bytes."""
    table = rows * row_bytes
    cap = ctx.settings.cpu_shuffle_cap_bytes
    if table > cap:
        scaled_rows = max(1, int(cap // max(row_bytes, 1)))
        width = int(min(max(row_bytes, 1), cap))
        measured, _ = _shuffle_run(ctx, scaled_rows, width)
        return measured * table / (scaled_rows * width), "extrapolated"
    return _shuffle_run(ctx, rows, max(1, round(row_bytes)))


def _shuffle_run(ctx: Context, rows: int, width: int) -> tuple[float, Basis]:
    if ("shuffle", rows * 2**32 + width) not in ctx.cache:
        table = ctx.rng.integers(0, 256, (rows, width), dtype=np.uint8)
        order = ctx.rng.permutation(rows)
        seconds = _best(lambda: np.take(table, order, axis=0), 3 if table.nbytes < 2**24 else 2)
        ctx.cache["shuffle", rows * 2**32 + width] = seconds
    return ctx.cache["shuffle", rows * 2**32 + width], "measured"


_VS_CPU = (
    Column("speedup_vs_cpu", "× CPU", 2),
    Column("energy_vs_cpu", "E CPU / E N2", 2, "E_CPU / E_NASCENT2"),
    Column("cpu_basis", "CPU", None, "measured here, or extrapolated from the largest run"),
)
_COMPARISON = (
    Column("speedup_vs_fpga", "× U250", 2, "T_FPGA(𝓜) / T_NASCENT2(𝓜)"),
    Column("speedup_vs_cpu", "× CPU", 2, "T_CPU(𝓜) / T_NASCENT2(𝓜)"),
    Column("energy_vs_fpga", "E U250 / E N2", 2, "E_FPGA / E_NASCENT2"),
    Column("energy_vs_cpu", "E CPU / E N2", 2, "E_CPU / E_NASCENT2"),
)


# E1: sort kernel microbenchmark ---------------------------------------------------------


def e1(ctx: Context) -> Table:
    sorts = CpuSorts(ctx)
    rows = []
    for n in ctx.settings.e1_sizes:
        ctx.report(f"E1: n = {n:,}")
        cpu = sorts(n)
        read_s = n * 4 / ctx.cpu.ssd_read_bytes_per_s
        case: Literal["dram", "ssd"]
        for case in ("dram", "ssd"):
            model = sort_time(ctx.smartssd, n, source=case, **_sort_opts(ctx))
            extra = read_s if case == "ssd" else 0.0
            single, multi = cpu.single_s + extra, cpu.multi_s + extra
            rows.append(
                {
                    "n": n,
                    "case": case,
                    "chunks": model.chunks,
                    "nascent2_s": model.total_s,
                    "dram_merge_s": model.dram_merge_s,
                    "cpu_single_s": single,
                    "cpu_multi_s": multi,
                    "speedup_vs_cpu_single": single / model.total_s,
                    "speedup_vs_cpu_multi": multi / model.total_s,
                    "energy_vs_cpu_multi": ctx.cpu.power_w
                    * multi
                    / (ctx.smartssd.power_w * model.total_s),
                    "cpu_basis": cpu.basis,
                }
            )
    return Table(
        "E1",
        "E1 (Figs. 10, 11) — sort kernel vs CPU, (a) data in DRAM, (b) data in the SSD",
        [
            Column("n", "keys", 0),
            Column("case", "case", None),
            Column("chunks", "chunks", 0, "on-chip iterations (Eq. 3)"),
            Column("nascent2_s", "NASCENT2 (s)", 6),
            Column("dram_merge_s", "DRAM merge (s)", 6, "O4 passes above 128K keys"),
            Column("cpu_single_s", "CPU 1 thr (s)", 6, "numpy quicksort, one thread"),
            Column("cpu_multi_s", f"CPU {ctx.settings.threads} thr (s)", 6, "chunk sorts + merge"),
            Column("speedup_vs_cpu_single", "× CPU 1", 2),
            Column("speedup_vs_cpu_multi", "× CPU n", 2),
            Column("energy_vs_cpu_multi", "E CPU n / E N2", 2),
            Column("cpu_basis", "CPU", None, "measured here, or extrapolated by n·log₂n"),
        ],
        rows,
        note=f"CPU measured on this machine with {ctx.settings.threads} threads; case ssd adds "
        "n·4 B / 3 GB/s to the CPU and the P2P read (O10 overlap) to NASCENT2.",
    )


def _sort_opts(ctx: Context) -> dict[str, Any]:
    o = ctx.settings.options
    return {"dram_merge": o.dram_merge, "merge_ways": o.merge_ways, "overlap": o.overlap}


# E2: dictionary decoder bandwidth -------------------------------------------------------


def e2(ctx: Context) -> Table:
    n = ctx.settings.e2_keys
    n_cpu = ctx.settings.cpu_decode_keys
    rows = []
    for key_bytes in (1, 2):
        u = _dict_size(key_bytes)
        cpu_keys = ctx.rng.integers(0, u, n_cpu).astype(_key_dtype(key_bytes))
        for width in (2, 4, 8):
            ctx.report(f"E2: {key_bytes}-byte keys, fixed {width} B")
            model = decode_time(ctx.smartssd, n, key_bytes, width=width, dict_values=u)
            dictionary = ctx.rng.integers(0, 2**63, u).astype(f"u{width}")
            cpu_s = decode_fixed_s(dictionary, cpu_keys, ctx.settings.threads)
            rows.append(_e2_row(key_bytes, f"fixed {width} B", width, model, n_cpu, cpu_s))
        for l_max in (8, 16, 32):
            ctx.report(f"E2: {key_bytes}-byte keys, variable ≤ {l_max} B")
            strings = string_dictionary(ctx.rng, u, l_max)
            page = ctx.rng.integers(0, u, 2**14).astype(_key_dtype(key_bytes))
            kernel = decode(strings.values, page, l_max=l_max)
            mean = kernel.counts.output_bytes / page.size
            model = decode_time(ctx.smartssd, n, key_bytes, mean_length=mean, l_max=l_max)
            cpu_s = _best(partial(decode_variable, strings, cpu_keys), 3)
            rows.append(_e2_row(key_bytes, f"variable ≤ {l_max} B", mean, model, n_cpu, cpu_s))
    return Table(
        "E2",
        f"E2 (Fig. 12) — dictionary decoder bandwidth, {n:,} keys (model) vs the CPU decoder",
        [
            Column("key_bytes", "key B", 0),
            Column("output", "output", None),
            Column(
                "mean_output_bytes",
                "mean out B",
                2,
                "variable: measured by running the decoder kernel on 16,384 keys",
            ),
            Column("lanes", "lanes", 0, "O7"),
            Column("bottleneck", "bound by", None),
            Column("input_gb_per_s", "input GB/s", 3, "N·k / T_dec (SSD → FPGA)"),
            Column("total_gb_per_s", "total GB/s", 3, "DRAM ↔ kernel traffic / T_dec (O8)"),
            Column("cpu_input_gb_per_s", "CPU input GB/s", 3, "measured here"),
            Column("cpu_total_gb_per_s", "CPU total GB/s", 3),
            Column("speedup_vs_cpu", "× CPU", 2),
        ],
        rows,
        note=f"CPU decoder measured on {n_cpu:,} keys with {ctx.settings.threads} threads; "
        "bandwidths are rates, independent of the page size.",
    )


def _e2_row(
    key_bytes: int, output: str, out_bytes: float, model: Any, n_cpu: int, cpu_s: float
) -> dict[str, Any]:
    cpu_in = n_cpu * key_bytes / cpu_s
    return {
        "key_bytes": key_bytes,
        "output": output,
        "mean_output_bytes": float(out_bytes),
        "lanes": model.lanes,
        "bottleneck": model.bottleneck,
        "input_gb_per_s": model.input_bytes_per_s / 1e9,
        "total_gb_per_s": model.total_bytes_per_s / 1e9,
        "cpu_input_gb_per_s": cpu_in / 1e9,
        "cpu_total_gb_per_s": n_cpu * (key_bytes + out_bytes) / cpu_s / 1e9,
        "speedup_vs_cpu": model.input_bytes_per_s / cpu_in,
    }


# E3: decode + sort ----------------------------------------------------------------------


def e3(ctx: Context) -> Table:
    sorts = CpuSorts(ctx)
    rows = []
    dictionary: dict[int, NDArray[Any]] = {
        32: ctx.rng.integers(0, 2**32, 256, dtype=np.uint32),
        64: ctx.rng.integers(0, 2**63, 256, dtype=np.uint64),
    }
    for n in ctx.settings.e1_sizes:
        ctx.report(f"E3: n = {n:,}")
        m = min(n, ctx.settings.cpu_sort_cap)
        page = ctx.rng.integers(0, 256, m).astype(np.uint8)
        bits: Literal[32, 64]
        for bits in (32, 64):
            dec = decode_time(
                ctx.smartssd, n, 1, width=bits // 8, dict_values=256, dict_bytes=256 * bits / 8
            )
            srt = sort_time(ctx.smartssd, n, bits, **_sort_opts(ctx))
            total = dec.total_s + srt.total_s
            cpu_dec = decode_fixed_s(dictionary[bits], page, ctx.settings.threads) * n / m
            cpu_sort = sorts(n).multi_s if bits == 32 else _sort64_s(ctx, n, m)
            read = n / ctx.cpu.ssd_read_bytes_per_s
            cpu_total = read + cpu_dec + cpu_sort
            rows.append(
                {
                    "n": n,
                    "key_bits": bits,
                    "decode_s": dec.total_s,
                    "sort_s": srt.total_s,
                    "nascent2_s": total,
                    "cpu_s": cpu_total,
                    "speedup_vs_cpu": cpu_total / total,
                    "energy_vs_cpu": ctx.cpu.power_w * cpu_total / (ctx.smartssd.power_w * total),
                    "cpu_basis": "measured" if n == m else "extrapolated",
                }
            )
    return Table(
        "E3",
        "E3 (Fig. 13) — 8-bit dictionary keys decoded to 32/64-bit integers, then sorted",
        [
            Column("n", "keys", 0),
            Column("key_bits", "bits", 0),
            Column("decode_s", "decode (s)", 6),
            Column("sort_s", "sort (s)", 6),
            Column("nascent2_s", "NASCENT2 (s)", 6),
            Column("cpu_s", "CPU (s)", 6, "read at 3 GB/s + decode + multi-thread sort"),
            *_VS_CPU,
        ],
        rows,
    )


def _sort64_s(ctx: Context, n: int, m: int) -> float:
    if ("sort64", m) not in ctx.cache:
        keys = ctx.rng.integers(0, 2**63, m, dtype=np.uint64)
        ctx.cache["sort64", m] = sort_multi_s(keys, ctx.settings.threads)
    return ctx.cache["sort64", m] * _nlogn(n) / _nlogn(m)


# E4: table sort with shuffle ------------------------------------------------------------

E4_ROWS = (1000, 10_000, 100_000, 1_000_000)
E4_COLUMNS = (1000, 10_000, 100_000, 1_000_000)
COLUMN_BYTES = 4
"""O13: 4-byte columns."""


def e4(ctx: Context) -> Table:
    sorts = CpuSorts(ctx)
    rows = []
    for n in E4_ROWS:
        for cols in E4_COLUMNS:
            if n >= 100_000 and cols > 10_000:
                continue  # spec §12 E4: only 1k and 10k columns for 100k and 1M rows
            ctx.report(f"E4: {n:,} rows × {cols:,} columns")
            job = TableJob(rows=n, row_bytes=float(cols * COLUMN_BYTES))
            t = table_sort_time(ctx.smartssd, job, ctx.settings.options)
            shuffle, basis = shuffle_s(ctx, n, job.row_bytes)
            cpu = cpu_time(
                ctx.cpu,
                job.table_bytes,
                CpuPhases(sort_s=sorts(n).argsort_s, shuffle_s=shuffle, basis=basis),
            )
            rows.append(
                {
                    "rows": n,
                    "columns": cols,
                    "table_gb": job.table_bytes / 1e9,
                    "sort_s": t.sort.total_s,
                    "shuffle_s": t.shuffle.total_s,
                    "nascent2_s": t.total_s,
                    "staging": t.shuffle.staging,
                    "output_sink": t.shuffle.output_sink,
                    "cpu_s": cpu.total_s,
                    "speedup_vs_cpu": cpu.total_s / t.total_s,
                    "cpu_basis": basis,
                }
            )
    return Table(
        "E4",
        "E4 (Fig. 14) — table sort of plain 4-byte-column tables: sort and shuffle",
        [
            Column("rows", "rows", 0),
            Column("columns", "columns", 0),
            Column("table_gb", "table GB", 3),
            Column("sort_s", "sort (s)", 6),
            Column("shuffle_s", "shuffle (s)", 4),
            Column("nascent2_s", "NASCENT2 (s)", 4),
            Column(
                "staging",
                "staging (O5)",
                None,
                "stage_in_dram, or ssd_direct when the table exceeds FPGA DRAM",
            ),
            Column("output_sink", "output (O6)", None),
            Column("cpu_s", "CPU (s)", 4, "read at 3 GB/s + argsort + row gather"),
            Column("speedup_vs_cpu", "× CPU", 2),
            Column("cpu_basis", "CPU", None),
        ],
        rows,
    )


# E5: generic sort -----------------------------------------------------------------------

E5_DICT_VALUES = 64_000


def e5(ctx: Context) -> Table:
    rows = []
    floats = ctx.rng.standard_normal(E5_DICT_VALUES).astype(np.float32)
    float_values = [float(v) for v in floats]
    kinds: list[tuple[str, list[Any], int | None, float | None, int | None]] = [
        ("float32", float_values, 4, None, None)
    ]
    for longest in (16, 32):
        s = string_dictionary(ctx.rng, E5_DICT_VALUES, longest)
        kinds.append(
            (f"string ≤ {longest} B", [v.decode() for v in s.values], None, s.mean_length, longest)
        )
    for kind, values, width, mean, l_max in kinds:
        host_sort = _best(partial(sorted, values), 3)
        for n in ctx.settings.e5_sizes:
            ctx.report(f"E5: {kind}, n = {n:,}")
            model = generic_sort_time(
                ctx.smartssd,
                n,
                dict_values=E5_DICT_VALUES,
                width=width,
                mean_length=mean,
                l_max=l_max,
                host_sort=host_sort,
                options=ctx.settings.options,
            )
            keys = ctx.rng.integers(0, E5_DICT_VALUES, n).astype(np.int64)
            cpu_compute = _best(partial(_decode_then_sort, values, keys), 1 if n > 10**5 else 3)
            cpu_s = n * 2 / ctx.cpu.ssd_read_bytes_per_s + cpu_compute
            rows.append(
                {
                    "type": kind,
                    "n": n,
                    "host_s": model.host.total_s,
                    "map_s": model.map.total_s,
                    "sort_s": model.sort.total_s,
                    "decode_s": model.phases_s()["decode"],
                    "nascent2_s": model.total_s,
                    "cpu_s": cpu_s,
                    "speedup_vs_cpu": cpu_s / model.total_s,
                    "energy_vs_cpu": ctx.cpu.power_w
                    * cpu_s
                    / (ctx.smartssd.power_w * model.total_s),
                    "cpu_basis": "measured",
                }
            )
    return Table(
        "E5",
        f"E5 (Fig. 15) — generic sort, 16-bit keys, {E5_DICT_VALUES:,}-entry dictionary",
        [
            Column("type", "type", None),
            Column("n", "n", 0),
            Column(
                "host_s",
                "host (s)",
                6,
                "dictionary read + host sort of U values (measured: sorted()) + transfer",
            ),
            Column("map_s", "map (s)", 6),
            Column("sort_s", "sort (s)", 6),
            Column("decode_s", "decode (s)", 6),
            Column("nascent2_s", "NASCENT2 (s)", 6),
            Column("cpu_s", "CPU (s)", 6, "read 2-byte keys at 3 GB/s + decode + sorted()"),
            *_VS_CPU,
        ],
        rows,
        note="CPU: decode (a list lookup per key), then Python's built-in sorted, measured here.",
    )


def _decode_then_sort(values: list[Any], keys: NDArray[Any]) -> list[Any]:
    """The E5 CPU baseline: decode every key, then Python's built-in sort."""
    return sorted([values[i] for i in keys.tolist()])


# E6: scaling over devices ---------------------------------------------------------------

E6_JOB = TableJob(rows=1024, row_bytes=4096.0, key_bits=32, encoded_key_bytes=2, dict_values=1024)
"""A 1,024-row table of 4 KB rows; 32-bit keys stored as 16-bit dictionary keys."""


def _cpu_table_phases(ctx: Context, job: TableJob, sort_s: float) -> CpuPhases:
    n = job.rows
    if job.encoded_key_bytes is None:
        decode_s = 0.0
    else:
        m = min(n, ctx.settings.cpu_decode_keys)
        page = ctx.rng.integers(0, max(job.dict_values, 1), m).astype(
            _key_dtype(job.encoded_key_bytes)
        )
        dictionary = ctx.rng.integers(0, 2**32, max(job.dict_values, 1), dtype=np.uint32)
        decode_s = decode_fixed_s(dictionary, page, ctx.settings.threads) * n / m
    shuffle, basis = shuffle_s(ctx, n, job.row_bytes)
    if n > ctx.settings.cpu_decode_keys or n > ctx.settings.cpu_sort_cap:
        basis = "extrapolated"
    return CpuPhases(decode_s=decode_s, sort_s=sort_s, shuffle_s=shuffle, basis=basis)


def e6(ctx: Context) -> Table:
    job = E6_JOB
    n2 = table_sort_time(ctx.smartssd, job, ctx.settings.options)
    fpga = table_sort_time(ctx.fpga, job, ctx.settings.options)
    sort_single = CpuSorts(ctx)(job.rows).argsort_s
    cpu = cpu_time(ctx.cpu, job.table_bytes, _cpu_table_phases(ctx, job, sort_single))
    rows = []
    for m in range(1, 13):
        c = compare(
            [n2.total_s] * m,
            [fpga.total_s] * m,
            [cpu.total_s] * m,
            smartssd=ctx.smartssd,
            fpga=ctx.fpga,
            cpu=ctx.cpu,
        )
        rows.append(
            {
                "devices": m,
                "nascent2_s": c.nascent2_s,
                "fpga_s": c.fpga_s,
                "cpu_s": c.cpu_s,
                "speedup_vs_fpga": c.speedup_vs_fpga,
                "speedup_vs_cpu": c.speedup_vs_cpu,
                "energy_vs_fpga": c.energy_vs_fpga,
                "energy_vs_cpu": c.energy_vs_cpu,
                "cpu_basis": cpu.phases.basis,
            }
        )
    return Table(
        "E6",
        "E6 (Fig. 16) — 𝓜 SSDs, each with a 1,024 × 4 KB table (16-bit dictionary keys)",
        [
            Column("devices", "𝓜", 0),
            Column("nascent2_s", "NASCENT2 (s)", 5, "max over SmartSSDs"),
            Column("fpga_s", "U250 (s)", 5, "sum over SSDs, one PCIe attachment"),
            Column("cpu_s", "CPU (s)", 5, "sum over SSDs"),
            *_COMPARISON,
            Column("cpu_basis", "CPU", None),
        ],
        rows,
        note="CPU per SSD: read 4 MiB at 3 GB/s, decode, quicksort argsort (one thread), "
        "row gather; measured here.",
    )


# E7: TPC-H lineitem and TPC-C order-line on 12 SSDs -------------------------------------

E7_SF = (0.1, 1.0, 2.0, 5.0)
E7_DEVICES = 12


@dataclass(frozen=True)
class KeySpec:
    """A sort-key choice of O14 and what its column looks like."""

    column: str
    key_kind: Literal["integer", "generic"]
    encoded_key_bytes: int | None
    dict_values: Callable[[float], int]
    dict_value_bytes: float
    source: str


E7_KEYS: dict[str, tuple[KeySpec, ...]] = {
    "lineitem": (
        KeySpec(
            "l_orderkey",
            "integer",
            None,
            lambda sf: round(1_500_000 * sf),
            4.0,
            "TPC-H 4.2.3: 1.5M·SF orders ≥ 2^16, stored plain",
        ),
        KeySpec(
            "l_shipdate",
            "generic",
            2,
            lambda sf: 2526,
            4.0,
            "TPC-H 4.2.3: o_orderdate + 1..121 days spans 1992-01-02..1998-12-01, 2,526 dates",
        ),
    ),
    "order_line": (
        KeySpec(
            "ol_o_id",
            "integer",
            2,
            lambda sf: 3000,
            4.0,
            "TPC-C 4.3.3.1: 3,000 orders per district",
        ),
        KeySpec(
            "ol_delivery_d",
            "generic",
            2,
            lambda sf: 2,
            8.0,
            "TPC-C 4.3.3.1: the load time or null (2 values in ndpkit.tpc.tpcc data)",
        ),
    ),
}


def table_shape(name: str, sf: float) -> tuple[int, float]:
    """(rows, bytes per row) of lineitem or order_line at `sf`, from `ndpkit.tpc`."""
    shape = import_module("ndpkit.tpc").table_shape(name, sf)
    return int(shape.rows), float(shape.row_bytes)


def e7(ctx: Context) -> Table:
    sorts = CpuSorts(ctx)
    rows = []
    for name, keys in E7_KEYS.items():
        for sf in E7_SF:
            n, row_bytes = table_shape(name, sf)
            for key in keys:
                ctx.report(f"E7: {name} SF {sf:g}, key {key.column}")
                job = TableJob(
                    rows=n,
                    row_bytes=row_bytes,
                    encoded_key_bytes=key.encoded_key_bytes,
                    dict_values=key.dict_values(sf) if key.encoded_key_bytes else 0,
                    dict_value_bytes=key.dict_value_bytes,
                    key_kind=key.key_kind,
                )
                host_sort = _host_sort_s(ctx, job.dict_values)
                n2 = table_sort_time(ctx.smartssd, job, ctx.settings.options, host_sort=host_sort)
                fpga = table_sort_time(ctx.fpga, job, ctx.settings.options, host_sort=host_sort)
                phases = _cpu_table_phases(ctx, job, sorts(n).multi_s)
                cpu = cpu_time(ctx.cpu, job.table_bytes, phases)
                c = compare(
                    [n2.total_s] * E7_DEVICES,
                    [fpga.total_s] * E7_DEVICES,
                    [cpu.total_s] * E7_DEVICES,
                    smartssd=ctx.smartssd,
                    fpga=ctx.fpga,
                    cpu=ctx.cpu,
                )
                rows.append(
                    {
                        "table": name,
                        "sf": sf,
                        "key": key.column,
                        "rows": n,
                        "table_gb": job.table_bytes / 1e9,
                        "nascent2_s": c.nascent2_s,
                        "fpga_s": c.fpga_s,
                        "cpu_s": c.cpu_s,
                        "speedup_vs_fpga": c.speedup_vs_fpga,
                        "speedup_vs_cpu": c.speedup_vs_cpu,
                        "energy_vs_fpga": c.energy_vs_fpga,
                        "energy_vs_cpu": c.energy_vs_cpu,
                        "staging": n2.shuffle.staging,
                        "cpu_basis": phases.basis,
                    }
                )
    return Table(
        "E7",
        f"E7 (Fig. 17) — TPC-H lineitem and TPC-C order-line, a copy on each of {E7_DEVICES} SSDs",
        [
            Column("table", "table", None),
            Column("sf", "SF", 1),
            Column("key", "key (O14)", None),
            Column("rows", "rows", 0),
            Column("table_gb", "GB", 3),
            Column("nascent2_s", "NASCENT2 (s)", 4),
            Column("fpga_s", "U250 (s)", 4),
            Column("cpu_s", "CPU (s)", 4),
            *_COMPARISON,
            Column("staging", "staging", None),
            Column("cpu_basis", "CPU", None),
        ],
        rows,
        note="Rows and bytes per row from ndpkit.tpc.table_shape; TPC-C SF s = s × one warehouse "
        "(O14). CPU: multi-thread sort; generic keys use the host sort of the dictionary.",
    )


def _host_sort_s(ctx: Context, values: int) -> float:
    """T_hostsort(U): Python's sorted over U random floats, measured here once per U."""
    if values < 2:
        return 0.0
    if ("hostsort", values) not in ctx.cache:
        data = [float(v) for v in ctx.rng.random(values)]
        ctx.cache["hostsort", values] = _best(lambda: sorted(data), 3)
    return ctx.cache["hostsort", values]


# E8: TPC-H column analysis (ndpkit.tpc.analysis) ----------------------------------------


def e8_available() -> bool:
    return find_spec("ndpkit.tpc") is not None and find_spec("ndpkit.tpc.analysis") is not None


def e8(ctx: Context) -> Table:
    sf = ctx.settings.e8_sf
    ctx.report(f"E8: generating TPC-H at SF {sf:g} and counting distinct values")
    analysis = import_module("ndpkit.tpc.analysis").analyse(sf)
    return Table(
        "E8",
        f"E8 (Fig. 4) — TPC-H columns and sort keys with < 2^16 distinct values, SF {sf:g}",
        [
            Column("statistic", "statistic", None),
            Column("ours", "ours", 3),
            Column("paper", "paper", 3),
            Column("note", "note", None),
        ],
        analysis.rows(),
        note="Distinct counts grow with SF (e.g. l_orderkey); the default run uses SF 0.1, "
        "--full SF 1. Computed by ndpkit.tpc.analysis.",
    )


_EXPERIMENTS: dict[str, Callable[[Context], Table]] = {
    "E1": e1,
    "E2": e2,
    "E3": e3,
    "E4": e4,
    "E5": e5,
    "E6": e6,
    "E7": e7,
    "E8": e8,
}
_TITLES = {
    "E1": "sort kernel microbenchmark",
    "E2": "dictionary decoder bandwidth",
    "E3": "decode + sort",
    "E4": "table sort with shuffle",
    "E5": "generic sort",
    "E6": "scaling over SSDs",
    "E7": "TPC-H / TPC-C tables on 12 SSDs",
    "E8": "TPC-H column analysis",
}
