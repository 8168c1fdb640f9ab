"""E1–E5 of spec §12: one SmartSSD's kernels against the CPU — the sort kernel (E1), the
dictionary decoder (E2), decode + sort (E3), table sort with shuffle (E4) and generic sort
(E5). NASCENT2's times come from `ndpkit.nascent.timing` and `ndpkit.nascent.system`; the
CPU's are measured here (`ndpkit.reproduce.nascent2.cpu`)."""

from __future__ import annotations

from functools import partial
from typing import Any, Literal

import numpy as np
from numpy.typing import NDArray

from ndpkit.nascent.decoder import decode
from ndpkit.nascent.system import CpuPhases, TableJob, cpu_time, generic_sort_time, table_sort_time
from ndpkit.nascent.timing import DecodeTime, decode_time, sort_time
from ndpkit.report import Column, Table
from ndpkit.reproduce.nascent2.comparison import breakdown_table, vs_cpu_row
from ndpkit.reproduce.nascent2.context import Basis, Context
from ndpkit.reproduce.nascent2.cpu import (
    CpuSorts,
    best_s,
    decode_fixed_s,
    decode_then_sort,
    decode_variable,
    key_dtype,
    shuffle_s,
    sort64_s,
    string_dictionary,
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


def _dict_size(key_bytes: int) -> int:
    """E2's dictionaries: 256 entries for 1-byte keys, 64,000 for 2-byte keys [choice]."""
    return 256 if key_bytes == 1 else 64_000


def e2(ctx: Context) -> Table:
    n = ctx.settings.e2_keys
    n_cpu = ctx.settings.cpu_decode_keys
    rows = []
    for key_bytes in (1, 2):
        u = _dict_size(key_bytes)
        cpu_keys = ctx.rng.integers(0, u, n_cpu).astype(key_dtype(key_bytes))
        for width in (2, 4, 8):
            ctx.report(f"E2: {key_bytes}-byte keys, fixed {width} B")
            model = decode_time(ctx.smartssd, n, key_bytes, width=width, dict_values=u)
            dictionary = ctx.rng.integers(0, 2**63, u).astype(f"u{width}")
            cpu_s = decode_fixed_s(dictionary, cpu_keys, ctx.settings.threads)
            rows.append(_e2_row(key_bytes, f"fixed {width} B", width, model, n_cpu, cpu_s))
        for l_max in (8, 16, 32):
            ctx.report(f"E2: {key_bytes}-byte keys, variable ≤ {l_max} B")
            strings = string_dictionary(ctx.rng, u, l_max)
            page = ctx.rng.integers(0, u, 2**14).astype(key_dtype(key_bytes))
            kernel = decode(strings.values, page, l_max=l_max)
            mean = kernel.counts.output_bytes / page.size
            model = decode_time(ctx.smartssd, n, key_bytes, mean_length=mean, l_max=l_max)
            cpu_s = best_s(partial(decode_variable, strings, cpu_keys), 3)
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
    key_bytes: int, output: str, out_bytes: float, model: DecodeTime, n_cpu: int, cpu_s: float
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
            cpu_dec = decode_fixed_s(dictionary[bits], page, ctx.settings.threads) * n / m
            cpu_sort = sorts(n).multi_s if bits == 32 else sort64_s(ctx, n, m)
            cpu_s = n / ctx.cpu.ssd_read_bytes_per_s + cpu_dec + cpu_sort
            basis: Basis = "measured" if n == m else "extrapolated"
            rows.append(
                {
                    "n": n,
                    "key_bits": bits,
                    "decode_s": dec.total_s,
                    "sort_s": srt.total_s,
                    **vs_cpu_row(ctx, dec.total_s + srt.total_s, cpu_s, basis),
                }
            )
    return breakdown_table(
        "E3",
        "E3 (Fig. 13) — 8-bit dictionary keys decoded to 32/64-bit integers, then sorted",
        keys=[Column("n", "keys", 0), Column("key_bits", "bits", 0)],
        phases=[Column("decode_s", "decode (s)", 6), Column("sort_s", "sort (s)", 6)],
        cpu="read at 3 GB/s + decode + multi-thread sort",
        rows=rows,
    )


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
        note="table GB = 10^9 B; the SmartSSD's FPGA DRAM is 4 GiB = 4.29 GB (O15): a table "
        "that fits with its keys is staged, and the output goes to the SSD when table and "
        "output do not both fit.",
    )


# E5: generic sort -----------------------------------------------------------------------

E5_DICT_VALUES = 64_000

_E5Kind = tuple[str, list[Any], int | None, float | None, int | None]
"""(type, dictionary values, fixed width, mean length, L_Max) of one E5 key type."""


def _e5_kinds(ctx: Context) -> list[_E5Kind]:
    floats = ctx.rng.standard_normal(E5_DICT_VALUES).astype(np.float32)
    kinds: list[_E5Kind] = [("float32", [float(v) for v in floats], 4, None, None)]
    for longest in (16, 32):
        s = string_dictionary(ctx.rng, E5_DICT_VALUES, longest)
        kinds.append(
            (f"string ≤ {longest} B", [v.decode() for v in s.values], None, s.mean_length, longest)
        )
    return kinds


def e5(ctx: Context) -> Table:
    rows = []
    for kind, values, width, mean, l_max in _e5_kinds(ctx):
        host_sort = best_s(partial(sorted, values), 3)
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
            cpu_compute = best_s(partial(decode_then_sort, values, keys), 1 if n > 10**5 else 3)
            cpu_s = n * 2 / ctx.cpu.ssd_read_bytes_per_s + cpu_compute
            rows.append(
                {
                    "type": kind,
                    "n": n,
                    "host_s": model.host.total_s,
                    "map_s": model.map.total_s,
                    "sort_s": model.sort.total_s,
                    "decode_s": model.phases_s()["decode"],
                    **vs_cpu_row(ctx, model.total_s, cpu_s, "measured"),
                }
            )
    host = "dictionary read + host sort of U values (measured: sorted()) + transfer"
    return breakdown_table(
        "E5",
        f"E5 (Fig. 15) — generic sort, 16-bit keys, {E5_DICT_VALUES:,}-entry dictionary",
        keys=[Column("type", "type", None), Column("n", "n", 0)],
        phases=[
            Column("host_s", "host (s)", 6, host),
            Column("map_s", "map (s)", 6),
            Column("sort_s", "sort (s)", 6),
            Column("decode_s", "decode (s)", 6),
        ],
        cpu="read 2-byte keys at 3 GB/s + decode + sorted()",
        rows=rows,
        note="CPU: decode (a list lookup per key), then Python's built-in sorted, measured here.",
    )
